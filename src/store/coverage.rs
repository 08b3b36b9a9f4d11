//! Coverage: what the archive holds of a blog against what is known to exist — posts known
//! (by source) vs archived vs missing with the reason, comments declared vs archived, the
//! oldest and newest post, when the blog was last verified. Read for `archive coverage`,
//! `archive status` and the daemon's status line.

use super::{local_col, utc_col, Coverage, MissingComments, MissingPost, PageState, Source, Store};
use anyhow::{Context, Result};
use rusqlite::params;

impl Store {
    /// The coverage of one blog.
    pub fn coverage(&self, blog_id: i64) -> Result<Coverage> {
        let blog = self.blog(blog_id)?.context("no such blog")?;
        let count = |sql: &str| -> Result<u64> {
            Ok(self
                .conn
                .query_row(sql, [blog_id], |r| r.get::<_, i64>(0))? as u64)
        };
        let posts_archived = count("SELECT COUNT(*) FROM posts WHERE blog_id = ?1")?;
        let posts_gone =
            count("SELECT COUNT(*) FROM posts WHERE blog_id = ?1 AND gone_at IS NOT NULL")?;
        // Known: post URLs in the frontier, and archived posts the frontier never saw.
        let posts_known = count(
            "SELECT COUNT(*) FROM (
               SELECT url FROM frontier WHERE blog_id = ?1 AND is_post = 1
               UNION SELECT url FROM posts WHERE blog_id = ?1)",
        )?;
        let mut posts_known_by = std::collections::BTreeMap::new();
        for s in Source::ALL {
            let n: i64 = self.conn.query_row(
                "SELECT COUNT(*) FROM frontier WHERE blog_id = ?1 AND is_post = 1 AND (sources & ?2) != 0",
                params![blog_id, s.bit()],
                |r| r.get(0),
            )?;
            if n > 0 {
                posts_known_by.insert(*s, n as u64);
            }
        }
        let posts_missing = self.rows(
            "SELECT f.url, f.state, f.error, f.last_attempt FROM frontier f
             WHERE f.blog_id = ?1 AND f.is_post = 1
               AND NOT EXISTS (SELECT 1 FROM posts p WHERE p.url = f.url)
             ORDER BY f.seq",
            [blog_id],
            |r| {
                Ok(MissingPost {
                    url: r.get(0)?,
                    state: r.get(1)?,
                    error: r.get(2)?,
                    last_attempt: utc_col(r, 3)?,
                })
            },
        )?;
        // Done pages that yielded no post are not missing posts: the rules found no article
        // (a page the pattern took for a post).
        let posts_missing: Vec<MissingPost> = posts_missing
            .into_iter()
            .filter(|m| m.state != PageState::Done)
            .collect();
        let declared = self.rows(
            "SELECT p.url, p.comments_declared, (SELECT COUNT(*) FROM comments c WHERE c.post_url = p.url)
             FROM posts p WHERE p.blog_id = ?1 AND p.comments_declared IS NOT NULL AND p.gone_at IS NULL
             ORDER BY p.url",
            [blog_id],
            |r| {
                Ok(MissingComments {
                    url: r.get(0)?,
                    declared: r.get::<_, i64>(1)? as u64,
                    archived: r.get::<_, i64>(2)? as u64,
                })
            },
        )?;
        let comments_declared = declared.iter().map(|d| d.declared).sum();
        let comments_archived = count(
            "SELECT COUNT(*) FROM comments c JOIN posts p ON p.url = c.post_url WHERE p.blog_id = ?1",
        )?;
        let comments_missing = declared
            .into_iter()
            .filter(|d| d.archived < d.declared)
            .collect();
        let (oldest_post, newest_post) = self.conn.query_row(
            "SELECT MIN(published), MAX(published) FROM posts WHERE blog_id = ?1",
            [blog_id],
            |r| Ok((local_col(r, 0)?, local_col(r, 1)?)),
        )?;
        Ok(Coverage {
            blog: blog.home_url,
            posts_known,
            posts_known_by,
            posts_archived,
            posts_gone,
            posts_missing,
            comments_declared,
            comments_archived,
            comments_missing,
            oldest_post,
            newest_post,
            verified_at: blog.last_update_at.or(blog.crawled_at),
        })
    }
}
