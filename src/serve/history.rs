//! Page family: a blog's history in charts (issue 44, feature row 17). `/blog/{id}/charts`
//! shows them with the figures behind them; `/blog/{id}/charts/{name}.svg` is each chart
//! (`serve::charts`, drawn on the server, as an image: nothing in it runs). [`report`] writes
//! the same as one HTML file that opens from disk (`archive report`), the charts inside it.

use super::charts::Chart;
use super::failure::Failure;
use super::layout::{layout, STYLESHEET};
use super::reader::Reader;
use super::routes::{charts_href, Links, Routes};
use super::views::{self, BlogView};
use crate::store::{Blog, BlogHistory, BlogId, JobState, Store};
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use maud::{html, Markup, DOCTYPE};
use std::sync::Arc;

/// `/blog/{id}/charts`: the blog's charts and the figures behind them.
pub async fn charts(
    State(reader): State<Arc<Reader>>,
    Path(id): Path<i64>,
) -> Result<Markup, Failure> {
    let id = BlogId::new(id);
    let (blog, history) = reader
        .read(move |s| Ok((BlogView::of(s, views::blog(s, id)?)?, s.blog_history(id)?)))
        .await?;
    let images: Vec<(Chart, String)> = Chart::ALL
        .into_iter()
        .map(|c| (c, format!("{}/{}.svg", charts_href(id), c.name())))
        .collect();
    Ok(layout(
        &Routes,
        &format!("History of {}", blog.name()),
        body(&Routes.blog(id), &blog, &history, &images),
    ))
}

/// `/blog/{id}/charts/{name}.svg`: one chart as SVG.
pub async fn chart(
    State(reader): State<Arc<Reader>>,
    Path((id, file)): Path<(i64, String)>,
) -> Result<Response, Failure> {
    let chart = file
        .strip_suffix(".svg")
        .and_then(Chart::named)
        .ok_or_else(|| Failure::NotFound("No such chart.".into()))?;
    let id = BlogId::new(id);
    let history = reader
        .read(move |s| {
            views::blog(s, id)?;
            Ok(s.blog_history(id)?)
        })
        .await?;
    Ok((
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            // Drawn here: attributes only, no script, no style element.
            (header::CONTENT_SECURITY_POLICY, "default-src 'none'"),
        ],
        chart.draw(&history),
    )
        .into_response())
}

/// The chart page's body: its title linking `blog_href`, each chart (from `images`: the chart
/// and its address), then the figures per job.
fn body(blog_href: &str, blog: &BlogView, h: &BlogHistory, images: &[(Chart, String)]) -> Markup {
    let done = h.jobs.iter().filter(|j| j.state == JobState::Done).count();
    html! {
        h1 { "History of " a href=(blog_href) { (blog.name()) } }
        p.meta {
            (h.months.iter().map(|m| m.posts).sum::<u64>()) " dated posts and "
            (h.months.iter().map(|m| m.comments).sum::<u64>()) " dated comments archived · the latest "
            (h.jobs.len()) " jobs: " (done) " done, " (h.jobs.len() - done) " failed"
        }
        @for (chart, src) in images {
            figure.chart {
                img src=(src) alt=(chart.title()) width="880" height="300";
            }
        }
        @if !h.jobs.is_empty() {
            h2 { "Jobs" }
            div.table { table {
                thead { tr { th { "Job" } th { "Ended" } th { "Minutes" } th { "Pages" } th { "Failed" } th { "Outcome" } } }
                tbody { @for j in h.jobs.iter().rev() {
                    tr {
                        td { (j.kind.label()) }
                        td { (j.finished_at.format("%Y-%m-%d %H:%M UTC")) }
                        td { (format!("{:.1}", (j.finished_at - j.started_at).num_milliseconds().max(0) as f64 / 60_000.0)) }
                        td { (j.pages) }
                        td { (j.errors) }
                        td { (j.state) }
                    }
                } }
            } }
        }
    }
}

/// `blog`'s history as one HTML file that opens from disk: the chart page with the charts
/// inside it (`data:` addresses) and the stylesheet in it.
///
/// # Errors
/// The store failed.
pub fn report(store: &Store, blog: &Blog) -> anyhow::Result<String> {
    let history = store.blog_history(blog.id)?;
    let blog = BlogView::of(store, blog.clone())?;
    let images: Vec<(Chart, String)> = Chart::ALL
        .into_iter()
        .map(|c| {
            let svg = base64::engine::general_purpose::STANDARD.encode(c.draw(&history));
            (c, format!("data:image/svg+xml;base64,{svg}"))
        })
        .collect();
    let title = format!("History of {}", blog.name());
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="generator" content={ "everblog " (env!("CARGO_PKG_VERSION")) };
                title { (title) }
                style { (maud::PreEscaped(STYLESHEET)) }
            }
            body { main id="main" {
                (body(&blog.home_url, &blog, &history, &images))
                p.meta { "Written " (chrono::Utc::now().format("%Y-%m-%d %H:%M UTC")) " by everblog from " (blog.home_url) "'s archive." }
            } }
        }
    };
    Ok(page.into_string())
}
