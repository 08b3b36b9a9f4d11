//! A blog's extraction context ([`BlogContext`]): its rules, permalink pattern, time zone
//! offset, feed entries, comment rules and widget data, loaded once per crawl from the store
//! ([`load_context`]) and read by every page the crawl processes (`crawl::page`,
//! `crawl::page_comments`).

use super::links::site_of;
use crate::core::comment_data::DataShape;
use crate::core::comments::CommentRules;
use crate::core::data_template::DataTemplate;
use crate::core::dates::blog_offset;
use crate::core::extract::{AuthorMetadata, RuleSet};
use crate::core::feed::FeedEntry;
use crate::core::identify::Marks;
use crate::core::post_url::PostUrlPattern;
use crate::core::rules::{Field, Rule};
use crate::store::{Blog, Store, StoredRule};
use anyhow::{Context, Result};
use std::collections::HashMap;
use url::Url;

/// What a blog's pages are read with: its active rules, permalink pattern, time zone offset
/// and feed entries, loaded once per crawl from the store.
pub(super) struct BlogContext {
    pub(super) rules: RuleSet,
    /// The comment rules, if any were learned.
    pub(super) comment_rules: Option<CommentRules>,
    /// The comment widget's data, if the blog has one: where to ask it for any post, and where
    /// its comments are (issue 41).
    pub(super) comment_data: Option<(DataTemplate, DataShape)>,
    /// The blog's usual offset from UTC.
    pub(super) offset: chrono::FixedOffset,
    /// Post permalinks look like this.
    pub(super) pattern: PostUrlPattern,
    pub(super) site: String,
    /// The feed entries by canonical permalink: the truth for their posts' authors and dates.
    pub(super) entries: HashMap<String, FeedEntry>,
    /// What the blog's own pages say a post is (`core::identify`).
    pub(super) marks: Marks,
    /// The feed's own authors, given to entries that name none: a post's authors when its page
    /// names none.
    pub(super) feed_authors: Vec<String>,
}

impl BlogContext {
    /// What the renderer should know of this blog's pages: where its comments are, so that only
    /// the controls around them are clicked for more.
    pub(super) fn render_hints(&self) -> crate::render::Hints {
        crate::render::Hints {
            comments: self
                .comment_rules
                .as_ref()
                .map(|r| format!("[class=\"{}\"]", r.content.replace('\\', "\\\\"))),
        }
    }
}

/// The blog's extraction context from the store, with the stored rules it was built from.
///
/// # Errors
/// No article rule stored (the blog was never learned), a stored rule or pattern is corrupt, or
/// the store failed.
pub(super) fn load_context(store: &Store, blog: &Blog) -> Result<(BlogContext, Vec<StoredRule>)> {
    let stored = store.rules(blog.id)?;
    let first = |f: Field| stored.iter().find(|r| r.field == f);
    let all = |f: Field| stored.iter().filter(move |r| r.field == f);
    let article = first(Field::Article).context("no article rule stored")?;
    let pattern = blog
        .post_pattern
        .clone()
        .context("no post URL pattern stored")?;
    let entries = store.entries(blog.id)?;
    let mut people: Vec<String> = Vec::new();
    for name in entries.iter().flat_map(|e| &e.authors) {
        if !people.contains(name) {
            people.push(name.clone());
        }
    }
    let rules = RuleSet {
        article: Rule::parse(&article.xpath)?,
        title: first(Field::Title)
            .map(|t| Rule::parse(&t.xpath))
            .transpose()?,
        exclude: all(Field::ArticleExclude)
            .map(|r| Rule::parse(&r.xpath))
            .collect::<Result<_, _>>()?,
        author: all(Field::Author)
            .map(|r| Rule::parse(&r.xpath))
            .collect::<Result<_, _>>()?,
        author_metadata: if all(Field::SiteWideAuthor)
            .any(|r| r.xpath == crate::core::meta::DECLARED_AUTHORS)
        {
            AuthorMetadata::SiteWide
        } else if first(Field::ConfirmingAuthor).is_some() {
            AuthorMetadata::Confirms
        } else {
            AuthorMetadata::Fallback
        },
        declared_dates: !all(Field::UnreliableDate)
            .any(|r| r.xpath == crate::core::meta::DECLARED_DATES),
        date: first(Field::Date)
            .map(|r| Rule::parse(&r.xpath).map(|x| (x, r.format.clone())))
            .transpose()?,
        people,
    };
    let class = |f: Field| {
        first(f).and_then(|r| crate::core::comments::class_of(&r.xpath).map(str::to_string))
    };
    let comment_rules = first(Field::Comment).and_then(|c| {
        Some(CommentRules {
            content: crate::core::comments::class_of(&c.xpath)?.to_string(),
            author: class(Field::CommentAuthor),
            date: class(Field::CommentDate),
            score: c.score,
        })
    });
    let comment_data = first(Field::CommentData).and_then(|r| {
        let shape = serde_json::from_str(r.format.as_deref()?).ok()?;
        Some((DataTemplate(r.xpath.clone()), shape))
    });
    let marks = Marks::from_stored(stored.iter().map(|r| (r.field, r.xpath.as_str())))?;
    let feed_authors = entries
        .iter()
        .find(|e| e.authors_inherited)
        .map(|e| e.authors.clone())
        .unwrap_or_default();
    let ctx = BlogContext {
        marks,
        feed_authors,
        rules,
        comment_rules,
        comment_data,
        offset: blog_offset(entries.iter().filter_map(|e| e.published))
            .unwrap_or_else(|| chrono::FixedOffset::east_opt(0).expect("zero offset")),
        pattern,
        site: site_of(&Url::parse(&blog.home_url)?),
        entries: entries.into_iter().map(|e| (e.url.clone(), e)).collect(),
    };
    Ok((ctx, stored))
}
