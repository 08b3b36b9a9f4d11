//! Each post's page requisites and media on PostgreSQL (`post_media`, in page order by its
//! `seq`). Same names, arguments and meaning as `store::media`.

use super::{server_now, PgStore};
use crate::store::sql::{BODY, NOT_REDIRECT, NOT_RENDERED};
use crate::store::{decompress, ts, Media, NewMedia};
use anyhow::{Context, Result};

impl PgStore {
    /// The latest response of a blog for `url` (requested or reached by redirect, renderings
    /// and redirects left out): `(id, status)`.
    ///
    /// # Errors
    /// The server failed.
    pub fn response_for(&self, blog_id: i64, url: &str) -> Result<Option<(i64, u16)>> {
        let url = url.to_string();
        self.call(move |c| {
            c.query_opt(
                &format!(
                    "SELECT id, status FROM responses WHERE blog_id = $1 AND (url = $2 OR final_url = $2)
                       AND {NOT_RENDERED} AND {NOT_REDIRECT}
                     ORDER BY id DESC LIMIT 1"
                ),
                &[&blog_id, &url],
            )?
            .map(|r| {
                Ok((
                    r.get(0),
                    u16::try_from(r.get::<_, i64>(1)).context("stored status out of range")?,
                ))
            })
            .transpose()
        })
    }

    /// The body of a stored response, inflated.
    ///
    /// # Errors
    /// The server failed or the body did not inflate.
    pub fn response_body(&self, id: i64) -> Result<Option<Vec<u8>>> {
        self.call(move |c| {
            c.query_opt(
                &format!("SELECT {BODY} FROM responses WHERE id = $1"),
                &[&id],
            )?
            .map(|r| decompress(r.get(0)))
            .transpose()
        })
    }

    /// Bytes of distinct bodies the blog's posts' media hold (`[media] max_blog_mb` counts
    /// these).
    ///
    /// # Errors
    /// The server failed.
    pub fn media_bytes(&self, blog_id: i64) -> Result<u64> {
        self.call(move |c| {
            let n: i64 = c
                .query_one(
                    "SELECT COALESCE(SUM(bytes), 0)::BIGINT FROM blobs WHERE sha256 IN (
                       SELECT r.sha256 FROM post_media m JOIN posts p ON p.url = m.post_url
                       JOIN responses r ON r.id = m.response_id WHERE p.blog_id = $1)",
                    &[&blog_id],
                )?
                .get(0);
            Ok(n as u64)
        })
    }

    /// Posts of a blog whose media are still to capture: `(post URL, its response)`, at most
    /// `limit`, oldest archived first.
    ///
    /// # Errors
    /// The server failed.
    pub fn posts_without_media(&self, blog_id: i64, limit: usize) -> Result<Vec<(String, i64)>> {
        let limit = limit as i64;
        self.call(move |c| {
            Ok(c.query(
                "SELECT url, response_id FROM posts
                 WHERE blog_id = $1 AND response_id IS NOT NULL
                   AND (media_at IS NULL OR media_at < fetched_at)
                 ORDER BY fetched_at LIMIT $2",
                &[&blog_id, &limit],
            )?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
        })
    }

    /// Replaces the media recorded for a post and marks them captured now, in one
    /// transaction. A URL listed twice keeps its last place, as on SQLite.
    ///
    /// # Errors
    /// The server failed.
    pub fn set_post_media(&mut self, post_url: &str, media: &[NewMedia]) -> Result<()> {
        // A URL listed twice keeps its last entry, in that entry's place (as writing them one
        // by one, each replacing the one before, does); then one insert from arrays, in page
        // order, since each statement is a round trip.
        let last: std::collections::HashMap<&str, usize> = media
            .iter()
            .enumerate()
            .map(|(i, m)| (m.url.as_str(), i))
            .collect();
        let kept: Vec<&NewMedia> = media
            .iter()
            .enumerate()
            .filter(|(i, m)| last[m.url.as_str()] == *i)
            .map(|(_, m)| m)
            .collect();
        let post_url = post_url.to_string();
        let urls: Vec<String> = kept.iter().map(|m| m.url.clone()).collect();
        let kinds: Vec<&'static str> = kept.iter().map(|m| m.kind.as_str()).collect();
        let responses: Vec<Option<i64>> = kept.iter().map(|m| m.response_id).collect();
        let states: Vec<&'static str> = kept.iter().map(|m| m.state.as_str()).collect();
        let reasons: Vec<Option<String>> = kept.iter().map(|m| m.reason.clone()).collect();
        self.write(move |tx| {
            tx.execute("DELETE FROM post_media WHERE post_url = $1", &[&post_url])?;
            tx.execute(
                "INSERT INTO post_media (post_url, url, kind, response_id, state, reason)
                 SELECT $1, l.url, l.kind, l.response_id, l.state, l.reason
                 FROM unnest($2::TEXT[], $3::TEXT[], $4::BIGINT[], $5::TEXT[], $6::TEXT[])
                   WITH ORDINALITY AS l(url, kind, response_id, state, reason, n)
                 ORDER BY l.n",
                &[&post_url, &urls, &kinds, &responses, &states, &reasons],
            )?;
            let now = ts(server_now(tx)?);
            tx.execute(
                "UPDATE posts SET media_at = $2 WHERE url = $1",
                &[&post_url, &now],
            )?;
            Ok(())
        })
    }

    /// The media recorded for a post, in page order.
    ///
    /// # Errors
    /// The server failed, or a stored kind or state is unknown.
    pub fn post_media(&self, post_url: &str) -> Result<Vec<Media>> {
        let post_url = post_url.to_string();
        self.call(move |c| post_media(c, &post_url))
    }
}

/// The media of a post on any client (a transaction streaming posts uses it too).
pub(super) fn post_media(
    c: &mut impl postgres::GenericClient,
    post_url: &str,
) -> Result<Vec<Media>> {
    c.query(
        "SELECT m.url, m.kind, m.state, m.reason, r.status, r.sha256, r.headers, r.body_len
         FROM post_media m LEFT JOIN responses r ON r.id = m.response_id
         WHERE m.post_url = $1 ORDER BY m.seq",
        &[&post_url],
    )?
    .iter()
    .map(|r| {
        let headers: Option<String> = r.get(6);
        Ok(Media {
            url: r.get(0),
            kind: r.get::<_, String>(1).parse()?,
            state: r.get::<_, String>(2).parse()?,
            reason: r.get(3),
            status: r
                .get::<_, Option<i64>>(4)
                .and_then(|s| u16::try_from(s).ok()),
            sha256: r.get(5),
            mime: headers.and_then(|h| {
                let h: Vec<(String, String)> = serde_json::from_str(&h).ok()?;
                crate::fetch::mime_type(&h)
            }),
            bytes: r.get::<_, Option<i64>>(7).map(|b| b as u64),
        })
    })
    .collect()
}
