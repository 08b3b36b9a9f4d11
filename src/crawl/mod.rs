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
pub mod frontier;
mod learn;
pub mod links;
mod new_crawl;
mod page;
pub mod rendering;
mod seed;
mod update_crawl;

pub use add::{add, Added, COMMON_FEED_PATHS};
pub use new_crawl::{new_crawl, CrawlSummary, Progress};
pub use update_crawl::{update_crawl, UpdateSummary};

use crate::core::feed::{Feed, FeedEntry};
use crate::core::vocabulary;
use crate::fetch::Fetcher;
use crate::render::Renderer;
use crate::store::Blog;
#[cfg(doc)]
use crate::store::Store;
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
    /// without a new post while the best queued estimate of L is below 0.5, the blog is
    /// considered completely crawled (default 1,000). 0 disables the stop.
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

/// What a crawl runs with: its settings and the runtime objects built from the configuration
/// (`Config::crawl_options`).
#[derive(Debug, Clone, Default)]
pub struct CrawlOptions {
    /// The settings.
    pub settings: CrawlSettings,
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
