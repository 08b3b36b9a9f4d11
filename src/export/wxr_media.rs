//! A post's archived images as WXR attachment items, so a WordPress restore has its images
//! again: each image the article shows and the post's featured image, when the archive
//! holds the file, become one `attachment` item (parent: the post; the featured one named by
//! the post's `_thumbnail_id`). The WordPress importer downloads each from its
//! `wp:attachment_url`, files it under `uploads/` where `_wp_attached_file` says (the
//! original's `YYYY/MM/name`), and rewrites the posts' links to the files it saved: the
//! attachment's URL, its `guid` (the original address) and, for images, every address that
//! starts with the file's name without its extension (WordPress's size variants,
//! `name-1024x683.jpg`).
//!
//! Where the importer downloads from ([`MediaSource`]): the images' own addresses (a blog
//! still online), or an `archive serve` of this archive (`/web/{stamp}id_/{url}`, the
//! capture as stored). In the latter case the article's image addresses are written as that
//! server's too, so the importer's rewriting reaches every size variant.

use super::feeds::xml_chars;
use super::wxr_xml::{cdata, gmt, local, meta, pub_date, text, ItemIds};
use crate::store::{Media, Post};
use quick_xml::events::BytesText;
use quick_xml::Writer;
use std::collections::HashMap;
use std::io::Write;

/// Where the WordPress importer is to download the archived images from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum MediaSource {
    /// The images' own addresses (the blog is still online).
    #[default]
    Live,
    /// An `archive serve` of this archive at this address (`http://127.0.0.1:8080/`), which
    /// answers `/web/{stamp}id_/{url}` with the capture as stored.
    Archive(url::Url),
}

/// The download addresses of one blog's export.
#[derive(Debug, Clone)]
pub(super) struct Downloads {
    /// The server's address, ending in `/`, or `None` for the live addresses.
    base: Option<url::Url>,
    /// The Memento timestamp asked for (`YYYYMMDDhhmmss`): the blog's last crawl or update,
    /// so the same archive exports the same file; the server answers the nearest capture.
    stamp: String,
}

impl Downloads {
    /// `source` for a blog last crawled or updated at `at`.
    pub fn new(source: &MediaSource, at: Option<chrono::DateTime<chrono::Utc>>) -> Downloads {
        let base = match source {
            MediaSource::Live => None,
            MediaSource::Archive(u) => {
                let mut u = u.clone();
                if !u.path().ends_with('/') {
                    let p = format!("{}/", u.path());
                    u.set_path(&p);
                }
                Some(u)
            }
        };
        let stamp = at
            .unwrap_or(chrono::DateTime::UNIX_EPOCH)
            .format("%Y%m%d%H%M%S")
            .to_string();
        Downloads { base, stamp }
    }

    /// Whether the addresses are the archive's (else the images' own).
    pub fn is_archive(&self) -> bool {
        self.base.is_some()
    }

    /// The address the importer downloads `url` from.
    pub fn fetch_url(&self, url: &str) -> String {
        match &self.base {
            None => url.to_string(),
            Some(base) => format!("{}web/{}id_/{url}", base.as_str(), self.stamp),
        }
    }
}

/// One attachment item.
#[derive(Debug, Clone)]
pub(super) struct Attachment {
    /// Its `wp:post_id`.
    pub id: u64,
    /// The parent post's `wp:post_id`.
    pub parent: u64,
    /// The archived file's original address (the item's `guid`).
    pub url: String,
    /// `_wp_attached_file`: the path under `wp-content/uploads/` (`2019/03/a.jpg`), else the
    /// file name.
    pub file: String,
    /// The image's `alt` text.
    pub alt: String,
    /// MIME type of the stored file.
    pub mime: Option<String>,
    /// The parent post's first author: the item's `dc:creator`, as WordPress names an upload's
    /// uploader on every attachment.
    pub author: Option<String>,
    /// The parent post's publication time (WordPress files an upload by it when no path says
    /// otherwise).
    pub published: Option<chrono::DateTime<chrono::FixedOffset>>,
    /// When the archive fetched the parent post: the item's `pubDate` when it has no date.
    pub archived: chrono::DateTime<chrono::Utc>,
}

/// The attachments of a blog's export.
#[derive(Debug, Default)]
pub(super) struct Attachments {
    /// In the order they were first met.
    pub items: Vec<Attachment>,
    by_url: HashMap<String, usize>,
}

/// An image a post shows: its address (absolute) and alt text.
pub(super) struct Shown {
    /// Absolute URL as the page gives it.
    pub src: String,
    /// `alt`.
    pub alt: String,
}

impl Attachments {
    /// The attachment of an image `post` (item `post_id`, dated as the post) shows,
    /// when the archive holds its file: the full-size file when the archive holds it too
    /// (WordPress's `name-1024x683.jpg` → `name.jpg`), else the file shown. An image shown by
    /// several posts is one attachment, the first post's, numbered by `ids`. Returns its id.
    pub fn add(
        &mut self,
        ids: &mut ItemIds,
        post: &Post,
        post_id: u64,
        shown: &Shown,
    ) -> Option<u64> {
        let held = |u: &str| post.media.iter().find(|m| m.url == u && m.is_held());
        let full = full_size(&shown.src);
        let media: &Media = full
            .as_deref()
            .and_then(held)
            .or_else(|| held(&shown.src))?;
        if let Some(&i) = self.by_url.get(&media.url) {
            return Some(self.items[i].id);
        }
        let id = ids.take(None);
        self.by_url.insert(media.url.clone(), self.items.len());
        self.items.push(Attachment {
            id,
            parent: post_id,
            url: media.url.clone(),
            file: attached_file(&media.url),
            alt: shown.alt.clone(),
            mime: media.mime.clone(),
            author: post.authors.first().cloned(),
            published: post.published,
            archived: post.fetched_at,
        });
        Some(id)
    }
}

/// WordPress's full-size file of a size variant: `…/a-1024x683.jpg` → `…/a.jpg`; `None` for
/// an address without a `-WxH` suffix.
fn full_size(url: &str) -> Option<String> {
    let (path, query) = url
        .split_once('?')
        .map_or((url, None), |(p, q)| (p, Some(q)));
    let slash = path.rfind('/')?;
    let name = &path[slash + 1..];
    let dot = name.rfind('.')?;
    let (stem, ext) = name.split_at(dot);
    let dash = stem.rfind('-')?;
    let (w, h) = stem[dash + 1..].split_once('x')?;
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if !digits(w) || !digits(h) {
        return None;
    }
    let mut out = format!("{}{}{ext}", &path[..slash + 1], &stem[..dash]);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    Some(out)
}

/// `_wp_attached_file` of an image address: the path after `/wp-content/uploads/`
/// (`2019/03/a.jpg`), else the file name; percent-decoded.
fn attached_file(url: &str) -> String {
    let path = url::Url::parse(url)
        .map(|u| u.path().to_string())
        .unwrap_or_default();
    let rel = path
        .split_once("/wp-content/uploads/")
        .map(|(_, r)| r.to_string())
        .unwrap_or_else(|| path.rsplit('/').next().unwrap_or_default().to_string());
    percent_encoding::percent_decode_str(&rel)
        .decode_utf8_lossy()
        .into_owned()
}

/// The images an article shows (`img[src]`, absolute against `base`), in document order.
pub(super) fn shown_images(html: &str, base: &str) -> Vec<Shown> {
    let Ok(base) = url::Url::parse(base) else {
        return Vec::new();
    };
    let doc = scraper::Html::parse_fragment(html);
    let sel = scraper::Selector::parse("img[src]").expect("static");
    doc.select(&sel)
        .filter_map(|img| {
            let v = img.value();
            let src = base.join(v.attr("src")?.trim()).ok()?;
            matches!(src.scheme(), "http" | "https").then(|| Shown {
                src: src.into(),
                alt: v.attr("alt").unwrap_or_default().to_string(),
            })
        })
        .collect()
}

/// The article with the addresses of the images the archive holds (`src`, `srcset`) as
/// [`Downloads::fetch_url`] gives them; unchanged for the live addresses.
pub(super) fn rewritten(html: &str, post: &Post, source: &Downloads) -> String {
    if !source.is_archive() {
        return html.to_string();
    }
    let Ok(base) = url::Url::parse(&post.url) else {
        return html.to_string();
    };
    let swap = |raw: &str| -> Option<String> {
        let abs = base.join(raw.trim()).ok()?;
        post.media
            .iter()
            .any(|m| m.url == abs.as_str() && m.is_held())
            .then(|| source.fetch_url(abs.as_str()))
    };
    // Only an attribute with an address swapped is written again.
    let srcset = |v: &str| -> Option<String> {
        let candidates = srcset_candidates(v);
        let mut swapped = false;
        let out: Vec<String> = candidates
            .iter()
            .map(|(u, d)| {
                let u = match swap(u) {
                    Some(n) => {
                        swapped = true;
                        n
                    }
                    None => u.to_string(),
                };
                if d.is_empty() {
                    u
                } else {
                    format!("{u} {d}")
                }
            })
            .collect();
        swapped.then(|| out.join(", "))
    };
    use lol_html::{element, rewrite_str, RewriteStrSettings};
    let result = rewrite_str(
        html,
        RewriteStrSettings {
            element_content_handlers: vec![
                element!("img[src]", |el| {
                    if let Some(n) = el.get_attribute("src").as_deref().and_then(swap) {
                        el.set_attribute("src", &n)?;
                    }
                    Ok(())
                }),
                element!("img[srcset], source[srcset]", |el| {
                    if let Some(n) = el.get_attribute("srcset").as_deref().and_then(srcset) {
                        el.set_attribute("srcset", &n)?;
                    }
                    Ok(())
                }),
            ],
            ..RewriteStrSettings::new()
        },
    );
    result.unwrap_or_else(|_| html.to_string())
}

/// The candidates of a `srcset` as (address, descriptor), as the HTML Standard splits them:
/// an address runs to whitespace (a comma inside it, `?resize=1024,683`, is part of it; commas
/// ending it separate), its descriptor to the next comma.
fn srcset_candidates(v: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = v;
    loop {
        rest = rest.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
        if rest.is_empty() {
            return out;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (url, after) = rest.split_at(end);
        if let Some(url) = url.strip_suffix(',') {
            out.push((url.trim_end_matches(','), ""));
            rest = after;
            continue;
        }
        let stop = after.find(',').unwrap_or(after.len());
        out.push((url, after[..stop].trim()));
        rest = &after[stop..];
    }
}

/// An attachment item, as WordPress exports an uploaded image (its parent's first author's
/// login as `dc:creator`, which readers such as wpparser require): `wp:post_type` attachment,
/// `wp:status` inherit, the parent post, `wp:attachment_url` (where the importer downloads
/// it), the original address as `guid`, `_wp_attached_file` and the alt text.
pub(super) fn write_attachment<W: Write>(
    w: &mut Writer<W>,
    a: &Attachment,
    media: &Downloads,
    logins: &HashMap<String, String>,
) -> std::io::Result<()> {
    let name = a.file.rsplit('/').next().unwrap_or_default();
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    w.create_element("item").write_inner_content(|w| {
        text(w, "title", stem)?;
        text(w, "link", &a.url)?;
        text(w, "pubDate", &pub_date(a.published, a.archived))?;
        let creator = a.author.as_ref().and_then(|n| logins.get(n));
        cdata(w, "dc:creator", creator.map_or("", String::as_str))?;
        w.create_element("guid")
            .with_attribute(("isPermaLink", "false"))
            .write_text_content(BytesText::new(&xml_chars(&a.url)))?;
        text(w, "description", "")?;
        cdata(w, "content:encoded", "")?;
        cdata(w, "excerpt:encoded", "")?;
        text(w, "wp:post_id", &a.id.to_string())?;
        cdata(w, "wp:post_date", &local(a.published))?;
        cdata(w, "wp:post_date_gmt", &gmt(a.published))?;
        cdata(w, "wp:post_modified", &local(a.published))?;
        cdata(w, "wp:post_modified_gmt", &gmt(a.published))?;
        cdata(w, "wp:comment_status", "closed")?;
        cdata(w, "wp:ping_status", "closed")?;
        cdata(w, "wp:post_name", &stem.to_lowercase())?;
        cdata(w, "wp:status", "inherit")?;
        text(w, "wp:post_parent", &a.parent.to_string())?;
        text(w, "wp:menu_order", "0")?;
        cdata(w, "wp:post_type", "attachment")?;
        cdata(w, "wp:post_password", "")?;
        text(w, "wp:is_sticky", "0")?;
        cdata(w, "wp:attachment_url", &media.fetch_url(&a.url))?;
        if let Some(m) = &a.mime {
            meta(w, "everblog_mime", m)?;
        }
        meta(w, "_wp_attached_file", &a.file)?;
        if !a.alt.is_empty() {
            meta(w, "_wp_attachment_image_alt", &a.alt)?;
        }
        Ok(())
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_size_files_and_upload_paths_as_wordpress_names_them() {
        assert_eq!(
            full_size("http://b.example/wp-content/uploads/2019/03/a-b-1024x683.jpg").as_deref(),
            Some("http://b.example/wp-content/uploads/2019/03/a-b.jpg")
        );
        assert_eq!(full_size("http://b.example/x/a-b.jpg"), None);
        assert_eq!(full_size("http://b.example/x/a-1x.jpg"), None);
        assert_eq!(
            attached_file("http://b.example/wp-content/uploads/2019/03/caf%C3%A9.jpg"),
            "2019/03/café.jpg"
        );
        assert_eq!(attached_file("http://img.example/p/a.png"), "a.png");
        let at = chrono::DateTime::parse_from_rfc3339("2026-11-26T10:00:00Z").unwrap();
        let s = Downloads::new(
            &MediaSource::Archive(url::Url::parse("http://127.0.0.1:8080/archive").unwrap()),
            Some(at.to_utc()),
        );
        assert_eq!(
            s.fetch_url("http://b.example/a.jpg"),
            "http://127.0.0.1:8080/archive/web/20261126100000id_/http://b.example/a.jpg"
        );
        assert_eq!(
            srcset_candidates("a.jpg?resize=1024,683 1024w, b.jpg 2x,c.jpg, d.jpg"),
            [
                ("a.jpg?resize=1024,683", "1024w"),
                ("b.jpg", "2x"),
                ("c.jpg", ""),
                ("d.jpg", "")
            ]
        );
        let live = Downloads::new(&MediaSource::Live, None);
        assert_eq!(
            live.fetch_url("http://b.example/a.jpg"),
            "http://b.example/a.jpg"
        );
    }
}
