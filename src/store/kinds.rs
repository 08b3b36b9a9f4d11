//! The store's vocabularies: the states and kinds its records carry (jobs, frontier URLs,
//! responses, comments, media, rendering), each a closed set of names stored, exported and
//! shown as written here (`core::vocabulary!`).

use crate::core::vocabulary;

vocabulary! {
    /// What a job does.
    pub enum JobKind {
        /// NewCrawl(URL): learn the rules, crawl and archive every post (paper §4.4).
        NewCrawl = "new-crawl",
        /// UpdateCrawl(URL, since): archive what changed since the last crawl.
        UpdateCrawl = "update-crawl",
    }
}

impl JobKind {
    /// The paper's name of the job, for logs and people: "NewCrawl", "UpdateCrawl".
    pub fn label(self) -> &'static str {
        match self {
            JobKind::NewCrawl => "NewCrawl",
            JobKind::UpdateCrawl => "UpdateCrawl",
        }
    }
}

vocabulary! {
    /// Where a job is in its life.
    pub enum JobState {
        /// Waiting for a worker (from `not_before` on).
        Queued = "queued",
        /// Held by a worker under a lease.
        Running = "running",
        /// Finished.
        Done = "done",
        /// Ended with an error (its successor is queued after a back-off).
        Failed = "failed",
    }
}

vocabulary! {
    /// Where a frontier URL is.
    pub enum PageState {
        /// Waiting to be fetched (from `not_before` on, after a 429/503).
        Queued = "queued",
        /// Fetched and processed.
        Done = "done",
        /// Could not be fetched or processed (network error, HTTP ≥ 400, retries used up).
        Failed = "failed",
        /// robots.txt forbids it: never requested.
        Blocked = "blocked",
        /// The address policy refused it (a private address): never requested.
        Refused = "refused",
        /// Fetched and processed; its URL looks like a permalink but the blog's own evidence
        /// says it is no post (a listing, a copy of another post): the reason is kept, and
        /// `archive coverage` lists it apart from the posts (issue 28).
        NotPost = "not-post",
        /// Fetched and processed; its URL looks like a permalink but no post could be read
        /// from it, and nothing says it is none: a post possibly lost, reported missing by
        /// `archive coverage` with the reason (issue 28).
        Unread = "unread",
    }
}

vocabulary! {
    /// What a stored response is (`responses.kind`).
    pub enum ResponseKind {
        /// What arrived from the network for a request of ours (any status but a redirect).
        Raw = "raw",
        /// A 3xx answered on the way to a response, kept so that a replay redirects as the
        /// live site did: no page to read, extract or revalidate.
        Redirect = "redirect",
        /// Chromium's rendering of a raw response (`fetch::RENDERED_HEADER`): derived from a
        /// capture, not a capture itself.
        Rendered = "rendered",
    }
}

impl ResponseKind {
    /// What `r` is, by its status and its rendering mark.
    pub fn of(r: &crate::fetch::Response) -> ResponseKind {
        if r.is_rendered() {
            ResponseKind::Rendered
        } else if (300..400).contains(&r.status) {
            ResponseKind::Redirect
        } else {
            ResponseKind::Raw
        }
    }
}

vocabulary! {
    /// How a frontier URL was found. A URL found several ways keeps every source (a bit each).
    pub enum Source {
        /// The blog's feed (an entry's permalink).
        Feed = "feed",
        /// An older page of the feed (RFC 5005 paging, WordPress `?paged=N`).
        PagedFeed = "paged-feed",
        /// A sitemap.
        Sitemap = "sitemap",
        /// A listing page walked to backfill (home page pagination, archives).
        Listing = "listing",
        /// A link on a crawled page.
        Link = "link",
        /// Where the crawl starts (the home page or `--start`).
        Start = "start",
    }
}

impl Source {
    /// The sources that list a blog's posts: with the pages linking a post, each is one
    /// finding of it in the capture–recapture estimate of the posts still unseen (paper §4.3's
    /// stopping rule, `crawl::stopping`).
    pub const LISTS: [Source; 4] = [
        Source::Feed,
        Source::PagedFeed,
        Source::Sitemap,
        Source::Listing,
    ];

    /// The source's bit in a set of sources.
    pub fn bit(self) -> i64 {
        1 << Source::ALL.iter().position(|s| *s == self).expect("listed")
    }

    /// The sources in a set.
    pub fn of(bits: i64) -> Vec<Source> {
        Source::ALL
            .iter()
            .copied()
            .filter(|s| bits & s.bit() != 0)
            .collect()
    }
}

vocabulary! {
    /// Where an archived comment was read.
    pub enum CommentSource {
        /// The post's page (or one of its comment pages).
        Page = "page",
        /// A comment feed: kept until the page shows the same comment.
        Feed = "feed",
    }
}

vocabulary! {
    /// The user's rendering choice for a blog (`archive add --render`).
    pub enum RenderMode {
        /// Decide from the blog itself ([`Renders`]).
        Auto = "auto",
        /// Render every page.
        Always = "always",
        /// Never render.
        Never = "never",
    }
}

vocabulary! {
    /// What a blog renders in Chromium, once decided (`crawl::rendering`).
    pub enum Renders {
        /// Every page: the raw HTML lacks the feed's text.
        All = "all",
        /// Post pages only: they carry a JavaScript comment widget.
        Posts = "posts",
        /// Nothing: plain HTML is enough.
        Nothing = "none",
    }
}

impl Renders {
    /// Whether a page of a blog that renders this is rendered.
    pub fn wants(self, is_post: bool) -> bool {
        match self {
            Renders::All => true,
            Renders::Posts => is_post,
            Renders::Nothing => false,
        }
    }
}

vocabulary! {
    /// What became of one of a post's requisites or media.
    pub enum MediaState {
        /// Fetched and kept (whatever its HTTP status: a 404 is what the site answered).
        Stored = "stored",
        /// The fetch failed (network error, over `[media] max_file_mb`, refused, blocked).
        Failed = "failed",
        /// Not fetched: over the blog's `[media] max_blog_mb` budget.
        Skipped = "skipped",
        /// Not fetched yet: its host asked to wait (429/503 with a long `Retry-After`); a later
        /// job fetches it (`Store::media_pending`).
        Deferred = "deferred",
    }
}
