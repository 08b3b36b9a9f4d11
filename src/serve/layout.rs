//! The shell of every reader page: the compiled-in stylesheet, [`layout`] (the site header,
//! search box and main column around a page's body), the error page ([`message`]), and the
//! words and dates pages share ([`count`], [`time`], [`date`]). Imports no page module.

use super::routes::{Links, Routes};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, FixedOffset};
use maud::{html, Markup, DOCTYPE};

const STYLE: &str = include_str!("style.css");

/// `/assets/style.css`, the only file the reader serves (compiled in).
pub async fn stylesheet() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=3600"),
        ],
        STYLE,
    )
        .into_response()
}

/// The stylesheet every page uses, compiled in (the static copy writes it beside its pages).
pub const STYLESHEET: &str = STYLE;

/// A whole page: `body` under the site header, `title` in the window's title.
pub fn layout(links: &dyn Links, title: &str, body: Markup) -> Markup {
    layout_with_head(links, title, html! {}, body)
}

/// [`layout`] with more in the page's `head` (a blog's `link rel="alternate"` feed).
pub fn layout_with_head(links: &dyn Links, title: &str, head: Markup, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · everblog" }
                link rel="stylesheet" href=(links.stylesheet());
                (head)
            }
            body {
                a.skip href="#main" { "Skip to the content" }
                header.site {
                    a.home href=(links.home()) { "everblog" }
                    @if let Some(action) = links.search() {
                        form.search action=(action) method="get" {
                            input type="search" name="q" placeholder="Search the archive" aria-label="Search";
                            button { "Search" }
                        }
                    }
                }
                main id="main" { (body) }
            }
        }
    }
}

/// A page saying `text`, for errors.
pub fn message(status: StatusCode, text: &str) -> Markup {
    layout(
        &Routes,
        status.canonical_reason().unwrap_or("Error"),
        html! { h1 { (status.as_u16()) " " (status.canonical_reason().unwrap_or("")) } p { (text) } },
    )
}

/// `n` and the noun, singular for one: "1 comment", "3 comments".
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `d` as a `<time>`: the day (`YYYY-MM-DD`, with the time of day when `with_time`) in the
/// offset it was stored with (the blog's own), the full instant in `datetime`; "undated"
/// without one.
pub fn time(d: Option<DateTime<FixedOffset>>, with_time: bool) -> Markup {
    match d {
        Some(d) => html! {
            time datetime=(d.to_rfc3339()) {
                (d.format(if with_time { "%Y-%m-%d %H:%M" } else { "%Y-%m-%d" }))
            }
        },
        None => html! { "undated" },
    }
}

/// `d` as `YYYY-MM-DD`, or "undated".
pub fn date(d: Option<DateTime<FixedOffset>>) -> String {
    d.map(|d| d.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| "undated".into())
}
