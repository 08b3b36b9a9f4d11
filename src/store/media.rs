//! Each post's page requisites and media (`post_media`): which URL, what it is, the response
//! that holds it (bodies stored once by SHA-256 in `blobs`) or why it is not kept. Written
//! once for both back ends over [`super::db::Db`].

use super::db::{args, marks, Db, Dialect, Value, ROWS_PER_STATEMENT};
use super::sql::BODY;
use super::ResponseKind;
use super::{BlogId, Media, ResponseId, Store};
use crate::core::requisites::Kind;
use crate::store::MediaState;
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

/// One line of `post_media` to write.
#[derive(Debug, Clone)]
pub struct NewMedia {
    /// Absolute URL.
    pub url: String,
    /// What it is.
    pub kind: Kind,
    /// The response holding it, when stored.
    pub response_id: Option<ResponseId>,
    /// Stored, failed or skipped.
    pub state: MediaState,
    /// Why not stored.
    pub reason: Option<String>,
}

/// A stored response found for a URL ([`Store::response_for`], [`Store::responses_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseStatus {
    /// The response.
    pub id: ResponseId,
    /// Its HTTP status.
    pub status: u16,
}

/// A post whose media are still to capture, with what capturing them reads, fetched for a
/// batch of posts in one statement ([`Store::media_pending`]).
#[derive(Debug, Clone)]
pub struct PendingMedia {
    /// The post's URL.
    pub post_url: String,
    /// The response its post was extracted from (a rendering for rendered blogs).
    pub response_id: ResponseId,
    /// That response's body; `None` when it is gone from the archive.
    pub body: Option<Vec<u8>>,
    /// The post URL's latest response as served (`kind` raw), when the archive holds one:
    /// another response than `response_id` when the post was extracted from a rendering.
    pub raw_id: Option<ResponseId>,
    /// Its feed entry's enclosures (podcast episodes), empty without an entry.
    pub enclosures: Vec<crate::core::feed::Enclosure>,
}

/// The media recorded for a post, in page order (the order they were written: SQLite's
/// `rowid`, PostgreSQL's `seq`).
pub(super) fn media_of(db: &mut dyn Db, post_url: &str) -> Result<Vec<Media>> {
    let order = match db.dialect() {
        Dialect::Sqlite => "m.rowid",
        Dialect::Postgres => "m.seq",
    };
    db.query_map(
        &format!(
            "SELECT m.url, m.kind, m.state, m.reason, r.status, r.sha256, r.headers, r.body_len
             FROM post_media m LEFT JOIN responses r ON r.id = m.response_id
             WHERE m.post_url = ?1 ORDER BY {order}"
        ),
        args![post_url],
        |r| {
            let headers: Option<String> = r.get(6)?;
            Ok(Media {
                url: r.get(0)?,
                kind: r.word(1)?,
                state: r.word(2)?,
                reason: r.get(3)?,
                status: r.get::<Option<i64>>(4)?.and_then(|s| u16::try_from(s).ok()),
                sha256: r.get(5)?,
                mime: headers.and_then(|h| {
                    let h: Vec<(String, String)> = serde_json::from_str(&h).ok()?;
                    crate::fetch::mime_type(&h)
                }),
                bytes: r.get(7)?,
            })
        },
    )
}

impl Store {
    /// The latest raw response of a blog for `url` (requested or reached by redirect), so a
    /// requisite shared by many posts is fetched once.
    ///
    /// # Errors
    /// The database failed.
    pub fn response_for(&self, blog_id: BlogId, url: &str) -> Result<Option<ResponseStatus>> {
        let url = url.to_string();
        self.read(move |db| {
            db.query_opt(
                "SELECT id, status FROM responses WHERE blog_id = ?1 AND (url = ?2 OR final_url = ?2)
                       AND kind = ?3
                     ORDER BY id DESC LIMIT 1",
                args![blog_id, url.as_str(), ResponseKind::Raw],
            )?
            .map(|r| {
                Ok(ResponseStatus {
                    id: r.get(0)?,
                    status: u16::try_from(r.get::<i64>(1)?)
                        .context("stored status out of range")?,
                })
            })
            .transpose()
        })
    }

    /// [`Store::response_for`] of each of `urls` at once (one statement per 200 URLs, where
    /// a post's requisites would each cost one), by URL, for those the archive holds.
    ///
    /// # Errors
    /// The database failed.
    pub fn responses_for(
        &self,
        blog_id: BlogId,
        urls: &[String],
    ) -> Result<std::collections::HashMap<String, ResponseStatus>> {
        let urls = urls.to_vec();
        self.read(move |db| {
            let mut found = std::collections::HashMap::new();
            for chunk in urls.chunks(ROWS_PER_STATEMENT) {
                let marks = marks(3, chunk.len());
                let mut params = vec![Value::from(blog_id), Value::from(ResponseKind::Raw)];
                params.extend(chunk.iter().map(|u| Value::from(u.as_str())));
                // Newest first: the first row naming a URL is its latest response.
                let rows = db.query(
                    &format!(
                        "SELECT id, status, url, final_url FROM responses
                         WHERE blog_id = ?1 AND kind = ?2 AND (url IN ({marks}) OR final_url IN ({marks}))
                         ORDER BY id DESC"
                    ),
                    &params,
                )?;
                for r in rows {
                    let (id, status): (ResponseId, i64) = (r.get(0)?, r.get(1)?);
                    let status = u16::try_from(status).context("stored status out of range")?;
                    for u in [r.get::<String>(2)?, r.get::<String>(3)?] {
                        if chunk.contains(&u) {
                            found.entry(u).or_insert(ResponseStatus { id, status });
                        }
                    }
                }
            }
            Ok(found)
        })
    }

    /// The body of a stored response.
    ///
    /// # Errors
    /// The database failed or the body did not inflate.
    pub fn response_body(&self, id: ResponseId) -> Result<Option<Vec<u8>>> {
        self.read(move |db| {
            db.query_opt(
                &format!("SELECT {BODY} FROM responses WHERE id = ?1"),
                args![id],
            )?
            .map(|r| super::decompress(&r.get::<Vec<u8>>(0)?))
            .transpose()
        })
    }

    /// Bytes of distinct bodies the blog's posts' media hold (the `[media] max_blog_mb`
    /// budget counts these).
    ///
    /// # Errors
    /// The database failed.
    pub fn media_bytes(&self, blog_id: BlogId) -> Result<u64> {
        self.read(move |db| {
            db.count(
                "SELECT CAST(SUM(bytes) AS BIGINT) FROM blobs WHERE sha256 IN (
                   SELECT r.sha256 FROM post_media m JOIN posts p ON p.url = m.post_url
                   JOIN responses r ON r.id = m.response_id WHERE p.blog_id = ?1)",
                args![blog_id],
            )
        })
    }

    /// Posts of a blog whose media are still to capture (never captured, their page archived
    /// again since, or some of their media deferred by a run before the one `run_started`), at
    /// most `limit`, oldest archived first, each with its page's
    /// body, its latest raw response and its feed entry's enclosures: one statement for the
    /// whole batch, where reading them post by post took four.
    ///
    /// # Errors
    /// The database failed, or a body did not inflate.
    pub fn media_pending(
        &self,
        blog_id: BlogId,
        limit: usize,
        run_started: DateTime<Utc>,
    ) -> Result<Vec<PendingMedia>> {
        self.read(move |db| {
            db.query_map(
                &format!(
                    "SELECT p.url, p.response_id, (SELECT {BODY} FROM responses WHERE id = p.response_id),
                       (SELECT x.id FROM responses x WHERE x.blog_id = p.blog_id
                          AND (x.url = p.url OR x.final_url = p.url) AND x.kind = ?3
                        ORDER BY x.id DESC LIMIT 1),
                       e.enclosures
                     FROM posts p LEFT JOIN feed_entries e ON e.blog_id = p.blog_id AND e.url = p.url
                     WHERE p.blog_id = ?1 AND p.response_id IS NOT NULL
                       AND (p.media_at IS NULL OR p.media_at < p.fetched_at
                            OR (p.media_at < ?4 AND EXISTS (SELECT 1 FROM post_media m
                                  WHERE m.post_url = p.url AND m.state = ?5)))
                     ORDER BY p.fetched_at LIMIT ?2"
                ),
                args![blog_id, limit, ResponseKind::Raw, run_started, MediaState::Deferred],
                |r| {
                    Ok(PendingMedia {
                        post_url: r.get(0)?,
                        response_id: r.get(1)?,
                        body: r
                            .get::<Option<Vec<u8>>>(2)?
                            .map(|b| super::decompress(&b))
                            .transpose()?,
                        raw_id: r.get(3)?,
                        enclosures: super::blogs::parse_enclosures(r.get(4)?),
                    })
                },
            )
        })
    }

    /// Replaces the media recorded for a post and marks them captured now, in one transaction
    /// ([`Store::set_posts_media`] of one post).
    ///
    /// # Errors
    /// The database failed.
    pub fn set_post_media(&mut self, post_url: &str, media: &[NewMedia]) -> Result<()> {
        self.set_posts_media(&[(post_url.to_string(), media.to_vec())])
    }

    /// Replaces the media recorded for each of `posts` (post URL, its media in page order) and
    /// marks them captured now, all in one transaction. A URL listed twice for one post keeps
    /// its last entry, in that entry's place.
    ///
    /// # Errors
    /// The database failed.
    pub fn set_posts_media(&mut self, posts: &[(String, Vec<NewMedia>)]) -> Result<()> {
        let mut rows: Vec<(String, NewMedia)> = Vec::new();
        for (post_url, media) in posts {
            let last: std::collections::HashMap<&str, usize> = media
                .iter()
                .enumerate()
                .map(|(i, m)| (m.url.as_str(), i))
                .collect();
            rows.extend(
                media
                    .iter()
                    .enumerate()
                    .filter(|(i, m)| last[m.url.as_str()] == *i)
                    .map(|(_, m)| (post_url.clone(), m.clone())),
            );
        }
        let urls: Vec<String> = posts.iter().map(|(u, _)| u.clone()).collect();
        self.write(move |db| {
            let now = db.now()?;
            for chunk in urls.chunks(ROWS_PER_STATEMENT) {
                let marks = marks(1, chunk.len());
                let params: Vec<Value> = chunk.iter().map(|u| Value::from(u.as_str())).collect();
                db.execute(
                    &format!("DELETE FROM post_media WHERE post_url IN ({marks})"),
                    &params,
                )?;
            }
            for chunk in rows.chunks(ROWS_PER_STATEMENT) {
                let values: Vec<String> = (0..chunk.len())
                    .map(|i| {
                        let m = 1 + i * 6;
                        format!(
                            "(?{m}, ?{}, ?{}, ?{}, ?{}, ?{})",
                            m + 1,
                            m + 2,
                            m + 3,
                            m + 4,
                            m + 5
                        )
                    })
                    .collect();
                let mut params = Vec::with_capacity(chunk.len() * 6);
                for (post_url, m) in chunk {
                    params.extend([
                        Value::from(post_url.as_str()),
                        Value::from(m.url.as_str()),
                        Value::from(m.kind.as_str()),
                        Value::from(m.response_id),
                        Value::from(m.state.as_str()),
                        Value::from(m.reason.clone()),
                    ]);
                }
                db.execute(
                    &format!(
                        "INSERT INTO post_media (post_url, url, kind, response_id, state, reason) VALUES {}",
                        values.join(", ")
                    ),
                    &params,
                )?;
            }
            for chunk in urls.chunks(ROWS_PER_STATEMENT) {
                let marks = marks(2, chunk.len());
                let mut params = vec![Value::from(now)];
                params.extend(chunk.iter().map(|u| Value::from(u.as_str())));
                db.execute(
                    &format!("UPDATE posts SET media_at = ?1 WHERE url IN ({marks})"),
                    &params,
                )?;
            }
            Ok(())
        })
    }

    /// The media recorded for a post, in page order.
    ///
    /// # Errors
    /// The database failed.
    pub fn post_media(&self, post_url: &str) -> Result<Vec<Media>> {
        let post_url = post_url.to_string();
        self.read(move |db| media_of(db, &post_url))
    }
}
