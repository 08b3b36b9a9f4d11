//! Links of a page that a NewCrawl may follow: same site, http(s), canonical, not obviously a
//! binary file or a feed.

use crate::core::page::Page;
use crate::core::post_url::canonical;
use scraper::Selector;
use url::Url;

const SKIP_EXTENSIONS: &[&str] = &[
    "jpg", "jpeg", "png", "gif", "webp", "svg", "ico", "bmp", "tif", "tiff", "avif", "pdf", "zip",
    "gz", "tgz", "bz2", "xz", "7z", "rar", "mp3", "mp4", "m4a", "ogg", "oga", "ogv", "webm", "wav",
    "flac", "mov", "avi", "mkv", "css", "js", "mjs", "json", "xml", "rss", "atom", "woff", "woff2",
    "ttf", "otf", "eot", "exe", "dmg", "iso", "apk", "doc", "docx", "xls", "xlsx", "ppt", "pptx",
    "txt", "csv",
];

/// The host a blog's crawl stays on (without `www.`, with port).
pub fn site_of(url: &Url) -> String {
    let host = url
        .host_str()
        .unwrap_or("")
        .trim_start_matches("www.")
        .to_ascii_lowercase();
    match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host,
    }
}

/// Followable links of `page` (fetched from `base`), canonical, deduplicated, in page order.
pub fn followable(page: &Page, base: &Url, site: &str) -> Vec<Url> {
    let base = Selector::parse("base[href]")
        .ok()
        .and_then(|s| {
            page.html()
                .select(&s)
                .next()
                .and_then(|b| b.value().attr("href"))
                .and_then(|h| base.join(h).ok())
        })
        .unwrap_or_else(|| base.clone());
    let sel = Selector::parse("a[href], area[href]").expect("static selector");
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for a in page.html().select(&sel) {
        let Some(href) = a.value().attr("href") else {
            continue;
        };
        let Ok(u) = base.join(href.trim()) else {
            continue;
        };
        if !matches!(u.scheme(), "http" | "https") || site_of(&u) != site {
            continue;
        }
        let u = canonical(&u);
        let last = u
            .path_segments()
            .and_then(|mut s| s.next_back())
            .unwrap_or("");
        let ext = last.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
        if ext.is_some_and(|e| SKIP_EXTENSIONS.contains(&e.as_str()))
            || matches!(last, "feed" | "rss" | "atom")
        {
            continue;
        }
        if seen.insert(u.to_string()) {
            out.push(u);
        }
    }
    out
}
