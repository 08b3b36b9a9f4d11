//! Feeds: RSS 0.9x/1.0/2.0, Atom and JSON Feed parsed with feed-rs into [`Feed`], and the
//! training targets rule learning needs from each entry (paper §3.2: the feed is training data).
//!
//! Targets are the entry's text as a reader sees it: the HTML of `content` (or `summary` when
//! the feed carries only summaries) reduced to its visible text. Text that repeats across most
//! entries of the feed near their end ("Filed under: … Tagged: …" on WordPress.com, "The post …
//! appeared first on …") is feed boilerplate that the post page does not show inside the article;
//! it is cut from the targets (the reason the original crawler failed on meinrhyme).

use super::text::{bigram_set, normalise, Bigram};
use chrono::{DateTime, FixedOffset};
use rustc_hash::{FxHashMap, FxHashSet};
use scraper::Node;

/// A parsed feed.
#[derive(Debug, Clone)]
pub struct Feed {
    /// Feed title.
    pub title: Option<String>,
    /// The feed format.
    pub kind: FeedKind,
    /// The site the feed belongs to (its `alternate`/`link`), absolute.
    pub home: Option<String>,
    /// The next (older) page of a paged or archived feed (RFC 5005 `next`, `prev-archive`).
    pub next: Option<String>,
    /// What generated the feed (`<generator>`), e.g. "https://wordpress.org/?v=6.1.9".
    pub generator: Option<String>,
    /// The language the feed declares (RSS `<language>`, Atom `xml:lang`, JSON Feed
    /// `language`), as a BCP 47 tag ([`super::head::language_tag`]).
    pub language: Option<String>,
    /// Entries in feed order.
    pub entries: Vec<FeedEntry>,
}

super::vocabulary! {
    /// A feed format, as feed-rs recognises it.
    pub enum FeedKind {
        /// Atom 1.0.
        Atom = "atom",
        /// RSS 2.0.
        Rss2 = "rss2",
        /// RSS 1.0 (RDF).
        Rss1 = "rss1",
        /// RSS 0.9x.
        Rss0 = "rss0",
        /// JSON Feed.
        Json = "json",
    }
}

impl FeedKind {
    /// The format's name for people: "Atom", "RSS 2.0", "JSON Feed", …
    pub fn label(self) -> &'static str {
        match self {
            FeedKind::Atom => "Atom",
            FeedKind::Rss2 => "RSS 2.0",
            FeedKind::Rss1 => "RSS 1.0",
            FeedKind::Rss0 => "RSS 0.9x",
            FeedKind::Json => "JSON Feed",
        }
    }
}

/// One feed entry (as parsed, and as the store keeps it).
#[derive(Debug, Clone, PartialEq)]
pub struct FeedEntry {
    /// Permalink of the post, absolute.
    pub url: String,
    /// Title as text.
    pub title: Option<String>,
    /// Author names, e-mail addresses removed, one person each (a string naming several,
    /// "A and B", is read as [`super::authors::feed_people`] reads it); the feed's authors
    /// when the entry has none.
    pub authors: Vec<String>,
    /// `authors` are the feed's own (its channel's or feed's `<author>`), the entry naming
    /// none: a weak default, never stronger than the post page's byline (issue 28).
    pub authors_inherited: bool,
    /// Publication time, with the offset the feed wrote (feed-rs normalises to UTC; the raw
    /// date strings are re-read to keep the blog's offset).
    pub published: Option<DateTime<FixedOffset>>,
    /// Last update time, when the feed gives one distinct from `published`.
    pub updated: Option<DateTime<FixedOffset>>,
    /// Full content HTML when the feed carries it.
    pub content_html: Option<String>,
    /// Summary or description HTML.
    pub summary_html: Option<String>,
    /// The entry's comment feed: RSS `wfw:commentRss` or Atom `link rel="replies"`.
    pub comments_feed: Option<String>,
    /// Comment count the feed declares: RSS `slash:comments` or Atom `thr:total`.
    pub comment_count: Option<u32>,
    /// The entry's enclosures (podcast episodes, attached files): RSS `<enclosure>`, Media RSS
    /// `media:content`, Atom `link rel="enclosure"`, JSON Feed `attachments`; absolute URLs,
    /// each once, in feed order.
    pub enclosures: Vec<Enclosure>,
}

/// A file a feed entry carries (RSS `<enclosure url length type>` and its kin).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Enclosure {
    /// Absolute URL of the file.
    pub url: String,
    /// MIME type the feed declares (`type`), when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
}

/// The enclosures of a feed-rs entry whose permalink is `permalink`: feed-rs reads RSS
/// `<enclosure>` and Media RSS into `media` objects, and leaves Atom's `link rel="enclosure"`
/// and JSON Feed `attachments` (typed links without a `rel`) among the links.
fn enclosures(
    e: &feed_rs::model::Entry,
    permalink: &str,
    json: bool,
    resolve: &dyn Fn(&str) -> String,
) -> Vec<Enclosure> {
    let media = e.media.iter().flat_map(|m| &m.content).filter_map(|c| {
        Some(Enclosure {
            url: resolve(c.url.as_ref()?.as_str()),
            mime: c.content_type.as_ref().map(|t| t.to_string()),
        })
    });
    let links = e
        .links
        .iter()
        .filter(|l| {
            l.rel.as_deref() == Some("enclosure")
                || (json && l.rel.is_none() && l.media_type.is_some() && l.href != permalink)
        })
        .map(|l| Enclosure {
            url: resolve(&l.href),
            mime: l.media_type.clone(),
        });
    let mut out: Vec<Enclosure> = Vec::new();
    for x in media.chain(links) {
        let http = x.url.starts_with("http://") || x.url.starts_with("https://");
        if http && !out.iter().any(|o| o.url == x.url) {
            out.push(x);
        }
    }
    out
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
    // feed-rs 3.0 (through quick-xml 0.42) panics on an XML declaration naming an encoding
    // that is long or not the document's first (found by fuzzing, issue 32): one hostile feed
    // must be a feed that does not parse, never a crashed `add` or crawl.
    let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        feed_rs::parser::Builder::new()
            .base_uri(Some(feed_url))
            .build()
            .parse(bytes)
    }))
    .map_err(|_| FeedError("the feed reader failed on this document (malformed XML)".into()))?
    .map_err(|e| FeedError(e.to_string()))?;
    let kind = match parsed.feed_type {
        feed_rs::model::FeedType::Atom => FeedKind::Atom,
        feed_rs::model::FeedType::JSON => FeedKind::Json,
        feed_rs::model::FeedType::RSS0 => FeedKind::Rss0,
        feed_rs::model::FeedType::RSS1 => FeedKind::Rss1,
        feed_rs::model::FeedType::RSS2 => FeedKind::Rss2,
    };
    let base = url::Url::parse(feed_url).ok();
    let resolve = |href: &str| match &base {
        Some(b) => b
            .join(href)
            .map(|u| u.to_string())
            .unwrap_or_else(|_| href.to_string()),
        None => href.to_string(),
    };
    let feed_raw = people(&parsed.authors);
    let home = parsed
        .links
        .iter()
        .find(|l| {
            l.rel.as_deref().is_none_or(|r| r == "alternate")
                && l.media_type.as_deref().is_none_or(|t| t.contains("html"))
        })
        .map(|l| resolve(&l.href));
    let next = parsed
        .links
        .iter()
        .find(|l| matches!(l.rel.as_deref(), Some("next" | "prev-archive")))
        .map(|l| resolve(&l.href));
    let generator = parsed
        .generator
        .as_ref()
        .map(|g| g.uri.clone().unwrap_or_else(|| g.content.clone()));
    let raw = raw_entries(bytes);
    let aligned = raw.len() == parsed.entries.len();
    let mut entries = Vec::new();
    for (i, e) in parsed.entries.iter().enumerate() {
        // The raw date keeps the offset; use it only when it is the same instant feed-rs read.
        let keep_offset = |utc: Option<chrono::DateTime<chrono::Utc>>,
                           raw: Option<&String>|
         -> Option<DateTime<FixedOffset>> {
            let utc = utc?;
            match raw.and_then(|r| parse_feed_date(r)) {
                Some(d) if d.timestamp() == utc.timestamp() => Some(d),
                _ => Some(utc.fixed_offset()),
            }
        };
        let (raw_published, raw_updated) = if aligned {
            (raw[i].published.as_ref(), raw[i].updated.as_ref())
        } else {
            (None, None)
        };
        let published =
            keep_offset(e.published, raw_published).or_else(|| keep_offset(e.updated, raw_updated));
        let updated = keep_offset(e.updated, raw_updated).filter(|u| Some(*u) != published);
        let link = e
            .links
            .iter()
            .find(|l| l.rel.as_deref().is_none_or(|r| r == "alternate") && l.target.is_none())
            .or_else(|| e.links.first());
        let Some(link) = link else { continue };
        let raw_authors = people(&e.authors);
        let authors_inherited = raw_authors.is_empty() && !feed_raw.is_empty();
        let authors = if raw_authors.is_empty() {
            feed_raw.clone()
        } else {
            raw_authors
        };
        entries.push(FeedEntry {
            url: resolve(&link.href),
            title: e
                .title
                .as_ref()
                .map(|t| html_to_text(&t.content))
                .filter(|t| !t.is_empty()),
            authors,
            authors_inherited,
            published,
            updated,
            comments_feed: e
                .links
                .iter()
                .find(|l| {
                    l.target == Some(feed_rs::model::LinkTarget::CommentsFeed)
                        || (l.rel.as_deref() == Some("replies")
                            && l.media_type.as_deref().is_some_and(|t| t.contains("xml")))
                })
                .map(|l| resolve(&l.href)),
            comment_count: if aligned { raw[i].comment_count } else { None },
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
            enclosures: enclosures(e, &link.href, kind == FeedKind::Json, &resolve),
        });
    }
    // Author strings read as people with the whole feed's evidence (issue 42).
    let raw: Vec<Vec<String>> = entries.iter().map(|e| e.authors.clone()).collect();
    for (e, people) in entries.iter_mut().zip(super::authors::feed_people(&raw)) {
        e.authors = people;
    }
    Ok(Feed {
        title: parsed
            .title
            .map(|t| html_to_text(&t.content))
            .filter(|t| !t.is_empty()),
        kind,
        home,
        next,
        generator,
        language: parsed
            .language
            .as_deref()
            .and_then(super::head::language_tag),
        entries,
    })
}

/// Parses a feed date keeping its offset: RFC 3339 (Atom, JSON Feed, `dc:date`) or RFC 2822
/// (RSS `pubDate`, including the obsolete zone names such as `EST` and `GMT`; a wrong weekday
/// is ignored).
pub fn parse_feed_date(raw: &str) -> Option<DateTime<FixedOffset>> {
    let raw = raw.trim();
    // A wrong weekday is common in RSS and carries no information: drop it before parsing.
    let no_weekday = raw
        .split_once(',')
        .filter(|(day, _)| day.trim().len() <= 9 && day.trim().chars().all(char::is_alphabetic))
        .map_or(raw, |(_, rest)| rest.trim());
    DateTime::parse_from_rfc3339(raw)
        .ok()
        .or_else(|| DateTime::parse_from_rfc2822(no_weekday).ok())
}

/// What feed-rs does not keep of an entry: the raw date strings (with their offsets) and the
/// declared comment count.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawEntry {
    /// `pubDate`, `published`, `dc:date`… as written.
    pub published: Option<String>,
    /// `updated`, `dc:modified`… as written.
    pub updated: Option<String>,
    /// `slash:comments` or `thr:total`.
    pub comment_count: Option<u32>,
}

/// The [`RawEntry`] of every `<item>`/`<entry>` of an XML feed, or of every item of a JSON
/// Feed, in document order. Empty when the document cannot be read.
pub fn raw_entries(bytes: &[u8]) -> Vec<RawEntry> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(64)]);
    if head.trim_start().starts_with('{') {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes) else {
            return Vec::new();
        };
        return v["items"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|i| RawEntry {
                        published: i["date_published"].as_str().map(str::to_string),
                        updated: i["date_modified"].as_str().map(str::to_string),
                        comment_count: None,
                    })
                    .collect()
            })
            .unwrap_or_default();
    }
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(bytes);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let mut depth_in_item: Option<usize> = None;
    let mut depth = 0usize;
    // (0 published | 1 updated | 2 comment count, text so far)
    let mut field: Option<(u8, String)> = None;
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => {
                depth += 1;
                let qname = e.name().as_ref().to_ascii_lowercase();
                let name = e.local_name().as_ref().to_ascii_lowercase();
                if depth_in_item.is_none() && (name == "item" || name == "entry") {
                    depth_in_item = Some(depth);
                    out.push(RawEntry::default());
                } else if depth_in_item.is_some_and(|d| depth == d + 1) {
                    field = match (qname.as_str(), name.as_str()) {
                        ("slash:comments", _) | ("thr:total", _) => Some((2, String::new())),
                        (_, "pubdate" | "published" | "issued" | "date" | "created") => {
                            Some((0, String::new()))
                        }
                        (_, "updated" | "modified") => Some((1, String::new())),
                        _ => None,
                    };
                }
            }
            Ok(Event::Empty(e)) => {
                // <link rel="replies" thr:count="5" …/>
                if let (Some(last), true) = (out.last_mut(), depth_in_item.is_some()) {
                    let count = e
                        .attributes()
                        .flatten()
                        .find(|a| a.key.as_ref().eq_ignore_ascii_case("thr:count"));
                    if let Some(n) = count.and_then(|a| a.value.trim().parse().ok()) {
                        last.comment_count.get_or_insert(n);
                    }
                }
            }
            Ok(Event::Text(t)) => {
                if let Some((_, text)) = field.as_mut() {
                    text.push_str(t.as_ref());
                }
            }
            Ok(Event::End(_)) => {
                if let (Some((kind, text)), Some(last)) = (field.take(), out.last_mut()) {
                    let text = text.trim().to_string();
                    match kind {
                        0 if last.published.is_none() => last.published = Some(text),
                        1 if last.updated.is_none() => last.updated = Some(text),
                        2 => last.comment_count = text.parse().ok().or(last.comment_count),
                        _ => {}
                    }
                }
                if depth_in_item == Some(depth) {
                    depth_in_item = None;
                }
                depth = depth.saturating_sub(1);
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
        buf.clear();
    }
    out
}

/// The author strings a feed's author elements hold: each element's name (or e-mail), as
/// written; [`super::authors::feed_people`] reads them as people.
fn people(persons: &[feed_rs::model::Person]) -> Vec<String> {
    persons
        .iter()
        .filter_map(|p| {
            p.name
                .as_deref()
                .or(p.email.as_deref())
                .and_then(author_name)
        })
        .collect()
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
    let frag = super::html::parse_fragment(html);
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

/// Training targets for every entry, in entry order (boilerplate is what repeats across them).
pub fn targets(entries: &[FeedEntry]) -> Vec<Targets> {
    let per_entry: Vec<(Vec<String>, bool)> = entries
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
    entries
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

/// One training target for one page.
#[derive(Debug, Clone)]
pub struct Target {
    /// Normalised characters of the target text.
    pub(super) chars: Vec<char>,
    pub(super) set: FxHashSet<Bigram>,
    /// The target is a summary of the article, not all of it.
    pub summary: bool,
}

impl Target {
    /// A target from text (normalised here).
    pub fn new(text: &str, summary: bool) -> Target {
        let mut chars = normalise(text);
        if summary {
            // Excerpt markers are not on the page: "…", "[…]", "...", "Read more", "Continue reading".
            let s: String = chars.iter().collect();
            let mut s = s.trim_end().to_string();
            for marker in [
                "continue reading",
                "read more",
                "[…]",
                "[...]",
                "…",
                "...",
                "→",
                "»",
            ] {
                if let Some(t) = s.strip_suffix(marker) {
                    s = t.trim_end().to_string();
                }
            }
            chars = s.chars().collect();
        }
        let set = bigram_set(&chars);
        Target {
            chars,
            set,
            summary,
        }
    }
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
    fn dates_keep_the_feed_offset() {
        let rss = br#"<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>http://b.log/</link>
            <item><title>a</title><link>http://b.log/a</link><pubDate>Tue, 04 Mar 2019 10:20:00 +0100</pubDate>
            <wfw:commentRss xmlns:wfw="http://wellformedweb.org/CommentAPI/">http://b.log/a/feed/</wfw:commentRss>
            <slash:comments xmlns:slash="http://purl.org/rss/1.0/modules/slash/">12</slash:comments></item>
            <item><title>b</title><link>http://b.log/b</link></item></channel></rss>"#;
        let f = parse(rss, "http://b.log/feed").unwrap();
        assert_eq!(
            f.entries[0].published.unwrap().to_rfc3339(),
            "2019-03-04T10:20:00+01:00"
        );
        assert_eq!(
            f.entries[0].comments_feed.as_deref(),
            Some("http://b.log/a/feed/")
        );
        assert_eq!(f.entries[0].comment_count, Some(12));
        let atom = br#"<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><entry><title>a</title><link href="http://b.log/a"/><id>1</id>
            <published>2017-05-01T20:00:00-04:00</published><updated>2017-05-02T08:00:00-04:00</updated></entry></feed>"#;
        let f = parse(atom, "http://b.log/feed").unwrap();
        assert_eq!(
            f.entries[0].published.unwrap().to_rfc3339(),
            "2017-05-01T20:00:00-04:00"
        );
        assert_eq!(
            f.entries[0].updated.unwrap().to_rfc3339(),
            "2017-05-02T08:00:00-04:00"
        );
    }

    #[test]
    fn enclosures_in_every_feed_format() {
        let rss = br#"<rss version="2.0"><channel><title>t</title><link>http://b.log/</link>
            <item><title>a</title><link>http://b.log/a</link>
            <enclosure url="/ep/1.mp3" length="12345" type="audio/mpeg"/></item>
            <item><title>b</title><link>http://b.log/b</link></item></channel></rss>"#;
        let f = parse(rss, "http://b.log/feed").unwrap();
        assert_eq!(
            f.entries[0].enclosures,
            vec![Enclosure {
                url: "http://b.log/ep/1.mp3".into(),
                mime: Some("audio/mpeg".into())
            }]
        );
        assert!(f.entries[1].enclosures.is_empty());
        let atom = br#"<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><entry><title>a</title><id>1</id>
            <link href="http://b.log/a"/><link rel="enclosure" href="http://cdn.b.log/1.pdf" type="application/pdf" length="9"/>
            <updated>2017-05-02T08:00:00-04:00</updated></entry></feed>"#;
        let f = parse(atom, "http://b.log/feed").unwrap();
        assert_eq!(f.entries[0].url, "http://b.log/a");
        assert_eq!(f.entries[0].enclosures[0].url, "http://cdn.b.log/1.pdf");
        let json = br#"{"version": "https://jsonfeed.org/version/1.1", "title": "t", "items": [{"id": "1",
            "url": "http://b.log/a", "content_text": "x", "attachments": [{"url": "http://b.log/1.m4a", "mime_type": "audio/x-m4a"}]}]}"#;
        let f = parse(json, "http://b.log/feed.json").unwrap();
        assert_eq!(f.entries[0].enclosures[0].url, "http://b.log/1.m4a");
        assert_eq!(
            f.entries[0].enclosures[0].mime.as_deref(),
            Some("audio/x-m4a")
        );
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
