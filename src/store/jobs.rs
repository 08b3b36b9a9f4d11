//! The job queue: NewCrawl and UpdateCrawl jobs per blog, taken under leases, at most one open
//! job per blog and kind (a partial unique index), and a finished job's successor queued in the
//! same transaction that ends it. Written once for both back ends, over [`super::db::Db`].
//!
//! Workers on several machines may share these rows (PostgreSQL), so their times come from the
//! database's clock ([`Db::now`]: the server's), never from a worker's: a worker whose clock
//! runs ahead would otherwise see every other worker's lease as expired and take its job.
//!
//! A job is leased by a `SELECT … LIMIT 1` and an `UPDATE … WHERE id = … RETURNING …` in one
//! write transaction: on SQLite (`BEGIN IMMEDIATE`) one writer at a time, so two workers never
//! take the same job; on PostgreSQL the select adds `FOR UPDATE SKIP LOCKED`, so workers racing
//! for the queue each lock a different row instead of waiting on the same one. The select also
//! tells a job taken again (its worker's lease expired) from a queued one (`meters`).

use super::db::{args, Db, Dialect, Row};
use super::sql::JOB_COLUMNS;
use super::{BlogId, Job, JobEnd, JobKind, JobState, NextJob, Store};
use anyhow::Result;
use chrono::{DateTime, Utc};
use std::time::Duration;

/// A job from a row of [`JOB_COLUMNS`].
fn job_from_row(r: &Row) -> Result<Job> {
    Ok(Job {
        id: r.get(0)?,
        blog_id: r.get(1)?,
        kind: r.word(2)?,
        state: r.word(3)?,
        owner: r.get(4)?,
        lease_until: r.time(5)?,
        attempts: r.count(6)?,
        error: r.get(7)?,
        outcome: r.get(8)?,
        not_before: r.time(9)?,
        started_at: r.time(10)?,
        finished_at: r.time(11)?,
    })
}

/// When a lease of `lease` taken at `now` ends.
fn lease_end(now: DateTime<Utc>, lease: Duration) -> DateTime<Utc> {
    crate::core::schedule::after(now, lease)
}

/// Queues a job of `kind` for a blog, created `now`, not before `not_before` when set, unless
/// the blog already has an open one of that kind (`jobs_one_open`). True when it was added.
fn insert_job(
    db: &mut dyn Db,
    blog_id: BlogId,
    kind: JobKind,
    now: DateTime<Utc>,
    not_before: Option<DateTime<Utc>>,
) -> Result<bool> {
    let n = db.execute(
        "INSERT INTO jobs (blog_id, kind, created_at, not_before) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT DO NOTHING",
        args![blog_id, kind, now, not_before],
    )?;
    Ok(n == 1)
}

/// Which jobs a worker may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JobFilter {
    /// Only this blog's.
    pub blog_id: Option<BlogId>,
    /// Only jobs of this kind.
    pub kind: Option<JobKind>,
}

impl Store {
    /// Queues a job unless the blog already has an open (queued or running) one of that kind.
    /// Returns true when a job was added.
    ///
    /// # Errors
    /// The database failed (there is no blog `blog_id`, say).
    pub fn enqueue_job(&mut self, blog_id: BlogId, kind: JobKind) -> Result<bool> {
        self.write(move |db| {
            let now = db.now()?;
            insert_job(db, blog_id, kind, now, None)
        })
    }

    /// Takes the oldest job matching `filter` that is queued and due, or running under an
    /// expired lease (its worker died), for `owner` until now + `lease`. Returns it as taken
    /// (running, its attempts counted), or `None` when no job is to take.
    ///
    /// # Errors
    /// The database failed.
    pub fn lease_job(
        &mut self,
        owner: &str,
        lease: Duration,
        filter: JobFilter,
    ) -> Result<Option<Job>> {
        let owner = owner.to_owned();
        self.write(move |db| {
            let now = db.now()?;
            let until = lease_end(now, lease);
            // SQLite's write transaction already lets one worker at a time in; PostgreSQL's
            // workers skip the rows others are taking.
            let skip_locked = match db.dialect() {
                Dialect::Sqlite => "",
                Dialect::Postgres => "FOR UPDATE SKIP LOCKED",
            };
            // The job to take, and whether a worker held it (its lease expired: that worker
            // died or hung); PostgreSQL's row lock holds until the update below.
            let Some(found) = db.query_opt(
                &format!(
                    "SELECT id, state FROM jobs
                      WHERE ((state = ?2 AND (not_before IS NULL OR not_before <= ?1))
                             OR (state = ?3 AND lease_until < ?1))
                        AND (CAST(?4 AS BIGINT) IS NULL OR blog_id = ?4)
                        AND (CAST(?5 AS TEXT) IS NULL OR kind = ?5)
                      ORDER BY COALESCE(not_before, created_at), id
                      LIMIT 1
                      {skip_locked}"
                ),
                args![
                    now,
                    JobState::Queued,
                    JobState::Running,
                    filter.blog_id,
                    filter.kind
                ],
            )?
            else {
                return Ok(None);
            };
            let id: i64 = found.get(0)?;
            let again = found.word::<JobState>(1)? == JobState::Running;
            let job = db
                .query_one(
                    &format!(
                        "UPDATE jobs SET state = ?2, owner = ?3, lease_until = ?4, attempts = attempts + 1,
                           started_at = COALESCE(started_at, ?5)
                         WHERE id = ?1
                         RETURNING {JOB_COLUMNS}"
                    ),
                    args![id, JobState::Running, &owner, until, now],
                )
                .and_then(|r| job_from_row(&r))?;
            crate::meters::job_taken(job.kind.as_str(), again);
            Ok(Some(job))
        })
    }

    /// Extends the lease of a running job held by `owner` to now + `lease`. False when the job
    /// is no longer ours (the lease expired and another worker took it).
    ///
    /// # Errors
    /// The database failed.
    pub fn renew_lease(&mut self, job_id: i64, owner: &str, lease: Duration) -> Result<bool> {
        let owner = owner.to_owned();
        self.write(move |db| {
            let until = lease_end(db.now()?, lease);
            let n = db.execute(
                "UPDATE jobs SET lease_until = ?3 WHERE id = ?1 AND owner = ?2 AND state = ?4",
                args![job_id, &owner, until, JobState::Running],
            )?;
            Ok(n == 1)
        })
    }

    /// Gives a job held by `owner` back to the queue (stopped at shutdown: any worker resumes
    /// it); its outcome so far is kept.
    ///
    /// # Errors
    /// The database failed.
    pub fn release_job(&mut self, job_id: i64, owner: &str) -> Result<()> {
        let owner = owner.to_owned();
        self.write(move |db| {
            db.execute(
                "UPDATE jobs SET state = ?3, error = NULL, finished_at = NULL, owner = NULL, lease_until = NULL
                 WHERE id = ?1 AND owner = ?2",
                args![job_id, &owner, JobState::Queued],
            )?;
            Ok(())
        })
    }

    /// Queues a job of `kind` for a blog, not to be taken before `not_before`, unless the blog
    /// already has an open job of that kind (then its time moves to the earlier of the two).
    /// The blog's `next_update_at` follows its queued UpdateCrawl. Returns true when a job was
    /// added.
    ///
    /// # Errors
    /// The database failed.
    pub fn schedule_job(
        &mut self,
        blog_id: BlogId,
        kind: JobKind,
        not_before: DateTime<Utc>,
    ) -> Result<bool> {
        self.write(move |db| {
            let now = db.now()?;
            let added = insert_job(db, blog_id, kind, now, Some(not_before))?;
            if !added {
                db.execute(
                    "UPDATE jobs SET not_before = ?3 WHERE blog_id = ?1 AND kind = ?2 AND state = ?4
                       AND (not_before IS NULL OR not_before > ?3)",
                    args![blog_id, kind, not_before, JobState::Queued],
                )?;
            }
            db.execute(
                "UPDATE blogs SET next_update_at =
                   (SELECT MIN(not_before) FROM jobs WHERE blog_id = ?1 AND kind = ?2 AND state = ?3)
                 WHERE id = ?1",
                args![blog_id, JobKind::UpdateCrawl, JobState::Queued],
            )?;
            Ok(added)
        })
    }

    /// Ends a job held by `owner` and, in the same transaction, records the outcome on its blog
    /// and queues the blog's next jobs (`end.next`): on success the error streak resets (and for
    /// an UpdateCrawl `last_update_at` is set); on failure the streak grows and the error is
    /// kept for `archive status`. A crash can never leave a finished job without its successor.
    /// When the job is no longer `owner`'s (its lease was lost to another worker, which now owns
    /// it and its successor), nothing is written.
    ///
    /// # Errors
    /// The database failed.
    pub fn finish_job(&mut self, job: &Job, owner: &str, end: &JobEnd) -> Result<()> {
        let state = if end.error.is_some() {
            JobState::Failed
        } else {
            JobState::Done
        };
        let (job, owner, end) = (job.clone(), owner.to_owned(), end.clone());
        self.write(move |db| {
            let now = db.now()?;
            let n = db.execute(
                "UPDATE jobs SET state = ?3, outcome = ?4, error = ?5, finished_at = ?6, lease_until = NULL
                 WHERE id = ?1 AND owner = ?2",
                args![job.id, &owner, state, &end.outcome, &end.error, now],
            )?;
            if n == 0 {
                // The lease was lost to another worker, which now owns the job and its successor.
                return Ok(());
            }
            match &end.error {
                None => db.execute(
                    "UPDATE blogs SET errors_in_a_row = 0, last_error = NULL,
                       last_update_at = CASE WHEN ?2 THEN ?3 ELSE last_update_at END WHERE id = ?1",
                    args![job.blog_id, job.kind == JobKind::UpdateCrawl, now],
                )?,
                Some(e) => db.execute(
                    "UPDATE blogs SET errors_in_a_row = errors_in_a_row + 1, last_error = ?2 WHERE id = ?1",
                    args![job.blog_id, e],
                )?,
            };
            for &NextJob { kind, not_before: at } in &end.next {
                insert_job(db, job.blog_id, kind, now, Some(at))?;
                if kind == JobKind::UpdateCrawl {
                    db.execute(
                        "UPDATE blogs SET next_update_at = ?2 WHERE id = ?1",
                        args![job.blog_id, at],
                    )?;
                }
            }
            Ok(())
        })
    }

    /// Jobs, newest first, at most `n`.
    ///
    /// # Errors
    /// The database failed, or a stored value is corrupt.
    pub fn jobs(&self, n: usize) -> Result<Vec<Job>> {
        self.read(move |db| {
            db.query_map(
                &format!("SELECT {JOB_COLUMNS} FROM jobs ORDER BY id DESC LIMIT ?1"),
                args![n],
                job_from_row,
            )
        })
    }
}
