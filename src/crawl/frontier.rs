//! The frontier: which URL of a blog to fetch next.
//!
//! NewCrawl talks to the frontier only through [`Frontier`]; the queue itself lives in the store
//! (table `frontier`: URL, depth, state, priority, L(u) once fetched), so a crawl interrupted
//! at any point resumes where it stopped, with the same model.
//!
//! - [`KnnFrontier`] (the default, paper §4.3): post permalinks and their comment pages first;
//!   every other URL ordered
//!   by the distance-weighted kNN estimate of L(u), the number of post links its page holds
//!   ([`crate::core::priority`]). New URLs are scored when they are first seen. Priorities go
//!   stale as the model learns; they are refreshed lazily — the top of the queue is re-scored
//!   before it is served whenever the model has grown by a quarter since those entries were
//!   scored — and the whole queue once per doubling of the training set, so the cost stays
//!   O(log n) full passes instead of one per fetch.
//! - [`BreadthFirst`]: by depth, then discovery order (the baseline of the benchmark).

use crate::core::post_url::{comment_page_of, PostUrlPattern};
use crate::core::priority::PriorityModel;
use crate::store::{BlogId, FrontierUrl, Priority, Store};
use anyhow::Result;
use chrono::{DateTime, Utc};
use url::Url;

/// Priority of post permalinks: above any estimate.
pub const POST_PRIORITY: f64 = 1e9;

/// A crawl order over a blog's stored frontier.
pub trait Frontier {
    /// Up to `n` queued URLs to fetch next (that may be fetched at `now`), with their link
    /// depth from the seeds.
    ///
    /// # Errors
    /// The store failed.
    fn next(
        &mut self,
        store: &mut Store,
        blog_id: BlogId,
        n: usize,
        now: DateTime<Utc>,
    ) -> Result<Vec<FrontierUrl>>;
    /// Learns from a processed page: its URL and L(u), the number of post links it holds.
    fn observe(&mut self, url: &str, post_links: usize);
    /// The non-post URLs at the top of the queue when the last batch was served, with their
    /// estimated L(u), best first; `None` when the frontier does not estimate (for the
    /// yield-based stop of NewCrawl).
    fn lookahead(&self) -> Option<&[(String, f64)]> {
        None
    }
}

/// Breadth-first order: by depth, then discovery order.
#[derive(Debug, Default)]
pub struct BreadthFirst;

impl Frontier for BreadthFirst {
    fn next(
        &mut self,
        store: &mut Store,
        blog_id: BlogId,
        n: usize,
        now: DateTime<Utc>,
    ) -> Result<Vec<FrontierUrl>> {
        store.queued(blog_id, n, now)
    }

    fn observe(&mut self, _url: &str, _post_links: usize) {}
}

/// The kNN-prioritised frontier (paper §4.3).
pub struct KnnFrontier {
    pattern: PostUrlPattern,
    model: PriorityModel,
    loaded: bool,
    full_refresh_at: usize,
    lookahead: Vec<(String, f64)>,
}

impl KnnFrontier {
    /// A frontier for a blog whose posts match `pattern`, using `k` neighbours.
    pub fn new(pattern: PostUrlPattern, k: usize) -> KnnFrontier {
        KnnFrontier {
            pattern,
            model: PriorityModel::new(k),
            loaded: false,
            full_refresh_at: 1,
            lookahead: Vec::new(),
        }
    }

    /// The model (for reports and benchmarks).
    pub fn model(&self) -> &PriorityModel {
        &self.model
    }

    /// Priorities for URLs: posts first, the rest by the kNN estimate.
    pub fn score(&self, urls: &[String]) -> Vec<f64> {
        // Classify each URL once: posts and their comment pages come first; the rest, in order,
        // get the kNN estimate.
        let parsed: Vec<Option<(Url, bool)>> = urls
            .iter()
            .map(|u| {
                let u = Url::parse(u).ok()?;
                let first = self.pattern.is_post(&u)
                    || comment_page_of(&u).is_some_and(|p| self.pattern.is_post(&p));
                Some((u, first))
            })
            .collect();
        let others: Vec<Url> = parsed
            .iter()
            .flatten()
            .filter(|(_, first)| !first)
            .map(|(u, _)| u.clone())
            .collect();
        let mut estimates = self.model.estimate(&others).into_iter();
        parsed
            .iter()
            .map(|u| match u {
                Some((_, true)) => POST_PRIORITY,
                Some((_, false)) => estimates.next().unwrap_or(0.0),
                None => 0.0,
            })
            .collect()
    }

    /// Whether a priority scored when the model had `scored_at` observations is out of date: the
    /// model has grown by a quarter (at least 4 observations) since.
    fn stale(&self, scored_at: i64) -> bool {
        let n = self.model.observations() as i64;
        scored_at < 0 || n >= scored_at + (scored_at / 4).max(4)
    }

    fn rescore(&self, store: &mut Store, blog_id: BlogId, urls: Vec<String>) -> Result<()> {
        let scores = self.score(&urls);
        let at = self.model.observations() as i64;
        let rows: Vec<Priority> = urls
            .into_iter()
            .zip(scores)
            .map(|(url, priority)| Priority {
                url,
                priority,
                scored_at: at,
            })
            .collect();
        store.set_priorities(blog_id, &rows)
    }
}

impl Frontier for KnnFrontier {
    fn next(
        &mut self,
        store: &mut Store,
        blog_id: BlogId,
        n: usize,
        now: DateTime<Utc>,
    ) -> Result<Vec<FrontierUrl>> {
        if !self.loaded {
            for o in store.observations(blog_id)? {
                if let Ok(u) = Url::parse(&o.url) {
                    self.model.observe(&u, o.post_links as usize);
                }
            }
            self.loaded = true;
            self.full_refresh_at = self.model.observations().max(1);
        }
        // New URLs are scored once when first served.
        loop {
            let fresh = store.unscored(blog_id, 4096)?;
            if fresh.is_empty() {
                break;
            }
            self.rescore(store, blog_id, fresh)?;
        }
        // Once per doubling of the training set, the whole queue.
        if self.model.observations() >= 2 * self.full_refresh_at {
            let mut after = 0;
            loop {
                let page = store.queued_page(blog_id, after, 4096)?;
                let Some(last) = page.last() else { break };
                after = last.seq;
                self.rescore(store, blog_id, page.into_iter().map(|d| d.url).collect())?;
            }
            self.full_refresh_at = self.model.observations();
        }
        // The top of the queue, refreshed until it is fresh (bounded rounds).
        for _ in 0..4 {
            let top = store.best_queued(blog_id, n * 4, now)?;
            let stale: Vec<String> = top
                .iter()
                .filter(|t| t.priority < POST_PRIORITY && self.stale(t.scored_at))
                .map(|t| t.url.clone())
                .collect();
            if stale.is_empty() {
                break;
            }
            self.rescore(store, blog_id, stale)?;
        }
        let mut top = store.best_queued(blog_id, n * 4, now)?;
        self.lookahead = top
            .iter()
            .filter(|t| t.priority < POST_PRIORITY)
            .map(|t| (t.url.clone(), t.priority))
            .collect();
        top.truncate(n);
        Ok(top
            .into_iter()
            .map(|t| FrontierUrl {
                url: t.url,
                depth: t.depth,
            })
            .collect())
    }

    fn observe(&mut self, url: &str, post_links: usize) {
        if let Ok(u) = Url::parse(url) {
            self.model.observe(&u, post_links);
        }
    }

    fn lookahead(&self) -> Option<&[(String, f64)]> {
        Some(&self.lookahead)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_pages_do_not_shift_the_estimates_of_other_urls() {
        let pattern = PostUrlPattern::learn(&[
            Url::parse("http://b.org/2019/03/04/a/").unwrap(),
            Url::parse("http://b.org/2020/01/02/b/").unwrap(),
        ])
        .unwrap();
        let mut f = KnnFrontier::new(pattern, 3);
        for i in 1..6 {
            f.observe(&format!("http://b.org/page/{i}/"), 10);
            f.observe(&format!("http://b.org/docs/f-{i}.html"), 0);
        }
        let urls = [
            "http://b.org/2019/03/04/a/comment-page-2/",
            "http://b.org/docs/f-9.html",
            "http://b.org/page/9/",
        ]
        .map(String::from);
        let s = f.score(&urls);
        assert_eq!(s[0], POST_PRIORITY);
        assert!(s[1] < 1.0 && s[2] > 5.0, "{s:?}");
    }
}
