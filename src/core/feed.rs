//! Feeds: RSS 0.9x/1.0/2.0, Atom and JSON Feed parsed with feed-rs into [`Feed`], and the
//! training targets rule learning needs from each entry (paper §3.2: the feed is training data).
//!
//! Targets are the entry's text as a reader sees it: the HTML of `content` (or `summary` when
//! the feed carries only summaries) reduced to its visible text. Text that repeats across most
//! entries of the feed near their end ("Filed under: … Tagged: …" on WordPress.com, "The post …
//! appeared first on …") is feed boilerplate that the post page does not show inside the article;
//! it is cut from the targets (the reason the original crawler failed on meinrhyme).

use chrono::{DateTime, FixedOffset};
use rustc_hash::FxHashMap;
use scraper::{Html, Node};

/// A parsed feed.
#[derive(Debug, Clone)]
pub struct Feed {
    /// Feed title.
    pub title: Option<String>,
    /// "atom", "rss2", "rss1", "rss0" or "json".
    pub kind: &'static str,
    /// The site the feed belongs to (its `alternate`/`link`), absolute.
    pub home: Option<String>,
    /// Entries in feed order.
    pub entries: Vec<FeedEntry>,
}

/// One feed entry.
#[derive(Debug, Clone)]
pub struct FeedEntry {
    /// Permalink of the post, absolute.
    pub url: String,
    /// Title as text.
    pub title: Option<String>,
    /// Author names, e-mail addresses removed; the feed's authors when the entry has none.
    pub authors: Vec<String>,
    /// Publication time (feed-rs normalises to UTC; the original offset is lost).
    pub published: Option<DateTime<FixedOffset>>,
    /// Full content HTML when the feed carries it.
    pub content_html: Option<String>,
    /// Summary or description HTML.
    pub summary_html: Option<String>,
}

/// A feed that could not be parsed.
#[derive(Debug, thiserror::Error)]
#[error("not a valid RSS, Atom or JSON feed: {0}")]
pub struct FeedError(pub String);

/// Parses feed bytes. `feed_url` resolves relative links and keeps entry ids stable.
///
/// # Errors
/// [`FeedError`] when feed-rs rejects the document (malformed XML, not a feed).
pub fn parse(bytes: &[u8], feed_url: &str) -> Result<Feed, FeedError> {
    let parsed = feed_rs::parser::Builder::new()
        .base_uri(Some(feed_url))
        .build()
        .parse(bytes)
        .map_err(|e| FeedError(e.to_string()))?;
    let kind = match parsed.feed_type {
        feed_rs::model::FeedType::Atom => "atom",
        feed_rs::model::FeedType::JSON => "json",
        feed_rs::model::FeedType::RSS0 => "rss0",
        feed_rs::model::FeedType::RSS1 => "rss1",
        feed_rs::model::FeedType::RSS2 => "rss2",
    };
    let base = url::Url::parse(feed_url).ok();
    let resolve = |href: &str| match &base {
        Some(b) => b
            .join(href)
            .map(|u| u.to_string())
            .unwrap_or_else(|_| href.to_string()),
        None => href.to_string(),
    };
    let feed_authors: Vec<String> = parsed
        .authors
        .iter()
        .filter_map(|p| author_name(p.name.as_deref().or(p.email.as_deref())?))
        .collect();
    let home = parsed
        .links
        .iter()
        .find(|l| {
            l.rel.as_deref().is_none_or(|r| r == "alternate")
                && l.media_type.as_deref().is_none_or(|t| t.contains("html"))
        })
        .map(|l| resolve(&l.href));
    let mut entries = Vec::new();
    for e in &parsed.entries {
        let link = e
            .links
            .iter()
            .find(|l| l.rel.as_deref().is_none_or(|r| r == "alternate") && l.target.is_none())
            .or_else(|| e.links.first());
        let Some(link) = link else { continue };
        let mut authors: Vec<String> = e
            .authors
            .iter()
            .filter_map(|p| author_name(p.name.as_deref().or(p.email.as_deref())?))
            .collect();
        if authors.is_empty() {
            authors = feed_authors.clone();
        }
        entries.push(FeedEntry {
            url: resolve(&link.href),
            title: e
                .title
                .as_ref()
                .map(|t| html_to_text(&t.content))
                .filter(|t| !t.is_empty()),
            authors,
            published: e.published.or(e.updated).map(|d| d.fixed_offset()),
            content_html: e
                .content
                .as_ref()
                .and_then(|c| c.body.clone())
                .filter(|b| !b.trim().is_empty()),
            summary_html: e
                .summary
                .as_ref()
                .map(|s| s.content.clone())
                .filter(|b| !b.trim().is_empty()),
        });
    }
    Ok(Feed {
        title: parsed
            .title
            .map(|t| html_to_text(&t.content))
            .filter(|t| !t.is_empty()),
        kind,
        home,
        entries,
    })
}

/// "jo@example.org (Jo Bloggs)" → "Jo Bloggs"; a bare e-mail address → its local part.
pub fn author_name(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let name = if let (Some(open), true) = (raw.find('('), raw.ends_with(')')) {
        raw[open + 1..raw.len() - 1].trim()
    } else if raw.contains('@') && !raw.contains(' ') {
        raw.split('@').next().unwrap_or("")
    } else {
        raw
    };
    let name = super::text::collapse_whitespace(name);
    (!name.is_empty()).then_some(name)
}

/// Visible text of an HTML fragment, whitespace collapsed.
pub fn html_to_text(html: &str) -> String {
    super::text::collapse_whitespace(&text_chunks(html).join(" "))
}

/// The text nodes of an HTML fragment (script and style skipped), each whitespace-collapsed.
fn text_chunks(html: &str) -> Vec<String> {
    let frag = Html::parse_fragment(html);
    let mut out = Vec::new();
    for node in frag.tree.root().descendants() {
        if let Node::Text(t) = node.value() {
            let hidden = node.ancestors().any(|a| {
                a.value()
                    .as_element()
                    .is_some_and(|e| matches!(e.name(), "script" | "style" | "noscript"))
            });
            let t = super::text::collapse_whitespace(t);
            if !hidden && !t.is_empty() {
                out.push(t);
            }
        }
    }
    out
}

/// What rule learning matches on a post page for one feed entry.
#[derive(Debug, Clone)]
pub struct Targets {
    /// Title text.
    pub title: Option<String>,
    /// Article text (feed boilerplate removed).
    pub article: Option<String>,
    /// True when `article` comes from a summary, not the full content.
    pub summary: bool,
}

/// Training targets for every entry of `feed`, in entry order.
pub fn targets(feed: &Feed) -> Vec<Targets> {
    let per_entry: Vec<(Vec<String>, bool)> = feed
        .entries
        .iter()
        .map(|e| match (&e.content_html, &e.summary_html) {
            (Some(c), _) => (text_chunks(c), false),
            (None, Some(s)) => (text_chunks(s), true),
            (None, None) => (Vec::new(), false),
        })
        .collect();
    // Chunks shared by at least half of the entries (and at least 3) are boilerplate.
    let mut counts: FxHashMap<&str, usize> = FxHashMap::default();
    for (chunks, _) in &per_entry {
        let mut seen: Vec<&str> = chunks.iter().map(String::as_str).collect();
        seen.sort_unstable();
        seen.dedup();
        for c in seen {
            *counts.entry(c).or_default() += 1;
        }
    }
    let threshold = (per_entry.len() / 2).max(3);
    let boiler = |c: &str| counts.get(c).is_some_and(|&n| n >= threshold) && c.chars().count() >= 3;
    feed.entries
        .iter()
        .zip(&per_entry)
        .map(|(entry, (chunks, summary))| {
            let total: usize = chunks.iter().map(|c| c.len() + 1).sum();
            let mut kept = Vec::new();
            let mut pos = 0;
            for c in chunks {
                if boiler(c) {
                    if pos * 2 >= total {
                        break; // a footer: drop it and everything after it
                    }
                } else {
                    kept.push(c.as_str());
                }
                pos += c.len() + 1;
            }
            let article = super::text::collapse_whitespace(&kept.join(" "));
            Targets {
                title: entry.title.clone(),
                article: (!article.is_empty()).then_some(article),
                summary: *summary,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn author_names() {
        assert_eq!(
            author_name("jo@example.org (Jo Bloggs)").as_deref(),
            Some("Jo Bloggs")
        );
        assert_eq!(
            author_name("  Mary  Elizabeth ").as_deref(),
            Some("Mary Elizabeth")
        );
        assert_eq!(
            author_name("noreply@blogger.com").as_deref(),
            Some("noreply")
        );
        assert_eq!(author_name(" "), None);
    }

    #[test]
    fn malformed_feed_is_an_error() {
        assert!(parse(
            b"<rss><channel><title>a & b</title></channel></rss>",
            "http://x/"
        )
        .is_err());
        assert!(parse(b"<html><body>hi</body></html>", "http://x/").is_err());
    }
}
