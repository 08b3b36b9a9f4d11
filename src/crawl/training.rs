//! The training pairs of rule learning (paper §3): each sampled feed entry with its targets
//! and its stored page ([`Pair`]), and the sample they are drawn from ([`Training`]); read by
//! `crawl::learn` and `crawl::comment_learning`.

use crate::core::feed::{FeedEntry, Target, Targets};
use crate::core::learn::Sample;
use crate::core::meta::MetaSample;
use crate::core::page::{ElementIdx, Page};
use crate::fetch::{self, Response};
use crate::store::{Blog, Store};
use anyhow::Result;
use chrono::{DateTime, Utc};
use std::collections::HashSet;

/// One training pair, its page read from the store when needed.
pub(super) struct Pair<'a> {
    /// The feed entry.
    pub(super) entry: &'a FeedEntry,
    pub(super) target: &'a Targets,
}

impl Pair<'_> {
    /// The entry's latest stored page (the rendering, when the blog renders), parsed.
    pub(super) fn page(&self, store: &Store, blog: &Blog) -> Result<Option<(Page, Response)>> {
        Ok(store
            .latest_response(blog.id, &self.entry.url)?
            .map(|s| (Page::parse(&fetch::decode(&s.response)), s.response)))
    }

    /// The author and date evidence around the page's `article`. The feed's authors given to
    /// every entry are no evidence of a post's byline: the page's own authors train the author
    /// rule then, when it declares some.
    pub(super) fn meta_sample<'p>(
        &self,
        page: &'p Page,
        article: ElementIdx,
        fetched_at: DateTime<Utc>,
    ) -> MetaSample<'p> {
        let entry = self.entry;
        let declared = crate::core::bylines::page_authors(page);
        let authors =
            if entry.authors.is_empty() || (entry.authors_inherited && !declared.is_empty()) {
                declared.clone()
            } else {
                entry.authors.clone()
            };
        MetaSample {
            page,
            article,
            authors,
            declared,
            published: entry.published,
            declared_published: entry
                .published
                .and_then(|e| crate::core::extract::page_published(page, *e.offset())),
            fetched_at,
        }
    }

    pub(super) fn sample<'p>(&self, page: &'p Page) -> Sample<'p> {
        Sample {
            page,
            title: self.target.title.as_deref().map(|s| Target::new(s, false)),
            article: self
                .target
                .article
                .as_deref()
                .map(|s| Target::new(s, self.target.summary)),
        }
    }
}

/// The training pairs of one learning: the stored feed entries with their targets, the spread
/// sample of them, and the sampled entries whose page is usable.
pub(super) struct Training {
    pub(super) entries: Vec<FeedEntry>,
    pub(super) targets: Vec<Targets>,
    /// The sampled entries (indices).
    pub(super) picked: Vec<usize>,
    /// The URLs of sampled entries whose page is usable.
    pub(super) usable: HashSet<String>,
    /// The first reason a sampled entry's page could not be fetched.
    pub(super) failure: Option<String>,
}

impl Training {
    /// The sampled entries.
    pub(super) fn sampled(&self) -> Vec<&FeedEntry> {
        self.picked.iter().map(|&i| &self.entries[i]).collect()
    }

    /// The sampled entries whose page is usable, with their targets.
    pub(super) fn pairs(&self) -> Vec<Pair<'_>> {
        self.picked
            .iter()
            .filter(|&&i| self.usable.contains(&self.entries[i].url))
            .map(|&i| Pair {
                entry: &self.entries[i],
                target: &self.targets[i],
            })
            .collect()
    }
}
