//! Captures never dead-end (issue 45 item 1), on the Pelican blog (posts linking its tags and
//! archives, and outbound links to python.org and others) archived with its live site gone.
//! Every link inside a replayed capture leads to the capture of its address, or to a page that
//! says it is not archived with the live address and, for the blog's own site, the nearest
//! capture of it; the blog lists every address it captured, with when; and in headless
//! Chromium the replay frame takes the whole width and the height below the banner, at 1280
//! and at 390 px.

use crate::common::*;
use chromiumoxide::browser::Browser;
use futures::StreamExt;
use serde_json::Value;
use std::collections::BTreeSet;

/// A GET that follows redirects: (status, final path and query, body).
fn follow(port: u16, target: &str) -> (u16, String, String) {
    let mut target = target.to_string();
    for _ in 0..5 {
        let (status, answer) = raw_get(port, &target);
        if (300..400).contains(&status) {
            target = header(&answer, "location").unwrap().to_string();
            continue;
        }
        let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        return (status, target, body.to_string());
    }
    panic!("{target}: more than 5 redirects");
}

/// The `href` values of a page that start with `prefix`, entities decoded.
fn hrefs(html: &str, prefix: &str) -> BTreeSet<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(|h| h.replace("&amp;", "&"))
        .filter(|h| h.starts_with(prefix))
        .collect()
}

#[test]
fn links_in_captures_lead_to_a_capture_or_say_where_to_go() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let (origin, posts) = {
        let blog = serve("pelican");
        ok(&archive(&db, &["add", &blog.feed_url()]));
        ok(&archive(&db, &["crawl", &blog.feed_url()]));
        let posts: Vec<String> = ok(&archive(&db, &["export"]))
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["url"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        (blog.server.origin.clone(), posts)
    }; // the live site is gone from here on
    let config = dir.path().join("config.toml");
    write_config(&config, "").unwrap();
    let (_serving, port) = serve_archive(&db, &config, &[]);

    // A post's capture in the replay frame: every link in it leads somewhere.
    let post = &posts[0];
    let (status, replay, page) = follow(port, &format!("/replay/29990101000000/{post}"));
    assert_eq!(status, 200, "{page}");
    let stamp = replay.trim_start_matches("/replay/")[..14].to_string();
    let (status, _, framed) = follow(port, &format!("/web/{stamp}fr_/{post}"));
    assert_eq!(status, 200);
    let links = hrefs(&framed, "/replay/");
    assert!(links.len() >= 10, "{links:?}");
    let (mut captured, mut missing_here, mut missing_elsewhere) = (0, 0, 0);
    for link in &links {
        let (status, _, body) = follow(port, link);
        let target = link.splitn(4, '/').nth(3).unwrap();
        match status {
            200 => {
                assert!(body.contains("iframe class=\"capture\""), "{link}: {body}");
                captured += 1;
            }
            404 => {
                assert!(body.contains("Not in the archive"), "{link}: {body}");
                assert!(
                    body.contains(&format!("href=\"{}\"", html_escape(target))),
                    "{link}: no live address on {body}"
                );
                if target.starts_with(&origin) {
                    // Its own site: the nearest capture of its home page, and its list.
                    assert!(
                        body.contains("nearest capture of its site"),
                        "{link}: {body}"
                    );
                    assert!(body.contains("/captures\""), "{link}: {body}");
                    missing_here += 1;
                } else {
                    missing_elsewhere += 1;
                }
            }
            _ => panic!("{link}: {status} {body}"),
        }
    }
    eprintln!(
        "{} links in a capture: {captured} to captures, {missing_here} not archived on the blog's site, {missing_elsewhere} elsewhere",
        links.len()
    );
    assert!(captured > 0 && missing_elsewhere > 0);
    // An address of the blog never captured, opened as a page (`/web/`) or through `/go`.
    let never = format!("{origin}/no-such-page/");
    for target in [
        format!("/web/{stamp}/{never}"),
        format!("/go?url={}", url_encode(&never)),
    ] {
        let (status, _, body) = follow(port, &target);
        assert_eq!(status, 404, "{target}");
        assert!(
            body.contains("nearest capture of its site")
                && body.contains(&format!("href=\"{never}\"")),
            "{target}: {body}"
        );
    }
    // What a page loads (`id_`) stays a plain 404.
    let (status, _, body) = follow(port, &format!("/web/{stamp}id_/{never}"));
    assert_eq!(status, 404);
    assert!(!body.contains("nearest capture"), "{body}");

    // The blog's captured addresses: every post among them, each with its captures.
    let blogs: Value = serde_json::from_str(&follow(port, "/api/blogs").2).unwrap();
    let id = blogs[0]["id"].as_i64().unwrap();
    let mut listed = BTreeSet::new();
    let mut page = 1;
    loop {
        let (status, _, body) = follow(port, &format!("/blog/{id}/captures?page={page}"));
        assert_eq!(status, 200, "{body}");
        let found = hrefs(&body, "/replay/");
        listed.extend(
            found
                .iter()
                .map(|h| h.splitn(4, '/').nth(3).unwrap().to_string()),
        );
        if !body.contains("rel=\"next\"") {
            break;
        }
        page += 1;
    }
    for p in &posts {
        assert!(listed.contains(p), "{p} not in the blog's captures");
    }
    assert!(listed.contains(&format!("{origin}/")) || listed.iter().any(|u| u.ends_with(".xml")));

    // The replay frame fills the window below the banner, wide and narrow.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        for (width, height) in [(1280i64, 800i64), (390, 844)] {
            let profile = tempfile::tempdir().unwrap();
            let (mut browser, mut handler) =
                Browser::launch(headless(profile.path(), (width as u32, height as u32), &[]))
                    .await
                    .unwrap();
            let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
            let tab = browser.new_page("about:blank").await.unwrap();
            use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
            tab.execute(SetDeviceMetricsOverrideParams::new(
                width,
                height,
                1.0,
                width < 500,
            ))
            .await
            .unwrap();
            tab.goto(format!("http://127.0.0.1:{port}{replay}"))
                .await
                .unwrap();
            let frame: Value = tab
                .evaluate(
                    "(() => { const r = document.querySelector('iframe.capture').getBoundingClientRect();
                      return { left: r.left, width: r.width, bottom: r.bottom, top: r.top,
                               vw: document.documentElement.clientWidth, vh: window.innerHeight,
                               scroll: document.documentElement.scrollWidth }; })()",
                )
                .await
                .unwrap()
                .into_value()
                .unwrap();
            let f = |k: &str| frame[k].as_f64().unwrap();
            eprintln!("{width} px: frame {frame}");
            assert!(f("left").abs() < 1.0 && (f("width") - f("vw")).abs() < 1.0, "{width} px: {frame}");
            assert!((f("bottom") - f("vh")).abs() < 2.0, "{width} px: {frame}");
            assert!(f("top") < f("vh") / 3.0, "{width} px: the banner takes most of the window: {frame}");
            assert!(f("scroll") <= f("vw"), "{width} px: the page is wider than the window: {frame}");
            browser.close().await.unwrap();
            let _ = events.await;
        }
    });
}
