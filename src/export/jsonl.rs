//! Export: one JSON object per archived post (JSON Lines). The format is documented in README.md
//! ("Export format") and stays stable; later versions only add keys.

use crate::store::Post;
use std::io::Write;

/// Writes one post as a JSON Lines record (one line, then `\n`) with the keys of
/// [`Post`], in this order: `url`, `blog`, `title`, `authors` (array), `published`, `updated`
/// (RFC 3339 with the blog's offset, or null), `published_raw`, `content_html`, `content_text`,
/// `fetched_at` (RFC 3339 UTC), `gaps` (array of `{field, reason}`), `version`, `gone_at`, `tags`
/// (array of names), and
/// `comments` (array of `{id, author, published, published_raw, content_html, content_text,
/// parent}`, oldest first).
///
/// # Errors
/// Writing to `out` failed (a closed pipe, a full disk).
pub fn write_jsonl(post: &Post, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, post)?;
    out.write_all(b"\n")
}
