//! Blogs: the blog rows, their feed entries (the training data), their learned rules and post
//! URL pattern, the render decision, crawl milestones, and the activity scheduling reads.
//! Written once for both back ends, over [`super::db::Db`].

use super::db::{args, Db, Dialect, Row};
use super::sql::BLOG_COLUMNS;
use super::{
    json_list, parse_list, Blog, BlogCounts, BlogId, PageState, RenderMode, Renders, Store,
    StoredRule,
};
use crate::core::feed::{Enclosure, FeedEntry, FeedKind};
use crate::core::post_url::PostUrlPattern;
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

/// A blog from a row of [`BLOG_COLUMNS`].
fn blog_from_row(r: &Row) -> Result<Blog> {
    Ok(Blog {
        id: r.get(0)?,
        home_url: r.get(1)?,
        feed_url: r.get(2)?,
        title: r.get(3)?,
        feed_kind: r.word(4)?,
        crawl_started_at: r.time(5)?,
        crawled_at: r.time(6)?,
        post_pattern: r
            .get::<Option<String>>(7)?
            .map(|p| serde_json::from_str::<PostUrlPattern>(&p))
            .transpose()
            .context("stored post URL pattern is corrupt")?,
        start_url: r.get(8)?,
        last_update_at: r.time(9)?,
        next_update_at: r.time(10)?,
        errors_in_a_row: r.count(11)?,
        last_error: r.get(12)?,
        render: r.word(13)?,
        renders: r
            .get::<Option<String>>(14)?
            .map(|s| s.parse::<Renders>())
            .transpose()?,
        render_reason: r.get(15)?,
        sitemaps_read_at: r.time(16)?,
        language: r.get(17)?,
    })
}

/// The `enclosures` column: a JSON array of [`Enclosure`], NULL when there are none.
fn enclosures_col(enclosures: &[Enclosure]) -> Result<Option<String>> {
    Ok(if enclosures.is_empty() {
        None
    } else {
        Some(serde_json::to_string(enclosures)?)
    })
}

/// A feed entry's stored enclosures (JSON), none when unset or unreadable.
pub(super) fn parse_enclosures(col: Option<String>) -> Vec<Enclosure> {
    col.and_then(|j| serde_json::from_str(&j).ok())
        .unwrap_or_default()
}

/// Inserts or refreshes a blog's feed entries, seen now.
fn put_entries(db: &mut dyn Db, blog_id: BlogId, entries: &[FeedEntry]) -> Result<()> {
    let at = db.now()?;
    for e in entries {
        db.execute(
            "INSERT INTO feed_entries (blog_id, url, title, authors, published, content_html, summary_html, seen_at, updated, comments_feed, comment_count, enclosures, authors_inherited)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
             ON CONFLICT (blog_id, url) DO UPDATE SET title = excluded.title, authors = excluded.authors,
               published = excluded.published, content_html = excluded.content_html,
               summary_html = excluded.summary_html, seen_at = excluded.seen_at, updated = excluded.updated,
               comments_feed = excluded.comments_feed, comment_count = excluded.comment_count,
               enclosures = excluded.enclosures, authors_inherited = excluded.authors_inherited",
            args![
                blog_id,
                &e.url,
                &e.title,
                json_list(&e.authors),
                e.published,
                &e.content_html,
                &e.summary_html,
                at,
                e.updated,
                &e.comments_feed,
                e.comment_count,
                enclosures_col(&e.enclosures)?,
                e.authors_inherited,
            ],
        )?;
    }
    Ok(())
}

impl Store {
    /// All blogs, oldest first.
    ///
    /// # Errors
    /// The database failed, or a stored value is corrupt.
    pub fn blogs(&self) -> Result<Vec<Blog>> {
        self.read(|db| {
            db.query_map(
                &format!("SELECT {BLOG_COLUMNS} FROM blogs ORDER BY id"),
                &[],
                blog_from_row,
            )
        })
    }

    /// The blog with row id `id`.
    ///
    /// # Errors
    /// The database failed, or a stored value is corrupt.
    pub fn blog(&self, id: BlogId) -> Result<Option<Blog>> {
        self.read(move |db| {
            db.query_opt(
                &format!("SELECT {BLOG_COLUMNS} FROM blogs WHERE id = ?1"),
                args![id],
            )?
            .as_ref()
            .map(blog_from_row)
            .transpose()
        })
    }

    /// The blog whose feed URL or home URL is `url` (exact match).
    ///
    /// # Errors
    /// The database failed, or a stored value is corrupt.
    pub fn find_blog(&self, url: &str) -> Result<Option<Blog>> {
        let url = url.to_owned();
        self.read(move |db| {
            db.query_opt(
                &format!(
                    "SELECT {BLOG_COLUMNS} FROM blogs WHERE feed_url = ?1 OR home_url = ?1 ORDER BY id LIMIT 1"
                ),
                args![&url],
            )?
            .as_ref()
            .map(blog_from_row)
            .transpose()
        })
    }

    /// Adds a blog with its feed entries, in one transaction. Returns the new blog.
    ///
    /// # Errors
    /// The database failed, or the feed is already archived (unique `feed_url`).
    pub fn insert_blog(
        &mut self,
        home_url: &str,
        feed_url: &str,
        title: Option<&str>,
        feed_kind: FeedKind,
        entries: &[FeedEntry],
    ) -> Result<Blog> {
        let (home, feed, title) = (
            home_url.to_owned(),
            feed_url.to_owned(),
            title.map(str::to_owned),
        );
        let entries = entries.to_vec();
        let id = self.write(move |db| {
            let at = db.now()?;
            let id: BlogId = db
                .query_one(
                    "INSERT INTO blogs (home_url, feed_url, title, feed_kind, added_at) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
                    args![&home, &feed, &title, feed_kind, at],
                )?
                .get(0)?;
            put_entries(db, id, &entries)?;
            Ok(id)
        })?;
        self.blog(id)?.context("blog vanished after insert")
    }

    /// Updates the stored feed entries of a blog (insert or refresh), in one transaction.
    ///
    /// # Errors
    /// The database failed.
    pub fn save_entries(&mut self, blog_id: BlogId, entries: &[FeedEntry]) -> Result<()> {
        let entries = entries.to_vec();
        self.write(move |db| put_entries(db, blog_id, &entries))
    }

    /// The stored feed entries of a blog, in the order they were first seen.
    ///
    /// # Errors
    /// The database failed, or a stored time is corrupt.
    pub fn entries(&self, blog_id: BlogId) -> Result<Vec<FeedEntry>> {
        self.read(move |db| {
            // The order of insertion: SQLite's rowid, PostgreSQL's identity column.
            let order = match db.dialect() {
                Dialect::Sqlite => "rowid",
                Dialect::Postgres => "seq",
            };
            db.query_map(
                &format!(
                    "SELECT url, title, authors, published, content_html, summary_html, updated, comments_feed, comment_count, enclosures, authors_inherited
                     FROM feed_entries WHERE blog_id = ?1 ORDER BY {order}"
                ),
                args![blog_id],
                |r| {
                    Ok(FeedEntry {
                        url: r.get(0)?,
                        title: r.get(1)?,
                        authors: parse_list(r.get(2)?),
                        published: r.local(3)?,
                        content_html: r.get(4)?,
                        summary_html: r.get(5)?,
                        updated: r.local(6)?,
                        comments_feed: r.get(7)?,
                        comment_count: r.get(8)?,
                        enclosures: parse_enclosures(r.get(9)?),
                        authors_inherited: r.get(10)?,
                    })
                },
            )
        })
    }

    /// The enclosures the blog's feed gave for the post at `post_url` (canonical permalink);
    /// empty when the feed never listed the post or gave it none.
    ///
    /// # Errors
    /// The database failed.
    pub fn enclosures_of(&self, blog_id: BlogId, post_url: &str) -> Result<Vec<Enclosure>> {
        let url = post_url.to_owned();
        self.read(move |db| {
            Ok(
                match db.query_opt(
                    "SELECT enclosures FROM feed_entries WHERE blog_id = ?1 AND url = ?2",
                    args![blog_id, &url],
                )? {
                    Some(r) => parse_enclosures(r.get(0)?),
                    None => Vec::new(),
                },
            )
        })
    }

    /// Replaces the active rules of a blog and stores its post URL pattern, in one transaction.
    /// Earlier rules stay in the table, inactive, as history.
    ///
    /// # Errors
    /// The database failed.
    pub fn save_rules(
        &mut self,
        blog_id: BlogId,
        rules: &[StoredRule],
        post_pattern: &PostUrlPattern,
    ) -> Result<()> {
        let pattern = serde_json::to_string(post_pattern)?;
        let rules = rules.to_vec();
        self.write(move |db| {
            db.execute(
                "UPDATE rules SET active = 0 WHERE blog_id = ?1",
                args![blog_id],
            )?;
            for r in &rules {
                db.execute(
                    "INSERT INTO rules (blog_id, field, xpath, score, votes, samples, learned_at, active, format) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8)",
                    args![blog_id, r.field, &r.xpath, r.score, r.votes, r.samples, r.learned_at, &r.format],
                )?;
            }
            db.execute(
                "UPDATE blogs SET post_pattern = ?2 WHERE id = ?1",
                args![blog_id, &pattern],
            )?;
            Ok(())
        })
    }

    /// The active rules of a blog, by field name.
    ///
    /// # Errors
    /// The database failed, or a stored value is corrupt.
    pub fn rules(&self, blog_id: BlogId) -> Result<Vec<StoredRule>> {
        self.read(move |db| {
            db.query_map(
                "SELECT field, xpath, score, votes, samples, learned_at, format FROM rules WHERE blog_id = ?1 AND active = 1 ORDER BY field",
                args![blog_id],
                |r| {
                    Ok(StoredRule {
                        field: r.word(0)?,
                        xpath: r.get(1)?,
                        score: r.get(2)?,
                        votes: r.count(3)?,
                        samples: r.count(4)?,
                        learned_at: r.time_req(5)?,
                        format: r.get(6)?,
                    })
                },
            )
        })
    }

    /// Sets the user's rendering choice for a blog; a new choice forgets an earlier automatic
    /// decision.
    ///
    /// # Errors
    /// The database failed.
    pub fn set_render_mode(&mut self, blog_id: BlogId, mode: RenderMode) -> Result<()> {
        self.write(move |db| {
            db.execute(
                "UPDATE blogs SET render = ?2, renders = CASE WHEN render = ?2 THEN renders ELSE NULL END,
                   render_reason = CASE WHEN render = ?2 THEN render_reason ELSE NULL END WHERE id = ?1",
                args![blog_id, mode],
            )?;
            Ok(())
        })
    }

    /// Records what a blog renders and why.
    ///
    /// # Errors
    /// The database failed.
    pub fn set_render_decision(
        &mut self,
        blog_id: BlogId,
        renders: Renders,
        reason: &str,
    ) -> Result<()> {
        let reason = reason.to_owned();
        self.write(move |db| {
            db.execute(
                "UPDATE blogs SET renders = ?2, render_reason = ?3 WHERE id = ?1",
                args![blog_id, renders, &reason],
            )?;
            Ok(())
        })
    }

    /// Sets where a blog's NewCrawl starts.
    ///
    /// # Errors
    /// The database failed.
    pub fn set_start_url(&mut self, blog_id: BlogId, url: &str) -> Result<()> {
        let url = url.to_owned();
        self.write(move |db| {
            db.execute(
                "UPDATE blogs SET start_url = ?2 WHERE id = ?1",
                args![blog_id, &url],
            )?;
            Ok(())
        })
    }

    /// Marks the start of a blog's NewCrawl, now (kept from the first start on resume).
    ///
    /// # Errors
    /// The database failed.
    pub fn mark_crawl_started(&mut self, blog_id: BlogId) -> Result<()> {
        self.write(move |db| {
            let now = db.now()?;
            db.execute(
                "UPDATE blogs SET crawl_started_at = COALESCE(crawl_started_at, ?2) WHERE id = ?1",
                args![blog_id, now],
            )?;
            Ok(())
        })
    }

    /// Records the blog's language (a BCP 47 tag, `core::head::language_tag`).
    ///
    /// # Errors
    /// The database failed.
    pub fn set_blog_language(&mut self, blog_id: BlogId, language: &str) -> Result<()> {
        let language = language.to_owned();
        self.write(move |db| {
            db.execute(
                "UPDATE blogs SET language = ?2 WHERE id = ?1",
                args![blog_id, &language],
            )?;
            Ok(())
        })
    }

    /// Records that a blog's sitemaps were read at `at`.
    ///
    /// # Errors
    /// The database failed.
    pub fn mark_sitemaps_read(&mut self, blog_id: BlogId, at: DateTime<Utc>) -> Result<()> {
        self.write(move |db| {
            db.execute(
                "UPDATE blogs SET sitemaps_read_at = ?2 WHERE id = ?1",
                args![blog_id, at],
            )?;
            Ok(())
        })
    }

    /// Marks a blog's NewCrawl complete, now.
    ///
    /// # Errors
    /// The database failed.
    pub fn mark_crawled(&mut self, blog_id: BlogId) -> Result<()> {
        self.write(move |db| {
            let now = db.now()?;
            db.execute(
                "UPDATE blogs SET crawled_at = ?2 WHERE id = ?1",
                args![blog_id, now],
            )?;
            Ok(())
        })
    }

    /// Errors of a blog's jobs in a row (0 after a success).
    ///
    /// # Errors
    /// The database failed, or there is no blog `blog_id`.
    pub fn errors_in_a_row(&self, blog_id: BlogId) -> Result<u32> {
        self.read(move |db| {
            db.query_one(
                "SELECT errors_in_a_row FROM blogs WHERE id = ?1",
                args![blog_id],
            )?
            .count(0)
        })
    }

    /// Times of a blog's latest activity, newest first, at most `n`: publication times of posts
    /// and of their comments. Scheduling reads the posting and commenting frequency off them.
    ///
    /// # Errors
    /// The database failed, or a stored time is corrupt.
    pub fn activity(&self, blog_id: BlogId, n: usize) -> Result<Vec<DateTime<Utc>>> {
        self.read(move |db| {
            let times = db.query_map(
                "SELECT t FROM (
                   SELECT published AS t FROM posts WHERE blog_id = ?1 AND published IS NOT NULL
                   UNION ALL
                   SELECT c.published FROM comments c JOIN posts p ON p.url = c.post_url
                     WHERE p.blog_id = ?1 AND c.published IS NOT NULL) AS activity
                 ORDER BY t DESC LIMIT ?2",
                args![blog_id, n],
                |r| r.time(0),
            )?;
            Ok(times.into_iter().flatten().collect())
        })
    }

    /// Counts for one blog: posts archived, fetches logged, frontier URLs failed and queued.
    ///
    /// # Errors
    /// The database failed.
    pub fn counts(&self, blog_id: BlogId) -> Result<BlogCounts> {
        self.read(move |db| {
            let r = db.query_one(
                "SELECT (SELECT COUNT(*) FROM posts WHERE blog_id = ?1),
                        (SELECT COUNT(*) FROM fetch_log WHERE blog_id = ?1),
                        (SELECT COUNT(*) FROM frontier WHERE blog_id = ?1 AND state = ?2),
                        (SELECT COUNT(*) FROM frontier WHERE blog_id = ?1 AND state = ?3)",
                args![blog_id, PageState::Failed, PageState::Queued],
            )?;
            let n = |i: usize| -> Result<u64> { Ok(r.get::<i64>(i)?.max(0) as u64) };
            Ok(BlogCounts {
                posts: n(0)?,
                fetches: n(1)?,
                errors: n(2)?,
                queued: n(3)?,
            })
        })
    }
}
