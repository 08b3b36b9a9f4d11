//! Backfill: between two UpdateCrawls a blog publishes more posts than its feed holds (25 new,
//! 10 entries in the feed), so 15 new posts are in no feed snapshot the archive ever saw. The
//! UpdateCrawl must find them anyway — through older feed pages, sitemaps or the listing pages —
//! and on WordPress also a back-dated post, a deleted post (marked gone, kept) and new comments
//! on the oldest post, which no feed names (its site-wide comment feed is taken away here, so
//! only the scheduled comment checks can find them). Afterwards `archive coverage` reports
//! nothing missing.
//!
//! Fixtures: `fixtures/backfill/` (real WordPress and Hexo builds of both states, with
//! `changes.json`, the ground truth of what happened in between).

use crate::common::*;
use everblog::fixture_server::{Hook, Reply, Root, Server};
use everblog::store::DatabaseSettings;
use everblog::store::Store;
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/backfill")
}

fn read(name: &str, file: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join(name).join(file)).unwrap())
        .unwrap()
}

/// Points the served directory at `version` atomically (a symlink renamed over the old one).
fn switch(link: &Path, name: &str, version: &str) {
    let tmp = link.with_extension("new");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(fixtures().join(name).join(version), &tmp).unwrap();
    std::fs::rename(&tmp, link).unwrap();
}

/// One blog crawled in its first state, then updated once in its second.
struct Run {
    _dir: tempfile::TempDir,
    db: PathBuf,
    server: Server,
    changes: Value,
    /// What `archive update` printed.
    update: String,
    /// Requests the update made.
    requests: usize,
    /// Where the update's requests start in the server's access log.
    mark: usize,
}

impl Run {
    fn url(&self, path: &Value) -> String {
        format!("{}{}", self.server.origin, path.as_str().unwrap())
    }
}

/// Serves `name`'s first state, adds and crawls it, switches to the second state and runs one
/// UpdateCrawl with comment checks due at once. `hide` paths answer 404 in both states.
fn crawl_then_update(name: &str, hide: &'static [&'static str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let config = dir.path().join("config.toml");
    write_config(&config,
        "[update]\ncomment_checks = [\"0s\"]\nmax_comment_checks = 100\nsitemap_interval = \"0s\"\n",
    )
    .unwrap();
    let changes = read(name, "changes.json");
    let link = dir.path().join(name);
    switch(&link, name, "v1");
    let hook: Hook = Box::new(move |path| {
        hide.contains(&path).then(|| Reply {
            status: 404,
            headers: vec![],
            body: b"not here".to_vec(),
        })
    });
    let server = Server::start_with(
        Root::Disk(link.clone()),
        changes["base_url"].as_str().map(str::to_string),
        Some(hook),
    )
    .unwrap();
    let feed = format!(
        "{}{}",
        server.origin,
        changes["feed_path"].as_str().unwrap()
    );
    let cfg = config.to_str().unwrap();
    ok(&archive(&db, &["--config", cfg, "add", &feed]));
    ok(&archive(&db, &["--config", cfg, "crawl"]));
    let v1 = read(name, "v1-truth.json")["posts"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(
        ok(&archive(&db, &["export"])).lines().count(),
        v1,
        "{name} v1"
    );

    switch(&link, name, "v2");
    let before = server.access_log().len();
    let update = ok(&archive(&db, &["--config", cfg, "update"]));
    let requests = server.access_log().len() - before;
    eprintln!("{name}: {update}\n{name}: {requests} requests by the UpdateCrawl");
    Run {
        _dir: dir,
        db,
        server,
        changes,
        update,
        requests,
        mark: before,
    }
}

/// Every post of the second state is archived with its text and title; the deleted ones are
/// the only extra posts and the only ones marked gone; coverage reports nothing missing.
fn assert_complete(name: &str, run: &Run) {
    let export = ok(&archive(&run.db, &["export"]));
    let v2 = read(name, "v2-truth.json");
    let s = score(&v2, &export);
    assert_eq!(
        (s.found, s.article_ok, s.title_ok),
        (s.posts, s.posts, s.posts),
        "{name}: {:?}\n{}",
        s.failures,
        run.update
    );
    let deleted: HashSet<String> = run.changes["deleted_posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| run.url(&d["path"]))
        .collect();
    assert_eq!(s.false_positives, deleted.len(), "{name}");
    for line in export.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let url = r["url"].as_str().unwrap();
        assert_eq!(
            !r["gone_at"].is_null(),
            deleted.contains(url),
            "{name}: gone_at of {url}"
        );
    }
    let coverage = archive(&run.db, &["coverage"]);
    let text = String::from_utf8_lossy(&coverage.stdout);
    assert!(coverage.status.success(), "{name}: {text}");
    assert!(text.contains(" 0 missing"), "{name}: {text}");
}

#[test]
fn wordpress_update_finds_posts_comments_and_deletions_the_feed_never_showed() {
    if !fixtures().join("wordpress/v2").is_dir() {
        eprintln!("skipping: fixtures/backfill is missing (run fixtures/backfill/generate.sh)");
        return;
    }
    let run = crawl_then_update("wordpress", &["/comments/feed/"]);
    let c = &run.changes;
    assert!(run.update.contains("backfilled"), "{}", run.update);
    assert_complete("wordpress", &run);
    let store = Store::open(&DatabaseSettings::at(&run.db)).unwrap();
    // The back-dated post, dated long before the first crawl.
    for b in c["backdated_posts"].as_array().unwrap() {
        let post = store.post(&run.url(&b["path"])).unwrap();
        assert!(post.is_some(), "back-dated {} not archived", b["path"]);
    }
    // The new comments on the oldest post, once each, the reply under its parent.
    let oldest = run.url(&c["oldest_post_path"]);
    let comments = store.comments(&oldest).unwrap();
    for nc in c["new_comments"].as_array().unwrap() {
        let found: Vec<_> = comments
            .iter()
            .filter(|x| {
                x.author.as_deref() == nc["author"].as_str()
                    && token_f1(&x.content_text, nc["text"].as_str().unwrap()) >= 0.9
            })
            .collect();
        assert_eq!(
            found.len(),
            1,
            "new comment {} on {oldest}: {}",
            nc["id"],
            run.update
        );
        if let Some(parent) = nc["parent_id"].as_u64() {
            let p = found[0].parent.as_deref().unwrap_or("");
            assert!(
                p.ends_with(&format!("comment-{parent}")),
                "reply {} has parent {p:?}",
                nc["id"]
            );
        }
    }
    assert!(run.update.contains("older posts checked"), "{}", run.update);
}

#[test]
fn hexo_update_walks_the_listing_pages_when_there_is_no_sitemap() {
    if !fixtures().join("hexo/v2").is_dir() {
        eprintln!("skipping: fixtures/backfill is missing (run fixtures/backfill/generate.sh)");
        return;
    }
    let run = crawl_then_update("hexo", &[]);
    assert!(
        run.update.contains("backfilled") && run.update.contains("listing"),
        "{}",
        run.update
    );
    assert_complete("hexo", &run);
    // A blog without comments is never checked for them.
    assert!(
        !run.update.contains("older posts checked"),
        "{}",
        run.update
    );
    // The walk stopped where archived posts appeared again: not every listing page.
    let listing: Vec<String> = run.changes["listing_paths_v2"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    let walked = run.server.access_log()[run.mark..]
        .iter()
        .filter(|a| listing.contains(&a.path))
        .count();
    eprintln!("hexo: {walked} of {} listing pages walked", listing.len());
    assert!(
        walked < listing.len(),
        "{walked} listing requests over {} pages, {} requests in all",
        listing.len(),
        run.requests
    );
}
