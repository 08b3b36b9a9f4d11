//! Seeds beyond the feed: post permalinks listed by the site's sitemaps (robots.txt `Sitemap:`
//! lines, then `/sitemap.xml` and `/sitemap_index.xml`), so the
//! frontier starts with posts the feed no longer lists, and UpdateCrawl finds the posts that
//! appeared (or were back-dated) since its last run.

use crate::core::post_url::{canonical, PostUrlPattern};
use crate::core::sitemap::{self, Sitemap, SitemapUrl};
use crate::fetch::{Fetcher, Resource};
use crate::store::{Blog, Store};
use anyhow::Result;
use std::collections::HashSet;
use url::Url;

/// Most sitemap files read per blog.
pub const MAX_SITEMAPS: usize = 20;
/// Levels of sitemap indexes followed.
pub const MAX_SITEMAP_DEPTH: u32 = 2;

/// What the sitemaps list.
#[derive(Debug, Default)]
pub(super) struct Sitemaps {
    /// Post permalinks (canonical, sorted, deduplicated) with their `lastmod`.
    pub posts: Vec<SitemapUrl>,
    /// Sitemap files read.
    pub files: usize,
    /// Some sitemap changed since it was last read (not every answer was 304).
    pub changed: bool,
    /// HTTP requests made.
    pub requests: u64,
}

/// Reads the site's sitemaps: conditional GETs on the stored copies (an unchanged sitemap
/// costs a 304 and is read from the store), following sitemap indexes [`MAX_SITEMAP_DEPTH`]
/// levels deep, at most [`MAX_SITEMAPS`] files and never more than `budget`. Every fetch is
/// logged and every sitemap kept; a missing or broken sitemap is not an error.
///
/// # Errors
/// Only when the store fails.
pub(super) async fn read_sitemaps(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    pattern: &PostUrlPattern,
    budget: u64,
) -> Result<Sitemaps> {
    let home = Url::parse(&blog.home_url)?;
    let mut hops = Vec::new();
    let host = fetcher.robots_of(&home, &mut hops).await;
    store.log_fetches(Some(blog.id), &hops)?;
    let mut out = Sitemaps {
        requests: hops.len() as u64,
        ..Default::default()
    };
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
    while let Some((u, level)) = queue.pop() {
        if out.files >= MAX_SITEMAPS.min(budget as usize) || !seen.insert(u.clone()) {
            continue;
        }
        out.files += 1;
        let previous = store.latest_response(blog.id, &u)?.map(|s| s.response);
        let f = fetcher
            .get_if_changed(&u, previous.as_ref(), Resource::Sitemap)
            .await;
        store.keep_fetched(blog.id, &f)?;
        out.requests += f.requests().count() as u64;
        let body = match (f.success(), f.not_modified()) {
            (Some(r), _) => {
                out.changed = true;
                r.body.clone()
            }
            (None, true) => match previous {
                Some(p) => p.body,
                None => continue,
            },
            (None, false) => continue,
        };
        match sitemap::parse(&body) {
            Ok(Sitemap::Urls(urls)) => posts.extend(urls.into_iter().filter_map(|s| {
                let url = Url::parse(&s.loc).ok().filter(|u| pattern.is_post(u))?;
                Some(SitemapUrl {
                    loc: canonical(&url).to_string(),
                    lastmod: s.lastmod,
                })
            })),
            Ok(Sitemap::Index(more)) if level < MAX_SITEMAP_DEPTH => {
                queue.extend(more.into_iter().map(|m| (m, level + 1)))
            }
            Ok(_) => {}
            Err(e) => tracing::info!(sitemap = %u, error = %e, "ignoring sitemap"),
        }
    }
    posts.sort_by(|a, b| a.loc.cmp(&b.loc));
    posts.dedup_by(|a, b| a.loc == b.loc);
    out.posts = posts;
    Ok(out)
}

/// Post permalinks (canonical, sorted, deduplicated) listed by the site's sitemaps (see
/// [`read_sitemaps`]).
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
    let read = read_sitemaps(store, fetcher, blog, pattern, budget).await?;
    Ok(read.posts.into_iter().map(|s| s.loc).collect())
}
