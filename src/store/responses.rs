//! Raw responses (bodies deflate-compressed) and the fetch log: every request everblog makes
//! is logged, and every response that arrived is kept, so an archive can be re-extracted and
//! replayed without the live site.

use super::{compress, decompress, now, ts, utc_req, Store};
use crate::fetch::{FetchRecord, Fetched, Response};
use anyhow::Result;
use rusqlite::{params, OptionalExtension, Transaction};

pub(super) fn put_fetch(tx: &Transaction<'_>, blog_id: Option<i64>, f: &FetchRecord) -> Result<()> {
    tx.execute(
        "INSERT INTO fetch_log (blog_id, url, status, bytes, elapsed_ms, fetched_at, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            blog_id,
            f.url,
            f.status,
            f.bytes.map(|b| b as i64),
            f.elapsed_ms as i64,
            ts(f.fetched_at),
            f.error
        ],
    )?;
    Ok(())
}

pub(super) fn put_response(tx: &Transaction<'_>, blog_id: i64, r: &Response) -> Result<i64> {
    tx.execute(
        "INSERT INTO responses (blog_id, url, final_url, status, headers, body, body_len, fetched_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            blog_id,
            r.url,
            r.final_url,
            r.status,
            serde_json::to_string(&r.headers)?,
            compress(&r.body),
            r.body.len() as i64,
            ts(r.fetched_at)
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

/// When the response `id` arrived, as stored (now, if there is no such response).
pub(super) fn response_time(tx: &Transaction<'_>, id: Option<i64>) -> Result<String> {
    Ok(match id {
        Some(id) => tx.query_row(
            "SELECT fetched_at FROM responses WHERE id = ?1",
            [id],
            |r| r.get(0),
        )?,
        None => now(),
    })
}

/// A response worth keeping: one arrived, and it is neither a 304 (no body: the earlier
/// response stands) nor a 429/503 (the host asked us to come back later).
fn keepable(f: &Fetched) -> Option<&Response> {
    f.response
        .as_ref()
        .filter(|r| !matches!(r.status, 304 | 429 | 503))
}

impl Store {
    /// Logs every request of a fetch (robots.txt, redirect hops, the final request) and keeps
    /// its response when one worth keeping arrived (any status but 304, 429 and 503), in one
    /// transaction. Returns the kept response's id.
    pub fn keep_fetched(&mut self, blog_id: i64, f: &Fetched) -> Result<Option<i64>> {
        self.write(|tx| {
            for hop in &f.hops {
                put_fetch(tx, Some(blog_id), hop)?;
            }
            put_fetch(tx, Some(blog_id), &f.record)?;
            keepable(f)
                .map(|r| put_response(tx, blog_id, r))
                .transpose()
        })
    }

    /// Stores a response that no request of ours produced (a page rendered by Chromium).
    /// Returns the response id.
    pub fn keep_response(&mut self, blog_id: i64, response: &Response) -> Result<i64> {
        self.write(|tx| put_response(tx, blog_id, response))
    }

    /// Logs requests that produced nothing to keep, or that belong to no blog yet (`archive
    /// add` discovering a feed).
    pub fn log_fetches<'a>(
        &mut self,
        blog_id: Option<i64>,
        records: impl IntoIterator<Item = &'a FetchRecord>,
    ) -> Result<()> {
        self.write(|tx| {
            for r in records {
                put_fetch(tx, blog_id, r)?;
            }
            Ok(())
        })
    }

    /// The latest stored response for `url` of a blog, whatever its status: (id, response).
    pub fn latest_response(&self, blog_id: i64, url: &str) -> Result<Option<(i64, Response)>> {
        let row = self
            .conn
            .query_row(
                "SELECT id, url, final_url, status, headers, body, fetched_at FROM responses
                 WHERE blog_id = ?1 AND url = ?2 ORDER BY id DESC LIMIT 1",
                params![blog_id, url],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, u16>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, Vec<u8>>(5)?,
                        utc_req(r, 6)?,
                    ))
                },
            )
            .optional()?;
        let Some((id, url, final_url, status, headers, body, fetched_at)) = row else {
            return Ok(None);
        };
        Ok(Some((
            id,
            Response {
                url,
                final_url,
                status,
                headers: serde_json::from_str(&headers).unwrap_or_default(),
                body: decompress(&body)?,
                fetched_at,
            },
        )))
    }

    /// Every URL in the fetch log, in fetch order (all blogs, and `archive add`'s fetches).
    pub fn fetched_urls(&self) -> Result<Vec<String>> {
        self.rows("SELECT url FROM fetch_log ORDER BY id", [], |r| r.get(0))
    }
}
