//! The reader's HTML pages (maud, compiled; no JavaScript): the blogs, a blog's posts by
//! month, author and tag, a post (article, threaded comments, versions, captures), the word
//! diff of two versions, search, and `/go` (an archived address to what the archive holds).

use super::failure::Failure;
use super::layout::{count, layout, layout_with_head, time};
use super::reader::Reader;
use super::render::{article_and_comments, blogs_page, post_list, Around};
use super::routes::{
    charts_href, download_href, go_href, post_href, query_value, replay_href, timestamp, web_href,
    Links, Routes, WACZ_DOWNLOAD,
};
use super::views::{self, capture_or_canonical, BlogView, ListParams, SearchParams, UrlParam};
use crate::core::extract::GapField;
use crate::core::requisites::{of_page, Kind};
use crate::export::{atom, jsonfeed, wxr};
use crate::store::Post;
use crate::store::{BlogId, Count, Neighbours, PostPage};
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{html, Markup, PreEscaped};
use std::collections::HashSet;
use std::sync::Arc;

type Page = Result<Markup, Failure>;

/// `/`: every blog with what the archive holds of it.
pub async fn blogs(State(reader): State<Arc<Reader>>) -> Page {
    let (blogs, alerts) = reader
        .read(|s| Ok((BlogView::all(s)?, s.open_alerts()?)))
        .await?;
    Ok(blogs_page(&Routes, &blogs, &alerts))
}

/// `/blog/{id}?page=&month=&author=&tag=`: the blog's posts, newest first, by month.
pub async fn blog(
    State(reader): State<Arc<Reader>>,
    Path(id): Path<i64>,
    Query(p): Query<ListParams>,
) -> Page {
    let id = BlogId::new(id);
    let filter = p.filter()?;
    let size = reader.page_size;
    let page = p.page();
    let f = filter.clone();
    let (blog, PostPage { posts, total }, months, (authors, author_pages), tags, blog_pages) =
        reader
            .read(move |s| {
                let blog = BlogView::of(s, views::blog(s, id)?)?;
                let list = s.post_page(id, &f, size, (page - 1).saturating_mul(size))?;
                Ok((
                    blog,
                    list,
                    s.post_months(id)?,
                    (s.post_authors(id)?, s.author_pages(id)?),
                    s.post_tags(id)?,
                    s.blog_pages(id)?,
                ))
            })
            .await?;
    let base = format!("/blog/{id}");
    let with = |page: u32| {
        let mut q = vec![format!("page={page}")];
        if let Some(m) = &p.month {
            q.push(format!("month={}", query_value(m)));
        }
        if let Some(a) = &filter.author {
            q.push(format!("author={}", query_value(a)));
        }
        if let Some(t) = &filter.tag {
            q.push(format!("tag={}", query_value(t)));
        }
        format!("{base}?{}", q.join("&"))
    };
    let pages = total.div_ceil(size as u64).max(1);
    if u64::from(page) > pages {
        return Err(Failure::NotFound(format!(
            "There is no page {page} of this list: it fills {}.",
            count(pages, "page", "pages")
        )));
    }
    let mut years: Vec<(String, Vec<(String, u64)>)> = Vec::new();
    for Count { value: m, posts: n } in months {
        let y = m.get(..4).unwrap_or("").to_string();
        match years.last_mut() {
            Some((ly, list)) if *ly == y => list.push((m, n)),
            _ => years.push((y, vec![(m, n)])),
        }
    }
    let heading = match (&filter.month, &filter.author, &filter.tag) {
        (Some((y, m)), _, _) => format!("Posts of {y}-{m:02}"),
        (_, Some(a), _) => format!("Posts by {a}"),
        (_, _, Some(t)) => format!("Posts in {t}"),
        _ => "Posts".into(),
    };
    let feed = download_href(id, atom::CURRENT);
    Ok(layout_with_head(
        &Routes,
        blog.name(),
        html! { link rel="alternate" type="application/atom+xml" title={ (blog.name()) " (archived)" } href=(feed); },
        html! {
            h1 { (blog.name()) }
            p.meta { a href=(go_href(&blog.home_url)) { (blog.home_url) } " · "
                (count(blog.coverage.posts_archived, "post", "posts")) ", " (count(blog.coverage.comments_archived, "comment", "comments")) " archived" }
            div.columns {
                section.posts {
                    h2 { (heading) " " small { "(" (total) ")" } }
                    @if filter != Default::default() { p { a href=(base) { "All posts" } } }
                    div lang=[blog.language.as_deref()] { (post_list(&Routes, &posts)) }
                    nav.pager {
                        @if page > 1 { a rel="prev" href=(with(page - 1)) { "← Newer" } }
                        span { "Page " (page) " of " (pages) }
                        @if (page as u64) < pages { a rel="next" href=(with(page + 1)) { "Older →" } }
                    }
                }
                aside {
                    @if !blog_pages.is_empty() {
                        h2 { "Pages" }
                        ul { @for pg in &blog_pages { li { a href=(go_href(&pg.url)) { (pg.title.as_deref().unwrap_or(&pg.url)) } } } }
                    }
                    h2 { "Archive" }
                    @for (y, list) in &years {
                        details open[years.first().is_some_and(|f| &f.0 == y)] {
                            summary { (y) }
                            ul { @for (m, n) in list { li { a href={ (base) "?month=" (m) } { (m) } " (" (n) ")" } } }
                        }
                    }
                    @if !authors.is_empty() {
                        h2 { "Authors" }
                        ul { @for a in authors.iter().take(50) { li {
                            a href={ (base) "?author=" (query_value(&a.value)) } { (a.value) } " (" (a.posts) ")"
                            @if let Some(page) = author_pages.iter().find(|p| p.name == a.value) {
                                " " a.author-page href=(go_href(&page.url)) title={ "The blog's page for " (a.value) } { "(profile)" }
                            }
                        } } }
                    }
                    @if !tags.is_empty() {
                        h2 { "Tags" }
                        p.tags { @for t in tags.iter().take(80) { a href={ (base) "?tag=" (query_value(&t.value)) } { (t.value) } sup { (t.posts) } " " } }
                    }
                    h2 { "Downloads" }
                    ul.downloads {
                        li { a href=(feed) { "Atom feed" } " of the newest archived posts, to subscribe to" }
                        li { a href=(download_href(id, jsonfeed::FILE)) { "JSON Feed" } }
                        li { a href=(download_href(id, wxr::FILE)) download { "WordPress export (WXR)" } " with the comments; images from this archive" }
                        li { a href=(download_href(id, WACZ_DOWNLOAD)) download { "Web archive (WACZ)" } " of every capture, for ReplayWeb.page or pywb" }
                    }
                    p { a href={ (base) "/captures" } { "Every page captured" } ", with when" }
                    p { a href=(charts_href(id)) { "History in charts" } ": posts and comments per month, crawls, revisits" }
                }
            }
        },
    ))
}

/// `/post?url=`: the post, its comments, versions and captures.
pub async fn post(State(reader): State<Arc<Reader>>, Query(q): Query<UrlParam>) -> Page {
    let url = q.url.clone();
    let (versions, captures, post, blog, (neighbours, blog_has_comments), earlier) = reader
        .read(move |s| {
            let Some(post) = s.post(&url)? else {
                return Err(Failure::NotFound(format!("{url} is not an archived post.")));
            };
            // A moved post is one post under both its URLs: its versions are kept under the
            // first, its captures under each.
            let mut captures = s.captures_of(&post.url)?;
            if let Some(to) = &post.moved_to {
                captures.extend(s.captures_of(to)?);
                captures.sort_by_key(|c| c.fetched_at);
            }
            let blog = s.find_blog(&post.blog)?;
            // Asked only where the answer shows: a post without comments or a recorded gap.
            let silent = post.comments.is_empty()
                && !post.gaps.iter().any(|g| g.field == GapField::Comments);
            let around = match &blog {
                Some(b) => (
                    s.neighbours(b.id, &post.url)?,
                    !silent || s.has_comments(b.id)?,
                ),
                None => (Neighbours::default(), !silent),
            };
            let earlier = s.comment_versions(&post.url)?;
            Ok((
                s.post_versions(&post.url)?,
                captures,
                post,
                blog,
                around,
                earlier,
            ))
        })
        .await?;
    let title = post.title.clone().unwrap_or_else(|| post.url.clone());
    let at = post.fetched_at;
    // The images the archive holds for this post (as answered: a 404 is not the image).
    let held: Arc<HashSet<String>> = Arc::new(
        post.media
            .iter()
            .filter(|m| m.is_held())
            .map(|m| m.url.clone())
            .collect(),
    );
    let clean = reader.sanitized.for_page(&post.url, at, &held);
    Ok(layout(
        &Routes,
        &title,
        html! {
            (article_and_comments(&post, &Around {
                links: &Routes,
                blog: blog.as_ref().map(|b| (b.id, b.title.clone().unwrap_or_else(|| b.home_url.clone()))),
                language: blog.as_ref().and_then(|b| b.language.as_deref()),
                neighbours,
                earlier,
                blog_has_comments,
            }, &clean, html! {
                @match captures.iter().rev().find(|c| c.status < 300) {
                    Some(c) => a href=(replay_href(&timestamp(c.fetched_at), &c.url)) { "archived page" },
                    None => a href=(go_href(&post.url)) { "archived page" },
                }
                " · " a href=(post.url) rel="noreferrer" { "live page" }
            }, media_and_attachments(&post)))
            section.versions id="versions" {
                h2 { "Versions" }
                @if versions.is_empty() {
                    p { "One version: the blog has not changed this post since it was archived." }
                } @else {
                    ol {
                        @for v in &versions { li { a href={ "/version?url=" (query_value(&post.url)) "&n=" (v.version) } { "Version " (v.version) } ", fetched " (time(Some(v.fetched_at.fixed_offset()), true)) ", replaced " (time(Some(v.replaced_at.fixed_offset()), true)) } }
                        li { a href={ "/version?url=" (query_value(&post.url)) "&n=" (post.version) } { "Version " (post.version) } " (current), fetched " (time(Some(post.fetched_at.fixed_offset()), true)) }
                    }
                    form.diff action="/diff" method="get" {
                        input type="hidden" name="url" value=(post.url);
                        label { "Compare " select name="from" { @for v in &versions { option value=(v.version) selected[v.version + 1 == post.version] { (v.version) } } } }
                        label { " with " select name="to" { @for v in &versions { option value=(v.version) { (v.version) } } option value=(post.version) selected { (post.version) } } }
                        " " button { "Show the differences" }
                    }
                }
            }
            section.captures id="captures" {
                h2 { "Captures" }
                ul {
                    @for c in &captures {
                        li { a href=(replay_href(&timestamp(c.fetched_at), &c.url)) { (c.fetched_at.format("%Y-%m-%d %H:%M:%S UTC")) } " (HTTP " (c.status) ")" }
                    }
                }
                p { a href={ "/timemap/link/" (post.url) } { "TimeMap" } " (Memento)" }
            }
        },
    ))
}

/// The post's sound, video and attached files (its podcast enclosures among them), each
/// playable or downloadable from the archive, or said not to be archived and why; nothing
/// when it has none. A file the article already plays from the archive (its `<audio>`,
/// `<video>`) is not listed again; one the archive lacks is, with why.
fn media_and_attachments(post: &Post) -> Markup {
    let played = played_in(&post.content_html, &post.url);
    let files: Vec<_> = post
        .media
        .iter()
        .filter(|m| matches!(m.kind, Kind::Media | Kind::Attachment))
        .filter(|m| !m.is_held() || !played.contains(m.url.as_str()))
        .collect();
    html! {
        @if !files.is_empty() {
            section.media id="media" {
                h2 { "Media and attachments" }
                ul {
                    @for m in files {
                        @let name = m.url.rsplit('/').find(|s| !s.is_empty()).unwrap_or(&m.url);
                        @let held = m.is_held();
                        @let href = web_href(&timestamp(post.fetched_at), true, &m.url);
                        @let mime = m.mime.as_deref().unwrap_or("");
                        li {
                            @if held {
                                a href=(href) { (name) }
                                span.meta { " · " (mime) @if let Some(b) = m.bytes { " · " (size(b)) } }
                                @if mime.starts_with("audio/") { br; audio controls preload="none" src=(href) {} }
                                @if mime.starts_with("video/") { br; video controls preload="metadata" src=(href) {} }
                            } @else {
                                (name) span.meta { " · not archived"
                                    @if let Some(r) = &m.reason { ": " (r) }
                                    @if let Some(s) = m.status { " (HTTP " (s) ")" } }
                                " · " a href=(m.url) rel="noreferrer" { "live address" }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The absolute addresses `html` plays (its `<audio>`, `<video>` and their sources), as the
/// crawl recorded the post's media from its page (`core::requisites::of_page`, resolved
/// against `base`).
fn played_in(html: &str, base: &str) -> HashSet<String> {
    let Ok(base) = url::Url::parse(base) else {
        return HashSet::new();
    };
    of_page(&scraper::Html::parse_fragment(html), &base)
        .into_iter()
        .filter(|r| r.kind == Kind::Media)
        .map(|r| r.url)
        .collect()
}

/// `bytes` for a person: "512 B", "12 KB", "3.4 MB".
fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{} KB", b / 1024),
        b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// `/search?q=&blog=&author=&tag=&from=&to=&sort=&page=`: one hit per post, its matching
/// comments under it; with filters and no words, the posts they keep, newest first.
pub async fn search(State(reader): State<Arc<Reader>>, Query(p): Query<SearchParams>) -> Page {
    let size = reader.page_size;
    let q = p.query(size, reader.search_rank_window)?;
    let asked = !q.text.trim().is_empty() || q.filtered();
    let (mut hits, blogs) = reader
        .read(move |s| Ok((s.search(&q)?, s.blogs()?)))
        .await?;
    let more = hits.len() > size as usize;
    hits.truncate(size as usize);
    let text = p.q.clone().unwrap_or_default();
    let page = p.page();
    let v = |o: &Option<String>| o.clone().unwrap_or_default();
    let link = |page: u32| {
        let q = |o: &Option<String>| query_value(o.as_deref().unwrap_or(""));
        format!(
            "/search?q={}&blog={}&author={}&tag={}&from={}&to={}&sort={}&page={page}",
            q(&p.q),
            q(&p.blog),
            q(&p.author),
            q(&p.tag),
            q(&p.from),
            q(&p.to),
            q(&p.sort)
        )
    };
    let by_date = p.sort.as_deref() == Some("date");
    let named = views::blogs_named(&blogs, &text);
    Ok(layout(
        &Routes,
        if text.is_empty() { "Search" } else { &text },
        html! {
            h1 { "Search" }
            form.filters action="/search" method="get" {
                input type="search" name="q" value=(text) aria-label="Words";
                select name="blog" aria-label="Blog" {
                    option value="" { "All blogs" }
                    @for b in &blogs {
                        option value=(b.id.get()) selected[p.blog.as_deref() == Some(b.id.to_string().as_str())] { (b.title.as_deref().unwrap_or(&b.home_url)) }
                    }
                }
                input type="text" name="author" placeholder="Author" value=(v(&p.author)) aria-label="Author";
                input type="text" name="tag" placeholder="Tag or category" value=(v(&p.tag)) aria-label="Tag or category";
                label { "From " input type="date" name="from" value=(v(&p.from)); }
                label { " to " input type="date" name="to" value=(v(&p.to)); }
                select name="sort" aria-label="Order" {
                    option value="relevance" selected[!by_date] { "Best first" }
                    option value="date" selected[by_date] { "Newest first" }
                }
                button { "Search" }
            }
            p.meta { "Words, \"a phrase\", -without or NOT without, this OR that, prefix*. Titles, articles, comments, authors and tags are searched; blogs by their names." }
            @if page == 1 && !named.is_empty() {
                p.blogs-named { "Blogs named so: "
                    @for (i, b) in named.iter().enumerate() {
                        @if i > 0 { ", " }
                        a href=(Routes.blog(b.id)) { (b.name()) }
                    }
                }
            }
            @if asked {
                @if hits.is_empty() { p { "Nothing found." } }
                @else {
                    // What is listed, no more: the hits of this page, and whether more follow.
                    @let first = (page as usize - 1) * size as usize + 1;
                    p.meta.count { "Posts " (first) "–" (first + hits.len() - 1)
                        @if more { ", more on the next page" } "." }
                }
                ol.hits {
                    @for h in &hits {
                        li.hit {
                            a href=(post_href(&h.url)) { (h.title.as_deref().unwrap_or(&h.url)) }
                            div.meta { (time(h.published, false)) " · " (h.blog_title.as_deref().unwrap_or(&h.blog))
                                @if !h.matched.is_empty() {
                                    " · " span.matched { "found in "
                                        (h.matched.iter().map(|m| m.name()).collect::<Vec<_>>().join(", ")) }
                                }
                            }
                            @if h.post_matches || h.comments.is_empty() {
                                p.snippet { (PreEscaped(views::snippet_html(&h.marked))) }
                            }
                            @if !h.comments.is_empty() {
                                ul.hit-comments {
                                    @for c in &h.comments {
                                        li {
                                            a href=(format!("{}#comment-{}", post_href(&h.url), c.id)) { "Comment by " (c.author.as_deref().unwrap_or("Anonymous")) }
                                            ": " span.snippet { (PreEscaped(views::snippet_html(&c.marked))) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                nav.pager {
                    @if page > 1 { a rel="prev" href=(link(page - 1)) { "← Previous" } }
                    span { "Page " (page) }
                    @if more { a rel="next" href=(link(page + 1)) { "Next →" } }
                }
            }
        },
    ))
}

/// `/go?url=`: an address as the archive holds it: the post's page, else its latest
/// capture, else a page saying it is not archived, with the live address (not followed) and
/// the nearest capture of its site ([`views::not_archived`]).
pub async fn go(
    State(reader): State<Arc<Reader>>,
    Query(q): Query<UrlParam>,
) -> Result<Response, Failure> {
    let url = q.url.clone();
    // As the crawl keyed it too: a link with tracking parameters, `?replytocom=` or
    // `index.html` leads to the post or capture the crawl kept.
    let (post, capture) = reader
        .read(move |s| {
            let canonical = url::Url::parse(&url)
                .ok()
                .map(|u| crate::core::post_url::canonical(&u).to_string());
            // The post's own URL: an address that redirected to it leads to it too.
            let mut post = None;
            for u in std::iter::once(url.clone()).chain(canonical) {
                if post.is_none() {
                    post = s.post_url_of(&u)?;
                }
            }
            // A post found needs no capture lookup (which canonicalises again).
            let capture = match post {
                Some(_) => None,
                None => capture_or_canonical(s, &url, chrono::Utc::now())?,
            };
            Ok((post, capture))
        })
        .await?;
    if let Some(post) = post {
        return Ok(Redirect::to(&post_href(&post)).into_response());
    }
    if let Some((url, c)) = capture {
        return Ok(Redirect::to(&replay_href(&timestamp(c.fetched_at), &url)).into_response());
    }
    let url = q.url;
    let missing = reader
        .read(move |s| Ok(views::not_archived(s, &url, chrono::Utc::now())?))
        .await?;
    Err(missing)
}
