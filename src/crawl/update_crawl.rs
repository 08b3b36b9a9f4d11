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
//! 4. **Template drift** ([`drift`]). When the pages of feed entries stop matching their entries
//!    (the article rule finds nothing, or the text agrees with the feed far less than when the
//!    rules were learned), the rules are learned again from the current entries (old rules stay,
//!    inactive) and the posts fetched since the last good crawl are extracted again from their
//!    stored responses.

use super::add::declared_comment_feeds;
use super::page::{comment_write, comments_of_feed, load_context, process_safely, BlogContext};
use super::{canonical_entries, CrawlOptions};
use crate::core::comments::{same_comment, same_id, same_text};
use crate::core::feed::{self, FeedEntry, Targets};
use crate::core::learn::Field;
use crate::core::post_url::{canonical, comment_page_of};
use crate::core::text::dice;
use crate::fetch::{self, Fetched, Fetcher, Resource};
use crate::store::{Blog, Comment, PageOutcome, PageState, PostWrite, Store};
use anyhow::{bail, Context, Result};
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, HashMap, HashSet};
use url::Url;

/// What an UpdateCrawl did.
#[derive(Debug, Clone, Default)]
pub struct UpdateSummary {
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
}

/// A feed entry's agreement with the text extracted from its page: Dice of the entry's text and
/// the article (for a summary-only feed, the article's beginning of the same length).
fn agreement(target: &Targets, text: &str) -> Option<f64> {
    let t = target.article.as_deref()?;
    if target.summary {
        let n = t.chars().count() * 6 / 5 + 20;
        let head: String = text.chars().take(n).collect();
        Some(dice(t, &head))
    } else {
        Some(dice(t, text))
    }
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

/// A conditional GET of `url` on its latest stored response, logged and kept.
async fn get_if_changed(
    store: &mut Store,
    fetcher: &Fetcher,
    blog_id: i64,
    url: &str,
    resource: Resource,
) -> Result<Fetched> {
    let previous = store.latest_response(blog_id, url)?.map(|(_, r)| r);
    let f = fetcher
        .get_if_changed(url, previous.as_ref(), resource)
        .await;
    store.keep_fetched(blog_id, &f)?;
    Ok(f)
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
    };
    let previous_feed = u.read_feed().await?;
    if !u.read_comment_feeds(previous_feed).await? {
        return Ok(u.summary);
    }
    let Some((agreements, stored_now)) = u.fetch_changed().await? else {
        return Ok(u.summary);
    };
    let learned_score = u
        .store
        .rules(u.blog.id)?
        .iter()
        .find(|r| r.field == Field::Article)
        .map_or(1.0, |r| r.score);
    if let Some(why) = drift(&agreements, learned_score) {
        tracing::warn!(blog = %u.blog.feed_url, %why, "template drift: learning the rules again");
        relearn(u.store, fetcher, &u.blog, opts, &u.current).await?;
        let (ctx, _) = load_context(u.store, &u.blog)?;
        let (changed, added, comments) = reextract(u.store, &ctx, &u.blog, since, &stored_now)?;
        u.summary.reextracted = changed;
        u.summary.new_posts += added;
        u.summary.new_comments += comments;
        u.summary.relearned = Some(format!("template drift ({why}): rules learned again"));
    }
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
            .map(|(_, r)| r);
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

    /// Step 2: comment feeds, the site-wide ones the home page declares, then each recent
    /// post's (conditional GETs: an unchanged one costs a 304), so an edited comment on a recent
    /// post shows even when the site-wide feed lists only the newest comments. Returns false
    /// when stopped on request.
    async fn read_comment_feeds(&mut self, previous_feed: Option<fetch::Response>) -> Result<bool> {
        let blog_id = self.blog.id;
        let mut comment_feeds = match self.store.latest_response(blog_id, &self.blog.home_url)? {
            Some((_, r)) if r.status < 400 => Url::parse(&r.final_url)
                .map(|base| declared_comment_feeds(&fetch::decode(&r), &base))
                .unwrap_or_default(),
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
                let (n, e) = self.store.save_comments(&write)?;
                self.summary.new_comments += n as u64;
                self.summary.edited_comments += e as u64;
            }
        }
        Ok(())
    }

    /// Step 3: the changed pages, then the comment pages they link to. Returns the agreement of
    /// each new or edited entry with its page (for drift) and the pages stored, or `None` when
    /// stopped on request.
    #[allow(clippy::type_complexity)]
    async fn fetch_changed(&mut self) -> Result<Option<(Vec<(String, Option<f64>)>, Vec<String>)>> {
        let blog_id = self.blog.id;
        let mut done: HashSet<String> = HashSet::new();
        let mut stored_now: Vec<String> = Vec::new();
        let mut agreements: Vec<(String, Option<f64>)> = Vec::new();
        let targets: HashMap<String, Targets> = self
            .current
            .iter()
            .map(|e| e.url.clone())
            .zip(feed::targets(&self.current))
            .collect();
        let mut round: Vec<(String, Why)> = std::mem::take(&mut self.pages).into_iter().collect();
        while !round.is_empty() {
            if self.opts.stopped() {
                self.summary.complete = false;
                return Ok(None);
            }
            let mut requests = Vec::new();
            for (u, _) in &round {
                let previous = self.store.latest_response(blog_id, u)?.map(|(_, r)| r);
                requests.push((u.clone(), previous));
            }
            let why: HashMap<String, Why> = round.into_iter().collect();
            let mut next_round = Vec::new();
            let fetched = self
                .fetcher
                .get_all(requests, Resource::Page, self.opts.settings.concurrency)
                .await;
            for (url, got) in fetched {
                done.insert(url.clone());
                self.summary.requests += got.requests().count() as u64;
                if got.blocked || got.not_modified() {
                    self.summary.not_modified += got.not_modified() as u64;
                    self.store.log_fetches(Some(blog_id), got.requests())?;
                    continue;
                }
                let status = got.response.as_ref().map(|r| r.status);
                let gone = matches!(status, Some(404 | 410)) && self.store.post(&url)?.is_some();
                let failed = !gone && !matches!(status, Some(s) if s < 400);
                if failed {
                    self.summary.errors += 1;
                    tracing::warn!(url = %url, status = ?status, "update crawl: page unavailable");
                }
                let why = why[&url];
                if why == Why::New {
                    // Known to the frontier, so a resumed NewCrawl does not fetch it again.
                    self.store.enqueue(blog_id, &[(url.clone(), 1)])?;
                }
                // Changed pages are posts (or their comment pages): rendered when the blog renders.
                let rendered = match (&self.opts.renderer, &got.response) {
                    (Some(renderer), Some(r))
                        if !failed
                            && !gone
                            && fetch::is_html(r)
                            && self.blog.renders.is_some_and(|x| x.wants(true)) =>
                    {
                        super::rendering::render_all(renderer, vec![(url.clone(), r.clone())])
                            .await
                            .remove(&url)
                    }
                    _ => None,
                };
                let processed = match rendered.as_ref().or(got.response.as_ref()) {
                    Some(r) if !failed && !gone => {
                        process_safely(&self.ctx, &url, 1, r).unwrap_or_default()
                    }
                    _ => Default::default(),
                };
                if let (Some(t), true) = (targets.get(&url), matches!(why, Why::New | Why::Edited))
                {
                    if got.response.as_ref().is_some_and(fetch::is_html) && !gone && !failed {
                        let score = processed
                            .post
                            .as_ref()
                            .and_then(|p| agreement(t, &p.content_text));
                        agreements.push((url.clone(), score.or(Some(0.0))));
                    }
                }
                for (link, _) in &processed.links {
                    if let Ok(l) = Url::parse(link) {
                        let owner = comment_page_of(&l).map(|p| canonical(&p).to_string());
                        if owner.as_deref() == Some(url.as_str()) && !done.contains(link) {
                            next_round.push((link.clone(), Why::CommentPage));
                            done.insert(link.clone());
                        }
                    }
                }
                if got.response.is_some() && !failed && !gone {
                    stored_now.push(url.clone());
                }
                let comments = processed
                    .comments
                    .map(|(post_url, c)| comment_write(self.store, &post_url, &c))
                    .transpose()?;
                let written = self.store.record_page(&PageOutcome {
                    blog_id,
                    url: url.clone(),
                    fetches: got.requests().cloned().collect(),
                    response: got.response,
                    rendered,
                    reused_response: None,
                    post: processed.post,
                    links: Vec::new(),
                    post_links: None,
                    state: if failed {
                        PageState::Failed
                    } else {
                        PageState::Done
                    },
                    retry_at: None,
                    comments,
                    gone,
                })?;
                self.count(&url, written);
            }
            round = next_round;
        }
        Ok(Some((agreements, stored_now)))
    }

    fn count(&mut self, url: &str, written: crate::store::Written) {
        match written.post {
            Some(PostWrite::New) => self.summary.new_posts += 1,
            Some(PostWrite::Edited(v)) => {
                self.summary.edited_posts += 1;
                tracing::info!(post = %url, version = v, "post changed; previous version kept");
            }
            _ => {}
        }
        self.summary.gone_posts += written.gone as u64;
        self.summary.new_comments += written.new_comments as u64;
        self.summary.edited_comments += written.edited_comments as u64;
        if written.gone {
            tracing::info!(post = %url, "post gone from the blog; it stays archived");
        }
    }
}

/// Template drift: most feed entries fetched in this crawl no longer agree with the text their
/// page yields. Needs at least one page; "most" is more than half, "no longer agree" is a
/// Dice below half of the learned rule's own score (and below 0.5).
fn drift(agreements: &[(String, Option<f64>)], learned_score: f64) -> Option<String> {
    if agreements.is_empty() {
        return None;
    }
    let floor = (learned_score / 2.0).min(0.5);
    let bad = agreements
        .iter()
        .filter(|(_, s)| s.is_none_or(|s| s < floor))
        .count();
    (bad * 2 > agreements.len()).then(|| {
        format!(
            "{bad} of {} new or edited entries score below {floor:.2} with the current rules",
            agreements.len()
        )
    })
}

/// Learns the rules again from the current feed entries, fetching their pages anew
/// (conditionally) since unchanged-looking entries may carry the new template too.
async fn relearn(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    opts: &CrawlOptions,
    current: &[FeedEntry],
) -> Result<()> {
    let entries: Vec<FeedEntry> = if current.is_empty() {
        store.entries(blog.id)?
    } else {
        current.to_vec()
    };
    for e in &entries {
        get_if_changed(store, fetcher, blog.id, &e.url, Resource::Page).await?;
    }
    let only: HashSet<String> = entries.into_iter().map(|e| e.url).collect();
    super::learn::learn_from_entries(store, fetcher, blog, opts, Some(&only)).await
}

/// Extracts again, from their stored responses, the posts fetched at or after `since` (all
/// posts when `None`) and the pages in `also` (fetched by this crawl, posts or not yet), with
/// the blog's current rules. Changed posts keep their previous text as a version. Returns (posts
/// changed, posts archived for the first time, comments archived for the first time).
fn reextract(
    store: &mut Store,
    ctx: &BlogContext,
    blog: &Blog,
    since: Option<DateTime<Utc>>,
    also: &[String],
) -> Result<(u64, u64, u64)> {
    let mut urls: Vec<String> = also.to_vec();
    store.for_each_post(Some(blog.id), |p| {
        if since.is_none_or(|s| p.fetched_at >= s) && !urls.contains(&p.url) {
            urls.push(p.url);
        }
        Ok(())
    })?;
    let (mut n, mut added, mut comments) = (0, 0, 0);
    for url in urls {
        let Some((id, r)) = store.latest_response(blog.id, &url)? else {
            continue;
        };
        let Some(processed) = process_safely(ctx, &url, 1, &r) else {
            continue;
        };
        if processed.post.is_none() {
            continue;
        }
        let write = processed
            .comments
            .map(|(post_url, c)| comment_write(store, &post_url, &c))
            .transpose()?;
        let written = store.record_page(&PageOutcome {
            blog_id: blog.id,
            url: url.clone(),
            fetches: Vec::new(),
            response: None,
            rendered: None,
            reused_response: Some(id),
            post: processed.post,
            links: Vec::new(),
            post_links: None,
            state: PageState::Done,
            retry_at: None,
            comments: write,
            gone: false,
        })?;
        comments += written.new_comments as u64;
        match written.post {
            Some(PostWrite::Edited(_)) => n += 1,
            Some(PostWrite::New) => added += 1,
            _ => {}
        }
    }
    Ok((n, added, comments))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_needs_most_entries_to_disagree() {
        let a = |s: &[Option<f64>]| -> Vec<(String, Option<f64>)> {
            s.iter().map(|x| (String::new(), *x)).collect()
        };
        assert!(drift(&a(&[]), 0.9).is_none());
        assert!(drift(&a(&[Some(0.9), Some(0.2)]), 0.9).is_none());
        assert!(drift(&a(&[None, Some(0.2), Some(0.95)]), 0.9).is_some());
        // Rules learned on weak agreement (summary-only feeds) drift only far below it.
        assert!(drift(&a(&[Some(0.4)]), 0.7).is_none());
        assert!(drift(&a(&[Some(0.1)]), 0.7).is_some());
    }
}
