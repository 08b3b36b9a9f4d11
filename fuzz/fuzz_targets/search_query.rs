//! The reader's search as `archive serve` runs it: the query string of `/search` (or
//! `/api/search`) read into `serve::views::SearchParams` (as axum's `Query` does, by
//! `form_urlencoded`), turned into the store's `SearchQuery`, and run by `Store::search` and
//! `Store::search_matches` against a real SQLite archive (FTS5 table `search`) of a few posts
//! and a comment; snippets made HTML as the pages do.
//!
//! Any typed text must be safe (README): `fts_query` (the search grammar, `store::search`) must
//! only produce queries FTS5 accepts. On a
//! healthy database an `Err` from the store is a 500 for the user, so it is a finding here
//! (a panic naming the input); a `BadRequest` from `SearchParams::query` (a bad date or blog id)
//! is an answer, not a finding.
//!
#![no_main]

mod body {
    include!("../bodies/search_query.rs");
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
