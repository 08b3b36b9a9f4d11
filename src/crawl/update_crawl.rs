//! UpdateCrawl(URL, since) → records (paper §4.4): brings an archived blog up to date by reading
//! its feeds, and fetching only the pages they say changed.
//!
//! 1. **Feeds** ([`read_feed`]). The blog's feed is fetched with a conditional GET
//!    (`If-None-Match` / `If-Modified-Since` from the stored response), so an unchanged feed
//!    costs a 304. A feed entry never archived is a new post; an archived entry whose title,
//!    content, summary or update time changed is an edited post; an entry whose comment count
//!    changed marks its post's page; an entry that left the feed while older entries stayed may
//!    have been deleted.
//! 2. **Comment feeds** ([`read_comment_feeds`]): the site-wide one the home page declares and
//!    each recent post's, conditionally too. A comment-feed item the archive does not hold (or
//!    holds with another text) marks its post's page as changed.
//! 3. **Changed pages only** ([`fetch_changed`]) are fetched (conditional GET again), extracted
//!    with the blog's rules and stored: a changed post keeps its previous text as a version, new
//!    and edited comments are stored (edits keep the previous text), a 404/410 marks the post
//!    gone. Comment pages linked from a changed post are followed.
//! 4. **Template drift** ([`super::drift`]). When the pages of feed entries stop matching their entries
//!    (the article rule finds nothing, or the text agrees with the feed far less than when the
//!    rules were learned), the rules are learned again from the current entries (old rules stay,
//!    inactive) and the posts fetched since the last good crawl are extracted again from their
//!    stored responses.

mod comments;
mod refetch;

use super::blog_context::{load_context, BlogContext};
use super::page::{process_safely, schedule_comment_check};
use super::page_comments::comment_write;
use super::traffic::BrowserTraffic;
use super::{canonical_entries, drift, get_if_changed, CrawlOptions};
use crate::core::feed::{self, FeedEntry, Targets};
use crate::core::post_url::{canonical, comment_page_of};
use crate::core::revisit::Redirected;
use crate::core::rules::Field;
use crate::core::text::dice;
use crate::fetch::{self, Fetcher, Resource};
use crate::store::{Blog, Link, PageOutcome, PageState, PostWrite, Source, Store};
use anyhow::{bail, Context, Result};
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use url::Url;

/// What an UpdateCrawl did.
#[derive(Debug, Clone, Default)]
pub struct UpdateSummary {
    /// The posts' requisites and media kept by this run (`crawl::media`).
    pub media: super::media::MediaSummary,
    /// What rendering browsers asked for, all of it through `fetch` (`crawl::traffic`).
    pub browser: super::traffic::TrafficSummary,
    /// Pages rendered in Chromium, and the seconds spent rendering them.
    pub rendered: (u64, f64),
    /// False when the feed answered 304 Not Modified.
    pub feed_changed: bool,
    /// HTTP requests made (robots.txt and redirect hops included).
    pub requests: u64,
    /// Requests answered 304 Not Modified.
    pub not_modified: u64,
    /// Posts archived for the first time.
    pub new_posts: u64,
    /// Posts whose title or text changed (previous version kept).
    pub edited_posts: u64,
    /// Posts newly marked gone (404/410).
    pub gone_posts: u64,
    /// Comments archived for the first time.
    pub new_comments: u64,
    /// Comments whose text changed (previous text kept).
    pub edited_comments: u64,
    /// Pages that could not be fetched (network error, HTTP error other than 404/410).
    pub errors: u64,
    /// Posts the feed no longer showed, found by backfilling, per source.
    pub backfilled: Vec<(Source, u64)>,
    /// Posts whose comments were checked on their schedule.
    pub comment_checks: u64,
    /// Posts fetched again on their revisit schedule (`[update] revisit_within`).
    pub revisits: u64,
    /// Posts found at another permalink of the blog (a permanent redirect).
    pub moved_posts: u64,
    /// Set when template drift made the rules be learned again: what happened.
    pub relearned: Option<String>,
    /// Posts extracted again from stored responses after relearning.
    pub reextracted: u64,
    /// False when stopped on request before the end (the job is simply run again).
    pub complete: bool,
}

impl std::fmt::Display for UpdateSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} new posts, {} edited, {} gone, {} new comments, {} edited comments; {} requests ({} not modified), {} errors",
            self.new_posts,
            self.edited_posts,
            self.gone_posts,
            self.new_comments,
            self.edited_comments,
            self.requests,
            self.not_modified,
            self.errors
        )?;
        if !self.backfilled.is_empty() {
            let n: u64 = self.backfilled.iter().map(|(_, n)| n).sum();
            let by: Vec<String> = self
                .backfilled
                .iter()
                .map(|(s, n)| format!("{s} {n}"))
                .collect();
            write!(
                f,
                "; backfilled {n} posts the feed no longer shows ({})",
                by.join(", ")
            )?;
        }
        if self.comment_checks > 0 {
            write!(
                f,
                "; comments of {} older posts checked",
                self.comment_checks
            )?;
        }
        if self.revisits > 0 {
            write!(f, "; {} older posts revisited", self.revisits)?;
        }
        if self.moved_posts > 0 {
            write!(f, ", {} found moved", self.moved_posts)?;
        }
        if let Some(r) = &self.relearned {
            write!(f, "; {r}, {} posts re-extracted", self.reextracted)?;
        }
        Ok(())
    }
}

/// Why a page is fetched again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Why {
    /// A feed entry never archived.
    New,
    /// Its feed entry changed.
    Edited,
    /// Its comments changed.
    Comments,
    /// It left the feed while older entries stayed.
    MaybeGone,
    /// A comment page of a changed post.
    CommentPage,
    /// A sitemap says it changed since the last crawl.
    Listed,
    /// An archived post due for its revisit.
    Revisit,
    /// A new page saying what an archived post says, read again once that post's own URL
    /// was checked (a move shows there).
    Recheck,
}

/// The entry changed since it was archived: title, update time or text.
fn changed(a: &FeedEntry, b: &FeedEntry) -> bool {
    let text = |e: &FeedEntry| {
        feed::html_to_text(
            e.content_html
                .as_deref()
                .or(e.summary_html.as_deref())
                .unwrap_or(""),
        )
    };
    a.title != b.title || a.updated != b.updated || text(a) != text(b)
}

/// The entries of a stored feed response, if it parses.
fn entries_of(r: &fetch::Response) -> Option<Vec<FeedEntry>> {
    feed::parse(&r.body, &r.final_url)
        .ok()
        .map(|f| canonical_entries(&f))
}

/// One UpdateCrawl in progress.
struct Update<'a> {
    store: &'a mut Store,
    fetcher: &'a Fetcher,
    blog: Blog,
    opts: &'a CrawlOptions,
    ctx: BlogContext,
    summary: UpdateSummary,
    /// Pages to fetch, and why.
    pages: BTreeMap<String, Why>,
    /// The feed's entries now (empty when the feed did not change).
    current: Vec<FeedEntry>,
    /// The feed as read now (`None` when it did not change).
    feed: Option<feed::Feed>,
    /// How posts not in the feed were found (backfill).
    found_by: HashMap<String, Source>,
    /// Comment feeds read by this crawl.
    comment_feeds_read: HashSet<String>,
    /// What rendering browsers ask for, answered through `fetch`.
    traffic: Arc<BrowserTraffic>,
    /// Pages fetched at another URL than the post's identity (a moved post): fetched URL →
    /// the URL the post is archived under.
    identity: HashMap<String, String>,
    /// The blog's home page (a post redirected there is gone).
    home: Url,
}

/// Runs UpdateCrawl for one archived blog: new posts, edited posts (versions kept), gone posts,
/// new and edited comments, from its feeds and the pages they name.
///
/// # Errors
/// The blog was never crawled (no rules yet: run NewCrawl first), its feed cannot be fetched
/// or parsed (the job fails and is retried with back-off), or the store failed.
pub async fn update_crawl(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    opts: &CrawlOptions,
) -> Result<UpdateSummary> {
    let blog = store
        .blog(blog.id)?
        .context("blog no longer in the archive")?;
    let fetcher = &super::blog_fetcher(fetcher, &blog)?;
    let (ctx, _) = load_context(store, &blog).with_context(|| {
        format!(
            "{} has no extraction rules yet: its NewCrawl must run first",
            blog.feed_url
        )
    })?;
    // The last good crawl: pages fetched after it may have the new template if drift shows.
    let since = blog
        .last_update_at
        .or(blog.crawled_at)
        .or(blog.crawl_started_at);
    let home = Url::parse(&blog.home_url).context("the blog's home URL does not parse")?;
    let mut u = Update {
        store,
        fetcher,
        blog,
        opts,
        ctx,
        summary: UpdateSummary {
            complete: true,
            ..Default::default()
        },
        pages: BTreeMap::new(),
        current: Vec::new(),
        feed: None,
        found_by: HashMap::new(),
        comment_feeds_read: HashSet::new(),
        traffic: BrowserTraffic::new(fetcher.clone()),
        identity: HashMap::new(),
        home,
    };
    'steps: {
        let previous_feed = u.read_feed().await?;
        u.read_modified_feed(previous_feed.as_ref()).await?;
        u.backfill(since).await?;
        if !u.read_comment_feeds(previous_feed).await? || !u.check_old_comments().await? {
            break 'steps;
        }
        u.queue_revisits()?;
        let Some((agreements, stored_now)) = u.fetch_changed().await? else {
            break 'steps;
        };
        let learned_score = u
            .store
            .rules(u.blog.id)?
            .iter()
            .find(|r| r.field == Field::Article)
            .map_or(1.0, |r| r.score);
        if let Some(why) = drift::drift(&agreements, learned_score) {
            tracing::warn!(blog = %u.blog.feed_url, %why, "template drift: learning the rules again");
            drift::relearn(u.store, fetcher, &u.traffic, &u.blog, opts, &u.current).await?;
            let (ctx, _) = load_context(u.store, &u.blog)?;
            let (changed, added, comments) =
                drift::reextract(u.store, &ctx, &u.blog, since, &stored_now)?;
            u.summary.reextracted = changed;
            u.summary.new_posts += added;
            u.summary.new_comments += comments;
            u.summary.relearned = Some(format!("template drift ({why}): rules learned again"));
        }
    }
    // The requisites and media of the posts archived by this run (and any left by earlier ones).
    let stop = || opts.stopped();
    u.summary.media =
        super::media::capture_pending(u.store, fetcher, &u.blog, &opts.media, &stop).await?;
    u.summary.browser = u.traffic.summary();
    u.summary.rendered = u.traffic.renders();
    Ok(u.summary)
}

impl Update<'_> {
    /// Step 1: the feed, conditionally. Marks new, edited, commented and maybe-gone posts, and
    /// stores the current entries. Returns the feed's previous response.
    async fn read_feed(&mut self) -> Result<Option<fetch::Response>> {
        let blog_id = self.blog.id;
        let feed_url = self.blog.feed_url.clone();
        let previous = self
            .store
            .latest_response(blog_id, &feed_url)?
            .map(|s| s.response);
        let got =
            get_if_changed(self.store, self.fetcher, blog_id, &feed_url, Resource::Feed).await?;
        self.summary.requests += got.requests().count() as u64;
        if got.not_modified() {
            self.summary.not_modified += 1;
            return Ok(previous);
        }
        let Some(r) = got.success() else {
            let why = got.record.failure().unwrap_or_else(|| "no response".into());
            bail!("feed {feed_url}: {why}");
        };
        let parsed = feed::parse(&r.body, &r.final_url)
            .map_err(|e| anyhow::anyhow!("feed {feed_url} no longer parses: {e}"))?;
        self.summary.feed_changed = true;
        self.current = canonical_entries(&parsed);
        self.feed = Some(parsed);
        let stored: HashMap<String, FeedEntry> = self
            .store
            .entries(blog_id)?
            .into_iter()
            .map(|e| (e.url.clone(), e))
            .collect();
        let before: HashSet<String> = previous
            .as_ref()
            .and_then(entries_of)
            .map(|entries| entries.into_iter().map(|e| e.url).collect())
            .unwrap_or_default();
        for e in &self.current {
            let archived = self.store.post(&e.url)?.is_some();
            match stored.get(&e.url) {
                _ if !archived => {
                    self.pages.insert(e.url.clone(), Why::New);
                }
                Some(old) if changed(old, e) => {
                    self.pages.insert(e.url.clone(), Why::Edited);
                }
                Some(old) if e.comment_count.is_some() && old.comment_count != e.comment_count => {
                    self.pages.entry(e.url.clone()).or_insert(Why::Comments);
                }
                _ => {}
            }
        }
        // Entries that left the feed while an older entry stayed were not pushed out by newer
        // posts: they were deleted (or unpublished, or moved). Their pages tell.
        let oldest_now = self.current.iter().filter_map(|e| e.published).min();
        let now_urls: HashSet<&str> = self.current.iter().map(|e| e.url.as_str()).collect();
        for url in before.iter().filter(|u| !now_urls.contains(u.as_str())) {
            let newer = stored
                .get(url)
                .and_then(|e| e.published)
                .zip(oldest_now)
                .is_some_and(|(p, oldest)| p >= oldest);
            if newer && self.store.post(url)?.is_some() {
                self.pages.entry(url.clone()).or_insert(Why::MaybeGone);
            }
        }
        self.store.save_entries(blog_id, &self.current)?;
        self.ctx
            .entries
            .extend(self.current.iter().map(|e| (e.url.clone(), e.clone())));
        Ok(previous)
    }

    /// Step 1a: a cheap signal of edits to posts the feed no longer shows, where the blog
    /// offers one: WordPress lists its most recently modified posts at `?orderby=modified`.
    /// Read conditionally; an entry that the previous reading did not hold, or held otherwise,
    /// is revisited now (or archived, when it is a post never seen). The first reading is the
    /// baseline.
    async fn read_modified_feed(&mut self, previous_feed: Option<&fetch::Response>) -> Result<()> {
        let generator = match &self.feed {
            Some(f) => f.generator.clone(),
            None => previous_feed
                .and_then(|r| feed::parse(&r.body, &r.final_url).ok())
                .and_then(|f| f.generator),
        };
        let Some(url) =
            super::revisit::modified_feed_url(&self.blog.feed_url, generator.as_deref())
        else {
            return Ok(());
        };
        let blog_id = self.blog.id;
        let before = self
            .store
            .latest_response(blog_id, &url)?
            .and_then(|s| entries_of(&s.response));
        let got = get_if_changed(self.store, self.fetcher, blog_id, &url, Resource::Feed).await?;
        self.summary.requests += got.requests().count() as u64;
        self.summary.not_modified += got.not_modified() as u64;
        let (Some(now), Some(before)) = (got.success().and_then(entries_of), before) else {
            return Ok(());
        };
        for e in now {
            if before.iter().any(|b| b.url == e.url && !changed(b, &e)) {
                continue;
            }
            match self.store.archived_at(&e.url)? {
                Some(p) => {
                    let at = self.fetch_url_of(&p);
                    self.pages.entry(at).or_insert(Why::Revisit);
                }
                None => {
                    self.pages.entry(e.url).or_insert(Why::New);
                }
            }
        }
        Ok(())
    }

    /// Step 1b: posts the feed no longer shows ([`super::backfill`]), when it no longer reaches
    /// an archived post, or when the sitemaps are due for a reading.
    async fn backfill(&mut self, since: Option<DateTime<Utc>>) -> Result<()> {
        // No overlap: every entry of the feed is new (nothing older left to it is archived).
        let overlap = self.feed.is_none()
            || self.current.is_empty()
            || self
                .current
                .iter()
                .any(|e| !matches!(self.pages.get(&e.url), Some(Why::New)));
        let now = Utc::now();
        let sitemaps_due = self.blog.sitemaps_read_at.is_none_or(|at| {
            (now - at).to_std().unwrap_or_default() >= self.opts.update.sitemap_interval
        });
        if overlap && !sitemaps_due {
            return Ok(());
        }
        let found = super::backfill::Backfill {
            store: self.store,
            fetcher: self.fetcher,
            blog: &self.blog,
            pattern: &self.ctx.pattern,
            feed: self.feed.as_ref(),
            since,
            max_pages: self.opts.update.max_backfill_pages,
            sitemaps_due,
        }
        .run(overlap)
        .await?;
        self.summary.requests += found.requests;
        let mut by: BTreeMap<Source, u64> = BTreeMap::new();
        let in_feed: HashSet<&str> = self.current.iter().map(|e| e.url.as_str()).collect();
        for (url, source) in found.new {
            if in_feed.contains(url.as_str()) {
                continue; // the feed shows it: step 1 queued it already
            }
            tracing::info!(blog = %self.blog.home_url, post = %url, %source, "backfill: a post the feed no longer shows");
            *by.entry(source).or_default() += 1;
            self.pages.entry(url.clone()).or_insert(Why::New);
            self.found_by.insert(url, source);
        }
        self.summary.backfilled = by.into_iter().collect();
        for url in found.changed {
            self.pages.entry(url).or_insert(Why::Listed);
        }
        for url in found
            .unlisted
            .into_iter()
            .take(self.opts.update.max_backfill_pages)
        {
            self.pages.entry(url).or_insert(Why::MaybeGone);
        }
        Ok(())
    }

    /// Step 2c: revisits ([`super::revisit`]): the archived posts due for one are fetched with
    /// the changed pages (a moved post at its new URL).
    fn queue_revisits(&mut self) -> Result<()> {
        let due = super::revisit::due(self.store, self.blog.id, &self.opts.update, Utc::now())?;
        for post in due {
            let url = self.fetch_url_of(&post);
            self.pages.entry(url).or_insert(Why::Revisit);
            self.summary.revisits += 1;
        }
        Ok(())
    }

    /// The URL to fetch archived post `p` at (where it moved to, if it did), remembering the
    /// post's identity for that URL.
    fn fetch_url_of(&mut self, p: &crate::store::Revisit) -> String {
        let at = p.fetch_url().to_string();
        if at != p.url {
            self.identity.insert(at.clone(), p.url.clone());
        }
        at
    }
}
