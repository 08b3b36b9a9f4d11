//! The surface of [`Store`]: every public method that reads or writes the archive, documented
//! once here and answered by the back end the store was opened on (`store::<concern>` on
//! SQLite, `store::postgres::<concern>` on PostgreSQL, the same names and arguments).

use super::*;
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
    // Per-host request slots shared by every process on the database (`store::host_slots`).
    /// Reserves the next request slot of `host`: the slot starts at the later of now and the
    /// host's `next_at`, and the host's next slot moves `delay` past it. Returns how long to
    /// wait before the request. One `BEGIN IMMEDIATE` transaction, so two processes never get
    /// the same slot.
    pub fn reserve_host(&mut self, host: &str, delay: Duration) -> Result<Duration>;
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
