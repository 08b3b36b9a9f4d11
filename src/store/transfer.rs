//! Moving a whole archive from one database to another (`archive migrate`): SQLite to
//! PostgreSQL when one machine is no longer enough, and back.
//!
//! Both schemas hold the same tables with the same columns (`postgres::schema`), so the move is
//! a copy of rows, table by table in the order their references need, each row with its id:
//! rows keep their ids, so every reference between them still holds. Rows are read in batches
//! in key order and each batch is written in one transaction with `ON CONFLICT DO NOTHING`,
//! so an interrupted move is resumed by running it again: tables with ids continue after the
//! destination's largest id, the others are read again and their rows already there skipped.
//! Where SQLite orders rows by `rowid` (feed entries, post media) PostgreSQL has a `seq`
//! column: rows are copied in that order, so the order survives without copying the column.
//! The full-text index is not copied: each back end's triggers rebuild it as posts and
//! comments arrive.
//!
//! At the end every table is read again on both sides and compared by its row count and a
//! digest of its rows ([`Digest`]); any difference fails the move.

use super::{postgres::PgStore, shown, Store};
use anyhow::{Context, Result};
use rusqlite::types::Value;
use sha2::{Digest as _, Sha256};

/// How a table's rows are ordered and resumed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Order {
    /// By its `id` column; a resumed copy starts after the destination's largest id.
    Id,
    /// In insertion order: SQLite's `rowid`, PostgreSQL's `seq` (not a copied column).
    Inserted,
    /// By its primary key (these columns).
    Key(&'static [&'static str]),
}

/// One table as the move copies it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Table {
    pub(crate) name: &'static str,
    pub(crate) order: Order,
    /// Rows per batch (one destination transaction): fewer where rows hold bodies.
    pub(crate) batch: usize,
}

/// Every table of the archive, each after the tables its rows refer to. The full-text index
/// (`search`) is left out: triggers fill it on both back ends.
pub(crate) const TABLES: &[Table] = &[
    table("blogs", Order::Id, 500),
    table("feed_entries", Order::Inserted, 500),
    table("responses", Order::Id, 50),
    table("fetch_log", Order::Id, 1000),
    table("rules", Order::Id, 500),
    table("frontier", Order::Key(&["blog_id", "url"]), 1000),
    table("posts", Order::Id, 100),
    table("post_aliases", Order::Key(&["url"]), 1000),
    table("pages", Order::Id, 100),
    table("author_pages", Order::Key(&["blog_id", "name"]), 1000),
    table("comments", Order::Id, 500),
    table("jobs", Order::Id, 1000),
    table("post_versions", Order::Id, 100),
    table("comment_versions", Order::Id, 500),
    table("host_slots", Order::Key(&["host"]), 1000),
    table("blobs", Order::Key(&["sha256"]), 50),
    table("post_media", Order::Inserted, 1000),
    table("warc_rolls", Order::Key(&["dir"]), 100),
    table("alerts", Order::Id, 1000),
];

const fn table(name: &'static str, order: Order, batch: usize) -> Table {
    Table { name, order, batch }
}

impl Table {
    /// The columns a batch is ordered and resumed by on SQLite (`rowid`) or PostgreSQL (`seq`).
    pub(crate) fn cursor(&self, postgres: bool) -> Vec<&'static str> {
        match self.order {
            Order::Id => vec!["id"],
            Order::Inserted if postgres => vec!["seq"],
            Order::Inserted => vec!["rowid"],
            Order::Key(k) => k.to_vec(),
        }
    }
}

/// The rows of one batch: each row's cursor values, then its values in the columns asked for.
pub(crate) type Rows = Vec<(Vec<Value>, Vec<Value>)>;

/// Parameter marks `$1, …, $n` (SQLite reads them as `?1, …` once `$` is replaced).
fn marks(n: usize) -> String {
    (1..=n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One side of a move: the database rows are read from or written to.
enum Side<'a> {
    Sqlite(&'a rusqlite::Connection),
    Pg(&'a PgStore),
}

impl Store {
    fn side(&self) -> Side<'_> {
        match &self.0 {
            super::Backend::Postgres(pg) => Side::Pg(pg),
            super::Backend::Sqlite(s) => Side::Sqlite(&s.conn),
        }
    }
}

impl Side<'_> {
    /// The table's copied columns, sorted by name (PostgreSQL's `seq` of [`Order::Inserted`]
    /// is not one).
    fn columns(&self, t: &Table) -> Result<Vec<String>> {
        let mut cols = match self {
            Side::Sqlite(c) => {
                let mut st =
                    c.prepare(&format!("SELECT name FROM pragma_table_info('{}')", t.name))?;
                let names = st.query_map([], |r| r.get::<_, String>(0))?;
                names.collect::<rusqlite::Result<Vec<_>>>()?
            }
            Side::Pg(pg) => pg.transfer_columns(t.name)?,
        };
        if t.order == Order::Inserted {
            cols.retain(|c| c != "seq");
        }
        cols.sort();
        anyhow::ensure!(!cols.is_empty(), "the table {} is missing", t.name);
        Ok(cols)
    }

    /// The one integer `sql` selects (`None`: NULL).
    fn scalar(&self, sql: String) -> Result<Option<i64>> {
        match self {
            Side::Sqlite(c) => Ok(c.query_row(&sql, [], |r| r.get(0))?),
            Side::Pg(pg) => pg.transfer_scalar(sql),
        }
    }

    fn count(&self, t: &Table) -> Result<u64> {
        let n = self.scalar(format!("SELECT count(*) FROM {}", t.name))?;
        Ok(n.unwrap_or(0) as u64)
    }

    /// Jobs whose lease has not expired: a daemon is writing this archive.
    fn running_jobs(&self) -> Result<i64> {
        let n = self.scalar(format!(
            "SELECT count(*) FROM jobs WHERE state = '{}' AND lease_until > '{}'",
            super::JobState::Running.as_str(),
            super::now()
        ))?;
        Ok(n.unwrap_or(0))
    }

    /// The largest id of an [`Order::Id`] table, if it has rows.
    fn max_id(&self, t: &Table) -> Result<Option<i64>> {
        self.scalar(format!("SELECT max(id) FROM {}", t.name))
    }

    /// Up to `t.batch` rows after `after` (the cursor of the last row read; `None`: from the
    /// first) in cursor order.
    fn read(&self, t: &Table, cols: &[String], after: Option<&[Value]>) -> Result<Rows> {
        let postgres = matches!(self, Side::Pg(_));
        let cursor = t.cursor(postgres);
        let mut sql = format!(
            "SELECT {}, {} FROM {}",
            cursor.join(", "),
            cols.join(", "),
            t.name
        );
        if after.is_some() {
            sql += &format!(" WHERE ({}) > ({})", cursor.join(", "), marks(cursor.len()));
        }
        sql += &format!(" ORDER BY {} LIMIT {}", cursor.join(", "), t.batch);
        let after = after.map(<[Value]>::to_vec).unwrap_or_default();
        match self {
            Side::Sqlite(c) => {
                let mut st = c.prepare_cached(&sql.replace('$', "?"))?;
                let width = cursor.len() + cols.len();
                let rows = st.query_map(rusqlite::params_from_iter(after.iter()), |r| {
                    let values = (0..width)
                        .map(|i| r.get::<_, Value>(i))
                        .collect::<rusqlite::Result<Vec<_>>>()?;
                    Ok(values)
                })?;
                let mut out = Vec::new();
                for row in rows {
                    let mut values = row?;
                    let rest = values.split_off(cursor.len());
                    out.push((values, rest));
                }
                Ok(out)
            }
            Side::Pg(pg) => pg.transfer_read(sql, after, cursor.len()),
        }
    }

    /// Writes `rows` (values in `cols`' order) in one transaction, skipping rows already there;
    /// returns how many were new.
    fn insert(&self, t: &Table, cols: &[String], rows: Vec<Vec<Value>>) -> Result<u64> {
        let sql = format!(
            "INSERT INTO {} ({}) VALUES ({}) ON CONFLICT DO NOTHING",
            t.name,
            cols.join(", "),
            marks(cols.len())
        );
        match self {
            Side::Sqlite(c) => {
                let tx = rusqlite::Transaction::new_unchecked(
                    c,
                    rusqlite::TransactionBehavior::Immediate,
                )?;
                let mut new = 0;
                {
                    let mut st = tx.prepare_cached(&sql.replace('$', "?"))?;
                    for row in &rows {
                        new += st.execute(rusqlite::params_from_iter(row.iter()))? as u64;
                    }
                }
                tx.commit()?;
                Ok(new)
            }
            Side::Pg(pg) => pg.transfer_insert(sql, rows),
        }
    }

    /// After a table's rows are in: PostgreSQL's identity continues after the largest id.
    fn finish(&self, t: &Table) -> Result<()> {
        match self {
            Side::Pg(pg) if t.order == Order::Id => pg.transfer_sequence_past_ids(t.name),
            _ => Ok(()),
        }
    }

    /// The table's row count and [`Digest`].
    fn digest(&self, t: &Table, cols: &[String], mut seen: impl FnMut(u64)) -> Result<Digest> {
        let mut digest = Digest::default();
        let mut after: Option<Vec<Value>> = None;
        loop {
            let rows = self.read(t, cols, after.as_deref())?;
            let Some((last, _)) = rows.last() else {
                return Ok(digest);
            };
            after = Some(last.clone());
            seen(rows.len() as u64);
            for (_, values) in &rows {
                digest.add(values);
            }
        }
    }
}

/// A table's contents in brief: its row count and a SHA-256 based digest of its rows that does
/// not depend on their order (each row hashed, the hashes added as 256-bit numbers), so the two
/// back ends, whose text orders differ, compare equal exactly when they hold the same rows.
/// A row's hash covers its values in column-name order, text and bytes alike as bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Digest {
    /// Rows in the table.
    pub rows: u64,
    sum: [u64; 4],
}

impl Digest {
    fn add(&mut self, values: &[Value]) {
        let mut h = Sha256::new();
        for v in values {
            match v {
                Value::Null => h.update([0]),
                Value::Integer(i) => {
                    h.update([1]);
                    h.update(i.to_le_bytes());
                }
                Value::Real(f) => {
                    h.update([2]);
                    h.update(f.to_bits().to_le_bytes());
                }
                Value::Text(s) => bytes(&mut h, s.as_bytes()),
                Value::Blob(b) => bytes(&mut h, b),
            }
        }
        let hash = h.finalize();
        let mut carry = 0u64;
        for (i, word) in hash.chunks(8).enumerate() {
            let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            let (s1, c1) = self.sum[i].overflowing_add(w);
            let (s2, c2) = s1.overflowing_add(carry);
            self.sum[i] = s2;
            carry = u64::from(c1) + u64::from(c2);
        }
        self.rows += 1;
    }
}

fn bytes(h: &mut Sha256, b: &[u8]) {
    h.update([3]);
    h.update((b.len() as u64).to_le_bytes());
    h.update(b);
}

impl std::fmt::Display for Digest {
    /// The sum as 64 hex digits.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for w in self.sum.iter().rev() {
            write!(f, "{w:016x}")?;
        }
        Ok(())
    }
}

/// What a move is doing, for a progress display.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// Copying starts.
    Copy {
        /// Rows in the source, all tables.
        rows: u64,
        /// Of them, rows a resumed move will not read again.
        done: u64,
    },
    /// Copying this table.
    Table(&'a str),
    /// This many more rows were read (copied or found there already).
    Rows(u64),
    /// Verifying starts.
    Verify {
        /// Rows to read, both sides together.
        rows: u64,
    },
}

/// What a move did to one table.
#[derive(Debug, Clone)]
pub struct Moved {
    /// The table.
    pub table: &'static str,
    /// Rows written by this run (the rest were there from an interrupted one).
    pub copied: u64,
    /// The table on both sides after the move (equal, or the move failed).
    pub digest: Digest,
}

/// Copies the whole archive at `from` into `to` (SQLite files or `postgres://` URLs), then
/// verifies it: every table's row count and [`Digest`] equal on both sides. `progress` is told
/// what is being done.
///
/// The destination must be empty, or hold an interrupted move of the same archive (its blogs
/// are the source's, id for id): running the same move again resumes it. The source is only
/// read; stop the daemons writing it first.
///
/// # Errors
/// One line naming the database: `from` is missing or is `to`; the source has jobs running
/// (a daemon is writing it); the destination holds another archive; a row cannot be written
/// (a value of the wrong type, named by table and column); or the verification found a table
/// that differs.
pub fn transfer(
    from: &super::DatabaseSettings,
    to: &super::DatabaseSettings,
    mut progress: impl FnMut(Step),
) -> Result<Vec<Moved>> {
    let (settings_from, settings_to) = (from, to);
    let (from, to) = (from.path()?, to.path()?);
    anyhow::ensure!(
        from != to,
        "--from and --to are the same database ({}); give another destination",
        shown(to)
    );
    anyhow::ensure!(
        super::is_postgres(from) || from.exists(),
        "the source database {} does not exist; give the archive to move with --from (or --db)",
        shown(from)
    );
    let source = Store::open_read_only(settings_from)
        .with_context(|| format!("opening the source {}", shown(from)))?;
    let running = source.side().running_jobs()?;
    anyhow::ensure!(
        running == 0,
        "{} has {running} job(s) running: stop the daemons using it (systemctl stop everblog), then move it",
        shown(from)
    );
    let dest = Store::open(settings_to)
        .with_context(|| format!("opening the destination {}", shown(to)))?;
    let theirs: std::collections::HashMap<super::BlogId, String> = source
        .blogs()?
        .into_iter()
        .map(|b| (b.id, b.feed_url))
        .collect();
    if let Some(other) = dest
        .blogs()?
        .into_iter()
        .find(|b| theirs.get(&b.id) != Some(&b.feed_url))
    {
        anyhow::bail!(
            "the destination {} already holds another archive (its blog {} is not the source's): move into an empty database",
            shown(to),
            other.feed_url
        );
    }

    let (src, dst) = (source.side(), dest.side());
    let mut plans = Vec::new();
    let (mut rows, mut done) = (0, 0);
    for t in TABLES {
        let cols = src.columns(t)?;
        let theirs = dst.columns(t)?;
        anyhow::ensure!(
            cols == theirs,
            "the table {} has other columns in {} ({}) than in {} ({}): both must be this everblog's schema",
            t.name,
            shown(from),
            cols.join(", "),
            shown(to),
            theirs.join(", ")
        );
        rows += src.count(t)?;
        if t.order == Order::Id {
            // Resumed after the destination's largest id; other tables are read again.
            done += dst.count(t)?;
        }
        plans.push((t, cols));
    }
    progress(Step::Copy { rows, done });

    let mut moved = Vec::new();
    for (t, cols) in &plans {
        progress(Step::Table(t.name));
        let mut after = match t.order {
            Order::Id => dst.max_id(t)?.map(|id| vec![Value::Integer(id)]),
            _ => None,
        };
        let mut copied = 0;
        loop {
            let batch = src.read(t, cols, after.as_deref())?;
            let Some((last, _)) = batch.last() else { break };
            after = Some(last.clone());
            let n = batch.len() as u64;
            let values = batch.into_iter().map(|(_, v)| v).collect();
            copied += dst
                .insert(t, cols, values)
                .with_context(|| format!("writing {} rows into {}", t.name, shown(to)))?;
            progress(Step::Rows(n));
        }
        dst.finish(t)?;
        moved.push(Moved {
            table: t.name,
            copied,
            digest: Digest::default(),
        });
    }

    progress(Step::Verify { rows: 2 * rows });
    for ((t, cols), m) in plans.iter().zip(&mut moved) {
        let a = src.digest(t, cols, |n| progress(Step::Rows(n)))?;
        let b = dst.digest(t, cols, |n| progress(Step::Rows(n)))?;
        anyhow::ensure!(
            a == b,
            "verification failed: the table {} differs ({} rows, digest {a} in {}; {} rows, digest {b} in {}): the source changed during the move, or a value did not survive it; run the move again into an empty database",
            t.name,
            a.rows,
            shown(from),
            b.rows,
            shown(to)
        );
        m.digest = a;
    }
    Ok(moved)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table added by a migration must be added to [`TABLES`], or a move would leave it
    /// behind.
    #[test]
    fn every_table_of_the_schema_is_moved() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            Store::open(&crate::store::DatabaseSettings::at(dir.path().join("a.db"))).unwrap();
        let mut st = store
            .sqlite_connection()
            .prepare(
                "SELECT name FROM sqlite_master WHERE type = 'table'
                 AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'search%' ORDER BY name",
            )
            .unwrap();
        let names = st.query_map([], |r| r.get::<_, String>(0)).unwrap();
        let schema: Vec<String> = names.map(Result::unwrap).collect();
        let mut moved: Vec<String> = TABLES.iter().map(|t| t.name.to_string()).collect();
        moved.sort();
        assert_eq!(schema, moved);
    }

    #[test]
    fn the_digest_does_not_depend_on_row_order_but_on_every_value() {
        let rows = [
            vec![Value::Integer(1), Value::Text("a".into())],
            vec![Value::Integer(2), Value::Null],
            vec![Value::Real(0.5), Value::Blob(b"a".to_vec())],
        ];
        let digest = |order: &[usize]| {
            let mut d = Digest::default();
            order.iter().for_each(|&i| d.add(&rows[i]));
            d
        };
        assert_eq!(digest(&[0, 1, 2]), digest(&[2, 0, 1]));
        assert_ne!(digest(&[0, 1]), digest(&[0, 2]));
        assert_eq!(digest(&[0, 1, 2]).rows, 3);
        let mut changed = Digest::default();
        changed.add(&[Value::Integer(1), Value::Text("b".into())]);
        changed.add(&rows[1]);
        changed.add(&rows[2]);
        assert_ne!(changed, digest(&[0, 1, 2]));
    }
}
