//! Crawl jobs, the paper's two algorithms (§4.4), stateless over the [`Store`]:
//! [`new_crawl`] (learn the rules from the feed, then crawl the whole blog) and [`update_crawl`]
//! (read the feeds, fetch only what changed); and [`add`], which turns a URL into a blog.
//!
//! - `add`: `archive add` — feed discovery and validation;
//! - `learn`: rules learned from the feed entries and their pages (paper §3);
//! - `page`: the per-page kernel both crawls share — the blog's extraction context, a fetched
//!   page → post, comments and links, and comment reconciliation with the archive;
//! - `seed`: post permalinks from sitemaps;
//! - [`rendering`]: which blogs render in Chromium, and rendering responses;
//! - [`frontier`], [`links`]: the crawl order and the links a page offers;
//! - `new_crawl`, `update_crawl`: the two jobs, top-down.

mod add;
mod backfill;
mod blog_context;
mod comment_learning;
mod drift;
pub mod frontier;
mod learn;
pub mod links;
pub mod media;
mod new_crawl;
mod page;
mod page_comments;
mod ready;
mod revisit;
pub use page::read_page;
pub mod rendering;
mod seed;
mod stopping;
pub mod traffic;
mod training;
mod update_crawl;

pub use add::{add, Added, COMMON_FEED_PATHS};
pub use new_crawl::{new_crawl, CrawlSummary, Progress};
pub use update_crawl::{update_crawl, UpdateSummary};

use crate::core::feed::{Feed, FeedEntry};
use crate::core::vocabulary;
use crate::fetch::Fetcher;
use crate::fetch::{Fetched, Resource};
use crate::render::Renderer;
use crate::store::Blog;
use crate::store::Store;
use anyhow::Result;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// Attempts per URL when a host answers 429/503 (the last one gives up).
pub const MAX_ATTEMPTS: u32 = 4;

vocabulary! {
    /// The crawl order of NewCrawl.
    pub enum FrontierKind {
        /// Distance-weighted kNN estimate of post links (paper §4.3).
        Knn = "knn",
        /// Breadth-first.
        BreadthFirst = "bfs",
    }
}

/// How crawls crawl: the `[crawl]` section of the configuration file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CrawlSettings {
    /// Stop a NewCrawl once this many of the blog's frontier URLs are processed (default
    /// 10,000; the crawl stays resumable).
    pub max_pages: u64,
    /// Requests in flight at once (default 4; politeness bounds each host).
    pub concurrency: usize,
    /// Per-request timeout (default 30 s).
    #[serde(with = "humantime_serde")]
    pub timeout: Duration,
    /// Crawl order (default kNN).
    pub frontier: FrontierKind,
    /// Neighbours of the kNN estimate (default 5).
    pub k: usize,
    /// Yield-based stop (kNN frontier only): after this many consecutive processed pages
    /// without a new post while no queued page is promising, the blog is considered completely
    /// crawled, whatever capture–recapture says (default 1,000). 0 disables every early stop:
    /// the crawl goes on until the frontier is empty.
    pub patience: u64,
    /// Most URLs followed per URL template (the path with digits generalised, query values
    /// dropped): bounds calendars and other generated URL spaces (default 2,000).
    pub max_per_template: usize,
    /// Feed entries rules are learned from, at most (default 20; the paper used the feed's
    /// 10–20): a sample spread over the feed, never more than `max_pages`.
    pub learn_entries: usize,
    /// Longest a crawl waits idle for pages a server asked to retry later (429/503
    /// `Retry-After`, robots.txt unreachable) once nothing else is left (default 10 s): past it
    /// the crawl ends, those pages deferred to the next run (the daemon schedules it).
    #[serde(with = "humantime_serde")]
    pub max_retry_wait: Duration,
}

impl Default for CrawlSettings {
    fn default() -> Self {
        CrawlSettings {
            max_pages: 10_000,
            concurrency: 4,
            timeout: Duration::from_secs(30),
            frontier: FrontierKind::Knn,
            k: 5,
            patience: 1_000,
            max_per_template: 2_000,
            learn_entries: 20,
            max_retry_wait: Duration::from_secs(10),
        }
    }
}

/// How UpdateCrawl looks past the feed: the `[update]` section of the configuration file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UpdateSettings {
    /// Posts whose comments are checked per UpdateCrawl, at most (default 20), longest overdue
    /// first: a 10,000-post blog is covered over time, without bursts.
    pub max_comment_checks: usize,
    /// Intervals between two comment checks of a post, ascending (default 1 day, 7, 30, 90 and
    /// 180 days): the next check comes after a quarter of the post's age, rounded down to one
    /// of these (`core::schedule::comment_check_interval`).
    #[serde(with = "durations")]
    pub comment_checks: Vec<Duration>,
    /// Posts older than this get no more comment checks (default 0: no limit). Posts whose page
    /// says comments are closed get none either.
    #[serde(with = "humantime_serde")]
    pub comment_check_max_age: Duration,
    /// Listing pages and older feed pages read, at most, per UpdateCrawl to find posts the feed
    /// no longer shows (default 50).
    pub max_backfill_pages: usize,
    /// Sitemaps are read again (conditional GETs) at least this often, to catch posts
    /// published with an old date (default 1 day); always when the feed no longer reaches an
    /// archived post.
    #[serde(with = "humantime_serde")]
    pub sitemap_interval: Duration,
    /// Every archived post is fetched again (conditional GET) at least once within this window
    /// (default 30 days), so edits, deletions and moves outside the feed are kept too: recent
    /// and edited posts sooner (`core::revisit::revisit_interval`), spread over the updates.
    #[serde(with = "humantime_serde")]
    pub revisit_within: Duration,
    /// Posts revisited per UpdateCrawl, at most (default 300), longest overdue first: the bound
    /// on one update's requests after a long pause.
    pub max_revisits: usize,
}

impl Default for UpdateSettings {
    fn default() -> Self {
        let day = Duration::from_secs(86_400);
        UpdateSettings {
            max_comment_checks: 20,
            comment_checks: vec![day, 7 * day, 30 * day, 90 * day, 180 * day],
            comment_check_max_age: Duration::ZERO,
            max_backfill_pages: 50,
            sitemap_interval: day,
            revisit_within: 30 * day,
            max_revisits: 300,
        }
    }
}

/// A list of durations written like "1day", "12h".
mod durations {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(v: &[Duration], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|d| humantime::format_duration(*d).to_string()))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Duration>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|t| humantime::parse_duration(t).map_err(serde::de::Error::custom))
            .collect()
    }
}

/// What a crawl runs with: its settings and the runtime objects built from the configuration
/// (`Config::crawl_options`).
#[derive(Debug, Clone, Default)]
pub struct CrawlOptions {
    /// The settings.
    pub settings: CrawlSettings,
    /// How UpdateCrawl looks past the feed.
    pub update: UpdateSettings,
    /// Posts' requisites and media (`[media]`).
    pub media: media::MediaSettings,
    /// The render stage (headless Chromium), for blogs that need JavaScript; launched on first
    /// use. `None`: blogs that need it fail with a clear error.
    pub renderer: Option<Arc<Renderer>>,
    /// Set from outside (SIGTERM, SIGINT) to stop after the pages in flight are recorded; the
    /// crawl stays resumable.
    pub stop: Option<Arc<AtomicBool>>,
}

impl CrawlOptions {
    /// True once a stop was requested.
    pub fn stopped(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    }
}

/// The fetcher for one blog's crawl: allowed to reach the blog's own host even when it was
/// added by a private address (`fetch::address`), and no other private address.
///
/// # Errors
/// The HTTP client cannot be built.
pub fn blog_fetcher(fetcher: &Fetcher, blog: &Blog) -> anyhow::Result<Fetcher> {
    let urls = [
        Some(&blog.home_url),
        Some(&blog.feed_url),
        blog.start_url.as_ref(),
    ];
    fetcher.for_blog(urls.into_iter().flatten().map(String::as_str))
}

/// The entries of a parsed feed as the archive keys them: permalinks canonicalised
/// ([`crate::core::post_url::canonical`]), entries without an http(s) permalink dropped.
pub fn canonical_entries(feed: &Feed) -> Vec<FeedEntry> {
    feed.entries
        .iter()
        .filter_map(|e| {
            let url = Url::parse(&e.url).ok()?;
            matches!(url.scheme(), "http" | "https").then(|| FeedEntry {
                url: crate::core::post_url::canonical(&url).to_string(),
                ..e.clone()
            })
        })
        .collect()
}

/// A conditional GET of `url` on its latest stored response, logged and kept.
async fn get_if_changed(
    store: &mut Store,
    fetcher: &Fetcher,
    blog_id: crate::store::BlogId,
    url: &str,
    resource: Resource,
) -> Result<Fetched> {
    let previous = store.latest_response(blog_id, url)?.map(|s| s.response);
    let f = fetcher
        .get_if_changed(url, previous.as_ref(), resource)
        .await;
    store.keep_fetched(blog_id, &f)?;
    Ok(f)
}
