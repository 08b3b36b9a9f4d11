//! The job queue on PostgreSQL: NewCrawl and UpdateCrawl jobs per blog under leases, at most
//! one open job per blog and kind, a finished job's successor queued in the same transaction.
//! Same names, arguments and meaning as `store::jobs`.
//!
//! Workers on several machines share these rows, so their times come from the database
//! server's clock (`server_now`), never from a worker's: a worker whose clock runs ahead
//! would otherwise see every other worker's lease as expired and take its job.
//!
//! A job is leased by one `UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED)`: workers
//! racing for the queue each lock a different row instead of waiting on the same one.

use super::{after, server_now, time, word, PgStore};
use crate::store::{ts, Job, JobEnd, JobFilter, JobKind, JobState};
use anyhow::Result;
use chrono::{DateTime, Utc};
use std::time::Duration;

use crate::store::sql::JOB_COLUMNS;

fn job_from_row(r: &postgres::Row) -> Result<Job> {
    Ok(Job {
        id: r.get(0),
        blog_id: r.get(1),
        kind: word(r, 2)?,
        state: word(r, 3)?,
        owner: r.get(4),
        lease_until: time(r, 5)?,
        attempts: super::count(r.get(6)),
        error: r.get(7),
        outcome: r.get(8),
        not_before: time(r, 9)?,
        started_at: time(r, 10)?,
        finished_at: time(r, 11)?,
    })
}

impl PgStore {
    /// Queues a job unless the blog already has an open (queued or running) one of that kind.
    /// Returns true when a job was added (`Store::enqueue_job`).
    ///
    /// # Errors
    /// The server failed.
    pub fn enqueue_job(&mut self, blog_id: i64, kind: JobKind) -> Result<bool> {
        self.call(move |c| {
            let now = ts(server_now(c)?);
            let n = c.execute(
                "INSERT INTO jobs (blog_id, kind, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                &[&blog_id, &kind.as_str(), &now],
            )?;
            Ok(n == 1)
        })
    }

    /// Takes the oldest job matching `filter` that is queued and due, or running under an
    /// expired lease, for `owner` until now + `lease` (`Store::lease_job`). Workers racing for
    /// the queue skip the rows others are taking (`FOR UPDATE SKIP LOCKED`).
    ///
    /// # Errors
    /// The server failed.
    pub fn lease_job(
        &mut self,
        owner: &str,
        lease: Duration,
        filter: JobFilter,
    ) -> Result<Option<Job>> {
        let owner = owner.to_string();
        self.write(move |tx| {
            let now = server_now(tx)?;
            let (now_s, until) = (ts(now), ts(after(now, lease)));
            let kind = filter.kind.map(|k| k.as_str());
            tx.query_opt(
                &format!(
                    "UPDATE jobs SET state = $5, owner = $2, lease_until = $3, attempts = attempts + 1,
                       started_at = COALESCE(started_at, $1)
                     WHERE id = (
                       SELECT id FROM jobs
                        WHERE ((state = 'queued' AND (not_before IS NULL OR not_before <= $1))
                               OR (state = 'running' AND lease_until < $1))
                          AND ($4::BIGINT IS NULL OR blog_id = $4) AND ($6::TEXT IS NULL OR kind = $6)
                        ORDER BY COALESCE(not_before, created_at), id
                        LIMIT 1
                        FOR UPDATE SKIP LOCKED)
                     RETURNING {JOB_COLUMNS}"
                ),
                &[
                    &now_s,
                    &owner,
                    &until,
                    &filter.blog_id,
                    &JobState::Running.as_str(),
                    &kind,
                ],
            )?
            .as_ref()
            .map(job_from_row)
            .transpose()
        })
    }

    /// Extends the lease of a running job held by `owner`; false when it is no longer ours
    /// (`Store::renew_lease`).
    ///
    /// # Errors
    /// The server failed.
    pub fn renew_lease(&mut self, job_id: i64, owner: &str, lease: Duration) -> Result<bool> {
        let owner = owner.to_string();
        self.call(move |c| {
            let until = ts(after(server_now(c)?, lease));
            let n = c.execute(
                "UPDATE jobs SET lease_until = $3 WHERE id = $1 AND owner = $2 AND state = 'running'",
                &[&job_id, &owner, &until],
            )?;
            Ok(n == 1)
        })
    }

    /// Gives a job held by `owner` back to the queue (`Store::release_job`).
    ///
    /// # Errors
    /// The server failed.
    pub fn release_job(&mut self, job_id: i64, owner: &str) -> Result<()> {
        let owner = owner.to_string();
        self.call(move |c| {
            c.execute(
                "UPDATE jobs SET state = $3, error = NULL, finished_at = NULL, owner = NULL, lease_until = NULL
                 WHERE id = $1 AND owner = $2",
                &[&job_id, &owner, &JobState::Queued.as_str()],
            )?;
            Ok(())
        })
    }

    /// Queues a job of `kind` not before `not_before`, or moves an open one's time earlier
    /// (`Store::schedule_job`). Returns true when a job was added.
    ///
    /// # Errors
    /// The server failed.
    pub fn schedule_job(
        &mut self,
        blog_id: i64,
        kind: JobKind,
        not_before: DateTime<Utc>,
    ) -> Result<bool> {
        let at = ts(not_before);
        self.write(move |tx| {
            let now = ts(server_now(tx)?);
            let n = tx.execute(
                "INSERT INTO jobs (blog_id, kind, created_at, not_before) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                &[&blog_id, &kind.as_str(), &now, &at],
            )?;
            if n == 0 {
                tx.execute(
                    "UPDATE jobs SET not_before = $3 WHERE blog_id = $1 AND kind = $2 AND state = 'queued' AND (not_before IS NULL OR not_before > $3)",
                    &[&blog_id, &kind.as_str(), &at],
                )?;
            }
            tx.execute(
                "UPDATE blogs SET next_update_at = (SELECT MIN(not_before) FROM jobs WHERE blog_id = $1 AND kind = $2 AND state = 'queued') WHERE id = $1",
                &[&blog_id, &JobKind::UpdateCrawl.as_str()],
            )?;
            Ok(n == 1)
        })
    }

    /// Ends a job held by `owner`, records the outcome on its blog and queues its next jobs,
    /// in one transaction (`Store::finish_job`).
    ///
    /// # Errors
    /// The server failed.
    pub fn finish_job(&mut self, job: &Job, owner: &str, end: &JobEnd) -> Result<()> {
        let state = if end.error.is_some() {
            JobState::Failed
        } else {
            JobState::Done
        };
        let (job, owner, end) = (job.clone(), owner.to_string(), end.clone());
        self.write(move |tx| {
            let now = ts(server_now(tx)?);
            let n = tx.execute(
                "UPDATE jobs SET state = $3, outcome = $4, error = $5, finished_at = $6, lease_until = NULL WHERE id = $1 AND owner = $2",
                &[&job.id, &owner, &state.as_str(), &end.outcome, &end.error, &now],
            )?;
            if n == 0 {
                // The lease was lost to another worker, which now owns the job and its successor.
                return Ok(());
            }
            match &end.error {
                None => tx.execute(
                    "UPDATE blogs SET errors_in_a_row = 0, last_error = NULL,
                       last_update_at = CASE WHEN $2 THEN $3 ELSE last_update_at END WHERE id = $1",
                    &[&job.blog_id, &(job.kind == JobKind::UpdateCrawl), &now],
                )?,
                Some(e) => tx.execute(
                    "UPDATE blogs SET errors_in_a_row = errors_in_a_row + 1, last_error = $2 WHERE id = $1",
                    &[&job.blog_id, e],
                )?,
            };
            for (kind, at) in &end.next {
                let at = ts(*at);
                tx.execute(
                    "INSERT INTO jobs (blog_id, kind, created_at, not_before) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                    &[&job.blog_id, &kind.as_str(), &now, &at],
                )?;
                if *kind == JobKind::UpdateCrawl {
                    tx.execute(
                        "UPDATE blogs SET next_update_at = $2 WHERE id = $1",
                        &[&job.blog_id, &at],
                    )?;
                }
            }
            Ok(())
        })
    }

    /// Jobs, newest first, at most `n` (`Store::jobs`).
    ///
    /// # Errors
    /// The server failed.
    pub fn jobs(&self, n: usize) -> Result<Vec<Job>> {
        let n = n as i64;
        self.call(move |c| {
            c.query(
                &format!("SELECT {JOB_COLUMNS} FROM jobs ORDER BY id DESC LIMIT $1"),
                &[&n],
            )?
            .iter()
            .map(job_from_row)
            .collect()
        })
    }
}
