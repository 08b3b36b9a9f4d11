//! SQL text both back ends share word for word: column lists read by the row readers of each,
//! and conditions written the same in SQLite and PostgreSQL.

/// The columns of `blogs` the blog row readers read, in their order.
pub(super) const BLOG_COLUMNS: &str =
    "id, home_url, feed_url, title, feed_kind, crawl_started_at, crawled_at, post_pattern, start_url,
     last_update_at, next_update_at, errors_in_a_row, last_error, render, renders, render_reason,
     sitemaps_read_at, language";

/// The columns of `jobs` the job row readers read, in their order.
pub(super) const JOB_COLUMNS: &str =
    "id, blog_id, kind, state, owner, lease_until, attempts, error, outcome, not_before, started_at, finished_at";

/// The stored body of a response row: its blob when it has one, else its own (older rows).
pub(super) const BODY: &str =
    "COALESCE((SELECT b.body FROM blobs b WHERE b.sha256 = responses.sha256), responses.body)";

/// The archived post `p` answers the address `?1`: archived under it, moved to it, or it is one
/// of the post's other addresses (`post_aliases`: a permalink that redirected to it). Order by
/// [`POST_AT_FIRST`] to prefer the post archived under the address itself.
pub(super) const POST_AT: &str = "(p.url = ?1 OR p.moved_to = ?1
     OR p.url = (SELECT a.post_url FROM post_aliases a WHERE a.url = ?1))";

/// With [`POST_AT`]: the post archived under the address first.
pub(super) const POST_AT_FIRST: &str = "CASE WHEN p.url = ?1 THEN 0 ELSE 1 END";
