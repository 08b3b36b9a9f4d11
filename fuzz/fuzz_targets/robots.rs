//! robots.txt as `fetch` reads it: `Robots::parse` for our agent token, then `allowed` on the
//! URLs a crawl asks about (the site's root, a post, one made from the input itself).
//!
//! The input is the robots.txt body; its last line, when it is a URL path, is also asked about.
#![no_main]

mod body {
    include!("../bodies/robots.rs");
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
