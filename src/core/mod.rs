//! The pure core: feeds, pages, similarity, rule learning, post identification and extraction.
//!
//! **Architecture invariant:** nothing under `core` does IO, async, SQL or reads the clock. The
//! same feed and pages always give the same rules. `tests/tidy.rs` enforces it.

pub mod comments;
pub mod extract;
pub mod feed;
pub mod learn;
pub mod meta;
pub mod page;
pub mod post_url;
pub mod priority;
pub mod rules;
pub mod schedule;
pub mod sitemap;
pub mod text;
pub mod url_features;
