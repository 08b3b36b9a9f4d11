//! Inputs the fuzz targets (`fuzz/`, issue 32) found, minimised, each run through the same
//! library path as its target. All are fixed: the feed reader's panic is caught in
//! `core::feed::parse`, search words are compiled by `store::search`, and
//! `core::post_url::canonical` no longer makes new escapes.

use everblog::core::feed;
use everblog::core::post_url::canonical;
use everblog::store::{DatabaseSettings, SearchQuery, Store};

/// `fuzz/fuzz_targets/feed.rs`: an XML declaration naming an encoding other than UTF-8, 64
/// bytes or longer (padding inside a declaration is legal XML) or not the document's first
/// (one inside an RSS `<channel>`). feed-rs 3.0.0 (`xml/mod.rs:386`) hands the encoding to
/// quick-xml 0.42 after its prefix buffer is drained, and quick-xml panics: "set_encoding()
/// called after prefix buffer was drained; encoding can only be changed while the prefix is
/// still active" (quick-xml `src/encoding.rs:380`). `core::feed::parse` is called outside any
/// `catch_unwind` by `crawl::add`, `crawl::learn`, `crawl::backfill` and UpdateCrawl, so one
/// hostile feed (or comment feed) panics `archive add` or the crawl. An `Err` (not a feed), or
/// the feed read, is the right answer.
#[test]
fn feed_with_a_long_or_late_xml_declaration_is_no_panic() {
    for bytes in [
        &br#"<?xml version="1.0" encoding="ISO-8859-1"                      ?><rss/>"#[..],
        &br#"<?xml version="1.0" encoding="windows-1252" standalone="yes"       ?><feed xmlns="http://www.w3.org/2005/Atom"/>"#[..],
        &br#"<rss version="2.0"><channel><?xml version="1.0" encoding="ISO-8859-1"?></channel></rss>"#[..],
        &br#"<?xml version="1.0" encoding="ISO-8859-1"?><rss><?xml encoding="UTF-8"?></rss>"#[..],
    ] {
        let outcome = std::panic::catch_unwind(|| feed::parse(bytes, "http://b.log/feed/").is_ok());
        assert!(
            outcome.is_ok(),
            "feed::parse panicked on {:?}",
            String::from_utf8_lossy(bytes)
        );
    }
}

/// `fuzz/fuzz_targets/search_query.rs` (`/search?q=S%00F`, minimised): a NUL inside a word
/// reaches FTS5 inside the quoted phrase `fts_query` makes, and SQLite stops reading the
/// query there: `Store::search` fails with "unterminated string: Error code 1: SQL logic
/// error", a 500 for the reader (issue 32, item 4).
#[test]
fn search_words_holding_a_nul_are_no_sql_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&DatabaseSettings::at(dir.path().join("search.db"))).unwrap();
    for text in ["S\0F", "a\0b", "\0x*"] {
        let q = SearchQuery {
            text: text.into(),
            limit: 21,
            rank_window: 100,
            ..SearchQuery::default()
        };
        if let Err(e) = store.search(&q) {
            panic!("search {text:?}: {e:#}");
        }
        if let Err(e) = store.search_matches(text) {
            panic!("search_matches {text:?}: {e:#}");
        }
    }
}

/// `fuzz/fuzz_targets/cdxj.rs`: `canonical` was not idempotent. It decodes escapes of
/// unreserved characters, and `%38` after a stray `%e` became `8`, making `%e8`, which the
/// next `canonical` upper-cased to `%E8`: one post stored under two keys. The crash input as
/// libFuzzer wrote it (`crash-c062dcee…`, NULs and backslashes included), then minimised.
#[test]
fn canonical_of_a_canonical_url_is_itself() {
    let found = "https:&/xnq=%Ehc\\r\\/xn--\0c\0b\\\\-rvk%e%38aAC&q=i+b";
    for text in [found, "http://a/%e%38", "http://a/%%341"] {
        let Ok(u) = url::Url::parse(text) else {
            panic!("{text:?} is a URL to the url crate");
        };
        let once = canonical(&u);
        assert_eq!(canonical(&once).as_str(), once.as_str(), "{text:?}");
        let reparsed = url::Url::parse(once.as_str()).unwrap();
        assert_eq!(canonical(&reparsed).as_str(), once.as_str(), "{text:?}");
    }
}
