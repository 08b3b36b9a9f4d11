//! Posts and comments on PostgreSQL: everything one crawled page changes in one transaction
//! (`record_page`), archived text never overwritten silently (versions), posts and threads read
//! back. Same names, arguments and meaning as `store::posts`.

use super::frontier::{put_links, put_state};
use super::media::post_media;
use super::responses::{put_fetch, put_response};
use super::{count, local_time, server_now, time, word, PgStore};
use crate::store::{
    parse_list, ts, Comment, CommentCheck, CommentWrite, NewPost, PageOutcome, Post, PostVersion,
    PostWrite, Written,
};
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use postgres::GenericClient;
use std::collections::HashSet;

/// Inserts or updates a post at `now` (the transaction's time), keeping a changed title or
/// text as a version first (`store::posts::put_post`).
fn put_post(
    tx: &mut postgres::Transaction<'_>,
    blog_id: i64,
    p: &NewPost,
    response_id: Option<i64>,
    now: &str,
) -> Result<PostWrite> {
    let fetched_at: String = match response_id {
        Some(id) => tx
            .query_one("SELECT fetched_at FROM responses WHERE id = $1", &[&id])?
            .get(0),
        None => now.to_string(),
    };
    let old = tx
        .query_opt(
            "SELECT title, content_text, version FROM posts WHERE url = $1",
            &[&p.url],
        )?
        .map(|r| {
            (
                r.get::<_, Option<String>>(0),
                r.get::<_, String>(1),
                count(r.get(2)),
            )
        });
    let change = match &old {
        None => PostWrite::New,
        Some((title, text, _)) if *title == p.title && *text == p.content_text => PostWrite::Same,
        Some((_, _, version)) => {
            tx.execute(
                "INSERT INTO post_versions (post_url, version, title, authors, published, updated, content_html, content_text, response_id, fetched_at, replaced_at)
                 SELECT url, version, title, authors, published, updated, content_html, content_text, response_id, fetched_at, $2 FROM posts WHERE url = $1",
                &[&p.url, &now],
            )?;
            PostWrite::Edited(version + 1)
        }
    };
    let version = match change {
        PostWrite::Edited(v) => v,
        _ => old.as_ref().map_or(1, |o| o.2),
    };
    tx.execute(
        "INSERT INTO posts (blog_id, url, title, authors, published, content_html, content_text, response_id, fetched_at, extracted_at,
           updated, published_raw, gaps, version, comments_feed, comments_declared, comments_closed, next_comment_check,
           last_comment_check, tags, extracted_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $9, $19, $20)
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
        &[
            &blog_id,
            &p.url,
            &p.title,
            &serde_json::to_string(&p.authors)?,
            &p.published.map(|d| d.to_rfc3339()),
            &p.content_html,
            &p.content_text,
            &response_id,
            &fetched_at,
            &now,
            &p.updated.map(|d| d.to_rfc3339()),
            &p.published_raw,
            &serde_json::to_string(&p.gaps)?,
            &i64::from(version),
            &p.comments_feed,
            &p.comments_declared.map(i64::from),
            &i64::from(p.comments_closed),
            &p.next_comment_check.map(ts),
            &serde_json::to_string(&p.tags)?,
            &p.extracted_by
                .map(|b| serde_json::to_string(&b))
                .transpose()?,
        ],
    )?;
    Ok(change)
}

/// Applies a reconciled comment write at `now` (the transaction's time): deletes, then upserts
/// by key, a changed text from the same source kept as a version first. Returns (new, edited).
fn put_comments(
    tx: &mut postgres::Transaction<'_>,
    w: &CommentWrite,
    now: &str,
) -> Result<(u32, u32)> {
    let (mut added, mut edited) = (0, 0);
    for key in &w.delete {
        tx.execute(
            "DELETE FROM comments WHERE post_url = $1 AND key = $2",
            &[&w.post_url, key],
        )?;
    }
    let upsert = tx.prepare(
        "INSERT INTO comments (post_url, key, author, published, published_raw, content_html, content_text, parent_key, source, position)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (post_url, key) DO UPDATE SET author = excluded.author, published = COALESCE(excluded.published, comments.published),
           published_raw = excluded.published_raw, content_html = excluded.content_html, content_text = excluded.content_text,
           parent_key = COALESCE(excluded.parent_key, comments.parent_key), source = excluded.source, position = excluded.position",
    )?;
    for c in &w.upsert {
        let old = tx.query_opt(
            "SELECT content_text, source FROM comments WHERE post_url = $1 AND key = $2",
            &[&w.post_url, &c.id],
        )?;
        match old {
            None => added += 1,
            Some(r)
                if r.get::<_, String>(0) != c.content_text
                    && r.get::<_, String>(1) == c.source.as_str() =>
            {
                tx.execute(
                    "INSERT INTO comment_versions (post_url, key, author, content_html, content_text, replaced_at)
                     SELECT post_url, key, author, content_html, content_text, $3 FROM comments WHERE post_url = $1 AND key = $2",
                    &[&w.post_url, &c.id, &now],
                )?;
                edited += 1;
            }
            Some(_) => {}
        }
        tx.execute(
            &upsert,
            &[
                &w.post_url,
                &c.id,
                &c.author,
                &c.published.map(|d| d.to_rfc3339()),
                &c.published_raw,
                &c.content_html,
                &c.content_text,
                &c.parent,
                &c.source.as_str(),
                &c.position,
            ],
        )?;
    }
    Ok((added, edited))
}

const POST_SELECT: &str = "SELECT p.url, b.home_url, p.title, p.authors, p.published, p.content_html, p.content_text, p.fetched_at,
       p.updated, p.published_raw, p.gaps, p.version, p.gone_at, p.tags, p.extracted_by
     FROM posts p JOIN blogs b ON b.id = p.blog_id";

const POST_ORDER: &str = "ORDER BY p.blog_id, p.published IS NULL, p.published DESC, p.url";

/// A post (without comments and media) from a row of [`POST_SELECT`].
fn post_from_row(r: &postgres::Row) -> Result<Post> {
    Ok(Post {
        url: r.get(0),
        blog: r.get(1),
        title: r.get(2),
        authors: parse_list(r.get(3)),
        published: local_time(r, 4)?,
        content_html: r.get(5),
        content_text: r.get(6),
        fetched_at: time(r, 7)?.context("post without fetched_at")?,
        updated: local_time(r, 8)?,
        published_raw: r.get(9),
        gaps: serde_json::from_str(r.get(10)).unwrap_or_default(),
        version: count(r.get(11)),
        gone_at: time(r, 12)?,
        tags: parse_list(r.get(13)),
        extracted_by: r
            .get::<_, Option<String>>(14)
            .and_then(|b| serde_json::from_str(&b).ok()),
        comments: Vec::new(),
        media: Vec::new(),
    })
}

/// The comments of a post, oldest first, on any client.
fn comments(c: &mut impl GenericClient, post_url: &str) -> Result<Vec<Comment>> {
    c.query(
        "SELECT key, author, published, published_raw, content_html, content_text, parent_key, source, position FROM comments
         WHERE post_url = $1 ORDER BY published IS NULL, published, position, key",
        &[&post_url],
    )?
    .iter()
    .map(|r| {
        Ok(Comment {
            id: r.get(0),
            author: r.get(1),
            published: local_time(r, 2)?,
            published_raw: r.get(3),
            content_html: r.get(4),
            content_text: r.get(5),
            parent: r.get(6),
            source: word(r, 7)?,
            position: r.get(8),
        })
    })
    .collect()
}

/// A post with its comments and media.
fn whole(c: &mut impl GenericClient, row: &postgres::Row) -> Result<Post> {
    let mut post = post_from_row(row)?;
    post.comments = comments(c, &post.url)?;
    post.media = post_media(c, &post.url)?;
    Ok(post)
}

impl PgStore {
    /// Writes everything one crawled page changes, atomically, and says what changed
    /// (`Store::record_page`).
    ///
    /// # Errors
    /// The server failed.
    pub fn record_page(&mut self, o: &PageOutcome) -> Result<Written> {
        let o = o.clone();
        self.write(move |tx| {
            // One reading of the server's clock for everything the page writes.
            let now = ts(server_now(tx)?);
            for f in &o.fetches {
                put_fetch(tx, Some(o.blog_id), f)?;
            }
            let mut response_id = match &o.response {
                Some(r) => {
                    for hop in &o.redirects {
                        put_response(tx, o.blog_id, hop)?;
                    }
                    Some(put_response(tx, o.blog_id, r)?)
                }
                None => o.reused_response,
            };
            if let Some(r) = &o.rendered {
                response_id = Some(put_response(tx, o.blog_id, r)?);
            }
            let mut written = Written::default();
            if let Some(p) = &o.post {
                written.post = Some(put_post(tx, o.blog_id, p, response_id, &now)?);
            }
            if let Some(w) = &o.comments {
                (written.new_comments, written.edited_comments) = put_comments(tx, w, &now)?;
            }
            if o.gone {
                written.gone = tx.execute(
                    "UPDATE posts SET gone_at = $2 WHERE url = $1 AND gone_at IS NULL",
                    &[&o.url, &now],
                )? == 1;
            }
            written.new_post_links = put_links(tx, o.blog_id, &o.links)?;
            put_state(tx, &o, &now)?;
            Ok(written)
        })
    }

    /// Stores comments of a post read from a comment feed, already reconciled. Returns (new,
    /// edited).
    ///
    /// # Errors
    /// The server failed.
    pub fn save_comments(&mut self, w: &CommentWrite) -> Result<(u32, u32)> {
        let w = w.clone();
        self.write(move |tx| {
            let now = ts(server_now(tx)?);
            put_comments(tx, &w, &now)
        })
    }

    /// The comments of a post, oldest first.
    ///
    /// # Errors
    /// The server failed, or a stored value is corrupt.
    pub fn comments(&self, post_url: &str) -> Result<Vec<Comment>> {
        let url = post_url.to_string();
        self.call(move |c| comments(c, &url))
    }

    /// The posts of one blog, or of all blogs, newest first (undated last), with comments.
    ///
    /// # Errors
    /// The server failed, or a stored value is corrupt.
    pub fn posts(&self, blog_id: Option<i64>) -> Result<Vec<Post>> {
        let mut posts = Vec::new();
        self.for_each_post(blog_id, |p| {
            posts.push(p);
            Ok(())
        })?;
        Ok(posts)
    }

    /// Calls `f` on each post of one blog, or of all blogs, in the order of
    /// [`PgStore::posts`], 100 rows of a server-side portal at a time (memory stays flat).
    /// Stops at the first error `f` returns. Returns the number of posts.
    ///
    /// # Errors
    /// The server failed, a stored value is corrupt, or `f` failed.
    pub fn for_each_post(
        &self,
        blog_id: Option<i64>,
        mut f: impl FnMut(Post) -> Result<()>,
    ) -> Result<u64> {
        let rows = self.stream(move |c, rows| {
            let mut tx = c.transaction()?;
            let portal = tx.bind(
                &format!("{POST_SELECT} WHERE $1::BIGINT IS NULL OR p.blog_id = $1 {POST_ORDER}"),
                &[&blog_id],
            )?;
            loop {
                let batch = tx.query_portal(&portal, 100)?;
                if batch.is_empty() {
                    break;
                }
                for row in &batch {
                    if rows.send(whole(&mut tx, row)).is_err() {
                        return Ok(());
                    }
                }
            }
            Ok(())
        })?;
        let mut n = 0;
        for post in rows {
            f(post?)?;
            n += 1;
        }
        Ok(n)
    }

    /// The number of archived posts of one blog (gone ones included).
    ///
    /// # Errors
    /// The server failed.
    pub fn post_count(&self, blog_id: i64) -> Result<u64> {
        self.call(move |c| {
            Ok(
                c.query_one("SELECT COUNT(*) FROM posts WHERE blog_id = $1", &[&blog_id])?
                    .get::<_, i64>(0) as u64,
            )
        })
    }

    /// The author names and categories/tags of one blog's posts, each once, in the order they
    /// first appear in [`PgStore::for_each_post`]'s order.
    ///
    /// # Errors
    /// The server failed.
    pub fn authors_and_tags(&self, blog_id: i64) -> Result<(Vec<String>, Vec<String>)> {
        let lists: Vec<(Vec<String>, Vec<String>)> = self.call(move |c| {
            Ok(c.query(
                &format!("SELECT p.authors, p.tags FROM posts p WHERE p.blog_id = $1 {POST_ORDER}"),
                &[&blog_id],
            )?
            .iter()
            .map(|r| (parse_list(r.get(0)), parse_list(r.get(1))))
            .collect())
        })?;
        let (mut authors, mut tags) = (Vec::new(), Vec::new());
        let (mut seen_a, mut seen_t) = (HashSet::new(), HashSet::new());
        for (a, t) in lists {
            authors.extend(a.into_iter().filter(|a| seen_a.insert(a.clone())));
            tags.extend(t.into_iter().filter(|t| seen_t.insert(t.clone())));
        }
        Ok((authors, tags))
    }

    /// One post by its URL, with its comments and media.
    ///
    /// # Errors
    /// The server failed, or a stored value is corrupt.
    pub fn post(&self, url: &str) -> Result<Option<Post>> {
        let url = url.to_string();
        self.call(move |c| {
            let Some(row) = c.query_opt(&format!("{POST_SELECT} WHERE p.url = $1"), &[&url])?
            else {
                return Ok(None);
            };
            whole(c, &row).map(Some)
        })
    }

    /// True when a post of that URL is archived.
    ///
    /// # Errors
    /// The server failed.
    pub fn has_post(&self, url: &str) -> Result<bool> {
        let url = url.to_string();
        self.call(move |c| {
            Ok(c.query_opt("SELECT 1 FROM posts WHERE url = $1", &[&url])?
                .is_some())
        })
    }

    /// The permalinks of a blog's archived posts that are not gone.
    ///
    /// # Errors
    /// The server failed.
    pub fn post_urls(&self, blog_id: i64) -> Result<Vec<String>> {
        self.call(move |c| {
            Ok(c.query(
                "SELECT url FROM posts WHERE blog_id = $1 AND gone_at IS NULL ORDER BY url",
                &[&blog_id],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect())
        })
    }

    /// Up to `n` posts of a blog whose comments are due for a check at `now`, the longest
    /// overdue first (`Store::due_comment_checks`).
    ///
    /// # Errors
    /// The server failed.
    pub fn due_comment_checks(
        &self,
        blog_id: i64,
        now: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<CommentCheck>> {
        let (now, n) = (ts(now), n as i64);
        self.call(move |c| {
            c.query(
                "SELECT p.url, p.comments_feed, p.published,
                        (SELECT COUNT(*) FROM comments c WHERE c.post_url = p.url)
                 FROM posts p
                 WHERE p.blog_id = $1 AND p.comments_closed = 0 AND p.gone_at IS NULL
                   AND ((p.next_comment_check IS NULL AND p.last_comment_check IS NULL)
                        OR p.next_comment_check <= $2)
                 ORDER BY p.next_comment_check IS NOT NULL, p.next_comment_check, p.published, p.url
                 LIMIT $3",
                &[&blog_id, &now, &n],
            )?
            .iter()
            .map(|r| {
                Ok(CommentCheck {
                    url: r.get(0),
                    comments_feed: r.get(1),
                    published: local_time(r, 2)?,
                    comments: r.get::<_, i64>(3) as u64,
                })
            })
            .collect()
        })
    }

    /// Records a comment check of a post and the next one (`None`: no more).
    ///
    /// # Errors
    /// The server failed.
    pub fn set_comment_check(
        &mut self,
        url: &str,
        checked_at: DateTime<Utc>,
        next: Option<DateTime<Utc>>,
        closed: bool,
    ) -> Result<()> {
        let (url, checked_at, next) = (url.to_string(), ts(checked_at), next.map(ts));
        self.call(move |c| {
            c.execute(
                "UPDATE posts SET last_comment_check = $2, next_comment_check = $3,
                   comments_closed = GREATEST(comments_closed, $4) WHERE url = $1",
                &[&url, &checked_at, &next, &i64::from(closed)],
            )?;
            Ok(())
        })
    }

    /// Earlier versions of a post, oldest first.
    ///
    /// # Errors
    /// The server failed, or a stored time is corrupt.
    pub fn post_versions(&self, url: &str) -> Result<Vec<PostVersion>> {
        let url = url.to_string();
        self.call(move |c| {
            c.query(
                "SELECT version, title, content_html, content_text, fetched_at, replaced_at FROM post_versions WHERE post_url = $1 ORDER BY version",
                &[&url],
            )?
            .iter()
            .map(|r| {
                Ok(PostVersion {
                    version: count(r.get(0)),
                    title: r.get(1),
                    content_html: r.get(2),
                    content_text: r.get(3),
                    fetched_at: time(r, 4)?.context("version without fetched_at")?,
                    replaced_at: time(r, 5)?.context("version without replaced_at")?,
                })
            })
            .collect()
        })
    }

    /// Earlier texts of a post's comments: (key, text), oldest first.
    ///
    /// # Errors
    /// The server failed.
    pub fn comment_versions(&self, post_url: &str) -> Result<Vec<(String, String)>> {
        let url = post_url.to_string();
        self.call(move |c| {
            Ok(c.query(
                "SELECT key, content_text FROM comment_versions WHERE post_url = $1 ORDER BY id",
                &[&url],
            )?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
        })
    }
}
