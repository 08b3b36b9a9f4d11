//! Hostile and broken input, each case once failing: a blog steering the crawler into private
//! addresses (SSRF), a feed larger than the page budget, a feed over its size cap, a page whose
//! server asks to come back in an hour, a page nested 100,000 deep, robots.txt answering 5xx or
//! redirecting, an archive this user may only read, and colour codes in piped output.

use crate::common::*;
use everblog::fixture_server::{Hook, Reply, Root, Server};
use everblog::store::DatabaseSettings;
use everblog::store::{JobKind, JobState, PageState, Store};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn truth(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture_dir(name).join("truth.json")).unwrap())
        .unwrap()
}

/// A copy of a fixture site, for a test to edit.
fn copy_site(name: &str, into: &Path) -> PathBuf {
    let to = into.join(name);
    assert!(Command::new("cp")
        .arg("-r")
        .arg(fixture_dir(name).join("site"))
        .arg(&to)
        .status()
        .unwrap()
        .success());
    to
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// A server that answers every request with 200 and counts them: a service inside the
/// crawling machine that no blog may reach.
fn internal_service() -> Server {
    let hook: Hook = Box::new(|_| {
        Some(Reply {
            status: 200,
            headers: vec![("Content-Type".into(), "text/html".into())],
            body: b"<html><body><p>internal secret</p></body></html>".to_vec(),
        })
    });
    let empty = tempfile::tempdir().unwrap();
    Server::start_with(Root::Disk(empty.path().to_path_buf()), None, Some(hook)).unwrap()
}

/// `archive` with a deadline: a run that does not end within `limit` is killed and fails the
/// test (the hang is the defect).
fn archive_within(db: &Path, args: &[&str], limit: Duration) -> std::process::Output {
    let mut child = archive_command()
        .arg("--db")
        .arg(db)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("archive {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

/// SSRF: a blog on one machine (127.0.0.2) names pages on the crawling machine (127.0.0.1) in
/// its feed, by address and as `localhost` (resolved), and redirects a link there. None of it
/// reaches the internal service; the refusals are counted. Allowing the network lets it through.
#[test]
fn a_blog_cannot_steer_the_crawler_into_private_addresses() {
    let internal = internal_service();
    let port = internal.origin.rsplit(':').next().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let site = copy_site("nikola", dir.path());
    let items = format!(
        "<item><title>Admin</title><link>http://127.0.0.1:{port}/admin/</link><description>&lt;p&gt;x&lt;/p&gt;</description></item>\
         <item><title>Secret</title><link>http://localhost:{port}/secret/</link><description>&lt;p&gt;y&lt;/p&gt;</description></item><item>"
    );
    edit(&site.join("rss.xml"), "<item>", &items);
    edit(
        &site.join("index.html"),
        "</body>",
        "<a href=\"/go/\">more</a></body>",
    );
    let target = format!("http://127.0.0.1:{port}/private/");
    let redirect: Hook = Box::new(move |path| {
        (path == "/go/").then(|| Reply {
            status: 302,
            headers: vec![("Location".into(), target.clone())],
            body: Vec::new(),
        })
    });
    let t = truth("nikola");
    let blog = Server::start_at(
        [127, 0, 0, 2].into(),
        Root::Disk(site),
        t["base_url"].as_str().map(str::to_string),
        Vec::new(),
        Some(redirect),
    )
    .unwrap();
    assert!(blog.origin.starts_with("http://127.0.0.2:"));
    let feed = format!("{}/rss.xml", blog.origin);

    let db = dir.path().join("a.db");
    ok(&archive(&db, &["add", &feed]));
    let out = ok(&archive(&db, &["crawl"]));
    assert_eq!(
        internal.requests(),
        0,
        "the internal service was reached:\n{out}"
    );
    assert!(out.contains("crawl complete"), "{out}");
    let refused = out
        .split(" refused (private addresses)")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or(0);
    assert!(
        refused >= 3,
        "admin, secret and the redirect: {refused}\n{out}"
    );
    let export = ok(&archive(&db, &["export"]));
    assert!(
        !export.contains(&format!(":{port}/")),
        "an internal page was archived"
    );
    assert_eq!(
        export.lines().count(),
        t["posts"].as_array().unwrap().len(),
        "every post of the blog is still archived"
    );
    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    let b = &store.blogs().unwrap()[0];
    let states = store.page_states(b.id).unwrap();
    assert!(
        states
            .iter()
            .any(|s| s.state == PageState::Refused && s.urls >= 3),
        "{states:?}"
    );

    // The user may allow a network: then the same feed reaches the service.
    let config = dir.path().join("allow.toml");
    write_config(&config, "[fetch]\nallow_private = [\"127.0.0.1/32\"]\n").unwrap();
    let db2 = dir.path().join("b.db");
    ok(&archive(&db2, &["add", &feed]));
    ok(&archive(
        &db2,
        &["--config", config.to_str().unwrap(), "crawl"],
    ));
    assert!(internal.requests() > 0, "allow_private lets the crawler in");
}

/// Budgets: `--max-pages` bounds rule learning too. A feed of 36 entries and `--max-pages 5`
/// fetched all 36 entry pages to learn from; now a spread sample within the budget.
#[test]
fn the_page_budget_bounds_rule_learning() {
    let t = truth("nikola");
    let posts = t["posts"].as_array().unwrap().clone();
    let items: String = posts
        .iter()
        .map(|p| {
            format!(
                "<item><title>{}</title><link>http://127.0.0.1:8000{}</link><description>{}</description></item>",
                xml_escape(p["title"].as_str().unwrap()),
                p["path"].as_str().unwrap(),
                xml_escape(p["body_text"].as_str().unwrap())
            )
        })
        .collect();
    let feed = format!("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>All</title><link>http://127.0.0.1:8000/</link>{items}</channel></rss>");
    let dir = tempfile::tempdir().unwrap();
    let site = copy_site("nikola", dir.path());
    std::fs::write(site.join("all.xml"), feed).unwrap();
    let server =
        Server::start(Root::Disk(site), t["base_url"].as_str().map(str::to_string)).unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(
        &db,
        &["add", &format!("{}/all.xml", server.origin)],
    ));
    let mark = server.access_log().len();
    let out = ok(&archive(&db, &["crawl", "--max-pages", "5"]));
    assert!(out.contains("page budget reached"), "{out}");
    let post_paths: Vec<&str> = posts.iter().map(|p| p["path"].as_str().unwrap()).collect();
    let fetched_posts = server.access_log()[mark..]
        .iter()
        .filter(|a| post_paths.contains(&a.path.as_str()))
        .count();
    assert!(
        fetched_posts <= 5,
        "{fetched_posts} post pages fetched with --max-pages 5"
    );
    // The listing pages read for post identification count too.
    let pages = server.access_log()[mark..]
        .iter()
        .filter(|a| a.path.ends_with('/') || a.path.ends_with(".html"))
        .count();
    assert!(pages <= 5, "{pages} pages fetched with --max-pages 5");
    assert!(
        ok(&archive(&db, &["rules"])).contains("article"),
        "rules were learned"
    );
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Caps: a valid feed over the feed cap was cut at 20 MB and reported as malformed XML. Now the
/// error says which cap and which setting raises it, and raising it works.
#[test]
fn a_feed_over_its_cap_says_which_setting_to_raise() {
    let t = truth("nikola");
    let big_text = "Sourdough notes. ".repeat(3_000);
    let items: String = (0..500)
        .map(|i| format!("<item><title>Post {i}</title><link>http://127.0.0.1:8000/posts/p{i}/</link><description>{big_text}</description></item>"))
        .collect();
    let feed = format!("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Huge</title><link>http://127.0.0.1:8000/</link>{items}</channel></rss>");
    assert!(feed.len() > 22 * 1024 * 1024, "{}", feed.len());
    let hook: Hook = Box::new(move |path| {
        (path == "/huge.xml").then(|| Reply {
            status: 200,
            headers: vec![("Content-Type".into(), "application/rss+xml".into())],
            body: feed.clone().into_bytes(),
        })
    });
    let server = Server::start_with(
        Root::Disk(fixture_dir("nikola").join("site")),
        t["base_url"].as_str().map(str::to_string),
        Some(hook),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let url = format!("{}/huge.xml", server.origin);
    let out = archive(&db, &["add", &url]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("feed larger than 20 MB") && err.contains("max_feed_mb"),
        "{err}"
    );
    let config = dir.path().join("c.toml");
    write_config(&config, "[fetch]\nmax_feed_mb = 40\n").unwrap();
    let out = ok(&archive(
        &db,
        &["--config", config.to_str().unwrap(), "add", &url],
    ));
    assert!(out.contains("500 entries"), "{out}");
}

/// Retry-After: a page answering 503 with `Retry-After: 3600` kept `archive crawl` asleep (up
/// to 600 s, four times) after every other page was done. It is now parked: the crawl ends,
/// says when the page is due, and its NewCrawl is queued for then.
#[test]
fn a_long_retry_after_parks_the_page_instead_of_blocking_the_crawl() {
    let victim = "/posts/12-things-about-the-soup/";
    let hook: Hook = Box::new(move |path| {
        (path == victim).then(|| Reply {
            status: 503,
            headers: vec![("Retry-After".into(), "3600".into())],
            body: b"busy".to_vec(),
        })
    });
    let t = truth("nikola");
    let server = Server::start_with(
        Root::Disk(fixture_dir("nikola").join("site")),
        t["base_url"].as_str().map(str::to_string),
        Some(hook),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    // The host pauses 2 s (not the default minute) before its other pages go on.
    let config = dir.path().join("c.toml");
    write_config(&config, "[politeness]\nmax_pause = \"2s\"\n").unwrap();
    let cfg = config.to_str().unwrap();
    ok(&archive(
        &db,
        &["add", &format!("{}/rss.xml", server.origin)],
    ));
    let out = archive_within(&db, &["--config", cfg, "crawl"], Duration::from_secs(180));
    let stdout = ok(&out);
    assert!(
        stdout.contains("1 pages deferred until") && stdout.contains("retry later"),
        "{stdout}"
    );
    let total = t["posts"].as_array().unwrap().len();
    assert_eq!(ok(&archive(&db, &["export"])).lines().count(), total - 1);
    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    let soon = chrono::Utc::now() + chrono::Duration::minutes(50);
    let resume = store
        .jobs(10)
        .unwrap()
        .into_iter()
        .find(|j| j.kind == JobKind::NewCrawl && j.state == JobState::Queued)
        .expect("the NewCrawl is queued again");
    assert!(resume.not_before.is_some_and(|t| t > soon), "{resume:?}");
}

/// Host parking: after a file answered 503 with `Retry-After: 3600`, the host is paused (a
/// minute by default) and media capture waited that minute for it. A post's media on a
/// paused host are now left for a later job (recorded as deferred), which fetches them.
#[test]
fn media_capture_does_not_wait_for_a_host_that_asked_to_wait() {
    let busy = Arc::new(AtomicBool::new(true));
    let flag = busy.clone();
    let hook: Hook = Box::new(move |path| {
        (path.ends_with(".css") && flag.load(Ordering::Relaxed)).then(|| Reply {
            status: 503,
            headers: vec![("Retry-After".into(), "3600".into())],
            body: b"busy".to_vec(),
        })
    });
    let t = truth("nikola");
    let server = Server::start_with(
        Root::Disk(fixture_dir("nikola").join("site")),
        t["base_url"].as_str().map(str::to_string),
        Some(hook),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(
        &db,
        &["add", &format!("{}/rss.xml", server.origin)],
    ));
    // The host's pause is ten minutes here (a minute by default): a crawl that sits it out
    // is told from one that does not even on a machine busy enough to crawl slowly.
    let config = dir.path().join("config.toml");
    write_config(&config, "[politeness]\nmax_pause = \"10m\"\n").unwrap();
    let cfg = config.to_str().unwrap();
    let out = archive_within(&db, &["--config", cfg, "crawl"], Duration::from_secs(180));
    let stdout = ok(&out);
    assert!(stdout.contains("left for a later job"), "{stdout}");
    let deferred = |db: &Path| -> usize {
        let store = Store::open(&DatabaseSettings::at(db)).unwrap();
        store
            .posts(None)
            .unwrap()
            .iter()
            .map(|p| {
                let post = store.post(&p.url).unwrap().unwrap();
                post.media
                    .iter()
                    .filter(|m| m.state == everblog::store::MediaState::Deferred)
                    .count()
            })
            .sum()
    };
    assert!(deferred(&db) > 0);
    // The host answers again: the next job (an update) fetches what was deferred.
    busy.store(false, Ordering::Relaxed);
    ok(&archive_within(
        &db,
        &["--config", cfg, "update"],
        Duration::from_secs(180),
    ));
    assert_eq!(deferred(&db), 0);
}

/// SIGTERM during a host's pause: a page answered 503 with `Retry-After: 30`, the host paused
/// 30 s, and a stop request waited that out. Every wait for a host now ends on the signal.
#[test]
fn sigterm_does_not_wait_for_a_paused_host() {
    let victim = "/posts/12-things-about-the-soup/";
    let hook: Hook = Box::new(move |path| {
        (path == victim).then(|| Reply {
            status: 503,
            headers: vec![("Retry-After".into(), "30".into())],
            body: b"busy".to_vec(),
        })
    });
    let t = truth("nikola");
    let server = Server::start_with(
        Root::Disk(fixture_dir("nikola").join("site")),
        t["base_url"].as_str().map(str::to_string),
        Some(hook),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(
        &db,
        &["add", &format!("{}/rss.xml", server.origin)],
    ));
    let mut child = archive_command()
        .arg("--db")
        .arg(&db)
        .arg("crawl")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the 503", Duration::from_secs(60), || {
        server.access_log().iter().any(|a| a.status == 503)
    });
    // Let the crawl's next requests queue behind the pause, then ask it to stop.
    std::thread::sleep(Duration::from_millis(500));
    let asked = Instant::now();
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    while child.try_wait().unwrap().is_none() {
        assert!(
            asked.elapsed() < Duration::from_secs(15),
            "still waiting for the paused host after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("stopped {:?} after SIGTERM", asked.elapsed());
}

/// Depth: a page nested 100,000 elements deep took 41 s to parse (super-linear in depth). The
/// tree is now capped as browsers cap it, keeping every word.
#[test]
fn a_page_nested_100000_deep_is_parsed_flat_enough() {
    let mut html = String::from("<html><body><article>");
    for i in 0..100_000 {
        html.push_str("<div>");
        if i % 1000 == 0 {
            html.push_str(&format!("word{i} "));
        }
    }
    html.push_str("<p class=deepest>bottom</p>");
    html.push_str(&"</div>".repeat(100_000));
    html.push_str("<p id=after>after</p></article></body></html>");
    let page = everblog::core::page::Page::parse(&html);
    let max = page.elements.iter().map(|e| e.depth).max().unwrap() as usize;
    assert!(max <= everblog::core::html::MAX_DEPTH + 4, "depth {max}");
    let text = page.text_of(0);
    assert!(text.contains("word0 ") && text.contains("word99000 "));
    let deepest = page.by_class("deepest")[0];
    assert_eq!(page.text_of(deepest), "bottom");
    assert_eq!(page.text_of(page.by_id("after")[0]), "after");
}

/// robots.txt answering 5xx was read as "allow everything"; RFC 9309 §2.3.1.4 says the crawler
/// must assume complete disallow. Now nothing but robots.txt is requested, and the error says
/// why and until when.
#[test]
fn robots_txt_answering_5xx_disallows_the_host() {
    let broken = Arc::new(AtomicBool::new(true));
    let flag = broken.clone();
    let hook: Hook = Box::new(move |path| {
        (path == "/robots.txt" && flag.load(Ordering::Relaxed)).then(|| Reply {
            status: 503,
            headers: vec![],
            body: b"down".to_vec(),
        })
    });
    let t = truth("nikola");
    let server = Server::start_with(
        Root::Disk(fixture_dir("nikola").join("site")),
        t["base_url"].as_str().map(str::to_string),
        Some(hook),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let feed = format!("{}/rss.xml", server.origin);
    let out = archive(&db, &["add", &feed]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("HTTP 503") && err.contains("RFC 9309"),
        "{err}"
    );
    let paths: Vec<String> = server.access_log().into_iter().map(|a| a.path).collect();
    assert!(paths.iter().all(|p| p == "/robots.txt"), "{paths:?}");
    // Once robots.txt answers again (a later run reads it anew), the blog is archived.
    broken.store(false, Ordering::Relaxed);
    ok(&archive(&db, &["add", &feed]));
    let out = ok(&archive(&db, &["crawl"]));
    assert!(out.contains("crawl complete"), "{out}");
}

/// robots.txt behind a redirect (RFC 9309 §2.3.1.2: follow at least five) was read as missing,
/// so its rules were ignored.
#[test]
fn robots_txt_behind_a_redirect_is_obeyed() {
    let victim = "/posts/12-things-about-the-soup/";
    let hook: Hook = Box::new(move |path| match path {
        "/robots.txt" => Some(Reply {
            status: 301,
            headers: vec![("Location".into(), "/policies/robots.txt".into())],
            body: Vec::new(),
        }),
        "/policies/robots.txt" => Some(Reply {
            status: 200,
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: format!("User-agent: *\nDisallow: {victim}\n").into_bytes(),
        }),
        _ => None,
    });
    let t = truth("nikola");
    let server = Server::start_with(
        Root::Disk(fixture_dir("nikola").join("site")),
        t["base_url"].as_str().map(str::to_string),
        Some(hook),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(
        &db,
        &["add", &format!("{}/rss.xml", server.origin)],
    ));
    let out = ok(&archive(&db, &["crawl"]));
    assert!(out.contains("1 blocked by robots.txt"), "{out}");
    assert!(
        server.access_log().iter().all(|a| a.path != victim),
        "the disallowed page was requested"
    );
}

/// Read-only archives: a valid archive this user may only read was "not an everblog
/// database"; even `export` refused. Reading now works; writers get one line saying what to do.
#[test]
fn a_read_only_archive_can_be_read_and_writers_are_told_why_not() {
    let blog = serve("nikola");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(&db, &["add", &blog.feed_url()]));
    ok(&archive(&db, &["crawl"]));
    let total = blog.truth["posts"].as_array().unwrap().len();
    let post_url = format!(
        "{}{}",
        blog.server.origin,
        blog.truth["posts"][0]["path"].as_str().unwrap()
    );
    // As root, permissions do not bind: run as `nobody` a copy of the binary it may execute,
    // on a database it may read only. Otherwise, take the write bit away.
    let root = unsafe { libc::geteuid() } == 0;
    let bin = dir.path().join("archive");
    std::fs::copy(env!("CARGO_BIN_EXE_archive"), &bin).unwrap();
    let run = |args: &[&str]| -> std::process::Output {
        let mut c = if root {
            let mut c = Command::new("runuser");
            c.args(["-u", "nobody", "--"]).arg(&bin);
            c
        } else {
            Command::new(&bin)
        };
        c.arg("--db").arg(&db).args(args).output().unwrap()
    };
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
        let mode = if f.path() == bin { 0o755 } else { 0o444 };
        std::fs::set_permissions(f.path(), std::fs::Permissions::from_mode(mode)).unwrap();
    }
    if !root {
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    assert_eq!(ok(&run(&["export"])).lines().count(), total);
    assert!(ok(&run(&["list"])).contains(&blog.server.origin));
    assert!(ok(&run(&["show", &post_url])).contains("title"));
    assert!(ok(&run(&["rules"])).contains("article"));
    assert!(ok(&run(&["status"])).contains("blogs (1)"));
    for writer in [vec!["crawl"], vec!["update"], vec!["add", &blog.feed_url()]] {
        let out = run(&writer);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{writer:?}");
        assert_eq!(err.lines().count(), 1, "{writer:?}: {err}");
        assert!(
            err.contains("is read-only") && err.contains("write access"),
            "{writer:?}: {err}"
        );
    }
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Colour codes went to stderr even when it was a pipe or a file.
#[test]
fn no_colour_codes_when_stderr_is_not_a_terminal() {
    let blog = serve("nikola");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(&db, &["add", &blog.feed_url()]));
    let out = archive(&db, &["-v", "crawl", "--max-pages", "3"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("INFO"), "the log was written: {err}");
    assert!(
        !err.contains('\u{1b}'),
        "colour codes in piped stderr: {err:?}"
    );
}
