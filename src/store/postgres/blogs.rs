//! Blogs on PostgreSQL: the blog rows, their feed entries, learned rules and post URL pattern,
//! the render decision, crawl milestones, activity and counts. Same names, arguments and
//! meaning as `store::blogs`.

use super::{count, local_time, server_now, time, word, PgStore};
use crate::core::feed::{Enclosure, FeedEntry, FeedKind};
use crate::core::post_url::PostUrlPattern;
use crate::store::blogs::parse_enclosures;
use crate::store::{ts, Blog, BlogCounts, RenderMode, Renders, StoredRule};
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

pub(super) use crate::store::sql::BLOG_COLUMNS;

pub(super) fn blog_from_row(r: &postgres::Row) -> Result<Blog> {
    Ok(Blog {
        id: r.get(0),
        home_url: r.get(1),
        feed_url: r.get(2),
        title: r.get(3),
        feed_kind: word(r, 4)?,
        crawl_started_at: time(r, 5)?,
        crawled_at: time(r, 6)?,
        post_pattern: r
            .get::<_, Option<String>>(7)
            .map(|p| serde_json::from_str::<PostUrlPattern>(&p))
            .transpose()
            .context("stored post URL pattern is corrupt")?,
        start_url: r.get(8),
        last_update_at: time(r, 9)?,
        next_update_at: time(r, 10)?,
        errors_in_a_row: count(r.get(11)),
        last_error: r.get(12),
        render: word(r, 13)?,
        renders: r
            .get::<_, Option<String>>(14)
            .map(|s| s.parse::<Renders>())
            .transpose()?,
        render_reason: r.get(15),
        sitemaps_read_at: time(r, 16)?,
    })
}

/// Inserts or refreshes feed entries (`store::blogs::put_entries`).
fn put_entries(
    tx: &mut postgres::Transaction<'_>,
    blog_id: i64,
    entries: &[FeedEntry],
) -> Result<()> {
    let st = tx.prepare(
        "INSERT INTO feed_entries (blog_id, url, title, authors, published, content_html, summary_html, seen_at, updated, comments_feed, comment_count, enclosures, authors_inherited)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
         ON CONFLICT (blog_id, url) DO UPDATE SET title = excluded.title, authors = excluded.authors,
           published = excluded.published, content_html = excluded.content_html,
           summary_html = excluded.summary_html, seen_at = excluded.seen_at, updated = excluded.updated,
           comments_feed = excluded.comments_feed, comment_count = excluded.comment_count,
           enclosures = excluded.enclosures, authors_inherited = excluded.authors_inherited",
    )?;
    let at = ts(server_now(tx)?);
    for e in entries {
        let enclosures = if e.enclosures.is_empty() {
            None
        } else {
            Some(serde_json::to_string(&e.enclosures)?)
        };
        tx.execute(
            &st,
            &[
                &blog_id,
                &e.url,
                &e.title,
                &serde_json::to_string(&e.authors)?,
                &e.published.map(|d| d.to_rfc3339()),
                &e.content_html,
                &e.summary_html,
                &at,
                &e.updated.map(|d| d.to_rfc3339()),
                &e.comments_feed,
                &e.comment_count.map(i64::from),
                &enclosures,
                &i64::from(e.authors_inherited),
            ],
        )?;
    }
    Ok(())
}

impl PgStore {
    /// All blogs, oldest first.
    ///
    /// # Errors
    /// The server failed, or a stored value is corrupt.
    pub fn blogs(&self) -> Result<Vec<Blog>> {
        self.call(|c| {
            c.query(
                &format!("SELECT {BLOG_COLUMNS} FROM blogs ORDER BY id"),
                &[],
            )?
            .iter()
            .map(blog_from_row)
            .collect()
        })
    }

    /// The blog with row id `id`.
    ///
    /// # Errors
    /// The server failed, or a stored value is corrupt.
    pub fn blog(&self, id: i64) -> Result<Option<Blog>> {
        self.call(move |c| {
            c.query_opt(
                &format!("SELECT {BLOG_COLUMNS} FROM blogs WHERE id = $1"),
                &[&id],
            )?
            .as_ref()
            .map(blog_from_row)
            .transpose()
        })
    }

    /// The blog whose feed URL or home URL is `url` (exact match).
    ///
    /// # Errors
    /// The server failed, or a stored value is corrupt.
    pub fn find_blog(&self, url: &str) -> Result<Option<Blog>> {
        let url = url.to_string();
        self.call(move |c| {
            c.query_opt(
                &format!("SELECT {BLOG_COLUMNS} FROM blogs WHERE feed_url = $1 OR home_url = $1 ORDER BY id LIMIT 1"),
                &[&url],
            )?
            .as_ref()
            .map(blog_from_row)
            .transpose()
        })
    }

    /// Adds a blog with its feed entries, in one transaction. Returns the new blog.
    ///
    /// # Errors
    /// The server failed, or the feed is already archived (unique `feed_url`).
    pub fn insert_blog(
        &mut self,
        home_url: &str,
        feed_url: &str,
        title: Option<&str>,
        feed_kind: FeedKind,
        entries: &[FeedEntry],
    ) -> Result<Blog> {
        let (home, feed, title) = (
            home_url.to_string(),
            feed_url.to_string(),
            title.map(str::to_string),
        );
        let entries = entries.to_vec();
        let id = self.write(move |tx| {
            let at = ts(server_now(tx)?);
            let id: i64 = tx
                .query_one(
                    "INSERT INTO blogs (home_url, feed_url, title, feed_kind, added_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
                    &[&home, &feed, &title, &feed_kind.as_str(), &at],
                )?
                .get(0);
            put_entries(tx, id, &entries)?;
            Ok(id)
        })?;
        self.blog(id)?.context("blog vanished after insert")
    }

    /// Updates the stored feed entries of a blog (insert or refresh).
    ///
    /// # Errors
    /// The server failed.
    pub fn save_entries(&mut self, blog_id: i64, entries: &[FeedEntry]) -> Result<()> {
        let entries = entries.to_vec();
        self.write(move |tx| put_entries(tx, blog_id, &entries))
    }

    /// The stored feed entries of a blog, in the order they were first seen.
    ///
    /// # Errors
    /// The server failed, or a stored time is corrupt.
    pub fn entries(&self, blog_id: i64) -> Result<Vec<FeedEntry>> {
        self.call(move |c| {
            c.query(
                "SELECT url, title, authors, published, content_html, summary_html, updated, comments_feed, comment_count, enclosures, authors_inherited
                 FROM feed_entries WHERE blog_id = $1 ORDER BY seq",
                &[&blog_id],
            )?
            .iter()
            .map(|r| {
                Ok(FeedEntry {
                    url: r.get(0),
                    title: r.get(1),
                    authors: serde_json::from_str(r.get(2)).unwrap_or_default(),
                    published: local_time(r, 3)?,
                    content_html: r.get(4),
                    summary_html: r.get(5),
                    updated: local_time(r, 6)?,
                    comments_feed: r.get(7),
                    comment_count: r.get::<_, Option<i64>>(8).map(count),
                    enclosures: parse_enclosures(r.get(9)),
                    authors_inherited: r.get::<_, i64>(10) != 0,
                })
            })
            .collect()
        })
    }

    /// The enclosures the blog's feed gave for the post at `post_url`; empty when none.
    ///
    /// # Errors
    /// The server failed.
    pub fn enclosures_of(&self, blog_id: i64, post_url: &str) -> Result<Vec<Enclosure>> {
        let url = post_url.to_string();
        self.call(move |c| {
            Ok(c.query_opt(
                "SELECT enclosures FROM feed_entries WHERE blog_id = $1 AND url = $2",
                &[&blog_id, &url],
            )?
            .map(|r| parse_enclosures(r.get(0)))
            .unwrap_or_default())
        })
    }

    /// Replaces the active rules of a blog and stores its post URL pattern, in one
    /// transaction; earlier rules stay, inactive, as history.
    ///
    /// # Errors
    /// The server failed.
    pub fn save_rules(
        &mut self,
        blog_id: i64,
        rules: &[StoredRule],
        post_pattern: &PostUrlPattern,
    ) -> Result<()> {
        let pattern = serde_json::to_string(post_pattern)?;
        let rules = rules.to_vec();
        self.write(move |tx| {
            tx.execute("UPDATE rules SET active = 0 WHERE blog_id = $1", &[&blog_id])?;
            for r in &rules {
                tx.execute(
                    "INSERT INTO rules (blog_id, field, xpath, score, votes, samples, learned_at, active, format) VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8)",
                    &[
                        &blog_id,
                        &r.field.as_str(),
                        &r.xpath,
                        &r.score,
                        &i64::from(r.votes),
                        &i64::from(r.samples),
                        &ts(r.learned_at),
                        &r.format,
                    ],
                )?;
            }
            tx.execute(
                "UPDATE blogs SET post_pattern = $2 WHERE id = $1",
                &[&blog_id, &pattern],
            )?;
            Ok(())
        })
    }

    /// The active rules of a blog, by field name.
    ///
    /// # Errors
    /// The server failed, or a stored value is corrupt.
    pub fn rules(&self, blog_id: i64) -> Result<Vec<StoredRule>> {
        self.call(move |c| {
            c.query(
                "SELECT field, xpath, score, votes, samples, learned_at, format FROM rules WHERE blog_id = $1 AND active = 1 ORDER BY field",
                &[&blog_id],
            )?
            .iter()
            .map(|r| {
                Ok(StoredRule {
                    field: word(r, 0)?,
                    xpath: r.get(1),
                    score: r.get(2),
                    votes: count(r.get(3)),
                    samples: count(r.get(4)),
                    learned_at: time(r, 5)?.context("rule without learned_at")?,
                    format: r.get(6),
                })
            })
            .collect()
        })
    }

    /// Sets the user's rendering choice for a blog; a new choice forgets an earlier automatic
    /// decision.
    ///
    /// # Errors
    /// The server failed.
    pub fn set_render_mode(&mut self, blog_id: i64, mode: RenderMode) -> Result<()> {
        self.call(move |c| {
            c.execute(
                "UPDATE blogs SET render = $2, renders = CASE WHEN render = $2 THEN renders ELSE NULL END,
                   render_reason = CASE WHEN render = $2 THEN render_reason ELSE NULL END WHERE id = $1",
                &[&blog_id, &mode.as_str()],
            )?;
            Ok(())
        })
    }

    /// Records what a blog renders and why.
    ///
    /// # Errors
    /// The server failed.
    pub fn set_render_decision(
        &mut self,
        blog_id: i64,
        renders: Renders,
        reason: &str,
    ) -> Result<()> {
        let reason = reason.to_string();
        self.call(move |c| {
            c.execute(
                "UPDATE blogs SET renders = $2, render_reason = $3 WHERE id = $1",
                &[&blog_id, &renders.as_str(), &reason],
            )?;
            Ok(())
        })
    }

    /// Sets where a blog's NewCrawl starts.
    ///
    /// # Errors
    /// The server failed.
    pub fn set_start_url(&mut self, blog_id: i64, url: &str) -> Result<()> {
        let url = url.to_string();
        self.call(move |c| {
            c.execute(
                "UPDATE blogs SET start_url = $2 WHERE id = $1",
                &[&blog_id, &url],
            )?;
            Ok(())
        })
    }

    /// Marks the start of a blog's NewCrawl (kept from the first start on resume).
    ///
    /// # Errors
    /// The server failed.
    pub fn mark_crawl_started(&mut self, blog_id: i64) -> Result<()> {
        self.call(move |c| {
            let now = ts(server_now(c)?);
            c.execute(
                "UPDATE blogs SET crawl_started_at = COALESCE(crawl_started_at, $2) WHERE id = $1",
                &[&blog_id, &now],
            )?;
            Ok(())
        })
    }

    /// Records that a blog's sitemaps were read at `at`.
    ///
    /// # Errors
    /// The server failed.
    pub fn mark_sitemaps_read(&mut self, blog_id: i64, at: DateTime<Utc>) -> Result<()> {
        let at = ts(at);
        self.call(move |c| {
            c.execute(
                "UPDATE blogs SET sitemaps_read_at = $2 WHERE id = $1",
                &[&blog_id, &at],
            )?;
            Ok(())
        })
    }

    /// Marks a blog's NewCrawl complete.
    ///
    /// # Errors
    /// The server failed.
    pub fn mark_crawled(&mut self, blog_id: i64) -> Result<()> {
        self.call(move |c| {
            let now = ts(server_now(c)?);
            c.execute(
                "UPDATE blogs SET crawled_at = $2 WHERE id = $1",
                &[&blog_id, &now],
            )?;
            Ok(())
        })
    }

    /// Errors of a blog's jobs in a row (0 after a success).
    ///
    /// # Errors
    /// The server failed, or there is no such blog.
    pub fn errors_in_a_row(&self, blog_id: i64) -> Result<u32> {
        self.call(move |c| {
            Ok(count(
                c.query_one(
                    "SELECT errors_in_a_row FROM blogs WHERE id = $1",
                    &[&blog_id],
                )?
                .get(0),
            ))
        })
    }

    /// Times of a blog's latest activity (posts and their comments published), newest first,
    /// at most `n`.
    ///
    /// # Errors
    /// The server failed, or a stored time is corrupt.
    pub fn activity(&self, blog_id: i64, n: usize) -> Result<Vec<DateTime<Utc>>> {
        let n = n as i64;
        self.call(move |c| {
            let rows = c.query(
                "SELECT t FROM (
                   SELECT published AS t FROM posts WHERE blog_id = $1 AND published IS NOT NULL
                   UNION ALL
                   SELECT c.published FROM comments c JOIN posts p ON p.url = c.post_url
                     WHERE p.blog_id = $1 AND c.published IS NOT NULL) AS activity
                 ORDER BY t DESC LIMIT $2",
                &[&blog_id, &n],
            )?;
            Ok(rows
                .iter()
                .map(|r| time(r, 0))
                .collect::<Result<Vec<_>>>()?
                .into_iter()
                .flatten()
                .collect())
        })
    }

    /// Counts for one blog.
    ///
    /// # Errors
    /// The server failed.
    pub fn counts(&self, blog_id: i64) -> Result<BlogCounts> {
        self.call(move |c| {
            let r = c.query_one(
                "SELECT (SELECT COUNT(*) FROM posts WHERE blog_id = $1),
                        (SELECT COUNT(*) FROM fetch_log WHERE blog_id = $1),
                        (SELECT COUNT(*) FROM frontier WHERE blog_id = $1 AND state = 'failed'),
                        (SELECT COUNT(*) FROM frontier WHERE blog_id = $1 AND state = 'queued')",
                &[&blog_id],
            )?;
            let n = |i: usize| r.get::<_, i64>(i) as u64;
            Ok(BlogCounts {
                posts: n(0),
                fetches: n(1),
                errors: n(2),
                queued: n(3),
            })
        })
    }
}
