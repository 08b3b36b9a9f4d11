//! One post, one identity (issue 42): the other addresses of an archived post
//! (`post_aliases`: a permalink that redirected to it, its address written otherwise), written
//! with the page that found them, and the post any address answers.

use super::db::{args, Db};
use super::frontier::put_links;
use super::sql::{POST_AT, POST_AT_FIRST};
use super::{Link, PageOutcome, PageState, Source, Store};
use anyhow::Result;
use chrono::{DateTime, Utc};

/// The page `o` fetched at its frontier URL gave the post archived under `post_url` (the
/// address it redirected to, or its own written otherwise): the frontier URL becomes one of the
/// post's other addresses (issue 42), and the frontier holds the post once, under `post_url`:
/// done, with the sources that found either address; the frontier URL is no longer a post of
/// its own, so coverage counts posts, not addresses.
pub(super) fn put_alias(
    db: &mut dyn Db,
    o: &PageOutcome,
    post_url: &str,
    now: DateTime<Utc>,
) -> Result<()> {
    db.execute(
        "INSERT INTO post_aliases (url, post_url, blog_id, found_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (url) DO UPDATE SET post_url = excluded.post_url",
        args![o.url.as_str(), post_url, o.blog_id, now],
    )?;
    let depth = db
        .query_opt(
            "SELECT depth FROM frontier WHERE blog_id = ?1 AND url = ?2",
            args![o.blog_id, o.url.as_str()],
        )?
        .map(|r| r.get::<i64>(0))
        .transpose()?
        .unwrap_or(0);
    put_links(
        db,
        o.blog_id,
        &[Link {
            url: post_url.to_string(),
            depth: depth as u32,
            source: Source::Link,
            post: true,
        }],
    )?;
    db.execute(
        "UPDATE frontier SET state = ?3, is_post = 1,
           sources = sources | COALESCE((SELECT f.sources FROM frontier f WHERE f.blog_id = ?1 AND f.url = ?4), 0)
         WHERE blog_id = ?1 AND url = ?2",
        args![o.blog_id, post_url, PageState::Done, o.url.as_str()],
    )?;
    db.execute(
        "UPDATE frontier SET is_post = 0 WHERE blog_id = ?1 AND url = ?2",
        args![o.blog_id, o.url.as_str()],
    )?;
    Ok(())
}

/// The URL of the archived post that the frontier URL `fetched` or the post's own address
/// `post_url` already answers (archived under it, moved to it, or one of its other addresses):
/// a post fetched again at an address written otherwise keeps the identity it was first
/// archived under. `None` when neither is archived.
pub(super) fn archived_identity(
    db: &mut dyn Db,
    fetched: &str,
    post_url: &str,
) -> Result<Option<String>> {
    match post_at(db, post_url)? {
        Some(found) => Ok(Some(found)),
        None => post_at(db, fetched),
    }
}

/// The URL of the archived post the address `url` answers ([`POST_AT`]), its own first.
fn post_at(db: &mut dyn Db, url: &str) -> Result<Option<String>> {
    db.query_opt(
        &format!("SELECT p.url FROM posts p WHERE {POST_AT} ORDER BY {POST_AT_FIRST} LIMIT 1"),
        args![url],
    )?
    .map(|r| r.get(0))
    .transpose()
}

impl Store {
    /// True when a post of that URL is archived (under it, moved to it, or one of its other
    /// addresses).
    ///
    /// # Errors
    /// The database failed.
    pub fn has_post(&self, url: &str) -> Result<bool> {
        Ok(self.post_url_of(url)?.is_some())
    }

    /// The URL the post found at `url` is archived under (its identity): `url` itself, the
    /// post that moved to `url`, or the post `url` is another address of (a permalink that
    /// redirected to it). `None` when no archived post answers `url`.
    ///
    /// # Errors
    /// The database failed.
    pub fn post_url_of(&self, url: &str) -> Result<Option<String>> {
        let url = url.to_string();
        self.read(move |db| post_at(db, &url))
    }
}
