//! Held-out JavaScript blogs (issue "render", Done when): blogs and comment widgets that are not
//! in `fixtures/` — a Preact blog rendered from embedded JSON, a Commento-like widget loaded
//! cross-site by JSONP with "Load more" and "Show N more replies", a LiveFyre-like thread that
//! grows only when scrolled — generated at test time by `fixtures/holdout/js/build.sh`, served
//! on 127.0.0.1 and archived with real Chromium: at least 95% of the posts with the right
//! article and title, and at least 95% of the JavaScript-rendered comments.

use crate::common::*;
use everblog::fixture_server::{Root, Server};
use everblog::store::DatabaseSettings;
use everblog::store::Store;
use serde_json::Value;
use std::path::Path;

fn build(out: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/holdout/js/build.sh");
    let status = std::process::Command::new("bash")
        .arg(script)
        .arg(out)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "fixtures/holdout/js/build.sh failed");
}

fn archive_blog(dir: &Path, blog: &Server, t: &Value) -> (Score, usize, usize) {
    let db = dir.join(format!("{}.db", blog.origin.rsplit(':').next().unwrap()));
    let feed = format!("{}{}", blog.origin, t["feed_path"].as_str().unwrap());
    ok(&archive(&db, &["add", &feed]));
    ok(&archive(&db, &["crawl"]));
    let s = score(t, &ok(&archive(&db, &["export"])));
    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    let (found, total, _) = comment_recall(&store, &blog.origin, t);
    (s, found, total)
}

fn check(name: &str, s: &Score, found: usize, total: usize) {
    eprintln!(
        "{name}: posts {}/{} (article {}, title {}), comments {found}/{total}",
        s.found, s.posts, s.article_ok, s.title_ok
    );
    let ok95 = |n: usize, d: usize| n * 100 >= d * 95;
    assert!(
        ok95(s.article_ok.min(s.title_ok), s.posts) && s.false_positives == 0,
        "{name}: {:?}",
        s.failures
    );
    assert!(ok95(found, total), "{name}: {found} of {total} comments");
}

fn truth(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).unwrap()).unwrap()
}

#[test]
fn held_out_javascript_blogs_and_widgets() {
    let out = tempfile::tempdir().unwrap();
    build(out.path());
    let work = tempfile::tempdir().unwrap();

    let kiln = out.path().join("kiln-spa");
    let t = truth(&kiln);
    let blog = Server::start(
        Root::Disk(kiln.join("site")),
        t["base_url"].as_str().map(str::to_string),
    )
    .unwrap();
    let (s, f, n) = archive_blog(work.path(), &blog, &t);
    check("kiln-spa", &s, f, n);

    let harbour = out.path().join("harbour-commento");
    let t = truth(&harbour);
    let comments = Server::start(Root::Disk(harbour.join("comments")), None).unwrap();
    let blog = Server::start_full(
        Root::Disk(harbour.join("blog")),
        t["base_url"].as_str().map(str::to_string),
        vec![(
            "http://localhost:8001".into(),
            comments.origin.replace("127.0.0.1", "localhost"),
        )],
        None,
    )
    .unwrap();
    let (s, f, n) = archive_blog(work.path(), &blog, &t);
    assert!(n >= 80);
    check("harbour-commento", &s, f, n);

    let marsh = out.path().join("marsh-livefyre");
    let t = truth(&marsh);
    let blog = Server::start(
        Root::Disk(marsh.join("blog")),
        t["base_url"].as_str().map(str::to_string),
    )
    .unwrap();
    let (s, f, n) = archive_blog(work.path(), &blog, &t);
    assert!(n >= 80);
    check("marsh-livefyre", &s, f, n);
}
