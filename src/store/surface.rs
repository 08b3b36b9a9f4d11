//! The surface of [`Store`]: every public method that reads or writes the archive, documented
//! once here and answered by the back end the store was opened on (`store::<concern>` on
//! SQLite, `store::postgres::<concern>` on PostgreSQL, the same names and arguments).

use super::responses::NotModified;
use super::*;
use crate::core::feed::{Enclosure, FeedEntry, FeedKind};
use crate::core::post_url::PostUrlPattern;
use crate::fetch::{FetchRecord, Fetched, Response};
use std::time::Duration;

/// Writes each listed method of [`Store`] as a call of the same method on its back end.
macro_rules! forward {
    () => {};
    ($(#[$meta:meta])* pub fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty; $($rest:tt)*) => {
        impl Store {
            $(#[$meta])*
            pub fn $name(&self $(, $arg: $ty)*) -> $ret {
                match &self.0 {
                    Backend::Sqlite(s) => s.$name($($arg),*),
                    Backend::Postgres(p) => p.$name($($arg),*),
                }
            }
        }
        forward!($($rest)*);
    };
    ($(#[$meta:meta])* pub fn $name:ident(&mut self $(, $arg:ident: $ty:ty)*) -> $ret:ty; $($rest:tt)*) => {
        impl Store {
            $(#[$meta])*
            pub fn $name(&mut self $(, $arg: $ty)*) -> $ret {
                match &mut self.0 {
                    Backend::Sqlite(s) => s.$name($($arg),*),
                    Backend::Postgres(p) => p.$name($($arg),*),
                }
            }
        }
        forward!($($rest)*);
    };
}

forward! {
    // Blogs, their feed entries, learned rules and render decision (`store::blogs`).
    /// All blogs, oldest first.
    pub fn blogs(&self) -> Result<Vec<Blog>>;
    /// The blog with row id `id`.
    pub fn blog(&self, id: i64) -> Result<Option<Blog>>;
    /// The blog whose feed URL or home URL is `url` (exact match).
    pub fn find_blog(&self, url: &str) -> Result<Option<Blog>>;
    /// Adds a blog with its feed entries, in one transaction. Returns the new blog.
    pub fn insert_blog(&mut self, home_url: &str, feed_url: &str, title: Option<&str>, feed_kind: FeedKind, entries: &[FeedEntry]) -> Result<Blog>;
    /// Updates the stored feed entries of a blog (insert or refresh).
    pub fn save_entries(&mut self, blog_id: i64, entries: &[FeedEntry]) -> Result<()>;
    /// The stored feed entries of a blog, in the order they were first seen.
    pub fn entries(&self, blog_id: i64) -> Result<Vec<FeedEntry>>;
    /// The enclosures the blog's feed gave for the post at `post_url` (canonical permalink);
    /// empty when the feed never listed the post or gave it none.
    ///
    /// # Errors
    /// The database failed.
    pub fn enclosures_of(&self, blog_id: i64, post_url: &str) -> Result<Vec<Enclosure>>;
    /// Replaces the active rules of a blog and stores its post URL pattern, in one transaction.
    /// Earlier rules stay in the table, inactive, as history.
    pub fn save_rules(&mut self, blog_id: i64, rules: &[StoredRule], post_pattern: &PostUrlPattern) -> Result<()>;
    /// The active rules of a blog, by field name.
    pub fn rules(&self, blog_id: i64) -> Result<Vec<StoredRule>>;
    /// Sets the user's rendering choice for a blog; a new choice forgets an earlier automatic
    /// decision.
    pub fn set_render_mode(&mut self, blog_id: i64, mode: RenderMode) -> Result<()>;
    /// Records what a blog renders and why.
    pub fn set_render_decision(&mut self, blog_id: i64, renders: Renders, reason: &str) -> Result<()>;
    /// Sets where a blog's NewCrawl starts.
    pub fn set_start_url(&mut self, blog_id: i64, url: &str) -> Result<()>;
    /// Marks the start of a blog's NewCrawl (kept from the first start on resume).
    pub fn mark_crawl_started(&mut self, blog_id: i64) -> Result<()>;
    /// Records that a blog's sitemaps were read at `at`.
    pub fn mark_sitemaps_read(&mut self, blog_id: i64, at: DateTime<Utc>) -> Result<()>;
    /// Marks a blog's NewCrawl complete.
    pub fn mark_crawled(&mut self, blog_id: i64) -> Result<()>;
    /// Errors of a blog's jobs in a row (0 after a success).
    pub fn errors_in_a_row(&self, blog_id: i64) -> Result<u32>;
    /// Times of a blog's latest activity, newest first, at most `n`: publication times of posts
    /// and of their comments. Scheduling reads the posting and commenting frequency off them.
    pub fn activity(&self, blog_id: i64, n: usize) -> Result<Vec<DateTime<Utc>>>;
    /// Counts for one blog.
    pub fn counts(&self, blog_id: i64) -> Result<BlogCounts>;
    // Each blog's crawl queue, paper §4.3 (`store::frontier`).
    /// Adds links to a blog's frontier (a known URL gains the link's source).
    pub fn enqueue(&mut self, blog_id: i64, links: &[Link]) -> Result<()>;
    /// Up to `n` queued frontier URLs that may be fetched at `now`, in breadth-first order:
    /// (url, depth).
    pub fn queued(&self, blog_id: i64, n: usize, now: DateTime<Utc>) -> Result<Vec<(String, u32)>>;
    /// One page of a blog's queued URLs in discovery order: (seq, url) with seq > `after`.
    pub fn queued_page(&self, blog_id: i64, after: i64, n: usize) -> Result<Vec<(i64, String)>>;
    /// Number of frontier URLs of a blog already processed (done, failed or blocked).
    pub fn processed(&self, blog_id: i64) -> Result<u64>;
    /// Queued URLs of a blog never scored by the priority model, at most `n`.
    pub fn unscored(&self, blog_id: i64, n: usize) -> Result<Vec<String>>;
    /// Sets the priorities of queued URLs: (url, priority, model size it was computed at).
    pub fn set_priorities(&mut self, blog_id: i64, scores: &[(String, f64, i64)]) -> Result<()>;
    /// The `n` best queued URLs of a blog that may be fetched at `now`: highest priority first,
    /// then breadth-first.
    pub fn best_queued(&self, blog_id: i64, n: usize, now: DateTime<Utc>) -> Result<Vec<QueuedUrl>>;
    /// The earliest time one of a blog's queued URLs waits for (a 429/503 retry), if any.
    pub fn next_retry(&self, blog_id: i64) -> Result<Option<DateTime<Utc>>>;
    /// Queued URLs of a blog whose page is already stored (entry pages fetched to learn the
    /// rules): processing them costs no request.
    pub fn prefetched(&self, blog_id: i64) -> Result<u64>;
    /// Up to `n` of those queued URLs whose page is already stored, in discovery order:
    /// (url, depth).
    pub fn prefetched_queued(&self, blog_id: i64, n: usize) -> Result<Vec<(String, u32)>>;
    /// Queued URLs of a blog waiting past `now` for a retry (a server asked to retry later).
    pub fn deferred(&self, blog_id: i64, now: DateTime<Utc>) -> Result<u64>;
    /// Where the crawl is with one URL of a blog, if it is in the frontier.
    pub fn page_state(&self, blog_id: i64, url: &str) -> Result<Option<PageState>>;
    /// Post URLs of a blog queued and fetchable at `now` (not waiting for a retry).
    pub fn queued_posts(&self, blog_id: i64, now: DateTime<Utc>) -> Result<u64>;
    /// How often the blog's known posts were found, for the capture–recapture estimate of the
    /// posts still unseen: (posts found once, posts found twice). A finding is a page linking
    /// the post, or a source that lists it (feed, older feed page, sitemap, listing page).
    pub fn captures(&self, blog_id: i64) -> Result<(u64, u64)>;
    /// Number of frontier URLs of a blog in each state.
    pub fn page_states(&self, blog_id: i64) -> Result<Vec<(PageState, u64)>>;
    /// The kNN training data of a blog: (url, L(u)) of every processed page, in processing order.
    pub fn observations(&self, blog_id: i64) -> Result<Vec<(String, u32)>>;
    /// Retry attempts of a frontier URL so far.
    pub fn attempts(&self, blog_id: i64, url: &str) -> Result<u32>;
    // Per-host request slots shared by every process on the database (`store::host_slots`).
    /// Reserves the next request slot of `host`: the slot starts at the later of now and the
    /// host's `next_at`, and the host's next slot moves `delay` past it. Returns how long to
    /// wait before the request. One `BEGIN IMMEDIATE` transaction, so two processes never get
    /// the same slot.
    pub fn reserve_host(&mut self, host: &str, delay: Duration) -> Result<Duration>;
    // The job queue with leases (`store::jobs`).
    /// Queues a job unless the blog already has an open (queued or running) one of that kind.
    /// Returns true when a job was added.
    pub fn enqueue_job(&mut self, blog_id: i64, kind: JobKind) -> Result<bool>;
    /// Takes the oldest job matching `filter` that is queued and due, or running under an
    /// expired lease (its worker died), for `owner` until now + `lease`.
    pub fn lease_job(&mut self, owner: &str, lease: Duration, filter: JobFilter) -> Result<Option<Job>>;
    /// Extends the lease of a running job held by `owner`. False when the job is no longer
    /// ours (the lease expired and another worker took it).
    pub fn renew_lease(&mut self, job_id: i64, owner: &str, lease: Duration) -> Result<bool>;
    /// Gives a job held by `owner` back to the queue (stopped at shutdown: any worker resumes
    /// it); its outcome so far is kept.
    pub fn release_job(&mut self, job_id: i64, owner: &str) -> Result<()>;
    /// Queues a job of `kind` for a blog, not to be taken before `not_before`, unless the blog
    /// already has an open job of that kind (then its time moves to the earlier of the two).
    /// Returns true when a job was added.
    pub fn schedule_job(&mut self, blog_id: i64, kind: JobKind, not_before: DateTime<Utc>) -> Result<bool>;
    /// Ends a job held by `owner` and, in the same transaction, records the outcome on its blog
    /// and queues the blog's next job: on success the error streak resets (and for an
    /// UpdateCrawl `last_update_at` is set); on failure the streak grows and the error is kept
    /// for `archive status`. A crash can never leave a finished job without its successor.
    pub fn finish_job(&mut self, job: &Job, owner: &str, end: &JobEnd) -> Result<()>;
    /// Jobs, newest first, at most `n`.
    pub fn jobs(&self, n: usize) -> Result<Vec<Job>>;
    // Each post's requisites and media (`store::media`).
    /// The latest response of a blog for `url` (requested or reached by redirect):
    /// `(id, status)`, so a requisite shared by many posts is fetched once.
    ///
    /// # Errors
    /// The database failed.
    pub fn response_for(&self, blog_id: i64, url: &str) -> Result<Option<(i64, u16)>>;
    /// The body of a stored response.
    ///
    /// # Errors
    /// The database failed or the body did not inflate.
    pub fn response_body(&self, id: i64) -> Result<Option<Vec<u8>>>;
    /// Bytes of distinct bodies the blog's posts' media hold (the `[media] max_blog_mb`
    /// budget counts these).
    ///
    /// # Errors
    /// The database failed.
    pub fn media_bytes(&self, blog_id: i64) -> Result<u64>;
    /// Posts of a blog whose media are still to capture (never captured, or their page was
    /// archived again since): `(post URL, the response it was extracted from)`, at most
    /// `limit`, oldest archived first.
    ///
    /// # Errors
    /// The database failed.
    pub fn posts_without_media(&self, blog_id: i64, limit: usize) -> Result<Vec<(String, i64)>>;
    /// Replaces the media recorded for a post and marks them captured now, in one transaction.
    ///
    /// # Errors
    /// The database failed.
    pub fn set_post_media(&mut self, post_url: &str, media: &[NewMedia]) -> Result<()>;
    /// The media recorded for a post, in page order.
    ///
    /// # Errors
    /// The database failed.
    pub fn post_media(&self, post_url: &str) -> Result<Vec<Media>>;
    // Posts, comments and their versions, one crawled page at a time (`store::posts`).
    /// Writes everything one crawled page changes, atomically, and says what changed: its
    /// fetch-log lines, its response (and rendering), its post, its comments, a gone mark, its
    /// new links and its frontier state.
    pub fn record_page(&mut self, o: &PageOutcome) -> Result<Written>;
    /// Stores comments of a post read from a comment feed, already reconciled with the
    /// archived ones. Returns (new, edited) comment counts.
    pub fn save_comments(&mut self, w: &CommentWrite) -> Result<(u32, u32)>;
    /// The comments of a post, oldest first.
    pub fn comments(&self, post_url: &str) -> Result<Vec<Comment>>;
    /// The posts of one blog, or of all blogs, newest first (undated last), then by URL, with
    /// their comments.
    pub fn posts(&self, blog_id: Option<i64>) -> Result<Vec<Post>>;
    /// The number of archived posts of one blog (gone ones included, as
    /// [`Store::for_each_post`] yields them).
    ///
    /// # Errors
    /// The database failed.
    pub fn post_count(&self, blog_id: i64) -> Result<u64>;
    /// The author names and the categories/tags of one blog's posts, each once, in the order
    /// they first appear in [`Store::for_each_post`]'s order (newest post first, page order
    /// within a post). Reads only those two columns, for exports that declare them before the
    /// posts (WXR).
    ///
    /// # Errors
    /// The database failed.
    pub fn authors_and_tags(&self, blog_id: i64) -> Result<(Vec<String>, Vec<String>)>;
    /// One post by its URL, with its comments.
    pub fn post(&self, url: &str) -> Result<Option<Post>>;
    /// True when a post of that URL is archived.
    pub fn has_post(&self, url: &str) -> Result<bool>;
    /// The permalinks of a blog's archived posts that are not gone.
    pub fn post_urls(&self, blog_id: i64) -> Result<Vec<String>>;
    /// Up to `n` posts of a blog whose comments are due for a check at `now`, the longest
    /// overdue first: posts never checked (no schedule yet), then by due time. Posts whose
    /// comments are closed, whose checks ended, or that are gone are left out.
    pub fn due_comment_checks(&self, blog_id: i64, now: DateTime<Utc>, n: usize) -> Result<Vec<CommentCheck>>;
    /// Records a comment check of a post: when it was done, and the next one (`None`: no more,
    /// the post is past the age of checks or its comments are closed).
    pub fn set_comment_check(&mut self, url: &str, checked_at: DateTime<Utc>, next: Option<DateTime<Utc>>, closed: bool) -> Result<()>;
    /// Earlier versions of a post, oldest first.
    pub fn post_versions(&self, url: &str) -> Result<Vec<PostVersion>>;
    /// Earlier texts of a post's comments: (key, text), oldest first.
    pub fn comment_versions(&self, post_url: &str) -> Result<Vec<(String, String)>>;
    // Raw responses, the fetch log and WARC rolls (`store::responses`).
    /// Logs every request of a fetch (robots.txt, redirect hops, the final request) and keeps
    /// its response when one worth keeping arrived (any status but 304, 429 and 503), after
    /// the redirects that led to it, in one transaction. Returns the kept response's id.
    pub fn keep_fetched(&mut self, blog_id: i64, f: &Fetched) -> Result<Option<i64>>;
    /// Stores a response that no request of ours produced (a page rendered by Chromium).
    /// Returns the response id.
    pub fn keep_response(&mut self, blog_id: i64, response: &Response) -> Result<i64>;
    /// The latest stored response for `url` of a blog, whatever its status: (id, response).
    pub fn latest_response(&self, blog_id: i64, url: &str) -> Result<Option<(i64, Response)>>;
    /// The requests answered 304 Not Modified, oldest first: (URL, when, the id of the latest
    /// response stored for that URL before then, if any).
    ///
    /// # Errors
    /// The database failed.
    pub fn not_modified(&self, blog: Option<i64>) -> Result<Vec<NotModified>>;
    /// The time span of the stored responses (oldest, newest), if there are any.
    ///
    /// # Errors
    /// The database failed.
    pub fn capture_span(&self, blog: Option<i64>) -> Result<Option<(chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::Utc>)>>;
    /// The id of the response a post was extracted from, if it is still known.
    ///
    /// # Errors
    /// The database failed.
    pub fn post_response(&self, url: &str) -> Result<Option<i64>>;
    /// Every URL in the fetch log, in fetch order (all blogs, and `archive add`'s fetches).
    pub fn fetched_urls(&self) -> Result<Vec<String>>;
    /// Where the rolling WARC files of `dir` stand (`export::rolling`), if any were written.
    ///
    /// # Errors
    /// The database failed.
    pub fn warc_roll(&self, dir: &str) -> Result<Option<WarcRoll>>;
    /// Records where the rolling WARC files of `dir` stand, once what it says is on disk
    /// (written and synced).
    ///
    /// # Errors
    /// The database failed.
    pub fn set_warc_roll(&mut self, dir: &str, roll: &WarcRoll) -> Result<()>;
}

/// The methods taking closures or generic arguments, which the macro does not write.
impl Store {
    /// Calls `f` on each post of one blog, or of all blogs, in the order of [`Store::posts`],
    /// without loading them all into memory. Stops at the first error `f` returns. Returns the
    /// number of posts.
    pub fn for_each_post(
        &self,
        blog_id: Option<i64>,
        f: impl FnMut(Post) -> Result<()>,
    ) -> Result<u64> {
        match &self.0 {
            Backend::Sqlite(s) => s.for_each_post(blog_id, f),
            Backend::Postgres(p) => p.for_each_post(blog_id, f),
        }
    }

    /// Logs requests that produced nothing to keep, or that belong to no blog yet (`archive
    /// add` discovering a feed).
    pub fn log_fetches<'a>(
        &mut self,
        blog_id: Option<i64>,
        records: impl IntoIterator<Item = &'a FetchRecord>,
    ) -> Result<()> {
        match &mut self.0 {
            Backend::Sqlite(s) => s.log_fetches(blog_id, records),
            Backend::Postgres(p) => p.log_fetches(blog_id, records),
        }
    }

    /// Calls `f` with every stored response (raw and rendered), oldest first, one at a time
    /// (memory stays flat whatever the archive's size): `(id, response)`. `blog` limits it to
    /// one blog, `after` to responses stored after the one of that id (0: all). Returns how
    /// many there were.
    ///
    /// # Errors
    /// The database failed, a body did not inflate, or `f` failed.
    pub fn for_each_capture(
        &self,
        blog: Option<i64>,
        after: i64,
        f: impl FnMut(i64, Response) -> Result<()>,
    ) -> Result<u64> {
        match &self.0 {
            Backend::Sqlite(s) => s.for_each_capture(blog, after, f),
            Backend::Postgres(p) => p.for_each_capture(blog, after, f),
        }
    }
}
