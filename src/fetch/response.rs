//! What arrived: [`Response`] (status, headers, decoded body) and reading it (headers, content
//! type, HTML or not, text in its charset).

use chrono::{DateTime, Utc};

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
