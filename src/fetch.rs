//! Fetching: one shared HTTP client (reqwest, rustls, gzip/brotli/deflate), a User-Agent that
//! names the project, timeouts, a body size cap, and a [`FetchRecord`] for every request,
//! successful or not, so the store can log it.

use crate::store::{FetchRecord, Response};
use chrono::Utc;
use std::time::{Duration, Instant};

/// User-Agent sent with every request.
pub const USER_AGENT: &str = concat!(
    "everblog/",
    env!("CARGO_PKG_VERSION"),
    " (blog archiver; +https://github.com/everblog/everblog)"
);
/// Largest body kept, in bytes; larger responses are cut and flagged in the log.
pub const MAX_BODY: usize = 20 * 1024 * 1024;

/// The HTTP client. Cheap to clone (shares one connection pool).
#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
}

/// Outcome of one fetch: the response (when one arrived) and the log line.
pub struct Fetched {
    /// The response, `None` when the request failed (DNS, connection, timeout…).
    pub response: Option<Response>,
    /// What happened, for the fetch log.
    pub record: FetchRecord,
}

impl Fetcher {
    /// A client with `timeout` per request.
    pub fn new(timeout: Duration) -> anyhow::Result<Fetcher> {
        let client = reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .redirect(reqwest::redirect::Policy::limited(10))
            .build()?;
        Ok(Fetcher { client })
    }

    /// GETs `url`. Never fails: errors are in `record.error`.
    pub async fn get(&self, url: &str) -> Fetched {
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
        let resp = match self.client.get(url).send().await {
            Ok(r) => r,
            Err(e) => {
                return Fetched {
                    response: None,
                    record: record(None, None, Some(error_text(&e))),
                }
            }
        };
        let status = resp.status().as_u16();
        let final_url = resp.url().to_string();
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
            final_url,
            status,
            headers,
            body,
            fetched_at,
        };
        Fetched {
            response: Some(response),
            record: record(Some(status), bytes, error),
        }
    }
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
