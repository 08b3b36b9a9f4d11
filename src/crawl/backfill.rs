//! Backfill: the posts an UpdateCrawl's feed cannot show. A feed holds the newest 10–20 posts;
//! a blog that published more since the last crawl (a busy week, an import, a daemon stopped for
//! a month) would leave the rest unarchived for good. When the feed no longer reaches an
//! archived post (no overlap), older posts are looked for, cheapest source first, until known
//! posts appear again:
//!
//! 1. older pages of the feed: RFC 5005 (`next`, `prev-archive`), WordPress `?paged=N`;
//! 2. the sitemaps (conditional GETs): posts not archived; archived posts changed since the
//!    last crawl (`lastmod`: back-dated posts, edits); archived posts no longer listed (maybe
//!    deleted). Read at least every `[update] sitemap_interval` even with overlap;
//! 3. the listing pages from the home page, following its pagination, when there is no
//!    sitemap.
//!
//! Every request goes through the fetcher (robots.txt, politeness, address policy); every page
//! read is kept; what was found, and where, is returned for the log and the summary.

use super::canonical_entries;
use super::seed::read_sitemaps;
use crate::core::feed::{self, Feed};
use crate::core::listing::next_page;
use crate::core::page::Page;
use crate::core::post_url::{canonical, PostUrlPattern};
use crate::fetch::{self, Fetcher, Resource};
use crate::store::{Blog, PageState, Source, Store};
use anyhow::Result;
use chrono::{DateTime, Utc};
use std::collections::HashSet;
use url::Url;

/// What backfilling found.
#[derive(Debug, Default)]
pub(super) struct Found {
    /// Posts not archived, with the source that showed them.
    pub new: Vec<(String, Source)>,
    /// Archived posts a sitemap says changed since the last crawl.
    pub changed: Vec<String>,
    /// Archived posts a sitemap no longer lists: their pages tell whether they are gone.
    pub unlisted: Vec<String>,
    /// HTTP requests made.
    pub requests: u64,
}

/// How far back to look: the blog, its post pattern, the feed as read now, and limits.
pub(super) struct Backfill<'a> {
    pub store: &'a mut Store,
    pub fetcher: &'a Fetcher,
    pub blog: &'a Blog,
    pub pattern: &'a PostUrlPattern,
    /// The feed read by this UpdateCrawl (`None`: unchanged since the last one).
    pub feed: Option<&'a Feed>,
    /// The last good crawl: sitemap `lastmod`s after it mean a change.
    pub since: Option<DateTime<Utc>>,
    /// At most this many listing and feed pages.
    pub max_pages: usize,
    /// Read the sitemaps even when the feed overlaps the archive.
    pub sitemaps_due: bool,
}

impl Backfill<'_> {
    /// A post URL worth fetching: not archived, not known to fail, not found already.
    fn wanted(&self, url: &str, found: &Found) -> Result<bool> {
        if self.store.has_post(url)? || found.new.iter().any(|(u, _)| u == url) {
            return Ok(false);
        }
        let state = self.store.page_state(self.blog.id, url)?;
        Ok(!matches!(
            state,
            Some(PageState::Failed | PageState::Blocked | PageState::Refused)
        ))
    }

    /// Looks back for posts the feed no longer shows; `overlap`: the feed still reaches an
    /// archived post.
    ///
    /// # Errors
    /// Only when the store fails.
    pub async fn run(mut self, mut overlap: bool) -> Result<Found> {
        let mut found = Found::default();
        let mut budget = self.max_pages;
        if !overlap {
            if let Some(feed) = self.feed {
                overlap = self.older_feed_pages(feed, &mut found, &mut budget).await?;
            }
        }
        let mut sitemap_lists_posts = false;
        if !overlap || self.sitemaps_due {
            sitemap_lists_posts = self.sitemaps(&mut found).await?;
        }
        if !overlap && !sitemap_lists_posts {
            self.listing_pages(&mut found, budget).await?;
        }
        Ok(found)
    }

    /// Older pages of the feed, until one shows an archived post. Returns whether one did.
    async fn older_feed_pages(
        &mut self,
        first: &Feed,
        found: &mut Found,
        budget: &mut usize,
    ) -> Result<bool> {
        let wordpress = first
            .generator
            .as_deref()
            .is_some_and(|g| g.contains("wordpress.org"));
        let paged = |n: u32| -> Option<String> {
            let mut u = Url::parse(&self.blog.feed_url).ok()?;
            u.query_pairs_mut().append_pair("paged", &n.to_string());
            Some(u.to_string())
        };
        let mut seen: HashSet<String> = canonical_entries(first)
            .into_iter()
            .map(|e| e.url)
            .collect();
        let mut next = first
            .next
            .clone()
            .or_else(|| wordpress.then(|| paged(2)).flatten());
        let mut n = 2;
        while let Some(url) = next.take() {
            if *budget == 0 {
                break;
            }
            *budget -= 1;
            let f = self.fetcher.get(&url, Resource::Feed).await;
            self.store.keep_fetched(self.blog.id, &f)?;
            found.requests += f.requests().count() as u64;
            let Some(parsed) = f
                .success()
                .and_then(|r| feed::parse(&r.body, &r.final_url).ok())
            else {
                break;
            };
            let entries = canonical_entries(&parsed);
            let fresh: Vec<_> = entries
                .into_iter()
                .filter(|e| seen.insert(e.url.clone()))
                .collect();
            if fresh.is_empty() {
                break; // the same page again: a server ignoring the page parameter
            }
            self.store.save_entries(self.blog.id, &fresh)?;
            let mut overlap = false;
            for e in fresh {
                if self.store.has_post(&e.url)? {
                    overlap = true;
                } else if self.wanted(&e.url, found)? {
                    found.new.push((e.url, Source::PagedFeed));
                }
            }
            if overlap {
                return Ok(true);
            }
            n += 1;
            next = parsed
                .next
                .or_else(|| wordpress.then(|| paged(n)).flatten());
        }
        Ok(false)
    }

    /// The sitemaps: posts not archived, archived posts changed since the last crawl, archived
    /// posts no longer listed. Returns whether the sitemaps list posts at all.
    async fn sitemaps(&mut self, found: &mut Found) -> Result<bool> {
        let read =
            read_sitemaps(self.store, self.fetcher, self.blog, self.pattern, u64::MAX).await?;
        found.requests += read.requests;
        self.store.mark_sitemaps_read(self.blog.id, Utc::now())?;
        if read.posts.is_empty() {
            return Ok(false);
        }
        let mut listed = HashSet::new();
        for s in &read.posts {
            listed.insert(s.loc.as_str());
            if self.store.has_post(&s.loc)? {
                let newer = s
                    .lastmod
                    .zip(self.since)
                    .is_some_and(|(m, since)| m.with_timezone(&Utc) > since);
                if newer && read.changed {
                    found.changed.push(s.loc.clone());
                }
            } else if self.wanted(&s.loc, found)? {
                found.new.push((s.loc.clone(), Source::Sitemap));
            }
        }
        if read.changed {
            for url in self.store.post_urls(self.blog.id)? {
                if !listed.contains(url.as_str()) {
                    found.unlisted.push(url);
                }
            }
        }
        Ok(true)
    }

    /// The listing pages from the home page, following their pagination, until a page links
    /// an archived post or `budget` pages were read.
    async fn listing_pages(&mut self, found: &mut Found, budget: usize) -> Result<()> {
        let mut next = Url::parse(&self.blog.home_url).ok();
        let mut visited = HashSet::new();
        for _ in 0..budget {
            let Some(url) = next.take() else { break };
            if !visited.insert(url.to_string()) {
                break;
            }
            let f = self.fetcher.get(url.as_str(), Resource::Page).await;
            self.store.keep_fetched(self.blog.id, &f)?;
            found.requests += f.requests().count() as u64;
            let Some(r) = f.success().filter(|r| fetch::is_html(r)) else {
                break;
            };
            let base = Url::parse(&r.final_url).unwrap_or(url);
            let page = Page::parse(&fetch::decode(r));
            let site = super::links::site_of(&base);
            let mut overlap = false;
            for link in super::links::followable(&page, &base, &site) {
                if !self.pattern.is_post(&link) {
                    continue;
                }
                let link = canonical(&link).to_string();
                if self.store.has_post(&link)? {
                    overlap = true;
                } else if self.wanted(&link, found)? {
                    found.new.push((link, Source::Listing));
                }
            }
            if overlap {
                break;
            }
            next = next_page(&page, &base);
        }
        Ok(())
    }
}
