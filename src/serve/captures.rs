//! A blog's captured pages (issue 45 item 1), as pywb's URL query lists a site's: every address
//! its crawls captured (pages, feeds, images, comment data), in address order, with how many
//! captures and the first and last, each leading to its latest capture's replay and to its
//! TimeMap page. A page of the family: imports only the base and the store.

use super::failure::Failure;
use super::layout::{count, layout};
use super::reader::Reader;
use super::routes::{replay_href, timestamp, Links, Routes};
use super::views::{self, BlogView, ListParams};
use crate::store::{BlogId, CapturedPages};
use axum::extract::{Path, Query, State};
use maud::{html, Markup};
use std::sync::Arc;

/// `/blog/{id}/captures?page=`: the blog's captured addresses, `page_size` a page.
pub async fn captures(
    State(reader): State<Arc<Reader>>,
    Path(id): Path<i64>,
    Query(p): Query<ListParams>,
) -> Result<Markup, Failure> {
    let id = BlogId::new(id);
    let size = reader.page_size;
    let page = p.page();
    let (blog, CapturedPages { pages, total }) = reader
        .read(move |s| {
            let blog = BlogView::of(s, views::blog(s, id)?)?;
            let list = s.captured_pages(id, size, (page - 1).saturating_mul(size))?;
            Ok((blog, list))
        })
        .await?;
    let last = total.div_ceil(u64::from(size)).max(1);
    if u64::from(page) > last {
        return Err(Failure::NotFound(format!(
            "There is no page {page} of this list: it fills {}.",
            count(last, "page", "pages")
        )));
    }
    let base = format!("{}/captures", Routes.blog(id));
    let day = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M").to_string();
    Ok(layout(
        &Routes,
        &format!("Captures of {}", blog.name()),
        html! {
            h1 { "Captured pages" }
            p.meta { a href=(Routes.blog(id)) { (blog.name()) } " · "
                (count(total, "address", "addresses")) " captured, each as often as the crawls fetched it" }
            div.table { table.captures {
                thead { tr { th { "Address" } th { "Captures" } th { "First" } th { "Last" } } }
                tbody {
                    @for c in &pages {
                        tr {
                            td.url { a href=(replay_href(&timestamp(c.last), &c.url)) { (c.url) } }
                            td data-label="Captures" { a href={ "/timemap/link/" (c.url) } title="Every capture of this address" { (c.captures) } }
                            td data-label="First" { (day(c.first)) }
                            td data-label="Last" { (day(c.last)) }
                        }
                    }
                }
            } }
            nav.pager {
                @if page > 1 { a rel="prev" href={ (base) "?page=" (page - 1) } { "← Previous" } }
                span { "Page " (page) " of " (last) }
                @if u64::from(page) < last { a rel="next" href={ (base) "?page=" (page + 1) } { "Next →" } }
            }
        },
    ))
}
