//! WordPress eXtended RSS 1.2 of one blog, as WordPress's Tools → Export writes it and the
//! WordPress importer (`wordpress-importer`'s WXR parsers) reads it: RSS 2.0 with the
//! `excerpt`, `content`, `wfw`, `dc` and `wp` namespaces; the channel declares the authors
//! (`wp:author`) and tags (`wp:tag`) before the items; each item is one post with its
//! comments (`wp:comment`), threaded by numeric ids.
//!
//! What the importer relies on, and this writer keeps: an item's `dc:creator` is an
//! `wp:author_login` of the channel; an item `category` counts only with a `nicename`; the
//! importer inserts a post's comments in ascending `wp:comment_id` order and maps
//! `wp:comment_parent` only to comments already inserted, so a parent's id is always below
//! its replies' ids. Text is written as CDATA (`]]>` split), as WordPress does.

use super::feeds::{dashed, tags_of, xml_chars};
use crate::store::{Blog, Comment, Post, Store};
use anyhow::{bail, Result};
use chrono::{DateTime, FixedOffset, Utc};
use quick_xml::events::{BytesCData, BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;
use std::collections::{HashMap, HashSet};
use std::io::Write;

/// The document's file name.
pub const FILE: &str = "wordpress.xml";

/// The taxonomy every category/tag is exported to. `Post::tags` does not tell categories
/// from tags; WordPress tags are flat, so none is given a hierarchy it did not have.
const TAG_DOMAIN: &str = "post_tag";

/// WordPress's "no date" (what it writes for drafts), for posts and comments without one.
const NO_DATE: &str = "0000-00-00 00:00:00";

/// Writes `blog`'s posts as one WXR 1.2 document to `out` and returns (posts, comments)
/// written. Call it inside [`Store::snapshot`]: the channel's authors and tags are read
/// before the posts.
///
/// Each item: `title`, `link` and `guid` = the permalink, `pubDate` (RFC 2822), `dc:creator`
/// (the first author's login; further authors in the post meta `everblog_authors`, a JSON
/// array of names), `content:encoded` (article HTML), `wp:post_id` (1 = the oldest post),
/// `wp:post_date` (blog-local, the offset the post was stored with) and `wp:post_date_gmt`,
/// `wp:post_modified`/`_gmt` (the update, else the publication), `wp:post_name` (the
/// permalink's last segment), `wp:status` publish, `wp:post_type` post, a `category
/// domain="post_tag"` per category/tag; each comment: `wp:comment_id` (numbered across the
/// file, parents before replies), `wp:comment_author`, `wp:comment_date` (in the post's
/// offset, else the comment's own) and `_gmt`, `wp:comment_content` (HTML),
/// `wp:comment_approved` 1, `wp:comment_type` comment, `wp:comment_parent` (0: none, or the
/// parent is not archived). Undated posts and comments get WordPress's zero date.
///
/// # Errors
/// The database failed, writing to `out` did, or the posts changed count meanwhile.
pub fn write_wxr(store: &Store, blog: &Blog, out: &mut dyn Write) -> Result<(u64, u64)> {
    let total = store.post_count(blog.id)?;
    let crate::store::AuthorsAndTags { authors, tags } = store.authors_and_tags(blog.id)?;
    let logins = unique_slugs(&authors, |c| c.is_ascii_alphanumeric(), "author");
    let nicenames = unique_slugs(&tags, char::is_alphanumeric, "tag");

    let mut w = Writer::new_with_indent(out, b'\t', 1);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    w.write_event(Event::Start(BytesStart::new("rss").with_attributes([
        ("version", "2.0"),
        ("xmlns:excerpt", "http://wordpress.org/export/1.2/excerpt/"),
        ("xmlns:content", "http://purl.org/rss/1.0/modules/content/"),
        ("xmlns:wfw", "http://wellformedweb.org/CommentAPI/"),
        ("xmlns:dc", "http://purl.org/dc/elements/1.1/"),
        ("xmlns:wp", "http://wordpress.org/export/1.2/"),
    ])))?;
    w.write_event(Event::Start(BytesStart::new("channel")))?;
    text(
        &mut w,
        "title",
        blog.title.as_deref().unwrap_or(&blog.home_url),
    )?;
    text(&mut w, "link", &blog.home_url)?;
    text(&mut w, "description", "")?;
    if let Some(at) = blog.last_update_at.or(blog.crawled_at) {
        text(&mut w, "pubDate", &at.to_rfc2822())?;
    }
    // As WordPress writes it, always: strict WXR readers require it. `und` (BCP 47's
    // "undetermined") when neither the feed nor the pages said.
    text(
        &mut w,
        "language",
        blog.language.as_deref().unwrap_or("und"),
    )?;
    text(&mut w, "wp:wxr_version", "1.2")?;
    text(&mut w, "wp:base_site_url", &blog.home_url)?;
    text(&mut w, "wp:base_blog_url", &blog.home_url)?;
    for (i, name) in authors.iter().enumerate() {
        w.create_element("wp:author").write_inner_content(|w| {
            text(w, "wp:author_id", &(i + 1).to_string())?;
            cdata(w, "wp:author_login", &logins[name])?;
            cdata(w, "wp:author_email", "")?;
            cdata(w, "wp:author_display_name", name)?;
            cdata(w, "wp:author_first_name", "")?;
            cdata(w, "wp:author_last_name", "")
        })?;
    }
    for (i, name) in tags.iter().enumerate() {
        w.create_element("wp:tag").write_inner_content(|w| {
            text(w, "wp:term_id", &(i + 1).to_string())?;
            cdata(w, "wp:tag_slug", &nicenames[name])?;
            cdata(w, "wp:tag_name", name)
        })?;
    }
    w.create_element("generator")
        .write_text_content(BytesText::new(concat!(
            "everblog ",
            env!("CARGO_PKG_VERSION")
        )))?;

    let mut next_comment_id = 1u64;
    let mut seen = 0u64;
    let posts = store.for_each_post(Some(blog.id), |post| {
        let post_id = total.saturating_sub(seen);
        seen += 1;
        write_item(
            &mut w,
            &post,
            post_id,
            &logins,
            &nicenames,
            &mut next_comment_id,
        )?;
        Ok(())
    })?;
    if posts != total {
        bail!(
            "the archive changed while exporting {} ({total} posts counted, {posts} read): export again",
            blog.home_url
        );
    }
    w.write_event(Event::End(BytesEnd::new("channel")))?;
    w.write_event(Event::End(BytesEnd::new("rss")))?;
    w.get_mut().write_all(b"\n")?;
    Ok((posts, next_comment_id - 1))
}

fn write_item<W: Write>(
    w: &mut Writer<W>,
    post: &Post,
    post_id: u64,
    logins: &HashMap<String, String>,
    nicenames: &HashMap<String, String>,
    next_comment_id: &mut u64,
) -> std::io::Result<()> {
    let comments = thread_order(&post.comments);
    let modified = post.updated.or(post.published);
    w.create_element("item").write_inner_content(|w| {
        text(w, "title", post.title.as_deref().unwrap_or(""))?;
        text(w, "link", &post.url)?;
        if let Some(p) = post.published {
            text(w, "pubDate", &p.to_rfc2822())?;
        }
        let creator = post.authors.first().and_then(|a| logins.get(a));
        cdata(w, "dc:creator", creator.map_or("", String::as_str))?;
        w.create_element("guid")
            .with_attribute(("isPermaLink", "true"))
            .write_text_content(BytesText::new(&xml_chars(&post.url)))?;
        text(w, "description", "")?;
        cdata(w, "content:encoded", &post.content_html)?;
        cdata(w, "excerpt:encoded", "")?;
        text(w, "wp:post_id", &post_id.to_string())?;
        cdata(w, "wp:post_date", &local(post.published))?;
        cdata(w, "wp:post_date_gmt", &gmt(post.published))?;
        cdata(w, "wp:post_modified", &local(modified))?;
        cdata(w, "wp:post_modified_gmt", &gmt(modified))?;
        cdata(w, "wp:comment_status", "open")?;
        cdata(w, "wp:ping_status", "closed")?;
        cdata(w, "wp:post_name", &post_name(&post.url))?;
        cdata(w, "wp:status", "publish")?;
        text(w, "wp:post_parent", "0")?;
        text(w, "wp:menu_order", "0")?;
        cdata(w, "wp:post_type", "post")?;
        cdata(w, "wp:post_password", "")?;
        text(w, "wp:is_sticky", "0")?;
        for tag in tags_of(post) {
            w.write_event(Event::Start(BytesStart::new("category").with_attributes([
                ("domain", TAG_DOMAIN),
                (
                    "nicename",
                    xml_chars(nicenames.get(tag).map_or("", String::as_str)).as_ref(),
                ),
            ])))?;
            cdata_events(w, tag)?;
            w.write_event(Event::End(BytesEnd::new("category")))?;
        }
        if post.authors.len() > 1 {
            let names = serde_json::to_string(&post.authors).unwrap_or_default();
            w.create_element("wp:postmeta").write_inner_content(|w| {
                cdata(w, "wp:meta_key", "everblog_authors")?;
                cdata(w, "wp:meta_value", &names)
            })?;
        }
        // Ids in thread order: a parent always has a lower id than its replies.
        let first = *next_comment_id;
        let ids: HashMap<&str, u64> = comments
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.as_str(), first + i as u64))
            .collect();
        *next_comment_id += comments.len() as u64;
        let offset = post.published.map(|p| *p.offset());
        for c in &comments {
            let date = c
                .published
                .map(|d| offset.map_or(d, |o| d.with_timezone(&o)));
            let parent = c
                .parent
                .as_deref()
                .and_then(|p| ids.get(p))
                .copied()
                .unwrap_or(0);
            w.create_element("wp:comment").write_inner_content(|w| {
                text(w, "wp:comment_id", &ids[c.id.as_str()].to_string())?;
                cdata(w, "wp:comment_author", c.author.as_deref().unwrap_or(""))?;
                cdata(w, "wp:comment_author_email", "")?;
                cdata(w, "wp:comment_author_url", "")?;
                cdata(w, "wp:comment_author_IP", "")?;
                cdata(w, "wp:comment_date", &local(date))?;
                cdata(w, "wp:comment_date_gmt", &gmt(date))?;
                cdata(w, "wp:comment_content", &c.content_html)?;
                cdata(w, "wp:comment_approved", "1")?;
                cdata(w, "wp:comment_type", "comment")?;
                text(w, "wp:comment_parent", &parent.to_string())?;
                text(w, "wp:comment_user_id", "0")
            })?;
        }
        Ok(())
    })?;
    Ok(())
}

/// A post's comments in thread order: each thread depth first from its root, roots and
/// replies in archive order (oldest first). A comment whose parent is not among them is a
/// root; comments caught in a cycle of parents (never written by the crawl) come last.
fn thread_order(comments: &[Comment]) -> Vec<&Comment> {
    let keys: HashSet<&str> = comments.iter().map(|c| c.id.as_str()).collect();
    let mut replies: HashMap<&str, Vec<&Comment>> = HashMap::new();
    let mut roots = Vec::new();
    for c in comments {
        match c
            .parent
            .as_deref()
            .filter(|p| keys.contains(p) && *p != c.id)
        {
            Some(p) => replies.entry(p).or_default().push(c),
            None => roots.push(c),
        }
    }
    let mut order = Vec::with_capacity(comments.len());
    let mut placed: HashSet<&str> = HashSet::new();
    let mut stack: Vec<&Comment> = roots.into_iter().rev().collect();
    while let Some(c) = stack.pop() {
        if !placed.insert(c.id.as_str()) {
            continue;
        }
        order.push(c);
        if let Some(r) = replies.get(c.id.as_str()) {
            stack.extend(r.iter().rev());
        }
    }
    order.extend(comments.iter().filter(|c| !placed.contains(c.id.as_str())));
    order
}

/// `YYYY-MM-DD HH:MM:SS` in the date's own offset, or WordPress's zero date.
fn local(d: Option<DateTime<FixedOffset>>) -> String {
    d.map_or(NO_DATE.into(), |d| {
        d.format("%Y-%m-%d %H:%M:%S").to_string()
    })
}

/// `YYYY-MM-DD HH:MM:SS` in UTC, or WordPress's zero date.
fn gmt(d: Option<DateTime<FixedOffset>>) -> String {
    d.map_or(NO_DATE.into(), |d| {
        d.with_timezone(&Utc)
            .format("%Y-%m-%d %H:%M:%S")
            .to_string()
    })
}

/// The permalink's last non-empty path segment, lower case, without an `.html`/`.htm`/`.php`
/// extension (`/2024/05/a-post/` → `a-post`); empty for a home page.
fn post_name(url: &str) -> String {
    let path = url::Url::parse(url)
        .map(|u| u.path().to_string())
        .unwrap_or_default();
    let last = path.rsplit('/').find(|s| !s.is_empty()).unwrap_or("");
    let last = [".html", ".htm", ".php"]
        .iter()
        .find_map(|ext| last.strip_suffix(ext))
        .unwrap_or(last);
    last.to_lowercase()
}

/// Each name's slug (lower case, `keep` characters, runs of others as `-`), unique among
/// `names` (`-2`, `-3`… on a clash); `fallback` when nothing is left.
fn unique_slugs(
    names: &[String],
    keep: impl Fn(char) -> bool,
    fallback: &str,
) -> HashMap<String, String> {
    let mut taken = HashSet::new();
    let mut out = HashMap::new();
    for name in names {
        let mut base = dashed(&name.to_lowercase(), &keep);
        if base.is_empty() {
            base = fallback.into();
        }
        let mut slug = base.clone();
        let mut n = 2;
        while !taken.insert(slug.clone()) {
            slug = format!("{base}-{n}");
            n += 1;
        }
        out.insert(name.clone(), slug);
    }
    out
}

fn text<W: Write>(w: &mut Writer<W>, name: &str, value: &str) -> std::io::Result<()> {
    w.create_element(name)
        .write_text_content(BytesText::new(&xml_chars(value)))?;
    Ok(())
}

/// `<name><![CDATA[value]]></name>`, as WordPress writes text.
fn cdata<W: Write>(w: &mut Writer<W>, name: &str, value: &str) -> std::io::Result<()> {
    w.write_event(Event::Start(BytesStart::new(name)))?;
    cdata_events(w, value)?;
    w.write_event(Event::End(BytesEnd::new(name)))
}

fn cdata_events<W: Write>(w: &mut Writer<W>, value: &str) -> std::io::Result<()> {
    let value = xml_chars(value);
    if value.is_empty() {
        return w.write_event(Event::CData(BytesCData::new("")));
    }
    for part in BytesCData::escaped(&value) {
        w.write_event(Event::CData(part))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::CommentSource;

    fn comment(id: &str, parent: Option<&str>) -> Comment {
        Comment {
            id: id.into(),
            author: None,
            published: None,
            published_raw: None,
            content_html: String::new(),
            content_text: String::new(),
            parent: parent.map(Into::into),
            source: CommentSource::Page,
            position: 0,
        }
    }

    #[test]
    fn parents_come_before_their_replies() {
        // A reply stored before its parent (same minute, earlier position) and an orphan.
        let cs = [
            comment("b", Some("a")),
            comment("a", None),
            comment("c", Some("b")),
            comment("d", Some("gone")),
        ];
        let order: Vec<&str> = thread_order(&cs).iter().map(|c| c.id.as_str()).collect();
        assert_eq!(order, ["a", "b", "c", "d"]);
        let cycle = [comment("x", Some("y")), comment("y", Some("x"))];
        assert_eq!(thread_order(&cycle).len(), 2);
    }

    #[test]
    fn names_and_dates_as_wordpress_writes_them() {
        assert_eq!(post_name("http://b.example/2024/05/a-post/"), "a-post");
        assert_eq!(post_name("http://b.example/posts/Hello.html"), "hello");
        let d = DateTime::parse_from_rfc3339("2024-12-13T11:00:00+01:00").unwrap();
        assert_eq!(local(Some(d)), "2024-12-13 11:00:00");
        assert_eq!(gmt(Some(d)), "2024-12-13 10:00:00");
        assert_eq!(gmt(None), NO_DATE);
        let names = ["Ann Lee".to_string(), "ann-lee".into(), "日本".into()];
        let s = unique_slugs(&names, |c| c.is_ascii_alphanumeric(), "author");
        assert_eq!(
            (
                s["Ann Lee"].as_str(),
                s["ann-lee"].as_str(),
                s["日本"].as_str()
            ),
            ("ann-lee", "ann-lee-2", "author")
        );
    }
}
