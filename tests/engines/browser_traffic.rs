//! Every request a rendering browser makes goes through everblog's fetcher (issue 11, item 1):
//! robots.txt decides documents (a widget's iframe), `[robots] requisites` decides scripts,
//! per-host politeness spaces subresources too, and the page being rendered is answered from
//! the response the crawl already fetched. Against the Disqus-like fixture blog (a comment
//! widget in a cross-site iframe, `fixtures/js/disqus-like`), with real Chromium; the loopback
//! servers' own access logs are the witnesses.

use crate::common::*;
use everblog::fixture_server::{Hook, Reply, Root, Server};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn fixture(part: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/js/disqus-like")
        .join(part)
}

fn truth() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture("truth.json")).unwrap()).unwrap()
}

/// A hook answering `/robots.txt` with `text`.
fn robots(text: &'static str) -> Option<Hook> {
    Some(Box::new(move |path: &str| {
        (path == "/robots.txt").then(|| Reply {
            status: 200,
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: text.as_bytes().to_vec(),
        })
    }))
}

/// The blog on 127.0.0.1 and its comment host on `localhost` (another site), whose
/// robots.txt is `comments_robots`.
fn serve(comments_robots: &'static str) -> (Server, Server) {
    let t = truth();
    let comments = Server::start_with(
        Root::Disk(fixture("comments")),
        None,
        robots(comments_robots),
    )
    .unwrap();
    let comments_origin = comments.origin.replace("127.0.0.1", "localhost");
    let blog = Server::start_full(
        Root::Disk(fixture("blog")),
        t["base_url"].as_str().map(str::to_string),
        vec![("http://localhost:8001".into(), comments_origin)],
        None,
    )
    .unwrap();
    (blog, comments)
}

/// The counts of the crawl summary's browser line: (requests, blocked).
fn browser_counts(summary: &str) -> (u64, u64) {
    let line = summary
        .lines()
        .find(|l| l.trim_start().starts_with("browser requests:"))
        .unwrap_or_else(|| panic!("no browser line in:\n{summary}"));
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    (numbers[0], numbers[3])
}

fn paths(server: &Server) -> Vec<String> {
    server.access_log().into_iter().map(|a| a.path).collect()
}

#[test]
fn robots_txt_decides_the_documents_a_rendering_browser_may_load() {
    let t = truth();
    // The widget's iframe (/embed/comments/…) is a document: robots.txt decides it even though
    // the embed script, a requisite, is fetched by default (`requisites = "ignore"`).
    let (blog, comments) = serve("User-agent: *\nDisallow: /embed/\n");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let feed = format!("{}{}", blog.origin, t["feed_path"].as_str().unwrap());
    ok(&archive(&db, &["add", &feed]));
    let out = ok(&archive(&db, &["crawl"]));
    let seen = paths(&comments);
    assert!(
        seen.iter().any(|p| p == "/embed.js"),
        "the embed script was never fetched: {seen:?}"
    );
    assert!(
        !seen.iter().any(|p| p.starts_with("/embed/")),
        "a disallowed iframe document reached the server: {seen:?}"
    );
    let (requests, blocked) = browser_counts(&out);
    assert!(requests > 0 && blocked > 0, "{out}");
    // The page being rendered is answered from the crawl's own response: one request per post.
    let log = paths(&blog);
    for p in t["posts"].as_array().unwrap() {
        let path = p["path"].as_str().unwrap();
        let n = log.iter().filter(|l| *l == path).count();
        assert_eq!(n, 1, "{path} requested {n} times: {log:?}");
    }
    // The posts are archived all the same (their text is in the raw HTML).
    let s = score(&t, &ok(&archive(&db, &["export"])));
    assert_eq!(
        (s.found, s.article_ok),
        (s.posts, s.posts),
        "{:?}",
        s.failures
    );
}

#[test]
fn with_requisites_obeyed_a_disallowed_script_never_reaches_its_server() {
    let t = truth();
    let (blog, comments) = serve("User-agent: *\nDisallow: /embed.js\n");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let config = dir.path().join("c.toml");
    write_config(&config, "[robots]\nrequisites = \"obey\"\n").unwrap();
    let cfg = config.to_str().unwrap();
    let feed = format!("{}{}", blog.origin, t["feed_path"].as_str().unwrap());
    ok(&archive(&db, &["--config", cfg, "add", &feed]));
    let out = ok(&archive(&db, &["--config", cfg, "crawl"]));
    let seen = paths(&comments);
    assert!(
        seen.iter().any(|p| p == "/robots.txt"),
        "robots.txt of the comment host was not read: {seen:?}"
    );
    assert!(
        !seen.iter().any(|p| p.starts_with("/embed")),
        "a script robots.txt disallows reached the server: {seen:?}"
    );
    let (_, blocked) = browser_counts(&out);
    assert!(
        blocked > 0,
        "the summary does not count the blocked script:\n{out}"
    );
}

#[test]
fn politeness_spaces_the_browsers_requests_to_each_host() {
    let t = truth();
    let (blog, comments) = serve("User-agent: *\nAllow: /\n");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    write_config(&config, "[politeness]\nloopback_delay = \"300ms\"\n").unwrap();
    let posts = t["posts"].as_array().unwrap();
    let urls: Vec<String> = posts[..2]
        .iter()
        .map(|p| format!("{}{}", blog.origin, p["path"].as_str().unwrap()))
        .collect();
    let out = archive_command()
        .arg("--config")
        .arg(&config)
        .arg("render")
        .args(&urls)
        .output()
        .unwrap();
    let stdout = ok(&out);
    assert!(!stdout.contains("error"), "{stdout}");
    for (name, server) in [("blog", &blog), ("comments", &comments)] {
        let log = server.access_log();
        assert!(log.len() >= 3, "{name}: only {log:?}");
        for pair in log.windows(2) {
            let gap = pair[1].at.saturating_sub(pair[0].at);
            assert!(
                gap >= Duration::from_millis(250),
                "{name}: {} then {} after {gap:?} (politeness asks 300 ms)",
                pair[0].path,
                pair[1].path
            );
        }
    }
}
