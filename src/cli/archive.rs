//! The archive as the commands reach it: opened for writing or only for reading, and a blog in
//! it found by the URL a person typed.

use crate::store::DatabaseSettings;
use crate::store::{Blog, Store};
use anyhow::{Context, Result};

/// Opens the archive at `db` for a command that writes to it.
pub(super) fn open(db: &DatabaseSettings) -> Result<Store> {
    Store::open(db)
}

/// Opens the archive at `db` for a command that only reads it (which works on an archive this
/// user may not write).
pub(super) fn open_to_read(db: &DatabaseSettings) -> Result<Store> {
    Store::open_read_only(db)
}

/// The blog `url` names (its feed or home URL, with or without a trailing slash).
pub(super) fn find(store: &Store, url: &str) -> Result<Blog> {
    let trimmed = url.trim();
    if let Some(b) = store.find_blog(trimmed)? {
        return Ok(b);
    }
    let alt = match trimmed.strip_suffix('/') {
        Some(t) => t.to_string(),
        None => format!("{trimmed}/"),
    };
    store.find_blog(&alt)?.with_context(|| format!("no blog {trimmed} in the archive; `archive list` shows the blogs, `archive add` adds one"))
}
