//! Scripts are page requisites (issue 29, item 0): a Hexo blog (the landscape theme: jQuery,
//! fancybox and the theme's `script.js`, which draws the share box when a reader clicks
//! "Share") is archived, exported as WACZ and replayed by pywb with its site gone. In real
//! headless Chromium the post is opened live, then replayed, and "Share" clicked in both: the
//! replay runs the archived scripts and shows what the live page shows (text compared,
//! screenshots kept under `target/tmp/`). The reader's own pages still run none (its policy,
//! `tests/engines/reader.rs`).

use super::webarchive::{start_pywb, tools};
use crate::common::*;
use chromiumoxide::browser::Browser;
use futures::StreamExt;
use std::path::Path;
use std::time::Duration;

/// Opens `url` in a fresh headless Chromium (through `proxy` when given), clicks "Share" and
/// answers the page's text, whether the share box is shown, and a screenshot.
async fn open_and_share(url: &str, proxy: Option<u16>) -> (String, bool, Vec<u8>) {
    let profile = tempfile::tempdir().unwrap();
    let proxy_args = proxy.map(|port| {
        [
            format!("proxy-server=http://127.0.0.1:{port}"),
            // Chromium never proxies loopback addresses unless told to.
            "proxy-bypass-list=<-loopback>".to_string(),
        ]
    });
    // Every host but 127.0.0.1 (the blog, pywb, the proxy) fails to resolve at once: the live
    // page links a stylesheet on a public CDN, and a sandbox that drops packets instead of
    // refusing them would stall its load event (a suspect for a hang seen once). Chromium
    // applies the rule to IP literals too, hence the exclusion.
    let mut args = vec!["host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"];
    args.extend(proxy_args.iter().flatten().map(String::as_str));
    let config = headless(profile.path(), (1100, 900), &args);
    let (mut browser, mut handler) = Browser::launch(config).await.unwrap();
    let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
    let page = browser.new_page("about:blank").await.unwrap();
    // Navigation is asked again when it stalls: in the full suite (several browsers and
    // servers on 2 cores) a first navigation has hung until its timeout once in a few runs.
    let mut loaded = false;
    for _ in 0..3 {
        let nav = async {
            page.goto(url).await?;
            page.wait_for_navigation().await?;
            Ok::<_, chromiumoxide::error::CdpError>(())
        };
        if let Ok(Ok(())) = tokio::time::timeout(Duration::from_secs(40), nav).await {
            loaded = true;
            break;
        }
    }
    assert!(loaded, "{url} did not load in three tries");
    // The theme's script binds "Share" once jQuery has run; give it a moment.
    tokio::time::sleep(Duration::from_millis(500)).await;
    if let Ok(link) = page.find_element(".article-share-link").await {
        let _ = link.click().await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let text: String = page
        .evaluate("document.body.innerText")
        .await
        .unwrap()
        .into_value()
        .unwrap();
    let shared: bool = page
        .evaluate("document.querySelector('.article-share-box.on') !== null")
        .await
        .unwrap()
        .into_value()
        .unwrap();
    let png = screenshot(&page).await;
    browser.close().await.unwrap();
    let _ = events.await;
    (text, shared, png)
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn a_replay_runs_the_archived_scripts_and_draws_what_the_live_page_draws() {
    let Some(venv) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let wacz = dir.path().join("blog.wacz");
    let blog = serve("hexo");
    ok(&archive(&db, &["add", &blog.feed_url()]));
    ok(&archive(&db, &["crawl"]));
    ok(&archive(
        &db,
        &["export", "--format", "wacz", "-o", wacz.to_str().unwrap()],
    ));
    let export = ok(&archive(&db, &["export"]));
    let scripts: Vec<String> = export
        .lines()
        .flat_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["media"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|m| m["kind"] == "script" && m["state"] == "stored")
                .filter_map(|m| m["url"].as_str().map(str::to_string))
                .collect::<Vec<_>>()
        })
        .collect();
    for needle in ["jquery", "fancybox", "script.js"] {
        assert!(
            scripts.iter().any(|u| u.contains(needle)),
            "{needle} not archived: {scripts:?}"
        );
    }
    let url = format!(
        "{}{}",
        blog.server.origin,
        blog.truth["posts"][0]["path"].as_str().unwrap()
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (live_text, live_shared, live_png) = rt.block_on(open_and_share(&url, None));
    assert!(live_shared, "the live page's script draws the share box");
    drop(blog); // the live site is gone from here on

    let pywb = start_pywb(&venv, &dir.path().join("pywb"), &wacz, true);
    let (text, shared, png) = rt.block_on(open_and_share(&url, Some(pywb.port)));
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::write(shots.join("hexo-live.png"), live_png).unwrap();
    std::fs::write(shots.join("hexo-replay.png"), png).unwrap();
    assert!(
        shared,
        "the replay did not run the theme's script (no share box): {text}"
    );
    assert_eq!(
        squash(&text),
        squash(&live_text),
        "the replay shows other text than the live page"
    );
}
