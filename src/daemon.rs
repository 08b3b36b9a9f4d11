//! The service: `archive daemon` takes jobs from the store and runs them, for years, unattended.
//!
//! Any number of daemons (on one machine or, with a shared back end, many) work on one database:
//! a job is taken under a lease (`store::lease_job`, one `BEGIN IMMEDIATE` transaction), the lease
//! is renewed while the job runs, and a job whose worker died is taken again once its lease
//! expires — NewCrawl is stateless over the store, so the new worker resumes where the dead one
//! stopped. SIGTERM and SIGINT stop taking jobs, let the running crawl record its pages in
//! flight, and give its job back to the queue.
//!
//! Under systemd (`systemd/everblog.service`, `Type=notify`) it reports READY, STATUS and
//! STOPPING, and feeds the watchdog only while its database answers.
//!
//! Today the jobs are NewCrawl (queued by `archive add`); UpdateCrawl and scheduling come next.

use crate::crawl::{self, CrawlOptions, Progress};
use crate::fetch::Fetcher;
use crate::store::{Job, Store};
use anyhow::{Context, Result};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Tells systemd (when it started us with `Type=notify`) about our state: `READY=1`,
/// `WATCHDOG=1`, `STOPPING=1`, `STATUS=…`. A datagram to `$NOTIFY_SOCKET` (a path, or an abstract
/// name starting with `@`); nothing when the variable is unset. Errors are ignored: the daemon
/// works the same without systemd.
pub fn sd_notify(state: &str) {
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    let Ok(sock) = std::os::unix::net::UnixDatagram::unbound() else {
        return;
    };
    let path = path.to_string_lossy().into_owned();
    let _ = match path.strip_prefix('@') {
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
                .and_then(|a| sock.send_to_addr(state.as_bytes(), &a))
        }
        None => sock.send_to(state.as_bytes(), &path),
    };
}

/// The watchdog interval systemd asks for (`$WATCHDOG_USEC`), halved as sd_watchdog_enabled
/// recommends.
fn watchdog_interval() -> Option<Duration> {
    let usec: u64 = std::env::var("WATCHDOG_USEC").ok()?.parse().ok()?;
    (usec > 0).then(|| Duration::from_micros(usec / 2))
}

/// Job kind of NewCrawl.
pub const NEW_CRAWL: &str = "new-crawl";

/// Knobs of the daemon.
#[derive(Debug, Clone)]
pub struct DaemonOptions {
    /// Name of this worker in the jobs table (host and pid by default).
    pub owner: String,
    /// Lease length; renewed every third of it while a job runs.
    pub lease: Duration,
    /// Pause between looks at an empty queue.
    pub poll: Duration,
    /// Options of each crawl.
    pub crawl: CrawlOptions,
}

struct Quiet;

impl Progress for Quiet {
    fn update(&self, _pages: u64, _posts: u64, _errors: u64, _queued: u64) {}
    fn phase(&self, _message: &str) {}
}

/// The default worker name: `host:pid`.
pub fn default_owner() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    format!("{host}:{}", std::process::id())
}

/// Runs jobs until `shutdown` is set. Errors of one job are recorded on the job; only errors of
/// the store itself end the daemon.
pub async fn run(
    db: &Path,
    fetcher: &Fetcher,
    opts: &DaemonOptions,
    shutdown: Arc<AtomicBool>,
) -> Result<()> {
    let mut store = Store::open(db)?;
    tracing::info!(owner = %opts.owner, db = %db.display(), "daemon started");
    // The watchdog is fed only while the database answers.
    if let Some(every) = watchdog_interval() {
        let (db, shutdown) = (db.to_path_buf(), shutdown.clone());
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
    sd_notify(&format!(
        "READY=1\nSTATUS=waiting for jobs ({})",
        opts.owner
    ));
    while !shutdown.load(Ordering::Relaxed) {
        let Some(job) = store.lease_job(&opts.owner, opts.lease, None)? else {
            sleep_unless(&shutdown, opts.poll).await;
            continue;
        };
        run_job(&mut store, db, fetcher, opts, &job, shutdown.clone()).await?;
    }
    sd_notify("STOPPING=1");
    tracing::info!(owner = %opts.owner, "daemon stopped");
    Ok(())
}

async fn sleep_unless(shutdown: &AtomicBool, d: Duration) {
    let step = Duration::from_millis(50);
    let mut left = d;
    while !shutdown.load(Ordering::Relaxed) && !left.is_zero() {
        let s = step.min(left);
        tokio::time::sleep(s).await;
        left -= s;
    }
}

/// Runs `work` while renewing the lease of job `job_id` every third of `lease`, on a database
/// connection of its own (the work holds the main one).
pub async fn renewing<F: std::future::Future>(
    db: &Path,
    job_id: i64,
    owner: &str,
    lease: Duration,
    work: F,
) -> F::Output {
    let done = Arc::new(AtomicBool::new(false));
    let renewer = {
        let (db, owner, done) = (db.to_path_buf(), owner.to_string(), done.clone());
        tokio::spawn(async move {
            let Ok(mut s) = Store::open(&db) else { return };
            while !done.load(Ordering::Relaxed) {
                sleep_unless(&done, lease / 3).await;
                if !done.load(Ordering::Relaxed)
                    && !s.renew_lease(job_id, &owner, lease).unwrap_or(false)
                {
                    tracing::warn!(job = job_id, "lost the lease of a running job");
                }
            }
        })
    };
    let out = work.await;
    done.store(true, Ordering::Relaxed);
    let _ = renewer.await;
    out
}

async fn run_job(
    store: &mut Store,
    db: &Path,
    fetcher: &Fetcher,
    opts: &DaemonOptions,
    job: &Job,
    shutdown: Arc<AtomicBool>,
) -> Result<()> {
    let blog = store
        .blogs()?
        .into_iter()
        .find(|b| b.id == job.blog_id)
        .context("job for a blog that does not exist")?;
    tracing::info!(job = job.id, blog = %blog.home_url, attempt = job.attempts, "NewCrawl started");
    sd_notify(&format!("STATUS=NewCrawl of {}", blog.home_url));
    let crawl_opts = CrawlOptions {
        stop: Some(shutdown.clone()),
        ..opts.crawl.clone()
    };
    let result = renewing(
        db,
        job.id,
        &opts.owner,
        opts.lease,
        crawl::new_crawl(store, fetcher, &blog, &crawl_opts, &Quiet),
    )
    .await;
    match result {
        Ok(s) if s.complete || !shutdown.load(Ordering::Relaxed) => {
            let outcome = format!(
                "{} posts, {} pages fetched, {} errors; {}",
                s.posts, s.pages_fetched, s.errors, s.stop_reason
            );
            tracing::info!(job = job.id, blog = %blog.home_url, %outcome, "NewCrawl finished");
            store.end_job(job.id, &opts.owner, "done", Some(&outcome), None)?;
        }
        Ok(_) => {
            tracing::info!(job = job.id, blog = %blog.home_url, "stopping: job released, its crawl resumes later");
            store.end_job(job.id, &opts.owner, "queued", None, None)?;
        }
        Err(e) => {
            tracing::error!(job = job.id, blog = %blog.home_url, error = %format!("{e:#}"), "NewCrawl failed");
            store.end_job(job.id, &opts.owner, "failed", None, Some(&format!("{e:#}")))?;
        }
    }
    Ok(())
}
