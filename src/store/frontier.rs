//! The stored frontier (paper §4.3): each blog's URLs with their link depth, discovery order,
//! state, kNN priority (and the model size it was computed at), L(u) once processed, retry
//! attempts and the earliest time a URL may be retried. `crawl::frontier` decides the order.

use super::{now, ts, utc_col, Link, PageState, QueuedUrl, Source};
use anyhow::Result;
use chrono::{DateTime, Utc};
use rusqlite::{params, OptionalExtension, Transaction};

/// Adds links to a blog's frontier; a URL known already gains the link's source, one more
/// in-link when a page links it, and its post mark. Returns how many post links were new to the
/// frontier.
pub(super) fn put_links(tx: &Transaction<'_>, blog_id: i64, links: &[Link]) -> Result<u32> {
    let mut new_posts = 0;
    if links.is_empty() {
        return Ok(new_posts);
    }
    let mut seq: i64 = tx.query_row(
        "SELECT COALESCE(MAX(seq), 0) FROM frontier WHERE blog_id = ?1",
        [blog_id],
        |r| r.get(0),
    )?;
    let mut insert = tx.prepare_cached(
        "INSERT OR IGNORE INTO frontier (blog_id, url, depth, state, seq, sources, inlinks, is_post)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    let mut known = tx.prepare_cached(
        "UPDATE frontier SET sources = sources | ?3, inlinks = inlinks + ?4, is_post = MAX(is_post, ?5)
         WHERE blog_id = ?1 AND url = ?2",
    )?;
    for l in links {
        let inlink = (l.source == Source::Link) as i64;
        let bit = l.source.bit();
        if insert.execute(params![
            blog_id,
            l.url,
            l.depth,
            PageState::Queued,
            seq + 1,
            bit,
            inlink,
            l.post
        ])? == 1
        {
            seq += 1;
            new_posts += l.post as u32;
        } else {
            known.execute(params![blog_id, l.url, bit, inlink, l.post])?;
        }
    }
    Ok(new_posts)
}

/// Sets the state of a processed frontier URL (a retry counts an attempt).
pub(super) fn put_state(
    tx: &Transaction<'_>,
    blog_id: i64,
    url: &str,
    state: PageState,
    post_links: Option<u32>,
    retry_at: Option<DateTime<Utc>>,
    error: Option<&str>,
) -> Result<()> {
    tx.execute(
        "UPDATE frontier SET state = ?3, post_links = ?4, not_before = ?5, error = ?6, last_attempt = ?7,
           attempts = attempts + CASE WHEN ?3 = 'queued' THEN 1 ELSE 0 END
         WHERE blog_id = ?1 AND url = ?2",
        params![blog_id, url, state, post_links, retry_at.map(ts), error, now()],
    )?;
    Ok(())
}

impl super::SqliteStore {
    pub(super) fn enqueue(&mut self, blog_id: i64, links: &[Link]) -> Result<()> {
        self.write(|tx| put_links(tx, blog_id, links).map(drop))
    }

    pub(super) fn queued(
        &self,
        blog_id: i64,
        n: usize,
        now: DateTime<Utc>,
    ) -> Result<Vec<(String, u32)>> {
        self.rows(
            "SELECT url, depth FROM frontier WHERE blog_id = ?1 AND state = 'queued' AND (not_before IS NULL OR not_before <= ?3)
             ORDER BY depth, seq LIMIT ?2",
            params![blog_id,
            n as i64, ts(now)], |r| {
            Ok((r.get(0)?, r.get(1)?))
        },
        )
    }

    pub(super) fn queued_page(
        &self,
        blog_id: i64,
        after: i64,
        n: usize,
    ) -> Result<Vec<(i64, String)>> {
        self.rows(
            "SELECT seq, url FROM frontier WHERE blog_id = ?1 AND state = 'queued' AND seq > ?2 ORDER BY seq LIMIT ?3",
            params![blog_id,
            after, n as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        },
        )
    }

    pub(super) fn processed(&self, blog_id: i64) -> Result<u64> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM frontier WHERE blog_id = ?1 AND state != 'queued'",
            [blog_id],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    pub(super) fn unscored(&self, blog_id: i64, n: usize) -> Result<Vec<String>> {
        // `state = 'queued' AND scored_at < 0` literally: the partial index `frontier_unscored`.
        self.rows(
            "SELECT url FROM frontier WHERE blog_id = ?1 AND state = 'queued' AND scored_at < 0 ORDER BY seq LIMIT ?2",
            params![blog_id,
            n as i64], |r| r.get(0),
        )
    }

    pub(super) fn set_priorities(
        &mut self,
        blog_id: i64,
        scores: &[(String, f64, i64)],
    ) -> Result<()> {
        self.write(|tx| {
            let mut st = tx.prepare(
                "UPDATE frontier SET priority = ?3, scored_at = ?4 WHERE blog_id = ?1 AND url = ?2",
            )?;
            for (u, p, at) in scores {
                st.execute(params![blog_id, u, p, at])?;
            }
            Ok(())
        })
    }

    pub(super) fn best_queued(
        &self,
        blog_id: i64,
        n: usize,
        now: DateTime<Utc>,
    ) -> Result<Vec<QueuedUrl>> {
        self.rows(
            "SELECT url, depth, priority, scored_at FROM frontier
             WHERE blog_id = ?1 AND state = 'queued' AND (not_before IS NULL OR not_before <= ?3)
             ORDER BY priority DESC, depth, seq LIMIT ?2",
            params![blog_id, n as i64, ts(now)],
            |r| {
                Ok(QueuedUrl {
                    url: r.get(0)?,
                    depth: r.get(1)?,
                    priority: r.get(2)?,
                    scored_at: r.get(3)?,
                })
            },
        )
    }

    pub(super) fn next_retry(&self, blog_id: i64) -> Result<Option<DateTime<Utc>>> {
        Ok(self.conn.query_row(
            "SELECT MIN(not_before) FROM frontier WHERE blog_id = ?1 AND state = 'queued' AND not_before IS NOT NULL",
            [blog_id],
            |r| utc_col(r, 0),
        )?)
    }

    pub(super) fn prefetched(&self, blog_id: i64) -> Result<u64> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM frontier f WHERE f.blog_id = ?1 AND f.state = 'queued'
               AND EXISTS (SELECT 1 FROM responses r WHERE r.blog_id = f.blog_id AND r.url = f.url
                             AND NOT (r.status BETWEEN 300 AND 399))",
            [blog_id],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    pub(super) fn prefetched_queued(&self, blog_id: i64, n: usize) -> Result<Vec<(String, u32)>> {
        self.rows(
            "SELECT f.url, f.depth FROM frontier f WHERE f.blog_id = ?1 AND f.state = 'queued'
               AND EXISTS (SELECT 1 FROM responses r WHERE r.blog_id = f.blog_id AND r.url = f.url
                             AND NOT (r.status BETWEEN 300 AND 399))
             ORDER BY f.seq LIMIT ?2",
            params![blog_id, n as i64],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    pub(super) fn deferred(&self, blog_id: i64, now: DateTime<Utc>) -> Result<u64> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM frontier WHERE blog_id = ?1 AND state = 'queued' AND not_before > ?2",
            params![blog_id, ts(now)],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    pub(super) fn page_state(&self, blog_id: i64, url: &str) -> Result<Option<PageState>> {
        Ok(self
            .conn
            .query_row(
                "SELECT state FROM frontier WHERE blog_id = ?1 AND url = ?2",
                params![blog_id, url],
                |r| r.get(0),
            )
            .optional()?)
    }

    pub(super) fn queued_posts(&self, blog_id: i64, now: DateTime<Utc>) -> Result<u64> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM frontier WHERE blog_id = ?1 AND is_post = 1 AND state = 'queued'
               AND (not_before IS NULL OR not_before <= ?2)",
            params![blog_id, ts(now)],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    pub(super) fn captures(&self, blog_id: i64) -> Result<(u64, u64)> {
        let listed: String = [
            Source::Feed,
            Source::PagedFeed,
            Source::Sitemap,
            Source::Listing,
        ]
        .iter()
        .map(|s| format!(" + ((sources & {}) != 0)", s.bit()))
        .collect();
        Ok(self.conn.query_row(
            &format!(
                "SELECT COALESCE(SUM(c = 1), 0), COALESCE(SUM(c = 2), 0) FROM (
                   SELECT inlinks{listed} AS c FROM frontier WHERE blog_id = ?1 AND is_post = 1)"
            ),
            [blog_id],
            |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
        )?)
    }

    pub(super) fn page_states(&self, blog_id: i64) -> Result<Vec<(PageState, u64)>> {
        self.rows(
            "SELECT state, COUNT(*) FROM frontier WHERE blog_id = ?1 GROUP BY state ORDER BY state",
            [blog_id],
            |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)),
        )
    }

    pub(super) fn observations(&self, blog_id: i64) -> Result<Vec<(String, u32)>> {
        self.rows(
            "SELECT url, post_links FROM frontier WHERE blog_id = ?1 AND post_links IS NOT NULL ORDER BY rowid",
            [blog_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    pub(super) fn attempts(&self, blog_id: i64, url: &str) -> Result<u32> {
        Ok(self
            .conn
            .query_row(
                "SELECT attempts FROM frontier WHERE blog_id = ?1 AND url = ?2",
                params![blog_id, url],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0))
    }
}
