//! The pages of a blog beside its posts (issue 42: About, Contact, Now, a reading list),
//! archived as pages: the latest reading of each, kept out of the posts' lists, feeds and
//! counts.

use super::db::{args, Db};
use super::responses::ReadFrom;
use super::{BlogId, BlogPage, NewPage, PageOutcome, Store};
use anyhow::Result;
use chrono::{DateTime, Utc};

/// Archives the page beside the posts that the crawled page `o` is ([`NewPage`]), from the
/// response `source` it was read from (`now` when none was). A page fetched at an address written otherwise
/// (`/about` and `/about/`) stays under the address first archived.
pub(super) fn put_page(
    db: &mut dyn Db,
    o: &PageOutcome,
    page: &NewPage,
    source: ReadFrom,
    now: DateTime<Utc>,
) -> Result<()> {
    let first: Option<String> = db
        .query_opt(
            "SELECT url FROM pages WHERE url = ?1 OR url = ?2 ORDER BY url = ?1 DESC LIMIT 1",
            args![o.url.as_str(), page.url.as_str()],
        )?
        .map(|r| r.get(0))
        .transpose()?;
    match first {
        Some(url) if url != page.url => write_page(
            db,
            o.blog_id,
            &NewPage {
                url,
                ..page.clone()
            },
            source,
            now,
        ),
        _ => write_page(db, o.blog_id, page, source, now),
    }
}

/// Archives a page beside the blog's posts ([`NewPage`]): its latest reading, with the
/// response it was read from.
fn write_page(
    db: &mut dyn Db,
    blog_id: BlogId,
    p: &NewPage,
    source: ReadFrom,
    now: DateTime<Utc>,
) -> Result<()> {
    let fetched_at = source.fetched_at(db, now)?;
    let response_id = source.response;
    db.execute(
        "INSERT INTO pages (blog_id, url, title, content_html, content_text, response_id, fetched_at, why)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (url) DO UPDATE SET title = excluded.title, content_html = excluded.content_html,
           content_text = excluded.content_text, response_id = excluded.response_id,
           fetched_at = excluded.fetched_at, why = excluded.why",
        args![
            blog_id,
            p.url.as_str(),
            p.title.clone(),
            p.content_html.as_str(),
            p.content_text.as_str(),
            response_id,
            fetched_at,
            p.why.as_str()
        ],
    )?;
    Ok(())
}

impl Store {
    /// A blog's pages beside its posts (About, Contact; issue 42), by address.
    ///
    /// # Errors
    /// The database failed, or a stored time is corrupt.
    pub fn blog_pages(&self, blog_id: BlogId) -> Result<Vec<BlogPage>> {
        self.read(move |db| {
            db.query_map(
                "SELECT url, title, content_html, content_text, fetched_at, why FROM pages
                 WHERE blog_id = ?1 ORDER BY url",
                args![blog_id],
                |r| {
                    Ok(BlogPage {
                        url: r.get(0)?,
                        title: r.get(1)?,
                        content_html: r.get(2)?,
                        content_text: r.get(3)?,
                        fetched_at: r.time_req(4)?,
                        why: r.get(5)?,
                    })
                },
            )
        })
    }
}
