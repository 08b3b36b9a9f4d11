//! WXR as other readers of the format read it (issue 45 item 9): the WordPress mirror
//! (`fixtures/wordpress`, with images and threaded comments) and the Pelican blog archived by
//! the real binary, exported with `--format wxr`, and parsed by `wpparser` (PyPI, pinned by
//! `fixtures/wxr/wpparser.sh`), which reads every element WordPress's own export gives every
//! item and crashed on attachments without `<pubDate>`. Every post, page and attachment is
//! read back, with its comments.

use crate::common::*;
use serde_json::Value;
use std::process::Command;

#[test]
fn wpparser_reads_every_item_of_the_wxr_export() {
    let out = Command::new("bash")
        .arg(fixture_dir("wxr").join("wpparser.sh"))
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "fixtures/wxr/wpparser.sh failed (it needs python3-venv and PyPI):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let venv = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap()
        .trim()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    for name in ["wordpress", "pelican"] {
        let blog = serve(name);
        ok(&archive(&db, &["add", &blog.feed_url()]));
        ok(&archive(&db, &["crawl", &blog.feed_url()]));
        let rows: Vec<Value> = ok(&archive(&db, &["export", "--blog", &blog.feed_url()]))
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let home = rows[0]["blog"].as_str().unwrap().to_string();
        let wxr = dir.path().join(format!("{name}.xml"));
        std::fs::write(
            &wxr,
            ok(&archive(
                &db,
                &["export", "--format", "wxr", "--blog", &home],
            )),
        )
        .unwrap();
        let parsed = Command::new(format!("{venv}/bin/python"))
            .arg("-c")
            .arg(
                "import json, sys, wpparser
d = wpparser.parse(sys.argv[1])
kinds = {}
for p in d['posts']:
    kinds[p['post_type']] = kinds.get(p['post_type'], 0) + 1
print(json.dumps({'kinds': kinds, 'comments': sum(len(p['comments']) for p in d['posts']),
                  'dated': all(p['pub_date'] for p in d['posts']),
                  'authors': len(d['authors'])}))",
            )
            .arg(&wxr)
            .output()
            .unwrap();
        assert!(
            parsed.status.success(),
            "{name}: wpparser failed on the export:\n{}",
            String::from_utf8_lossy(&parsed.stderr)
        );
        let got: Value = serde_json::from_slice(&parsed.stdout).unwrap();
        eprintln!("{name}: wpparser read {got}");
        let comments: usize = rows
            .iter()
            .map(|r| r["comments"].as_array().map_or(0, Vec::len))
            .sum();
        assert_eq!(got["kinds"]["post"], rows.len(), "{name}: {got}");
        assert_eq!(got["comments"], comments, "{name}: {got}");
        assert_eq!(got["dated"], true, "{name}: an item without pubDate");
        assert!(got["authors"].as_u64().unwrap() >= 1, "{name}: {got}");
        if name == "wordpress" {
            assert!(
                got["kinds"]["attachment"].as_u64().unwrap_or(0) > 0,
                "{name}: the images as attachments: {got}"
            );
        }
    }
}
