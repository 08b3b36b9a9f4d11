//! Alerts (issue 44): the facts they are judged on ([`Store::alert_facts`], for
//! `core::alerts::evaluate`), the alerts that hold raised and those that no longer hold cleared
//! ([`Store::sync_alerts`]: an open alert is unique by kind and blog, so daemons sharing the
//! database raise it, and report it, once), and the open ones ([`Store::open_alerts`]). Written
//! once for both back ends, over [`super::db::Db`].

use super::db::args;
use super::{JobState, Store};
use crate::core::alerts::{Alert, AlertKind, ArchiveFacts, BlogFacts};
use anyhow::Result;
use chrono::{DateTime, Utc};

/// Latest posts read for a blog's usual posting interval.
const LATEST_POSTS: usize = 20;

/// An alert raised and not cleared.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OpenAlert {
    /// The alert.
    #[serde(flatten)]
    pub alert: Alert,
    /// When it was raised.
    pub raised_at: DateTime<Utc>,
}

impl Store {
    /// The facts the alerts are judged on at `now`, the database capped at `max_bytes`: per
    /// blog its error streak, posts known but not archived, whether a job of it runs, its
    /// latest posts' times; the database's size; the longest-waiting due job.
    ///
    /// # Errors
    /// The database failed, or a stored time is corrupt.
    pub fn alert_facts(&self, now: DateTime<Utc>, max_bytes: Option<u64>) -> Result<ArchiveFacts> {
        let running: Vec<i64> = self.read(|db| {
            db.query_map(
                "SELECT DISTINCT blog_id FROM jobs WHERE state = ?1",
                args![JobState::Running],
                |r| r.get(0),
            )
        })?;
        let mut blogs = Vec::new();
        for b in self.blogs()? {
            let counts = self.coverage_counts(b.id)?;
            let id = b.id;
            let published = self.read(move |db| {
                db.query_map(
                    "SELECT published FROM posts WHERE blog_id = ?1 AND published IS NOT NULL
                     ORDER BY published DESC LIMIT ?2",
                    args![id, LATEST_POSTS],
                    |r| r.time(0),
                )
            })?;
            // Dates are stored with the blog's own offsets, so text order is not quite time
            // order: sorted again as instants.
            let mut published: Vec<DateTime<Utc>> = published.into_iter().flatten().collect();
            published.sort_by(|a, b| b.cmp(a));
            blogs.push(BlogFacts {
                blog: b.home_url.clone(),
                crawled: b.crawled_at.is_some(),
                busy: running.contains(&b.id.get()),
                errors_in_a_row: b.errors_in_a_row,
                last_error: b.last_error.clone(),
                posts_missing: counts.posts_known.saturating_sub(counts.posts_archived),
                published,
            });
        }
        let (database_bytes, (_, oldest_due_job)) = self.read(move |db| {
            Ok((
                super::figures::database_bytes(db)?,
                super::figures::due_jobs(db, now)?,
            ))
        })?;
        Ok(ArchiveFacts {
            blogs,
            database_bytes,
            max_bytes,
            oldest_due_job,
        })
    }

    /// Raises each alert of `holding` not open yet, updates the message of those open, and
    /// clears the open ones no longer holding, at `now`, in one transaction. Returns the alerts
    /// this call raised (another process sharing the database may have raised one first: then
    /// not here).
    ///
    /// # Errors
    /// The database failed.
    pub fn sync_alerts(&mut self, holding: &[Alert], now: DateTime<Utc>) -> Result<Vec<Alert>> {
        let holding = holding.to_vec();
        self.write(move |db| {
            let open: Vec<(AlertKind, String, String)> = db.query_map(
                "SELECT kind, blog, message FROM alerts WHERE cleared_at IS NULL",
                &[],
                |r| Ok((r.word(0)?, r.get(1)?, r.get(2)?)),
            )?;
            let key = |a: &Alert| (a.kind, a.blog.clone().unwrap_or_default());
            for (kind, blog, _) in &open {
                if !holding.iter().any(|a| key(a) == (*kind, blog.clone())) {
                    db.execute(
                        "UPDATE alerts SET cleared_at = ?3
                          WHERE kind = ?1 AND blog = ?2 AND cleared_at IS NULL",
                        args![*kind, blog.as_str(), now],
                    )?;
                }
            }
            let mut raised = Vec::new();
            for a in &holding {
                let (kind, blog) = key(a);
                match open
                    .iter()
                    .find(|(k, b, _)| (*k, b.as_str()) == (kind, blog.as_str()))
                {
                    Some((_, _, message)) if *message == a.message => {}
                    Some(_) => {
                        db.execute(
                            "UPDATE alerts SET message = ?3
                              WHERE kind = ?1 AND blog = ?2 AND cleared_at IS NULL",
                            args![kind, blog.as_str(), a.message.as_str()],
                        )?;
                    }
                    None => {
                        let n = db.execute(
                            "INSERT INTO alerts (kind, blog, message, raised_at)
                             VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
                            args![kind, blog.as_str(), a.message.as_str(), now],
                        )?;
                        if n == 1 {
                            raised.push(a.clone());
                        }
                    }
                }
            }
            Ok(raised)
        })
    }

    /// The open alerts, the archive's own first, then by blog and kind.
    ///
    /// # Errors
    /// The database failed, or a stored time is corrupt.
    pub fn open_alerts(&self) -> Result<Vec<OpenAlert>> {
        self.read(|db| {
            db.query_map(
                "SELECT kind, blog, message, raised_at FROM alerts WHERE cleared_at IS NULL
                  ORDER BY blog, kind",
                &[],
                |r| {
                    let blog: String = r.get(1)?;
                    Ok(OpenAlert {
                        alert: Alert {
                            kind: r.word(0)?,
                            blog: (!blog.is_empty()).then_some(blog),
                            message: r.get(2)?,
                        },
                        raised_at: r.time_req(3)?,
                    })
                },
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::feed::FeedKind;
    use crate::store::DatabaseSettings;

    fn alert(kind: AlertKind, blog: Option<&str>, message: &str) -> Alert {
        Alert {
            kind,
            blog: blog.map(str::to_string),
            message: message.into(),
        }
    }

    #[test]
    fn alerts_are_raised_once_updated_and_cleared() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let settings = DatabaseSettings::at(dir.path().join("a.db"));
        let (mut a, mut b) = (Store::open(&settings)?, Store::open(&settings)?);
        let now = Utc::now();
        let failing = alert(AlertKind::Failing, Some("http://b.test/"), "3 jobs failed");
        let stalled = alert(AlertKind::QueueStalled, None, "a job waits");
        assert_eq!(
            a.sync_alerts(&[failing.clone(), stalled.clone()], now)?
                .len(),
            2
        );
        // Another daemon sees the same: nothing new to report.
        assert!(b
            .sync_alerts(&[failing.clone(), stalled.clone()], now)?
            .is_empty());
        let worse = alert(AlertKind::Failing, Some("http://b.test/"), "4 jobs failed");
        assert!(a.sync_alerts(std::slice::from_ref(&worse), now)?.is_empty());
        let open = a.open_alerts()?;
        assert_eq!(open.len(), 1, "{open:?}");
        assert_eq!(open[0].alert, worse);
        // Cleared, then holding again: raised anew.
        assert!(a.sync_alerts(&[], now)?.is_empty());
        assert!(a.open_alerts()?.is_empty());
        assert_eq!(a.sync_alerts(&[stalled], now)?.len(), 1);
        Ok(())
    }

    #[test]
    fn facts_name_each_blog_and_the_due_jobs() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let mut store = Store::open(&DatabaseSettings::at(dir.path().join("a.db")))?;
        let blog = store.insert_blog(
            "http://b.test/",
            "http://b.test/feed",
            None,
            FeedKind::Rss2,
            &[],
        )?;
        assert!(store.enqueue_job(blog.id, super::super::JobKind::NewCrawl)?);
        let later = Utc::now() + chrono::Duration::seconds(5);
        let f = store.alert_facts(later, Some(1 << 30))?;
        assert_eq!(f.blogs.len(), 1);
        assert_eq!(f.blogs[0].blog, "http://b.test/");
        assert!(!f.blogs[0].crawled && !f.blogs[0].busy);
        assert!(f.oldest_due_job.is_some_and(|t| t <= later));
        assert!(f.database_bytes > 0);
        Ok(())
    }
}
