//! UpdateCrawl's revisits (issue 30): which archived posts are fetched again this run, when
//! each is due next, and what a redirect met on the way says (moved, gone, nothing). The
//! policy is `core::revisit`'s; the pages go through UpdateCrawl's one fetch path
//! (`crawl::update_crawl`), so they are polite, conditional and within the job's bounds.

use super::UpdateSettings;
use crate::core::post_url::{canonical, PostUrlPattern};
use crate::core::revisit::{first_revisit, judge_redirect, revisit_interval, Redirected};
use crate::core::schedule;
use crate::fetch::Fetched;
use crate::store::{BlogId, Revisit, Store};
use anyhow::Result;
use chrono::{DateTime, Utc};
use url::Url;

/// The interval until `post`'s next revisit at `now` (its age and its edits so far).
fn interval(post: &Revisit, update: &UpdateSettings, now: DateTime<Utc>) -> std::time::Duration {
    let age = post
        .published
        .map(|p| (now - p.with_timezone(&Utc)).to_std().unwrap_or_default())
        .unwrap_or(update.revisit_within.saturating_mul(4));
    revisit_interval(age, post.version.saturating_sub(1), update.revisit_within)
}

/// When `post`, fetched again at `now`, is due next.
pub(super) fn next_revisit(
    post: &Revisit,
    update: &UpdateSettings,
    now: DateTime<Utc>,
) -> DateTime<Utc> {
    schedule::after(now, interval(post, update, now))
}

/// Plans the posts of a blog not planned yet (each at a phase of its interval from its last
/// fetch, drawn from its URL, so posts archived together come due spread out; the share whose
/// phase has passed is due at once), then returns the posts due at `now`,
/// at most `[update] max_revisits`, longest overdue first.
///
/// # Errors
/// The store failed.
pub(super) fn due(
    store: &mut Store,
    blog_id: BlogId,
    update: &UpdateSettings,
    now: DateTime<Utc>,
) -> Result<Vec<Revisit>> {
    let plans: Vec<(String, DateTime<Utc>)> = store
        .unplanned_revisits(blog_id)?
        .into_iter()
        .map(|p| {
            // Within the interval from the post's last fetch; posts fetched longer ago than
            // that (archived before revisits existed) are spread over the interval from now.
            let every = interval(&p, update, now);
            let since = if schedule::after(p.last_fetch, every) > now {
                p.last_fetch
            } else {
                now
            };
            (p.url.clone(), first_revisit(&p.url, every, since))
        })
        .collect();
    if !plans.is_empty() {
        tracing::info!(blog = %blog_id, posts = plans.len(), "revisits planned");
        store.plan_revisits(&plans)?;
    }
    store.due_revisits(blog_id, now, update.revisit_within, update.max_revisits)
}

/// What a fetch of the archived post `post` that met a redirect says: the post moved (to
/// another permalink of the blog, by a permanent redirect), is gone (sent to the home page or
/// a login page), or nothing (no redirect, one to the same URL written otherwise, or another).
pub(super) fn redirected(
    post: &Revisit,
    got: &Fetched,
    home: &Url,
    pattern: &PostUrlPattern,
) -> Redirected {
    let (Some(first), Some(r)) = (got.redirects.first(), got.response.as_ref()) else {
        return Redirected::Elsewhere;
    };
    let Ok(to) = Url::parse(&r.final_url) else {
        return Redirected::Elsewhere;
    };
    let to = canonical(&to);
    if to.as_str() == post.fetch_url() || to.as_str() == post.url {
        return Redirected::Elsewhere;
    }
    judge_redirect(first.status, &to, home, |u| pattern.is_post(u))
}

/// The archived posts of the blog (not gone) that a new page at `url` may be, moved: those with
/// its title under another URL. Their own URLs tell (a permanent redirect to `url` is a move).
///
/// # Errors
/// The store failed.
pub(super) fn twins(
    store: &Store,
    blog_id: BlogId,
    url: &str,
    post: &crate::store::NewPost,
) -> Result<Vec<Revisit>> {
    let Some(title) = post.title.as_deref().filter(|t| !t.trim().is_empty()) else {
        return Ok(Vec::new());
    };
    Ok(store
        .posts_titled(blog_id, title)?
        .into_iter()
        .filter(|t| t.url != url && t.moved_to.as_deref() != Some(url))
        .collect())
}

/// The feed of a blog's most recently modified posts, where its engine offers one: WordPress
/// (named by the feed's `generator`) orders any feed by modification time with
/// `?orderby=modified`. `None` for other engines, or a feed URL that orders itself already.
pub(super) fn modified_feed_url(feed_url: &str, generator: Option<&str>) -> Option<String> {
    if !generator?.to_ascii_lowercase().contains("wordpress") {
        return None;
    }
    let mut url = Url::parse(feed_url).ok()?;
    if url.query_pairs().any(|(k, _)| k == "orderby") {
        return None;
    }
    url.query_pairs_mut().append_pair("orderby", "modified");
    Some(url.to_string())
}
