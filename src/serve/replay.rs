//! Replay for people (issue 29, item 2): `/replay/{YYYYMMDDhhmmss}/{url}` shows one capture
//! under a banner of the reader's own (never inside the capture's document, so none of its
//! markup can hide or fake it): when it was captured, the previous and next captures, the live
//! address, the way back to the archived post, and every capture. The capture itself is a
//! frame (`/web/{stamp}fr_/{url}`, `routes::View::Framed`) served under the capture policy
//! (no script), whose links lead the whole window to their own replay page.
//!

use super::failure::Failure;
use super::layout::layout;
use super::reader::Reader;
use super::routes::{parse_stamped, post_href, replay_href, timestamp, view_href, Routes, View};
use super::views::{capture_or_canonical, not_archived};
use crate::store::Capture;
use axum::extract::State;
use axum::http::Uri;
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Utc};
use maud::html;
use std::sync::Arc;

/// `/replay/{stamp}/{url}`: the capture of `url` nearest `stamp` under the replay banner; a
/// time that is not a capture's, or an address the crawl keyed otherwise (tracking parameters,
/// `index.html`), redirects to the capture's own replay page.
pub async fn replay(State(reader): State<Arc<Reader>>, uri: Uri) -> Result<Response, Failure> {
    let (stamp, _, url, at) = parse_stamped(&uri, "/replay/")
        .ok_or_else(|| Failure::NotFound("A replay is /replay/YYYYMMDDhhmmss/URL.".into()))?;
    let key = url.clone();
    let (matched, captures, is_post) = reader
        .read(move |s| {
            let found = match capture_or_canonical(s, &key, at)? {
                Some((matched, _)) => Some((s.captures_of(&matched)?, matched)),
                None => None,
            };
            match found {
                Some((captures, matched)) if !captures.is_empty() => {
                    let is_post = s.has_post(&matched)?;
                    Ok((matched, captures, is_post))
                }
                _ => Err(not_archived(s, &key, at)?),
            }
        })
        .await?;
    let Some(i) = nearest(&captures, at) else {
        return Err(Failure::NotFound(format!("{url} is not in this archive.")));
    };
    let exact = timestamp(captures[i].fetched_at);
    if exact != stamp || matched != url {
        return Ok(Redirect::to(&replay_href(&exact, &matched)).into_response());
    }
    let c = &captures[i];
    let at = |c: &Capture| c.fetched_at.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    let body = html! {
        nav.replay aria-label="Capture" {
            span { "Captured " strong { time datetime=(c.fetched_at.to_rfc3339()) { (at(c)) } }
                " (HTTP " (c.status) ")" }
            span.steps {
                @if let Some(p) = i.checked_sub(1).and_then(|p| captures.get(p)) {
                    a rel="prev" href=(replay_href(&timestamp(p.fetched_at), &matched)) { "← previous capture" }
                }
                " " (i + 1) " of " (captures.len()) " "
                @if let Some(n) = captures.get(i + 1) {
                    a rel="next" href=(replay_href(&timestamp(n.fetched_at), &matched)) { "next capture →" }
                }
            }
            span.ways {
                @if is_post { a href=(post_href(&matched)) { "the archived post" } " · " }
                a href={ "/timemap/link/" (matched) } { "all captures" } " · "
                a href=(matched) rel="noreferrer nofollow" { "live page" }
            }
        }
        iframe.capture src=(view_href(&exact, View::Framed, &matched)) title="The capture"
            sandbox="allow-same-origin allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation" {}
    };
    Ok(layout(&Routes, &format!("{matched} at {}", at(c)), body).into_response())
}

/// The index of the capture nearest `at` (the later one on a tie), if any.
fn nearest(captures: &[Capture], at: DateTime<Utc>) -> Option<usize> {
    (0..captures.len()).min_by_key(|&i| {
        let d = (captures[i].fetched_at - at)
            .num_milliseconds()
            .unsigned_abs();
        (d, std::cmp::Reverse(i))
    })
}
