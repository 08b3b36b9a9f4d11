//! UpdateCrawl's comment steps: the comment feeds (the site-wide ones and each recent
//! post's), and the comments of older posts on their schedule. A comment-feed item the archive
//! does not hold, or holds with another text, marks its post's page for fetching (or, without
//! comment rules, is stored as is); on a comment widget blog, the widget's own data, asked
//! without a browser, does the same (issue 41).

use super::{entries_of, Update, Why};
use crate::core::comments::{same_comment, same_id, same_text};
use crate::core::feed;
use crate::core::post_url::{canonical, comment_page_of};
use crate::crawl::add::declared_comment_feeds;
use crate::crawl::get_if_changed;
use crate::crawl::page_comments::{comment_write, comments_of_feed};
use crate::fetch::{self, Resource};
use crate::store::Comment;
use anyhow::Result;
use chrono::Utc;
use std::collections::BTreeMap;
use url::Url;

impl Update<'_> {
    /// Step 2b: the comments of older posts, on their schedule (`[update] comment_checks`),
    /// at most `max_comment_checks`, longest overdue first: their comment feed by conditional
    /// GET (new or changed items mark the page), else their page. A post whose comment feed
    /// is gone may be gone too: its page tells. Returns false when stopped on request.
    pub(super) async fn check_old_comments(&mut self) -> Result<bool> {
        let now = Utc::now();
        let update = &self.opts.update;
        let due = self
            .store
            .due_comment_checks(self.blog.id, now, update.max_comment_checks)?;
        let mut widget_due = Vec::new();
        for check in due {
            if self.opts.stopped() {
                self.summary.complete = false;
                return Ok(false);
            }
            self.summary.comment_checks += 1;
            match check.comments_feed.clone() {
                Some(feed_url) if !self.comment_feeds_read.contains(&feed_url) => {
                    self.comment_feeds_read.insert(feed_url.clone());
                    let got = get_if_changed(
                        self.store,
                        self.fetcher,
                        self.blog.id,
                        &feed_url,
                        Resource::Feed,
                    )
                    .await?;
                    self.summary.requests += got.requests().count() as u64;
                    self.summary.not_modified += got.not_modified() as u64;
                    let status = got.response.as_ref().map(|r| r.status);
                    if let Some(r) = got.success() {
                        if let Ok(cf) = feed::parse(&r.body, &r.final_url) {
                            self.compare_comment_feed(&cf)?;
                        }
                    } else if matches!(status, Some(404 | 410)) {
                        self.pages
                            .entry(check.url.clone())
                            .or_insert(Why::MaybeGone);
                    }
                }
                Some(_) => {}
                None if self.ctx.comment_data.is_some() => widget_due.push(check.url.clone()),
                None => {
                    self.pages.entry(check.url.clone()).or_insert(Why::Comments);
                }
            }
            let age = check
                .published
                .map(|p| (now - p.with_timezone(&Utc)).to_std().unwrap_or_default())
                .unwrap_or_default();
            let next = crate::core::schedule::comment_check_interval(
                age,
                &update.comment_checks,
                update.comment_check_max_age,
            )
            .map(|wait| crate::core::schedule::after(now, wait));
            self.store.set_comment_check(&check.url, now, next, false)?;
        }
        self.check_widget_data(widget_due).await?;
        Ok(true)
    }

    /// The posts of a comment widget blog due for a comment check, asked through the widget's
    /// data without a browser (issue 41): a post whose data holds a comment the archive lacks,
    /// or declares another count than the archive holds, is fetched and rendered again; the
    /// others cost one request each. A post whose data cannot be read is fetched, to be sure.
    async fn check_widget_data(&mut self, posts: Vec<String>) -> Result<()> {
        let Some(data) = self.ctx.comment_data.clone() else {
            return Ok(());
        };
        if posts.is_empty() {
            return Ok(());
        }
        let mut pages = Vec::new();
        for url in posts {
            match self.store.latest_response(self.blog.id, &url)? {
                Some(s) => pages.push((url, s.response)),
                None => {
                    self.pages.entry(url).or_insert(Why::Comments);
                }
            }
        }
        let asked: Vec<(String, &fetch::Response)> =
            pages.iter().map(|(u, r)| (u.clone(), r)).collect();
        let said = crate::crawl::rendering::widget_data(
            self.store,
            self.fetcher,
            self.blog.id,
            &data,
            &asked,
            self.opts.settings.concurrency,
        )
        .await?;
        for (url, _) in &pages {
            self.summary.requests += 1;
            let archived = self.store.comments(url)?;
            let news = match said.get(url).and_then(Option::as_ref) {
                None => true,
                Some(d) => {
                    d.total.is_some_and(|t| t as usize != archived.len())
                        || d.items.iter().any(|i| {
                            !archived.iter().any(|a| {
                                i.id.as_ref().is_some_and(|id| a.id == format!("data-{id}"))
                                    || same_comment(
                                        a.author.as_deref(),
                                        &a.content_text,
                                        i.author.as_deref(),
                                        &i.text,
                                    )
                                    || same_text(&a.content_text, &i.text)
                                        && a.author.as_deref().zip(i.author.as_deref()).is_some_and(
                                            |(x, y)| x.to_lowercase().contains(&y.to_lowercase()),
                                        )
                            })
                        })
                }
            };
            if news {
                self.pages.entry(url.clone()).or_insert(Why::Comments);
            }
        }
        Ok(())
    }

    /// Step 2: comment feeds, the site-wide ones the home page declares, then each recent
    /// post's (conditional GETs: an unchanged one costs a 304), so an edited comment on a recent
    /// post shows even when the site-wide feed lists only the newest comments. Returns false
    /// when stopped on request.
    pub(super) async fn read_comment_feeds(
        &mut self,
        previous_feed: Option<fetch::Response>,
    ) -> Result<bool> {
        let blog_id = self.blog.id;
        let mut comment_feeds = match self.store.latest_response(blog_id, &self.blog.home_url)? {
            Some(crate::store::StoredResponse { response: r, .. }) if r.status < 400 => {
                Url::parse(&r.final_url)
                    .map(|base| declared_comment_feeds(&fetch::decode(&r), &base))
                    .unwrap_or_default()
            }
            _ => Vec::new(),
        };
        let recent = if !self.current.is_empty() {
            self.current.clone()
        } else {
            previous_feed
                .as_ref()
                .and_then(entries_of)
                .unwrap_or_default()
        };
        for e in &recent {
            if let Some(f) = e
                .comments_feed
                .clone()
                .filter(|_| e.comment_count != Some(0))
            {
                if !comment_feeds.contains(&f) {
                    comment_feeds.push(f);
                }
            }
        }
        for feed_url in comment_feeds {
            if self.opts.stopped() {
                self.summary.complete = false;
                return Ok(false);
            }
            self.comment_feeds_read.insert(feed_url.clone());
            let got = get_if_changed(self.store, self.fetcher, blog_id, &feed_url, Resource::Feed)
                .await?;
            self.summary.requests += got.requests().count() as u64;
            let Some(r) = got.success() else {
                self.summary.not_modified += got.not_modified() as u64;
                continue;
            };
            let Ok(cf) = feed::parse(&r.body, &r.final_url) else {
                tracing::info!(feed = %feed_url, "comment feed does not parse");
                continue;
            };
            self.compare_comment_feed(&cf)?;
        }
        Ok(true)
    }

    /// Marks the posts whose comment-feed items the archive does not hold, or holds with
    /// another text. Without comment rules the feed copies are the archive: stored at once.
    fn compare_comment_feed(&mut self, cf: &feed::Feed) -> Result<()> {
        // Per post: (the comment's id on the page, from the link's fragment; the feed copy).
        let mut by_post: BTreeMap<String, Vec<(Option<String>, Comment)>> = BTreeMap::new();
        for (item, c) in cf.entries.iter().zip(comments_of_feed(cf)) {
            let Ok(link) = Url::parse(&item.url) else {
                continue;
            };
            let key = link.fragment().map(str::to_string);
            let mut post = link.clone();
            post.set_fragment(None);
            let post = canonical(&comment_page_of(&post).unwrap_or(post)).to_string();
            by_post.entry(post).or_default().push((key, c));
        }
        for (post, comments) in by_post {
            if self.store.post(&post)?.is_none() {
                continue;
            }
            let archived = self.store.comments(&post)?;
            let news = comments.iter().any(|(key, c)| {
                let same_key = |a: &&Comment| {
                    a.id == c.id
                        || key
                            .as_deref()
                            .is_some_and(|k| same_id(&a.id, k) || same_id(k, &a.id))
                };
                match archived.iter().find(same_key) {
                    // The same comment under its page id: compare the texts (an edit).
                    Some(a) => !same_text(&a.content_text, &c.content_text),
                    None => !archived.iter().any(|a| {
                        same_comment(
                            a.author.as_deref(),
                            &a.content_text,
                            c.author.as_deref(),
                            &c.content_text,
                        )
                    }),
                }
            });
            if !news {
                continue;
            }
            if self.ctx.comment_rules.is_some() {
                self.pages.entry(post).or_insert(Why::Comments);
            } else {
                let copies: Vec<Comment> = comments.into_iter().map(|(_, c)| c).collect();
                let write = comment_write(self.store, &post, &copies)?;
                let written = self.store.save_comments(&write)?;
                self.summary.new_comments += written.new as u64;
                self.summary.edited_comments += written.edited as u64;
            }
        }
        Ok(())
    }
}
