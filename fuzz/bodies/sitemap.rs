// The body of the `sitemap` fuzz target: `fuzz_targets/sitemap.rs` wraps it for libFuzzer (and
// says what it runs); `tests/fast/fuzz_seeds.rs` runs it on every seed of `corpus/sitemap/`.

use everblog::core::post_url::canonical;
use everblog::core::sitemap::{self, Sitemap};
use std::io::Write;

/// The target's body: one input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
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
}
