//! Conditional requests (RFC 9110 §13.1.2, RFC 9111): every successful answer to a GET gets an
//! `ETag` (a hash of its bytes, weak) unless its handler gave one (a capture names itself), and
//! a `Cache-Control` unless its handler set one: the reader's pages are revalidated each time
//! (`no-cache`: the archive grows while people read it), so an unchanged page costs a `304 Not
//! Modified` without a body. A request whose `If-None-Match` names the answer's tag gets 304,
//! with every header of the full answer but its length (a capture keeps its policy).

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::hash::{Hash, Hasher};

/// Answers longer than this (bytes) are not hashed: they pass as they are (a capture's file
/// names itself instead).
const MAX_HASHED: u64 = 8 * 1024 * 1024;

/// The layer: tags a successful GET answer and answers 304 to a request that already holds it.
pub async fn conditional(req: Request, next: Next) -> Response {
    let get = matches!(*req.method(), Method::GET | Method::HEAD);
    let held = req.headers().get(header::IF_NONE_MATCH).cloned();
    let r = next.run(req).await;
    if !get || r.status() != StatusCode::OK {
        return r;
    }
    let (mut parts, body) = r.into_parts();
    if !parts.headers.contains_key(header::CACHE_CONTROL) {
        parts
            .headers
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    let body = match parts.headers.get(header::ETAG) {
        Some(_) => body,
        None if body.size_hint().exact().is_some_and(|n| n <= MAX_HASHED) => {
            let bytes = match axum::body::to_bytes(body, MAX_HASHED as usize).await {
                Ok(b) => b,
                Err(e) => {
                    tracing::error!("serve: reading an answer to tag it: {e}");
                    return StatusCode::INTERNAL_SERVER_ERROR.into_response();
                }
            };
            let mut h = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut h);
            let tag = format!("W/\"{:016x}\"", h.finish());
            if let Ok(v) = HeaderValue::from_str(&tag) {
                parts.headers.insert(header::ETAG, v);
            }
            Body::from(bytes)
        }
        None => body,
    };
    let matched = match (&held, parts.headers.get(header::ETAG)) {
        (Some(held), Some(tag)) => names(held, tag),
        _ => false,
    };
    if matched {
        // Every header the full answer has but its length: a browser updates what it holds
        // from them (RFC 9111 §4.3.4), a capture's sandboxing policy and `Vary` among them.
        parts.status = StatusCode::NOT_MODIFIED;
        parts.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(parts, Body::empty());
    }
    Response::from_parts(parts, body)
}

/// Whether an `If-None-Match` value names `tag` (weak comparison, RFC 9110 §8.8.3.2): `*`, or
/// one of its comma-separated tags equal to `tag` once `W/` is set aside.
fn names(held: &HeaderValue, tag: &HeaderValue) -> bool {
    let (Ok(held), Ok(tag)) = (held.to_str(), tag.to_str()) else {
        return false;
    };
    let opaque = |t: &str| t.trim().trim_start_matches("W/").to_string();
    held.trim() == "*" || held.split(',').any(|t| opaque(t) == opaque(tag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_compares_weakly_and_lists() {
        let tag = HeaderValue::from_static("W/\"abc\"");
        let held = |s: &'static str| names(&HeaderValue::from_static(s), &tag);
        assert!(held("W/\"abc\""));
        assert!(held("\"abc\""));
        assert!(held("\"x\", W/\"abc\""));
        assert!(held("*"));
        assert!(!held("\"abd\""));
    }
}
