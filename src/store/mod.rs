//! The store: every SQL statement of everblog lives in this module, over SQLite via rusqlite
//! or, when the database is a `postgres://` URL, over PostgreSQL ([`postgres`]). Each of
//! [`Store`]'s methods is written once, over the seam both drivers implement (`store::db`),
//! and reaches the back end it was opened on through `Store::read` or `Store::write`; only
//! what truly differs is written per back end (full-text search pieces, the lease's
//! `SKIP LOCKED`, host-slot locking, the streams, schema and migrations, `store::surface`).
//!
//! One [`Store`] type, its methods split by concern:
//! - [`records`]: the record types; `kinds`: the vocabularies of their states and kinds;
//! - `ids`: the row ids as types of their own ([`BlogId`], [`ResponseId`]);
//! - `blogs`: blogs, their feed entries, learned rules and render decision;
//! - `responses`: raw responses and the fetch log;
//! - `frontier`: the crawl queue of each blog (paper §4.3);
//! - `posts`: posts, comments and their versions, written one crawled page at a time;
//! - `jobs`: the job queue with leases;
//! - `host_slots`: per-host request slots shared by every process on the database;
//! - `media`, `coverage`, `reading`: post media, the coverage report, the reader's queries;
//! - [`postgres`]: the PostgreSQL connection, its streams, host slots, schema and migrations;
//! - [`transfer`]: moving a whole archive between databases (`archive migrate`).
//!
//! SQLite runs in WAL mode with the `[database] busy_timeout` (5 s); every multi-statement write is one
//! `BEGIN IMMEDIATE` transaction (with DEFERRED, a read that upgrades to a write fails at once
//! with SQLITE_BUSY instead of waiting). Processing one crawled page — its raw response, its
//! fetch-log line, its post, its new frontier links and its frontier state — is one transaction,
//! so a crash leaves either all of it or none of it.
//!
//! Instants are written as RFC 3339 UTC with milliseconds (`ts`), so their text order is their
//! time order and SQL can compare them; a blog's own times keep the offset it wrote.

mod alerts;
mod aliases;
mod blogs;
mod coverage;
pub(crate) mod db;
mod figures;
mod frontier;
mod fts;
mod full_text;
mod history;
mod hits;
mod host_slots;
mod ids;
mod jobs;
mod kinds;
mod media;
mod migrations;
mod pages;
mod pending;
pub mod postgres;
mod posts;
mod reading;
pub mod records;
mod responses;
mod revisits;
pub mod search;
mod sql;
mod surface;
pub mod transfer;

pub use alerts::OpenAlert;
pub use figures::ArchiveFigures;
pub use frontier::{DiscoveredUrl, Findings, FrontierUrl, Observation, StateCount};
pub use full_text::{fts_query, SearchOrder, SearchQuery};
pub use history::{BlogHistory, JobRun, MonthFigures, HISTORY_JOBS};
pub use hits::{Hit, HitComment, MatchedIn, COMMENTS_PER_HIT};
pub use host_slots::StoreGate;
pub use ids::{BlogId, ResponseId};
pub use jobs::JobFilter;
pub use kinds::{
    CommentSource, JobKind, JobState, MediaState, PageState, RenderMode, Renders, ResponseKind,
    Source,
};
pub use media::{NewMedia, PendingMedia, ResponseStatus};
pub use pending::Pending;
pub use posts::{AuthorsAndTags, CommentVersion, CommentsWritten};
pub use reading::{
    Capture, CapturedPage, CapturedPages, Count, Neighbour, Neighbours, PostFilter, PostPage,
    PostSummary,
};
pub use records::*;
pub use responses::{CaptureSpan, NotModified, StoredResponse, WarcRoll};
pub use revisits::{Revisit, RevisitFigures};

use anyhow::{Context, Result};
use chrono::{DateTime, FixedOffset, Utc};
use db::ts;
use pending::Answer;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use rusqlite::{Connection, Transaction, TransactionBehavior};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the archive lives, how large it may grow and how long it waits: the `[database]`
/// section of the configuration file, resolved by `Config::database` (the path filled in).
/// Every [`Store`] is opened from one, so the size cap and the waits hold for every command.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DatabaseSettings {
    /// The database file, or a PostgreSQL URL (`postgres://user@host/db`; `url` is another
    /// name for this key); `None`: `$XDG_DATA_HOME/everblog/archive.db`. `--db` and
    /// `$EVERBLOG_DB` override it.
    #[serde(skip_serializing_if = "Option::is_none", alias = "url")]
    pub path: Option<PathBuf>,
    /// Cap of the database file in MB (0: none); past it writes fail like a full disk and the
    /// daemon stops, saying so. SQLite only (PostgreSQL: the server's quotas).
    pub max_size_mb: f64,
    /// How long an SQLite statement waits for another process's write lock before it fails
    /// ("database is locked").
    #[serde(with = "humantime_serde")]
    pub busy_timeout: Duration,
    /// How long a PostgreSQL call keeps reconnecting after the connection is lost (the server
    /// restarting, a network cut) before it fails.
    #[serde(with = "humantime_serde")]
    pub reconnect_for: Duration,
}

impl Default for DatabaseSettings {
    fn default() -> Self {
        DatabaseSettings {
            path: None,
            max_size_mb: 0.0,
            busy_timeout: Duration::from_secs(5),
            reconnect_for: Duration::from_secs(30),
        }
    }
}

impl DatabaseSettings {
    /// The defaults, on the database at `path` (a file, or a `postgres://` URL).
    pub fn at(path: impl AsRef<Path>) -> DatabaseSettings {
        DatabaseSettings {
            path: Some(path.as_ref().to_path_buf()),
            ..DatabaseSettings::default()
        }
    }

    /// The size cap in bytes, if any.
    pub fn max_bytes(&self) -> Option<u64> {
        (self.max_size_mb > 0.0).then_some((self.max_size_mb * 1024.0 * 1024.0) as u64)
    }

    /// The database for messages: its path, or its URL without the password ([`shown`]).
    pub fn shown(&self) -> String {
        self.path
            .as_deref()
            .map_or_else(|| "(no database set)".to_string(), shown)
    }

    /// The database's path or URL.
    ///
    /// # Errors
    /// None is set (`Config::database` always sets one).
    pub fn path(&self) -> Result<&Path> {
        self.path
            .as_deref()
            .context("no database path is set: give --db or [database] path")
    }
}

/// An open archive database: an SQLite file, or a PostgreSQL database ([`postgres::PgStore`])
/// when the path given to [`Store::open`] is a `postgres://` URL. Every method answers the
/// same on both (`tests/store_backends.rs`, `tests/store_round_trips*.rs`); the methods that
/// read and write the archive are listed, with their documentation, in `store::surface`.
pub struct Store(Backend);

/// The back end a [`Store`] was opened on.
enum Backend {
    Sqlite(SqliteStore),
    Postgres(postgres::PgStore),
}

/// The SQLite back end: one connection. Its methods, in `store::<concern>`, have the names and
/// arguments of [`Store`]'s.
struct SqliteStore {
    conn: Connection,
}

/// Whether `path` names a PostgreSQL database (`postgres://…` or `postgresql://…`).
pub fn is_postgres(path: &Path) -> bool {
    let p = path.to_string_lossy();
    p.starts_with("postgres://") || p.starts_with("postgresql://")
}

/// `path` for messages: a PostgreSQL URL without its password.
pub fn shown(path: &Path) -> String {
    if is_postgres(path) {
        postgres::redact(&path.to_string_lossy())
    } else {
        path.display().to_string()
    }
}

/// The database cannot be reached now (PostgreSQL down, restarting, or cut off), after the
/// reconnect window: worth a retry later, not a fault of the request (the reader answers 503).
pub fn unavailable(e: &anyhow::Error) -> bool {
    postgres::connection_lost(e)
}

/// A storage fault the daemon cannot work through: the disk (or the configured size cap) is
/// full, or the database is read-only. Returns a sentence saying what to do; `None` for any
/// other error.
pub fn storage_fault(e: &anyhow::Error) -> Option<String> {
    e.chain().find_map(|cause| {
        if let Some(code) = cause
            .downcast_ref::<::postgres::Error>()
            .and_then(|pe| pe.code())
        {
            use ::postgres::error::SqlState;
            return match code {
                c if *c == SqlState::DISK_FULL || *c == SqlState::INSUFFICIENT_RESOURCES => Some(
                    "the PostgreSQL server is out of disk space: free space there, then restart".to_string(),
                ),
                c if *c == SqlState::READ_ONLY_SQL_TRANSACTION => Some(
                    "the PostgreSQL server is read-only (a standby?): point --db at the primary, then restart".to_string(),
                ),
                _ => None,
            };
        }
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

/// Now, as the store writes it.
fn now() -> String {
    ts(Utc::now())
}

/// Reads an optional stored instant (any RFC 3339 form: older rows have whole seconds).
fn utc_col(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<DateTime<Utc>>> {
    local_col(r, i).map(|t| t.map(|t| t.with_timezone(&Utc)))
}

/// Reads an optional stored time with the offset it was written with.
fn local_col(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<DateTime<FixedOffset>>> {
    let Some(text) = r.get::<_, Option<String>>(i)? else {
        return Ok(None);
    };
    DateTime::parse_from_rfc3339(&text).map(Some).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(
            i,
            rusqlite::types::Type::Text,
            format!("stored time {text:?} is not RFC 3339: {e}").into(),
        )
    })
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

/// A list of names as stored (JSON text), without NUL (its JSON escape is refused where
/// PostgreSQL reads the list as `jsonb`).
fn json_list(v: &[String]) -> String {
    let clean: Vec<String> = v.iter().map(|s| s.replace('\0', "")).collect();
    serde_json::to_string(&clean).expect("strings serialise")
}

fn parse_list(s: String) -> Vec<String> {
    serde_json::from_str(&s).unwrap_or_default()
}

/// Vocabularies are stored as their names.
macro_rules! stored_as_name {
    ($($t:ty),+ $(,)?) => {$(
        impl ToSql for $t {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }
        impl FromSql for $t {
            fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
                v.as_str()?.parse().map_err(|e| FromSqlError::Other(Box::new(e)))
            }
        }
    )+};
}

stored_as_name!(
    JobKind,
    JobState,
    PageState,
    CommentSource,
    RenderMode,
    Renders,
    crate::core::rules::Field,
    crate::core::feed::FeedKind,
);

impl Store {
    /// Opens (creating if needed, with its parent directory) and migrates the database
    /// `settings` name, for writing, with its size cap and busy timeout; a `postgres://` URL
    /// opens that PostgreSQL database ([`postgres::PgStore`]) with its reconnect window.
    ///
    /// # Errors
    /// One line naming the file and what to do: it cannot be created or opened, it is read-only
    /// (for this user, or its directory is), it is not an SQLite database, or it was written by a
    /// newer everblog (unknown schema version).
    pub fn open(settings: &DatabaseSettings) -> Result<Store> {
        let path = settings.path()?;
        if is_postgres(path) {
            return Ok(Store(Backend::Postgres(postgres::PgStore::open(
                &path.to_string_lossy(),
                settings.reconnect_for,
            )?)));
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let read_only = || {
            anyhow::anyhow!(
                "the database {} is read-only: give this user write access to the file and its directory (reading commands such as list, show and export work as it is)",
                path.display()
            )
        };
        let conn = Connection::open(path).map_err(|e| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen)
                if path.exists() =>
            {
                read_only()
            }
            _ => anyhow::Error::new(e).context(format!("opening database {}", path.display())),
        })?;
        conn.busy_timeout(settings.busy_timeout)?;
        db::register_functions(&conn)?;
        // Switching a new file to WAL needs it to itself, and SQLite answers "database is
        // locked" at once, without the busy handler, when another process is opening the same
        // new file (daemons started together): try again for as long as the busy timeout.
        let started = std::time::Instant::now();
        let mode: String = loop {
            match conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)) {
                Err(e)
                    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                        && started.elapsed() < settings.busy_timeout =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => break other,
            }
        }
        .map_err(|e| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen) => read_only(),
            _ => anyhow::Error::new(e).context(format!(
                "{} is not an everblog database (SQLite refused it)",
                path.display()
            )),
        })?;
        if conn.is_readonly(rusqlite::MAIN_DB)? {
            return Err(read_only());
        }
        anyhow::ensure!(
            mode.eq_ignore_ascii_case("wal"),
            "{}: could not enable WAL (got {mode})",
            path.display()
        );
        conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")?;
        let mut store = SqliteStore { conn };
        store
            .migrate()
            .with_context(|| format!("migrating {}", path.display()))?;
        if let Some(bytes) = settings.max_bytes() {
            store.set_max_size(bytes)?;
        }
        Ok(Store(Backend::Sqlite(store)))
    }

    /// Opens the database `settings` name for reading only: nothing is written, so an archive
    /// this user may only read (another user's, a read-only mount, a copy on a CD) can be
    /// listed, shown and exported; on PostgreSQL every transaction of the store is read-only,
    /// reconnections included. A missing file is created as by [`Store::open`] (an empty
    /// archive; `archive serve` refuses one first).
    ///
    /// A database written by an older everblog is upgraded first when this user may write it.
    ///
    /// # Errors
    /// The file is not an SQLite database, was written by a newer everblog, or by an older one
    /// whose schema needs an upgrade this user cannot write.
    pub fn open_read_only(settings: &DatabaseSettings) -> Result<Store> {
        let path = settings.path()?;
        if is_postgres(path) {
            // Migrated first when this user may (as an SQLite file is), then read-only.
            let store = Store::open(settings)?;
            if let Backend::Postgres(pg) = &store.0 {
                pg.make_read_only()?;
            }
            return Ok(store);
        }
        if !path.exists() {
            return Store::open(settings);
        }
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
            | rusqlite::OpenFlags::SQLITE_OPEN_URI
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let not_ours = |e: rusqlite::Error| {
            anyhow::Error::new(e).context(format!(
                "{} is not an everblog database (SQLite refused it)",
                path.display()
            ))
        };
        let version = |conn: &Connection| -> rusqlite::Result<i64> {
            conn.query_row("PRAGMA user_version", [], |r| r.get(0))
        };
        let mut conn = Connection::open_with_flags(path, flags).map_err(not_ours)?;
        let v = match version(&conn) {
            Ok(v) => v,
            // A WAL database whose shared-memory file cannot be created here (read-only
            // directory): read it as an immutable file instead.
            Err(e)
                if matches!(
                    e.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
                ) =>
            {
                let uri = format!(
                    "file:{}?immutable=1",
                    percent_encoding::utf8_percent_encode(
                        &path.to_string_lossy(),
                        percent_encoding::NON_ALPHANUMERIC
                    )
                    .to_string()
                    .replace("%2F", "/")
                );
                conn = Connection::open_with_flags(uri, flags).map_err(not_ours)?;
                version(&conn).map_err(not_ours)?
            }
            Err(e) => return Err(not_ours(e)),
        };
        let known = migrations::MIGRATIONS.len() as i64;
        anyhow::ensure!(
            v <= known,
            "database schema version {v} is newer than this everblog understands ({known}); upgrade everblog"
        );
        if v < known {
            // Written by an older everblog: upgrade it if this user may, else say how.
            drop(conn);
            return Store::open(settings).with_context(|| {
                format!(
                    "{} was written by an older everblog (schema {v}, this one reads {known}) and cannot be upgraded here: run any `archive` command once as a user who may write it",
                    path.display()
                )
            });
        }
        conn.busy_timeout(settings.busy_timeout)?;
        db::register_functions(&conn)?;
        Ok(Store(Backend::Sqlite(SqliteStore { conn })))
    }

    /// Runs `f` in one read transaction, so that every query it makes sees the same
    /// snapshot of the archive (a crawl committing meanwhile is not seen): an export that
    /// counts posts, then streams them, gets as many as it counted.
    ///
    /// # Errors
    /// The database failed, or `f` did.
    ///
    /// On PostgreSQL each query is its own transaction: `f` runs as it is, without one
    /// snapshot.
    pub fn snapshot<T>(&self, f: impl FnOnce(&Store) -> Result<T>) -> Result<T> {
        let Backend::Sqlite(s) = &self.0 else {
            return f(self);
        };
        s.conn.execute_batch("BEGIN DEFERRED")?;
        let out = f(self);
        let end = s
            .conn
            .execute_batch(if out.is_ok() { "COMMIT" } else { "ROLLBACK" });
        let out = out?;
        end?;
        Ok(out)
    }

    /// The database's clock: what it stamps writes with (on PostgreSQL, the server's).
    ///
    /// # Errors
    /// The database failed.
    pub fn now(&self) -> Result<DateTime<Utc>> {
        self.read(|db| db.now())
    }

    /// The schema version (number of migrations applied).
    ///
    /// # Errors
    /// The database failed.
    pub fn schema_version(&self) -> Result<i64> {
        match &self.0 {
            Backend::Sqlite(s) => s.schema_version(),
            Backend::Postgres(p) => p.schema_version(),
        }
    }

    /// Checks the database (SQLite `PRAGMA quick_check`; on PostgreSQL, that the server
    /// answers): "ok" or the problems found.
    ///
    /// # Errors
    /// The database failed.
    pub fn quick_check(&self) -> Result<String> {
        match &self.0 {
            Backend::Sqlite(s) => s.quick_check(),
            Backend::Postgres(p) => p.schema_version().map(|_| "ok".to_string()),
        }
    }
}

impl Store {
    /// Runs `f` on the back end's connection, each statement on its own (reads).
    /// On PostgreSQL `f` runs on the connection thread and is run again on a new connection
    /// when the connection was lost (for up to `[database] reconnect_for`).
    pub(crate) fn read<R: Send + 'static>(
        &self,
        f: impl Fn(&mut dyn db::Db) -> Result<R> + Send + Sync + 'static,
    ) -> Result<R> {
        match &self.0 {
            Backend::Sqlite(s) => f(&mut db::SqliteDb(&s.conn)),
            Backend::Postgres(p) => p.run(false, f),
        }
    }

    /// [`Store::write`], its answer taken later ([`Pending::wait`]): on PostgreSQL the caller
    /// goes on while the server works (calls keep their order on the connection); on SQLite it
    /// is written at once.
    pub(crate) fn write_later<R: Send + 'static>(
        &mut self,
        f: impl Fn(&mut dyn db::Db) -> Result<R> + Send + Sync + 'static,
    ) -> Pending<R> {
        match &mut self.0 {
            Backend::Sqlite(_) => Pending(Answer::Ready(self.write(f))),
            Backend::Postgres(p) => p
                .run_later(f)
                .unwrap_or_else(|e| Pending(Answer::Ready(Err(e)))),
        }
    }

    /// Runs `f` in one write transaction (SQLite `BEGIN IMMEDIATE`), committed when it
    /// succeeds and rolled back when it fails: all of its writes or none.
    pub(crate) fn write<R: Send + 'static>(
        &mut self,
        f: impl Fn(&mut dyn db::Db) -> Result<R> + Send + Sync + 'static,
    ) -> Result<R> {
        match &mut self.0 {
            Backend::Sqlite(s) => s.write(|tx| f(&mut db::SqliteDb(tx))),
            Backend::Postgres(p) => p.run(true, f),
        }
    }
}

#[cfg(test)]
impl Store {
    /// The SQLite connection, for tests that write rows directly.
    pub(crate) fn sqlite_connection(&self) -> &Connection {
        match &self.0 {
            Backend::Sqlite(s) => &s.conn,
            Backend::Postgres(_) => panic!("not an SQLite store"),
        }
    }
}

impl SqliteStore {
    fn migrate(&mut self) -> Result<()> {
        let version = self.schema_version()? as usize;
        anyhow::ensure!(
            version <= migrations::MIGRATIONS.len(),
            "database schema version {version} is newer than this everblog understands ({}); upgrade everblog",
            migrations::MIGRATIONS.len()
        );
        if version == migrations::MIGRATIONS.len() {
            return Ok(());
        }
        // Each step reads the version again inside its write transaction: processes opening a
        // new database together (daemons started at once) then migrate it once, in turn,
        // instead of each running the same migration on what another already migrated.
        loop {
            let done = self.write(|tx| {
                let v: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
                let Some(sql) = migrations::MIGRATIONS.get(v as usize) else {
                    return Ok(true);
                };
                tx.execute_batch(sql)?;
                tx.execute_batch(&format!("PRAGMA user_version = {}", v + 1))?;
                Ok(false)
            })?;
            if done {
                return Ok(());
            }
        }
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction, committed when `f` succeeds.
    fn write<T>(&mut self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }

    fn schema_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    fn set_max_size(&mut self, bytes: u64) -> Result<()> {
        let page: i64 = self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let pages = (bytes / page.max(1) as u64).max(1);
        let _: i64 = self
            .conn
            .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |r| {
                r.get(0)
            })?;
        Ok(())
    }

    fn quick_check(&self) -> Result<String> {
        Ok(self
            .conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))?)
    }
}
