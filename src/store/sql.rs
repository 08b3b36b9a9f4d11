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
