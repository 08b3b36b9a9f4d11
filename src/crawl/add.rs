//! `archive add`: a URL (a feed, or a blog's home page whose feed is discovered) becomes a blog
//! in the archive, with its feed entries, after the feed is fetched and validated. Also the feed
//! links a page declares (`<link rel="alternate">`), which UpdateCrawl reads for site-wide
//! comment feeds.

use super::links::site_of;
use crate::core::feed::{self, Feed};
use crate::fetch::{self, Fetcher, Resource, Response};
use crate::store::{Blog, Store};
use anyhow::{bail, Context, Result};
use scraper::Selector;
use url::Url;

/// Paths tried, in order, when a home page declares no feed.
pub const COMMON_FEED_PATHS: &[&str] = &[
    "feed/",
    "feed",
    "atom.xml",
    "index.xml",
    "feed.xml",
    "rss.xml",
    "rss",
    "index.rss",
    "feeds/posts/default",
    "feed.json",
];

/// Result of [`add`].
pub struct Added {
    /// The stored blog.
    pub blog: Blog,
    /// The parsed feed.
    pub feed: Feed,
    /// True when the blog was already in the archive (nothing was written).
    pub already: bool,
}

/// Fetches `url`, logs the fetch, and fails with a one-line reason on network errors and HTTP
/// errors.
async fn fetch_ok(store: &mut Store, fetcher: &Fetcher, url: &str) -> Result<Response> {
    let f = fetcher.get(url, Resource::Feed).await;
    store.log_fetches(None, f.requests())?;
    let Some(r) = f.response else {
        bail!(
            "{url}: {}",
            f.record.error.unwrap_or_else(|| "request failed".into())
        );
    };
    if r.status >= 400 {
        bail!(
            "{url}: HTTP {}{}",
            r.status,
            reqwest::StatusCode::from_u16(r.status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .map(|s| format!(" {s}"))
                .unwrap_or_default()
        );
    }
    Ok(r)
}

fn try_feed(r: &Response) -> Option<Result<Feed, feed::FeedError>> {
    let ct = fetch::content_type(r).unwrap_or_default();
    let head = String::from_utf8_lossy(&r.body[..r.body.len().min(512)])
        .trim_start_matches('\u{feff}')
        .trim_start()
        .to_ascii_lowercase();
    let looks_xml = head.starts_with("<?xml")
        || head.starts_with("<rss")
        || head.starts_with("<feed")
        || head.starts_with("<rdf");
    let looks_json = head.starts_with('{') && head.contains("jsonfeed");
    if ct.contains("xml")
        || ct.contains("rss")
        || ct.contains("atom")
        || ct.contains("json")
        || looks_xml
        || looks_json
    {
        if fetch::is_html(r) && !looks_xml {
            return None;
        }
        return Some(feed::parse(&r.body, &r.final_url));
    }
    None
}

/// Feed URLs a home page declares with `<link rel="alternate">`, comment feeds excluded.
fn declared_feeds(html: &str, base: &Url) -> Vec<String> {
    alternate_feeds(html, base)
        .into_iter()
        .filter_map(|(u, comments)| (!comments).then_some(u))
        .collect()
}

/// Comment feeds a page declares with `<link rel="alternate">` (title or URL naming comments):
/// a blog's site-wide comment feed on its home page.
pub(super) fn declared_comment_feeds(html: &str, base: &Url) -> Vec<String> {
    alternate_feeds(html, base)
        .into_iter()
        .filter_map(|(u, comments)| comments.then_some(u))
        .collect()
}

/// Every feed a page declares with `<link rel="alternate">`: (URL, is a comment feed).
fn alternate_feeds(html: &str, base: &Url) -> Vec<(String, bool)> {
    let page = crate::core::html::parse_document(html);
    let sel = Selector::parse("link[href]").expect("static selector");
    let mut out = Vec::new();
    for l in page.select(&sel) {
        let v = l.value();
        let rel = v.attr("rel").unwrap_or("").to_ascii_lowercase();
        let ty = v.attr("type").unwrap_or("").to_ascii_lowercase();
        let title = v.attr("title").unwrap_or("").to_ascii_lowercase();
        let href = v.attr("href").unwrap_or("");
        let is_feed = ty.contains("rss") || ty.contains("atom") || ty.contains("feed+json");
        if !rel.split_whitespace().any(|r| r == "alternate") || !is_feed {
            continue;
        }
        let comments = title.contains("comment") || href.to_ascii_lowercase().contains("comments");
        if let Ok(u) = base.join(href) {
            out.push((u.to_string(), comments));
        }
    }
    out
}

/// The feed of a home page: the feeds it declares, then [`COMMON_FEED_PATHS`] under the page
/// and under the site root; the first that parses with entries. Every fetch is logged.
async fn discover_feed(
    store: &mut Store,
    fetcher: &Fetcher,
    url: &Url,
    home: &Response,
) -> Result<Response> {
    let base = Url::parse(&home.final_url).unwrap_or_else(|_| url.clone());
    let html = fetch::decode(home);
    let mut candidates = declared_feeds(&html, &base);
    let root = if base.path().ends_with('/') {
        base.clone()
    } else {
        base.join("./").unwrap_or_else(|_| base.clone())
    };
    for p in COMMON_FEED_PATHS {
        for b in [&root, &base.join("/").unwrap_or_else(|_| base.clone())] {
            if let Ok(u) = b.join(p) {
                if !candidates.contains(&u.to_string()) {
                    candidates.push(u.to_string());
                }
            }
        }
    }
    for c in &candidates {
        let f = fetcher.get(c, Resource::Feed).await;
        store.log_fetches(None, f.requests())?;
        if let Some(r) = f.response.filter(|r| r.status < 400) {
            if let Some(Ok(feed)) = try_feed(&r) {
                if !feed.entries.is_empty() {
                    return Ok(r);
                }
            }
        }
    }
    bail!("no feed found for {url}: it declares no <link rel=\"alternate\"> feed and none of /feed/, /atom.xml, /index.xml, /feed.xml, /rss.xml answers; give the feed URL instead")
}

/// `archive add`: resolves `input` (a feed URL or a blog's home page) to a feed, validates it,
/// and stores the blog with its feed entries. Adding a blog already present writes nothing.
///
/// # Errors
/// One line naming the URL and what went wrong: not a URL, unreachable, HTTP error, malformed
/// feed, no feed found, or a feed without entries.
pub async fn add(store: &mut Store, fetcher: &Fetcher, input: &str) -> Result<Added> {
    let url = Url::parse(input.trim())
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .with_context(|| format!("{input:?} is not an http:// or https:// URL; give the blog's feed or home page URL"))?;
    // The URL given may be on a private address (the user's own blog): its host only.
    let fetcher = &fetcher.for_blog([url.as_str()])?;
    let first = fetch_ok(store, fetcher, url.as_str()).await?;
    let (feed_response, home) = match try_feed(&first) {
        Some(Ok(_)) => (first, None),
        Some(Err(e)) => bail!("{url}: malformed feed ({e}); check the URL is the blog's RSS/Atom/JSON feed"),
        None if fetch::is_html(&first) => {
            let feed = discover_feed(store, fetcher, &url, &first).await?;
            (feed, Some(first.final_url.clone()))
        }
        None => bail!(
            "{url} is neither a feed nor an HTML page (Content-Type: {}); give the blog's feed or home page URL",
            fetch::content_type(&first).unwrap_or_else(|| "none".into())
        ),
    };
    let feed = feed::parse(&feed_response.body, &feed_response.final_url)
        .with_context(|| format!("{}: malformed feed", feed_response.final_url))?;
    if feed.entries.is_empty() {
        bail!(
            "{}: the feed has no entries, so there is nothing to learn extraction rules from",
            feed_response.final_url
        );
    }
    let feed_url = feed_response.url.clone();
    let feed_base = Url::parse(&feed_response.final_url).unwrap_or_else(|_| url.clone());
    let home = home.unwrap_or_else(|| {
        feed.home
            .clone()
            .filter(|h| Url::parse(h).is_ok_and(|h| site_of(&h) == site_of(&feed_base)))
            .unwrap_or_else(|| {
                feed_base
                    .join("/")
                    .map(|u| u.to_string())
                    .unwrap_or_else(|_| feed_url.clone())
            })
    });
    if let Some(blog) = store.find_blog(&feed_url)? {
        return Ok(Added {
            blog,
            feed,
            already: true,
        });
    }
    let blog = store.insert_blog(
        &home,
        &feed_url,
        feed.title.as_deref(),
        feed.kind,
        &super::canonical_entries(&feed),
    )?;
    let blog = match &feed.language {
        Some(language) => {
            store.set_blog_language(blog.id, language)?;
            store.blog(blog.id)?.context("blog vanished after insert")?
        }
        None => blog,
    };
    Ok(Added {
        blog,
        feed,
        already: false,
    })
}
