//! The web-archive index and URL keys: `export::cdxj::surt` and `line` on a record's target
//! URI (a fetched URL, or `urn:everblog:…:<url>`), and `core::post_url::canonical`,
//! `comment_page_of`, `site_of` on arbitrary URLs (every permalink, link and sitemap entry is
//! keyed by them).
//!
//! Checked: a CDXJ line is one line of three space-separated fields, its JSON parses and gives
//! the URL back; the SURT of an http(s) URL holds no whitespace; canonicalisation is idempotent
//! (a stored key canonicalised again is the same key).
#![no_main]

mod body {
    include!("../bodies/cdxj.rs");
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
