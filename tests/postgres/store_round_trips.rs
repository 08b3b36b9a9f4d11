//! Round trips of the blogs, responses and frontier concerns, each body written once (a macro:
//! `Store` answers from either back end) and run on SQLite (a real file) and on
//! PostgreSQL (a private cluster started by the test: `tests/common/pg_cluster.rs`); the
//! PostgreSQL half is skipped, saying why, where PostgreSQL is not installed.

use crate::common::pg_cluster::Cluster;
use everblog::core::feed::FeedKind;
use everblog::store::DatabaseSettings;
use everblog::store::Store;
/// The blogs concern's round trip, written once for both back ends (the two types have the same
/// methods): entries in first-seen order with their offsets, rules replacing rules, the render
/// decision, milestones and lookups.
macro_rules! blogs_round_trip {
    ($backend:expr, $store:expr) => {{
        use chrono::DateTime;
        use everblog::core::feed::{Enclosure, FeedEntry};
        use everblog::core::post_url::PostUrlPattern;
        use everblog::core::rules::Field;
        use everblog::store::{RenderMode, Renders, StoredRule};
        let backend: &str = $backend;
        let mut s = $store;
        let entry = |n: u32, offset: &str| FeedEntry {
            url: format!("http://blog.test/2026/0{n}/post-{n}.html"),
            title: Some(format!("Post {n}")),
            authors: vec!["Ada Quill".into(), "Bram Okafor".into()],
            authors_inherited: n == 2,
            published: Some(
                DateTime::parse_from_rfc3339(&format!("2026-0{n}-01T09:30:00{offset}")).unwrap(),
            ),
            updated: None,
            content_html: Some(format!("<p>Body {n}</p>")),
            summary_html: None,
            comments_feed: None,
            comment_count: Some(n),
            enclosures: vec![Enclosure {
                url: format!("http://blog.test/ep{n}.mp3"),
                mime: Some("audio/mpeg".into()),
            }],
        };
        let entries = vec![entry(3, "+01:00"), entry(1, "-05:00"), entry(2, "Z")];
        let blog = s
            .insert_blog(
                "http://blog.test/",
                "http://blog.test/feed.xml",
                Some("A blog"),
                FeedKind::Atom,
                &entries,
            )
            .unwrap();
        assert_eq!(
            s.entries(blog.id).unwrap(),
            entries,
            "{backend}: first-seen order, offsets kept"
        );
        let mut more = entries.clone();
        more[0].title = Some("Post 3, edited".into());
        more.push(entry(4, "+09:00"));
        s.save_entries(blog.id, &more).unwrap();
        assert_eq!(
            s.entries(blog.id).unwrap(),
            more,
            "{backend}: refreshed in place"
        );
        assert_eq!(
            s.enclosures_of(blog.id, &more[3].url).unwrap(),
            more[3].enclosures,
            "{backend}"
        );
        assert_eq!(
            s.find_blog("http://blog.test/").unwrap().map(|b| b.id),
            Some(blog.id),
            "{backend}: by home URL"
        );
        assert!(
            s.find_blog("http://other.test/").unwrap().is_none(),
            "{backend}"
        );

        let urls: Vec<url::Url> = more.iter().map(|e| e.url.parse().unwrap()).collect();
        let pattern = PostUrlPattern::learn(&urls).expect("a pattern");
        let rule = |field, xpath: &str| StoredRule {
            field,
            xpath: xpath.into(),
            score: 0.93,
            votes: 9,
            samples: 10,
            learned_at: DateTime::parse_from_rfc3339("2026-11-25T10:00:00.123Z")
                .unwrap()
                .with_timezone(&chrono::Utc),
            format: None,
        };
        s.save_rules(
            blog.id,
            &[
                rule(Field::Title, "//h1"),
                rule(Field::Article, "//*[@class='old']"),
            ],
            &pattern,
        )
        .unwrap();
        s.save_rules(
            blog.id,
            &[rule(Field::Article, "//*[@class='entry']")],
            &pattern,
        )
        .unwrap();
        let rules = s.rules(blog.id).unwrap();
        assert_eq!(rules.len(), 1, "{backend}: new rules replace the old");
        assert_eq!(
            (
                rules[0].field,
                rules[0].xpath.as_str(),
                rules[0].votes,
                rules[0].learned_at
            ),
            (
                Field::Article,
                "//*[@class='entry']",
                9,
                rule(Field::Title, "").learned_at
            ),
            "{backend}"
        );

        s.set_render_decision(blog.id, Renders::Posts, "a comment widget")
            .unwrap();
        s.set_start_url(blog.id, "http://blog.test/archive/")
            .unwrap();
        s.mark_crawl_started(blog.id).unwrap();
        s.mark_crawled(blog.id).unwrap();
        let b = s.blog(blog.id).unwrap().unwrap();
        assert_eq!(b.renders, Some(Renders::Posts), "{backend}");
        assert_eq!(
            b.render_reason.as_deref(),
            Some("a comment widget"),
            "{backend}"
        );
        assert_eq!(b.post_pattern.as_ref(), Some(&pattern), "{backend}");
        assert_eq!(
            b.start_url.as_deref(),
            Some("http://blog.test/archive/"),
            "{backend}"
        );
        assert!(
            b.crawl_started_at.is_some() && b.crawled_at.is_some(),
            "{backend}"
        );
        s.set_render_mode(blog.id, RenderMode::Always).unwrap();
        let b = s.blog(blog.id).unwrap().unwrap();
        assert_eq!(
            (b.render, b.renders),
            (RenderMode::Always, None),
            "{backend}: a new choice forgets the decision"
        );
        assert_eq!(s.errors_in_a_row(blog.id).unwrap(), 0, "{backend}");
        let counts = s.counts(blog.id).unwrap();
        assert_eq!(
            (counts.posts, counts.fetches, counts.queued),
            (0, 0, 0),
            "{backend}"
        );
        assert_eq!(s.blogs().unwrap().len(), 1, "{backend}");
        assert!(s.activity(blog.id, 10).unwrap().is_empty(), "{backend}");
    }};
}

#[test]
fn blogs_entries_and_rules_round_trip_the_same_on_both_back_ends() {
    let dir = tempfile::tempdir().unwrap();
    blogs_round_trip!(
        "sqlite",
        Store::open(&DatabaseSettings::at(dir.path().join("blogs.db"))).unwrap()
    );
    let Some(cluster) = Cluster::start() else {
        return;
    };
    blogs_round_trip!(
        "postgres",
        Store::open(&DatabaseSettings::at(std::path::Path::new(
            &cluster.database("blogs")
        )))
        .unwrap()
    );
}

/// The responses concern's round trip on one back end: a fetch with a redirect kept in order,
/// a 304 logged and tied to the response it confirms, captures streamed in id order.
macro_rules! responses_round_trip {
    ($backend:expr, $store:expr) => {{
        use everblog::fetch::{FetchRecord, Fetched, Response};
        use everblog::store::{CaptureSpan, NotModified, WarcRoll};
        let backend: &str = $backend;
        let mut s = $store;
        let blog = s
            .insert_blog(
                "http://blog.test/",
                "http://blog.test/feed.xml",
                None,
                FeedKind::Rss2,
                &[],
            )
            .unwrap()
            .id;
        let at =
            |secs: i64| chrono::DateTime::from_timestamp(1_790_000_000 + secs, 5_000_000).unwrap();
        let response = |url: &str, status: u16, body: &[u8], secs: i64| Response {
            url: url.into(),
            final_url: url.into(),
            status,
            headers: vec![("Content-Type".into(), "text/html".into())],
            body: body.to_vec(),
            fetched_at: at(secs),
        };
        let record = |url: &str, status: u16, secs: i64| FetchRecord {
            url: url.into(),
            status: Some(status),
            bytes: Some(5),
            elapsed_ms: 12,
            fetched_at: at(secs),
            error: None,
        };
        let fetched = |r: Option<Response>, rec: FetchRecord, hops, redirects| Fetched {
            response: r,
            record: rec,
            hops,
            redirects,
            blocked: false,
            refused: false,
            retry_after: None,
        };
        let page = "http://blog.test/a.html";
        let kept = s
            .keep_fetched(
                blog,
                &fetched(
                    Some(response(page, 200, b"<p>hello</p>", 2)),
                    record(page, 200, 2),
                    vec![record("http://blog.test/a", 301, 1)],
                    vec![response("http://blog.test/a", 301, b"", 1)],
                ),
            )
            .unwrap()
            .expect("kept");
        let not_modified = s
            .keep_fetched(
                blog,
                &fetched(
                    Some(response(page, 304, b"", 3)),
                    record(page, 304, 3),
                    vec![],
                    vec![],
                ),
            )
            .unwrap();
        assert_eq!(not_modified, None, "{backend}: a 304 is logged, not kept");
        let rendered = s
            .keep_response(blog, &response(page, 200, b"<p>hello</p>", 4))
            .unwrap();
        s.log_fetches(None, &[record("http://other.test/feed", 404, 0)])
            .unwrap();

        let latest = s.latest_response(blog, page).unwrap().expect("latest");
        assert_eq!(
            (latest.id, latest.response.body.as_slice()),
            (rendered, &b"<p>hello</p>"[..]),
            "{backend}"
        );
        assert_eq!(latest.response.fetched_at, at(4), "{backend}");
        let mut seen = Vec::new();
        let n = s
            .for_each_capture(Some(blog), Default::default(), |id, r| {
                seen.push((id, r.status, r.url));
                Ok(())
            })
            .unwrap();
        assert_eq!(n, 3, "{backend}");
        assert_eq!(
            seen.iter()
                .map(|(_, st, u)| (*st, u.as_str()))
                .collect::<Vec<_>>(),
            vec![(301, "http://blog.test/a"), (200, page), (200, page)],
            "{backend}: the redirect first"
        );
        assert_eq!(seen[1].0, kept, "{backend}");
        let later = s.for_each_capture(None, kept, |_, _| Ok(())).unwrap();
        assert_eq!(later, 1, "{backend}: after an id");
        let stopped = s.for_each_capture(None, Default::default(), |_, _| anyhow::bail!("enough"));
        assert!(stopped.is_err(), "{backend}: f's error ends the walk");
        assert_eq!(
            s.not_modified(Some(blog)).unwrap(),
            vec![NotModified {
                url: page.to_string(),
                at: at(3),
                earlier: Some(kept)
            }],
            "{backend}"
        );
        assert_eq!(
            s.capture_span(Some(blog)).unwrap(),
            Some(CaptureSpan {
                oldest: at(1),
                newest: at(4)
            }),
            "{backend}"
        );
        assert_eq!(
            s.fetched_urls().unwrap(),
            vec!["http://blog.test/a", page, page, "http://other.test/feed"],
            "{backend}: every request, in order"
        );
        assert_eq!(s.warc_roll("/w").unwrap(), None, "{backend}");
        let roll = WarcRoll {
            file: Some("a.warc.gz".into()),
            bytes: 10,
            serial: 2,
            last_response: kept,
        };
        s.set_warc_roll("/w", &roll).unwrap();
        s.set_warc_roll(
            "/w",
            &WarcRoll {
                bytes: 20,
                ..roll.clone()
            },
        )
        .unwrap();
        assert_eq!(
            s.warc_roll("/w").unwrap().map(|r| r.bytes),
            Some(20),
            "{backend}"
        );
    }};
}

#[test]
fn responses_and_the_fetch_log_round_trip_the_same_on_both_back_ends() {
    let dir = tempfile::tempdir().unwrap();
    responses_round_trip!(
        "sqlite",
        Store::open(&DatabaseSettings::at(dir.path().join("responses.db"))).unwrap()
    );
    let Some(cluster) = Cluster::start() else {
        return;
    };
    responses_round_trip!(
        "postgres",
        Store::open(&DatabaseSettings::at(std::path::Path::new(
            &cluster.database("responses")
        )))
        .unwrap()
    );
}

/// The frontier's round trip on one back end: links merged by URL (sources, in-links, post
/// marks), breadth-first and priority orders, the capture counts of the unseen-posts estimate.
/// A queued URL's new priority, for `set_priorities`.
fn priority(url: &str, priority: f64, scored_at: i64) -> everblog::store::Priority {
    everblog::store::Priority {
        url: url.into(),
        priority,
        scored_at,
    }
}

macro_rules! frontier_round_trip {
    ($backend:expr, $store:expr) => {{
        use everblog::store::{Findings, Link, PageState, Source, StateCount};
        let backend: &str = $backend;
        let mut s = $store;
        let blog = s
            .insert_blog(
                "http://blog.test/",
                "http://blog.test/feed.xml",
                None,
                FeedKind::Rss2,
                &[],
            )
            .unwrap()
            .id;
        let link = |path: &str, depth: u32, source: Source, post: bool| Link {
            url: format!("http://blog.test/{path}"),
            depth,
            source,
            post,
        };
        s.enqueue(
            blog,
            &[
                link("", 0, Source::Start, false),
                link("p/1.html", 1, Source::Feed, true),
                link("p/2.html", 1, Source::Feed, true),
            ],
        )
        .unwrap();
        s.enqueue(
            blog,
            &[
                link("page/2/", 1, Source::Link, false),
                link("p/1.html", 2, Source::Link, true),
                link("p/3.html", 2, Source::Link, true),
                link("p/3.html", 2, Source::Sitemap, true),
            ],
        )
        .unwrap();
        let now = chrono::Utc::now();
        let queued = s.queued(blog, 10, now).unwrap();
        assert_eq!(
            queued
                .iter()
                .map(|q| (q.url.trim_start_matches("http://blog.test/"), q.depth))
                .collect::<Vec<_>>(),
            vec![
                ("", 0),
                ("p/1.html", 1),
                ("p/2.html", 1),
                ("page/2/", 1),
                ("p/3.html", 2)
            ],
            "{backend}: breadth-first, then discovery order; a known URL keeps its depth"
        );
        let page = s.queued_page(blog, 2, 2).unwrap();
        assert_eq!(
            page.iter().map(|d| d.seq).collect::<Vec<_>>(),
            vec![3, 4],
            "{backend}"
        );
        assert_eq!(s.unscored(blog, 10).unwrap().len(), 5, "{backend}");
        s.set_priorities(
            blog,
            &[
                priority("http://blog.test/page/2/", 1.0, 2),
                priority("http://blog.test/p/3.html", 2.0, 3),
                // Scored twice in one call: the last score holds.
                priority("http://blog.test/page/2/", 7.5, 3),
            ],
        )
        .unwrap();
        let best = s.best_queued(blog, 2, now).unwrap();
        assert_eq!(
            best.iter()
                .map(|q| (q.url.as_str(), q.priority, q.scored_at))
                .collect::<Vec<_>>(),
            vec![
                ("http://blog.test/page/2/", 7.5, 3),
                ("http://blog.test/p/3.html", 2.0, 3)
            ],
            "{backend}: highest priority first"
        );
        assert_eq!(s.unscored(blog, 10).unwrap().len(), 3, "{backend}");
        // p/1: feed + one in-link = found twice; p/2: feed only; p/3: in-link + sitemap.
        assert_eq!(
            s.captures(blog).unwrap(),
            Findings { once: 1, twice: 2 },
            "{backend}"
        );
        assert_eq!(s.queued_posts(blog, now).unwrap(), 3, "{backend}");
        assert_eq!(
            s.page_states(blog).unwrap(),
            vec![StateCount {
                state: PageState::Queued,
                urls: 5
            }],
            "{backend}"
        );
        assert_eq!(
            s.page_state(blog, "http://blog.test/p/2.html").unwrap(),
            Some(PageState::Queued),
            "{backend}"
        );
        assert_eq!(
            s.page_state(blog, "http://blog.test/nope").unwrap(),
            None,
            "{backend}"
        );
        assert_eq!(
            (
                s.processed(blog).unwrap(),
                s.prefetched(blog).unwrap(),
                s.deferred(blog, now).unwrap()
            ),
            (0, 0, 0),
            "{backend}"
        );
        assert_eq!(s.next_retry(blog).unwrap(), None, "{backend}");
        assert_eq!(
            s.attempts(blog, "http://blog.test/p/1.html").unwrap(),
            0,
            "{backend}"
        );
        assert!(s.observations(blog).unwrap().is_empty(), "{backend}");
        assert!(
            s.prefetched_queued(blog, 5).unwrap().is_empty(),
            "{backend}"
        );
    }};
}

#[test]
fn the_frontier_round_trips_the_same_on_both_back_ends() {
    let dir = tempfile::tempdir().unwrap();
    frontier_round_trip!(
        "sqlite",
        Store::open(&DatabaseSettings::at(dir.path().join("frontier.db"))).unwrap()
    );
    let Some(cluster) = Cluster::start() else {
        return;
    };
    frontier_round_trip!(
        "postgres",
        Store::open(&DatabaseSettings::at(std::path::Path::new(
            &cluster.database("frontier")
        )))
        .unwrap()
    );
}
