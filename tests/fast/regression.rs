//! Tests named after the defect they pin. Each says what went wrong before it was fixed.

use crate::common::*;
use everblog::store::DatabaseSettings;
use everblog::store::{Job, JobKind, JobState, Store};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn jobs(db: &Path) -> Vec<Job> {
    Store::open(&DatabaseSettings::at(db))
        .ok()
        .and_then(|s| s.jobs(100).ok())
        .unwrap_or_default()
}

/// (kind, state) of every job, oldest first, and the NewCrawl's outcome.
fn lifecycle(db: &Path) -> (Vec<(JobKind, JobState)>, String) {
    let mut j = jobs(db);
    j.reverse();
    let outcome = j
        .iter()
        .find(|j| j.kind == JobKind::NewCrawl)
        .and_then(|j| j.outcome.clone())
        .unwrap_or_default();
    (j.iter().map(|j| (j.kind, j.state)).collect(), outcome)
}

/// The job lifecycle was written three times with diverging policy: `archive crawl` put a
/// NewCrawl that reached its page budget back in the queue, while the daemon marked it done and
/// queued the blog's UpdateCrawl. Both now end it the same way.
#[test]
fn crawl_and_daemon_end_a_new_crawl_at_its_page_budget_alike() {
    let blog = serve("nikola");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    write_config(
        &config,
        "[crawl]\nmax_pages = 6\n[daemon]\npoll = \"100ms\"\n",
    )
    .unwrap();
    let cfg = config.to_str().unwrap();

    let foreground = dir.path().join("foreground.db");
    ok(&archive(&foreground, &["add", &blog.feed_url()]));
    let out = ok(&archive(&foreground, &["--config", cfg, "crawl"]));
    assert!(out.contains("page budget reached"), "{out}");

    let service = dir.path().join("service.db");
    ok(&archive(&service, &["add", &blog.feed_url()]));
    let d = daemon_with_config(&service, &config, "d", Stdio::null());
    wait_for("the daemon's NewCrawl", Duration::from_secs(60), || {
        jobs(&service)
            .iter()
            .any(|j| j.kind == JobKind::NewCrawl && j.state == JobState::Done)
    });
    assert!(terminate(d).success());

    let (by_crawl, crawl_outcome) = lifecycle(&foreground);
    let (by_daemon, daemon_outcome) = lifecycle(&service);
    let expected = vec![
        (JobKind::NewCrawl, JobState::Done),
        (JobKind::UpdateCrawl, JobState::Queued),
    ];
    assert_eq!(by_crawl, expected, "archive crawl");
    assert_eq!(by_daemon, expected, "archive daemon");
    for outcome in [&crawl_outcome, &daemon_outcome] {
        assert!(
            outcome.contains("page budget of 6 reached (incomplete)"),
            "{outcome}"
        );
    }
    // Still resumable in the foreground with a larger budget.
    let out = ok(&archive(&foreground, &["crawl"]));
    assert!(out.contains("crawl complete"), "{out}");
}

/// `archive crawl` had no signal handling of its own: Ctrl-C killed it mid-page and its job
/// stayed leased until the lease expired. It now stops like the daemon: the pages in flight are
/// recorded, the job goes back to the queue, the command says so and fails.
#[test]
fn ctrl_c_releases_a_foreground_crawl() {
    let blog = serve("hexo");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let config = dir.path().join("config.toml");
    write_config(&config, "[politeness]\nloopback_delay = \"150ms\"\n").unwrap();
    ok(&archive(&db, &["add", &blog.feed_url()]));
    let child = archive_command()
        .arg("--db")
        .arg(&db)
        .arg("--config")
        .arg(&config)
        .arg("crawl")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the first posts", Duration::from_secs(60), || {
        Store::open(&DatabaseSettings::at(&db))
            .ok()
            .and_then(|s| s.posts(None).ok())
            .is_some_and(|p| p.len() >= 3)
    });
    assert!(Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("crawl incomplete (stopped"), "{stdout}");
    assert!(stderr.contains("run `archive crawl` again"), "{stderr}");
    let job = jobs(&db)
        .into_iter()
        .find(|j| j.kind == JobKind::NewCrawl)
        .unwrap();
    assert_eq!((job.state, job.owner.as_deref()), (JobState::Queued, None));
    let total = blog.truth["posts"].as_array().unwrap().len();
    let out = ok(&archive(&db, &["crawl"]));
    assert!(out.contains("crawl complete"), "{out}");
    assert_eq!(ok(&archive(&db, &["export"])).lines().count(), total);
}
