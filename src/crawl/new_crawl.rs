//! NewCrawl(URL) → records (paper §4.2–4.4): learn the blog's rules from its feed, then crawl the
//! site through the frontier, recognise post pages by the learned URL pattern, extract and store
//! every post. Stateless: rules, pattern, frontier, responses and posts all live in the store, so
//! re-running it stores no duplicate and an interrupted crawl resumes where it stopped.
//!
//! The steps: [`learn_rules`] and [`seed_frontier`] once per blog, then [`NewCrawl`] one batch of
//! frontier URLs at a time: [`NewCrawl::next_batch`] (the page budget, the stopping rule of
//! `crawl::stopping`, pages a server asked to retry later) → [`NewCrawl::gather`] (stored
//! responses reused, the rest fetched) → [`NewCrawl::render`] (the render stage, for blogs that
//! need it) → per page [`NewCrawl::record`]: its frontier state (`ready::judge`), `page::process`
//! (post, comments, links), the trap bound, and one transaction in the store.

use super::blog_context::{load_context, BlogContext};
use super::frontier::{BreadthFirst, Frontier, KnnFrontier};
use super::page::{process_safely, schedule_comment_check, Processed};
use super::page_comments::comment_write;
use super::ready::{judge, Found, Got, Ready, Rendering};
use super::stopping::{
    digits_to_zero, reported_unseen, stopping_rule, BarrenStreaks, StopEvidence,
};
use super::traffic::BrowserTraffic;
use super::{learn, rendering, seed, CrawlOptions, FrontierKind};
use crate::core::extract::GapField;
use crate::fetch::{Fetcher, Resource, Response};
use crate::store::{
    Blog, BlogId, FrontierUrl, Gap, Link, NewPost, PageOutcome, PageState, Pending, Source, Store,
    StoredResponse, StoredRule, Written,
};
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use url::Url;

mod page_step;

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
    /// Post pages not rendered: their comment widget's data held no comment.
    pub render_skipped: u64,
    /// Time the pages of this run spent rendering, in seconds.
    pub render_seconds: f64,
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
    /// each known post was found (`core::listing::unseen_posts`); 0 when the crawl followed
    /// every link and read every page shaped like a post (what the listings, sitemaps and
    /// posts name is all archived).
    pub unseen_estimate: f64,
}

/// Live counters for a progress display.
pub trait Progress {
    /// Called after every processed page.
    fn update(&self, pages: u64, posts: u64, errors: u64, queued: u64);
    /// Called with a phase message ("learning rules", …).
    fn phase(&self, message: &str);
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
    // 1. Learn the rules (paper §3), once per blog; 2. seed the frontier from sitemaps.
    let blog = store.blog(blog.id)?.context("blog vanished")?;
    let mut sitemap_posts = 0;
    if store.rules(blog.id)?.is_empty() || blog.post_pattern.is_none() {
        learn_rules(store, fetcher, &traffic, &blog, opts, progress).await?;
        sitemap_posts = seed_frontier(store, fetcher, blog.id, opts, progress).await?;
    }
    // 3. Crawl (paper §4.3): the frontier picks, pages are fetched, rendered, processed, stored.
    let mut crawl = NewCrawl::start(store, fetcher, blog.id, opts, progress, traffic)?;
    crawl.summary.sitemap_posts = sitemap_posts;
    while let Some(batch) = crawl.next_batch().await? {
        crawl.crawl_batch(batch).await?;
    }
    crawl.finish().await
}

/// Step 1: the blog's rules, post URL pattern and first frontier URLs, learned from a fresh copy
/// of its feed and the entries' pages (`crawl::learn`).
async fn learn_rules(
    store: &mut Store,
    fetcher: &Fetcher,
    traffic: &Arc<BrowserTraffic>,
    blog: &Blog,
    opts: &CrawlOptions,
    progress: &dyn Progress,
) -> Result<()> {
    progress.phase("learning extraction rules from the feed");
    learn::refresh_entries(store, fetcher, blog).await?;
    learn::learn_from_entries(store, fetcher, traffic, blog, opts, None).await
}

/// Step 2: the post permalinks of the blog's sitemaps queued (`crawl::seed`), within the page
/// budget. Returns how many were found.
async fn seed_frontier(
    store: &mut Store,
    fetcher: &Fetcher,
    blog_id: BlogId,
    opts: &CrawlOptions,
    progress: &dyn Progress,
) -> Result<u64> {
    let blog = store.blog(blog_id)?.context("blog vanished")?;
    let pattern = blog
        .post_pattern
        .as_ref()
        .context("no post URL pattern stored")?;
    progress.phase("reading sitemaps");
    let budget = opts.settings.max_pages;
    let posts = seed::sitemap_posts(store, fetcher, &blog, pattern, budget).await?;
    let found = posts.len() as u64;
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
    Ok(found)
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

/// What a crawl that could end does about pages a server asked to retry later.
enum Ending {
    /// It ended (the summary says why): complete, or with pages deferred to a later crawl.
    Ended,
    /// It waited for a retry due soon: look again.
    Waited,
    /// A retry is due soon and the batch has pages: crawl them.
    Crawl,
}

/// Step 3, one NewCrawl's crawl in progress: the state of one run between pages.
/// How many pages apart the progress display's queued count is read from the store (each read
/// counts the blog's frontier).
const QUEUED_COUNT_EVERY: u64 = 25;

/// A page read and ready to write ([`NewCrawl::read`]).
struct ReadPage {
    outcome: PageOutcome,
    /// The page was parsed (its links count for the streaks).
    parsed: bool,
}

/// A page's write sent to the store, its answer not taken yet.
struct Recording {
    written: Pending<Written>,
    url: String,
    parsed: bool,
}

struct NewCrawl<'a> {
    store: &'a mut Store,
    fetcher: &'a Fetcher,
    blog: Blog,
    opts: &'a CrawlOptions,
    progress: &'a dyn Progress,
    /// What rendering browsers ask for, answered through `fetch`.
    traffic: Arc<BrowserTraffic>,
    ctx: BlogContext,
    frontier: Box<dyn Frontier>,
    summary: CrawlSummary,
    /// Links seen per URL template (the trap bound).
    templates: HashMap<String, usize>,
    /// Per kind of page, pages in a row that linked no new post (the yield-based stop).
    streaks: BarrenStreaks,
    /// Posts archived when the last new post appeared.
    posts_before: u64,
    /// Queued URLs as last counted, for the progress display (counted every
    /// [`QUEUED_COUNT_EVERY`] pages).
    queued: u64,
    /// Pages processed by this run.
    processed: u64,
    /// Pages processed since the last new post (the yield-based stop).
    since_new_post: u64,
}

impl<'a> NewCrawl<'a> {
    /// The crawl of a learned blog: its extraction context and rules from the store, its
    /// frontier as configured.
    fn start(
        store: &'a mut Store,
        fetcher: &'a Fetcher,
        blog_id: BlogId,
        opts: &'a CrawlOptions,
        progress: &'a dyn Progress,
        traffic: Arc<BrowserTraffic>,
    ) -> Result<Self> {
        let blog = store.blog(blog_id)?.context("blog vanished")?;
        let (ctx, rules) = load_context(store, &blog)?;
        let frontier: Box<dyn Frontier> = match opts.settings.frontier {
            FrontierKind::Knn => Box::new(KnnFrontier::new(ctx.pattern.clone(), opts.settings.k)),
            FrontierKind::BreadthFirst => Box::new(BreadthFirst),
        };
        progress.phase("crawling");
        let posts_before = store.counts(blog.id)?.posts;
        Ok(NewCrawl {
            store,
            fetcher,
            blog,
            opts,
            progress,
            traffic,
            ctx,
            frontier,
            summary: CrawlSummary {
                rules,
                ..Default::default()
            },
            templates: HashMap::new(),
            streaks: BarrenStreaks::default(),
            posts_before,
            queued: 0,
            processed: 0,
            since_new_post: 0,
        })
    }

    /// The next batch of frontier URLs, or `None` when the crawl ends (the summary says why): a
    /// stop requested, the page budget reached, the stopping rule, the frontier exhausted, or
    /// only retries left that are not due soon.
    async fn next_batch(&mut self) -> Result<Option<Vec<FrontierUrl>>> {
        loop {
            let Some(room) = self.room()? else {
                return Ok(None);
            };
            let batch = self.pick(room)?;
            // Judged on the batch just chosen: the frontier has scored what the last pages found.
            let early = stopping_rule(&self.evidence()?);
            if early.is_none() && !batch.is_empty() {
                return Ok(Some(batch));
            }
            self.summary.unseen_estimate = reported_unseen(
                self.summary.unseen_estimate,
                early.is_none() && batch.is_empty(),
                self.summary.unread,
            );
            let reason = early.map_or_else(|| "frontier exhausted".into(), |r| r.to_string());
            match self.end_or_wait(reason, batch.is_empty()).await? {
                Ending::Ended => return Ok(None),
                Ending::Waited => continue,
                Ending::Crawl => return Ok(Some(batch)),
            }
        }
    }

    /// Frontier URLs the page budget still has room for, or `None` when the crawl must end now:
    /// a stop was requested, or the budget is spent.
    fn room(&mut self) -> Result<Option<u64>> {
        if self.opts.stopped() {
            self.summary.stopped = true;
            self.summary.stop_reason = "stopped on request (resumable)".into();
            return Ok(None);
        }
        let processed = self.store.processed(self.blog.id)?;
        let max_pages = self.opts.settings.max_pages;
        if processed >= max_pages {
            tracing::warn!(blog = %self.blog.feed_url, max_pages, "page budget reached; run crawl again to continue");
            self.summary.stop_reason = format!("page budget of {max_pages} reached");
            return Ok(None);
        }
        Ok(Some(max_pages - processed))
    }

    /// The frontier's next URLs within `room`. Pages fetched to learn the rules count against
    /// the budget: once the rest of it is spent, only they (stored already, no request) are
    /// processed.
    fn pick(&mut self, room: u64) -> Result<Vec<FrontierUrl>> {
        let room = room.saturating_sub(self.store.prefetched(self.blog.id)?);
        let n = self.opts.settings.concurrency * 4;
        if room == 0 {
            return self.store.prefetched_queued(self.blog.id, n);
        }
        let n = n.min(room as usize);
        self.frontier.next(self.store, self.blog.id, n, Utc::now())
    }

    /// What the stopping rule weighs now (`crawl::stopping`); the estimate of unseen posts goes
    /// to the summary.
    fn evidence(&mut self) -> Result<StopEvidence> {
        let found = self.store.captures(self.blog.id)?;
        let promising = self.frontier.lookahead().map(|l| {
            l.iter()
                .filter(|(url, estimate)| self.streaks.promising(url, *estimate))
                .count()
        });
        let evidence = StopEvidence {
            patience: self.opts.settings.patience,
            promising,
            since_new_post: self.since_new_post,
            pages_at_last_post: self.summary.pages_at_last_post,
            f1: found.once,
            f2: found.twice,
            queued_posts: self.store.queued_posts(self.blog.id, Utc::now())?,
        };
        let unseen = evidence.unseen();
        self.summary.unseen_estimate = unseen;
        tracing::debug!(
            processed = self.processed,
            since_new_post = self.since_new_post,
            unseen,
            f1 = found.once,
            f2 = found.twice,
            ?promising,
            "stopping rule"
        );
        Ok(evidence)
    }

    /// The one path for pages a server asked to retry later, when the crawl could end for
    /// `reason`: they keep it open when the first is due soon (waited for when the batch is
    /// `empty`, else the batch is crawled meanwhile), and are left for the NewCrawl queued for
    /// then when it is not. With none, the crawl is complete.
    async fn end_or_wait(&mut self, reason: String, empty: bool) -> Result<Ending> {
        let Some(at) = self.store.next_retry(self.blog.id)? else {
            self.summary.complete = true;
            self.summary.stop_reason = reason;
            return Ok(Ending::Ended);
        };
        let now = Utc::now();
        let wait = (at - now).to_std().unwrap_or_default();
        if wait > self.opts.settings.max_retry_wait {
            let n = self.store.deferred(self.blog.id, now)?;
            self.summary.deferred = Some((n, at));
            self.summary.stop_reason = deferred_reason(n, at);
            return Ok(Ending::Ended);
        }
        if !empty {
            return Ok(Ending::Crawl);
        }
        let n = self.store.deferred(self.blog.id, now)?;
        self.progress.phase(&format!(
            "waiting {}s for {n} pages the server asked to retry later",
            wait.as_secs().max(1)
        ));
        sleep_unless_stopped(self.opts, wait.max(Duration::from_millis(100))).await;
        Ok(Ending::Waited)
    }

    /// One batch: its pages gathered, rendered, then recorded one at a time.
    async fn crawl_batch(&mut self, batch: Vec<FrontierUrl>) -> Result<()> {
        let mut ready = self.gather(batch).await?;
        self.render(&mut ready).await?;
        // Pipelined by one page: the next page is read (parsed, extracted) while the store
        // writes this one; each write is sent once the one before it succeeded, and the
        // crawl's counts see the pages in their order.
        let mut in_flight: Option<Recording> = None;
        for page in ready {
            let next = self.read(page)?;
            if let Some(r) = in_flight.take() {
                self.recorded(r)?;
            }
            in_flight = Some(next.send(self.store));
        }
        if let Some(r) = in_flight {
            self.recorded(r)?;
        }
        Ok(())
    }

    /// The batch's pages: stored responses reused (entry pages fetched while learning, or a
    /// crash between fetch and record), the rest fetched.
    async fn gather(&mut self, batch: Vec<FrontierUrl>) -> Result<Vec<Ready>> {
        let mut ready = Vec::new();
        let mut to_fetch = Vec::new();
        let urls: Vec<String> = batch.iter().map(|b| b.url.clone()).collect();
        let stored = self.store.with_responses(self.blog.id, &urls)?;
        for FrontierUrl { url, depth } in &batch {
            if !stored.contains(url) {
                to_fetch.push((url.clone(), None));
                continue;
            }
            match self.store.latest_response(self.blog.id, url)? {
                Some(StoredResponse { id, response })
                    if response.status != 429 && response.status != 503 =>
                {
                    let got = Got::Reused { id, response };
                    ready.push(Ready::new(url.clone(), *depth, got));
                }
                _ => to_fetch.push((url.clone(), None)),
            }
        }
        let depths: HashMap<String, u32> = batch.into_iter().map(|b| (b.url, b.depth)).collect();
        let concurrency = self.opts.settings.concurrency;
        for (url, f) in self
            .fetcher
            .get_all(to_fetch, Resource::Page, concurrency)
            .await
        {
            if !f.blocked && !f.refused {
                self.summary.pages_fetched += 1;
            }
            let depth = depths[&url];
            ready.push(Ready::new(url, depth, Got::Fetched(f)));
        }
        Ok(ready)
    }

    /// The render stage: pages of a blog that needs JavaScript go through Chromium (stored
    /// renderings are reused like any stored response). Each page gets its rendering, or is
    /// marked as one that should have been rendered but could not be.
    async fn render(&mut self, ready: &mut [Ready]) -> Result<()> {
        let opts = self.opts;
        let (Some(renderer), Some(renders)) = (&opts.renderer, self.blog.renders) else {
            return Ok(());
        };
        let pattern = &self.ctx.pattern;
        let todo: Vec<(String, Response)> = ready
            .iter()
            .filter_map(|p| {
                let r = p.response()?;
                let is_post = Url::parse(&p.url).is_ok_and(|x| pattern.is_post(&x));
                (!p.blocked()
                    && p.retry_after().is_none()
                    && r.status < 400
                    && crate::fetch::is_html(r)
                    && !r.is_rendered()
                    && renders.wants(is_post))
                .then(|| (p.url.clone(), r.clone()))
            })
            .collect();
        let todo = self.with_comments(todo, renders).await?;
        if todo.is_empty() {
            return Ok(());
        }
        let wanted: HashSet<String> = todo.iter().map(|(u, _)| u.clone()).collect();
        let hints = self.ctx.render_hints();
        let (store, blog_id) = (&mut *self.store, self.blog.id);
        let mut renderings =
            rendering::render_all(renderer, &self.traffic, store, blog_id, todo, &hints).await?;
        for p in ready.iter_mut() {
            p.rendering = match renderings.remove(&p.url) {
                Some(r) => Rendering::Rendered(r),
                None if wanted.contains(&p.url) => Rendering::Failed,
                None => Rendering::NotNeeded,
            };
        }
        Ok(())
    }

    /// The pages of a blog that renders its posts for their comments, less the posts whose
    /// comment widget's data holds no comment (asked without a browser: issue 41). Unchanged
    /// when the blog has no widget data to ask, or renders every page.
    async fn with_comments(
        &mut self,
        todo: Vec<(String, Response)>,
        renders: crate::store::Renders,
    ) -> Result<Vec<(String, Response)>> {
        let Some(data) = (renders == crate::store::Renders::Posts)
            .then_some(self.ctx.comment_data.as_ref())
            .flatten()
        else {
            return Ok(todo);
        };
        let posts: Vec<(String, &Response)> = todo.iter().map(|(u, r)| (u.clone(), r)).collect();
        let data = rendering::widget_data(
            self.store,
            self.fetcher,
            self.blog.id,
            data,
            &posts,
            self.opts.settings.concurrency,
        )
        .await?;
        let before = todo.len();
        let todo: Vec<(String, Response)> = todo
            .into_iter()
            .filter(|(u, _)| {
                data.get(u)
                    .and_then(|d| d.as_ref())
                    .is_none_or(|d| d.count() > 0)
            })
            .collect();
        self.summary.render_skipped += (before - todo.len()) as u64;
        Ok(todo)
    }

    /// After the crawl: the trap bound's count, the posts' requisites and media (unless stopped
    /// on request), the browsers' traffic, the blog marked crawled when complete.
    async fn finish(mut self) -> Result<CrawlSummary> {
        let max = self.opts.settings.max_per_template;
        self.summary.trapped = self
            .templates
            .values()
            .map(|&n| n.saturating_sub(max) as u64)
            .sum();
        if !self.summary.stopped {
            self.progress
                .phase("keeping the posts' images, stylesheets and media");
            let opts = self.opts;
            let stop = || opts.stopped();
            self.summary.media = super::media::capture_pending(
                self.store,
                self.fetcher,
                &self.blog,
                &opts.media,
                &stop,
            )
            .await?;
        }
        self.summary.browser = self.traffic.summary();
        (self.summary.rendered, self.summary.render_seconds) = self.traffic.renders();
        if self.summary.complete {
            self.store.mark_crawled(self.blog.id)?;
        }
        self.summary.posts = self.store.counts(self.blog.id)?.posts;
        Ok(self.summary)
    }
}
