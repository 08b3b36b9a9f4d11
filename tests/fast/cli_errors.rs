//! Bad input gets one clear error line naming the input, a non-zero exit, and leaves the
//! database consistent (no blog half-added). A crawl that hits HTTP errors keeps going and
//! reports them.

use crate::common::*;
use everblog::fixture_server::serve_dir;
use everblog::store::DatabaseSettings;
use everblog::store::Store;

fn one_error_line(out: &std::process::Output, must_contain: &[&str]) {
    assert!(
        !out.status.success(),
        "expected failure, got success: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one error line, got: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    for m in must_contain {
        assert!(
            lines[0].contains(m),
            "{:?} does not mention {m:?}",
            lines[0]
        );
    }
}

#[test]
fn bad_urls_are_rejected_and_nothing_is_stored() {
    let site = tempfile::tempdir().unwrap();
    let w = |name: &str, body: &[u8]| std::fs::write(site.path().join(name), body).unwrap();
    w("bad.xml", b"<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>a & b</title><item><title>x</title></item></channel></rss>");
    w(
        "page.html",
        b"<html><head><title>No feed</title></head><body><p>hello</p></body></html>",
    );
    w("empty.xml", b"<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Empty</title></channel></rss>");
    w("img.png", b"\x89PNG\r\n\x1a\n0000");
    let server = serve_dir(site.path(), None).unwrap();
    let o = &server.origin;
    let db_dir = tempfile::tempdir().unwrap();
    let db = db_dir.path().join("a.db");
    // A previously archived blog must survive every failure below.
    let good = serve("nikola");
    ok(&archive(&db, &["add", &good.feed_url()]));

    one_error_line(&archive(&db, &["add", "not a url"]), &["not a url", "http"]);
    one_error_line(
        &archive(&db, &["add", "http://127.0.0.1:1/feed"]),
        &["127.0.0.1:1", "cannot connect"],
    );
    // A name no resolver knows (.invalid never resolves: RFC 2606).
    one_error_line(
        &archive(&db, &["add", "http://nothing.invalid/feed"]),
        &["nothing.invalid", "host not found"],
    );
    one_error_line(
        &archive(&db, &["add", &format!("{o}/missing.xml")]),
        &["missing.xml", "404"],
    );
    one_error_line(
        &archive(&db, &["add", &format!("{o}/page.html")]),
        &["page.html", "no feed found"],
    );
    one_error_line(
        &archive(&db, &["add", &format!("{o}/bad.xml")]),
        &["bad.xml", "malformed feed"],
    );
    one_error_line(
        &archive(&db, &["add", &format!("{o}/empty.xml")]),
        &["empty.xml", "no entries"],
    );
    one_error_line(
        &archive(&db, &["add", &format!("{o}/img.png")]),
        &["img.png", "neither a feed nor an HTML page"],
    );
    one_error_line(
        &archive(&db, &["show", "http://nowhere.example/post"]),
        &["nowhere.example"],
    );
    one_error_line(
        &archive(&db, &["crawl", "http://not-added.example/"]),
        &["not-added.example"],
    );

    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    let blogs = store.blogs().unwrap();
    assert_eq!(blogs.len(), 1, "only the good blog is stored");
    assert_eq!(store.entries(blogs[0].id).unwrap().len(), 10);
    // Adding the same blog again is a no-op with a message.
    let again = ok(&archive(&db, &["add", &good.feed_url()]));
    assert!(again.contains("already in the archive"), "{again}");
    assert_eq!(
        Store::open(&DatabaseSettings::at(&db))
            .unwrap()
            .blogs()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_home_page_is_enough_to_find_the_feed() {
    let blog = serve("hexo");
    let db_dir = tempfile::tempdir().unwrap();
    let db = db_dir.path().join("a.db");
    let out = ok(&archive(&db, &["add", &format!("{}/", blog.server.origin)]));
    assert!(out.contains(&blog.feed_url()), "{out}");
    assert!(out.contains("Atom"), "{out}");
}

#[test]
fn crawl_errors_are_reported_and_the_crawl_goes_on() {
    // A copy of the Nikola blog with one old post deleted: links to it now give 404.
    let src = fixture_dir("nikola");
    let copy = tempfile::tempdir().unwrap();
    copy_dir(&src.join("site"), &copy.path().join("site"));
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("truth.json")).unwrap()).unwrap();
    let posts = truth["posts"].as_array().unwrap();
    let victim = posts.last().unwrap()["path"]
        .as_str()
        .unwrap()
        .trim_matches('/')
        .to_string();
    std::fs::remove_dir_all(copy.path().join("site").join(&victim)).unwrap();
    let server = serve_dir(
        &copy.path().join("site"),
        truth["base_url"].as_str().map(str::to_string),
    )
    .unwrap();
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
    assert!(
        out.contains("next: archive serve"),
        "where to read it: {out}"
    );
    assert!(out.contains("HTTP 404") && out.contains(&victim), "{out}");
    let export = ok(&archive(&db, &["export"]));
    assert_eq!(export.lines().count(), posts.len() - 1);
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn a_bad_config_file_is_one_error_line_naming_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let cfg = dir.path().join("everblog.toml");
    std::fs::write(&cfg, "[crawl]\nmax_pages = 5\nmax_pagez = 6\n").unwrap();
    let cfg_s = cfg.to_str().unwrap();
    one_error_line(
        &archive(&db, &["--config", cfg_s, "status"]),
        &["everblog.toml line 3", "max_pagez"],
    );
    one_error_line(
        &archive(&db, &["--config", "/nonexistent/everblog.toml", "status"]),
        &["/nonexistent/everblog.toml", "config --defaults"],
    );
    // The documented defaults are a valid file, and the effective configuration shows flags'
    // sources.
    let defaults = ok(&archive(&db, &["config", "--defaults"]));
    std::fs::write(
        &cfg,
        defaults.replace("max_pages = 10000", "max_pages = 77"),
    )
    .unwrap();
    let eff = ok(&archive(&db, &["--config", cfg_s, "config"]));
    assert!(eff.contains("max_pages = 77"), "{eff}");
}

#[test]
fn add_from_a_list_or_opml() {
    let (a, b) = (serve("nikola"), serve("hexo"));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let list = dir.path().join("blogs.txt");
    std::fs::write(&list, format!("# mine\n{}\n\nnot-a-url\n", a.feed_url())).unwrap();
    let list_s = list.to_str().unwrap();
    one_error_line(
        &archive(&db, &["add", "--from", list_s]),
        &["blogs.txt line 4", "not-a-url"],
    );
    assert!(Store::open(&DatabaseSettings::at(&db))
        .unwrap()
        .blogs()
        .unwrap()
        .is_empty());
    let opml = dir.path().join("subs.opml");
    std::fs::write(
        &opml,
        format!(
            r#"<?xml version="1.0"?><opml version="2.0"><head><title>s</title></head><body>
<outline text="blogs"><outline type="rss" text="a" xmlUrl="{}"/><outline type="rss" text="b" xmlUrl="{}"/></outline>
</body></opml>"#,
            a.feed_url(),
            b.feed_url()
        ),
    )
    .unwrap();
    let out = ok(&archive(&db, &["add", "--from", opml.to_str().unwrap()]));
    assert_eq!(out.matches("added ").count(), 2, "{out}");
    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    assert_eq!(store.blogs().unwrap().len(), 2);
    assert_eq!(
        store.jobs(10).unwrap().len(),
        2,
        "each added blog queues its NewCrawl"
    );
}

#[test]
fn archive_extract_says_what_is_wrong_with_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("archive.db");
    let missing = dir.path().join("missing.html");
    one_error_line(
        &archive(&db, &["extract", missing.to_str().unwrap()]),
        &["missing.html", "could not be read"],
    );
    let binary = dir.path().join("photo.html");
    std::fs::write(&binary, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR<").unwrap();
    one_error_line(
        &archive(&db, &["extract", binary.to_str().unwrap()]),
        &["photo.html", "not HTML"],
    );
    let home = fixture_dir("pelican").join("site/index.html");
    one_error_line(
        &archive(&db, &["extract", home.to_str().unwrap()]),
        &["index.html", "no article on this page"],
    );
    let post = fixture_dir("pelican").join("site/2016/09/its-always-the-mulch.html");
    one_error_line(
        &archive(
            &db,
            &[
                "extract",
                "--blog",
                "http://nowhere.example/",
                post.to_str().unwrap(),
            ],
        ),
        &["no blog http://nowhere.example/"],
    );
    one_error_line(
        &archive(
            &db,
            &["extract", "--url", "not a url", post.to_str().unwrap()],
        ),
        &["--url not a url", "absolute URL"],
    );
    // Past [fetch] max_page_mb it is refused unread, as the crawl refuses it.
    let config = dir.path().join("small.toml");
    std::fs::write(&config, "[fetch]\nmax_page_mb = 0.001\n").unwrap();
    let big = dir.path().join("big.html");
    std::fs::write(&big, format!("<p>{}</p>", "words ".repeat(400))).unwrap();
    one_error_line(
        &archive(
            &db,
            &[
                "--config",
                config.to_str().unwrap(),
                "extract",
                big.to_str().unwrap(),
            ],
        ),
        &["big.html", "larger than [fetch] max_page_mb"],
    );
}

#[test]
fn the_demo_archives_into_the_database_db_names_and_never_points_at_one_it_removed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mine.db");
    let out = ok(&archive(&db, &["demo"]));
    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    assert_eq!(store.blogs().unwrap().len(), 1, "the demo blog is in --db");
    assert!(store.posts(None).unwrap().len() >= 30, "{out}");
    assert!(
        out.contains(&format!("archive --db {} show", db.display())),
        "{out}"
    );
    assert!(
        out.contains(&format!("next: archive --db {} serve", db.display())),
        "where to read it: {out}"
    );
    // The demo crawls at once: it never says to run `archive crawl` next (issue 45 item 6),
    // and the blog it archived whole hides no post it could estimate.
    assert!(!out.contains("next: archive crawl"), "{out}");
    assert!(out.contains(" 0.0 posts estimated unseen"), "{out}");
    drop(store);
    one_error_line(
        &archive(&db, &["demo", "--keep", dir.path().to_str().unwrap()]),
        &["--db", "--keep"],
    );
    // Without --db, the temporary archive is gone when the demo ends: no command names it.
    let out = archive_command()
        .env_remove("EVERBLOG_DB")
        .arg("demo")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("archive --db"), "{stdout}");
    assert!(stdout.contains("--keep DIR or --db FILE"), "{stdout}");
}
