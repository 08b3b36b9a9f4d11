//! Coverage on PostgreSQL: posts known (by source) vs archived vs missing with the reason,
//! comments declared vs archived, oldest and newest post, last verified. Same names, arguments
//! and meaning as `store::coverage`.

use super::{local_time, time, word, PgStore};
use crate::store::{Coverage, CoverageCounts, MissingComments, MissingPost, PageState, Source};
use anyhow::{Context, Result};

impl PgStore {
    /// The counts of one blog's coverage, without the lists of what is missing.
    ///
    /// # Errors
    /// There is no blog `blog_id`, or the server failed.
    pub fn coverage_counts(&self, blog_id: i64) -> Result<CoverageCounts> {
        let blog = self.blog(blog_id)?.context("no such blog")?;
        let verified_at = blog.last_update_at.or(blog.crawled_at);
        self.call(move |c| {
            // Known: post URLs in the frontier, and archived posts the frontier never saw.
            let r = c.query_one(
                &format!("SELECT
                   (SELECT COUNT(*) FROM frontier WHERE blog_id = $1 AND is_post = 1 AND state != '{}')
                     + (SELECT COUNT(*) FROM posts p WHERE p.blog_id = $1 AND NOT EXISTS
                          (SELECT 1 FROM frontier f WHERE f.blog_id = $1 AND f.url = p.url AND f.is_post = 1)),
                   (SELECT COUNT(*) FROM posts WHERE blog_id = $1),
                   (SELECT COUNT(*) FROM posts WHERE blog_id = $1 AND gone_at IS NOT NULL),
                   (SELECT COALESCE(SUM(comments_declared), 0)::BIGINT FROM posts
                     WHERE blog_id = $1 AND gone_at IS NULL AND comments_declared IS NOT NULL),
                   (SELECT COUNT(*) FROM comments c JOIN posts p ON p.url = c.post_url WHERE p.blog_id = $1),
                   (SELECT MIN(published) FROM posts WHERE blog_id = $1),
                   (SELECT MAX(published) FROM posts WHERE blog_id = $1)",
                    PageState::NotPost
                ),
                &[&blog_id],
            )?;
            let n = |i: usize| r.get::<_, i64>(i) as u64;
            Ok(CoverageCounts {
                posts_known: n(0),
                posts_archived: n(1),
                posts_gone: n(2),
                comments_declared: n(3),
                comments_archived: n(4),
                oldest_post: local_time(&r, 5)?,
                newest_post: local_time(&r, 6)?,
                verified_at,
            })
        })
    }

    /// The coverage of one blog: the counts, posts known by source, and what is missing.
    ///
    /// # Errors
    /// There is no blog `blog_id`, or the server failed.
    pub fn coverage(&self, blog_id: i64) -> Result<Coverage> {
        let blog = self.blog(blog_id)?.context("no such blog")?;
        let counts = self.coverage_counts(blog_id)?;
        let sums = Source::ALL
            .iter()
            .map(|s| format!("SUM(((sources & {}) != 0)::int)::BIGINT", s.bit()))
            .collect::<Vec<_>>()
            .join(", ");
        let (posts_known_by, posts_missing, mut comments_missing) = self.call(move |c| {
            let r = c.query_one(
                &format!(
                    "SELECT {sums} FROM frontier WHERE blog_id = $1 AND is_post = 1 AND state != '{}'",
                    PageState::NotPost
                ),
                &[&blog_id],
            )?;
            let posts_known_by: std::collections::BTreeMap<Source, u64> = Source::ALL
                .iter()
                .enumerate()
                .filter_map(|(i, s)| {
                    r.get::<_, Option<i64>>(i)
                        .filter(|&n| n > 0)
                        .map(|n| (*s, n as u64))
                })
                .collect();
            let posts_missing = c
                .query(
                    "SELECT f.url, f.state, f.error, f.last_attempt FROM frontier f
                     WHERE f.blog_id = $1 AND f.is_post = 1
                       AND NOT EXISTS (SELECT 1 FROM posts p WHERE p.url = f.url)
                     ORDER BY f.seq",
                    &[&blog_id],
                )?
                .iter()
                .map(|r| {
                    Ok(MissingPost {
                        url: r.get(0),
                        state: word(r, 1)?,
                        error: r.get(2),
                        last_attempt: time(r, 3)?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let comments_missing = c
                .query(
                    "SELECT url, declared, archived FROM (
                       SELECT p.url, p.comments_declared AS declared,
                              (SELECT COUNT(*) FROM comments c WHERE c.post_url = p.url) AS archived
                       FROM posts p
                       WHERE p.blog_id = $1 AND p.gone_at IS NULL AND p.comments_declared > 0) AS counted
                     WHERE archived < declared",
                    &[&blog_id],
                )?
                .iter()
                .map(|r| MissingComments {
                    url: r.get(0),
                    declared: r.get::<_, i64>(1) as u64,
                    archived: r.get::<_, i64>(2) as u64,
                })
                .collect::<Vec<_>>();
            Ok((posts_known_by, posts_missing, comments_missing))
        })?;
        comments_missing.sort_by(|a, b| a.url.cmp(&b.url));
        let (posts_missing, not_posts) = Coverage::split_missing(posts_missing);
        Ok(Coverage {
            blog: blog.home_url,
            counts,
            posts_known_by,
            posts_missing,
            not_posts,
            comments_missing,
        })
    }
}
