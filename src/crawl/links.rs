//! Links of a page that a NewCrawl may follow: same site, http(s), canonical, not obviously a
//! binary file or a feed, not a trap (too long, too deep, a segment repeated three times).

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

/// The site a blog's crawl stays on (see [`crate::core::post_url::site_of`]).
pub use crate::core::post_url::site_of;

/// Longest URL followed.
pub const MAX_URL_LEN: usize = 2048;
/// Most path segments in a followed URL.
pub const MAX_SEGMENTS: usize = 16;

/// True for URLs that look like a trap: too long, too deep, or a path segment repeated three
/// times (`/a/b/a/b/a/b/` from relative links resolved against themselves).
pub fn looks_like_trap(u: &Url) -> bool {
    if u.as_str().len() > MAX_URL_LEN {
        return true;
    }
    let segs: Vec<&str> = u.path().split('/').filter(|s| !s.is_empty()).collect();
    if segs.len() > MAX_SEGMENTS {
        return true;
    }
    let mut counts = std::collections::HashMap::new();
    segs.iter().any(|s| {
        let n = counts.entry(*s).or_insert(0);
        *n += 1;
        *n >= 3
    })
}

/// The address `page`'s relative links resolve against: its first `<base href>`, itself
/// resolved against `url` (where the page was fetched from, after redirects), else `url`.
pub fn document_base(page: &Page, url: &Url) -> Url {
    Selector::parse("base[href]")
        .ok()
        .and_then(|s| {
            page.html()
                .select(&s)
                .next()
                .and_then(|b| b.value().attr("href"))
                .and_then(|h| url.join(h.trim()).ok())
        })
        .unwrap_or_else(|| url.clone())
}

/// Followable links of `page` (fetched from `base`), canonical, deduplicated, in page order.
pub fn followable(page: &Page, base: &Url, site: &str) -> Vec<Url> {
    let base = document_base(page, base);
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
        if !matches!(u.scheme(), "http" | "https") || site_of(&u) != site || looks_like_trap(&u) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_links_resolve_against_the_base_element() {
        let url = Url::parse("https://b.example/2024/05/a-post/").unwrap();
        let with = Page::parse("<html><head><base href='/blog/'></head><body></body></html>");
        assert_eq!(
            document_base(&with, &url)
                .join("authors/lena")
                .unwrap()
                .as_str(),
            "https://b.example/blog/authors/lena"
        );
        let without = Page::parse("<html><body><a href=x>x</a></body></html>");
        assert_eq!(document_base(&without, &url), url);
    }

    #[test]
    fn traps() {
        let t = |s: &str| looks_like_trap(&Url::parse(s).unwrap());
        assert!(t("http://a.b/x/y/x/y/x/y/"));
        assert!(t(&format!(
            "http://a.b/{}",
            "d/".repeat(20).replace("d/", "e/d/")
        )));
        assert!(t(&format!("http://a.b/?q={}", "x".repeat(3000))));
        assert!(!t("http://a.b/2019/03/04/a-post/"));
        assert!(!t("http://a.b/blog/page/2/"));
    }
}
