//! The store's coordination concerns (the job queue with leases, the per-host request slots,
//! migration by processes starting together, reconnection) behave the same on SQLite (`Store`, a real database file) and on
//! PostgreSQL (`Store` on a `postgres://` URL, a private cluster started by the test: `tests/common/pg_cluster.rs`).
//! Each test runs its body on both back ends; the PostgreSQL half is skipped, saying why, where
//! PostgreSQL is not installed.

use crate::common::pg_cluster::Cluster;
use chrono::{DateTime, Utc};
use everblog::core::feed::FeedKind;
use everblog::store::DatabaseSettings;
use everblog::store::{Blog, BlogId, Job, JobEnd, JobFilter, JobKind, JobState, Store};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// What the tests ask of a back end: the same methods on both.
trait Backend: Send {
    fn blog_for(&mut self, feed: &str) -> BlogId;
    fn blog(&self, id: BlogId) -> Blog;
    fn enqueue(&mut self, blog: BlogId, kind: JobKind) -> bool;
    fn lease(&mut self, owner: &str, lease: Duration, filter: JobFilter) -> Option<Job>;
    fn renew(&mut self, job: i64, owner: &str, lease: Duration) -> bool;
    fn release(&mut self, job: i64, owner: &str);
    fn schedule(&mut self, blog: BlogId, kind: JobKind, at: DateTime<Utc>) -> bool;
    fn finish(&mut self, job: &Job, owner: &str, end: &JobEnd);
    fn jobs(&self) -> Vec<Job>;
    fn reserve(&mut self, host: &str, delay: Duration) -> Duration;
    fn version(&self) -> i64;
}

macro_rules! backend {
    ($t:ty) => {
        impl Backend for $t {
            fn blog_for(&mut self, feed: &str) -> BlogId {
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
            fn blog(&self, id: BlogId) -> Blog {
                <$t>::blog(self, id).unwrap().unwrap()
            }
            fn enqueue(&mut self, blog: BlogId, kind: JobKind) -> bool {
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
            fn schedule(&mut self, blog: BlogId, kind: JobKind, at: DateTime<Utc>) -> bool {
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

type Open = Box<dyn Fn() -> Box<dyn Backend> + Send + Sync>;

/// Runs `body` on a fresh SQLite file, then on a fresh PostgreSQL database; `body` gets a way
/// to open more connections to the same database.
fn on_both(name: &str, body: impl Fn(&str, &Open)) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.db"));
    let sqlite: Open =
        Box::new(move || Box::new(Store::open(&DatabaseSettings::at(&path)).unwrap()));
    body("sqlite", &sqlite);
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.database(name);
    let pg: Open = Box::new(move || {
        Box::new(Store::open(&DatabaseSettings::at(std::path::Path::new(&url))).unwrap())
    });
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
                next: vec![everblog::store::NextJob {
                    kind: JobKind::UpdateCrawl,
                    not_before: next,
                }],
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
    let mut s = Store::open(&DatabaseSettings::at(std::path::Path::new(&url))).unwrap();
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
    let err = Store::open(&DatabaseSettings::at(std::path::Path::new(&url)))
        .err()
        .expect("a newer schema is refused");
    assert!(
        format!("{err:#}").contains("newer than this everblog understands"),
        "{err:#}"
    );
}

// The other concerns' round trips: tests/postgres/store_round_trips*.rs.
