//! The PostgreSQL back end of the store, for daemons on many machines sharing one archive and
//! one job queue (issue 16). [`super::Store`] answers from a [`PgStore`] when it was opened
//! on a `postgres://` URL: the store's operations, written once over `store::db`, run here as
//! closures on the connection thread (`PgStore::run`); what is PostgreSQL's own is here
//! (`host_slots` with the host's row locked, the `posts` and `responses` streams, `schema`,
//! `transfer`), and `tests/store_backends.rs` and `tests/store_round_trips*.rs` run the same
//! tests on both.
//!
//! Conventions, the same as on SQLite so that an archive moves between the two unchanged:
//! instants are RFC 3339 UTC text with milliseconds (`store::db::ts`: text order is time order),
//! vocabularies are their names, lists are JSON text, ids are `BIGINT` identities.
//!
//! The `postgres` client blocks, and blocking on its own runtime inside a tokio task panics,
//! so each `PgStore` owns one connection on a thread of its own and sends it calls; the caller
//! waits for the answer as it waits for SQLite. A call whose connection is lost (PostgreSQL
//! restarting, a network cut) is run again on a new connection for up to `reconnect_for`: each
//! call is one transaction, so a lost one was rolled back and running it again is safe.

mod host_slots;
mod posts;
mod responses;
pub mod schema;
mod transfer;

use anyhow::{Context, Result};
use std::sync::mpsc;
use std::time::{Duration, Instant};

type Call = Box<dyn FnOnce(&mut Connection) + Send>;

/// The connection thread's side: the URL and, while connected, the client.
pub(crate) struct Connection {
    url: String,
    client: Option<postgres::Client>,
    /// The session state of `client` (statements prepared on it, the server's clock),
    /// forgotten with it.
    session: crate::store::db::Session,
    /// Every session of this connection is read-only (the reader's), reconnections included.
    read_only: bool,
}

impl Connection {
    /// The client, connected again when the connection was lost.
    fn client(&mut self) -> Result<&mut postgres::Client> {
        if self.client.as_ref().is_none_or(|c| c.is_closed()) {
            self.client = None;
            self.session = Default::default();
            let client =
                postgres::Client::connect(&self.url, postgres::NoTls).map_err(|source| {
                    Unreachable {
                        server: redact(&self.url),
                        source,
                    }
                })?;
            self.client = Some(client);
            if self.read_only {
                self.client
                    .as_mut()
                    .expect("connected above")
                    .batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")?;
            }
        }
        Ok(self.client.as_mut().expect("connected above"))
    }
}

/// The server could not be reached (a new connection failed): worth trying again while it
/// restarts.
#[derive(Debug, thiserror::Error)]
#[error("connecting to {server}")]
struct Unreachable {
    /// The URL, password hidden.
    server: String,
    #[source]
    source: postgres::Error,
}

/// An archive database on a PostgreSQL server.
pub struct PgStore {
    calls: mpsc::Sender<Call>,
    url: String,
    /// How long a call keeps reconnecting after the connection is lost (`[database]
    /// reconnect_for`).
    reconnect_for: Duration,
}

/// The URL without its password, for messages.
pub(crate) fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_string(),
    }
}

/// Whether `e` is a lost connection (worth a new one), not an error of the statement.
pub(crate) fn connection_lost(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause.downcast_ref::<postgres::Error>().is_some_and(|pe| {
            pe.is_closed()
                || std::error::Error::source(pe).is_some_and(|s| s.is::<std::io::Error>())
        }) || cause.downcast_ref::<std::io::Error>().is_some()
            || cause.is::<Unreachable>()
    }) || e
        .chain()
        .filter_map(|c| c.downcast_ref::<postgres::Error>())
        .filter_map(|pe| pe.code())
        .any(|code| {
            // The server is shutting down or starting: admin_shutdown, crash_shutdown,
            // cannot_connect_now.
            [
                postgres::error::SqlState::ADMIN_SHUTDOWN,
                postgres::error::SqlState::CRASH_SHUTDOWN,
                postgres::error::SqlState::CANNOT_CONNECT_NOW,
            ]
            .contains(code)
        })
}

/// `f` as a call on the connection: its statements one after another when `write` is false,
/// else in one transaction committed when `f` succeeds.
fn on_db<R>(
    write: bool,
    f: impl Fn(&mut dyn crate::store::db::Db) -> Result<R> + Send + Sync + 'static,
) -> impl Fn(&mut Connection) -> Result<R> + Send + Sync + 'static {
    use crate::store::db::PgDb;
    move |conn| {
        conn.client()?;
        let Connection {
            client, session, ..
        } = conn;
        let client = client.as_mut().expect("connected above");
        if !write {
            return f(&mut PgDb { client, session });
        }
        let mut tx = client.transaction()?;
        let out = f(&mut PgDb {
            client: &mut tx,
            session,
        })?;
        tx.commit()?;
        Ok(out)
    }
}

impl PgStore {
    /// Connects to the PostgreSQL database at `url` (`postgres://user[:password]@host[:port]/db`)
    /// and brings its schema up to date (under an advisory lock: daemons starting together
    /// migrate once).
    ///
    /// # Errors
    /// One line naming the server (password hidden): it cannot be reached, refuses the user, or
    /// holds a schema newer than this everblog understands.
    pub fn open(url: &str, reconnect_for: Duration) -> Result<PgStore> {
        let (calls, queue) = mpsc::channel::<Call>();
        let mut conn = Connection {
            url: url.to_string(),
            client: None,
            session: Default::default(),
            read_only: false,
        };
        std::thread::Builder::new()
            .name("everblog-postgres".into())
            .spawn(move || {
                for call in queue {
                    call(&mut conn);
                }
            })
            .context("starting the PostgreSQL connection thread")?;
        let store = PgStore {
            calls,
            url: url.to_string(),
            reconnect_for,
        };
        // The first connection is made on the connection thread (the client cannot connect
        // inside a tokio task either) and not retried: a wrong URL fails at once.
        let (answer, answered) = mpsc::sync_channel(1);
        store
            .calls
            .send(Box::new(move |conn: &mut Connection| {
                let _ = answer.send(conn.client().map(drop));
            }))
            .map_err(|_| anyhow::anyhow!("the PostgreSQL connection thread has stopped"))?;
        answered
            .recv()
            .context("the PostgreSQL connection thread has stopped")??;
        store
            .migrate()
            .with_context(|| format!("migrating {}", redact(url)))?;
        Ok(store)
    }

    /// Makes every transaction of this store read-only from now on, on this connection and on
    /// every one it makes again (the reader's stores: `archive serve` never writes).
    ///
    /// # Errors
    /// The server refused the setting, or the connection thread stopped.
    pub fn make_read_only(&self) -> Result<()> {
        self.on_connection(|conn| {
            conn.read_only = true;
            conn.client()?
                .batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")?;
            Ok(())
        })
    }

    /// Runs `f` with the client on the connection thread and returns its answer; on a lost
    /// connection, again on a new one, for up to `reconnect_for`.
    fn call<R: Send + 'static>(
        &self,
        f: impl Fn(&mut postgres::Client) -> Result<R> + Send + Sync + 'static,
    ) -> Result<R> {
        self.on_connection(move |conn| f(conn.client()?))
    }

    /// Runs `f` on the connection thread as one statement after another (each its own
    /// transaction) when `write` is false, else in one transaction committed when `f`
    /// succeeds; on a lost connection, again on a new one, for up to `reconnect_for`.
    pub(crate) fn run<R: Send + 'static>(
        &self,
        write: bool,
        f: impl Fn(&mut dyn crate::store::db::Db) -> Result<R> + Send + Sync + 'static,
    ) -> Result<R> {
        self.on_connection(on_db(write, f))
    }

    /// [`PgStore::run`] of a write, its answer taken later: the caller goes on while the
    /// server works.
    ///
    /// # Errors
    /// The connection thread has stopped.
    pub(crate) fn run_later<R: Send + 'static>(
        &self,
        f: impl Fn(&mut dyn crate::store::db::Db) -> Result<R> + Send + Sync + 'static,
    ) -> Result<crate::store::pending::Pending<R>> {
        self.submit(on_db(true, f))
    }

    /// Runs `f` with the connection on its thread and returns its answer; on a lost
    /// connection, again on a new one, for up to `reconnect_for`.
    fn on_connection<R: Send + 'static>(
        &self,
        f: impl Fn(&mut Connection) -> Result<R> + Send + Sync + 'static,
    ) -> Result<R> {
        self.submit(f)?.wait()
    }

    /// Sends `f` to the connection thread and returns at once; its answer is taken later
    /// ([`crate::store::pending::Pending::wait`]). Calls run in the order they were sent. A lost
    /// connection is made again on the connection thread, and `f` run again on it, for up to
    /// `reconnect_for` (the calls sent after it wait meanwhile, so they keep their order).
    ///
    /// # Errors
    /// The connection thread has stopped.
    fn submit<R: Send + 'static>(
        &self,
        f: impl Fn(&mut Connection) -> Result<R> + Send + Sync + 'static,
    ) -> Result<crate::store::pending::Pending<R>> {
        let (answer, answered) = mpsc::sync_channel(1);
        let reconnect_for = self.reconnect_for;
        self.calls
            .send(Box::new(move |conn: &mut Connection| {
                let started = Instant::now();
                let mut wait = Duration::from_millis(50);
                let out = loop {
                    match f(conn) {
                        Err(e) if connection_lost(&e) && started.elapsed() < reconnect_for => {
                            tracing::warn!(server = %redact(&conn.url), error = %format!("{e:#}"), "PostgreSQL connection lost; reconnecting");
                            std::thread::sleep(wait);
                            wait = (wait * 2).min(Duration::from_secs(2));
                        }
                        out => break out,
                    }
                };
                let _ = answer.send(out);
            }))
            .map_err(|_| anyhow::anyhow!("the PostgreSQL connection thread has stopped"))?;
        Ok(crate::store::pending::Pending::sent(answered))
    }

    /// Runs `f` on a connection and thread of its own with a sender for rows of type `T`, and
    /// returns their receiver at once: the caller takes rows while the server still sends them
    /// (a bounded queue of 16), so memory stays flat, and may call this store meanwhile (its
    /// own connection is free). An error of `f` arrives as the last row. Not retried on a lost
    /// connection: the caller has seen part of the rows.
    fn stream<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut postgres::Client, &mpsc::SyncSender<Result<T>>) -> Result<()>
            + Send
            + 'static,
    ) -> Result<mpsc::Receiver<Result<T>>> {
        let (rows, taken) = mpsc::sync_channel(16);
        let mut conn = Connection {
            url: self.url.clone(),
            client: None,
            session: Default::default(),
            read_only: false,
        };
        std::thread::Builder::new()
            .name("everblog-postgres-stream".into())
            .spawn(move || {
                if let Err(e) = conn.client().and_then(|c| f(c, &rows)) {
                    let _ = rows.send(Err(e));
                }
            })
            .context("starting a PostgreSQL stream thread")?;
        Ok(taken)
    }

    /// Runs `f` in one transaction, committed when it succeeds.
    fn write<R: Send + 'static>(
        &self,
        f: impl Fn(&mut postgres::Transaction<'_>) -> Result<R> + Send + Sync + 'static,
    ) -> Result<R> {
        self.call(move |c| {
            let mut tx = c.transaction()?;
            let out = f(&mut tx)?;
            tx.commit()?;
            Ok(out)
        })
    }

    fn migrate(&self) -> Result<()> {
        self.write(|tx| {
            // One migrator at a time across every process on the database.
            tx.execute("SELECT pg_advisory_xact_lock(7164916)", &[])?;
            tx.batch_execute(
                "CREATE TABLE IF NOT EXISTS everblog_schema (version BIGINT NOT NULL);
                 INSERT INTO everblog_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM everblog_schema);",
            )?;
            let version: i64 = tx
                .query_one("SELECT version FROM everblog_schema", &[])?
                .get(0);
            let known = schema::MIGRATIONS.len() as i64;
            anyhow::ensure!(
                version <= known,
                "database schema version {version} is newer than this everblog understands ({known}); upgrade everblog"
            );
            for (i, sql) in schema::MIGRATIONS.iter().enumerate().skip(version as usize) {
                tx.batch_execute(sql)?;
                tx.execute(
                    "UPDATE everblog_schema SET version = $1",
                    &[&(i as i64 + 1)],
                )?;
            }
            Ok(())
        })
    }

    /// The schema version (number of PostgreSQL migrations applied).
    ///
    /// # Errors
    /// The server cannot be reached.
    pub fn schema_version(&self) -> Result<i64> {
        self.call(|c| {
            Ok(c.query_one("SELECT version FROM everblog_schema", &[])?
                .get(0))
        })
    }
}
