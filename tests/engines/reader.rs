//! `archive serve` end to end (issue 14, Done when): a WordPress blog built by the real engine
//! (`fixtures/updates/wordpress`) is archived, then changes (an edited post, new and edited
//! comments) and is updated; the real `archive serve` is started on it and driven in headless
//! Chromium: the blogs, the blog, a post with its comments and versions, the word diff, a search
//! whose hit is in a comment, a TimeMap link to a capture whose inline `<script>` must not run
//! (checked in the live DOM, and the capture's Content-Security-Policy), the JSON API, the
//! pages at a phone's width (no sideways scroll), and hostile addresses (path traversal, a
//! 10 KB URL) that answer 404/414.

use crate::common::*;
use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::dom::{GetDocumentParams, GetOuterHtmlParams};
use chromiumoxide::cdp::browser_protocol::network::EventResponseReceived;
use chromiumoxide::Page;
use everblog::fixture_server::{Root, Server};
use everblog::store::DatabaseSettings;
use everblog::store::Store;
use futures::StreamExt;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/updates/wordpress")
}

fn switch(link: &Path, version: &str) {
    switch_to(link, &fixtures().join(version));
}

/// The page's live DOM as HTML, read over CDP's DOM domain (works where scripts cannot run).
async fn dom(page: &Page) -> String {
    let doc = page
        .execute(GetDocumentParams::builder().depth(0).build())
        .await
        .unwrap();
    page.execute(
        GetOuterHtmlParams::builder()
            .backend_node_id(doc.result.root.backend_node_id)
            .build(),
    )
    .await
    .unwrap()
    .result
    .outer_html
}

/// Clicks the first element matching `css` and waits until the page is another one, loaded.
async fn click_and_wait(page: &Page, css: &str) {
    let before = page.url().await.unwrap();
    page.find_element(css)
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .click()
        .await
        .unwrap();
    for _ in 0..100 {
        if page.url().await.unwrap() != before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_ne!(
        page.url().await.unwrap(),
        before,
        "clicking {css} went nowhere"
    );
    page.wait_for_navigation().await.unwrap();
}

#[test]
fn the_archive_reads_in_a_browser() {
    if !fixtures().join("v2").is_dir() {
        eprintln!("skipped: fixtures/updates/wordpress missing");
        return;
    }
    let changes: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("changes.json")).unwrap())
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("site");
    switch(&link, "v1");
    let server = Server::start(
        Root::Disk(link.clone()),
        changes["base_url"].as_str().map(str::to_string),
    )
    .unwrap();
    let db = dir.path().join("a.db");
    let feed = format!(
        "{}{}",
        server.origin,
        changes["feed_path"].as_str().unwrap()
    );
    ok(&archive(&db, &["add", &feed]));
    ok(&archive(&db, &["crawl"]));
    switch(&link, "v2");
    ok(&archive(&db, &["update"]));

    let edited = format!(
        "{}{}",
        server.origin,
        changes["edited_posts"][0]["path"].as_str().unwrap()
    );
    let store = Store::open(&DatabaseSettings::at(&db)).unwrap();
    let post = store.post(&edited).unwrap().expect("edited post archived");
    assert_eq!(post.version, 2, "the edit is a second version");
    let commented = format!(
        "{}{}",
        server.origin,
        changes["edited_comments"][0]["post_path"].as_str().unwrap()
    );
    let commented = store
        .post(&commented)
        .unwrap()
        .expect("commented post archived");
    assert!(
        commented.comments.len() >= 2,
        "the commented post has comments"
    );
    // A word that is in a comment of some post and in no title or article: the search hit
    // must be that comment.
    let posts = store.posts(None).unwrap();
    let in_posts = |w: &str| {
        posts.iter().any(|p| {
            p.content_text.to_lowercase().contains(w)
                || p.title.as_deref().unwrap_or("").to_lowercase().contains(w)
        })
    };
    let (comment_word, _, _) = posts
        .iter()
        .flat_map(|p| p.comments.iter().map(move |c| (p, c)))
        .find_map(|(p, c)| {
            c.content_text
                .split(|ch: char| !ch.is_alphanumeric())
                .map(str::to_lowercase)
                .find(|w| w.len() >= 6 && !w.ends_with('s') && !in_posts(w))
                .map(|w| (w, p.url.clone(), c.id.clone()))
        })
        .expect("a word found only in comments");
    let holders: Vec<String> = posts
        .iter()
        .flat_map(|p| p.comments.iter().map(move |c| (p, c)))
        .filter(|(_, c)| c.content_text.to_lowercase().contains(&comment_word))
        .map(|(p, c)| format!("{}#comment-{}", url_encode(&p.url), c.id))
        .collect();
    // Another word of the first comment holding it (for -NOT), and two words in a row of
    // an article (a phrase).
    let (first_holder, other_word) = posts
        .iter()
        .flat_map(|p| p.comments.iter())
        .filter(|c| c.content_text.to_lowercase().contains(&comment_word))
        .find_map(|c| {
            let words: Vec<String> = c
                .content_text
                .split(|ch: char| !ch.is_alphanumeric())
                .map(str::to_lowercase)
                .filter(|w| w.len() >= 5 && *w != comment_word)
                .collect();
            words.first().map(|w| (c.id.clone(), w.clone()))
        })
        .expect("a comment with two words");
    let (phrase, phrase_post) = posts
        .iter()
        .find_map(|p| {
            let words: Vec<&str> = p
                .content_text
                .split(|ch: char| !ch.is_alphanumeric())
                .filter(|w| w.len() >= 4)
                .take(2)
                .collect();
            (words.len() == 2).then(|| (words.join(" "), p.url.clone()))
        })
        .expect("an article");
    drop(store);

    let port = free_port();
    let mut serve = Serving(Some(
        archive_command()
            .args(["--db", db.to_str().unwrap(), "serve", "--bind"])
            .arg(format!("127.0.0.1:{port}"))
            .spawn()
            .unwrap(),
    ));
    wait_for("archive serve to answer", Duration::from_secs(20), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let base = format!("http://127.0.0.1:{port}");

    // Hostile addresses: nothing from the disk, no crash.
    for target in [
        "/assets/../../../../etc/passwd",
        "/assets/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/../../../../etc/passwd",
        "/web/2026/file:///etc/passwd",
        "/timemap/link/file:///etc/passwd",
        "/post?url=/etc/passwd",
    ] {
        let (status, text) = raw_get(port, target);
        assert_eq!(status, 404, "{target}");
        assert!(!text.contains("root:"), "{target} leaked a file");
    }
    let long = format!("/web/2026/{}/{}", server.origin, "a".repeat(10 * 1024));
    assert_eq!(raw_get(port, &long).0, 414);
    // A bind beyond loopback needs credentials or an explicit public switch.
    let exposed = archive(&db, &["serve", "--bind", "0.0.0.0:0"]);
    assert!(!exposed.status.success());
    assert!(String::from_utf8_lossy(&exposed.stderr).contains("--read-only-public"));

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let profile = tempfile::tempdir().unwrap();
        let config = BrowserConfig::builder()
            .chrome_executable("/usr/bin/chromium")
            .request_timeout(Duration::from_secs(120))
            .no_sandbox()
            .user_data_dir(profile.path())
            .window_size(1100, 800)
            .arg("disable-gpu")
            .build()
            .unwrap();
        let (mut browser, mut handler) = Browser::launch(config).await.unwrap();
        let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
        let page = browser.new_page("about:blank").await.unwrap();

        // The blogs, then the blog, then the edited post from the blog's list.
        page.goto(format!("{base}/")).await.unwrap();
        let html = dom(&page).await;
        assert!(html.contains("table class=\"blogs\""), "{html}");
        click_and_wait(&page, "table.blogs a").await;
        let html = dom(&page).await;
        assert!(html.contains("Posts <small>("), "blog page: {html}");
        assert!(
            html.contains("Authors") && html.contains("Tags"),
            "blog page sidebar"
        );
        let title = post.title.clone().unwrap();
        let href = format!("/post?url={}", url_encode(&edited));
        let selector = format!("a[href=\"{href}\"]");
        if page.find_element(&selector).await.is_ok() {
            click_and_wait(&page, &selector).await;
        } else {
            page.goto(format!("{base}{href}")).await.unwrap();
        }
        let html = dom(&page).await;
        assert!(html.contains(&html_escape(&title)), "post title: {html}");
        assert!(html.contains("Version 2</a> (current)"), "versions listed");
        // Live images of the blog never load in the reader: every <img> points into it.
        assert!(!html.contains(&format!("src=\"{}", server.origin)));

        // The word diff of the two versions.
        click_and_wait(&page, "form.diff button").await;
        let html = dom(&page).await;
        assert!(
            html.contains("<del>") && html.contains("<ins>"),
            "diff: {html}"
        );

        // Each version on its own, with its dates; the diff keeps the article's blocks.
        page.goto(format!("{base}/version?url={}&n=1", url_encode(&edited)))
            .await
            .unwrap();
        let html = dom(&page).await;
        assert!(
            html.contains("Version 1 of 2") && html.contains("replaced"),
            "{html}"
        );
        page.goto(format!(
            "{base}/diff?url={}&from=1&to=2",
            url_encode(&edited)
        ))
        .await
        .unwrap();
        let html = dom(&page).await;
        assert!(
            html.contains("class=\"block p\"")
                && (html.contains("class=\"block removed")
                    || html.contains("class=\"block changed")),
            "block diff: {html}"
        );
        let (status, api) = raw_get(port, &format!("/api/versions?url={}", url_encode(&edited)));
        assert_eq!(status, 200, "{api}");
        let v: Value = serde_json::from_str(api.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        assert_eq!(v["versions"].as_array().map(Vec::len), Some(2), "{v}");
        assert!(
            v["versions"][0]["replaced_at"].is_string()
                && v["versions"][1]["replaced_at"].is_null()
        );

        // A post's threaded comments: each shown once, replies inside their parent.
        page.goto(format!("{base}/post?url={}", url_encode(&commented.url)))
            .await
            .unwrap();
        let html = dom(&page).await;
        for c in &commented.comments {
            let id = format!("id=\"comment-{}\"", c.id);
            assert_eq!(html.matches(&id).count(), 1, "comment {} shown once", c.id);
            if let Some(parent) = &c.parent {
                let (at_parent, at_child) = (
                    html.find(&format!("id=\"comment-{parent}\"")).unwrap(),
                    html.find(&id).unwrap(),
                );
                assert!(at_parent < at_child, "reply {} after its parent", c.id);
            }
        }
        assert!(
            html.contains(&format!("{} comments", commented.comments.len())),
            "comment count"
        );
        // An edited comment keeps its earlier text, under it.
        assert!(
            html.contains("<details class=\"earlier\">"),
            "an edited comment's earlier text: {html}"
        );
        let (_, api) = raw_get(
            port,
            &format!("/api/versions?url={}", url_encode(&commented.url)),
        );
        assert!(api.contains("\"comment_versions\":[{"), "{api}");

        // A search whose hit is a comment, typed into the form.
        page.goto(format!("{base}/search")).await.unwrap();
        page.find_element("form.filters input[name=q]")
            .await
            .unwrap()
            .click()
            .await
            .unwrap()
            .type_str(&comment_word)
            .await
            .unwrap();
        click_and_wait(&page, "form.filters button").await;
        let html = dom(&page).await;
        assert!(
            html.contains("Comment by"),
            "search for {comment_word}: {html}"
        );
        assert!(html.contains("<mark>"), "highlighted");
        // The query language, typed as readers do: a phrase, another form of a word, OR, NOT.
        let search = |q: String| {
            let page = &page;
            let base = &base;
            async move {
                page.goto(format!("{base}/search?q={}", url_encode(&q)))
                    .await
                    .unwrap();
                dom(page).await
            }
        };
        let holder = format!("#comment-{first_holder}");
        assert!(
            search(format!("\"{phrase}\""))
                .await
                .contains(&url_encode(&phrase_post)),
            "the phrase \"{phrase}\" finds {phrase_post}"
        );
        let plural = search(format!("{comment_word}s")).await;
        assert!(
            plural.contains(&holder),
            "{comment_word}s finds {comment_word}"
        );
        let either = search(format!("{comment_word} OR zzqxvw")).await;
        assert!(either.contains(&holder), "OR");
        let without = search(format!("{comment_word} -{other_word}")).await;
        assert!(
            !without.contains(&holder),
            "{comment_word} -{other_word} leaves out comment {first_holder}"
        );
        let not = search(format!("{comment_word} NOT {other_word}")).await;
        assert!(
            !not.contains(&holder),
            "{comment_word} NOT {other_word} leaves out comment {first_holder}"
        );
        // The count is what is listed; each hit names its blog by title.
        let hits = either.matches("<li class=\"hit\"").count();
        assert!(
            either.contains(&format!("Posts 1–{hits}")),
            "{hits} hits listed: {either}"
        );
        let hit = &either[either.find("<li class=\"hit\"").unwrap()..];
        let meta = &hit[hit.find("class=\"meta\"").unwrap()..];
        let meta = &meta[..meta.find("</div>").unwrap()];
        assert!(
            !meta.contains("http"),
            "the blog's title, not its address: {meta}"
        );
        assert!(search(format!("zzqxvw {comment_word}"))
            .await
            .contains("Nothing found"));
        page.goto(format!("{base}/search?q={}", url_encode(&comment_word)))
            .await
            .unwrap();
        click_and_wait(&page, "li.hit .hit-comments a").await;
        let at = page.url().await.unwrap().unwrap();
        assert!(
            holders.iter().any(|h| at.ends_with(h.as_str())),
            "{at} is not a comment with {comment_word:?}: {holders:?}"
        );
        let anchor = at.rsplit_once('#').unwrap().1;
        assert!(dom(&page).await.contains(&format!("id=\"{anchor}\"")));

        // Screenshot for README (small PNG), of the post page.
        page.goto(format!("{base}{href}")).await.unwrap();
        let png = page
            .screenshot(
                chromiumoxide::page::ScreenshotParams::builder()
                    .format(
                        chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat::Png,
                    )
                    .build(),
            )
            .await
            .unwrap();
        let shot = std::env::var_os("EVERBLOG_SCREENSHOT")
            .map(PathBuf::from)
            .unwrap_or_else(|| dir.path().join("reader.png"));
        std::fs::write(&shot, &png).unwrap();

        // The TimeMap, followed to a capture: its inline script must not run.
        let (status, timemap) = raw_get(port, &format!("/timemap/link/{edited}"));
        assert_eq!(status, 200, "{timemap}");
        assert!(timemap
            .to_ascii_lowercase()
            .contains("content-type: application/link-format"));
        let memento = timemap
            .split('<')
            .find_map(|l| l.split_once(">; rel=\"first").map(|(u, _)| u.to_string()))
            .unwrap_or_else(|| panic!("no memento in {timemap}"));
        assert!(memento.starts_with(&format!("{base}/web/")), "{memento}");
        let mut responses = page
            .event_listener::<EventResponseReceived>()
            .await
            .unwrap();
        page.goto(&memento).await.unwrap();
        let html = dom(&page).await;
        assert!(
            html.contains("document.body.classList.remove(\"no-js\")"),
            "the capture keeps its inline script"
        );
        let body_class = html
            .split("<body")
            .nth(1)
            .and_then(|b| b.split('>').next())
            .unwrap_or("");
        assert!(
            body_class.contains("no-js"),
            "the inline script ran: <body{body_class}>"
        );
        let mut policy = None;
        while let Ok(Some(e)) =
            tokio::time::timeout(Duration::from_millis(500), responses.next()).await
        {
            if e.response.url == memento {
                let h = serde_json::to_value(&e.response.headers).unwrap();
                policy = h
                    .as_object()
                    .and_then(|o| {
                        o.iter()
                            .find(|(k, _)| k.eq_ignore_ascii_case("content-security-policy"))
                    })
                    .and_then(|(_, v)| v.as_str().map(str::to_string));
            }
        }
        let policy = policy.expect("the capture's response seen");
        assert!(
            policy.contains("script-src 'none'") && policy.starts_with("sandbox"),
            "{policy}"
        );
        assert!(!policy.contains("allow-scripts"), "{policy}");

        // The JSON API: the post as exported.
        page.goto(format!("{base}/api/post?url={}", url_encode(&edited)))
            .await
            .unwrap();
        let text = dom(&page).await;
        let json = text
            .split_once("<pre")
            .and_then(|(_, r)| r.split_once('>'))
            .and_then(|(_, r)| r.split_once("</pre>"))
            .map(|(j, _)| unescape(j))
            .expect("JSON shown");
        let v: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["url"], edited.as_str());
        assert_eq!(v["version"], 2);
        assert_eq!(
            v["comments"].as_array().map(Vec::len),
            Some(post.comments.len())
        );

        // Replay with the reader's banner (issue 29, item 2): from the post's "archived page"
        // to its latest capture, then to the one before (the edit made two).
        page.goto(format!("{base}/post?url={}", url_encode(&edited)))
            .await
            .unwrap();
        click_and_wait(&page, "article.post p.meta a[href^='/replay/']").await;
        let html = dom(&page).await;
        assert!(html.contains("<nav class=\"replay\""), "{html}");
        assert!(
            html.contains(" 2 of 2 "),
            "the latest of two captures: {html}"
        );
        assert!(html.contains("the archived post"), "{html}");
        let frames = page
            .execute(chromiumoxide::cdp::browser_protocol::page::GetFrameTreeParams {})
            .await
            .unwrap();
        let child = frames.result.frame_tree.child_frames.unwrap_or_default();
        assert!(
            child
                .iter()
                .any(|f| f.frame.url.contains("fr_/") && f.frame.url.ends_with(&edited)),
            "the capture is a frame: {:?}",
            child.iter().map(|f| &f.frame.url).collect::<Vec<_>>()
        );
        click_and_wait(&page, "nav.replay a[rel=prev]").await;
        let html = dom(&page).await;
        assert!(
            html.contains(" 1 of 2 ") && html.contains("rel=\"next\""),
            "{html}"
        );
        // A tracking parameter the crawl dropped still finds the capture (fuzzy matching).
        let (status, answer) = raw_get(port, &format!("/replay/2030/{edited}?utm_source=feed"));
        assert_eq!(status, 303, "{answer}");
        assert!(
            header(&answer, "location").is_some_and(|l| l.ends_with(&format!("/{edited}"))),
            "{answer}"
        );
        // The TimeMap, asked by a browser, is a page.
        page.goto(format!("{base}/timemap/link/{edited}"))
            .await
            .unwrap();
        let html = dom(&page).await;
        assert!(
            html.contains("<h1>Captures</h1>") && html.contains("/replay/"),
            "{html}"
        );

        // A phone's width (390 CSS px): no page scrolls sideways (issue 29, item 9).
        use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
        use chromiumoxide::cdp::browser_protocol::page::GetLayoutMetricsParams;
        page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 2.0, true))
            .await
            .unwrap();
        // Every page kind (issue 45 item 4), and a word longer than the screen.
        let long_word = "Donaudampfschifffahrtsgesellschaftskapitaensmuetzenabzeichenherstellung";
        let stamped = page_stamp(port, &edited);
        for target in [
            "/".to_string(),
            "/blog/1".to_string(),
            "/blog/1/captures".to_string(),
            "/blog/1/charts".to_string(),
            format!("/post?url={}", url_encode(&commented.url)),
            format!("/post?url={}", url_encode(&edited)),
            format!("/version?url={}&n=1", url_encode(&edited)),
            format!("/diff?url={}&from=1&to=2", url_encode(&edited)),
            format!("/search?q={}", url_encode(&comment_word)),
            format!("/search?q={long_word}"),
            format!("/replay/{stamped}/{edited}"),
            format!("/timemap/link/{edited}"),
            format!("/go?url={}", url_encode(&format!("{edited}{long_word}/{long_word}"))),
            "/blog/1/no-such-download".to_string(),
        ] {
            page.goto(format!("{base}{target}")).await.unwrap();
            // Every cell of a table within the screen: none clipped or scrolled out of sight.
            let past: f64 = page
                .evaluate(
                    "Math.max(0, ...[...document.querySelectorAll('main td, main th')]
                       .filter(c => c.getClientRects().length)
                       .map(c => c.getBoundingClientRect().right - document.documentElement.clientWidth))",
                )
                .await
                .unwrap()
                .into_value()
                .unwrap();
            assert!(past <= 1.0, "{target}: a table cell ends {past} px past the screen");
            let m = page.execute(GetLayoutMetricsParams {}).await.unwrap();
            // A page too wide for the phone widens the layout viewport (the phone zooms out):
            // compare with the screen's width, the visual viewport.
            let (content, screen) = (
                m.result.css_content_size.width,
                m.result.css_visual_viewport.client_width,
            );
            assert!(
                content <= screen + 1.0,
                "{target} is {content} px wide on a {screen} px screen"
            );
        }

        browser.close().await.unwrap();
        let _ = events.await;
    });
    assert!(
        terminate(serve.0.take().unwrap()).success(),
        "serve stops on SIGTERM"
    );
}

/// The timestamp of the latest capture of `url` (its TimeGate's choice).
fn page_stamp(port: u16, url: &str) -> String {
    let (status, answer) = raw_get(port, &format!("/timegate/{url}"));
    assert_eq!(status, 302, "{answer}");
    let location = header(&answer, "location").unwrap();
    location.split("/web/").nth(1).unwrap()[..14].to_string()
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}
