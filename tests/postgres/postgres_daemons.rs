//! The service on PostgreSQL, with real processes (standing for machines) sharing one database
//! on a private cluster: three daemons share the NewCrawl jobs of three blogs without running
//! one twice; a daemon `kill -9`ed mid-crawl has its job resumed by another once the lease
//! expires, while PostgreSQL itself restarts under it, and no post is lost or archived twice;
//! three daemons crawling three blogs on one host keep the host's requests the configured
//! delay apart, measured at the server.
//! Skipped, saying why, where PostgreSQL is not installed.

use crate::common::pg_cluster::Cluster;
use crate::common::*;
use everblog::fixture_server::{Hook, Root, Server};
use everblog::store::DatabaseSettings;
use everblog::store::{JobKind, JobState, Store};
use std::collections::HashSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn daemon(db: &Path, owner: &str, lease: &str) -> Child {
    archive_command()
        .arg("--db")
        .arg(db)
        .args([
            "daemon", "--poll", "0.1", "--lease", lease, "--owner", owner,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn new_crawls(db: &Path) -> Vec<everblog::store::Job> {
    Store::open(&DatabaseSettings::at(db))
        .ok()
        .and_then(|s| s.jobs(100).ok())
        .unwrap_or_default()
        .into_iter()
        .filter(|j| j.kind == JobKind::NewCrawl)
        .collect()
}

fn all_done(db: &Path, n: usize) -> bool {
    let j = new_crawls(db);
    j.len() == n && j.iter().all(|j| j.state == JobState::Done)
}

/// Exported posts, and how many distinct URLs among them.
fn exported(db: &Path) -> (usize, usize) {
    let export = ok(&archive(db, &["export"]));
    let urls: HashSet<String> = export
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["url"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    (export.lines().count(), urls.len())
}

#[test]
fn three_daemons_on_postgres_share_the_work_and_run_no_job_twice() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.database("shared");
    let db = Path::new(&url);
    let blogs: Vec<Blog> = ["pelican", "hexo", "nikola"]
        .into_iter()
        .map(serve)
        .collect();
    for b in &blogs {
        ok(&archive(db, &["add", &b.feed_url()]));
    }
    let owners = ["machine-a", "machine-b", "machine-c"];
    let daemons: Vec<Child> = owners.iter().map(|o| daemon(db, o, "10")).collect();
    wait_for(
        "three NewCrawl jobs to finish",
        Duration::from_secs(180),
        || all_done(db, 3),
    );
    for d in daemons {
        assert!(terminate(d).success());
    }
    for j in new_crawls(db) {
        assert_eq!((j.state, j.attempts), (JobState::Done, 1), "{j:?}");
        assert!(owners.contains(&j.owner.as_deref().unwrap_or("")), "{j:?}");
    }
    let want: usize = blogs
        .iter()
        .map(|b| b.truth["posts"].as_array().unwrap().len())
        .sum();
    assert_eq!(exported(db), (want, want), "every post archived once");
}

#[test]
fn a_job_killed_on_one_daemon_is_resumed_by_another_through_a_postgres_restart() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.database("rescue");
    let db = Path::new(&url);
    let dir = fixture_dir("nikola");
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).unwrap()).unwrap();
    let hook: Hook = Box::new(|_| {
        std::thread::sleep(Duration::from_millis(60));
        None
    });
    let server = Server::start_with(
        Root::Disk(dir.join("site")),
        truth["base_url"].as_str().map(str::to_string),
        Some(hook),
    )
    .unwrap();
    ok(&archive(
        db,
        &[
            "add",
            &format!("{}{}", server.origin, truth["feed_path"].as_str().unwrap()),
        ],
    ));
    let posts = || {
        Store::open(&DatabaseSettings::at(db))
            .ok()
            .and_then(|s| s.post_urls(everblog::store::BlogId::new(1)).ok())
            .map_or(0, |p| p.len())
    };
    let mut first = daemon(db, "doomed", "2");
    wait_for("the first posts", Duration::from_secs(60), || posts() >= 12);
    first.kill().unwrap(); // SIGKILL: the lease stays until it expires
    first.wait().unwrap();
    assert!(
        posts() < 36,
        "the crawl finished before the kill; slow the server down"
    );
    let second = daemon(db, "rescuer", "2");
    wait_for(
        "the rescuer to take the job",
        Duration::from_secs(60),
        || {
            new_crawls(db)
                .first()
                .is_some_and(|j| j.owner.as_deref() == Some("rescuer"))
        },
    );
    cluster.restart();
    wait_for(
        "the job to be finished by the second daemon",
        Duration::from_secs(120),
        || all_done(db, 1),
    );
    assert!(terminate(second).success());
    let job = &new_crawls(db)[0];
    assert_eq!((job.attempts, job.owner.as_deref()), (2, Some("rescuer")));
    assert_eq!(exported(db), (36, 36), "no post lost or archived twice");
}

#[test]
fn politeness_holds_across_three_daemons_on_postgres() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.database("polite");
    let db = Path::new(&url);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    std::fs::create_dir_all(&root).unwrap();
    let blogs = [
        ("pelican", "feeds/all.rss.xml"),
        ("nikola", "rss.xml"),
        ("hexo", "atom.xml"),
    ];
    for (name, _) in blogs {
        assert!(Command::new("cp")
            .arg("-r")
            .arg(fixture_dir(name).join("site"))
            .arg(root.join(name))
            .status()
            .unwrap()
            .success());
    }
    let server = Server::start(
        Root::Disk(root.clone()),
        Some("http://127.0.0.1:8000".into()),
    )
    .unwrap();
    let config = dir.path().join("config.toml");
    write_config(
        &config,
        "[politeness]\nloopback_delay = \"150ms\"\n[crawl]\nmax_pages = 12\n[daemon]\npoll = \"100ms\"\n",
    )
    .unwrap();
    // The blogs live in sub-directories of one origin: their feeds point there.
    for (name, feed) in blogs {
        let path = root.join(name).join(feed);
        let text = std::fs::read_to_string(&path).unwrap().replace(
            "http://127.0.0.1:8000",
            &format!("{}/{name}", server.origin),
        );
        std::fs::write(&path, text).unwrap();
        ok(&archive(
            db,
            &["add", &format!("{}/{name}/{feed}", server.origin)],
        ));
    }
    let mark = server.access_log().len();
    let daemons: Vec<Child> = ["a", "b", "c"]
        .iter()
        .map(|o| daemon_with_config(db, &config, o, Stdio::null()))
        .collect();
    wait_for("three NewCrawls", Duration::from_secs(180), || {
        all_done(db, 3)
    });
    for d in daemons {
        assert!(terminate(d).success());
    }
    let owners: HashSet<_> = new_crawls(db).into_iter().filter_map(|j| j.owner).collect();
    assert!(owners.len() >= 2, "one daemon did every crawl: {owners:?}");
    let log = server.access_log();
    let times: Vec<Duration> = log[mark..].iter().map(|a| a.at).collect();
    assert!(times.len() > 30, "{} requests", times.len());
    let min_gap = times
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .min()
        .unwrap();
    assert!(
        min_gap >= Duration::from_millis(120),
        "two requests to one host {min_gap:?} apart (delay 150 ms)"
    );
}

/// `/readyz` follows the database through an outage while `/healthz` keeps answering, and the
/// metrics say the database is down (issue 44).
#[test]
fn readiness_follows_postgres_through_an_outage() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.database("probes");
    let db = Path::new(&url);
    drop(Store::open(&DatabaseSettings::at(db)).unwrap());
    let port = free_port();
    let d = archive_command()
        .arg("--db")
        .arg(db)
        .args(["daemon", "--poll", "0.2", "--owner", "probed"])
        .arg(format!("--metrics=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let up = |text: &Option<String>| {
        text.as_deref()
            .and_then(|t| metric(t, "everblog_database_up"))
    };
    wait_for("/readyz", Duration::from_secs(30), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            && raw_get(port, "/readyz").0 == 200
    });
    assert_eq!(up(&scrape(port)), Some(1.0));

    cluster.stop();
    wait_for("/readyz to say 503", Duration::from_secs(20), || {
        raw_get(port, "/readyz").0 == 503
    });
    let (_, answer) = raw_get(port, "/readyz");
    assert!(
        answer.contains("not ready: the database does not answer"),
        "{answer}"
    );
    assert_eq!(raw_get(port, "/healthz").0, 200);
    wait_for("everblog_database_up 0", Duration::from_secs(30), || {
        up(&scrape(port)) == Some(0.0)
    });

    cluster.start_again();
    wait_for("/readyz to say 200 again", Duration::from_secs(30), || {
        raw_get(port, "/readyz").0 == 200
    });
    wait_for("everblog_database_up 1", Duration::from_secs(30), || {
        up(&scrape(port)) == Some(1.0)
    });
    assert!(terminate(d).success());
}
