//! Which alerts hold for an archive (issue 44), from its facts alone: a blog failing its updates
//! in a row, posts known but not archived after a finished crawl, a blog silent for several
//! times its usual posting interval, the database near its size cap, due jobs no daemon takes.
//! Pure: the store gathers the [`ArchiveFacts`], the daemon raises, clears and reports what
//! [`evaluate`] returns.

use chrono::{DateTime, Utc};
use std::time::Duration;

vocabulary! {
    /// What an alert is about.
    pub enum AlertKind {
        /// A blog's last jobs failed, [`Rules::failing_after`] or more in a row.
        Failing = "failing",
        /// Posts the archive knows of are not archived, with no crawl of the blog running.
        MissingPosts = "missing-posts",
        /// A blog has published nothing for [`Rules::silent_factor`] times its usual interval.
        Silent = "silent",
        /// The database has reached [`Rules::full_share`] of its size cap.
        DatabaseFull = "database-full",
        /// A due job has waited longer than [`Rules::stalled_after`]: no daemon takes jobs.
        QueueStalled = "queue-stalled",
    }
}

/// When each alert holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    /// Failed jobs in a row that make a blog failing (default 3).
    pub failing_after: u32,
    /// A blog is silent after this many times the median interval between its latest posts
    /// (default 4)…
    pub silent_factor: f64,
    /// …and never before this long (default 7 days).
    pub silent_at_least: Duration,
    /// Share of `[database] max_size_mb` that raises [`AlertKind::DatabaseFull`] (default 0.9).
    pub full_share: f64,
    /// How long a due job may wait untaken (default 1 h).
    pub stalled_after: Duration,
}

/// Posts a blog needs before its usual interval means anything.
const POSTS_FOR_AN_INTERVAL: usize = 4;

/// What the alerts of one blog are judged on.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BlogFacts {
    /// The blog's home page: the subject of its alerts.
    pub blog: String,
    /// Crawled to the end at least once.
    pub crawled: bool,
    /// A job of the blog is running (its known posts may be on their way).
    pub busy: bool,
    /// Failed jobs in a row, and the last error.
    pub errors_in_a_row: u32,
    /// The last failed job's error.
    pub last_error: Option<String>,
    /// Posts known (feed, sitemaps, links) but not archived.
    pub posts_missing: u64,
    /// Publication times of its latest posts, newest first.
    pub published: Vec<DateTime<Utc>>,
}

/// What the alerts of an archive are judged on.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArchiveFacts {
    /// Each blog's facts.
    pub blogs: Vec<BlogFacts>,
    /// The database's size in bytes.
    pub database_bytes: u64,
    /// Its cap in bytes (`[database] max_size_mb`), if any.
    pub max_bytes: Option<u64>,
    /// Since when the longest-waiting due job has been due.
    pub oldest_due_job: Option<DateTime<Utc>>,
}

/// One alert that holds: its kind, its blog (`None`: the whole archive) and what a person
/// reads.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Alert {
    /// What it is about.
    pub kind: AlertKind,
    /// The blog's home page, or `None` for the archive as a whole.
    pub blog: Option<String>,
    /// One line for a person: what holds, and where to look.
    pub message: String,
}

/// The median interval between consecutive times of `published` (newest first), when there
/// are enough of them.
pub fn usual_interval(published: &[DateTime<Utc>]) -> Option<chrono::Duration> {
    if published.len() < POSTS_FOR_AN_INTERVAL {
        return None;
    }
    let mut gaps: Vec<chrono::Duration> =
        published.windows(2).map(|w| (w[0] - w[1]).abs()).collect();
    gaps.sort();
    Some(gaps[gaps.len() / 2])
}

/// Every alert that holds for `facts` at `now` under `rules`.
pub fn evaluate(rules: &Rules, facts: &ArchiveFacts, now: DateTime<Utc>) -> Vec<Alert> {
    let mut alerts = Vec::new();
    for b in &facts.blogs {
        let alert = |kind, message: String| Alert {
            kind,
            blog: Some(b.blog.clone()),
            message,
        };
        if rules.failing_after > 0 && b.errors_in_a_row >= rules.failing_after {
            alerts.push(alert(
                AlertKind::Failing,
                format!(
                    "{} failed in a row; last error: {}",
                    match b.errors_in_a_row {
                        1 => "1 job".to_string(),
                        n => format!("{n} jobs"),
                    },
                    b.last_error.as_deref().unwrap_or("not kept")
                ),
            ));
        }
        if b.crawled && !b.busy && b.posts_missing > 0 {
            alerts.push(alert(
                AlertKind::MissingPosts,
                format!(
                    "{} known posts are not archived (archive coverage --blog {})",
                    b.posts_missing, b.blog
                ),
            ));
        }
        if let (Some(newest), Some(usual)) = (b.published.first(), usual_interval(&b.published)) {
            let quiet = now - *newest;
            let bound = chrono::Duration::from_std(rules.silent_at_least)
                .unwrap_or(chrono::Duration::MAX)
                .max(scaled(usual, rules.silent_factor));
            if b.crawled && quiet > bound {
                alerts.push(alert(
                    AlertKind::Silent,
                    format!(
                        "no new post for {} days; it usually posts every {:.1} days",
                        quiet.num_days(),
                        usual.num_seconds() as f64 / 86_400.0
                    ),
                ));
            }
        }
    }
    if let Some(cap) = facts.max_bytes.filter(|c| *c > 0) {
        if facts.database_bytes as f64 >= rules.full_share * cap as f64 {
            alerts.push(Alert {
                kind: AlertKind::DatabaseFull,
                blog: None,
                message: format!(
                    "the database holds {:.0} MB of its {:.0} MB cap ([database] max_size_mb)",
                    facts.database_bytes as f64 / 1e6,
                    cap as f64 / 1e6
                ),
            });
        }
    }
    if let Some(due) = facts.oldest_due_job {
        let waited = now - due;
        if waited.to_std().is_ok_and(|w| w > rules.stalled_after) {
            alerts.push(Alert {
                kind: AlertKind::QueueStalled,
                blog: None,
                message: format!(
                    "a job due for {} minutes has not been taken: is a daemon running?",
                    waited.num_minutes()
                ),
            });
        }
    }
    alerts
}

/// `d` × `factor`, saturating.
fn scaled(d: chrono::Duration, factor: f64) -> chrono::Duration {
    let secs = d.num_seconds() as f64 * factor.max(0.0);
    chrono::Duration::try_seconds(secs.min(i64::MAX as f64 / 1000.0) as i64)
        .unwrap_or(chrono::Duration::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn rules() -> Rules {
        Rules {
            failing_after: 3,
            silent_factor: 4.0,
            silent_at_least: Duration::from_secs(7 * 86_400),
            full_share: 0.9,
            stalled_after: Duration::from_secs(3600),
        }
    }

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap()
    }

    fn days_ago(d: i64) -> DateTime<Utc> {
        now() - chrono::Duration::days(d)
    }

    fn kinds(facts: &ArchiveFacts) -> Vec<AlertKind> {
        evaluate(&rules(), facts, now())
            .into_iter()
            .map(|a| a.kind)
            .collect()
    }

    fn blog(f: impl FnOnce(&mut BlogFacts)) -> ArchiveFacts {
        let mut b = BlogFacts {
            blog: "https://b.example/".into(),
            crawled: true,
            ..BlogFacts::default()
        };
        f(&mut b);
        ArchiveFacts {
            blogs: vec![b],
            ..ArchiveFacts::default()
        }
    }

    #[test]
    fn a_blog_fails_from_the_third_failure_on() {
        assert!(kinds(&blog(|b| b.errors_in_a_row = 2)).is_empty());
        let facts = blog(|b| {
            b.errors_in_a_row = 3;
            b.last_error = Some("HTTP 500".into());
        });
        let alerts = evaluate(&rules(), &facts, now());
        assert_eq!(alerts.len(), 1);
        assert_eq!(alerts[0].kind, AlertKind::Failing);
        assert!(alerts[0].message.contains("HTTP 500"), "{alerts:?}");
    }

    #[test]
    fn missing_posts_count_only_once_no_crawl_runs() {
        assert!(kinds(&blog(|b| {
            b.posts_missing = 2;
            b.busy = true;
        }))
        .is_empty());
        assert!(kinds(&blog(|b| {
            b.posts_missing = 2;
            b.crawled = false;
        }))
        .is_empty());
        assert_eq!(
            kinds(&blog(|b| b.posts_missing = 2)),
            [AlertKind::MissingPosts]
        );
    }

    #[test]
    fn silence_is_measured_in_the_blogs_own_rhythm() {
        // Weekly posts, the last 20 days ago: quiet but not 4 weeks.
        let weekly =
            |last: i64| blog(|b| b.published = (0..6).map(|i| days_ago(last + 7 * i)).collect());
        assert!(kinds(&weekly(20)).is_empty());
        assert_eq!(kinds(&weekly(29)), [AlertKind::Silent]);
        // Daily posts: silent after the 7-day floor, not after 4 days.
        let daily =
            |last: i64| blog(|b| b.published = (0..6).map(|i| days_ago(last + i)).collect());
        assert!(kinds(&daily(5)).is_empty());
        assert_eq!(kinds(&daily(8)), [AlertKind::Silent]);
        // Three posts say nothing of a rhythm.
        assert!(kinds(&blog(
            |b| b.published = vec![days_ago(400), days_ago(500), days_ago(600)]
        ))
        .is_empty());
    }

    #[test]
    fn the_archive_alerts_on_its_cap_and_a_stalled_queue() {
        let facts = ArchiveFacts {
            database_bytes: 95,
            max_bytes: Some(100),
            oldest_due_job: Some(now() - chrono::Duration::minutes(61)),
            ..ArchiveFacts::default()
        };
        assert_eq!(
            kinds(&facts),
            [AlertKind::DatabaseFull, AlertKind::QueueStalled]
        );
        let fine = ArchiveFacts {
            database_bytes: 80,
            max_bytes: Some(100),
            oldest_due_job: Some(now() - chrono::Duration::minutes(59)),
            ..ArchiveFacts::default()
        };
        assert!(kinds(&fine).is_empty());
    }
}
