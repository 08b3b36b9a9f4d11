//! What the reader (`archive serve`) asks of the archive: a blog's posts a page at a time (by
//! month, author or tag), the months, authors and tags to browse by, full-text search over
//! posts and comments (FTS5 table `search`, kept by triggers, migration 14), and the captures
//! of a URL for Memento (RFC 7089).
//!
//! Written once for both back ends, over [`super::db::Db`]; only the words of full-text search
//! differ (FTS5 on SQLite, a `tsvector` on PostgreSQL: see [`Fts`]), and how each dialect reads
//! a JSON list and a time.

use super::db::{args, Dialect, Row};
use super::{parse_list, BlogId, ResponseId, Store};
use crate::fetch::Response;
use anyhow::{Context, Result};
use chrono::{DateTime, FixedOffset, NaiveDate, Utc};

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
    pub newer: Option<(String, Option<String>)>,
    /// The next older post.
    pub older: Option<(String, Option<String>)>,
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

/// A full-text search: the words, and filters.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    /// What the user typed, any characters: each whitespace-separated word must occur (in the
    /// title, the article, a comment or an author name); a word ending in `*` is a prefix.
    pub text: String,
    /// Only this blog.
    pub blog: Option<BlogId>,
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

use super::ResponseKind;

/// The FTS5 query for what a user typed ([`super::search::Query`]); `None` when nothing
/// searchable is left.
pub fn fts_query(text: &str) -> Option<String> {
    super::search::Query::parse(text).map(|q| q.fts5())
}

/// What full-text search says differently on each back end: SQLite's FTS5 table `search`
/// (migration 14) and PostgreSQL's `search` table with a `tsvector` (schema version 2). The
/// statements around these fragments are written once.
///
/// The two rank alike: BM25 on SQLite, `ts_rank` on PostgreSQL with the same column weights
/// (title 8, author 2, text 1, in proportion), lower scores first. A typed word holding
/// punctuation (`l'été`) is one FTS5 phrase on SQLite and each of its parts on PostgreSQL.
struct Fts {
    /// The query text for parameter `?1` ([`super::search::Query`]).
    query: String,
    /// Condition on `search` (unaliased or as `s`): the row matches the query in `?1`.
    matches: &'static str,
    /// The column of `search` holding the row's id: 2 × posts.id, or 2 × comments.id + 1.
    row: &'static str,
    /// A matching row's score, best lowest (only in a statement reading `search` unaliased).
    rank: &'static str,
    /// Text around the matches of row `s`, each match between `\u{1}` and `\u{2}`.
    snippet: &'static str,
}

impl Fts {
    /// The fragments of `db`'s dialect for what the user typed; `None` when it holds no
    /// word. On PostgreSQL the text is folded by `unaccent` first, as the index is, and only
    /// then compiled: `unaccent` writes punctuation (`ʻ` → `'`, `⑴` → `(1)`) that would
    /// otherwise be `tsquery` syntax.
    fn new(db: &mut dyn super::db::Db, text: &str) -> Result<Option<Self>> {
        use super::search::Query;
        Ok(Some(match db.dialect() {
            Dialect::Sqlite => Fts {
                query: match Query::parse(text) {
                    Some(q) => q.fts5(),
                    None => return Ok(None),
                },
                matches: "search MATCH ?1",
                row: "rowid",
                rank: "bm25(search, 8.0, 1.0, 2.0)",
                snippet: "snippet(search, -1, char(1), char(2), '…', 24)",
            },
            Dialect::Postgres => Fts {
                query: {
                    let folded: String = db
                        .query_one("SELECT unaccent(CAST(?1 AS TEXT))", args![text])?
                        .get(0)?;
                    match Query::parse(&folded) {
                        Some(q) => q.tsquery(),
                        None => return Ok(None),
                    }
                },
                matches: "doc @@ to_tsquery('everblog', CAST(?1 AS TEXT))",
                row: "row_id",
                rank: "-ts_rank('{0.125, 0, 0.25, 1}', doc,
                                to_tsquery('everblog', CAST(?1 AS TEXT)))::float8",
                snippet: "ts_headline('everblog', COALESCE(s.body, s.title, ''),
                                      to_tsquery('everblog', CAST(?1 AS TEXT)),
                                      'StartSel=' || chr(1) || ', StopSel=' || chr(2)
                                      || ', MaxWords=24, MinWords=12, MaxFragments=1, FragmentDelimiter=…')",
            },
        }))
    }
}

/// A table of the elements of the JSON list of text in column `list`, as `alias`, its element
/// in column `value`.
fn json_elements(dialect: Dialect, list: &str, alias: &str) -> String {
    match dialect {
        Dialect::Sqlite => format!("json_each({list}) AS {alias}"),
        Dialect::Postgres => {
            format!("jsonb_array_elements_text(CAST({list} AS jsonb)) AS {alias}(value)")
        }
    }
}

/// The stored time `expr` (RFC 3339 text, any offset) as a number that orders as time does
/// (days on SQLite, seconds on PostgreSQL: only differences and order are read).
fn instant(dialect: Dialect, expr: &str) -> String {
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

    /// The posts just newer and just older than `url` in its blog's list, in the order
    /// [`Store::post_page`] lists them (published, newest first, undated last).
    ///
    /// # Errors
    /// The database failed.
    pub fn neighbours(&self, blog_id: BlogId, url: &str) -> Result<Neighbours> {
        let url = url.to_owned();
        self.read(move |db| {
            let rows = db.query_map(
                "WITH ordered AS (
                     SELECT url, title,
                            ROW_NUMBER() OVER (ORDER BY published DESC NULLS LAST, url DESC) AS n
                     FROM posts WHERE blog_id = ?1),
                 me AS (SELECT n FROM ordered WHERE url = ?2)
                 SELECT o.url, o.title, o.n - me.n FROM ordered o, me
                 WHERE o.n = me.n - 1 OR o.n = me.n + 1",
                args![blog_id, &url],
                |r| {
                    Ok((
                        r.get::<String>(0)?,
                        r.get::<Option<String>>(1)?,
                        r.get::<i64>(2)?,
                    ))
                },
            )?;
            let mut n = Neighbours::default();
            for (url, title, step) in rows {
                if step < 0 {
                    n.newer = Some((url, title));
                } else {
                    n.older = Some((url, title));
                }
            }
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

    /// How many rows (posts and comments) hold every word of `text` (no filter), counted
    /// from the index alone.
    ///
    /// # Errors
    /// The database failed.
    pub fn search_matches(&self, text: &str) -> Result<u64> {
        let text = text.to_owned();
        self.read(move |db| {
            let Some(fts) = Fts::new(db, &text)? else {
                return Ok(0);
            };
            db.count(
                &format!("SELECT COUNT(*) FROM search WHERE {}", fts.matches),
                args![fts.query],
            )
        })
    }

    /// Full-text search over titles, articles, comments and author names, best first (BM25:
    /// title × 8, author × 2, text × 1, over the most recently archived `q.rank_window` matches; older ones
    /// after them, newest first), at most `q.limit` hits from `q.offset`. A query with no
    /// word gives no hit.
    ///
    /// Two steps, so that a word found in every post stays cheap: the page's rows are chosen
    /// from the index (and, with filters, the posts' and comments' own rows, joined by id),
    /// without reading the indexed text; only then are the page's snippets made.
    ///
    /// # Errors
    /// The database failed.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<Hit>> {
        // A day's bounds as instants: from its start (UTC) to the next day's start.
        let start = |d: NaiveDate| d.and_time(chrono::NaiveTime::MIN).and_utc();
        let from = q.from.map(start);
        let before = q.to.map(|d| start(d.succ_opt().unwrap_or(d)));
        let filtered = q.blog.is_some() || q.author.is_some() || from.is_some() || before.is_some();
        let (text, blog, author) = (q.text.clone(), q.blog, q.author.clone());
        let (limit, offset, window) = (q.limit, q.offset, q.rank_window.max(1) - 1);
        self.read(move |db| {
            let d = db.dialect();
            let Some(fts) = Fts::new(db, &text)? else {
                return Ok(Vec::new());
            };
            let Fts {
                matches,
                row,
                rank,
                snippet,
                ..
            } = fts;
            // The newest `rank_window` matches (by row: the most recently archived) are
            // ranked; the rest follow, newest first.
            let hits = format!(
                "WITH floor(f) AS (SELECT COALESCE(
                     (SELECT {row} FROM search WHERE {matches} ORDER BY {row} DESC LIMIT 1 OFFSET ?2), -1)),
                 hits(r, band, score) AS (
                     SELECT {row}, 0, {rank} FROM search
                     WHERE {matches} AND {row} >= (SELECT f FROM floor)
                     UNION ALL
                     SELECT {row}, 1, -{row} FROM search
                     WHERE {matches} AND {row} < (SELECT f FROM floor))"
            );
            let rows: Vec<i64> = if filtered {
                let authors = json_elements(d, "p.authors", "a");
                let published = instant(d, "p.published");
                let (first, next) = (
                    instant(d, "CAST(?7 AS TEXT)"),
                    instant(d, "CAST(?8 AS TEXT)"),
                );
                // A post's row is 2 × posts.id, a comment's 2 × comments.id + 1.
                db.query_map(
                    &format!(
                        "{hits}
                         SELECT h.r FROM hits h
                         LEFT JOIN comments c ON h.r % 2 = 1 AND c.id = (h.r - 1) / 2
                         JOIN posts p ON p.id = (CASE WHEN h.r % 2 = 0 THEN h.r / 2
                                                 ELSE (SELECT id FROM posts WHERE url = c.post_url) END)
                         WHERE (CAST(?5 AS BIGINT) IS NULL OR p.blog_id = ?5)
                           AND (CAST(?6 AS TEXT) IS NULL
                                OR EXISTS (SELECT 1 FROM {authors} WHERE lower(a.value) = lower(?6))
                                OR lower(c.author) = lower(?6))
                           AND (CAST(?7 AS TEXT) IS NULL OR {published} >= {first})
                           AND (CAST(?8 AS TEXT) IS NULL OR {published} < {next})
                         ORDER BY h.band, h.score, h.r
                         LIMIT ?3 OFFSET ?4"
                    ),
                    args![&fts.query, window, limit, offset, blog, &author, from, before],
                    |r| r.get(0),
                )?
            } else {
                db.query_map(
                    &format!(
                        "{hits}
                         SELECT r FROM hits ORDER BY band, score, r
                         LIMIT ?3 OFFSET ?4"
                    ),
                    args![&fts.query, window, limit, offset],
                    |r| r.get(0),
                )?
            };
            let hit = format!(
                "SELECT p.url, p.title, b.home_url, p.published, {snippet}, c.key, c.author
                 FROM search s
                 LEFT JOIN comments c ON s.{row} % 2 = 1 AND c.id = (s.{row} - 1) / 2
                 JOIN posts p ON p.id = (CASE WHEN s.{row} % 2 = 0 THEN s.{row} / 2
                                         ELSE (SELECT id FROM posts WHERE url = c.post_url) END)
                 JOIN blogs b ON b.id = p.blog_id
                 WHERE {matches} AND s.{row} = ?2"
            );
            let mut out = Vec::with_capacity(rows.len());
            for id in rows {
                if let Some(r) = db.query_opt(&hit, args![&fts.query, id])? {
                    out.push(Hit {
                        url: r.get(0)?,
                        title: r.get(1)?,
                        blog: r.get(2)?,
                        published: r.local(3)?,
                        marked: r.get(4)?,
                        comment: r.get::<Option<String>>(5)?.map(|id| HitComment {
                            id,
                            author: r.get(6).ok().flatten(),
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
    fn any_characters_make_a_safe_query_and_the_grammar_holds() {
        let dir = tempfile::tempdir().unwrap();
        let store = archive(dir.path());
        for q in [
            "  ",
            "\"*) ( ^",
            "\"*) OR NEAR(",
            "night train*",
            "l'été \"x\"y",
            "a\0b",
            "-lantern",
            "NEAR(a b)",
            "col:lantern",
            "lantern OR",
            "OR lantern",
            "\"",
            "*",
        ] {
            store
                .search_matches(q)
                .unwrap_or_else(|e| panic!("{q:?}: {e}"));
        }
        assert_eq!(fts_query("  "), None);
        assert_eq!(store.search_matches("\"a long\"").unwrap(), 5, "a phrase");
        assert_eq!(
            store.search_matches("\"long a\"").unwrap(),
            0,
            "in its order"
        );
        assert_eq!(
            store.search_matches("lantern -weigh").unwrap(),
            1,
            "the comment"
        );
        assert_eq!(store.search_matches("zzz OR lantern").unwrap(), 6);
        assert_eq!(store.search_matches("zzz lantern").unwrap(), 0);
        assert_eq!(store.search_matches("lant*").unwrap(), 6, "a prefix");
    }
}
