//! What a page declares about itself in its markup, read the same way by every extractor and
//! judge: `<meta>` values, JSON-LD objects, the document's `<title>`, the canonical link, and
//! whether it declares itself one post (JSON-LD `Article`/`BlogPosting`…, `og:type=article`).

use super::page::Page;
use scraper::Selector;
use url::Url;

/// The document's `<title>`, whitespace collapsed.
pub(super) fn document_title(page: &Page) -> Option<String> {
    first_text(page, "title")
}

/// The elements `css` selects (none for an unparsable selector).
pub(super) fn select<'a>(page: &'a Page, css: &str) -> Vec<scraper::ElementRef<'a>> {
    match Selector::parse(css) {
        Ok(s) => page.html().select(&s).collect(),
        Err(_) => Vec::new(),
    }
}

/// Every non-empty value of `attr` on the elements `css` selects, whitespace collapsed.
pub(super) fn meta_values(page: &Page, css: &str, attr: &str) -> Vec<String> {
    select(page, css)
        .into_iter()
        .filter_map(|e| e.value().attr(attr))
        .map(super::text::collapse_whitespace)
        .filter(|v| !v.is_empty())
        .collect()
}

/// The first non-empty value of `attr` on the elements `css` selects, whitespace collapsed.
pub(super) fn meta(page: &Page, css: &str, attr: &str) -> Option<String> {
    select(page, css)
        .into_iter()
        .filter_map(|e| e.value().attr(attr))
        .map(super::text::collapse_whitespace)
        .find(|v| !v.is_empty())
}

/// The first non-empty text of the elements `css` selects, whitespace collapsed.
pub(super) fn first_text(page: &Page, css: &str) -> Option<String> {
    select(page, css)
        .into_iter()
        .map(|e| super::text::collapse_whitespace(&e.text().collect::<String>()))
        .find(|t| !t.is_empty())
}

/// The page's JSON-LD objects, `@graph` members and arrays flattened; unparsable blocks skipped.
pub(super) fn json_ld(page: &Page) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for e in select(page, "script[type='application/ld+json']") {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&e.text().collect::<String>()) else {
            continue;
        };
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            match v {
                serde_json::Value::Array(a) => stack.extend(a),
                serde_json::Value::Object(ref o) => {
                    if let Some(g) = o.get("@graph") {
                        stack.push(g.clone());
                    }
                    out.push(v);
                }
                _ => {}
            }
        }
    }
    out
}

/// A BCP 47 language tag as a feed or page declares it (`en-US`, `fr`, `pt_BR`), in its
/// conventional case (RFC 5646 §2.1.1: language lower case, a script title case, a region
/// upper case): trimmed, `_` read as `-`; `None` when it is not one (empty, other characters,
/// a first subtag that is not 2–8 letters, longer than 35 characters).
///
/// ```
/// use everblog::core::head::language_tag;
/// assert_eq!(language_tag(" fr-FR ").as_deref(), Some("fr-FR"));
/// assert_eq!(language_tag("EN_us").as_deref(), Some("en-US"));
/// assert_eq!(language_tag("zh-hant-tw").as_deref(), Some("zh-Hant-TW"));
/// assert_eq!(language_tag("x"), None);
/// assert_eq!(language_tag("en\"><script>"), None);
/// ```
pub fn language_tag(tag: &str) -> Option<String> {
    let tag = tag.trim().replace('_', "-");
    let subtags: Vec<&str> = tag.split('-').collect();
    let primary = subtags[0];
    let ok = tag.len() <= 35
        && (2..=8).contains(&primary.len())
        && primary.chars().all(|c| c.is_ascii_alphabetic())
        && subtags
            .iter()
            .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()));
    if !ok {
        return None;
    }
    let mut out = primary.to_ascii_lowercase();
    for s in &subtags[1..] {
        out.push('-');
        let alpha = s.chars().all(|c| c.is_ascii_alphabetic());
        match s.len() {
            2 if alpha => out.push_str(&s.to_ascii_uppercase()),
            4 if alpha => {
                out.push_str(&s[..1].to_ascii_uppercase());
                out.push_str(&s[1..].to_ascii_lowercase());
            }
            _ => out.push_str(&s.to_ascii_lowercase()),
        }
    }
    Some(out)
}

/// The language the page declares on its root element (`<html lang>`, else `xml:lang`),
/// normalised by [`language_tag`].
pub fn page_language(page: &Page) -> Option<String> {
    let root = page.html().root_element();
    root.value()
        .attr("lang")
        .or_else(|| root.value().attr("xml:lang"))
        .and_then(language_tag)
}

/// The page's `<link rel="canonical">`, resolved against `base`; `None` when it declares none
/// (or an unparsable one).
pub fn canonical_link(page: &Page, base: &Url) -> Option<Url> {
    let sel = Selector::parse("link[rel]").expect("static selector");
    page.html()
        .select(&sel)
        .filter(|l| {
            l.value().attr("rel").is_some_and(|r| {
                r.split_whitespace()
                    .any(|w| w.eq_ignore_ascii_case("canonical"))
            })
        })
        .find_map(|l| {
            l.value()
                .attr("href")
                .and_then(|h| base.join(h.trim()).ok())
        })
}

/// The address the page names itself by: `<link rel="canonical">`, else OpenGraph `og:url`,
/// resolved against `base`.
pub fn declared_address(page: &Page, base: &Url) -> Option<Url> {
    canonical_link(page, base).or_else(|| {
        meta(page, "meta[property='og:url']", "content").and_then(|h| base.join(h.trim()).ok())
    })
}

/// Whether the page declares itself one post: JSON-LD naming a post ([`ld_article`]) or
/// OpenGraph `og:type=article` ([`og_article`]).
pub fn declares_post(page: &Page) -> bool {
    ld_article(page) || og_article(page)
}

/// Whether the page's JSON-LD has an object whose `@type` is `BlogPosting`, `Article`,
/// `NewsArticle`, `Posting`… (any type ending in `Article` or `Posting`).
pub fn ld_article(page: &Page) -> bool {
    let posting = |t: &str| {
        let t = t.rsplit(['/', ':']).next().unwrap_or(t);
        t.ends_with("Article") || t.ends_with("Posting") || t == "Report"
    };
    json_ld(page).into_iter().any(|v| match v.get("@type") {
        Some(serde_json::Value::String(t)) => posting(t),
        Some(serde_json::Value::Array(a)) => a.iter().filter_map(|t| t.as_str()).any(posting),
        _ => false,
    })
}

/// Whether the page declares OpenGraph `og:type=article`.
pub fn og_article(page: &Page) -> bool {
    meta_values(page, "meta[property='og:type']", "content")
        .iter()
        .any(|t| t.eq_ignore_ascii_case("article"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canonical_link_resolved() {
        let base = Url::parse("http://b.org/page/2/").unwrap();
        let page = Page::parse(
            "<html><head><link rel=stylesheet href=/s.css><link rel='Canonical' href='../../'></head><body></body></html>",
        );
        assert_eq!(
            canonical_link(&page, &base).unwrap().as_str(),
            "http://b.org/"
        );
        assert_eq!(canonical_link(&Page::parse("<p>x</p>"), &base), None);
    }
}
