//! Fetching: one HTTP client (reqwest, rustls, gzip/brotli/deflate), a User-Agent that names
//! the project and a contact URL, timeouts, redirects followed by hand (so robots.txt and the
//! address policy are checked on every host a redirect lands on, and loops are caught), all
//! through [`politeness`], and a [`FetchRecord`] for every request, successful or not.
//!
//! - [`Response`]: what arrived (status, headers, body after content decoding); the store keeps it.
//! - [`FetchSettings`] (`[fetch]`): the body caps per kind of [`Resource`] (hitting one says which
//!   setting to raise, never a truncated body) and the private networks allowed.
//! - [`address`]: the address policy (no requests into private networks, checked after DNS
//!   resolution); [`Fetcher::for_blog`] scopes a fetcher to one blog's own host.
//! - [`robots`]: robots.txt per RFC 9309.
//! - [`Fetcher::get_all`]: many requests at once, each still bounded by its host's politeness.

pub mod address;
pub mod charset;
pub mod politeness;
pub use politeness::{Requisites, RobotsSettings};
mod response;
pub mod robots;
pub use response::{
    content_type, decode, decode_body, header, is_html, mime_type, FetchRecord, Fetched, Response,
    RENDERED_HEADER,
};

use address::{AddressPolicy, PolicyResolver, Refused};
use chrono::Utc;
use politeness::{HostState, Politeness, PolitenessSettings, SharedGate};
use robots::{Robots, MAX_ROBOTS, MAX_ROBOTS_REDIRECTS};
use std::sync::Arc;
use std::time::{Duration, Instant};
use url::Url;

/// User-Agent sent with every request.
pub const USER_AGENT: &str = concat!(
    "everblog/",
    env!("CARGO_PKG_VERSION"),
    " (blog archiver; +https://github.com/everblog/everblog)"
);
/// The product token robots.txt groups are matched against.
pub const USER_AGENT_TOKEN: &str = "everblog";
/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 10;

crate::core::vocabulary! {
    /// What a request fetches: it decides the body cap ([`FetchSettings`]).
    pub enum Resource {
        /// An HTML page (posts, listings, entry pages).
        Page = "page",
        /// A feed or comment feed.
        Feed = "feed",
        /// A sitemap or sitemap index.
        Sitemap = "sitemap",
        /// Anything else.
        Body = "body",
    }
}

/// Limits of fetching: the `[fetch]` section of the configuration file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FetchSettings {
    /// Largest body of a response not otherwise capped, in MB (default 20).
    pub max_body_mb: f64,
    /// Largest feed or comment feed, in MB (default 20).
    pub max_feed_mb: f64,
    /// Largest HTML page, in MB (default 20).
    pub max_page_mb: f64,
    /// Largest sitemap, in MB (default 50, the sitemap protocol's own limit).
    pub max_sitemap_mb: f64,
    /// Private networks everblog may reach although no blog was added on them, as CIDR blocks
    /// (`["10.1.0.0/16"]`); default none.
    pub allow_private: Vec<ipnet::IpNet>,
}

impl Default for FetchSettings {
    fn default() -> Self {
        FetchSettings {
            max_body_mb: 20.0,
            max_feed_mb: 20.0,
            max_page_mb: 20.0,
            max_sitemap_mb: 50.0,
            allow_private: Vec::new(),
        }
    }
}

impl FetchSettings {
    /// The body cap of `resource` in bytes, and the setting that sets it.
    pub fn cap(&self, resource: Resource) -> (usize, &'static str) {
        let (mb, key) = match resource {
            Resource::Page => (self.max_page_mb, "max_page_mb"),
            Resource::Feed => (self.max_feed_mb, "max_feed_mb"),
            Resource::Sitemap => (self.max_sitemap_mb, "max_sitemap_mb"),
            Resource::Body => (self.max_body_mb, "max_body_mb"),
        };
        ((mb.max(0.0) * 1024.0 * 1024.0) as usize, fetch_key(key))
    }
}

/// The setting of a `[fetch]` cap, as error messages name it.
fn fetch_key(key: &'static str) -> &'static str {
    match key {
        "max_page_mb" => "[fetch] max_page_mb",
        "max_feed_mb" => "[fetch] max_feed_mb",
        "max_sitemap_mb" => "[fetch] max_sitemap_mb",
        _ => "[fetch] max_body_mb",
    }
}

/// How one GET is bounded: the body cap (and the setting that sets it, for the error) and
/// whether robots.txt decides.
#[derive(Debug, Clone, Copy)]
struct Limit {
    what: &'static str,
    bytes: usize,
    setting: &'static str,
    robots: bool,
    /// Do not wait for a host paused longer than [`NO_WAIT_LONGER`]: answer at once with its
    /// `retry_after` (a post's media are come back for by a later job).
    no_wait: bool,
}

/// A fetch that must not wait ([`Fetcher::get_requisite`]) waits for a paused host at most
/// this long (its ordinary spacing), never for a pause a server asked for.
pub const NO_WAIT_LONGER: Duration = Duration::from_secs(2);

/// Why robots.txt keeps a request from being sent.
enum Denied {
    /// The address policy refused the host (or a redirect of its robots.txt).
    Refused(Refused),
    /// robots.txt is unreachable: the host is disallowed for this long, for this reason.
    Unreachable(Duration, String),
}

/// One raw GET's result: the response (body within `cap`), its log line, whether the body went
/// over the cap (and was cut there), and the address policy's refusal when it stopped it.
struct Raw {
    response: Option<Response>,
    record: FetchRecord,
    over_cap: bool,
    refused: Option<Refused>,
}

/// The HTTP client with politeness and the address policy. Cheap to clone (shares one
/// connection pool and the per-host state). Every request — robots.txt, each redirect hop, the
/// page — goes through [`Politeness`] and yields a [`FetchRecord`].
#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    politeness: Arc<Politeness>,
    policy: Arc<AddressPolicy>,
    settings: Arc<FetchSettings>,
    robots: RobotsSettings,
    timeout: Duration,
}

fn client(timeout: Duration, policy: &Arc<AddressPolicy>) -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(Arc::new(PolicyResolver(policy.clone())))
        .build()?)
}

impl Fetcher {
    /// A client with `timeout` per request, the `[fetch]` limits, the given politeness and
    /// `[robots]` policy;
    /// `shared` books each host's request slots with other processes too (the daemon's
    /// database-backed gate). It reaches no private address but `settings.allow_private`'s:
    /// scope it to a blog with [`Fetcher::for_blog`].
    ///
    /// # Errors
    /// The TLS back end cannot be initialised (reqwest's builder fails).
    pub fn new(
        timeout: Duration,
        settings: FetchSettings,
        politeness: PolitenessSettings,
        robots: RobotsSettings,
        shared: Option<SharedGate>,
    ) -> anyhow::Result<Fetcher> {
        let policy = Arc::new(AddressPolicy::new(&settings.allow_private, []));
        Ok(Fetcher {
            client: client(timeout, &policy)?,
            politeness: Arc::new(Politeness::new(politeness, shared)),
            policy,
            settings: Arc::new(settings),
            robots,
            timeout,
        })
    }

    /// The same fetcher (politeness shared) allowed to reach the hosts of `urls` (a blog's home
    /// and feed) when they were given as a private IP address or `localhost`: a blog added as
    /// `http://127.0.0.1:8000/` reaches that host on any port, and no other private address.
    ///
    /// # Errors
    /// The TLS back end cannot be initialised.
    pub fn for_blog<'a>(&self, urls: impl IntoIterator<Item = &'a str>) -> anyhow::Result<Fetcher> {
        let policy = Arc::new(AddressPolicy::new(&self.settings.allow_private, urls));
        Ok(Fetcher {
            client: client(self.timeout, &policy)?,
            policy,
            ..self.clone()
        })
    }

    /// The `[fetch]` limits.
    pub fn settings(&self) -> &FetchSettings {
        &self.settings
    }

    /// GETs every URL, `concurrency` requests at a time (each host still bounded by its
    /// politeness), conditionally on an earlier response when one is given (see
    /// [`Fetcher::get_if_changed`]). Returns (url, fetch) in completion order.
    pub async fn get_all(
        &self,
        requests: Vec<(String, Option<Response>)>,
        resource: Resource,
        concurrency: usize,
    ) -> Vec<(String, Fetched)> {
        let mut out = Vec::with_capacity(requests.len());
        let mut set = tokio::task::JoinSet::new();
        let mut pending = requests.into_iter();
        loop {
            while set.len() < concurrency.max(1) {
                let Some((url, previous)) = pending.next() else {
                    break;
                };
                let fetcher = self.clone();
                set.spawn(async move {
                    let f = fetcher
                        .get_if_changed(&url, previous.as_ref(), resource)
                        .await;
                    (url, f)
                });
            }
            match set.join_next().await {
                Some(Ok(done)) => out.push(done),
                Some(Err(e)) => tracing::error!(error = %e, "fetch task failed"),
                None => break,
            }
        }
        out
    }

    /// The state of `url`'s host once its robots.txt is known (read on first use, its requests
    /// logged in `hops`).
    async fn robots(
        &self,
        url: &Url,
        hops: &mut Vec<FetchRecord>,
    ) -> Result<Arc<HostState>, Denied> {
        let host = self.politeness.host(url);
        if host.robots.get().is_some() {
            return Ok(host);
        }
        if let Some((wait, why)) = host.robots_retry() {
            return Err(Denied::Unreachable(wait, why));
        }
        let read = host
            .robots
            .get_or_try_init(|| async {
                // Another request may have just found robots.txt unreachable.
                if let Some((wait, why)) = host.robots_retry() {
                    return Err(Denied::Unreachable(wait, why));
                }
                let (robots, records) = self.fetch_robots(url, &host).await;
                hops.extend(records);
                robots
            })
            .await;
        match read {
            Ok(_) => {
                host.apply_crawl_delay();
                Ok(host)
            }
            // A read that just failed (its wait is not known yet): back off.
            Err(Denied::Unreachable(wait, why)) if wait.is_zero() => {
                let wait = host.robots_unreachable(why.clone());
                tracing::info!(host = %politeness::host_key(url), reason = %why, retry_in = ?wait, "robots.txt unreachable: the host is disallowed until then (RFC 9309)");
                Err(Denied::Unreachable(wait, why))
            }
            Err(denied) => Err(denied),
        }
    }

    /// The robots.txt of `url`'s host (read on first use, its requests logged in `hops`); `None`
    /// when it cannot be read now (unreachable, or the address policy refuses the host).
    pub async fn robots_of(
        &self,
        url: &Url,
        hops: &mut Vec<FetchRecord>,
    ) -> Option<Arc<HostState>> {
        self.robots(url, hops).await.ok()
    }

    /// Reads robots.txt (RFC 9309, see [`robots`]): the rules, or why the host must wait.
    async fn fetch_robots(
        &self,
        url: &Url,
        host: &HostState,
    ) -> (Result<Robots, Denied>, Vec<FetchRecord>) {
        let mut records = Vec::new();
        let mut current = url.join("/robots.txt").expect("http URLs join");
        for _ in 0..=MAX_ROBOTS_REDIRECTS {
            if let Some(host) = current.host() {
                if let Err(r) = self.policy.check_literal(&host) {
                    records.push(error_record(current.as_str(), &r.to_string()));
                    return (Err(Denied::Refused(r)), records);
                }
            }
            let raw = {
                let _permit = host.acquire().await;
                // One byte past the limit: parsing then cuts at the last whole line.
                self.raw_get(&current, &[], MAX_ROBOTS + 1).await
            };
            let Raw {
                response,
                record,
                refused,
                ..
            } = raw;
            records.push(record);
            let robots = match response {
                None => {
                    if let Some(r) = refused {
                        return (Err(Denied::Refused(r)), records);
                    }
                    let why = records
                        .last()
                        .and_then(|r| r.error.clone())
                        .unwrap_or_default();
                    return (
                        Err(Denied::Unreachable(
                            Duration::ZERO,
                            format!("{why}, reading robots.txt"),
                        )),
                        records,
                    );
                }
                Some(r) if (300..400).contains(&r.status) => {
                    match header(&r, "location").and_then(|l| current.join(l.trim()).ok()) {
                        Some(next) if matches!(next.scheme(), "http" | "https") => {
                            current = next;
                            continue;
                        }
                        _ => Robots::allow_all(format!(
                            "robots.txt redirects nowhere usable (HTTP {}); allowing everything",
                            r.status
                        )),
                    }
                }
                Some(r)
                    if r.status < 300 && content_type(&r).is_some_and(|c| c.contains("html")) =>
                {
                    Robots::allow_all("robots.txt is an HTML page; allowing everything")
                }
                Some(r) if r.status < 300 => Robots::parse(USER_AGENT_TOKEN, &r.body),
                Some(r) if r.status < 500 => Robots::allow_all(format!(
                    "no robots.txt (HTTP {}); allowing everything",
                    r.status
                )),
                Some(r) => {
                    return (
                        Err(Denied::Unreachable(
                            Duration::ZERO,
                            format!("robots.txt answered HTTP {}", r.status),
                        )),
                        records,
                    );
                }
            };
            if let Some(note) = &robots.note {
                tracing::info!(host = %politeness::host_key(url), "{note}");
            }
            return (Ok(robots), records);
        }
        let robots = Robots::allow_all(format!(
            "robots.txt redirects more than {MAX_ROBOTS_REDIRECTS} times; allowing everything (RFC 9309 §2.3.1.2)"
        ));
        tracing::info!(host = %politeness::host_key(url), "{}", robots.note.as_deref().unwrap_or_default());
        (Ok(robots), records)
    }

    /// GETs `url`, politely, following redirects; the body is capped as `resource`'s. Never
    /// fails: errors are in `record.error`.
    pub async fn get(&self, url: &str, resource: Resource) -> Fetched {
        let limit = self.limit(resource);
        self.get_with(url, &[], limit).await
    }

    /// Every wait for a host ends at once when `stop` is set (SIGTERM, SIGINT): the request
    /// is then not sent and comes back with `retry_after` (the crawl records it as waiting).
    /// Set before the fetcher is used.
    pub fn stopping_on(self, stop: Arc<std::sync::atomic::AtomicBool>) -> Fetcher {
        self.politeness.stopping_on(stop);
        self
    }

    /// GETs a page requisite or a post's media file (an image, stylesheet, font, audio…):
    /// politely, following redirects, the body capped at `max_bytes` (`setting` is named when
    /// a body is larger); robots.txt decides only with `[robots] requisites = "obey"` (by
    /// default the embeds of a permitted page are fetched, as Browsertrix and the Internet
    /// Archive do). Never fails: errors are in `record.error`.
    pub async fn get_requisite(
        &self,
        url: &str,
        max_bytes: usize,
        setting: &'static str,
    ) -> Fetched {
        let limit = Limit {
            what: "file",
            bytes: max_bytes,
            setting,
            robots: self.robots.requisites == Requisites::Obey,
            no_wait: true,
        };
        self.get_with(url, &[], limit).await
    }

    /// GETs what a rendering browser asks for, with the browser's request headers (those that
    /// say what it accepts and who asks: `Accept`, `Accept-Language`, `Referer`, `Origin`,
    /// `Cookie`…; never its `User-Agent`, `Host` or encodings): a `document` (a page, an
    /// iframe's document, a navigation) as a page (robots.txt decides, `[fetch] max_page_mb`),
    /// anything else as a requisite (robots.txt per `[robots] requisites`, `[fetch]
    /// max_body_mb`). Never fails: errors are in `record.error`.
    pub async fn get_for_browser(
        &self,
        url: &str,
        headers: &[(String, String)],
        document: bool,
    ) -> Fetched {
        let passed: Vec<(String, String)> = headers
            .iter()
            .filter(|(k, _)| {
                let k = k.to_ascii_lowercase();
                !(matches!(
                    k.as_str(),
                    "host"
                        | "user-agent"
                        | "accept-encoding"
                        | "connection"
                        | "content-length"
                        | "range"
                ) || k.starts_with("proxy-")
                    || k.starts_with("if-"))
            })
            .cloned()
            .collect();
        let limit = if document {
            self.limit(Resource::Page)
        } else {
            Limit {
                robots: self.robots.requisites == Requisites::Obey,
                ..self.limit(Resource::Body)
            }
        };
        self.get_with(url, &passed, limit).await
    }

    fn limit(&self, resource: Resource) -> Limit {
        let (bytes, setting) = self.settings.cap(resource);
        Limit {
            what: resource.as_str(),
            bytes,
            setting,
            robots: true,
            no_wait: false,
        }
    }

    /// A conditional GET of `url` (RFC 9110 §13): sends `If-None-Match` / `If-Modified-Since`
    /// from the `ETag` / `Last-Modified` of `previous` (an earlier response for the same URL), so
    /// an unchanged resource answers 304 with no body. Without validators it is a plain GET.
    pub async fn get_if_changed(
        &self,
        url: &str,
        previous: Option<&Response>,
        resource: Resource,
    ) -> Fetched {
        let mut headers = Vec::new();
        if let Some(p) = previous.filter(|p| p.status == 200) {
            if let Some(etag) = header(p, "etag") {
                headers.push(("if-none-match".to_string(), etag));
            }
            if let Some(lm) = header(p, "last-modified") {
                headers.push(("if-modified-since".to_string(), lm));
            }
        }
        let limit = self.limit(resource);
        self.get_with(url, &headers, limit).await
    }

    /// GET with extra request headers on the first request (not on redirect hops).
    async fn get_with(&self, url: &str, extra: &[(String, String)], limit: Limit) -> Fetched {
        let mut hops = Vec::new();
        let mut redirects: Vec<Response> = Vec::new();
        let refused = |r: Refused, at: &Url, hops: Vec<FetchRecord>| {
            tracing::warn!(url = %at, "{r}");
            Fetched {
                refused: true,
                ..Fetched::failed(error_record(at.as_str(), &r.to_string()), hops)
            }
        };
        let mut current = match Url::parse(url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => u,
            _ => return Fetched::failed(error_record(url, "not an http(s) URL"), hops),
        };
        let cap = limit.bytes;
        let mut seen = std::collections::HashSet::new();
        let mut redirected = false;
        for _ in 0..=MAX_REDIRECTS {
            if !seen.insert(current.to_string()) {
                let why = format!("redirect loop back to {current}");
                return Fetched::failed(error_record(current.as_str(), &why), hops);
            }
            if let Some(Err(r)) = current.host().map(|h| self.policy.check_literal(&h)) {
                return refused(r, &current, hops);
            }
            let host = match self.robots(&current, &mut hops).await {
                Ok(host) => host,
                Err(Denied::Refused(r)) => return refused(r, &current, hops),
                Err(Denied::Unreachable(wait, why)) => {
                    let why = format!(
                        "{why}: until robots.txt can be read the host counts as disallowing everything (RFC 9309); retried in {}",
                        humantime::format_duration(Duration::from_secs(wait.as_secs().max(1)))
                    );
                    return Fetched {
                        retry_after: Some(wait),
                        ..Fetched::failed(error_record(current.as_str(), &why), hops)
                    };
                }
            };
            if limit.robots
                && host
                    .robots
                    .get()
                    .is_some_and(|r| !r.allowed(current.as_str()))
            {
                return Fetched {
                    blocked: true,
                    ..Fetched::failed(
                        error_record(current.as_str(), "disallowed by robots.txt"),
                        hops,
                    )
                };
            }
            let asked = Instant::now();
            let permit = match host
                .acquire_within(limit.no_wait.then_some(NO_WAIT_LONGER))
                .await
            {
                Ok(p) => {
                    crate::meters::politeness_wait(asked.elapsed());
                    p
                }
                Err(wait) => {
                    let why = format!(
                        "the host asked to wait ({} more): not waited for, come back later",
                        humantime::format_duration(Duration::from_secs(wait.as_secs().max(1)))
                    );
                    return Fetched {
                        retry_after: Some(wait),
                        ..Fetched::failed(error_record(current.as_str(), &why), hops)
                    };
                }
            };
            let raw = self
                .raw_get(&current, if redirected { &[] } else { extra }, cap)
                .await;
            drop(permit);
            let Raw {
                response,
                mut record,
                over_cap,
                refused: refusal,
            } = raw;
            if let Some(r) = refusal {
                return refused(r, &current, hops);
            }
            if over_cap {
                let mb = cap as f64 / (1024.0 * 1024.0);
                record.error = Some(format!(
                    "{} larger than {mb} MB: raise {} to keep it",
                    limit.what, limit.setting
                ));
                return Fetched::failed(record, hops);
            }
            let Some(mut r) = response else {
                return Fetched::failed(record, hops);
            };
            if r.status == 429 || r.status == 503 {
                let asked = header(&r, "retry-after").and_then(|v| politeness::retry_after(&v));
                let wait = host.back_off(asked);
                return Fetched {
                    response: Some(r),
                    record,
                    hops,
                    redirects,
                    blocked: false,
                    refused: false,
                    retry_after: Some(wait),
                };
            }
            host.recovered();
            if (300..400).contains(&r.status) {
                if let Some(next) = header(&r, "location").and_then(|l| current.join(l.trim()).ok())
                {
                    if matches!(next.scheme(), "http" | "https") {
                        hops.push(record);
                        r.url = current.to_string();
                        r.final_url = current.to_string();
                        redirects.push(r);
                        current = next;
                        redirected = true;
                        continue;
                    }
                }
            }
            r.url = url.to_string();
            r.final_url = current.to_string();
            return Fetched {
                response: Some(r),
                record,
                hops,
                redirects,
                blocked: false,
                refused: false,
                retry_after: None,
            };
        }
        let why = format!("more than {MAX_REDIRECTS} redirects");
        Fetched::failed(error_record(current.as_str(), &why), hops)
    }

    /// One GET without redirects or politeness, its body read up to `cap` bytes.
    async fn raw_get(&self, url: &Url, extra: &[(String, String)], cap: usize) -> Raw {
        let started = Instant::now();
        let fetched_at = Utc::now();
        let record = |status: Option<u16>, bytes: Option<u64>, error: Option<String>| FetchRecord {
            url: url.to_string(),
            status,
            bytes,
            elapsed_ms: started.elapsed().as_millis() as u64,
            fetched_at,
            error,
        };
        let mut req = self.client.get(url.clone());
        for (k, v) in extra {
            req = req.header(k.as_str(), v.as_str());
        }
        let mut resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                let refused = address::refusal(&e).cloned();
                let why = refused
                    .as_ref()
                    .map(|r| r.to_string())
                    .unwrap_or_else(|| error_text(&e));
                crate::meters::fetched(None, 0, started.elapsed());
                return Raw {
                    response: None,
                    record: record(None, None, Some(why)),
                    over_cap: false,
                    refused,
                };
            }
        };
        let status = resp.status().as_u16();
        let headers: Vec<(String, String)> = resp
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let mut body = Vec::new();
        let mut error = None;
        let mut over_cap = false;
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    body.extend_from_slice(&chunk);
                    if body.len() > cap {
                        body.truncate(cap);
                        over_cap = true;
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    error = Some(error_text(&e));
                    break;
                }
            }
        }
        let body_len = body.len() as u64;
        let bytes = Some(body_len);
        let response = Response {
            url: url.to_string(),
            final_url: url.to_string(),
            status,
            headers,
            body,
            fetched_at,
        };
        crate::meters::fetched(Some(status), body_len, started.elapsed());
        Raw {
            response: Some(response),
            record: record(Some(status), bytes, error),
            over_cap,
            refused: None,
        }
    }
}

fn error_record(url: &str, error: &str) -> FetchRecord {
    FetchRecord {
        url: url.to_string(),
        status: None,
        bytes: None,
        elapsed_ms: 0,
        fetched_at: Utc::now(),
        error: Some(error.to_string()),
    }
}

/// A failed request in a few words (what failed: "timed out", "host not found", "cannot
/// connect"…), then the innermost cause.
fn error_text(e: &reqwest::Error) -> String {
    let mut innermost: &dyn std::error::Error = e;
    while let Some(inner) = innermost.source() {
        innermost = inner;
    }
    let detail = innermost.to_string();
    // The resolver's words for a name that does not exist (getaddrinfo's EAI_NONAME, through
    // hyper's "dns error").
    let unresolved = e.is_connect()
        && (detail.contains("failed to lookup address")
            || std::iter::successors(Some(e as &dyn std::error::Error), |e| e.source())
                .any(|e| e.to_string().starts_with("dns error")));
    let what = if e.is_timeout() {
        "timed out"
    } else if unresolved && detail.contains("Temporary failure") {
        "name lookup failed"
    } else if unresolved {
        "host not found"
    } else if e.is_connect() {
        "cannot connect"
    } else if e.is_redirect() {
        "too many redirects"
    } else if e.is_body() || e.is_decode() {
        "broken response body"
    } else {
        "request failed"
    };
    if std::ptr::addr_eq(innermost, e as &dyn std::error::Error) || detail.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {detail}")
    }
}
