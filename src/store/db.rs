//! The seam between the store's operations and its two drivers: [`Db`], a connection (or a
//! transaction on one) that runs SQL with [`Value`] parameters and answers [`Row`]s, written
//! once for rusqlite and once for the `postgres` client. Every operation of the store that both
//! back ends share is written once over it (in `store::<concern>`); only what truly differs
//! (full-text search, `SKIP LOCKED` leasing, host-slot locking, streaming, schema and
//! migrations) is written per back end.
//!
//! SQL is written with SQLite's numbered marks (`?1`, `?2`, …); on PostgreSQL they become
//! `$1`, `$2`, … and each statement is prepared once per connection, then reused (one round trip
//! a statement instead of two).

use anyhow::{Context, Result};
use chrono::{DateTime, FixedOffset, SecondsFormat, Utc};
use std::collections::HashMap;

/// One SQL value, as a parameter or as a column read back. Integers of every width, booleans
/// (PostgreSQL) and 0/1 flags (SQLite) are all [`Value::Int`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// SQL `NULL`.
    Null,
    /// An integer (also a boolean, as 0 or 1).
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text (RFC 3339 instants, vocabulary names and JSON lists are text too).
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

/// The SQL dialect a [`Db`] speaks, for the few statements whose text differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// SQLite (rusqlite, bundled).
    Sqlite,
    /// PostgreSQL (15 and later).
    Postgres,
}

/// A connection, or a transaction on one, that the store's shared operations run their SQL on.
/// SQL uses `?N` marks; parameters are [`Value`]s ([`args!`](crate::store::args) builds them).
pub(crate) trait Db {
    /// Runs one statement; returns the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64>;
    /// Runs one query; returns every row it answered.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>>;
    /// Now, by the database's clock: the server's on PostgreSQL (every worker agrees on it),
    /// this machine's on SQLite.
    fn now(&mut self) -> Result<DateTime<Utc>>;
    /// The dialect of this database.
    fn dialect(&self) -> Dialect;
}

impl dyn Db + '_ {
    /// The single row of a query, if any (further rows are ignored).
    pub(crate) fn query_opt(&mut self, sql: &str, params: &[Value]) -> Result<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// The single row of a query, which must answer one.
    pub(crate) fn query_one(&mut self, sql: &str, params: &[Value]) -> Result<Row> {
        self.query_opt(sql, params)?
            .with_context(|| format!("no row answered: {}", first_line(sql)))
    }

    /// Every row of a query, each read by `f`.
    pub(crate) fn query_map<T>(
        &mut self,
        sql: &str,
        params: &[Value],
        f: impl FnMut(&Row) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.query(sql, params)?.iter().map(f).collect()
    }

    /// The first column of a query's single row as an integer; 0 when it answers no row or
    /// `NULL` (a `SUM` over nothing).
    pub(crate) fn count(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        Ok(match self.query_opt(sql, params)? {
            Some(r) => r.get::<Option<i64>>(0)?.unwrap_or(0).max(0) as u64,
            None => 0,
        })
    }
}

fn first_line(sql: &str) -> &str {
    sql.trim().lines().next().unwrap_or_default()
}

/// One row a query answered: its columns in the order selected.
#[derive(Debug, Clone)]
pub(crate) struct Row(Vec<Value>);

impl Row {
    /// Column `i` as a `T`.
    ///
    /// # Errors
    /// The column does not exist, or holds another type (`NULL` into a non-`Option`).
    pub(crate) fn get<T: FromValue>(&self, i: usize) -> Result<T> {
        let v = self
            .0
            .get(i)
            .with_context(|| format!("no column {i} in the row"))?;
        T::from_value(v).with_context(|| format!("column {i}"))
    }

    /// Column `i`, an RFC 3339 time with the offset it was written with, if set.
    pub(crate) fn local(&self, i: usize) -> Result<Option<DateTime<FixedOffset>>> {
        self.get::<Option<String>>(i)?
            .map(|t| {
                DateTime::parse_from_rfc3339(&t)
                    .with_context(|| format!("stored time {t:?} is not RFC 3339"))
            })
            .transpose()
    }

    /// Column `i`, a stored instant, if set.
    pub(crate) fn time(&self, i: usize) -> Result<Option<DateTime<Utc>>> {
        Ok(self.local(i)?.map(|t| t.with_timezone(&Utc)))
    }

    /// Column `i`, a stored instant that is always set.
    pub(crate) fn time_req(&self, i: usize) -> Result<DateTime<Utc>> {
        self.time(i)?
            .with_context(|| format!("column {i}: a time is missing"))
    }

    /// Column `i`, a vocabulary word stored as its name.
    pub(crate) fn word<T: std::str::FromStr>(&self, i: usize) -> Result<T>
    where
        T::Err: std::error::Error + Send + Sync + 'static,
    {
        Ok(self.get::<String>(i)?.parse()?)
    }

    /// Column `i`, a count (saturating into `u32`; a `NULL` is 0).
    pub(crate) fn count(&self, i: usize) -> Result<u32> {
        Ok(u32::try_from(self.get::<Option<i64>>(i)?.unwrap_or(0).max(0)).unwrap_or(u32::MAX))
    }
}

/// A Rust type a column [`Value`] is read into.
pub(crate) trait FromValue: Sized {
    /// `v` as this type.
    ///
    /// # Errors
    /// `v` holds another type.
    fn from_value(v: &Value) -> Result<Self>;
}

fn wrong(v: &Value, want: &str) -> anyhow::Error {
    anyhow::anyhow!("stored value {v:?} is not {want}")
}

impl FromValue for i64 {
    fn from_value(v: &Value) -> Result<Self> {
        match v {
            Value::Int(i) => Ok(*i),
            _ => Err(wrong(v, "an integer")),
        }
    }
}

impl FromValue for u32 {
    fn from_value(v: &Value) -> Result<Self> {
        Ok(u32::try_from(i64::from_value(v)?)?)
    }
}

impl FromValue for u64 {
    fn from_value(v: &Value) -> Result<Self> {
        Ok(u64::try_from(i64::from_value(v)?)?)
    }
}

impl FromValue for bool {
    fn from_value(v: &Value) -> Result<Self> {
        Ok(i64::from_value(v)? != 0)
    }
}

impl FromValue for f64 {
    fn from_value(v: &Value) -> Result<Self> {
        match v {
            Value::Real(f) => Ok(*f),
            Value::Int(i) => Ok(*i as f64),
            _ => Err(wrong(v, "a number")),
        }
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> Result<Self> {
        match v {
            Value::Text(s) => Ok(s.clone()),
            _ => Err(wrong(v, "text")),
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(v: &Value) -> Result<Self> {
        match v {
            Value::Blob(b) => Ok(b.clone()),
            Value::Text(s) => Ok(s.clone().into_bytes()),
            _ => Err(wrong(v, "bytes")),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Result<Self> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(v.into())
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(v.into())
    }
}

impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<usize> for Value {
    fn from(v: usize) -> Self {
        Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Int(v.into())
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}

/// Text as both back ends keep it, on every write and in every query: without NUL, which
/// PostgreSQL refuses in text (one policy for both, issue 32: a NUL in one feed entry kept a
/// whole blog out of a PostgreSQL archive).
fn text(v: String) -> Value {
    if v.contains('\0') {
        Value::Text(v.replace('\0', ""))
    } else {
        Value::Text(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        text(v.to_string())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        text(v)
    }
}

impl From<&String> for Value {
    fn from(v: &String) -> Self {
        text(v.clone())
    }
}

impl From<&[u8]> for Value {
    fn from(v: &[u8]) -> Self {
        Value::Blob(v.to_vec())
    }
}

impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Blob(v)
    }
}

/// An instant as the store writes it: RFC 3339, UTC, milliseconds (text order = time order).
pub(crate) fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// An instant is stored as RFC 3339 UTC text with milliseconds ([`ts`]).
impl From<DateTime<Utc>> for Value {
    fn from(v: DateTime<Utc>) -> Self {
        Value::Text(ts(v))
    }
}

/// A blog's own time keeps the offset it was written with.
impl From<DateTime<FixedOffset>> for Value {
    fn from(v: DateTime<FixedOffset>) -> Self {
        Value::Text(v.to_rfc3339())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

impl<T: Into<Value> + Clone> From<&Option<T>> for Value {
    fn from(v: &Option<T>) -> Self {
        v.clone().map_or(Value::Null, Into::into)
    }
}

/// Vocabularies are stored as their names.
macro_rules! value_as_name {
    ($($t:ty),+ $(,)?) => {$(
        impl From<$t> for Value {
            fn from(v: $t) -> Self {
                Value::Text(v.as_str().to_string())
            }
        }
    )+};
}

value_as_name!(
    super::kinds::ResponseKind,
    super::kinds::JobKind,
    super::kinds::JobState,
    super::kinds::PageState,
    super::kinds::CommentSource,
    super::kinds::RenderMode,
    super::kinds::Renders,
    super::kinds::MediaState,
    crate::core::rules::Field,
    crate::core::feed::FeedKind,
    crate::core::alerts::AlertKind,
);

/// The parameters of one statement, each converted into a [`Value`]:
/// `args![blog_id, url, PageState::Done]`.
macro_rules! args {
    ($($v:expr),* $(,)?) => {
        &[$($crate::store::db::Value::from($v)),*][..]
    };
}
pub(crate) use args;

/// The one bridge between async code and the store: runs `f`, a blocking wait for the store
/// (a PostgreSQL call waiting for its connection thread and the server's round trips), so
/// that it does not hold up the other tasks of a tokio worker. On a multi-threaded runtime the
/// worker hands its other tasks to another thread for the wait (`block_in_place`); elsewhere
/// (a current-thread runtime, no runtime) `f` simply runs.
///
/// The crawl's async code calls the store's synchronous methods directly: an SQLite call is
/// in-process work of microseconds to a few milliseconds, which costs less than any hand-off;
/// a PostgreSQL call waits on the network, and waits here.
pub(crate) fn wait<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// How many rows one batched statement writes or looks up (a few parameters each: well under
/// SQLite's 32,766 and PostgreSQL's 65,535 parameters).
pub(crate) const ROWS_PER_STATEMENT: usize = 200;

/// `n` marks from `?first` on, comma-separated: `?2, ?3, ?4`.
pub(crate) fn marks(first: usize, n: usize) -> String {
    (0..n)
        .map(|i| format!("?{}", first + i))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---- SQLite ----

/// A rusqlite connection (or a transaction on one: it derefs to its connection) as a [`Db`].
/// Statements are prepared once per connection (`prepare_cached`).
pub(crate) struct SqliteDb<'c>(pub(crate) &'c rusqlite::Connection);

/// Registers the functions everblog's SQL calls on SQLite: `fold(text)`
/// ([`crate::core::text::fold`]: lower case without diacritics, as the search index folds
/// words), for the search's author and tag filters. NULL stays NULL.
///
/// # Errors
/// SQLite refused the function.
pub(crate) fn register_functions(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        "fold",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let text: Option<String> = ctx.get(0)?;
            Ok(text.map(|t| crate::core::text::fold(&t)))
        },
    )
}

impl rusqlite::types::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Real(f) => ValueRef::Real(*f),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

fn sqlite_value(v: rusqlite::types::ValueRef<'_>) -> Result<Value> {
    use rusqlite::types::ValueRef;
    Ok(match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => {
            Value::Text(String::from_utf8(t.to_vec()).context("stored text is not UTF-8")?)
        }
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    })
}

/// A rusqlite row as a [`Row`] (for the per-back-end streaming reads).
pub(crate) fn sqlite_row(r: &rusqlite::Row<'_>) -> Result<Row> {
    Ok(Row((0..r.as_ref().column_count())
        .map(|i| sqlite_value(r.get_ref(i)?))
        .collect::<Result<_>>()?))
}

impl Db for SqliteDb<'_> {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let mut st = self.0.prepare_cached(sql)?;
        Ok(st.execute(rusqlite::params_from_iter(params))? as u64)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        let mut st = self.0.prepare_cached(sql)?;
        let mut rows = st.query(rusqlite::params_from_iter(params))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(sqlite_row(r)?);
        }
        Ok(out)
    }

    fn now(&mut self) -> Result<DateTime<Utc>> {
        Ok(Utc::now())
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
}

// ---- PostgreSQL ----

/// What one PostgreSQL connection keeps between calls: its session state, forgotten with the
/// connection.
#[derive(Default)]
pub(crate) struct Session {
    /// The statements prepared on it, by their SQL text as written (with `?N` marks).
    statements: HashMap<String, postgres::Statement>,
    /// How far the server's clock is ahead of this machine's, and when that was read.
    clock: Option<(chrono::Duration, std::time::Instant)>,
}

/// How long a reading of the server clock's offset is trusted (this machine's clock may be
/// stepped meanwhile).
const CLOCK_READ_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// How many distinct statements one connection keeps prepared; past it the cache starts
/// again (statements built with `format!` could otherwise grow it without bound).
const PREPARED_AT_MOST: usize = 512;

/// A PostgreSQL client or transaction as a [`Db`], with its connection's [`Session`].
pub(crate) struct PgDb<'c, C: postgres::GenericClient> {
    pub(crate) client: &'c mut C,
    pub(crate) session: &'c mut Session,
}

/// `sql` with its `?N` marks written `$N` (outside quoted text).
pub(crate) fn dollar_marks(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            quoted = !quoted;
        }
        if c == '?' && !quoted && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

impl<C: postgres::GenericClient> PgDb<'_, C> {
    fn statement(&mut self, sql: &str) -> Result<postgres::Statement> {
        if let Some(st) = self.session.statements.get(sql) {
            return Ok(st.clone());
        }
        let st = self
            .client
            .prepare(&dollar_marks(sql))
            .with_context(|| format!("preparing: {}", first_line(sql)))?;
        if self.session.statements.len() >= PREPARED_AT_MOST {
            self.session.statements.clear();
        }
        self.session.statements.insert(sql.to_string(), st.clone());
        Ok(st)
    }
}

impl<C: postgres::GenericClient> Db for PgDb<'_, C> {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let st = self.statement(sql)?;
        let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = params
            .iter()
            .map(|p| p as &(dyn postgres::types::ToSql + Sync))
            .collect();
        Ok(self.client.execute(&st, &refs)?)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        let st = self.statement(sql)?;
        let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = params
            .iter()
            .map(|p| p as &(dyn postgres::types::ToSql + Sync))
            .collect();
        self.client.query(&st, &refs)?.iter().map(pg_row).collect()
    }

    /// The server's clock, mostly without a round trip: this machine's clock plus the server's
    /// offset, read (to within a round trip) at most every [`CLOCK_READ_EVERY`].
    fn now(&mut self) -> Result<DateTime<Utc>> {
        if let Some((offset, _)) = self
            .session
            .clock
            .filter(|(_, at)| at.elapsed() < CLOCK_READ_EVERY)
        {
            return Ok(Utc::now() + offset);
        }
        let sent = Utc::now();
        let r = self.query(
            "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT",
            &[],
        )?;
        let ms: i64 = r.first().context("the server answered no time")?.get(0)?;
        use chrono::TimeZone;
        let server = Utc
            .timestamp_millis_opt(ms)
            .single()
            .context("the server's clock is out of range")?;
        let local = sent + (Utc::now() - sent) / 2;
        self.session.clock = Some((server - local, std::time::Instant::now()));
        Ok(server)
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }
}

/// A `postgres` row as a [`Row`] (for the per-back-end streaming reads).
pub(crate) fn pg_row(r: &postgres::Row) -> Result<Row> {
    Ok(Row((0..r.len())
        .map(|i| Ok(r.try_get::<_, Value>(i)?))
        .collect::<Result<_>>()?))
}

type BoxError = Box<dyn std::error::Error + Sync + Send>;

impl postgres::types::ToSql for Value {
    fn to_sql(
        &self,
        ty: &postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> Result<postgres::types::IsNull, BoxError> {
        use postgres::types::Type;
        match self {
            Value::Null => Ok(postgres::types::IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                Type::FLOAT4 => (*i as f32).to_sql(ty, out),
                _ => i.to_string().to_sql(ty, out),
            },
            Value::Real(f) => match *ty {
                Type::FLOAT4 => (*f as f32).to_sql(ty, out),
                Type::FLOAT8 => f.to_sql(ty, out),
                _ => f.to_string().to_sql(ty, out),
            },
            Value::Text(s) => s.to_sql(ty, out),
            Value::Blob(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

impl<'a> postgres::types::FromSql<'a> for Value {
    fn from_sql(ty: &postgres::types::Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        use postgres::types::{FromSql, Type};
        Ok(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::BYTEA => Value::Blob(Vec::<u8>::from_sql(ty, raw)?),
            _ if <String as FromSql>::accepts(ty) => Value::Text(String::from_sql(ty, raw)?),
            _ => return Err(format!("column type {ty} is not read by the store (cast it)").into()),
        })
    }

    fn from_sql_null(_: &postgres::types::Type) -> Result<Self, BoxError> {
        Ok(Value::Null)
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_marks_become_dollar_marks_outside_quotes() {
        assert_eq!(
            dollar_marks("SELECT '?1' FROM t WHERE a = ?1 AND b = ?12"),
            "SELECT '?1' FROM t WHERE a = $1 AND b = $12"
        );
    }

    #[test]
    fn sqlite_round_trips_values() -> Result<()> {
        let conn = rusqlite::Connection::open_in_memory()?;
        let mut db = SqliteDb(&conn);
        let db: &mut dyn Db = &mut db;
        db.execute("CREATE TABLE t (a INTEGER, b TEXT, c BLOB, d REAL)", &[])?;
        db.execute(
            "INSERT INTO t VALUES (?1, ?2, ?3, ?4)",
            args![7i64, "x", vec![1u8, 2], None::<f64>],
        )?;
        let r = db.query_one("SELECT a, b, c, d FROM t", &[])?;
        assert_eq!(r.get::<i64>(0)?, 7);
        assert_eq!(r.get::<String>(1)?, "x");
        assert_eq!(r.get::<Vec<u8>>(2)?, vec![1, 2]);
        assert_eq!(r.get::<Option<f64>>(3)?, None);
        assert!(r.get::<String>(0).is_err(), "an integer is not text");
        assert_eq!(db.count("SELECT SUM(a) FROM t WHERE a > 100", &[])?, 0);
        Ok(())
    }
}
