//! What a search hit shows (issue 32, issue 45): the post ([`Hit`]) with a snippet of its own
//! match, where its words were found ([`MatchedIn`]), and its matching comments
//! ([`HitComment`]); read one statement a hit, one a comment, for the page's hits only, after
//! `store::full_text` chose them.

use super::db::args;
use super::fts::Fts;
use anyhow::Result;
use chrono::{DateTime, FixedOffset};

/// One search hit: a post, with its matching comments.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Hit {
    /// The post's permalink.
    pub url: String,
    /// The post's title.
    pub title: Option<String>,
    /// The blog's home page.
    pub blog: String,
    /// The blog's title, when its feed gives one.
    pub blog_title: Option<String>,
    /// The post's publication time.
    #[serde(serialize_with = "super::records::rfc3339::local")]
    pub published: Option<DateTime<FixedOffset>>,
    /// Whether the post itself holds the words (title, article, authors, categories and
    /// tags); false when only comments do, and for a listing without words.
    pub post_matches: bool,
    /// Where the words were found, in this order: title, text, authors, tags, comments
    /// (issue 45); empty for a listing without words.
    pub matched: Vec<MatchedIn>,
    /// Text around the post's matches, each match between `\u{1}` and `\u{2}`; the article's
    /// opening words when the post itself does not match.
    #[serde(skip)]
    pub marked: String,
    /// Its comments holding the words (at most [`COMMENTS_PER_HIT`]), in thread order.
    pub comments: Vec<HitComment>,
}

/// Where a hit's words were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchedIn {
    /// The post's title.
    Title,
    /// Its article.
    Text,
    /// Its authors' names.
    Authors,
    /// Its categories and tags.
    Tags,
    /// Its comments.
    Comments,
}

impl MatchedIn {
    /// The field's name in the reader's words.
    pub fn name(self) -> &'static str {
        match self {
            MatchedIn::Title => "title",
            MatchedIn::Text => "text",
            MatchedIn::Authors => "authors",
            MatchedIn::Tags => "tags",
            MatchedIn::Comments => "comments",
        }
    }
}

/// A comment holding the words, under its post's hit.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HitComment {
    /// Its id within the post (`Comment::id`).
    pub id: String,
    /// Its author.
    pub author: Option<String>,
    /// Text around the matches, marked as [`Hit::marked`].
    #[serde(skip)]
    pub marked: String,
}

/// Matching comments shown under a post's hit.
pub const COMMENTS_PER_HIT: u32 = 3;

/// The comments of index rows `rows` with their snippets, in thread order.
pub(super) fn matching_comments(
    db: &mut dyn super::db::Db,
    fts: &Fts,
    rows: &[i64],
) -> Result<Vec<HitComment>> {
    let (matches, row, snippet) = (fts.matches, fts.row, fts.snippet);
    let mut out: Vec<(i64, HitComment)> = Vec::new();
    for &r in rows {
        if let Some(c) = db.query_opt(
            &format!(
                "SELECT c.key, c.author, {snippet}, c.position FROM search s
                 JOIN comments c ON c.id = (s.{row} - 1) / 2
                 WHERE {matches} AND s.{row} = ?2"
            ),
            args![&fts.query, r],
        )? {
            out.push((
                c.get(3)?,
                HitComment {
                    id: c.get(0)?,
                    author: c.get(1)?,
                    marked: c.get(2)?,
                },
            ));
        }
    }
    out.sort_by_key(|(position, _)| *position);
    Ok(out.into_iter().map(|(_, c)| c).collect())
}

/// Post `id`'s hit: its own match's snippet for `fts`, else the article's opening words
/// (comments are the caller's).
pub(super) fn hit(db: &mut dyn super::db::Db, fts: Option<&Fts>, id: i64) -> Result<Hit> {
    let own = |expr: &str| match fts {
        Some(f) => format!(
            "(SELECT {expr} FROM search s WHERE {} AND s.{} = 2 * p.id)",
            f.matches, f.row
        ),
        None => "CAST(NULL AS TEXT)".into(),
    };
    let (snippet, [title, authors, terms]) = match fts {
        Some(f) => (own(f.snippet), f.marked_fields.map(&own)),
        None => (own(""), [own(""), own(""), own("")]),
    };
    let query = fts.map_or(String::new(), |f| f.query.clone());
    let r = db.query_one(
        &format!(
            "SELECT p.url, p.title, b.home_url, p.published, {snippet}, b.title,
                    {title}, {authors}, {terms}
             FROM posts p JOIN blogs b ON b.id = p.blog_id
             WHERE p.id = ?2 AND (CAST(?1 AS TEXT) IS NULL OR TRUE)"
        ),
        args![&query, id],
    )?;
    let marked: Option<String> = r.get(4)?;
    let has_mark = |i: usize| -> Result<bool> {
        Ok(r.get::<Option<String>>(i)?
            .is_some_and(|t| t.contains('\u{1}')))
    };
    let matched = [
        (MatchedIn::Title, has_mark(6)?),
        (
            MatchedIn::Text,
            marked.as_deref().is_some_and(|m| m.contains('\u{1}')),
        ),
        (MatchedIn::Authors, has_mark(7)?),
        (MatchedIn::Tags, has_mark(8)?),
    ]
    .into_iter()
    .filter_map(|(f, m)| m.then_some(f))
    .collect();
    let mut out = Hit {
        url: r.get(0)?,
        title: r.get(1)?,
        blog: r.get(2)?,
        blog_title: r.get(5)?,
        published: r.local(3)?,
        post_matches: marked.is_some(),
        matched,
        marked: marked.unwrap_or_default(),
        comments: Vec::new(),
    };
    if !out.post_matches {
        out.marked = db
            .query_one(
                "SELECT substr(content_text, 1, 240) FROM posts WHERE id = ?1",
                args![id],
            )?
            .get(0)?;
    }
    Ok(out)
}
