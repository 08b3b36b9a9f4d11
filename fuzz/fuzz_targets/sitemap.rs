//! A sitemap as `crawl::seed` reads it: `core::sitemap::parse` (plain, or gzipped), then the
//! listed pages' URLs parsed and canonicalised.
//!
//! The first byte chooses the form: odd, the rest is gzipped here first, so the fuzzer reaches
//! the XML behind a valid gzip stream; even, the rest is passed as it is (gzip magic included).
#![no_main]

mod body {
    include!("../bodies/sitemap.rs");
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
