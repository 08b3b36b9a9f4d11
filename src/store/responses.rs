//! Raw responses (bodies deflate-compressed) and the fetch log: every request everblog makes
//! is logged, and every response that arrived is kept, so an archive can be re-extracted and
//! replayed without the live site.

use super::{compress, decompress, now, ts, utc_req};
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

/// Stores a response, its body once by SHA-256 in `blobs` (shared with every other response
/// that received the same bytes). Returns the response id.
pub(super) fn put_response(tx: &Transaction<'_>, blog_id: i64, r: &Response) -> Result<i64> {
    let sha = sha256_hex(&r.body);
    tx.execute(
        "INSERT OR IGNORE INTO blobs (sha256, body, bytes) VALUES (?1, ?2, ?3)",
        params![sha, compress(&r.body), r.body.len() as i64],
    )?;
    tx.execute(
        "INSERT INTO responses (blog_id, url, final_url, status, headers, body, body_len, fetched_at, sha256) VALUES (?1, ?2, ?3, ?4, ?5, x'', ?6, ?7, ?8)",
        params![
            blog_id,
            r.url,
            r.final_url,
            r.status,
            serde_json::to_string(&r.headers)?,
            r.body.len() as i64,
            ts(r.fetched_at),
            sha
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

/// Lower-case hex SHA-256 of `bytes`: the key of `blobs`.
pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

pub(super) use super::sql::{BODY, NOT_REDIRECT};

/// The columns [`response_row`] reads, in its order.
pub(super) fn response_columns() -> String {
    format!("url, final_url, status, headers, {BODY}, fetched_at")
}

/// A stored response from a row whose columns from `at` on are [`response_columns`]; the
/// body inflated.
pub(super) fn response_row(r: &rusqlite::Row<'_>, at: usize) -> Result<Response> {
    let headers: String = r.get(at + 3)?;
    let body: Vec<u8> = r.get(at + 4)?;
    Ok(Response {
        url: r.get(at)?,
        final_url: r.get(at + 1)?,
        status: r.get(at + 2)?,
        headers: serde_json::from_str(&headers).unwrap_or_default(),
        body: decompress(&body)?,
        fetched_at: utc_req(r, at + 5)?,
    })
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

/// A request answered 304 Not Modified: (URL, when, the id of the latest response stored for
/// that URL before then).
pub type NotModified = (String, chrono::DateTime<chrono::Utc>, Option<i64>);

impl super::SqliteStore {
    pub(super) fn keep_fetched(&mut self, blog_id: i64, f: &Fetched) -> Result<Option<i64>> {
        self.write(|tx| {
            for hop in &f.hops {
                put_fetch(tx, Some(blog_id), hop)?;
            }
            put_fetch(tx, Some(blog_id), &f.record)?;
            let Some(kept) = keepable(f) else {
                return Ok(None);
            };
            for r in &f.redirects {
                put_response(tx, blog_id, r)?;
            }
            put_response(tx, blog_id, kept).map(Some)
        })
    }

    pub(super) fn keep_response(&mut self, blog_id: i64, response: &Response) -> Result<i64> {
        self.write(|tx| put_response(tx, blog_id, response))
    }

    pub(super) fn log_fetches<'a>(
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

    pub(super) fn latest_response(
        &self,
        blog_id: i64,
        url: &str,
    ) -> Result<Option<(i64, Response)>> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT id, {} FROM responses
             WHERE blog_id = ?1 AND url = ?2 AND {NOT_REDIRECT} ORDER BY id DESC LIMIT 1",
            response_columns()
        ))?;
        let mut rows = st.query(params![blog_id, url])?;
        match rows.next()? {
            Some(r) => Ok(Some((r.get(0)?, response_row(r, 1)?))),
            None => Ok(None),
        }
    }

    pub(super) fn for_each_capture(
        &self,
        blog: Option<i64>,
        after: i64,
        mut f: impl FnMut(i64, Response) -> Result<()>,
    ) -> Result<u64> {
        let mut st = self.conn.prepare(&format!(
            "SELECT id, {} FROM responses
             WHERE (?1 IS NULL OR blog_id = ?1) AND id > ?2 ORDER BY id",
            response_columns()
        ))?;
        let mut rows = st.query(rusqlite::params![blog, after])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            let response = response_row(r, 1)?;
            f(r.get(0)?, response)?;
            n += 1;
        }
        Ok(n)
    }

    pub(super) fn not_modified(&self, blog: Option<i64>) -> Result<Vec<NotModified>> {
        self.rows(
            "SELECT f.url, f.fetched_at,
                    (SELECT r.id FROM responses r WHERE r.blog_id = f.blog_id AND r.url = f.url
                       AND r.fetched_at <= f.fetched_at AND NOT (r.status BETWEEN 300 AND 399)
                       ORDER BY r.id DESC LIMIT 1)
             FROM fetch_log f WHERE f.status = 304 AND (?1 IS NULL OR f.blog_id = ?1)
             ORDER BY f.id",
            [blog],
            |r| Ok((r.get(0)?, utc_req(r, 1)?, r.get(2)?)),
        )
    }

    pub(super) fn capture_span(
        &self,
        blog: Option<i64>,
    ) -> Result<Option<(chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::Utc>)>> {
        let span = self.conn.query_row(
            "SELECT MIN(fetched_at), MAX(fetched_at) FROM responses WHERE ?1 IS NULL OR blog_id = ?1",
            [blog],
            |r| Ok((super::utc_col(r, 0)?, super::utc_col(r, 1)?)),
        )?;
        Ok(match span {
            (Some(a), Some(b)) => Some((a, b)),
            _ => None,
        })
    }

    pub(super) fn post_response(&self, url: &str) -> Result<Option<i64>> {
        Ok(self
            .conn
            .query_row("SELECT response_id FROM posts WHERE url = ?1", [url], |r| {
                r.get::<_, Option<i64>>(0)
            })
            .optional()?
            .flatten())
    }

    pub(super) fn fetched_urls(&self) -> Result<Vec<String>> {
        self.rows("SELECT url FROM fetch_log ORDER BY id", [], |r| r.get(0))
    }

    pub(super) fn warc_roll(&self, dir: &str) -> Result<Option<WarcRoll>> {
        Ok(self
            .conn
            .query_row(
                "SELECT file, bytes, serial, last_response FROM warc_rolls WHERE dir = ?1",
                [dir],
                |r| {
                    Ok(WarcRoll {
                        file: r.get(0)?,
                        bytes: r.get::<_, i64>(1)? as u64,
                        serial: r.get::<_, i64>(2)? as u64,
                        last_response: r.get(3)?,
                    })
                },
            )
            .optional()?)
    }

    pub(super) fn set_warc_roll(&mut self, dir: &str, roll: &WarcRoll) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO warc_rolls (dir, file, bytes, serial, last_response)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (dir) DO UPDATE SET file = ?2, bytes = ?3, serial = ?4,
                   last_response = ?5",
                rusqlite::params![
                    dir,
                    roll.file,
                    roll.bytes as i64,
                    roll.serial as i64,
                    roll.last_response
                ],
            )?;
            Ok(())
        })
    }
}

/// Where one directory's rolling WARC files stand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WarcRoll {
    /// The file being written (its name without the `.open` suffix), `None` when none is open.
    pub file: Option<String>,
    /// The open file's length after its last whole record.
    pub bytes: u64,
    /// The serial of the newest file (Heritrix-style names count up).
    pub serial: u64,
    /// The last response written (responses are written in id order).
    pub last_response: i64,
}
