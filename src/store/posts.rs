//! Posts and comments: everything one crawled page changes is written in one transaction
//! ([`Store::record_page`]); archived text is never overwritten silently (a changed post or
//! comment keeps its previous text as a version); posts and their threads are read back for
//! `show` and the exports.

use super::frontier::{put_links, put_state};
use super::responses::{put_fetch, put_response, response_time};
use super::{
    json_list, local_col, now, parse_list, ts, utc_col, utc_req, Comment, CommentCheck,
    CommentWrite, PageOutcome, Post, PostVersion, PostWrite, Written,
};
use anyhow::Result;
use chrono::{DateTime, Utc};
use rusqlite::{params, OptionalExtension, Transaction};
use std::collections::HashSet;

/// Inserts or updates a post. When the archived title or text differs from the new one, the
/// archived one is kept in `post_versions` first and the version number goes up: archived
/// content is never overwritten silently. A post found again clears its `gone_at`.
fn put_post(
    tx: &Transaction<'_>,
    blog_id: i64,
    p: &super::NewPost,
    response_id: Option<i64>,
) -> Result<PostWrite> {
    let fetched_at = response_time(tx, response_id)?;
    let old: Option<(Option<String>, String, u32)> = tx
        .query_row(
            "SELECT title, content_text, version FROM posts WHERE url = ?1",
            [&p.url],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let change = match &old {
        None => PostWrite::New,
        Some((title, text, _)) if *title == p.title && *text == p.content_text => PostWrite::Same,
        Some((_, _, version)) => {
            tx.execute(
                "INSERT INTO post_versions (post_url, version, title, authors, published, updated, content_html, content_text, response_id, fetched_at, replaced_at)
                 SELECT url, version, title, authors, published, updated, content_html, content_text, response_id, fetched_at, ?2 FROM posts WHERE url = ?1",
                params![p.url, now()],
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
        params![
            blog_id,
            p.url,
            p.title,
            json_list(&p.authors),
            p.published.map(|d| d.to_rfc3339()),
            p.content_html,
            p.content_text,
            response_id,
            fetched_at,
            now(),
            p.updated.map(|d| d.to_rfc3339()),
            p.published_raw,
            serde_json::to_string(&p.gaps)?,
            version,
            p.comments_feed,
            p.comments_declared,
            p.comments_closed,
            p.next_comment_check.map(super::ts),
            json_list(&p.tags),
            p.extracted_by.map(|b| serde_json::to_string(&b)).transpose()?
        ],
    )?;
    Ok(change)
}

/// Marks an archived post gone (first time only). True when it was newly marked.
fn put_gone(tx: &Transaction<'_>, url: &str) -> Result<bool> {
    Ok(tx.execute(
        "UPDATE posts SET gone_at = ?2 WHERE url = ?1 AND gone_at IS NULL",
        params![url, now()],
    )? == 1)
}

/// Applies a reconciled comment write: deletes, then upserts by key. A comment whose archived
/// text (from the same source) differs keeps that text in `comment_versions` first. Returns
/// (new, edited) comment counts.
fn put_comments(tx: &Transaction<'_>, w: &CommentWrite) -> Result<(u32, u32)> {
    let (mut added, mut edited) = (0, 0);
    for key in &w.delete {
        tx.execute(
            "DELETE FROM comments WHERE post_url = ?1 AND key = ?2",
            params![w.post_url, key],
        )?;
    }
    let mut st = tx.prepare_cached(
        "INSERT INTO comments (post_url, key, author, published, published_raw, content_html, content_text, parent_key, source, position)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (post_url, key) DO UPDATE SET author = excluded.author, published = COALESCE(excluded.published, comments.published),
           published_raw = excluded.published_raw, content_html = excluded.content_html, content_text = excluded.content_text,
           parent_key = COALESCE(excluded.parent_key, comments.parent_key), source = excluded.source, position = excluded.position",
    )?;
    for c in &w.upsert {
        let old: Option<(String, super::CommentSource)> = tx
            .query_row(
                "SELECT content_text, source FROM comments WHERE post_url = ?1 AND key = ?2",
                params![w.post_url, c.id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        match old {
            None => added += 1,
            Some((text, source)) if text != c.content_text && source == c.source => {
                tx.execute(
                    "INSERT INTO comment_versions (post_url, key, author, content_html, content_text, replaced_at)
                     SELECT post_url, key, author, content_html, content_text, ?3 FROM comments WHERE post_url = ?1 AND key = ?2",
                    params![w.post_url, c.id, now()],
                )?;
                edited += 1;
            }
            Some(_) => {}
        }
        st.execute(params![
            w.post_url,
            c.id,
            c.author,
            c.published.map(|d| d.to_rfc3339()),
            c.published_raw,
            c.content_html,
            c.content_text,
            c.parent,
            c.source,
            c.position
        ])?;
    }
    Ok((added, edited))
}

const POST_SELECT: &str = "SELECT p.url, b.home_url, p.title, p.authors, p.published, p.content_html, p.content_text, p.fetched_at,
       p.updated, p.published_raw, p.gaps, p.version, p.gone_at, p.tags, p.extracted_by
     FROM posts p JOIN blogs b ON b.id = p.blog_id";

const POST_ORDER: &str = "ORDER BY p.blog_id, p.published IS NULL, p.published DESC, p.url";

fn post_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Post> {
    Ok(Post {
        url: r.get(0)?,
        blog: r.get(1)?,
        title: r.get(2)?,
        authors: parse_list(r.get(3)?),
        published: local_col(r, 4)?,
        content_html: r.get(5)?,
        content_text: r.get(6)?,
        fetched_at: utc_req(r, 7)?,
        updated: local_col(r, 8)?,
        published_raw: r.get(9)?,
        gaps: serde_json::from_str(&r.get::<_, String>(10)?).unwrap_or_default(),
        version: r.get(11)?,
        gone_at: utc_col(r, 12)?,
        tags: parse_list(r.get(13)?),
        extracted_by: r
            .get::<_, Option<String>>(14)?
            .and_then(|b| serde_json::from_str(&b).ok()),
        comments: Vec::new(),
        media: Vec::new(),
    })
}

impl super::SqliteStore {
    pub(super) fn record_page(&mut self, o: &PageOutcome) -> Result<Written> {
        self.write(|tx| {
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
                written.post = Some(put_post(tx, o.blog_id, p, response_id)?);
            }
            if let Some(w) = &o.comments {
                (written.new_comments, written.edited_comments) = put_comments(tx, w)?;
            }
            if o.gone {
                written.gone = put_gone(tx, &o.url)?;
            }
            written.new_post_links = put_links(tx, o.blog_id, &o.links)?;
            put_state(
                tx,
                o.blog_id,
                &o.url,
                o.state,
                o.post_links,
                o.retry_at,
                o.error.as_deref(),
            )?;
            Ok(written)
        })
    }

    pub(super) fn save_comments(&mut self, w: &CommentWrite) -> Result<(u32, u32)> {
        self.write(|tx| put_comments(tx, w))
    }

    pub(super) fn comments(&self, post_url: &str) -> Result<Vec<Comment>> {
        self.rows(
            "SELECT key, author, published, published_raw, content_html, content_text, parent_key, source, position FROM comments
             WHERE post_url = ?1 ORDER BY published IS NULL, published, position, key",
            [post_url],
            |r| {
            Ok(Comment {
                id: r.get(0)?,
                author: r.get(1)?,
                published: local_col(r, 2)?,
                published_raw: r.get(3)?,
                content_html: r.get(4)?,
                content_text: r.get(5)?,
                parent: r.get(6)?,
                source: r.get(7)?,
                position: r.get(8)?,
            })
        },
        )
    }

    pub(super) fn posts(&self, blog_id: Option<i64>) -> Result<Vec<Post>> {
        let mut posts = Vec::new();
        self.for_each_post(blog_id, |p| {
            posts.push(p);
            Ok(())
        })?;
        Ok(posts)
    }

    pub(super) fn for_each_post(
        &self,
        blog_id: Option<i64>,
        mut f: impl FnMut(Post) -> Result<()>,
    ) -> Result<u64> {
        let mut st = self.conn.prepare(&format!(
            "{POST_SELECT} WHERE ?1 IS NULL OR p.blog_id = ?1 {POST_ORDER}"
        ))?;
        let mut rows = st.query([blog_id])?;
        let mut n = 0;
        while let Some(row) = rows.next()? {
            let mut post = post_from_row(row)?;
            post.comments = self.comments(&post.url)?;
            post.media = self.post_media(&post.url)?;
            f(post)?;
            n += 1;
        }
        Ok(n)
    }

    pub(super) fn post_count(&self, blog_id: i64) -> Result<u64> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM posts WHERE blog_id = ?1",
            [blog_id],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    pub(super) fn authors_and_tags(&self, blog_id: i64) -> Result<(Vec<String>, Vec<String>)> {
        let lists = self.rows(
            &format!("SELECT p.authors, p.tags FROM posts p WHERE p.blog_id = ?1 {POST_ORDER}"),
            [blog_id],
            |r| Ok((parse_list(r.get(0)?), parse_list(r.get(1)?))),
        )?;
        let (mut authors, mut tags) = (Vec::new(), Vec::new());
        let (mut seen_a, mut seen_t) = (HashSet::new(), HashSet::new());
        for (a, t) in lists {
            for a in a {
                if seen_a.insert(a.clone()) {
                    authors.push(a);
                }
            }
            for t in t {
                if seen_t.insert(t.clone()) {
                    tags.push(t);
                }
            }
        }
        Ok((authors, tags))
    }

    pub(super) fn post(&self, url: &str) -> Result<Option<Post>> {
        let post = self
            .conn
            .query_row(
                &format!("{POST_SELECT} WHERE p.url = ?1"),
                [url],
                post_from_row,
            )
            .optional()?;
        let Some(mut post) = post else {
            return Ok(None);
        };
        post.comments = self.comments(&post.url)?;
        post.media = self.post_media(&post.url)?;
        Ok(Some(post))
    }

    pub(super) fn has_post(&self, url: &str) -> Result<bool> {
        Ok(self
            .conn
            .query_row("SELECT 1 FROM posts WHERE url = ?1", [url], |_| Ok(()))
            .optional()?
            .is_some())
    }

    pub(super) fn post_urls(&self, blog_id: i64) -> Result<Vec<String>> {
        self.rows(
            "SELECT url FROM posts WHERE blog_id = ?1 AND gone_at IS NULL ORDER BY url",
            [blog_id],
            |r| r.get(0),
        )
    }

    pub(super) fn due_comment_checks(
        &self,
        blog_id: i64,
        now: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<CommentCheck>> {
        self.rows(
            "SELECT p.url, p.comments_feed, p.published,
                    (SELECT COUNT(*) FROM comments c WHERE c.post_url = p.url)
             FROM posts p
             WHERE p.blog_id = ?1 AND p.comments_closed = 0 AND p.gone_at IS NULL
               AND ((p.next_comment_check IS NULL AND p.last_comment_check IS NULL)
                    OR p.next_comment_check <= ?2)
             ORDER BY p.next_comment_check IS NOT NULL, p.next_comment_check, p.published, p.url
             LIMIT ?3",
            params![blog_id, ts(now), n as i64],
            |r| {
                Ok(CommentCheck {
                    url: r.get(0)?,
                    comments_feed: r.get(1)?,
                    published: local_col(r, 2)?,
                    comments: r.get::<_, i64>(3)? as u64,
                })
            },
        )
    }

    pub(super) fn set_comment_check(
        &mut self,
        url: &str,
        checked_at: DateTime<Utc>,
        next: Option<DateTime<Utc>>,
        closed: bool,
    ) -> Result<()> {
        self.conn.execute(
            "UPDATE posts SET last_comment_check = ?2, next_comment_check = ?3,
               comments_closed = MAX(comments_closed, ?4) WHERE url = ?1",
            params![url, ts(checked_at), next.map(ts), closed],
        )?;
        Ok(())
    }

    pub(super) fn post_versions(&self, url: &str) -> Result<Vec<PostVersion>> {
        self.rows(
            "SELECT version, title, content_html, content_text, fetched_at, replaced_at FROM post_versions WHERE post_url = ?1 ORDER BY version",
            [url],
            |r| {
            Ok(PostVersion {
                version: r.get(0)?,
                title: r.get(1)?,
                content_html: r.get(2)?,
                content_text: r.get(3)?,
                fetched_at: utc_req(r, 4)?,
                replaced_at: utc_req(r, 5)?,
            })
        },
        )
    }

    pub(super) fn comment_versions(&self, post_url: &str) -> Result<Vec<(String, String)>> {
        self.rows(
            "SELECT key, content_text FROM comment_versions WHERE post_url = ?1 ORDER BY id",
            [post_url],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }
}
