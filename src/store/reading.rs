//! What the reader (`archive serve`) asks of the archive: a blog's posts a page at a time (by
//! month, author or tag), the months, authors and tags to browse by, full-text search over
//! posts and comments (FTS5 table `search`, kept by triggers, migration 14), and the captures
//! of a URL for Memento (RFC 7089).

use super::{local_col, parse_list, utc_req};
use crate::fetch::Response;
use anyhow::Result;
use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
use rusqlite::{params, OptionalExtension};

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

/// A full-text search: the words, and filters.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    /// What the user typed, any characters: each whitespace-separated word must occur (in the
    /// title, the article, a comment or an author name); a word ending in `*` is a prefix.
    pub text: String,
    /// Only this blog.
    pub blog: Option<i64>,
    /// Only posts by this author, or comments by them (case-insensitive, whole name).
    pub author: Option<String>,
    /// Only posts published on or after this day (UTC).
    pub from: Option<NaiveDate>,
    /// Only posts published on or before this day (UTC).
    pub to: Option<NaiveDate>,
    /// Hits per page.
    pub limit: u32,
    /// Hits skipped (paging).
    pub offset: u32,
    /// BM25 ranks the most recently archived this many matches of the words (before filters); older matches
    /// follow, newest first (`[serve] search_rank_window`). Ranking reads each match's
    /// statistics, so this bounds the work of a word found nearly everywhere.
    pub rank_window: u32,
}

/// One search hit: a post, or a comment of it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Hit {
    /// The post's permalink.
    pub url: String,
    /// The post's title.
    pub title: Option<String>,
    /// The blog's home page.
    pub blog: String,
    /// The post's publication time.
    #[serde(serialize_with = "super::records::rfc3339::local")]
    pub published: Option<DateTime<FixedOffset>>,
    /// Text around the matches, plain text with each match between `\u{1}` and `\u{2}`.
    #[serde(skip)]
    pub marked: String,
    /// When the hit is a comment: its id within the post (`Comment::id`) and author.
    pub comment: Option<HitComment>,
}

/// The comment a search hit is in.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HitComment {
    /// Its id within the post.
    pub id: String,
    /// Its author.
    pub author: Option<String>,
}

/// One capture of a URL (a stored response), as Memento lists it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Capture {
    /// Row id of the response.
    pub id: i64,
    /// The URL requested.
    pub url: String,
    /// HTTP status received.
    pub status: u16,
    /// When it was fetched.
    #[serde(serialize_with = "super::records::rfc3339::utc")]
    pub fetched_at: DateTime<Utc>,
}

use super::sql::NOT_RENDERED;

/// The FTS5 query for what a user typed: each word quoted (quotes doubled), so no character
/// is FTS5 syntax; a trailing `*` makes a word a prefix. `None` when nothing is left.
pub fn fts_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split_whitespace()
        .filter_map(|w| {
            let (w, prefix) = match w.strip_suffix('*') {
                Some(w) => (w, true),
                None => (w, false),
            };
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            (!w.is_empty()).then(|| {
                let quoted = format!("\"{}\"", w.replace('"', "\"\""));
                if prefix {
                    quoted + "*"
                } else {
                    quoted
                }
            })
        })
        .take(32)
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

impl super::SqliteStore {
    pub(super) fn post_page(
        &self,
        blog_id: i64,
        filter: &PostFilter,
        limit: u32,
        offset: u32,
    ) -> Result<(Vec<PostSummary>, u64)> {
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
        const WHERE: &str = "p.blog_id = ?1
              AND (?2 IS NULL OR (p.published >= ?2 AND p.published < ?3))
              AND (?4 IS NULL OR EXISTS (SELECT 1 FROM json_each(p.authors) WHERE value = ?4))
              AND (?5 IS NULL OR EXISTS (SELECT 1 FROM json_each(p.tags) WHERE value = ?5))";
        let total: i64 = self.conn.query_row(
            &format!("SELECT COUNT(*) FROM posts p WHERE {WHERE}"),
            params![blog_id, from, until, filter.author, filter.tag],
            |r| r.get(0),
        )?;
        let posts = self.rows(
            &format!(
                "SELECT p.url, p.title, p.authors, p.published, p.version, p.gone_at,
                        (SELECT COUNT(*) FROM comments c WHERE c.post_url = p.url)
                 FROM (SELECT p.url FROM posts p WHERE {WHERE}
                       ORDER BY p.published DESC, p.url DESC LIMIT ?6 OFFSET ?7) page
                 JOIN posts p ON p.url = page.url
                 ORDER BY p.published DESC, p.url DESC"
            ),
            params![
                blog_id,
                from,
                until,
                filter.author,
                filter.tag,
                limit,
                offset
            ],
            |r| {
                Ok(PostSummary {
                    url: r.get(0)?,
                    title: r.get(1)?,
                    authors: parse_list(r.get(2)?),
                    published: local_col(r, 3)?,
                    version: r.get(4)?,
                    gone_at: super::utc_col(r, 5)?,
                    comments: r.get::<_, i64>(6)? as u64,
                })
            },
        )?;
        Ok((posts, total as u64))
    }

    pub(super) fn post_months(&self, blog_id: i64) -> Result<Vec<(String, u64)>> {
        self.rows(
            "SELECT substr(published, 1, 7) AS m, COUNT(*) FROM posts
             WHERE blog_id = ?1 AND published IS NOT NULL GROUP BY m ORDER BY m DESC",
            [blog_id],
            |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)),
        )
    }

    pub(super) fn post_authors(&self, blog_id: i64) -> Result<Vec<(String, u64)>> {
        self.rows(
            "SELECT a.value, COUNT(*) AS n FROM posts p, json_each(p.authors) a
             WHERE p.blog_id = ?1 GROUP BY a.value ORDER BY n DESC, a.value",
            [blog_id],
            |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)),
        )
    }

    pub(super) fn post_tags(&self, blog_id: i64) -> Result<Vec<(String, u64)>> {
        self.rows(
            "SELECT t.value, COUNT(*) AS n FROM posts p, json_each(p.tags) t
             WHERE p.blog_id = ?1 GROUP BY t.value ORDER BY n DESC, t.value",
            [blog_id],
            |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)),
        )
    }

    pub(super) fn search_matches(&self, text: &str) -> Result<u64> {
        let Some(fts) = fts_query(text) else {
            return Ok(0);
        };
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM search WHERE search MATCH ?1",
            [fts],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    pub(super) fn search(&self, q: &SearchQuery) -> Result<Vec<Hit>> {
        let Some(fts) = fts_query(&q.text) else {
            return Ok(Vec::new());
        };
        let day = |d: Option<NaiveDate>| d.map(|d| d.format("%Y-%m-%d").to_string());
        let filtered = q.blog.is_some() || q.author.is_some() || q.from.is_some() || q.to.is_some();
        // The newest `rank_window` matches (by row: the most recently archived) are ranked; the
        // rest follow, newest first.
        let hits = "WITH floor(f) AS (SELECT COALESCE(
                       (SELECT rowid FROM search WHERE search MATCH ?1 ORDER BY rowid DESC LIMIT 1 OFFSET ?8), -1)),
                   hits(r, band, score) AS (
                       SELECT rowid, 0, bm25(search, 8.0, 1.0, 2.0) FROM search
                       WHERE search MATCH ?1 AND rowid >= (SELECT f FROM floor)
                       UNION ALL
                       SELECT rowid, 1, -rowid FROM search
                       WHERE search MATCH ?1 AND rowid < (SELECT f FROM floor))";
        let sql = if filtered {
            // A post's row is 2 × posts.id, a comment's 2 × comments.id + 1.
            format!(
                "{hits}
                 SELECT h.r FROM hits h
                 LEFT JOIN comments c ON h.r % 2 = 1 AND c.id = (h.r - 1) / 2
                 JOIN posts p ON p.id = (CASE WHEN h.r % 2 = 0 THEN h.r / 2
                                         ELSE (SELECT id FROM posts WHERE url = c.post_url) END)
                 WHERE (?2 IS NULL OR p.blog_id = ?2)
                   AND (?3 IS NULL
                        OR EXISTS (SELECT 1 FROM json_each(p.authors) WHERE lower(value) = lower(?3))
                        OR lower(c.author) = lower(?3))
                   AND (?4 IS NULL OR julianday(p.published) >= julianday(?4))
                   AND (?5 IS NULL OR julianday(p.published) < julianday(?5, '+1 day'))
                 ORDER BY h.band, h.score, h.r
                 LIMIT ?6 OFFSET ?7"
            )
        } else {
            format!(
                "{hits}
                 SELECT r FROM hits ORDER BY band, score, r
                 LIMIT ?6 OFFSET ?7"
            )
        };
        let rows: Vec<i64> = self.rows(
            &sql,
            params![
                fts,
                q.blog,
                q.author,
                day(q.from),
                day(q.to),
                q.limit,
                q.offset,
                q.rank_window.max(1) - 1
            ],
            |r| r.get(0),
        )?;
        let mut hit = self.conn.prepare_cached(
            "SELECT p.url, p.title, b.home_url, p.published,
                    snippet(search, -1, char(1), char(2), '…', 24), c.key, c.author
             FROM search s
             LEFT JOIN comments c ON s.rowid % 2 = 1 AND c.id = (s.rowid - 1) / 2
             JOIN posts p ON p.id = (CASE WHEN s.rowid % 2 = 0 THEN s.rowid / 2
                                     ELSE (SELECT id FROM posts WHERE url = c.post_url) END)
             JOIN blogs b ON b.id = p.blog_id
             WHERE search MATCH ?1 AND s.rowid = ?2",
        )?;
        let mut out = Vec::with_capacity(rows.len());
        for rowid in rows {
            let found = hit
                .query_row(params![fts, rowid], |r| {
                    let key: Option<String> = r.get(5)?;
                    Ok(Hit {
                        url: r.get(0)?,
                        title: r.get(1)?,
                        blog: r.get(2)?,
                        published: local_col(r, 3)?,
                        marked: r.get(4)?,
                        comment: key.map(|id| HitComment {
                            id,
                            author: r.get(6).ok().flatten(),
                        }),
                    })
                })
                .optional()?;
            out.extend(found);
        }
        Ok(out)
    }

    pub(super) fn captures_of(&self, url: &str) -> Result<Vec<Capture>> {
        self.rows(
            &format!(
                "SELECT id, url, status, fetched_at FROM responses
                 WHERE url = ?1 AND {NOT_RENDERED} ORDER BY fetched_at, id LIMIT 10000"
            ),
            [url],
            capture_row,
        )
    }

    pub(super) fn capture_near(&self, url: &str, at: DateTime<Utc>) -> Result<Option<Capture>> {
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT id, url, status, fetched_at FROM responses
                     WHERE url = ?1 AND {NOT_RENDERED}
                     ORDER BY abs(julianday(fetched_at) - julianday(?2)), fetched_at DESC, id DESC
                     LIMIT 1"
                ),
                params![url, super::ts(at)],
                capture_row,
            )
            .optional()?)
    }

    pub(super) fn capture_response(&self, id: i64) -> Result<Option<Response>> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {} FROM responses WHERE id = ?1",
            super::responses::response_columns()
        ))?;
        let mut rows = st.query([id])?;
        match rows.next()? {
            Some(r) => Ok(Some(super::responses::response_row(
                &super::db::sqlite_row(r)?,
                0,
            )?)),
            None => Ok(None),
        }
    }
}

fn capture_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Capture> {
    Ok(Capture {
        id: r.get(0)?,
        url: r.get(1)?,
        status: r.get(2)?,
        fetched_at: utc_req(r, 3)?,
    })
}

#[cfg(test)]
mod tests {
    use super::{fts_query, SearchQuery};
    use crate::store::Store;

    /// Five posts holding "lantern" (post 1 in its title, so BM25 puts it first when it is
    /// ranked) and a comment on post 2 holding it, by Bea (search rows 2, 4, 6, 8, 10 for the
    /// posts, 3 for the comment).
    fn archive(dir: &std::path::Path) -> Store {
        let store = Store::open(&crate::store::DatabaseSettings::at(dir.join("a.db"))).unwrap();
        store
            .sqlite_connection()
            .execute_batch(
                "INSERT INTO blogs (id, home_url, feed_url, feed_kind, added_at)
                   VALUES (1, 'http://b/', 'http://b/feed', 'rss', '2026-01-01T00:00:00Z');
                 INSERT INTO posts (id, blog_id, url, title, authors, published, content_html,
                                    content_text, fetched_at, extracted_at)
                 SELECT n, 1, 'http://b/' || n, CASE n WHEN 1 THEN 'Lantern' ELSE 'Post ' || n END,
                        '[\"Ann\"]', '2026-0' || n || '-01T00:00:00+00:00', '',
                        'a long text about a lantern and many other words to weigh it down', '', ''
                 FROM (SELECT 1 AS n UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5);
                 INSERT INTO comments (post_url, key, author, content_html, content_text, source, position)
                   VALUES ('http://b/2', 'c1', 'Bea', '', 'my lantern too', 'page', 0);",
            )
            .unwrap();
        store
    }

    fn urls(store: &Store, q: &SearchQuery) -> Vec<(String, bool)> {
        store
            .search(q)
            .unwrap()
            .into_iter()
            .map(|h| (h.url, h.comment.is_some()))
            .collect()
    }

    #[test]
    fn search_ranks_a_window_of_the_newest_matches_then_the_rest_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = archive(dir.path());
        let q = |rank_window| SearchQuery {
            text: "lantern".into(),
            limit: 10,
            rank_window,
            ..SearchQuery::default()
        };
        assert_eq!(store.search_matches("lantern").unwrap(), 6);
        // Every match ranked: the title hit first.
        let all = urls(&store, &q(100));
        assert_eq!(all.len(), 6);
        assert_eq!(all[0], ("http://b/1".into(), false));
        // A window of 2: posts 5 and 4 (the newest rows) ranked, then post 3, post 2, the
        // comment on post 2 (archived after post 2), post 1.
        let windowed = urls(&store, &q(2));
        let rest = [("3", false), ("2", false), ("2", true), ("1", false)]
            .map(|(n, comment)| (format!("http://b/{n}"), comment));
        assert_eq!(windowed[2..], rest);
        // Paging over the two bands loses and repeats nothing.
        let mut paged = Vec::new();
        for offset in 0..6 {
            paged.extend(urls(
                &store,
                &SearchQuery {
                    limit: 1,
                    offset,
                    ..q(2)
                },
            ));
        }
        assert_eq!(paged, urls(&store, &q(2)));
        // Filters: the comment's author; a date range.
        let by_bea = SearchQuery {
            author: Some("bea".into()),
            ..q(2)
        };
        assert_eq!(urls(&store, &by_bea), [("http://b/2".to_string(), true)]);
        let spring = SearchQuery {
            from: chrono::NaiveDate::from_ymd_opt(2026, 3, 1),
            to: chrono::NaiveDate::from_ymd_opt(2026, 4, 1),
            ..q(1)
        };
        assert_eq!(
            urls(&store, &spring),
            [
                ("http://b/4".to_string(), false),
                ("http://b/3".to_string(), false)
            ]
        );
    }

    #[test]
    fn any_characters_make_a_safe_query() {
        assert_eq!(fts_query("  "), None);
        assert_eq!(fts_query("\"*) ( ^"), None);
        // FTS5 operators become plain words.
        assert_eq!(fts_query("\"*) OR NEAR("), Some("\"OR\" \"NEAR\"".into()));
        assert_eq!(
            fts_query("night train*"),
            Some("\"night\" \"train\"*".into())
        );
        assert_eq!(
            fts_query("l'été \"x\"y"),
            Some("\"l'été\" \"x\"\"y\"".into())
        );
    }
}
