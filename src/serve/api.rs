//! The reader's JSON API, for scripts (documented in README.md, "Reading the archive"):
//! `/api/blogs`, `/api/blog/{id}/posts`, `/api/post?url=`, `/api/search?q=`. Every error,
//! whoever answers it (a handler, a rejected query, the guard, the load shedder), is
//! `{"error": CODE, "message": "…"}` with the HTTP status; CODE is stable
//! ([`failure::code`]).

use super::failure::{self, ApiFailure, Failure};
use super::layout;
use super::reader::Reader;
use super::views::{self, BlogView, ListParams, SearchParams, UrlParam};
use crate::store::{BlogId, PostPage};
use axum::extract::{Path, Query, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// A layer over every route, so every error reaches a client in the form its route speaks: an
/// error answered in another form (a rejected query string, 401, 414, 503 from the load
/// shedder) is answered under `/api/` as [`failure::error`] (JSON) and elsewhere as the
/// reader's HTML message page ([`layout::message`]), with the same status and headers;
/// plain-text messages are said in plain words ([`failure::in_plain_words`]), pages replaced
/// by the status's reason. Captures under `/web/` are the
/// archived answers as they were and are never touched.
pub async fn uniform_errors(req: Request, next: Next) -> Response {
    let path = req.uri().path();
    let api = path.starts_with("/api/");
    let capture = path.starts_with("/web/");
    let query = req.uri().query().map(str::to_string);
    let r = next.run(req).await;
    let content_type = r
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let error = r.status().is_client_error() || r.status().is_server_error();
    let formed = if api {
        content_type.starts_with("application/json")
    } else {
        content_type.starts_with("text/html")
    };
    if capture || formed || !error {
        return r;
    }
    let (mut parts, body) = r.into_parts();
    let plain = content_type.starts_with("text/plain");
    let text = match axum::body::to_bytes(body, 16 * 1024).await {
        Ok(b) if plain => {
            failure::in_plain_words(String::from_utf8_lossy(&b).trim(), query.as_deref())
        }
        _ => String::new(),
    };
    let message = if text.is_empty() {
        parts
            .status
            .canonical_reason()
            .unwrap_or("error")
            .to_string()
    } else {
        text
    };
    parts.headers.remove(header::CONTENT_TYPE);
    parts.headers.remove(header::CONTENT_LENGTH);
    let mut out = if api {
        failure::error(parts.status, &message)
    } else {
        (parts.status, layout::message(parts.status, &message)).into_response()
    };
    for (name, value) in &parts.headers {
        out.headers_mut().insert(name.clone(), value.clone());
    }
    out
}

type ApiResult = Result<Response, ApiFailure>;

/// `/api/blogs`: every blog, as [`BlogView`].
pub async fn blogs(State(reader): State<Arc<Reader>>) -> ApiResult {
    let list = reader.read(|s| Ok(BlogView::all(s)?)).await?;
    Ok(Json(list).into_response())
}

/// `/api/blog/{id}/posts?page=&month=YYYY-MM&author=&tag=`: `{total, page, page_size,
/// posts: [{url, title, authors, published, comments, version, gone_at}]}`, newest first.
pub async fn posts(
    State(reader): State<Arc<Reader>>,
    Path(id): Path<i64>,
    Query(p): Query<ListParams>,
) -> ApiResult {
    let id = BlogId::new(id);
    let filter = p.filter()?;
    let size = reader.page_size;
    let page = p.page();
    let PostPage { posts, total } = reader
        .read(move |s| {
            views::blog(s, id)?;
            Ok(s.post_page(id, &filter, size, (page - 1).saturating_mul(size))?)
        })
        .await?;
    Ok(Json(serde_json::json!({
        "total": total, "page": page, "page_size": size, "posts": posts,
    }))
    .into_response())
}

/// `/api/post?url=`: the post's record exactly as `archive export` writes it (JSON Lines
/// keys, comments and media included).
pub async fn post(State(reader): State<Arc<Reader>>, Query(q): Query<UrlParam>) -> ApiResult {
    let url = q.url.clone();
    let post = reader
        .read(move |s| Ok(s.post(&url)?))
        .await?
        .ok_or_else(|| Failure::NotFound(format!("{} is not an archived post", q.url)))?;
    Ok(Json(post).into_response())
}

/// `/api/search?q=&blog=&author=&tag=&from=&to=&sort=&page=`: `[{url, title, blog,
/// published, post_matches, snippet, comments: [{id, author, snippet}]}]`, one per post, best
/// (or newest) first; each `snippet` is HTML (text escaped, matches in `<mark>`);
/// `post_matches` is false when only the comments hold the words.
pub async fn search(State(reader): State<Arc<Reader>>, Query(p): Query<SearchParams>) -> ApiResult {
    let size = reader.page_size;
    let q = p.query(size, reader.search_rank_window)?;
    let mut hits = reader.read(move |s| Ok(s.search(&q)?)).await?;
    hits.truncate(size as usize);
    let out: Vec<serde_json::Value> = hits
        .into_iter()
        .map(|h| {
            let mut v = serde_json::to_value(&h).unwrap_or_default();
            v["snippet"] = views::snippet_html(&h.marked).into();
            for (i, c) in h.comments.iter().enumerate() {
                v["comments"][i]["snippet"] = views::snippet_html(&c.marked).into();
            }
            v
        })
        .collect();
    Ok(Json(out).into_response())
}
