//! Export: one JSON object per archived post (JSON Lines). The format is documented in README.md
//! and stays stable; later versions only add keys.

use crate::store::Post;
use std::io::Write;

/// Writes posts as JSON Lines: keys `url, blog, title, authors, published, content_html,
/// content_text, fetched_at`.
pub fn write_jsonl(posts: &[Post], out: &mut dyn Write) -> std::io::Result<()> {
    for p in posts {
        serde_json::to_writer(&mut *out, p)?;
        out.write_all(b"\n")?;
    }
    out.flush()
}
