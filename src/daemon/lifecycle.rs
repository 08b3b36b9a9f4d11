//! The job lifecycle, one policy for every runner (`archive daemon`, `archive crawl`, `archive
//! update`): a [`Worker`] leases a job, renews the lease on a connection of its own while the
//! crawl runs, and ends it ([`Worker::run_leased`]):
//!
//! - **done** — a NewCrawl that finished or reached its page budget (the outcome says
//!   "incomplete"; `archive crawl` with a larger budget resumes it), or an UpdateCrawl that ran
//!   to its end: the blog's next UpdateCrawl is queued in the same transaction, due after its
//!   posting interval (`core::schedule`); a NewCrawl that left pages a server asked to retry
//!   later is queued again for when they are due;
//! - **released** — stopped on request (SIGTERM, SIGINT): back to the queue, resumed by any
//!   worker;
//! - **failed** — the error is recorded and the same job queued again after an exponential
//!   back-off; a storage fault (full or read-only database) releases the job instead and is
//!   returned, so the caller stops taking jobs.

use crate::core::schedule::{self, Bounds};
use crate::crawl::{self, CrawlOptions, CrawlSummary, Progress, UpdateSummary};
use crate::fetch::Fetcher;
use crate::meters::JobOutcome;
use crate::store::DatabaseSettings;
use crate::store::JobFilter;
use crate::store::{storage_fault, BlogId, Job, JobEnd, JobKind, NextJob, Store};
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What a job's crawl reported.
#[derive(Debug)]
pub enum Report {
    /// A NewCrawl's summary.
    NewCrawl(CrawlSummary),
    /// An UpdateCrawl's summary.
    UpdateCrawl(UpdateSummary),
}

impl Report {
    /// The outcome recorded on the job, for `archive status`.
    pub fn outcome(&self) -> String {
        match self {
            Report::NewCrawl(s) => format!(
                "{} posts, {} pages fetched, {} errors; {}{}",
                s.posts,
                s.pages_fetched,
                s.errors,
                s.stop_reason,
                if s.complete { "" } else { " (incomplete)" }
            ),
            Report::UpdateCrawl(s) => s.to_string(),
        }
    }
}

/// How a job's run ended.
#[derive(Debug)]
pub enum Ran {
    /// Finished (a NewCrawl also when its page budget was reached): the blog's next
    /// UpdateCrawl is queued.
    Done(Report),
    /// Stopped on request: the job went back to the queue.
    Stopped(Report),
    /// Failed with this error: recorded, and retried after a back-off.
    Failed(anyhow::Error),
}

/// A uniform draw in [0, 1) for jitter (std's randomly keyed hasher; no cryptographic need).
fn draw() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Utc::now().timestamp_nanos_opt().unwrap_or(0) as u128);
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// When the blog's next UpdateCrawl is due after a successful job (`core::schedule::interval`
/// over its last 50 posts and comments).
///
/// # Errors
/// The store failed.
pub fn next_update(store: &Store, blog_id: BlogId, bounds: &Bounds) -> Result<DateTime<Utc>> {
    let activity = store.activity(blog_id, 50)?;
    let now = Utc::now();
    let wait = schedule::interval(&activity, now, bounds, draw());
    Ok(schedule::after(now, wait))
}

/// Sleeps `d`, waking early once `stop` is set.
pub(super) async fn sleep_unless(stop: &AtomicBool, d: Duration) {
    let step = Duration::from_millis(50);
    let mut left = d;
    while !stop.load(Ordering::Relaxed) && !left.is_zero() {
        let s = step.min(left);
        tokio::time::sleep(s).await;
        left -= s;
    }
}

/// A flag set by the first SIGTERM or SIGINT: running crawls record their pages in flight and
/// stop, their jobs go back to the queue. A second signal ends the process at once (exit 130).
///
/// # Errors
/// The signal handlers cannot be installed.
pub fn stop_on_signals() -> Result<Arc<AtomicBool>> {
    use tokio::signal::unix::{signal, SignalKind};
    let stop = Arc::new(AtomicBool::new(false));
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let flag = stop.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            if flag.swap(true, Ordering::Relaxed) {
                eprintln!("stopping now");
                std::process::exit(130);
            }
            tracing::info!(
                "stop requested: finishing the pages in flight (signal again to quit at once)"
            );
        }
    });
    Ok(stop)
}

/// Runs `work` while renewing the lease of job `job_id` every third of `lease`, on a database
/// connection of its own (the work holds the main one).
async fn renewing<F: std::future::Future>(
    db: &DatabaseSettings,
    job_id: i64,
    owner: &str,
    lease: Duration,
    work: F,
) -> F::Output {
    let done = Arc::new(AtomicBool::new(false));
    let renewer = {
        let (db, owner, done) = (db.clone(), owner.to_string(), done.clone());
        tokio::spawn(async move {
            let Ok(mut s) = Store::open(&db) else { return };
            while !done.load(Ordering::Relaxed) {
                sleep_unless(&done, lease / 3).await;
                if done.load(Ordering::Relaxed) {
                    break;
                }
                let kept = s.renew_lease(job_id, &owner, lease).unwrap_or(false);
                crate::meters::lease_renewed(kept);
                if !kept {
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

/// Who takes jobs, and what it runs them with (built by `Config::worker`).
pub struct Worker {
    /// The database (the lease is renewed on a connection of its own).
    pub db: DatabaseSettings,
    /// This worker's name in the jobs table.
    pub owner: String,
    /// Lease length; renewed every third of it.
    pub lease: Duration,
    /// The HTTP client, its host slots shared through the database (`store::StoreGate`).
    pub fetcher: Fetcher,
    /// The crawls' options, with the stop flag.
    pub crawl: CrawlOptions,
    /// The UpdateCrawl schedule and its back-off.
    pub schedule: Bounds,
}

impl Worker {
    /// Takes a job matching `filter` (see [`Store::lease_job`]).
    ///
    /// # Errors
    /// The store failed.
    pub fn lease(&self, store: &mut Store, filter: JobFilter) -> Result<Option<Job>> {
        store.lease_job(&self.owner, self.lease, filter)
    }

    /// Runs a job this worker leased — its NewCrawl or UpdateCrawl, with the lease renewed —
    /// and ends it with the one policy of this module. Returns how it ran.
    ///
    /// # Errors
    /// A storage fault (the caller must stop taking jobs), or the store failed.
    pub async fn run_leased(
        &self,
        store: &mut Store,
        job: &Job,
        progress: &dyn Progress,
    ) -> Result<Ran> {
        let blog = store
            .blog(job.blog_id)?
            .context("job for a blog that does not exist")?;
        let name = job.kind.label();
        tracing::info!(job = job.id, blog = %blog.home_url, attempt = job.attempts, "{name} started");
        super::systemd::sd_notify(&format!("STATUS={name} of {}", blog.home_url));
        let (db, owner, lease) = (&self.db, &self.owner, self.lease);
        let ran = match job.kind {
            JobKind::NewCrawl => {
                let work = crawl::new_crawl(store, &self.fetcher, &blog, &self.crawl, progress);
                match renewing(db, job.id, owner, lease, work).await {
                    Ok(s) if s.stopped => Ran::Stopped(Report::NewCrawl(s)),
                    Ok(s) => Ran::Done(Report::NewCrawl(s)),
                    Err(e) => Ran::Failed(e),
                }
            }
            JobKind::UpdateCrawl => {
                progress.phase("UpdateCrawl: reading feeds");
                let work = crawl::update_crawl(store, &self.fetcher, &blog, &self.crawl);
                match renewing(db, job.id, owner, lease, work).await {
                    Ok(s) if !s.complete => Ran::Stopped(Report::UpdateCrawl(s)),
                    Ok(s) => Ran::Done(Report::UpdateCrawl(s)),
                    Err(e) => Ran::Failed(e),
                }
            }
        };
        match &ran {
            Ran::Done(r) => {
                tracing::info!(job = job.id, blog = %blog.home_url, outcome = %r.outcome(), "{name} finished");
                if let Ok(c) = store.coverage(blog.id) {
                    super::systemd::sd_notify(&format!(
                        "STATUS=idle; {}: {}/{} posts, {} missing",
                        blog.home_url,
                        c.counts.posts_archived,
                        c.counts.posts_known,
                        c.missing()
                    ));
                }
            }
            Ran::Stopped(_) => {
                tracing::info!(job = job.id, blog = %blog.home_url, "stopping: job released, it runs again later")
            }
            Ran::Failed(e) => {
                tracing::error!(job = job.id, blog = %blog.home_url, error = %format!("{e:#}"), "{name} failed")
            }
        }
        self.finish(store, job, ran)
    }

    /// Ends a job and queues the blog's next one in the same transaction (see the module doc).
    /// Returns `ran`, or the storage fault it carries.
    fn finish(&self, store: &mut Store, job: &Job, ran: Ran) -> Result<Ran> {
        let owner = &self.owner;
        let outcome = match &ran {
            Ran::Done(_) => JobOutcome::Done,
            Ran::Stopped(_) => JobOutcome::Stopped,
            Ran::Failed(_) => JobOutcome::Failed,
        };
        crate::meters::job_finished(job.kind.as_str(), outcome);
        match &ran {
            Ran::Stopped(_) => store.release_job(job.id, owner)?,
            Ran::Done(report) => {
                let mut next = vec![NextJob {
                    kind: JobKind::UpdateCrawl,
                    not_before: next_update(store, job.blog_id, &self.schedule)?,
                }];
                // Pages a server asked to retry later: the NewCrawl resumes when they are due.
                if let Report::NewCrawl(CrawlSummary {
                    deferred: Some((_, at)),
                    ..
                }) = report
                {
                    next.push(NextJob {
                        kind: JobKind::NewCrawl,
                        not_before: *at,
                    });
                }
                store.finish_job(
                    job,
                    owner,
                    &JobEnd {
                        outcome: Some(report.outcome()),
                        error: None,
                        next,
                    },
                )?
            }
            Ran::Failed(e) => {
                if let Some(why) = storage_fault(e) {
                    // Give the job back if the database still takes this small write; otherwise
                    // its lease expires.
                    let _ = store.release_job(job.id, owner);
                    let Ran::Failed(e) = ran else { unreachable!() };
                    return Err(e.context(why));
                }
                let errors = store.errors_in_a_row(job.blog_id)? + 1;
                let wait = schedule::backoff(errors, &self.schedule, draw());
                let at = schedule::after(Utc::now(), wait);
                tracing::warn!(job = job.id, errors_in_a_row = errors, retry_at = %at.to_rfc3339(), "job failed; backing off");
                store.finish_job(
                    job,
                    owner,
                    &JobEnd {
                        outcome: None,
                        error: Some(format!("{e:#}")),
                        next: vec![NextJob {
                            kind: job.kind,
                            not_before: at,
                        }],
                    },
                )?
            }
        }
        Ok(ran)
    }
}
