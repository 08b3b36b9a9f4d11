//! Seeds beyond the feed: post permalinks listed by the site's sitemaps (robots.txt `Sitemap:`
//! lines, then `/sitemap.xml` and `/sitemap_index.xml`), so the frontier starts with posts the
//! feed no longer lists.

use crate::core::post_url::{canonical, PostUrlPattern};
use crate::core::sitemap::{self, Sitemap};
use crate::fetch::{Fetcher, Resource};
use crate::store::{Blog, Store};
use anyhow::Result;
use std::collections::HashSet;
use url::Url;

/// Most sitemap files read per blog.
pub const MAX_SITEMAPS: usize = 20;
/// Levels of sitemap indexes followed.
pub const MAX_SITEMAP_DEPTH: u32 = 2;

/// Post permalinks (canonical, sorted, deduplicated) listed by the site's sitemaps, following
/// sitemap indexes [`MAX_SITEMAP_DEPTH`] levels deep and reading at most [`MAX_SITEMAPS`]
/// files, and never more than `budget`. Every fetch is logged and every sitemap kept; a
/// missing or broken sitemap is not an error.
///
/// # Errors
/// Only when the store fails.
pub(super) async fn sitemap_posts(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    pattern: &PostUrlPattern,
    budget: u64,
) -> Result<Vec<String>> {
    let home = Url::parse(&blog.home_url)?;
    let mut hops = Vec::new();
    let host = fetcher.robots_of(&home, &mut hops).await;
    store.log_fetches(Some(blog.id), &hops)?;
    let mut queue: Vec<(String, u32)> = host
        .and_then(|h| h.robots.get().map(|r| r.sitemaps.clone()))
        .unwrap_or_default()
        .into_iter()
        .map(|u| (u, 0))
        .collect();
    for p in ["/sitemap.xml", "/sitemap_index.xml"] {
        let u = home.join(p)?.to_string();
        if !queue.iter().any(|(q, _)| *q == u) {
            queue.push((u, 0));
        }
    }
    let mut seen = HashSet::new();
    let mut posts = Vec::new();
    let mut files = 0;
    while let Some((u, level)) = queue.pop() {
        if files >= MAX_SITEMAPS.min(budget as usize) || !seen.insert(u.clone()) {
            continue;
        }
        files += 1;
        let f = fetcher.get(&u, Resource::Sitemap).await;
        store.keep_fetched(blog.id, &f)?;
        let Some(r) = f.success() else {
            continue;
        };
        match sitemap::parse(&r.body) {
            Ok(Sitemap::Urls(urls)) => posts.extend(
                urls.into_iter()
                    .filter_map(|u| Url::parse(&u).ok())
                    .filter(|u| pattern.is_post(u))
                    .map(|u| canonical(&u).to_string()),
            ),
            Ok(Sitemap::Index(more)) if level < MAX_SITEMAP_DEPTH => {
                queue.extend(more.into_iter().map(|m| (m, level + 1)))
            }
            Ok(_) => {}
            Err(e) => tracing::info!(sitemap = %u, error = %e, "ignoring sitemap"),
        }
    }
    posts.sort();
    posts.dedup();
    Ok(posts)
}
