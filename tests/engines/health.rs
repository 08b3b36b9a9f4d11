//! What an operator's tools read from a running daemon (issue 44): `/metrics` scraped by a real
//! Prometheus (Debian's `prometheus`) and checked by `promtool check metrics`, `/healthz` and
//! `/readyz`, `archive status --json`, the same routes in `archive serve`, and an alert raised
//! for a failing blog, told to `[alerts] command` once and shown everywhere.

use crate::common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A program on `PATH`, or `None` (the test says it skips that part).
fn program(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| std::path::Path::new(d).join(name))
        .find(|p| p.is_file())
}

#[test]
fn the_daemons_metrics_are_scraped_by_prometheus_and_pass_promtool() {
    let blog = serve("hexo");
    let posts = blog.truth["posts"].as_array().unwrap().len() as f64;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(&db, &["add", &blog.feed_url()]));
    let port = free_port();
    let config = dir.path().join("config.toml");
    write_config(
        &config,
        format!("[daemon]\npoll = \"100ms\"\nmetrics = \"127.0.0.1:{port}\"\n"),
    )
    .unwrap();
    let daemon = daemon_with_config(&db, &config, "metered", Stdio::null());
    wait_for("/healthz", Duration::from_secs(20), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            && raw_get(port, "/healthz").0 == 200
    });
    assert_eq!(raw_get(port, "/readyz").0, 200);
    let mut text = String::new();
    wait_for("the NewCrawl in /metrics", Duration::from_secs(120), || {
        text = scrape(port).unwrap_or_default();
        metric(
            &text,
            r#"everblog_jobs_finished_total{kind="new-crawl",outcome="done"}"#,
        ) == Some(1.0)
            && metric(&text, "everblog_posts") == Some(posts)
    });
    for (series, at_least) in [
        (r#"everblog_fetches_total{class="2xx"}"#, posts),
        ("everblog_fetched_bytes_total", 10_000.0),
        ("everblog_stored_bytes_total", 1_000.0),
        ("everblog_fetch_duration_seconds_count", posts),
        ("everblog_politeness_wait_seconds_count", posts),
        (r#"everblog_jobs_taken_total{kind="new-crawl"}"#, 1.0),
        ("everblog_blogs", 1.0),
        ("everblog_database_bytes", 10_000.0),
        ("everblog_database_up", 1.0),
        (r#"everblog_blogs_updated_within{window="1h"}"#, 1.0),
        (
            r#"everblog_jobs_open{kind="update-crawl",state="queued"}"#,
            1.0,
        ),
    ] {
        let v = metric(&text, series);
        assert!(
            v.is_some_and(|v| v >= at_least),
            "{series} = {v:?}, expected at least {at_least}:\n{text}"
        );
    }
    assert_eq!(metric(&text, "everblog_blogs_never_updated"), Some(0.0));
    // No series names a blog, a host or a page.
    assert!(!text.contains("127.0.0.1"), "{text}");

    match program("promtool") {
        Some(promtool) => {
            let mut check = Command::new(promtool)
                .args(["check", "metrics"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            check
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
            let out = check.wait_with_output().unwrap();
            assert!(
                out.status.success() && out.stdout.is_empty(),
                "promtool check metrics: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        None => eprintln!("SKIP promtool: not installed (Debian's prometheus; .ci/setup --tests)"),
    }
    match program("prometheus") {
        Some(prometheus) => scraped_by_prometheus(&prometheus, port, dir.path(), posts),
        None => {
            eprintln!("SKIP Prometheus: not installed (Debian's prometheus; .ci/setup --tests)")
        }
    }
    // The same, for scripts.
    let status: serde_json::Value =
        serde_json::from_str(&ok(&archive(&db, &["status", "--json"]))).unwrap();
    assert_eq!(
        status["blogs"][0]["posts"].as_f64(),
        Some(posts),
        "{status}"
    );
    assert_eq!(
        status["blogs"][0]["coverage"]["posts_archived"].as_f64(),
        Some(posts)
    );
    assert_eq!(status["latest_jobs"]["done"], 1, "{status}");
    assert_eq!(status["jobs"][0]["kind"], "update-crawl", "{status}");
    assert!(terminate(daemon).success());
}

/// A real Prometheus scrapes the daemon every second; its query API then answers what
/// `/metrics` said.
fn scraped_by_prometheus(
    prometheus: &std::path::Path,
    port: u16,
    dir: &std::path::Path,
    posts: f64,
) {
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: everblog\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
        ),
    )
    .unwrap();
    let web = free_port();
    let child = Command::new(prometheus)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("tsdb").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{web}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _running = Serving(Some(child));
    let query = |q: &str| -> Option<f64> {
        std::net::TcpStream::connect(("127.0.0.1", web)).ok()?;
        let (status, answer) = raw_get(web, &format!("/api/v1/query?query={}", url_encode(q)));
        let body = answer.split_once("\r\n\r\n")?.1;
        let v: serde_json::Value = serde_json::from_str(body).ok()?;
        (status == 200).then_some(())?;
        v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
    };
    wait_for(
        "Prometheus to scrape the daemon",
        Duration::from_secs(60),
        || query(r#"up{job="everblog"}"#) == Some(1.0) && query("everblog_posts").is_some(),
    );
    assert_eq!(query("everblog_posts"), Some(posts));
    assert!(query(r#"sum(everblog_fetches_total{class="2xx"})"#).is_some_and(|v| v >= posts));
    assert!(query(
        "histogram_quantile(0.99, sum by (le) (everblog_fetch_duration_seconds_bucket))"
    )
    .is_some_and(|v| v > 0.0));
}

#[test]
fn the_reader_serves_health_to_anyone_and_metrics_behind_its_credentials() {
    let blog = serve("hexo");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(&db, &["add", &blog.feed_url()]));
    let (_serving, port) = serve_archive(&db, &loopback_config(), &[]);
    assert_eq!(raw_get(port, "/healthz").0, 200);
    assert_eq!(raw_get(port, "/readyz").0, 200);
    let text = scrape(port).expect("/metrics");
    assert_eq!(metric(&text, "everblog_blogs"), Some(1.0), "{text}");
    assert_eq!(metric(&text, "everblog_posts"), Some(0.0), "{text}");
    assert_eq!(
        metric(
            &text,
            r#"everblog_jobs_open{kind="new-crawl",state="queued"}"#
        ),
        Some(1.0),
        "{text}"
    );
}

/// A blog whose every answer is 500 fails its NewCrawl; the daemon raises "failing" once, runs
/// `[alerts] command` with it as JSON, and status, the reader's home page and `/metrics` show
/// it; Prometheus's rules for everblog load (`promtool check rules`).
#[test]
fn a_failing_blog_raises_an_alert_that_runs_the_command_once() {
    use everblog::fixture_server::{Hook, Reply, Root, Server};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let dir_of = fixture_dir("hexo");
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir_of.join("truth.json")).unwrap()).unwrap();
    let broken = Arc::new(AtomicBool::new(false));
    let hook: Hook = {
        let broken = Arc::clone(&broken);
        Box::new(move |_| {
            broken.load(Ordering::Relaxed).then(|| Reply {
                status: 500,
                headers: vec![],
                body: b"down".to_vec(),
            })
        })
    };
    let server = Server::start_with(
        Root::Disk(dir_of.join("site")),
        truth["base_url"].as_str().map(str::to_string),
        Some(hook),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let feed = format!("{}{}", server.origin, truth["feed_path"].as_str().unwrap());
    ok(&archive(&db, &["add", &feed]));
    broken.store(true, Ordering::Relaxed);

    let told = dir.path().join("told.jsonl");
    let script = dir.path().join("notify.sh");
    std::fs::write(&script, format!("#!/bin/sh\ncat >> '{}'\n", told.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let port = free_port();
    let config = dir.path().join("config.toml");
    write_config(
        &config,
        format!(
            "[daemon]\npoll = \"100ms\"\nmetrics = \"127.0.0.1:{port}\"\n\
             [alerts]\nevery = \"1s\"\nfailing_after = 1\ncommand = [\"{}\"]\n",
            script.display()
        ),
    )
    .unwrap();
    let daemon = daemon_with_config(&db, &config, "alerting", Stdio::null());
    wait_for("the alert command", Duration::from_secs(120), || {
        std::fs::read_to_string(&told).is_ok_and(|t| t.contains("\"failing\""))
    });
    // Sweeps go on; the alert stays open and is not told again.
    wait_for(
        "everblog_alerts in /metrics",
        Duration::from_secs(40),
        || {
            scrape(port)
                .is_some_and(|t| metric(&t, r#"everblog_alerts{kind="failing"}"#) == Some(1.0))
        },
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&told)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["kind"], "failing");
    assert_eq!(
        lines[0]["blog"],
        format!("{}/", server.origin),
        "{}",
        lines[0]
    );
    assert!(
        lines[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("1 job failed in a row; last error:"),
        "{}",
        lines[0]
    );
    assert!(terminate(daemon).success());

    let status: serde_json::Value =
        serde_json::from_str(&ok(&archive(&db, &["status", "--json"]))).unwrap();
    assert_eq!(status["alerts"][0]["kind"], "failing", "{status}");
    assert!(ok(&archive(&db, &["status"])).starts_with("alerts (1)\n  failing "));
    let (_serving, reader) = serve_archive(&db, &loopback_config(), &[]);
    let (code, home) = raw_get(reader, "/");
    assert_eq!(code, 200);
    assert!(
        home.contains("Alerts (1)") && home.contains("1 job failed in a row"),
        "{home}"
    );

    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("systemd/everblog.rules.yml");
    match program("promtool") {
        Some(promtool) => {
            let out = Command::new(promtool)
                .args(["check", "rules"])
                .arg(&rules)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        None => eprintln!("SKIP promtool: not installed (Debian's prometheus; .ci/setup --tests)"),
    }
}
