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
//! Jobs: NewCrawl (queued by `archive add`), then UpdateCrawl forever: when a job ends, the
//! blog's next UpdateCrawl is queued in the same transaction, due after an interval set by the
//! blog's posting and commenting frequency (`core::schedule`), or after an exponential back-off
//! when the job failed. A full or read-only database stops the daemon with the reason, leaving
//! the running job's lease to expire.

use crate::core::schedule::{self, Bounds};
use crate::crawl::{self, CrawlOptions, Progress};
use crate::fetch::politeness::HostGate;
use crate::fetch::Fetcher;
use crate::store::{storage_fault, Job, JobEnd, Store};
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
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
/// Job kind of UpdateCrawl.
pub const UPDATE_CRAWL: &str = "update-crawl";

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
    /// Bounds of the UpdateCrawl schedule and back-off.
    pub schedule: Bounds,
    /// Cap of the database file in bytes (`None`: the disk's).
    pub max_db_bytes: Option<u64>,
}

/// Per-host request slots shared through the store by every process on the database.
pub struct StoreGate(std::sync::Mutex<Store>);

impl StoreGate {
    /// A gate on its own connection to `db`.
    ///
    /// # Errors
    /// The database cannot be opened.
    pub fn open(db: &Path) -> Result<StoreGate> {
        Ok(StoreGate(std::sync::Mutex::new(Store::open(db)?)))
    }
}

impl HostGate for StoreGate {
    fn reserve(&self, host: &str, delay: Duration) -> Duration {
        let mut store = self.0.lock().unwrap_or_else(|e| e.into_inner());
        store.reserve_host(host, delay).unwrap_or_else(|e| {
            tracing::warn!(host, error = %format!("{e:#}"), "shared host slot unavailable; spacing requests in this process only");
            Duration::ZERO
        })
    }
}

/// A uniform draw in [0, 1) for jitter (std's randomly keyed hasher; no cryptographic need).
fn draw() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Utc::now().timestamp_nanos_opt().unwrap_or(0) as u128);
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// When the blog's next UpdateCrawl is due after a successful job.
pub fn next_update(store: &Store, blog_id: i64, bounds: &Bounds) -> Result<DateTime<Utc>> {
    let activity: Vec<DateTime<Utc>> = store
        .activity(blog_id, 50)?
        .iter()
        .filter_map(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&Utc))
        .collect();
    let now = Utc::now();
    let wait = schedule::interval(&activity, now, bounds, draw());
    Ok(now + chrono::Duration::from_std(wait).unwrap_or_default())
}

/// How a job's run ended, for [`finish`].
pub enum Ran {
    /// Finished: the outcome for `archive status`.
    Done(String),
    /// Stopped on request: give the job back to the queue.
    Stopped,
    /// Failed with this error.
    Failed(anyhow::Error),
}

/// Ends a job and queues the blog's next one in the same transaction: after success the next
/// UpdateCrawl at the blog's interval; after failure the same job again after an exponential
/// back-off. A storage fault (full or read-only database) is returned as an error: the caller
/// must stop taking jobs.
pub fn finish(store: &mut Store, job: &Job, owner: &str, ran: Ran, bounds: &Bounds) -> Result<()> {
    match ran {
        Ran::Stopped => store.end_job(job.id, owner, "queued", None, None),
        Ran::Done(outcome) => {
            let at = next_update(store, job.blog_id, bounds)?;
            store.finish_job(
                job,
                owner,
                &JobEnd {
                    outcome: Some(outcome),
                    error: None,
                    next: Some((UPDATE_CRAWL.into(), at)),
                },
            )
        }
        Ran::Failed(e) => {
            if let Some(why) = storage_fault(&e) {
                // Give the job back if the database still takes this small write; otherwise
                // its lease expires.
                let _ = store.end_job(job.id, owner, "queued", None, None);
                return Err(e.context(why));
            }
            let errors = store.errors_in_a_row(job.blog_id)? + 1;
            let wait = schedule::backoff(errors, bounds, draw());
            let at = Utc::now() + chrono::Duration::from_std(wait).unwrap_or_default();
            tracing::warn!(job = job.id, errors_in_a_row = errors, retry_at = %at.to_rfc3339(), "job failed; backing off");
            store.finish_job(
                job,
                owner,
                &JobEnd {
                    outcome: None,
                    error: Some(format!("{e:#}")),
                    next: Some((job.kind.clone(), at)),
                },
            )
        }
    }
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
    if let Some(bytes) = opts.max_db_bytes {
        store.set_max_size(bytes)?;
    }
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
    let result = serve_jobs(&mut store, db, fetcher, opts, &shutdown).await;
    if let Err(e) = &result {
        // Say why where an operator looks: the journal, `systemctl status`, stderr.
        let why = storage_fault(e).unwrap_or_else(|| format!("{e:#}"));
        tracing::error!(owner = %opts.owner, reason = %why, "daemon stops taking jobs");
        sd_notify(&format!("STATUS=stopped: {why}"));
    }
    sd_notify("STOPPING=1");
    tracing::info!(owner = %opts.owner, "daemon stopped");
    result
}

async fn serve_jobs(
    store: &mut Store,
    db: &Path,
    fetcher: &Fetcher,
    opts: &DaemonOptions,
    shutdown: &Arc<AtomicBool>,
) -> Result<()> {
    while !shutdown.load(Ordering::Relaxed) {
        let Some(job) = store.lease_job(&opts.owner, opts.lease, None)? else {
            sleep_unless(shutdown, opts.poll).await;
            continue;
        };
        run_job(store, db, fetcher, opts, &job, shutdown.clone()).await?;
    }
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
    let name = match job.kind.as_str() {
        NEW_CRAWL => "NewCrawl",
        UPDATE_CRAWL => "UpdateCrawl",
        other => {
            let e = anyhow::anyhow!("unknown job kind {other:?} (written by a newer everblog?)");
            store.end_job(job.id, &opts.owner, "failed", None, Some(&e.to_string()))?;
            return Ok(());
        }
    };
    tracing::info!(job = job.id, blog = %blog.home_url, attempt = job.attempts, "{name} started");
    sd_notify(&format!("STATUS={name} of {}", blog.home_url));
    let crawl_opts = CrawlOptions {
        stop: Some(shutdown.clone()),
        ..opts.crawl.clone()
    };
    let stopping = || shutdown.load(Ordering::Relaxed);
    let ran = if job.kind == NEW_CRAWL {
        let result = renewing(
            db,
            job.id,
            &opts.owner,
            opts.lease,
            crawl::new_crawl(store, fetcher, &blog, &crawl_opts, &Quiet),
        )
        .await;
        match result {
            // A page budget reached is a finished job too ("incomplete"): the blog moves on to
            // update crawls instead of crawling forever.
            Ok(s) if s.complete || !stopping() => Ran::Done(format!(
                "{} posts, {} pages fetched, {} errors; {}{}",
                s.posts,
                s.pages_fetched,
                s.errors,
                s.stop_reason,
                if s.complete { "" } else { " (incomplete)" }
            )),
            Ok(_) => Ran::Stopped,
            Err(e) => Ran::Failed(e),
        }
    } else {
        let result = renewing(
            db,
            job.id,
            &opts.owner,
            opts.lease,
            crawl::update_crawl(store, fetcher, &blog, &crawl_opts),
        )
        .await;
        match result {
            Ok(s) if s.complete => Ran::Done(s.to_string()),
            Ok(_) => Ran::Stopped,
            Err(e) => Ran::Failed(e),
        }
    };
    match &ran {
        Ran::Done(outcome) => {
            tracing::info!(job = job.id, blog = %blog.home_url, %outcome, "{name} finished")
        }
        Ran::Stopped => {
            tracing::info!(job = job.id, blog = %blog.home_url, "stopping: job released, it runs again later")
        }
        Ran::Failed(e) => {
            tracing::error!(job = job.id, blog = %blog.home_url, error = %format!("{e:#}"), "{name} failed")
        }
    }
    finish(store, job, &opts.owner, ran, &opts.schedule)
}
