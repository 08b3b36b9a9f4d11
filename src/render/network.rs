//! The browser's network, answered by everblog: every request a rendering tab makes (the
//! document, its scripts, stylesheets, XHR/fetch, iframes' documents, the comment widget's own
//! hosts) is paused over CDP (`Fetch.enable`, `Fetch.requestPaused`) and answered by a
//! [`Network`] — in a crawl, `crawl::traffic`, which goes through `fetch` (robots.txt,
//! politeness, the fetch log) and the store — with `Fetch.fulfillRequest`, or failed with
//! `Fetch.failRequest` (`BlockedByClient` for what robots.txt or the address policy refuses).
//! Chromium itself sends nothing: "every byte on the wire goes through `fetch`".
//!
//! The tab's HTTP cache is off (`Network.setCacheDisabled`), so every request reaches the
//! [`Network`], which keeps its own cache.

use base64::Engine;
use chromiumoxide::cdp::browser_protocol::fetch::{
    self as cdp_fetch, EventRequestPaused, FailRequestParams, FulfillRequestParams, HeaderEntry,
};
use chromiumoxide::cdp::browser_protocol::network::{
    ErrorReason, ResourceType, SetCacheDisabledParams,
};
use chromiumoxide::page::Page;
use futures::future::BoxFuture;
use futures::StreamExt;
use std::sync::{Arc, Mutex};

crate::core::vocabulary! {
    /// What a browser request is for, from CDP's `Network.ResourceType`: it decides whether
    /// robots.txt applies (documents always; the rest per `[robots] requisites`) and whether a
    /// rendering needs it at all.
    pub enum RequestKind {
        /// A page: the tab's document, a navigation, an iframe's document.
        Document = "document",
        /// A stylesheet.
        Stylesheet = "stylesheet",
        /// A script.
        Script = "script",
        /// Data a script asks for: XHR, `fetch()`, text tracks, anything unclassified.
        Data = "data",
        /// An image.
        Image = "image",
        /// A web font.
        Font = "font",
        /// Audio or video.
        Media = "media",
        /// What no rendering needs: beacons, prefetches, event streams, manifests, CSP
        /// reports.
        Other = "other",
    }
}

impl RequestKind {
    fn of(t: &ResourceType) -> RequestKind {
        match t {
            ResourceType::Document => RequestKind::Document,
            ResourceType::Stylesheet => RequestKind::Stylesheet,
            ResourceType::Script => RequestKind::Script,
            ResourceType::Xhr | ResourceType::Fetch | ResourceType::TextTrack => RequestKind::Data,
            ResourceType::Other | ResourceType::SignedExchange => RequestKind::Data,
            ResourceType::Image => RequestKind::Image,
            ResourceType::Font => RequestKind::Font,
            ResourceType::Media => RequestKind::Media,
            _ => RequestKind::Other,
        }
    }

    /// True for what shapes the DOM a rendering reads: documents, stylesheets (scripts test
    /// layout), scripts and their data. Images, fonts and media only paint it; they are fetched
    /// after the crawl by `crawl::media`, at the host's politeness without a page's time bound.
    pub fn shapes_the_dom(self) -> bool {
        matches!(
            self,
            RequestKind::Document
                | RequestKind::Stylesheet
                | RequestKind::Script
                | RequestKind::Data
        )
    }
}

/// One request the browser wants to send.
#[derive(Debug, Clone)]
pub struct BrowserRequest {
    /// The URL, without fragment.
    pub url: String,
    /// The HTTP method (`GET`, `POST`, …).
    pub method: String,
    /// The request headers the browser would send (name, value).
    pub headers: Vec<(String, String)>,
    /// What it is for.
    pub kind: RequestKind,
}

/// Why a request was not answered with a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// robots.txt or the address policy forbids it (the browser sees `BlockedByClient`).
    Blocked,
    /// Not sent: not needed by a rendering, or a method everblog does not send (the browser
    /// sees `Aborted`).
    NotSent,
    /// It was sent and failed (network error, body over its cap; the browser sees `Failed`).
    Failed,
}

/// The answer to a [`BrowserRequest`].
#[derive(Debug, Clone)]
pub enum Answer {
    /// A response: status, headers (as sent to the browser: the body is already decoded, so no
    /// `Content-Encoding`), body.
    Respond {
        /// HTTP status.
        status: u16,
        /// Headers (name, value).
        headers: Vec<(String, String)>,
        /// The body.
        body: Arc<Vec<u8>>,
    },
    /// No response.
    Refuse(Refusal),
}

/// What answers a rendering tab's requests.
pub trait Network: Send + Sync {
    /// The answer to `request`. Called concurrently, once per request.
    fn answer(&self, request: BrowserRequest) -> BoxFuture<'_, Answer>;
}

/// The [`Network`] a tab's requests go to, set for the length of one rendering.
pub(super) type Slot = Arc<Mutex<Option<Arc<dyn Network>>>>;

/// Sends every request of `page` to whatever [`Network`] `slot` holds (none: the request is
/// aborted), until the tab closes. The tab's cache is turned off first so nothing bypasses it.
///
/// # Errors
/// CDP refused `Network.setCacheDisabled`, `Fetch.enable` or the event subscription.
pub(super) async fn intercept(
    page: &Page,
    slot: Slot,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let mut events = page.event_listener::<EventRequestPaused>().await?;
    page.execute(SetCacheDisabledParams::new(true)).await?;
    page.execute(cdp_fetch::EnableParams::default()).await?;
    let page = page.clone();
    Ok(tokio::spawn(async move {
        while let Some(event) = events.next().await {
            let network = slot.lock().expect("lock").clone();
            let page = page.clone();
            tokio::spawn(async move {
                let id = event.request_id.clone();
                let answer = match network {
                    Some(n) => n.answer(request_of(&event)).await,
                    None => Answer::Refuse(Refusal::NotSent),
                };
                let sent = match answer {
                    Answer::Respond {
                        status,
                        headers,
                        body,
                    } => {
                        let mut p = FulfillRequestParams::new(id, status as i64);
                        p.response_headers = Some(
                            headers
                                .into_iter()
                                .filter(|(k, _)| passes_to_browser(k))
                                .map(|(k, v)| HeaderEntry::new(k, v))
                                .collect(),
                        );
                        p.body = Some(
                            base64::engine::general_purpose::STANDARD
                                .encode(&*body)
                                .into(),
                        );
                        page.execute(p).await.map(|_| ())
                    }
                    Answer::Refuse(why) => {
                        let reason = match why {
                            Refusal::Blocked => ErrorReason::BlockedByClient,
                            Refusal::NotSent => ErrorReason::Aborted,
                            Refusal::Failed => ErrorReason::Failed,
                        };
                        page.execute(FailRequestParams::new(id, reason))
                            .await
                            .map(|_| ())
                    }
                };
                if let Err(e) = sent {
                    // The tab moved on or closed while the answer was on its way.
                    tracing::debug!(error = %e, "answering a browser request");
                }
            });
        }
    }))
}

/// The request as a [`Network`] sees it.
fn request_of(event: &EventRequestPaused) -> BrowserRequest {
    let r = &event.request;
    let headers = match r.headers.inner() {
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect(),
        _ => Vec::new(),
    };
    BrowserRequest {
        url: r.url.clone(),
        method: r.method.clone(),
        headers,
        kind: RequestKind::of(&event.resource_type),
    }
}

/// Headers that describe the body as it travelled, not as it is handed over: the body given to
/// the browser is decoded and whole.
fn passes_to_browser(name: &str) -> bool {
    ![
        "content-encoding",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
    ]
    .iter()
    .any(|h| name.eq_ignore_ascii_case(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_shapes_the_dom_is_fetched_while_rendering() {
        assert_eq!(RequestKind::of(&ResourceType::Xhr), RequestKind::Data);
        assert_eq!(RequestKind::of(&ResourceType::Ping), RequestKind::Other);
        assert!(RequestKind::Script.shapes_the_dom() && RequestKind::Data.shapes_the_dom());
        assert!(!RequestKind::Image.shapes_the_dom() && !RequestKind::Other.shapes_the_dom());
        assert!(!passes_to_browser("Content-Encoding") && passes_to_browser("content-type"));
    }
}
