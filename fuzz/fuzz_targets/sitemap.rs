//! A sitemap as `crawl::seed` reads it: `core::sitemap::parse` (plain, or gzipped), then the
//! listed pages' URLs parsed and canonicalised.
//!
//! The first byte chooses the form: odd, the rest is gzipped here first, so the fuzzer reaches
//! the XML behind a valid gzip stream; even, the rest is passed as it is (gzip magic included).
#![no_main]

use everblog::core::post_url::canonical;
use everblog::core::sitemap::{self, Sitemap};
use libfuzzer_sys::fuzz_target;
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    let Some((&form, rest)) = data.split_first() else {
        return;
    };
    let gz;
    let bytes = if form % 2 == 1 {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(rest).unwrap();
        gz = e.finish().unwrap();
        &gz[..]
    } else {
        rest
    };
    match sitemap::parse(bytes) {
        Ok(Sitemap::Urls(urls)) => {
            assert!(urls.len() <= sitemap::MAX_LOCS);
            for u in urls {
                assert!(!u.loc.is_empty());
                if let Ok(parsed) = url::Url::parse(&u.loc) {
                    let _ = canonical(&parsed).to_string();
                }
            }
        }
        Ok(Sitemap::Index(more)) => assert!(more.len() <= sitemap::MAX_LOCS),
        Err(_) => {}
    }
});
