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
pub use super::wxr_media::MediaSource;
use super::wxr_media::{rewritten, shown_images, write_attachment, Attachments, Downloads, Shown};
use super::wxr_page::{
    add_commenters_below_posts, facts_of_blog, slug, stored_text, untexturized, PageFacts, Term,
};
use super::wxr_xml::{cdata, cdata_events, gmt, local, meta, pub_date, text, ItemIds, NO_DATE};
use crate::store::{Blog, BlogPage, Comment, CommentSource, Post, Store};
use anyhow::{bail, Result};
use chrono::{DateTime, FixedOffset};
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;
use std::collections::{HashMap, HashSet};
use std::io::Write;

/// The document's file name.
pub const FILE: &str = "wordpress.xml";

/// The taxonomy of tags, and of every term whose page the archive cannot tell apart
/// (WordPress tags are flat, so none is given a hierarchy it did not have).
const TAG_DOMAIN: &str = "post_tag";

/// The taxonomy of categories: the terms a post page links as categories
/// ([`crate::core::taxonomy::TermKind::Category`]).
const CATEGORY_DOMAIN: &str = "category";

/// What WordPress shows for a comment left without a name (English sites).
const WORDPRESS_ANONYMOUS: &str = "Anonymous";

/// Writes `blog`'s posts as one WXR 1.2 document to `out` and returns (posts, comments)
/// written. Call it inside [`Store::snapshot`]: the channel's authors and tags are read
/// before the posts.
///
/// Each item: `title`, `link` and `guid` = the permalink, `pubDate` (RFC 2822; every item has
/// one, an undated one the time the archive fetched it), `dc:creator` (the first author's
/// login; further authors in the post meta `everblog_authors`, a JSON array of names), `content:encoded` (article HTML), `wp:post_id` (the post's own WordPress ID where its page shows one, else a number of
/// its own: [`ItemIds`]),
/// `wp:post_date` (blog-local, the offset the post was stored with) and `wp:post_date_gmt`,
/// `wp:post_modified`/`_gmt` (the update, else the publication), `wp:post_name` (the
/// permalink's last segment), `wp:status` publish, `wp:post_type` post, a `category
/// domain="post_tag"` per category/tag; each comment: `wp:comment_id` (numbered across the
/// file, parents before replies), `wp:comment_author`, `wp:comment_date` (in the post's
/// offset, else the comment's own) and `_gmt`, `wp:comment_content` (HTML),
/// `wp:comment_approved` 1, `wp:comment_type` comment, `wp:comment_parent` (0: none, or the
/// parent is not archived). Undated posts and comments get WordPress's zero date. Then an
/// `attachment` item per archived image the posts show (`wxr_media`), downloaded by the
/// importer from `media`. Then a `page` item per page beside the posts ([`write_page`]).
///
/// # Errors
/// The database failed, writing to `out` did, or the posts changed count meanwhile.
pub fn write_wxr(
    store: &Store,
    blog: &Blog,
    media: &MediaSource,
    out: &mut dyn Write,
) -> Result<(u64, u64)> {
    let total = store.post_count(blog.id)?;
    let crate::store::AuthorsAndTags { authors, tags } = store.authors_and_tags(blog.id)?;
    let mut facts = facts_of_blog(store, blog.id)?;
    let kept_pages = store.author_pages(blog.id)?;
    if authors
        .iter()
        .any(|a| page_slug(a, &kept_pages, &facts).is_none())
    {
        add_commenters_below_posts(store, blog.id, &mut facts)?;
    }
    let media = &Downloads::new(media, blog.last_update_at.or(blog.crawled_at));
    let logins = logins(&authors, &kept_pages, &facts);
    let terms = Terms::of(&tags, &facts);
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
        // On one line, as WordPress writes it: the importer's regex parser (hosts without
        // PHP's XML extensions) reads an author only so.
        let mut one = Writer::new(Vec::new());
        one.create_element("wp:author").write_inner_content(|w| {
            text(w, "wp:author_id", &(i + 1).to_string())?;
            cdata(w, "wp:author_login", &logins[name])?;
            cdata(w, "wp:author_email", "")?;
            cdata(w, "wp:author_display_name", &untexturized(name))?;
            cdata(w, "wp:author_first_name", "")?;
            cdata(w, "wp:author_last_name", "")
        })?;
        w.write_indent()?;
        w.get_mut().write_all(&one.into_inner())?;
    }
    for (i, c) in terms.categories.iter().enumerate() {
        w.create_element("wp:category").write_inner_content(|w| {
            text(w, "wp:term_id", &(i + 1).to_string())?;
            cdata(w, "wp:category_nicename", &c.slug)?;
            cdata(w, "wp:category_parent", c.parent.as_deref().unwrap_or(""))?;
            cdata(w, "wp:cat_name", &untexturized(&c.name))
        })?;
    }
    for (i, t) in terms.tags.iter().enumerate() {
        w.create_element("wp:tag").write_inner_content(|w| {
            text(
                w,
                "wp:term_id",
                &(terms.categories.len() + i + 1).to_string(),
            )?;
            cdata(w, "wp:tag_slug", &t.slug)?;
            cdata(w, "wp:tag_name", &untexturized(&t.name))
        })?;
    }
    w.create_element("generator")
        .write_text_content(BytesText::new(concat!(
            "everblog ",
            env!("CARGO_PKG_VERSION")
        )))?;

    let mut next_comment_id = 1u64;
    let mut attachments = Attachments::default();
    let mut ids = ItemIds::new(facts.values().filter_map(|f| f.post_id));
    let posts = store.for_each_post(Some(blog.id), |post| {
        let none = PageFacts::default();
        let page = facts.get(&post.url).unwrap_or(&none);
        let post_id = ids.take(page.post_id);
        for shown in shown_images(&post.content_html, &post.url) {
            attachments.add(&mut ids, &post, post_id, &shown);
        }
        let thumbnail = page.featured.as_ref().and_then(|(src, alt)| {
            let src = url::Url::parse(&post.url).ok()?.join(src).ok()?;
            let shown = Shown {
                src: src.into(),
                alt: alt.clone(),
            };
            attachments.add(&mut ids, &post, post_id, &shown)
        });
        let item = Item {
            title: stored_text(
                post.title.as_deref().unwrap_or(""),
                page.raw_title.as_deref(),
            ),
            post: &post,
            post_id,
            content: more_tag(&rewritten(&post.content_html, &post, media)),
            authors: (&authors, &logins),
            terms: terms.of_post(&post, page),
            comments_closed: page.comments_closed,
            thumbnail,
        };
        write_item(&mut w, &item, &mut next_comment_id)?;
        Ok(())
    })?;
    for a in &attachments.items {
        write_attachment(&mut w, a, media, &logins)?;
    }
    // The blog's pages beside its posts, as WordPress exports its pages (issue 42).
    for page in store.blog_pages(blog.id)? {
        write_page(&mut w, &page, ids.take(None))?;
    }
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

/// What one post's item is written from.
struct Item<'a> {
    post: &'a Post,
    /// The title as WordPress stores it ([`stored_text`]).
    title: String,
    post_id: u64,
    /// The article as the item gives it (image addresses per [`MediaSource`]).
    content: String,
    /// The blog's authors and their logins.
    authors: (&'a [String], &'a HashMap<String, String>),
    terms: Vec<(&'static str, &'a Term)>,
    comments_closed: bool,
    /// The featured image's attachment id.
    thumbnail: Option<u64>,
}

fn write_item<W: Write>(
    w: &mut Writer<W>,
    item: &Item,
    next_comment_id: &mut u64,
) -> std::io::Result<()> {
    let Item {
        post,
        post_id,
        authors: (authors, logins),
        ..
    } = *item;
    let comments = thread_order(&post.comments);
    let modified = post.updated.or(post.published);
    w.create_element("item").write_inner_content(|w| {
        text(w, "title", &item.title)?;
        text(w, "link", &post.url)?;
        text(w, "pubDate", &pub_date(post.published, post.fetched_at))?;
        let creator = post.authors.first().and_then(|a| logins.get(a));
        cdata(w, "dc:creator", creator.map_or("", String::as_str))?;
        w.create_element("guid")
            .with_attribute(("isPermaLink", "true"))
            .write_text_content(BytesText::new(&xml_chars(&post.url)))?;
        text(w, "description", "")?;
        cdata(w, "content:encoded", &item.content)?;
        cdata(w, "excerpt:encoded", "")?;
        text(w, "wp:post_id", &post_id.to_string())?;
        cdata(w, "wp:post_date", &local(post.published))?;
        cdata(w, "wp:post_date_gmt", &gmt(post.published))?;
        cdata(w, "wp:post_modified", &local(modified))?;
        cdata(w, "wp:post_modified_gmt", &gmt(modified))?;
        let status = if item.comments_closed {
            "closed"
        } else {
            "open"
        };
        cdata(w, "wp:comment_status", status)?;
        cdata(w, "wp:ping_status", "closed")?;
        cdata(w, "wp:post_name", &post_name(&post.url))?;
        cdata(w, "wp:status", "publish")?;
        text(w, "wp:post_parent", "0")?;
        text(w, "wp:menu_order", "0")?;
        cdata(w, "wp:post_type", "post")?;
        cdata(w, "wp:post_password", "")?;
        text(w, "wp:is_sticky", "0")?;
        for (domain, term) in &item.terms {
            w.write_event(Event::Start(BytesStart::new("category").with_attributes([
                ("domain", *domain),
                ("nicename", xml_chars(&term.slug).as_ref()),
            ])))?;
            cdata_events(w, &untexturized(&term.name))?;
            w.write_event(Event::End(BytesEnd::new("category")))?;
        }
        if post.authors.len() > 1 {
            let names = serde_json::to_string(&post.authors).unwrap_or_default();
            meta(w, "everblog_authors", &names)?;
        }
        if let Some(id) = item.thumbnail {
            meta(w, "_thumbnail_id", &id.to_string())?;
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
            let date = c.published.map(|d| comment_local(d, c.source, offset));
            let parent = c
                .parent
                .as_deref()
                .and_then(|p| ids.get(p))
                .copied()
                .unwrap_or(0);
            w.create_element("wp:comment").write_inner_content(|w| {
                text(w, "wp:comment_id", &ids[c.id.as_str()].to_string())?;
                // WordPress shows a comment without a name as "Anonymous" and stores "".
                let author = untexturized(
                    c.author
                        .as_deref()
                        .filter(|a| *a != WORDPRESS_ANONYMOUS)
                        .unwrap_or(""),
                );
                // A comment by one of the blog's authors: theirs on the restored site too
                // (`wp:comment_user_id` is the channel's `wp:author_id`).
                let user = c.author.as_deref().and_then(|a| {
                    authors
                        .iter()
                        .position(|n| crate::core::comments::same_author(Some(n), Some(a)))
                });
                cdata(w, "wp:comment_author", &author)?;
                cdata(w, "wp:comment_author_email", "")?;
                cdata(
                    w,
                    "wp:comment_author_url",
                    c.author_url.as_deref().unwrap_or(""),
                )?;
                cdata(w, "wp:comment_author_IP", "")?;
                cdata(w, "wp:comment_date", &local(date))?;
                cdata(w, "wp:comment_date_gmt", &gmt(date))?;
                cdata(w, "wp:comment_content", &c.content_html)?;
                cdata(w, "wp:comment_approved", "1")?;
                cdata(w, "wp:comment_type", "comment")?;
                text(w, "wp:comment_parent", &parent.to_string())?;
                text(
                    w,
                    "wp:comment_user_id",
                    &user.map_or(0, |i| i + 1).to_string(),
                )
            })?;
        }
        Ok(())
    })?;
    Ok(())
}

/// The article with WordPress's "more" mark as its source writes it: a post page shows
/// `<!--more-->` as `<span id="more-123"></span>` (where the listing's "Continue reading"
/// leads), and WordPress makes the span again from the comment.
fn more_tag(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find("<span id=\"more-") {
        let after = &rest[i + "<span id=\"more-".len()..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        let tail = &after[digits..];
        if digits > 0 && tail.starts_with("\"></span>") {
            out.push_str(&rest[..i]);
            out.push_str("<!--more-->");
            rest = &tail["\"></span>".len()..];
        } else {
            out.push_str(&rest[..i + 1]);
            rest = &rest[i + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// A page beside the posts (About, Contact), as WordPress exports its pages: `wp:post_type`
/// page, `wp:status` publish, no author, no date (WordPress's zero date: a page's date is not
/// what it is about), comments closed, `wp:post_name` its address's last segment.
fn write_page<W: Write>(w: &mut Writer<W>, page: &BlogPage, id: u64) -> std::io::Result<()> {
    w.create_element("item").write_inner_content(|w| {
        text(
            w,
            "title",
            &untexturized(page.title.as_deref().unwrap_or("")),
        )?;
        text(w, "link", &page.url)?;
        text(w, "pubDate", &pub_date(None, page.fetched_at))?;
        cdata(w, "dc:creator", "")?;
        w.create_element("guid")
            .with_attribute(("isPermaLink", "true"))
            .write_text_content(BytesText::new(&xml_chars(&page.url)))?;
        text(w, "description", "")?;
        cdata(w, "content:encoded", &page.content_html)?;
        cdata(w, "excerpt:encoded", "")?;
        text(w, "wp:post_id", &id.to_string())?;
        cdata(w, "wp:post_date", NO_DATE)?;
        cdata(w, "wp:post_date_gmt", NO_DATE)?;
        cdata(w, "wp:comment_status", "closed")?;
        cdata(w, "wp:ping_status", "closed")?;
        cdata(w, "wp:post_name", &post_name(&page.url))?;
        cdata(w, "wp:status", "publish")?;
        text(w, "wp:post_parent", "0")?;
        text(w, "wp:menu_order", "0")?;
        cdata(w, "wp:post_type", "page")?;
        cdata(w, "wp:post_password", "")?;
        text(w, "wp:is_sticky", "0")?;
        Ok(())
    })?;
    Ok(())
}

/// A comment's date on the blog's clock: a date read from the page keeps the offset the page
/// gave it (WordPress writes each comment's own, summer or winter); a feed's date, usually
/// UTC, is moved to the post's offset, the best the archive knows of the blog's clock.
fn comment_local(
    d: DateTime<FixedOffset>,
    source: CommentSource,
    post_offset: Option<FixedOffset>,
) -> DateTime<FixedOffset> {
    match post_offset {
        Some(o) if source != CommentSource::Page || d.offset().local_minus_utc() == 0 => {
            d.with_timezone(&o)
        }
        _ => d,
    }
}

/// The slug of `name`'s author page (`/author/zoe/` → `zoe`, the `user_nicename` WordPress
/// made from the login), as the crawl kept it (`kept_pages`, issue 42), else as the post
/// pages link it or mark the author's comments (`PageFacts::authors`, the first post by
/// permalink that names it).
fn page_slug(
    name: &str,
    kept_pages: &[crate::core::authors::AuthorPage],
    facts: &HashMap<String, PageFacts>,
) -> Option<String> {
    let kept = kept_pages
        .iter()
        .find(|p| p.name == name)
        .and_then(|p| crate::core::taxonomy::author_slug(&p.url));
    kept.or_else(|| {
        facts
            .iter()
            .flat_map(|(url, f)| f.authors.iter().map(move |a| (url, a)))
            .filter(|(_, (shown, _))| crate::core::comments::same_author(Some(shown), Some(name)))
            // The same file whatever the map's order.
            .min_by_key(|(url, _)| *url)
            .map(|(_, (_, s))| s.clone())
    })
}

/// Each author's WordPress login: the slug of the author's page ([`page_slug`]), else a slug
/// of the name with its accents taken off (`Inês` → `ines`); unique among `authors`.
fn logins(
    authors: &[String],
    kept_pages: &[crate::core::authors::AuthorPage],
    facts: &HashMap<String, PageFacts>,
) -> HashMap<String, String> {
    let mut taken = HashSet::new();
    let mut out = HashMap::new();
    for name in authors {
        let base = page_slug(name, kept_pages, facts).unwrap_or_else(|| slug(name, "author"));
        let mut login = base.clone();
        let mut n = 2;
        while !taken.insert(login.clone()) {
            login = format!("{base}-{n}");
            n += 1;
        }
        out.insert(name.clone(), login);
    }
    out
}

/// The blog's categories and tags as the channel declares them.
struct Terms {
    /// Categories, parents before their children.
    categories: Vec<Term>,
    /// Tags: those the pages link as tags, then the post records' other terms.
    tags: Vec<Term>,
}

impl Terms {
    /// From the pages' term links, then `names` (every post's `tags`) not among them, as
    /// tags with a slug of their name.
    fn of(names: &[String], facts: &HashMap<String, PageFacts>) -> Terms {
        let mut categories: Vec<Term> = Vec::new();
        let mut tags: Vec<Term> = Vec::new();
        // The same file whatever the map's order: pages by permalink.
        let mut pages: Vec<(&String, &PageFacts)> = facts.iter().collect();
        pages.sort_by_key(|(url, _)| *url);
        for (_, f) in &pages {
            for c in &f.categories {
                if !categories.iter().any(|x| x.slug == c.slug) {
                    categories.push(c.clone());
                }
            }
            for t in &f.tags {
                if !tags.iter().any(|x| x.slug == t.slug) {
                    tags.push(t.clone());
                }
            }
        }
        categories.sort_by(|a, b| a.slug.cmp(&b.slug));
        tags.sort_by(|a, b| a.slug.cmp(&b.slug));
        // A parent the pages never link by itself: declared by its slug.
        let parents: Vec<String> = categories.iter().filter_map(|c| c.parent.clone()).collect();
        for p in parents {
            if !categories.iter().any(|c| c.slug == p) {
                categories.push(Term {
                    name: p.clone(),
                    slug: p,
                    parent: None,
                });
            }
        }
        let mut ordered: Vec<Term> = Vec::with_capacity(categories.len());
        while ordered.len() < categories.len() {
            let before = ordered.len();
            for c in &categories {
                let ready = c
                    .parent
                    .as_ref()
                    .is_none_or(|p| ordered.iter().any(|o| &o.slug == p));
                if ready && !ordered.iter().any(|o| o.slug == c.slug) {
                    ordered.push(c.clone());
                }
            }
            if ordered.len() == before {
                // A cycle of parents (not from WordPress): the rest as top-level categories.
                for c in &categories {
                    if !ordered.iter().any(|o| o.slug == c.slug) {
                        ordered.push(Term {
                            parent: None,
                            ..c.clone()
                        });
                    }
                }
            }
        }
        let known = |n: &str| {
            ordered
                .iter()
                .chain(&tags)
                .any(|t| t.name.to_lowercase() == n.to_lowercase())
        };
        let rest: Vec<&String> = names.iter().filter(|n| !known(n)).collect();
        let mut extra: Vec<Term> = Vec::new();
        for name in rest {
            let mut s = dashed(&name.to_lowercase(), char::is_alphanumeric);
            if s.is_empty() {
                s = "tag".into();
            }
            let base = s.clone();
            let mut n = 2;
            while tags.iter().chain(&extra).any(|t| t.slug == s) {
                s = format!("{base}-{n}");
                n += 1;
            }
            extra.push(Term {
                name: name.clone(),
                slug: s,
                parent: None,
            });
        }
        tags.extend(extra);
        Terms {
            categories: ordered,
            tags,
        }
    }

    /// A post's terms as (taxonomy, term): its page's categories and tags, then its record's
    /// other terms as tags.
    fn of_post<'a>(&'a self, post: &Post, page: &PageFacts) -> Vec<(&'static str, &'a Term)> {
        let find = |list: &'a [Term], t: &Term| list.iter().find(|x| x.slug == t.slug);
        let mut out: Vec<(&'static str, &'a Term)> = Vec::new();
        out.extend(
            page.categories
                .iter()
                .filter_map(|c| find(&self.categories, c).map(|t| (CATEGORY_DOMAIN, t))),
        );
        out.extend(
            page.tags
                .iter()
                .filter_map(|c| find(&self.tags, c).map(|t| (TAG_DOMAIN, t))),
        );
        for name in tags_of(post) {
            let lower = name.to_lowercase();
            if out.iter().any(|(_, t)| t.name.to_lowercase() == lower) {
                continue;
            }
            // A post whose page the archive lacks: its names, as the other pages classed them.
            let named = |list: &'a [Term]| list.iter().find(|t| t.name.to_lowercase() == lower);
            if let Some(t) = named(&self.categories) {
                out.push((CATEGORY_DOMAIN, t));
            } else if let Some(t) = named(&self.tags) {
                out.push((TAG_DOMAIN, t));
            }
        }
        out
    }
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

/// The permalink's last non-empty path segment, lower case, without an `.html`/`.htm`/`.php`
/// extension in any case (`/2024/05/a-post/` → `a-post`, `/Hello.HTML` → `hello`), as
/// `taxonomy::page_name` names terms; empty for a home page.
fn post_name(url: &str) -> String {
    let path = url::Url::parse(url)
        .map(|u| u.path().to_string())
        .unwrap_or_default();
    let last = path.rsplit('/').find(|s| !s.is_empty()).unwrap_or("");
    crate::core::taxonomy::page_name(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::CommentSource;

    fn comment(id: &str, parent: Option<&str>) -> Comment {
        Comment {
            id: id.into(),
            author: None,
            author_url: None,
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
    fn the_more_mark_as_wordpress_stores_it() {
        assert_eq!(
            more_tag("<p>a <span id=\"more-12\"></span></p><span id=\"more-x\"></span>"),
            "<p>a <!--more--></p><span id=\"more-x\"></span>"
        );
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
        assert_eq!(post_name("http://b.example/posts/Hello.HTML"), "hello");
        let d = DateTime::parse_from_rfc3339("2024-12-13T11:00:00+01:00").unwrap();
        assert_eq!(local(Some(d)), "2024-12-13 11:00:00");
        assert_eq!(gmt(Some(d)), "2024-12-13 10:00:00");
        assert_eq!(gmt(None), NO_DATE);
        let names = [
            "Ann Lee".to_string(),
            "Zoë Castellanos".into(),
            "日本".into(),
        ];
        let page = PageFacts {
            authors: vec![("Ann Lee".into(), "ann".into())],
            ..PageFacts::default()
        };
        let facts = HashMap::from([("http://b.example/p/".to_string(), page)]);
        let l = logins(&names, &[], &facts);
        assert_eq!(
            (
                l["Ann Lee"].as_str(),
                l["Zoë Castellanos"].as_str(),
                l["日本"].as_str()
            ),
            ("ann", "zoe-castellanos", "author")
        );
        // The page the crawl kept for an author names the login.
        let kept = [crate::core::authors::AuthorPage {
            name: "Zoë Castellanos".into(),
            url: "http://b.example/blog/authors/zoe/".into(),
        }];
        assert_eq!(logins(&names, &kept, &facts)["Zoë Castellanos"], "zoe");
    }
}
