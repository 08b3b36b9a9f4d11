//! `archive coverage`: what the archive holds of a blog against what is known to exist. A
//! complete crawl reports nothing missing and exits 0; a post whose page fails is reported
//! missing, with the reason, and the command exits 1 (for monitoring).

use crate::common::*;
use everblog::fixture_server::{Hook, Reply, Root, Server};
use serde_json::Value;

#[test]
fn a_complete_blog_has_nothing_missing() {
    let blog = serve("nikola");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(&db, &["add", &blog.feed_url()]));
    ok(&archive(&db, &["crawl"]));
    let text = ok(&archive(&db, &["coverage"]));
    assert!(text.contains(" 0 missing"), "{text}");
    let json: Value = serde_json::from_str(&ok(&archive(&db, &["coverage", "--json"]))).unwrap();
    let c = &json[0];
    let total = blog.truth["posts"].as_array().unwrap().len() as u64;
    assert_eq!(c["posts_known"].as_u64(), Some(total), "{c}");
    assert_eq!(c["posts_archived"].as_u64(), Some(total), "{c}");
    assert_eq!(c["posts_known_by"]["feed"].as_u64(), Some(10), "{c}");
    assert!(c["posts_missing"].as_array().unwrap().is_empty());
    assert!(
        c["oldest_post"].as_str().unwrap().starts_with("2016-"),
        "{c}"
    );
    let status = ok(&archive(&db, &["status"]));
    assert!(
        status.contains(&format!("coverage: {total}/{total} posts")),
        "{status}"
    );
}

#[test]
fn a_failing_post_is_reported_missing_and_the_command_fails() {
    let t: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture_dir("nikola").join("truth.json")).unwrap(),
    )
    .unwrap();
    // An older post, out of the feed: found by the crawl, its page answers 500.
    let victim = t["posts"][20]["path"].as_str().unwrap().to_string();
    let v = victim.clone();
    let hook: Hook = Box::new(move |path| {
        (path == v).then(|| Reply {
            status: 500,
            headers: vec![],
            body: b"oops".to_vec(),
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
    ok(&archive(
        &db,
        &["add", &format!("{}/rss.xml", server.origin)],
    ));
    ok(&archive(&db, &["crawl"]));
    let out = archive(&db, &["coverage"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "missing   {}{victim} (failed: HTTP 500",
            server.origin
        )),
        "{stdout}"
    );
    assert!(stdout.contains(" 1 missing"), "{stdout}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 known posts or comments are not archived"),
        "{err}"
    );
}

/// Hexo with `/:category/:title/` permalinks and `/older/N/` pagination: its listing pages have
/// the permalinks' shape. The blog's own evidence says they are no posts: `archive coverage`
/// lists each with why, apart from the posts, and they are not missing. A post whose page comes
/// back as a maintenance page (200, no article, none of the blog's post marks, no post links)
/// is a possibly lost post: the crawl summary counts it, coverage reports it missing with why,
/// and the command fails.
#[test]
fn pages_shaped_like_posts_are_listed_with_why_and_a_lost_post_fails_coverage() {
    let t: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture_dir("hexo-flat").join("truth.json")).unwrap(),
    )
    .unwrap();
    let victim = t["posts"][20]["path"].as_str().unwrap().to_string();
    let v = victim.clone();
    let hook: Hook = Box::new(move |path| {
        (path == v || path == format!("{v}index.html")).then(|| Reply {
            status: 200,
            headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
            body: b"<!doctype html><html><head><title>Maintenance</title></head><body><h1>Down for maintenance</h1><p>Back soon.</p></body></html>".to_vec(),
        })
    });
    let server = Server::start_with(
        Root::Disk(fixture_dir("hexo-flat").join("site")),
        t["base_url"].as_str().map(str::to_string),
        Some(hook),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let feed = format!("{}{}", server.origin, t["feed_path"].as_str().unwrap());
    ok(&archive(&db, &["add", &feed]));
    let crawled = ok(&archive(&db, &["crawl"]));
    assert!(
        crawled.contains("· 1 unread, possibly lost posts"),
        "{crawled}"
    );
    let out = archive(&db, &["coverage"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "missing   {}{victim} (unread: neither the blog's rules nor the generic extractor find an article",
            server.origin
        )),
        "{stdout}"
    );
    assert!(stdout.contains(" 1 missing"), "{stdout}");
    let older = format!("not a post {}/older/2/ (a listing", server.origin);
    assert!(stdout.contains(&older), "{stdout}");
    let json: Value = serde_json::from_str(&String::from_utf8_lossy(
        &archive(&db, &["coverage", "--json"]).stdout,
    ))
    .unwrap();
    let not_posts = json[0]["not_posts"].as_array().unwrap();
    assert!(not_posts.len() >= 5, "{not_posts:?}");
    assert!(not_posts
        .iter()
        .all(|p| p["state"] == "not-post" && p["error"].as_str().is_some_and(|e| !e.is_empty())));
    // Known posts are the truth's: the listings are not counted among them.
    let total = t["posts"].as_array().unwrap().len() as u64;
    assert_eq!(json[0]["posts_known"].as_u64(), Some(total), "{}", json[0]);
}
