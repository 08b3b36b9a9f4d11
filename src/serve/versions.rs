//! A post's versions as readers read them (issue 29, item 5): each version on its own with
//! its dates (`/version?url=&n=`), the differences of two as blocks (`/diff?url=&from=&to=`:
//! paragraphs, headings and list items stay apart, each changed block with its changed words
//! marked), and every version and earlier comment text for machines (`/api/versions?url=`).

use super::diff::{block_diff, word_diff};
use super::failure::{ApiFailure, Failure};
use super::layout::{layout, time};
use super::reader::Reader;
use super::routes::{query_value, Routes};
use crate::store::{CommentVersion, Post, PostVersion};
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Json, Response};
use maud::{html, Markup, PreEscaped};
use std::sync::Arc;

/// Query of `/diff`.
#[derive(Debug, serde::Deserialize)]
pub struct DiffParams {
    /// The post.
    pub url: String,
    /// The older version.
    pub from: u32,
    /// The newer version.
    pub to: u32,
}

/// Query of `/version`.
#[derive(Debug, serde::Deserialize)]
pub struct VersionParams {
    /// The post.
    pub url: String,
    /// The version (1 = the first archived).
    pub n: u32,
}

/// Query of `/api/versions`.
#[derive(Debug, serde::Deserialize)]
pub struct UrlOnly {
    /// The post.
    pub url: String,
}

/// One version of a post as the pages show it: number, title, article HTML and text, when
/// it was fetched and (for all but the current) when a newer one replaced it.
struct Version {
    n: u32,
    title: Option<String>,
    html: String,
    text: String,
    fetched_at: chrono::DateTime<chrono::Utc>,
    replaced_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Every version of `post`, oldest first, the current last.
fn all_versions(post: &Post, earlier: Vec<PostVersion>) -> Vec<Version> {
    let mut out: Vec<Version> = earlier
        .into_iter()
        .map(|v| Version {
            n: v.version,
            title: v.title,
            html: v.content_html,
            text: v.content_text,
            fetched_at: v.fetched_at,
            replaced_at: Some(v.replaced_at),
        })
        .collect();
    out.push(Version {
        n: post.version,
        title: post.title.clone(),
        html: post.content_html.clone(),
        text: post.content_text.clone(),
        fetched_at: post.fetched_at,
        replaced_at: None,
    });
    out
}

/// The post at `url` and its versions, or 404.
async fn load(reader: &Arc<Reader>, url: String) -> Result<(Post, Vec<Version>), Failure> {
    reader
        .read(move |s| {
            let Some(post) = s.post(&url)? else {
                return Err(Failure::NotFound(format!("{url} is not an archived post.")));
            };
            let earlier = s.post_versions(&post.url)?;
            let versions = all_versions(&post, earlier);
            Ok((post, versions))
        })
        .await
}

fn dates(v: &Version) -> Markup {
    html! {
        "fetched " (time(Some(v.fetched_at.fixed_offset()), true))
        @match v.replaced_at {
            Some(r) => { ", replaced " (time(Some(r.fixed_offset()), true)) }
            None => { " (current)" }
        }
    }
}

/// `/version?url=&n=`: one version of a post on its own, with its dates.
pub async fn version(
    State(reader): State<Arc<Reader>>,
    Query(q): Query<VersionParams>,
) -> Result<Markup, Failure> {
    let (post, versions) = load(&reader, q.url.clone()).await?;
    let Some(v) = versions.iter().find(|v| v.n == q.n) else {
        return Err(Failure::NotFound(format!(
            "{} has versions 1 to {}.",
            q.url, post.version
        )));
    };
    let title = v.title.clone().unwrap_or_else(|| post.url.clone());
    let none = Arc::default();
    let html = reader.sanitized.for_page(&post.url, v.fetched_at, &none)(&v.html);
    Ok(layout(
        &Routes,
        &format!("{title} (version {})", v.n),
        html! {
            p.meta { a href={ "/post?url=" (query_value(&post.url)) } { "← the post as archived now" } }
            article.post {
                h1 { (title) }
                p.meta { "Version " (v.n) " of " (post.version) ", " (dates(v)) }
                div.content { (PreEscaped(html)) }
            }
        },
    ))
}

/// `/diff?url=&from=&to=`: two versions of a post compared block by block, with their dates.
pub async fn diff(
    State(reader): State<Arc<Reader>>,
    Query(q): Query<DiffParams>,
) -> Result<Markup, Failure> {
    let (post, versions) = load(&reader, q.url.clone()).await?;
    let find = |n: u32| versions.iter().find(|v| v.n == n);
    let (Some(a), Some(b)) = (find(q.from), find(q.to)) else {
        return Err(Failure::NotFound(format!(
            "{} has versions 1 to {}.",
            q.url, post.version
        )));
    };
    let title = post.title.clone().unwrap_or_else(|| post.url.clone());
    let version_href = |n: u32| format!("/version?url={}&n={n}", query_value(&post.url));
    Ok(layout(
        &Routes,
        &format!("{title}: versions {} and {}", q.from, q.to),
        html! {
            h1 { "Version " (q.from) " → " (q.to) }
            p { a href={ "/post?url=" (query_value(&post.url)) } { "← " (title) } }
            ul.meta {
                li { a href=(version_href(a.n)) { "Version " (a.n) } ", " (dates(a)) }
                li { a href=(version_href(b.n)) { "Version " (b.n) } ", " (dates(b)) }
            }
            h2.diff-title { (word_diff(a.title.as_deref().unwrap_or(""), b.title.as_deref().unwrap_or(""))) }
            div.diff { (block_diff(&a.html, &b.html)) }
        },
    ))
}

/// `/api/versions?url=`: `{url, version, versions: [{version, title, content_html,
/// content_text, fetched_at, replaced_at}], comment_versions: [{id, author, content_html,
/// content_text, replaced_at}]}`, oldest first; the current version last, with `replaced_at`
/// null.
pub async fn api(
    State(reader): State<Arc<Reader>>,
    Query(q): Query<UrlOnly>,
) -> Result<Response, ApiFailure> {
    let url = q.url.clone();
    let (post, versions, comments) = reader
        .read(move |s| {
            let Some(post) = s.post(&url)? else {
                return Err(Failure::NotFound(format!("{url} is not an archived post.")));
            };
            let earlier = s.post_versions(&post.url)?;
            let comments: Vec<CommentVersion> = s.comment_versions(&post.url)?;
            let versions = all_versions(&post, earlier);
            Ok((post, versions, comments))
        })
        .await?;
    let rfc =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    Ok(Json(serde_json::json!({
        "url": post.url,
        "version": post.version,
        "versions": versions.iter().map(|v| serde_json::json!({
            "version": v.n,
            "title": v.title,
            "content_html": v.html,
            "content_text": v.text,
            "fetched_at": rfc(v.fetched_at),
            "replaced_at": v.replaced_at.map(rfc),
        })).collect::<Vec<_>>(),
        "comment_versions": comments.iter().map(|c| serde_json::json!({
            "id": c.id,
            "author": c.author,
            "content_html": c.content_html,
            "content_text": c.content_text,
            "replaced_at": rfc(c.replaced_at),
        })).collect::<Vec<_>>(),
    }))
    .into_response())
}
