//! Each post's page requisites and media (`post_media`): which URL, what it is, the response
//! that holds it (bodies stored once by SHA-256 in `blobs`) or why it is not kept.

use super::sql::{BODY, NOT_REDIRECT, NOT_RENDERED};
use super::{now, Store};
use crate::core::requisites::Kind;
use crate::store::{Media, MediaState};
use anyhow::Result;
use rusqlite::{params, OptionalExtension};

/// One line of `post_media` to write.
#[derive(Debug, Clone)]
pub struct NewMedia {
    /// Absolute URL.
    pub url: String,
    /// What it is.
    pub kind: Kind,
    /// The response holding it, when stored.
    pub response_id: Option<i64>,
    /// Stored, failed or skipped.
    pub state: MediaState,
    /// Why not stored.
    pub reason: Option<String>,
}

/// A `post_media` row joined with its response: url, kind, state, reason, status, sha256,
/// headers (JSON), bytes.
type MediaRow = (
    String,
    String,
    String,
    Option<String>,
    Option<u16>,
    Option<String>,
    Option<String>,
    Option<i64>,
);

impl Store {
    /// The latest response of a blog for `url` (requested or reached by redirect):
    /// `(id, status)`, so a requisite shared by many posts is fetched once.
    ///
    /// # Errors
    /// The database failed.
    pub fn response_for(&self, blog_id: i64, url: &str) -> Result<Option<(i64, u16)>> {
        if let Some(pg) = &self.pg {
            return pg.response_for(blog_id, url);
        }
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT id, status FROM responses WHERE blog_id = ?1 AND (url = ?2 OR final_url = ?2)
                       AND {NOT_RENDERED} AND {NOT_REDIRECT}
                     ORDER BY id DESC LIMIT 1"
                ),
                params![blog_id, url],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }

    /// The body of a stored response.
    ///
    /// # Errors
    /// The database failed or the body did not inflate.
    pub fn response_body(&self, id: i64) -> Result<Option<Vec<u8>>> {
        if let Some(pg) = &self.pg {
            return pg.response_body(id);
        }
        let body: Option<Vec<u8>> = self
            .conn
            .query_row(
                &format!("SELECT {BODY} FROM responses WHERE id = ?1"),
                [id],
                |r| r.get(0),
            )
            .optional()?;
        body.map(|b| super::decompress(&b)).transpose()
    }

    /// Bytes of distinct bodies the blog's posts' media hold (the `[media] max_blog_mb`
    /// budget counts these).
    ///
    /// # Errors
    /// The database failed.
    pub fn media_bytes(&self, blog_id: i64) -> Result<u64> {
        if let Some(pg) = &self.pg {
            return pg.media_bytes(blog_id);
        }
        let n: i64 = self.conn.query_row(
            "SELECT COALESCE(SUM(bytes), 0) FROM blobs WHERE sha256 IN (
               SELECT r.sha256 FROM post_media m JOIN posts p ON p.url = m.post_url
               JOIN responses r ON r.id = m.response_id WHERE p.blog_id = ?1)",
            [blog_id],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    /// Posts of a blog whose media are still to capture (never captured, or their page was
    /// archived again since): `(post URL, the response it was extracted from)`, at most
    /// `limit`, oldest archived first.
    ///
    /// # Errors
    /// The database failed.
    pub fn posts_without_media(&self, blog_id: i64, limit: usize) -> Result<Vec<(String, i64)>> {
        if let Some(pg) = &self.pg {
            return pg.posts_without_media(blog_id, limit);
        }
        self.rows(
            "SELECT url, response_id FROM posts
             WHERE blog_id = ?1 AND response_id IS NOT NULL
               AND (media_at IS NULL OR media_at < fetched_at)
             ORDER BY fetched_at LIMIT ?2",
            params![blog_id, limit as i64],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    /// Replaces the media recorded for a post and marks them captured now, in one transaction.
    ///
    /// # Errors
    /// The database failed.
    pub fn set_post_media(&mut self, post_url: &str, media: &[NewMedia]) -> Result<()> {
        if let Some(pg) = &mut self.pg {
            return pg.set_post_media(post_url, media);
        }
        self.write(|tx| {
            tx.execute("DELETE FROM post_media WHERE post_url = ?1", [post_url])?;
            for m in media {
                tx.execute(
                    "INSERT OR REPLACE INTO post_media (post_url, url, kind, response_id, state, reason)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        post_url,
                        m.url,
                        m.kind.as_str(),
                        m.response_id,
                        m.state.as_str(),
                        m.reason
                    ],
                )?;
            }
            tx.execute(
                "UPDATE posts SET media_at = ?2 WHERE url = ?1",
                params![post_url, now()],
            )?;
            Ok(())
        })
    }

    /// The media recorded for a post, in page order.
    ///
    /// # Errors
    /// The database failed.
    pub fn post_media(&self, post_url: &str) -> Result<Vec<Media>> {
        if let Some(pg) = &self.pg {
            return pg.post_media(post_url);
        }
        let rows: Vec<MediaRow> = self.rows(
            "SELECT m.url, m.kind, m.state, m.reason, r.status, r.sha256, r.headers, r.body_len
             FROM post_media m LEFT JOIN responses r ON r.id = m.response_id
             WHERE m.post_url = ?1 ORDER BY m.rowid",
            [post_url],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                ))
            },
        )?;
        let mut out = Vec::with_capacity(rows.len());
        for (url, kind, state, reason, status, sha256, headers, bytes) in rows {
            let mime = headers.and_then(|h| {
                let h: Vec<(String, String)> = serde_json::from_str(&h).ok()?;
                crate::fetch::mime_type(&h)
            });
            out.push(Media {
                url,
                kind: kind.parse()?,
                state: state.parse()?,
                reason,
                status,
                sha256,
                mime,
                bytes: bytes.map(|b| b as u64),
            });
        }
        Ok(out)
    }
}
