//! Blogs: the blog rows, their feed entries (the training data), their learned rules and post
//! URL pattern, the render decision, crawl milestones, and the activity scheduling reads.

use super::{
    json_list, local_col, now, parse_list, ts, utc_col, utc_req, Blog, BlogCounts, RenderMode,
    Renders, StoredRule,
};
use crate::core::feed::{Enclosure, FeedEntry, FeedKind};
use crate::core::post_url::PostUrlPattern;
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use rusqlite::{params, OptionalExtension, Transaction};

use super::sql::BLOG_COLUMNS;

fn blog_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Blog> {
    let pattern: Option<String> = r.get(7)?;
    Ok(Blog {
        id: r.get(0)?,
        home_url: r.get(1)?,
        feed_url: r.get(2)?,
        title: r.get(3)?,
        feed_kind: r.get(4)?,
        crawl_started_at: utc_col(r, 5)?,
        crawled_at: utc_col(r, 6)?,
        post_pattern: pattern
            .map(|p| serde_json::from_str::<PostUrlPattern>(&p))
            .transpose()
            .map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(
                    7,
                    rusqlite::types::Type::Text,
                    format!("stored post URL pattern is corrupt: {e}").into(),
                )
            })?,
        start_url: r.get(8)?,
        last_update_at: utc_col(r, 9)?,
        next_update_at: utc_col(r, 10)?,
        errors_in_a_row: r.get(11)?,
        last_error: r.get(12)?,
        render: r.get(13)?,
        renders: r.get(14)?,
        render_reason: r.get(15)?,
        sitemaps_read_at: utc_col(r, 16)?,
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

fn put_entries(tx: &Transaction<'_>, blog_id: i64, entries: &[FeedEntry]) -> Result<()> {
    let mut st = tx.prepare(
        "INSERT INTO feed_entries (blog_id, url, title, authors, published, content_html, summary_html, seen_at, updated, comments_feed, comment_count, enclosures, authors_inherited)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
         ON CONFLICT (blog_id, url) DO UPDATE SET title = excluded.title, authors = excluded.authors,
           published = excluded.published, content_html = excluded.content_html,
           summary_html = excluded.summary_html, seen_at = excluded.seen_at, updated = excluded.updated,
           comments_feed = excluded.comments_feed, comment_count = excluded.comment_count,
           enclosures = excluded.enclosures, authors_inherited = excluded.authors_inherited",
    )?;
    let at = now();
    for e in entries {
        st.execute(params![
            blog_id,
            e.url,
            e.title,
            json_list(&e.authors),
            e.published.map(|d| d.to_rfc3339()),
            e.content_html,
            e.summary_html,
            at,
            e.updated.map(|d| d.to_rfc3339()),
            e.comments_feed,
            e.comment_count,
            enclosures_col(&e.enclosures)?,
            e.authors_inherited
        ])?;
    }
    Ok(())
}

impl super::SqliteStore {
    pub(super) fn blogs(&self) -> Result<Vec<Blog>> {
        self.rows(
            &format!("SELECT {BLOG_COLUMNS} FROM blogs ORDER BY id"),
            [],
            blog_from_row,
        )
    }

    pub(super) fn blog(&self, id: i64) -> Result<Option<Blog>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {BLOG_COLUMNS} FROM blogs WHERE id = ?1"),
                [id],
                blog_from_row,
            )
            .optional()?)
    }

    pub(super) fn find_blog(&self, url: &str) -> Result<Option<Blog>> {
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT {BLOG_COLUMNS} FROM blogs WHERE feed_url = ?1 OR home_url = ?1 ORDER BY id LIMIT 1"
                ),
                [url],
                blog_from_row,
            )
            .optional()?)
    }

    pub(super) fn insert_blog(
        &mut self,
        home_url: &str,
        feed_url: &str,
        title: Option<&str>,
        feed_kind: FeedKind,
        entries: &[FeedEntry],
    ) -> Result<Blog> {
        let id = self.write(|tx| {
            tx.execute(
                "INSERT INTO blogs (home_url, feed_url, title, feed_kind, added_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![home_url, feed_url, title, feed_kind, now()],
            )?;
            let id = tx.last_insert_rowid();
            put_entries(tx, id, entries)?;
            Ok(id)
        })?;
        self.blog(id)?.context("blog vanished after insert")
    }

    pub(super) fn save_entries(&mut self, blog_id: i64, entries: &[FeedEntry]) -> Result<()> {
        self.write(|tx| put_entries(tx, blog_id, entries))
    }

    pub(super) fn entries(&self, blog_id: i64) -> Result<Vec<FeedEntry>> {
        self.rows(
            "SELECT url, title, authors, published, content_html, summary_html, updated, comments_feed, comment_count, enclosures, authors_inherited FROM feed_entries WHERE blog_id = ?1 ORDER BY rowid",
            [blog_id],
            |r| {
            Ok(FeedEntry {
                url: r.get(0)?,
                title: r.get(1)?,
                authors: parse_list(r.get(2)?),
                published: local_col(r, 3)?,
                content_html: r.get(4)?,
                summary_html: r.get(5)?,
                updated: local_col(r, 6)?,
                comments_feed: r.get(7)?,
                comment_count: r.get(8)?,
                enclosures: parse_enclosures(r.get(9)?),
                authors_inherited: r.get(10)?,
            })
        },
        )
    }

    pub(super) fn enclosures_of(&self, blog_id: i64, post_url: &str) -> Result<Vec<Enclosure>> {
        Ok(self
            .conn
            .query_row(
                "SELECT enclosures FROM feed_entries WHERE blog_id = ?1 AND url = ?2",
                params![blog_id, post_url],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()?
            .map(parse_enclosures)
            .unwrap_or_default())
    }

    pub(super) fn save_rules(
        &mut self,
        blog_id: i64,
        rules: &[StoredRule],
        post_pattern: &PostUrlPattern,
    ) -> Result<()> {
        let pattern = serde_json::to_string(post_pattern)?;
        self.write(|tx| {
            tx.execute("UPDATE rules SET active = 0 WHERE blog_id = ?1", [blog_id])?;
            for r in rules {
                tx.execute(
                    "INSERT INTO rules (blog_id, field, xpath, score, votes, samples, learned_at, active, format) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8)",
                    params![blog_id, r.field, r.xpath, r.score, r.votes, r.samples, ts(r.learned_at), r.format],
                )?;
            }
            tx.execute(
                "UPDATE blogs SET post_pattern = ?2 WHERE id = ?1",
                params![blog_id, pattern],
            )?;
            Ok(())
        })
    }

    pub(super) fn rules(&self, blog_id: i64) -> Result<Vec<StoredRule>> {
        self.rows(
            "SELECT field, xpath, score, votes, samples, learned_at, format FROM rules WHERE blog_id = ?1 AND active = 1 ORDER BY field",
            [blog_id],
            |r| {
            Ok(StoredRule {
                field: r.get(0)?,
                xpath: r.get(1)?,
                score: r.get(2)?,
                votes: r.get(3)?,
                samples: r.get(4)?,
                learned_at: utc_req(r, 5)?,
                format: r.get(6)?,
            })
        },
        )
    }

    pub(super) fn set_render_mode(&mut self, blog_id: i64, mode: RenderMode) -> Result<()> {
        self.conn.execute(
            "UPDATE blogs SET render = ?2, renders = CASE WHEN render = ?2 THEN renders ELSE NULL END,
               render_reason = CASE WHEN render = ?2 THEN render_reason ELSE NULL END WHERE id = ?1",
            params![blog_id, mode],
        )?;
        Ok(())
    }

    pub(super) fn set_render_decision(
        &mut self,
        blog_id: i64,
        renders: Renders,
        reason: &str,
    ) -> Result<()> {
        self.conn.execute(
            "UPDATE blogs SET renders = ?2, render_reason = ?3 WHERE id = ?1",
            params![blog_id, renders, reason],
        )?;
        Ok(())
    }

    pub(super) fn set_start_url(&mut self, blog_id: i64, url: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE blogs SET start_url = ?2 WHERE id = ?1",
            params![blog_id, url],
        )?;
        Ok(())
    }

    pub(super) fn mark_crawl_started(&mut self, blog_id: i64) -> Result<()> {
        self.conn.execute(
            "UPDATE blogs SET crawl_started_at = COALESCE(crawl_started_at, ?2) WHERE id = ?1",
            params![blog_id, now()],
        )?;
        Ok(())
    }

    pub(super) fn mark_sitemaps_read(&mut self, blog_id: i64, at: DateTime<Utc>) -> Result<()> {
        self.conn.execute(
            "UPDATE blogs SET sitemaps_read_at = ?2 WHERE id = ?1",
            params![blog_id, ts(at)],
        )?;
        Ok(())
    }

    pub(super) fn mark_crawled(&mut self, blog_id: i64) -> Result<()> {
        self.conn.execute(
            "UPDATE blogs SET crawled_at = ?2 WHERE id = ?1",
            params![blog_id, now()],
        )?;
        Ok(())
    }

    pub(super) fn errors_in_a_row(&self, blog_id: i64) -> Result<u32> {
        Ok(self.conn.query_row(
            "SELECT errors_in_a_row FROM blogs WHERE id = ?1",
            [blog_id],
            |r| r.get(0),
        )?)
    }

    pub(super) fn activity(&self, blog_id: i64, n: usize) -> Result<Vec<DateTime<Utc>>> {
        let times = self.rows(
            "SELECT t FROM (
               SELECT published AS t FROM posts WHERE blog_id = ?1 AND published IS NOT NULL
               UNION ALL
               SELECT c.published FROM comments c JOIN posts p ON p.url = c.post_url
                 WHERE p.blog_id = ?1 AND c.published IS NOT NULL)
             ORDER BY t DESC LIMIT ?2",
            params![blog_id, n as i64],
            |r| utc_col(r, 0),
        )?;
        Ok(times.into_iter().flatten().collect())
    }

    pub(super) fn counts(&self, blog_id: i64) -> Result<BlogCounts> {
        let one = |sql: &str| -> Result<u64> {
            Ok(self
                .conn
                .query_row(sql, [blog_id], |r| r.get::<_, i64>(0))? as u64)
        };
        Ok(BlogCounts {
            posts: one("SELECT COUNT(*) FROM posts WHERE blog_id = ?1")?,
            fetches: one("SELECT COUNT(*) FROM fetch_log WHERE blog_id = ?1")?,
            errors: one("SELECT COUNT(*) FROM frontier WHERE blog_id = ?1 AND state = 'failed'")?,
            queued: one("SELECT COUNT(*) FROM frontier WHERE blog_id = ?1 AND state = 'queued'")?,
        })
    }
}
