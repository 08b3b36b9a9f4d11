//! OPML 2.0 (opml.org/spec2) of the archive's blog list: one `outline type="rss"` per blog with
//! its title, feed (`xmlUrl`) and home page (`htmlUrl`), the subscription list feed readers and
//! `archive add` take. Issue 45 item 8: `archive export --format opml` and the reader's
//! `/blogs.opml` write the same document.

use super::feeds::xml_chars;
use crate::store::Blog;
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use std::io::Write;

/// The document's file name when written to a directory or downloaded.
pub const FILE: &str = "blogs.opml";

/// Writes `blogs`, in their order, as one OPML 2.0 document made at `now` (`dateCreated`,
/// RFC 822 as the spec asks), with the `opml` crate that also reads `archive add --from`'s
/// lists. A blog without a title is named by its home page. Returns the outlines written.
///
/// # Errors
/// Writing to `out` failed.
pub fn write_opml(blogs: &[Blog], now: DateTime<Utc>, out: &mut dyn Write) -> Result<u64> {
    let outlines = blogs
        .iter()
        .map(|blog| {
            let title = xml_chars(blog.name()).into_owned();
            opml::Outline {
                text: title.clone(),
                title: Some(title),
                r#type: Some("rss".into()),
                xml_url: Some(blog.feed_url.clone()),
                html_url: Some(blog.home_url.clone()),
                ..opml::Outline::default()
            }
        })
        .collect();
    let doc = opml::OPML {
        version: "2.0".into(),
        head: Some(opml::Head {
            title: Some("Blogs archived by everblog".into()),
            date_created: Some(now.to_rfc2822()),
            ..opml::Head::default()
        }),
        body: opml::Body { outlines },
    };
    let xml = doc.to_string().context("writing the OPML document")?;
    out.write_all(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")?;
    out.write_all(xml.as_bytes())?;
    out.write_all(b"\n")?;
    Ok(blogs.len() as u64)
}
