//! The reader's JSON API, for scripts (documented in README.md, "Reading the archive"):
//! `/api/blogs`, `/api/blog/{id}/posts`, `/api/post?url=`, `/api/search?q=`. Errors are
//! `{"error": "…"}` with the HTTP status.

use super::views::{self, BlogView, ListParams, SearchParams, UrlParam};
use super::{Failure, Reader};
use crate::store::{BlogId, PostPage};
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// A failure as JSON.
pub struct ApiFailure(Failure);

impl From<Failure> for ApiFailure {
    fn from(f: Failure) -> Self {
        ApiFailure(f)
    }
}

impl IntoResponse for ApiFailure {
    fn into_response(self) -> Response {
        use axum::http::StatusCode;
        let (status, error) = match self.0 {
            Failure::NotFound(m) => (StatusCode::NOT_FOUND, m),
            Failure::BadRequest(m) => (StatusCode::BAD_REQUEST, m),
            Failure::Internal(e) => {
                tracing::error!("serve api: {e:#}");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal error (see the server's log)".into(),
                )
            }
        };
        (status, Json(serde_json::json!({ "error": error }))).into_response()
    }
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

/// `/api/search?q=&blog=&author=&from=&to=&page=`: `[{url, title, blog, published, snippet,
/// comment}]`, best first; `snippet` is HTML (text escaped, matches in `<mark>`), `comment`
/// `{id, author}` when the hit is in a comment, else null.
pub async fn search(State(reader): State<Arc<Reader>>, Query(p): Query<SearchParams>) -> ApiResult {
    let size = reader.page_size;
    let q = p.query(size, reader.search_rank_window)?;
    let mut hits = reader.read(move |s| Ok(s.search(&q)?)).await?;
    hits.truncate(size as usize);
    let out: Vec<serde_json::Value> = hits
        .into_iter()
        .map(|h| {
            let snippet = views::snippet_html(&h.marked);
            let mut v = serde_json::to_value(&h).unwrap_or_default();
            v["snippet"] = snippet.into();
            v
        })
        .collect();
    Ok(Json(out).into_response())
}
