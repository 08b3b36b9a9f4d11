//! A page of a NewCrawl batch: a frontier URL ready to be processed ([`Ready`]), its response
//! fetched now (the [`Fetched`] as `fetch` gave it) or reused from the store, then rendered or
//! not; the frontier state it ends in ([`judge`]); and what the store records of it
//! ([`Ready::outcome`], with what processing it [`Found`]).

use super::MAX_ATTEMPTS;
use crate::fetch::{Fetched, Response};
use crate::store::{
    Blog, BlogId, CommentWrite, Link, NewPost, PageOutcome, PageState, Renders, ResponseId, Store,
};
use anyhow::Result;
use chrono::{DateTime, Utc};
use std::time::Duration;

/// A frontier URL ready to be processed: fetched now, or its stored response reused; then
/// rendered, or not.
pub(super) struct Ready {
    /// The frontier URL.
    pub(super) url: String,
    /// Its depth in the crawl.
    pub(super) depth: u32,
    /// How its response was had.
    pub(super) got: Got,
    /// What the render stage made of it.
    pub(super) rendering: Rendering,
}

/// How a page's response was had.
pub(super) enum Got {
    /// Fetched now: the response if one arrived, the fetch-log lines, the redirects on the way.
    Fetched(Fetched),
    /// A stored response reused instead of fetching (an entry page fetched while learning, or a
    /// crash between fetch and record).
    Reused {
        /// The stored response's id.
        id: ResponseId,
        /// The stored response.
        response: Response,
    },
}

/// What the render stage made of a page.
pub(super) enum Rendering {
    /// Not rendered: the blog does not render it, or it is no HTML page to render.
    NotNeeded,
    /// Rendered in Chromium.
    Rendered(Response),
    /// It should have been rendered but could not be.
    Failed,
}

impl Ready {
    /// A page whose response is not rendered yet.
    pub(super) fn new(url: String, depth: u32, got: Got) -> Ready {
        Ready {
            url,
            depth,
            got,
            rendering: Rendering::NotNeeded,
        }
    }

    /// The fetch, when the page was fetched now.
    pub(super) fn fetched(&self) -> Option<&Fetched> {
        match &self.got {
            Got::Fetched(f) => Some(f),
            Got::Reused { .. } => None,
        }
    }

    /// The response as served (fetched now or reused).
    pub(super) fn response(&self) -> Option<&Response> {
        match &self.got {
            Got::Fetched(f) => f.response.as_ref(),
            Got::Reused { response, .. } => Some(response),
        }
    }

    /// The page as extracted: its rendering, else its response as served.
    pub(super) fn page(&self) -> Option<&Response> {
        match &self.rendering {
            Rendering::Rendered(r) => Some(r),
            _ => self.response(),
        }
    }

    /// robots.txt forbids it.
    pub(super) fn blocked(&self) -> bool {
        self.fetched().is_some_and(|f| f.blocked)
    }

    /// The address policy refused it.
    pub(super) fn refused(&self) -> bool {
        self.fetched().is_some_and(|f| f.refused)
    }

    /// The host answered 429/503 and asked to come back after this.
    pub(super) fn retry_after(&self) -> Option<Duration> {
        self.fetched().and_then(|f| f.retry_after)
    }

    /// It should have been rendered but could not be.
    pub(super) fn render_failed(&self) -> bool {
        matches!(self.rendering, Rendering::Failed)
    }

    /// Why the page failed, for a person, if it did (a reused response never did).
    pub(super) fn failure(&self) -> Option<String> {
        let f = self.fetched()?;
        f.record
            .failure()
            .or_else(|| f.response.is_none().then(|| "no response".into()))
    }

    /// What the store records of the page itself: its fetch-log lines (robots.txt, hops, the
    /// request; none when reused), its response (not when reused, nor when parked for a retry),
    /// the redirects on the way, its rendering, the reused response's id. The rest is `found`.
    pub(super) fn outcome(self, blog_id: BlogId, found: Found) -> PageOutcome {
        let parked = found.state == PageState::Queued;
        let (fetches, response, redirects, reused_response) = match self.got {
            Got::Fetched(f) => {
                let mut fetches = f.hops;
                fetches.push(f.record);
                let response = if parked { None } else { f.response };
                (fetches, response, f.redirects, None)
            }
            Got::Reused { id, .. } => (Vec::new(), None, Vec::new(), Some(id)),
        };
        let rendered = match self.rendering {
            Rendering::Rendered(r) => Some(r),
            Rendering::NotNeeded | Rendering::Failed => None,
        };
        PageOutcome {
            blog_id,
            url: self.url,
            fetches,
            response,
            redirects,
            rendered,
            reused_response,
            post: found.post,
            links: found.links,
            post_links: found.post_links,
            state: found.state,
            retry_at: found.retry_at,
            error: found.error,
            comments: found.comments,
            gone: false,
            moved_to: None,
            next_revisit: None,
            page: found.page,
        }
    }
}

/// What processing a page found, for the store: [`Ready::outcome`] adds the page itself.
pub(super) struct Found {
    /// The post, when the page is one.
    pub(super) post: Option<NewPost>,
    /// Links to enqueue (the trap bound applied).
    pub(super) links: Vec<Link>,
    /// L(u), when the page was parsed.
    pub(super) post_links: Option<u32>,
    /// The page's new frontier state.
    pub(super) state: PageState,
    /// With [`PageState::Queued`]: not before this time.
    pub(super) retry_at: Option<DateTime<Utc>>,
    /// Why the page failed or gave no post, for coverage reports.
    pub(super) error: Option<String>,
    /// Comments found on the page, reconciled with the archive.
    pub(super) comments: Option<CommentWrite>,
    /// The page is one of the blog's pages beside its posts.
    pub(super) page: Option<crate::store::NewPage>,
}

/// The frontier state a fetched page ends in: blocked by robots.txt, queued again after a
/// 429/503 (until [`MAX_ATTEMPTS`]), failed, or done. A page of a blog rendered throughout that
/// could not be rendered fails: its raw HTML lacks the content.
pub(super) fn judge(
    store: &Store,
    blog: &Blog,
    page: &Ready,
) -> Result<(PageState, Option<DateTime<Utc>>)> {
    if page.blocked() {
        return Ok((PageState::Blocked, None));
    }
    if page.refused() {
        return Ok((PageState::Refused, None));
    }
    if let Some(pause) = page.retry_after() {
        if store.attempts(blog.id, &page.url)? + 1 < MAX_ATTEMPTS {
            let at = crate::core::schedule::after(Utc::now(), pause);
            return Ok((PageState::Queued, Some(at)));
        }
        return Ok((PageState::Failed, None));
    }
    if page.failure().is_some() || (page.render_failed() && blog.renders == Some(Renders::All)) {
        return Ok((PageState::Failed, None));
    }
    Ok((PageState::Done, None))
}
