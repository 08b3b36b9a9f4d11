//! Bad pages and a bad browser, with real Chromium: pages that never settle, dialogs and
//! pop-ups, pages that navigate away, a "load more" button that never goes away, an enormous
//! DOM — each bounded in time and clicks, and reported; a browser killed mid-crawl is relaunched
//! and the crawl loses nothing; `kill -9` of `archive` leaves no Chromium behind.
//! One test binary, run alone: the browser-killing tests must not hit other tests' browsers.

mod common;

/// Blogs are added as a user adds them: `--render auto` unless a test asks otherwise.
const RENDER_BY_DEFAULT: Option<&str> = None;
use common::*;
use everblog::fixture_server::{serve_dir, Root, Server};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PAGES: &[(&str, &str)] = &[
    (
        "hang.html",
        "<html><body><p>Forever changing</p><script>setInterval(() => { const d = document.createElement('div'); d.textContent = Date.now(); document.body.appendChild(d); }, 50);</script></body></html>",
    ),
    (
        "dialogs.html",
        "<html><body><script>alert('hi'); confirm('sure?'); prompt('name?'); window.open('http://127.0.0.1:1/popup'); document.write('<p>After the dialogs</p>');</script></body></html>",
    ),
    (
        "away.html",
        "<html><body><p>Leaving</p><script>setTimeout(() => { location.href = '/elsewhere.html'; }, 200);</script></body></html>",
    ),
    ("elsewhere.html", "<html><body><p>Elsewhere now</p></body></html>"),
    (
        "more.html",
        "<html><body><div id=c></div><a class='load-more__button' href='#'>Load more comments</a><script>let n = 0; document.querySelector('a').onclick = e => { e.preventDefault(); const p = document.createElement('p'); p.textContent = 'comment ' + (++n); document.getElementById('c').appendChild(p); };</script></body></html>",
    ),
    (
        "huge.html",
        "<html><body><script>const s = 'x'.repeat(1 << 20); for (let i = 0; i < 24; i++) { const p = document.createElement('p'); p.textContent = s; document.body.appendChild(p); }</script></body></html>",
    ),
];

/// The tests of this file run one at a time: one kills every everblog Chromium.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn config(dir: &Path) -> std::path::PathBuf {
    let c = dir.join("config.toml");
    write_config(
        &c,
        "[render]\ntimeout = \"20s\"\nsettle = \"2s\"\nquiet = \"300ms\"\nmax_clicks = 8\n",
    )
    .unwrap();
    c
}

fn render(config: &Path, url: &str) -> (std::process::Output, Duration) {
    let started = Instant::now();
    let out = archive_command()
        .arg("--config")
        .arg(config)
        .args(["render", url])
        .output()
        .unwrap();
    (out, started.elapsed())
}

fn chromiums() -> usize {
    let out = Command::new("pgrep")
        .args(["-f", "everblog-chromium-"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count()
}

#[test]
fn bad_pages_are_bounded_and_reported() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let site = tempfile::tempdir().unwrap();
    for (name, body) in PAGES {
        std::fs::write(site.path().join(name), body).unwrap();
    }
    let server = serve_dir(site.path(), None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path());
    let url = |p: &str| format!("{}/{p}", server.origin);

    let (out, took) = render(&cfg, &url("hang.html"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("still changing"), "{stderr}");
    assert!(took < Duration::from_secs(25), "{took:?}");

    let (out, _) = render(&cfg, &url("dialogs.html"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("After the dialogs"));

    let (out, _) = render(&cfg, &url("away.html"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("elsewhere.html"),
        "final URL recorded: {stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Elsewhere now"));

    let (out, took) = render(&cfg, &url("more.html"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("8 clicks") && stderr.contains("stopped after 8 clicks"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(25), "{took:?}");

    let (out, _) = render(&cfg, &url("huge.html"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("over the") && stderr.contains("huge.html"),
        "{stderr}"
    );
    assert_eq!(
        chromiums(),
        0,
        "Chromium left running after `archive render`"
    );
}

fn spa() -> (Server, serde_json::Value) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/js/spa");
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).unwrap()).unwrap();
    let server = Server::start(
        Root::Disk(dir.join("site")),
        truth["base_url"].as_str().map(str::to_string),
    )
    .unwrap();
    (server, truth)
}

#[test]
fn a_killed_browser_is_relaunched_and_kill_9_leaves_no_chromium() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (server, truth) = spa();
    let feed = format!("{}{}", server.origin, truth["feed_path"].as_str().unwrap());
    let dir = tempfile::tempdir().unwrap();

    // 1. Chromium killed in the middle of a crawl: relaunched, nothing lost.
    let db = dir.path().join("a.db");
    ok(&archive(&db, &["add", &feed]));
    let crawl = archive_command()
        .arg("--db")
        .arg(&db)
        .arg("crawl")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while chromiums() == 0 {
        assert!(Instant::now() < deadline, "Chromium never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1500));
    Command::new("pkill")
        .args(["-9", "-f", "everblog-chromium-"])
        .status()
        .unwrap();
    let out = crawl.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let s = score(&truth, &ok(&archive(&db, &["export"])));
    assert_eq!(
        (s.found, s.article_ok),
        (s.posts, s.posts),
        "{:?}\n{stdout}",
        s.failures
    );

    // 2. `kill -9` of archive while it renders: Chromium goes with it.
    let db = dir.path().join("b.db");
    ok(&archive(&db, &["add", &feed]));
    let mut crawl = archive_command()
        .arg("--db")
        .arg(&db)
        .arg("crawl")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while chromiums() == 0 {
        assert!(Instant::now() < deadline, "Chromium never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    crawl.kill().unwrap();
    crawl.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while chromiums() > 0 {
        assert!(
            Instant::now() < deadline,
            "{} Chromium processes outlived archive",
            chromiums()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
