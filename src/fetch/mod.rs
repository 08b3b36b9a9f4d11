//! Fetching: one shared HTTP client (reqwest, rustls, gzip/brotli/deflate), a User-Agent that
//! names the project and a contact URL, timeouts, a body size cap, redirects followed by hand
//! (so robots.txt is checked on every host a redirect lands on, and loops are caught), all
//! through [`politeness`], and a [`FetchRecord`] for every request, successful or not.
//!
//! A [`Response`] is what arrived (status, headers, body as received, after transfer decoding);
//! the store keeps it. [`Fetcher::get_all`] runs many requests at once, each still bounded by
//! its host's politeness.

use chrono::{DateTime, Utc};
use std::time::{Duration, Instant};

/// User-Agent sent with every request.
pub const USER_AGENT: &str = concat!(
    "everblog/",
    env!("CARGO_PKG_VERSION"),
    " (blog archiver; +https://github.com/everblog/everblog)"
);
/// The product token robots.txt groups are matched against.
pub const USER_AGENT_TOKEN: &str = "everblog";
/// Largest body kept, in bytes; larger responses are cut and flagged in the log.
pub const MAX_BODY: usize = 20 * 1024 * 1024;

pub mod politeness;

use politeness::{Politeness, PolitenessSettings, Robots, SharedGate};
use std::sync::Arc;
use url::Url;

/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 10;

/// The HTTP client with politeness. Cheap to clone (shares one connection pool and the per-host
/// state). Every request — robots.txt, each redirect hop, the page — goes through
/// [`Politeness`] and yields a [`FetchRecord`].
#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    politeness: Arc<Politeness>,
}

/// An HTTP response as received (and as the store keeps it).
#[derive(Debug, Clone)]
pub struct Response {
    /// URL requested.
    pub url: String,
    /// URL after redirects (or, for a rendering, the URL the browser ended on).
    pub final_url: String,
    /// HTTP status.
    pub status: u16,
    /// Response headers in order, as (name, value).
    pub headers: Vec<(String, String)>,
    /// Body bytes after content decoding (gzip, br, deflate), at most [`MAX_BODY`].
    pub body: Vec<u8>,
    /// When the response arrived.
    pub fetched_at: DateTime<Utc>,
}

impl Response {
    /// A success worth keeping and reading: status below 400, and not a 304 (which has no body).
    pub fn is_success(&self) -> bool {
        self.status < 400 && self.status != 304
    }
}

/// One line of the fetch log: one HTTP request, whatever became of it.
#[derive(Debug, Clone)]
pub struct FetchRecord {
    /// URL requested.
    pub url: String,
    /// HTTP status, if a response arrived.
    pub status: Option<u16>,
    /// Body size in bytes.
    pub bytes: Option<u64>,
    /// Wall time of the request in milliseconds.
    pub elapsed_ms: u64,
    /// When the request started.
    pub fetched_at: DateTime<Utc>,
    /// Error text when the fetch failed (network error, robots.txt, redirect loop, cut body).
    pub error: Option<String>,
}

impl FetchRecord {
    /// Why the request failed, for a person: the error, or "HTTP `status`" for a status of 400
    /// or more; `None` for a success.
    pub fn failure(&self) -> Option<String> {
        self.error.clone().or(self
            .status
            .filter(|s| *s >= 400)
            .map(|s| format!("HTTP {s}")))
    }
}

/// Outcome of one fetch: the response (when one arrived) and the log lines.
pub struct Fetched {
    /// The final response, `None` when the request failed (DNS, connection, timeout, robots.txt,
    /// redirect loop…).
    pub response: Option<Response>,
    /// What happened to the final request, for the fetch log.
    pub record: FetchRecord,
    /// Earlier requests made on the way: robots.txt fetches and redirect hops.
    pub hops: Vec<FetchRecord>,
    /// robots.txt forbids the URL (nothing was requested).
    pub blocked: bool,
    /// The host answered 429/503 and asked us to wait this long (or was backed off).
    pub retry_after: Option<Duration>,
}

impl Fetched {
    /// Every request this fetch made, in order: robots.txt and redirect hops, then the final
    /// request.
    pub fn requests(&self) -> impl Iterator<Item = &FetchRecord> {
        self.hops.iter().chain(std::iter::once(&self.record))
    }

    /// The host answered 304 Not Modified to a conditional GET.
    pub fn not_modified(&self) -> bool {
        self.response.as_ref().is_some_and(|r| r.status == 304)
    }

    /// The response when it is a success (see [`Response::is_success`]).
    pub fn success(&self) -> Option<&Response> {
        self.response.as_ref().filter(|r| r.is_success())
    }
}

impl Fetcher {
    /// A client with `timeout` per request and the given politeness; `shared` books each
    /// host's request slots with other processes too (the daemon's database-backed gate).
    ///
    /// # Errors
    /// The TLS back end cannot be initialised (reqwest's builder fails).
    pub fn new(
        timeout: Duration,
        settings: PolitenessSettings,
        shared: Option<SharedGate>,
    ) -> anyhow::Result<Fetcher> {
        let client = reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Fetcher {
            client,
            politeness: Arc::new(Politeness::new(settings, shared)),
        })
    }

    /// GETs every URL, `concurrency` requests at a time (each host still bounded by its
    /// politeness), conditionally on an earlier response when one is given (see
    /// [`Fetcher::get_if_changed`]). Returns (url, fetch) in completion order.
    pub async fn get_all(
        &self,
        requests: Vec<(String, Option<Response>)>,
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
                    let f = fetcher.get_if_changed(&url, previous.as_ref()).await;
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

    /// The robots.txt of `url`'s host (fetched on first use; logged in `hops`).
    pub async fn robots(
        &self,
        url: &Url,
        hops: &mut Vec<FetchRecord>,
    ) -> Arc<politeness::HostState> {
        let host = self.politeness.host(url);
        let mut record = None;
        host.robots
            .get_or_init(|| async {
                let (robots, rec) = self.fetch_robots(url, &host).await;
                record = Some(rec);
                robots
            })
            .await;
        if let Some(r) = record {
            host.apply_crawl_delay();
            hops.push(r);
        }
        host
    }

    async fn fetch_robots(&self, url: &Url, host: &politeness::HostState) -> (Robots, FetchRecord) {
        let robots_url = url.join("/robots.txt").expect("http URLs join");
        let _permit = host.acquire().await;
        let (response, record) = self.raw_get(&robots_url, &[]).await;
        let robots = match &response {
            Some(r) if r.status < 300 && content_type(r).is_some_and(|c| c.contains("html")) => {
                Robots::allow_all("robots.txt is an HTML page; allowing everything")
            }
            Some(r) if r.status < 300 => Robots::parse(USER_AGENT_TOKEN, &r.body),
            Some(r) if r.status < 500 => Robots::allow_all(format!(
                "no robots.txt (HTTP {}); allowing everything",
                r.status
            )),
            Some(r) => Robots::allow_all(format!(
                "robots.txt answered HTTP {}; allowing everything",
                r.status
            )),
            None => Robots::allow_all(format!(
                "robots.txt unreachable ({}); allowing everything",
                record.error.clone().unwrap_or_default()
            )),
        };
        if let Some(note) = &robots.note {
            tracing::info!(host = %politeness::host_key(url), "{note}");
        }
        (robots, record)
    }

    /// GETs `url`, politely, following redirects. Never fails: errors are in `record.error`.
    pub async fn get(&self, url: &str) -> Fetched {
        self.get_with(url, &[]).await
    }

    /// A conditional GET of `url` (RFC 9110 §13): sends `If-None-Match` / `If-Modified-Since`
    /// from the `ETag` / `Last-Modified` of `previous` (an earlier response for the same URL), so
    /// an unchanged resource answers 304 with no body. Without validators it is a plain GET.
    pub async fn get_if_changed(&self, url: &str, previous: Option<&Response>) -> Fetched {
        let mut headers = Vec::new();
        if let Some(p) = previous.filter(|p| p.status == 200) {
            if let Some(etag) = header(p, "etag") {
                headers.push(("if-none-match", etag));
            }
            if let Some(lm) = header(p, "last-modified") {
                headers.push(("if-modified-since", lm));
            }
        }
        self.get_with(url, &headers).await
    }

    /// GET with extra request headers on the first request (not on redirect hops).
    async fn get_with(&self, url: &str, extra: &[(&'static str, String)]) -> Fetched {
        let mut hops = Vec::new();
        let failed = |record: FetchRecord, hops: Vec<FetchRecord>, blocked: bool| Fetched {
            response: None,
            record,
            hops,
            blocked,
            retry_after: None,
        };
        let mut current = match Url::parse(url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => u,
            _ => return failed(error_record(url, "not an http(s) URL"), hops, false),
        };
        let mut seen = std::collections::HashSet::new();
        let mut redirected = false;
        for _ in 0..=MAX_REDIRECTS {
            if !seen.insert(current.to_string()) {
                return failed(
                    error_record(
                        current.as_str(),
                        &format!("redirect loop back to {current}"),
                    ),
                    hops,
                    false,
                );
            }
            let host = self.robots(&current, &mut hops).await;
            if host
                .robots
                .get()
                .is_some_and(|r| !r.allowed(current.as_str()))
            {
                return failed(
                    error_record(current.as_str(), "disallowed by robots.txt"),
                    hops,
                    true,
                );
            }
            let permit = host.acquire().await;
            let (response, mut record) = self
                .raw_get(&current, if redirected { &[] } else { extra })
                .await;
            drop(permit);
            record.url = current.to_string();
            let Some(mut r) = response else {
                return failed(record, hops, false);
            };
            if r.status == 429 || r.status == 503 {
                let asked = header(&r, "retry-after").and_then(|v| politeness::retry_after(&v));
                let pause = host.back_off(asked);
                return Fetched {
                    response: Some(r),
                    record,
                    hops,
                    blocked: false,
                    retry_after: Some(pause),
                };
            }
            host.recovered();
            if (300..400).contains(&r.status) {
                if let Some(next) = header(&r, "location").and_then(|l| current.join(l.trim()).ok())
                {
                    if matches!(next.scheme(), "http" | "https") {
                        hops.push(record);
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
                blocked: false,
                retry_after: None,
            };
        }
        failed(
            error_record(
                current.as_str(),
                &format!("more than {MAX_REDIRECTS} redirects"),
            ),
            hops,
            false,
        )
    }

    /// One GET without redirects or politeness.
    async fn raw_get(
        &self,
        url: &Url,
        extra: &[(&'static str, String)],
    ) -> (Option<Response>, FetchRecord) {
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
            req = req.header(*k, v);
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => return (None, record(None, None, Some(error_text(&e)))),
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
        let mut resp = resp;
        let mut error = None;
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    body.extend_from_slice(&chunk);
                    if body.len() > MAX_BODY {
                        body.truncate(MAX_BODY);
                        error = Some(format!("body larger than {MAX_BODY} bytes, truncated"));
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
        let bytes = Some(body.len() as u64);
        let response = Response {
            url: url.to_string(),
            final_url: url.to_string(),
            status,
            headers,
            body,
            fetched_at,
        };
        (Some(response), record(Some(status), bytes, error))
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

/// A response header by name (case-insensitive).
pub fn header(r: &Response, name: &str) -> Option<String> {
    r.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
}

fn error_text(e: &reqwest::Error) -> String {
    let mut innermost: &dyn std::error::Error = e;
    while let Some(inner) = innermost.source() {
        innermost = inner;
    }
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else if e.is_redirect() {
        "too many redirects"
    } else if e.is_body() || e.is_decode() {
        "broken response body"
    } else {
        "request failed"
    };
    let detail = innermost.to_string();
    if std::ptr::addr_eq(innermost, e as &dyn std::error::Error) || detail.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {detail}")
    }
}

/// The `Content-Type` header of a response, lower-cased, if any.
pub fn content_type(r: &Response) -> Option<String> {
    r.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.to_ascii_lowercase())
}

/// True when the response is HTML (by header, or by sniffing when the header is missing).
pub fn is_html(r: &Response) -> bool {
    match content_type(r) {
        Some(ct) => ct.contains("html"),
        None => {
            let head =
                String::from_utf8_lossy(&r.body[..r.body.len().min(512)]).to_ascii_lowercase();
            head.contains("<html") || head.contains("<!doctype html")
        }
    }
}

/// Decodes a body to text: charset from the `Content-Type` header, else a BOM, else
/// `<meta charset>` in the first 1024 bytes, else UTF-8 (invalid bytes become U+FFFD).
pub fn decode(r: &Response) -> String {
    let from_label = |label: &str| {
        encoding_rs::Encoding::for_label(label.trim().trim_matches(['"', '\'']).as_bytes())
    };
    let header = content_type(r).and_then(|ct| {
        ct.split(';')
            .find_map(|p| p.trim().strip_prefix("charset=").map(str::to_string))
    });
    let meta = || {
        let head = String::from_utf8_lossy(&r.body[..r.body.len().min(1024)]).to_ascii_lowercase();
        let i = head.find("charset=")?;
        let rest = &head[i + 8..];
        let label: String = rest
            .trim_start_matches(['"', '\''])
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        from_label(&label)
    };
    let encoding = header
        .as_deref()
        .and_then(from_label)
        .or_else(|| encoding_rs::Encoding::for_bom(&r.body).map(|(e, _)| e))
        .or_else(meta)
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(&r.body);
    text.into_owned()
}
