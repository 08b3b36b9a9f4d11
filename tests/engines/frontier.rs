//! The polite, prioritised frontier (paper §4.3): on a large site with a blog inside it, the kNN
//! frontier finds every post with far fewer fetches than breadth-first; robots.txt rules,
//! Crawl-delay and Retry-After are obeyed (checked from the server's access log); sitemaps seed
//! posts; traps and bad links are bounded and never stop the crawl.

use crate::common::*;
use everblog::fixture_server::{Hook, Reply, Root, Server};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn build_mixed(with_sitemap: bool) -> (tempfile::TempDir, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/mixed/build.sh");
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(script);
    if with_sitemap {
        cmd.arg("--with-sitemap");
    }
    let out = cmd.arg(dir.path()).output().unwrap();
    assert!(
        out.status.success(),
        "fixtures/mixed/build.sh failed (it installs Debian's postgresql-doc-15): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let truth =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("truth.json")).unwrap())
            .unwrap();
    (dir, truth)
}

/// The number printed just before `label` (e.g. "156 blocked by robots.txt").
fn number_before(text: &str, label: &str) -> u64 {
    let i = text
        .find(label)
        .unwrap_or_else(|| panic!("{label:?} not in {text}"));
    text[..i]
        .trim_end()
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// The number printed just after `label` (e.g. "last new post at page 65").
fn number_after(text: &str, label: &str) -> u64 {
    let i = text
        .find(label)
        .unwrap_or_else(|| panic!("{label:?} not in {text}"))
        + label.len();
    text[i..]
        .trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Crawls the mixed site from its root; returns (crawl output, export).
fn crawl_mixed(server: &Server, truth: &serde_json::Value, args: &[&str]) -> (String, String) {
    let db_dir = tempfile::tempdir().unwrap();
    let db = db_dir.path().join("a.db");
    let feed = format!("{}{}", server.origin, truth["feed_path"].as_str().unwrap());
    ok(&archive(
        &db,
        &["add", &feed, "--start", &format!("{}/", server.origin)],
    ));
    let mut crawl = vec!["crawl"];
    crawl.extend_from_slice(args);
    let out = ok(&archive(&db, &crawl));
    (out, ok(&archive(&db, &["export"])))
}

#[test]
fn knn_finds_every_post_with_a_third_of_breadth_first_fetches() {
    let (dir, truth) = build_mixed(false);
    let server = Server::start(
        Root::Disk(dir.path().join("site")),
        truth["base_url"].as_str().map(str::to_string),
    )
    .unwrap();
    let posts = truth["posts"].as_array().unwrap().len();
    let (knn, knn_export) = crawl_mixed(&server, &truth, &["--frontier", "knn", "--patience", "0"]);
    let (bfs, _) = crawl_mixed(&server, &truth, &["--frontier", "bfs", "--patience", "0"]);
    assert_eq!(knn_export.lines().count(), posts, "{knn}");
    let s = score(&truth, &knn_export);
    assert_eq!((s.found, s.false_positives), (posts, 0), "{:?}", s.failures);
    let (k, b) = (
        number_after(&knn, "last new post at page"),
        number_after(&bfs, "last new post at page"),
    );
    eprintln!(
        "pages until every post was archived: kNN {k}, breadth-first {b} (site: {} pages)",
        truth["site_pages"]
    );
    assert!(k * 3 <= b, "kNN needed {k} pages, breadth-first {b}");
    // robots.txt: nothing under a disallowed prefix was requested, and the skips were counted.
    let disallowed: Vec<String> = truth["disallowed_prefixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    for a in server.access_log() {
        assert!(
            !disallowed.iter().any(|d| a.path.starts_with(d.as_str())),
            "{} was fetched despite robots.txt",
            a.path
        );
    }
    assert!(number_before(&knn, " blocked by robots.txt") > 0, "{knn}");
    // The yield-based stop: by default the crawl ends long before the whole site, posts complete.
    let (default, default_export) = crawl_mixed(&server, &truth, &[]);
    assert_eq!(default_export.lines().count(), posts, "{default}");
    let fetched = number_before(&default, " pages fetched");
    assert!(fetched < truth["site_pages"].as_u64().unwrap(), "{default}");
}

#[test]
fn sitemaps_seed_the_posts() {
    let (dir, truth) = build_mixed(true);
    let server = Server::start(
        Root::Disk(dir.path().join("site")),
        truth["base_url"].as_str().map(str::to_string),
    )
    .unwrap();
    let (out, export) = crawl_mixed(&server, &truth, &[]);
    let posts = truth["posts"].as_array().unwrap().len() as u64;
    assert_eq!(number_before(&out, " posts from sitemaps"), posts, "{out}");
    assert_eq!(export.lines().count() as u64, posts);
}

fn reply(status: u16, headers: &[(&str, &str)], body: &str) -> Option<Reply> {
    Some(Reply {
        status,
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        body: body.as_bytes().to_vec(),
    })
}

/// The Nikola fixture with a hook in front of it.
fn nikola_with(hook: Hook) -> (Server, serde_json::Value) {
    let dir = fixture_dir("nikola");
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).unwrap()).unwrap();
    let server = Server::start_with(
        Root::Disk(dir.join("site")),
        truth["base_url"].as_str().map(str::to_string),
        Some(hook),
    )
    .unwrap();
    (server, truth)
}

#[test]
fn crawl_delay_disallow_and_retry_after_are_obeyed() {
    let victim = "/posts/12-things-about-the-soup/";
    let refused = Arc::new(AtomicBool::new(false));
    let refused2 = refused.clone();
    let hook: Hook = Box::new(move |path| match path {
        "/robots.txt" => reply(
            200,
            &[("Content-Type", "text/plain")],
            "User-agent: *\nDisallow: /authors/\nCrawl-delay: 0.1\n",
        ),
        p if p == victim && !refused2.swap(true, Ordering::SeqCst) => {
            reply(429, &[("Retry-After", "1")], "slow down")
        }
        _ => None,
    });
    let (server, truth) = nikola_with(hook);
    let db_dir = tempfile::tempdir().unwrap();
    let db = db_dir.path().join("a.db");
    ok(&archive(
        &db,
        &[
            "add",
            &format!("{}{}", server.origin, truth["feed_path"].as_str().unwrap()),
        ],
    ));
    let out = ok(&archive(&db, &["crawl", "--per-host", "1"]));
    let export = ok(&archive(&db, &["export"]));
    assert_eq!(
        export.lines().count(),
        truth["posts"].as_array().unwrap().len(),
        "{out}"
    );
    assert!(
        export.contains(victim),
        "the 429'd post was retried and archived"
    );
    let log = server.access_log();
    // Politeness is per process: check the crawl process, which starts with its own robots.txt.
    let second_robots = log
        .iter()
        .enumerate()
        .filter(|(_, a)| a.path == "/robots.txt")
        .nth(1)
        .map(|(i, _)| i)
        .unwrap();
    let crawl = &log[second_robots..];
    // The server stamps arrival times: scheduling jitter can bring two arrivals closer than the
    // 0.1 s between our sends, but never a run of them. Ignoring Crawl-delay gives ~1 ms gaps.
    assert!(crawl.len() > 20, "{} requests", crawl.len());
    for w in crawl.windows(2) {
        let gap = w[1].at.saturating_sub(w[0].at);
        assert!(
            gap.as_secs_f64() >= 0.04,
            "{} then {} only {gap:?} apart (Crawl-delay 0.1)",
            w[0].path,
            w[1].path
        );
    }
    for w in crawl.windows(6) {
        let span = w[5].at.saturating_sub(w[0].at);
        assert!(
            span.as_secs_f64() >= 0.45,
            "6 requests within {span:?} (Crawl-delay 0.1 s needs 0.5 s)"
        );
    }
    assert!(
        !log.iter().any(|a| a.path.starts_with("/authors/")),
        "Disallow: /authors/ ignored"
    );
    let hits: Vec<_> = log.iter().filter(|a| a.path == victim).collect();
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert_eq!(hits[0].status, 429);
    assert!(
        hits[1].at - hits[0].at >= std::time::Duration::from_millis(990),
        "retried before Retry-After"
    );
}

#[test]
fn traps_and_bad_links_are_bounded_and_the_crawl_goes_on() {
    let hook: Hook = Box::new(|path| {
        let html = |body: String| {
            reply(
                200,
                &[("Content-Type", "text/html")],
                &format!("<html><body>{body}</body></html>"),
            )
        };
        if path == "/robots.txt" {
            return reply(
                200,
                &[("Content-Type", "text/html")],
                "<html><body><h1>Welcome!</h1></body></html>",
            );
        }
        if path == "/start.html" {
            return html("<a href=\"/\">blog</a> <a href=\"/calendar/?d=0\">calendar</a> <a href=\"/loop/a\">loop</a> \
                <a href=\"mailto:x@y.z\">mail</a> <a href=\"javascript:void(0)\">js</a> <a href=\"file:///etc/passwd\">file</a> \
                <a href=\"http://[::1\">bad</a> <a href=\"http://exa mple.com/\">bad</a> <a href=\"ftp://x/\">ftp</a> \
                <a href=\"http://other.invalid/\">elsewhere</a>".to_string());
        }
        if let Some(d) = path.strip_prefix("/calendar/?d=") {
            let d: i64 = d.parse().unwrap_or(0);
            return html(format!(
                "<a href=\"/calendar/?d={}\">next</a> <a href=\"/calendar/?d={}\">prev</a>",
                d + 1,
                d - 1
            ));
        }
        match path {
            "/loop/a" => reply(302, &[("Location", "/loop/b")], ""),
            "/loop/b" => reply(302, &[("Location", "/loop/a")], ""),
            _ => None,
        }
    });
    let (server, truth) = nikola_with(hook);
    let db_dir = tempfile::tempdir().unwrap();
    let db = db_dir.path().join("a.db");
    let feed = format!("{}{}", server.origin, truth["feed_path"].as_str().unwrap());
    ok(&archive(
        &db,
        &[
            "add",
            &feed,
            "--start",
            &format!("{}/start.html", server.origin),
        ],
    ));
    let out = ok(&archive(
        &db,
        &["crawl", "--max-per-template", "40", "--patience", "0"],
    ));
    assert!(out.contains("crawl complete"), "{out}");
    assert!(out.contains("redirect loop"), "{out}");
    assert_eq!(
        ok(&archive(&db, &["export"])).lines().count(),
        truth["posts"].as_array().unwrap().len()
    );
    let log = server.access_log();
    let calendar = log
        .iter()
        .filter(|a| a.path.starts_with("/calendar/"))
        .count();
    assert!(calendar <= 41, "{calendar} calendar pages fetched");
    assert!(
        number_before(&out, " links over the per-template cap") > 0,
        "{out}"
    );
    assert!(!log
        .iter()
        .any(|a| a.path.contains("passwd") || a.path.contains("mailto")));
}

#[test]
fn robots_txt_that_is_huge_never_stops_the_crawl() {
    // Huge: read up to 500 KiB; a rule beyond that is not seen. (A robots.txt answering 5xx
    // disallows its host, RFC 9309: tests/fast/hostile.rs.)
    let huge = format!(
        "User-agent: *\n{}Disallow: /posts/\n",
        "Disallow: /nothing-here/\n".repeat(25_000)
    );
    let body = huge.clone();
    let hook: Hook = Box::new(move |path| {
        (path == "/robots.txt").then(|| Reply {
            status: 200,
            headers: vec![],
            body: huge.clone().into_bytes(),
        })
    });
    let (server, truth) = nikola_with(hook);
    let db_dir = tempfile::tempdir().unwrap();
    let db = db_dir.path().join("a.db");
    ok(&archive(
        &db,
        &[
            "add",
            &format!("{}{}", server.origin, truth["feed_path"].as_str().unwrap()),
        ],
    ));
    let out = ok(&archive(&db, &["crawl"]));
    assert!(out.contains("crawl complete"), "{out}");
    assert_eq!(
        ok(&archive(&db, &["export"])).lines().count(),
        truth["posts"].as_array().unwrap().len(),
        "robots.txt of {} bytes; the crawl said:\n{out}",
        body.len()
    );
}
