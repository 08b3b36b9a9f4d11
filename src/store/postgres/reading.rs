//! What the reader asks of the archive, on PostgreSQL: a blog's posts a page at a time (by
//! month, author or tag), its months, authors and tags, full-text search over posts and
//! comments (the `search` table of schema version 2), and the captures of a URL for Memento.
//! Same names, arguments and meaning as `store::reading`.
//!
//! Search differs from SQLite's in its ranking function only: `ts_rank` with the same column
//! weights as FTS5's BM25 (title 8, author 2, text 1, in proportion), over the same window of
//! the most recently archived matches, the rest newest first. A typed word holding
//! punctuation (`l'été`) must match each of its parts, not the parts as a phrase.

use super::{local_time, time, PgStore};
use crate::fetch::Response;
use crate::store::{ts, Capture, Hit, HitComment, PostFilter, PostSummary, SearchQuery};
use anyhow::{Context, Result};
use chrono::{DateTime, NaiveDate, Utc};

/// The `to_tsquery` text for what a user typed: every run of letters and digits must occur,
/// lower-cased; a word ending in `*` makes its last run a prefix. Only letters, digits, `&` and
/// `:*` reach PostgreSQL, so nothing typed is query syntax. `None` when nothing is left.
pub(crate) fn ts_query(text: &str) -> Option<String> {
    let mut terms = Vec::new();
    for word in text.split_whitespace().take(32) {
        let (word, prefix) = match word.strip_suffix('*') {
            Some(w) => (w, true),
            None => (word, false),
        };
        let runs: Vec<String> = word
            .split(|c: char| !c.is_alphanumeric())
            .filter(|r| !r.is_empty())
            .map(str::to_lowercase)
            .collect();
        let last = runs.len().saturating_sub(1);
        for (i, run) in runs.into_iter().enumerate() {
            terms.push(if prefix && i == last {
                format!("{run}:*")
            } else {
                run
            });
        }
    }
    (!terms.is_empty()).then(|| terms.join(" & "))
}

/// The query, as SQL, from parameter `$1`.
const QUERY: &str = "to_tsquery('simple', unaccent($1::TEXT))";

use crate::store::sql::NOT_RENDERED;

fn capture_row(r: &postgres::Row) -> Result<Capture> {
    Ok(Capture {
        id: r.get(0),
        url: r.get(1),
        status: u16::try_from(r.get::<_, i64>(2)).context("stored status out of range")?,
        fetched_at: time(r, 3)?.context("capture without fetched_at")?,
    })
}

impl PgStore {
    /// A page of a blog's posts, newest first (undated ones last), and how many match
    /// `filter` in all (`Store::post_page`).
    ///
    /// # Errors
    /// The server failed.
    pub fn post_page(
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
        let (author, tag) = (filter.author.clone(), filter.tag.clone());
        let (limit, offset) = (i64::from(limit), i64::from(offset));
        self.call(move |c| {
            const WHERE: &str = "p.blog_id = $1
                  AND ($2::TEXT IS NULL OR (p.published >= $2 AND p.published < $3::TEXT))
                  AND ($4::TEXT IS NULL OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(p.authors::jsonb) a(v) WHERE a.v = $4))
                  AND ($5::TEXT IS NULL OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(p.tags::jsonb) t(v) WHERE t.v = $5))";
            let total: i64 = c
                .query_one(
                    &format!("SELECT COUNT(*) FROM posts p WHERE {WHERE}"),
                    &[&blog_id, &from, &until, &author, &tag],
                )?
                .get(0);
            let posts = c
                .query(
                    &format!(
                        "SELECT p.url, p.title, p.authors, p.published, p.version, p.gone_at,
                                (SELECT COUNT(*) FROM comments c WHERE c.post_url = p.url)
                         FROM (SELECT p.url FROM posts p WHERE {WHERE}
                               ORDER BY p.published DESC NULLS LAST, p.url DESC LIMIT $6 OFFSET $7) page
                         JOIN posts p ON p.url = page.url
                         ORDER BY p.published DESC NULLS LAST, p.url DESC"
                    ),
                    &[&blog_id, &from, &until, &author, &tag, &limit, &offset],
                )?
                .iter()
                .map(|r| {
                    Ok(PostSummary {
                        url: r.get(0),
                        title: r.get(1),
                        authors: serde_json::from_str(r.get(2)).unwrap_or_default(),
                        published: local_time(r, 3)?,
                        version: super::count(r.get(4)),
                        gone_at: time(r, 5)?,
                        comments: r.get::<_, i64>(6) as u64,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Ok((posts, total as u64))
        })
    }

    /// The months a blog posted in, newest first: (`"YYYY-MM"` in the blog's offset, posts).
    ///
    /// # Errors
    /// The server failed.
    pub fn post_months(&self, blog_id: i64) -> Result<Vec<(String, u64)>> {
        self.counted(
            "SELECT substr(published, 1, 7) AS m, COUNT(*) FROM posts
             WHERE blog_id = $1 AND published IS NOT NULL GROUP BY m ORDER BY m DESC",
            blog_id,
        )
    }

    /// A blog's authors with their post counts, most posts first.
    ///
    /// # Errors
    /// The server failed.
    pub fn post_authors(&self, blog_id: i64) -> Result<Vec<(String, u64)>> {
        self.counted(
            "SELECT a.v, COUNT(*) AS n FROM posts p, jsonb_array_elements_text(p.authors::jsonb) a(v)
             WHERE p.blog_id = $1 GROUP BY a.v ORDER BY n DESC, a.v",
            blog_id,
        )
    }

    /// A blog's categories and tags with their post counts, most posts first.
    ///
    /// # Errors
    /// The server failed.
    pub fn post_tags(&self, blog_id: i64) -> Result<Vec<(String, u64)>> {
        self.counted(
            "SELECT t.v, COUNT(*) AS n FROM posts p, jsonb_array_elements_text(p.tags::jsonb) t(v)
             WHERE p.blog_id = $1 GROUP BY t.v ORDER BY n DESC, t.v",
            blog_id,
        )
    }

    /// `(name, count)` rows of `sql` for one blog (`$1`).
    fn counted(&self, sql: &'static str, blog_id: i64) -> Result<Vec<(String, u64)>> {
        self.call(move |c| {
            Ok(c.query(sql, &[&blog_id])?
                .iter()
                .map(|r| (r.get(0), r.get::<_, i64>(1) as u64))
                .collect())
        })
    }

    /// How many rows (posts and comments) hold every word of `text` (no filter).
    ///
    /// # Errors
    /// The server failed.
    pub fn search_matches(&self, text: &str) -> Result<u64> {
        let Some(q) = ts_query(text) else {
            return Ok(0);
        };
        self.call(move |c| {
            Ok(c.query_one(
                &format!("SELECT COUNT(*) FROM search WHERE doc @@ {QUERY}"),
                &[&q],
            )?
            .get::<_, i64>(0) as u64)
        })
    }

    /// Full-text search over titles, articles, comments and author names, best first over the
    /// most recently archived `q.rank_window` matches, older ones after them, newest first; at
    /// most `q.limit` hits from `q.offset` (`Store::search`).
    ///
    /// # Errors
    /// The server failed.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<Hit>> {
        let Some(query) = ts_query(&q.text) else {
            return Ok(Vec::new());
        };
        let day = |d: Option<NaiveDate>| d.map(|d| d.format("%Y-%m-%d").to_string());
        let filtered = q.blog.is_some() || q.author.is_some() || q.from.is_some() || q.to.is_some();
        let (blog, author, from, to) = (q.blog, q.author.clone(), day(q.from), day(q.to));
        let (limit, offset) = (i64::from(q.limit), i64::from(q.offset));
        let window = i64::from(q.rank_window.max(1) - 1);
        self.call(move |c| {
            let hits = format!(
                "WITH floor(f) AS (SELECT COALESCE(
                     (SELECT row_id FROM search WHERE doc @@ {QUERY} ORDER BY row_id DESC LIMIT 1 OFFSET $8), -1)),
                 hits(r, band, score) AS (
                     SELECT row_id, 0, -ts_rank('{{0.125, 0, 0.25, 1}}', doc, {QUERY})::float8 FROM search
                     WHERE doc @@ {QUERY} AND row_id >= (SELECT f FROM floor)
                     UNION ALL
                     SELECT row_id, 1, -row_id::float8 FROM search
                     WHERE doc @@ {QUERY} AND row_id < (SELECT f FROM floor))"
            );
            let sql = if filtered {
                format!(
                    "{hits}
                     SELECT h.r FROM hits h
                     LEFT JOIN comments c ON h.r % 2 = 1 AND c.id = (h.r - 1) / 2
                     JOIN posts p ON p.id = (CASE WHEN h.r % 2 = 0 THEN h.r / 2
                                             ELSE (SELECT id FROM posts WHERE url = c.post_url) END)
                     WHERE ($2::BIGINT IS NULL OR p.blog_id = $2)
                       AND ($3::TEXT IS NULL
                            OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(p.authors::jsonb) a(v) WHERE lower(a.v) = lower($3))
                            OR lower(c.author) = lower($3))
                       AND ($4::TEXT IS NULL OR p.published::timestamptz >= ($4::date)::timestamp AT TIME ZONE 'UTC')
                       AND ($5::TEXT IS NULL OR p.published::timestamptz < ($5::date + 1)::timestamp AT TIME ZONE 'UTC')
                     ORDER BY h.band, h.score, h.r
                     LIMIT $6 OFFSET $7"
                )
            } else {
                format!(
                    "{hits}
                     SELECT r FROM hits
                     WHERE ($2::BIGINT IS NULL) AND ($3::TEXT IS NULL) AND ($4::TEXT IS NULL) AND ($5::TEXT IS NULL)
                     ORDER BY band, score, r
                     LIMIT $6 OFFSET $7"
                )
            };
            let rows: Vec<i64> = c
                .query(
                    &sql,
                    &[&query, &blog, &author, &from, &to, &limit, &offset, &window],
                )?
                .iter()
                .map(|r| r.get(0))
                .collect();
            let hit = c.prepare(&format!(
                "SELECT p.url, p.title, b.home_url, p.published,
                        ts_headline('simple', COALESCE(s.body, s.title, ''), {QUERY},
                                    'StartSel=' || chr(1) || ', StopSel=' || chr(2)
                                    || ', MaxWords=24, MinWords=12, MaxFragments=1, FragmentDelimiter=…'),
                        c.key, c.author
                 FROM search s
                 LEFT JOIN comments c ON s.row_id % 2 = 1 AND c.id = (s.row_id - 1) / 2
                 JOIN posts p ON p.id = (CASE WHEN s.row_id % 2 = 0 THEN s.row_id / 2
                                         ELSE (SELECT id FROM posts WHERE url = c.post_url) END)
                 JOIN blogs b ON b.id = p.blog_id
                 WHERE s.row_id = $2"
            ))?;
            let mut out = Vec::with_capacity(rows.len());
            for row_id in rows {
                if let Some(r) = c.query_opt(&hit, &[&query, &row_id])? {
                    let key: Option<String> = r.get(5);
                    out.push(Hit {
                        url: r.get(0),
                        title: r.get(1),
                        blog: r.get(2),
                        published: local_time(&r, 3)?,
                        marked: r.get(4),
                        comment: key.map(|id| HitComment {
                            id,
                            author: r.get(6),
                        }),
                    });
                }
            }
            Ok(out)
        })
    }

    /// Every capture of `url` (any blog), oldest first: the Memento TimeMap.
    ///
    /// # Errors
    /// The server failed.
    pub fn captures_of(&self, url: &str) -> Result<Vec<Capture>> {
        let url = url.to_string();
        self.call(move |c| {
            c.query(
                &format!(
                    "SELECT id, url, status, fetched_at FROM responses
                     WHERE url = $1 AND {NOT_RENDERED} ORDER BY fetched_at, id LIMIT 10000"
                ),
                &[&url],
            )?
            .iter()
            .map(capture_row)
            .collect()
        })
    }

    /// The capture of `url` nearest to `at` (the latest one on a tie), if any: the Memento
    /// TimeGate's choice.
    ///
    /// # Errors
    /// The server failed.
    pub fn capture_near(&self, url: &str, at: DateTime<Utc>) -> Result<Option<Capture>> {
        let (url, at) = (url.to_string(), ts(at));
        self.call(move |c| {
            c.query_opt(
                &format!(
                    "SELECT id, url, status, fetched_at FROM responses
                     WHERE url = $1 AND {NOT_RENDERED}
                     ORDER BY abs(extract(epoch FROM fetched_at::timestamptz - $2::TEXT::timestamptz)),
                              fetched_at DESC, id DESC
                     LIMIT 1"
                ),
                &[&url, &at],
            )?
            .as_ref()
            .map(capture_row)
            .transpose()
        })
    }

    /// One stored response in full, by row id.
    ///
    /// # Errors
    /// The server failed, or the body did not inflate.
    pub fn capture_response(&self, id: i64) -> Result<Option<Response>> {
        self.call(move |c| {
            c.query_opt(
                &format!(
                    "SELECT {} FROM responses WHERE id = $1",
                    crate::store::responses::response_columns()
                ),
                &[&id],
            )?
            .as_ref()
            .map(|r| {
                crate::store::db::pg_row(r)
                    .and_then(|r| crate::store::responses::response_row(&r, 0))
            })
            .transpose()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::ts_query;

    #[test]
    fn any_characters_make_a_safe_tsquery() {
        assert_eq!(ts_query("  "), None);
        assert_eq!(ts_query("\"*) ( ^ & | !"), None);
        assert_eq!(ts_query("\"*) OR NEAR("), Some("or & near".into()));
        assert_eq!(ts_query("night train*"), Some("night & train:*".into()));
        assert_eq!(ts_query("L'Été x:*y"), Some("l & été & x & y".into()));
    }
}
