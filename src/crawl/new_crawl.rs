//! NewCrawl(URL) → records (paper §4.2–4.4): learn the blog's rules from its feed, then crawl the
//! site through the frontier, recognise post pages by the learned URL pattern, extract and store
//! every post. Stateless: rules, pattern, frontier, responses and posts all live in the store, so
//! re-running it stores no duplicate and an interrupted crawl resumes where it stopped.
//!
//! The loop, one batch of frontier URLs at a time: [`gather`] (stored responses reused, the rest
//! fetched) → [`render_batch`] (the render stage, for blogs that need it) → per page: its
//! frontier state ([`judge`]), `page::process` (post, comments, links), the trap bound, and one
//! transaction in the store.

use super::frontier::{BreadthFirst, Frontier, KnnFrontier};
use super::page::{comment_write, load_context, process_safely, BlogContext, Processed};
use super::stopping::{digits_to_zero, stopping_rule, BarrenStreaks, StopEvidence};
use super::traffic::BrowserTraffic;
use super::{learn, rendering, seed, CrawlOptions, FrontierKind, MAX_ATTEMPTS};
use crate::core::extract::GapField;
use crate::fetch::{FetchRecord, Fetcher, Resource, Response};
use crate::store::{Blog, Gap, Link, PageOutcome, PageState, Renders, Source, Store, StoredRule};
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// What a NewCrawl did.
#[derive(Debug, Clone, Default)]
pub struct CrawlSummary {
    /// The posts' requisites and media kept by this run (`crawl::media`).
    pub media: super::media::MediaSummary,
    /// URLs robots.txt forbade (not fetched).
    pub blocked: u64,
    /// What rendering browsers asked for, all of it through `fetch` (`crawl::traffic`).
    pub browser: super::traffic::TrafficSummary,
    /// URLs the address policy refused (private addresses; not fetched).
    pub refused: u64,
    /// Pages rendered in Chromium.
    pub rendered: u64,
    /// Links dropped by the trap bounds (URL template cap).
    pub trapped: u64,
    /// Post permalinks found in sitemaps.
    pub sitemap_posts: u64,
    /// Pages processed by this run when the last new post was found (fetches-to-complete).
    pub pages_at_last_post: u64,
    /// Why the crawl stopped, for a person.
    pub stop_reason: String,
    /// Pages fetched by this run (reused stored responses not counted).
    pub pages_fetched: u64,
    /// Posts of the blog in the archive after the run.
    pub posts: u64,
    /// Pages of this run shaped like permalinks that the blog's evidence says are no posts
    /// ([`PageState::NotPost`]: listings, copies).
    pub not_posts: u64,
    /// Pages of this run shaped like permalinks from which no post could be read, with nothing
    /// saying they are none ([`PageState::Unread`]: posts possibly lost).
    pub unread: u64,
    /// A few of those pages: (url, state, reason).
    pub declined_samples: Vec<(String, PageState, String)>,
    /// Failed pages of this run (network errors and HTTP ≥ 400).
    pub errors: u64,
    /// A few of those failures: (url, reason).
    pub error_samples: Vec<(String, String)>,
    /// The active rules.
    pub rules: Vec<StoredRule>,
    /// True when the frontier was exhausted or the yield-based stop fired (the blog is
    /// completely crawled).
    pub complete: bool,
    /// True when the crawl stopped because a stop was requested (SIGTERM, SIGINT).
    pub stopped: bool,
    /// Pages a server asked to retry later, left for the next crawl, and when the first is due.
    pub deferred: Option<(u64, DateTime<Utc>)>,
    /// Posts still unseen when the crawl stopped, estimated by capture–recapture over how often
    /// each known post was found (`core::listing::unseen_posts`).
    pub unseen_estimate: f64,
}

/// Live counters for a progress display.
pub trait Progress {
    /// Called after every processed page.
    fn update(&self, pages: u64, posts: u64, errors: u64, queued: u64);
    /// Called with a phase message ("learning rules", …).
    fn phase(&self, message: &str);
}

/// A frontier URL ready to be processed: fetched now, or its stored response reused.
struct Ready {
    url: String,
    depth: u32,
    /// Fetch-log lines (robots.txt, hops, the request); empty when reused.
    fetches: Vec<FetchRecord>,
    response: Option<Response>,
    /// The redirects on the way to `response` (none when reused).
    redirects: Vec<Response>,
    /// The stored response that was reused, instead of fetching.
    reused: Option<i64>,
    /// robots.txt forbids it.
    blocked: bool,
    /// The address policy refused it.
    refused: bool,
    /// The host answered 429/503 and asked to come back after this.
    retry_after: Option<Duration>,
}

impl Ready {
    /// Why the page failed, for a person, if it did.
    fn failure(&self) -> Option<String> {
        self.fetches
            .last()
            .and_then(FetchRecord::failure)
            .or_else(|| self.response.is_none().then(|| "no response".into()))
    }
}

/// The template of a URL for the trap bound: host, path with digit runs replaced by `0`, query
/// keys without values.
fn template(url: &str) -> String {
    let Ok(u) = Url::parse(url) else {
        return url.to_string();
    };
    let t = digits_to_zero(u.path());
    let mut keys: Vec<String> = u.query_pairs().map(|(k, _)| k.into_owned()).collect();
    keys.sort();
    format!("{}{t}?{}", u.host_str().unwrap_or(""), keys.join("&"))
}

/// Runs NewCrawl for one blog until its frontier is exhausted, the yield-based stop fires, a
/// stop is requested, or `max_pages` of its frontier URLs have been processed: the budget
/// bounds the page requests, the entry pages learned from included.
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
    let fetcher = &super::blog_fetcher(fetcher, blog)?;
    let traffic = BrowserTraffic::new(fetcher.clone());
    let mut summary = CrawlSummary::default();
    // 1. Learn the rules (paper §3), once per blog; 2. seed the frontier from sitemaps.
    let blog = store.blog(blog.id)?.context("blog vanished")?;
    if store.rules(blog.id)?.is_empty() || blog.post_pattern.is_none() {
        progress.phase("learning extraction rules from the feed");
        learn::refresh_entries(store, fetcher, &blog).await?;
        learn::learn_from_entries(store, fetcher, &traffic, &blog, opts, None).await?;
        let blog = store.blog(blog.id)?.context("blog vanished")?;
        let pattern = blog
            .post_pattern
            .as_ref()
            .context("no post URL pattern stored")?;
        progress.phase("reading sitemaps");
        let budget = opts.settings.max_pages;
        let posts = seed::sitemap_posts(store, fetcher, &blog, pattern, budget).await?;
        summary.sitemap_posts = posts.len() as u64;
        let seeds: Vec<Link> = posts
            .into_iter()
            .map(|url| Link {
                url,
                depth: 1,
                source: Source::Sitemap,
                post: true,
            })
            .collect();
        store.enqueue(blog.id, &seeds)?;
    }
    // 3. Crawl (paper §4.3): the frontier picks, pages are fetched, rendered, processed, stored.
    let blog = store.blog(blog.id)?.context("blog vanished")?;
    let (ctx, stored) = load_context(store, &blog)?;
    let mut frontier: Box<dyn Frontier> = match opts.settings.frontier {
        FrontierKind::Knn => Box::new(KnnFrontier::new(ctx.pattern.clone(), opts.settings.k)),
        FrontierKind::BreadthFirst => Box::new(BreadthFirst),
    };
    progress.phase("crawling");
    summary.rules = stored;
    let mut crawl = Crawl {
        templates: HashMap::new(),
        streaks: BarrenStreaks::default(),
        posts_before: store.counts(blog.id)?.posts,
        processed: 0,
        since_new_post: 0,
    };
    loop {
        if opts.stopped() {
            summary.stopped = true;
            summary.stop_reason = "stopped on request (resumable)".into();
            break;
        }
        let processed = store.processed(blog.id)?;
        let max_pages = opts.settings.max_pages;
        if processed >= max_pages {
            tracing::warn!(blog = %blog.feed_url, max_pages, "page budget reached; run crawl again to continue");
            summary.stop_reason = format!("page budget of {max_pages} reached");
            break;
        }
        let room = (max_pages - processed).saturating_sub(store.prefetched(blog.id)?);
        let n = opts.settings.concurrency * 4;
        let batch = if room == 0 {
            store.prefetched_queued(blog.id, n)?
        } else {
            frontier.next(store, blog.id, n.min(room as usize), Utc::now())?
        };
        // (Judged on the batch just chosen: the frontier has scored what the last pages found.)
        let (f1, f2) = store.captures(blog.id)?;
        let promising = frontier.lookahead().map(|l| {
            l.iter()
                .filter(|(url, estimate)| crawl.streaks.promising(url, *estimate))
                .count()
        });
        let evidence = StopEvidence {
            patience: opts.settings.patience,
            promising,
            since_new_post: crawl.since_new_post,
            pages_at_last_post: summary.pages_at_last_post,
            f1,
            f2,
            queued_posts: store.queued_posts(blog.id, Utc::now())?,
        };
        let unseen = evidence.unseen();
        summary.unseen_estimate = unseen;
        tracing::debug!(
            processed = crawl.processed,
            since_new_post = crawl.since_new_post,
            unseen,
            f1,
            f2,
            ?promising,
            "stopping rule"
        );
        let done = stopping_rule(&evidence).map(|r| r.to_string());
        // Pages fetched to learn the rules count against the budget: once the rest of it is
        // spent, only they (stored already, no request) are processed. The crawl could end when
        // the stopping rule says so or nothing is left to fetch now; pages a server asked to
        // retry later keep it open: waited for when due soon (the batch, if any, crawled
        // meanwhile), else left for the NewCrawl queued for then.
        if done.is_some() || batch.is_empty() {
            let Some(at) = store.next_retry(blog.id)? else {
                summary.complete = true;
                summary.stop_reason = done.unwrap_or_else(|| "frontier exhausted".into());
                break;
            };
            let now = Utc::now();
            let wait = (at - now).to_std().unwrap_or_default();
            if wait > opts.settings.max_retry_wait {
                let n = store.deferred(blog.id, now)?;
                summary.deferred = Some((n, at));
                summary.stop_reason = deferred_reason(n, at);
                break;
            }
            if batch.is_empty() {
                let n = store.deferred(blog.id, now)?;
                progress.phase(&format!(
                    "waiting {}s for {n} pages the server asked to retry later",
                    wait.as_secs().max(1)
                ));
                sleep_unless_stopped(opts, wait.max(Duration::from_millis(100))).await;
                continue;
            }
        }
        let ready = gather(store, fetcher, blog.id, batch, opts, &mut summary).await?;
        let (mut renderings, unrendered) =
            render_batch(store, &ctx, &blog, &ready, opts, &traffic, &mut summary).await?;
        for page in ready {
            let rendered = renderings.remove(&page.url);
            let render_failed = unrendered.contains(&page.url);
            crawl
                .record(
                    store,
                    &ctx,
                    &blog,
                    page,
                    rendered,
                    render_failed,
                    &mut *frontier,
                    opts,
                    &mut summary,
                )
                .await?;
            let c = store.counts(blog.id)?;
            if c.posts > crawl.posts_before {
                crawl.posts_before = c.posts;
                crawl.since_new_post = 0;
                summary.pages_at_last_post = crawl.processed;
            } else {
                crawl.since_new_post += 1;
            }
            progress.update(summary.pages_fetched, c.posts, summary.errors, c.queued);
        }
    }
    summary.trapped = crawl
        .templates
        .values()
        .map(|&n| n.saturating_sub(opts.settings.max_per_template) as u64)
        .sum();
    if !summary.stopped {
        progress.phase("keeping the posts' images, stylesheets and media");
        let stop = || opts.stopped();
        summary.media =
            super::media::capture_pending(store, fetcher, &blog, &opts.media, &stop).await?;
    }
    summary.browser = traffic.summary();
    if summary.complete {
        store.mark_crawled(blog.id)?;
    }
    summary.posts = store.counts(blog.id)?.posts;
    Ok(summary)
}

/// Why a crawl stopped with pages a server asked to retry later: `n` of them, the first due at
/// `at`.
fn deferred_reason(n: u64, at: DateTime<Utc>) -> String {
    format!(
        "{n} pages deferred until {} (the server asked to retry later)",
        at.format("%Y-%m-%d %H:%M UTC")
    )
}

/// Sleeps `d`, waking early when a stop is requested.
async fn sleep_unless_stopped(opts: &CrawlOptions, d: Duration) {
    let until = std::time::Instant::now() + d;
    while !opts.stopped() && std::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50).min(d)).await;
    }
}

/// The batch's pages: stored responses reused (entry pages fetched while learning, or a crash
/// between fetch and record), the rest fetched.
async fn gather(
    store: &mut Store,
    fetcher: &Fetcher,
    blog_id: i64,
    batch: Vec<(String, u32)>,
    opts: &CrawlOptions,
    summary: &mut CrawlSummary,
) -> Result<Vec<Ready>> {
    let mut ready = Vec::new();
    let mut to_fetch = Vec::new();
    for (url, depth) in &batch {
        match store.latest_response(blog_id, url)? {
            Some((id, r)) if r.status != 429 && r.status != 503 => ready.push(Ready {
                url: url.clone(),
                depth: *depth,
                fetches: Vec::new(),
                response: Some(r),
                redirects: Vec::new(),
                reused: Some(id),
                blocked: false,
                refused: false,
                retry_after: None,
            }),
            _ => to_fetch.push((url.clone(), None)),
        }
    }
    let depths: HashMap<String, u32> = batch.into_iter().collect();
    for (url, f) in fetcher
        .get_all(to_fetch, Resource::Page, opts.settings.concurrency)
        .await
    {
        if !f.blocked && !f.refused {
            summary.pages_fetched += 1;
        }
        let mut fetches = f.hops;
        fetches.push(f.record);
        ready.push(Ready {
            depth: depths[&url],
            url,
            fetches,
            response: f.response,
            redirects: f.redirects,
            reused: None,
            blocked: f.blocked,
            refused: f.refused,
            retry_after: f.retry_after,
        });
    }
    Ok(ready)
}

/// The render stage: pages of a blog that needs JavaScript go through Chromium (stored
/// renderings are reused like any stored response). Returns the renderings by URL, and the URLs
/// that should have been rendered but could not be.
async fn render_batch(
    store: &mut Store,
    ctx: &BlogContext,
    blog: &Blog,
    ready: &[Ready],
    opts: &CrawlOptions,
    traffic: &Arc<BrowserTraffic>,
    summary: &mut CrawlSummary,
) -> Result<(HashMap<String, Response>, HashSet<String>)> {
    let (Some(renderer), Some(renders)) = (&opts.renderer, blog.renders) else {
        return Ok(Default::default());
    };
    let todo: Vec<(String, Response)> = ready
        .iter()
        .filter_map(|p| {
            let r = p.response.as_ref()?;
            let is_post = Url::parse(&p.url).is_ok_and(|x| ctx.pattern.is_post(&x));
            (!p.blocked
                && p.retry_after.is_none()
                && r.status < 400
                && crate::fetch::is_html(r)
                && !rendering::is_rendered(r)
                && renders.wants(is_post))
            .then(|| (p.url.clone(), r.clone()))
        })
        .collect();
    if todo.is_empty() {
        return Ok(Default::default());
    }
    let mut unrendered: HashSet<String> = todo.iter().map(|(u, _)| u.clone()).collect();
    let renderings = rendering::render_all(renderer, traffic, store, blog.id, todo).await?;
    summary.rendered += renderings.len() as u64;
    unrendered.retain(|u| !renderings.contains_key(u));
    Ok((renderings, unrendered))
}

/// The frontier state a fetched page ends in: blocked by robots.txt, queued again after a
/// 429/503 (until [`MAX_ATTEMPTS`]), failed, or done. A page of a blog rendered throughout that
/// could not be rendered fails: its raw HTML lacks the content.
fn judge(
    store: &Store,
    blog: &Blog,
    page: &Ready,
    render_failed: bool,
) -> Result<(PageState, Option<DateTime<Utc>>)> {
    if page.blocked {
        return Ok((PageState::Blocked, None));
    }
    if page.refused {
        return Ok((PageState::Refused, None));
    }
    if let Some(pause) = page.retry_after {
        if store.attempts(blog.id, &page.url)? + 1 < MAX_ATTEMPTS {
            let at = Utc::now() + chrono::Duration::from_std(pause).unwrap_or_default();
            return Ok((PageState::Queued, Some(at)));
        }
        return Ok((PageState::Failed, None));
    }
    if page.failure().is_some() || (render_failed && blog.renders == Some(Renders::All)) {
        return Ok((PageState::Failed, None));
    }
    Ok((PageState::Done, None))
}

/// The state of one crawl run between pages.
struct Crawl {
    /// Links seen per URL template (the trap bound).
    templates: HashMap<String, usize>,
    /// Per kind of page, pages in a row that linked no new post (the yield-based stop).
    streaks: BarrenStreaks,
    /// Posts archived when the last new post appeared.
    posts_before: u64,
    /// Pages processed by this run.
    processed: u64,
    /// Pages processed since the last new post (the yield-based stop).
    since_new_post: u64,
}

impl Crawl {
    /// Processes one page and records everything it changes in one transaction.
    #[allow(clippy::too_many_arguments)]
    async fn record(
        &mut self,
        store: &mut Store,
        ctx: &BlogContext,
        blog: &Blog,
        page: Ready,
        rendered: Option<Response>,
        render_failed: bool,
        frontier: &mut dyn Frontier,
        opts: &CrawlOptions,
        summary: &mut CrawlSummary,
    ) -> Result<()> {
        let (mut state, retry_at) = judge(store, blog, &page, render_failed)?;
        summary.blocked += (state == PageState::Blocked) as u64;
        summary.refused += (state == PageState::Refused) as u64;
        let mut failure = None;
        if state == PageState::Failed {
            failure = Some(if render_failed {
                "rendering in Chromium failed twice (see the log)".to_string()
            } else {
                page.failure().unwrap_or_default()
            });
        }
        let processed = match (rendered.as_ref().or(page.response.as_ref()), state) {
            (Some(r), PageState::Done) => match process_safely(ctx, &page.url, page.depth, r) {
                Some(p) => p,
                None => {
                    // A bug on one page must not end the crawl: the page is recorded as failed.
                    state = PageState::Failed;
                    failure =
                        Some("internal error while extracting this page (see the log)".into());
                    Processed::default()
                }
            },
            _ => Processed::default(),
        };
        if let Some(why) = &failure {
            summary.errors += 1;
            if summary.error_samples.len() < 10 {
                summary.error_samples.push((page.url.clone(), why.clone()));
            }
        }
        // Parsed pages train the frontier, whether or not they gave a post.
        let parsed = state == PageState::Done && page.response.is_some();
        let (state, declined) = processed.state(state);
        match state {
            PageState::NotPost => summary.not_posts += 1,
            PageState::Unread => summary.unread += 1,
            _ => {}
        }
        if let (Some(why), true) = (&declined, summary.declined_samples.len() < 10) {
            summary
                .declined_samples
                .push((page.url.clone(), state, why.clone()));
        }
        let error = failure.or(declined).or_else(|| page.failure());
        let Processed {
            mut post,
            mut links,
            post_links,
            comments,
            declined: _,
        } = processed;
        if let Some(p) = post.as_mut() {
            super::page::schedule_comment_check(p, ctx, blog.renders, &opts.update, Utc::now());
        }
        if let (true, Some(p)) = (render_failed, post.as_mut()) {
            p.gaps.push(Gap {
                field: GapField::Comments,
                reason: "the page could not be rendered in Chromium; comments shown by JavaScript are missing (see the log)".into(),
            });
        }
        links.retain(|l| {
            let n = self.templates.entry(template(&l.url)).or_insert(0);
            *n += 1;
            *n <= opts.settings.max_per_template
        });
        if parsed {
            frontier.observe(&page.url, post_links);
        }
        let comments = comments
            .map(|(post_url, c)| comment_write(store, &post_url, &c))
            .transpose()?;
        let written_url = page.url.clone();
        let keep = if page.reused.is_some() || state == PageState::Queued {
            None
        } else {
            page.response
        };
        let written = store.record_page(&PageOutcome {
            blog_id: blog.id,
            url: page.url,
            fetches: page.fetches,
            response: keep,
            redirects: page.redirects,
            rendered,
            reused_response: page.reused,
            post,
            links,
            post_links: parsed.then_some(post_links as u32),
            state,
            retry_at,
            error,
            comments,
            gone: false,
        })?;
        if parsed {
            self.streaks.observe(&written_url, written.new_post_links);
        }
        self.processed += 1;
        Ok(())
    }
}
