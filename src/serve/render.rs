//! What the running reader and the static copy (`serve::site`) both draw, with links through
//! [`Links`]: the list of blogs, a blog's posts under a heading per month, and a post with its
//! byline, tags, article and threaded comments (each comment's earlier texts under it) and the
//! posts next to it ([`Around`]). Imports no page module.

use super::layout::{count, date, layout, time};
use super::routes::Links;
use super::views::BlogView;
use crate::core::extract::GapField;
use crate::store::{
    BlogId, Comment, CommentVersion, Neighbour, Neighbours, OpenAlert, Post, PostSummary,
};
use maud::{html, Markup, PreEscaped};
use std::collections::HashMap;

/// Where a post sits, for its page's links: the links of the reader or the copy, its blog,
/// the blog's language and the posts next to it.
pub struct Around<'a> {
    /// Where links lead.
    pub links: &'a dyn Links,
    /// The post's blog (its name and id), when archived.
    pub blog: Option<(BlogId, String)>,
    /// The blog's language (BCP 47), marking the post's text.
    pub language: Option<&'a str>,
    /// The posts just newer and older in the blog's list.
    pub neighbours: Neighbours,
    /// Earlier texts of the post's comments, oldest first (`Store::comment_versions`).
    pub earlier: Vec<CommentVersion>,
    /// Whether the archive holds any comment of the post's blog (`Store::has_comments`): where
    /// it holds none, a post without comments says they were not captured, not "0 comments".
    pub blog_has_comments: bool,
}

/// "deleted by the blog on YYYY-MM-DD" (the day in UTC).
fn deleted_on(at: chrono::DateTime<chrono::Utc>) -> String {
    format!("deleted by the blog on {}", at.format("%Y-%m-%d"))
}

fn month_of(p: &PostSummary) -> String {
    p.published
        .map(|d| d.format("%B %Y").to_string())
        .unwrap_or_else(|| "Undated".into())
}

/// The list of blogs with what the archive holds of each, below the open alerts (none in a
/// static copy).
pub fn blogs_page(links: &dyn Links, blogs: &[BlogView], alerts: &[OpenAlert]) -> Markup {
    layout(
        links,
        "Blogs",
        html! {
            h1 { "Blogs" }
            @if !alerts.is_empty() {
                section.alerts aria-label="Alerts" {
                    h2 { "Alerts (" (alerts.len()) ")" }
                    ul { @for a in alerts {
                        li {
                            strong { (a.alert.kind) } " "
                            @if let Some(blog) = &a.alert.blog { (blog) ": " }
                            (a.alert.message)
                            " " small { "since " (a.raised_at.format("%Y-%m-%d %H:%M UTC")) }
                        }
                    } }
                }
            }
            @if blogs.is_empty() {
                p { "The archive holds no blog yet: " code { "archive add URL" } ", then " code { "archive crawl" } "." }
            }
            div.table { table.blogs {
                thead { tr { th { "Blog" } th { "Posts" } th { "Comments" } th { "From – to" } th { "Last update" } } }
                tbody {
                    @for b in blogs {
                        tr {
                            td {
                                a href=(links.blog(b.id)) { (b.name()) }
                                br; small { (b.home_url) " · " a href=(links.go(&b.feed_url)) { "feed" } }
                            }
                            td data-label="Posts" { (b.coverage.posts_archived) " of " (b.coverage.posts_known) " known"
                                @if b.coverage.posts_gone > 0 { br; small { (b.coverage.posts_gone) " deleted by the blog" } } }
                            td data-label="Comments" { (b.coverage.comments_archived)
                                @if b.coverage.comments_declared > 0 { " (" (b.coverage.comments_declared) " declared)" } }
                            td data-label="From – to" { (date(b.coverage.oldest_post)) " – " (date(b.coverage.newest_post)) }
                            td data-label="Last update" { (b.last_update.map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string()).unwrap_or_else(|| "never".into()))
                                @if b.failed_updates == 1 { br; small.failed { "the last update failed" } }
                                @if b.failed_updates > 1 { br; small.failed { "the last " (b.failed_updates) " updates failed" } } }
                        }
                    }
                }
            } }
            @if let (false, Some(opml)) = (blogs.is_empty(), links.blogs_opml()) {
                p.downloads { "The blog list as " a href=(opml) download { "OPML" }
                    " (for a feed reader, or " code { "archive add --from" } " on another machine)." }
            }
        },
    )
}

/// `posts` (newest first) under a heading per month, each with its date, authors, comments,
/// versions and whether the blog deleted it.
pub fn post_list(links: &dyn Links, posts: &[PostSummary]) -> Markup {
    html! {
        @for (i, post) in posts.iter().enumerate() {
            @if i == 0 || month_of(post) != month_of(&posts[i - 1]) {
                h3.month { (month_of(post)) }
            }
            article.summary {
                a href=(links.post(&post.url)) { (post.title.as_deref().unwrap_or(&post.url)) }
                div.meta {
                    (time(post.published, false))
                    @if !post.authors.is_empty() { " · " (post.authors.join(", ")) }
                    @if post.comments > 0 { " · " (count(post.comments, "comment", "comments")) }
                    @if post.version > 1 { " · " span.badge { (post.version) " versions" } }
                    @if let Some(at) = post.gone_at { " · " span.badge.gone { (deleted_on(at)) } }
                }
            }
        }
    }
}

/// The post's title, byline, tags and article, then `media` (its sound, video and files, as
/// the page lists them), its threaded comments, and the posts next to it, marked as written in
/// `language` (the blog's BCP 47 tag; the reader's own words stay English); `clean` makes
/// archived HTML safe (and points its addresses where the page's links go); `source` is put
/// in the byline (a link to the archived page). A post without comments whose blog has none
/// archived, or whose crawl recorded why its comments are missing, says "Comments not
/// captured" (and why), never "0 comments".
pub fn article_and_comments(
    post: &Post,
    around: &Around,
    clean: &dyn Fn(&str) -> String,
    source: Markup,
    media: Markup,
) -> Markup {
    let title = post.title.as_deref().unwrap_or(&post.url);
    let (links, language) = (around.links, around.language);
    let blog_id = around.blog.as_ref().map(|(id, _)| *id);
    let linked = |href: Option<String>, text: &str| match href {
        Some(h) => html! { a href=(h) { (text) } },
        None => html! { (text) },
    };
    html! {
        @if let Some((id, name)) = &around.blog {
            nav.crumbs { a href=(links.blog(*id)) { (name) } }
        }
        article.post lang=[language] {
            h1 { (title) }
            p.meta {
                (time(post.published, false))
                @if !post.authors.is_empty() {
                    " · by "
                    @for (i, a) in post.authors.iter().enumerate() {
                        @if i > 0 { ", " }
                        (linked(blog_id.and_then(|id| links.author(id, a)), a))
                        @if let Some(page) = post.author_pages.iter().find(|p| &p.name == a) {
                            " " a.author-page href=(links.go(&page.url)) title={ "The blog's page for " (a) } { "(profile)" }
                        }
                    }
                }
                " · " (source)
                @if post.version > 1 { " · " a.badge href="#versions" { "edited: " (post.version) " versions" } }
                @if let Some(at) = post.gone_at { " · " span.badge.gone { (deleted_on(at)) } }
                @if let Some(to) = &post.moved_to { " · " span.badge { "moved by the blog to " (to) } }
            }
            @if !post.tags.is_empty() {
                p.tags { @for t in &post.tags { span.tag { (linked(blog_id.and_then(|id| links.tag(id, t)), t)) } " " } }
            }
            div.content { (PreEscaped(clean(&post.content_html))) }
        }
        (media)
        @let gap = post.gaps.iter().find(|g| g.field == GapField::Comments);
        @if post.comments.is_empty() && (gap.is_some() || !around.blog_has_comments) {
            section.comments id="comments" {
                h2 { "Comments not captured" }
                p.meta { @match gap {
                    Some(g) => { "The crawl found none: " (g.reason) "." },
                    None => "The archive holds no comment of this blog: its comments were never captured, or it has none.",
                } }
            }
        } @else {
            section.comments id="comments" lang=[language] {
                h2 { (count(post.comments.len() as u64, "comment", "comments")) }
                (comment_thread(post, &around.earlier, clean))
            }
        }
        @let n = &around.neighbours;
        @if n.newer.is_some() || n.older.is_some() {
            nav.pager.posts {
                @if let Some(Neighbour { url, title }) = &n.newer {
                    a rel="prev" href=(links.post(url)) lang=[language] { "← " (title.as_deref().unwrap_or(url)) }
                }
                @if let Some(Neighbour { url, title }) = &n.older {
                    a rel="next" href=(links.post(url)) lang=[language] { (title.as_deref().unwrap_or(url)) " →" }
                }
            }
        }
    }
}

/// The comments of `post` as nested lists, in archive order; a reply whose parent is unknown
/// is shown at the top level; nesting past 12 levels continues flat.
fn comment_thread(
    post: &Post,
    earlier: &[CommentVersion],
    clean: &dyn Fn(&str) -> String,
) -> Markup {
    let mut before: HashMap<&str, Vec<&CommentVersion>> = HashMap::new();
    for v in earlier {
        before.entry(v.id.as_str()).or_default().push(v);
    }
    let ids: HashMap<&str, usize> = post
        .comments
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for (i, c) in post.comments.iter().enumerate() {
        match c.parent.as_deref().and_then(|p| ids.get(p)) {
            Some(&p) if p != i => children.entry(p).or_default().push(i),
            _ => roots.push(i),
        }
    }
    struct Thread<'a> {
        post: &'a Post,
        kids: HashMap<usize, Vec<usize>>,
        before: HashMap<&'a str, Vec<&'a CommentVersion>>,
        clean: &'a dyn Fn(&str) -> String,
    }
    fn one(t: &Thread, i: usize, depth: u32) -> Markup {
        let c: &Comment = &t.post.comments[i];
        let body = (t.clean)(&c.content_html);
        html! {
            li.comment id={ "comment-" (c.id) } {
                div.meta {
                    b {
                        @let name = c.author.as_deref().unwrap_or("Anonymous");
                        @match &c.author_url {
                            // The commenter's own site, live: never followed as the blog's.
                            Some(u) if u.starts_with("http://") || u.starts_with("https://") => {
                                a href=(u) rel="nofollow ugc noopener noreferrer" { (name) }
                            }
                            _ => (name),
                        }
                    }
                    " · " (time(c.published, true))
                }
                div.content { (PreEscaped(body)) }
                @if let Some(v) = t.before.get(c.id.as_str()) { (earlier_texts(v)) }
                @if let Some(k) = t.kids.get(&i) {
                    @if depth < 12 {
                        ol.replies { @for &j in k { (one(t, j, depth + 1)) } }
                    }
                }
            }
            @if depth >= 12 {
                @if let Some(k) = t.kids.get(&i) { @for &j in k { (one(t, j, depth)) } }
            }
        }
    }
    let t = Thread {
        post,
        kids: children,
        before,
        clean,
    };
    html! { ol.thread { @for &i in &roots { (one(&t, i, 0)) } } }
}

/// The earlier texts of a comment, newest first, as the post page shows them under it.
pub fn earlier_texts(versions: &[&CommentVersion]) -> Markup {
    html! {
        details.earlier {
            summary { "edited: " (versions.len()) " earlier " (if versions.len() == 1 { "text" } else { "texts" }) }
            @for v in versions.iter().rev() {
                div.earlier-text {
                    p.meta { "until " (time(Some(v.replaced_at.fixed_offset()), true)) }
                    p { (v.content_text) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    struct Plain;

    impl Links for Plain {
        fn stylesheet(&self) -> String {
            "s.css".into()
        }
        fn home(&self) -> String {
            "/".into()
        }
        fn blog(&self, id: BlogId) -> String {
            format!("/b/{id}")
        }
        fn post(&self, url: &str) -> String {
            url.into()
        }
        fn go(&self, url: &str) -> String {
            url.into()
        }
        fn search(&self) -> Option<String> {
            None
        }
    }

    #[test]
    fn a_deleted_post_says_when() {
        let post = PostSummary {
            url: "http://b.test/p".into(),
            title: Some("P".into()),
            authors: vec![],
            published: None,
            comments: 0,
            version: 1,
            gone_at: Some(Utc.with_ymd_and_hms(2026, 5, 1, 12, 0, 0).unwrap()),
        };
        let list = post_list(&Plain, &[post]).into_string();
        assert!(list.contains("deleted by the blog on 2026-05-01"), "{list}");
    }
}
