//! What the reader (`archive serve`) asks of the archive: a blog's posts a page at a time (by
//! month, author or tag), the months, authors and tags to browse by, and the captures of a
//! URL for Memento (RFC 7089). Full-text search is [`super::full_text`]'s.
//!
//! Written once for both back ends, over [`super::db::Db`]; only how each dialect reads a
//! JSON list and a time differs.

use super::db::{args, Dialect, Row};
use super::{parse_list, BlogId, ResponseId, Store};
use crate::fetch::Response;
use anyhow::{Context, Result};
use chrono::{DateTime, FixedOffset, Utc};

/// Which of a blog's posts to list: all, or those of one month, author or tag.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostFilter {
    /// A month, `(year, month 1–12)`, in the blog's own offset.
    pub month: Option<(i32, u32)>,
    /// An author name, exactly as archived.
    pub author: Option<String>,
    /// A category or tag, exactly as archived.
    pub tag: Option<String>,
}

/// One line of a post list.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PostSummary {
    /// Permalink.
    pub url: String,
    /// Title.
    pub title: Option<String>,
    /// Author names.
    pub authors: Vec<String>,
    /// Publication time, with the blog's offset.
    #[serde(serialize_with = "super::records::rfc3339::local")]
    pub published: Option<DateTime<FixedOffset>>,
    /// Comments archived.
    pub comments: u64,
    /// 1, or more when the blog changed the post (earlier texts kept).
    pub version: u32,
    /// When the blog deleted it (it stays archived).
    #[serde(serialize_with = "super::records::rfc3339::utc_opt")]
    pub gone_at: Option<DateTime<Utc>>,
}

/// A page of a blog's posts ([`Store::post_page`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PostPage {
    /// The page's posts, newest first.
    pub posts: Vec<PostSummary>,
    /// Posts matching the filter in all pages.
    pub total: u64,
}

/// The posts next to one in its blog's list, newest first ([`Store::neighbours`]): each its
/// permalink and title.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Neighbours {
    /// The next newer post.
    pub newer: Option<Neighbour>,
    /// The next older post.
    pub older: Option<Neighbour>,
}

/// One post next to another in its blog's list ([`Neighbours`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbour {
    /// Its permalink.
    pub url: String,
    /// Its title, when it has one.
    pub title: Option<String>,
}

/// A value a blog's posts are browsed by (a month, an author, a tag) and how many posts have
/// it ([`Store::post_months`], [`Store::post_authors`], [`Store::post_tags`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    /// The month (`"YYYY-MM"`, in the blog's offset), the author name or the tag, as archived.
    pub value: String,
    /// Posts with it.
    pub posts: u64,
}

/// One capture of a URL (a stored response), as Memento lists it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Capture {
    /// The response.
    pub id: ResponseId,
    /// The URL requested.
    pub url: String,
    /// HTTP status received.
    pub status: u16,
    /// When it was fetched.
    #[serde(serialize_with = "super::records::rfc3339::utc")]
    pub fetched_at: DateTime<Utc>,
}

/// One address a blog's crawls captured: how often and when (pywb's URL query, issue 45).
#[derive(Debug, Clone, PartialEq)]
pub struct CapturedPage {
    /// The URL requested.
    pub url: String,
    /// Captures of it.
    pub captures: u64,
    /// The first capture's time.
    pub first: DateTime<Utc>,
    /// The last capture's time.
    pub last: DateTime<Utc>,
}

/// One page of a blog's captured addresses, and how many it has in all.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CapturedPages {
    /// In address order.
    pub pages: Vec<CapturedPage>,
    /// Distinct addresses captured in all.
    pub total: u64,
}

use super::ResponseKind;

/// A table of the elements of the JSON list of text in column `list`, as `alias`, its element
/// in column `value`.
pub(super) fn json_elements(dialect: Dialect, list: &str, alias: &str) -> String {
    match dialect {
        Dialect::Sqlite => format!("json_each({list}) AS {alias}"),
        Dialect::Postgres => {
            format!("jsonb_array_elements_text(CAST({list} AS jsonb)) AS {alias}(value)")
        }
    }
}

/// The stored time `expr` (RFC 3339 text, any offset) as a number that orders as time does
/// (days on SQLite, seconds on PostgreSQL: only differences and order are read).
pub(super) fn instant(dialect: Dialect, expr: &str) -> String {
    match dialect {
        Dialect::Sqlite => format!("julianday({expr})"),
        Dialect::Postgres => format!("extract(epoch FROM CAST({expr} AS TIMESTAMPTZ))"),
    }
}

impl Store {
    /// A page of a blog's posts, newest first (undated ones last), and how many match `filter`
    /// in all. Reads the covering index `posts_listing`, then only the page's rows.
    ///
    /// # Errors
    /// The database failed.
    pub fn post_page(
        &self,
        blog_id: BlogId,
        filter: &PostFilter,
        limit: u32,
        offset: u32,
    ) -> Result<PostPage> {
        // A month is the published times (text, in the blog's offset) from "YYYY-MM" up to
        // the next month's.
        let (from, until) = match filter.month {
            Some((y, m)) => {
                let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
                (
                    Some(format!("{y:04}-{m:02}")),
                    Some(format!("{ny:04}-{nm:02}")),
                )
            }
            None => (None, None),
        };
        let (author, tag) = (filter.author.clone(), filter.tag.clone());
        self.read(move |db| {
            let d = db.dialect();
            let (authors, tags) = (
                json_elements(d, "p.authors", "a"),
                json_elements(d, "p.tags", "t"),
            );
            let filter = format!(
                "p.blog_id = ?1
                 AND (CAST(?2 AS TEXT) IS NULL OR (p.published >= ?2 AND p.published < ?3))
                 AND (CAST(?4 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM {authors} WHERE a.value = ?4))
                 AND (CAST(?5 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM {tags} WHERE t.value = ?5))"
            );
            let total = db.count(
                &format!("SELECT COUNT(*) FROM posts p WHERE {filter}"),
                args![blog_id, &from, &until, &author, &tag],
            )?;
            let posts = db.query_map(
                &format!(
                    "SELECT p.url, p.title, p.authors, p.published, p.version, p.gone_at,
                            (SELECT COUNT(*) FROM comments c WHERE c.post_url = p.url)
                     FROM (SELECT p.url FROM posts p WHERE {filter}
                           ORDER BY p.published DESC NULLS LAST, p.url DESC LIMIT ?6 OFFSET ?7) page
                     JOIN posts p ON p.url = page.url
                     ORDER BY p.published DESC NULLS LAST, p.url DESC"
                ),
                args![blog_id, &from, &until, &author, &tag, limit, offset],
                |r| {
                    Ok(PostSummary {
                        url: r.get(0)?,
                        title: r.get(1)?,
                        authors: parse_list(r.get(2)?),
                        published: r.local(3)?,
                        version: r.count(4)?,
                        gone_at: r.time(5)?,
                        comments: r.count(6)?.into(),
                    })
                },
            )?;
            Ok(PostPage { posts, total })
        })
    }

    /// Whether the archive holds any comment on a post of blog `blog_id`: a blog without one
    /// had its comments never captured (or has none), which the reader says instead of "0
    /// comments".
    ///
    /// # Errors
    /// The database failed.
    pub fn has_comments(&self, blog_id: BlogId) -> Result<bool> {
        self.read(move |db| {
            Ok(db
                .query_opt(
                    "SELECT 1 FROM posts p WHERE p.blog_id = ?1
                       AND EXISTS (SELECT 1 FROM comments c WHERE c.post_url = p.url) LIMIT 1",
                    args![blog_id],
                )?
                .is_some())
        })
    }

    /// The posts just newer and just older than `url` in its blog's list, in the order
    /// [`Store::post_page`] lists them (published, newest first, undated last; the URL, last
    /// first, between posts of one time). Each is one seek in `posts_listing` from the post's
    /// own key, so a post page costs the same on a blog of ten posts or ten thousand.
    ///
    /// # Errors
    /// The database failed.
    pub fn neighbours(&self, blog_id: BlogId, url: &str) -> Result<Neighbours> {
        let url = url.to_owned();
        self.read(move |db| {
            let undated = db.query_opt(
                "SELECT CASE WHEN published IS NULL THEN 1 ELSE 0 END FROM posts
                 WHERE blog_id = ?1 AND url = ?2",
                args![blog_id, &url],
            )?;
            let Some(undated) = undated else {
                return Ok(Neighbours::default());
            };
            let undated = undated.get::<i64>(0)? == 1;
            // The first post of the blog meeting `after` (a condition on `o`, beside the post
            // itself as `me`) in `order`.
            let mut first = |after: &str, order: &str| -> Result<Option<Neighbour>> {
                db.query_map(
                    &format!(
                        "WITH me AS (SELECT published AS p, url AS u FROM posts
                                     WHERE blog_id = ?1 AND url = ?2)
                         SELECT o.url, o.title FROM me, posts o
                         WHERE o.blog_id = ?1 AND {after} ORDER BY {order} LIMIT 1"
                    ),
                    args![blog_id, &url],
                    |r| {
                        Ok(Neighbour {
                            url: r.get(0)?,
                            title: r.get(1)?,
                        })
                    },
                )
                .map(|mut rows| rows.pop())
            };
            const UP: &str = "o.published ASC, o.url ASC";
            const DOWN: &str = "o.published DESC, o.url DESC";
            let n = if undated {
                Neighbours {
                    newer: match first("o.published IS NULL AND o.url > me.u", "o.url ASC")? {
                        Some(n) => Some(n),
                        // The oldest dated post comes just before the undated ones.
                        None => first("o.published IS NOT NULL", UP)?,
                    },
                    older: first("o.published IS NULL AND o.url < me.u", "o.url DESC")?,
                }
            } else {
                Neighbours {
                    newer: first("(o.published, o.url) > (me.p, me.u)", UP)?,
                    older: match first("(o.published, o.url) < (me.p, me.u)", DOWN)? {
                        Some(n) => Some(n),
                        // The newest undated post comes just after the dated ones.
                        None => first("o.published IS NULL", "o.url DESC")?,
                    },
                }
            };
            Ok(n)
        })
    }

    /// The months a blog posted in (`"YYYY-MM"` in the blog's offset), newest first, with
    /// their post counts.
    ///
    /// # Errors
    /// The database failed.
    pub fn post_months(&self, blog_id: BlogId) -> Result<Vec<Count>> {
        self.read(move |db| {
            db.query_map(
                "SELECT substr(published, 1, 7) AS m, COUNT(*) FROM posts
                 WHERE blog_id = ?1 AND published IS NOT NULL GROUP BY m ORDER BY m DESC",
                args![blog_id],
                name_count,
            )
        })
    }

    /// A blog's authors with their post counts, most posts first.
    ///
    /// # Errors
    /// The database failed.
    pub fn post_authors(&self, blog_id: BlogId) -> Result<Vec<Count>> {
        self.list_counts(blog_id, "authors")
    }

    /// A blog's categories and tags with their post counts, most posts first.
    ///
    /// # Errors
    /// The database failed.
    pub fn post_tags(&self, blog_id: BlogId) -> Result<Vec<Count>> {
        self.list_counts(blog_id, "tags")
    }

    /// Each name in the JSON lists of column `column` of a blog's posts, with the number of
    /// posts naming it, most first, then by name.
    fn list_counts(&self, blog_id: BlogId, column: &'static str) -> Result<Vec<Count>> {
        self.read(move |db| {
            let each = json_elements(db.dialect(), &format!("p.{column}"), "e");
            db.query_map(
                &format!(
                    "SELECT e.value, COUNT(*) AS n FROM posts p, {each}
                     WHERE p.blog_id = ?1 GROUP BY e.value ORDER BY n DESC, e.value"
                ),
                args![blog_id],
                name_count,
            )
        })
    }

    /// Every capture of `url` (any blog), oldest first: the Memento TimeMap.
    ///
    /// # Errors
    /// The database failed.
    pub fn captures_of(&self, url: &str) -> Result<Vec<Capture>> {
        let url = url.to_owned();
        self.read(move |db| {
            db.query_map(
                "SELECT id, url, status, fetched_at FROM responses
                     WHERE url = ?1 AND kind != ?2 ORDER BY fetched_at, id LIMIT 10000",
                args![&url, ResponseKind::Rendered],
                capture_row,
            )
        })
    }

    /// The addresses blog `blog_id`'s crawls captured (pages, feeds, media, comment data; not
    /// renderings), in address order, `limit` from `offset`, each with its number of captures
    /// and their first and last times; and how many there are in all.
    ///
    /// # Errors
    /// The database failed.
    pub fn captured_pages(
        &self,
        blog_id: BlogId,
        limit: u32,
        offset: u32,
    ) -> Result<CapturedPages> {
        self.read(move |db| {
            let total = db.count(
                "SELECT COUNT(DISTINCT url) FROM responses WHERE blog_id = ?1 AND kind != ?2",
                args![blog_id, ResponseKind::Rendered],
            )?;
            let pages = db.query_map(
                "SELECT url, COUNT(*), MIN(fetched_at), MAX(fetched_at) FROM responses
                 WHERE blog_id = ?1 AND kind != ?2
                 GROUP BY url ORDER BY url LIMIT ?3 OFFSET ?4",
                args![
                    blog_id,
                    ResponseKind::Rendered,
                    i64::from(limit),
                    i64::from(offset)
                ],
                |r| {
                    Ok(CapturedPage {
                        url: r.get(0)?,
                        captures: u64::try_from(r.get::<i64>(1)?).unwrap_or(0),
                        first: r.time_req(2)?,
                        last: r.time_req(3)?,
                    })
                },
            )?;
            Ok(CapturedPages { pages, total })
        })
    }

    /// The capture of `url` nearest to `at` (the latest one on a tie), if any: the Memento
    /// TimeGate's choice.
    ///
    /// # Errors
    /// The database failed.
    pub fn capture_near(&self, url: &str, at: DateTime<Utc>) -> Result<Option<Capture>> {
        let url = url.to_owned();
        self.read(move |db| {
            let (fetched, at_) = (
                instant(db.dialect(), "fetched_at"),
                instant(db.dialect(), "CAST(?2 AS TEXT)"),
            );
            db.query_opt(
                &format!(
                    "SELECT id, url, status, fetched_at FROM responses
                     WHERE url = ?1 AND kind != ?3
                     ORDER BY abs({fetched} - {at_}), fetched_at DESC, id DESC
                     LIMIT 1"
                ),
                args![&url, at, ResponseKind::Rendered],
            )?
            .as_ref()
            .map(capture_row)
            .transpose()
        })
    }

    /// One stored response in full, by row id.
    ///
    /// # Errors
    /// The database failed, or the body did not inflate.
    pub fn capture_response(&self, id: ResponseId) -> Result<Option<Response>> {
        let sql = format!(
            "SELECT {} FROM responses WHERE id = ?1",
            super::responses::response_columns()
        );
        self.read(move |db| {
            db.query_opt(&sql, args![id])?
                .map(|r| super::responses::response_row(&r, 0))
                .transpose()
        })
    }
}

/// A [`Count`] from a row of `value, posts`.
fn name_count(r: &Row) -> Result<Count> {
    Ok(Count {
        value: r.get(0)?,
        posts: r.count(1)?.into(),
    })
}

/// A [`Capture`] from a row of `id, url, status, fetched_at`.
fn capture_row(r: &Row) -> Result<Capture> {
    Ok(Capture {
        id: r.get(0)?,
        url: r.get(1)?,
        status: u16::try_from(r.get::<i64>(2)?).context("stored status out of range")?,
        fetched_at: r.time_req(3)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_follow_the_listing_dated_then_undated() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            Store::open(&super::super::DatabaseSettings::at(dir.path().join("a.db"))).unwrap();
        // Eight posts: two on one day (ordered by URL), three on others, three undated.
        store
            .sqlite_connection()
            .execute_batch(
                "INSERT INTO blogs (id, home_url, feed_url, feed_kind, added_at)
                   VALUES (1, 'http://b/', 'http://b/feed', 'rss', '2026-01-01T00:00:00Z');
                 INSERT INTO posts (blog_id, url, title, authors, published, content_html,
                                    content_text, fetched_at, extracted_at, tags)
                 VALUES (1, 'http://b/a', 'A', '[]', '2026-03-01T00:00:00+00:00', '', '', '', '', '[]'),
                        (1, 'http://b/b', 'B', '[]', '2026-03-01T00:00:00+00:00', '', '', '', '', '[]'),
                        (1, 'http://b/c', NULL, '[]', '2026-01-01T00:00:00+00:00', '', '', '', '', '[]'),
                        (1, 'http://b/d', 'D', '[]', '2026-05-01T00:00:00+00:00', '', '', '', '', '[]'),
                        (1, 'http://b/e', 'E', '[]', '2025-12-01T00:00:00+00:00', '', '', '', '', '[]'),
                        (1, 'http://b/u1', 'U1', '[]', NULL, '', '', '', '', '[]'),
                        (1, 'http://b/u2', 'U2', '[]', NULL, '', '', '', '', '[]'),
                        (1, 'http://b/u3', 'U3', '[]', NULL, '', '', '', '', '[]');",
            )
            .unwrap();
        let blog = BlogId::new(1);
        let list: Vec<String> = store
            .post_page(blog, &PostFilter::default(), 100, 0)
            .unwrap()
            .posts
            .into_iter()
            .map(|p| p.url)
            .collect();
        assert_eq!(list.len(), 8);
        assert_eq!(list[0], "http://b/d");
        assert_eq!(list[7], "http://b/u1");
        for (i, url) in list.iter().enumerate() {
            let n = store.neighbours(blog, url).unwrap();
            let newer = i.checked_sub(1).map(|j| list[j].clone());
            let older = list.get(i + 1).cloned();
            assert_eq!(
                (n.newer.map(|p| p.url), n.older.map(|p| p.url)),
                (newer, older),
                "{url}"
            );
        }
        let none = store.neighbours(blog, "http://b/missing").unwrap();
        assert_eq!(none, Neighbours::default());
    }
}
