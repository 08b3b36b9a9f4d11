//! NewCrawl(URL) → records (paper §4.2–4.4): learn the blog's rules from its feed, then crawl the
//! site through the frontier, recognise post pages by the learned URL pattern, extract and store
//! every post. Stateless: rules, pattern, frontier, responses and posts all live in the store, so
//! re-running it stores no duplicate and an interrupted crawl resumes where it stopped.

use super::frontier::Frontier;
use super::links::{followable, site_of};
use crate::core::extract::{extract, RuleSet};
use crate::core::feed::{self, Feed, FeedEntry};
use crate::core::learn::{learn, Sample, Target};
use crate::core::page::Page;
use crate::core::post_url::{canonical, PostUrlPattern};
use crate::core::rules::Rule;
use crate::fetch::{self, Fetcher};
use crate::store::{Blog, NewPost, PageOutcome, Response, Store, StoredEntry, StoredRule};
use anyhow::{bail, Context, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use std::collections::HashMap;
use tokio::task::JoinSet;
use url::Url;

/// Knobs of one NewCrawl.
#[derive(Debug, Clone)]
pub struct CrawlOptions {
    /// Stop after this many processed frontier URLs (the crawl stays resumable).
    pub max_pages: u64,
    /// Requests in flight at once.
    pub concurrency: usize,
}

/// What a NewCrawl did.
#[derive(Debug, Clone, Default)]
pub struct CrawlSummary {
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

fn entry_of(e: &StoredEntry) -> FeedEntry {
    FeedEntry {
        url: e.url.clone(),
        title: e.title.clone(),
        authors: e.authors.clone(),
        published: e
            .published
            .as_deref()
            .and_then(|p| DateTime::parse_from_rfc3339(p).ok()),
        content_html: e.content_html.clone(),
        summary_html: e.summary_html.clone(),
    }
}

/// Normalises a page-declared date to RFC 3339, if it parses.
fn rfc3339(raw: &str) -> Option<String> {
    let raw = raw.trim();
    if let Ok(d) = DateTime::parse_from_rfc3339(raw) {
        return Some(d.to_rfc3339());
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%d %H:%M:%S%.f%z",
        "%Y-%m-%dT%H:%M%z",
    ] {
        if let Ok(d) = DateTime::parse_from_str(raw, f) {
            return Some(d.to_rfc3339());
        }
    }
    for f in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M"] {
        if let Ok(d) = chrono::NaiveDateTime::parse_from_str(raw, f) {
            return Some(d.and_utc().to_rfc3339_opts(SecondsFormat::Secs, true));
        }
    }
    chrono::NaiveDate::parse_from_str(raw.get(..10)?, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|d| d.and_utc().to_rfc3339_opts(SecondsFormat::Secs, true))
}

async fn fetch_all(
    fetcher: &Fetcher,
    urls: Vec<String>,
    concurrency: usize,
) -> Vec<(String, fetch::Fetched)> {
    let mut out = Vec::with_capacity(urls.len());
    let mut set = JoinSet::new();
    let mut pending = urls.into_iter();
    loop {
        while set.len() < concurrency.max(1) {
            let Some(u) = pending.next() else { break };
            let f = fetcher.clone();
            set.spawn(async move {
                let r = f.get(&u).await;
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
async fn learn_rules(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    opts: &CrawlOptions,
) -> Result<()> {
    // A fresh copy of the feed, kept like every response; on failure the stored entries serve.
    let f = fetcher.get(&blog.feed_url).await;
    match &f.response {
        Some(r) if r.status < 400 => {
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
        _ => store.log_fetch(Some(blog.id), &f.record)?,
    }
    let entries = store.entries(blog.id)?;
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
    let mut pages = Vec::new();
    let mut urls = Vec::new();
    for (e, t) in entries.iter().zip(&targets) {
        let Some(r) = responses.get(&e.url) else {
            continue;
        };
        urls.push(Url::parse(&e.url)?);
        if let Ok(fin) = Url::parse(&r.final_url) {
            urls.push(fin);
        }
        pages.push((Page::parse(&fetch::decode(r)), t.clone()));
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
    let at = Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true);
    let rules: Vec<StoredRule> = learned
        .iter()
        .map(|r| StoredRule {
            field: r.field.as_str().into(),
            xpath: r.xpath.clone(),
            score: r.score,
            votes: r.votes,
            samples: r.samples,
            learned_at: at.clone(),
        })
        .collect();
    for r in &rules {
        tracing::info!(blog = %blog.feed_url, field = %r.field, xpath = %r.xpath, votes = r.votes, samples = r.samples, score = r.score, "learned rule");
    }
    store.save_rules(blog.id, &rules, &serde_json::to_string(&pattern)?)?;
    let mut seeds = vec![(canonical(&Url::parse(&blog.home_url)?).to_string(), 0)];
    seeds.extend(entries.iter().map(|e| (e.url.clone(), 1)));
    store.enqueue(blog.id, &seeds)?;
    Ok(())
}

struct Context_ {
    rules: RuleSet,
    pattern: PostUrlPattern,
    site: String,
    entries: HashMap<String, StoredEntry>,
}

/// Parses and extracts one fetched page into the outcome to store. Synchronous: the parsed page
/// is `!Send` and never crosses an await.
fn process(
    ctx: &Context_,
    blog_id: i64,
    url: &str,
    depth: u32,
    response: &Response,
) -> (Option<NewPost>, Vec<(String, u32)>, usize) {
    if response.status >= 400 || !fetch::is_html(response) {
        return (None, Vec::new(), 0);
    }
    let base = Url::parse(&response.final_url)
        .or_else(|_| Url::parse(url))
        .expect("fetched URLs parse");
    let page = Page::parse(&fetch::decode(response));
    let links = followable(&page, &base, &ctx.site);
    let post_links = links.iter().filter(|l| ctx.pattern.is_post(l)).count();
    let url_parsed = Url::parse(url).expect("frontier URLs parse");
    let entry = ctx.entries.get(url);
    let mut post = None;
    if entry.is_some() || ctx.pattern.is_post(&url_parsed) || ctx.pattern.is_post(&base) {
        if let Some(x) = extract(&page, &ctx.rules) {
            let authors = match entry {
                Some(e) if !e.authors.is_empty() => e.authors.clone(),
                _ => x.authors,
            };
            let published = entry
                .and_then(|e| e.published.clone())
                .or_else(|| x.published.as_deref().and_then(rfc3339));
            post = Some(NewPost {
                url: url.to_string(),
                title: x.title.or_else(|| entry.and_then(|e| e.title.clone())),
                authors,
                published,
                content_html: x.content_html,
                content_text: x.content_text,
            });
        }
    }
    let _ = blog_id;
    (
        post,
        links
            .into_iter()
            .map(|l| (l.to_string(), depth + 1))
            .collect(),
        post_links,
    )
}

/// Runs NewCrawl for one blog until its frontier is empty or `opts.max_pages` frontier URLs have
/// been processed.
///
/// # Errors
/// Rule learning failed (no feed entry page matched), or the store failed. Fetch errors are not
/// errors: they are logged, counted and the crawl goes on.
pub async fn new_crawl(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    frontier: &mut dyn Frontier,
    opts: &CrawlOptions,
    progress: &dyn Progress,
) -> Result<CrawlSummary> {
    store.mark_crawl_started(blog.id)?;
    let blog = store
        .find_blog(&blog.feed_url)?
        .unwrap_or_else(|| blog.clone());
    if store.rules(blog.id)?.is_empty() || blog.post_pattern.is_none() {
        progress.phase("learning extraction rules from the feed");
        learn_rules(store, fetcher, &blog, opts).await?;
    }
    let blog = store.find_blog(&blog.feed_url)?.context("blog vanished")?;
    let stored = store.rules(blog.id)?;
    let article = stored
        .iter()
        .find(|r| r.field == "article")
        .context("no article rule stored")?;
    let title = stored.iter().find(|r| r.field == "title");
    let ctx = Context_ {
        rules: RuleSet {
            article: Rule::parse(&article.xpath)?,
            title: title.map(|t| Rule::parse(&t.xpath)).transpose()?,
            exclude: stored
                .iter()
                .filter(|r| r.field == "article-exclude")
                .map(|r| Rule::parse(&r.xpath))
                .collect::<Result<_, _>>()?,
        },
        pattern: serde_json::from_str(blog.post_pattern.as_deref().unwrap_or("null"))
            .context("stored post pattern is corrupt")?,
        site: site_of(&Url::parse(&blog.home_url)?),
        entries: store
            .entries(blog.id)?
            .into_iter()
            .map(|e| (e.url.clone(), e))
            .collect(),
    };
    progress.phase("crawling");
    let mut summary = CrawlSummary {
        rules: stored.clone(),
        ..Default::default()
    };
    loop {
        let processed = store.processed(blog.id)?;
        if processed >= opts.max_pages {
            tracing::warn!(blog = %blog.feed_url, max_pages = opts.max_pages, "page budget reached; run crawl again to continue");
            break;
        }
        let budget = (opts.max_pages - processed) as usize;
        let batch = frontier.next(store, blog.id, (opts.concurrency * 4).min(budget))?;
        if batch.is_empty() {
            summary.complete = true;
            break;
        }
        // Reuse responses already stored (entry pages fetched while learning, or a crash between
        // fetch and record); fetch the rest.
        let mut ready = Vec::new();
        let mut to_fetch = Vec::new();
        for (u, d) in &batch {
            match store.latest_response(blog.id, u)? {
                Some((id, r)) => ready.push((u.clone(), *d, None, Some(r), Some(id))),
                None => to_fetch.push(u.clone()),
            }
        }
        let depths: HashMap<String, u32> = batch.iter().cloned().collect();
        for (u, f) in fetch_all(fetcher, to_fetch, opts.concurrency).await {
            summary.pages_fetched += 1;
            ready.push((u.clone(), depths[&u], Some(f.record), f.response, None));
        }
        for (u, depth, record, response, reused) in ready {
            let failed = record
                .as_ref()
                .is_some_and(|r| r.error.is_some() || r.status.is_some_and(|s| s >= 400))
                || response.is_none();
            if failed {
                summary.errors += 1;
                if summary.error_samples.len() < 10 {
                    let why = record
                        .as_ref()
                        .and_then(|r| r.error.clone().or(r.status.map(|s| format!("HTTP {s}"))))
                        .unwrap_or_default();
                    summary.error_samples.push((u.clone(), why));
                }
            }
            let (post, links, post_links) = match &response {
                Some(r) => process(&ctx, blog.id, &u, depth, r),
                None => (None, Vec::new(), 0),
            };
            frontier.observe(&u, post_links);
            let keep = if reused.is_some() { None } else { response };
            store.record_page(&PageOutcome {
                blog_id: blog.id,
                url: u,
                fetch: record,
                response: keep,
                reused_response: reused,
                post,
                links,
                state: if failed { "failed" } else { "done" },
            })?;
            let c = store.counts(blog.id)?;
            progress.update(summary.pages_fetched, c.posts, summary.errors, c.queued);
        }
    }
    if summary.complete {
        store.mark_crawled(blog.id)?;
    }
    summary.posts = store.counts(blog.id)?.posts;
    Ok(summary)
}
