//! The frontier: which URL of a blog to fetch next.
//!
//! NewCrawl talks to the frontier only through [`Frontier`]; the queue itself lives in the store
//! (table `frontier`), so a crawl interrupted at any point resumes where it stopped. This issue's
//! frontier is breadth-first; the paper's distance-weighted kNN priority (§4.3) plugs in here.

use crate::store::Store;
use anyhow::Result;

/// A crawl order over a blog's stored frontier.
pub trait Frontier {
    /// Up to `n` queued URLs to fetch next, with their link depth from the seeds.
    fn next(&mut self, store: &Store, blog_id: i64, n: usize) -> Result<Vec<(String, u32)>>;
    /// Learns from a processed page: its URL and L(u), the number of post links it holds
    /// (paper §4.3). Breadth-first ignores it.
    fn observe(&mut self, url: &str, post_links: usize);
}

/// Breadth-first order: by depth, then discovery order.
#[derive(Debug, Default)]
pub struct BreadthFirst;

impl Frontier for BreadthFirst {
    fn next(&mut self, store: &Store, blog_id: i64, n: usize) -> Result<Vec<(String, u32)>> {
        store.queued(blog_id, n)
    }

    fn observe(&mut self, _url: &str, _post_links: usize) {}
}
