// The body of the `cdxj` fuzz target: `fuzz_targets/cdxj.rs` wraps it for libFuzzer (and
// says what it runs); `tests/fast/fuzz_seeds.rs` runs it on every seed of `corpus/cdxj/`.

use chrono::{DateTime, Utc};
use everblog::core::post_url::{canonical, comment_page_of, site_of};
use everblog::export::cdxj;
use url::Url;

fn check_line(target: &str) {
    let line = cdxj::line(&cdxj::Entry {
        url: target,
        date: DateTime::<Utc>::from_timestamp(1_750_000_000, 0).unwrap(),
        mime: Some("text/html"),
        status: Some(200),
        digest: Some("sha1:AAAA"),
        length: 10,
        offset: 0,
        filename: "data.warc.gz",
    });
    assert!(
        !line.contains('\n'),
        "a CDXJ line holds a newline: {line:?}"
    );
    let mut parts = line.splitn(3, ' ');
    let (surt, stamp, json) = (parts.next().unwrap(), parts.next(), parts.next());
    assert!(!surt.is_empty() || target.is_empty());
    assert_eq!(stamp, Some("20250615150640"), "{line:?}");
    let v: serde_json::Value = serde_json::from_str(json.expect("three fields")).expect("JSON");
    assert_eq!(v["url"].as_str(), Some(target));
}

/// The target's body: one input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let _ = cdxj::surt(s);
    let Ok(u) = Url::parse(s) else {
        return;
    };
    if matches!(u.scheme(), "http" | "https") {
        // (An opaque URL such as `urn:a b` keeps its spaces, and `surt` returns it as it is;
        // the archive's targets are fetched http(s) URLs and `urn:everblog:…:<http URL>`.)
        let key = cdxj::surt(u.as_str());
        assert!(
            !key.contains(char::is_whitespace),
            "SURT of an http(s) URL holds whitespace: {:?} -> {key:?}",
            u.as_str()
        );
        check_line(u.as_str());
        check_line(&format!("urn:everblog:post:{u}"));
    }
    let c = canonical(&u);
    let again = canonical(&c);
    assert_eq!(
        c.as_str(),
        again.as_str(),
        "canonical is not idempotent for {:?}",
        u.as_str()
    );
    // A stored key is read back from its text. Keys are http(s) URLs: a `file:` URL's text
    // need not parse back to itself (`file://h//u:/x` reads back without its host, as the URL
    // Standard drops a host before a Windows drive letter).
    let keyed = matches!(u.scheme(), "http" | "https");
    if let Some(reparsed) = keyed.then(|| Url::parse(c.as_str()).ok()).flatten() {
        assert_eq!(
            canonical(&reparsed).as_str(),
            c.as_str(),
            "canonical of the stored key differs for {:?}",
            u.as_str()
        );
    }
    let _ = comment_page_of(&u);
    let _ = site_of(&u);
}
