//! Blog-native exports (`--format atom|jsonfeed|wxr`) of real crawls: the WordPress mirror
//! (threaded comments, `fixtures/wordpress`) and the Pelican blog (posts by two authors)
//! archived into one SQLite file by the real binary. Atom and JSON Feed are parsed back with
//! feed-rs, WXR with quick-xml, and compared with the JSON Lines export of the same archive.

use crate::common::*;
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;
use quick_xml::XmlVersion;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One archive of both blogs, crawled once for every test of this file (the servers are
/// stopped after the crawl: exports read only the database).
struct Archive {
    _dir: tempfile::TempDir,
    db: PathBuf,
    /// Home URL → the blog's posts as JSON Lines rows.
    posts: HashMap<String, Vec<Value>>,
    /// Home URL → fixture name.
    names: HashMap<String, &'static str>,
}

fn archive_once() -> &'static Archive {
    static ARCHIVE: OnceLock<Archive> = OnceLock::new();
    ARCHIVE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("a.db");
        let mut origins = Vec::new();
        for name in ["wordpress", "pelican"] {
            let blog = serve(name);
            ok(&archive(&db, &["add", &blog.feed_url()]));
            ok(&archive(&db, &["crawl", &blog.feed_url()]));
            let posts = blog.truth["posts"].as_array().unwrap().len();
            origins.push((name, blog.server.origin.clone(), posts));
        }
        let mut posts: HashMap<String, Vec<Value>> = HashMap::new();
        for line in ok(&archive(&db, &["export"])).lines() {
            let row: Value = serde_json::from_str(line).unwrap();
            posts
                .entry(row["blog"].as_str().unwrap().to_string())
                .or_default()
                .push(row);
        }
        assert_eq!(posts.len(), 2, "both blogs archived");
        let mut names = HashMap::new();
        for (home, rows) in &posts {
            let (name, _, truth) = origins
                .iter()
                .find(|(_, origin, _)| home.starts_with(origin.as_str()))
                .unwrap();
            assert_eq!(rows.len(), *truth, "{name}: every post archived");
            names.insert(home.clone(), *name);
        }
        Archive {
            _dir: dir,
            db,
            posts,
            names,
        }
    })
}

impl Archive {
    fn home(&self, name: &str) -> &str {
        self.names.iter().find(|(_, n)| **n == name).unwrap().0
    }

    /// `archive export --format FORMAT -o <new dir> [args…]`; the blog's directory for `home`.
    fn export_to_dir(
        &self,
        format: &str,
        args: &[&str],
        home: &str,
    ) -> (tempfile::TempDir, PathBuf) {
        let out = tempfile::tempdir().unwrap();
        let mut all = vec!["export", "--format", format, "-o"];
        let dir = out.path().to_str().unwrap().to_string();
        all.push(&dir);
        all.extend_from_slice(args);
        ok(&archive(&self.db, &all));
        let blog_dir = out.path().join(everblog::export::feeds::blog_slug(home));
        assert!(blog_dir.is_dir(), "{} written", blog_dir.display());
        (out, blog_dir)
    }
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn instant(v: &Value) -> Option<chrono::DateTime<chrono::Utc>> {
    v.as_str()
        .map(|s| chrono::DateTime::parse_from_rfc3339(s).unwrap().to_utc())
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// Every feed-rs entry against the JSON Lines row of the same permalink: each post exactly
/// once, titles, authors as separate names, published instants, categories, HTML content.
fn assert_same_posts(rows: &[Value], entries: &[feed_rs::model::Entry], what: &str) {
    let by_url: HashMap<&str, &Value> = rows
        .iter()
        .map(|r| (r["url"].as_str().unwrap(), r))
        .collect();
    let mut seen = HashSet::new();
    for e in entries {
        let row = by_url
            .get(e.id.as_str())
            .unwrap_or_else(|| panic!("{what}: entry {} is no archived post", e.id));
        assert!(seen.insert(e.id.clone()), "{what}: {} twice", e.id);
        let link = e.links.first().map(|l| l.href.clone()).unwrap_or_default();
        assert_eq!(normalise_path(&link), normalise_path(&e.id), "{what}: link");
        assert_eq!(
            e.title.as_ref().map(|t| squash(&t.content)),
            row["title"].as_str().map(squash),
            "{what}: title of {}",
            e.id
        );
        let names: Vec<String> = e
            .authors
            .iter()
            .map(|a| a.name.clone().unwrap_or_default())
            .collect();
        assert_eq!(
            names,
            strings(&row["authors"]),
            "{what}: authors of {}",
            e.id
        );
        assert_eq!(
            e.published,
            instant(&row["published"]),
            "{what}: date of {}",
            e.id
        );
        let terms: Vec<String> = e.categories.iter().map(|c| c.term.clone()).collect();
        assert_eq!(terms, strings(&row["tags"]), "{what}: tags of {}", e.id);
        let body = e
            .content
            .as_ref()
            .and_then(|c| c.body.clone())
            .unwrap_or_default();
        assert_eq!(
            squash(&body),
            squash(row["content_html"].as_str().unwrap()),
            "{what}: content of {}",
            e.id
        );
    }
    assert_eq!(seen.len(), rows.len(), "{what}: every post once");
}

fn parse_feed(path: &Path) -> feed_rs::model::Feed {
    let bytes = std::fs::read(path).unwrap();
    feed_rs::parser::parse(&bytes[..])
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()))
}

fn link<'a>(feed: &'a feed_rs::model::Feed, rel: &str) -> Option<&'a str> {
    feed.links
        .iter()
        .find(|l| l.rel.as_deref() == Some(rel))
        .map(|l| l.href.as_str())
}

#[test]
fn atom_one_document_per_blog_parses_back_to_the_posts() {
    let a = archive_once();
    for name in ["wordpress", "pelican"] {
        let home = a.home(name);
        let (_out, dir) = a.export_to_dir("atom", &[], home);
        let feed = parse_feed(&dir.join("index.atom"));
        assert_eq!(link(&feed, "prev-archive"), None, "{name}: one document");
        assert!(!dir.join("archive-1.atom").exists());
        assert_same_posts(&a.posts[home], &feed.entries, name);
    }
    // Both blogs' posts have authors, each compared as its own <author> above (two names in
    // one post: src/export/atom.rs's unit test; the crawl gives Pelican's shared posts one).
    assert!(a
        .posts
        .values()
        .flatten()
        .all(|r| !strings(&r["authors"]).is_empty()));
}

#[test]
fn atom_archive_documents_hold_every_post_once() {
    let a = archive_once();
    let home = a.home("wordpress");
    let rows = &a.posts[home];
    // 36 posts in pages of 10: index.atom holds the newest 6, archive-1…3 ten each.
    let (_out, dir) = a.export_to_dir("atom", &["--blog", home, "--atom-page-size", "10"], home);
    let current = parse_feed(&dir.join("index.atom"));
    assert_eq!(current.entries.len(), rows.len() - 30);
    assert!(!dir.join("archive-4.atom").exists());
    let mut entries = current.entries.clone();
    let mut next = link(&current, "prev-archive").map(str::to_string);
    let mut pages = Vec::new();
    while let Some(name) = next {
        let raw = std::fs::read_to_string(dir.join(&name)).unwrap();
        assert!(
            raw.contains("<fh:archive/>")
                && raw.contains("http://purl.org/syndication/history/1.0"),
            "{name} is marked as an archive document"
        );
        let doc = parse_feed(&dir.join(&name));
        assert_eq!(doc.entries.len(), 10, "{name} is full");
        assert_eq!(link(&doc, "current"), Some("index.atom"));
        entries.extend(doc.entries.iter().cloned());
        next = link(&doc, "prev-archive").map(str::to_string);
        pages.push((name, doc));
    }
    let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["archive-3.atom", "archive-2.atom", "archive-1.atom"]
    );
    assert_eq!(
        link(&pages[0].1, "next-archive"),
        None,
        "the newest archive"
    );
    assert_eq!(link(&pages[1].1, "next-archive"), Some("archive-3.atom"));
    // Oldest posts in archive-1: every post there is older than every post of archive-2.
    let newest_of = |d: &feed_rs::model::Feed| d.entries.iter().filter_map(|e| e.published).max();
    let oldest_of = |d: &feed_rs::model::Feed| d.entries.iter().filter_map(|e| e.published).min();
    assert!(newest_of(&pages[2].1) <= oldest_of(&pages[1].1));
    assert!(newest_of(&pages[0].1) <= oldest_of(&current));
    assert_same_posts(rows, &entries, "atom archive documents");

    // A larger page size later: the archive documents it no longer needs are removed.
    let out = tempfile::tempdir().unwrap();
    let o = out.path().to_str().unwrap();
    for size in ["10", "20"] {
        ok(&archive(
            &a.db,
            &[
                "export",
                "--format",
                "atom",
                "--blog",
                home,
                "-o",
                o,
                "--atom-page-size",
                size,
            ],
        ));
    }
    let blog_dir = out.path().join(everblog::export::feeds::blog_slug(home));
    assert!(blog_dir.join("archive-1.atom").exists());
    assert!(!blog_dir.join("archive-2.atom").exists());
}

#[test]
fn json_feed_parses_back_to_the_posts() {
    let a = archive_once();
    for name in ["wordpress", "pelican"] {
        let home = a.home(name);
        let rows = &a.posts[home];
        let (_out, dir) = a.export_to_dir("jsonfeed", &[], home);
        let path = dir.join("feed.json");
        let feed = parse_feed(&path);
        assert_same_posts(rows, &feed.entries, name);
        // content_text as archived (feed-rs keeps only one of html/text).
        let raw: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(raw["version"], "https://jsonfeed.org/version/1.1");
        for (item, row) in raw["items"].as_array().unwrap().iter().zip(rows) {
            assert_eq!(item["id"], row["url"]);
            assert_eq!(
                squash(item["content_text"].as_str().unwrap()),
                squash(row["content_text"].as_str().unwrap())
            );
        }
    }
    // One blog to stdout: the same document.
    let home = a.home("pelican");
    let out = ok(&archive(
        &a.db,
        &["export", "--format", "jsonfeed", "--blog", home],
    ));
    let feed = feed_rs::parser::parse(out.as_bytes()).unwrap();
    assert_same_posts(&a.posts[home], &feed.entries, "jsonfeed on stdout");
}

/// The WXR document as (items, channel authors' logins, channel tag slugs), every element in
/// its namespace.
#[derive(Default, Debug)]
struct Wxr {
    items: Vec<Item>,
    logins: HashSet<String>,
    tag_slugs: HashSet<String>,
    category_slugs: HashSet<String>,
    wxr_version: String,
}

#[derive(Default, Debug)]
struct Item {
    link: String,
    creator: String,
    post_date: String,
    post_date_gmt: String,
    post_type: String,
    categories: Vec<(String, String, String)>,
    comments: Vec<HashMap<String, String>>,
}

const WP: &[u8] = b"http://wordpress.org/export/1.2/";
const DC: &[u8] = b"http://purl.org/dc/elements/1.1/";

fn parse_wxr(path: &Path) -> Wxr {
    let mut r = NsReader::from_file(path).unwrap();
    let mut buf = Vec::new();
    let mut out = Wxr::default();
    let mut stack: Vec<(Vec<u8>, Vec<u8>)> = Vec::new(); // (namespace, local name)
    let mut text = String::new();
    let mut category = None;
    loop {
        let (ns, ev) = r.read_resolved_event_into(&mut buf).unwrap();
        let ns = match ns {
            ResolveResult::Bound(n) => n.as_ref().as_bytes().to_vec(),
            _ => Vec::new(),
        };
        match ev {
            Event::Start(e) => {
                let local = e.local_name().as_ref().as_bytes().to_vec();
                if local == b"item" && stack.len() == 2 {
                    out.items.push(Item::default());
                }
                if ns == WP && local == b"comment" {
                    out.items.last_mut().unwrap().comments.push(HashMap::new());
                }
                if local == b"category" && ns.is_empty() {
                    let attr = |k: &str| {
                        e.try_get_attribute(k)
                            .unwrap()
                            .map(|a| {
                                a.normalized_value(XmlVersion::Implicit1_0)
                                    .unwrap()
                                    .into_owned()
                            })
                            .unwrap_or_default()
                    };
                    category = Some((attr("domain"), attr("nicename")));
                }
                stack.push((ns, local));
                text.clear();
            }
            Event::Text(t) => text.push_str(&t.xml_content(XmlVersion::Implicit1_0)),
            Event::CData(t) => text.push_str(&t),
            Event::GeneralRef(g) => {
                let name: &str = &g;
                text.push_str(match name {
                    "amp" => "&",
                    "lt" => "<",
                    "gt" => ">",
                    "quot" => "\"",
                    "apos" => "'",
                    other => panic!("entity {other}"),
                });
            }
            Event::End(_) => {
                let (ns, local) = stack.pop().unwrap();
                let parent = stack.last().map(|(_, l)| l.as_slice());
                let value = std::mem::take(&mut text);
                let local = std::str::from_utf8(&local).unwrap().to_string();
                let item = out.items.last_mut();
                match (ns.as_slice(), local.as_str(), parent) {
                    (WP, "wxr_version", _) => out.wxr_version = value,
                    (WP, "author_login", _) => {
                        out.logins.insert(value);
                    }
                    (WP, "tag_slug", _) => {
                        out.tag_slugs.insert(value);
                    }
                    (WP, "category_nicename", _) => {
                        out.category_slugs.insert(value);
                    }
                    (WP, _, Some(b"comment")) => {
                        item.unwrap()
                            .comments
                            .last_mut()
                            .unwrap()
                            .insert(local, value);
                    }
                    (b"", "link", Some(b"item")) => item.unwrap().link = value,
                    (DC, "creator", _) => item.unwrap().creator = value,
                    (WP, "post_date", _) => item.unwrap().post_date = value,
                    (WP, "post_date_gmt", _) => item.unwrap().post_date_gmt = value,
                    (WP, "post_type", _) => item.unwrap().post_type = value,
                    (b"", "category", Some(b"item")) => {
                        let (domain, nicename) = category.take().unwrap();
                        item.unwrap().categories.push((domain, nicename, value));
                    }
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    out
}

fn wp_date(s: &str) -> chrono::NaiveDateTime {
    chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S")
        .unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

#[test]
fn wxr_items_comments_threads_and_dates() {
    let a = archive_once();
    let home = a.home("wordpress");
    let rows = &a.posts[home];
    let (_out, dir) = a.export_to_dir("wxr", &["--blog", home], home);
    let raw = std::fs::read_to_string(dir.join("wordpress.xml")).unwrap();
    for ns in [
        "xmlns:excerpt=\"http://wordpress.org/export/1.2/excerpt/\"",
        "xmlns:content=\"http://purl.org/rss/1.0/modules/content/\"",
        "xmlns:wfw=\"http://wellformedweb.org/CommentAPI/\"",
        "xmlns:dc=\"http://purl.org/dc/elements/1.1/\"",
        "xmlns:wp=\"http://wordpress.org/export/1.2/\"",
    ] {
        assert!(raw.contains(ns), "{ns}");
    }
    // Every item has a pubDate, attachments and pages too, as WordPress's export has (PyPI
    // wpparser fails on an item without).
    for item in raw.split("<item>").skip(1) {
        let item = &item[..item.find("</item>").unwrap()];
        assert!(
            item.contains("<pubDate>"),
            "an item without pubDate: {item}"
        );
    }
    let mut wxr = parse_wxr(&dir.join("wordpress.xml"));
    assert_eq!(wxr.wxr_version, "1.2");
    // The images come after the posts, as attachment items (tests/engines/wxr_restore.rs).
    let attachments = wxr
        .items
        .iter()
        .filter(|i| i.post_type == "attachment")
        .count();
    assert_eq!(attachments, 10, "the fixture's images");
    wxr.items.retain(|i| i.post_type == "post");
    assert_eq!(wxr.items.len(), rows.len(), "an item per post");
    let by_url: HashMap<&str, &Value> = rows
        .iter()
        .map(|r| (r["url"].as_str().unwrap(), r))
        .collect();
    let archived: usize = rows
        .iter()
        .map(|r| r["comments"].as_array().unwrap().len())
        .sum();
    let exported: usize = wxr.items.iter().map(|i| i.comments.len()).sum();
    assert!(
        archived > 200,
        "the fixture's threaded comments were archived"
    );
    assert_eq!(exported, archived, "a wp:comment per archived comment");
    let mut all_ids = HashSet::new();
    let mut replies = 0;
    for item in &wxr.items {
        let row = by_url[item.link.as_str()];
        // dc:creator is a declared login; dates: local − GMT = the post's stored offset.
        assert!(
            wxr.logins.contains(&item.creator),
            "{}: creator {}",
            item.link,
            item.creator
        );
        let published =
            chrono::DateTime::parse_from_rfc3339(row["published"].as_str().unwrap()).unwrap();
        assert_eq!(wp_date(&item.post_date_gmt), published.naive_utc());
        assert_eq!(wp_date(&item.post_date), published.naive_local());
        // Categories apart from tags, each declared in the channel (WordPress posts of this
        // blog have one category each).
        let mut categories = 0;
        for (domain, nicename, _) in &item.categories {
            let declared = match domain.as_str() {
                "category" => {
                    categories += 1;
                    &wxr.category_slugs
                }
                "post_tag" => &wxr.tag_slugs,
                other => panic!("taxonomy {other}"),
            };
            assert!(declared.contains(nicename), "{domain} {nicename} declared");
        }
        assert_eq!(categories, 1, "{}: its category", item.link);
        assert_eq!(item.categories.len(), strings(&row["tags"]).len());
        let archived_comments: HashMap<&str, &Value> = row["comments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["id"].as_str().unwrap(), c))
            .collect();
        let ids: HashMap<u64, &HashMap<String, String>> = item
            .comments
            .iter()
            .map(|c| (c["comment_id"].parse().unwrap(), c))
            .collect();
        assert_eq!(ids.len(), item.comments.len(), "comment ids unique");
        for (id, c) in &ids {
            assert!(all_ids.insert(*id), "comment id {id} unique in the file");
            assert_eq!(c["comment_approved"], "1");
            let parent: u64 = c["comment_parent"].parse().unwrap();
            if parent != 0 {
                replies += 1;
                assert!(
                    ids.contains_key(&parent),
                    "parent {parent} is a comment of the same post"
                );
                assert!(
                    parent < *id,
                    "the importer inserts by id: parent {parent} before {id}"
                );
            }
            let local = wp_date(&c["comment_date"]);
            let gmt = wp_date(&c["comment_date_gmt"]);
            // On the blog's clock at the comment's own date (summer or winter time), as the
            // page gave it: the offset of the archived comment of that instant.
            let offset = (local - gmt).num_seconds();
            let theirs: Vec<i64> = archived_comments
                .values()
                .filter_map(|a| a["published"].as_str())
                .map(|p| chrono::DateTime::parse_from_rfc3339(p).unwrap())
                .filter(|p| p.naive_utc() == gmt)
                .map(|p| p.offset().local_minus_utc() as i64)
                .collect();
            assert!(
                theirs.contains(&offset),
                "{}: comment of {gmt} at {offset} s, archived at {theirs:?}",
                item.link
            );
        }
    }
    let archived_replies: usize = rows
        .iter()
        .flat_map(|r| r["comments"].as_array().unwrap())
        .filter(|c| !c["parent"].is_null())
        .count();
    assert!(archived_replies > 0);
    assert_eq!(
        replies, archived_replies,
        "every archived reply keeps its parent"
    );
}

#[test]
fn stdout_takes_one_blog_and_one_document() {
    let a = archive_once();
    for format in ["atom", "jsonfeed", "wxr"] {
        let out = archive(&a.db, &["export", "--format", format]);
        assert!(!out.status.success(), "{format} of two blogs to stdout");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains("--output DIR"), "{err}");
        assert!(out.stdout.is_empty(), "nothing written");
    }
    let home = a.home("wordpress");
    let out = archive(
        &a.db,
        &[
            "export",
            "--format",
            "atom",
            "--blog",
            home,
            "--atom-page-size",
            "10",
        ],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("--output DIR"), "{err}");
    assert!(out.stdout.is_empty(), "nothing written");
    // One blog that fits one document: to stdout.
    let out = ok(&archive(
        &a.db,
        &["export", "--format", "atom", "--blog", home],
    ));
    let feed = feed_rs::parser::parse(out.as_bytes()).unwrap();
    assert_same_posts(&a.posts[home], &feed.entries, "atom on stdout");
}

/// Every file of `dir`, recursively, as paths relative to it.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// Every `href`/`src` value of an HTML document, as written (entities decoded).
fn addresses(html: &str) -> Vec<(String, String)> {
    let doc = scraper::Html::parse_document(html);
    let sel = scraper::Selector::parse("[href], [src]").unwrap();
    let mut out = Vec::new();
    for el in doc.select(&sel) {
        for attr in ["href", "src"] {
            if let Some(v) = el.value().attr(attr) {
                out.push((attr.to_string(), v.to_string()));
            }
        }
    }
    out
}

/// `--format html`: the static copy of both blogs. Every archived post has one page holding its
/// title, its article and each of its comments; the listing pages link every post exactly once;
/// every relative address resolves to a file of the copy; nothing is loaded from the web and no
/// page has a script; a second export writes the same bytes.
#[test]
fn html_copy_holds_every_post_and_comment_and_resolves_every_link() {
    let a = archive_once();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("site");
    let export = archive(
        &a.db,
        &["export", "--format", "html", "-o", dir.to_str().unwrap()],
    );
    ok(&export);
    let said = String::from_utf8_lossy(&export.stderr);
    assert!(said.contains("index.html"), "{said}");
    let files = files_under(&dir);
    assert!(files.contains(&PathBuf::from("index.html")), "{files:?}");
    assert!(files.contains(&PathBuf::from("style.css")), "{files:?}");

    // Every relative address of every page is a file of the copy; no page loads anything
    // from the web or holds a script.
    let mut pages = HashMap::new();
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "html"))
    {
        let html = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(!html.contains("<script"), "{}: a script", f.display());
        assert!(
            html.contains("script-src 'none'"),
            "{}: no policy",
            f.display()
        );
        for (attr, v) in addresses(&html) {
            if v.starts_with('#') || v.starts_with("mailto:") {
                continue;
            }
            if v.starts_with("http://") || v.starts_with("https://") {
                assert_eq!(
                    attr,
                    "href",
                    "{}: {attr}={v} loads from the web",
                    f.display()
                );
                continue;
            }
            let target = dir
                .join(f.parent().unwrap())
                .join(v.split('#').next().unwrap());
            assert!(
                target.is_file(),
                "{}: {attr}={v} is no file of the copy",
                f.display()
            );
        }
        pages.insert(f.clone(), html);
    }

    for (home, rows) in &a.posts {
        let slug = everblog::export::feeds::blog_slug(home);
        assert!(
            pages[&PathBuf::from("index.html")].contains(&format!("href=\"{slug}/index.html\"")),
            "the index links {slug}"
        );
        // The listing pages link each post's page exactly once.
        let mut linked: HashMap<String, usize> = HashMap::new();
        for (f, html) in &pages {
            let listing = f.starts_with(&slug)
                && f.parent() == Some(Path::new(&slug))
                && f.file_name().is_some_and(|n| {
                    let n = n.to_string_lossy();
                    n == "index.html" || n.starts_with("page-")
                });
            if listing {
                for (_, v) in addresses(html) {
                    if let Some(p) = v.strip_prefix("posts/") {
                        *linked.entry(p.to_string()).or_default() += 1;
                    }
                }
            }
        }
        let post_files: Vec<&PathBuf> = files
            .iter()
            .filter(|f| f.starts_with(Path::new(&slug).join("posts")))
            .collect();
        assert_eq!(post_files.len(), rows.len(), "{slug}: a page per post");
        assert_eq!(linked.len(), rows.len(), "{slug}: every post listed");
        assert!(linked.values().all(|&n| n == 1), "{slug}: each listed once");
        // Each post's page: its title, its article's words, each comment once.
        let mut found = 0;
        for row in rows {
            let title = row["title"].as_str().unwrap();
            let page = post_files
                .iter()
                .map(|f| &pages[*f])
                .find(|html| {
                    scraper::Html::parse_document(html)
                        .select(&scraper::Selector::parse("article.post h1").unwrap())
                        .any(|h| h.text().collect::<String>() == title)
                })
                .unwrap_or_else(|| panic!("{slug}: no page titled {title:?}"));
            let text = squash(
                &scraper::Html::parse_document(page)
                    .select(&scraper::Selector::parse("article.post .content").unwrap())
                    .map(|c| c.text().collect::<Vec<_>>().join(" "))
                    .collect::<String>(),
            );
            assert!(
                token_f1(&text, row["content_text"].as_str().unwrap()) > 0.99,
                "{title}: article"
            );
            let comments = row["comments"].as_array().unwrap();
            for c in comments {
                let id = format!("id=\"comment-{}\"", c["id"].as_str().unwrap());
                assert_eq!(page.matches(&id).count(), 1, "{title}: comment {id}");
            }
            found += comments.len();
        }
        if a.names[home] == "wordpress" {
            assert!(found > 20, "the WordPress comments are shown: {found}");
        }
    }

    // The same archive exports to the same bytes.
    let again = out.path().join("again");
    ok(&archive(
        &a.db,
        &["export", "--format", "html", "-o", again.to_str().unwrap()],
    ));
    assert_eq!(files_under(&again), files);
    for f in &files {
        assert_eq!(
            std::fs::read(dir.join(f)).unwrap(),
            std::fs::read(again.join(f)).unwrap(),
            "{} differs",
            f.display()
        );
    }
    // A directory is needed.
    let out = archive(&a.db, &["export", "--format", "html"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("--output DIR"), "{err}");
}

/// The blog's language (issue 29, items 7 and 9): WordPress's feed says `en-US`; Pelican's
/// feed says nothing, and its pages' `<html lang="en">` do. Every export declares it, and the
/// HTML copy marks the posts (not the reader's own words) with it.
#[test]
fn the_blogs_language_from_its_feed_or_its_pages_reaches_every_export() {
    let a = archive_once();
    for (name, language) in [("wordpress", "en-US"), ("pelican", "en")] {
        let home = a.home(name);
        let (_out, dir) = a.export_to_dir("atom", &["--blog", home], home);
        let feed = parse_feed(&dir.join("index.atom"));
        assert_eq!(feed.language.as_deref(), Some(language), "{name}: Atom");
        let (_out, dir) = a.export_to_dir("jsonfeed", &["--blog", home], home);
        let raw: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("feed.json")).unwrap()).unwrap();
        assert_eq!(raw["language"], language, "{name}: JSON Feed");
        let (_out, dir) = a.export_to_dir("wxr", &["--blog", home], home);
        let raw = std::fs::read_to_string(dir.join("wordpress.xml")).unwrap();
        assert!(
            raw.contains(&format!("<language>{language}</language>")),
            "{name}: WXR"
        );
        let (_out, dir) = a.export_to_dir("html", &["--blog", home], home);
        let post = files_under(&dir)
            .into_iter()
            .find(|f| f.starts_with("posts"))
            .unwrap();
        let page = std::fs::read_to_string(dir.join(post)).unwrap();
        assert!(
            page.contains(&format!("<article class=\"post\" lang=\"{language}\">")),
            "{name}: HTML copy"
        );
    }
}
