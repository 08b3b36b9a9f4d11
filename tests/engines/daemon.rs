//! The service (`archive daemon`) with real processes on a real database: two daemons share the
//! NewCrawl jobs of three blogs without running one twice; `kill -9` in the middle of a crawl
//! loses nothing (another daemon takes the job when its lease expires and resumes it); SIGTERM
//! stops taking jobs and gives the running one back.

use crate::common::*;
use everblog::fixture_server::{Hook, Root, Server};
use everblog::store::DatabaseSettings;
use everblog::store::{JobKind, JobState, Store};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// The NewCrawl jobs (each finished one queues its blog's UpdateCrawl).
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

#[test]
fn two_daemons_share_the_work_and_run_no_job_twice() {
    let blogs: Vec<Blog> = ["pelican", "hexo", "nikola"]
        .into_iter()
        .map(serve)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    for b in &blogs {
        ok(&archive(&db, &["add", &b.feed_url()]));
    }
    let (a, b) = (daemon(&db, "worker-a", "10"), daemon(&db, "worker-b", "10"));
    wait_for(
        "three NewCrawl jobs to finish",
        Duration::from_secs(180),
        || all_done(&db, 3),
    );
    assert!(terminate(a).success());
    assert!(terminate(b).success());
    for j in new_crawls(&db) {
        assert_eq!((j.state, j.attempts), (JobState::Done, 1), "{j:?}");
        assert!(
            matches!(j.owner.as_deref(), Some("worker-a" | "worker-b")),
            "{j:?}"
        );
    }
    let want: usize = blogs
        .iter()
        .map(|b| b.truth["posts"].as_array().unwrap().len())
        .sum();
    assert_eq!(ok(&archive(&db, &["export"])).lines().count(), want);
    let status = ok(&archive(&db, &["status"]));
    // Each finished NewCrawl queued its blog's first UpdateCrawl, due in an hour or more.
    assert!(
        status.contains("3 queued · 0 running · 3 done · 0 failed"),
        "{status}"
    );
    assert_eq!(status.matches("update-crawl queued").count(), 3, "{status}");
}

/// The Nikola blog, answering each page after `delay` so a crawl lasts a few seconds.
fn slow_nikola(delay: Duration) -> (Server, serde_json::Value) {
    let dir = fixture_dir("nikola");
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).unwrap()).unwrap();
    let hook: Hook = Box::new(move |_| {
        std::thread::sleep(delay);
        None
    });
    let server = Server::start_with(
        Root::Disk(dir.join("site")),
        truth["base_url"].as_str().map(str::to_string),
        Some(hook),
    )
    .unwrap();
    (server, truth)
}

fn posts(db: &Path) -> u64 {
    Store::open(&DatabaseSettings::at(db))
        .ok()
        .and_then(|s| {
            s.blogs().ok().and_then(|b| {
                b.first()
                    .map(|b| s.counts(b.id).map(|c| c.posts).unwrap_or(0))
            })
        })
        .unwrap_or(0)
}

#[test]
fn kill_9_mid_crawl_loses_nothing() {
    let (server, truth) = slow_nikola(Duration::from_millis(60));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(
        &db,
        &[
            "add",
            &format!("{}{}", server.origin, truth["feed_path"].as_str().unwrap()),
        ],
    ));
    let mut first = daemon(&db, "doomed", "2");
    wait_for("the first posts", Duration::from_secs(60), || {
        posts(&db) >= 12
    });
    first.kill().unwrap(); // SIGKILL: no cleanup, the lease stays until it expires
    first.wait().unwrap();
    let before = posts(&db);
    assert!(
        before < 36,
        "the crawl finished before the kill; slow the server down"
    );
    let metrics = free_port();
    let second = archive_command()
        .arg("--db")
        .arg(&db)
        .args([
            "daemon", "--poll", "0.1", "--lease", "2", "--owner", "rescuer",
        ])
        .arg(format!("--metrics=127.0.0.1:{metrics}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(
        "the job to be finished by the second daemon",
        Duration::from_secs(120),
        || all_done(&db, 1),
    );
    // Its metrics say it took a job from a dead worker and kept its own lease.
    let text = scrape(metrics).expect("the rescuer's /metrics");
    assert_eq!(
        metric(
            &text,
            r#"everblog_jobs_taken_again_total{kind="new-crawl"}"#
        ),
        Some(1.0),
        "{text}"
    );
    assert!(
        metric(&text, r#"everblog_lease_renewals_total{result="renewed"}"#)
            .is_some_and(|n| n >= 1.0),
        "{text}"
    );
    assert!(terminate(second).success());
    let job = &new_crawls(&db)[0];
    assert_eq!((job.attempts, job.owner.as_deref()), (2, Some("rescuer")));
    let export = ok(&archive(&db, &["export"]));
    let urls: std::collections::HashSet<String> = export
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["url"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        (export.lines().count(), urls.len()),
        (36, 36),
        "lost or duplicated posts"
    );
}

#[test]
fn sigterm_gives_the_running_job_back() {
    let (server, truth) = slow_nikola(Duration::from_millis(60));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(
        &db,
        &[
            "add",
            &format!("{}{}", server.origin, truth["feed_path"].as_str().unwrap()),
        ],
    ));
    let d = daemon(&db, "polite", "30");
    wait_for("the first posts", Duration::from_secs(60), || {
        posts(&db) >= 12
    });
    let started = Instant::now();
    assert!(terminate(d).success());
    assert!(started.elapsed() < Duration::from_secs(20));
    let job = new_crawls(&db)[0].clone();
    assert_eq!(
        (job.state, job.owner.as_deref()),
        (JobState::Queued, None),
        "{job:?}"
    );
    // Any worker, here the foreground command, resumes it.
    let out = ok(&archive(&db, &["crawl"]));
    assert!(out.contains("crawl complete"), "{out}");
    assert_eq!(ok(&archive(&db, &["export"])).lines().count(), 36);
}

#[test]
fn daemon_tells_systemd_ready_watchdog_and_stopping() {
    use std::os::unix::net::UnixDatagram;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let sock_path = dir.path().join("notify.sock");
    let sock = UnixDatagram::bind(&sock_path).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let child = archive_command()
        .arg("--db")
        .arg(&db)
        .args(["daemon", "--poll", "0.1"])
        .env("NOTIFY_SOCKET", &sock_path)
        .env("WATCHDOG_USEC", "400000")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 512];
    while !(seen.contains("READY=1") && seen.contains("WATCHDOG=1")) {
        let n = sock.recv(&mut buf).expect("a notification within 20 s");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        seen.push('\n');
    }
    assert!(terminate(child).success());
    while !seen.contains("STOPPING=1") {
        let n = sock.recv(&mut buf).expect("STOPPING=1 after SIGTERM");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
}

#[test]
fn the_systemd_units_are_hardened() {
    for name in ["everblog.service", "everblog-worker@.service"] {
        unit_is_hardened(name);
    }
}

/// `systemd/NAME` rates 2.0 or better in `systemd-analyze security` and keeps the settings
/// README.md promises.
fn unit_is_hardened(name: &str) {
    let unit = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("systemd")
        .join(name);
    let Ok(out) = Command::new("systemd-analyze")
        .args(["security", "--offline=true"])
        .arg(&unit)
        .output()
    else {
        eprintln!("skipping: systemd-analyze is not installed");
        return;
    };
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let line = text
        .lines()
        .find(|l| l.contains("Overall exposure level"))
        .unwrap_or_else(|| panic!("{text}"));
    let score: f64 = line
        .split(": ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert!(score <= 2.0, "{name}: exposure {score} > 2.0: {line}");
    let unit_text = std::fs::read_to_string(&unit).unwrap();
    for want in [
        "Type=notify",
        "DynamicUser=yes",
        "StateDirectory=everblog",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
        "CapabilityBoundingSet=",
        "MemoryMax=",
    ] {
        assert!(unit_text.contains(want), "{name} lacks {want}");
    }
}

#[test]
fn a_full_database_stops_the_daemon_and_says_why() {
    let blog = serve("pelican");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let config = dir.path().join("config.toml");
    // A size cap fails writes exactly like a full disk (SQLITE_FULL).
    write_config(
        &config,
        "[database]\nmax_size_mb = 0.4\n[daemon]\npoll = \"100ms\"\nlease = \"5s\"\n",
    )
    .unwrap();
    ok(&archive(&db, &["add", &blog.feed_url()]));
    let child = daemon_with_config(&db, &config, "cramped", Stdio::piped());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the daemon went on: {stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: the database is full") && last.contains("free space"),
        "{stderr}"
    );
    // Nothing corrupt, nothing half-written: every archived post is whole, and the crawl
    // resumes without the cap to the full blog, with no post twice.
    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    assert_eq!(store.quick_check().unwrap(), "ok");
    let before = store.posts(None).unwrap();
    assert!(before.len() < 32, "the cap was never reached");
    assert!(before.iter().all(|p| !p.content_text.is_empty()));
    drop(store);
    let out = ok(&archive(&db, &["crawl"]));
    assert!(out.contains("crawl complete"), "{out}");
    let export = ok(&archive(&db, &["export"]));
    let urls: std::collections::HashSet<&str> = export
        .lines()
        .map(|l| {
            l.split("\"url\":\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!((export.lines().count(), urls.len()), (32, 32));
}

#[test]
fn the_size_cap_holds_for_a_foreground_crawl_too() {
    // `[database] max_size_mb` reaches every store a command opens, not only the daemon's.
    let blog = serve("pelican");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let config = dir.path().join("config.toml");
    write_config(&config, "[database]\nmax_size_mb = 0.4\n").unwrap();
    ok(&archive(&db, &["add", &blog.feed_url()]));
    let out = archive_command()
        .arg("--db")
        .arg(&db)
        .arg("--config")
        .arg(&config)
        .arg("crawl")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "the crawl wrote past the cap: {stderr}"
    );
    assert!(stderr.contains("full"), "{stderr}");
    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    assert_eq!(store.quick_check().unwrap(), "ok");
    let posts = store.posts(None).unwrap();
    assert!(posts.len() < 32, "the cap was never reached");
    assert!(std::fs::metadata(&db).unwrap().len() <= 420 * 1024);
}

#[test]
fn politeness_holds_across_daemons() {
    // Two blogs on one host, crawled by two daemons at once: the host's requests stay at least
    // the configured delay apart, whichever daemon sends them.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    std::fs::create_dir_all(&root).unwrap();
    let blogs = [("pelican", "feeds/all.rss.xml"), ("nikola", "rss.xml")];
    for (name, _) in blogs {
        assert!(Command::new("cp")
            .arg("-r")
            .arg(fixture_dir(name).join("site"))
            .arg(root.join(name))
            .status()
            .unwrap()
            .success());
    }
    // Other absolute links to the placeholder host stay on this server (and mostly 404).
    let server = Server::start(
        Root::Disk(root.clone()),
        Some("http://127.0.0.1:8000".into()),
    )
    .unwrap();
    let db = dir.path().join("a.db");
    let config = dir.path().join("config.toml");
    write_config(&config,
        "[politeness]\nloopback_delay = \"150ms\"\n[crawl]\nmax_pages = 12\n[daemon]\npoll = \"100ms\"\n",
    )
    .unwrap();
    // The two blogs live in sub-directories of one origin: their feeds point there.
    for (name, feed) in blogs {
        let path = root.join(name).join(feed);
        let text = std::fs::read_to_string(&path).unwrap().replace(
            "http://127.0.0.1:8000",
            &format!("{}/{name}", server.origin),
        );
        std::fs::write(&path, text).unwrap();
        ok(&archive(
            &db,
            &["add", &format!("{}/{name}/{feed}", server.origin)],
        ));
    }
    let mark = server.access_log().len();
    let (a, b) = (
        daemon_with_config(&db, &config, "a", Stdio::null()),
        daemon_with_config(&db, &config, "b", Stdio::null()),
    );
    wait_for("both NewCrawls", Duration::from_secs(120), || {
        all_done(&db, 2)
    });
    assert!(terminate(a).success());
    assert!(terminate(b).success());
    let owners: std::collections::HashSet<_> = new_crawls(&db)
        .into_iter()
        .filter_map(|j| j.owner)
        .collect();
    assert_eq!(
        owners.len(),
        2,
        "one daemon did both crawls; nothing was shared"
    );
    // The daemons' requests only (the `add`s ran before them).
    let log = server.access_log();
    let times: Vec<Duration> = log[mark..].iter().map(|a| a.at).collect();
    assert!(times.len() > 20, "{} requests", times.len());
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
