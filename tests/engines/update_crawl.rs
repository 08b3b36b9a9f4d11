//! UpdateCrawl end to end (issue "the service", Done when): two `archive daemon` processes share
//! one database and three blogs built by real engines (`fixtures/updates`: Pelican, Hexo,
//! WordPress), served on 127.0.0.1. After the NewCrawls the blogs move to their later state
//! (new posts, new and edited comments, an edited post, a deleted post); the next update crawls
//! must archive exactly those changes (edit kept as a new version, deletion marked, nothing
//! lost or doubled) while requesting nothing but feeds, comment feeds and the changed pages.

use crate::common::*;
use everblog::core::rules::Field;
use everblog::fixture_server::{Root, Server};
use everblog::store::DatabaseSettings;
use everblog::store::{JobKind, JobState, Store};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

const BLOGS: [&str; 3] = ["pelican", "hexo", "wordpress"];

struct Site {
    name: &'static str,
    server: Server,
    link: PathBuf,
    changes: Value,
    v2: Value,
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/updates")
}

/// Points the served directory at `version` of blog `name` ([`switch_to`]).
fn switch(link: &Path, name: &str, version: &str) {
    switch_to(link, &fixtures().join(name).join(version));
}

fn serve_versions(dir: &Path, name: &'static str) -> Site {
    let read = |f: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(fixtures().join(name).join(f)).unwrap())
            .unwrap()
    };
    let changes = read("changes.json");
    let link = dir.join(name);
    switch(&link, name, "v1");
    let server = Server::start(
        Root::Disk(link.clone()),
        changes["base_url"].as_str().map(str::to_string),
    )
    .unwrap();
    Site {
        name,
        server,
        link,
        v2: read("v2-truth.json"),
        changes,
    }
}

fn jobs(db: &Path) -> Vec<everblog::store::Job> {
    Store::open(&DatabaseSettings::at(db))
        .ok()
        .and_then(|s| s.jobs(10_000).ok())
        .unwrap_or_default()
}

#[test]
fn update_crawls_archive_exactly_the_changes() {
    if !fixtures().join("wordpress/v2").is_dir() {
        eprintln!("skipping: fixtures/updates is missing (run fixtures/updates/generate.sh)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("archive.db");
    let config = dir.path().join("config.toml");
    // Update crawls every second or two, so the test sees several of them.
    write_config(&config,
        "[schedule]\nmin_interval = \"1s\"\nmax_interval = \"2s\"\njitter = 0.0\n[daemon]\npoll = \"100ms\"\nlease = \"10s\"\n",
    )
    .unwrap();
    let sites: Vec<Site> = BLOGS
        .iter()
        .map(|n| serve_versions(dir.path(), n))
        .collect();
    for s in &sites {
        let feed = format!(
            "{}{}",
            s.server.origin,
            s.changes["feed_path"].as_str().unwrap()
        );
        ok(&archive(&db, &["add", &feed]));
    }
    let (a, b) = (
        daemon_with_config(&db, &config, "a", Stdio::null()),
        daemon_with_config(&db, &config, "b", Stdio::null()),
    );

    // 1. NewCrawl of the first state, then at least one UpdateCrawl of each blog (nothing new).
    wait_for(
        "the NewCrawls and a first UpdateCrawl of each blog",
        Duration::from_secs(240),
        || {
            let j = jobs(&db);
            let done = |kind: JobKind| {
                j.iter()
                    .filter(|j| j.kind == kind && j.state == JobState::Done)
                    .map(|j| j.blog_id)
                    .collect::<HashSet<_>>()
                    .len()
            };
            done(JobKind::NewCrawl) == 3 && done(JobKind::UpdateCrawl) == 3
        },
    );
    let v1_posts: Vec<usize> = {
        let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
        store
            .blogs()
            .unwrap()
            .iter()
            .map(|b| store.counts(b.id).unwrap().posts as usize)
            .collect()
    };
    for (s, n) in sites.iter().zip(&v1_posts) {
        let v1: Value = serde_json::from_str(
            &std::fs::read_to_string(fixtures().join(s.name).join("v1-truth.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(*n, v1["posts"].as_array().unwrap().len(), "{}", s.name);
    }

    // Nothing changed yet: a few more update crawls must fetch feeds only.
    let steady: Vec<usize> = sites.iter().map(|s| s.server.access_log().len()).collect();
    std::thread::sleep(Duration::from_secs(3));

    // 2. The blogs change; wait for an UpdateCrawl of each that started afterwards.
    let marks: Vec<usize> = sites.iter().map(|s| s.server.access_log().len()).collect();
    for s in &sites {
        switch(&s.link, s.name, "v2");
    }
    // Taken once every blog has switched: a job started earlier may have read the old state
    // (this was taken first, and a job starting while the blogs switched one by one saw a v1
    // feed now and then).
    std::thread::sleep(Duration::from_millis(20));
    let switched = chrono::Utc::now();
    wait_for(
        "an UpdateCrawl of each blog after the change",
        Duration::from_secs(120),
        || {
            let j = jobs(&db);
            j.iter()
                .filter(|j| {
                    j.kind == JobKind::UpdateCrawl
                        && j.state == JobState::Done
                        && j.started_at.is_some_and(|t| t > switched)
                })
                .map(|j| j.blog_id)
                .collect::<HashSet<_>>()
                .len()
                == 3
        },
    );
    terminate(a);
    terminate(b);
    assert!(
        jobs(&db).iter().all(|j| j.state != JobState::Failed),
        "{:#?}",
        jobs(&db)
    );
    // The templates did not change: no rule was learned again.
    assert!(
        jobs(&db)
            .iter()
            .all(|j| !j.outcome.as_deref().unwrap_or("").contains("drift")),
        "{:#?}",
        jobs(&db)
    );

    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    let export = ok(&archive(&db, &["export"]));
    let rows: Vec<Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let urls: HashSet<&str> = rows.iter().map(|r| r["url"].as_str().unwrap()).collect();
    assert_eq!(urls.len(), rows.len(), "a post archived twice");

    for ((s, mark), steady) in sites.iter().zip(marks).zip(steady) {
        let c = &s.changes;
        let url = |p: &Value| format!("{}{}", s.server.origin, p.as_str().unwrap());
        // Every post of the later state, with its article and title.
        let mine: String = rows
            .iter()
            .filter(|r| r["url"].as_str().unwrap().starts_with(&s.server.origin))
            .map(|r| r.to_string() + "\n")
            .collect();
        let score = score(&s.v2, &mine);
        assert_eq!(
            (score.found, score.article_ok, score.title_ok),
            (score.posts, score.posts, score.posts),
            "{}: {:?}",
            s.name,
            score.failures
        );
        // The deleted post: still archived, marked gone. Nothing else is gone.
        let deleted: HashSet<String> = c["deleted_posts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| url(&d["path"]))
            .collect();
        assert_eq!(score.false_positives, deleted.len(), "{}", s.name);
        for r in rows
            .iter()
            .filter(|r| r["url"].as_str().unwrap().starts_with(&s.server.origin))
        {
            let gone = !r["gone_at"].is_null();
            assert_eq!(
                gone,
                deleted.contains(r["url"].as_str().unwrap()),
                "{}: gone_at of {}",
                s.name,
                r["url"]
            );
        }
        // The edited post: version 2 now, version 1 kept.
        for e in c["edited_posts"].as_array().unwrap() {
            let post = store.post(&url(&e["path"])).unwrap().unwrap();
            assert_eq!(post.version, 2, "{}: {}", s.name, post.url);
            let f1 = token_f1(&post.content_text, e["body_text_v2"].as_str().unwrap());
            assert!(f1 >= 0.9, "{}: edited text F1 {f1}", s.name);
            let old = store.post_versions(&post.url).unwrap();
            assert_eq!(old.len(), 1, "{}", s.name);
            let f1 = token_f1(&old[0].content_text, e["body_text_v1"].as_str().unwrap());
            assert!(f1 >= 0.9, "{}: kept version F1 {f1}", s.name);
        }
        // No other post changed version.
        let edited: HashSet<String> = c["edited_posts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| url(&e["path"]))
            .collect();
        for r in rows
            .iter()
            .filter(|r| r["url"].as_str().unwrap().starts_with(&s.server.origin))
        {
            let want = if edited.contains(r["url"].as_str().unwrap()) {
                2
            } else {
                1
            };
            assert_eq!(r["version"], want, "{}: {}", s.name, r["url"]);
        }
        // New comments present once; the edited comment has its new text and keeps the old.
        for nc in c["new_comments"].as_array().unwrap() {
            let comments = store.comments(&url(&nc["post_path"])).unwrap();
            let n = comments
                .iter()
                .filter(|x| {
                    x.author.as_deref() == nc["author"].as_str()
                        && token_f1(&x.content_text, nc["text"].as_str().unwrap()) >= 0.9
                })
                .count();
            assert_eq!(
                n, 1,
                "{}: new comment {} on {}",
                s.name, nc["id"], nc["post_path"]
            );
        }
        for ec in c["edited_comments"].as_array().unwrap() {
            let post = url(&ec["post_path"]);
            let comments = store.comments(&post).unwrap();
            let now = comments
                .iter()
                .find(|x| {
                    // The page's element id: `comment-17`, `div-comment-17`…
                    x.id.strip_suffix(&format!("comment-{}", ec["id"]))
                        .is_some_and(|pre| pre.is_empty() || pre.ends_with('-'))
                })
                .unwrap_or_else(|| {
                    panic!(
                        "{}: comment {} missing among {:?}",
                        s.name,
                        ec["id"],
                        comments
                            .iter()
                            .map(|c| (&c.id, &c.content_text))
                            .collect::<Vec<_>>()
                    )
                });
            assert!(token_f1(&now.content_text, ec["text_v2"].as_str().unwrap()) >= 0.9);
            let old = store.comment_versions(&post).unwrap();
            assert_eq!(old.len(), 1, "{}", s.name);
            assert!(token_f1(&old[0].content_text, ec["text_v1"].as_str().unwrap()) >= 0.9);
        }
        // Requests after the change: feeds, comment feeds and the changed pages only.
        let mut allowed: HashSet<String> = HashSet::new();
        allowed.insert(c["feed_path"].as_str().unwrap().to_string());
        // WordPress's feed of recently modified posts (a cheap signal for revisits).
        if s.name == "wordpress" {
            allowed.insert(format!(
                "{}?orderby=modified",
                c["feed_path"].as_str().unwrap()
            ));
        }
        allowed.insert("/robots.txt".into());
        for p in c["comment_feed_paths"].as_array().unwrap() {
            allowed.insert(p.as_str().unwrap().to_string());
        }
        let mut changed: HashSet<String> = HashSet::new();
        for p in c["new_posts"]
            .as_array()
            .unwrap()
            .iter()
            .chain(c["edited_posts"].as_array().unwrap())
            .chain(c["deleted_posts"].as_array().unwrap())
        {
            changed.insert(p["path"].as_str().unwrap().to_string());
        }
        for cm in c["new_comments"]
            .as_array()
            .unwrap()
            .iter()
            .chain(c["edited_comments"].as_array().unwrap())
        {
            changed.insert(cm["post_path"].as_str().unwrap().to_string());
        }
        let is_comment_feed = |p: &str| {
            p.strip_suffix("feed/")
                .is_some_and(|post| post.len() > 1 && allowed_post(post, &s.v2, c))
        };
        let log = s.server.access_log();
        let unchanged: Vec<&str> = log[steady..mark].iter().map(|a| a.path.as_str()).collect();
        for p in &unchanged {
            assert!(
                allowed.contains(*p) || is_comment_feed(p),
                "{}: an UpdateCrawl of the unchanged blog requested {p}",
                s.name
            );
        }
        assert!(
            unchanged.contains(&c["feed_path"].as_str().unwrap()),
            "{}: no update crawl ran in 3 s",
            s.name
        );
        let after: Vec<&str> = log[mark..].iter().map(|a| a.path.as_str()).collect();
        for p in &after {
            let path = p.split('?').next().unwrap();
            assert!(
                allowed.contains(path) || changed.contains(path) || is_comment_feed(path),
                "{}: UpdateCrawl requested {p}, which is neither a feed nor a changed page",
                s.name
            );
        }
        for p in &changed {
            assert!(
                after.contains(&p.as_str()),
                "{}: changed page {p} never fetched",
                s.name
            );
        }
        eprintln!(
            "{}: {} requests after the change over the update crawls ({} distinct paths)",
            s.name,
            after.len(),
            after.iter().collect::<HashSet<_>>().len()
        );
    }
}

/// Template drift: the WordPress blog switches theme (twentytwentyone → twentytwentythree) and
/// publishes a post with a comment. The learned article rule no longer matches; the next
/// UpdateCrawl learns the rules again, archives the new post and its comment, and leaves the
/// archived posts as they were.
#[test]
fn a_theme_switch_is_detected_and_the_rules_learned_again() {
    if !fixtures().join("wordpress/v3").is_dir() {
        eprintln!(
            "skipping: fixtures/updates/wordpress/v3 is missing (run fixtures/updates/generate.sh)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("archive.db");
    let site = serve_versions(dir.path(), "wordpress");
    switch(&site.link, "wordpress", "v2");
    let feed = format!(
        "{}{}",
        site.server.origin,
        site.changes["feed_path"].as_str().unwrap()
    );
    ok(&archive(&db, &["add", &feed]));
    ok(&archive(&db, &["crawl"]));
    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    let blog = store.blogs().unwrap()[0].clone();
    let before = store.rules(blog.id).unwrap();
    let article_before = before
        .iter()
        .find(|r| r.field == Field::Article)
        .unwrap()
        .xpath
        .clone();
    let posts_before = store.posts(None).unwrap();
    drop(store);

    switch(&site.link, "wordpress", "v3");
    let out = ok(&archive(&db, &["update"]));
    eprintln!("{out}");
    assert!(out.contains("template drift"), "{out}");
    assert!(out.contains("1 new posts"), "{out}");
    assert!(out.contains("1 new comments"), "{out}");

    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    let after = store.rules(blog.id).unwrap();
    let article_after = after
        .iter()
        .find(|r| r.field == Field::Article)
        .unwrap()
        .xpath
        .clone();
    assert_ne!(article_before, article_after);
    // Every post of the new state, with article and title; the new one's comment too.
    let v3: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("wordpress/v3-truth.json")).unwrap(),
    )
    .unwrap();
    let export = ok(&archive(&db, &["export"]));
    let score = score(&v3, &export);
    assert_eq!(
        (score.found, score.article_ok, score.title_ok),
        (score.posts, score.posts, score.posts),
        "{:?}",
        score.failures
    );
    let changes: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("wordpress/changes-v3.json")).unwrap(),
    )
    .unwrap();
    for nc in changes["new_comments"].as_array().unwrap() {
        let post = format!(
            "{}{}",
            site.server.origin,
            nc["post_path"].as_str().unwrap()
        );
        let comments = store.comments(&post).unwrap();
        assert!(
            comments.iter().any(|c| {
                c.author.as_deref() == nc["author"].as_str()
                    && token_f1(&c.content_text, nc["text"].as_str().unwrap()) >= 0.9
            }),
            "new comment missing: {comments:?}"
        );
    }
    // The posts archived before are untouched: same text, no new version.
    for p in posts_before {
        let now = store.post(&p.url).unwrap().unwrap();
        assert_eq!(
            (now.version, &now.content_text),
            (p.version, &p.content_text),
            "{}",
            p.url
        );
    }
}

/// `post` is the path of a post of either state (its comment feed is `post` + `feed/`).
fn allowed_post(post: &str, v2: &Value, changes: &Value) -> bool {
    v2["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .chain(
            changes["deleted_posts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["path"].as_str().unwrap()),
        )
        .any(|p| p == post)
}
