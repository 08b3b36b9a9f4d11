//! Frontier overhead at scale (issue: polite, prioritised frontier): per-URL cost of enqueueing
//! into the SQLite frontier and of the kNN priority, and the memory and disk a queued URL costs,
//! for 1,000,000 URLs (set `FRONTIER_URLS` for another count). Prints figures; no assertions.
//!
//! Run: `cargo bench --bench frontier`

use everblog::core::post_url::PostUrlPattern;
use everblog::crawl::frontier::KnnFrontier;
use everblog::store::DatabaseSettings;
use everblog::store::Store;
use std::time::Instant;
use url::Url;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// A synthetic URL of a large mixed site: docs, shop, forum, tags, calendar and blog pages.
fn url(i: usize) -> String {
    match i % 6 {
        0 => format!(
            "http://site.test/docs/sql-{}-{}.html",
            ["select", "insert", "alter", "create"][i % 4],
            i
        ),
        1 => format!("http://site.test/shop/item/{i}/?ref=list&page={}", i % 50),
        2 => format!("http://site.test/forum/thread-{}/page/{}/", i / 7, i % 9),
        3 => format!("http://site.test/blog/tag/topic-{}/", i % 997),
        4 => format!(
            "http://site.test/calendar/{}/{:02}/{:02}/",
            2000 + i % 25,
            1 + i % 12,
            1 + i % 28
        ),
        _ => format!(
            "http://site.test/blog/{}/{:02}/post-number-{i}.html",
            2000 + i % 25,
            1 + i % 12
        ),
    }
}

fn main() {
    let n: usize = std::env::var("FRONTIER_URLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("frontier.db");
    let mut store = Store::open(&DatabaseSettings::at(&db)).expect("store");
    let blog = store
        .insert_blog(
            "http://site.test/blog/",
            "http://site.test/blog/feed.xml",
            None,
            everblog::core::feed::FeedKind::Rss2,
            &[],
        )
        .expect("blog")
        .id;
    let rss0 = rss_kib();

    let started = Instant::now();
    for chunk in (0..n).collect::<Vec<_>>().chunks(10_000) {
        let batch: Vec<everblog::store::Link> = chunk
            .iter()
            .map(|&i| everblog::store::Link {
                url: url(i),
                depth: 2,
                source: everblog::store::Source::Link,
                post: false,
            })
            .collect();
        store.enqueue(blog, &batch).expect("enqueue");
    }
    let enqueue = started.elapsed();

    // A model trained on 2,000 fetched pages, as midway through a large crawl.
    let pattern =
        PostUrlPattern::learn(&[Url::parse(&url(5)).unwrap(), Url::parse(&url(11)).unwrap()])
            .unwrap();
    let mut frontier = KnnFrontier::new(pattern, 5);
    for i in 0..2_000 {
        let u = Url::parse(&url(i * 7919 % n.max(1))).unwrap();
        let l = if u.path().starts_with("/blog/") {
            10
        } else {
            0
        };
        everblog::crawl::frontier::Frontier::observe(&mut frontier, u.as_str(), l);
    }
    let sample: Vec<String> = (0..n.min(100_000))
        .map(|i| url(i * 13 % n.max(1)))
        .collect();
    let started = Instant::now();
    let scores = frontier.score(&sample);
    let score = started.elapsed();
    assert_eq!(scores.len(), sample.len());

    let started = Instant::now();
    let served = everblog::crawl::frontier::Frontier::next(
        &mut frontier,
        &mut store,
        blog,
        16,
        chrono::Utc::now(),
    )
    .expect("next");
    let first_next = started.elapsed();
    let started = Instant::now();
    for _ in 0..100 {
        everblog::crawl::frontier::Frontier::next(
            &mut frontier,
            &mut store,
            blog,
            16,
            chrono::Utc::now(),
        )
        .expect("next");
    }
    let next = started.elapsed() / 100;

    drop(store);
    let disk: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
        .sum();
    let rss = rss_kib().saturating_sub(rss0);
    println!(
        "frontier with {n} queued URLs ({} distinct kNN training points)",
        frontier.model().distinct_points()
    );
    println!(
        "  enqueue (SQLite, 10k per transaction): {:.2} µs/URL ({:.1} s total)",
        enqueue.as_secs_f64() * 1e6 / n as f64,
        enqueue.as_secs_f64()
    );
    println!(
        "  kNN priority (k-d tree over 2,000 observations, k=5): {:.2} µs/URL ({} URLs in {:.2} s)",
        score.as_secs_f64() * 1e6 / sample.len() as f64,
        sample.len(),
        score.as_secs_f64()
    );
    println!(
        "  enqueue + priority: {:.2} µs/URL",
        enqueue.as_secs_f64() * 1e6 / n as f64 + score.as_secs_f64() * 1e6 / sample.len() as f64
    );
    println!(
        "  first next() (scores every queued URL once): {:.1} s; later next() of 16 URLs: {:.2} ms",
        first_next.as_secs_f64(),
        next.as_secs_f64() * 1e3
    );
    println!("  disk per queued URL (SQLite + WAL): {:.0} bytes; process memory growth: {:.1} bytes/URL ({} MiB)", disk as f64 / n as f64, rss as f64 * 1024.0 / n as f64, rss / 1024);
    println!("  served first: {:?}", served.first().map(|s| &s.url));
}
