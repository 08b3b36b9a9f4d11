//! When and how a crawl renders pages in Chromium (the render stage, `crate::render`): the
//! per-blog decision for the posts' text, taken once (`decide`: render every page only when the
//! raw HTML lacks the feed entries' text but the rendered DOM has it; the comments' part is
//! `crawl::comment_learning`'s), and rendering fetched responses into responses of their own,
//! each carrying the JSON its scripts fetched.

use super::traffic::{BrowserTraffic, PageTraffic};
use super::CrawlOptions;
use crate::core::comment_data::{DataItem, DataShape};
use crate::core::data_template::DataTemplate;
use crate::core::feed::{FeedEntry, Targets};
use crate::core::page::Page;
use crate::core::text::{bigram_set, normalise};
use crate::fetch::{self, Response};
use crate::render::network::Network;
use crate::render::{Hints, Rendered, Renderer};
use crate::store::{Blog, BlogId, RenderMode, Renders, Store, StoredResponse};
use anyhow::Result;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::task::JoinSet;

use crate::fetch::RENDERED_HEADER;

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

/// The median containment of the entries' texts in the pages' texts (0 when none can be
/// compared).
fn median_containment(pages: &[(&FeedEntry, &Targets)], texts: &HashMap<String, String>) -> f64 {
    let mut scores: Vec<f64> = pages
        .iter()
        .filter_map(|(e, t)| Some(containment(t.article.as_deref()?, texts.get(&e.url)?)))
        .collect();
    if scores.is_empty() {
        return 0.0;
    }
    scores.sort_by(|a, b| a.total_cmp(b));
    scores[scores.len() / 2]
}

/// The visible text of a response's page.
fn page_text(r: &Response) -> String {
    Page::parse(&fetch::decode(r)).text_of(0).to_string()
}

/// Decides (once, in [`RenderMode::Auto`]) whether a blog's pages need rendering for their
/// text, and records it; when they do, the entry pages' renderings are stored after their raw
/// responses (so they are what learning reads). `pages` are the entries whose pages are stored,
/// with their targets; their responses are read from the store one at a time.
///
/// `auto`: when the raw entry pages lack their entries' text (median bigram containment below
/// 0.8) and the rendered ones have it, every page is rendered ([`Renders::All`]). When the raw
/// pages have it, nothing is recorded here: whether post pages are rendered for their comments
/// is decided once the comment rules are learned (`crawl::comment_learning::decide`).
///
/// # Errors
/// The blog needs rendering but `opts` has no renderer, or the store failed.
pub(super) async fn decide(
    store: &mut Store,
    blog: &Blog,
    opts: &CrawlOptions,
    traffic: &Arc<BrowserTraffic>,
    pages: &[(&FeedEntry, &Targets)],
) -> Result<()> {
    let mut raw = HashMap::new();
    for (e, _) in pages {
        let Some(StoredResponse { response: r, .. }) = store.latest_response(blog.id, &e.url)?
        else {
            continue;
        };
        if !r.is_rendered() {
            raw.insert(e.url.clone(), page_text(&r));
        }
    }
    let decided = match (blog.render, blog.renders) {
        (RenderMode::Never, _) => Some((
            Renders::Nothing,
            "rendering is off for this blog (--render never)".to_string(),
        )),
        (RenderMode::Always, _) => Some((
            Renders::All,
            "rendering is on for this blog (--render always)".to_string(),
        )),
        (_, Some(d)) => Some((d, blog.render_reason.clone().unwrap_or_default())),
        _ => None,
    };
    let raw_score = median_containment(pages, &raw);
    let (renders, reason) = match decided {
        Some(d) => d,
        // The text needs no script: the comments decide, once learned.
        None if raw_score >= 0.8 => return Ok(()),
        None => (
            Renders::All,
            format!("the feed's text is missing from the raw HTML (containment {raw_score:.2})"),
        ),
    };
    if renders == Renders::Nothing {
        if blog.renders.is_none() {
            store.set_render_decision(blog.id, renders, &reason)?;
            tracing::info!(blog = %blog.feed_url, %reason, "not rendering");
        }
        return Ok(());
    }
    let Some(renderer) = opts.renderer.clone() else {
        anyhow::bail!(
            "{} needs JavaScript rendering ({reason}) but no renderer is configured",
            blog.feed_url
        );
    };
    let mut todo = Vec::new();
    for url in raw.keys() {
        if let Some(StoredResponse { response: r, .. }) = store.latest_response(blog.id, url)? {
            todo.push((url.clone(), r));
        }
    }
    let rendered = render_all(&renderer, traffic, store, blog.id, todo, &Hints::default()).await?;
    let texts: HashMap<String, String> = rendered
        .iter()
        .map(|(u, r)| (u.clone(), page_text(r)))
        .collect();
    let rendered_score = median_containment(pages, &texts);
    if blog.renders.is_none()
        && blog.render == RenderMode::Auto
        && renders == Renders::All
        && rendered_score < 0.8
    {
        // Rendering did not bring the text either: no use paying for it.
        let reason = format!("the feed's text is missing from the raw HTML ({raw_score:.2}) and from the rendered DOM ({rendered_score:.2})");
        store.set_render_decision(blog.id, Renders::Nothing, &reason)?;
        tracing::warn!(blog = %blog.feed_url, %reason, "not rendering");
        return Ok(());
    }
    if blog.renders.is_none() {
        store.set_render_decision(blog.id, renders, &reason)?;
        tracing::info!(blog = %blog.feed_url, renders = %renders, %reason, raw = raw_score, rendered = rendered_score, "rendering in Chromium");
    }
    for r in rendered.values() {
        store.keep_response(blog.id, r)?;
    }
    Ok(())
}

/// What one post's widget data says, asked without a browser: the comments of its first page
/// and the thread's count when the data declares one.
#[derive(Debug, Clone)]
pub struct WidgetData {
    /// The comments the data's first page holds.
    pub items: Vec<DataItem>,
    /// The thread's comment count, when the data declares it.
    pub total: Option<u32>,
}

impl WidgetData {
    /// The comments the post has at least: its declared count, or the items if more.
    pub fn count(&self) -> u32 {
        self.total.unwrap_or(0).max(self.items.len() as u32)
    }
}

/// Each post's comment widget data, asked without a browser (issue 41): the data address of
/// each post (`template` filled from its URL or page) fetched through `fetcher` and kept, read
/// with `shape`. Per post URL: what the data says, or `None` when it could not be had or read
/// (render the post, to be sure).
///
/// # Errors
/// The store failed keeping a fetch.
pub async fn widget_data(
    store: &mut Store,
    fetcher: &crate::fetch::Fetcher,
    blog_id: BlogId,
    (template, shape): &(DataTemplate, DataShape),
    posts: &[(String, &Response)],
    concurrency: usize,
) -> Result<HashMap<String, Option<WidgetData>>> {
    let mut out = HashMap::new();
    let mut asks = Vec::new();
    let mut of_data: HashMap<String, Vec<String>> = HashMap::new();
    for (url, r) in posts {
        match template.fill(&r.final_url, &fetch::decode(r)) {
            Some(d) => {
                if !of_data.contains_key(&d) {
                    asks.push((d.clone(), None));
                }
                of_data.entry(d).or_default().push(url.clone());
            }
            None => {
                out.insert(url.clone(), None);
            }
        }
    }
    for (data_url, f) in fetcher
        .get_all(asks, crate::fetch::Resource::Body, concurrency)
        .await
    {
        store.keep_fetched(blog_id, &f)?;
        let data = f
            .success()
            .and_then(|r| serde_json::from_slice::<serde_json::Value>(&r.body).ok())
            .filter(|json| shape.lists(json).is_some())
            .map(|json| WidgetData {
                items: shape.items(&json),
                total: shape.total(&json),
            });
        for url in of_data.remove(&data_url).unwrap_or_default() {
            out.insert(url, data.clone());
        }
    }
    Ok(out)
}

/// The response a rendering stands for: the raw response's status and headers (marked), the
/// rendered DOM as body with the JSON documents its scripts fetched appended
/// (`core::comment_data::embed`: what a comment widget drew its thread from), the URL the tab
/// ended on.
pub fn rendered_response(
    raw: &Response,
    r: Rendered,
    data: &[(String, serde_json::Value)],
) -> Response {
    let mut headers: Vec<(String, String)> = raw
        .headers
        .iter()
        .filter(|(k, _)| !k.eq_ignore_ascii_case("content-length"))
        .cloned()
        .collect();
    headers.push((
        RENDERED_HEADER.into(),
        format!(
            "chromium; clicks={}; frames={}; data={}",
            r.clicks,
            r.frames,
            data.len()
        ),
    ));
    let mut html = r.html;
    if !data.is_empty() {
        let embeds: String = data
            .iter()
            .map(|(url, json)| crate::core::comment_data::embed(url, json))
            .collect();
        let at = html
            .to_ascii_lowercase()
            .rfind("</body>")
            .unwrap_or(html.len());
        html.insert_str(at, &embeds);
    }
    Response {
        url: raw.url.clone(),
        final_url: r.final_url,
        status: raw.status,
        headers,
        body: html.into_bytes(),
        fetched_at: chrono::Utc::now(),
    }
}

/// Renders the given (url, raw response) pairs, as many at once as the renderer has tabs,
/// every request of the browser answered by `traffic` (the page itself from its raw response;
/// the JSON each page's scripts fetched carried into its rendering), and keeps what the browser
/// caused to be fetched in `store`. Failures are logged and left out (the raw response serves
/// for them).
///
/// # Errors
/// The store failed keeping the browser's fetches.
pub async fn render_all(
    renderer: &Arc<Renderer>,
    traffic: &Arc<BrowserTraffic>,
    store: &mut Store,
    blog_id: BlogId,
    pages: Vec<(String, Response)>,
    hints: &Hints,
) -> Result<HashMap<String, Response>> {
    let mut out = HashMap::new();
    let mut set = JoinSet::new();
    let started = std::time::Instant::now();
    for (url, raw) in pages {
        let (renderer, hints) = (renderer.clone(), hints.clone());
        traffic.serve_page(&raw);
        let page = PageTraffic::new(traffic.clone());
        let network: Arc<dyn Network> = page.clone();
        set.spawn(async move {
            let target = raw.final_url.clone();
            let r = renderer.render(&target, Some(network), &hints).await;
            (url, raw, r, page.data())
        });
    }
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok((url, raw, Ok(r), data)) => {
                for note in &r.notes {
                    tracing::info!(url = %url, "render: {note}");
                }
                out.insert(url, rendered_response(&raw, r, &data));
            }
            Ok((url, _, Err(e), _)) => {
                tracing::warn!(url = %url, error = %format!("{e:#}"), "render failed; the raw page is used")
            }
            Err(e) => tracing::error!(error = %e, "render task failed"),
        }
    }
    traffic.note_renders(out.len() as u64, started.elapsed());
    traffic.keep(store, blog_id)?;
    Ok(out)
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
        assert!(Renders::All.wants(false) && Renders::Posts.wants(true));
        assert!(!Renders::Posts.wants(false) && !Renders::Nothing.wants(true));
    }
}
