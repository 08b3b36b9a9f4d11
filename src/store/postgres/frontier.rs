//! The stored frontier on PostgreSQL (paper §4.3): each blog's URLs with depth, discovery
//! order, state, kNN priority, L(u), retries and how each was found. Same names, arguments
//! and meaning as `store::frontier`.

use super::{count, time, word, PgStore};
use crate::store::{ts, Link, PageOutcome, PageState, QueuedUrl, Source};
use anyhow::Result;
use chrono::{DateTime, Utc};
use std::collections::{HashMap, HashSet};

/// Adds links to a blog's frontier (`store::frontier::put_links`): a known URL gains the
/// link's source, one more in-link when a page links it, and its post mark. Returns how many
/// post links were new. The blog's rows are locked first, so two writers never hand out the
/// same discovery number.
///
/// Five statements whatever the number of links (a page links dozens of URLs, and each
/// statement is a round trip): the lock, the last discovery number, which URLs are known,
/// one insert of the new URLs and one update of the known ones, from arrays. A URL linked
/// twice in `links` is inserted by its first link and updated by the others, as the SQLite
/// back end does link by link.
pub(super) fn put_links(
    tx: &mut postgres::Transaction<'_>,
    blog_id: i64,
    links: &[Link],
) -> Result<u32> {
    if links.is_empty() {
        return Ok(0);
    }
    tx.execute("SELECT id FROM blogs WHERE id = $1 FOR UPDATE", &[&blog_id])?;
    let mut seq: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(seq), 0)::BIGINT FROM frontier WHERE blog_id = $1",
            &[&blog_id],
        )?
        .get(0);
    let urls: Vec<&str> = links.iter().map(|l| l.url.as_str()).collect();
    let known: HashSet<String> = tx
        .query(
            "SELECT url FROM frontier WHERE blog_id = $1 AND url = ANY($2)",
            &[&blog_id, &urls],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    /// One row to write: (url, depth, seq, source bits, in-links, post).
    type Row<'a> = (&'a str, i64, i64, i64, i64, i64);
    let (mut new, mut old): (Vec<Row>, Vec<Row>) = (Vec::new(), Vec::new());
    let mut at: HashMap<&str, (bool, usize)> = HashMap::new();
    let mut new_posts = 0;
    for l in links {
        let inlink = i64::from(l.source == Source::Link);
        let (bit, post) = (l.source.bit(), i64::from(l.post));
        let row = match at.get(l.url.as_str()) {
            Some(&(true, i)) => &mut new[i],
            Some(&(false, i)) => &mut old[i],
            None if known.contains(&l.url) => {
                at.insert(&l.url, (false, old.len()));
                old.push((&l.url, 0, 0, bit, inlink, post));
                continue;
            }
            None => {
                seq += 1;
                new_posts += u32::from(l.post);
                at.insert(&l.url, (true, new.len()));
                new.push((&l.url, i64::from(l.depth), seq, bit, inlink, post));
                continue;
            }
        };
        row.3 |= bit;
        row.4 += inlink;
        row.5 = row.5.max(post);
    }
    let column = |rows: &[Row], f: fn(&Row) -> i64| rows.iter().map(f).collect::<Vec<i64>>();
    if !new.is_empty() {
        let urls: Vec<&str> = new.iter().map(|r| r.0).collect();
        tx.execute(
            "INSERT INTO frontier (blog_id, url, depth, state, seq, sources, inlinks, is_post)
             SELECT $1, l.url, l.depth, $2, l.seq, l.sources, l.inlinks, l.is_post
             FROM unnest($3::TEXT[], $4::BIGINT[], $5::BIGINT[], $6::BIGINT[], $7::BIGINT[], $8::BIGINT[])
               AS l(url, depth, seq, sources, inlinks, is_post)
             ON CONFLICT DO NOTHING",
            &[
                &blog_id,
                &PageState::Queued.as_str(),
                &urls,
                &column(&new, |r| r.1),
                &column(&new, |r| r.2),
                &column(&new, |r| r.3),
                &column(&new, |r| r.4),
                &column(&new, |r| r.5),
            ],
        )?;
    }
    if !old.is_empty() {
        let urls: Vec<&str> = old.iter().map(|r| r.0).collect();
        tx.execute(
            "UPDATE frontier f SET sources = f.sources | l.sources, inlinks = f.inlinks + l.inlinks,
               is_post = GREATEST(f.is_post, l.is_post)
             FROM unnest($2::TEXT[], $3::BIGINT[], $4::BIGINT[], $5::BIGINT[])
               AS l(url, sources, inlinks, is_post)
             WHERE f.blog_id = $1 AND f.url = l.url",
            &[
                &blog_id,
                &urls,
                &column(&old, |r| r.3),
                &column(&old, |r| r.4),
                &column(&old, |r| r.5),
            ],
        )?;
    }
    Ok(new_posts)
}

/// Sets the state of the frontier URL a crawled page's outcome `o` is about, attempted at
/// `now` (the transaction's time); a retry counts an attempt (`store::frontier::put_state`).
pub(super) fn put_state(
    tx: &mut postgres::Transaction<'_>,
    o: &PageOutcome,
    now: &str,
) -> Result<()> {
    tx.execute(
        "UPDATE frontier SET state = $3, post_links = $4, not_before = $5, error = $6, last_attempt = $7,
           attempts = attempts + CASE WHEN $3 = 'queued' THEN 1 ELSE 0 END
         WHERE blog_id = $1 AND url = $2",
        &[
            &o.blog_id,
            &o.url,
            &o.state.as_str(),
            &o.post_links.map(i64::from),
            &o.retry_at.map(ts),
            &o.error,
            &now,
        ],
    )?;
    Ok(())
}

impl PgStore {
    /// Adds links to a blog's frontier (a known URL gains the link's source).
    ///
    /// # Errors
    /// The server failed.
    pub fn enqueue(&mut self, blog_id: i64, links: &[Link]) -> Result<()> {
        let links = links.to_vec();
        self.write(move |tx| put_links(tx, blog_id, &links).map(drop))
    }

    /// Up to `n` queued URLs fetchable at `now`, breadth-first: (url, depth).
    ///
    /// # Errors
    /// The server failed.
    pub fn queued(&self, blog_id: i64, n: usize, now: DateTime<Utc>) -> Result<Vec<(String, u32)>> {
        let (n, now) = (n as i64, ts(now));
        self.call(move |c| {
            Ok(c.query(
                "SELECT url, depth FROM frontier WHERE blog_id = $1 AND state = 'queued' AND (not_before IS NULL OR not_before <= $3)
                 ORDER BY depth, seq LIMIT $2",
                &[&blog_id, &n, &now],
            )?
            .iter()
            .map(|r| (r.get(0), count(r.get(1))))
            .collect())
        })
    }

    /// One page of a blog's queued URLs in discovery order: (seq, url) with seq > `after`.
    ///
    /// # Errors
    /// The server failed.
    pub fn queued_page(&self, blog_id: i64, after: i64, n: usize) -> Result<Vec<(i64, String)>> {
        let n = n as i64;
        self.call(move |c| {
            Ok(c.query(
                "SELECT seq, url FROM frontier WHERE blog_id = $1 AND state = 'queued' AND seq > $2 ORDER BY seq LIMIT $3",
                &[&blog_id, &after, &n],
            )?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
        })
    }

    /// One number the frontier query `sql` (with `$1` the blog, `$2` a time) counts.
    fn frontier_count(&self, sql: &'static str, blog_id: i64, now: Option<String>) -> Result<u64> {
        self.call(move |c| {
            let r = match &now {
                Some(t) => c.query_one(sql, &[&blog_id, t])?,
                None => c.query_one(sql, &[&blog_id])?,
            };
            Ok(r.get::<_, i64>(0) as u64)
        })
    }

    /// Number of frontier URLs of a blog already processed (done, failed or blocked).
    ///
    /// # Errors
    /// The server failed.
    pub fn processed(&self, blog_id: i64) -> Result<u64> {
        self.frontier_count(
            "SELECT COUNT(*) FROM frontier WHERE blog_id = $1 AND state != 'queued'",
            blog_id,
            None,
        )
    }

    /// Queued URLs of a blog never scored by the priority model, at most `n`.
    ///
    /// # Errors
    /// The server failed.
    pub fn unscored(&self, blog_id: i64, n: usize) -> Result<Vec<String>> {
        let n = n as i64;
        self.call(move |c| {
            Ok(c.query(
                "SELECT url FROM frontier WHERE blog_id = $1 AND state = 'queued' AND scored_at < 0 ORDER BY seq LIMIT $2",
                &[&blog_id, &n],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect())
        })
    }

    /// Sets the priorities of queued URLs: (url, priority, model size it was computed at).
    ///
    /// # Errors
    /// The server failed.
    pub fn set_priorities(&mut self, blog_id: i64, scores: &[(String, f64, i64)]) -> Result<()> {
        // One statement from arrays (each statement is a round trip); a URL scored twice
        // keeps its last score, as when the scores are written one by one.
        let mut last: HashMap<&str, usize> = HashMap::new();
        for (i, (u, _, _)) in scores.iter().enumerate() {
            last.insert(u, i);
        }
        let mut kept: Vec<usize> = last.into_values().collect();
        kept.sort_unstable();
        let urls: Vec<String> = kept.iter().map(|&i| scores[i].0.clone()).collect();
        let priorities: Vec<f64> = kept.iter().map(|&i| scores[i].1).collect();
        let at: Vec<i64> = kept.iter().map(|&i| scores[i].2).collect();
        self.write(move |tx| {
            tx.execute(
                "UPDATE frontier f SET priority = l.priority, scored_at = l.at
                 FROM unnest($2::TEXT[], $3::FLOAT8[], $4::BIGINT[]) AS l(url, priority, at)
                 WHERE f.blog_id = $1 AND f.url = l.url",
                &[&blog_id, &urls, &priorities, &at],
            )?;
            Ok(())
        })
    }

    /// The `n` best queued URLs fetchable at `now`: highest priority first, then
    /// breadth-first.
    ///
    /// # Errors
    /// The server failed.
    pub fn best_queued(
        &self,
        blog_id: i64,
        n: usize,
        now: DateTime<Utc>,
    ) -> Result<Vec<QueuedUrl>> {
        let (n, now) = (n as i64, ts(now));
        self.call(move |c| {
            Ok(c.query(
                "SELECT url, depth, priority, scored_at FROM frontier
                 WHERE blog_id = $1 AND state = 'queued' AND (not_before IS NULL OR not_before <= $3)
                 ORDER BY priority DESC, depth, seq LIMIT $2",
                &[&blog_id, &n, &now],
            )?
            .iter()
            .map(|r| QueuedUrl {
                url: r.get(0),
                depth: count(r.get(1)),
                priority: r.get(2),
                scored_at: r.get(3),
            })
            .collect())
        })
    }

    /// The earliest time one of a blog's queued URLs waits for, if any.
    ///
    /// # Errors
    /// The server failed.
    pub fn next_retry(&self, blog_id: i64) -> Result<Option<DateTime<Utc>>> {
        self.call(move |c| {
            let r = c.query_one(
                "SELECT MIN(not_before) FROM frontier WHERE blog_id = $1 AND state = 'queued' AND not_before IS NOT NULL",
                &[&blog_id],
            )?;
            time(&r, 0)
        })
    }

    /// Queued URLs of a blog whose page is already stored (no request to process them).
    ///
    /// # Errors
    /// The server failed.
    pub fn prefetched(&self, blog_id: i64) -> Result<u64> {
        self.frontier_count(
            "SELECT COUNT(*) FROM frontier f WHERE f.blog_id = $1 AND f.state = 'queued'
               AND EXISTS (SELECT 1 FROM responses r WHERE r.blog_id = f.blog_id AND r.url = f.url
                             AND NOT (r.status BETWEEN 300 AND 399))",
            blog_id,
            None,
        )
    }

    /// Up to `n` of those, in discovery order: (url, depth).
    ///
    /// # Errors
    /// The server failed.
    pub fn prefetched_queued(&self, blog_id: i64, n: usize) -> Result<Vec<(String, u32)>> {
        let n = n as i64;
        self.call(move |c| {
            Ok(c.query(
                "SELECT f.url, f.depth FROM frontier f WHERE f.blog_id = $1 AND f.state = 'queued'
                   AND EXISTS (SELECT 1 FROM responses r WHERE r.blog_id = f.blog_id AND r.url = f.url
                                 AND NOT (r.status BETWEEN 300 AND 399))
                 ORDER BY f.seq LIMIT $2",
                &[&blog_id, &n],
            )?
            .iter()
            .map(|r| (r.get(0), count(r.get(1))))
            .collect())
        })
    }

    /// Queued URLs of a blog waiting past `now` for a retry.
    ///
    /// # Errors
    /// The server failed.
    pub fn deferred(&self, blog_id: i64, now: DateTime<Utc>) -> Result<u64> {
        self.frontier_count(
            "SELECT COUNT(*) FROM frontier WHERE blog_id = $1 AND state = 'queued' AND not_before > $2",
            blog_id,
            Some(ts(now)),
        )
    }

    /// Where the crawl is with one URL of a blog, if it is in the frontier.
    ///
    /// # Errors
    /// The server failed, or a stored state is unknown.
    pub fn page_state(&self, blog_id: i64, url: &str) -> Result<Option<PageState>> {
        let url = url.to_string();
        self.call(move |c| {
            c.query_opt(
                "SELECT state FROM frontier WHERE blog_id = $1 AND url = $2",
                &[&blog_id, &url],
            )?
            .map(|r| word(&r, 0))
            .transpose()
        })
    }

    /// Post URLs of a blog queued and fetchable at `now`.
    ///
    /// # Errors
    /// The server failed.
    pub fn queued_posts(&self, blog_id: i64, now: DateTime<Utc>) -> Result<u64> {
        self.frontier_count(
            "SELECT COUNT(*) FROM frontier WHERE blog_id = $1 AND is_post = 1 AND state = 'queued'
               AND (not_before IS NULL OR not_before <= $2)",
            blog_id,
            Some(ts(now)),
        )
    }

    /// How often the blog's known posts were found: (found once, found twice), for the
    /// capture–recapture estimate (`Store::captures`).
    ///
    /// # Errors
    /// The server failed.
    pub fn captures(&self, blog_id: i64) -> Result<(u64, u64)> {
        let listed: String = [
            Source::Feed,
            Source::PagedFeed,
            Source::Sitemap,
            Source::Listing,
        ]
        .iter()
        .map(|s| format!(" + ((sources & {}) != 0)::int", s.bit()))
        .collect();
        let sql = format!(
            "SELECT COALESCE(SUM((c = 1)::int), 0)::BIGINT, COALESCE(SUM((c = 2)::int), 0)::BIGINT FROM (
               SELECT inlinks{listed} AS c FROM frontier WHERE blog_id = $1 AND is_post = 1) AS found"
        );
        self.call(move |c| {
            let r = c.query_one(&sql, &[&blog_id])?;
            Ok((r.get::<_, i64>(0) as u64, r.get::<_, i64>(1) as u64))
        })
    }

    /// Number of frontier URLs of a blog in each state.
    ///
    /// # Errors
    /// The server failed, or a stored state is unknown.
    pub fn page_states(&self, blog_id: i64) -> Result<Vec<(PageState, u64)>> {
        self.call(move |c| {
            c.query(
                "SELECT state, COUNT(*) FROM frontier WHERE blog_id = $1 GROUP BY state ORDER BY state",
                &[&blog_id],
            )?
            .iter()
            .map(|r| Ok((word(r, 0)?, r.get::<_, i64>(1) as u64)))
            .collect()
        })
    }

    /// The kNN training data of a blog: (url, L(u)) of every processed page, in discovery
    /// order (SQLite's rowid order).
    ///
    /// # Errors
    /// The server failed.
    pub fn observations(&self, blog_id: i64) -> Result<Vec<(String, u32)>> {
        self.call(move |c| {
            Ok(c.query(
                "SELECT url, post_links FROM frontier WHERE blog_id = $1 AND post_links IS NOT NULL ORDER BY seq",
                &[&blog_id],
            )?
            .iter()
            .map(|r| (r.get(0), count(r.get(1))))
            .collect())
        })
    }

    /// Retry attempts of a frontier URL so far.
    ///
    /// # Errors
    /// The server failed.
    pub fn attempts(&self, blog_id: i64, url: &str) -> Result<u32> {
        let url = url.to_string();
        self.call(move |c| {
            Ok(c.query_opt(
                "SELECT attempts FROM frontier WHERE blog_id = $1 AND url = $2",
                &[&blog_id, &url],
            )?
            .map_or(0, |r| count(r.get(0))))
        })
    }
}
