//! Page requisites and media of archived posts: after a crawl archives posts, each post's
//! images, stylesheets (and the fonts and images they use), favicon, audio/video and
//! attachments (`core::requisites`), and the enclosures its feed entry carries, are fetched through `fetch` (politeness always; robots.txt
//! per `[robots] requisites`), kept as responses (bodies once by SHA-256) and listed on the
//! post (`post_media`). A requisite shared by many posts is fetched once per blog. A rendered
//! post's requisites are those of its rendered DOM and of the page as served.
//!
//! Stateless and resumable: posts whose media are not captured yet (`media_at`) are found in
//! the store, so a crash or a stop only leaves work for the next job.

use crate::core::html::parse_document;
use crate::core::requisites::{self, Kind, Requisite};
use crate::fetch::{decode_body, Fetcher};
use crate::store::{Blog, MediaState, NewMedia, Store};
use anyhow::Result;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use url::Url;

/// The `[media]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MediaSettings {
    /// Capture posts' requisites and media at all (default true).
    pub capture: bool,
    /// Largest file kept, in MB (default 100); larger ones are recorded as failed, saying so.
    pub max_file_mb: f64,
    /// Most media kept per blog, in MB of distinct bodies (default 2048); past it files are
    /// recorded as skipped, logged and counted, not an error.
    pub max_blog_mb: f64,
    /// Most requisites recorded per post (default 200).
    pub max_per_post: usize,
    /// Requests in flight at once (each host still bounded by its politeness; default 4).
    pub concurrency: usize,
    /// Also keep files on other hosts than the post's (CDNs, image hosts; default true).
    pub other_hosts: bool,
}

impl Default for MediaSettings {
    fn default() -> Self {
        MediaSettings {
            capture: true,
            max_file_mb: 100.0,
            max_blog_mb: 2048.0,
            max_per_post: 200,
            concurrency: 4,
            other_hosts: true,
        }
    }
}

/// What a capture run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MediaSummary {
    /// Posts whose media were captured.
    pub posts: u64,
    /// Files fetched by this run.
    pub fetched: u64,
    /// Files already in the archive (shared with other posts), not fetched again.
    pub reused: u64,
    /// Files whose fetch failed (network, cap, robots.txt with `requisites = "obey"`).
    pub failed: u64,
    /// Files not fetched: the blog's media budget was spent.
    pub skipped: u64,
    /// Bytes fetched.
    pub bytes: u64,
}

impl std::fmt::Display for MediaSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "media of {} posts: {} files fetched ({:.1} MB), {} shared, {} failed, {} over budget",
            self.posts,
            self.fetched,
            self.bytes as f64 / 1e6,
            self.reused,
            self.failed,
            self.skipped
        )
    }
}

/// Captures the media of every post of `blog` not captured yet, `chunk` posts at a time,
/// until none is left or `stopped()` says to stop.
///
/// # Errors
/// The store failed (fetch errors are recorded per file, not returned).
pub async fn capture_pending(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    settings: &MediaSettings,
    stopped: &dyn Fn() -> bool,
) -> Result<MediaSummary> {
    let mut summary = MediaSummary::default();
    if !settings.capture {
        return Ok(summary);
    }
    let max_file = (settings.max_file_mb.max(0.0) * 1024.0 * 1024.0) as usize;
    let budget = (settings.max_blog_mb.max(0.0) * 1024.0 * 1024.0) as u64;
    let mut used = store.media_bytes(blog.id)?;
    // Failures of this run, so a broken image on every post is requested once.
    let mut failed: std::collections::HashMap<String, String> = Default::default();
    loop {
        let posts = store.posts_without_media(blog.id, 20)?;
        if posts.is_empty() || stopped() {
            break;
        }
        for (post_url, response_id) in posts {
            if stopped() {
                break;
            }
            let Ok(base) = Url::parse(&post_url) else {
                store.set_post_media(&post_url, &[])?;
                continue;
            };
            let Some(body) = store.response_body(response_id)? else {
                store.set_post_media(&post_url, &[])?;
                continue;
            };
            let html = String::from_utf8_lossy(&body);
            let mut wanted = requisites::of_page(&parse_document(&html), &base);
            // A rendered post's DOM has lost what its scripts replaced (a lazy loader's
            // placeholder `src`), which the page as served still loads first: add the raw
            // page's requisites too.
            if let Some((raw_id, _)) = store.response_for(blog.id, &post_url)? {
                if raw_id != response_id {
                    if let Some(raw) = store.response_body(raw_id)? {
                        let raw = parse_document(&String::from_utf8_lossy(&raw));
                        for r in requisites::of_page(&raw, &base) {
                            push_new(&mut wanted, r);
                        }
                    }
                }
            }
            // The feed's enclosures (podcast episodes) are the post's media even when the
            // page never links them.
            for e in store.enclosures_of(blog.id, &post_url)? {
                let kind = requisites::enclosure_kind(e.mime.as_deref());
                push_new(&mut wanted, Requisite { url: e.url, kind });
            }
            if !settings.other_hosts {
                wanted.retain(|r| same_host(&r.url, &base));
            }
            wanted.truncate(settings.max_per_post);
            let mut done: Vec<NewMedia> = Vec::new();
            // Waves: the page's requisites, then what its stylesheets use, then theirs.
            for _wave in 0..3 {
                if wanted.is_empty() {
                    break;
                }
                let mut to_fetch = Vec::new();
                for r in std::mem::take(&mut wanted) {
                    match store.response_for(blog.id, &r.url)? {
                        Some((id, status)) => {
                            summary.reused += 1;
                            done.push(stored(&r, id));
                            if r.kind == Kind::Stylesheet && status < 400 {
                                to_fetch.push((r, Some(id)));
                            }
                        }
                        None if failed.contains_key(&r.url) => {
                            summary.failed += 1;
                            let reason = failed[&r.url].clone();
                            done.push(NewMedia {
                                url: r.url,
                                kind: r.kind,
                                response_id: None,
                                state: MediaState::Failed,
                                reason: Some(reason),
                            });
                        }
                        None if used >= budget => {
                            summary.skipped += 1;
                            done.push(NewMedia {
                                url: r.url,
                                kind: r.kind,
                                response_id: None,
                                state: MediaState::Skipped,
                                reason: Some(format!(
                                    "over the blog's media budget ([media] max_blog_mb = {})",
                                    settings.max_blog_mb
                                )),
                            });
                        }
                        None => to_fetch.push((r, None)),
                    }
                }
                let (stored_sheets, fetched): (Vec<_>, Vec<_>) =
                    to_fetch.into_iter().partition(|(_, id)| id.is_some());
                let results: Vec<_> = futures::stream::iter(fetched.into_iter().map(|(r, _)| {
                    let fetcher = fetcher.clone();
                    async move {
                        let f = fetcher
                            .get_requisite(&r.url, max_file, "[media] max_file_mb")
                            .await;
                        (r, f)
                    }
                }))
                .buffer_unordered(settings.concurrency.max(1))
                .collect()
                .await;
                let mut sheets: Vec<(Requisite, i64)> = stored_sheets
                    .into_iter()
                    .filter_map(|(r, id)| id.map(|id| (r, id)))
                    .collect();
                for (r, f) in results {
                    match store.keep_fetched(blog.id, &f)? {
                        Some(id) => {
                            summary.fetched += 1;
                            let bytes = f.response.as_ref().map_or(0, |r| r.body.len() as u64);
                            summary.bytes += bytes;
                            used += bytes;
                            if r.kind == Kind::Stylesheet && f.success().is_some() {
                                sheets.push((r.clone(), id));
                            }
                            done.push(stored(&r, id));
                        }
                        None => {
                            summary.failed += 1;
                            let reason = f
                                .record
                                .failure()
                                .unwrap_or_else(|| "no response".to_string());
                            tracing::info!(url = %r.url, post = %post_url, "requisite not kept: {reason}");
                            failed.insert(r.url.clone(), reason.clone());
                            done.push(NewMedia {
                                url: r.url,
                                kind: r.kind,
                                response_id: None,
                                state: MediaState::Failed,
                                reason: Some(reason),
                            });
                        }
                    }
                }
                for (sheet, id) in sheets {
                    let Some(body) = store.response_body(id)? else {
                        continue;
                    };
                    let Ok(sheet_url) = Url::parse(&sheet.url) else {
                        continue;
                    };
                    let css = decode_body(&body, None);
                    for r in requisites::css_urls(&css, &sheet_url) {
                        let known = done.iter().any(|d| d.url == r.url)
                            || wanted.iter().any(|w| w.url == r.url);
                        let allowed = settings.other_hosts || same_host(&r.url, &base);
                        if !known && allowed && done.len() + wanted.len() < settings.max_per_post {
                            wanted.push(r);
                        }
                    }
                }
            }
            store.set_post_media(&post_url, &done)?;
            summary.posts += 1;
        }
    }
    if summary.posts > 0 {
        tracing::info!(blog = %blog.home_url, "{summary}");
    }
    Ok(summary)
}

/// Adds `r` to `wanted` unless its URL is there already.
fn push_new(wanted: &mut Vec<Requisite>, r: Requisite) {
    if !wanted.iter().any(|w| w.url == r.url) {
        wanted.push(r);
    }
}

fn stored(r: &Requisite, id: i64) -> NewMedia {
    NewMedia {
        url: r.url.clone(),
        kind: r.kind,
        response_id: Some(id),
        state: MediaState::Stored,
        reason: None,
    }
}

fn same_host(url: &str, base: &Url) -> bool {
    Url::parse(url).is_ok_and(|u| u.host_str() == base.host_str())
}
