//! The surface of [`Store`]: every public method that reads or writes the archive, documented
//! once here and answered by the back end the store was opened on (`store::<concern>` on
//! SQLite, `store::postgres::<concern>` on PostgreSQL, the same names and arguments).

use super::*;
use crate::core::feed::{Enclosure, FeedEntry, FeedKind};
use crate::core::post_url::PostUrlPattern;
use crate::fetch::Response;
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
    // The reader's listings, search and captures (`store::reading`).
    /// A page of a blog's posts, newest first (undated ones last), and how many match `filter`
    /// in all. Reads the covering index `posts_listing`, then only the page's rows.
    ///
    /// # Errors
    /// The database failed.
    pub fn post_page(&self, blog_id: i64, filter: &PostFilter, limit: u32, offset: u32) -> Result<(Vec<PostSummary>, u64)>;
    /// The months a blog posted in, newest first: (`"YYYY-MM"` in the blog's offset, posts).
    ///
    /// # Errors
    /// The database failed.
    pub fn post_months(&self, blog_id: i64) -> Result<Vec<(String, u64)>>;
    /// A blog's authors with their post counts, most posts first.
    ///
    /// # Errors
    /// The database failed.
    pub fn post_authors(&self, blog_id: i64) -> Result<Vec<(String, u64)>>;
    /// A blog's categories and tags with their post counts, most posts first.
    ///
    /// # Errors
    /// The database failed.
    pub fn post_tags(&self, blog_id: i64) -> Result<Vec<(String, u64)>>;
    /// How many rows (posts and comments) hold every word of `text` (no filter), counted
    /// from the index alone.
    ///
    /// # Errors
    /// The database failed.
    pub fn search_matches(&self, text: &str) -> Result<u64>;
    /// Full-text search over titles, articles, comments and author names, best first (BM25:
    /// title × 8, author × 2, text × 1, over the most recently archived `q.rank_window` matches; older ones
    /// after them, newest first), at most `q.limit` hits from `q.offset`. A query with no
    /// word gives no hit.
    ///
    /// Two steps, so that a word found in every post stays cheap: the page's rows are chosen
    /// from the index (and, with filters, the posts' and comments' own rows, joined by id),
    /// without reading the indexed text; only then are the page's snippets made.
    ///
    /// # Errors
    /// The database failed.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<Hit>>;
    /// Every capture of `url` (any blog), oldest first: the Memento TimeMap.
    ///
    /// # Errors
    /// The database failed.
    pub fn captures_of(&self, url: &str) -> Result<Vec<Capture>>;
    /// The capture of `url` nearest to `at` (the latest one on a tie), if any: the Memento
    /// TimeGate's choice.
    ///
    /// # Errors
    /// The database failed.
    pub fn capture_near(&self, url: &str, at: DateTime<Utc>) -> Result<Option<Capture>>;
    /// One stored response in full, by row id.
    ///
    /// # Errors
    /// The database failed, or the body did not inflate.
    pub fn capture_response(&self, id: i64) -> Result<Option<Response>>;
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
