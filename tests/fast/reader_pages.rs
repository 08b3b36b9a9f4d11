//! The reader's pages as a reader meets them (issue 29, item 9), on the demo blog archived by
//! `archive demo --db`: counts read as English ("1 comment"), a page past the last is a 404,
//! an error the web framework answers (a malformed address) is the reader's HTML page, and
//! operator words stay out of the reader's pages.

use crate::common::*;

#[test]
fn the_reader_speaks_plainly_and_errors_are_pages() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    ok(&archive(&db, &["demo"]));
    let config = dir.path().join("config.toml");
    write_config(&config, "").unwrap();
    let (_serving, port) = serve_archive(&db, &config, &[]);

    let (status, home) = raw_get(port, "/");
    assert_eq!(status, 200);
    assert!(!home.contains("Rules learned"), "operator words: {home}");
    assert!(home.contains("href=\"#main\""), "no skip link");

    let (status, blog) = raw_get(port, "/blog/1");
    assert_eq!(status, 200);
    let (status, past) = raw_get(port, "/blog/1?page=999");
    assert_eq!(status, 404, "{past}");
    assert!(past.contains("no page 999"), "{past}");

    // A post page leads on: to its blog, its authors' and tags' posts, the posts next to it.
    let hrefs: Vec<&str> = blog
        .split("href=\"/post?url=")
        .skip(1)
        .map(|h| &h[..h.find('"').unwrap()])
        .collect();
    let (_, newest) = raw_get(port, &format!("/post?url={}", hrefs[0]));
    assert!(
        newest.contains("<nav class=\"crumbs\"><a href=\"/blog/1\">"),
        "{newest}"
    );
    assert!(
        newest.contains("href=\"/blog/1?author="),
        "authors link: {newest}"
    );
    // Pelican links each author's page: kept by the crawl, linked by the post and the blog.
    let profile = "class=\"author-page\" href=\"/go?url=http";
    assert!(newest.contains(profile), "the author's page: {newest}");
    assert!(blog.contains(profile), "the authors' pages: {blog}");
    assert!(
        newest.contains(&format!("rel=\"next\" href=\"/post?url={}\"", hrefs[1])),
        "the next older post: {newest}"
    );
    assert!(
        !newest.contains("rel=\"prev\""),
        "nothing is newer than the newest"
    );
    // Article, comments, then the posts next to it.
    let at = |what: &str| {
        newest
            .find(what)
            .unwrap_or_else(|| panic!("{what}: {newest}"))
    };
    assert!(at("<article class=\"post\"") < at("id=\"comments\""));
    assert!(at("id=\"comments\"") < at("class=\"pager posts\""));
    let (_, second) = raw_get(port, &format!("/post?url={}", hrefs[1]));
    assert!(
        second.contains(&format!("rel=\"prev\" href=\"/post?url={}\"", hrefs[0])),
        "{second}"
    );

    // Every post of the first page, and the blog's page: no "1 comments", no "1 posts".
    let mut pages = vec![blog.clone()];
    for href in blog.split("href=\"/post?url=").skip(1) {
        let href = &href[..href.find('"').unwrap()];
        let (status, page) = raw_get(port, &format!("/post?url={href}"));
        assert_eq!(status, 200, "{href}");
        pages.push(page);
    }
    assert!(pages.len() > 5, "{} pages", pages.len());
    for page in &pages {
        for wrong in [">1 comments", " 1 comments", ">1 posts", " 1 posts"] {
            assert!(!page.contains(wrong), "{wrong:?} in {page}");
        }
    }
    // The demo blog has no comments: its posts say so, not "0 comments".
    for page in &pages[1..] {
        assert!(page.contains("Comments not captured"), "{page}");
        assert!(!page.contains("0 comments"), "{page}");
    }

    // Conditional requests: a page is tagged and revalidated; held, it is a 304 without a body.
    let (_, home) = raw_get(port, "/");
    assert_eq!(header(&home, "cache-control"), Some("no-cache"), "{home}");
    let tag = header(&home, "etag").expect("an ETag").to_string();
    let again = get_with(port, "/", &format!("If-None-Match: {tag}\r\n"));
    assert!(again.starts_with("HTTP/1.1 304"), "{again}");
    assert_eq!(again.split("\r\n\r\n").nth(1), Some(""), "{again}");
    let other = get_with(port, "/", "If-None-Match: \"other\"\r\n");
    assert!(other.starts_with("HTTP/1.1 200"), "{other}");
    // A capture's bytes as received never change: named by the stored response, immutable.
    let (status, moved) = raw_get(port, &format!("/web/2100id_/{}", unescape_url(hrefs[0])));
    assert_eq!(status, 302, "{moved}");
    let exact = header(&moved, "location").unwrap().to_string();
    let (status, bytes) = raw_get(port, &exact);
    assert_eq!(status, 200, "{bytes}");
    assert_eq!(
        header(&bytes, "cache-control"),
        Some("max-age=31536000, immutable")
    );
    let tag = header(&bytes, "etag")
        .expect("the capture's ETag")
        .to_string();
    assert!(tag.starts_with("\"capture-"), "{tag}");
    let again = get_with(port, &exact, &format!("If-None-Match: {tag}\r\n"));
    assert!(again.starts_with("HTTP/1.1 304"), "{again}");
    // A 304 carries the full answer's headers: a capture keeps its sandboxing policy.
    let policy = |answer: &str| {
        header(answer, "content-security-policy")
            .unwrap_or("")
            .to_string()
    };
    assert!(policy(&again).starts_with("sandbox"), "{again}");
    let framed = exact.replacen("id_/", "fr_/", 1);
    let (status, page) = raw_get(port, &framed);
    assert_eq!(status, 200, "{page}");
    let tag = header(&page, "etag").expect("an ETag").to_string();
    let again = get_with(port, &framed, &format!("If-None-Match: {tag}\r\n"));
    assert!(again.starts_with("HTTP/1.1 304"), "{again}");
    assert_eq!(policy(&again), policy(&page), "{again}");
    assert!(policy(&again).contains("allow-top-navigation"), "{again}");

    // An address the archive does not hold: a 404 that offers the live address.
    let (status, gone) = raw_get(port, "/go?url=https%3A%2F%2Fexample.org%2Felsewhere");
    assert_eq!(status, 404);
    assert!(
        gone.contains("href=\"https://example.org/elsewhere\""),
        "{gone}"
    );
    let (_, odd) = raw_get(port, "/go?url=javascript%3Aalert(1)");
    assert!(!odd.contains("href=\"javascript"), "{odd}");

    // A word of the blog's name finds the blog, not each of its posts; each hit says where
    // its words are (issue 45 item 2).
    let (status, named) = raw_get(port, "/search?q=crooked");
    assert_eq!(status, 200);
    assert!(
        named.contains("Blogs named so: <a href=\"/blog/1\">The Crooked Allotment</a>"),
        "{named}"
    );
    let listed = named.matches("class=\"hit\"").count();
    assert!(
        listed < 20,
        "the blog's name listed {listed} posts: {named}"
    );
    let (_, herbs) = raw_get(port, "/search?q=herb");
    assert!(herbs.contains("found in title"), "{herbs}");
    assert_eq!(
        herbs.matches("class=\"hit\"").count(),
        herbs.matches("found in ").count(),
        "{herbs}"
    );

    // The framework's own rejections (a blog id that is not a number, a bad query string)
    // come as the reader's page, not as plain text.
    for target in ["/blog/not-a-number", "/post?nourl=1", "/search?page=x"] {
        let (status, answer) = raw_get(port, target);
        assert!((400..500).contains(&status), "{target}: {status}");
        assert!(
            header(&answer, "content-type").is_some_and(|t| t.starts_with("text/html")),
            "{target}: {answer}"
        );
        assert!(answer.contains("everblog"), "{target}: {answer}");
    }
}

/// A raw GET with extra header lines (each ending in CRLF): the whole answer as text.
fn get_with(port: u16, target: &str, extra: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

/// A query value as it was before encoding (`%3A` → `:`).
fn unescape_url(v: &str) -> String {
    url::form_urlencoded::parse(format!("v={v}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}
