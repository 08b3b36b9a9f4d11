//! What full-text search says differently on each back end ([`Fts`]): the query syntax, the
//! match condition, the rank, the snippet and the marked fields, for SQLite's FTS5 table
//! `search` and PostgreSQL's `search` table with a `tsvector`.

use super::db::{args, Dialect};
use anyhow::Result;

/// What full-text search says differently on each back end: SQLite's FTS5 table `search`
/// (migration 14) and PostgreSQL's `search` table with a `tsvector` (schema version 2). The
/// statements around these fragments are written once.
///
/// The two rank alike: BM25 on SQLite, `ts_rank` on PostgreSQL with the same column weights
/// (title 8, author 2, text 1, categories and tags ¼, in proportion), lower scores first. A typed word holding
/// punctuation (`l'été`) is one FTS5 phrase on SQLite and each of its parts on PostgreSQL.
pub(super) struct Fts {
    /// The query text for parameter `?1` ([`super::search::Query`]).
    pub(super) query: String,
    /// Condition on `search` (unaliased or as `s`): the row matches the query in `?1`.
    pub(super) matches: &'static str,
    /// The column of `search` holding the row's id: 2 × posts.id, or 2 × comments.id + 1.
    pub(super) row: &'static str,
    /// A matching row's score, best lowest (only in a statement reading `search` unaliased).
    pub(super) rank: &'static str,
    /// Text around the matches of row `s`, each match between `\u{1}` and `\u{2}`.
    pub(super) snippet: &'static str,
    /// Row `s`'s title, authors and terms with the matches marked as in `snippet`.
    pub(super) marked_fields: [&'static str; 3],
}

impl Fts {
    /// The fragments of `db`'s dialect for what the user typed; `None` when it holds no
    /// word. On PostgreSQL the text is folded by `unaccent` first, as the index is, and only
    /// then compiled: `unaccent` writes punctuation (`ʻ` → `'`, `⑴` → `(1)`) that would
    /// otherwise be `tsquery` syntax.
    pub(super) fn new(db: &mut dyn super::db::Db, text: &str) -> Result<Option<Self>> {
        use super::search::Query;
        Ok(Some(match db.dialect() {
            Dialect::Sqlite => Fts {
                query: match Query::parse(text) {
                    Some(q) => q.fts5(),
                    None => return Ok(None),
                },
                matches: "search MATCH ?1",
                row: "rowid",
                rank: "bm25(search, 8.0, 1.0, 2.0, 0.0, 0.25)",
                snippet: "snippet(search, 1, char(1), char(2), '…', 24)",
                marked_fields: [
                    "highlight(search, 0, char(1), char(2))",
                    "highlight(search, 2, char(1), char(2))",
                    "highlight(search, 4, char(1), char(2))",
                ],
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
                rank: "-ts_rank('{0.125, 0.03125, 0.25, 1}', doc,
                                to_tsquery('everblog', CAST(?1 AS TEXT)))::float8",
                marked_fields: [
                    "ts_headline('everblog', unaccent(COALESCE(s.title, '')),
                                 to_tsquery('everblog', CAST(?1 AS TEXT)),
                                 'StartSel=' || chr(1) || ', StopSel=' || chr(2) || ', HighlightAll=true')",
                    "ts_headline('everblog', unaccent(COALESCE(s.author, '')),
                                 to_tsquery('everblog', CAST(?1 AS TEXT)),
                                 'StartSel=' || chr(1) || ', StopSel=' || chr(2) || ', HighlightAll=true')",
                    "ts_headline('everblog', unaccent(COALESCE(s.terms, '')),
                                 to_tsquery('everblog', CAST(?1 AS TEXT)),
                                 'StartSel=' || chr(1) || ', StopSel=' || chr(2) || ', HighlightAll=true')",
                ],
                snippet: "ts_headline('everblog', COALESCE(s.body, s.title, ''),
                                      to_tsquery('everblog', CAST(?1 AS TEXT)),
                                      'StartSel=' || chr(1) || ', StopSel=' || chr(2)
                                      || ', MaxWords=24, MinWords=12, MaxFragments=1, FragmentDelimiter=…')",
            },
        }))
    }
}
