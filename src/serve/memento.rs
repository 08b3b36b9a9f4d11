//! Memento (RFC 7089) over the archive's captures, and each capture shown as stored.
//!
//! - URI-M, a capture: `/web/{YYYYMMDDhhmmss}/{url}` (HTML with its links rewritten into the
//!   archive) or `/web/{YYYYMMDDhhmmss}id_/{url}` (the bytes as received); a time that is not
//!   a capture's redirects to the nearest one. Headers `Memento-Datetime` and `Link`
//!   (original, timegate, timemap).
//! - TimeGate: `/timegate/{url}`, `Accept-Datetime` (RFC 1123) or the latest capture: 302 to
//!   the URI-M, `Vary: accept-datetime`.
//! - TimeMap: `/timemap/link/{url}` (`application/link-format`) and `/timemap/json/{url}`.
//!
//! A capture runs no script: it is served under a sandboxing Content-Security-Policy
//! (`sandbox` without `allow-scripts`, `script-src 'none'`), and what it loads comes from the
//! archive only (`default-src 'self'`): a resource never captured is a 404, never the live
//! site.

use super::failure::Failure;
use super::layout::layout;
use super::reader::Reader;
use super::routes::{
    archived_url, parse_stamped, replay_href, timestamp, view_href, web_href, Routes, View,
};
use super::views::{self, capture_or_canonical};
use crate::fetch::{decode_body, header, mime_type};
use crate::store::Capture;
use axum::extract::State;
use axum::http::{header as h, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use maud::html;
use std::cell::RefCell;
use std::sync::Arc;

/// The policy every capture is served under: no script at all, nothing from another origin.
pub const CAPTURE_POLICY: &str = "sandbox allow-same-origin allow-popups \
    allow-popups-to-escape-sandbox; default-src 'self' data:; script-src 'none'; \
    object-src 'none'; style-src 'self' 'unsafe-inline' data:; base-uri 'none'; \
    form-action 'none'";

/// [`CAPTURE_POLICY`] for a capture shown in the replay frame (`fr_`): its links may lead the
/// whole window on to the next capture's replay page, when the reader clicks one.
pub const FRAMED_CAPTURE_POLICY: &str = "sandbox allow-same-origin allow-popups \
    allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation; \
    default-src 'self' data:; script-src 'none'; object-src 'none'; \
    style-src 'self' 'unsafe-inline' data:; base-uri 'none'; form-action 'none'";

fn http_date(t: DateTime<Utc>) -> String {
    t.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

fn not_archived(url: &str) -> Failure {
    Failure::NotFound(format!("{url} is not in this archive."))
}

/// `Link` header values of a URL: original, timegate, timemap (absolute on `origin`).
fn links(origin: &str, url: &str) -> String {
    format!(
        "<{url}>; rel=\"original\", <{origin}/timegate/{url}>; rel=\"timegate\", <{origin}/timemap/link/{url}>; rel=\"timemap\"; type=\"application/link-format\""
    )
}

fn origin(headers: &HeaderMap) -> String {
    let host = headers
        .get(h::HOST)
        .and_then(|v| v.to_str().ok())
        .filter(|h| {
            h.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '-' | '[' | ']'))
        })
        .unwrap_or("localhost");
    format!("http://{host}")
}

fn header_value(s: &str) -> HeaderValue {
    HeaderValue::from_str(s).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// `/timemap/link/{url}` and `/timemap/json/{url}`.
pub async fn timemap(
    State(reader): State<Arc<Reader>>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    let (json, url) = if let Some(u) = archived_url(&uri, "/timemap/link/") {
        (false, u)
    } else if let Some(u) = archived_url(&uri, "/timemap/json/") {
        (true, u)
    } else {
        return Err(Failure::NotFound(
            "A TimeMap is /timemap/link/URL or /timemap/json/URL.".into(),
        ));
    };
    let key = url.clone();
    let captures = reader.read(move |s| Ok(s.captures_of(&key)?)).await?;
    if captures.is_empty() {
        return Err(not_archived(&url));
    }
    if !json && wants_html(&headers) {
        return Ok(timemap_page(&url, &captures));
    }
    let origin = origin(&headers);
    let m = |c: &Capture| {
        format!(
            "{origin}{}",
            web_href(&timestamp(c.fetched_at), false, &url)
        )
    };
    if json {
        let body = serde_json::json!({
            "original_uri": url,
            "timegate_uri": format!("{origin}/timegate/{url}"),
            "timemap_uri": {
                "link_format": format!("{origin}/timemap/link/{url}"),
                "json_format": format!("{origin}/timemap/json/{url}"),
            },
            "mementos": {
                "first": {"datetime": captures[0].fetched_at.to_rfc3339(), "uri": m(&captures[0])},
                "last": {"datetime": captures[captures.len() - 1].fetched_at.to_rfc3339(), "uri": m(&captures[captures.len() - 1])},
                "list": captures.iter().map(|c| serde_json::json!({
                    "datetime": c.fetched_at.to_rfc3339(),
                    "uri": m(c),
                    "status": c.status,
                })).collect::<Vec<_>>(),
            },
        });
        return Ok(axum::Json(body).into_response());
    }
    let mut out = format!(
        "<{url}>; rel=\"original\",\n<{origin}/timegate/{url}>; rel=\"timegate\",\n<{origin}/timemap/link/{url}>; rel=\"self\"; type=\"application/link-format\"; from=\"{}\"; until=\"{}\"",
        http_date(captures[0].fetched_at),
        http_date(captures[captures.len() - 1].fetched_at)
    );
    let last = captures.len() - 1;
    for (i, c) in captures.iter().enumerate() {
        let rel = match (i == 0, i == last) {
            (true, true) => "first last memento",
            (true, false) => "first memento",
            (false, true) => "last memento",
            _ => "memento",
        };
        out.push_str(&format!(
            ",\n<{}>; rel=\"{rel}\"; datetime=\"{}\"",
            m(c),
            http_date(c.fetched_at)
        ));
    }
    out.push('\n');
    Ok(([(h::CONTENT_TYPE, "application/link-format")], out).into_response())
}

/// `/timegate/{url}`: 302 to the capture nearest `Accept-Datetime` (the latest without one).
pub async fn timegate(
    State(reader): State<Arc<Reader>>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    let url = archived_url(&uri, "/timegate/")
        .ok_or_else(|| Failure::NotFound("A TimeGate is /timegate/URL.".into()))?;
    let at = match headers.get("accept-datetime") {
        None => Utc::now(),
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| DateTime::parse_from_rfc2822(s.trim()).ok())
            .map(|d| d.with_timezone(&Utc))
            .ok_or_else(|| {
                Failure::BadRequest(
                    "Accept-Datetime must be an RFC 1123 date, e.g. Thu, 01 Jan 2026 00:00:00 GMT"
                        .into(),
                )
            })?,
    };
    let key = url.clone();
    let found = reader
        .read(move |s| Ok(s.capture_near(&key, at)?))
        .await?
        .ok_or_else(|| not_archived(&url))?;
    let origin = origin(&headers);
    let location = web_href(&timestamp(found.fetched_at), false, &url);
    Ok((
        StatusCode::FOUND,
        [
            (h::LOCATION, header_value(&location)),
            (h::VARY, HeaderValue::from_static("accept-datetime")),
            (h::LINK, header_value(&links(&origin, &url))),
        ],
    )
        .into_response())
}

/// `/web/{stamp}[id_]/{url}`: one capture, as stored.
pub async fn capture(
    State(reader): State<Arc<Reader>>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    let (stamp, view, url, at) = parse_stamped(&uri, "/web/").ok_or_else(|| {
        Failure::NotFound(
            "A capture is /web/YYYYMMDDhhmmss/URL (or …id_/URL for the bytes).".into(),
        )
    })?;
    let raw = view == View::Raw;
    let key = url.clone();
    let found = reader
        .read(move |s| {
            let found = match capture_or_canonical(s, &key, at)? {
                Some((matched, c)) => s.capture_response(c.id)?.map(|r| (matched, c, r)),
                None => None,
            };
            match found {
                Some(found) => Ok(found),
                // A page's link to an address not archived: where to go instead. What a
                // page loads (`id_`) is a plain 404.
                None if !raw => Err(views::not_archived(s, &key, at)?),
                None => Err(not_archived(&key)),
            }
        })
        .await;
    let (matched, capture, response) = found?;
    let exact = timestamp(capture.fetched_at);
    if exact != stamp || matched != url {
        let location = view_href(&exact, view, &matched);
        return Ok((StatusCode::FOUND, [(h::LOCATION, header_value(&location))]).into_response());
    }
    let origin = origin(&headers);
    let status = StatusCode::from_u16(response.status).unwrap_or(StatusCode::OK);
    let mut out_headers = vec![
        (
            h::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(if view == View::Framed {
                FRAMED_CAPTURE_POLICY
            } else {
                CAPTURE_POLICY
            }),
        ),
        (
            h::HeaderName::from_static("memento-datetime"),
            header_value(&http_date(capture.fetched_at)),
        ),
        (h::LINK, header_value(&links(&origin, &url))),
    ];
    if raw {
        // The bytes as received never change: named by the stored response, kept for good.
        out_headers.push((
            h::ETAG,
            header_value(&format!("\"capture-{}\"", capture.id)),
        ));
        out_headers.push((
            h::CACHE_CONTROL,
            HeaderValue::from_static("max-age=31536000, immutable"),
        ));
    }
    if status.is_redirection() {
        if let Some(to) =
            header(&response, "location").and_then(|l| url::Url::parse(&url).ok()?.join(&l).ok())
        {
            out_headers.push((
                h::LOCATION,
                header_value(&view_href(&exact, view, to.as_str())),
            ));
        }
    }
    let mime = mime_type(&response.headers);
    let html = mime.as_deref().is_some_and(|m| m.contains("html"));
    let body = if html && !raw {
        out_headers.push((
            h::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        ));
        let ct = header(&response, "content-type").map(|c| c.to_ascii_lowercase());
        rewrite(
            &decode_body(&response.body, ct.as_deref()),
            &url,
            &exact,
            view == View::Framed,
        )
        .into_bytes()
    } else {
        if let Some(ct) = header(&response, "content-type") {
            out_headers.push((h::CONTENT_TYPE, header_value(&ct)));
        }
        if status == StatusCode::OK {
            // Bytes as received can be asked for in part: a long recording is seekable.
            out_headers.push((h::ACCEPT_RANGES, HeaderValue::from_static("bytes")));
            if let Some(range) = headers.get(h::RANGE) {
                let mut r = ranged(range, response.body);
                for (k, v) in out_headers {
                    r.headers_mut().insert(k, v);
                }
                return Ok(r);
            }
        }
        response.body
    };
    let mut r = (status, body).into_response();
    for (k, v) in out_headers {
        r.headers_mut().insert(k, v);
    }
    Ok(r)
}

/// The answer to a `Range` request for `body` (RFC 9110 §14): one satisfiable range gives 206
/// with its bytes and `Content-Range`; an unsatisfiable one 416 with `Content-Range: bytes
/// */length`; a malformed header or several ranges the whole body with 200 (a server may
/// ignore `Range`, and no media player asks for several).
fn ranged(range: &HeaderValue, body: Vec<u8>) -> Response {
    let length = body.len() as u64;
    let Some(parsed) = range
        .to_str()
        .ok()
        .and_then(|r| http_range_header::parse_range_header(r).ok())
    else {
        return (StatusCode::OK, body).into_response();
    };
    match parsed.validate(length) {
        Ok(ranges) if ranges.len() == 1 => {
            let (start, end) = (*ranges[0].start(), *ranges[0].end());
            let part = body[start as usize..=end as usize].to_vec();
            let mut r = (StatusCode::PARTIAL_CONTENT, part).into_response();
            r.headers_mut().insert(
                h::CONTENT_RANGE,
                header_value(&format!("bytes {start}-{end}/{length}")),
            );
            r
        }
        Ok(_) => (StatusCode::OK, body).into_response(),
        Err(_) => {
            let mut r = StatusCode::RANGE_NOT_SATISFIABLE.into_response();
            r.headers_mut()
                .insert(h::CONTENT_RANGE, header_value(&format!("bytes */{length}")));
            r
        }
    }
}

/// An archived page with every address pointing into the archive at `stamp`: links and
/// frames to the rewritten capture nearest that time (when `framed`, links to its replay page,
/// opened in the whole window), everything loaded (images, stylesheets, scripts, media) to the
/// bytes as received, lazy images (`data-src`, `data-srcset`) loaded as a script would have;
/// `<base>` applied then dropped, meta refreshes dropped. A page the rewriter cannot parse is
/// returned unchanged (the policy still holds).
pub fn rewrite(html: &str, page_url: &str, stamp: &str, framed: bool) -> String {
    use lol_html::{element, rewrite_str, RewriteStrSettings};
    let base = RefCell::new(url::Url::parse(page_url).ok());
    // An address of the page, absolute, when it leads somewhere on the web (not a fragment,
    // not inline data).
    let absolute = |value: &str| -> Option<url::Url> {
        let v = value.trim();
        if v.is_empty() || v.starts_with('#') || v.starts_with("data:") {
            return None;
        }
        let abs = base.borrow().as_ref()?.join(v).ok()?;
        matches!(abs.scheme(), "http" | "https").then_some(abs)
    };
    let to = |value: &str, raw: bool| -> Option<String> {
        absolute(value).map(|abs| web_href(stamp, raw, abs.as_str()))
    };
    let attr = |el: &mut lol_html::html_content::Element, name: &str, raw: bool| {
        if let Some(new) = el.get_attribute(name).and_then(|v| to(&v, raw)) {
            let _ = el.set_attribute(name, &new);
        }
    };
    let srcset = |el: &mut lol_html::html_content::Element| {
        if let Some(v) = el.get_attribute("srcset") {
            let new: Vec<String> = v
                .split(',')
                .map(|c| {
                    let c = c.trim();
                    let (u, d) = c.split_once(' ').unwrap_or((c, ""));
                    format!("{} {d}", to(u, true).unwrap_or_else(|| u.to_string()))
                        .trim()
                        .to_string()
                })
                .collect();
            let _ = el.set_attribute("srcset", &new.join(", "));
        }
    };
    let result = rewrite_str(
        html,
        RewriteStrSettings {
            element_content_handlers: vec![
                element!("base[href]", |el| {
                    let joined = base
                        .borrow()
                        .as_ref()
                        .and_then(|b| b.join(&el.get_attribute("href").unwrap_or_default()).ok());
                    if joined.is_some() {
                        *base.borrow_mut() = joined;
                    }
                    el.remove();
                    Ok(())
                }),
                element!("meta[http-equiv]", |el| {
                    if el
                        .get_attribute("http-equiv")
                        .is_some_and(|v| v.eq_ignore_ascii_case("refresh"))
                    {
                        el.remove();
                    }
                    Ok(())
                }),
                element!("a[href], area[href]", |el| {
                    if framed {
                        if let Some(abs) = el.get_attribute("href").and_then(|v| absolute(&v)) {
                            let _ = el.set_attribute("href", &replay_href(stamp, abs.as_str()));
                            let _ = el.set_attribute("target", "_top");
                        }
                    } else {
                        attr(el, "href", false);
                    }
                    Ok(())
                }),
                element!("iframe[src], frame[src]", |el| {
                    attr(el, "src", false);
                    Ok(())
                }),
                element!("form[action]", |el| {
                    attr(el, "action", false);
                    Ok(())
                }),
                element!("link[href]", |el| {
                    attr(el, "href", true);
                    Ok(())
                }),
                element!(
                    "img[src], source[src], video[src], audio[src], track[src], embed[src], script[src], input[src]",
                    |el| {
                        attr(el, "src", true);
                        Ok(())
                    }
                ),
                element!("video[poster]", |el| {
                    attr(el, "poster", true);
                    Ok(())
                }),
                element!("img[srcset], source[srcset]", |el| {
                    srcset(el);
                    Ok(())
                }),
                // Lazy images: what the page's script would have put in place.
                element!("img[data-src]", |el| {
                    if let Some(new) = el.get_attribute("data-src").and_then(|v| to(&v, true)) {
                        let _ = el.set_attribute("src", &new);
                    }
                    Ok(())
                }),
                element!("img[data-srcset], source[data-srcset]", |el| {
                    if let Some(v) = el.get_attribute("data-srcset") {
                        let _ = el.set_attribute("srcset", &v);
                        srcset(el);
                    }
                    Ok(())
                }),
            ],
            ..RewriteStrSettings::new()
        },
    );
    result.unwrap_or_else(|_| html.to_string())
}

/// Whether a TimeMap request asks for a page: its `Accept` names HTML and not link-format.
fn wants_html(headers: &HeaderMap) -> bool {
    let accept = headers
        .get(h::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    accept.contains("text/html") && !accept.contains("application/link-format")
}

/// The TimeMap of `url` as a page: every capture, oldest first, each to its replay page.
fn timemap_page(url: &str, captures: &[Capture]) -> Response {
    let body = html! {
        h1 { "Captures" }
        p.meta { code { (url) } " · " (captures.len()) " in the archive · "
            a href={ "/timemap/json/" (url) } { "JSON" } }
        ol {
            @for c in captures {
                li {
                    a href=(replay_href(&timestamp(c.fetched_at), url)) {
                        time datetime=(c.fetched_at.to_rfc3339()) { (c.fetched_at.format("%Y-%m-%d %H:%M:%S UTC")) }
                    }
                    " (HTTP " (c.status) ")"
                }
            }
        }
    };
    (
        StatusCode::OK,
        [(h::VARY, "accept")],
        layout(&Routes, "Captures", body),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_point_into_the_archive() {
        let html = r##"<html><head><base href="http://b.test/blog/"><meta http-equiv="refresh" content="0; url=http://evil.test/"><link rel="stylesheet" href="s.css"></head>
            <body><a href="p/">p</a><img src="/i.png" srcset="a.png 1x, b.png 2x"><a href="#top">t</a></body></html>"##;
        let out = rewrite(html, "http://b.test/x", "20260101000000", false);
        assert!(
            !out.contains("<base") && !out.contains("evil.test"),
            "{out}"
        );
        assert!(
            out.contains(r#"href="/web/20260101000000id_/http://b.test/blog/s.css""#),
            "{out}"
        );
        assert!(
            out.contains(r#"href="/web/20260101000000/http://b.test/blog/p/""#),
            "{out}"
        );
        assert!(
            out.contains(r#"src="/web/20260101000000id_/http://b.test/i.png""#),
            "{out}"
        );
        assert!(
            out.contains("/web/20260101000000id_/http://b.test/blog/b.png 2x"),
            "{out}"
        );
        assert!(out.contains(r##"href="#top""##));
    }

    #[test]
    fn a_framed_capture_links_to_replay_pages_and_lazy_images_load() {
        let html = r##"<a href="/p/">p</a><a href="#c">c</a><img src="blank.gif" data-src="/big.jpg"><img data-srcset="/s.jpg 1x">"##;
        let out = rewrite(html, "http://b.test/x", "20260101000000", true);
        assert!(
            out.contains(r#"href="/replay/20260101000000/http://b.test/p/" target="_top""#),
            "{out}"
        );
        assert!(out.contains(r##"href="#c">"##), "{out}");
        assert!(
            out.contains(r#"src="/web/20260101000000id_/http://b.test/big.jpg""#),
            "{out}"
        );
        assert!(
            out.contains(r#"srcset="/web/20260101000000id_/http://b.test/s.jpg 1x""#),
            "{out}"
        );
    }
}
