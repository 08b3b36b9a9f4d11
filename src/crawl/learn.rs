//! Rule learning from the feed (paper §3): each feed entry and its page form a training pair;
//! `core::learn` finds the article and title rules (Algorithm 1 with the linear-time Algorithm 2),
//! `core::meta` the author and date rules, `core::comments` the comment rules (maximum weighted
//! bipartite matching against comment feeds), and the feed's permalinks give the post URL
//! pattern. Everything learned is stored with the blog; the entries seed the frontier.

use super::page::{comment_write, comments_of_feed};
use super::rendering;
use super::CrawlOptions;
use crate::core::comments::{CommentRules, FeedComment};
use crate::core::feed::{self, FeedEntry, Targets};
use crate::core::learn::{learn, Field, LearnedRule, Sample, Target};
use crate::core::meta::{learn_author, learn_date, MetaSample};
use crate::core::page::Page;
use crate::core::post_url::{canonical, PostUrlPattern};
use crate::core::rules::Rule;
use crate::fetch::{self, Fetcher, Response};
use crate::render::widgets::Widget;
use crate::store::{Blog, Store, StoredRule};
use anyhow::{bail, Context, Result};
use chrono::Utc;
use std::collections::{HashMap, HashSet};
use url::Url;

/// A fresh copy of the feed, kept like every response; its entries replace the stored ones. On
/// failure the stored entries serve.
///
/// # Errors
/// Only when the store fails.
pub(super) async fn refresh_entries(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
) -> Result<()> {
    let f = fetcher.get(&blog.feed_url).await;
    store.keep_fetched(blog.id, &f)?;
    let Some(r) = f.success() else {
        return Ok(());
    };
    match feed::parse(&r.body, &r.final_url) {
        Ok(parsed) if !parsed.entries.is_empty() => {
            store.save_entries(blog.id, &super::canonical_entries(&parsed))?
        }
        Ok(_) => {
            tracing::warn!(feed = %blog.feed_url, "feed has no entries now; using the stored ones")
        }
        Err(e) => {
            tracing::warn!(feed = %blog.feed_url, error = %e, "feed no longer parses; using the stored entries")
        }
    }
    Ok(())
}

/// The entry pages: stored responses reused, the others fetched (and kept). Only HTML pages that
/// answered below 400 are returned, by entry URL.
async fn entry_pages(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    entries: &[FeedEntry],
    concurrency: usize,
) -> Result<HashMap<String, Response>> {
    let mut pages = HashMap::new();
    let mut missing = Vec::new();
    for e in entries {
        match store.latest_response(blog.id, &e.url)? {
            Some((_, r)) if r.status < 400 => {
                pages.insert(e.url.clone(), r);
            }
            _ => missing.push((e.url.clone(), None)),
        }
    }
    for (u, f) in fetcher.get_all(missing, concurrency).await {
        store.keep_fetched(blog.id, &f)?;
        if let Some(r) = f.response.filter(|r| r.status < 400 && fetch::is_html(r)) {
            pages.insert(u, r);
        }
    }
    Ok(pages)
}

/// One training pair: an entry's page and what the feed says of it.
struct Training<'a> {
    entry: &'a FeedEntry,
    page: Page,
    target: Targets,
    response: &'a Response,
}

/// Learns from the stored feed entries (only those in `only`, when given) and their latest
/// stored pages, fetching entry pages not stored yet; stores the rules and the post URL pattern
/// and seeds the frontier with the start page and the entries.
///
/// # Errors
/// No entry page matched its entry's text (no article rule), no usable permalink, or the store
/// failed.
pub(super) async fn learn_from_entries(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    opts: &CrawlOptions,
    only: Option<&HashSet<String>>,
) -> Result<()> {
    let mut entries = store.entries(blog.id)?;
    if let Some(only) = only {
        entries.retain(|e| only.contains(&e.url));
    }
    let targets = feed::targets(&entries);
    let mut responses =
        entry_pages(store, fetcher, blog, &entries, opts.settings.concurrency).await?;
    // The render stage (paper §4.1): decide whether this blog needs Chromium, and learn from
    // the pages as the decision will have them.
    let widgets = rendering::decide(store, blog, opts, &entries, &targets, &mut responses).await?;
    let training: Vec<Training<'_>> = entries
        .iter()
        .zip(&targets)
        .filter_map(|(entry, target)| {
            let response = responses.get(&entry.url)?;
            Some(Training {
                entry,
                page: Page::parse(&fetch::decode(response)),
                target: target.clone(),
                response,
            })
        })
        .collect();
    let samples: Vec<Sample> = training
        .iter()
        .map(|t| Sample {
            page: &t.page,
            title: t.target.title.as_deref().map(|s| Target::new(s, false)),
            article: t
                .target
                .article
                .as_deref()
                .map(|s| Target::new(s, t.target.summary)),
        })
        .collect();
    let article_title = learn(&samples);
    let Some(article) = article_title.iter().find(|r| r.field == Field::Article) else {
        bail!(
            "could not learn an article rule for {}: {} of {} feed entry pages could be fetched and none matched its entry's text",
            blog.feed_url,
            training.len(),
            entries.len()
        );
    };
    let article_rule = Rule::parse(&article.xpath)?;
    let mut urls = Vec::new();
    for t in &training {
        urls.push(Url::parse(&t.entry.url)?);
        urls.extend(Url::parse(&t.response.final_url).ok());
    }
    let pattern = PostUrlPattern::learn(&urls).context("no usable permalink in the feed")?;
    let mut learned: Vec<(LearnedRule, Option<String>)> =
        article_title.into_iter().map(|r| (r, None)).collect();
    learned.extend(learn_meta(&training, &article_rule));
    let comments = learn_comments(
        store,
        fetcher,
        blog,
        &entries,
        &training,
        &article_rule,
        &widgets,
    )
    .await?;
    if let Some((cr, n)) = comments {
        let rule = |field: Field, class: &str| LearnedRule {
            field,
            xpath: format!("//*[@class='{class}']"),
            score: cr.score,
            votes: n,
            samples: n,
        };
        learned.push((rule(Field::Comment, &cr.content), None));
        if let Some(a) = &cr.author {
            learned.push((rule(Field::CommentAuthor, a), None));
        }
        if let Some(d) = &cr.date {
            learned.push((rule(Field::CommentDate, d), None));
        }
    }
    let at = Utc::now();
    let rules: Vec<StoredRule> = learned
        .into_iter()
        .map(|(r, format)| StoredRule {
            field: r.field,
            xpath: r.xpath,
            score: r.score,
            votes: r.votes,
            samples: r.samples,
            learned_at: at,
            format,
        })
        .collect();
    for r in &rules {
        tracing::info!(blog = %blog.feed_url, field = %r.field, xpath = %r.xpath, votes = r.votes, samples = r.samples, score = r.score, "learned rule");
    }
    store.save_rules(blog.id, &rules, &pattern)?;
    let start = blog.start_url.as_deref().unwrap_or(&blog.home_url);
    let mut seeds = vec![(canonical(&Url::parse(start)?).to_string(), 0)];
    seeds.extend(entries.iter().map(|e| (e.url.clone(), 1)));
    store.enqueue(blog.id, &seeds)?;
    Ok(())
}

/// Author and date rules (paper §3.5), scored by distance to each page's article node. Pages
/// whose entry names no author train on the authors the page itself declares. Date rules carry
/// the format the page shows dates in.
fn learn_meta(
    training: &[Training<'_>],
    article_rule: &Rule,
) -> Vec<(LearnedRule, Option<String>)> {
    let samples: Vec<MetaSample> = training
        .iter()
        .filter_map(|t| {
            let article = article_rule.apply_first(&t.page)?;
            let authors = if t.entry.authors.is_empty() {
                crate::core::extract::page_authors(&t.page)
            } else {
                t.entry.authors.clone()
            };
            Some(MetaSample {
                page: &t.page,
                article,
                authors,
                published: t.entry.published,
                fetched_at: t.response.fetched_at,
            })
        })
        .collect();
    let mut out: Vec<(LearnedRule, Option<String>)> = learn_author(&samples)
        .into_iter()
        .map(|r| (r, None))
        .collect();
    if let Some((r, format)) = learn_date(&samples) {
        out.push((r, Some(format)));
    }
    out
}

/// Comment rules (paper §3.5). Every entry's comment feed is archived; the pages of the (at
/// most three) entries with the most feed comments train the rules by bipartite matching. Without
/// comment feeds, a known JavaScript widget's structure gives them, else a repeated comment
/// structure recognised on the pages. Returns the rules and the pages they were learned on.
async fn learn_comments(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    entries: &[FeedEntry],
    training: &[Training<'_>],
    article_rule: &Rule,
    widgets: &[&'static Widget],
) -> Result<Option<(CommentRules, u32)>> {
    let mut with_feed: Vec<(&Page, Vec<FeedComment>)> = Vec::new();
    for e in entries {
        let Some(feed_url) = e.comments_feed.clone() else {
            continue;
        };
        if e.comment_count == Some(0) {
            continue;
        }
        let f = fetcher.get(&feed_url).await;
        store.keep_fetched(blog.id, &f)?;
        let Some(r) = f.success() else {
            tracing::info!(post = %e.url, feed = %feed_url, "comment feed unavailable");
            continue;
        };
        let Ok(cf) = feed::parse(&r.body, &r.final_url) else {
            continue;
        };
        let comments = comments_of_feed(&cf);
        if comments.is_empty() {
            continue;
        }
        let write = comment_write(store, &e.url, &comments)?;
        store.save_comments(&write)?;
        if let Some(t) = training.iter().find(|t| t.entry.url == e.url) {
            let targets = comments
                .iter()
                .map(|c| FeedComment {
                    author: c.author.clone(),
                    published: c.published,
                    text: c.content_text.clone(),
                })
                .collect();
            with_feed.push((&t.page, targets));
        }
    }
    with_feed.sort_by_key(|(_, c)| std::cmp::Reverse(c.len()));
    with_feed.truncate(3);
    let fetched_at = training
        .first()
        .map(|t| t.response.fetched_at)
        .unwrap_or_else(Utc::now);
    let widget_rules = || {
        widgets.first().map(|w| CommentRules {
            content: w.content.to_string(),
            author: w.author.map(str::to_string),
            date: w.date.map(str::to_string),
            score: 0.0,
        })
    };
    let guessed = || {
        let with_article: Vec<(&Page, u32)> = training
            .iter()
            .filter_map(|t| Some((&t.page, article_rule.apply_first(&t.page)?)))
            .collect();
        crate::core::comments::guess(&with_article)
    };
    let n = with_feed.len() as u32;
    Ok(crate::core::comments::learn(&with_feed, fetched_at)
        .or_else(widget_rules)
        .or_else(guessed)
        .map(|rules| (rules, n)))
}
