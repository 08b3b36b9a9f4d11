//! Posts and comments: everything one crawled page changes is written in one transaction
//! ([`Store::record_page`]); archived text is never overwritten silently (a changed post or
//! comment keeps its previous text as a version); posts and their threads are read back for
//! `show` and the exports. Written once for both back ends over [`super::db::Db`]; only the
//! streaming of every post ([`Store::for_each_post`]) is per back end.

use super::db::{args, Db, Row};
use super::frontier::{put_links, put_state};
use super::media::media_of;
use super::responses::{put_fetch, put_response, ReadFrom};
use super::sql::{POST_AT, POST_AT_FIRST};
use super::{
    json_list, parse_list, BlogId, Comment, CommentCheck, CommentWrite, NewPost, PageOutcome, Post,
    PostVersion, PostWrite, Store, Written,
};
use crate::core::authors::AuthorPage;
use crate::core::revisit::{edits, Said};
use anyhow::Result;
use chrono::{DateTime, FixedOffset, Utc};
use std::collections::HashSet;

/// What storing a post's comments changed ([`Store::save_comments`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommentsWritten {
    /// Comments not archived before.
    pub new: u32,
    /// Archived comments whose text changed (the previous text kept as a version).
    pub edited: u32,
}

/// The author names and the categories/tags of a blog's posts, each once
/// ([`Store::authors_and_tags`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorsAndTags {
    /// Author names, in the order they first appear.
    pub authors: Vec<String>,
    /// Categories and tags, in the order they first appear.
    pub tags: Vec<String>,
}

/// An earlier text of a comment, kept when the blog changed it ([`Store::comment_versions`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommentVersion {
    /// The comment's key within its post ([`Comment::id`]).
    pub id: String,
    /// Its author then.
    pub author: Option<String>,
    /// Its HTML then.
    pub content_html: String,
    /// Its text then.
    pub content_text: String,
    /// When a newer text replaced it.
    pub replaced_at: DateTime<Utc>,
}

/// A post as archived: what an edit is judged against.
struct Archived {
    title: Option<String>,
    text: String,
    html: String,
    authors: Vec<String>,
    published: Option<DateTime<FixedOffset>>,
    published_raw: Option<String>,
    version: u32,
}

/// Inserts or updates a post at `now`. When what the post says changed (`core::revisit::edits`:
/// title, text, authors, date), the archived post is kept in `post_versions` first and the
/// version number goes up: archived content is never overwritten silently. When it did not
/// change, what it says stays as archived (a page that fails to show its title or byline now
/// loses nothing) and the rest (response, comments' state, gaps) is brought up to date. A post
/// found again clears its `gone_at`.
fn put_post(
    db: &mut dyn Db,
    blog_id: BlogId,
    p: &NewPost,
    source: ReadFrom,
    now: DateTime<Utc>,
) -> Result<PostWrite> {
    let fetched_at = source.fetched_at(db, now)?;
    let response_id = source.response;
    let old = db
        .query_opt(
            "SELECT title, content_text, content_html, authors, published, published_raw, version
             FROM posts WHERE url = ?1",
            args![p.url.as_str()],
        )?
        .map(|r| -> Result<Archived> {
            Ok(Archived {
                title: r.get(0)?,
                text: r.get(1)?,
                html: r.get(2)?,
                authors: parse_list(r.get(3)?),
                published: r.local(4)?,
                published_raw: r.get(5)?,
                version: r.get(6)?,
            })
        })
        .transpose()?;
    fn said(a: &Archived) -> Said<'_> {
        Said {
            title: a.title.as_deref(),
            text: &a.text,
            authors: &a.authors,
            published: a.published,
            published_raw: a.published_raw.as_deref(),
        }
    }
    let new = Said {
        title: p.title.as_deref(),
        text: &p.content_text,
        authors: &p.authors,
        published: p.published,
        published_raw: p.published_raw.as_deref(),
    };
    let mut kept = None;
    let change = match &old {
        None => PostWrite::New,
        Some(a) if edits(&said(a), &new).is_empty() => {
            kept = Some(NewPost {
                title: a.title.clone().or_else(|| p.title.clone()),
                content_text: a.text.clone(),
                content_html: a.html.clone(),
                authors: if a.authors.is_empty() {
                    p.authors.clone()
                } else {
                    a.authors.clone()
                },
                published: a.published.or(p.published),
                published_raw: a.published_raw.clone().or_else(|| p.published_raw.clone()),
                ..p.clone()
            });
            PostWrite::Same
        }
        Some(a) => {
            db.execute(
                "INSERT INTO post_versions (post_url, version, title, authors, published, updated, content_html, content_text, response_id, fetched_at, replaced_at)
                 SELECT url, version, title, authors, published, updated, content_html, content_text, response_id, fetched_at, ?2 FROM posts WHERE url = ?1",
                args![p.url.as_str(), now],
            )?;
            PostWrite::Edited(a.version + 1)
        }
    };
    let p = kept.as_ref().unwrap_or(p);
    let version = match change {
        PostWrite::Edited(v) => v,
        _ => old.as_ref().map_or(1, |o| o.version),
    };
    db.execute(
        "INSERT INTO posts (blog_id, url, title, authors, published, content_html, content_text, response_id, fetched_at, extracted_at,
           updated, published_raw, gaps, version, comments_feed, comments_declared, comments_closed, next_comment_check,
           last_comment_check, tags, extracted_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?9, ?19, ?20)
         ON CONFLICT (url) DO UPDATE SET title = excluded.title, authors = excluded.authors,
           published = COALESCE(excluded.published, posts.published), content_html = excluded.content_html,
           content_text = excluded.content_text, response_id = excluded.response_id,
           fetched_at = excluded.fetched_at, extracted_at = excluded.extracted_at,
           updated = COALESCE(excluded.updated, posts.updated),
           published_raw = COALESCE(excluded.published_raw, posts.published_raw), gaps = excluded.gaps,
           version = excluded.version, gone_at = NULL,
           comments_feed = COALESCE(excluded.comments_feed, posts.comments_feed),
           comments_declared = COALESCE(excluded.comments_declared, posts.comments_declared),
           comments_closed = excluded.comments_closed,
           next_comment_check = COALESCE(posts.next_comment_check, excluded.next_comment_check),
           last_comment_check = excluded.last_comment_check, tags = excluded.tags,
           extracted_by = excluded.extracted_by",
        args![
            blog_id,
            p.url.as_str(),
            p.title.clone(),
            json_list(&p.authors),
            p.published,
            p.content_html.as_str(),
            p.content_text.as_str(),
            response_id,
            fetched_at,
            now,
            p.updated,
            p.published_raw.clone(),
            serde_json::to_string(&p.gaps)?,
            version,
            p.comments_feed.clone(),
            p.comments_declared,
            p.comments_closed,
            p.next_comment_check,
            json_list(&p.tags),
            p.extracted_by
                .map(|b| serde_json::to_string(&b))
                .transpose()?
        ],
    )?;
    for a in &p.author_pages {
        db.execute(
            "INSERT INTO author_pages (blog_id, name, url) VALUES (?1, ?2, ?3)
             ON CONFLICT (blog_id, name) DO UPDATE SET url = excluded.url",
            args![blog_id, a.name.as_str(), a.url.as_str()],
        )?;
    }
    Ok(change)
}

/// Applies a reconciled comment write at `now`: deletes, then upserts by key. A comment whose
/// archived text (from the same source) differs keeps that text in `comment_versions` first.
fn put_comments(db: &mut dyn Db, w: &CommentWrite, now: DateTime<Utc>) -> Result<CommentsWritten> {
    let mut written = CommentsWritten::default();
    let url = w.post_url.as_str();
    for key in &w.delete {
        db.execute(
            "DELETE FROM comments WHERE post_url = ?1 AND key = ?2",
            args![url, key.as_str()],
        )?;
    }
    for c in &w.upsert {
        let old = db.query_opt(
            "SELECT content_text, source FROM comments WHERE post_url = ?1 AND key = ?2",
            args![url, c.id.as_str()],
        )?;
        match old {
            None => written.new += 1,
            Some(r)
                if r.get::<String>(0)? != c.content_text
                    && r.word::<super::CommentSource>(1)? == c.source =>
            {
                db.execute(
                    "INSERT INTO comment_versions (post_url, key, author, content_html, content_text, replaced_at)
                     SELECT post_url, key, author, content_html, content_text, ?3 FROM comments WHERE post_url = ?1 AND key = ?2",
                    args![url, c.id.as_str(), now],
                )?;
                written.edited += 1;
            }
            Some(_) => {}
        }
        db.execute(
            "INSERT INTO comments (post_url, key, author, published, published_raw, content_html, content_text, parent_key, source, position, author_url)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
             ON CONFLICT (post_url, key) DO UPDATE SET author = excluded.author, author_url = COALESCE(excluded.author_url, comments.author_url), published = COALESCE(excluded.published, comments.published),
               published_raw = excluded.published_raw, content_html = excluded.content_html, content_text = excluded.content_text,
               parent_key = COALESCE(excluded.parent_key, comments.parent_key), source = excluded.source, position = excluded.position",
            args![
                url,
                c.id.as_str(),
                c.author.clone(),
                c.published,
                c.published_raw.clone(),
                c.content_html.as_str(),
                c.content_text.as_str(),
                c.parent.clone(),
                c.source,
                c.position,
                c.author_url.clone()
            ],
        )?;
    }
    Ok(written)
}

/// The author pages of `author_pages a` rows that `filter` keeps (`params` its arguments), by
/// name, each at the address the blog last answered it when the crawl fetched it
/// (`/blog/authors/lena` → 301 `/blog/authors/lena/`), else as the post page links it.
fn author_pages_where(
    db: &mut dyn Db,
    filter: &str,
    params: &[super::db::Value],
) -> Result<Vec<AuthorPage>> {
    db.query_map(
        &format!(
            "SELECT a.name, COALESCE((SELECT r.final_url FROM responses r
               WHERE r.blog_id = a.blog_id AND r.url = a.url ORDER BY r.id DESC LIMIT 1), a.url)
             FROM author_pages a {filter} ORDER BY a.name"
        ),
        params,
        |r| {
            Ok(AuthorPage {
                name: r.get(0)?,
                url: r.get(1)?,
            })
        },
    )
}

/// The columns [`post_from_row`] reads, with the blog's home URL.
pub(super) const POST_SELECT: &str = "SELECT p.url, b.home_url, p.title, p.authors, p.published, p.content_html, p.content_text, p.fetched_at,
       p.updated, p.published_raw, p.gaps, p.version, p.gone_at, p.tags, p.extracted_by, p.moved_to
     FROM posts p JOIN blogs b ON b.id = p.blog_id";

/// Newest first, undated last, then by URL.
pub(super) const POST_ORDER: &str =
    "ORDER BY p.blog_id, p.published IS NULL, p.published DESC, p.url";

/// A post (without comments and media) from a row of [`POST_SELECT`].
fn post_from_row(r: &Row) -> Result<Post> {
    Ok(Post {
        url: r.get(0)?,
        blog: r.get(1)?,
        title: r.get(2)?,
        authors: parse_list(r.get(3)?),
        published: r.local(4)?,
        content_html: r.get(5)?,
        content_text: r.get(6)?,
        fetched_at: r.time_req(7)?,
        updated: r.local(8)?,
        published_raw: r.get(9)?,
        gaps: serde_json::from_str(&r.get::<String>(10)?).unwrap_or_default(),
        version: r.get(11)?,
        gone_at: r.time(12)?,
        tags: parse_list(r.get(13)?),
        extracted_by: r
            .get::<Option<String>>(14)?
            .and_then(|b| serde_json::from_str(&b).ok()),
        moved_to: r.get(15)?,
        author_pages: Vec::new(),
        comments: Vec::new(),
        media: Vec::new(),
    })
}

/// A post with its comments, media and its authors' pages, from a row of [`POST_SELECT`].
pub(super) fn whole_post(db: &mut dyn Db, row: &Row) -> Result<Post> {
    let mut post = post_from_row(row)?;
    post.comments = comments_of(db, &post.url)?;
    post.media = media_of(db, &post.url)?;
    if !post.authors.is_empty() {
        let pages = author_pages_where(
            db,
            "JOIN posts p ON p.blog_id = a.blog_id WHERE p.url = ?1",
            args![post.url.as_str()],
        )?;
        post.author_pages = post
            .authors
            .iter()
            .filter_map(|a| pages.iter().find(|p| &p.name == a).cloned())
            .collect();
    }
    Ok(post)
}

/// The comments of a post, oldest first.
fn comments_of(db: &mut dyn Db, post_url: &str) -> Result<Vec<Comment>> {
    db.query_map(
        "SELECT key, author, published, published_raw, content_html, content_text, parent_key, source, position, author_url FROM comments
         WHERE post_url = ?1 ORDER BY published IS NULL, published, position, key",
        args![post_url],
        |r| {
            Ok(Comment {
                id: r.get(0)?,
                author: r.get(1)?,
                published: r.local(2)?,
                published_raw: r.get(3)?,
                content_html: r.get(4)?,
                content_text: r.get(5)?,
                parent: r.get(6)?,
                source: r.word(7)?,
                position: r.get(8)?,
                author_url: r.get(9)?,
            })
        },
    )
}

/// The write of one crawled page ([`Store::record_page`]), in its order: fetch-log lines, the
/// response (redirect hops first) and rendering, the post, its comments, a gone mark, the new
/// links, the frontier state.
fn record(o: PageOutcome) -> impl Fn(&mut dyn Db) -> Result<Written> + Send + Sync + 'static {
    move |db| {
        // One reading of the clock for everything the page writes.
        let now = db.now()?;
        for f in &o.fetches {
            put_fetch(db, Some(o.blog_id), f)?;
        }
        let mut source = match &o.response {
            Some(r) => {
                for hop in &o.redirects {
                    put_response(db, o.blog_id, hop)?;
                }
                ReadFrom {
                    response: Some(put_response(db, o.blog_id, r)?),
                    arrived: Some(r.fetched_at),
                }
            }
            None => ReadFrom {
                response: o.reused_response,
                arrived: None,
            },
        };
        if let Some(r) = &o.rendered {
            source = ReadFrom {
                response: Some(put_response(db, o.blog_id, r)?),
                arrived: Some(r.fetched_at),
            };
        }
        let mut written = Written::default();
        // One post, one identity: an archived post either address answers keeps its own.
        let settled = match &o.post {
            Some(p) => {
                super::aliases::archived_identity(db, &o.url, &p.url)?.filter(|id| *id != p.url)
            }
            None => None,
        };
        if let Some(p) = &o.post {
            let p = match &settled {
                Some(id) => &NewPost {
                    url: id.clone(),
                    ..p.clone()
                },
                None => p,
            };
            written.post = Some(put_post(db, o.blog_id, p, source, now)?);
            if p.url != o.url {
                super::aliases::put_alias(db, &o, &p.url, now)?;
            }
        }
        if let Some(page) = &o.page {
            super::pages::put_page(db, &o, page, source, now)?;
        }
        let comments = match (&o.comments, &settled, &o.post) {
            (Some(w), Some(id), Some(p)) if w.post_url == p.url => Some(CommentWrite {
                post_url: id.clone(),
                ..w.clone()
            }),
            _ => None,
        };
        if let Some(w) = comments.as_ref().or(o.comments.as_ref()) {
            let comments = put_comments(db, w, now)?;
            (written.new_comments, written.edited_comments) = (comments.new, comments.edited);
        }
        if o.gone {
            written.gone = db.execute(
                "UPDATE posts SET gone_at = ?2 WHERE url = ?1 AND gone_at IS NULL",
                args![o.url.as_str(), now],
            )? == 1;
        }
        if let Some(to) = &o.moved_to {
            written.moved = db.execute(
                "UPDATE posts SET moved_to = ?2, moved_at = ?3
                 WHERE url = ?1 AND moved_to IS DISTINCT FROM ?2",
                args![o.url.as_str(), to.as_str(), now],
            )? == 1;
        }
        if let Some(next) = o.next_revisit {
            db.execute(
                "UPDATE posts SET last_revisit = ?2, next_revisit = ?3 WHERE url = ?1",
                args![o.url.as_str(), now, next],
            )?;
        }
        written.new_post_links = put_links(db, o.blog_id, &o.links)?;
        put_state(db, &o, now)?;
        Ok(written)
    }
}

impl Store {
    /// Writes everything one crawled page changes, atomically, and says what changed: its
    /// fetch-log lines, its response (and rendering), its post, its comments, a gone mark, its
    /// new links and its frontier state.
    ///
    /// # Errors
    /// The database failed.
    pub fn record_page(&mut self, o: &PageOutcome) -> Result<Written> {
        self.write(record(o.clone()))
    }

    /// [`Store::record_page`], its answer taken later: on PostgreSQL the crawl reads the next
    /// page while the server writes this one (NewCrawl's record stage). Writes keep their
    /// order, and a read after it sees it.
    pub fn record_page_later(&mut self, o: PageOutcome) -> super::Pending<Written> {
        self.write_later(record(o))
    }

    /// Stores comments of a post read from a comment feed, already reconciled with the
    /// archived ones. Returns how many were new and how many edited.
    ///
    /// # Errors
    /// The database failed.
    pub fn save_comments(&mut self, w: &CommentWrite) -> Result<CommentsWritten> {
        let w = w.clone();
        self.write(move |db| {
            let now = db.now()?;
            put_comments(db, &w, now)
        })
    }

    /// The comments of a post, oldest first.
    ///
    /// # Errors
    /// The database failed, or a stored value is corrupt.
    pub fn comments(&self, post_url: &str) -> Result<Vec<Comment>> {
        let url = post_url.to_string();
        self.read(move |db| comments_of(db, &url))
    }

    /// The posts of one blog, or of all blogs, newest first (undated last), then by URL, with
    /// their comments.
    ///
    /// # Errors
    /// The database failed, or a stored value is corrupt.
    pub fn posts(&self, blog_id: Option<BlogId>) -> Result<Vec<Post>> {
        let mut posts = Vec::new();
        self.for_each_post(blog_id, |p| {
            posts.push(p);
            Ok(())
        })?;
        Ok(posts)
    }

    /// The number of archived posts of one blog (gone ones included, as
    /// [`Store::for_each_post`] yields them).
    ///
    /// # Errors
    /// The database failed.
    pub fn post_count(&self, blog_id: BlogId) -> Result<u64> {
        self.read(move |db| {
            db.count(
                "SELECT COUNT(*) FROM posts WHERE blog_id = ?1",
                args![blog_id],
            )
        })
    }

    /// The author names and the categories/tags of one blog's posts, each once, in the order
    /// they first appear in [`Store::for_each_post`]'s order (newest post first, page order
    /// within a post). Reads only those two columns, for exports that declare them before the
    /// posts (WXR).
    ///
    /// # Errors
    /// The database failed.
    pub fn authors_and_tags(&self, blog_id: BlogId) -> Result<AuthorsAndTags> {
        let lists = self.read(move |db| {
            db.query_map(
                &format!("SELECT p.authors, p.tags FROM posts p WHERE p.blog_id = ?1 {POST_ORDER}"),
                args![blog_id],
                |r| Ok((parse_list(r.get(0)?), parse_list(r.get(1)?))),
            )
        })?;
        let mut out = AuthorsAndTags::default();
        let (mut seen_a, mut seen_t) = (HashSet::new(), HashSet::new());
        for (a, t) in lists {
            out.authors
                .extend(a.into_iter().filter(|a| seen_a.insert(a.clone())));
            out.tags
                .extend(t.into_iter().filter(|t| seen_t.insert(t.clone())));
        }
        Ok(out)
    }

    /// The page the blog keeps for each of its authors, where a post page linked one (issue
    /// 42), by name: where the blog answered it, when the crawl fetched it.
    ///
    /// # Errors
    /// The database failed.
    pub fn author_pages(&self, blog_id: BlogId) -> Result<Vec<AuthorPage>> {
        self.read(move |db| author_pages_where(db, "WHERE a.blog_id = ?1", args![blog_id]))
    }

    /// One post by its URL, with its comments: the URL it was archived under, or the one it
    /// moved to.
    ///
    /// # Errors
    /// The database failed, or a stored value is corrupt.
    pub fn post(&self, url: &str) -> Result<Option<Post>> {
        let url = url.to_string();
        self.read(move |db| {
            let Some(row) = db.query_opt(
                &format!("{POST_SELECT} WHERE {POST_AT} ORDER BY {POST_AT_FIRST} LIMIT 1"),
                args![url.as_str()],
            )?
            else {
                return Ok(None);
            };
            whole_post(db, &row).map(Some)
        })
    }

    /// The permalinks of a blog's archived posts that are not gone.
    ///
    /// # Errors
    /// The database failed.
    pub fn post_urls(&self, blog_id: BlogId) -> Result<Vec<String>> {
        self.read(move |db| {
            db.query_map(
                "SELECT url FROM posts WHERE blog_id = ?1 AND gone_at IS NULL ORDER BY url",
                args![blog_id],
                |r| r.get(0),
            )
        })
    }

    /// Every post URL of a blog, those the blog has since deleted included (an export holds
    /// them all), sorted.
    ///
    /// # Errors
    /// The database failed.
    pub fn every_post_url(&self, blog_id: BlogId) -> Result<Vec<String>> {
        self.read(move |db| {
            db.query_map(
                "SELECT url FROM posts WHERE blog_id = ?1 ORDER BY url",
                args![blog_id],
                |r| r.get(0),
            )
        })
    }

    /// Up to `n` posts of a blog whose comments are due for a check at `now`, the longest
    /// overdue first: posts never checked (no schedule yet), then by due time. Posts whose
    /// comments are closed, whose checks ended, or that are gone are left out.
    ///
    /// # Errors
    /// The database failed.
    pub fn due_comment_checks(
        &self,
        blog_id: BlogId,
        now: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<CommentCheck>> {
        self.read(move |db| {
            db.query_map(
                "SELECT p.url, p.comments_feed, p.published,
                        (SELECT COUNT(*) FROM comments c WHERE c.post_url = p.url)
                 FROM posts p
                 WHERE p.blog_id = ?1 AND p.comments_closed = 0 AND p.gone_at IS NULL
                   AND ((p.next_comment_check IS NULL AND p.last_comment_check IS NULL)
                        OR p.next_comment_check <= ?2)
                 ORDER BY p.next_comment_check IS NOT NULL, p.next_comment_check, p.published, p.url
                 LIMIT ?3",
                args![blog_id, now, n],
                |r| {
                    Ok(CommentCheck {
                        url: r.get(0)?,
                        comments_feed: r.get(1)?,
                        published: r.local(2)?,
                        comments: r.get(3)?,
                    })
                },
            )
        })
    }

    /// Records a comment check of a post: when it was done, and the next one (`None`: no more,
    /// the post is past the age of checks or its comments are closed). Closed comments stay
    /// closed.
    ///
    /// # Errors
    /// The database failed.
    pub fn set_comment_check(
        &mut self,
        url: &str,
        checked_at: DateTime<Utc>,
        next: Option<DateTime<Utc>>,
        closed: bool,
    ) -> Result<()> {
        let url = url.to_string();
        self.write(move |db| {
            db.execute(
                "UPDATE posts SET last_comment_check = ?2, next_comment_check = ?3,
                   comments_closed = CASE WHEN ?4 = 1 THEN 1 ELSE comments_closed END WHERE url = ?1",
                args![url.as_str(), checked_at, next, closed],
            )?;
            Ok(())
        })
    }

    /// Earlier versions of a post, oldest first.
    ///
    /// # Errors
    /// The database failed, or a stored time is corrupt.
    pub fn post_versions(&self, url: &str) -> Result<Vec<PostVersion>> {
        let url = url.to_string();
        self.read(move |db| {
            db.query_map(
                "SELECT version, title, content_html, content_text, fetched_at, replaced_at
                 FROM post_versions WHERE post_url = ?1 ORDER BY version",
                args![url.as_str()],
                |r| {
                    Ok(PostVersion {
                        version: r.get(0)?,
                        title: r.get(1)?,
                        content_html: r.get(2)?,
                        content_text: r.get(3)?,
                        fetched_at: r.time_req(4)?,
                        replaced_at: r.time_req(5)?,
                    })
                },
            )
        })
    }

    /// Earlier texts of a post's comments, oldest first.
    ///
    /// # Errors
    /// The database failed.
    pub fn comment_versions(&self, post_url: &str) -> Result<Vec<CommentVersion>> {
        let url = post_url.to_string();
        self.read(move |db| {
            db.query_map(
                "SELECT key, author, content_html, content_text, replaced_at FROM comment_versions
                 WHERE post_url = ?1 ORDER BY id",
                args![url.as_str()],
                |r| {
                    Ok(CommentVersion {
                        id: r.get(0)?,
                        author: r.get(1)?,
                        content_html: r.get(2)?,
                        content_text: r.get(3)?,
                        replaced_at: r.time_req(4)?,
                    })
                },
            )
        })
    }
}

impl super::SqliteStore {
    pub(super) fn for_each_post(
        &self,
        blog_id: Option<BlogId>,
        mut f: impl FnMut(Post) -> Result<()>,
    ) -> Result<u64> {
        let mut st = self.conn.prepare(&format!(
            "{POST_SELECT} WHERE ?1 IS NULL OR p.blog_id = ?1 {POST_ORDER}"
        ))?;
        let mut rows = st.query([blog_id.map(BlogId::get)])?;
        let mut n = 0;
        while let Some(row) = rows.next()? {
            let row = super::db::sqlite_row(row)?;
            f(whole_post(&mut super::db::SqliteDb(&self.conn), &row)?)?;
            n += 1;
        }
        Ok(n)
    }
}
