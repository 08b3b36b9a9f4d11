//! Raw responses (bodies deflate-compressed, stored once by SHA-256 in `blobs`) and the fetch
//! log: every request everblog makes is logged, and every response that arrived is kept
//! (which ones: [`Fetched::kept`]), so an archive can be re-extracted and replayed without the
//! live site. Written once for both back ends over [`super::db::Db`]; only the streaming of
//! every capture ([`Store::for_each_capture`]) is per back end.

use super::db::{args, marks, Db, Row, Value, ROWS_PER_STATEMENT};
use super::{compress, decompress, BlogId, ResponseId, Store};
use crate::fetch::{FetchRecord, Fetched, Response};
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

pub(super) use super::sql::BODY;
use super::ResponseKind;

/// Logs one request.
pub(super) fn put_fetch(db: &mut dyn Db, blog_id: Option<BlogId>, f: &FetchRecord) -> Result<()> {
    db.execute(
        "INSERT INTO fetch_log (blog_id, url, status, bytes, elapsed_ms, fetched_at, error)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        args![
            blog_id,
            f.url.as_str(),
            f.status.map(u32::from),
            f.bytes,
            f.elapsed_ms,
            f.fetched_at,
            f.error.clone()
        ],
    )?;
    Ok(())
}

/// Stores a response, its body once by SHA-256 in `blobs` (shared with every other response
/// that received the same bytes). Returns the response id.
pub(super) fn put_response(db: &mut dyn Db, blog_id: BlogId, r: &Response) -> Result<ResponseId> {
    let sha = sha256_hex(&r.body);
    let packed = compress(&r.body);
    let packed_len = packed.len() as u64;
    let new = db.execute(
        "INSERT INTO blobs (sha256, body, bytes) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
        args![sha.as_str(), packed, r.body.len()],
    )?;
    if new > 0 {
        crate::meters::stored(packed_len);
    }
    db.query_one(
        "INSERT INTO responses (blog_id, url, final_url, status, headers, body, body_len, fetched_at, sha256, kind)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) RETURNING id",
        args![
            blog_id,
            r.url.as_str(),
            r.final_url.as_str(),
            u32::from(r.status),
            serde_json::to_string(&r.headers)?,
            Vec::<u8>::new(),
            r.body.len(),
            r.fetched_at,
            sha,
            ResponseKind::of(r)
        ],
    )?
    .get(0)
}

/// Lower-case hex SHA-256 of `bytes`: the key of `blobs`.
pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

/// The columns [`response_row`] reads, in its order.
pub(super) fn response_columns() -> String {
    format!("url, final_url, status, headers, {BODY}, fetched_at")
}

/// A stored response from a row whose columns from `at` on are [`response_columns`]; the
/// body inflated.
pub(super) fn response_row(r: &Row, at: usize) -> Result<Response> {
    let headers: String = r.get(at + 3)?;
    let body: Vec<u8> = r.get(at + 4)?;
    Ok(Response {
        url: r.get(at)?,
        final_url: r.get(at + 1)?,
        status: u16::try_from(r.get::<i64>(at + 2)?).context("stored status out of range")?,
        headers: serde_json::from_str(&headers).unwrap_or_default(),
        body: decompress(&body)?,
        fetched_at: r.time_req(at + 5)?,
    })
}

/// When the response `id` arrived, as stored (now, if there is no such response).
pub(super) fn response_time(db: &mut dyn Db, id: Option<ResponseId>) -> Result<DateTime<Utc>> {
    match id {
        Some(id) => db
            .query_one("SELECT fetched_at FROM responses WHERE id = ?1", args![id])?
            .time_req(0),
        None => db.now(),
    }
}

/// The response a post or page is extracted from (not the frontier's `Source` of a URL).
#[derive(Clone, Copy)]
pub(super) struct ReadFrom {
    /// The stored response, when one was fetched or reused.
    pub(super) response: Option<ResponseId>,
    /// When it arrived, when that is known without reading it back (a response stored by
    /// the same write).
    pub(super) arrived: Option<DateTime<Utc>>,
}

impl ReadFrom {
    /// When what a record is read from arrived: the response's own time (known, or read back),
    /// `now` when nothing was fetched.
    pub(super) fn fetched_at(self, db: &mut dyn Db, now: DateTime<Utc>) -> Result<DateTime<Utc>> {
        Ok(match (self.response, self.arrived) {
            (Some(_), Some(at)) => at,
            (id @ Some(_), None) => response_time(db, id)?,
            (None, _) => now,
        })
    }
}

/// A request answered 304 Not Modified ([`Store::not_modified`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotModified {
    /// The URL requested.
    pub url: String,
    /// When the 304 arrived.
    pub at: DateTime<Utc>,
    /// The latest response stored for the URL by then (redirects left out), which the 304
    /// confirms; `None` when none was.
    pub earlier: Option<ResponseId>,
}

/// A stored response with its id ([`Store::latest_response`]).
#[derive(Debug, Clone)]
pub struct StoredResponse {
    /// Its id.
    pub id: ResponseId,
    /// The response, its body inflated.
    pub response: Response,
}

/// When the stored responses were fetched ([`Store::capture_span`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureSpan {
    /// The oldest response's fetch time.
    pub oldest: DateTime<Utc>,
    /// The newest response's fetch time.
    pub newest: DateTime<Utc>,
}

impl Store {
    /// Logs every request of a fetch (robots.txt, redirect hops, the final request) and keeps
    /// its response when one worth keeping arrived ([`Fetched::kept`]: any status but 304, 429
    /// and 503), after the redirects that led to it, in one transaction. Returns the kept
    /// response's id.
    ///
    /// # Errors
    /// The database failed.
    pub fn keep_fetched(&mut self, blog_id: BlogId, f: &Fetched) -> Result<Option<ResponseId>> {
        let records: Vec<FetchRecord> = f.requests().cloned().collect();
        let kept = f.kept().cloned();
        let redirects = if kept.is_some() {
            f.redirects.clone()
        } else {
            Vec::new()
        };
        self.write(move |db| {
            for r in &records {
                put_fetch(db, Some(blog_id), r)?;
            }
            let Some(kept) = &kept else {
                return Ok(None);
            };
            for r in &redirects {
                put_response(db, blog_id, r)?;
            }
            put_response(db, blog_id, kept).map(Some)
        })
    }

    /// Stores a response that no request of ours produced (a page rendered by Chromium).
    /// Returns the response id.
    ///
    /// # Errors
    /// The database failed.
    pub fn keep_response(&mut self, blog_id: BlogId, response: &Response) -> Result<ResponseId> {
        let response = response.clone();
        self.write(move |db| put_response(db, blog_id, &response))
    }

    /// Logs requests that produced nothing to keep, or that belong to no blog yet (`archive
    /// add` discovering a feed).
    ///
    /// # Errors
    /// The database failed.
    pub fn log_fetches<'a>(
        &mut self,
        blog_id: Option<BlogId>,
        records: impl IntoIterator<Item = &'a FetchRecord>,
    ) -> Result<()> {
        let records: Vec<FetchRecord> = records.into_iter().cloned().collect();
        self.write(move |db| {
            for r in &records {
                put_fetch(db, blog_id, r)?;
            }
            Ok(())
        })
    }

    /// The latest stored response for `url` of a blog, redirects left out.
    ///
    /// # Errors
    /// The database failed, or the body did not inflate.
    pub fn latest_response(&self, blog_id: BlogId, url: &str) -> Result<Option<StoredResponse>> {
        self.latest_of(blog_id, url, "")
    }

    /// The latest stored page of `url` of a blog that answered 2xx (redirects and errors left
    /// out): what the page last showed.
    ///
    /// # Errors
    /// The database failed, or the body did not inflate.
    pub fn latest_page(&self, blog_id: BlogId, url: &str) -> Result<Option<StoredResponse>> {
        self.latest_of(blog_id, url, "AND status BETWEEN 200 AND 299")
    }

    /// The latest stored non-redirect response for `url` of a blog meeting `condition` (SQL
    /// on `responses`, empty for any).
    fn latest_of(
        &self,
        blog_id: BlogId,
        url: &str,
        condition: &'static str,
    ) -> Result<Option<StoredResponse>> {
        let url = url.to_string();
        let sql = format!(
            "SELECT id, {} FROM responses
             WHERE blog_id = ?1 AND url = ?2 AND kind != ?3 {condition} ORDER BY id DESC LIMIT 1",
            response_columns()
        );
        self.read(move |db| {
            db.query_opt(&sql, args![blog_id, url.as_str(), ResponseKind::Redirect])?
                .map(|r| {
                    Ok(StoredResponse {
                        id: r.get(0)?,
                        response: response_row(&r, 1)?,
                    })
                })
                .transpose()
        })
    }

    /// Which of `urls` have a stored response for the blog (redirects left out), at one
    /// statement per 200 URLs without reading a body: the pages [`Store::latest_response`]
    /// would find.
    ///
    /// # Errors
    /// The database failed.
    pub fn with_responses(
        &self,
        blog_id: BlogId,
        urls: &[String],
    ) -> Result<std::collections::HashSet<String>> {
        let urls = urls.to_vec();
        self.read(move |db| {
            let mut found = std::collections::HashSet::new();
            for chunk in urls.chunks(ROWS_PER_STATEMENT) {
                let mut params = vec![Value::from(blog_id), Value::from(ResponseKind::Redirect)];
                params.extend(chunk.iter().map(|u| Value::from(u.as_str())));
                let sql = format!(
                    "SELECT DISTINCT url FROM responses WHERE blog_id = ?1 AND kind != ?2 AND url IN ({})",
                    marks(3, chunk.len())
                );
                for r in db.query(&sql, &params)? {
                    found.insert(r.get(0)?);
                }
            }
            Ok(found)
        })
    }

    /// The requests answered 304 Not Modified, oldest first, with the response each
    /// confirms.
    ///
    /// # Errors
    /// The database failed.
    pub fn not_modified(&self, blog: Option<BlogId>) -> Result<Vec<NotModified>> {
        self.read(move |db| {
            db.query_map(
                "SELECT f.url, f.fetched_at,
                        (SELECT r.id FROM responses r WHERE r.blog_id = f.blog_id AND r.url = f.url
                           AND r.fetched_at <= f.fetched_at AND NOT (r.status BETWEEN 300 AND 399)
                           ORDER BY r.id DESC LIMIT 1)
                 FROM fetch_log f WHERE f.status = 304 AND (CAST(?1 AS BIGINT) IS NULL OR f.blog_id = ?1)
                 ORDER BY f.id",
                args![blog],
                |r| {
                    Ok(NotModified {
                        url: r.get(0)?,
                        at: r.time_req(1)?,
                        earlier: r.get(2)?,
                    })
                },
            )
        })
    }

    /// The time span of the stored responses (of one blog, or all), if there are any.
    ///
    /// # Errors
    /// The database failed.
    pub fn capture_span(&self, blog: Option<BlogId>) -> Result<Option<CaptureSpan>> {
        self.read(move |db| {
            let r = db.query_one(
                "SELECT MIN(fetched_at), MAX(fetched_at) FROM responses
                 WHERE CAST(?1 AS BIGINT) IS NULL OR blog_id = ?1",
                args![blog],
            )?;
            Ok(r.time(0)?
                .zip(r.time(1)?)
                .map(|(oldest, newest)| CaptureSpan { oldest, newest }))
        })
    }

    /// The id of the response a post was extracted from, if it is still known.
    ///
    /// # Errors
    /// The database failed.
    pub fn post_response(&self, url: &str) -> Result<Option<ResponseId>> {
        let url = url.to_string();
        self.read(move |db| {
            Ok(db
                .query_opt(
                    "SELECT response_id FROM posts WHERE url = ?1",
                    args![url.as_str()],
                )?
                .map(|r| r.get::<Option<ResponseId>>(0))
                .transpose()?
                .flatten())
        })
    }

    /// Every URL in the fetch log, in fetch order (all blogs, and `archive add`'s fetches).
    ///
    /// # Errors
    /// The database failed.
    pub fn fetched_urls(&self) -> Result<Vec<String>> {
        self.read(|db| db.query_map("SELECT url FROM fetch_log ORDER BY id", &[], |r| r.get(0)))
    }

    /// Where the rolling WARC files of `dir` stand (`export::rolling`), if any were written.
    ///
    /// # Errors
    /// The database failed.
    pub fn warc_roll(&self, dir: &str) -> Result<Option<WarcRoll>> {
        let dir = dir.to_string();
        self.read(move |db| {
            db.query_opt(
                "SELECT file, bytes, serial, last_response FROM warc_rolls WHERE dir = ?1",
                args![dir.as_str()],
            )?
            .map(|r| {
                Ok(WarcRoll {
                    file: r.get(0)?,
                    bytes: r.get(1)?,
                    serial: r.get(2)?,
                    last_response: r.get(3)?,
                })
            })
            .transpose()
        })
    }

    /// Records where the rolling WARC files of `dir` stand, once what it says is on disk
    /// (written and synced).
    ///
    /// # Errors
    /// The database failed.
    pub fn set_warc_roll(&mut self, dir: &str, roll: &WarcRoll) -> Result<()> {
        let (dir, roll) = (dir.to_string(), roll.clone());
        self.write(move |db| {
            db.execute(
                "INSERT INTO warc_rolls (dir, file, bytes, serial, last_response)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (dir) DO UPDATE SET file = excluded.file, bytes = excluded.bytes,
                   serial = excluded.serial, last_response = excluded.last_response",
                args![
                    dir.as_str(),
                    roll.file.clone(),
                    roll.bytes,
                    roll.serial,
                    roll.last_response
                ],
            )?;
            Ok(())
        })
    }
}

impl super::SqliteStore {
    pub(super) fn for_each_capture(
        &self,
        blog: Option<BlogId>,
        after: ResponseId,
        mut f: impl FnMut(ResponseId, Response) -> Result<()>,
    ) -> Result<u64> {
        let mut st = self.conn.prepare(&format!(
            "SELECT id, {} FROM responses
             WHERE (?1 IS NULL OR blog_id = ?1) AND id > ?2 ORDER BY id",
            response_columns()
        ))?;
        let mut rows = st.query(rusqlite::params![blog.map(BlogId::get), after.get()])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            let r = super::db::sqlite_row(r)?;
            f(r.get(0)?, response_row(&r, 1)?)?;
            n += 1;
        }
        Ok(n)
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
    /// The last response written (responses are written in id order; the default before
    /// any).
    pub last_response: ResponseId,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::feed::FeedKind;
    use crate::store::{DatabaseSettings, ResponseKind};

    fn response(url: &str, status: u16, headers: Vec<(String, String)>) -> Response {
        Response {
            url: url.into(),
            final_url: url.into(),
            status,
            headers,
            body: b"<p>x</p>".to_vec(),
            fetched_at: Utc::now(),
        }
    }

    #[test]
    fn each_response_is_stored_with_its_kind() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let mut store = Store::open(&DatabaseSettings::at(dir.path().join("a.db")))?;
        let blog = store.insert_blog(
            "http://b.test/",
            "http://b.test/feed",
            None,
            FeedKind::Rss2,
            &[],
        )?;
        let moved = response("http://b.test/old", 301, vec![]);
        let page = response("http://b.test/new", 200, vec![]);
        let rendered = response(
            "http://b.test/new",
            200,
            vec![(crate::fetch::RENDERED_HEADER.into(), "chromium".into())],
        );
        for r in [&moved, &page, &rendered] {
            store.keep_response(blog.id, r)?;
        }
        let kinds: Vec<String> = store
            .sqlite_connection()
            .prepare("SELECT kind FROM responses ORDER BY id")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        assert_eq!(kinds, ["redirect", "raw", "rendered"]);
        assert_eq!(ResponseKind::of(&rendered), ResponseKind::Rendered);
        // A capture is what arrived from the network: the rendering is no capture of the URL,
        // and the redirect is no page to revalidate.
        assert_eq!(store.captures_of("http://b.test/new")?.len(), 1);
        assert!(store
            .latest_response(blog.id, "http://b.test/old")?
            .is_none());
        Ok(())
    }
}
