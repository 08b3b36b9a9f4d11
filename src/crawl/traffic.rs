//! A rendering browser's traffic, answered through `fetch` (the [`Network`] of
//! `render::network`): the page being rendered from the response the crawl already fetched
//! (never fetched twice); documents it navigates to or frames (robots.txt decides) and the
//! scripts, stylesheets and data it loads (robots.txt per `[robots] requisites`) fetched
//! politely, logged and handed to the crawl to keep; images, fonts and media left to
//! `crawl::media` unless already at hand. One [`BrowserTraffic`] per crawl run: what it fetched
//! once answers every later page of the run.

use crate::fetch::{Fetched, Fetcher, Response};
use crate::render::network::{Answer, BrowserRequest, Network, Refusal, RequestKind};
use crate::store::{BlogId, Store};
use futures::future::BoxFuture;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

/// Bodies kept in memory to answer repeated requests, in bytes (256 MiB); past it, answers are
/// not kept.
pub const CACHE_BYTES: u64 = 256 << 20;

/// What one request came to, shared by every request for the same URL in a crawl run.
#[derive(Debug, Clone)]
enum Outcome {
    /// A response (possibly a redirect to another URL of the run).
    Response(Arc<Response>),
    /// No response.
    Refused(Refusal),
}

/// What the browsers of a crawl run asked for and what became of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrafficSummary {
    /// Requests the browser made.
    pub requests: u64,
    /// Requests sent through `fetch` (robots.txt fetches and redirect hops not counted).
    pub fetched: u64,
    /// Answered from what the run already had (the page's own response, an earlier answer), or
    /// by everblog itself (a CORS preflight for a request that then goes through `fetch`).
    pub reused: u64,
    /// Refused by robots.txt or the address policy (`BlockedByClient`).
    pub blocked: u64,
    /// Not sent: images, fonts and media (kept later by `crawl::media`), beacons, and methods
    /// other than GET.
    pub not_sent: u64,
    /// Sent and failed (network error, body over its cap).
    pub failed: u64,
}

impl std::fmt::Display for TrafficSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "browser requests: {} ({} fetched, {} reused, {} blocked by robots.txt or the address policy, {} not sent, {} failed)",
            self.requests, self.fetched, self.reused, self.blocked, self.not_sent, self.failed
        )
    }
}

#[derive(Default)]
struct Counts {
    requests: AtomicU64,
    fetched: AtomicU64,
    reused: AtomicU64,
    blocked: AtomicU64,
    not_sent: AtomicU64,
    failed: AtomicU64,
}

/// The [`Network`] of a crawl run's renderings.
pub struct BrowserTraffic {
    fetcher: Fetcher,
    /// Outcomes by URL (no fragment); a cell while its fetch is in flight, so concurrent
    /// requests for one URL send one.
    outcomes: Mutex<HashMap<String, Arc<OnceCell<Outcome>>>>,
    cached_bytes: AtomicU64,
    /// Fetches made since the crawl last kept them.
    fetched: Mutex<Vec<Fetched>>,
    counts: Counts,
    /// Pages rendered in this run, and the time spent rendering them (wall clock, ms).
    rendered: AtomicU64,
    render_ms: AtomicU64,
}

impl std::fmt::Debug for BrowserTraffic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrowserTraffic")
            .field("summary", &self.summary())
            .finish()
    }
}

/// The key of a URL: parsed and serialised (WHATWG, as Chromium does), fragment dropped.
fn key(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => url.to_string(),
    }
}

impl BrowserTraffic {
    /// The traffic of one crawl run, fetched with `fetcher` (the blog's).
    pub fn new(fetcher: Fetcher) -> Arc<BrowserTraffic> {
        Arc::new(BrowserTraffic {
            fetcher,
            outcomes: Mutex::new(HashMap::new()),
            cached_bytes: AtomicU64::new(0),
            fetched: Mutex::new(Vec::new()),
            counts: Counts::default(),
            rendered: AtomicU64::new(0),
            render_ms: AtomicU64::new(0),
        })
    }

    /// Notes `pages` rendered in `took` (the wall-clock time of a batch of renderings).
    pub fn note_renders(&self, pages: u64, took: std::time::Duration) {
        self.rendered.fetch_add(pages, Ordering::Relaxed);
        self.render_ms
            .fetch_add(took.as_millis() as u64, Ordering::Relaxed);
    }

    /// Pages rendered in this run (learning's included), and the seconds spent rendering them.
    pub fn renders(&self) -> (u64, f64) {
        (
            self.rendered.load(Ordering::Relaxed),
            self.render_ms.load(Ordering::Relaxed) as f64 / 1000.0,
        )
    }

    /// Answers the browser's request for `page.final_url` with `page` itself (the response the
    /// crawl fetched), so rendering never fetches it again.
    pub fn serve_page(&self, page: &Response) {
        let cell = OnceCell::new_with(Some(Outcome::Response(Arc::new(page.clone()))));
        self.outcomes
            .lock()
            .expect("lock")
            .insert(key(&page.final_url), Arc::new(cell));
    }

    /// Keeps what was fetched since the last call in the store (responses and the fetch log,
    /// as any fetch of the crawl).
    ///
    /// # Errors
    /// The store failed.
    pub fn keep(&self, store: &mut Store, blog_id: BlogId) -> anyhow::Result<()> {
        let fetched = std::mem::take(&mut *self.fetched.lock().expect("lock"));
        for f in &fetched {
            store.keep_fetched(blog_id, f)?;
        }
        Ok(())
    }

    /// The counts so far.
    pub fn summary(&self) -> TrafficSummary {
        let c = &self.counts;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        TrafficSummary {
            requests: get(&c.requests),
            fetched: get(&c.fetched),
            reused: get(&c.reused),
            blocked: get(&c.blocked),
            not_sent: get(&c.not_sent),
            failed: get(&c.failed),
        }
    }

    fn count(&self, answer: &Answer) {
        let c = &self.counts;
        match answer {
            Answer::Respond { .. } => return,
            Answer::Refuse(Refusal::Blocked) => &c.blocked,
            Answer::Refuse(Refusal::NotSent) => &c.not_sent,
            Answer::Refuse(Refusal::Failed) => &c.failed,
        }
        .fetch_add(1, Ordering::Relaxed);
    }

    async fn answer_request(&self, request: BrowserRequest) -> Answer {
        self.counts.requests.fetch_add(1, Ordering::Relaxed);
        let url = key(&request.url);
        if let Some(answer) = preflight(&request) {
            self.counts.reused.fetch_add(1, Ordering::Relaxed);
            return answer;
        }
        if !matches!(request.method.as_str(), "GET" | "HEAD") {
            // An archiver reads; it does not post forms or comments.
            return Answer::Refuse(Refusal::NotSent);
        }
        let cell = {
            let mut outcomes = self.outcomes.lock().expect("lock");
            match outcomes.get(&url) {
                Some(c) => Some(c.clone()),
                None if request.kind.shapes_the_dom() => {
                    let c = Arc::new(OnceCell::new());
                    outcomes.insert(url.clone(), c.clone());
                    Some(c)
                }
                None => None,
            }
        };
        let Some(cell) = cell else {
            return Answer::Refuse(Refusal::NotSent);
        };
        let mut sent = false;
        let outcome = cell
            .get_or_init(|| {
                sent = true;
                self.fetch(&url, &request)
            })
            .await
            .clone();
        if !sent && matches!(outcome, Outcome::Response(_)) {
            self.counts.reused.fetch_add(1, Ordering::Relaxed);
        }
        match outcome {
            Outcome::Refused(why) => Answer::Refuse(why),
            Outcome::Response(r) => {
                let target = key(&r.final_url);
                if target != url {
                    // Redirected: the browser is told so, and asks for the target, which is
                    // answered from this response.
                    let done = OnceCell::new_with(Some(Outcome::Response(r.clone())));
                    self.outcomes
                        .lock()
                        .expect("lock")
                        .entry(target.clone())
                        .or_insert_with(|| Arc::new(done));
                    return Answer::Respond {
                        status: 302,
                        headers: vec![("location".into(), target)],
                        body: Arc::new(Vec::new()),
                    };
                }
                Answer::Respond {
                    status: r.status,
                    headers: r.headers.clone(),
                    body: Arc::new(r.body.clone()),
                }
            }
        }
    }

    /// Sends one request through `fetch`, keeps the fetch for the store, and returns its
    /// outcome (forgotten afterwards when over the memory bound).
    async fn fetch(&self, url: &str, request: &BrowserRequest) -> Outcome {
        self.counts.fetched.fetch_add(1, Ordering::Relaxed);
        let document = request.kind == RequestKind::Document;
        let f = self
            .fetcher
            .get_for_browser(url, &request.headers, document)
            .await;
        let outcome = if f.blocked || f.refused {
            Outcome::Refused(Refusal::Blocked)
        } else {
            match &f.response {
                Some(r) => {
                    let size = r.body.len() as u64;
                    if self.cached_bytes.fetch_add(size, Ordering::Relaxed) + size > CACHE_BYTES {
                        self.outcomes.lock().expect("lock").remove(url);
                    }
                    Outcome::Response(Arc::new(r.clone()))
                }
                None => Outcome::Refused(Refusal::Failed),
            }
        };
        self.fetched.lock().expect("lock").push(f);
        outcome
    }
}

/// The answer to a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`), given
/// without asking the server: the request it clears is a GET that goes through `fetch` (and the
/// server's own CORS headers on it still decide), or a method that is not sent at all. `None`
/// for any other request.
fn preflight(request: &BrowserRequest) -> Option<Answer> {
    if request.method != "OPTIONS" {
        return None;
    }
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let method = header("access-control-request-method")?;
    let mut headers = vec![
        (
            "access-control-allow-origin".to_string(),
            header("origin").unwrap_or_else(|| "*".into()),
        ),
        ("access-control-allow-methods".into(), method),
        ("access-control-allow-credentials".into(), "true".into()),
        ("access-control-max-age".into(), "600".into()),
        ("vary".into(), "Origin".into()),
    ];
    if let Some(h) = header("access-control-request-headers") {
        headers.push(("access-control-allow-headers".into(), h));
    }
    Some(Answer::Respond {
        status: 204,
        headers,
        body: Arc::new(Vec::new()),
    })
}

impl Network for BrowserTraffic {
    fn answer(&self, request: BrowserRequest) -> BoxFuture<'_, Answer> {
        Box::pin(async move {
            let (url, kind, method) = (request.url.clone(), request.kind, request.method.clone());
            let answer = self.answer_request(request).await;
            self.count(&answer);
            match &answer {
                Answer::Respond { status, body, .. } => {
                    tracing::debug!(%url, %kind, %method, status, bytes = body.len(), "browser request answered")
                }
                Answer::Refuse(why) => {
                    tracing::debug!(%url, %kind, %method, ?why, "browser request refused")
                }
            }
            answer
        })
    }
}

/// The JSON a rendering's scripts may carry into its rendered DOM, in bytes (8 MiB): past it,
/// further documents are left out of the DOM (they are kept in the store all the same).
pub const PAGE_DATA_BYTES: usize = 8 << 20;

/// One rendering's view of the run's traffic: every request answered by the run's
/// [`BrowserTraffic`], and the JSON documents the page's scripts fetched (a comment widget's
/// data, issue 41) noted in the order they arrived, for the rendering to carry
/// (`core::comment_data::embed`).
pub struct PageTraffic {
    run: Arc<BrowserTraffic>,
    data: Mutex<Vec<(String, serde_json::Value)>>,
    bytes: AtomicU64,
}

impl PageTraffic {
    /// A view of `run` for one rendering.
    pub fn new(run: Arc<BrowserTraffic>) -> Arc<PageTraffic> {
        Arc::new(PageTraffic {
            run,
            data: Mutex::new(Vec::new()),
            bytes: AtomicU64::new(0),
        })
    }

    /// The JSON documents fetched so far: (URL, document), in arrival order, each URL once.
    pub fn data(&self) -> Vec<(String, serde_json::Value)> {
        self.data.lock().expect("lock").clone()
    }
}

/// A successful answer's body as JSON, when it is a JSON object or array.
fn json_body(answer: &Answer) -> Option<serde_json::Value> {
    let Answer::Respond { status, body, .. } = answer else {
        return None;
    };
    let first = body.iter().find(|b| !b.is_ascii_whitespace())?;
    if !(200..300).contains(status) || !matches!(first, b'{' | b'[') {
        return None;
    }
    serde_json::from_slice(body).ok()
}

impl Network for PageTraffic {
    fn answer(&self, request: BrowserRequest) -> BoxFuture<'_, Answer> {
        Box::pin(async move {
            let (url, kind) = (request.url.clone(), request.kind);
            let answer = self.run.answer(request).await;
            if kind == RequestKind::Data {
                if let (Some(json), Answer::Respond { body, .. }) = (json_body(&answer), &answer) {
                    let size = body.len() as u64;
                    let total = self.bytes.fetch_add(size, Ordering::Relaxed) + size;
                    let mut data = self.data.lock().expect("lock");
                    if total <= PAGE_DATA_BYTES as u64 && !data.iter().any(|(u, _)| *u == url) {
                        data.push((url, json));
                    }
                }
            }
            answer
        })
    }
}
