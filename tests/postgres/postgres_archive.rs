//! End to end on PostgreSQL: the real `archive` binary with `--db postgres://…` (a private
//! cluster the test starts and stops: `tests/common/pg_cluster.rs`) archives a blog generated
//! by a real engine (Pelican, served on 127.0.0.1) exactly as it does into an SQLite file:
//! the same posts with the same text, coverage, search and exports. Skipped, saying why, where
//! PostgreSQL is not installed.

use crate::common::pg_cluster::Cluster;
use crate::common::*;
use std::collections::BTreeMap;
use std::path::Path;

type Posts = BTreeMap<String, (String, String, usize)>;

/// `add`, `crawl`, then the exported posts by path: (title, text, comments); the outputs of
/// `coverage` and `list`; and the blog's origin (its server stays up until the test ends).
fn archive_pelican(db: &Path) -> (Posts, String, String, Blog) {
    let blog = serve("pelican");
    let added = ok(&archive(db, &["add", &blog.feed_url()]));
    assert!(added.contains("added"), "{added}");
    let crawled = ok(&archive(db, &["crawl"]));
    assert!(crawled.contains("crawl complete"), "{crawled}");
    let export = ok(&archive(db, &["export", "--format", "jsonl"]));
    let s = score(&blog.truth, &export);
    assert_eq!(
        (s.found, s.article_ok, s.false_positives),
        (s.posts, s.posts, 0),
        "{}",
        s.failures.join("\n")
    );
    let origin = blog.server.origin.clone();
    let posts = export
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|p| {
            (
                p["url"].as_str().unwrap().replace(&origin, ""),
                (
                    p["title"].as_str().unwrap_or("").to_string(),
                    p["content_text"].as_str().unwrap().to_string(),
                    p["comments"].as_array().map_or(0, Vec::len),
                ),
            )
        })
        .collect();
    let coverage = ok(&archive(db, &["coverage"])).replace(&origin, "");
    let list = ok(&archive(db, &["list"])).replace(&origin, "");
    (posts, coverage, list, blog)
}

#[test]
fn a_blog_archived_into_postgres_is_the_blog_archived_into_sqlite() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.database("archive");
    let dir = tempfile::tempdir().unwrap();
    let (sqlite_posts, sqlite_coverage, _, _) = archive_pelican(&dir.path().join("archive.db"));
    let db = Path::new(&url);
    let (pg_posts, pg_coverage, pg_list, blog) = archive_pelican(db);
    assert_eq!(
        pg_posts, sqlite_posts,
        "the same posts, titles, texts and comments"
    );
    let figures = |s: &str| -> Vec<String> {
        s.lines()
            .map(|l| {
                l.split_whitespace()
                    .filter(|w| w.parse::<u64>().is_ok())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    assert_eq!(
        figures(&pg_coverage),
        figures(&sqlite_coverage),
        "{pg_coverage}\n---\n{sqlite_coverage}"
    );
    assert!(pg_list.contains(&pg_posts.len().to_string()), "{pg_list}");

    // Read back from PostgreSQL: a post with its comments, and the captures as a WARC file.
    let (path, (title, _, _)) = pg_posts.iter().next().unwrap();
    let shown = ok(&archive(
        db,
        &["show", &format!("{}{path}", blog.server.origin)],
    ));
    assert!(shown.contains(title.as_str()), "{shown}");
    let warc = dir.path().join("a.warc.gz");
    ok(&archive(
        db,
        &[
            "export",
            "--format",
            "warc",
            "--output",
            warc.to_str().unwrap(),
        ],
    ));
    assert!(std::fs::metadata(&warc).unwrap().len() > 10_000);
}
