//! The archive's figures as a whole, for `/metrics` and `/readyz` (issue 44): blogs, posts,
//! comments, the open jobs by kind and state, the open alerts by kind, the revisits due, each blog's last successful
//! update, the database's size, and whether its schema is current. Each query reads an index
//! or a table with a row per blog, never the captured bodies, so a scrape stays cheap at
//! 10,000 blogs. Written once for both back ends, over [`super::db::Db`], but the size.

use super::db::{args, Db, Dialect};
use super::{JobKind, JobState, Store};
use crate::core::alerts::AlertKind;
use anyhow::Result;
use chrono::{DateTime, Utc};

/// The whole archive's figures at one moment ([`Store::archive_figures`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveFigures {
    /// Blogs in the archive.
    pub blogs: u64,
    /// Posts archived (gone ones included: the archive keeps them).
    pub posts: u64,
    /// Comments archived.
    pub comments: u64,
    /// Jobs queued or running, by kind and state (every pair, zeros included).
    pub open_jobs: Vec<(JobKind, JobState, u64)>,
    /// Posts whose planned revisit is due.
    pub revisits_due: u64,
    /// Each blog's last successful crawl (its last UpdateCrawl, else its NewCrawl); `None`
    /// for a blog never crawled to the end.
    pub last_success: Vec<Option<DateTime<Utc>>>,
    /// The database's size in bytes (SQLite: its pages; PostgreSQL: `pg_database_size`).
    pub database_bytes: u64,
    /// Open alerts by kind (every kind, zeros included).
    pub open_alerts: Vec<(AlertKind, u64)>,
    /// Queued jobs that are due (their `not_before` passed).
    pub jobs_due: u64,
    /// Since when the longest-waiting due job has been due.
    pub oldest_due_job: Option<DateTime<Utc>>,
}

/// Queued jobs due at `now`, and since when the longest-waiting of them has been due.
pub(super) fn due_jobs(
    db: &mut dyn Db,
    now: DateTime<Utc>,
) -> Result<(u64, Option<DateTime<Utc>>)> {
    let r = db.query_one(
        "SELECT COUNT(*), MIN(COALESCE(not_before, created_at)) FROM jobs
          WHERE state = ?1 AND COALESCE(not_before, created_at) <= ?2",
        args![JobState::Queued, now],
    )?;
    Ok((r.count(0)?.into(), r.time(1)?))
}

/// The database's size in bytes (SQLite: its pages; PostgreSQL: `pg_database_size`).
pub(super) fn database_bytes(db: &mut dyn Db) -> Result<u64> {
    Ok(match db.dialect() {
        Dialect::Sqlite => {
            let pages = db.count("SELECT page_count FROM pragma_page_count()", &[])?;
            let size = db.count("SELECT page_size FROM pragma_page_size()", &[])?;
            pages * size
        }
        Dialect::Postgres => db.count("SELECT pg_database_size(current_database())", &[])?,
    })
}

impl Store {
    /// The whole archive's figures at `now`.
    ///
    /// # Errors
    /// The database failed.
    pub fn archive_figures(&self, now: DateTime<Utc>) -> Result<ArchiveFigures> {
        self.read(move |db| {
            let blogs = db.count("SELECT COUNT(*) FROM blogs", &[])?;
            let posts = db.count("SELECT COUNT(*) FROM posts", &[])?;
            let comments = db.count("SELECT COUNT(*) FROM comments", &[])?;
            let mut open_jobs = Vec::new();
            for kind in JobKind::ALL {
                for state in [JobState::Queued, JobState::Running] {
                    let n = db.count(
                        "SELECT COUNT(*) FROM jobs WHERE state = ?1 AND kind = ?2",
                        args![state, *kind],
                    )?;
                    open_jobs.push((*kind, state, n));
                }
            }
            let revisits_due = db.count(
                "SELECT COUNT(*) FROM posts WHERE next_revisit <= ?1 AND gone_at IS NULL",
                args![now],
            )?;
            let last_success = db
                .query("SELECT last_update_at, crawled_at FROM blogs", &[])?
                .iter()
                .map(|r| Ok(r.time(0)?.or(r.time(1)?)))
                .collect::<Result<_>>()?;
            let database_bytes = database_bytes(db)?;
            let (jobs_due, oldest_due_job) = due_jobs(db, now)?;
            let open_alerts = AlertKind::ALL
                .iter()
                .map(|kind| {
                    let n = db.count(
                        "SELECT COUNT(*) FROM alerts WHERE cleared_at IS NULL AND kind = ?1",
                        args![*kind],
                    )?;
                    Ok((*kind, n))
                })
                .collect::<Result<_>>()?;
            Ok(ArchiveFigures {
                blogs,
                posts,
                comments,
                open_jobs,
                revisits_due,
                last_success,
                database_bytes,
                open_alerts,
                jobs_due,
                oldest_due_job,
            })
        })
    }

    /// True when every migration this everblog knows has been applied (an archive opened to
    /// write is upgraded when opened; one only read may lag).
    ///
    /// # Errors
    /// The database failed.
    pub fn schema_is_current(&self) -> Result<bool> {
        let known = match &self.0 {
            super::Backend::Sqlite(_) => super::migrations::MIGRATIONS.len(),
            super::Backend::Postgres(_) => super::postgres::schema::MIGRATIONS.len(),
        };
        Ok(self.schema_version()? == known as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::feed::FeedKind;
    use crate::store::{DatabaseSettings, Store};

    #[test]
    fn a_new_archive_has_zero_figures_and_a_current_schema() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&DatabaseSettings::at(dir.path().join("a.db"))).unwrap();
        assert!(store.schema_is_current().unwrap());
        let blog = store
            .insert_blog(
                "http://b.test/",
                "http://b.test/feed",
                None,
                FeedKind::Rss2,
                &[],
            )
            .unwrap();
        assert!(store.enqueue_job(blog.id, JobKind::NewCrawl).unwrap());
        let f = store.archive_figures(Utc::now()).unwrap();
        assert_eq!((f.blogs, f.posts, f.comments, f.revisits_due), (1, 0, 0, 0));
        assert_eq!(f.last_success, vec![None]);
        assert!(f.database_bytes > 0);
        let queued = f
            .open_jobs
            .iter()
            .find(|(k, s, _)| *k == JobKind::NewCrawl && *s == JobState::Queued);
        assert_eq!(queued.map(|j| j.2), Some(1));
        assert_eq!(f.open_jobs.len(), 4);
    }
}
