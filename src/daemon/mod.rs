//! The service: `archive daemon` takes jobs from the store and runs them, for years, unattended.
//!
//! Any number of daemons (on one machine or, with a shared back end, many) work on one database:
//! a job is taken under a lease (`Store::lease_job`, one `BEGIN IMMEDIATE` transaction), the
//! lease is renewed while the job runs, and a job whose worker died is taken again once its
//! lease expires — the crawls are stateless over the store, so the new worker resumes where the
//! dead one stopped. SIGTERM and SIGINT stop taking jobs, let the running crawl record its pages
//! in flight, and give its job back to the queue. The job lifecycle itself
//! ([`Worker::run_leased`]) is shared with `archive crawl` and `archive update`.
//!
//! Under systemd (`systemd/everblog.service`, `Type=notify`) it reports READY, STATUS and
//! STOPPING, and feeds the watchdog only while its database answers. With `[daemon] metrics`
//! it serves `/metrics`, `/healthz` and `/readyz` (`health`); every `[alerts] every` it judges
//! the alerts and reports the new ones ([`alerts`]).
//!
//! Jobs: NewCrawl (queued by `archive add`), then UpdateCrawl forever: when a job ends, the
//! blog's next UpdateCrawl is queued in the same transaction, due after an interval set by the
//! blog's posting and commenting frequency (`core::schedule`), or after an exponential back-off
//! when the job failed. A full or read-only database stops the daemon with the reason, leaving
//! the running job's lease to expire.

pub mod alerts;
mod lifecycle;
mod systemd;

pub use alerts::AlertSettings;
pub use lifecycle::{next_update, stop_on_signals, Ran, Report, Worker};
pub use systemd::sd_notify;

use crate::crawl::Progress;
use crate::export::rolling::ArchiveSettings;
use crate::store::DatabaseSettings;
use crate::store::JobFilter;
use crate::store::{storage_fault, Store};
use anyhow::Result;
use lifecycle::sleep_unless;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use systemd::watchdog_interval;

/// How the daemon takes jobs: the `[daemon]` section of the configuration file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DaemonSettings {
    /// Job lease (default 1 min), renewed every third of it while a job runs; a dead worker's
    /// job is taken again once its lease expires. `archive crawl` and `archive update` take
    /// their jobs under the same lease.
    #[serde(with = "humantime_serde")]
    pub lease: Duration,
    /// Pause between looks at an empty job queue (default 2 s).
    #[serde(with = "humantime_serde")]
    pub poll: Duration,
    /// Where to serve `/metrics`, `/healthz` and `/readyz` (`health`); off when `None`
    /// (the default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics: Option<std::net::SocketAddr>,
}

impl Default for DaemonSettings {
    fn default() -> Self {
        DaemonSettings {
            lease: Duration::from_secs(60),
            poll: Duration::from_secs(2),
            metrics: None,
        }
    }
}

/// The default worker name: `host:pid`.
pub fn default_owner() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    format!("{host}:{}", std::process::id())
}

struct Quiet;

impl Progress for Quiet {
    fn update(&self, _pages: u64, _posts: u64, _errors: u64, _queued: u64) {}
    fn phase(&self, _message: &str) {}
}

/// Runs jobs as `worker` until `shutdown` is set (its crawls stop on the same flag), looking at
/// an empty queue every `settings.poll`, the database capped at `max_db_bytes`; after each job
/// its captures are appended to `archive.warc_dir`'s WARC file when one is set
/// (`export::rolling`); the alerts are judged every `alerts.every` (`daemon::alerts`). Errors of one
/// job are recorded on the job; only errors of the store itself (a storage fault: full,
/// read-only, I/O) end the daemon.
///
/// # Errors
/// The database cannot be opened, or a storage fault stopped the daemon (the error says what
/// to do).
pub async fn run(
    worker: &Worker,
    settings: &DaemonSettings,
    max_db_bytes: Option<u64>,
    archive: &ArchiveSettings,
    alerts: &AlertSettings,
    shutdown: Arc<AtomicBool>,
) -> Result<()> {
    let db: &DatabaseSettings = &worker.db;
    let mut store = Store::open(db)?;
    if max_db_bytes.is_some() && crate::store::is_postgres(db.path()?) {
        tracing::warn!(
            "[database] max_size_mb does not apply to PostgreSQL; use the server's quotas"
        );
    }
    let poll = settings.poll.max(Duration::from_millis(50));
    tracing::info!(owner = %worker.owner, db = %db.shown(), "daemon started");
    if let Some(bind) = settings.metrics {
        let bound = crate::health::listen(bind, db, shutdown.clone()).await?;
        tracing::info!("metrics on http://{bound}/metrics, health on /healthz and /readyz");
        eprintln!("archive daemon: metrics on http://{bound}/metrics");
    }
    // The watchdog is fed only while the database answers.
    if let Some(every) = watchdog_interval() {
        let (db, shutdown) = (db.clone(), shutdown.clone());
        tokio::spawn(async move {
            while !shutdown.load(Ordering::Relaxed) {
                if Store::open(&db).and_then(|s| s.schema_version()).is_ok() {
                    sd_notify("WATCHDOG=1");
                } else {
                    tracing::error!("database does not answer; not feeding the watchdog");
                }
                sleep_unless(&shutdown, every).await;
            }
        });
    }
    alerts::spawn(db.clone(), alerts.clone(), max_db_bytes, shutdown.clone());
    sd_notify(&format!(
        "READY=1\nSTATUS=waiting for jobs ({})",
        worker.owner
    ));
    let result = serve_jobs(&mut store, worker, archive, &shutdown, poll).await;
    if let Err(e) = &result {
        // Say why where an operator looks: the journal, `systemctl status`, stderr.
        let why = storage_fault(e).unwrap_or_else(|| format!("{e:#}"));
        tracing::error!(owner = %worker.owner, reason = %why, "daemon stops taking jobs");
        sd_notify(&format!("STATUS=stopped: {why}"));
    }
    sd_notify("STOPPING=1");
    tracing::info!(owner = %worker.owner, "daemon stopped");
    result
}

async fn serve_jobs(
    store: &mut Store,
    worker: &Worker,
    archive: &ArchiveSettings,
    shutdown: &AtomicBool,
    poll: Duration,
) -> Result<()> {
    // Captures left by an earlier run (or a crash) go out first.
    append_warc(store, archive)?;
    while !shutdown.load(Ordering::Relaxed) {
        let Some(job) = worker.lease(store, JobFilter::default())? else {
            sleep_unless(shutdown, poll).await;
            continue;
        };
        worker.run_leased(store, &job, &Quiet).await?;
        append_warc(store, archive)?;
    }
    Ok(())
}

/// Appends the new captures to the WARC directory, if one is set. A failure to write there is
/// logged and retried after the next job (the captures stay in the store); a storage fault of
/// the store itself ends the daemon.
fn append_warc(store: &mut Store, archive: &ArchiveSettings) -> Result<()> {
    match crate::export::rolling::append(store, archive) {
        Ok(Some(a)) if a.captures > 0 || !a.closed.is_empty() => {
            tracing::info!(captures = a.captures, bytes = a.bytes, closed = ?a.closed, "WARC appended");
            Ok(())
        }
        Ok(_) => Ok(()),
        Err(e) if storage_fault(&e).is_some() => Err(e),
        Err(e) => {
            tracing::error!(error = %format!("{e:#}"), "writing the WARC directory failed; retried after the next job");
            Ok(())
        }
    }
}
