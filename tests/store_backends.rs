//! The store's coordination concerns (blogs as jobs see them, the job queue with leases, the
//! per-host request slots) behave the same on SQLite (`Store`, a real database file) and on
//! PostgreSQL (`PgStore`, a private cluster started by the test: `tests/common/postgres.rs`).
//! Each test runs its body on both back ends; the PostgreSQL half is skipped, saying why, where
//! PostgreSQL is not installed.

mod common;

use chrono::{DateTime, Utc};
use common::pg_cluster::Cluster;
use everblog::core::feed::FeedKind;
use everblog::store::postgres::PgStore;
use everblog::store::{Blog, Job, JobEnd, JobFilter, JobKind, JobState, Store};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// What the tests ask of a back end: the same methods on both.
trait Backend: Send {
    fn blog_for(&mut self, feed: &str) -> i64;
    fn blog(&self, id: i64) -> Blog;
    fn enqueue(&mut self, blog: i64, kind: JobKind) -> bool;
    fn lease(&mut self, owner: &str, lease: Duration, filter: JobFilter) -> Option<Job>;
    fn renew(&mut self, job: i64, owner: &str, lease: Duration) -> bool;
    fn release(&mut self, job: i64, owner: &str);
    fn schedule(&mut self, blog: i64, kind: JobKind, at: DateTime<Utc>) -> bool;
    fn finish(&mut self, job: &Job, owner: &str, end: &JobEnd);
    fn jobs(&self) -> Vec<Job>;
    fn reserve(&mut self, host: &str, delay: Duration) -> Duration;
    fn version(&self) -> i64;
}

macro_rules! backend {
    ($t:ty) => {
        impl Backend for $t {
            fn blog_for(&mut self, feed: &str) -> i64 {
                self.insert_blog(
                    "http://blog.test/",
                    feed,
                    Some("A blog"),
                    FeedKind::Rss2,
                    &[],
                )
                .unwrap()
                .id
            }
            fn blog(&self, id: i64) -> Blog {
                <$t>::blog(self, id).unwrap().unwrap()
            }
            fn enqueue(&mut self, blog: i64, kind: JobKind) -> bool {
                self.enqueue_job(blog, kind).unwrap()
            }
            fn lease(&mut self, owner: &str, lease: Duration, filter: JobFilter) -> Option<Job> {
                self.lease_job(owner, lease, filter).unwrap()
            }
            fn renew(&mut self, job: i64, owner: &str, lease: Duration) -> bool {
                self.renew_lease(job, owner, lease).unwrap()
            }
            fn release(&mut self, job: i64, owner: &str) {
                self.release_job(job, owner).unwrap()
            }
            fn schedule(&mut self, blog: i64, kind: JobKind, at: DateTime<Utc>) -> bool {
                self.schedule_job(blog, kind, at).unwrap()
            }
            fn finish(&mut self, job: &Job, owner: &str, end: &JobEnd) {
                self.finish_job(job, owner, end).unwrap()
            }
            fn jobs(&self) -> Vec<Job> {
                <$t>::jobs(self, 1000).unwrap()
            }
            fn reserve(&mut self, host: &str, delay: Duration) -> Duration {
                self.reserve_host(host, delay).unwrap()
            }
            fn version(&self) -> i64 {
                self.schema_version().unwrap()
            }
        }
    };
}
backend!(Store);
backend!(PgStore);

type Open = Box<dyn Fn() -> Box<dyn Backend> + Send + Sync>;

/// Runs `body` on a fresh SQLite file, then on a fresh PostgreSQL database; `body` gets a way
/// to open more connections to the same database.
fn on_both(name: &str, body: impl Fn(&str, &Open)) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.db"));
    let sqlite: Open = Box::new(move || Box::new(Store::open(&path).unwrap()));
    body("sqlite", &sqlite);
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.database(name);
    let pg: Open = Box::new(move || Box::new(PgStore::open(&url).unwrap()));
    body("postgres", &pg);
    drop(cluster);
}

/// Two instants equal to the millisecond (the stores keep milliseconds).
fn same_ms(a: Option<DateTime<Utc>>, b: DateTime<Utc>) -> bool {
    a.is_some_and(|a| a.timestamp_millis() == b.timestamp_millis())
}

#[test]
fn the_job_queue_leases_renews_expires_and_ends_jobs_the_same_on_both_back_ends() {
    on_both("queue", |backend, open| {
        let mut s = open();
        let blog = s.blog_for("http://blog.test/feed.xml");
        assert!(s.enqueue(blog, JobKind::NewCrawl), "{backend}: enqueued");
        assert!(
            !s.enqueue(blog, JobKind::NewCrawl),
            "{backend}: one open job per blog and kind"
        );

        let minute = Duration::from_secs(60);
        let job = s.lease("a", minute, JobFilter::default()).expect("a job");
        assert_eq!(
            (job.state, job.attempts),
            (JobState::Running, 1),
            "{backend}"
        );
        assert_eq!(job.owner.as_deref(), Some("a"), "{backend}");
        assert!(
            s.lease("b", minute, JobFilter::default()).is_none(),
            "{backend}: a leased job is not taken again"
        );
        assert!(!s.renew(job.id, "b", minute), "{backend}: not b's lease");
        assert!(s.renew(job.id, "a", minute), "{backend}: a renews");

        // Released: anyone takes it. A lease that runs out: anyone takes it, and its old
        // holder can no longer renew it or end it.
        s.release(job.id, "a");
        let job = s
            .lease("b", Duration::ZERO, JobFilter::default())
            .expect("released");
        assert_eq!(job.attempts, 2, "{backend}");
        std::thread::sleep(Duration::from_millis(20));
        let job = s.lease("c", minute, JobFilter::default()).expect("expired");
        assert_eq!(
            (job.owner.as_deref(), job.attempts),
            (Some("c"), 3),
            "{backend}"
        );
        assert!(!s.renew(job.id, "b", minute), "{backend}: b lost its lease");
        s.finish(&job, "b", &JobEnd::default());
        assert_eq!(
            s.jobs()[0].state,
            JobState::Running,
            "{backend}: b cannot end it"
        );

        // Ended by its holder: the successor is queued in the same transaction.
        let next = Utc::now() + chrono::Duration::hours(1);
        s.finish(
            &job,
            "c",
            &JobEnd {
                outcome: Some("12 posts".into()),
                error: None,
                next: vec![(JobKind::UpdateCrawl, next)],
            },
        );
        let jobs = s.jobs();
        assert_eq!(jobs.len(), 2, "{backend}");
        assert_eq!(
            (jobs[1].state, jobs[1].outcome.as_deref()),
            (JobState::Done, Some("12 posts")),
            "{backend}"
        );
        assert_eq!(
            (jobs[0].kind, jobs[0].state),
            (JobKind::UpdateCrawl, JobState::Queued)
        );
        assert!(same_ms(jobs[0].not_before, next), "{backend}");
        assert!(same_ms(s.blog(blog).next_update_at, next), "{backend}");
        assert!(
            s.lease("d", minute, JobFilter::default()).is_none(),
            "{backend}: not due yet"
        );

        // Scheduling an open job earlier moves it; later does not.
        let sooner = Utc::now() - chrono::Duration::seconds(1);
        assert!(!s.schedule(blog, JobKind::UpdateCrawl, sooner), "{backend}");
        assert!(!s.schedule(blog, JobKind::UpdateCrawl, next), "{backend}");
        assert!(same_ms(s.blog(blog).next_update_at, sooner), "{backend}");
        let filter = JobFilter {
            blog_id: Some(blog),
            kind: Some(JobKind::NewCrawl),
        };
        assert!(s.lease("d", minute, filter).is_none(), "{backend}: filter");
        let update = s.lease("d", minute, JobFilter::default()).expect("due now");
        assert_eq!(update.kind, JobKind::UpdateCrawl, "{backend}");

        // A failure counts on the blog.
        s.finish(
            &update,
            "d",
            &JobEnd {
                outcome: None,
                error: Some("feed gone".into()),
                next: vec![],
            },
        );
        let b = s.blog(blog);
        assert_eq!(
            (b.errors_in_a_row, b.last_error.as_deref()),
            (1, Some("feed gone")),
            "{backend}"
        );
    });
}

#[test]
fn racing_workers_on_their_own_connections_take_each_job_exactly_once_on_both_back_ends() {
    on_both("race", |backend, open| {
        let mut s = open();
        let jobs = 60;
        for i in 0..jobs {
            let blog = s.blog_for(&format!("http://blog{i}.test/feed.xml"));
            assert!(s.enqueue(blog, JobKind::NewCrawl));
        }
        let taken: Vec<Vec<i64>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..3)
                .map(|w| {
                    scope.spawn(move || {
                        let mut s = open();
                        let mut mine = Vec::new();
                        while let Some(job) = s.lease(
                            &format!("w{w}"),
                            Duration::from_secs(600),
                            JobFilter::default(),
                        ) {
                            mine.push(job.id);
                        }
                        mine
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        let all: Vec<i64> = taken.iter().flatten().copied().collect();
        let distinct: HashSet<i64> = all.iter().copied().collect();
        assert_eq!(
            (all.len(), distinct.len()),
            (jobs, jobs),
            "{backend}: every job taken once, by worker: {:?}",
            taken.iter().map(Vec::len).collect::<Vec<_>>()
        );
    });
}

#[test]
fn host_slots_space_requests_across_connections_on_both_back_ends() {
    on_both("slots", |backend, open| {
        let delay = Duration::from_secs(1);
        let (per_worker, workers) = (8, 3);
        let started = Instant::now();
        let mut waits: Vec<Duration> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    scope.spawn(move || {
                        let mut s = open();
                        (0..per_worker)
                            .map(|_| s.reserve("blog.test", delay))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        let spread = started.elapsed();
        assert!(spread < delay, "{backend}: reservations took {spread:?}");
        waits.sort();
        // Every reservation came before the first slot ran out, so slot k is k delays after
        // the first; a reservation made up to `spread` later waits that much less.
        let slack = spread + Duration::from_millis(3);
        for (k, w) in waits.iter().enumerate() {
            let due = delay * k as u32;
            assert!(
                *w <= due + Duration::from_millis(3) && *w + slack >= due,
                "{backend}: slot {k} waits {w:?}, expected {due:?} (less at most {slack:?}); all: {waits:?}"
            );
        }
    });
}

#[test]
fn processes_opening_a_new_database_at_once_migrate_it_once_on_both_back_ends() {
    on_both("migrate", |backend, open| {
        let versions: Vec<i64> = std::thread::scope(|scope| {
            let opened: Vec<_> = (0..4).map(|_| scope.spawn(|| open().version())).collect();
            opened.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let first = versions[0];
        assert!(first > 0, "{backend}: migrated");
        assert_eq!(versions, vec![first; 4], "{backend}");
    });
}

#[test]
fn the_postgres_store_reconnects_after_a_restart_and_refuses_a_newer_schema() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.database("restart");
    let mut s = PgStore::open(&url).unwrap();
    let blog = s.blog_for("http://blog.test/feed.xml");
    s.enqueue_job(blog, JobKind::NewCrawl).unwrap();
    let lease = Duration::from_secs(60);
    let job = s.lease("a", lease, JobFilter::default()).unwrap();

    cluster.restart();
    assert!(s.renew(job.id, "a", lease), "renewed on a new connection");

    // Down for two seconds: a call waits for it to come back.
    cluster.stop();
    let down = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_secs(2));
            cluster.start_again();
        });
        assert_eq!(
            s.jobs(10).unwrap().len(),
            1,
            "answered once the server is back"
        );
    });
    assert!(down.elapsed() >= Duration::from_secs(2));
    assert!(
        s.lease("b", lease, JobFilter::default()).is_none(),
        "the job is still a's"
    );

    let mut raw = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    raw.batch_execute("UPDATE everblog_schema SET version = 99")
        .unwrap();
    let err = PgStore::open(&url)
        .err()
        .expect("a newer schema is refused");
    assert!(
        format!("{err:#}").contains("newer than this everblog understands"),
        "{err:#}"
    );
}

/// The blogs concern's round trip, written once for both back ends (the two types have the same
/// methods): entries in first-seen order with their offsets, rules replacing rules, the render
/// decision, milestones and lookups.
macro_rules! blogs_round_trip {
    ($backend:expr, $store:expr) => {{
        use chrono::DateTime;
        use everblog::core::feed::{Enclosure, FeedEntry};
        use everblog::core::learn::Field;
        use everblog::core::post_url::PostUrlPattern;
        use everblog::store::{RenderMode, Renders, StoredRule};
        let backend: &str = $backend;
        let mut s = $store;
        let entry = |n: u32, offset: &str| FeedEntry {
            url: format!("http://blog.test/2026/0{n}/post-{n}.html"),
            title: Some(format!("Post {n}")),
            authors: vec!["Ada Quill".into(), "Bram Okafor".into()],
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
    blogs_round_trip!("sqlite", Store::open(&dir.path().join("blogs.db")).unwrap());
    let Some(cluster) = Cluster::start() else {
        return;
    };
    blogs_round_trip!(
        "postgres",
        PgStore::open(&cluster.database("blogs")).unwrap()
    );
}

/// The responses concern's round trip on one back end: a fetch with a redirect kept in order,
/// a 304 logged and tied to the response it confirms, captures streamed in id order.
macro_rules! responses_round_trip {
    ($backend:expr, $store:expr) => {{
        use everblog::fetch::{FetchRecord, Fetched, Response};
        use everblog::store::WarcRoll;
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

        let (id, latest) = s.latest_response(blog, page).unwrap().expect("latest");
        assert_eq!(
            (id, latest.body.as_slice()),
            (rendered, &b"<p>hello</p>"[..]),
            "{backend}"
        );
        assert_eq!(latest.fetched_at, at(4), "{backend}");
        let mut seen = Vec::new();
        let n = s
            .for_each_capture(Some(blog), 0, |id, r| {
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
        let stopped = s.for_each_capture(None, 0, |_, _| anyhow::bail!("enough"));
        assert!(stopped.is_err(), "{backend}: f's error ends the walk");
        assert_eq!(
            s.not_modified(Some(blog)).unwrap(),
            vec![(page.to_string(), at(3), Some(kept))],
            "{backend}"
        );
        assert_eq!(
            s.capture_span(Some(blog)).unwrap(),
            Some((at(1), at(4))),
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
        Store::open(&dir.path().join("responses.db")).unwrap()
    );
    let Some(cluster) = Cluster::start() else {
        return;
    };
    responses_round_trip!(
        "postgres",
        PgStore::open(&cluster.database("responses")).unwrap()
    );
}

/// The frontier's round trip on one back end: links merged by URL (sources, in-links, post
/// marks), breadth-first and priority orders, the capture counts of the unseen-posts estimate.
macro_rules! frontier_round_trip {
    ($backend:expr, $store:expr) => {{
        use everblog::store::{Link, PageState, Source};
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
                .map(|(u, d)| (u.trim_start_matches("http://blog.test/"), *d))
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
            page.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(),
            vec![3, 4],
            "{backend}"
        );
        assert_eq!(s.unscored(blog, 10).unwrap().len(), 5, "{backend}");
        s.set_priorities(
            blog,
            &[
                ("http://blog.test/page/2/".into(), 7.5, 3),
                ("http://blog.test/p/3.html".into(), 2.0, 3),
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
        assert_eq!(s.captures(blog).unwrap(), (1, 2), "{backend}");
        assert_eq!(s.queued_posts(blog, now).unwrap(), 3, "{backend}");
        assert_eq!(
            s.page_states(blog).unwrap(),
            vec![(PageState::Queued, 5)],
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
        Store::open(&dir.path().join("frontier.db")).unwrap()
    );
    let Some(cluster) = Cluster::start() else {
        return;
    };
    frontier_round_trip!(
        "postgres",
        PgStore::open(&cluster.database("frontier")).unwrap()
    );
}

/// Posts, comments, versions and media on one back end: one crawled page in one transaction,
/// an edit kept as a version, a comment edit kept, a gone mark, posts streamed in order.
macro_rules! posts_round_trip {
    ($backend:expr, $store:expr) => {{
        use chrono::{DateTime, Utc};
        use everblog::core::requisites::Kind;
        use everblog::fetch::{FetchRecord, Response};
        use everblog::store::{
            Comment, CommentSource, CommentWrite, Link, MediaState, NewMedia, NewPost, PageOutcome,
            PageState, PostWrite, Source,
        };
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
        let url = |p: &str| format!("http://blog.test/{p}");
        let when = |d: &str| DateTime::parse_from_rfc3339(d).unwrap();
        let post = |p: &str, text: &str, published: &str| NewPost {
            url: url(p),
            title: Some(format!("Title of {p}")),
            authors: vec!["Ada Quill".into()],
            published: Some(when(published)),
            published_raw: Some(published.into()),
            updated: None,
            content_html: format!("<p>{text}</p>"),
            content_text: text.into(),
            gaps: vec![],
            tags: vec!["garden".into(), p.into()],
            comments_feed: None,
            comments_declared: Some(1),
            comments_closed: false,
            next_comment_check: Some(Utc::now() - chrono::Duration::hours(1)),
            extracted_by: None,
        };
        let comment = |key: &str, text: &str| Comment {
            id: key.into(),
            author: Some("Bram".into()),
            published: Some(when("2026-03-02T08:00:00+01:00")),
            published_raw: None,
            content_html: format!("<p>{text}</p>"),
            content_text: text.into(),
            parent: None,
            source: CommentSource::Page,
            position: 0,
        };
        let page = |p: &str, np: Option<NewPost>, comments: Option<CommentWrite>, secs: i64| {
            let at = chrono::DateTime::from_timestamp(1_790_000_000 + secs, 0).unwrap();
            PageOutcome {
                blog_id: blog,
                url: url(p),
                fetches: vec![FetchRecord {
                    url: url(p),
                    status: Some(200),
                    bytes: Some(10),
                    elapsed_ms: 3,
                    fetched_at: at,
                    error: None,
                }],
                response: Some(Response {
                    url: url(p),
                    final_url: url(p),
                    status: 200,
                    headers: vec![],
                    body: format!("<html>{p} {secs}</html>").into_bytes(),
                    fetched_at: at,
                }),
                redirects: vec![],
                rendered: None,
                reused_response: None,
                post: np,
                links: vec![Link {
                    url: url("p/next.html"),
                    depth: 2,
                    source: Source::Link,
                    post: true,
                }],
                post_links: Some(1),
                state: PageState::Done,
                retry_at: None,
                error: None,
                comments,
                gone: false,
            }
        };
        s.enqueue(
            blog,
            &[Link {
                url: url("p/a.html"),
                depth: 1,
                source: Source::Feed,
                post: true,
            }],
        )
        .unwrap();
        let w = s
            .record_page(&page(
                "p/a.html",
                Some(post("p/a.html", "First text.", "2026-03-01T09:00:00+01:00")),
                Some(CommentWrite {
                    post_url: url("p/a.html"),
                    delete: vec![],
                    upsert: vec![comment("c1", "Nice.")],
                }),
                1,
            ))
            .unwrap();
        assert_eq!(
            (w.post, w.new_comments, w.new_post_links),
            (Some(PostWrite::New), 1, 1),
            "{backend}"
        );
        let w = s
            .record_page(&page(
                "p/b.html",
                Some(post("p/b.html", "Older.", "2025-01-01T09:00:00Z")),
                None,
                2,
            ))
            .unwrap();
        assert_eq!(w.post, Some(PostWrite::New), "{backend}");
        let w = s
            .record_page(&page(
                "p/a.html",
                Some(post(
                    "p/a.html",
                    "First text, edited.",
                    "2026-03-01T09:00:00+01:00",
                )),
                Some(CommentWrite {
                    post_url: url("p/a.html"),
                    delete: vec![],
                    upsert: vec![comment("c1", "Nice!")],
                }),
                3,
            ))
            .unwrap();
        assert_eq!(
            (w.post, w.edited_comments),
            (Some(PostWrite::Edited(2)), 1),
            "{backend}"
        );
        assert_eq!(
            s.page_state(blog, &url("p/a.html")).unwrap(),
            Some(PageState::Done),
            "{backend}"
        );
        assert_eq!(
            s.observations(blog).unwrap(),
            vec![(url("p/a.html"), 1)],
            "{backend}"
        );

        let a = s.post(&url("p/a.html")).unwrap().expect("post a");
        assert_eq!(
            (a.version, a.content_text.as_str()),
            (2, "First text, edited."),
            "{backend}"
        );
        assert_eq!(
            a.published,
            Some(when("2026-03-01T09:00:00+01:00")),
            "{backend}: offset kept"
        );
        assert_eq!(a.comments.len(), 1, "{backend}");
        assert_eq!(a.comments[0].content_text, "Nice!", "{backend}");
        assert_eq!(
            s.post_versions(&url("p/a.html")).unwrap()[0].content_text,
            "First text.",
            "{backend}"
        );
        assert_eq!(
            s.comment_versions(&url("p/a.html")).unwrap(),
            vec![("c1".to_string(), "Nice.".to_string())],
            "{backend}"
        );
        let mut order = Vec::new();
        let n = s
            .for_each_post(Some(blog), |p| {
                order.push(p.url);
                Ok(())
            })
            .unwrap();
        assert_eq!(
            (n, order),
            (2, vec![url("p/a.html"), url("p/b.html")]),
            "{backend}: newest first"
        );
        assert_eq!(s.posts(None).unwrap().len(), 2, "{backend}");
        assert_eq!(s.post_count(blog).unwrap(), 2, "{backend}");
        assert_eq!(
            s.authors_and_tags(blog).unwrap(),
            (
                vec!["Ada Quill".to_string()],
                vec!["garden".to_string(), "p/a.html".into(), "p/b.html".into()]
            ),
            "{backend}"
        );
        assert!(
            s.has_post(&url("p/b.html")).unwrap() && !s.has_post(&url("p/c.html")).unwrap(),
            "{backend}"
        );

        // Comment checks: both due; one checked and closed is no longer.
        let now: DateTime<Utc> = Utc::now();
        assert_eq!(
            s.due_comment_checks(blog, now, 10).unwrap().len(),
            2,
            "{backend}"
        );
        s.set_comment_check(&url("p/b.html"), now, None, true)
            .unwrap();
        let due = s.due_comment_checks(blog, now, 10).unwrap();
        assert_eq!(
            due.iter().map(|c| c.url.clone()).collect::<Vec<_>>(),
            vec![url("p/a.html")],
            "{backend}"
        );
        assert_eq!(due[0].comments, 1, "{backend}");

        // Media: recorded in page order, their bytes counted once.
        let (rid, status) = s
            .response_for(blog, &url("p/a.html"))
            .unwrap()
            .expect("stored");
        assert_eq!(status, 200, "{backend}");
        assert_eq!(
            s.response_body(rid).unwrap().as_deref(),
            Some(&b"<html>p/a.html 3</html>"[..]),
            "{backend}"
        );
        assert_eq!(
            s.posts_without_media(blog, 10).unwrap().len(),
            2,
            "{backend}"
        );
        let media = |u: &str, state| NewMedia {
            url: url(u),
            kind: Kind::Image,
            response_id: (state == MediaState::Stored).then_some(rid),
            state,
            reason: (state != MediaState::Stored).then(|| "HTTP 404".into()),
        };
        s.set_post_media(
            &url("p/a.html"),
            &[
                media("z.png", MediaState::Stored),
                media("a.png", MediaState::Failed),
            ],
        )
        .unwrap();
        let got = s.post_media(&url("p/a.html")).unwrap();
        assert_eq!(
            got.iter()
                .map(|m| (m.url.clone(), m.state))
                .collect::<Vec<_>>(),
            vec![
                (url("z.png"), MediaState::Stored),
                (url("a.png"), MediaState::Failed)
            ],
            "{backend}: page order"
        );
        assert_eq!(s.media_bytes(blog).unwrap(), 23, "{backend}");
        assert_eq!(
            s.posts_without_media(blog, 10).unwrap().len(),
            1,
            "{backend}"
        );

        // Gone: marked once, kept.
        let mut gone = page("p/b.html", None, None, 4);
        gone.gone = true;
        gone.response = None;
        assert!(s.record_page(&gone).unwrap().gone, "{backend}");
        assert!(!s.record_page(&gone).unwrap().gone, "{backend}: once");
        assert_eq!(
            s.post_urls(blog).unwrap(),
            vec![url("p/a.html")],
            "{backend}"
        );
        assert!(
            s.post(&url("p/b.html")).unwrap().unwrap().gone_at.is_some(),
            "{backend}"
        );

        // Coverage: p/a and p/next known from the frontier, p/b archived without it.
        let cov = s.coverage(blog).unwrap();
        let c = &cov.counts;
        assert_eq!(
            (
                c.posts_known,
                c.posts_archived,
                c.posts_gone,
                c.comments_declared,
                c.comments_archived
            ),
            (3, 2, 1, 1, 1),
            "{backend}"
        );
        assert_eq!(
            c.oldest_post,
            Some(when("2025-01-01T09:00:00Z")),
            "{backend}"
        );
        assert_eq!(
            c.newest_post,
            Some(when("2026-03-01T09:00:00+01:00")),
            "{backend}"
        );
        assert_eq!(
            cov.posts_known_by.into_iter().collect::<Vec<_>>(),
            vec![(Source::Feed, 1), (Source::Link, 1)],
            "{backend}"
        );
        assert_eq!(
            cov.posts_missing
                .iter()
                .map(|m| (m.url.clone(), m.state))
                .collect::<Vec<_>>(),
            vec![(url("p/next.html"), PageState::Queued)],
            "{backend}"
        );
        assert!(cov.comments_missing.is_empty(), "{backend}");
    }};
}

#[test]
fn posts_comments_versions_and_media_round_trip_the_same_on_both_back_ends() {
    let dir = tempfile::tempdir().unwrap();
    posts_round_trip!("sqlite", Store::open(&dir.path().join("posts.db")).unwrap());
    let Some(cluster) = Cluster::start() else {
        return;
    };
    posts_round_trip!(
        "postgres",
        PgStore::open(&cluster.database("posts")).unwrap()
    );
}

/// The reader's side on one back end: five posts holding "lantern" (post 1 in its title) and
/// a comment by Bea on post 2, as `store::reading`'s own unit test lays them out; listings by
/// month, author and tag; captures for Memento.
macro_rules! reading_round_trip {
    ($backend:expr, $store:expr) => {{
        use chrono::DateTime;
        use everblog::fetch::Response;
        use everblog::store::{
            Comment, CommentSource, CommentWrite, NewPost, PageOutcome, PageState, PostFilter,
            SearchQuery,
        };
        let backend: &str = $backend;
        let mut s = $store;
        let blog = s
            .insert_blog("http://b/", "http://b/feed", None, FeedKind::Rss2, &[])
            .unwrap()
            .id;
        for n in 1..=5u32 {
            let url = format!("http://b/{n}");
            let at = DateTime::from_timestamp(1_790_000_000 + i64::from(n), 0).unwrap();
            let comments = (n == 2).then(|| CommentWrite {
                post_url: url.clone(),
                delete: vec![],
                upsert: vec![Comment {
                    id: "c1".into(),
                    author: Some("Bea".into()),
                    published: None,
                    published_raw: None,
                    content_html: String::new(),
                    content_text: "my lantern too".into(),
                    parent: None,
                    source: CommentSource::Page,
                    position: 0,
                }],
            });
            s.record_page(&PageOutcome {
                blog_id: blog,
                url: url.clone(),
                fetches: vec![],
                response: Some(Response {
                    url: url.clone(),
                    final_url: url.clone(),
                    status: 200,
                    headers: vec![],
                    body: format!("page {n}").into_bytes(),
                    fetched_at: at,
                }),
                redirects: vec![],
                rendered: None,
                reused_response: None,
                post: Some(NewPost {
                    url: url.clone(),
                    title: Some(if n == 1 {
                        "Lantern".into()
                    } else {
                        format!("Post {n}")
                    }),
                    authors: vec!["Ann".into()],
                    published: Some(
                        DateTime::parse_from_rfc3339(&format!("2026-0{n}-01T00:00:00+00:00"))
                            .unwrap(),
                    ),
                    published_raw: None,
                    updated: None,
                    content_html: String::new(),
                    content_text:
                        "a long text about a lantern and many other words to weigh it down".into(),
                    gaps: vec![],
                    tags: if n % 2 == 0 {
                        vec!["even".into()]
                    } else {
                        vec![]
                    },
                    comments_feed: None,
                    comments_declared: None,
                    comments_closed: false,
                    next_comment_check: None,
                    extracted_by: None,
                }),
                links: vec![],
                post_links: None,
                state: PageState::Done,
                retry_at: None,
                error: None,
                comments,
                gone: false,
            })
            .unwrap();
        }
        let urls = |q: &SearchQuery| -> Vec<(String, bool)> {
            s.search(q)
                .unwrap()
                .into_iter()
                .map(|h| (h.url, h.comment.is_some()))
                .collect()
        };
        let q = |rank_window| SearchQuery {
            text: "lantern".into(),
            limit: 10,
            rank_window,
            ..SearchQuery::default()
        };
        assert_eq!(s.search_matches("lantern").unwrap(), 6, "{backend}");
        assert_eq!(s.search_matches("lant*").unwrap(), 6, "{backend}: a prefix");
        assert_eq!(
            s.search_matches("\"*) OR").unwrap(),
            0,
            "{backend}: no syntax"
        );
        let all = urls(&q(100));
        assert_eq!(all.len(), 6, "{backend}");
        assert_eq!(
            all[0],
            ("http://b/1".into(), false),
            "{backend}: the title hit first"
        );
        let windowed = urls(&q(2));
        let rest = [("3", false), ("2", false), ("2", true), ("1", false)]
            .map(|(n, comment)| (format!("http://b/{n}"), comment));
        assert_eq!(windowed[2..], rest, "{backend}");
        let mut paged = Vec::new();
        for offset in 0..6 {
            paged.extend(urls(&SearchQuery {
                limit: 1,
                offset,
                ..q(2)
            }));
        }
        assert_eq!(
            paged, windowed,
            "{backend}: paging loses and repeats nothing"
        );
        let by_bea = SearchQuery {
            author: Some("bea".into()),
            ..q(2)
        };
        assert_eq!(
            urls(&by_bea),
            [("http://b/2".to_string(), true)],
            "{backend}"
        );
        let spring = SearchQuery {
            from: chrono::NaiveDate::from_ymd_opt(2026, 3, 1),
            to: chrono::NaiveDate::from_ymd_opt(2026, 4, 1),
            ..q(1)
        };
        assert_eq!(
            urls(&spring),
            [
                ("http://b/4".to_string(), false),
                ("http://b/3".to_string(), false)
            ],
            "{backend}"
        );
        let hit = &s.search(&q(100)).unwrap()[0];
        assert!(
            hit.marked.contains("\u{1}"),
            "{backend}: marked {:?}",
            hit.marked
        );

        // Listings.
        let (page, total) = s.post_page(blog, &PostFilter::default(), 2, 1).unwrap();
        assert_eq!(total, 5, "{backend}");
        assert_eq!(
            page.iter().map(|p| p.url.as_str()).collect::<Vec<_>>(),
            vec!["http://b/4", "http://b/3"],
            "{backend}: newest first, paged"
        );
        let march = PostFilter {
            month: Some((2026, 3)),
            ..PostFilter::default()
        };
        assert_eq!(s.post_page(blog, &march, 10, 0).unwrap().1, 1, "{backend}");
        let even = PostFilter {
            tag: Some("even".into()),
            ..PostFilter::default()
        };
        let (even_posts, n) = s.post_page(blog, &even, 10, 0).unwrap();
        assert_eq!((n, even_posts[1].comments), (2, 1), "{backend}");
        assert_eq!(
            s.post_months(blog).unwrap()[0],
            ("2026-05".to_string(), 1),
            "{backend}"
        );
        assert_eq!(
            s.post_authors(blog).unwrap(),
            vec![("Ann".to_string(), 5)],
            "{backend}"
        );
        assert_eq!(
            s.post_tags(blog).unwrap(),
            vec![("even".to_string(), 2)],
            "{backend}"
        );

        // Captures.
        let caps = s.captures_of("http://b/3").unwrap();
        assert_eq!(caps.len(), 1, "{backend}");
        let near = s
            .capture_near(
                "http://b/3",
                DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
            )
            .unwrap()
            .unwrap();
        assert_eq!(near.id, caps[0].id, "{backend}");
        assert_eq!(
            s.capture_response(near.id).unwrap().map(|r| r.body),
            Some(b"page 3".to_vec()),
            "{backend}"
        );
    }};
}

#[test]
fn reading_and_search_answer_the_same_on_both_back_ends() {
    let dir = tempfile::tempdir().unwrap();
    reading_round_trip!(
        "sqlite",
        Store::open(&dir.path().join("reading.db")).unwrap()
    );
    let Some(cluster) = Cluster::start() else {
        return;
    };
    reading_round_trip!(
        "postgres",
        PgStore::open(&cluster.database("reading")).unwrap()
    );
}
