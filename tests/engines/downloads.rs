//! Downloads in the reader (issue 45 item 8): two real-engine blogs (the WordPress mirror with
//! images, the Pelican blog) archived by the real binary, then `archive serve`. Each blog's
//! page links its Atom feed (also as `link rel="alternate"`, so a feed reader finds it), JSON
//! Feed, WXR and WACZ; each download is the document `archive export` writes of the same
//! archive, parsed back with feed-rs, quick-xml and the `opml` crate, the WACZ checked by
//! `wacz validate` (PyPI). The WXR's images lead to the reader's own captures, which answer.
//! `archive export --format opml` and the home page's `/blogs.opml` list both blogs.

use crate::common::*;
use crate::webarchive::{run, tools};
use serde_json::Value;
use std::collections::HashMap;
use std::process::Command;

struct Got {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Vec<u8>,
}

fn get(port: u16, path: &str) -> Got {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let r = reqwest::get(format!("http://127.0.0.1:{port}{path}"))
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        Got {
            status: r.status().as_u16(),
            headers: r.headers().clone(),
            body: r.bytes().await.unwrap().to_vec(),
        }
    })
}

impl Got {
    fn ok(self, path: &str) -> Got {
        assert_eq!(
            self.status,
            200,
            "{path}: {}",
            String::from_utf8_lossy(&self.body)
        );
        self
    }
    fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap()
    }
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap())
            .unwrap_or("")
    }
}

/// (feed URL, home URL) of each outline, in order.
fn outlines(opml_text: &str) -> Vec<(String, String)> {
    let doc = opml::OPML::from_str(opml_text).unwrap_or_else(|e| panic!("{e}: {opml_text}"));
    doc.body
        .outlines
        .iter()
        .map(|o| (o.xml_url.clone().unwrap(), o.html_url.clone().unwrap()))
        .collect()
}

/// The `<link>` of every WXR item of type attachment (`wp:attachment_url`), and the items.
fn wxr_items(xml: &str) -> (usize, Vec<String>) {
    let mut r = quick_xml::Reader::from_str(xml);
    let (mut items, mut attachments, mut in_url) = (0, Vec::new(), false);
    loop {
        match r.read_event().unwrap() {
            quick_xml::events::Event::Start(e) if e.name().as_ref() == "item" => items += 1,
            quick_xml::events::Event::Start(e) if e.name().as_ref() == "wp:attachment_url" => {
                in_url = true
            }
            quick_xml::events::Event::CData(t) if in_url => {
                attachments.push(t.trim().to_string());
                in_url = false;
            }
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    (items, attachments)
}

#[test]
fn each_blog_offers_its_feeds_wxr_and_wacz_and_the_home_page_an_opml() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let mut feeds = Vec::new();
    for name in ["wordpress", "pelican"] {
        let blog = serve(name);
        ok(&archive(&db, &["add", &blog.feed_url()]));
        ok(&archive(&db, &["crawl", &blog.feed_url()]));
        feeds.push(blog.feed_url());
    }
    // The command line's OPML lists both blogs' feeds, and reads back as `archive add --from`
    // would.
    let cli_opml = ok(&archive(&db, &["export", "--format", "opml"]));
    let listed = outlines(&cli_opml);
    let mut listed_feeds: Vec<String> = listed.iter().map(|(f, _)| f.clone()).collect();
    listed_feeds.sort();
    feeds.sort();
    assert_eq!(listed_feeds, feeds);

    let config = loopback_config();
    let (_serving, port) = serve_archive(&db, &config, &[]);
    let home = get(port, "/").ok("/").text();
    assert!(home.contains("href=\"/blogs.opml\""), "{home}");
    let opml = get(port, "/blogs.opml").ok("/blogs.opml");
    assert!(opml.header("content-disposition").contains("blogs.opml"));
    assert_eq!(outlines(&opml.text()), listed);

    let blogs: Vec<Value> =
        serde_json::from_slice(&get(port, "/api/blogs").ok("api").body).unwrap();
    let ids: HashMap<String, i64> = blogs
        .iter()
        .map(|b| {
            (
                b["home_url"].as_str().unwrap().to_string(),
                b["id"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(ids.len(), 2);
    let venv = tools();
    for (home_url, id) in &ids {
        let page = get(port, &format!("/blog/{id}")).ok("blog").text();
        let base = format!("/blog/{id}");
        assert!(
            page.contains("rel=\"alternate\" type=\"application/atom+xml\"")
                && page.contains(&format!("href=\"{base}/index.atom\"")),
            "{home_url}: no subscribable feed link"
        );
        for name in ["feed.json", "wordpress.xml", "archive.wacz"] {
            assert!(
                page.contains(&format!("href=\"{base}/{name}\"")),
                "{home_url}: {name}"
            );
        }
        let rows = ok(&archive(&db, &["export", "--blog", home_url]));
        let posts: Vec<String> = rows
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["url"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert!(!posts.is_empty());

        // Atom: the newest posts, as `export --format atom` writes them; feed-rs reads it.
        let atom = get(port, &format!("{base}/index.atom")).ok("atom");
        assert_eq!(atom.header("content-type"), "application/atom+xml");
        let cli_atom = ok(&archive(
            &db,
            &["export", "--format", "atom", "--blog", home_url],
        ));
        let ours = feed_rs::parser::parse(atom.body.as_slice()).unwrap();
        let theirs = feed_rs::parser::parse(cli_atom.as_bytes()).unwrap();
        let ids_of =
            |f: &feed_rs::model::Feed| f.entries.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids_of(&ours), ids_of(&theirs), "{home_url}");
        assert_eq!(
            ours.entries.len(),
            posts.len(),
            "{home_url}: every post in the feed"
        );
        assert_eq!(get(port, &format!("{base}/archive-1.atom")).status, 404);
        assert_eq!(get(port, &format!("{base}/notes.txt")).status, 404);

        // JSON Feed: the same document as on the command line.
        let json = get(port, &format!("{base}/feed.json")).ok("json");
        let cli_json = ok(&archive(
            &db,
            &["export", "--format", "jsonfeed", "--blog", home_url],
        ));
        assert_eq!(
            serde_json::from_slice::<Value>(&json.body).unwrap(),
            serde_json::from_str::<Value>(&cli_json).unwrap()
        );

        // WXR: saved as a file; as `--media-from` this reader writes it; its images answer.
        let wxr = get(port, &format!("{base}/wordpress.xml")).ok("wxr");
        assert!(wxr.header("content-disposition").starts_with("attachment"));
        let media_from = format!("http://127.0.0.1:{port}/");
        let cli_wxr = ok(&archive(
            &db,
            &[
                "export",
                "--format",
                "wxr",
                "--blog",
                home_url,
                "--media-from",
                &media_from,
            ],
        ));
        let (items, attachments) = wxr_items(&wxr.text());
        assert_eq!(
            (items, attachments.clone()),
            wxr_items(&cli_wxr),
            "{home_url}"
        );
        for a in &attachments {
            let path = a
                .strip_prefix(&media_from[..media_from.len() - 1])
                .unwrap_or_else(|| panic!("{home_url}: attachment {a} is not from this reader"));
            let image = get(port, path).ok(path);
            assert!(image.header("content-type").starts_with("image/"), "{a}");
        }
        // WACZ: the blog's captures, a package `wacz validate` accepts.
        let wacz = get(port, &format!("{base}/archive.wacz")).ok("wacz");
        assert!(wacz.header("content-disposition").contains(".wacz"));
        assert_eq!(&wacz.body[..2], b"PK");
        if let Some(venv) = &venv {
            let file = dir.path().join(format!("{id}.wacz"));
            std::fs::write(&file, &wacz.body).unwrap();
            let out = run(Command::new(venv.join("bin/wacz"))
                .arg("validate")
                .arg("-f")
                .arg(&file));
            assert!(out.contains("valid"), "{out}");
        }
    }
    // One blog has images: the WXR test above checked downloads, not nothing.
    let wxr_images: usize = ids
        .values()
        .map(|id| {
            wxr_items(&get(port, &format!("/blog/{id}/wordpress.xml")).text())
                .1
                .len()
        })
        .sum();
    assert!(wxr_images > 0, "no blog's WXR has an image to download");
}
