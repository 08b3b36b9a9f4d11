//! `archive export --format html`: the reader's pages written as a static copy that opens
//! from disk, with no server and no network: the blogs, each blog's posts (newest first,
//! `page_size` a page), each post with its threaded comments and the word diffs of its
//! versions, and the images its article and comments show, copied out of the archive.
//!
//! Layout under the output directory (`<blog>` is [`crate::export::feeds::blog_slug`]):
//!
//! ```text
//! index.html                  the blogs
//! style.css                   the reader's stylesheet
//! <blog>/index.html           posts 1 … page_size; page-2.html, page-3.html, …
//! <blog>/posts/<name>.html    one per post, named after its permalink's path
//! <blog>/media/<sha>.<ext>    each image once, named by the first 16 hex digits of its SHA-256
//! ```
//!
//! Every link is relative. Links between archived posts of the blog lead to their files; other
//! links lead to the live address (followed only when clicked). Images the archive does not
//! hold are left out, so opening the copy loads nothing from the web; each page also carries a
//! policy that forbids every script.

use super::diff::{block_diff, word_diff};
use super::layout::{count, layout, STYLESHEET};
use super::render::{article_and_comments, blogs_page, post_list, Around};
use super::routes::Links;
use super::views::{sanitize_with, BlogView, Target, MISSING_IMAGE};
use crate::export::feeds::{dashed, Documents};
use crate::store::{Blog, BlogId, MediaState, Post, PostFilter, PostPage, Store};
use anyhow::{Context, Result};
use maud::{html, Markup};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// What a static copy of one blog holds.
#[derive(Debug, Default, Clone, Copy)]
pub struct SiteWritten {
    /// Post pages.
    pub posts: u64,
    /// Comments shown on them.
    pub comments: u64,
    /// Listing pages (`index.html`, `page-N.html`).
    pub pages: u64,
    /// Image files copied out of the archive.
    pub images: u64,
    /// Their bytes.
    pub image_bytes: u64,
}

/// Writes `index.html` (the blogs of `blogs`, each `(blog, its directory)`) and `style.css`.
///
/// # Errors
/// The database failed, or a document could not be written.
pub fn write_index(
    store: &Store,
    blogs: &[(Blog, String)],
    docs: &mut dyn Documents,
) -> Result<()> {
    let views = blogs
        .iter()
        .map(|(b, _)| BlogView::of(store, b.clone()))
        .collect::<Result<Vec<_>>>()?;
    let links = Files {
        depth: 0,
        blog_dirs: blogs.iter().map(|(b, d)| (b.id, d.clone())).collect(),
        posts: Arc::default(),
        blog_dir: String::new(),
    };
    let page = blogs_page(&links, &views, &[]);
    docs.document("index.html", &mut |out| {
        Ok(out.write_all(with_policy(page.clone()).as_bytes())?)
    })?;
    docs.document("style.css", &mut |out| {
        Ok(out.write_all(STYLESHEET.as_bytes())?)
    })
}

/// Writes blog `blog`'s pages into `dir/` of `docs`: its listing pages, a page per post and
/// the images they show. Reads the posts one at a time (`Store::for_each_post`); call it in
/// one read snapshot.
///
/// # Errors
/// The database failed, or a document could not be written.
pub fn write_blog(
    store: &Store,
    blog: &Blog,
    dir: &str,
    page_size: u32,
    docs: &mut dyn Documents,
) -> Result<SiteWritten> {
    let page_size = page_size.max(1);
    let posts = Arc::new(post_files(&store.post_urls(blog.id)?));
    let links = |depth| Files {
        depth,
        blog_dirs: HashMap::from([(blog.id, dir.to_string())]),
        posts: Arc::clone(&posts),
        blog_dir: dir.to_string(),
    };
    let mut written = SiteWritten::default();

    // The listing pages.
    let view = BlogView::of(store, blog.clone())?;
    let listing = links(1);
    let mut page = 1u32;
    loop {
        let offset = u64::from(page - 1) * u64::from(page_size);
        let PostPage {
            posts: summaries,
            total,
        } = store.post_page(blog.id, &PostFilter::default(), page_size, offset as u32)?;
        let pages_total = total.div_ceil(u64::from(page_size)).max(1);
        let body = html! {
            h1 { (view.name()) }
            p.meta {
                a href=(view.home_url) { (view.home_url) } " · "
                (count(view.coverage.posts_archived, "post", "posts")) ", " (count(view.coverage.comments_archived, "comment", "comments")) " archived"
                @if let Some(t) = view.last_update { " · brought up to date " (t.format("%Y-%m-%d %H:%M UTC")) }
            }
            section.posts {
                h2 { "Posts " small { "(" (total) ")" } }
                div lang=[view.language.as_deref()] { (post_list(&listing, &summaries)) }
                nav.pager {
                    @if page > 1 { a rel="prev" href=(listing_file(page - 1)) { "← Newer" } }
                    span { "Page " (page) " of " (pages_total) }
                    @if u64::from(page) < pages_total { a rel="next" href=(listing_file(page + 1)) { "Older →" } }
                }
            }
        };
        let doc = with_policy(layout(&listing, view.name(), body));
        docs.document(&format!("{dir}/{}", listing_file(page)), &mut |out| {
            Ok(out.write_all(doc.as_bytes())?)
        })?;
        written.pages += 1;
        if u64::from(page) >= pages_total {
            break;
        }
        page += 1;
    }

    // The posts, and the images they show.
    let post_links = links(2);
    let mut copied: HashSet<String> = HashSet::new();
    let blog_has_comments = view.coverage.comments_archived > 0;
    store.for_each_post(Some(blog.id), |post| {
        let Some(file) = posts.get(&post.url) else {
            return Ok(());
        };
        let media = Arc::new(media_files(&post));
        let shown: Arc<Mutex<Vec<String>>> = Arc::default();
        let clean = {
            let (posts, media, shown) = (Arc::clone(&posts), Arc::clone(&media), Arc::clone(&shown));
            let base = post.url.clone();
            move |html: &str| {
                let (posts, media, shown) = (Arc::clone(&posts), Arc::clone(&media), Arc::clone(&shown));
                sanitize_with(html, &base, move |target, url| {
                    let url = url.as_str();
                    if let Some(m) = media.get(url) {
                        shown.lock().expect("lock").push(url.to_string());
                        return Some(format!("../media/{}", m.file));
                    }
                    match target {
                        Target::Image => Some(MISSING_IMAGE.to_string()),
                        Target::Media => None,
                        Target::Link => {
                            Some(posts.get(url).cloned().unwrap_or_else(|| url.to_string()))
                        }
                    }
                })
            }
        };
        let source = html! { a href=(post.url) { "on the blog" } ", archived " (post.fetched_at.format("%Y-%m-%d")) };
        let versions = if post.version > 1 {
            store.post_versions(&post.url)?
        } else {
            Vec::new()
        };
        let body = html! {
            (article_and_comments(&post, &Around {
                links: &post_links,
                blog: Some((blog.id, view.name().to_string())),
                language: blog.language.as_deref(),
                neighbours: store.neighbours(blog.id, &post.url)?,
                earlier: store.comment_versions(&post.url)?,
                blog_has_comments,
            }, &clean, source, html! {}))
            @if !versions.is_empty() {
                section.versions id="versions" {
                    h2 { "Versions" }
                    @for (i, v) in versions.iter().enumerate() {
                        @let (next_title, next_html, n) = match versions.get(i + 1) {
                            Some(w) => (w.title.as_deref(), w.content_html.as_str(), w.version),
                            None => (post.title.as_deref(), post.content_html.as_str(), post.version),
                        };
                        details {
                            summary { "Version " (v.version) " (fetched " (v.fetched_at.format("%Y-%m-%d")) ") → version " (n) }
                            h3.diff-title { (word_diff(v.title.as_deref().unwrap_or(""), next_title.unwrap_or(""))) }
                            div.diff { (block_diff(&v.content_html, next_html)) }
                        }
                    }
                }
            }
            p { a href="../index.html" { "← All posts" } }
        };
        let title = post.title.clone().unwrap_or_else(|| post.url.clone());
        let doc = with_policy(layout(&post_links, &title, body));
        docs.document(&format!("{dir}/posts/{file}"), &mut |out| {
            Ok(out.write_all(doc.as_bytes())?)
        })?;
        written.posts += 1;
        written.comments += post.comments.len() as u64;
        let shown = std::mem::take(&mut *shown.lock().expect("lock"));
        for url in shown {
            let m = &media[&url];
            if !copied.insert(m.file.clone()) {
                continue;
            }
            let Some(stored) = store.response_for(blog.id, &url)? else {
                continue;
            };
            let body = store
                .response_body(stored.id)?
                .with_context(|| format!("the archived body of {url}"))?;
            docs.document(&format!("{dir}/media/{}", m.file), &mut |out| {
                Ok(out.write_all(&body)?)
            })?;
            written.images += 1;
            written.image_bytes += body.len() as u64;
        }
        Ok(())
    })?;
    Ok(written)
}

/// `index.html` for page 1, `page-N.html` after.
fn listing_file(page: u32) -> String {
    if page <= 1 {
        "index.html".into()
    } else {
        format!("page-{page}.html")
    }
}

/// `doc` with a policy forbidding every script and any load from another origin (a
/// `<meta http-equiv>`, as a file has no headers), right after `<head>`.
fn with_policy(doc: Markup) -> String {
    const POLICY: &str = r#"<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'self'; script-src 'none'; base-uri 'none'; form-action 'none'">"#;
    doc.into_string()
        .replacen("<head>", &format!("<head>{POLICY}"), 1)
}

/// Each permalink's page file (`name.html`, in `posts/`): its path (and query) lower-cased,
/// runs of other characters than `a-z`, `0-9`, `_` made one `-`, `.html` and the like
/// dropped; the blog's home (an empty path) is `home`; a name taken by an earlier URL (in the
/// order given) gets `-2`, `-3`, ….
fn post_files(urls: &[String]) -> HashMap<String, String> {
    let mut taken = HashSet::new();
    let mut files = HashMap::new();
    for url in urls {
        let (path, query) = match url::Url::parse(url) {
            Ok(u) => (u.path().to_string(), u.query().unwrap_or("").to_string()),
            Err(_) => (url.clone(), String::new()),
        };
        let path = path.trim_end_matches('/');
        let path = [".html", ".htm", ".php", ".aspx", ".asp"]
            .iter()
            .find_map(|ext| path.strip_suffix(ext))
            .unwrap_or(path);
        let mut stem = dashed(&format!("{path}?{query}").to_lowercase(), |c| {
            c.is_ascii_alphanumeric() || c == '_'
        });
        if stem.is_empty() {
            stem = "home".into();
        }
        let mut name = format!("{stem}.html");
        let mut n = 2;
        while !taken.insert(name.clone()) {
            name = format!("{stem}-{n}.html");
            n += 1;
        }
        files.insert(url.clone(), name);
    }
    files
}

/// An archived file of a post's media, as the copy names it.
struct MediaFile {
    file: String,
}

/// The post's stored media (HTTP 200) by URL, each named `<sha>.<ext>` after its body's
/// SHA-256 and its MIME type.
fn media_files(post: &Post) -> HashMap<String, MediaFile> {
    post.media
        .iter()
        .filter(|m| m.state == MediaState::Stored && m.status == Some(200))
        .filter_map(|m| {
            let sha = m.sha256.as_deref()?;
            let ext = extension(m.mime.as_deref().unwrap_or(""), &m.url);
            Some((
                m.url.clone(),
                MediaFile {
                    file: format!("{}.{ext}", &sha[..sha.len().min(16)]),
                },
            ))
        })
        .collect()
}

/// The file extension a browser opening the file from disk needs for `mime`, else the URL's
/// own (when short and alphanumeric), else `bin`.
fn extension(mime: &str, url: &str) -> String {
    let known = match mime {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/avif" => "avif",
        "image/svg+xml" => "svg",
        "image/x-icon" | "image/vnd.microsoft.icon" => "ico",
        "audio/mpeg" => "mp3",
        "video/mp4" => "mp4",
        "application/pdf" => "pdf",
        "text/css" => "css",
        _ => "",
    };
    if !known.is_empty() {
        return known.into();
    }
    let path = url::Url::parse(url)
        .map(|u| u.path().to_string())
        .unwrap_or_default();
    match path.rsplit_once('.') {
        Some((_, ext))
            if (1..=5).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            ext.to_ascii_lowercase()
        }
        _ => "bin".into(),
    }
}

/// The static copy's links, for a page `depth` directories below the output directory.
struct Files {
    depth: usize,
    /// Blog id → its directory.
    blog_dirs: HashMap<BlogId, String>,
    /// This blog's permalinks → their files in `posts/`.
    posts: Arc<HashMap<String, String>>,
    /// This blog's directory (empty on the index).
    blog_dir: String,
}

impl Files {
    fn up(&self) -> String {
        "../".repeat(self.depth)
    }
}

impl Links for Files {
    fn stylesheet(&self) -> String {
        format!("{}style.css", self.up())
    }
    fn home(&self) -> String {
        format!("{}index.html", self.up())
    }
    fn blog(&self, id: BlogId) -> String {
        match self.blog_dirs.get(&id) {
            Some(d) => format!("{}{d}/index.html", self.up()),
            None => self.home(),
        }
    }
    fn post(&self, url: &str) -> String {
        match (self.posts.get(url), self.depth) {
            (Some(f), 2) => f.clone(),
            (Some(f), 1) => format!("posts/{f}"),
            (Some(f), _) => format!("{}/posts/{f}", self.blog_dir),
            (None, _) => url.to_string(),
        }
    }
    fn go(&self, url: &str) -> String {
        self.post(url)
    }
    fn search(&self) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn post_files_are_unique_and_readable() {
        let urls: Vec<String> = [
            "http://b.test/2024/05/a-post/",
            "http://b.test/2024/05/a-post.html",
            "http://b.test/",
            "http://b.test/?p=12",
            "http://b.test/2024/05/na%C3%AFve/",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let f = post_files(&urls);
        assert_eq!(f[&urls[0]], "2024-05-a-post.html");
        assert_eq!(f[&urls[1]], "2024-05-a-post-2.html");
        assert_eq!(f[&urls[2]], "home.html");
        assert_eq!(f[&urls[3]], "p-12.html");
        assert_eq!(f[&urls[4]], "2024-05-na-c3-afve.html");
    }

    #[test]
    fn extensions_follow_the_type_then_the_url() {
        assert_eq!(extension("image/png", "http://b.test/x"), "png");
        assert_eq!(extension("", "http://b.test/a/photo.JPG"), "jpg");
        assert_eq!(extension("application/x-thing", "http://b.test/a/"), "bin");
    }
}
