//! Authors, dates and comments (paper §3.5) on real WordPress blogs (Debian's wordpress, content
//! made through WordPress's own PHP API, mirrored; `fixtures/wordpress*`): threaded comments
//! spread over comment pages, comment feeds that list only the newest 10, a French blog with
//! relative dates. Scored against the database-derived ground truth.

use crate::common::*;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

struct CommentScore {
    total: usize,
    right: usize,
    parents_right: usize,
    duplicates: usize,
}

fn score_comments(truth: &Value, export: &str) -> CommentScore {
    let rows: Vec<Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_path: HashMap<String, &Value> = rows
        .iter()
        .map(|r| (normalise_path(r["url"].as_str().unwrap()), r))
        .collect();
    let mut s = CommentScore {
        total: 0,
        right: 0,
        parents_right: 0,
        duplicates: 0,
    };
    for p in truth["posts"].as_array().unwrap() {
        let got: Vec<&Value> = by_path
            .get(&normalise_path(p["path"].as_str().unwrap()))
            .map(|r| r["comments"].as_array().unwrap().iter().collect())
            .unwrap_or_default();
        let ids: Vec<&str> = got.iter().map(|c| c["id"].as_str().unwrap()).collect();
        s.duplicates += ids.len() - ids.iter().collect::<HashSet<_>>().len();
        let mut matched: HashMap<i64, String> = HashMap::new();
        let want = p["comments"].as_array().unwrap();
        for c in want {
            s.total += 1;
            let hit = got.iter().find(|g| {
                g["author"].as_str().unwrap_or("") == c["author"].as_str().unwrap()
                    && token_f1(
                        g["content_text"].as_str().unwrap(),
                        c["content_text"].as_str().unwrap(),
                    ) >= 0.9
                    && !matched.values().any(|v| v == g["id"].as_str().unwrap())
            });
            if let Some(g) = hit {
                s.right += 1;
                matched.insert(
                    c["id"].as_i64().unwrap(),
                    g["id"].as_str().unwrap().to_string(),
                );
            }
        }
        for c in want {
            let Some(mine) = matched.get(&c["id"].as_i64().unwrap()) else {
                continue;
            };
            let g = got
                .iter()
                .find(|g| g["id"].as_str() == Some(mine.as_str()))
                .unwrap();
            let want_parent = c["parent"]
                .as_i64()
                .and_then(|p| matched.get(&p))
                .map(String::as_str);
            if g["parent"].as_str() == want_parent {
                s.parents_right += 1;
            }
        }
    }
    s
}

fn field_rate(truth: &Value, export: &str, check: impl Fn(&Value, &Value) -> bool) -> f64 {
    let rows: Vec<Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_path: HashMap<String, &Value> = rows
        .iter()
        .map(|r| (normalise_path(r["url"].as_str().unwrap()), r))
        .collect();
    let posts = truth["posts"].as_array().unwrap();
    let ok = posts
        .iter()
        .filter(|p| {
            by_path
                .get(&normalise_path(p["path"].as_str().unwrap()))
                .is_some_and(|r| check(r, p))
        })
        .count();
    ok as f64 / posts.len() as f64
}

fn same_instant(a: &Value, b: &Value) -> bool {
    let p = |v: &Value| {
        v.as_str()
            .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
    };
    matches!((p(a), p(b)), (Some(x), Some(y)) if x.timestamp() == y.timestamp())
}

fn crawl(name: &str) -> (Blog, tempfile::TempDir, String, String) {
    let blog = serve(name);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(&db, &["add", &blog.feed_url()]));
    let out = ok(&archive(&db, &["crawl"]));
    let export = ok(&archive(&db, &["export"]));
    (blog, dir, out, export)
}

#[test]
fn wordpress_comments_dates_and_authors() {
    let (blog, dir, out, export) = crawl("wordpress");
    let truth = &blog.truth;
    let s = score_comments(truth, &export);
    eprintln!(
        "comments right {}/{}, parents right {}, duplicates {}\n{out}",
        s.right, s.total, s.parents_right, s.duplicates
    );
    assert!(s.total > 250, "the fixture has threaded comments");
    assert!(
        s.right as f64 >= 0.95 * s.total as f64,
        "{}/{} comments with the right author and text",
        s.right,
        s.total
    );
    assert!(
        s.parents_right as f64 >= 0.95 * s.right as f64,
        "{}/{} replies threaded right",
        s.parents_right,
        s.right
    );
    assert_eq!(s.duplicates, 0);
    let dates = field_rate(truth, &export, |r, p| {
        same_instant(&r["published"], &p["published"])
    });
    assert!(dates >= 0.95, "published right for {dates:.2}");
    // Posts outside the feed keep the blog's offset (Europe/Paris), not UTC.
    assert!(export.contains("+01:00") || export.contains("+02:00"));
    let authors = field_rate(truth, &export, |r, p| r["authors"] == p["authors"]);
    assert!(authors >= 0.95, "authors right for {authors:.2}");
    // A second crawl of the same blog stores no comment twice.
    let db = dir.path().join("a.db");
    ok(&archive(&db, &["crawl", &blog.feed_url()]));
    let again = score_comments(truth, &ok(&archive(&db, &["export"])));
    assert_eq!((again.right, again.duplicates), (s.right, 0));
    // `archive show` prints the thread.
    let post = truth["posts"]
        .as_array()
        .unwrap()
        .iter()
        .max_by_key(|p| p["comments"].as_array().unwrap().len())
        .unwrap();
    let shown = ok(&archive(
        &db,
        &[
            "show",
            &format!("{}{}", blog.server.origin, post["path"].as_str().unwrap()),
        ],
    ));
    assert!(shown.contains("comments ("), "{shown}");
    assert!(shown.contains("    ↳ "), "replies are indented: {shown}");
}

#[test]
fn relative_and_local_dates_map_to_the_feeds_instants() {
    let (blog, dir, _out, export) = crawl("wordpress-dates");
    // A French blog (its feed says fr-FR): the reader marks its posts as French.
    let db = dir.path().join("a.db");
    let store = everblog::store::Store::open(&everblog::store::DatabaseSettings::at(&db)).unwrap();
    assert_eq!(store.blogs().unwrap()[0].language.as_deref(), Some("fr-FR"));
    drop(store);
    let config = dir.path().join("config.toml");
    write_config(&config, "").unwrap();
    let (_serving, port) = serve_archive(&db, &config, &[]);
    let post = &blog.truth["posts"][0];
    let url = format!("{}{}", blog.server.origin, post["path"].as_str().unwrap());
    let (status, page) = raw_get(port, &format!("/post?url={}", url_encode(&url)));
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("<article class=\"post\" lang=\"fr-FR\">"),
        "{page}"
    );
    assert!(
        page.contains("<html lang=\"en\">"),
        "the reader's own words"
    );
    // 2024-12-21 21:55 at -05:00 is 22 Dec in UTC: the reader shows the blog's day.
    let winter = blog.truth["posts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["published"] == "2024-12-21T21:55:00-05:00")
        .expect("the fixture's December post");
    let url = format!("{}{}", blog.server.origin, winter["path"].as_str().unwrap());
    let (_, page) = raw_get(port, &format!("/post?url={}", url_encode(&url)));
    assert!(
        page.contains("<time datetime=\"2024-12-21T21:55:00-05:00\">2024-12-21</time>"),
        "{page}"
    );
    let dates = field_rate(&blog.truth, &export, |r, p| {
        same_instant(&r["published"], &p["published"])
    });
    assert!(dates >= 0.95, "published right for {dates:.2}");
    // The feed writes UTC; the pages date each post in the blog's own time: the archive keeps
    // the feed's instant on the blog's clock (issue 29, item 6).
    let local = field_rate(&blog.truth, &export, |r, p| {
        let offset = |v: &Value| {
            v.as_str()
                .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
                .map(|d| *d.offset())
        };
        same_instant(&r["published"], &p["published"])
            && offset(&r["published"]) == offset(&p["published"])
    });
    assert!(
        local >= 0.95,
        "published in the blog's own offset for {local:.2}"
    );
    let s = score_comments(&blog.truth, &export);
    assert!(
        s.right as f64 >= 0.95 * s.total as f64,
        "{}/{}",
        s.right,
        s.total
    );
}

#[test]
fn comment_feeds_that_404_still_give_the_page_comments() {
    use everblog::fixture_server::{Hook, Reply, Root, Server};
    let dir = fixture_dir("wordpress");
    let truth: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).unwrap()).unwrap();
    // Every per-post comment feed is gone; the blog's feed stays.
    let hook: Hook = Box::new(|path| {
        (path != "/feed/" && path.ends_with("/feed/")).then(|| Reply {
            status: 404,
            headers: vec![],
            body: b"gone".to_vec(),
        })
    });
    let server = Server::start_with(
        Root::Disk(dir.join("site")),
        truth["base_url"].as_str().map(str::to_string),
        Some(hook),
    )
    .unwrap();
    let db_dir = tempfile::tempdir().unwrap();
    let db = db_dir.path().join("a.db");
    ok(&archive(&db, &["add", &format!("{}/feed/", server.origin)]));
    let out = ok(&archive(&db, &["crawl"]));
    let export = ok(&archive(&db, &["export"]));
    assert_eq!(
        export.lines().count(),
        truth["posts"].as_array().unwrap().len(),
        "{out}"
    );
    let s = score_comments(&truth, &export);
    assert!(
        s.right as f64 >= 0.95 * s.total as f64,
        "{}/{} comments without comment feeds\n{out}",
        s.right,
        s.total
    );
    assert_eq!(s.duplicates, 0);
}
