//! Export: one JSON object per archived post (JSON Lines). The format is documented in README.md
//! and stays stable; later versions only add keys.

use crate::store::Post;
use std::io::Write;

/// Writes one post as a JSON Lines record: keys `url, blog, title, authors, published,
/// content_html, content_text, fetched_at`.
pub fn write_jsonl(post: &Post, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, post)?;
    out.write_all(b"\n")
}
