// The body of the `feed` fuzz target: `fuzz_targets/feed.rs` wraps it for libFuzzer (and
// says what it runs); `tests/fast/fuzz_seeds.rs` runs it on every seed of `corpus/feed/`.

use everblog::core::feed;

/// The feed's own address (`Response::final_url`): always a parsed http(s) URL in the crawl.
const BASES: [&str; 4] = [
    "http://b.log/feed/",
    "https://example.com/blog/index.xml",
    "http://127.0.0.1:8080/feed.json",
    "https://xn--bcher-kva.example/a/b/c?feed=rss2",
];

/// The target's body: one input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let base = BASES[usize::from(pick) % BASES.len()];
    if std::env::var_os("EVERBLOG_FUZZ_SKIP_KNOWN").is_some() && known_quick_xml_panic(bytes) {
        return;
    }
    let _ = feed::raw_entries(bytes);
    let Ok(parsed) = feed::parse(bytes, base) else {
        return;
    };
    let entries = everblog::crawl::canonical_entries(&parsed);
    for e in &entries {
        let u = url::Url::parse(&e.url).expect("canonical entries are URLs");
        assert!(matches!(u.scheme(), "http" | "https"));
    }
    let targets = feed::targets(&entries);
    assert_eq!(targets.len(), entries.len());
    for t in &targets {
        if let Some(a) = &t.article {
            let _ = feed::Target::new(a, t.summary);
        }
        if let Some(title) = &t.title {
            let _ = feed::Target::new(title, false);
        }
    }
    // Comment feeds are parsed with the same function; their targets as `crawl::learn` does.
    let _ = feed::targets(&parsed.entries);
}

/// An XML declaration naming an encoding, 60 bytes or longer or past the document's start
/// (the known feed-rs/quick-xml panic).
fn known_quick_xml_panic(bytes: &[u8]) -> bool {
    let lower = bytes.to_ascii_lowercase();
    let find = |from: usize, what: &[u8]| {
        lower[from..]
            .windows(what.len())
            .position(|w| w == what)
            .map(|p| from + p)
    };
    let mut from = 0;
    while let Some(i) = find(from, b"<?xml") {
        let end = find(i, b"?>").unwrap_or(lower.len());
        let names_encoding = find(i, b"encoding").is_some_and(|e| e < end);
        if names_encoding && (i > 4 || end - i >= 60) {
            return true;
        }
        from = i + 5;
    }
    false
}
