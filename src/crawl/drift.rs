//! Template drift (paper §4.4, "the blog changed its theme"): when the pages of new or edited
//! feed entries stop agreeing with their entries under the current rules, UpdateCrawl learns
//! the rules again from the current entries and extracts the recently fetched posts again
//! from their stored responses. Old rules stay in the store, inactive.

use super::blog_context::BlogContext;
use super::page::process_safely;
use super::page_comments::comment_write;
use super::traffic::BrowserTraffic;
use super::{get_if_changed, CrawlOptions};
use crate::core::feed::FeedEntry;
use crate::fetch::{Fetcher, Resource};
use crate::store::{Blog, PageOutcome, PageState, PostWrite, Store, StoredResponse};
use anyhow::Result;
use chrono::{DateTime, Utc};
use std::collections::HashSet;
use std::sync::Arc;

/// Template drift: most feed entries fetched in this crawl no longer agree with the text their
/// page yields. Needs at least one page; "most" is more than half, "no longer agree" is a
/// Dice below half of the learned rule's own score (and below 0.5).
pub(super) fn drift(agreements: &[(String, Option<f64>)], learned_score: f64) -> Option<String> {
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
pub(super) async fn relearn(
    store: &mut Store,
    fetcher: &Fetcher,
    traffic: &Arc<BrowserTraffic>,
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
    super::learn::learn_from_entries(store, fetcher, traffic, blog, opts, Some(&only)).await
}

/// Extracts again, from their stored responses, the posts fetched at or after `since` (all
/// posts when `None`) and the pages in `also` (fetched by this crawl, posts or not yet), with
/// the blog's current rules. Changed posts keep their previous text as a version. Returns (posts
/// changed, posts archived for the first time, comments archived for the first time).
pub(super) fn reextract(
    store: &mut Store,
    ctx: &BlogContext,
    blog: &Blog,
    since: Option<DateTime<Utc>>,
    also: &[String],
) -> Result<(u64, u64, u64)> {
    let mut urls: Vec<String> = also.to_vec();
    let mut archived = std::collections::HashSet::new();
    store.for_each_post(Some(blog.id), |p| {
        if since.is_none_or(|s| p.fetched_at >= s) && !urls.contains(&p.url) {
            archived.insert(p.url.clone());
            urls.push(p.url);
        }
        Ok(())
    })?;
    let (mut n, mut added, mut comments) = (0, 0, 0);
    for url in urls {
        let Some(StoredResponse { id, response: r }) = store.latest_response(blog.id, &url)? else {
            continue;
        };
        let Some(mut processed) = process_safely(ctx, &url, 1, &r) else {
            continue;
        };
        if archived.contains(&url) {
            processed.keep_identity(&url);
        }
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
            redirects: Vec::new(),
            rendered: None,
            reused_response: Some(id),
            post: processed.post,
            links: Vec::new(),
            post_links: None,
            state: PageState::Done,
            retry_at: None,
            error: None,
            comments: write,
            gone: false,
            moved_to: None,
            next_revisit: None,
            page: None,
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
