//! Revisits (issue 30): each archived post's revisit schedule (`posts.last_revisit`,
//! `posts.next_revisit`), the posts due, and what revisits found per blog (the oldest revisit,
//! posts revisited within the window, edits, deletions and moves). When a post is due is
//! decided by `core::revisit`; the store keeps it. Written once for both back ends over
//! [`super::db::Db`].

use super::db::args;
use super::sql::{POST_AT, POST_AT_FIRST};
use super::{BlogId, Store};
use anyhow::Result;
use chrono::{DateTime, FixedOffset, Utc};

/// An archived post to plan or revisit ([`Store::unplanned_revisits`], [`Store::due_revisits`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Revisit {
    /// The post's identity: the URL it was archived under.
    pub url: String,
    /// Where it moved to, when a revisit found it moved: the URL to fetch.
    pub moved_to: Option<String>,
    /// Its publication date (its age drives the interval).
    pub published: Option<DateTime<FixedOffset>>,
    /// Its version: 1 plus the edits found so far.
    pub version: u32,
    /// When its page was last fetched (its last revisit, else when it was archived).
    pub last_fetch: DateTime<Utc>,
}

impl Revisit {
    /// The URL to fetch: where the post is now.
    pub fn fetch_url(&self) -> &str {
        self.moved_to.as_deref().unwrap_or(&self.url)
    }
}

/// What revisits found of one blog ([`Store::revisit_figures`]), for `archive status` and
/// `archive coverage`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RevisitFigures {
    /// Posts not gone: those revisits keep.
    pub posts: u64,
    /// Of them, fetched (revisited, or archived) within the window.
    pub within_window: u64,
    /// The longest any of them has gone without a fetch: the oldest of their last revisits (or
    /// archiving, when never revisited).
    pub oldest_fetch: Option<DateTime<Utc>>,
    /// Edits kept as versions (from revisits and from the feed).
    pub edits: u64,
    /// Posts found gone.
    pub gone: u64,
    /// Posts found moved.
    pub moved: u64,
}

/// `now - within`, or the earliest time when the window reaches past it.
fn window_start(now: DateTime<Utc>, within: std::time::Duration) -> DateTime<Utc> {
    crate::core::schedule::before(now, within)
}

const REVISIT_COLUMNS: &str =
    "url, moved_to, published, version, COALESCE(last_revisit, fetched_at)";

fn revisit_from(r: &super::db::Row) -> Result<Revisit> {
    Ok(Revisit {
        url: r.get(0)?,
        moved_to: r.get(1)?,
        published: r.local(2)?,
        version: r.get(3)?,
        last_fetch: r.time_req(4)?,
    })
}

impl Store {
    /// A blog's posts (not gone) whose revisit is not planned yet: just archived, or archived
    /// before revisits existed.
    ///
    /// # Errors
    /// The database failed, or a stored time is corrupt.
    pub fn unplanned_revisits(&self, blog_id: BlogId) -> Result<Vec<Revisit>> {
        self.read(move |db| {
            db.query_map(
                &format!(
                    "SELECT {REVISIT_COLUMNS} FROM posts
                     WHERE blog_id = ?1 AND next_revisit IS NULL AND gone_at IS NULL ORDER BY url"
                ),
                args![blog_id],
                revisit_from,
            )
        })
    }

    /// The archived post found at `url` (gone or not): archived under it, moved to it, or one
    /// of its other addresses.
    ///
    /// # Errors
    /// The database failed, or a stored time is corrupt.
    pub fn archived_at(&self, url: &str) -> Result<Option<Revisit>> {
        let url = url.to_string();
        self.read(move |db| {
            db.query_opt(
                &format!(
                    "SELECT {REVISIT_COLUMNS} FROM posts p WHERE {POST_AT} ORDER BY {POST_AT_FIRST} LIMIT 1"
                ),
                args![url.as_str()],
            )?
            .map(|r| revisit_from(&r))
            .transpose()
        })
    }

    /// A blog's posts (not gone) titled `title`.
    ///
    /// # Errors
    /// The database failed, or a stored time is corrupt.
    pub fn posts_titled(&self, blog_id: BlogId, title: &str) -> Result<Vec<Revisit>> {
        let title = title.to_string();
        self.read(move |db| {
            db.query_map(
                &format!(
                    "SELECT {REVISIT_COLUMNS} FROM posts
                     WHERE blog_id = ?1 AND title = ?2 AND gone_at IS NULL ORDER BY url"
                ),
                args![blog_id, title.as_str()],
                revisit_from,
            )
        })
    }

    /// Plans revisits: each (post URL, when due), in one transaction.
    ///
    /// # Errors
    /// The database failed.
    pub fn plan_revisits(&mut self, plans: &[(String, DateTime<Utc>)]) -> Result<()> {
        let plans = plans.to_vec();
        self.write(move |db| {
            for (url, at) in &plans {
                db.execute(
                    "UPDATE posts SET next_revisit = ?2 WHERE url = ?1",
                    args![url.as_str(), *at],
                )?;
            }
            Ok(())
        })
    }

    /// Records a revisit of the post archived under `url` that changed nothing (a 304): done
    /// `at`, the next one due `next`. (A revisit that stores the page records this with it:
    /// `PageOutcome::next_revisit`.)
    ///
    /// # Errors
    /// The database failed.
    pub fn revisited(&mut self, url: &str, at: DateTime<Utc>, next: DateTime<Utc>) -> Result<()> {
        let url = url.to_string();
        self.write(move |db| {
            db.execute(
                "UPDATE posts SET last_revisit = ?2, next_revisit = ?3 WHERE url = ?1",
                args![url.as_str(), at, next],
            )?;
            Ok(())
        })
    }

    /// Up to `n` posts of a blog (not gone) whose revisit is due at `now`, the longest overdue
    /// first: planned for now or earlier, or for later than `within` from now (planned under a
    /// longer window than the one set now).
    ///
    /// # Errors
    /// The database failed, or a stored time is corrupt.
    pub fn due_revisits(
        &self,
        blog_id: BlogId,
        now: DateTime<Utc>,
        within: std::time::Duration,
        n: usize,
    ) -> Result<Vec<Revisit>> {
        let beyond = crate::core::schedule::after(now, within);
        self.read(move |db| {
            db.query_map(
                &format!(
                    "SELECT {REVISIT_COLUMNS} FROM posts
                     WHERE blog_id = ?1 AND gone_at IS NULL
                       AND (next_revisit <= ?2 OR next_revisit > ?3)
                     ORDER BY next_revisit, url LIMIT ?4"
                ),
                args![blog_id, now, beyond, n],
                revisit_from,
            )
        })
    }

    /// What revisits found of a blog at `now`, with `within` the window every post should be
    /// fetched again in.
    ///
    /// # Errors
    /// The database failed, or a stored time is corrupt.
    pub fn revisit_figures(
        &self,
        blog_id: BlogId,
        now: DateTime<Utc>,
        within: std::time::Duration,
    ) -> Result<RevisitFigures> {
        let since = window_start(now, within);
        self.read(move |db| {
            let r = db.query_one(
                "SELECT
                   (SELECT COUNT(*) FROM posts WHERE blog_id = ?1 AND gone_at IS NULL),
                   (SELECT COUNT(*) FROM posts WHERE blog_id = ?1 AND gone_at IS NULL
                      AND COALESCE(last_revisit, fetched_at) >= ?2),
                   (SELECT MIN(COALESCE(last_revisit, fetched_at)) FROM posts
                      WHERE blog_id = ?1 AND gone_at IS NULL),
                   (SELECT COUNT(*) FROM post_versions v JOIN posts p ON p.url = v.post_url
                      WHERE p.blog_id = ?1),
                   (SELECT COUNT(*) FROM posts WHERE blog_id = ?1 AND gone_at IS NOT NULL),
                   (SELECT COUNT(*) FROM posts WHERE blog_id = ?1 AND moved_to IS NOT NULL)",
                args![blog_id, since],
            )?;
            let n = |i: usize| -> Result<u64> { Ok(r.count(i)?.into()) };
            Ok(RevisitFigures {
                posts: n(0)?,
                within_window: n(1)?,
                oldest_fetch: r.time(2)?,
                edits: n(3)?,
                gone: n(4)?,
                moved: n(5)?,
            })
        })
    }
}
