//! Comments at learning time (paper §3.5, issue 41): the comment rules, learned from the best
//! evidence the blog gives (its comment feeds; else its comment widget's own JSON, read from the
//! renderings that fetched it and matched against their DOM; else a repeated comment structure
//! on its pages), and whether its post pages must be rendered for their comments, decided from
//! the blog's own pages, never from a list of widget names:
//!
//! - comments the learned rules find in the raw entry pages: never rendered for them;
//! - otherwise a few entry pages (those declaring the most comments first) are rendered once, a
//!   probe: JSON the page fetched holding comments the rendered page shows, or comment blocks
//!   only the rendered page has, or a comment count the feed or page declares while the raw
//!   HTML holds none, decide for rendering; nothing at all, against.
//!
//! `archive status` shows which evidence decided (the blog's render reason).

use super::page_comments::{comment_write, comments_of_feed};
use super::rendering;
use super::traffic::BrowserTraffic;
use super::training::Pair;
use super::CrawlOptions;
use crate::core::comment_data::{self, DataResponse, DataShape, Sample};
use crate::core::comments::{self, CommentRules, FeedComment, Guess};
use crate::core::data_template::DataTemplate;
use crate::core::feed::{self, FeedEntry};
use crate::core::page::Page;
use crate::core::rules::{Field, LearnedRule, Rule};
use crate::fetch::{self, Fetcher, Resource, Response};
use crate::render::Hints;
use crate::store::{Blog, RenderMode, Renders, Store};
use anyhow::Result;
use chrono::{DateTime, FixedOffset, Utc};
use std::collections::HashMap;
use std::sync::Arc;

/// Entry pages rendered, at most, to look for comments drawn by script.
pub const PROBE_PAGES: usize = 3;

/// What learning found of a blog's comments.
#[derive(Debug, Default)]
pub(super) struct Learned {
    /// The comment rules and the number of pages they were learned on.
    pub(super) rules: Option<(CommentRules, u32)>,
    /// The comment widget's data: where to ask it for any post, and where its comments are.
    pub(super) data: Option<(DataTemplate, DataShape)>,
}

impl Learned {
    /// The rules to store: content, author and date by class, and the widget's data.
    pub(super) fn rules(&self) -> Vec<(LearnedRule, Option<String>)> {
        let mut learned = Vec::new();
        if let Some((cr, n)) = &self.rules {
            let rule = |field: Field, class: &str| LearnedRule {
                field,
                xpath: format!("//*[@class='{class}']"),
                score: cr.score,
                votes: *n,
                samples: *n,
            };
            learned.push((rule(Field::Comment, &cr.content), None));
            if let Some(a) = &cr.author {
                learned.push((rule(Field::CommentAuthor, a), None));
            }
            if let Some(d) = &cr.date {
                learned.push((rule(Field::CommentDate, d), None));
            }
        }
        if let Some((template, shape)) = &self.data {
            let n = self.rules.as_ref().map_or(1, |(_, n)| *n);
            learned.push((
                LearnedRule {
                    field: Field::CommentData,
                    xpath: template.0.clone(),
                    score: 1.0,
                    votes: n,
                    samples: n,
                },
                serde_json::to_string(shape).ok(),
            ));
        }
        learned
    }
}

/// The comment feeds of the sampled entries (RSS `wfw:commentRss`, Atom `replies`), fetched,
/// kept and their comments archived (they give way to the page's copies later). Returns the
/// comments of each entry that has some, as training targets.
///
/// # Errors
/// Only when the store fails.
pub(super) async fn comment_feeds(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    sample: &[&FeedEntry],
) -> Result<HashMap<String, Vec<FeedComment>>> {
    let mut out = HashMap::new();
    for e in sample {
        let Some(feed_url) = e.comments_feed.clone() else {
            continue;
        };
        if e.comment_count == Some(0) {
            continue;
        }
        let f = fetcher.get(&feed_url, Resource::Feed).await;
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
        let targets = comments
            .iter()
            .map(|c| FeedComment {
                author: c.author.clone(),
                published: c.published,
                text: c.content_text.clone(),
            })
            .collect();
        out.insert(e.url.clone(), targets);
    }
    Ok(out)
}

/// The targets of a page's widget data: its comments as `shape` reads them from every JSON
/// response the page's rendering carries, each comment once.
fn data_targets(data: &[DataResponse], shape: &DataShape) -> Vec<FeedComment> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for r in data {
        for i in shape.items(&r.json) {
            let key = i.id.clone().unwrap_or_else(|| i.text.clone());
            if seen.insert(key) {
                out.push(FeedComment {
                    author: i.author,
                    published: i.published,
                    text: i.text,
                });
            }
        }
    }
    out
}

/// The template of the widget's data from the pages that fetched it: for each page, the first
/// JSON response holding the shape's list whose address carries the page's identity; the
/// template most pages agree on.
fn learn_template(pages: &[(Page, Response)], shape: &DataShape) -> Option<DataTemplate> {
    let mut votes: Vec<(DataTemplate, usize)> = Vec::new();
    // Each page's first response holding the list: the address its widget asked it from.
    let asked: Vec<(String, &Response)> = pages
        .iter()
        .filter_map(|(page, r)| {
            comment_data::responses(page)
                .into_iter()
                .find(|d| !shape.items(&d.json).is_empty())
                .map(|d| (d.url, r))
        })
        .collect();
    for (url, r) in &asked {
        let found =
            DataTemplate::learn(url, &r.final_url).or_else(|| DataTemplate::learn(url, &r.url));
        if let Some(t) = found {
            match votes.iter_mut().find(|(x, _)| *x == t) {
                Some(v) => v.1 += 1,
                None => votes.push((t, 1)),
            }
        }
    }
    if let Some((t, _)) = votes.into_iter().max_by_key(|(_, n)| *n) {
        return Some(t);
    }
    // No form of the posts' addresses: a token each post's own page holds.
    // The pages as the crawl will read them, without the data the renderings carry.
    let htmls: Vec<String> = asked
        .iter()
        .map(|(_, r)| {
            let mut html = fetch::decode(r);
            let embedded = format!(
                "<script type=\"application/json\" {}=",
                comment_data::DATA_ATTR
            );
            if let Some(at) = html.find(&embedded) {
                html.truncate(at);
            }
            html
        })
        .collect();
    let samples: Vec<(&str, &str)> = asked
        .iter()
        .zip(&htmls)
        .map(|((u, _), h)| (u.as_str(), h.as_str()))
        .collect();
    DataTemplate::learn_from_pages(&samples)
}

/// Comment rules (paper §3.5) from the best evidence: the pages of the (at most three)
/// entries with the most feed comments, by bipartite matching against their comment feeds;
/// else the JSON their renderings fetched (a widget's own data), matched the same way; else a
/// repeated comment structure recognised on the pages (`guess`). The widget's data template
/// and shape are learned whenever rendered entry pages carry it.
///
/// # Errors
/// Only when the store fails.
pub(super) fn learn(
    store: &Store,
    blog: &Blog,
    pairs: &[Pair<'_>],
    feed_comments: &HashMap<String, Vec<FeedComment>>,
    fetched_at: DateTime<Utc>,
    article: &Rule,
) -> Result<Learned> {
    let mut with_feed: Vec<(&Pair<'_>, &Vec<FeedComment>)> = pairs
        .iter()
        .filter_map(|p| Some((p, feed_comments.get(&p.entry.url)?)))
        .collect();
    with_feed.sort_by_key(|(_, c)| std::cmp::Reverse(c.len()));
    with_feed.truncate(3);
    let mut pages = Vec::new();
    for (p, comments) in &with_feed {
        if let Some((page, _)) = p.page(store, blog)? {
            pages.push((page, (*comments).clone()));
        }
    }
    let samples: Vec<(&Page, Vec<FeedComment>)> =
        pages.iter().map(|(p, c)| (p, c.clone())).collect();
    let from_feeds = comments::learn(&samples, fetched_at).map(|r| (r, samples.len() as u32));
    let data = learn_data(store, blog, pairs, fetched_at)?;
    let mut guess = Guess::default();
    if from_feeds.is_none() && data.as_ref().is_none_or(|d| d.rules.is_none()) {
        for p in pairs {
            if let Some((page, _)) = p.page(store, blog)? {
                if let Some(a) = article.apply_first(&page) {
                    guess.add(&page, a);
                }
            }
        }
    }
    let rules = from_feeds
        .or_else(|| data.as_ref().and_then(|d| d.rules.clone()))
        .or_else(|| guess.finish().map(|r| (r, 0)));
    Ok(Learned {
        rules,
        data: data.map(|d| (d.template, d.shape)),
    })
}

/// What the entry pages' widget data teaches.
struct DataLearned {
    template: DataTemplate,
    shape: DataShape,
    rules: Option<(CommentRules, u32)>,
}

/// The widget's data from the sampled entry pages whose stored page is a rendering carrying
/// JSON: its shape, template, and the DOM's comment rules matched against its comments.
fn learn_data(
    store: &Store,
    blog: &Blog,
    pairs: &[Pair<'_>],
    fetched_at: DateTime<Utc>,
) -> Result<Option<DataLearned>> {
    let mut pages = Vec::new();
    for p in pairs {
        if let Some((page, r)) = p.page(store, blog)? {
            if r.is_rendered() && !comment_data::responses(&page).is_empty() {
                pages.push((page, r));
            }
        }
    }
    if pages.is_empty() {
        return Ok(None);
    }
    let data: Vec<Vec<DataResponse>> = pages
        .iter()
        .map(|(p, _)| comment_data::responses(p))
        .collect();
    let samples: Vec<Sample<'_>> = pages
        .iter()
        .zip(&data)
        .map(|((page, _), data)| Sample { page, data })
        .collect();
    let Some(shape) = comment_data::learn_shape(&samples) else {
        return Ok(None);
    };
    let template = learn_template(&pages, &shape).unwrap_or_else(|| {
        // Asked by an id found only in another answer (a thread's number): every post page is
        // rendered, and its data read from the rendering.
        tracing::info!(blog = %blog.feed_url, "the comment widget's data carries no post's address: it is read from renderings only");
        DataTemplate(String::new())
    });
    // The pages with the most comments train the DOM's rules.
    let mut trained: Vec<(&Page, Vec<FeedComment>)> = pages
        .iter()
        .zip(&data)
        .map(|((page, _), d)| (page, data_targets(d, &shape)))
        .filter(|(_, t)| !t.is_empty())
        .collect();
    trained.sort_by_key(|(_, t)| std::cmp::Reverse(t.len()));
    trained.truncate(3);
    let rules = comments::learn(&trained, fetched_at).map(|r| (r, trained.len() as u32));
    tracing::info!(blog = %blog.feed_url, template = %template.0, ?shape, rules = ?rules, "comment widget data learned");
    Ok(Some(DataLearned {
        template,
        shape,
        rules,
    }))
}

/// How many comments `rules` find on the sampled entry pages as stored (raw, until a decision
/// to render is taken).
fn comments_in(
    store: &Store,
    blog: &Blog,
    pairs: &[Pair<'_>],
    rules: &CommentRules,
) -> Result<usize> {
    let offset = FixedOffset::east_opt(0).expect("zero offset");
    let mut n = 0;
    for p in pairs {
        if let Some((page, r)) = p.page(store, blog)? {
            n += comments::extract(&page, rules, offset, r.fetched_at).len();
        }
    }
    Ok(n)
}

/// The comment count each entry declares: its feed's (`slash:comments`, `thr:total`), else its
/// page's ("12 comments" near the article, `article` the learned article rule).
fn declared(store: &Store, blog: &Blog, p: &Pair<'_>, article: &Rule) -> Result<u32> {
    if let Some(n) = p.entry.comment_count {
        return Ok(n);
    }
    Ok(p.page(store, blog)?
        .and_then(|(page, _)| {
            let a = article.apply_first(&page);
            crate::core::listing::declared_comments(&page, a)
        })
        .unwrap_or(0))
}

/// Whether any sampled entry page, as served, runs a script: a `<script>` with a source or
/// code, other than data (JSON, JSON-LD, templates).
fn runs_scripts(store: &Store, blog: &Blog, pairs: &[Pair<'_>]) -> Result<bool> {
    for p in pairs {
        let Some((page, _)) = p.page(store, blog)? else {
            continue;
        };
        let runs = page.elements.iter().enumerate().any(|(i, e)| {
            let i = i as u32;
            e.name == "script"
                && page.attr(i, "type").is_none_or(|t| {
                    let t = t.trim().to_ascii_lowercase();
                    t.is_empty() || t.contains("javascript") || t == "module"
                })
                && (page.attr(i, "src").is_some()
                    || page.element_ref(i).text().any(|t| !t.trim().is_empty()))
        });
        if runs {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Decides, once, whether the post pages of a blog whose text is in its raw HTML are rendered
/// for their comments ([`Renders::Posts`] or [`Renders::Nothing`]), and records it with the
/// evidence that decided. When they are, the probe's renderings are stored as the entry pages'
/// (learning reads them next). True when it was decided now to render them: the entry pages'
/// renderings are stored, and the comments are to be learned again from them.
///
/// # Errors
/// The store failed.
pub(super) async fn decide(
    store: &mut Store,
    blog: &Blog,
    opts: &CrawlOptions,
    traffic: &Arc<BrowserTraffic>,
    pairs: &[Pair<'_>],
    article: &Rule,
    learned: &Learned,
) -> Result<bool> {
    let blog_now = store.blog(blog.id)?.unwrap_or_else(|| blog.clone());
    if blog_now.renders.is_some() || blog_now.render != RenderMode::Auto {
        return Ok(false);
    }
    let decide = |store: &mut Store, renders: Renders, reason: String| -> Result<bool> {
        tracing::info!(blog = %blog.feed_url, %renders, %reason, "render decision");
        store.set_render_decision(blog.id, renders, &reason)?;
        Ok(false)
    };
    if let Some((rules, _)) = &learned.rules {
        let n = comments_in(store, blog, pairs, rules)?;
        if n > 0 {
            return decide(
                store,
                Renders::Nothing,
                format!(
                    "comments are in the raw HTML ({n} on the {} sampled entry pages)",
                    pairs.len()
                ),
            );
        }
    }
    let mut counted = Vec::new();
    for p in pairs {
        counted.push((declared(store, blog, p, article)?, p));
    }
    let declared_total: u32 = counted.iter().map(|(n, _)| n).sum();
    // The pages declaring the most comments first; otherwise the sample's own spread order.
    counted.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
    let Some(renderer) = opts.renderer.clone() else {
        return decide(
            store,
            Renders::Nothing,
            "no renderer: comments drawn by script were not looked for".into(),
        );
    };
    if !runs_scripts(store, blog, pairs)? {
        return decide(
            store,
            Renders::Nothing,
            "no comments in the raw HTML, and the entry pages run no script that could draw some"
                .into(),
        );
    }
    // One page first; more only when it shows comments drawn by script (to learn from) or the
    // blog declares comments the first did not show.
    let mut queue = Vec::new();
    for (_, p) in counted.iter().take(PROBE_PAGES) {
        if let Some(s) = store.latest_response(blog.id, &p.entry.url)? {
            queue.push((p.entry.url.clone(), s.response));
        }
    }
    let rest = queue.split_off(queue.len().min(1));
    let hints = Hints::default();
    let mut rendered =
        rendering::render_all(&renderer, traffic, store, blog.id, queue, &hints).await?;
    let mut evidence = probe_evidence(&rendered, learned, article, declared_total);
    if (evidence.is_some() || declared_total > 0) && !rest.is_empty() {
        rendered
            .extend(rendering::render_all(&renderer, traffic, store, blog.id, rest, &hints).await?);
        evidence = probe_evidence(&rendered, learned, article, declared_total);
    }
    let probed = rendered.len();
    if probed == 0 {
        return decide(
            store,
            Renders::Nothing,
            "the entry pages could not be rendered to look for comments drawn by script (see the log)".into(),
        );
    }
    let Some(reason) = evidence else {
        return decide(
            store,
            Renders::Nothing,
            format!("no comments: none in the raw HTML, none declared, and none appeared when {probed} entry page{} rendered", if probed == 1 { " was" } else { "s were" }),
        );
    };
    for r in rendered.values() {
        store.keep_response(blog.id, r)?;
    }
    decide(store, Renders::Posts, reason)?;
    Ok(true)
}

/// Why the probe's renderings say the post pages need rendering, if they do.
fn probe_evidence(
    rendered: &HashMap<String, Response>,
    learned: &Learned,
    article: &Rule,
    declared: u32,
) -> Option<String> {
    let pages: Vec<(Page, &Response)> = rendered
        .values()
        .map(|r| (Page::parse(&fetch::decode(r)), r))
        .collect();
    let data: Vec<Vec<DataResponse>> = pages
        .iter()
        .map(|(p, _)| comment_data::responses(p))
        .collect();
    let samples: Vec<Sample<'_>> = pages
        .iter()
        .zip(&data)
        .map(|((page, _), data)| Sample { page, data })
        .collect();
    if let Some(shape) = comment_data::learn_shape(&samples) {
        let n: usize = data.iter().map(|d| data_targets(d, &shape).len()).sum();
        let from = data
            .iter()
            .flatten()
            .find(|d| !shape.items(&d.json).is_empty())
            .map(|d| d.url.clone())
            .unwrap_or_default();
        return Some(format!(
            "comments drawn by script: the rendered entry pages fetched {n} comments as JSON ({from}) and show them"
        ));
    }
    let offset = FixedOffset::east_opt(0).expect("zero offset");
    if let Some((rules, _)) = &learned.rules {
        let n: usize = pages
            .iter()
            .map(|(p, r)| comments::extract(p, rules, offset, r.fetched_at).len())
            .sum();
        if n > 0 {
            return Some(format!(
                "comments drawn by script: {n} comments appear on the rendered entry pages, none in their raw HTML"
            ));
        }
    }
    let guessed: Vec<(&Page, u32)> = pages
        .iter()
        .filter_map(|(p, _)| Some((p, article.apply_first(p)?)))
        .collect();
    if let Some(rules) = comments::guess(&guessed) {
        let n: usize = pages
            .iter()
            .map(|(p, r)| comments::extract(p, &rules, offset, r.fetched_at).len())
            .sum();
        if n > 0 {
            return Some(format!(
                "comments drawn by script: {n} comment blocks appear on the rendered entry pages, none in their raw HTML"
            ));
        }
    }
    (declared > 0).then(|| {
        format!("the feed or the entry pages declare {declared} comments, none of them in the raw HTML or on the rendered pages: post pages are rendered, and what stays missing is reported (archive coverage)")
    })
}
