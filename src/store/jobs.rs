//! The job queue: NewCrawl and UpdateCrawl jobs per blog, taken under leases (one `BEGIN
//! IMMEDIATE` transaction, so two workers never take the same job), at most one open job per
//! blog and kind (a partial unique index), and a finished job's successor queued in the same
//! transaction that ends it.

use super::{now, ts, utc_col, Job, JobEnd, JobKind, JobState};
use anyhow::Result;
use chrono::{DateTime, Utc};
use rusqlite::{params, OptionalExtension};
use std::time::Duration;

use crate::store::sql::JOB_COLUMNS;

fn job_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Job> {
    Ok(Job {
        id: r.get(0)?,
        blog_id: r.get(1)?,
        kind: r.get(2)?,
        state: r.get(3)?,
        owner: r.get(4)?,
        lease_until: utc_col(r, 5)?,
        attempts: r.get(6)?,
        error: r.get(7)?,
        outcome: r.get(8)?,
        not_before: utc_col(r, 9)?,
        started_at: utc_col(r, 10)?,
        finished_at: utc_col(r, 11)?,
    })
}

fn after(lease: Duration) -> DateTime<Utc> {
    Utc::now() + chrono::Duration::from_std(lease).unwrap_or_default()
}

/// Which jobs a worker may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JobFilter {
    /// Only this blog's.
    pub blog_id: Option<i64>,
    /// Only jobs of this kind.
    pub kind: Option<JobKind>,
}

impl super::SqliteStore {
    pub(super) fn enqueue_job(&mut self, blog_id: i64, kind: JobKind) -> Result<bool> {
        let n = self.conn.execute(
            "INSERT OR IGNORE INTO jobs (blog_id, kind, created_at) VALUES (?1, ?2, ?3)",
            params![blog_id, kind, now()],
        )?;
        Ok(n == 1)
    }

    pub(super) fn lease_job(
        &mut self,
        owner: &str,
        lease: Duration,
        filter: JobFilter,
    ) -> Result<Option<Job>> {
        self.write(|tx| {
            let now_s = now();
            let id: Option<i64> = tx
                .query_row(
                    "SELECT id FROM jobs WHERE ((state = 'queued' AND (not_before IS NULL OR not_before <= ?1)) OR (state = 'running' AND lease_until < ?1))
                       AND (?2 IS NULL OR blog_id = ?2) AND (?3 IS NULL OR kind = ?3)
                     ORDER BY COALESCE(not_before, created_at), id LIMIT 1",
                    params![now_s, filter.blog_id, filter.kind],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(id) = id else { return Ok(None) };
            tx.execute(
                "UPDATE jobs SET state = ?5, owner = ?2, lease_until = ?3, attempts = attempts + 1, started_at = COALESCE(started_at, ?4) WHERE id = ?1",
                params![id, owner, ts(after(lease)), now_s, JobState::Running],
            )?;
            let job = tx.query_row(
                &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"),
                [id],
                job_from_row,
            )?;
            Ok(Some(job))
        })
    }

    pub(super) fn renew_lease(
        &mut self,
        job_id: i64,
        owner: &str,
        lease: Duration,
    ) -> Result<bool> {
        let n = self.conn.execute(
            "UPDATE jobs SET lease_until = ?3 WHERE id = ?1 AND owner = ?2 AND state = 'running'",
            params![job_id, owner, ts(after(lease))],
        )?;
        Ok(n == 1)
    }

    pub(super) fn release_job(&mut self, job_id: i64, owner: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE jobs SET state = ?3, error = NULL, finished_at = NULL, owner = NULL, lease_until = NULL
             WHERE id = ?1 AND owner = ?2",
            params![job_id, owner, JobState::Queued],
        )?;
        Ok(())
    }

    pub(super) fn schedule_job(
        &mut self,
        blog_id: i64,
        kind: JobKind,
        not_before: DateTime<Utc>,
    ) -> Result<bool> {
        let at = ts(not_before);
        self.write(|tx| {
            let n = tx.execute(
                "INSERT OR IGNORE INTO jobs (blog_id, kind, created_at, not_before) VALUES (?1, ?2, ?3, ?4)",
                params![blog_id, kind, now(), at],
            )?;
            if n == 0 {
                tx.execute(
                    "UPDATE jobs SET not_before = ?3 WHERE blog_id = ?1 AND kind = ?2 AND state = 'queued' AND (not_before IS NULL OR not_before > ?3)",
                    params![blog_id, kind, at],
                )?;
            }
            tx.execute(
                "UPDATE blogs SET next_update_at = (SELECT MIN(not_before) FROM jobs WHERE blog_id = ?1 AND kind = ?2 AND state = 'queued') WHERE id = ?1",
                params![blog_id, JobKind::UpdateCrawl],
            )?;
            Ok(n == 1)
        })
    }

    pub(super) fn finish_job(&mut self, job: &Job, owner: &str, end: &JobEnd) -> Result<()> {
        let state = if end.error.is_some() {
            JobState::Failed
        } else {
            JobState::Done
        };
        self.write(|tx| {
            let n = tx.execute(
                "UPDATE jobs SET state = ?3, outcome = ?4, error = ?5, finished_at = ?6, lease_until = NULL WHERE id = ?1 AND owner = ?2",
                params![job.id, owner, state, end.outcome, end.error, now()],
            )?;
            if n == 0 {
                // The lease was lost to another worker, which now owns the job and its successor.
                return Ok(());
            }
            match &end.error {
                None => tx.execute(
                    "UPDATE blogs SET errors_in_a_row = 0, last_error = NULL,
                       last_update_at = CASE WHEN ?2 THEN ?3 ELSE last_update_at END WHERE id = ?1",
                    params![job.blog_id, job.kind == JobKind::UpdateCrawl, now()],
                )?,
                Some(e) => tx.execute(
                    "UPDATE blogs SET errors_in_a_row = errors_in_a_row + 1, last_error = ?2 WHERE id = ?1",
                    params![job.blog_id, e],
                )?,
            };
            for (kind, at) in &end.next {
                let at = ts(*at);
                tx.execute(
                    "INSERT OR IGNORE INTO jobs (blog_id, kind, created_at, not_before) VALUES (?1, ?2, ?3, ?4)",
                    params![job.blog_id, kind, now(), at],
                )?;
                if *kind == JobKind::UpdateCrawl {
                    tx.execute(
                        "UPDATE blogs SET next_update_at = ?2 WHERE id = ?1",
                        params![job.blog_id, at],
                    )?;
                }
            }
            Ok(())
        })
    }

    pub(super) fn jobs(&self, n: usize) -> Result<Vec<Job>> {
        self.rows(
            &format!("SELECT {JOB_COLUMNS} FROM jobs ORDER BY id DESC LIMIT ?1"),
            [n as i64],
            job_from_row,
        )
    }
}
