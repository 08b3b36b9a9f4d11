//! Raw responses and the fetch log on PostgreSQL: every request logged, every response that
//! arrived kept, bodies once by SHA-256 in `blobs` (deflated, as on SQLite, so an archive moves
//! between the two unchanged). Same names, arguments and meaning as `store::responses`.

use super::{time, PgStore};
use crate::fetch::{FetchRecord, Fetched, Response};
use crate::store::responses::{sha256_hex, NotModified, WarcRoll};
use crate::store::{compress, decompress, ts};
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

use crate::store::sql::{BODY, NOT_REDIRECT};

/// The columns [`response_row`] reads, in its order (the body: its blob's, else its own).
pub(super) fn columns() -> String {
    format!("id, url, final_url, status, headers, {BODY}, fetched_at")
}

/// `(id, response)` from a row of [`columns`], the body inflated.
pub(super) fn response_row(r: &postgres::Row) -> Result<(i64, Response)> {
    let headers: String = r.get(4);
    let body: Vec<u8> = r.get(5);
    Ok((
        r.get(0),
        Response {
            url: r.get(1),
            final_url: r.get(2),
            status: u16::try_from(r.get::<_, i64>(3)).context("stored status out of range")?,
            headers: serde_json::from_str(&headers).unwrap_or_default(),
            body: decompress(&body)?,
            fetched_at: time(r, 6)?.context("response without fetched_at")?,
        },
    ))
}

pub(super) fn put_fetch(
    tx: &mut postgres::Transaction<'_>,
    blog_id: Option<i64>,
    f: &FetchRecord,
) -> Result<()> {
    tx.execute(
        "INSERT INTO fetch_log (blog_id, url, status, bytes, elapsed_ms, fetched_at, error) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            &blog_id,
            &f.url,
            &f.status.map(i64::from),
            &f.bytes.map(|b| b as i64),
            &(f.elapsed_ms as i64),
            &ts(f.fetched_at),
            &f.error,
        ],
    )?;
    Ok(())
}

pub(super) fn put_response(
    tx: &mut postgres::Transaction<'_>,
    blog_id: i64,
    r: &Response,
) -> Result<i64> {
    let sha = sha256_hex(&r.body);
    tx.execute(
        "INSERT INTO blobs (sha256, body, bytes) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        &[&sha, &compress(&r.body), &(r.body.len() as i64)],
    )?;
    Ok(tx
        .query_one(
            "INSERT INTO responses (blog_id, url, final_url, status, headers, body, body_len, fetched_at, sha256)
             VALUES ($1, $2, $3, $4, $5, ''::bytea, $6, $7, $8) RETURNING id",
            &[
                &blog_id,
                &r.url,
                &r.final_url,
                &i64::from(r.status),
                &serde_json::to_string(&r.headers)?,
                &(r.body.len() as i64),
                &ts(r.fetched_at),
                &sha,
            ],
        )?
        .get(0))
}

impl PgStore {
    /// Logs every request of a fetch and keeps its response when one worth keeping arrived
    /// (any status but 304, 429 and 503), after the redirects that led to it, in one
    /// transaction. Returns the kept response's id (`Store::keep_fetched`).
    ///
    /// # Errors
    /// The server failed.
    pub fn keep_fetched(&mut self, blog_id: i64, f: &Fetched) -> Result<Option<i64>> {
        let records: Vec<FetchRecord> = f.hops.iter().chain([&f.record]).cloned().collect();
        let kept = f
            .response
            .as_ref()
            .filter(|r| !matches!(r.status, 304 | 429 | 503))
            .cloned();
        let redirects = if kept.is_some() {
            f.redirects.clone()
        } else {
            Vec::new()
        };
        self.write(move |tx| {
            for r in &records {
                put_fetch(tx, Some(blog_id), r)?;
            }
            let Some(kept) = &kept else { return Ok(None) };
            for r in &redirects {
                put_response(tx, blog_id, r)?;
            }
            put_response(tx, blog_id, kept).map(Some)
        })
    }

    /// Stores a response that no request of ours produced (a page rendered by Chromium).
    /// Returns the response id.
    ///
    /// # Errors
    /// The server failed.
    pub fn keep_response(&mut self, blog_id: i64, response: &Response) -> Result<i64> {
        let response = response.clone();
        self.write(move |tx| put_response(tx, blog_id, &response))
    }

    /// Logs requests that produced nothing to keep, or belong to no blog yet.
    ///
    /// # Errors
    /// The server failed.
    pub fn log_fetches<'a>(
        &mut self,
        blog_id: Option<i64>,
        records: impl IntoIterator<Item = &'a FetchRecord>,
    ) -> Result<()> {
        let records: Vec<FetchRecord> = records.into_iter().cloned().collect();
        self.write(move |tx| {
            for r in &records {
                put_fetch(tx, blog_id, r)?;
            }
            Ok(())
        })
    }

    /// The latest stored response for `url` of a blog, redirects left out: (id, response).
    ///
    /// # Errors
    /// The server failed, or the body did not inflate.
    pub fn latest_response(&self, blog_id: i64, url: &str) -> Result<Option<(i64, Response)>> {
        let url = url.to_string();
        self.call(move |c| {
            c.query_opt(
                &format!(
                    "SELECT {} FROM responses
                     WHERE blog_id = $1 AND url = $2 AND {NOT_REDIRECT}
                     ORDER BY id DESC LIMIT 1",
                    columns()
                ),
                &[&blog_id, &url],
            )?
            .as_ref()
            .map(response_row)
            .transpose()
        })
    }

    /// Calls `f` with every stored response, oldest first, one at a time (rows stream from the
    /// server: memory stays flat): `(id, response)`; `blog` limits it to one blog, `after` to
    /// ids above it. Returns how many there were (`Store::for_each_capture`). Not retried on
    /// a lost connection: `f` has seen part of the rows.
    ///
    /// # Errors
    /// The server failed, a body did not inflate, or `f` failed.
    pub fn for_each_capture(
        &self,
        blog: Option<i64>,
        after: i64,
        mut f: impl FnMut(i64, Response) -> Result<()>,
    ) -> Result<u64> {
        let rows = self.stream(move |c, rows| {
            let it = c.query_raw(
                &format!(
                    "SELECT {} FROM responses WHERE ($1::BIGINT IS NULL OR blog_id = $1) AND id > $2 ORDER BY id",
                    columns()
                ),
                [&blog as &(dyn postgres::types::ToSql + Sync), &after],
            )?;
            let mut it = it;
            while let Some(row) = postgres::fallible_iterator::FallibleIterator::next(&mut it)? {
                if rows.send(response_row(&row)).is_err() {
                    break;
                }
            }
            Ok(())
        })?;
        let mut n = 0;
        for row in rows {
            let (id, response) = row?;
            f(id, response)?;
            n += 1;
        }
        Ok(n)
    }

    /// The requests answered 304 Not Modified, oldest first: (URL, when, the latest response
    /// stored for that URL before then, if any).
    ///
    /// # Errors
    /// The server failed.
    pub fn not_modified(&self, blog: Option<i64>) -> Result<Vec<NotModified>> {
        self.call(move |c| {
            c.query(
                "SELECT f.url, f.fetched_at,
                        (SELECT r.id FROM responses r WHERE r.blog_id = f.blog_id AND r.url = f.url
                           AND r.fetched_at <= f.fetched_at AND NOT (r.status BETWEEN 300 AND 399)
                           ORDER BY r.id DESC LIMIT 1)
                 FROM fetch_log f WHERE f.status = 304 AND ($1::BIGINT IS NULL OR f.blog_id = $1)
                 ORDER BY f.id",
                &[&blog],
            )?
            .iter()
            .map(|r| {
                Ok((
                    r.get(0),
                    time(r, 1)?.context("fetch without fetched_at")?,
                    r.get(2),
                ))
            })
            .collect()
        })
    }

    /// The time span of the stored responses (oldest, newest), if there are any.
    ///
    /// # Errors
    /// The server failed.
    pub fn capture_span(
        &self,
        blog: Option<i64>,
    ) -> Result<Option<(DateTime<Utc>, DateTime<Utc>)>> {
        self.call(move |c| {
            let r = c.query_one(
                "SELECT MIN(fetched_at), MAX(fetched_at) FROM responses WHERE $1::BIGINT IS NULL OR blog_id = $1",
                &[&blog],
            )?;
            Ok(time(&r, 0)?.zip(time(&r, 1)?))
        })
    }

    /// The id of the response a post was extracted from, if it is still known.
    ///
    /// # Errors
    /// The server failed.
    pub fn post_response(&self, url: &str) -> Result<Option<i64>> {
        let url = url.to_string();
        self.call(move |c| {
            Ok(
                c.query_opt("SELECT response_id FROM posts WHERE url = $1", &[&url])?
                    .and_then(|r| r.get(0)),
            )
        })
    }

    /// Every URL in the fetch log, in fetch order.
    ///
    /// # Errors
    /// The server failed.
    pub fn fetched_urls(&self) -> Result<Vec<String>> {
        self.call(|c| {
            Ok(c.query("SELECT url FROM fetch_log ORDER BY id", &[])?
                .iter()
                .map(|r| r.get(0))
                .collect())
        })
    }

    /// Where the rolling WARC files of `dir` stand, if any were written.
    ///
    /// # Errors
    /// The server failed.
    pub fn warc_roll(&self, dir: &str) -> Result<Option<WarcRoll>> {
        let dir = dir.to_string();
        self.call(move |c| {
            Ok(c.query_opt(
                "SELECT file, bytes, serial, last_response FROM warc_rolls WHERE dir = $1",
                &[&dir],
            )?
            .map(|r| WarcRoll {
                file: r.get(0),
                bytes: r.get::<_, i64>(1) as u64,
                serial: r.get::<_, i64>(2) as u64,
                last_response: r.get(3),
            }))
        })
    }

    /// Records where the rolling WARC files of `dir` stand, once it is on disk.
    ///
    /// # Errors
    /// The server failed.
    pub fn set_warc_roll(&mut self, dir: &str, roll: &WarcRoll) -> Result<()> {
        let (dir, roll) = (dir.to_string(), roll.clone());
        self.call(move |c| {
            c.execute(
                "INSERT INTO warc_rolls (dir, file, bytes, serial, last_response) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (dir) DO UPDATE SET file = $2, bytes = $3, serial = $4, last_response = $5",
                &[
                    &dir,
                    &roll.file,
                    &(roll.bytes as i64),
                    &(roll.serial as i64),
                    &roll.last_response,
                ],
            )?;
            Ok(())
        })
    }
}
