//! NewCrawl is stateless over SQLite: a crawl stopped part-way (here by the page budget) resumes
//! where it stopped, re-running it stores no duplicate, and every fetch and raw response is kept.

use crate::common::*;
use everblog::store::DatabaseSettings;
use everblog::store::Store;
use std::collections::HashSet;

#[test]
fn interrupted_crawl_resumes_without_duplicates() {
    let blog = serve("hexo");
    let total = blog.truth["posts"].as_array().unwrap().len();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(&db, &["add", &blog.feed_url()]));

    let first = ok(&archive(&db, &["crawl", "--max-pages", "12"]));
    assert!(first.contains("crawl incomplete"), "{first}");
    let partial = ok(&archive(&db, &["export"])).lines().count();
    assert!(partial < total, "{partial} of {total} after 12 pages");

    let requests_before = blog.server.requests();
    let second = ok(&archive(&db, &["crawl"]));
    assert!(second.contains("crawl complete"), "{second}");
    let export = ok(&archive(&db, &["export"]));
    let urls: Vec<String> = export
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["url"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(urls.len(), total);
    assert_eq!(
        urls.iter().collect::<HashSet<_>>().len(),
        total,
        "duplicate posts"
    );

    // Resuming refetched nothing already processed: apart from the feed (fetched by add and
    // by crawl) and robots.txt (once per run), no URL was fetched twice over both runs, and
    // every request was logged.
    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    let b = &store.blogs().unwrap()[0];
    assert!(b.crawled_at.is_some());
    // The stopping rule may leave pages that link no new post queued, never a post.
    assert_eq!(store.queued_posts(b.id, chrono::Utc::now()).unwrap(), 0);
    let fetched = store.fetched_urls().unwrap();
    let mut seen = HashSet::new();
    for u in &fetched {
        assert!(
            seen.insert(u) || *u == blog.feed_url() || u.ends_with("/robots.txt"),
            "{u} fetched twice"
        );
    }
    let served = blog.server.requests();
    assert_eq!(
        fetched.len() as u64,
        served,
        "requests served vs fetches logged"
    );
    assert!(served > requests_before);

    // A completed blog is not crawled again; nothing changes.
    let third = ok(&archive(&db, &["crawl"]));
    assert!(third.contains("completely crawled"), "{third}");
    assert_eq!(ok(&archive(&db, &["export"])).lines().count(), total);
    assert_eq!(blog.server.requests(), served);
}

#[test]
fn every_fetch_is_logged_and_responses_are_kept() {
    let blog = serve("nikola");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(&db, &["add", &blog.feed_url()]));
    ok(&archive(&db, &["crawl"]));
    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    let b = &store.blogs().unwrap()[0];
    assert_eq!(
        store.fetched_urls().unwrap().len() as u64,
        blog.server.requests(),
        "every request is in the fetch log"
    );
    let post = &store.posts(Some(b.id)).unwrap()[0];
    let resp = store
        .latest_response(b.id, &post.url)
        .unwrap()
        .expect("raw response kept")
        .response;
    assert_eq!(resp.status, 200);
    assert!(String::from_utf8_lossy(&resp.body).contains("<html"));
}
