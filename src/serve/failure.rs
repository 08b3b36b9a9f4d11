//! A request that failed, in the form its route speaks: [`Failure`] (the reader's HTML
//! message page), [`ApiFailure`] and [`error`] (`{"error": CODE, "message"}` under `/api/`,
//! [`code`]: stable codes per status), and [`busy`] (503). The cause goes to the log; the
//! client is told only what it can act on. Imports no page module.

use super::layout;
use super::routes::{replay_href, timestamp, Links, Routes};
use crate::store::{BlogId, Capture};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// A failed request: what the client is told; the cause goes to the log.
#[derive(Debug)]
pub enum Failure {
    /// 404 with a sentence for the reader.
    NotFound(String),
    /// 404 for an address the archive holds no capture of, with where to go instead.
    NotArchived(Box<NotArchived>),
    /// 400 with a sentence for the reader.
    BadRequest(String),
    /// 500; the error is logged, the page says only that it happened.
    Internal(anyhow::Error),
    /// 503 with `Retry-After`: the database cannot be reached now (logged).
    Unavailable(anyhow::Error),
}

/// An address the archive holds no capture of (issue 45: a link in a capture never
/// dead-ends): the live address, the nearest capture of its site, the site's captured pages.
#[derive(Debug)]
pub struct NotArchived {
    /// The address asked for.
    pub url: String,
    /// The capture nearest the time asked for of its site's home page, when the archive holds
    /// one.
    pub nearest: Option<Capture>,
    /// The archived blog on the same host: its id and name.
    pub site: Option<(BlogId, String)>,
}

impl NotArchived {
    fn page(&self) -> maud::Markup {
        let live = url::Url::parse(&self.url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
        layout::layout(
            &Routes,
            "Not archived",
            maud::html! {
                h1 { "Not in the archive" }
                p { "The archive holds no capture of " code.url { (self.url) } "." }
                ul.ways {
                    @if live {
                        li { "It may still be on the web: " a href=(self.url) rel="noreferrer nofollow" { "open the live address" } "." }
                    }
                    @if let Some(c) = &self.nearest {
                        li { "The nearest capture of its site: " a href=(replay_href(&timestamp(c.fetched_at), &c.url)) { code.url { (c.url) } }
                            " (" (c.fetched_at.format("%Y-%m-%d %H:%M UTC")) ")." }
                    }
                    @if let Some((id, name)) = &self.site {
                        li { a href=(Routes.blog(*id)) { (name) } " in the archive, and " a href={ (Routes.blog(*id)) "/captures" } { "every page captured of it" } "." }
                    }
                }
            },
        )
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        if crate::store::unavailable(&e) {
            Failure::Unavailable(e)
        } else {
            Failure::Internal(e)
        }
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let (status, message) = match self {
            Failure::NotFound(m) => (StatusCode::NOT_FOUND, m),
            Failure::NotArchived(n) => return (StatusCode::NOT_FOUND, n.page()).into_response(),
            Failure::BadRequest(m) => (StatusCode::BAD_REQUEST, m),
            Failure::Internal(e) => {
                tracing::error!("serve: {e:#}");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Something went wrong reading the archive; the server's log says what."
                        .to_string(),
                )
            }
            Failure::Unavailable(e) => {
                tracing::warn!("serve: the database cannot be reached: {e:#}");
                return busy();
            }
        };
        (status, layout::message(status, &message)).into_response()
    }
}

/// 503 Service Unavailable (the outermost layer, `serve::headers`, adds `Retry-After`): the server
/// is answering as many requests as it may (`max_requests`), or a request ran past
/// `request_timeout`.
pub fn busy() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        layout::message(
            StatusCode::SERVICE_UNAVAILABLE,
            "The archive is busy; try again in a moment.",
        ),
    )
        .into_response()
}

/// A request the routing layer refused (axum's rejection texts, "Cannot parse `abc` to a
/// `i64`"), said in the reader's plain words: what was wrong in the address and what to give
/// instead (issue 45 item 6). `query` is the request's query string, to name the value given.
/// Any other text is returned as it is.
pub fn in_plain_words(message: &str, query: Option<&str>) -> String {
    let quoted = |s: &str| -> Option<String> {
        let start = s.find('`')? + 1;
        let end = start + s[start..].find('`')?;
        Some(s[start..end].to_string())
    };
    if let Some(rest) = message.strip_prefix("Invalid URL: Cannot parse ") {
        let value = match rest.split_once(" with value ") {
            Some((_, v)) => quoted(v),
            None => quoted(rest),
        }
        .unwrap_or_default();
        return format!(
            "`{value}` is not a number, and this address takes one there (as in /blog/1): follow the links the pages give."
        );
    }
    if message.starts_with("Invalid URL") {
        return "This address is not one the reader makes: follow the links the pages give.".into();
    }
    let Some(rest) = message.strip_prefix("Failed to deserialize query string") else {
        return message.to_string();
    };
    let rest = rest.trim_start_matches(':').trim();
    let (field, reason) = match rest.split_once(": ") {
        Some((f, r)) if !f.contains(' ') => (Some(f), r),
        _ => (None, rest),
    };
    let given = field.and_then(|f| {
        url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
            .find(|(k, _)| k == f)
            .map(|(_, v)| v.into_owned())
    });
    let what = match (field, &given) {
        (Some(f), Some(v)) => format!("`{f}={v}` is not understood"),
        (Some(f), None) => format!("`{f}` is not understood"),
        _ => "The address's query is not understood".into(),
    };
    let number = [
        "invalid digit",
        "number too large",
        "cannot parse integer",
        "invalid value: integer",
        "invalid type",
    ]
    .iter()
    .any(|r| reason.contains(r));
    match (field, reason.split_once("expected ")) {
        (Some(f), _) if number => format!("{what}: {f} takes a whole number from 1, as in {f}=2."),
        (Some(f), Some((_, expected))) if reason.contains("unknown variant") => format!(
            "{what}: {f} takes {}.",
            expected.replace('`', "").replace(", ", ", or ")
        ),
        _ => format!("{what}: leave it out, or give it as the pages' own links do."),
    }
}

/// A failure as JSON.
pub struct ApiFailure(Failure);

impl From<Failure> for ApiFailure {
    fn from(f: Failure) -> Self {
        ApiFailure(f)
    }
}

/// The stable code of an error status, the `error` of every API error: `bad_request`,
/// `unauthorized`, `not_found`, `method_not_allowed`, `uri_too_long`, `too_many_requests`,
/// `internal`,
/// `unavailable`, else `error`.
pub fn code(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "bad_request",
        401 => "unauthorized",
        404 => "not_found",
        405 => "method_not_allowed",
        414 => "uri_too_long",
        429 => "too_many_requests",
        500 => "internal",
        503 => "unavailable",
        _ => "error",
    }
}

/// An API error: `{"error": code, "message": message}` with `status`.
pub fn error(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "error": code(status), "message": message });
    (status, Json(body)).into_response()
}

impl IntoResponse for ApiFailure {
    fn into_response(self) -> Response {
        let (status, error) = match self.0 {
            Failure::NotFound(m) => (StatusCode::NOT_FOUND, m),
            Failure::NotArchived(n) => (
                StatusCode::NOT_FOUND,
                format!("{} is not in this archive", n.url),
            ),
            Failure::BadRequest(m) => (StatusCode::BAD_REQUEST, m),
            Failure::Internal(e) => {
                tracing::error!("serve api: {e:#}");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal error (see the server's log)".into(),
                )
            }
            Failure::Unavailable(e) => {
                tracing::warn!("serve api: the database cannot be reached: {e:#}");
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the archive's database cannot be reached now; retry later".into(),
                )
            }
        };
        self::error(status, &error)
    }
}

#[cfg(test)]
mod tests {
    use super::in_plain_words;

    #[test]
    fn the_routing_layers_refusals_are_said_in_plain_words() {
        assert_eq!(
            in_plain_words("Invalid URL: Cannot parse `abc` to a `i64`", None),
            "`abc` is not a number, and this address takes one there (as in /blog/1): follow the links the pages give."
        );
        assert_eq!(
            in_plain_words(
                "Failed to deserialize query string: page: invalid digit found in string",
                Some("q=owl&page=abc")
            ),
            "`page=abc` is not understood: page takes a whole number from 1, as in page=2."
        );
        assert_eq!(
            in_plain_words(
                "Failed to deserialize query string: sort: unknown variant `new`, expected `relevance` or `date`",
                Some("sort=new")
            ),
            "`sort=new` is not understood: sort takes relevance or date."
        );
        assert_eq!(in_plain_words("Not Found", None), "Not Found");
    }
}
