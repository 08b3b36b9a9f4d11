//! What a fetch produced: [`Response`] (status, headers, decoded body) and reading it
//! (headers, content type, HTML or not, text in its charset); [`Fetched`], a fetch's outcome
//! with its [`FetchRecord`] log lines, and which response the archive keeps.

use chrono::{DateTime, Utc};
use std::time::Duration;

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
    /// Body bytes after content decoding (gzip, br, deflate), within the cap of its resource.
    pub body: Vec<u8>,
    /// When the response arrived.
    pub fetched_at: DateTime<Utc>,
}

/// Header added to a response that holds Chromium's rendering of its URL (the rendered DOM as
/// body), with what the rendering did: `chromium; clicks=N; frames=N`.
pub const RENDERED_HEADER: &str = "x-everblog-rendered";

impl Response {
    /// A success worth keeping and reading: status below 400, and not a 304 (which has no body).
    pub fn is_success(&self) -> bool {
        self.status < 400 && self.status != 304
    }

    /// True when this is a rendered DOM ([`RENDERED_HEADER`]), not what arrived from the
    /// network.
    pub fn is_rendered(&self) -> bool {
        self.headers.iter().any(|(k, _)| k == RENDERED_HEADER)
    }
}

/// A response header by name (case-insensitive).
pub fn header(r: &Response, name: &str) -> Option<String> {
    r.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
}

/// The `Content-Type` header of a response, lower-cased, if any.
pub fn content_type(r: &Response) -> Option<String> {
    r.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.to_ascii_lowercase())
}

/// The MIME type of a response with these headers: its `Content-Type` without parameters,
/// lower-cased (`text/html` of `Text/HTML; charset=UTF-8`); `None` when missing or empty.
pub fn mime_type(headers: &[(String, String)]) -> Option<String> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        .and_then(|(_, v)| v.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase())
        .filter(|m| !m.is_empty())
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

/// Decodes a body to text in the encoding the HTML Standard determines
/// ([`super::charset::html_encoding`]: BOM, the `Content-Type` charset, the `<meta>` prescan,
/// then a content detector); invalid bytes become U+FFFD.
pub fn decode(r: &Response) -> String {
    decode_body(&r.body, content_type(r).as_deref())
}

/// [`decode`] for a body whose `Content-Type` (lower-cased) is `content_type`, if known.
pub fn decode_body(body: &[u8], content_type: Option<&str>) -> String {
    let header = content_type.and_then(|ct| {
        ct.split(';')
            .find_map(|p| p.trim().strip_prefix("charset="))
    });
    let (text, _, _) = super::charset::html_encoding(body, header).decode(body);
    text.into_owned()
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
    /// Error text when the fetch failed (network error, robots.txt, address policy, redirect
    /// loop, body over its cap).
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
    /// address policy, redirect loop, body over its cap…).
    pub response: Option<Response>,
    /// What happened to the final request, for the fetch log.
    pub record: FetchRecord,
    /// Earlier requests made on the way: robots.txt fetches and redirect hops.
    pub hops: Vec<FetchRecord>,
    /// The redirects answered on the way to `response`, in order: each 3xx as received, its
    /// `url` and `final_url` the URL that answered it (kept, so a replay of the URL first
    /// asked for redirects as the live site did). Empty when the fetch failed.
    pub redirects: Vec<Response>,
    /// robots.txt forbids the URL (nothing was requested).
    pub blocked: bool,
    /// The address policy refused the URL or a redirect hop (nothing was sent there).
    pub refused: bool,
    /// Come back after this: the host answered 429/503 (and asked to wait this long, or was
    /// backed off), or its robots.txt is unreachable for now.
    pub retry_after: Option<Duration>,
}

impl Fetched {
    /// Every request this fetch made, in order: robots.txt and redirect hops, then the final
    /// request.
    pub fn requests(&self) -> impl Iterator<Item = &FetchRecord> {
        self.hops.iter().chain(std::iter::once(&self.record))
    }

    /// The response the archive keeps, if one arrived: any but a 304 (the earlier response
    /// stands) and a 429/503 (the host asked us to come back later).
    pub fn kept(&self) -> Option<&Response> {
        (self.response.as_ref()).filter(|r| !matches!(r.status, 304 | 429 | 503))
    }

    /// The host answered 304 Not Modified to a conditional GET.
    pub fn not_modified(&self) -> bool {
        self.response.as_ref().is_some_and(|r| r.status == 304)
    }

    /// The response when it is a success (see [`Response::is_success`]).
    pub fn success(&self) -> Option<&Response> {
        self.response.as_ref().filter(|r| r.is_success())
    }

    pub(super) fn failed(record: FetchRecord, hops: Vec<FetchRecord>) -> Fetched {
        Fetched {
            response: None,
            record,
            hops,
            redirects: Vec::new(),
            blocked: false,
            refused: false,
            retry_after: None,
        }
    }
}
