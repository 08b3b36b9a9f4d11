//! When and how a crawl renders pages in Chromium (the render stage, `crate::render`): the
//! per-blog decision (issue: render only when the raw HTML lacks the feed entries' text but the
//! rendered DOM has it, or when a known JavaScript comment widget is on post pages), and
//! rendering fetched responses into responses of their own.

use crate::core::text::{bigram_set, normalise};
use crate::render::{Rendered, Renderer};
use crate::store::Response;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::task::JoinSet;

/// Header added to a stored response that holds Chromium's rendering of its URL.
pub const RENDERED_HEADER: &str = "x-everblog-rendered";

/// True when `r` is a rendered DOM (not the raw response).
pub fn is_rendered(r: &Response) -> bool {
    r.headers.iter().any(|(k, _)| k == RENDERED_HEADER)
}

/// Whether a page of a blog that renders `renders` ("all", "posts", "none"; `None`: not
/// decided, nothing rendered) is rendered.
pub fn wants(renders: Option<&str>, is_post: bool) -> bool {
    match renders {
        Some("all") => true,
        Some("posts") => is_post,
        _ => false,
    }
}

/// The share of `target`'s character bigrams found in `page_text` (0..=1): near 1 when the
/// page shows the text, whatever else it shows.
pub fn containment(target: &str, page_text: &str) -> f64 {
    let t = bigram_set(&normalise(target));
    if t.is_empty() {
        return 0.0;
    }
    let p = bigram_set(&normalise(page_text));
    t.iter().filter(|b| p.contains(b)).count() as f64 / t.len() as f64
}

/// The response a rendering stands for: the raw response's status and headers (marked), the
/// rendered DOM as body, the URL the tab ended on.
pub fn rendered_response(raw: &Response, r: Rendered) -> Response {
    let mut headers: Vec<(String, String)> = raw
        .headers
        .iter()
        .filter(|(k, _)| !k.eq_ignore_ascii_case("content-length"))
        .cloned()
        .collect();
    headers.push((
        RENDERED_HEADER.into(),
        format!("chromium; clicks={}; frames={}", r.clicks, r.frames),
    ));
    Response {
        url: raw.url.clone(),
        final_url: r.final_url,
        status: raw.status,
        headers,
        body: r.html.into_bytes(),
        fetched_at: chrono::Utc::now(),
    }
}

/// Renders the given (url, raw response) pairs, as many at once as the renderer has tabs.
/// Failures are logged and left out (the raw response serves for them).
pub async fn render_all(
    renderer: &Arc<Renderer>,
    pages: Vec<(String, Response)>,
) -> HashMap<String, Response> {
    let mut out = HashMap::new();
    let mut set = JoinSet::new();
    for (url, raw) in pages {
        let renderer = renderer.clone();
        set.spawn(async move {
            let target = raw.final_url.clone();
            let r = renderer.render(&target).await;
            (url, raw, r)
        });
    }
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok((url, raw, Ok(r))) => {
                for note in &r.notes {
                    tracing::info!(url = %url, "render: {note}");
                }
                out.insert(url, rendered_response(&raw, r));
            }
            Ok((url, _, Err(e))) => {
                tracing::warn!(url = %url, error = %format!("{e:#}"), "render failed; the raw page is used")
            }
            Err(e) => tracing::error!(error = %e, "render task failed"),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_sees_the_text_among_boilerplate() {
        let post = "The greenhouse revisited: tomatoes, basil and a stubborn fig.";
        assert!(containment(post, &format!("Menu Home About {post} Footer © 2025")) > 0.99);
        assert!(containment(post, "Loading… <div id=app></div> Home About") < 0.5);
        assert_eq!(containment("", "anything"), 0.0);
        assert!(wants(Some("all"), false) && wants(Some("posts"), true));
        assert!(!wants(Some("posts"), false) && !wants(None, true) && !wants(Some("none"), true));
    }
}
