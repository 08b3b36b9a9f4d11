// The body of the `robots` fuzz target: `fuzz_targets/robots.rs` wraps it for libFuzzer (and
// says what it runs); `tests/fast/fuzz_seeds.rs` runs it on every seed of `corpus/robots/`.

use everblog::fetch::robots::{Robots, MAX_HOST_DELAY};

/// The target's body: one input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
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
}
