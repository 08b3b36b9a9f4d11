//! Revisits end to end (issue 30, Done when): a WordPress blog built by the real engine
//! (`fixtures/updates/wordpress`, Debian's WordPress 6.1) is archived in its v3 state; then,
//! outside its feed, two old posts are edited (title and text), one is trashed and one gets a
//! new slug (WordPress answers its old URL with a 301, and its `?orderby=modified` feed lists
//! the recently modified posts: both replayed here from what the real WordPress answered).
//! - With the default window (30 days, nothing due yet), the modified feed alone must bring
//!   both edits (new versions) and the move (one post, reachable in the reader by both URLs).
//! - With a one-second window, the next update revisits every post and marks the trashed one
//!   gone.
//! - Ten more revisits of the unchanged blog, whose pages carry changing template noise (a
//!   nonce, a "minutes ago" line, no validators), must store no new version.

use crate::common::*;
use everblog::fixture_server::{Reply, Root, Server};
use everblog::store::{DatabaseSettings, Store};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/updates/wordpress")
}

fn read(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join(name)).unwrap()).unwrap()
}

/// What the test server does besides serving the files of the current state.
struct Answers {
    /// The recorded redirects (path → status, location path), answered in v4.
    redirects: Vec<(String, u16, String)>,
    /// Serve v4's redirects and modified feed (else v3's feed).
    v4: AtomicBool,
    /// Add changing template noise to every HTML page (and drop the validators).
    noise: AtomicBool,
    served: AtomicU64,
    /// The server's origin, once started.
    origin: Mutex<String>,
    /// The directory served (a link switched between states).
    root: PathBuf,
}

impl Answers {
    fn answer(&self, target: &str) -> Option<Reply> {
        let path = target.split(['?', '#']).next().unwrap_or("/");
        let origin = self.origin.lock().unwrap().clone();
        let v4 = self.v4.load(Ordering::Relaxed);
        if target == "/feed/?orderby=modified" {
            let name = if v4 {
                "modified-feed-v4.xml"
            } else {
                "modified-feed-v3.xml"
            };
            let feed = std::fs::read_to_string(fixtures().join(name)).unwrap();
            return Some(Reply {
                status: 200,
                headers: vec![("Content-Type".into(), "application/rss+xml".into())],
                body: feed.replace("http://127.0.0.1:8000", &origin).into_bytes(),
            });
        }
        if v4 {
            if let Some((_, status, to)) = self.redirects.iter().find(|(p, _, _)| p == path) {
                return Some(Reply {
                    status: *status,
                    headers: vec![("Location".into(), format!("{origin}{to}"))],
                    body: Vec::new(),
                });
            }
        }
        if !self.noise.load(Ordering::Relaxed) || !path.ends_with('/') {
            return None;
        }
        let file = self
            .root
            .join(path.trim_start_matches('/'))
            .join("index.html");
        let html = std::fs::read_to_string(file).ok()?;
        let n = self.served.fetch_add(1, Ordering::Relaxed);
        // What real WordPress pages change on every request: a nonce, relative times.
        let noise = format!(
            "<aside class=\"widget\"><input type=\"hidden\" name=\"_wpnonce\" value=\"{:x}\">\
             <p>Last comment {} minutes ago</p></aside></body>",
            n.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            n % 59 + 1
        );
        let html = html
            .replace("http://127.0.0.1:8000", &origin)
            .replacen("</body>", &noise, 1);
        Some(Reply {
            status: 200,
            headers: vec![("Content-Type".into(), "text/html; charset=UTF-8".into())],
            body: html.into_bytes(),
        })
    }
}

/// `archive update` with `revisit_within` set to `window`: its summary (stdout and stderr).
fn update(db: &Path, config: &Path, window: &str) -> String {
    write_config(config, format!("[update]\nrevisit_within = \"{window}\"\n")).unwrap();
    let out = archive(db, &["--config", config.to_str().unwrap(), "update"]);
    ok(&out) + &String::from_utf8_lossy(&out.stderr)
}

fn versions(store: &Store) -> usize {
    store
        .posts(None)
        .unwrap()
        .iter()
        .map(|p| store.post_versions(&p.url).unwrap().len())
        .sum()
}

#[test]
fn revisits_keep_edits_deletions_and_moves_outside_the_feed() {
    if !fixtures().join("v4").is_dir() {
        eprintln!(
            "skipping: fixtures/updates/wordpress/v4 is missing (run fixtures/updates/generate.sh)"
        );
        return;
    }
    let changes = read("changes-v4.json");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("archive.db");
    let config = dir.path().join("config.toml");
    write_config(&config, "").unwrap();
    let link = dir.path().join("wordpress");
    switch_to(&link, &fixtures().join("v3"));
    let answers = Arc::new(Answers {
        redirects: changes["redirects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["path"].as_str().unwrap().to_string(),
                    r["status"].as_u64().unwrap() as u16,
                    r["location"]
                        .as_str()
                        .unwrap()
                        .trim_start_matches("http://127.0.0.1:8000")
                        .to_string(),
                )
            })
            .collect(),
        v4: AtomicBool::new(false),
        noise: AtomicBool::new(false),
        served: AtomicU64::new(0),
        origin: Mutex::new(String::new()),
        root: link.clone(),
    });
    let hook = answers.clone();
    let server = Server::start_with(
        Root::Disk(link.clone()),
        Some("http://127.0.0.1:8000".into()),
        Some(Box::new(move |t: &str| hook.answer(t))),
    )
    .unwrap();
    *answers.origin.lock().unwrap() = server.origin.clone();
    let origin = server.origin.clone();
    let url = |path: &Value| format!("{origin}{}", path.as_str().unwrap());

    ok(&archive(&db, &["add", &format!("{origin}/feed/")]));
    ok(&archive(
        &db,
        &["--config", config.to_str().unwrap(), "crawl"],
    ));
    let v3_posts = read("v3-truth.json")["posts"].as_array().unwrap().len();
    {
        let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
        assert_eq!(store.posts(None).unwrap().len(), v3_posts);
        assert_eq!(versions(&store), 0);
    }

    // A first update: the modified feed's baseline; revisits planned over 30 days.
    let baseline = update(&db, &config, "30days");
    assert!(!baseline.contains("revisited"), "{baseline}");

    // The blog changes outside its feed. With the default window nothing is due: the modified
    // feed shows the edits and the move, not the deletion.
    switch_to(&link, &fixtures().join("v4"));
    answers.v4.store(true, Ordering::Relaxed);
    let first = update(&db, &config, "30days");
    {
        let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
        assert_eq!(versions(&store), 2, "{first}");
        let (from, to) = (
            &changes["moved_posts"][0]["from"],
            &changes["moved_posts"][0]["to"],
        );
        let moved = store.post(&url(from)).unwrap().unwrap();
        assert_eq!(moved.moved_to, Some(url(to)), "{first}");
        let trashed = &changes["deleted_posts"][0]["path"];
        assert!(store
            .post(&url(trashed))
            .unwrap()
            .unwrap()
            .gone_at
            .is_none());
    }
    // A window of one second: every post is due, the deletion shows.
    std::thread::sleep(Duration::from_millis(1100));
    let second = update(&db, &config, "1s");
    assert!(
        second.contains("older posts revisited"),
        "{first}\n{second}"
    );

    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    let edited = changes["edited_posts"].as_array().unwrap();
    assert_eq!(edited.len(), 2);
    for e in edited {
        let post = store.post(&url(&e["path"])).unwrap().unwrap();
        assert_eq!(post.version, 2, "{}: {first}\n{second}", post.url);
        assert_eq!(
            post.title.as_deref(),
            e["title_v4"].as_str(),
            "{}",
            post.url
        );
        let old = store.post_versions(&post.url).unwrap();
        assert_eq!(old.len(), 1);
        assert_eq!(old[0].title.as_deref(), e["title_v3"].as_str());
        let (v3, v4) = (
            e["body_text_v3"].as_str().unwrap(),
            e["body_text_v4"].as_str().unwrap(),
        );
        assert!(token_f1(&post.content_text, v4) > token_f1(&post.content_text, v3));
        assert!(token_f1(&old[0].content_text, v3) > token_f1(&old[0].content_text, v4));
    }
    for d in changes["deleted_posts"].as_array().unwrap() {
        let post = store.post(&url(&d["path"])).unwrap().unwrap();
        assert!(post.gone_at.is_some(), "{} not marked gone", post.url);
        assert_eq!(post.version, 1, "a deletion is no edit");
    }
    let moved = changes["moved_posts"].as_array().unwrap();
    assert_eq!(moved.len(), 1);
    let (from, to) = (url(&moved[0]["from"]), url(&moved[0]["to"]));
    let post = store.post(&from).unwrap().unwrap();
    assert_eq!(post.moved_to.as_deref(), Some(to.as_str()));
    assert!(post.gone_at.is_none());
    assert_eq!(post.version, 1, "a move is no edit: {first}\n{second}");
    // One post, found by both URLs.
    assert_eq!(store.post(&to).unwrap().unwrap().url, from);
    assert_eq!(
        store.posts(None).unwrap().len(),
        v3_posts,
        "nothing doubled"
    );
    assert_eq!(versions(&store), 2, "only the two edits made versions");
    drop(store);
    let status = ok(&archive(
        &db,
        &["--config", config.to_str().unwrap(), "status"],
    ));
    assert!(
        status.contains("2 edits kept · 1 gone · 1 moved"),
        "{status}"
    );
    let coverage = archive(&db, &["--config", config.to_str().unwrap(), "coverage"]);
    assert!(
        String::from_utf8_lossy(&coverage.stdout).contains("revisits"),
        "{coverage:?}"
    );

    // Ten more revisits of the unchanged blog, every page with fresh template noise: no edit.
    answers.noise.store(true, Ordering::Relaxed);
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(1100));
        let out = update(&db, &config, "1s");
        assert!(out.contains("older posts revisited"), "{out}");
    }
    assert!(answers.served.load(Ordering::Relaxed) >= 10 * (v3_posts as u64 - 2));
    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    assert_eq!(versions(&store), 2, "template noise made a version");
    for e in edited {
        assert_eq!(store.post(&url(&e["path"])).unwrap().unwrap().version, 2);
    }
    drop(store);

    // The reader: the moved post under both URLs, the edited ones marked and diffable.
    let port = free_port();
    let _serve = Serving(Some(
        archive_command()
            .args(["--db", db.to_str().unwrap(), "serve", "--bind"])
            .arg(format!("127.0.0.1:{port}"))
            .spawn()
            .unwrap(),
    ));
    wait_for("archive serve to answer", Duration::from_secs(20), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let title = moved[0]["title"].as_str().unwrap();
    for u in [&from, &to] {
        let (status, page) = raw_get(port, &format!("/post?url={}", url_encode(u)));
        assert_eq!(status, 200, "{u}");
        assert!(page.contains(&html_escape(title)), "{u}: {page}");
        assert!(page.contains("moved by the blog to"), "{u}");
    }
    let e = &edited[0];
    let (status, page) = raw_get(port, &format!("/post?url={}", url_encode(&url(&e["path"]))));
    assert_eq!(status, 200);
    assert!(page.contains("edited: 2 versions"), "{page}");
    let (status, diff) = raw_get(
        port,
        &format!("/diff?url={}&from=1&to=2", url_encode(&url(&e["path"]))),
    );
    assert_eq!(status, 200, "{diff}");
}
