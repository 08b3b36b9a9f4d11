//! NewCrawl(URL) → records (paper §4.2–4.4): learn the blog's rules from its feed, then crawl the
//! site through the frontier, recognise post pages by the learned URL pattern, extract and store
//! every post. Stateless: rules, pattern, frontier, responses and posts all live in the store, so
//! re-running it stores no duplicate and an interrupted crawl resumes where it stopped.

use super::frontier::{BreadthFirst, Frontier, KnnFrontier};
use super::links::{followable, site_of};
use crate::core::comments::{CommentRules, FeedComment};
use crate::core::extract::{extract, ExtractContext, RuleSet};
use crate::core::feed::{self, Feed, FeedEntry};
use crate::core::learn::{learn, Field, LearnedRule, Sample, Target};
use crate::core::meta::{blog_offset, learn_author, learn_date, MetaSample};
use crate::core::page::Page;
use crate::core::post_url::{canonical, comment_page_of, PostUrlPattern};
use crate::core::rules::Rule;
use crate::fetch::{self, Fetcher};
use crate::store::{
    Blog, Comment, Gap, NewPost, PageOutcome, Response, Store, StoredEntry, StoredRule,
};
use anyhow::{bail, Context, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use std::collections::HashMap;
use tokio::task::JoinSet;
use url::Url;

/// Attempts per URL when a host answers 429/503 (the last one gives up).
pub const MAX_ATTEMPTS: u32 = 4;

/// Knobs of one NewCrawl.
#[derive(Debug, Clone)]
pub struct CrawlOptions {
    /// Stop after this many processed frontier URLs (the crawl stays resumable).
    pub max_pages: u64,
    /// Requests in flight at once (across hosts; politeness bounds each host).
    pub concurrency: usize,
    /// Crawl order.
    pub frontier: FrontierKind,
    /// Neighbours of the kNN estimate.
    pub k: usize,
    /// Yield-based stop (kNN frontier only): after this many consecutive processed pages
    /// without a new post while the best queued estimate of L is below 0.5, the blog is
    /// considered completely crawled. 0 disables the stop.
    pub patience: u64,
    /// Most URLs followed per URL template (the path with digits generalised, query values
    /// dropped): bounds calendars and other generated URL spaces.
    pub max_per_template: usize,
    /// Set from outside (SIGTERM) to stop after the pages in flight are recorded; the crawl
    /// stays resumable.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The render stage (headless Chromium), for blogs that need JavaScript; launched on first
    /// use. `None`: blogs that need it fail with a clear error.
    pub renderer: Option<std::sync::Arc<crate::render::Renderer>>,
}

/// The crawl order of NewCrawl.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontierKind {
    /// Distance-weighted kNN estimate of post links (paper §4.3).
    Knn,
    /// Breadth-first.
    BreadthFirst,
}

impl Default for CrawlOptions {
    fn default() -> Self {
        CrawlOptions {
            max_pages: 10_000,
            concurrency: 4,
            frontier: FrontierKind::Knn,
            k: 5,
            patience: 1_000,
            max_per_template: 2_000,
            stop: None,
            renderer: None,
        }
    }
}

/// What a NewCrawl did.
#[derive(Debug, Clone, Default)]
pub struct CrawlSummary {
    /// URLs robots.txt forbade (not fetched).
    pub blocked: u64,
    /// Pages rendered in Chromium.
    pub rendered: u64,
    /// Links dropped by the trap bounds (URL template cap).
    pub trapped: u64,
    /// Post permalinks found in sitemaps.
    pub sitemap_posts: u64,
    /// Pages processed by this run when the last new post was found (fetches-to-complete).
    pub pages_at_last_post: u64,
    /// Why the crawl stopped.
    pub stop_reason: String,
    /// Pages fetched by this run (reused stored responses not counted).
    pub pages_fetched: u64,
    /// Posts of the blog in the archive after the run.
    pub posts: u64,
    /// Failed fetches of this run (network errors and HTTP ≥ 400).
    pub errors: u64,
    /// A few of those failures: (url, reason).
    pub error_samples: Vec<(String, String)>,
    /// The active rules.
    pub rules: Vec<StoredRule>,
    /// True when the frontier was exhausted (the blog is completely crawled).
    pub complete: bool,
}

/// Live counters for a progress display.
pub trait Progress {
    /// Called after every processed page.
    fn update(&self, pages: u64, posts: u64, errors: u64, queued: u64);
    /// Called with a phase message ("learning rules", …).
    fn phase(&self, message: &str);
}

pub(super) fn entry_of(e: &StoredEntry) -> FeedEntry {
    FeedEntry {
        url: e.url.clone(),
        title: e.title.clone(),
        authors: e.authors.clone(),
        published: e
            .published
            .as_deref()
            .and_then(|p| DateTime::parse_from_rfc3339(p).ok()),
        updated: e
            .updated
            .as_deref()
            .and_then(|p| DateTime::parse_from_rfc3339(p).ok()),
        comments_feed: e.comments_feed.clone(),
        comment_count: e.comment_count,
        content_html: e.content_html.clone(),
        summary_html: e.summary_html.clone(),
    }
}

pub(super) async fn fetch_all(
    fetcher: &Fetcher,
    urls: Vec<String>,
    concurrency: usize,
) -> Vec<(String, fetch::Fetched)> {
    fetch_all_if_changed(
        fetcher,
        urls.into_iter().map(|u| (u, None)).collect(),
        concurrency,
    )
    .await
}

/// GETs every URL, `concurrency` at a time, conditionally on its earlier response when one is
/// given (see [`Fetcher::get_if_changed`]). Results come in completion order.
pub(super) async fn fetch_all_if_changed(
    fetcher: &Fetcher,
    urls: Vec<(String, Option<Response>)>,
    concurrency: usize,
) -> Vec<(String, fetch::Fetched)> {
    let mut out = Vec::with_capacity(urls.len());
    let mut set = JoinSet::new();
    let mut pending = urls.into_iter();
    loop {
        while set.len() < concurrency.max(1) {
            let Some((u, previous)) = pending.next() else {
                break;
            };
            let f = fetcher.clone();
            set.spawn(async move {
                let r = f.get_if_changed(&u, previous.as_ref()).await;
                (u, r)
            });
        }
        match set.join_next().await {
            Some(Ok(r)) => out.push(r),
            Some(Err(e)) => tracing::error!(error = %e, "fetch task failed"),
            None => break,
        }
    }
    out
}

/// Learns and stores the blog's rules and post URL pattern from its feed and entry pages.
///
/// With `refresh_feed` the feed is fetched again first (NewCrawl); without, the stored entries
/// are used (UpdateCrawl relearning after template drift has just stored them).
pub(super) async fn learn_rules(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    opts: &CrawlOptions,
    refresh_feed: bool,
) -> Result<()> {
    if refresh_feed {
        refresh_entries(store, fetcher, blog).await?;
    }
    learn_from_entries(store, fetcher, blog, opts, None).await
}

/// A fresh copy of the feed, kept like every response; on failure the stored entries serve.
async fn refresh_entries(store: &mut Store, fetcher: &Fetcher, blog: &Blog) -> Result<()> {
    let f = fetcher.get(&blog.feed_url).await;
    match &f.response {
        Some(r) if r.status < 400 => {
            for hop in &f.hops {
                store.log_fetch(Some(blog.id), hop)?;
            }
            store.save_response(blog.id, r, &f.record)?;
            match feed::parse(&r.body, &r.final_url) {
                Ok(parsed) if !parsed.entries.is_empty() => {
                    store.save_entries(blog.id, &super::stored_entries(&parsed))?
                }
                Ok(_) => {
                    tracing::warn!(feed = %blog.feed_url, "feed has no entries now; using the stored ones")
                }
                Err(e) => {
                    tracing::warn!(feed = %blog.feed_url, error = %e, "feed no longer parses; using the stored entries")
                }
            }
        }
        _ => super::log_fetched(store, Some(blog.id), &f)?,
    }
    Ok(())
}

/// Learns from the stored feed entries (only those in `only`, when given) and their latest
/// stored pages, fetching entry pages not stored yet.
pub(super) async fn learn_from_entries(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    opts: &CrawlOptions,
    only: Option<&std::collections::HashSet<String>>,
) -> Result<()> {
    let mut entries = store.entries(blog.id)?;
    if let Some(only) = only {
        entries.retain(|e| only.contains(&e.url));
    }
    let feed = Feed {
        title: blog.title.clone(),
        kind: "stored",
        home: None,
        entries: entries.iter().map(entry_of).collect(),
    };
    let targets = feed::targets(&feed);
    // Entry pages: stored responses are reused, the rest fetched.
    let mut responses: HashMap<String, Response> = HashMap::new();
    let mut missing = Vec::new();
    for e in &entries {
        match store.latest_response(blog.id, &e.url)? {
            Some((_, r)) if r.status < 400 => {
                responses.insert(e.url.clone(), r);
            }
            _ => missing.push(e.url.clone()),
        }
    }
    for (u, f) in fetch_all(fetcher, missing, opts.concurrency).await {
        for hop in &f.hops {
            store.log_fetch(Some(blog.id), hop)?;
        }
        match f.response {
            Some(r) => {
                store.save_response(blog.id, &r, &f.record)?;
                if r.status < 400 && fetch::is_html(&r) {
                    responses.insert(u, r);
                }
            }
            None => store.log_fetch(Some(blog.id), &f.record)?,
        }
    }
    // The render stage (paper §4.1): decide whether this blog needs Chromium, and learn from
    // the pages as the decision will have them.
    let widgets = decide_rendering(store, blog, opts, &entries, &targets, &mut responses).await?;
    let mut pages = Vec::new();
    let mut urls = Vec::new();
    let mut meta_inputs = Vec::new();
    for (e, t) in entries.iter().zip(&targets) {
        let Some(r) = responses.get(&e.url) else {
            continue;
        };
        urls.push(Url::parse(&e.url)?);
        if let Ok(fin) = Url::parse(&r.final_url) {
            urls.push(fin);
        }
        pages.push((Page::parse(&fetch::decode(r)), t.clone()));
        meta_inputs.push((
            e.authors.clone(),
            e.published
                .as_deref()
                .and_then(|p| DateTime::parse_from_rfc3339(p).ok()),
            r.fetched_at,
        ));
    }
    let samples: Vec<Sample> = pages
        .iter()
        .map(|(p, t)| Sample {
            page: p,
            title: t.title.as_deref().map(|s| Target::new(s, false)),
            article: t.article.as_deref().map(|s| Target::new(s, t.summary)),
        })
        .collect();
    let learned = learn(&samples);
    if !learned
        .iter()
        .any(|r| r.field == crate::core::learn::Field::Article)
    {
        bail!(
            "could not learn an article rule for {}: {} of {} feed entry pages could be fetched and none matched its entry's text",
            blog.feed_url,
            pages.len(),
            entries.len()
        );
    }
    let pattern = PostUrlPattern::learn(&urls).context("no usable permalink in the feed")?;
    // Authors and dates (paper §3.5), scored by distance to each page's article node. Pages
    // whose entry names no author train on the authors the page itself declares.
    let article_rule = learned
        .iter()
        .find(|r| r.field == crate::core::learn::Field::Article)
        .map(|r| Rule::parse(&r.xpath))
        .transpose()?;
    let meta_samples: Vec<MetaSample> = pages
        .iter()
        .zip(&meta_inputs)
        .filter_map(|((p, _), (authors, published, fetched_at))| {
            let article = article_rule.as_ref()?.apply_first(p)?;
            let authors = if authors.is_empty() {
                crate::core::extract::page_authors(p)
            } else {
                authors.clone()
            };
            Some(MetaSample {
                page: p,
                article,
                authors,
                published: *published,
                fetched_at: *fetched_at,
            })
        })
        .collect();
    let mut learned: Vec<(LearnedRule, Option<String>)> =
        learned.into_iter().map(|r| (r, None)).collect();
    for r in learn_author(&meta_samples) {
        learned.push((r, None));
    }
    if let Some((r, format)) = learn_date(&meta_samples) {
        learned.push((r, Some(format)));
    }
    // Comments: every entry's comment feed is archived; the pages of the entries with the most
    // comments train the comment rules (paper §3.5).
    let mut training: Vec<(usize, Vec<FeedComment>)> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let Some(feed_url) = e.comments_feed.clone() else {
            continue;
        };
        if e.comment_count == Some(0) {
            continue;
        }
        let f = fetcher.get(&feed_url).await;
        super::log_fetched(store, Some(blog.id), &f)?;
        let Some(r) = f.response.filter(|r| r.status < 400) else {
            tracing::info!(post = %e.url, feed = %feed_url, "comment feed unavailable");
            continue;
        };
        let Ok(cf) = feed::parse(&r.body, &r.final_url) else {
            continue;
        };
        let comments = super::comments_of_feed(&cf);
        if comments.is_empty() {
            continue;
        }
        store.save_feed_comments(&e.url, &comments)?;
        // Index of this entry's page in `pages` (built from the entries that have a response).
        let page_idx = entries[..i]
            .iter()
            .filter(|x| responses.contains_key(&x.url))
            .count();
        {
            if responses.contains_key(&e.url) {
                let targets = comments
                    .iter()
                    .map(|c| FeedComment {
                        author: c.author.clone(),
                        published: c
                            .published
                            .as_deref()
                            .and_then(|p| DateTime::parse_from_rfc3339(p).ok()),
                        text: c.content_text.clone(),
                    })
                    .collect();
                training.push((page_idx, targets));
            }
        }
    }
    training.sort_by_key(|(_, c)| std::cmp::Reverse(c.len()));
    training.truncate(3);
    let comment_samples: Vec<(&Page, Vec<FeedComment>)> = training
        .iter()
        .map(|(i, c)| (&pages[*i].0, c.clone()))
        .collect();
    let fetched_at = meta_inputs.first().map(|m| m.2).unwrap_or_else(Utc::now);
    // Comment widgets have no comment feed: their known structure gives the rules.
    let widget_rules = widgets.first().map(|w| CommentRules {
        content: w.content.to_string(),
        author: w.author.map(str::to_string),
        date: w.date.map(str::to_string),
        score: 0.0,
    });
    let learned_comments = crate::core::comments::learn(&comment_samples, fetched_at)
        .or(widget_rules)
        .or_else(|| {
            // No comment feed to learn from: recognise a repeated comment structure on the pages.
            let with_article: Vec<(&Page, u32)> = pages
                .iter()
                .filter_map(|(p, _)| Some((p, article_rule.as_ref()?.apply_first(p)?)))
                .collect();
            crate::core::comments::guess(&with_article)
        });
    if let Some(cr) = learned_comments {
        let n = comment_samples.len() as u32;
        let mk = |field: Field, class: &str| LearnedRule {
            field,
            xpath: format!("//*[@class='{class}']"),
            score: cr.score,
            votes: n,
            samples: n,
        };
        learned.push((mk(Field::Comment, &cr.content), None));
        if let Some(a) = &cr.author {
            learned.push((mk(Field::CommentAuthor, a), None));
        }
        if let Some(d) = &cr.date {
            learned.push((mk(Field::CommentDate, d), None));
        }
    }
    let at = Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true);
    let rules: Vec<StoredRule> = learned
        .iter()
        .map(|(r, format)| StoredRule {
            field: r.field.as_str().into(),
            xpath: r.xpath.clone(),
            score: r.score,
            votes: r.votes,
            samples: r.samples,
            learned_at: at.clone(),
            format: format.clone(),
        })
        .collect();
    for r in &rules {
        tracing::info!(blog = %blog.feed_url, field = %r.field, xpath = %r.xpath, votes = r.votes, samples = r.samples, score = r.score, "learned rule");
    }
    store.save_rules(blog.id, &rules, &serde_json::to_string(&pattern)?)?;
    let start = blog.start_url.as_deref().unwrap_or(&blog.home_url);
    let mut seeds = vec![(canonical(&Url::parse(start)?).to_string(), 0)];
    seeds.extend(entries.iter().map(|e| (e.url.clone(), 1)));
    store.enqueue(blog.id, &seeds)?;
    Ok(())
}

/// Decides (once, in `auto`) what a blog renders, records it, and replaces the entry pages in
/// `responses` by their renderings when the blog renders. Returns the JavaScript comment widgets
/// found on the entry pages.
///
/// `auto`: when the raw entry pages lack their entries' text (median bigram containment below
/// 0.8) and the rendered ones have it, every page is rendered ("all"); when they have it but
/// carry a known comment widget, post pages are ("posts"); otherwise nothing is ("none").
async fn decide_rendering(
    store: &mut Store,
    blog: &Blog,
    opts: &CrawlOptions,
    entries: &[StoredEntry],
    targets: &[feed::Targets],
    responses: &mut HashMap<String, Response>,
) -> Result<Vec<&'static crate::render::widgets::Widget>> {
    use super::rendering::{containment, is_rendered, render_all};
    let raw: HashMap<&str, String> = responses
        .iter()
        .filter(|(_, r)| !is_rendered(r))
        .map(|(u, r)| {
            (
                u.as_str(),
                Page::parse(&fetch::decode(r)).text_of(0).to_string(),
            )
        })
        .collect();
    let mut widgets: Vec<&'static crate::render::widgets::Widget> = Vec::new();
    for r in responses.values() {
        for w in crate::render::widgets::detect(&fetch::decode(r)) {
            if !widgets.iter().any(|x| x.name == w.name) {
                widgets.push(w);
            }
        }
    }
    let median = |scores: &mut Vec<f64>| -> f64 {
        if scores.is_empty() {
            return 0.0;
        }
        scores.sort_by(|a, b| a.total_cmp(b));
        scores[scores.len() / 2]
    };
    let score_of = |texts: &HashMap<&str, String>| -> f64 {
        let mut v: Vec<f64> = entries
            .iter()
            .zip(targets)
            .filter_map(|(e, t)| {
                Some(containment(
                    t.article.as_deref()?,
                    texts.get(e.url.as_str())?,
                ))
            })
            .collect();
        median(&mut v)
    };
    let decided = match (blog.render.as_str(), blog.renders.as_deref()) {
        ("never", _) => Some((
            "none".to_string(),
            "rendering is off for this blog (--render never)".to_string(),
        )),
        ("always", _) => Some((
            "all".to_string(),
            "rendering is on for this blog (--render always)".to_string(),
        )),
        (_, Some(d)) => Some((
            d.to_string(),
            blog.render_reason.clone().unwrap_or_default(),
        )),
        _ => None,
    };
    let raw_score = score_of(&raw);
    let (renders, reason) = match decided {
        Some(d) => d,
        None if raw_score >= 0.8 && widgets.is_empty() => (
            "none".into(),
            format!("the feed's text is in the raw HTML (containment {raw_score:.2}) and no JavaScript comment widget is on post pages"),
        ),
        None if raw_score >= 0.8 => (
            "posts".into(),
            format!(
                "{} comments on post pages need JavaScript",
                widgets.iter().map(|w| w.name).collect::<Vec<_>>().join(", ")
            ),
        ),
        None => ("all".into(), format!("the feed's text is missing from the raw HTML (containment {raw_score:.2})")),
    };
    if renders == "none" {
        if blog.renders.is_none() {
            store.set_render_decision(blog.id, &renders, &reason)?;
            tracing::info!(blog = %blog.feed_url, %reason, "not rendering");
        }
        return Ok(widgets);
    }
    let Some(renderer) = opts.renderer.clone() else {
        anyhow::bail!(
            "{} needs JavaScript rendering ({reason}) but no renderer is configured",
            blog.feed_url
        );
    };
    let todo: Vec<(String, Response)> = responses
        .iter()
        .filter(|(_, r)| !is_rendered(r))
        .map(|(u, r)| (u.clone(), r.clone()))
        .collect();
    let rendered = render_all(&renderer, todo).await;
    let texts: HashMap<&str, String> = rendered
        .iter()
        .map(|(u, r)| {
            (
                u.as_str(),
                Page::parse(&fetch::decode(r)).text_of(0).to_string(),
            )
        })
        .collect();
    let rendered_score = score_of(&texts);
    if blog.renders.is_none() && blog.render == "auto" && renders == "all" && rendered_score < 0.8 {
        // Rendering did not bring the text either: no use paying for it.
        let reason = format!("the feed's text is missing from the raw HTML ({raw_score:.2}) and from the rendered DOM ({rendered_score:.2})");
        store.set_render_decision(blog.id, "none", &reason)?;
        tracing::warn!(blog = %blog.feed_url, %reason, "not rendering");
        return Ok(widgets);
    }
    if blog.renders.is_none() {
        store.set_render_decision(blog.id, &renders, &reason)?;
        tracing::info!(blog = %blog.feed_url, renders = %renders, %reason, raw = raw_score, rendered = rendered_score, "rendering in Chromium");
    }
    for (u, r) in rendered {
        store.keep_response(blog.id, &r)?;
        responses.insert(u, r);
    }
    Ok(widgets)
}

/// What processing one page produced.
#[derive(Default)]
pub(super) struct Processed {
    pub(super) post: Option<NewPost>,
    pub(super) links: Vec<(String, u32)>,
    pub(super) post_links: usize,
    pub(super) comments: Option<(String, Vec<Comment>)>,
}

fn comment_page_number(url: &Url) -> i64 {
    url.path_segments()
        .and_then(|mut s| {
            s.find_map(|seg| {
                seg.strip_prefix("comment-page-")
                    .and_then(|n| n.parse().ok())
            })
        })
        .or_else(|| {
            url.query_pairs()
                .find(|(k, _)| k == "cpage")
                .and_then(|(_, v)| v.parse().ok())
        })
        .unwrap_or(0)
}

pub(super) struct Context_ {
    rules: RuleSet,
    pub(super) comment_rules: Option<CommentRules>,
    offset: chrono::FixedOffset,
    pattern: PostUrlPattern,
    site: String,
    pub(super) entries: HashMap<String, StoredEntry>,
}

/// The blog's extraction context from the store: active rules, permalink pattern, zone offset
/// and feed entries. Returns it with the stored rules it was built from.
///
/// # Errors
/// No article rule stored (the blog was never learned), a stored rule or pattern is corrupt, or
/// the store failed.
pub(super) fn load_context(store: &Store, blog: &Blog) -> Result<(Context_, Vec<StoredRule>)> {
    let stored = store.rules(blog.id)?;
    let article = stored
        .iter()
        .find(|r| r.field == "article")
        .context("no article rule stored")?;
    let title = stored.iter().find(|r| r.field == "title");
    let pattern: PostUrlPattern =
        serde_json::from_str(blog.post_pattern.as_deref().unwrap_or("null"))
            .context("stored post pattern is corrupt")?;
    let ctx = Context_ {
        rules: RuleSet {
            article: Rule::parse(&article.xpath)?,
            title: title.map(|t| Rule::parse(&t.xpath)).transpose()?,
            exclude: stored
                .iter()
                .filter(|r| r.field == "article-exclude")
                .map(|r| Rule::parse(&r.xpath))
                .collect::<Result<_, _>>()?,
            author: stored
                .iter()
                .filter(|r| r.field == "author")
                .map(|r| Rule::parse(&r.xpath))
                .collect::<Result<_, _>>()?,
            date: stored
                .iter()
                .find(|r| r.field == "date")
                .map(|r| Rule::parse(&r.xpath).map(|x| (x, r.format.clone())))
                .transpose()?,
        },
        comment_rules: stored.iter().find(|r| r.field == "comment").and_then(|c| {
            let class = |f: &str| {
                stored
                    .iter()
                    .find(|r| r.field == f)
                    .and_then(|r| crate::core::comments::class_of(&r.xpath).map(str::to_string))
            };
            Some(CommentRules {
                content: crate::core::comments::class_of(&c.xpath)?.to_string(),
                author: class("comment-author"),
                date: class("comment-date"),
                score: c.score,
            })
        }),
        offset: blog_offset(store.entries(blog.id)?.iter().filter_map(|e| {
            e.published
                .as_deref()
                .and_then(|p| DateTime::parse_from_rfc3339(p).ok())
        }))
        .unwrap_or_else(|| chrono::FixedOffset::east_opt(0).expect("zero offset")),
        pattern: pattern.clone(),
        site: site_of(&Url::parse(&blog.home_url)?),
        entries: store
            .entries(blog.id)?
            .into_iter()
            .map(|e| (e.url.clone(), e))
            .collect(),
    };
    Ok((ctx, stored))
}

/// Parses and extracts one fetched page into the outcome to store. Synchronous: the parsed page
/// is `!Send` and never crosses an await.
pub(super) fn process(ctx: &Context_, url: &str, depth: u32, response: &Response) -> Processed {
    if response.status >= 400 || !fetch::is_html(response) {
        return Processed::default();
    }
    let base = Url::parse(&response.final_url)
        .or_else(|_| Url::parse(url))
        .expect("fetched URLs parse");
    let page = Page::parse(&fetch::decode(response));
    let links = followable(&page, &base, &ctx.site);
    let post_links = links.iter().filter(|l| ctx.pattern.is_post(l)).count();
    let url_parsed = Url::parse(url).expect("frontier URLs parse");
    let entry = ctx.entries.get(url);
    let mut post: Option<NewPost> = None;
    if entry.is_some() || ctx.pattern.is_post(&url_parsed) || ctx.pattern.is_post(&base) {
        let xctx = ExtractContext {
            offset: ctx.offset,
            fetched_at: response.fetched_at,
        };
        if let Some(x) = extract(&page, &ctx.rules, &xctx) {
            // The feed is the truth for its entries; the page fills in the rest.
            let mut gaps: Vec<Gap> = Vec::new();
            let authors = match entry {
                Some(e) if !e.authors.is_empty() => e.authors.clone(),
                _ => x.authors,
            };
            let published = entry
                .and_then(|e| e.published.clone())
                .or_else(|| x.published.map(|d| d.to_rfc3339()));
            for (field, reason) in x.gaps {
                let covered = match field.as_str() {
                    "author" => !authors.is_empty(),
                    "published" => published.is_some(),
                    _ => false,
                };
                if !covered {
                    gaps.push(Gap { field, reason });
                }
            }
            post = Some(NewPost {
                url: url.to_string(),
                title: x.title.or_else(|| entry.and_then(|e| e.title.clone())),
                authors,
                published,
                published_raw: x.published_raw,
                updated: entry
                    .and_then(|e| e.updated.clone())
                    .or_else(|| x.updated.map(|d| d.to_rfc3339())),
                content_html: x.content_html,
                content_text: x.content_text,
                gaps,
            });
        }
    }
    // Comments: on a post page, or on one of its comment pages (`comment-page-2/`, `?cpage=2`).
    let comments = ctx.comment_rules.as_ref().and_then(|rules| {
        let (owner, page_no) = match comment_page_of(&url_parsed) {
            Some(parent) => (parent.to_string(), comment_page_number(&url_parsed)),
            None if post.is_some() => (url.to_string(), 0),
            None => return None,
        };
        let found = crate::core::comments::extract(&page, rules, ctx.offset, response.fetched_at);
        let comments: Vec<Comment> = found
            .into_iter()
            .enumerate()
            .map(|(i, c)| Comment {
                id: c.key,
                author: c.author,
                published: c.published.map(|d| d.to_rfc3339()),
                published_raw: c.published_raw,
                content_html: c.content_html,
                content_text: c.content_text,
                parent: c.parent,
                source: "page".into(),
                position: page_no * 100_000 + i as i64,
            })
            .collect();
        (!comments.is_empty()).then_some((owner, comments))
    });
    // The feed declares comments the page did not yield: say so on the post.
    if let (Some(p), Some(e)) = (post.as_mut(), entry) {
        let declared = e.comment_count.unwrap_or(0);
        let found = comments.as_ref().map_or(0, |(_, c)| c.len());
        if declared > 0 && found == 0 {
            let why = if ctx.comment_rules.is_none() {
                format!("the feed declares {declared} comments but no comment rule could be learned (comment feeds missing or unmatched); only comment-feed copies are kept")
            } else {
                format!("the feed declares {declared} comments but the comment rules matched none on this page; only comment-feed copies are kept")
            };
            p.gaps.push(Gap {
                field: "comments".into(),
                reason: why,
            });
        }
    }
    Processed {
        post,
        links: links
            .into_iter()
            .map(|l| (l.to_string(), depth + 1))
            .collect(),
        post_links,
        comments,
    }
}

/// Post permalinks listed by the site's sitemaps (robots.txt `Sitemap:` lines, then
/// `/sitemap.xml` and `/sitemap_index.xml`), following sitemap indexes two levels deep and at
/// most 20 files. Every fetch is logged; a missing or broken sitemap is not an error.
async fn sitemap_posts(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    pattern: &PostUrlPattern,
) -> Result<Vec<String>> {
    let home = Url::parse(&blog.home_url)?;
    let mut hops = Vec::new();
    let host = fetcher.robots(&home, &mut hops).await;
    for h in &hops {
        store.log_fetch(Some(blog.id), h)?;
    }
    let mut queue: Vec<(String, u32)> = host
        .robots
        .get()
        .map(|r| r.sitemaps.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|u| (u, 0))
        .collect();
    for p in ["/sitemap.xml", "/sitemap_index.xml"] {
        let u = home.join(p)?.to_string();
        if !queue.iter().any(|(q, _)| *q == u) {
            queue.push((u, 0));
        }
    }
    let mut seen = std::collections::HashSet::new();
    let mut posts = Vec::new();
    let mut files = 0;
    while let Some((u, level)) = queue.pop() {
        if files >= 20 || !seen.insert(u.clone()) {
            continue;
        }
        files += 1;
        let f = fetcher.get(&u).await;
        super::log_fetched(store, Some(blog.id), &f)?;
        let Some(r) = f.response.filter(|r| r.status < 400) else {
            continue;
        };
        match crate::core::sitemap::parse(&r.body) {
            Ok(crate::core::sitemap::Sitemap::Urls(urls)) => {
                posts.extend(
                    urls.into_iter()
                        .filter_map(|u| Url::parse(&u).ok())
                        .filter(|u| pattern.is_post(u))
                        .map(|u| canonical(&u).to_string()),
                );
            }
            Ok(crate::core::sitemap::Sitemap::Index(more)) if level < 2 => {
                queue.extend(more.into_iter().map(|m| (m, level + 1)))
            }
            Ok(_) => {}
            Err(e) => tracing::info!(sitemap = %u, error = %e, "ignoring sitemap"),
        }
    }
    posts.sort();
    posts.dedup();
    Ok(posts)
}

/// The template of a URL for the trap bound: host, path with digit runs replaced by `0`, query
/// keys without values.
fn template(url: &str) -> String {
    let Ok(u) = Url::parse(url) else {
        return url.to_string();
    };
    let mut t = String::new();
    let mut digit = false;
    for c in u.path().chars() {
        if c.is_ascii_digit() {
            if !digit {
                t.push('0');
            }
            digit = true;
        } else {
            t.push(c);
            digit = false;
        }
    }
    let mut keys: Vec<String> = u.query_pairs().map(|(k, _)| k.into_owned()).collect();
    keys.sort();
    format!("{}{t}?{}", u.host_str().unwrap_or(""), keys.join("&"))
}

/// Runs NewCrawl for one blog until its frontier is exhausted, the yield-based stop fires, or
/// `opts.max_pages` frontier URLs have been processed.
///
/// # Errors
/// Rule learning failed (no feed entry page matched), or the store failed. Fetch errors are not
/// errors: they are logged, counted and the crawl goes on.
pub async fn new_crawl(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    opts: &CrawlOptions,
    progress: &dyn Progress,
) -> Result<CrawlSummary> {
    store.mark_crawl_started(blog.id)?;
    let blog = store
        .find_blog(&blog.feed_url)?
        .unwrap_or_else(|| blog.clone());
    let mut summary = CrawlSummary::default();
    if store.rules(blog.id)?.is_empty() || blog.post_pattern.is_none() {
        progress.phase("learning extraction rules from the feed");
        learn_rules(store, fetcher, &blog, opts, true).await?;
        let blog = store.find_blog(&blog.feed_url)?.context("blog vanished")?;
        let pattern: PostUrlPattern =
            serde_json::from_str(blog.post_pattern.as_deref().unwrap_or("null"))
                .context("stored post pattern is corrupt")?;
        progress.phase("reading sitemaps");
        let posts = sitemap_posts(store, fetcher, &blog, &pattern).await?;
        summary.sitemap_posts = posts.len() as u64;
        store.enqueue(
            blog.id,
            &posts.into_iter().map(|u| (u, 1)).collect::<Vec<_>>(),
        )?;
    }
    let blog = store.find_blog(&blog.feed_url)?.context("blog vanished")?;
    let (ctx, stored) = load_context(store, &blog)?;
    let pattern = ctx.pattern.clone();
    let mut frontier: Box<dyn Frontier> = match opts.frontier {
        FrontierKind::Knn => Box::new(KnnFrontier::new(pattern, opts.k)),
        FrontierKind::BreadthFirst => Box::new(BreadthFirst),
    };
    progress.phase("crawling");
    summary.rules = stored.clone();
    let mut templates: HashMap<String, usize> = HashMap::new();
    let mut posts_before = store.counts(blog.id)?.posts;
    let mut processed_this_run: u64 = 0;
    let mut since_new_post: u64 = 0;
    loop {
        if opts
            .stop
            .as_ref()
            .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
        {
            summary.stop_reason = "stopped on request (resumable)".into();
            break;
        }
        let processed = store.processed(blog.id)?;
        if processed >= opts.max_pages {
            tracing::warn!(blog = %blog.feed_url, max_pages = opts.max_pages, "page budget reached; run crawl again to continue");
            summary.stop_reason = format!("page budget of {} reached", opts.max_pages);
            break;
        }
        if opts.patience > 0
            && since_new_post >= opts.patience
            && frontier.best_estimate().is_some_and(|b| b < 0.5)
        {
            summary.complete = true;
            summary.stop_reason = format!(
                "no new post in the last {since_new_post} pages and no promising page left"
            );
            break;
        }
        let budget = (opts.max_pages - processed) as usize;
        let now = Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true);
        let batch = frontier.next(store, blog.id, (opts.concurrency * 4).min(budget), &now)?;
        if batch.is_empty() {
            // Only URLs waiting for a Retry-After remain: wait for the first (bounded), or finish.
            if let Some(at) = store.next_retry(blog.id)? {
                let wait = DateTime::parse_from_rfc3339(&at)
                    .map(|t| {
                        (t.with_timezone(&Utc) - Utc::now())
                            .num_milliseconds()
                            .max(100)
                    })
                    .unwrap_or(1000);
                tokio::time::sleep(std::time::Duration::from_millis(wait.min(600_000) as u64))
                    .await;
                continue;
            }
            summary.complete = true;
            summary.stop_reason = "frontier exhausted".into();
            break;
        }
        // Reuse responses already stored (entry pages fetched while learning, or a crash between
        // fetch and record); fetch the rest.
        let mut ready = Vec::new();
        let mut to_fetch = Vec::new();
        for (u, d) in &batch {
            match store.latest_response(blog.id, u)? {
                Some((id, r)) if r.status != 429 && r.status != 503 => {
                    ready.push((u.clone(), *d, Vec::new(), Some(r), Some(id), false, None))
                }
                _ => to_fetch.push(u.clone()),
            }
        }
        let depths: HashMap<String, u32> = batch.iter().cloned().collect();
        for (u, f) in fetch_all(fetcher, to_fetch, opts.concurrency).await {
            if !f.blocked {
                summary.pages_fetched += 1;
            }
            let mut fetches = f.hops;
            fetches.push(f.record);
            ready.push((
                u.clone(),
                depths[&u],
                fetches,
                f.response,
                None,
                f.blocked,
                f.retry_after,
            ));
        }
        // The render stage: pages of a blog that needs JavaScript go through Chromium (stored
        // renderings are reused like any stored response).
        let mut renderings = HashMap::new();
        let mut unrendered: std::collections::HashSet<String> = Default::default();
        if let (Some(renderer), Some(renders)) = (&opts.renderer, blog.renders.as_deref()) {
            let todo: Vec<(String, Response)> = ready
                .iter()
                .filter_map(|(u, _, _, r, _, blocked, retry)| {
                    let r = r.as_ref()?;
                    let is_post = Url::parse(u).is_ok_and(|x| ctx.pattern.is_post(&x));
                    (!blocked
                        && retry.is_none()
                        && r.status < 400
                        && fetch::is_html(r)
                        && !super::rendering::is_rendered(r)
                        && super::rendering::wants(Some(renders), is_post))
                    .then(|| (u.clone(), r.clone()))
                })
                .collect();
            if !todo.is_empty() {
                unrendered = todo.iter().map(|(u, _)| u.clone()).collect();
                renderings = super::rendering::render_all(renderer, todo).await;
                summary.rendered += renderings.len() as u64;
                unrendered.retain(|u| !renderings.contains_key(u));
            }
        }
        for (u, depth, fetches, response, reused, blocked, retry_after) in ready {
            let rendered = renderings.remove(&u);
            let record = fetches.last();
            let mut state = "done";
            let mut retry_at = None;
            if blocked {
                summary.blocked += 1;
                state = "blocked";
            } else if let Some(pause) = retry_after {
                if store.attempts(blog.id, &u)? + 1 < MAX_ATTEMPTS {
                    state = "queued";
                    retry_at = Some(
                        (Utc::now() + chrono::Duration::from_std(pause).unwrap_or_default())
                            .to_rfc3339_opts(SecondsFormat::Secs, true),
                    );
                } else {
                    state = "failed";
                }
            } else if record
                .is_some_and(|r| r.error.is_some() || r.status.is_some_and(|s| s >= 400))
                || response.is_none()
            {
                state = "failed";
            }
            // A page of a blog rendered throughout that could not be rendered (twice) fails:
            // its raw HTML lacks the content. Comment-widget blogs keep the raw page's post
            // and note the missing comments.
            let render_failed = unrendered.contains(&u);
            if render_failed && state == "done" && blog.renders.as_deref() == Some("all") {
                state = "failed";
            }
            if state == "failed" {
                summary.errors += 1;
                if summary.error_samples.len() < 10 {
                    let why = if render_failed {
                        "rendering in Chromium failed twice (see the log)".to_string()
                    } else {
                        record
                            .and_then(|r| r.error.clone().or(r.status.map(|s| format!("HTTP {s}"))))
                            .unwrap_or_default()
                    };
                    summary.error_samples.push((u.clone(), why));
                }
            }
            let Processed {
                mut post,
                mut links,
                post_links,
                comments,
            } = match (rendered.as_ref().or(response.as_ref()), state) {
                // A bug on one page must not end the crawl: the page is recorded as failed.
                (Some(r), "done") => {
                    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        process(&ctx, &u, depth, r)
                    })) {
                        Ok(out) => out,
                        Err(_) => {
                            state = "failed";
                            summary.errors += 1;
                            summary.error_samples.push((
                                u.clone(),
                                "internal error while extracting this page (see the log)".into(),
                            ));
                            Processed::default()
                        }
                    }
                }
                _ => Processed::default(),
            };
            if let (true, Some(p)) = (render_failed, post.as_mut()) {
                p.gaps.push(Gap {
                    field: "comments".into(),
                    reason: "the page could not be rendered in Chromium; comments shown by JavaScript are missing (see the log)".into(),
                });
            }
            links.retain(|(l, _)| {
                let n = templates.entry(template(l)).or_insert(0);
                *n += 1;
                *n <= opts.max_per_template
            });
            let parsed = state == "done" && response.is_some();
            if parsed {
                frontier.observe(&u, post_links);
            }
            let keep = if reused.is_some() || state == "queued" {
                None
            } else {
                response
            };
            store.record_page(&PageOutcome {
                blog_id: blog.id,
                url: u,
                fetches,
                response: keep,
                rendered,
                reused_response: reused,
                post,
                links,
                post_links: parsed.then_some(post_links as u32),
                state,
                retry_at,
                comments,
                gone: false,
            })?;
            processed_this_run += 1;
            let c = store.counts(blog.id)?;
            if c.posts > posts_before {
                posts_before = c.posts;
                since_new_post = 0;
                summary.pages_at_last_post = processed_this_run;
            } else {
                since_new_post += 1;
            }
            progress.update(summary.pages_fetched, c.posts, summary.errors, c.queued);
        }
    }
    summary.trapped = templates
        .values()
        .map(|&n| n.saturating_sub(opts.max_per_template) as u64)
        .sum();
    if summary.complete {
        store.mark_crawled(blog.id)?;
    }
    summary.posts = store.counts(blog.id)?.posts;
    Ok(summary)
}
