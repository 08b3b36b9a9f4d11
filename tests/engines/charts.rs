//! A blog's history in charts (issue 44, feature row 17): the reader's chart page and
//! `archive report`'s one-file report, each opened in real Chromium, where every chart (SVG
//! drawn on the server) loads and draws at its size; the phone-width check of every page kind
//! is `reader.rs`'s.

use crate::common::*;
use chromiumoxide::browser::Browser;
use chromiumoxide::Page;
use futures::StreamExt;

/// The page's chart images: (alt text, natural width) of each, once every image has loaded.
async fn charts_drawn(page: &Page) -> Vec<(String, f64)> {
    let drawn: serde_json::Value = page
        .evaluate(
            "Promise.all([...document.querySelectorAll('figure.chart img')].map(i => i.decode()
               .then(() => [i.alt, i.naturalWidth], () => [i.alt, 0])))",
        )
        .await
        .unwrap()
        .into_value()
        .unwrap();
    drawn
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_f64().unwrap()))
        .collect()
}

#[test]
fn charts_render_in_chromium_on_the_reader_and_in_the_report() {
    let blog = serve("hexo");
    let posts = blog.truth["posts"].as_array().unwrap().len();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    ok(&archive(&db, &["add", &blog.feed_url()]));
    ok(&archive(&db, &["crawl"]));
    let report = dir.path().join("history.html");
    let home = format!("{}/", blog.server.origin);
    let said = String::from_utf8_lossy(
        &archive(
            &db,
            &["report", "--blog", &home, "-o", report.to_str().unwrap()],
        )
        .stderr,
    )
    .into_owned();
    assert!(said.contains("wrote"), "{said}");
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(!html.contains("<script"), "a report runs no script");
    assert!(
        html.contains(&format!("{posts} dated posts")),
        "the report counts the posts: {html}"
    );

    let (_serving, port) = serve_archive(&db, &loopback_config(), &[]);
    // Each chart is an SVG image drawn on the server.
    let (status, svg) = raw_get(port, "/blog/1/charts/activity.svg");
    assert_eq!(status, 200, "{svg}");
    assert_eq!(header(&svg, "content-type"), Some("image/svg+xml"));
    assert!(svg.contains("<svg") && svg.contains("Posts and comments per month"));
    assert_eq!(raw_get(port, "/blog/1/charts/nothing.svg").0, 404);
    assert_eq!(raw_get(port, "/blog/9/charts").0, 404);

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let profile = tempfile::tempdir().unwrap();
        let (mut browser, mut handler) =
            Browser::launch(headless(profile.path(), (1100, 900), &[]))
                .await
                .unwrap();
        let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
        let page = browser.new_page("about:blank").await.unwrap();
        // The blog's page links its charts.
        page.goto(format!("http://127.0.0.1:{port}/blog/1"))
            .await
            .unwrap();
        page.find_element("a[href='/blog/1/charts']")
            .await
            .expect("the blog page links its charts");
        page.goto(format!("http://127.0.0.1:{port}/blog/1/charts"))
            .await
            .unwrap();
        for (place, drawn) in [
            ("reader", charts_drawn(&page).await),
            ("report", {
                page.goto(format!("file://{}", report.display()))
                    .await
                    .unwrap();
                charts_drawn(&page).await
            }),
        ] {
            assert_eq!(drawn.len(), 3, "{place}: {drawn:?}");
            for (alt, width) in &drawn {
                assert_eq!(*width, 880.0, "{place}: {alt} not drawn");
            }
        }
        browser.close().await.unwrap();
        let _ = events.await;
    });
}
