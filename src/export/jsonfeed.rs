//! JSON Feed 1.1 (<https://jsonfeed.org/version/1.1>) of one blog: one document, `feed.json`,
//! streamed one post at a time (the top-level object is written by hand around the items,
//! each item by serde_json).

use super::feeds::tags_of;
use crate::core::feed::Enclosure;
use crate::store::{Blog, Post, Store};
use anyhow::Result;
use chrono::{DateTime, FixedOffset};
use serde::Serialize;
use std::io::Write;

/// The document's file name.
pub const FILE: &str = "feed.json";

/// The `version` JSON Feed 1.1 documents declare.
pub const VERSION: &str = "https://jsonfeed.org/version/1.1";

#[derive(Serialize)]
struct Item<'a> {
    id: &'a str,
    url: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    content_html: &'a str,
    content_text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    date_published: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    date_modified: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    authors: Vec<Author<'a>>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    tags: &'a [String],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    attachments: Vec<Attachment<'a>>,
}

#[derive(Serialize)]
struct Author<'a> {
    name: &'a str,
    /// The page the blog keeps for the author (JSON Feed 1.1 `url`).
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<&'a str>,
}

#[derive(Serialize)]
struct Attachment<'a> {
    url: &'a str,
    mime_type: &'a str,
}

/// Writes `blog`'s posts as one JSON Feed 1.1 document to `out`: `version`, `title` (the
/// feed's title, else the home URL), `home_page_url`, `language` (the blog's, when known), then
/// `items`, newest first, each with
/// `id` and `url` = the permalink, `title` (when known), `content_html`, `content_text`,
/// `date_published` / `date_modified` (RFC 3339 with the blog's offset, when known),
/// `authors` (`[{name, url}]`, one per author, `url` the blog's page for them when known), `tags` (categories and tags), `attachments` (the
/// feed's enclosures, `mime_type` `application/octet-stream` when the feed gave none).
/// Returns the posts written.
///
/// # Errors
/// The database failed, or writing to `out` did.
pub fn write_jsonfeed(store: &Store, blog: &Blog, out: &mut dyn Write) -> Result<u64> {
    out.write_all(b"{\"version\":")?;
    serde_json::to_writer(&mut *out, VERSION)?;
    out.write_all(b",\"title\":")?;
    serde_json::to_writer(&mut *out, blog.title.as_deref().unwrap_or(&blog.home_url))?;
    out.write_all(b",\"home_page_url\":")?;
    serde_json::to_writer(&mut *out, &blog.home_url)?;
    if let Some(language) = &blog.language {
        out.write_all(b",\"language\":")?;
        serde_json::to_writer(&mut *out, language)?;
    }
    out.write_all(b",\"items\":[")?;
    let mut first = true;
    let n = store.for_each_post(Some(blog.id), |post| {
        let enclosures = store.enclosures_of(blog.id, &post.url)?;
        if !first {
            out.write_all(b",")?;
        }
        first = false;
        out.write_all(b"\n")?;
        serde_json::to_writer(&mut *out, &item(&post, &enclosures))?;
        Ok(())
    })?;
    out.write_all(b"\n]}\n")?;
    Ok(n)
}

fn item<'a>(post: &'a Post, enclosures: &'a [Enclosure]) -> Item<'a> {
    let date = |d: Option<DateTime<FixedOffset>>| {
        d.map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
    };
    Item {
        id: &post.url,
        url: &post.url,
        title: post.title.as_deref(),
        content_html: &post.content_html,
        content_text: &post.content_text,
        date_published: date(post.published),
        date_modified: date(post.updated),
        authors: post
            .authors
            .iter()
            .map(|name| Author {
                name,
                url: post
                    .author_pages
                    .iter()
                    .find(|p| &p.name == name)
                    .map(|p| p.url.as_str()),
            })
            .collect(),
        tags: tags_of(post),
        attachments: enclosures
            .iter()
            .map(|e| Attachment {
                url: &e.url,
                mime_type: e.mime.as_deref().unwrap_or("application/octet-stream"),
            })
            .collect(),
    }
}
