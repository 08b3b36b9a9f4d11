//! A blog's history for its charts (issue 44, feature row 17): posts and comments per month
//! over its life, its latest jobs with the pages and errors each fetched and how long each
//! ran, and what revisits found per month (edits, deletions, moves). Written once for both
//! back ends, over [`super::db::Db`].

use super::db::args;
use super::{BlogId, JobKind, JobState, Store};
use anyhow::Result;
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;

/// Jobs a history holds, the latest.
pub const HISTORY_JOBS: usize = 200;

/// One month of a blog's life (`month`: `"YYYY-MM"`; posts and comments in the blog's own
/// offset, revisit findings in UTC).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct MonthFigures {
    /// `"YYYY-MM"`.
    pub month: String,
    /// Posts published.
    pub posts: u64,
    /// Comments published.
    pub comments: u64,
    /// Post edits found (earlier texts kept).
    pub edits: u64,
    /// Posts found deleted by the blog.
    pub gone: u64,
    /// Posts found moved to another permalink.
    pub moved: u64,
}

/// One finished job of a blog.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct JobRun {
    /// NewCrawl or UpdateCrawl.
    pub kind: JobKind,
    /// Done or failed.
    pub state: JobState,
    /// When a worker first took it.
    pub started_at: DateTime<Utc>,
    /// When it ended.
    pub finished_at: DateTime<Utc>,
    /// Requests logged between the two.
    pub pages: u64,
    /// Of them, those that failed (no answer, or 4xx/5xx).
    pub errors: u64,
}

/// A blog's history ([`Store::blog_history`]).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct BlogHistory {
    /// Every month from the first with anything to the last, oldest first (empty months
    /// included).
    pub months: Vec<MonthFigures>,
    /// The latest [`HISTORY_JOBS`] finished jobs, oldest first.
    pub jobs: Vec<JobRun>,
}

impl Store {
    /// Blog `blog_id`'s history.
    ///
    /// # Errors
    /// The database failed, or a stored time is corrupt.
    pub fn blog_history(&self, blog_id: BlogId) -> Result<BlogHistory> {
        self.read(move |db| {
            let mut months: BTreeMap<String, MonthFigures> = BTreeMap::new();
            let mut add = |sql: &str, set: fn(&mut MonthFigures, u64)| -> Result<()> {
                for (m, n) in db.query_map(sql, args![blog_id], |r| {
                    Ok((r.get::<String>(0)?, u64::from(r.count(1)?)))
                })? {
                    set(months.entry(m).or_default(), n);
                }
                Ok(())
            };
            add(
                "SELECT substr(published, 1, 7) AS m, COUNT(*) FROM posts
                  WHERE blog_id = ?1 AND published IS NOT NULL GROUP BY m",
                |f, n| f.posts = n,
            )?;
            add(
                "SELECT substr(c.published, 1, 7) AS m, COUNT(*) FROM comments c
                   JOIN posts p ON p.url = c.post_url
                  WHERE p.blog_id = ?1 AND c.published IS NOT NULL GROUP BY m",
                |f, n| f.comments = n,
            )?;
            add(
                "SELECT substr(v.replaced_at, 1, 7) AS m, COUNT(*) FROM post_versions v
                   JOIN posts p ON p.url = v.post_url
                  WHERE p.blog_id = ?1 GROUP BY m",
                |f, n| f.edits = n,
            )?;
            add(
                "SELECT substr(gone_at, 1, 7) AS m, COUNT(*) FROM posts
                  WHERE blog_id = ?1 AND gone_at IS NOT NULL GROUP BY m",
                |f, n| f.gone = n,
            )?;
            add(
                "SELECT substr(moved_at, 1, 7) AS m, COUNT(*) FROM posts
                  WHERE blog_id = ?1 AND moved_at IS NOT NULL GROUP BY m",
                |f, n| f.moved = n,
            )?;
            let months = every_month(months);
            let mut jobs: Vec<JobRun> = db.query_map(
                "SELECT kind, state, started_at, finished_at FROM jobs
                  WHERE blog_id = ?1 AND state IN (?2, ?3)
                    AND started_at IS NOT NULL AND finished_at IS NOT NULL
                  ORDER BY id DESC LIMIT ?4",
                args![blog_id, JobState::Done, JobState::Failed, HISTORY_JOBS],
                |r| {
                    Ok(JobRun {
                        kind: r.word(0)?,
                        state: r.word(1)?,
                        started_at: r.time_req(2)?,
                        finished_at: r.time_req(3)?,
                        pages: 0,
                        errors: 0,
                    })
                },
            )?;
            jobs.reverse();
            // The blog's requests since the first of these jobs, in one pass, each counted in
            // the job it ran in.
            if let Some(first) = jobs.first().map(|j| j.started_at) {
                let requests = db.query_map(
                    "SELECT fetched_at, status, error FROM fetch_log
                      WHERE blog_id = ?1 AND fetched_at >= ?2",
                    args![blog_id, first],
                    |r| {
                        let failed = r.get::<Option<String>>(2)?.is_some()
                            || r.get::<Option<i64>>(1)?.is_none_or(|s| s >= 400);
                        Ok((r.time_req(0)?, failed))
                    },
                )?;
                for (at, failed) in requests {
                    if let Some(j) = jobs
                        .iter_mut()
                        .find(|j| j.started_at <= at && at <= j.finished_at)
                    {
                        j.pages += 1;
                        j.errors += u64::from(failed);
                    }
                }
            }
            Ok(BlogHistory { months, jobs })
        })
    }
}

/// The months of `found` with every month between them added, empty, oldest first.
fn every_month(found: BTreeMap<String, MonthFigures>) -> Vec<MonthFigures> {
    let parse = |m: &str| -> Option<(i32, u32)> {
        let (y, mo) = m.split_once('-')?;
        Some((y.parse().ok()?, mo.parse().ok()?))
    };
    let (Some(first), Some(last)) = (
        found.keys().find_map(|m| parse(m)),
        found.keys().rev().find_map(|m| parse(m)),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let (mut y, mut m) = first;
    while (y, m) <= last && out.len() < 12 * 200 {
        let month = format!("{y:04}-{m:02}");
        let figures = found.get(&month).cloned().unwrap_or_default();
        out.push(MonthFigures { month, ..figures });
        (y, m) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_month_fills_the_gaps_across_a_year() {
        let mut found = BTreeMap::new();
        for (m, posts) in [("2024-11", 2), ("2025-02", 1)] {
            found.insert(
                m.to_string(),
                MonthFigures {
                    month: m.into(),
                    posts,
                    ..MonthFigures::default()
                },
            );
        }
        found.insert("garbage".into(), MonthFigures::default());
        let months: Vec<(String, u64)> = every_month(found)
            .into_iter()
            .map(|f| (f.month, f.posts))
            .collect();
        assert_eq!(
            months,
            [
                ("2024-11".to_string(), 2),
                ("2024-12".to_string(), 0),
                ("2025-01".to_string(), 0),
                ("2025-02".to_string(), 1)
            ]
        );
    }
}
