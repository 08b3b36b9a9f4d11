//! UpdateCrawl(URL, since) → records (paper §4.4): brings an archived blog up to date by reading
//! its feeds, and fetching only the pages they say changed.
//!
//! 1. **Feeds.** The blog's feed and its comment feeds (the site-wide one its home page declares,
//!    else each recent post's) are fetched with conditional GETs (`If-None-Match` /
//!    `If-Modified-Since` from the stored response), so an unchanged feed costs a 304.
//! 2. **What changed.** A feed entry never archived is a new post; an archived entry whose
//!    title, content, summary or update time changed is an edited post; an entry whose comment
//!    count changed, or a comment-feed item the archive does not hold (or holds with another
//!    text), marks its post's page as changed; an entry that left the feed while older entries
//!    stayed may have been deleted.
//! 3. **Changed pages only** are fetched (conditional GET again), extracted with the blog's rules
//!    and stored: a changed post keeps its previous text as a version, new and edited comments
//!    are stored (edits keep the previous text), a 404/410 marks the post gone. Comment pages
//!    linked from a changed post are followed.
//! 4. **Template drift.** When the pages of feed entries stop matching their entries (the
//!    article rule finds nothing, or the text agrees with the feed far less than when the rules
//!    were learned), the rules are learned again from the current entries (old rules stay,
//!    inactive) and the posts fetched since the last good crawl are extracted again from their
//!    stored responses.

use super::new_crawl::{
    entry_of, fetch_all_if_changed, learn_from_entries, load_context, process, Context_,
    CrawlOptions, Processed,
};
use crate::core::comments::{same_comment, same_id};
use crate::core::feed::{self, Feed};
use crate::core::post_url::{canonical, comment_page_of};
use crate::core::text::dice;
use crate::fetch::{self, Fetcher};
use crate::store::{Blog, PageOutcome, PostWrite, Response, Store, StoredEntry};
use anyhow::{bail, Context, Result};
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
fn agreement(target: &feed::Targets, text: &str) -> Option<f64> {
    let t = target.article.as_deref()?;
    if target.summary {
        let n = t.chars().count() * 6 / 5 + 20;
        let head: String = text.chars().take(n).collect();
        Some(dice(t, &head))
    } else {
        Some(dice(t, text))
    }
}

/// A comment's text on the page and in a feed are the same comment text: one contains the
/// other (feeds prefix replies with "In reply to …"), or Dice ≥ 0.95.
fn same_text(page: &str, feed: &str) -> bool {
    let norm = |s: &str| -> String { crate::core::text::normalise(s).into_iter().collect() };
    let (p, f) = (norm(page), norm(feed));
    (!p.is_empty() && (f.contains(&p) || p.contains(&f))) || dice(page, feed) >= 0.95
}

fn changed(a: &StoredEntry, b: &StoredEntry) -> bool {
    let text = |e: &StoredEntry| {
        feed::html_to_text(
            e.content_html
                .as_deref()
                .or(e.summary_html.as_deref())
                .unwrap_or(""),
        )
    };
    a.title != b.title || a.updated != b.updated || text(a) != text(b)
}

/// A conditional GET, logged; the response is returned only when it is new (200..400, not 304).
struct Got {
    fetches: Vec<crate::store::FetchRecord>,
    response: Option<Response>,
    not_modified: bool,
    blocked: bool,
}

impl From<fetch::Fetched> for Got {
    fn from(f: fetch::Fetched) -> Got {
        let mut fetches = f.hops;
        fetches.push(f.record);
        let not_modified = f.response.as_ref().is_some_and(|r| r.status == 304);
        Got {
            fetches,
            response: f.response.filter(|r| r.status != 304),
            not_modified,
            blocked: f.blocked,
        }
    }
}

async fn get_if_changed(store: &Store, fetcher: &Fetcher, blog_id: i64, url: &str) -> Result<Got> {
    let previous = store.latest_response(blog_id, url)?.map(|(_, r)| r);
    Ok(fetcher.get_if_changed(url, previous.as_ref()).await.into())
}

/// Logs every request of `got` and keeps its response when it is a success (< 400); returns
/// that response.
fn keep(store: &mut Store, blog_id: i64, got: &Got) -> Result<Option<Response>> {
    match got.response.as_ref().filter(|r| r.status < 400) {
        Some(r) => {
            let (last, hops) = got.fetches.split_last().expect("a fetch was made");
            for h in hops {
                store.log_fetch(Some(blog_id), h)?;
            }
            store.save_response(blog_id, r, last)?;
            Ok(Some(r.clone()))
        }
        None => {
            for f in &got.fetches {
                store.log_fetch(Some(blog_id), f)?;
            }
            Ok(None)
        }
    }
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
        .find_blog(&blog.feed_url)?
        .context("blog no longer in the archive")?;
    let (mut ctx, _) = load_context(store, &blog).with_context(|| {
        format!(
            "{} has no extraction rules yet: its NewCrawl must run first",
            blog.feed_url
        )
    })?;
    // The last good crawl: pages fetched after it may have the new template if drift shows.
    let since = blog
        .last_update_at
        .clone()
        .or(blog.crawled_at.clone())
        .or(blog.crawl_started_at.clone());
    let mut summary = UpdateSummary {
        complete: true,
        ..Default::default()
    };
    let stopped = || {
        opts.stop
            .as_ref()
            .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
    };

    // 1. The feed.
    let previous_feed = store
        .latest_response(blog.id, &blog.feed_url)?
        .map(|(_, r)| r);
    let got = get_if_changed(store, fetcher, blog.id, &blog.feed_url).await?;
    summary.requests += got.fetches.len() as u64;
    let mut pages: BTreeMap<String, Why> = BTreeMap::new();
    let stored_entries: HashMap<String, StoredEntry> = store
        .entries(blog.id)?
        .into_iter()
        .map(|e| (e.url.clone(), e))
        .collect();
    let mut current: Vec<StoredEntry> = Vec::new();
    let kept = keep(store, blog.id, &got)?;
    if got.not_modified {
        summary.not_modified += 1;
    } else {
        let Some(r) = kept else {
            let why = got
                .fetches
                .last()
                .and_then(|f| f.error.clone().or(f.status.map(|s| format!("HTTP {s}"))))
                .unwrap_or_else(|| "no response".into());
            bail!("feed {}: {why}", blog.feed_url);
        };
        let parsed = feed::parse(&r.body, &r.final_url)
            .map_err(|e| anyhow::anyhow!("feed {} no longer parses: {e}", blog.feed_url))?;
        summary.feed_changed = true;
        current = super::stored_entries(&parsed);
        let before: HashSet<String> = previous_feed
            .as_ref()
            .and_then(|p| feed::parse(&p.body, &p.final_url).ok())
            .map(|f| {
                super::stored_entries(&f)
                    .into_iter()
                    .map(|e| e.url)
                    .collect()
            })
            .unwrap_or_default();
        for e in &current {
            let archived = store.post(&e.url)?;
            match (&archived, stored_entries.get(&e.url)) {
                (None, _) => {
                    pages.insert(e.url.clone(), Why::New);
                }
                (Some(_), Some(old)) if changed(old, e) => {
                    pages.insert(e.url.clone(), Why::Edited);
                }
                (Some(_), Some(old))
                    if e.comment_count.is_some() && old.comment_count != e.comment_count =>
                {
                    pages.entry(e.url.clone()).or_insert(Why::Comments);
                }
                _ => {}
            }
        }
        // Entries that left the feed while an older entry stayed were not pushed out by newer
        // posts: they were deleted (or unpublished, or moved). Their pages tell.
        let oldest_now = current.iter().filter_map(|e| e.published.clone()).min();
        let now_urls: HashSet<&str> = current.iter().map(|e| e.url.as_str()).collect();
        for url in before.iter().filter(|u| !now_urls.contains(u.as_str())) {
            let newer = stored_entries
                .get(url)
                .and_then(|e| e.published.clone())
                .zip(oldest_now.clone())
                .is_some_and(|(p, oldest)| p >= oldest);
            if newer && store.post(url)?.is_some() {
                pages.entry(url.clone()).or_insert(Why::MaybeGone);
            }
        }
        store.save_entries(blog.id, &current)?;
        ctx.entries
            .extend(current.iter().map(|e| (e.url.clone(), e.clone())));
    }

    // 2. Comment feeds: the site-wide ones the home page declares, else each recent post's.
    let home_feeds = match store.latest_response(blog.id, &blog.home_url)? {
        Some((_, r)) if r.status < 400 => Url::parse(&r.final_url)
            .map(|base| super::declared_comment_feeds(&fetch::decode(&r), &base))
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    // Each recent post's comment feed too (conditional GETs: an unchanged one costs a 304), so
    // an edited comment on a recent post shows even when the site-wide feed lists only the
    // newest comments.
    let recent: Vec<StoredEntry> = if !current.is_empty() {
        current.clone()
    } else {
        previous_feed
            .as_ref()
            .and_then(|p| feed::parse(&p.body, &p.final_url).ok())
            .map(|f| super::stored_entries(&f))
            .unwrap_or_default()
    };
    let mut comment_feeds = home_feeds;
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
        if stopped() {
            summary.complete = false;
            return Ok(summary);
        }
        let got = get_if_changed(store, fetcher, blog.id, &feed_url).await?;
        summary.requests += got.fetches.len() as u64;
        let Some(r) = keep(store, blog.id, &got)? else {
            summary.not_modified += got.not_modified as u64;
            continue;
        };
        let Ok(cf) = feed::parse(&r.body, &r.final_url) else {
            tracing::info!(feed = %feed_url, "comment feed does not parse");
            continue;
        };
        // Per post: (the comment's id on the page, from the link's fragment; the feed copy).
        type Item = (Option<String>, crate::store::Comment);
        let mut by_post: BTreeMap<String, Vec<Item>> = BTreeMap::new();
        for (item, c) in cf.entries.iter().zip(super::comments_of_feed(&cf)) {
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
            if store.post(&post)?.is_none() {
                continue;
            }
            let archived = store.comments(&post)?;
            let news = comments.iter().any(|(key, c)| {
                match archived.iter().find(|a| {
                    a.id == c.id
                        || key
                            .as_deref()
                            .is_some_and(|k| same_id(&a.id, k) || same_id(k, &a.id))
                }) {
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
            if news {
                if ctx.comment_rules.is_some() {
                    pages.entry(post).or_insert(Why::Comments);
                } else {
                    // No comment rule for the pages: the feed copies are the archive.
                    let copies: Vec<_> = comments.into_iter().map(|(_, c)| c).collect();
                    let (n, e) = store.save_feed_comments(&post, &copies)?;
                    summary.new_comments += n as u64;
                    summary.edited_comments += e as u64;
                }
            }
        }
    }

    // 3. The changed pages, then the comment pages they link to.
    let mut done: HashSet<String> = HashSet::new();
    // Pages stored by this crawl: extracted again if the rules are learned again.
    let mut stored_now: Vec<String> = Vec::new();
    let mut agreements: Vec<(String, Option<f64>)> = Vec::new();
    let targets: HashMap<String, feed::Targets> = {
        let entries: Vec<StoredEntry> = current.clone();
        let f = Feed {
            title: blog.title.clone(),
            kind: "stored",
            home: None,
            entries: entries.iter().map(entry_of).collect(),
        };
        entries
            .iter()
            .map(|e| e.url.clone())
            .zip(feed::targets(&f))
            .collect()
    };
    let mut round: Vec<(String, Why)> = pages.into_iter().collect();
    while !round.is_empty() {
        if stopped() {
            summary.complete = false;
            return Ok(summary);
        }
        let mut next_round = Vec::new();
        for (url, why, got) in fetch_round(store, fetcher, blog.id, &round, opts).await? {
            done.insert(url.clone());
            summary.requests += got.fetches.len() as u64;
            if got.blocked {
                for f in &got.fetches {
                    store.log_fetch(Some(blog.id), f)?;
                }
                continue;
            }
            if got.not_modified {
                summary.not_modified += 1;
                for f in &got.fetches {
                    store.log_fetch(Some(blog.id), f)?;
                }
                continue;
            }
            let status = got.response.as_ref().map(|r| r.status);
            let gone = matches!(status, Some(404 | 410)) && store.post(&url)?.is_some();
            let failed = !gone && !matches!(status, Some(s) if s < 400);
            if failed {
                summary.errors += 1;
                tracing::warn!(url = %url, status = ?status, "update crawl: page unavailable");
            }
            if why == Why::New {
                // Known to the frontier, so a resumed NewCrawl does not fetch it again.
                store.enqueue(blog.id, &[(url.clone(), 1)])?;
            }
            // Changed pages are posts (or their comment pages): rendered when the blog renders.
            let rendered = match (&opts.renderer, &got.response) {
                (Some(renderer), Some(r))
                    if !failed
                        && !gone
                        && fetch::is_html(r)
                        && super::rendering::wants(blog.renders.as_deref(), true) =>
                {
                    super::rendering::render_all(renderer, vec![(url.clone(), r.clone())])
                        .await
                        .remove(&url)
                }
                _ => None,
            };
            let processed = match rendered.as_ref().or(got.response.as_ref()) {
                Some(r) if !failed && !gone => process_safely(&ctx, &url, r),
                _ => Processed::default(),
            };
            if let (Some(t), true) = (targets.get(&url), matches!(why, Why::New | Why::Edited)) {
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
            let written = store.record_page(&PageOutcome {
                blog_id: blog.id,
                url: url.clone(),
                fetches: got.fetches,
                response: got.response,
                rendered,
                reused_response: None,
                post: processed.post,
                links: Vec::new(),
                post_links: None,
                state: if failed { "failed" } else { "done" },
                retry_at: None,
                comments: processed.comments,
                gone,
            })?;
            match written.post {
                Some(PostWrite::New) => summary.new_posts += 1,
                Some(PostWrite::Edited(v)) => {
                    summary.edited_posts += 1;
                    tracing::info!(post = %url, version = v, "post changed; previous version kept");
                }
                _ => {}
            }
            summary.gone_posts += written.gone as u64;
            summary.new_comments += written.new_comments as u64;
            summary.edited_comments += written.edited_comments as u64;
            if written.gone {
                tracing::info!(post = %url, "post gone from the blog; it stays archived");
            }
        }
        round = next_round;
    }

    // 4. Template drift.
    let learned_score = store
        .rules(blog.id)?
        .iter()
        .find(|r| r.field == "article")
        .map_or(1.0, |r| r.score);
    if let Some(why) = drift(&agreements, learned_score) {
        tracing::warn!(blog = %blog.feed_url, %why, "template drift: learning the rules again");
        relearn(store, fetcher, &blog, opts, &current).await?;
        let (ctx, _) = load_context(store, &blog)?;
        let (changed, added, comments) =
            reextract(store, &ctx, &blog, since.as_deref(), &stored_now)?;
        summary.reextracted = changed;
        summary.new_posts += added;
        summary.new_comments += comments;
        summary.relearned = Some(format!("template drift ({why}): rules learned again"));
    }
    Ok(summary)
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
    current: &[StoredEntry],
) -> Result<()> {
    let entries: Vec<StoredEntry> = if current.is_empty() {
        store.entries(blog.id)?
    } else {
        current.to_vec()
    };
    for e in &entries {
        let got = get_if_changed(store, fetcher, blog.id, &e.url).await?;
        keep(store, blog.id, &got)?;
    }
    let only: HashSet<String> = entries.into_iter().map(|e| e.url).collect();
    learn_from_entries(store, fetcher, blog, opts, Some(&only)).await
}

/// Extracts again, from their stored responses, the posts fetched at or after `since` (all
/// posts when `None`) and the pages in `also` (fetched by this crawl, posts or not yet), with
/// the blog's current rules. Changed posts keep their previous text as a version. Returns (posts
/// changed, posts archived for the first time, comments archived for the first time).
pub(super) fn reextract(
    store: &mut Store,
    ctx: &Context_,
    blog: &Blog,
    since: Option<&str>,
    also: &[String],
) -> Result<(u64, u64, u64)> {
    let mut urls: Vec<String> = also.to_vec();
    store.for_each_post(Some(blog.id), |p| {
        if since.is_none_or(|s| p.fetched_at.as_str() >= s) && !urls.contains(&p.url) {
            urls.push(p.url);
        }
        Ok(())
    })?;
    let (mut n, mut added, mut comments) = (0, 0, 0);
    for url in urls {
        let Some((id, r)) = store.latest_response(blog.id, &url)? else {
            continue;
        };
        let processed = process_safely(ctx, &url, &r);
        if processed.post.is_none() {
            continue;
        }
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
            state: "done",
            retry_at: None,
            comments: processed.comments,
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

fn process_safely(ctx: &Context_, url: &str, r: &Response) -> Processed {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| process(ctx, url, 1, r)))
        .unwrap_or_else(|_| {
            tracing::error!(url = %url, "internal error while extracting this page");
            Processed::default()
        })
}

/// Conditional GETs of one round of pages, `opts.concurrency` at a time.
async fn fetch_round(
    store: &Store,
    fetcher: &Fetcher,
    blog_id: i64,
    round: &[(String, Why)],
    opts: &CrawlOptions,
) -> Result<Vec<(String, Why, Got)>> {
    let mut previous = Vec::new();
    for (u, _) in round {
        previous.push((
            u.clone(),
            store.latest_response(blog_id, u)?.map(|(_, r)| r),
        ));
    }
    let why: HashMap<&str, Why> = round.iter().map(|(u, w)| (u.as_str(), *w)).collect();
    Ok(fetch_all_if_changed(fetcher, previous, opts.concurrency)
        .await
        .into_iter()
        .map(|(u, f)| {
            let w = why[u.as_str()];
            (u, w, Got::from(f))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feed_reply_prefixes_are_not_edits() {
        assert!(same_text(
            "Same here, Dan!",
            "In reply to Dan O'Connor. Same here, Dan!"
        ));
        assert!(!same_text(
            "Bookmarked. We counted 36.",
            "My notes from that day are short."
        ));
    }

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
