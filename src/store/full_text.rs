//! Full-text search for the reader (`archive serve`): the words (in [`super::search`]'s
//! grammar) over the posts' titles, articles, authors, categories and tags, and the comments
//! (FTS5 table `search`, kept by triggers, migrations 14, 23, 25 and 29; PostgreSQL's `search`
//! table with a `tsvector`); filters by blog, author (any word's prefix) and category or tag,
//! folded as the words are, and dates; best first or newest first; one hit per post
//! (`store::hits`), its matching comments under it. With filters and no word, the posts the
//! filters keep, newest first.
//!
//! Written once for both back ends, over [`super::db::Db`]; only the words differ (see
//! [`Fts`]).

use super::db::{args, Dialect};
use super::fts::Fts;
use super::hits::{hit, matching_comments, Hit, MatchedIn, COMMENTS_PER_HIT};
use super::reading::{instant, json_elements};
use super::{BlogId, Store};
use anyhow::Result;
use chrono::NaiveDate;

crate::core::vocabulary! {
    /// How search hits are ordered.
    #[derive(Default)]
    pub enum SearchOrder {
        /// Best first (BM25 / `ts_rank` over the newest `rank_window` matches, then the rest
        /// newest first); for a listing without words, newest first.
        #[default]
        Relevance = "relevance",
        /// Newest post first (undated last).
        Date = "date",
    }
}

/// A full-text search: the words, and filters.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    /// What the user typed, any characters ([`super::search::Query`]: words, "phrases",
    /// `-not`, `OR`, `prefix*`). Without a word, the filters alone list posts.
    pub text: String,
    /// Only this blog.
    pub blog: Option<BlogId>,
    /// Only posts by an author, or comments by one, whose name (or a word of it) starts with
    /// this, case-insensitively (`zoe`, `castell` find "Zoe Castellanos").
    pub author: Option<String>,
    /// Only posts with this category or tag (case-insensitive, whole name).
    pub tag: Option<String>,
    /// Only posts published on or after this day (UTC).
    pub from: Option<NaiveDate>,
    /// Only posts published on or before this day (UTC).
    pub to: Option<NaiveDate>,
    /// Best or newest first.
    pub order: SearchOrder,
    /// Hits (posts) per page.
    pub limit: u32,
    /// Hits skipped (paging).
    pub offset: u32,
    /// BM25 ranks the most recently archived this many matches of the words (before filters); older matches
    /// follow, newest first (`[serve] search_rank_window`). Ranking reads each match's
    /// statistics, so this bounds the work of a word found nearly everywhere.
    pub rank_window: u32,
}

impl SearchQuery {
    /// Whether any filter is set.
    pub fn filtered(&self) -> bool {
        self.blog.is_some()
            || self.author.is_some()
            || self.tag.is_some()
            || self.from.is_some()
            || self.to.is_some()
    }
}

/// The FTS5 query for what a user typed ([`super::search::Query`]); `None` when nothing
/// searchable is left.
pub fn fts_query(text: &str) -> Option<String> {
    super::search::Query::parse(text).map(|q| q.fts5())
}

/// `text` for a `LIKE … ESCAPE '\\' pattern: `\\`, `%` and `_` taken literally. Folded (case
/// and diacritics) in the database, as the names it is compared with are ([`filter_sql`]).
fn like_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.trim().chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The filters' condition on posts `p` (and, when `comment` is set, comments `c` by the
/// author), reading parameters `?{n}`…`?{n+5}`: blog, the author's name prefix, a word
/// prefix of it, first instant, instant after the last day, tag.
fn filter_sql(d: Dialect, n: usize, comment: bool) -> String {
    let authors = json_elements(d, "p.authors", "a");
    let tags = json_elements(d, "p.tags", "t");
    let published = instant(d, "p.published");
    let (first, next) = (
        instant(d, &format!("CAST(?{} AS TEXT)", n + 3)),
        instant(d, &format!("CAST(?{} AS TEXT)", n + 4)),
    );
    // Names and what was typed folded alike, as the index folds words: case and diacritics.
    let fold = |e: &str| match d {
        Dialect::Sqlite => format!("fold({e})"),
        Dialect::Postgres => format!("lower(unaccent({e}))"),
    };
    let by = |e: &str| {
        format!(
            "({x} LIKE {a} ESCAPE '\\' OR {x} LIKE {b} ESCAPE '\\')",
            x = fold(e),
            a = fold(&format!("CAST(?{} AS TEXT)", n + 1)),
            b = fold(&format!("CAST(?{} AS TEXT)", n + 2)),
        )
    };
    let by_comment = if comment {
        format!(" OR {}", by("c.author"))
    } else {
        String::new()
    };
    format!(
        "(CAST(?{n} AS BIGINT) IS NULL OR p.blog_id = ?{n})
         AND (CAST(?{a} AS TEXT) IS NULL
              OR EXISTS (SELECT 1 FROM {authors} WHERE {by_post}){by_comment})
         AND (CAST(?{f} AS TEXT) IS NULL OR {published} >= {first})
         AND (CAST(?{t} AS TEXT) IS NULL OR {published} < {next})
         AND (CAST(?{g} AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM {tags} WHERE {tag} = {given_tag}))",
        a = n + 1,
        f = n + 3,
        t = n + 4,
        g = n + 5,
        by_post = by("a.value"),
        tag = fold("t.value"),
        given_tag = fold(&format!("CAST(?{} AS TEXT)", n + 5)),
    )
}

/// Posts `p` newest first, undated last (a listing without words).
fn newest_first_sql(d: Dialect) -> String {
    format!(
        "p.published IS NULL, {} DESC, p.id DESC",
        instant(d, "p.published")
    )
}

impl Store {
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

    /// A page of hits, one per post (at most `q.limit` from `q.offset`): the posts that hold
    /// the words themselves or in a comment, kept by the filters, best first (BM25: title × 8,
    /// author × 2, text × 1, over the most recently archived `q.rank_window` matches; older
    /// ones after them, newest first; a post ranks as its best row) or newest first. Without
    /// a word, the posts the filters keep, newest first; without either, nothing.
    ///
    /// Two steps: the page's posts are chosen from the first matching rows in rank order,
    /// mapped to their posts (as many rows as fill the page, at least four a hit; every row
    /// for newest first), without reading the indexed text; only then are the page's
    /// snippets read, one statement a hit and one a matching comment (at most three).
    ///
    /// # Errors
    /// The database failed.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<Hit>> {
        // A day's bounds as instants: from its start (UTC) to the next day's start.
        let start = |d: NaiveDate| d.and_time(chrono::NaiveTime::MIN).and_utc();
        let from = q.from.map(start);
        let before = q.to.map(|d| start(d.succ_opt().unwrap_or(d)));
        let author = q
            .author
            .as_deref()
            .map(like_literal)
            .filter(|a| !a.is_empty());
        let (by, by_word) = (
            author.as_ref().map(|a| format!("{a}%")),
            author.as_ref().map(|a| format!("% {a}%")),
        );
        let q = q.clone();
        self.read(move |db| {
            let d = db.dialect();
            let (limit, offset, window) = (q.limit, q.offset, q.rank_window.max(1) - 1);
            let Some(fts) = Fts::new(db, &q.text)? else {
                if !q.filtered() {
                    return Ok(Vec::new());
                }
                // Filters alone: a listing, newest first.
                let ids: Vec<i64> = db.query_map(
                    &format!(
                        "SELECT p.id FROM posts p WHERE {} ORDER BY {} LIMIT ?1 OFFSET ?2",
                        filter_sql(d, 3, false),
                        newest_first_sql(d)
                    ),
                    args![limit, offset, q.blog, &by, &by_word, from, before, &q.tag],
                    |r| r.get(0),
                )?;
                return ids.into_iter().map(|id| hit(db, None, id)).collect();
            };
            let Fts {
                matches, row, rank, ..
            } = &fts;
            let filtered = q.filtered();
            // Best first: a post ranks as its best row, so the posts of the first `k` rows
            // (in key order) are the first posts, in order. Only those rows are mapped to
            // their posts; `k` grows until the page is full or the rows run out. Newest first
            // needs every matching post: all rows are mapped. The rows also say which of a
            // post's comments match (those among them).
            let need = usize::try_from(i64::from(offset) + i64::from(limit)).unwrap_or(usize::MAX);
            let mut k: i64 = match q.order {
                SearchOrder::Relevance => i64::try_from(need).unwrap_or(i64::MAX / 8) * 4 + 16,
                SearchOrder::Date => i64::MAX,
            };
            let published = format!("CAST({} AS DOUBLE PRECISION)", instant(d, "p.published"));
            let posts: Vec<Found> = loop {
                let rows: Vec<(i64, i64, Option<f64>, i64)> = db.query_map(
                    &format!(
                        "WITH floor(f) AS (SELECT COALESCE(
                             (SELECT {row} FROM search WHERE {matches} ORDER BY {row} DESC LIMIT 1 OFFSET ?2), -1)),
                         hits(r, key) AS (
                             SELECT {row}, {rank} FROM search
                             WHERE {matches} AND {row} >= (SELECT f FROM floor)
                             UNION ALL
                             SELECT {row}, 1e15 - {row} FROM search
                             WHERE {matches} AND {row} < (SELECT f FROM floor)),
                         top(r, key) AS (SELECT r, key FROM hits ORDER BY key, r LIMIT ?3)
                         SELECT h.r, p.id, {published}, (SELECT COUNT(*) FROM top) FROM top h
                         LEFT JOIN comments c ON h.r % 2 = 1 AND c.id = (h.r - 1) / 2
                         JOIN posts p ON p.id = (CASE WHEN h.r % 2 = 0 THEN h.r / 2
                                                 ELSE (SELECT id FROM posts WHERE url = c.post_url) END)
                         WHERE {filters} AND (CAST(?4 AS BIGINT) IS NULL OR TRUE)
                         ORDER BY h.key, h.r",
                        published = published,
                        filters = if filtered {
                            filter_sql(d, 5, true)
                        } else {
                            // The filters' parameters, unread but typed.
                            "(CAST(?5 AS BIGINT) IS NULL OR TRUE) AND (CAST(?6 AS TEXT) IS NULL OR TRUE)
                             AND (CAST(?7 AS TEXT) IS NULL OR TRUE) AND (CAST(?8 AS TEXT) IS NULL OR TRUE)
                             AND (CAST(?9 AS TEXT) IS NULL OR TRUE) AND (CAST(?10 AS TEXT) IS NULL OR TRUE)"
                                .to_string()
                        },
                    ),
                    args![&fts.query, window, k, 0i64, q.blog, &by, &by_word, from, before, &q.tag],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )?;
                let read = rows.first().map_or(0, |r| r.3);
                let posts = group(&rows, q.order);
                if posts.len() >= need || read < k {
                    break posts;
                }
                k = k.saturating_mul(4);
            };
            posts
                .into_iter()
                .skip(offset as usize)
                .take(limit as usize)
                .map(|f| {
                    let mut h = hit(db, Some(&fts), f.post)?;
                    h.comments = matching_comments(db, &fts, &f.comment_rows)?;
                    if !h.comments.is_empty() {
                        h.matched.push(MatchedIn::Comments);
                    }
                    Ok(h)
                })
                .collect()
        })
    }
}

/// A post found by the words: its id, publication (as [`instant`] orders it) and its
/// matching comments' rows (at most [`COMMENTS_PER_HIT`], best first).
struct Found {
    post: i64,
    published: Option<f64>,
    comment_rows: Vec<i64>,
}

/// The posts of `rows` (row, post, publication, …; best row first), each once: in the order
/// of their best row, or newest first.
fn group(rows: &[(i64, i64, Option<f64>, i64)], order: SearchOrder) -> Vec<Found> {
    let mut at: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
    let mut out: Vec<Found> = Vec::new();
    for &(r, post, published, _) in rows {
        let i = *at.entry(post).or_insert_with(|| {
            out.push(Found {
                post,
                published,
                comment_rows: Vec::new(),
            });
            out.len() - 1
        });
        let f = &mut out[i];
        if r % 2 == 1 && f.comment_rows.len() < COMMENTS_PER_HIT as usize {
            f.comment_rows.push(r);
        }
    }
    if order == SearchOrder::Date {
        out.sort_by(|a, b| match (a.published, b.published) {
            (Some(x), Some(y)) => y.total_cmp(&x).then(b.post.cmp(&a.post)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => b.post.cmp(&a.post),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{fts_query, SearchOrder, SearchQuery};
    use crate::store::Store;

    /// Five posts holding "lantern" (post 1 in its title, so BM25 puts it first when it is
    /// ranked) and a comment on post 2 holding it, by Bea (search rows 2, 4, 6, 8, 10 for the
    /// posts, 3 for the comment).
    fn archive(dir: &std::path::Path) -> Store {
        let store = Store::open(&crate::store::DatabaseSettings::at(dir.join("a.db"))).unwrap();
        store
            .sqlite_connection()
            .execute_batch(
                "INSERT INTO blogs (id, home_url, feed_url, feed_kind, added_at, title)
                   VALUES (1, 'http://b/', 'http://b/feed', 'rss', '2026-01-01T00:00:00Z', 'Night Owls');
                 INSERT INTO posts (id, blog_id, url, title, authors, published, content_html,
                                    content_text, fetched_at, extracted_at, tags)
                 SELECT n, 1, 'http://b/' || n, CASE n WHEN 1 THEN 'Lantern' ELSE 'Post ' || n END,
                        '[\"Ann Lee\"]', '2026-0' || n || '-01T00:00:00+00:00', '',
                        'a long text about a lantern and many other words to weigh it down', '', '',
                        CASE n WHEN 3 THEN '[\"Moth Watching\"]' ELSE '[]' END
                 FROM (SELECT 1 AS n UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5);
                 INSERT INTO comments (post_url, key, author, content_html, content_text, source, position)
                   VALUES ('http://b/2', 'c1', 'Bea', '', 'my lantern too', 'page', 0);",
            )
            .unwrap();
        store
    }

    /// Each hit's post and whether it holds the words itself (else only its comments do).
    fn urls(store: &Store, q: &SearchQuery) -> Vec<(String, bool)> {
        store
            .search(q)
            .unwrap()
            .into_iter()
            .map(|h| (h.url, !h.post_matches))
            .collect()
    }

    /// Issue 45 item 2: the author and tag filters fold case and diacritics as the words do.
    #[test]
    fn author_and_tag_filters_fold_accents_as_words_do() {
        let dir = tempfile::tempdir().unwrap();
        let store = archive(dir.path());
        store
            .sqlite_connection()
            .execute_batch(
                "UPDATE posts SET authors = '[\"Zoë Castellanos\",\"François Lée\"]',
                                  tags = '[\"Café Culture\"]' WHERE id = 4;",
            )
            .unwrap();
        let filtered = |author: Option<&str>, tag: Option<&str>| {
            let q = SearchQuery {
                author: author.map(str::to_string),
                tag: tag.map(str::to_string),
                limit: 10,
                rank_window: 100,
                ..SearchQuery::default()
            };
            urls(&store, &q)
        };
        let four = [("http://b/4".to_string(), true)];
        for author in ["zoe", "ZOË", "francois", "castel"] {
            assert_eq!(filtered(Some(author), None), four, "{author}");
        }
        // "Lée" and every post's "Ann Lee" are one name folded.
        assert_eq!(filtered(Some("lée"), None).len(), 5);
        for tag in ["cafe culture", "CAFÉ CULTURE"] {
            assert_eq!(filtered(None, Some(tag)), four, "{tag}");
        }
        assert!(filtered(Some("zoo"), None).is_empty());
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
        assert_eq!(
            store.search_matches("lantern").unwrap(),
            6,
            "5 posts, 1 comment"
        );
        // One hit per post: post 2 once, its comment under it.
        let all = store.search(&q(100)).unwrap();
        assert_eq!(all.len(), 5);
        assert_eq!(all[0].url, "http://b/1", "the title hit first");
        let two = all.iter().find(|h| h.url == "http://b/2").unwrap();
        assert!(two.post_matches);
        assert_eq!(two.comments.len(), 1);
        assert_eq!(two.comments[0].author.as_deref(), Some("Bea"));
        assert!(
            two.comments[0].marked.contains('\u{1}'),
            "the comment's match marked"
        );
        // A window of 2: posts 5 and 4 (the newest rows) ranked, then the rest newest first:
        // post 3, post 2 (with its comment), post 1.
        let windowed = urls(&store, &q(2));
        assert_eq!(windowed.len(), 5);
        let rest = ["3", "2", "1"].map(|n| (format!("http://b/{n}"), false));
        assert_eq!(windowed[2..], rest);
        // Paging loses and repeats nothing.
        let mut paged = Vec::new();
        for offset in 0..5 {
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
        // Newest first.
        let newest = urls(
            &store,
            &SearchQuery {
                order: SearchOrder::Date,
                ..q(100)
            },
        );
        let by_date = ["5", "4", "3", "2", "1"].map(|n| (format!("http://b/{n}"), false));
        assert_eq!(newest, by_date);
        // Filters: the comment's author, by a prefix; a word of the post author's name; a
        // date range.
        let by_bea = SearchQuery {
            author: Some("be".into()),
            ..q(2)
        };
        assert_eq!(store.search(&by_bea).unwrap().len(), 1);
        let by_lee = SearchQuery {
            author: Some("LEE".into()),
            ..q(2)
        };
        assert_eq!(store.search(&by_lee).unwrap().len(), 5);
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
        // A tag is searched, below the text (issue 45); each hit says where its words are.
        // The blog's title lists no post: "owls" is in "Night Owls" only.
        store
            .sqlite_connection()
            .execute_batch(
                "UPDATE posts SET content_text = content_text || ' a moth' WHERE id = 5;",
            )
            .unwrap();
        let moth = store
            .search(&SearchQuery {
                text: "moth".into(),
                ..q(100)
            })
            .unwrap();
        let found: Vec<(&str, &[super::MatchedIn])> = moth
            .iter()
            .map(|h| (h.url.as_str(), h.matched.as_slice()))
            .collect();
        use super::MatchedIn::{Comments, Tags, Text, Title};
        assert_eq!(
            found,
            [("http://b/5", &[Text][..]), ("http://b/3", &[Tags][..])]
        );
        let lantern = store.search(&q(100)).unwrap();
        assert_eq!(lantern[0].matched, [Title, Text]);
        let two = lantern.iter().find(|h| h.url == "http://b/2").unwrap();
        assert_eq!(two.matched, [Text, Comments]);
        assert_eq!(
            urls(
                &store,
                &SearchQuery {
                    text: "owls".into(),
                    ..q(100)
                }
            ),
            []
        );
        let tagged = SearchQuery {
            text: String::new(),
            tag: Some("moth watching".into()),
            ..q(100)
        };
        assert_eq!(urls(&store, &tagged), [("http://b/3".to_string(), true)]);
        let listing = SearchQuery {
            text: String::new(),
            author: Some("ann".into()),
            ..q(100)
        };
        assert_eq!(urls(&store, &listing).len(), 5, "every post, newest first");
        assert_eq!(
            urls(
                &store,
                &SearchQuery {
                    text: String::new(),
                    ..q(100)
                }
            ),
            []
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
