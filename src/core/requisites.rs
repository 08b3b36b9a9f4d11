//! What a post page needs to be shown as it looked, and the media it carries: images (every
//! `srcset` candidate, lazy `data-src`/`data-srcset`, `<picture>` sources, inline `style`
//! `url()`), stylesheets, favicons, scripts (for replay tools that run them; the reader never
//! does), audio/video (and posters), and attachments linked from the page on its own site
//! (PDF, office documents, archives, audio…). Stylesheets' own `url()`s
//! (images, fonts, `@import`) come from [`css_urls`] once they are fetched.

use scraper::{Html, Selector};
use url::Url;

crate::core::vocabulary! {
    /// What a requisite is, for the record and `archive show`.
    pub enum Kind {
        /// An image (`img`, `picture`, a CSS background, a video poster).
        Image = "image",
        /// A stylesheet.
        Stylesheet = "stylesheet",
        /// A font (from a stylesheet's `@font-face`).
        Font = "font",
        /// The favicon or touch icon.
        Icon = "icon",
        /// Audio or video (`audio`, `video`, `source`, feed enclosures).
        Media = "media",
        /// A linked file of the post's own site (PDF, documents, archives).
        Attachment = "attachment",
        /// A script the page loads (`<script src>`, `rel=preload as=script`,
        /// `rel=modulepreload`): archived so that a replay (pywb, ReplayWeb.page) draws what
        /// it draws; the reader's own pages never run one.
        Script = "script",
    }
}

/// One URL a page needs, absolute, without fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requisite {
    /// Absolute URL.
    pub url: String,
    /// What it is.
    pub kind: Kind,
}

/// File extensions of links kept as attachments (lower case).
const ATTACHMENTS: &[&str] = &[
    "pdf", "doc", "docx", "odt", "rtf", "ppt", "pptx", "odp", "xls", "xlsx", "ods", "csv", "epub",
    "zip", "tar", "gz", "tgz", "7z", "mp3", "ogg", "oga", "opus", "m4a", "wav", "flac", "mp4",
    "m4v", "webm", "mov", "txt",
];

const FONTS: &[&str] = &["woff", "woff2", "ttf", "otf", "eot"];

/// The kind of a feed enclosure from the MIME type the feed declares: images are
/// [`Kind::Image`], audio, video and undeclared types [`Kind::Media`], anything else (PDF,
/// archives) [`Kind::Attachment`].
pub fn enclosure_kind(mime: Option<&str>) -> Kind {
    match mime.map(|m| m.trim().to_ascii_lowercase()) {
        Some(m) if m.starts_with("image/") => Kind::Image,
        Some(m) if m.starts_with("audio/") || m.starts_with("video/") => Kind::Media,
        None => Kind::Media,
        Some(m) if m.is_empty() => Kind::Media,
        Some(_) => Kind::Attachment,
    }
}

/// The requisites of a page at `base`, in document order, each URL once. Attachments count
/// only on the page's own host.
pub fn of_page(html: &Html, base: &Url) -> Vec<Requisite> {
    let mut out = Vec::new();
    let push = |raw: &str, kind: Kind, out: &mut Vec<Requisite>| {
        let raw = raw.trim();
        if raw.is_empty() || raw.starts_with("data:") || raw.starts_with('#') {
            return;
        }
        let Ok(mut u) = base.join(raw) else { return };
        if !matches!(u.scheme(), "http" | "https") {
            return;
        }
        u.set_fragment(None);
        let url = u.to_string();
        if !out.iter().any(|r: &Requisite| r.url == url) {
            out.push(Requisite { url, kind });
        }
    };
    let sel = |s: &str| Selector::parse(s).expect("static selector");
    let all = sel("img, source, link[href], audio[src], video, track[src], a[href], [style], input[type=image][src], script[src]");
    for e in html.select(&all) {
        let v = e.value();
        match v.name() {
            "img" | "input" => {
                for a in ["src", "data-src", "data-lazy-src", "data-original"] {
                    if let Some(x) = v.attr(a) {
                        push(x, Kind::Image, &mut out);
                    }
                }
                for a in ["srcset", "data-srcset", "data-lazy-srcset"] {
                    for x in v.attr(a).map(srcset).unwrap_or_default() {
                        push(x, Kind::Image, &mut out);
                    }
                }
            }
            "source" => {
                let kind = match e
                    .parent()
                    .and_then(|p| p.value().as_element())
                    .map(|p| p.name())
                {
                    Some("audio") | Some("video") => Kind::Media,
                    _ => Kind::Image,
                };
                if let Some(x) = v.attr("src") {
                    push(x, kind, &mut out);
                }
                for a in ["srcset", "data-srcset"] {
                    for x in v.attr(a).map(srcset).unwrap_or_default() {
                        push(x, kind, &mut out);
                    }
                }
            }
            "link" => {
                let rel = v.attr("rel").unwrap_or("").to_ascii_lowercase();
                let rels: Vec<&str> = rel.split_whitespace().collect();
                let href = v.attr("href").unwrap_or("");
                if rels.contains(&"stylesheet") {
                    push(href, Kind::Stylesheet, &mut out);
                } else if rels
                    .iter()
                    .any(|r| matches!(*r, "icon" | "apple-touch-icon" | "mask-icon"))
                {
                    push(href, Kind::Icon, &mut out);
                } else if rels.contains(&"enclosure") {
                    push(href, Kind::Media, &mut out);
                } else if rels.contains(&"modulepreload")
                    || (rels.contains(&"preload")
                        && v.attr("as")
                            .is_some_and(|a| a.eq_ignore_ascii_case("script")))
                {
                    push(href, Kind::Script, &mut out);
                }
            }
            "script" => {
                if let Some(x) = v.attr("src") {
                    push(x, Kind::Script, &mut out);
                }
            }
            "audio" | "video" | "track" => {
                if let Some(x) = v.attr("src") {
                    push(x, Kind::Media, &mut out);
                }
                if let Some(x) = v.attr("poster") {
                    push(x, Kind::Image, &mut out);
                }
            }
            "a" => {
                let href = v.attr("href").unwrap_or("");
                if let Ok(u) = base.join(href.trim()) {
                    let ext = u
                        .path()
                        .rsplit('/')
                        .next()
                        .and_then(|f| f.rsplit_once('.'))
                        .map(|(_, e)| e.to_ascii_lowercase());
                    let own_site = u.host_str() == base.host_str();
                    if own_site && ext.is_some_and(|e| ATTACHMENTS.contains(&e.as_str())) {
                        push(href, Kind::Attachment, &mut out);
                    }
                }
            }
            _ => {}
        }
        if let Some(style) = v.attr("style") {
            for x in css_url_tokens(style) {
                push(&x, Kind::Image, &mut out);
            }
        }
    }
    let style = sel("style");
    for e in html.select(&style) {
        let css: String = e.text().collect();
        for r in css_urls(&css, base) {
            push(&r.url, r.kind, &mut out);
        }
    }
    if !out.iter().any(|r| r.kind == Kind::Icon) {
        push("/favicon.ico", Kind::Icon, &mut out);
    }
    out
}

/// The URLs of a `srcset` (every candidate, whatever its descriptor).
fn srcset(value: &str) -> Vec<&str> {
    value
        .split(',')
        .filter_map(|c| c.split_whitespace().next())
        .collect()
}

/// The `url(...)` and `@import "…"` references of a stylesheet at `base`: fonts by their
/// extension, other stylesheets for `@import`, images otherwise.
pub fn css_urls(css: &str, base: &Url) -> Vec<Requisite> {
    let mut out: Vec<Requisite> = Vec::new();
    let imports = css
        .split("@import")
        .skip(1)
        .filter_map(|rest| {
            let rest = rest.trim_start();
            let rest = rest.strip_prefix("url(").unwrap_or(rest);
            let q = rest.chars().next()?;
            if q == '"' || q == '\'' {
                rest[1..].split(q).next().map(str::to_string)
            } else {
                None
            }
        })
        .map(|u| (u, Kind::Stylesheet));
    let urls = css_url_tokens(css).into_iter().map(|u| {
        let path = u
            .split(['?', '#'])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let kind = match path.rsplit_once('.').map(|(_, e)| e) {
            Some(e) if FONTS.contains(&e) => Kind::Font,
            Some("css") => Kind::Stylesheet,
            _ => Kind::Image,
        };
        (u, kind)
    });
    for (raw, kind) in imports.chain(urls) {
        if raw.starts_with("data:") || raw.starts_with('#') {
            continue;
        }
        let Ok(mut u) = base.join(raw.trim()) else {
            continue;
        };
        if !matches!(u.scheme(), "http" | "https") {
            continue;
        }
        u.set_fragment(None);
        let url = u.to_string();
        if !out.iter().any(|r| r.url == url) {
            out.push(Requisite { url, kind });
        }
    }
    out
}

/// The arguments of every `url(...)` in CSS text, unquoted.
fn css_url_tokens(css: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lower = css.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find("url(") {
        let start = from + i + 4;
        let Some(len) = css[start..].find(')') else {
            break;
        };
        let arg = css[start..start + len]
            .trim()
            .trim_matches(|c| c == '"' || c == '\'')
            .trim();
        if !arg.is_empty() {
            out.push(arg.to_string());
        }
        from = start + len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_kind_of_requisite() {
        let html = Html::parse_document(
            r#"<html><head><link rel="stylesheet" href="/theme/style.css"><link rel="icon" href="/fav.png">
            <style>header { background: url('/img/bg.png') }</style></head><body>
            <img src="/a.png" srcset="/a-1x.png 1x, /a-2x.png 2x">
            <img src="data:image/gif;base64,AAAA" data-src="/lazy.png" data-srcset="/lazy-400.png 400w, /lazy-800.png 800w">
            <picture><source srcset="/p.webp" type="image/webp"><img src="/p.png"></picture>
            <audio src="/pod.mp3"></audio><video poster="/poster.jpg"><source src="/clip.mp4"></video>
            <a href="/files/paper.pdf">paper</a><a href="https://elsewhere.org/x.pdf">theirs</a>
            <a href="/2020/01/post.html">a post</a><div style="background-image:url(/div.jpg)"></div>
            <script src="/js/theme.js"></script><script>inline()</script>
            <link rel="modulepreload" href="/js/mod.js"><link rel="preload" as="script" href="/js/pre.js">
            </body></html>"#,
        );
        let base = Url::parse("http://blog.test/2021/05/post.html").unwrap();
        let got: Vec<(String, Kind)> = of_page(&html, &base)
            .into_iter()
            .map(|r| {
                (
                    r.url.trim_start_matches("http://blog.test").to_string(),
                    r.kind,
                )
            })
            .collect();
        let want = [
            ("/theme/style.css", Kind::Stylesheet),
            ("/fav.png", Kind::Icon),
            ("/a.png", Kind::Image),
            ("/a-1x.png", Kind::Image),
            ("/a-2x.png", Kind::Image),
            ("/lazy.png", Kind::Image),
            ("/lazy-400.png", Kind::Image),
            ("/lazy-800.png", Kind::Image),
            ("/p.webp", Kind::Image),
            ("/p.png", Kind::Image),
            ("/pod.mp3", Kind::Media),
            ("/poster.jpg", Kind::Image),
            ("/clip.mp4", Kind::Media),
            ("/files/paper.pdf", Kind::Attachment),
            ("/div.jpg", Kind::Image),
            ("/img/bg.png", Kind::Image),
            ("/js/theme.js", Kind::Script),
            ("/js/mod.js", Kind::Script),
            ("/js/pre.js", Kind::Script),
        ];
        for (u, k) in want {
            assert!(
                got.contains(&(u.to_string(), k)),
                "{u} {k} missing from {got:?}"
            );
        }
        assert!(!got
            .iter()
            .any(|(u, _)| u.contains("elsewhere") || u.contains("post.html")));
        assert!(!got.iter().any(|(u, _)| u.starts_with("data:")));
        assert_eq!(got.len(), want.len(), "{got:?}");
    }

    #[test]
    fn stylesheets_give_fonts_images_and_imports() {
        let base = Url::parse("http://blog.test/theme/css/main.css").unwrap();
        let css = r#"@import "pygment.css"; @import url('typo.css');
            @font-face { src: url("../fonts/y.woff2") format("woff2"), url(../fonts/y.ttf?v=2#x); }
            body { background: url(data:image/png;base64,AAA) } h1 { background: url( '../img/h.png' ) }"#;
        let got: Vec<(String, Kind)> = css_urls(css, &base)
            .into_iter()
            .map(|r| (r.url, r.kind))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "http://blog.test/theme/css/pygment.css".into(),
                    Kind::Stylesheet
                ),
                (
                    "http://blog.test/theme/css/typo.css".into(),
                    Kind::Stylesheet
                ),
                ("http://blog.test/theme/fonts/y.woff2".into(), Kind::Font),
                ("http://blog.test/theme/fonts/y.ttf?v=2".into(), Kind::Font),
                ("http://blog.test/theme/img/h.png".into(), Kind::Image),
            ]
        );
    }
}
