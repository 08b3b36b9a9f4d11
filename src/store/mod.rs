//! The store: every SQL statement of everblog lives in this module (so that a PostgreSQL back
//! end can replace it), over SQLite via rusqlite.
//!
//! SQLite runs in WAL mode with a 5 s busy timeout; every multi-statement write is one
//! `BEGIN IMMEDIATE` transaction (with DEFERRED, a read that upgrades to a write fails at once
//! with SQLITE_BUSY instead of waiting). Processing one crawled page — its raw response, its
//! fetch-log line, its post, its new frontier links and its frontier state — is one transaction,
//! so a crash leaves either all of it or none of it.

mod migrations;

use anyhow::{Context, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::io::{Read, Write};
use std::path::Path;

/// An open archive database.
pub struct Store {
    conn: Connection,
}

/// A blog as stored.
#[derive(Debug, Clone)]
pub struct Blog {
    /// Row id.
    pub id: i64,
    /// The blog's home page.
    pub home_url: String,
    /// The feed the blog was added with.
    pub feed_url: String,
    /// Feed title.
    pub title: Option<String>,
    /// Feed format ("atom", "rss2", …).
    pub feed_kind: String,
    /// When NewCrawl first started, RFC 3339.
    pub crawl_started_at: Option<String>,
    /// When NewCrawl completed, RFC 3339; `None` for blogs never fully crawled.
    pub crawled_at: Option<String>,
    /// Learned post URL pattern (JSON of `core::post_url::PostUrlPattern`).
    pub post_pattern: Option<String>,
    /// Where NewCrawl starts; `None`: the home page.
    pub start_url: Option<String>,
    /// When the last UpdateCrawl finished without error, RFC 3339.
    pub last_update_at: Option<String>,
    /// When the next UpdateCrawl is due, RFC 3339.
    pub next_update_at: Option<String>,
    /// Failed jobs in a row (0 after a success): drives the exponential back-off.
    pub errors_in_a_row: u32,
    /// The error of the last failed job, for `archive status`.
    pub last_error: Option<String>,
    /// Rendering chosen by the user: "auto", "always" or "never".
    pub render: String,
    /// What is rendered, once decided: "all" pages, "posts" only (comment widgets) or "none".
    pub renders: Option<String>,
    /// Why, for a person.
    pub render_reason: Option<String>,
}

/// A feed entry as stored.
#[derive(Debug, Clone)]
pub struct StoredEntry {
    /// Permalink.
    pub url: String,
    /// Title.
    pub title: Option<String>,
    /// Author names.
    pub authors: Vec<String>,
    /// RFC 3339.
    pub published: Option<String>,
    /// RFC 3339, when the feed gives an update time.
    pub updated: Option<String>,
    /// Full content HTML.
    pub content_html: Option<String>,
    /// Summary HTML.
    pub summary_html: Option<String>,
    /// The entry's comment feed (`wfw:commentRss`, Atom `replies`), if any.
    pub comments_feed: Option<String>,
    /// Comment count the feed declares (`slash:comments`, `thr:total`), if any.
    pub comment_count: Option<u32>,
}

/// A fetched HTTP response to keep.
#[derive(Debug, Clone)]
pub struct Response {
    /// URL requested.
    pub url: String,
    /// URL after redirects.
    pub final_url: String,
    /// HTTP status.
    pub status: u16,
    /// Response headers in order.
    pub headers: Vec<(String, String)>,
    /// Body bytes (stored deflate-compressed).
    pub body: Vec<u8>,
    /// When the response arrived.
    pub fetched_at: DateTime<Utc>,
}

/// One line of the fetch log.
#[derive(Debug, Clone)]
pub struct FetchRecord {
    /// URL requested.
    pub url: String,
    /// HTTP status, if a response arrived.
    pub status: Option<u16>,
    /// Body size in bytes.
    pub bytes: Option<u64>,
    /// Wall time of the request in milliseconds.
    pub elapsed_ms: u64,
    /// When the request started.
    pub fetched_at: DateTime<Utc>,
    /// Error text when the fetch failed.
    pub error: Option<String>,
}

/// A learned rule as stored.
#[derive(Debug, Clone)]
pub struct StoredRule {
    /// "article" or "title".
    pub field: String,
    /// XPath.
    pub xpath: String,
    /// Mean Dice score on the training pages.
    pub score: f64,
    /// Training pages that voted for it.
    pub votes: u32,
    /// Training pages.
    pub samples: u32,
    /// RFC 3339.
    pub learned_at: String,
    /// For date rules: the chrono format the page shows dates in ("relative", "machine").
    pub format: Option<String>,
}

/// An archived post.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Post {
    /// Permalink.
    pub url: String,
    /// The blog's home page.
    pub blog: String,
    /// Title.
    pub title: Option<String>,
    /// Author names.
    pub authors: Vec<String>,
    /// Publication time, RFC 3339.
    pub published: Option<String>,
    /// Last update, RFC 3339.
    pub updated: Option<String>,
    /// The date as the page shows it.
    pub published_raw: Option<String>,
    /// Article HTML.
    pub content_html: String,
    /// Article text.
    pub content_text: String,
    /// When the page was fetched, RFC 3339.
    pub fetched_at: String,
    /// Fields that could not be extracted and why.
    pub gaps: Vec<Gap>,
    /// 1 for the first archived text; +1 each time the blog changed it (earlier texts are kept,
    /// see [`Store::post_versions`]).
    pub version: u32,
    /// When the post was first found missing from the blog (HTTP 404/410), RFC 3339; it stays
    /// archived.
    pub gone_at: Option<String>,
    /// Comments, oldest first (filled by [`Store::posts`], [`Store::post`] and
    /// [`Store::for_each_post`]).
    pub comments: Vec<Comment>,
}

/// A post to write, keyed by its canonical URL.
#[derive(Debug, Clone)]
pub struct NewPost {
    /// Canonical permalink.
    pub url: String,
    /// Title.
    pub title: Option<String>,
    /// Author names.
    pub authors: Vec<String>,
    /// RFC 3339.
    pub published: Option<String>,
    /// The date as the page shows it.
    pub published_raw: Option<String>,
    /// Last update, RFC 3339, when the blog shows one.
    pub updated: Option<String>,
    /// Article HTML.
    pub content_html: String,
    /// Article text.
    pub content_text: String,
    /// Fields that could not be extracted and why.
    pub gaps: Vec<Gap>,
}

/// A comment to store under a post.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Comment {
    /// Stable key within the post (the page's comment id, a feed id, or a content hash).
    pub id: String,
    /// Author name.
    pub author: Option<String>,
    /// RFC 3339.
    pub published: Option<String>,
    /// The date as shown.
    pub published_raw: Option<String>,
    /// Comment HTML.
    pub content_html: String,
    /// Comment text.
    pub content_text: String,
    /// `id` of the comment this one replies to.
    pub parent: Option<String>,
    /// "page" or "feed".
    #[serde(skip)]
    pub source: String,
    /// Order within the post.
    #[serde(skip)]
    pub position: i64,
}

/// A field of a post that could not be extracted, and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Gap {
    /// "author", "published", "comments", …
    pub field: String,
    /// What went wrong, for a person.
    pub reason: String,
}

/// Everything one crawled page changes, written in one transaction.
#[derive(Debug, Clone)]
pub struct PageOutcome {
    /// The blog.
    pub blog_id: i64,
    /// The frontier URL that was processed.
    pub url: String,
    /// Its fetch-log lines: robots.txt and redirect hops, then the final request (empty when a
    /// stored response was reused).
    pub fetches: Vec<FetchRecord>,
    /// The response to keep (`None` on fetch errors or reuse).
    pub response: Option<Response>,
    /// The page as rendered by Chromium, kept after `response` (so it is the URL's latest).
    pub rendered: Option<Response>,
    /// Id of a stored response that was reused instead of fetching.
    pub reused_response: Option<i64>,
    /// The post extracted from it.
    pub post: Option<NewPost>,
    /// Links to enqueue, with their depth.
    pub links: Vec<(String, u32)>,
    /// L(u): links to posts on the page (kNN training value), when it was parsed.
    pub post_links: Option<u32>,
    /// New frontier state of `url`: "done", "failed", "blocked" (robots.txt), or "queued" to
    /// retry later (429/503).
    pub state: &'static str,
    /// For "queued": not before this time (RFC 3339).
    pub retry_at: Option<String>,
    /// Comments found on the page, under the post they belong to (a comment page's post).
    pub comments: Option<(String, Vec<Comment>)>,
    /// The blog answered 404/410 for this archived post: mark it gone (it stays archived).
    pub gone: bool,
}

/// What [`Store::record_page`] changed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Written {
    /// What happened to the post, if the page had one.
    pub post: Option<PostWrite>,
    /// Comments not archived before.
    pub new_comments: u32,
    /// Archived comments whose text changed (previous text kept).
    pub edited_comments: u32,
    /// The post was newly marked gone.
    pub gone: bool,
}

/// What writing a post did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PostWrite {
    /// First time archived.
    New,
    /// Same title and text as archived (metadata refreshed).
    Same,
    /// Title or text changed: the previous one was kept as a version; this is the new version
    /// number.
    Edited(u32),
}

/// An earlier text of a post, kept when the blog changed it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PostVersion {
    /// Version number (1 = first archived).
    pub version: u32,
    /// Title then.
    pub title: Option<String>,
    /// Article HTML then.
    pub content_html: String,
    /// Article text then.
    pub content_text: String,
    /// When that version was fetched, RFC 3339.
    pub fetched_at: String,
    /// When a newer version replaced it, RFC 3339.
    pub replaced_at: String,
}

/// A job of the work queue.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// Row id.
    pub id: i64,
    /// The blog.
    pub blog_id: i64,
    /// "new-crawl".
    pub kind: String,
    /// "queued", "running", "done" or "failed".
    pub state: String,
    /// The worker holding or last holding the lease.
    pub owner: Option<String>,
    /// RFC 3339 end of the current lease.
    pub lease_until: Option<String>,
    /// How many times a worker took it.
    pub attempts: u32,
    /// Last error.
    pub error: Option<String>,
    /// Summary of the finished job.
    pub outcome: Option<String>,
    /// A queued job is not taken before this time (RFC 3339); `None`: at once.
    pub not_before: Option<String>,
    /// When a worker first took it (RFC 3339).
    pub started_at: Option<String>,
    /// When it ended (RFC 3339).
    pub finished_at: Option<String>,
}

/// How a job ended, for [`Store::finish_job`].
#[derive(Debug, Clone, Default)]
pub struct JobEnd {
    /// Summary for `archive status`.
    pub outcome: Option<String>,
    /// Set when the job failed.
    pub error: Option<String>,
    /// The blog's next job: (kind, not before).
    pub next: Option<(String, DateTime<Utc>)>,
}

/// A storage fault the daemon cannot work through: the disk (or the configured size cap) is
/// full, or the database is read-only. Returns a sentence saying what to do; `None` for any
/// other error.
pub fn storage_fault(e: &anyhow::Error) -> Option<String> {
    e.chain().find_map(|cause| {
        let code = match cause.downcast_ref::<rusqlite::Error>()? {
            rusqlite::Error::SqliteFailure(f, _) => f.code,
            _ => return None,
        };
        match code {
            rusqlite::ErrorCode::DiskFull => Some(
                "the database is full (disk full, or the configured database.max_size reached): free space or raise the limit, then restart".to_string(),
            ),
            rusqlite::ErrorCode::ReadOnly => Some(
                "the database is read-only: give this user write access to the file and its directory, then restart".to_string(),
            ),
            rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::SystemIoFailure => Some(
                "the database file cannot be written (I/O error): check the disk, then restart".to_string(),
            ),
            _ => None,
        }
    })
}

/// Counts for summaries.
#[derive(Debug, Clone, Copy, Default)]
pub struct BlogCounts {
    /// Archived posts.
    pub posts: u64,
    /// Fetches logged.
    pub fetches: u64,
    /// Pages that failed (network error, HTTP ≥ 400, or given up after 429/503); a missing
    /// robots.txt or sitemap is not one.
    pub errors: u64,
    /// Frontier URLs still queued.
    pub queued: u64,
}

fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn compress(body: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(body).expect("in-memory write");
    e.finish().expect("in-memory write")
}

fn decompress(body: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::DeflateDecoder::new(body)
        .read_to_end(&mut out)
        .context("corrupt stored body")?;
    Ok(out)
}

fn json_list(v: &[String]) -> String {
    serde_json::to_string(v).expect("strings serialise")
}

fn parse_list(s: String) -> Vec<String> {
    serde_json::from_str(&s).unwrap_or_default()
}

impl Store {
    /// Opens (creating if needed, with its parent directory) and migrates the database at `path`.
    ///
    /// # Errors
    /// When the file cannot be created or opened, is not an SQLite database, or was written by a
    /// newer everblog (unknown schema version).
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let conn = Connection::open(path)
            .with_context(|| format!("opening database {}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .with_context(|| {
                format!(
                    "{} is not an everblog database (SQLite refused it)",
                    path.display()
                )
            })?;
        anyhow::ensure!(
            mode.eq_ignore_ascii_case("wal"),
            "{}: could not enable WAL (got {mode})",
            path.display()
        );
        conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")?;
        let mut store = Store { conn };
        store
            .migrate()
            .with_context(|| format!("migrating {}", path.display()))?;
        Ok(store)
    }

    fn migrate(&mut self) -> Result<()> {
        let version: usize =
            self.conn
                .query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))? as usize;
        anyhow::ensure!(
            version <= migrations::MIGRATIONS.len(),
            "database schema version {version} is newer than this everblog understands ({}); upgrade everblog",
            migrations::MIGRATIONS.len()
        );
        for (i, sql) in migrations::MIGRATIONS.iter().enumerate().skip(version) {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute_batch(sql)?;
            tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
            tx.commit()?;
        }
        Ok(())
    }

    /// The schema version (number of migrations applied).
    pub fn schema_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    fn blog_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Blog> {
        Ok(Blog {
            id: r.get(0)?,
            home_url: r.get(1)?,
            feed_url: r.get(2)?,
            title: r.get(3)?,
            feed_kind: r.get(4)?,
            crawl_started_at: r.get(5)?,
            crawled_at: r.get(6)?,
            post_pattern: r.get(7)?,
            start_url: r.get(8)?,
            last_update_at: r.get(9)?,
            next_update_at: r.get(10)?,
            errors_in_a_row: r.get(11)?,
            last_error: r.get(12)?,
            render: r.get(13)?,
            renders: r.get(14)?,
            render_reason: r.get(15)?,
        })
    }

    const BLOG_COLUMNS: &'static str =
        "id, home_url, feed_url, title, feed_kind, crawl_started_at, crawled_at, post_pattern, start_url,
         last_update_at, next_update_at, errors_in_a_row, last_error, render, renders, render_reason";

    /// All blogs, oldest first.
    pub fn blogs(&self) -> Result<Vec<Blog>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM blogs ORDER BY id",
            Self::BLOG_COLUMNS
        ))?;
        let rows = st.query_map([], Self::blog_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The blog whose feed URL or home URL is `url` (exact match).
    pub fn find_blog(&self, url: &str) -> Result<Option<Blog>> {
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT {} FROM blogs WHERE feed_url = ?1 OR home_url = ?1 ORDER BY id LIMIT 1",
                    Self::BLOG_COLUMNS
                ),
                [url],
                Self::blog_from_row,
            )
            .optional()?)
    }

    /// Adds a blog with its feed entries, in one transaction. Returns the new blog id.
    pub fn insert_blog(
        &mut self,
        home_url: &str,
        feed_url: &str,
        title: Option<&str>,
        feed_kind: &str,
        entries: &[StoredEntry],
    ) -> Result<i64> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO blogs (home_url, feed_url, title, feed_kind, added_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![home_url, feed_url, title, feed_kind, now()],
        )?;
        let id = tx.last_insert_rowid();
        Self::put_entries(&tx, id, entries)?;
        tx.commit()?;
        Ok(id)
    }

    fn put_entries(
        tx: &rusqlite::Transaction<'_>,
        blog_id: i64,
        entries: &[StoredEntry],
    ) -> Result<()> {
        let mut st = tx.prepare(
            "INSERT INTO feed_entries (blog_id, url, title, authors, published, content_html, summary_html, seen_at, updated, comments_feed, comment_count)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
             ON CONFLICT (blog_id, url) DO UPDATE SET title = excluded.title, authors = excluded.authors,
               published = excluded.published, content_html = excluded.content_html,
               summary_html = excluded.summary_html, seen_at = excluded.seen_at, updated = excluded.updated,
               comments_feed = excluded.comments_feed, comment_count = excluded.comment_count",
        )?;
        let at = now();
        for e in entries {
            st.execute(params![
                blog_id,
                e.url,
                e.title,
                json_list(&e.authors),
                e.published,
                e.content_html,
                e.summary_html,
                at,
                e.updated,
                e.comments_feed,
                e.comment_count
            ])?;
        }
        Ok(())
    }

    /// Updates the stored feed entries of a blog (insert or refresh).
    pub fn save_entries(&mut self, blog_id: i64, entries: &[StoredEntry]) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        Self::put_entries(&tx, blog_id, entries)?;
        tx.commit()?;
        Ok(())
    }

    /// The stored feed entries of a blog.
    pub fn entries(&self, blog_id: i64) -> Result<Vec<StoredEntry>> {
        let mut st = self.conn.prepare(
            "SELECT url, title, authors, published, content_html, summary_html, updated, comments_feed, comment_count FROM feed_entries WHERE blog_id = ?1 ORDER BY rowid",
        )?;
        let rows = st.query_map([blog_id], |r| {
            Ok(StoredEntry {
                url: r.get(0)?,
                title: r.get(1)?,
                authors: parse_list(r.get(2)?),
                published: r.get(3)?,
                content_html: r.get(4)?,
                summary_html: r.get(5)?,
                updated: r.get(6)?,
                comments_feed: r.get(7)?,
                comment_count: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Stores a response and its fetch-log line (learning phase). Returns the response id.
    pub fn save_response(
        &mut self,
        blog_id: i64,
        response: &Response,
        fetch: &FetchRecord,
    ) -> Result<i64> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        Self::put_fetch(&tx, blog_id, fetch)?;
        let id = Self::put_response(&tx, blog_id, response)?;
        tx.commit()?;
        Ok(id)
    }

    /// Stores a response that no request of ours produced (a page rendered by Chromium).
    /// Returns the response id.
    pub fn keep_response(&mut self, blog_id: i64, response: &Response) -> Result<i64> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let id = Self::put_response(&tx, blog_id, response)?;
        tx.commit()?;
        Ok(id)
    }

    /// Logs a fetch that produced no response to keep.
    pub fn log_fetch(&mut self, blog_id: Option<i64>, fetch: &FetchRecord) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        Self::put_fetch(&tx, blog_id.unwrap_or(0), fetch)?;
        tx.commit()?;
        Ok(())
    }

    fn put_fetch(tx: &rusqlite::Transaction<'_>, blog_id: i64, f: &FetchRecord) -> Result<()> {
        tx.execute(
            "INSERT INTO fetch_log (blog_id, url, status, bytes, elapsed_ms, fetched_at, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                (blog_id != 0).then_some(blog_id),
                f.url,
                f.status,
                f.bytes.map(|b| b as i64),
                f.elapsed_ms as i64,
                f.fetched_at.to_rfc3339_opts(SecondsFormat::Millis, true),
                f.error
            ],
        )?;
        Ok(())
    }

    fn put_response(tx: &rusqlite::Transaction<'_>, blog_id: i64, r: &Response) -> Result<i64> {
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
                r.fetched_at.to_rfc3339_opts(SecondsFormat::Millis, true)
            ],
        )?;
        Ok(tx.last_insert_rowid())
    }

    /// The latest stored successful response for `url` of a blog: (id, response).
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
                        r.get::<_, String>(6)?,
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
                fetched_at: DateTime::parse_from_rfc3339(&fetched_at)
                    .map(|d| d.with_timezone(&Utc))
                    .unwrap_or_else(|_| Utc::now()),
            },
        )))
    }

    /// Replaces the active rules of a blog and stores its post URL pattern, in one transaction.
    /// Earlier rules stay in the table, inactive, as history.
    pub fn save_rules(
        &mut self,
        blog_id: i64,
        rules: &[StoredRule],
        post_pattern: &str,
    ) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute("UPDATE rules SET active = 0 WHERE blog_id = ?1", [blog_id])?;
        for r in rules {
            tx.execute(
                "INSERT INTO rules (blog_id, field, xpath, score, votes, samples, learned_at, active, format) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8)",
                params![blog_id, r.field, r.xpath, r.score, r.votes, r.samples, r.learned_at, r.format],
            )?;
        }
        tx.execute(
            "UPDATE blogs SET post_pattern = ?2 WHERE id = ?1",
            params![blog_id, post_pattern],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The active rules of a blog.
    pub fn rules(&self, blog_id: i64) -> Result<Vec<StoredRule>> {
        let mut st = self.conn.prepare(
            "SELECT field, xpath, score, votes, samples, learned_at, format FROM rules WHERE blog_id = ?1 AND active = 1 ORDER BY field",
        )?;
        let rows = st.query_map([blog_id], |r| {
            Ok(StoredRule {
                field: r.get(0)?,
                xpath: r.get(1)?,
                score: r.get(2)?,
                votes: r.get(3)?,
                samples: r.get(4)?,
                learned_at: r.get(5)?,
                format: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Sets the user's rendering choice for a blog ("auto", "always", "never"); a new choice
    /// forgets an earlier automatic decision.
    pub fn set_render_mode(&mut self, blog_id: i64, mode: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE blogs SET render = ?2, renders = CASE WHEN render = ?2 THEN renders ELSE NULL END,
               render_reason = CASE WHEN render = ?2 THEN render_reason ELSE NULL END WHERE id = ?1",
            params![blog_id, mode],
        )?;
        Ok(())
    }

    /// Records what a blog renders ("all", "posts", "none") and why.
    pub fn set_render_decision(&mut self, blog_id: i64, renders: &str, reason: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE blogs SET renders = ?2, render_reason = ?3 WHERE id = ?1",
            params![blog_id, renders, reason],
        )?;
        Ok(())
    }

    /// Sets where a blog's NewCrawl starts.
    pub fn set_start_url(&mut self, blog_id: i64, url: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE blogs SET start_url = ?2 WHERE id = ?1",
            params![blog_id, url],
        )?;
        Ok(())
    }

    /// Marks the start of a blog's NewCrawl (kept from the first start on resume).
    pub fn mark_crawl_started(&mut self, blog_id: i64) -> Result<()> {
        self.conn.execute(
            "UPDATE blogs SET crawl_started_at = COALESCE(crawl_started_at, ?2) WHERE id = ?1",
            params![blog_id, now()],
        )?;
        Ok(())
    }

    /// Marks a blog's NewCrawl complete.
    pub fn mark_crawled(&mut self, blog_id: i64) -> Result<()> {
        self.conn.execute(
            "UPDATE blogs SET crawled_at = ?2 WHERE id = ?1",
            params![blog_id, now()],
        )?;
        Ok(())
    }

    /// Adds URLs to a blog's frontier (already known URLs are ignored).
    pub fn enqueue(&mut self, blog_id: i64, urls: &[(String, u32)]) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        Self::put_links(&tx, blog_id, urls)?;
        tx.commit()?;
        Ok(())
    }

    fn put_links(
        tx: &rusqlite::Transaction<'_>,
        blog_id: i64,
        urls: &[(String, u32)],
    ) -> Result<()> {
        if urls.is_empty() {
            return Ok(());
        }
        let mut seq: i64 = tx.query_row(
            "SELECT COALESCE(MAX(seq), 0) FROM frontier WHERE blog_id = ?1",
            [blog_id],
            |r| r.get(0),
        )?;
        let mut st = tx.prepare_cached("INSERT OR IGNORE INTO frontier (blog_id, url, depth, state, seq) VALUES (?1, ?2, ?3, 'queued', ?4)")?;
        for (u, d) in urls {
            if st.execute(params![blog_id, u, d, seq + 1])? == 1 {
                seq += 1;
            }
        }
        Ok(())
    }

    /// Up to `n` queued frontier URLs that may be fetched at `now` (RFC 3339), in breadth-first
    /// order: (url, depth).
    pub fn queued(&self, blog_id: i64, n: usize, now: &str) -> Result<Vec<(String, u32)>> {
        let mut st = self.conn.prepare(
            "SELECT url, depth FROM frontier WHERE blog_id = ?1 AND state = 'queued' AND (not_before IS NULL OR not_before <= ?3)
             ORDER BY depth, seq LIMIT ?2",
        )?;
        let rows = st.query_map(params![blog_id, n as i64, now], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One page of a blog's queued URLs in discovery order: (seq, url) with seq > `after`.
    pub fn queued_page(&self, blog_id: i64, after: i64, n: usize) -> Result<Vec<(i64, String)>> {
        let mut st = self.conn.prepare("SELECT seq, url FROM frontier WHERE blog_id = ?1 AND state = 'queued' AND seq > ?2 ORDER BY seq LIMIT ?3")?;
        let rows = st.query_map(params![blog_id, after, n as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Number of frontier URLs of a blog already processed (done, failed or blocked).
    pub fn processed(&self, blog_id: i64) -> Result<u64> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM frontier WHERE blog_id = ?1 AND state != 'queued'",
            [blog_id],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    /// Writes everything one crawled page changes, atomically, and says what changed.
    pub fn record_page(&mut self, o: &PageOutcome) -> Result<Written> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        for f in &o.fetches {
            Self::put_fetch(&tx, o.blog_id, f)?;
        }
        let mut response_id = match &o.response {
            Some(r) => Some(Self::put_response(&tx, o.blog_id, r)?),
            None => o.reused_response,
        };
        if let Some(r) = &o.rendered {
            response_id = Some(Self::put_response(&tx, o.blog_id, r)?);
        }
        let mut written = Written::default();
        if let Some(p) = &o.post {
            written.post = Some(Self::put_post(&tx, o.blog_id, p, response_id)?);
        }
        if let Some((post_url, comments)) = &o.comments {
            (written.new_comments, written.edited_comments) =
                Self::put_comments(&tx, post_url, comments)?;
        }
        if o.gone {
            written.gone = Self::put_gone(&tx, &o.url)?;
        }
        Self::put_links(&tx, o.blog_id, &o.links)?;
        tx.execute(
            "UPDATE frontier SET state = ?3, post_links = ?4, not_before = ?5,
               attempts = attempts + CASE WHEN ?3 = 'queued' THEN 1 ELSE 0 END
             WHERE blog_id = ?1 AND url = ?2",
            params![o.blog_id, o.url, o.state, o.post_links, o.retry_at],
        )?;
        tx.commit()?;
        Ok(written)
    }

    /// Inserts or updates a post. When the archived title or text differs from the new one, the
    /// archived one is kept in `post_versions` first and the version number goes up: archived
    /// content is never overwritten silently. A post found again clears its `gone_at`.
    fn put_post(
        tx: &rusqlite::Transaction<'_>,
        blog_id: i64,
        p: &NewPost,
        response_id: Option<i64>,
    ) -> Result<PostWrite> {
        let fetched_at: String = match response_id {
            Some(id) => tx.query_row(
                "SELECT fetched_at FROM responses WHERE id = ?1",
                [id],
                |r| r.get(0),
            )?,
            None => now(),
        };
        let old: Option<(Option<String>, String, u32)> = tx
            .query_row(
                "SELECT title, content_text, version FROM posts WHERE url = ?1",
                [&p.url],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let change = match &old {
            None => PostWrite::New,
            Some((title, text, _)) if *title == p.title && *text == p.content_text => {
                PostWrite::Same
            }
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
               updated, published_raw, gaps, version)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
             ON CONFLICT (url) DO UPDATE SET title = excluded.title, authors = excluded.authors,
               published = COALESCE(excluded.published, posts.published), content_html = excluded.content_html,
               content_text = excluded.content_text, response_id = excluded.response_id,
               fetched_at = excluded.fetched_at, extracted_at = excluded.extracted_at,
               updated = COALESCE(excluded.updated, posts.updated),
               published_raw = COALESCE(excluded.published_raw, posts.published_raw), gaps = excluded.gaps,
               version = excluded.version, gone_at = NULL",
            params![
                blog_id,
                p.url,
                p.title,
                json_list(&p.authors),
                p.published,
                p.content_html,
                p.content_text,
                response_id,
                fetched_at,
                now(),
                p.updated,
                p.published_raw,
                serde_json::to_string(&p.gaps)?,
                version
            ],
        )?;
        Ok(change)
    }

    /// Marks an archived post gone (first time only). True when it was newly marked.
    fn put_gone(tx: &rusqlite::Transaction<'_>, url: &str) -> Result<bool> {
        Ok(tx.execute(
            "UPDATE posts SET gone_at = ?2 WHERE url = ?1 AND gone_at IS NULL",
            params![url, now()],
        )? == 1)
    }

    /// Upserts comments of a post by key. Comments from the page replace the feed's copies of
    /// the same comment (same author, Dice of the texts ≥ 0.8), so none is stored twice. A
    /// comment whose text changed keeps its previous text in `comment_versions`. Returns (new,
    /// edited) comment counts.
    fn put_comments(
        tx: &rusqlite::Transaction<'_>,
        post_url: &str,
        comments: &[Comment],
    ) -> Result<(u32, u32)> {
        let (mut added, mut edited) = (0, 0);
        use crate::core::comments::same_comment;
        let stored = |source: &str| -> Result<Vec<(String, Option<String>, String)>> {
            let mut st = tx.prepare_cached("SELECT key, author, content_text FROM comments WHERE post_url = ?1 AND source = ?2")?;
            let rows = st.query_map(params![post_url, source], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        // A page comment archived before under another key keeps that key: a new theme names
        // the same comment differently (`div-comment-12` → `comment-12`), or gives no id and the
        // key is a hash. Same id number, or (without ids) same author and text.
        let remapped: Vec<Comment>;
        let comments = if comments.iter().any(|c| c.source == "page") {
            use crate::core::comments::same_id;
            let archived = stored("page")?;
            let incoming: std::collections::HashSet<&str> =
                comments.iter().map(|c| c.id.as_str()).collect();
            let mut map: std::collections::HashMap<String, String> = Default::default();
            for c in comments.iter().filter(|c| c.source == "page") {
                if archived.iter().any(|(k, _, _)| *k == c.id) {
                    continue;
                }
                let by_id = archived
                    .iter()
                    .find(|(k, _, _)| same_id(k, &c.id) || same_id(&c.id, k));
                let by_text = || {
                    archived.iter().find(|(k, a, t)| {
                        !incoming.contains(k.as_str())
                            && same_comment(c.author.as_deref(), &c.content_text, a.as_deref(), t)
                    })
                };
                if let Some((k, _, _)) = by_id.or_else(by_text) {
                    if !incoming.contains(k.as_str()) && !map.values().any(|v| v == k) {
                        map.insert(c.id.clone(), k.clone());
                    }
                }
            }
            remapped = comments
                .iter()
                .map(|c| Comment {
                    id: map.get(&c.id).cloned().unwrap_or_else(|| c.id.clone()),
                    parent: c
                        .parent
                        .as_ref()
                        .map(|p| map.get(p).cloned().unwrap_or_else(|| p.clone())),
                    ..c.clone()
                })
                .collect();
            &remapped[..]
        } else {
            comments
        };
        // Page copies replace the feed's copies of the same comment.
        if comments.iter().any(|c| c.source == "page") {
            for (key, author, text) in stored("feed")? {
                if comments.iter().any(|c| {
                    c.source == "page"
                        && same_comment(
                            c.author.as_deref(),
                            &c.content_text,
                            author.as_deref(),
                            &text,
                        )
                }) {
                    tx.execute(
                        "DELETE FROM comments WHERE post_url = ?1 AND key = ?2",
                        params![post_url, key],
                    )?;
                }
            }
        }
        let page_copies = if comments.iter().any(|c| c.source == "feed") {
            stored("page")?
        } else {
            Vec::new()
        };
        let mut st = tx.prepare_cached(
            "INSERT INTO comments (post_url, key, author, published, published_raw, content_html, content_text, parent_key, source, position)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (post_url, key) DO UPDATE SET author = excluded.author, published = COALESCE(excluded.published, comments.published),
               published_raw = excluded.published_raw, content_html = excluded.content_html, content_text = excluded.content_text,
               parent_key = COALESCE(excluded.parent_key, comments.parent_key), source = excluded.source, position = excluded.position",
        )?;
        for c in comments {
            // A feed copy never overwrites or doubles what a page showed.
            if c.source == "feed"
                && page_copies.iter().any(|(_, a, t)| {
                    same_comment(c.author.as_deref(), &c.content_text, a.as_deref(), t)
                })
            {
                continue;
            }
            let old: Option<(String, String)> = tx
                .query_row(
                    "SELECT content_text, source FROM comments WHERE post_url = ?1 AND key = ?2",
                    params![post_url, c.id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            match old {
                None => added += 1,
                Some((text, source)) if text != c.content_text && source == c.source => {
                    tx.execute(
                        "INSERT INTO comment_versions (post_url, key, author, content_html, content_text, replaced_at)
                         SELECT post_url, key, author, content_html, content_text, ?3 FROM comments WHERE post_url = ?1 AND key = ?2",
                        params![post_url, c.id, now()],
                    )?;
                    edited += 1;
                }
                Some(_) => {}
            }
            st.execute(params![
                post_url,
                c.id,
                c.author,
                c.published,
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

    /// Stores comments of a post read from its comment feed (they give way to the page's).
    /// Returns (new, edited) comment counts.
    pub fn save_feed_comments(
        &mut self,
        post_url: &str,
        comments: &[Comment],
    ) -> Result<(u32, u32)> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let n = Self::put_comments(&tx, post_url, comments)?;
        tx.commit()?;
        Ok(n)
    }

    /// The comments of a post, oldest first.
    pub fn comments(&self, post_url: &str) -> Result<Vec<Comment>> {
        let mut st = self.conn.prepare_cached(
            "SELECT key, author, published, published_raw, content_html, content_text, parent_key, source, position FROM comments
             WHERE post_url = ?1 ORDER BY published IS NULL, published, position, key",
        )?;
        let rows = st.query_map([post_url], |r| {
            Ok(Comment {
                id: r.get(0)?,
                author: r.get(1)?,
                published: r.get(2)?,
                published_raw: r.get(3)?,
                content_html: r.get(4)?,
                content_text: r.get(5)?,
                parent: r.get(6)?,
                source: r.get(7)?,
                position: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Queues a job unless the blog already has an open (queued or running) one of that kind.
    /// Returns true when a job was added.
    pub fn enqueue_job(&mut self, blog_id: i64, kind: &str) -> Result<bool> {
        let n = self.conn.execute(
            "INSERT OR IGNORE INTO jobs (blog_id, kind, created_at) VALUES (?1, ?2, ?3)",
            params![blog_id, kind, now()],
        )?;
        Ok(n == 1)
    }

    fn job_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Job> {
        Ok(Job {
            id: r.get(0)?,
            blog_id: r.get(1)?,
            kind: r.get(2)?,
            state: r.get(3)?,
            owner: r.get(4)?,
            lease_until: r.get(5)?,
            attempts: r.get(6)?,
            error: r.get(7)?,
            outcome: r.get(8)?,
            not_before: r.get(9)?,
            started_at: r.get(10)?,
            finished_at: r.get(11)?,
        })
    }

    const JOB_COLUMNS: &'static str =
        "id, blog_id, kind, state, owner, lease_until, attempts, error, outcome, not_before, started_at, finished_at";

    /// Takes the oldest job that is queued, or running under an expired lease (its worker died),
    /// for `owner` until `now + lease`; optionally only jobs of one blog. One `BEGIN IMMEDIATE`
    /// transaction, so two workers never take the same job.
    pub fn lease_job(
        &mut self,
        owner: &str,
        lease: std::time::Duration,
        blog_id: Option<i64>,
    ) -> Result<Option<Job>> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let now_ts = Utc::now();
        let now_s = now_ts.to_rfc3339_opts(SecondsFormat::Millis, true);
        let until = (now_ts + chrono::Duration::from_std(lease).unwrap_or_default())
            .to_rfc3339_opts(SecondsFormat::Millis, true);
        let id: Option<i64> = tx
            .query_row(
                "SELECT id FROM jobs WHERE ((state = 'queued' AND (not_before IS NULL OR not_before <= ?1)) OR (state = 'running' AND lease_until < ?1))
                   AND (?2 IS NULL OR blog_id = ?2) ORDER BY COALESCE(not_before, created_at), id LIMIT 1",
                params![now_s, blog_id],
                |r| r.get(0),
            )
            .optional()?;
        let Some(id) = id else { return Ok(None) };
        tx.execute(
            "UPDATE jobs SET state = 'running', owner = ?2, lease_until = ?3, attempts = attempts + 1, started_at = COALESCE(started_at, ?4) WHERE id = ?1",
            params![id, owner, until, now_s],
        )?;
        let job = tx.query_row(
            &format!("SELECT {} FROM jobs WHERE id = ?1", Self::JOB_COLUMNS),
            [id],
            Self::job_from_row,
        )?;
        tx.commit()?;
        Ok(Some(job))
    }

    /// Extends the lease of a running job held by `owner`. False when the job is no longer
    /// ours (the lease expired and another worker took it).
    pub fn renew_lease(
        &mut self,
        job_id: i64,
        owner: &str,
        lease: std::time::Duration,
    ) -> Result<bool> {
        let until = (Utc::now() + chrono::Duration::from_std(lease).unwrap_or_default())
            .to_rfc3339_opts(SecondsFormat::Millis, true);
        let n = self.conn.execute(
            "UPDATE jobs SET lease_until = ?3 WHERE id = ?1 AND owner = ?2 AND state = 'running'",
            params![job_id, owner, until],
        )?;
        Ok(n == 1)
    }

    /// Ends a job held by `owner`: "done" with an outcome, "failed" with an error, or back to
    /// "queued" (released at shutdown, to be resumed by any worker).
    pub fn end_job(
        &mut self,
        job_id: i64,
        owner: &str,
        state: &str,
        outcome: Option<&str>,
        error: Option<&str>,
    ) -> Result<()> {
        let finished = (state != "queued").then(now);
        self.conn.execute(
            "UPDATE jobs SET state = ?3, outcome = COALESCE(?4, outcome), error = ?5, finished_at = ?6,
               owner = CASE WHEN ?3 = 'queued' THEN NULL ELSE owner END, lease_until = NULL
             WHERE id = ?1 AND owner = ?2",
            params![job_id, owner, state, outcome, error, finished],
        )?;
        Ok(())
    }

    /// Queues a job of `kind` for a blog, not to be taken before `not_before`, unless the blog
    /// already has an open job of that kind (then its time moves to the earlier of the two).
    /// Returns true when a job was added.
    pub fn schedule_job(
        &mut self,
        blog_id: i64,
        kind: &str,
        not_before: DateTime<Utc>,
    ) -> Result<bool> {
        let at = not_before.to_rfc3339_opts(SecondsFormat::Millis, true);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let n = tx.execute(
            "INSERT OR IGNORE INTO jobs (blog_id, kind, created_at, not_before) VALUES (?1, ?2, ?3, ?4)",
            params![blog_id, kind, now(), at],
        )?;
        if n == 0 {
            tx.execute(
                "UPDATE jobs SET not_before = ?3 WHERE blog_id = ?1 AND kind = ?2 AND state = 'queued' AND (not_before IS NULL OR not_before > ?3)",
                params![blog_id, kind, at],
            )?;
        }
        tx.execute(
            "UPDATE blogs SET next_update_at = (SELECT MIN(not_before) FROM jobs WHERE blog_id = ?1 AND kind = ?2 AND state = 'queued') WHERE id = ?1",
            params![blog_id, kind],
        )?;
        tx.commit()?;
        Ok(n == 1)
    }

    /// Ends a job held by `owner` and, in the same transaction, records the outcome on its blog
    /// and queues the blog's next job: on success the error streak resets (and for an
    /// UpdateCrawl `last_update_at` is set); on failure the streak grows and the error is kept
    /// for `archive status`. A crash can never leave a finished job without its successor.
    pub fn finish_job(&mut self, job: &Job, owner: &str, end: &JobEnd) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let state = if end.error.is_some() {
            "failed"
        } else {
            "done"
        };
        let n = tx.execute(
            "UPDATE jobs SET state = ?3, outcome = ?4, error = ?5, finished_at = ?6, lease_until = NULL WHERE id = ?1 AND owner = ?2",
            params![job.id, owner, state, end.outcome, end.error, now()],
        )?;
        if n == 0 {
            // The lease was lost to another worker, which now owns the job and its successor.
            tx.commit()?;
            return Ok(());
        }
        match &end.error {
            None => tx.execute(
                "UPDATE blogs SET errors_in_a_row = 0, last_error = NULL,
                   last_update_at = CASE WHEN ?2 = 'update-crawl' THEN ?3 ELSE last_update_at END WHERE id = ?1",
                params![job.blog_id, job.kind, now()],
            )?,
            Some(e) => tx.execute(
                "UPDATE blogs SET errors_in_a_row = errors_in_a_row + 1, last_error = ?2 WHERE id = ?1",
                params![job.blog_id, e],
            )?,
        };
        if let Some((kind, at)) = &end.next {
            let at = at.to_rfc3339_opts(SecondsFormat::Millis, true);
            tx.execute(
                "INSERT OR IGNORE INTO jobs (blog_id, kind, created_at, not_before) VALUES (?1, ?2, ?3, ?4)",
                params![job.blog_id, kind, now(), at],
            )?;
            if kind == "update-crawl" {
                tx.execute(
                    "UPDATE blogs SET next_update_at = ?2 WHERE id = ?1",
                    params![job.blog_id, at],
                )?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Errors of a blog's jobs in a row (0 after a success).
    pub fn errors_in_a_row(&self, blog_id: i64) -> Result<u32> {
        Ok(self.conn.query_row(
            "SELECT errors_in_a_row FROM blogs WHERE id = ?1",
            [blog_id],
            |r| r.get(0),
        )?)
    }

    /// Times of a blog's latest activity, newest first, at most `n`: publication times of posts
    /// and of their comments (RFC 3339 strings, as stored). Scheduling reads the posting and
    /// commenting frequency off them.
    pub fn activity(&self, blog_id: i64, n: usize) -> Result<Vec<String>> {
        let mut st = self.conn.prepare(
            "SELECT t FROM (
               SELECT published AS t FROM posts WHERE blog_id = ?1 AND published IS NOT NULL
               UNION ALL
               SELECT c.published FROM comments c JOIN posts p ON p.url = c.post_url
                 WHERE p.blog_id = ?1 AND c.published IS NOT NULL)
             ORDER BY t DESC LIMIT ?2",
        )?;
        let rows = st.query_map(params![blog_id, n as i64], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Earlier versions of a post, oldest first.
    pub fn post_versions(&self, url: &str) -> Result<Vec<PostVersion>> {
        let mut st = self.conn.prepare(
            "SELECT version, title, content_html, content_text, fetched_at, replaced_at FROM post_versions WHERE post_url = ?1 ORDER BY version",
        )?;
        let rows = st.query_map([url], |r| {
            Ok(PostVersion {
                version: r.get(0)?,
                title: r.get(1)?,
                content_html: r.get(2)?,
                content_text: r.get(3)?,
                fetched_at: r.get(4)?,
                replaced_at: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Earlier texts of a post's comments: (key, text), oldest first.
    pub fn comment_versions(&self, post_url: &str) -> Result<Vec<(String, String)>> {
        let mut st = self.conn.prepare(
            "SELECT key, content_text FROM comment_versions WHERE post_url = ?1 ORDER BY id",
        )?;
        let rows = st.query_map([post_url], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Reserves the next request slot of `host` shared by every process on this database: the
    /// slot starts at the later of now and the host's `next_at`, and the host's next slot moves
    /// `delay` past it. Returns how long to wait before the request. One `BEGIN IMMEDIATE`
    /// transaction, so two processes never get the same slot.
    pub fn reserve_host(
        &mut self,
        host: &str,
        delay: std::time::Duration,
    ) -> Result<std::time::Duration> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let now_ts = Utc::now();
        let next: Option<String> = tx
            .query_row(
                "SELECT next_at FROM host_slots WHERE host = ?1",
                [host],
                |r| r.get(0),
            )
            .optional()?;
        let slot = next
            .and_then(|n| DateTime::parse_from_rfc3339(&n).ok())
            .map(|n| n.with_timezone(&Utc))
            .filter(|n| *n > now_ts)
            .unwrap_or(now_ts);
        let after = slot + chrono::Duration::from_std(delay).unwrap_or_default();
        tx.execute(
            "INSERT INTO host_slots (host, next_at) VALUES (?1, ?2) ON CONFLICT (host) DO UPDATE SET next_at = excluded.next_at",
            params![host, after.to_rfc3339_opts(SecondsFormat::Micros, true)],
        )?;
        tx.commit()?;
        Ok((slot - now_ts).to_std().unwrap_or_default())
    }

    /// Caps the database file at about `bytes` (SQLite `max_page_count`): writes beyond it fail
    /// like a full disk does, and the daemon stops taking jobs ([`storage_fault`]).
    pub fn set_max_size(&mut self, bytes: u64) -> Result<()> {
        let page: i64 = self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let pages = (bytes / page.max(1) as u64).max(1);
        let _: i64 = self
            .conn
            .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |r| {
                r.get(0)
            })?;
        Ok(())
    }

    /// Checks the database file (`PRAGMA quick_check`): "ok" or the problems found.
    pub fn quick_check(&self) -> Result<String> {
        Ok(self
            .conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))?)
    }

    /// Jobs, newest first, at most `n`.
    pub fn jobs(&self, n: usize) -> Result<Vec<Job>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM jobs ORDER BY id DESC LIMIT ?1",
            Self::JOB_COLUMNS
        ))?;
        let rows = st.query_map([n as i64], Self::job_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Queued URLs of a blog never scored by the priority model, at most `n`.
    pub fn unscored(&self, blog_id: i64, n: usize) -> Result<Vec<String>> {
        let mut st = self.conn.prepare("SELECT url FROM frontier WHERE blog_id = ?1 AND state = 'queued' AND scored_at < 0 ORDER BY seq LIMIT ?2")?;
        let rows = st.query_map(params![blog_id, n as i64], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Sets the priorities of queued URLs: (url, priority, model size it was computed at).
    pub fn set_priorities(&mut self, blog_id: i64, scores: &[(String, f64, i64)]) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let mut st = tx.prepare(
                "UPDATE frontier SET priority = ?3, scored_at = ?4 WHERE blog_id = ?1 AND url = ?2",
            )?;
            for (u, p, at) in scores {
                st.execute(params![blog_id, u, p, at])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The `n` best queued URLs of a blog that may be fetched at `now`: highest priority first,
    /// then breadth-first. Returns (url, depth, priority, scored_at).
    pub fn best_queued(
        &self,
        blog_id: i64,
        n: usize,
        now: &str,
    ) -> Result<Vec<(String, u32, f64, i64)>> {
        let mut st = self.conn.prepare(
            "SELECT url, depth, priority, scored_at FROM frontier
             WHERE blog_id = ?1 AND state = 'queued' AND (not_before IS NULL OR not_before <= ?3)
             ORDER BY priority DESC, depth, seq LIMIT ?2",
        )?;
        let rows = st.query_map(params![blog_id, n as i64, now], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The earliest `not_before` among a blog's queued URLs waiting to be retried.
    pub fn next_retry(&self, blog_id: i64) -> Result<Option<String>> {
        Ok(self.conn.query_row(
            "SELECT MIN(not_before) FROM frontier WHERE blog_id = ?1 AND state = 'queued' AND not_before IS NOT NULL",
            [blog_id],
            |r| r.get(0),
        )?)
    }

    /// The kNN training data of a blog: (url, L(u)) of every processed page, in processing order.
    pub fn observations(&self, blog_id: i64) -> Result<Vec<(String, u32)>> {
        let mut st = self.conn.prepare("SELECT url, post_links FROM frontier WHERE blog_id = ?1 AND post_links IS NOT NULL ORDER BY rowid")?;
        let rows = st.query_map([blog_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Retry attempts of a frontier URL so far.
    pub fn attempts(&self, blog_id: i64, url: &str) -> Result<u32> {
        Ok(self
            .conn
            .query_row(
                "SELECT attempts FROM frontier WHERE blog_id = ?1 AND url = ?2",
                params![blog_id, url],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0))
    }

    /// Number of frontier URLs of a blog in each state: (state, count).
    pub fn frontier_states(&self, blog_id: i64) -> Result<Vec<(String, u64)>> {
        let mut st = self.conn.prepare(
            "SELECT state, COUNT(*) FROM frontier WHERE blog_id = ?1 GROUP BY state ORDER BY state",
        )?;
        let rows = st.query_map([blog_id], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Counts for one blog.
    pub fn counts(&self, blog_id: i64) -> Result<BlogCounts> {
        let one = |sql: &str| -> Result<u64> {
            Ok(self
                .conn
                .query_row(sql, [blog_id], |r| r.get::<_, i64>(0))? as u64)
        };
        Ok(BlogCounts {
            posts: one("SELECT COUNT(*) FROM posts WHERE blog_id = ?1")?,
            fetches: one("SELECT COUNT(*) FROM fetch_log WHERE blog_id = ?1")?,
            errors: one("SELECT COUNT(*) FROM frontier WHERE blog_id = ?1 AND state = 'failed'")?,
            queued: one("SELECT COUNT(*) FROM frontier WHERE blog_id = ?1 AND state = 'queued'")?,
        })
    }

    /// Every URL in the fetch log, in fetch order (all blogs, and `archive add`'s fetches).
    pub fn fetched_urls(&self) -> Result<Vec<String>> {
        let mut st = self.conn.prepare("SELECT url FROM fetch_log ORDER BY id")?;
        let rows = st.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn post_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Post> {
        Ok(Post {
            url: r.get(0)?,
            blog: r.get(1)?,
            title: r.get(2)?,
            authors: parse_list(r.get(3)?),
            published: r.get(4)?,
            content_html: r.get(5)?,
            content_text: r.get(6)?,
            fetched_at: r.get(7)?,
            updated: r.get(8)?,
            published_raw: r.get(9)?,
            gaps: serde_json::from_str(&r.get::<_, String>(10)?).unwrap_or_default(),
            version: r.get(11)?,
            gone_at: r.get(12)?,
            comments: Vec::new(),
        })
    }

    const POST_SELECT: &'static str = "SELECT p.url, b.home_url, p.title, p.authors, p.published, p.content_html, p.content_text, p.fetched_at,
           p.updated, p.published_raw, p.gaps, p.version, p.gone_at
         FROM posts p JOIN blogs b ON b.id = p.blog_id";

    /// The posts of one blog, or of all blogs, newest first (undated last), then by URL.
    pub fn posts(&self, blog_id: Option<i64>) -> Result<Vec<Post>> {
        let mut st = self.conn.prepare(&format!(
            "{} WHERE ?1 IS NULL OR p.blog_id = ?1 ORDER BY p.blog_id, p.published IS NULL, p.published DESC, p.url",
            Self::POST_SELECT
        ))?;
        let rows = st.query_map([blog_id], Self::post_from_row)?;
        let mut posts: Vec<Post> = rows.collect::<rusqlite::Result<_>>()?;
        for p in &mut posts {
            p.comments = self.comments(&p.url)?;
        }
        Ok(posts)
    }

    /// Calls `f` on each post of one blog, or of all blogs, in the order of [`Store::posts`],
    /// without loading them all into memory. Stops at the first error `f` returns.
    pub fn for_each_post(
        &self,
        blog_id: Option<i64>,
        mut f: impl FnMut(Post) -> Result<()>,
    ) -> Result<u64> {
        let mut st = self.conn.prepare(&format!(
            "{} WHERE ?1 IS NULL OR p.blog_id = ?1 ORDER BY p.blog_id, p.published IS NULL, p.published DESC, p.url",
            Self::POST_SELECT
        ))?;
        let mut rows = st.query([blog_id])?;
        let mut n = 0;
        while let Some(row) = rows.next()? {
            let mut post = Self::post_from_row(row)?;
            post.comments = self.comments(&post.url)?;
            f(post)?;
            n += 1;
        }
        Ok(n)
    }

    /// One post by its URL.
    pub fn post(&self, url: &str) -> Result<Option<Post>> {
        let post = self
            .conn
            .query_row(
                &format!("{} WHERE p.url = ?1", Self::POST_SELECT),
                [url],
                Self::post_from_row,
            )
            .optional()?;
        let Some(mut post) = post else {
            return Ok(None);
        };
        post.comments = self.comments(&post.url)?;
        Ok(Some(post))
    }
}
