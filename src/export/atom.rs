//! Atom 1.0 (RFC 4287) of one blog, paged as an archived feed (RFC 5005 §4): the
//! subscription document `index.atom` holds the newest posts and links to the newest archive
//! document; archive documents `archive-1.atom` (oldest posts) … `archive-K.atom` hold exactly
//! `page_size` posts each, counted from the oldest post, so a full archive document never
//! changes when new posts arrive. Archive documents carry `<fh:archive/>` and `current`,
//! `prev-archive`, `next-archive` links; links between documents are relative (the
//! documents sit in one directory). Written with quick-xml's escaping writer, one page in
//! memory at a time.

use super::feeds::{tags_of, xml_chars, Documents};
use crate::core::feed::Enclosure;
use crate::store::{Blog, Post, Store};
use anyhow::{bail, Result};
use chrono::{DateTime, FixedOffset, Utc};
use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;
use std::io::Write;

/// The subscription (current) document's file name.
pub const CURRENT: &str = "index.atom";

/// Posts per archive document unless `--atom-page-size` says otherwise.
pub const DEFAULT_PAGE_SIZE: u64 = 100;

const ATOM: &str = "http://www.w3.org/2005/Atom";
const HISTORY: &str = "http://purl.org/syndication/history/1.0";
const THREAD: &str = "http://purl.org/syndication/thread/1.0";

/// The file name of archive document `n` (1 = the oldest posts).
pub fn archive_name(n: u64) -> String {
    format!("archive-{n}.atom")
}

/// How a blog's posts are split into documents: `archives` archive documents of
/// `page_size` posts each (the oldest posts), the rest (1 to `page_size` posts; none for a
/// blog without posts) in the subscription document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The blog's posts.
    pub posts: u64,
    /// Posts per archive document (at least 1).
    pub page_size: u64,
    /// Archive documents.
    pub archives: u64,
}

impl Layout {
    /// The layout of `posts` posts in pages of `page_size` (0 is taken as 1).
    pub fn new(posts: u64, page_size: u64) -> Layout {
        let page_size = page_size.max(1);
        Layout {
            posts,
            page_size,
            archives: posts.saturating_sub(1) / page_size,
        }
    }

    /// Posts in the subscription document.
    pub fn current_posts(&self) -> u64 {
        self.posts - self.archives * self.page_size
    }

    /// Documents written: the subscription document and the archive documents.
    pub fn documents(&self) -> u64 {
        1 + self.archives
    }
}

/// One document of the archived feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Doc {
    Current,
    Archive(u64),
}

impl Doc {
    fn name(self) -> String {
        match self {
            Doc::Current => CURRENT.into(),
            Doc::Archive(n) => archive_name(n),
        }
    }
}

/// Writes `blog`'s posts as the documents of `layout` (computed from
/// [`Store::post_count`] in the same [`Store::snapshot`]): `index.atom` first, then the
/// archive documents newest first. Each entry: `id` and `link rel="alternate"` = the
/// permalink, `title`, `published` and `updated` with the blog's offset as stored (`updated`
/// falls back to `published`, then to when the page was fetched, UTC), one `author` per
/// author name, a `category term` per category/tag, `link rel="enclosure"` per feed
/// enclosure, `thr:total` (RFC 4685) = archived comments, `content type="html"` with
/// `xml:base` = the permalink. A document some of whose entries have no author names gets
/// the blog's title as feed author (Atom requires one). Returns the posts written.
///
/// # Errors
/// The database or a document failed, or the blog's posts changed count since `layout`
/// was computed (outside a snapshot).
pub fn write_atom(
    store: &Store,
    blog: &Blog,
    layout: Layout,
    docs: &mut dyn Documents,
) -> Result<u64> {
    let mut page: Vec<(Post, Vec<Enclosure>)> = Vec::new();
    let mut doc = Doc::Current;
    let mut want = layout.current_posts();
    let mut written = 0;
    let n = store.for_each_post(Some(blog.id), |post| {
        let enclosures = store.enclosures_of(blog.id, &post.url)?;
        page.push((post, enclosures));
        if page.len() as u64 == want {
            docs.document(&doc.name(), &mut |out| {
                write_document(out, blog, layout, doc, &page)
            })?;
            written += page.len() as u64;
            page.clear();
            doc = match doc {
                Doc::Current => Doc::Archive(layout.archives),
                Doc::Archive(n) => Doc::Archive(n.saturating_sub(1)),
            };
            want = layout.page_size;
        }
        Ok(())
    })?;
    if n != layout.posts || written != n {
        bail!(
            "the archive changed while exporting {} ({} posts counted, {n} read): export again",
            blog.home_url,
            layout.posts
        );
    }
    if n == 0 {
        docs.document(CURRENT, &mut |out| {
            write_document(out, blog, layout, Doc::Current, &[])
        })?;
    }
    Ok(n)
}

/// One document: the feed's metadata and links, then its entries.
fn write_document(
    out: &mut dyn Write,
    blog: &Blog,
    layout: Layout,
    doc: Doc,
    entries: &[(Post, Vec<Enclosure>)],
) -> Result<()> {
    let mut w = Writer::new_with_indent(out, b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("utf-8"), None)))?;
    let title = blog.title.as_deref().unwrap_or(&blog.home_url);
    let updated = entries
        .iter()
        .map(|(p, _)| entry_updated(p))
        .max_by_key(|d| d.timestamp_millis())
        .or_else(|| {
            blog.last_update_at
                .or(blog.crawled_at)
                .or(blog.crawl_started_at)
                .map(|d| d.fixed_offset())
        })
        .unwrap_or_else(|| DateTime::<Utc>::UNIX_EPOCH.fixed_offset());
    w.create_element("feed")
        .with_attributes([
            ("xmlns", ATOM),
            ("xmlns:fh", HISTORY),
            ("xmlns:thr", THREAD),
        ])
        .with_attributes(blog.language.as_deref().map(|l| ("xml:lang", l)))
        .write_inner_content(|w| {
            text(w, "id", &blog.home_url)?;
            w.create_element("title")
                .with_attribute(("type", "text"))
                .write_text_content(BytesText::new(&xml_chars(title)))?;
            text(w, "updated", &rfc3339(updated))?;
            link(w, "alternate", &blog.home_url, Some("text/html"))?;
            link(w, "self", &doc.name(), Some("application/atom+xml"))?;
            let archive_link = |w: &mut Writer<_>, rel: &str, n: u64| {
                link(w, rel, &archive_name(n), Some("application/atom+xml"))
            };
            match doc {
                Doc::Current => {
                    if layout.archives > 0 {
                        archive_link(w, "prev-archive", layout.archives)?;
                    }
                }
                Doc::Archive(n) => {
                    link(w, "current", CURRENT, Some("application/atom+xml"))?;
                    if n > 1 {
                        archive_link(w, "prev-archive", n - 1)?;
                    }
                    if n < layout.archives {
                        archive_link(w, "next-archive", n + 1)?;
                    }
                    w.create_element("fh:archive").write_empty()?;
                }
            }
            w.create_element("generator")
                .with_attribute(("version", env!("CARGO_PKG_VERSION")))
                .write_text_content(BytesText::new("everblog"))?;
            if entries.iter().any(|(p, _)| p.authors.is_empty()) {
                author(w, title, None)?;
            }
            for (post, enclosures) in entries {
                write_entry(w, post, enclosures)?;
            }
            Ok(())
        })?;
    w.get_mut().write_all(b"\n")?;
    Ok(())
}

fn write_entry<W: Write>(
    w: &mut Writer<W>,
    post: &Post,
    enclosures: &[Enclosure],
) -> std::io::Result<()> {
    w.create_element("entry").write_inner_content(|w| {
        text(w, "id", &post.url)?;
        w.create_element("title")
            .with_attribute(("type", "text"))
            .write_text_content(BytesText::new(&xml_chars(
                post.title.as_deref().unwrap_or(""),
            )))?;
        link(w, "alternate", &post.url, Some("text/html"))?;
        for e in enclosures {
            let mut el = w
                .create_element("link")
                .with_attribute(("rel", "enclosure"))
                .with_attribute(("href", xml_chars(&e.url).as_ref()));
            if let Some(mime) = &e.mime {
                el = el.with_attribute(("type", xml_chars(mime).as_ref()));
            }
            el.write_empty()?;
        }
        if let Some(p) = post.published {
            text(w, "published", &rfc3339(p))?;
        }
        text(w, "updated", &rfc3339(entry_updated(post)))?;
        for name in &post.authors {
            let page = post.author_pages.iter().find(|p| &p.name == name);
            author(w, name, page.map(|p| p.url.as_str()))?;
        }
        for tag in tags_of(post) {
            w.create_element("category")
                .with_attribute(("term", xml_chars(tag).as_ref()))
                .write_empty()?;
        }
        if !post.comments.is_empty() {
            text(w, "thr:total", &post.comments.len().to_string())?;
        }
        w.create_element("content")
            .with_attribute(("type", "html"))
            .with_attribute(("xml:base", xml_chars(&post.url).as_ref()))
            .write_text_content(BytesText::new(&xml_chars(&post.content_html)))?;
        Ok(())
    })?;
    Ok(())
}

/// The entry's `updated`: the post's update, else its publication, else when it was fetched.
fn entry_updated(post: &Post) -> DateTime<FixedOffset> {
    post.updated
        .or(post.published)
        .unwrap_or_else(|| post.fetched_at.fixed_offset())
}

/// RFC 3339 with the offset as stored (`Z` for UTC).
fn rfc3339(d: DateTime<FixedOffset>) -> String {
    if d.offset().local_minus_utc() == 0 {
        d.to_utc()
            .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
    } else {
        d.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false)
    }
}

fn text<W: Write>(w: &mut Writer<W>, name: &str, value: &str) -> std::io::Result<()> {
    w.create_element(name)
        .write_text_content(BytesText::new(&xml_chars(value)))?;
    Ok(())
}

/// An `<author>`: its `name`, and the page the blog keeps for them as its `uri`.
fn author<W: Write>(w: &mut Writer<W>, name: &str, uri: Option<&str>) -> std::io::Result<()> {
    w.create_element("author").write_inner_content(|w| {
        text(w, "name", name)?;
        match uri {
            Some(u) => text(w, "uri", u),
            None => Ok(()),
        }
    })?;
    Ok(())
}

fn link<W: Write>(
    w: &mut Writer<W>,
    rel: &str,
    href: &str,
    kind: Option<&str>,
) -> std::io::Result<()> {
    let mut el = w
        .create_element("link")
        .with_attribute(("rel", rel))
        .with_attribute(("href", xml_chars(href).as_ref()));
    if let Some(kind) = kind {
        el = el.with_attribute(("type", kind));
    }
    el.write_empty()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_archive_pages_count_from_the_oldest_post() {
        let l = Layout::new(0, 100);
        assert_eq!((l.archives, l.current_posts(), l.documents()), (0, 0, 1));
        let l = Layout::new(100, 100);
        assert_eq!((l.archives, l.current_posts()), (0, 100));
        let l = Layout::new(101, 100);
        assert_eq!((l.archives, l.current_posts()), (1, 1));
        let l = Layout::new(250, 100);
        assert_eq!((l.archives, l.current_posts()), (2, 50));
        // One more post changes only the subscription document.
        let m = Layout::new(251, 100);
        assert_eq!((m.archives, m.current_posts()), (2, 51));
        assert_eq!(Layout::new(5, 0).page_size, 1);
    }

    #[test]
    fn each_author_is_an_author_element_and_text_survives_escaping() {
        let published = DateTime::parse_from_rfc3339("2024-05-01T09:30:00+02:00").unwrap();
        let post = Post {
            url: "https://b.example/2024/05/a-post/".into(),
            blog: "https://b.example/".into(),
            title: Some("Fish & <chips> \u{c}".into()),
            authors: vec!["Ann Lee".into(), "Bo Ek".into()],
            published: Some(published),
            updated: None,
            published_raw: None,
            content_html: "<p>a ]]> b &amp; c</p>".into(),
            content_text: "a ]]> b & c".into(),
            fetched_at: published.to_utc(),
            gaps: Vec::new(),
            version: 1,
            gone_at: None,
            moved_to: None,
            tags: vec!["Food".into()],
            extracted_by: None,
            author_pages: Vec::new(),
            comments: Vec::new(),
            media: Vec::new(),
        };
        let mut w = Writer::new(Vec::new());
        w.create_element("feed")
            .with_attribute(("xmlns", ATOM))
            .write_inner_content(|w| {
                text(w, "id", "https://b.example/")?;
                text(w, "title", "B")?;
                text(w, "updated", "2024-05-01T09:30:00+02:00")?;
                write_entry(w, &post, &[])
            })
            .unwrap();
        let xml = w.into_inner();
        let feed = feed_rs::parser::parse(&xml[..]).unwrap();
        let e = &feed.entries[0];
        let names: Vec<_> = e.authors.iter().map(|a| a.name.as_deref()).collect();
        assert_eq!(names, [Some("Ann Lee"), Some("Bo Ek")]);
        assert_eq!(e.title.as_ref().unwrap().content.trim(), "Fish & <chips>");
        assert_eq!(e.published, Some(published.to_utc()));
        let body = e.content.as_ref().and_then(|c| c.body.as_deref());
        assert_eq!(body, Some(post.content_html.as_str()));
        assert!(String::from_utf8(xml)
            .unwrap()
            .contains("<published>2024-05-01T09:30:00+02:00</published>"));
    }
}
