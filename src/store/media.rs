//! Each post's page requisites and media (`post_media`): which URL, what it is, the response
//! that holds it (bodies stored once by SHA-256 in `blobs`) or why it is not kept.

use super::now;
use super::sql::{BODY, NOT_REDIRECT, NOT_RENDERED};
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

impl super::SqliteStore {
    pub(super) fn response_for(&self, blog_id: i64, url: &str) -> Result<Option<(i64, u16)>> {
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

    pub(super) fn response_body(&self, id: i64) -> Result<Option<Vec<u8>>> {
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

    pub(super) fn media_bytes(&self, blog_id: i64) -> Result<u64> {
        let n: i64 = self.conn.query_row(
            "SELECT COALESCE(SUM(bytes), 0) FROM blobs WHERE sha256 IN (
               SELECT r.sha256 FROM post_media m JOIN posts p ON p.url = m.post_url
               JOIN responses r ON r.id = m.response_id WHERE p.blog_id = ?1)",
            [blog_id],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    pub(super) fn posts_without_media(
        &self,
        blog_id: i64,
        limit: usize,
    ) -> Result<Vec<(String, i64)>> {
        self.rows(
            "SELECT url, response_id FROM posts
             WHERE blog_id = ?1 AND response_id IS NOT NULL
               AND (media_at IS NULL OR media_at < fetched_at)
             ORDER BY fetched_at LIMIT ?2",
            params![blog_id, limit as i64],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    pub(super) fn set_post_media(&mut self, post_url: &str, media: &[NewMedia]) -> Result<()> {
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

    pub(super) fn post_media(&self, post_url: &str) -> Result<Vec<Media>> {
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
