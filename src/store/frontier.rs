//! The stored frontier (paper §4.3): each blog's URLs with their link depth, discovery order,
//! state, kNN priority (and the model size it was computed at), L(u) once processed, retry
//! attempts and the earliest time a URL may be retried. `crawl::frontier` decides the order.
//! Written once for both back ends over [`super::db::Db`].
//!
//! The queued state is written into the SQL text (from [`PageState::Queued`], not bound): the
//! partial index `frontier_unscored` is over `state = 'queued'`, and a planner uses a partial
//! index only when the query names its condition.

use super::db::{args, marks, Db, Dialect, Row, Value, ROWS_PER_STATEMENT};
use super::{BlogId, Link, PageOutcome, PageState, Priority, QueuedUrl, Source, Store};
use anyhow::Result;
use chrono::{DateTime, Utc};
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// A queued frontier URL to fetch next, with its link depth ([`Store::queued`],
/// [`Store::prefetched_queued`], `crawl::frontier`'s orders).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontierUrl {
    /// The URL (canonical).
    pub url: String,
    /// Link depth from the seeds (0: a seed).
    pub depth: u32,
}

/// A queued frontier URL with its discovery number ([`Store::queued_page`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredUrl {
    /// Discovery order within the blog's frontier: 1 for its first URL, counting up.
    pub seq: i64,
    /// The URL (canonical).
    pub url: String,
}

/// How often a blog's known posts were found ([`Store::captures`]): the frequencies of the
/// capture–recapture estimate of the posts still unseen (`crawl::stopping`'s `f1`, `f2`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Findings {
    /// Posts found exactly once (`f1`).
    pub once: u64,
    /// Posts found exactly twice (`f2`).
    pub twice: u64,
}

/// How many of a blog's frontier URLs are in one state ([`Store::page_states`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateCount {
    /// The state.
    pub state: PageState,
    /// Frontier URLs in it.
    pub urls: u64,
}

/// One kNN training point ([`Store::observations`]): a processed page and its L(u).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// The page's URL.
    pub url: String,
    /// L(u): links to post permalinks on the page.
    pub post_links: u32,
}

/// `state = 'queued'`, from the vocabulary.
static QUEUED: LazyLock<String> =
    LazyLock::new(|| format!("state = '{}'", PageState::Queued.as_str()));

/// One link to write: (url, depth, seq, source bits, in-links, post), the links to one URL
/// merged.
type LinkRow<'a> = (&'a str, u32, i64, i64, i64, i64);

/// Adds links to a blog's frontier; a URL known already gains the link's source, one more
/// in-link when a page links it, and its post mark. Returns how many post links were new to the
/// frontier. A URL linked twice in `links` is inserted by its first link and updated by the
/// others.
///
/// A few statements whatever the number of links (a page links dozens of URLs, and on
/// PostgreSQL each statement is a round trip): on PostgreSQL the blog's row is locked first, so
/// two writers never hand out the same discovery number (SQLite's write transaction holds the
/// whole database); then the last discovery number, which URLs are known, the new URLs
/// inserted and the known ones updated, each in batches of [`ROWS_PER_STATEMENT`].
pub(super) fn put_links(db: &mut dyn Db, blog_id: BlogId, links: &[Link]) -> Result<u32> {
    if links.is_empty() {
        return Ok(0);
    }
    if db.dialect() == Dialect::Postgres {
        db.query(
            "SELECT id FROM blogs WHERE id = ?1 FOR UPDATE",
            args![blog_id],
        )?;
    }
    let mut seq = db.count(
        "SELECT MAX(seq) FROM frontier WHERE blog_id = ?1",
        args![blog_id],
    )? as i64;
    let mut known = HashSet::new();
    let urls: Vec<&str> = links.iter().map(|l| l.url.as_str()).collect();
    for chunk in urls.chunks(ROWS_PER_STATEMENT) {
        let sql = format!(
            "SELECT url FROM frontier WHERE blog_id = ?1 AND url IN ({})",
            marks(2, chunk.len())
        );
        let mut params = vec![Value::from(blog_id)];
        params.extend(chunk.iter().map(|u| Value::from(*u)));
        for r in db.query(&sql, &params)? {
            known.insert(r.get::<String>(0)?);
        }
    }
    let (mut new, mut old): (Vec<LinkRow>, Vec<LinkRow>) = (Vec::new(), Vec::new());
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
                new.push((&l.url, l.depth, seq, bit, inlink, post));
                continue;
            }
        };
        row.3 |= bit;
        row.4 += inlink;
        row.5 = row.5.max(post);
    }
    for chunk in new.chunks(ROWS_PER_STATEMENT) {
        let rows: Vec<String> = (0..chunk.len())
            .map(|i| format!("(?1, ?2, {})", marks(3 + i * 6, 6)))
            .collect();
        let sql = format!(
            "INSERT INTO frontier (blog_id, state, url, depth, seq, sources, inlinks, is_post)
             VALUES {} ON CONFLICT DO NOTHING",
            rows.join(", ")
        );
        let mut params = vec![Value::from(blog_id), Value::from(PageState::Queued)];
        for r in chunk {
            params.extend([
                r.0.into(),
                r.1.into(),
                r.2.into(),
                r.3.into(),
                r.4.into(),
                r.5.into(),
            ]);
        }
        db.execute(&sql, &params)?;
    }
    for chunk in old.chunks(ROWS_PER_STATEMENT) {
        let rows: Vec<String> = (0..chunk.len())
            .map(|i| {
                let m = 2 + i * 4;
                format!(
                    "(?{m}, CAST(?{} AS BIGINT), CAST(?{} AS BIGINT), CAST(?{} AS BIGINT))",
                    m + 1,
                    m + 2,
                    m + 3
                )
            })
            .collect();
        let sql = format!(
            "WITH l(url, sources, inlinks, is_post) AS (VALUES {})
             UPDATE frontier SET sources = frontier.sources | l.sources,
               inlinks = frontier.inlinks + l.inlinks,
               is_post = CASE WHEN l.is_post > frontier.is_post THEN l.is_post ELSE frontier.is_post END
             FROM l WHERE frontier.blog_id = ?1 AND frontier.url = l.url",
            rows.join(", ")
        );
        let mut params = vec![Value::from(blog_id)];
        for r in chunk {
            params.extend([r.0.into(), r.3.into(), r.4.into(), r.5.into()]);
        }
        db.execute(&sql, &params)?;
    }
    Ok(new_posts)
}

/// A [`FrontierUrl`] from a row of `url, depth`.
fn frontier_url(r: &Row) -> Result<FrontierUrl> {
    Ok(FrontierUrl {
        url: r.get(0)?,
        depth: r.get(1)?,
    })
}

/// Sets the state of the frontier URL a crawled page's outcome `o` is about, attempted at
/// `now`; a retry (the URL queued again) counts an attempt.
pub(super) fn put_state(db: &mut dyn Db, o: &PageOutcome, now: DateTime<Utc>) -> Result<()> {
    db.execute(
        "UPDATE frontier SET state = ?3, post_links = ?4, not_before = ?5, error = ?6, last_attempt = ?7,
           attempts = attempts + CASE WHEN ?3 = ?8 THEN 1 ELSE 0 END
         WHERE blog_id = ?1 AND url = ?2",
        args![
            o.blog_id,
            o.url.as_str(),
            o.state,
            o.post_links,
            o.retry_at,
            o.error.clone(),
            now,
            PageState::Queued
        ],
    )?;
    Ok(())
}

impl Store {
    /// Adds links to a blog's frontier (a known URL gains the link's source).
    ///
    /// # Errors
    /// The database failed.
    pub fn enqueue(&mut self, blog_id: BlogId, links: &[Link]) -> Result<()> {
        let links = links.to_vec();
        self.write(move |db| put_links(db, blog_id, &links).map(drop))
    }

    /// Up to `n` queued frontier URLs that may be fetched at `now`, in breadth-first order.
    ///
    /// # Errors
    /// The database failed.
    pub fn queued(
        &self,
        blog_id: BlogId,
        n: usize,
        now: DateTime<Utc>,
    ) -> Result<Vec<FrontierUrl>> {
        let sql = format!(
            "SELECT url, depth FROM frontier WHERE blog_id = ?1 AND {} AND (not_before IS NULL OR not_before <= ?3)
             ORDER BY depth, seq LIMIT ?2",
            *QUEUED
        );
        self.read(move |db| db.query_map(&sql, args![blog_id, n, now], frontier_url))
    }

    /// One page of a blog's queued URLs in discovery order: those whose `seq` is above
    /// `after` (0: from the first), at most `n`.
    ///
    /// # Errors
    /// The database failed.
    pub fn queued_page(&self, blog_id: BlogId, after: i64, n: usize) -> Result<Vec<DiscoveredUrl>> {
        let sql = format!(
            "SELECT seq, url FROM frontier WHERE blog_id = ?1 AND {} AND seq > ?2 ORDER BY seq LIMIT ?3",
            *QUEUED
        );
        self.read(move |db| {
            db.query_map(&sql, args![blog_id, after, n], |r| {
                Ok(DiscoveredUrl {
                    seq: r.get(0)?,
                    url: r.get(1)?,
                })
            })
        })
    }

    /// A count over a blog's frontier: `sql` takes the blog as `?1` and `now` as `?2`.
    fn frontier_count(
        &self,
        sql: String,
        blog_id: BlogId,
        now: Option<DateTime<Utc>>,
    ) -> Result<u64> {
        self.read(move |db| match now {
            Some(now) => db.count(&sql, args![blog_id, now]),
            None => db.count(&sql, args![blog_id]),
        })
    }

    /// Number of frontier URLs of a blog already processed (done, failed or blocked).
    ///
    /// # Errors
    /// The database failed.
    pub fn processed(&self, blog_id: BlogId) -> Result<u64> {
        self.frontier_count(
            format!(
                "SELECT COUNT(*) FROM frontier WHERE blog_id = ?1 AND NOT {}",
                *QUEUED
            ),
            blog_id,
            None,
        )
    }

    /// Queued URLs of a blog never scored by the priority model, at most `n`.
    ///
    /// # Errors
    /// The database failed.
    pub fn unscored(&self, blog_id: BlogId, n: usize) -> Result<Vec<String>> {
        // The partial index `frontier_unscored`: its condition written as it is.
        let sql = format!(
            "SELECT url FROM frontier WHERE blog_id = ?1 AND {} AND scored_at < 0 ORDER BY seq LIMIT ?2",
            *QUEUED
        );
        self.read(move |db| db.query_map(&sql, args![blog_id, n], |r| r.get(0)))
    }

    /// Sets the priorities of queued URLs, each with the model size it was computed at. A URL
    /// scored twice keeps its last score.
    ///
    /// # Errors
    /// The database failed.
    pub fn set_priorities(&mut self, blog_id: BlogId, scores: &[Priority]) -> Result<()> {
        let mut last: HashMap<&str, usize> = HashMap::new();
        for (i, p) in scores.iter().enumerate() {
            last.insert(&p.url, i);
        }
        let mut kept: Vec<usize> = last.into_values().collect();
        kept.sort_unstable();
        let scores: Vec<Priority> = kept.iter().map(|&i| scores[i].clone()).collect();
        self.write(move |db| {
            for chunk in scores.chunks(ROWS_PER_STATEMENT) {
                let rows: Vec<String> = (0..chunk.len())
                    .map(|i| {
                        let m = 2 + i * 3;
                        format!(
                            "(?{m}, CAST(?{} AS DOUBLE PRECISION), CAST(?{} AS BIGINT))",
                            m + 1,
                            m + 2
                        )
                    })
                    .collect();
                let sql = format!(
                    "WITH l(url, priority, at) AS (VALUES {})
                     UPDATE frontier SET priority = l.priority, scored_at = l.at
                     FROM l WHERE frontier.blog_id = ?1 AND frontier.url = l.url",
                    rows.join(", ")
                );
                let mut params = vec![Value::from(blog_id)];
                for p in chunk {
                    params.extend([
                        Value::from(&p.url),
                        Value::from(p.priority),
                        Value::from(p.scored_at),
                    ]);
                }
                db.execute(&sql, &params)?;
            }
            Ok(())
        })
    }

    /// The `n` best queued URLs of a blog that may be fetched at `now`: highest priority first,
    /// then breadth-first.
    ///
    /// # Errors
    /// The database failed.
    pub fn best_queued(
        &self,
        blog_id: BlogId,
        n: usize,
        now: DateTime<Utc>,
    ) -> Result<Vec<QueuedUrl>> {
        let sql = format!(
            "SELECT url, depth, priority, scored_at FROM frontier
             WHERE blog_id = ?1 AND {} AND (not_before IS NULL OR not_before <= ?3)
             ORDER BY priority DESC, depth, seq LIMIT ?2",
            *QUEUED
        );
        self.read(move |db| {
            db.query_map(&sql, args![blog_id, n, now], |r| {
                Ok(QueuedUrl {
                    url: r.get(0)?,
                    depth: r.get(1)?,
                    priority: r.get(2)?,
                    scored_at: r.get(3)?,
                })
            })
        })
    }

    /// The earliest time one of a blog's queued URLs waits for (a 429/503 retry), if any.
    ///
    /// # Errors
    /// The database failed.
    pub fn next_retry(&self, blog_id: BlogId) -> Result<Option<DateTime<Utc>>> {
        let sql = format!(
            "SELECT MIN(not_before) FROM frontier WHERE blog_id = ?1 AND {} AND not_before IS NOT NULL",
            *QUEUED
        );
        self.read(move |db| db.query_one(&sql, args![blog_id])?.time(0))
    }

    /// Queued URLs of a blog whose page is already stored (entry pages fetched to learn the
    /// rules): processing them costs no request.
    ///
    /// # Errors
    /// The database failed.
    pub fn prefetched(&self, blog_id: BlogId) -> Result<u64> {
        self.frontier_count(
            format!(
                "SELECT COUNT(*) FROM frontier f WHERE f.blog_id = ?1 AND f.{}
                   AND EXISTS (SELECT 1 FROM responses r WHERE r.blog_id = f.blog_id AND r.url = f.url
                                 AND NOT (r.status BETWEEN 300 AND 399))",
                *QUEUED
            ),
            blog_id,
            None,
        )
    }

    /// Up to `n` of those queued URLs whose page is already stored, in discovery order.
    ///
    /// # Errors
    /// The database failed.
    pub fn prefetched_queued(&self, blog_id: BlogId, n: usize) -> Result<Vec<FrontierUrl>> {
        let sql = format!(
            "SELECT f.url, f.depth FROM frontier f WHERE f.blog_id = ?1 AND f.{}
               AND EXISTS (SELECT 1 FROM responses r WHERE r.blog_id = f.blog_id AND r.url = f.url
                             AND NOT (r.status BETWEEN 300 AND 399))
             ORDER BY f.seq LIMIT ?2",
            *QUEUED
        );
        self.read(move |db| db.query_map(&sql, args![blog_id, n], frontier_url))
    }

    /// Queued URLs of a blog waiting past `now` for a retry (a server asked to retry later).
    ///
    /// # Errors
    /// The database failed.
    pub fn deferred(&self, blog_id: BlogId, now: DateTime<Utc>) -> Result<u64> {
        self.frontier_count(
            format!(
                "SELECT COUNT(*) FROM frontier WHERE blog_id = ?1 AND {} AND not_before > ?2",
                *QUEUED
            ),
            blog_id,
            Some(now),
        )
    }

    /// Where the crawl is with one URL of a blog, if it is in the frontier.
    ///
    /// # Errors
    /// The database failed.
    pub fn page_state(&self, blog_id: BlogId, url: &str) -> Result<Option<PageState>> {
        let url = url.to_string();
        self.read(move |db| {
            db.query_opt(
                "SELECT state FROM frontier WHERE blog_id = ?1 AND url = ?2",
                args![blog_id, url.as_str()],
            )?
            .map(|r| r.word(0))
            .transpose()
        })
    }

    /// Post URLs of a blog queued and fetchable at `now` (not waiting for a retry).
    ///
    /// # Errors
    /// The database failed.
    pub fn queued_posts(&self, blog_id: BlogId, now: DateTime<Utc>) -> Result<u64> {
        self.frontier_count(
            format!(
                "SELECT COUNT(*) FROM frontier WHERE blog_id = ?1 AND is_post = 1 AND {}
                   AND (not_before IS NULL OR not_before <= ?2)",
                *QUEUED
            ),
            blog_id,
            Some(now),
        )
    }

    /// How often the blog's known posts were found, for the capture–recapture estimate of the
    /// posts still unseen: how many were found once, and twice. A finding is a page linking
    /// the post, or a source that lists it ([`Source::LISTS`]: feed, older feed page, sitemap,
    /// listing page).
    ///
    /// # Errors
    /// The database failed.
    pub fn captures(&self, blog_id: BlogId) -> Result<Findings> {
        let listed: String = Source::LISTS
            .iter()
            .map(|s| {
                format!(
                    " + CASE WHEN (sources & {}) != 0 THEN 1 ELSE 0 END",
                    s.bit()
                )
            })
            .collect();
        let sql = format!(
            "SELECT CAST(SUM(CASE WHEN c = 1 THEN 1 ELSE 0 END) AS BIGINT),
                    CAST(SUM(CASE WHEN c = 2 THEN 1 ELSE 0 END) AS BIGINT) FROM (
               SELECT inlinks{listed} AS c FROM frontier WHERE blog_id = ?1 AND is_post = 1) AS found"
        );
        self.read(move |db| {
            let r = db.query_one(&sql, args![blog_id])?;
            Ok(Findings {
                once: r.count(0)?.into(),
                twice: r.count(1)?.into(),
            })
        })
    }

    /// Number of frontier URLs of a blog in each state it has URLs in, by state name.
    ///
    /// # Errors
    /// The database failed.
    pub fn page_states(&self, blog_id: BlogId) -> Result<Vec<StateCount>> {
        self.read(move |db| {
            db.query_map(
                "SELECT state, COUNT(*) FROM frontier WHERE blog_id = ?1 GROUP BY state ORDER BY state",
                args![blog_id],
                |r| {
                    Ok(StateCount {
                        state: r.word(0)?,
                        urls: r.get(1)?,
                    })
                },
            )
        })
    }

    /// The kNN training data of a blog: every processed page with its L(u), in processing
    /// order.
    ///
    /// # Errors
    /// The database failed.
    pub fn observations(&self, blog_id: BlogId) -> Result<Vec<Observation>> {
        self.read(move |db| {
            db.query_map(
                "SELECT url, post_links FROM frontier WHERE blog_id = ?1 AND post_links IS NOT NULL ORDER BY seq",
                args![blog_id],
                |r| {
                    Ok(Observation {
                        url: r.get(0)?,
                        post_links: r.get(1)?,
                    })
                },
            )
        })
    }

    /// Retry attempts of a frontier URL so far.
    ///
    /// # Errors
    /// The database failed.
    pub fn attempts(&self, blog_id: BlogId, url: &str) -> Result<u32> {
        let url = url.to_string();
        self.read(move |db| {
            db.query_opt(
                "SELECT attempts FROM frontier WHERE blog_id = ?1 AND url = ?2",
                args![blog_id, url.as_str()],
            )?
            .map_or(Ok(0), |r| r.get(0))
        })
    }
}
