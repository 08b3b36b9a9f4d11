//! robots.txt as `fetch` reads it: `Robots::parse` for our agent token, then `allowed` on the
//! URLs a crawl asks about (the site's root, a post, one made from the input itself).
//!
//! The input is the robots.txt body; its last line, when it is a URL path, is also asked about.
#![no_main]

use everblog::fetch::robots::{Robots, MAX_HOST_DELAY};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let r = Robots::parse(everblog::fetch::USER_AGENT_TOKEN, data);
    if let Some(d) = r.crawl_delay {
        assert!(d <= MAX_HOST_DELAY && !d.is_zero());
    }
    for u in [
        "http://b.log/",
        "http://b.log/robots.txt",
        "http://b.log/2024/05/a-post/?p=1&x=%2F",
        "https://b.log/wp-admin/admin-ajax.php",
        "http://b.log/%E2%82%AC/ü/*$",
    ] {
        let _ = r.allowed(u);
    }
    let text = String::from_utf8_lossy(data);
    if let Some(last) = text.lines().last() {
        if let Ok(u) = url::Url::parse("http://b.log/").and_then(|b| b.join(last.trim())) {
            let _ = r.allowed(u.as_str());
        }
        let _ = r.allowed(last);
    }
    let _ = Robots::allow_all("fuzz").allowed(&text);
});
