//! The render stage with real Chromium (Debian `chromium`, installed by `.ci/run`): a blog
//! rendered client-side from JSON, a blog whose comments live in a cross-site Disqus-like
//! iframe behind "Load more comments" and "Show more replies", and a plain blog that must not
//! be rendered. These tests need Chromium and fail (they do not skip) without it.

use crate::common::*;
use everblog::fixture_server::{Root, Server};
use everblog::store::DatabaseSettings;
use everblog::store::{JobKind, JobState, Store};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn js_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/js")
        .join(name)
}

fn truth(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(js_fixture(name).join("truth.json")).unwrap())
        .unwrap()
}

#[test]
fn a_client_rendered_blog_is_rendered_and_archived_completely() {
    let t = truth("spa");
    let server = Server::start(
        Root::Disk(js_fixture("spa/site")),
        t["base_url"].as_str().map(str::to_string),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let feed = format!("{}{}", server.origin, t["feed_path"].as_str().unwrap());
    ok(&archive(&db, &["add", &feed]));
    let out = ok(&archive(&db, &["crawl"]));
    assert!(out.contains("crawl complete"), "{out}");
    let blog = Store::open(&DatabaseSettings::at(&db))
        .unwrap()
        .blogs()
        .unwrap()[0]
        .clone();
    assert_eq!(
        blog.renders.map(|r| r.as_str()),
        Some("all"),
        "{:?}",
        blog.render_reason
    );
    let s = score(&t, &ok(&archive(&db, &["export"])));
    assert_eq!(
        (s.found, s.article_ok, s.title_ok, s.false_positives),
        (s.posts, s.posts, s.posts, 0),
        "{:?}",
        s.failures
    );
}

#[test]
fn comments_in_a_cross_site_iframe_behind_load_more_are_archived() {
    let t = truth("disqus-like");
    // The comment host is `localhost` (another site than 127.0.0.1), like disqus.com.
    let comments = Server::start(Root::Disk(js_fixture("disqus-like/comments")), None).unwrap();
    let comments_origin = comments.origin.replace("127.0.0.1", "localhost");
    let blog = Server::start_full(
        Root::Disk(js_fixture("disqus-like/blog")),
        t["base_url"].as_str().map(str::to_string),
        vec![("http://localhost:8001".into(), comments_origin)],
        None,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let feed = format!("{}{}", blog.origin, t["feed_path"].as_str().unwrap());
    ok(&archive(&db, &["add", &feed]));
    ok(&archive(&db, &["crawl"]));
    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    let b = store.blogs().unwrap()[0].clone();
    assert_eq!(
        b.renders.map(|r| r.as_str()),
        Some("posts"),
        "{:?}",
        b.render_reason
    );
    let s = score(&t, &ok(&archive(&db, &["export"])));
    assert_eq!(
        (s.found, s.article_ok, s.title_ok),
        (s.posts, s.posts, s.posts),
        "{:?}",
        s.failures
    );
    let (found, total, missing) = comment_recall(&store, &blog.origin, &t);
    eprintln!("disqus-like: {found} of {total} comments");
    assert!(total >= 100);
    assert!(
        found * 100 >= total * 95,
        "{found} of {total} comments archived; missing: {missing:?}"
    );
}

/// The pages rendered, as the crawl summary counts them.
fn pages_rendered(summary: &str) -> u64 {
    let at = summary
        .find(" pages rendered")
        .expect("summary counts renderings");
    summary[..at]
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a count")
}

/// Plain blogs are not rendered: one whose pages run no script is never rendered at all; one
/// whose pages run scripts (Nikola's bootblog4) has one entry page rendered once, to see that
/// no comment appears (issue 41), and no other.
#[test]
fn a_plain_blog_is_not_rendered() {
    for (name, probed) in [("pelican", 0), ("nikola", 1)] {
        let b = serve(name);
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("a.db");
        ok(&archive(&db, &["add", &b.feed_url()]));
        let out = ok(&archive(&db, &["crawl"]));
        assert_eq!(pages_rendered(&out), probed, "{name}: {out}");
        let blog = Store::open(&DatabaseSettings::at(&db))
            .unwrap()
            .blogs()
            .unwrap()[0]
            .clone();
        assert_eq!(
            blog.renders.map(|r| r.as_str()),
            Some("none"),
            "{name}: {:?}",
            blog.render_reason
        );
        let reason = blog.render_reason.unwrap_or_default();
        assert!(reason.starts_with("no comments"), "{name}: {reason}");
    }
}

/// The Isso fixture blog on a test server, and a real Isso server (PyPI) on a free port seeded
/// through its HTTP API (it answers CORS for the blog), its state under `dir`.
fn serve_isso(t: &Value, dir: &Path) -> (Server, Isso, u16) {
    let isso_port = free_port();
    let blog = Server::start_full(
        Root::Disk(js_fixture("isso/blog")),
        t["base_url"].as_str().map(str::to_string),
        vec![(
            "http://127.0.0.1:8002".into(),
            format!("http://127.0.0.1:{isso_port}"),
        )],
        None,
    )
    .unwrap();
    let isso = start_isso(
        &js_fixture("isso/start.sh"),
        &dir.join("isso"),
        isso_port,
        &blog.origin,
    );
    (blog, isso, isso_port)
}

#[test]
fn real_isso_comments_behind_hidden_links_are_archived() {
    let t = truth("isso");
    let dir = tempfile::tempdir().unwrap();
    let (blog, _isso, _) = serve_isso(&t, dir.path());
    let db = dir.path().join("a.db");
    let feed = format!("{}{}", blog.origin, t["feed_path"].as_str().unwrap());
    ok(&archive(&db, &["add", &feed]));
    ok(&archive(&db, &["crawl"]));
    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    let b = store.blogs().unwrap()[0].clone();
    assert_eq!(
        b.renders.map(|r| r.as_str()),
        Some("posts"),
        "{:?}",
        b.render_reason
    );
    let s = score(&t, &ok(&archive(&db, &["export"])));
    assert_eq!(
        (s.found, s.article_ok, s.title_ok),
        (s.posts, s.posts, s.posts),
        "{:?}",
        s.failures
    );
    let (found, total, missing) = comment_recall(&store, &blog.origin, &t);
    eprintln!("isso: {found} of {total} comments");
    assert!(total >= 50);
    assert!(
        found * 100 >= total * 95,
        "{found} of {total} comments archived; missing: {missing:?}"
    );
}

#[test]
fn the_daemon_renders_a_javascript_blog_too() {
    let t = truth("spa");
    let server = Server::start(
        Root::Disk(js_fixture("spa/site")),
        t["base_url"].as_str().map(str::to_string),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let feed = format!("{}{}", server.origin, t["feed_path"].as_str().unwrap());
    ok(&archive(&db, &["add", &feed]));
    let daemon = archive_command()
        .arg("--db")
        .arg(&db)
        .args(["daemon", "--poll", "0.1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the NewCrawl", std::time::Duration::from_secs(120), || {
        Store::open(&DatabaseSettings::at(&db))
            .ok()
            .and_then(|s| s.jobs(10).ok())
            .is_some_and(|j| {
                j.iter()
                    .any(|j| j.kind == JobKind::NewCrawl && j.state == JobState::Done)
            })
    });
    assert!(terminate(daemon).success());
    let s = score(&t, &ok(&archive(&db, &["export"])));
    assert_eq!(
        (s.found, s.article_ok, s.title_ok),
        (s.posts, s.posts, s.posts),
        "{:?}",
        s.failures
    );
}

/// Comments keep arriving on old posts, out of the feed: a comment posted to Isso after the
/// NewCrawl, on the oldest post, is archived by the next UpdateCrawl's scheduled comment check,
/// which renders the post again (the widget has no comment feed).
#[test]
fn a_widget_comment_on_an_old_post_is_archived_by_a_scheduled_check() {
    let t = truth("isso");
    let dir = tempfile::tempdir().unwrap();
    let (blog, _isso, isso_port) = serve_isso(&t, dir.path());
    let db = dir.path().join("a.db");
    let config = dir.path().join("c.toml");
    write_config(
        &config,
        "[update]\ncomment_checks = [\"0s\"]\nmax_comment_checks = 100\n",
    )
    .unwrap();
    let cfg = config.to_str().unwrap();
    let feed = format!("{}{}", blog.origin, t["feed_path"].as_str().unwrap());
    ok(&archive(&db, &["--config", cfg, "add", &feed]));
    ok(&archive(&db, &["--config", cfg, "crawl"]));
    let oldest = t["posts"].as_array().unwrap().last().unwrap()["path"]
        .as_str()
        .unwrap()
        .to_string();
    let post = format!("{}{oldest}", blog.origin);
    let before = Store::open(&DatabaseSettings::at(&db))
        .unwrap()
        .comments(&post)
        .unwrap()
        .len();

    // A reader comments through Isso's own HTTP API, as its widget does.
    let text = "Coming back to this years later: the drone brood advice still holds.";
    let body = serde_json::json!({"text": text, "author": "Late Reader", "title": "x"});
    let posted = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, urllib.request, urllib.parse\n\
             url = 'http://127.0.0.1:%s/new?uri=%s' % (sys.argv[1], urllib.parse.quote(sys.argv[2]))\n\
             req = urllib.request.Request(url, data=sys.argv[3].encode(), method='POST', headers={'Content-Type': 'application/json'})\n\
             print(urllib.request.urlopen(req, timeout=30).status)",
        )
        .args([&isso_port.to_string(), &oldest, &body.to_string()])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&posted.stdout).trim(),
        "201",
        "{}",
        String::from_utf8_lossy(&posted.stderr)
    );

    let update = ok(&archive(&db, &["--config", cfg, "update"]));
    assert!(update.contains("older posts checked"), "{update}");
    // Every post was due, but the widget's data said only one thread changed: one page was
    // rendered again, not every post (issue 41).
    assert_eq!(pages_rendered(&update), 1, "{update}");
    let comments = Store::open(&DatabaseSettings::at(&db))
        .unwrap()
        .comments(&post)
        .unwrap();
    assert_eq!(comments.len(), before + 1, "{update}");
    assert!(
        comments
            .iter()
            .any(|c| c.author.as_deref() == Some("Late Reader")
                && token_f1(&c.content_text, text) >= 0.9),
        "{comments:?}"
    );
}
