//! Media in the reader (issue 29, item 1), on the media fixture blog (Pelican: a `<video>` with
//! a poster, an `<audio>`, feed enclosures, an image on another host) archived with its live
//! site gone: the post page keeps the video and audio, served from the archive, seekable
//! (`Range` answered 206), listed with the post's enclosures; an image the archive lacks is a
//! labelled placeholder; and in real headless Chromium the video plays (`currentTime`
//! advances) under the reader's policy.

use crate::common::*;
use chromiumoxide::browser::Browser;
use everblog::fixture_server::{Root, Server};
use futures::StreamExt;
use std::io::{Read, Write};
use std::time::Duration;

/// A raw GET with extra header lines: (status, head, body bytes).
fn get_with(port: u16, target: &str, extra: &str) -> (u16, String, Vec<u8>) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: x\r\n{extra}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let split = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&all[..split]).to_string();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head, all[split + 4..].to_vec())
}

#[test]
fn video_and_audio_play_from_the_archive_and_missing_images_are_labelled() {
    let root = fixture_dir("media");
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("truth.json")).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let origin = {
        // Only the blog: its comment server and the other host (an image) stay down.
        let blog = Server::start(
            Root::Disk(root.join("site")),
            truth["base_url"].as_str().map(str::to_string),
        )
        .unwrap();
        let feed = format!("{}{}", blog.origin, truth["feed_path"].as_str().unwrap());
        ok(&archive(&db, &["add", &feed]));
        ok(&archive(&db, &["crawl"]));
        blog.origin.clone()
    }; // the live site is gone from here on
    let config = dir.path().join("config.toml");
    write_config(&config, "").unwrap();
    let (_serving, port) = serve_archive(&db, &config, &[]);
    let post_page = |path: &str| {
        let url = format!("{origin}{path}");
        let (status, page) = raw_get(port, &format!("/post?url={}", url_encode(&url)));
        assert_eq!(status, 200, "{path}: {page}");
        page
    };

    // The video, with its poster, served from the archive.
    let video_post = "/2024/11/three-seconds-of-a-still-river.html";
    let page = post_page(video_post);
    let video = format!("id_/{origin}/media/river-still.mp4");
    assert!(page.contains("<video") && page.contains(&video), "{page}");
    // The article plays it: not listed again under the post's media.
    if let Some(media) = page.split("id=\"media\"").nth(1) {
        let media = &media[..media.find("</section>").unwrap()];
        assert!(!media.contains("river-still.mp4"), "{media}");
    }
    assert!(
        page.contains(&format!("id_/{origin}/images/2024/river-poster.png")),
        "{page}"
    );
    // Seekable: one range is 206 with its bytes, past the end is 416.
    let src = page
        .split("src=\"")
        .map(|s| &s[..s.find('"').unwrap_or(0)])
        .find(|s| s.ends_with(&video))
        .unwrap()
        .to_string();
    // The post's time names the capture nearest it: a redirect to the media's own time.
    let (status, head, _) = get_with(port, &src, "");
    let src = if status == 302 {
        head.lines()
            .find_map(|l| {
                l.strip_prefix("location: ")
                    .or(l.strip_prefix("Location: "))
            })
            .unwrap()
            .to_string()
    } else {
        src
    };
    let (status, whole_head, whole) = get_with(port, &src, "");
    assert_eq!(status, 200);
    assert!(
        whole_head
            .to_ascii_lowercase()
            .contains("accept-ranges: bytes"),
        "{whole_head}"
    );
    let (status, head, part) = get_with(port, &src, "Range: bytes=100-199\r\n");
    assert_eq!(status, 206, "{head}");
    assert_eq!(part, whole[100..200]);
    assert!(
        head.to_ascii_lowercase()
            .contains(&format!("content-range: bytes 100-199/{}", whole.len())),
        "{head}"
    );
    let (status, head, _) = get_with(port, &src, "Range: bytes=999999-\r\n");
    assert_eq!(status, 416, "{head}");

    // The audio post: its player, and its podcast enclosure listed and playable.
    let page = post_page("/2024/08/dawn-chorus-recorded-badly.html");
    assert!(
        page.contains("<audio") && page.contains("dawn-chorus.mp3"),
        "{page}"
    );
    assert!(page.contains("Media and attachments"), "{page}");
    let media = &page[page.find("id=\"media\"").unwrap()..];
    let media = &media[..media.find("</section>").unwrap()];
    assert!(
        media.contains("dawn-chorus-full-session.mp3"),
        "the enclosure: {page}"
    );
    assert!(
        !media.contains("dawn-chorus.mp3"),
        "the article's own player listed again: {media}"
    );
    // Article, media, comments, then the posts next to it. The comment server was down
    // through the crawl: its comments were never captured, which the page says.
    let at = |what: &str| page.find(what).unwrap_or_else(|| panic!("{what}: {page}"));
    assert!(at("<article class=\"post\"") < at("id=\"media\""));
    assert!(at("id=\"media\"") < at("id=\"comments\""));
    assert!(at("id=\"comments\"") < at("class=\"pager posts\""));
    assert!(page.contains("Comments not captured"), "{page}");
    assert!(!page.contains("0 comments"), "{page}");
    // The image on the other host was never archived: a labelled placeholder, not a
    // broken image.
    assert!(page.contains("Image not in the archive"), "{page}");

    // In Chromium, under the reader's policy: the video loads from the archive and plays.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let profile = tempfile::tempdir().unwrap();
        let config = headless(
            profile.path(),
            (1100, 800),
            &["autoplay-policy=no-user-gesture-required"],
        );
        let (mut browser, mut handler) = Browser::launch(config).await.unwrap();
        let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
        let page = browser.new_page("about:blank").await.unwrap();
        let url = format!("{origin}{video_post}");
        page.goto(format!(
            "http://127.0.0.1:{port}/post?url={}",
            url_encode(&url)
        ))
        .await
        .unwrap();
        let can_play: String = page
            .evaluate("document.querySelector('article video').canPlayType('video/mp4; codecs=\"avc1.42E01E\"')")
            .await
            .unwrap()
            .into_value()
            .unwrap();
        let (selector, what) = if can_play.is_empty() {
            // A Chromium built without H.264: the archived MP3 stands in.
            eprintln!("this Chromium cannot play H.264: playing the audio post instead");
            let url = format!("{origin}/2024/08/dawn-chorus-recorded-badly.html");
            page.goto(format!(
                "http://127.0.0.1:{port}/post?url={}",
                url_encode(&url)
            ))
            .await
            .unwrap();
            ("article audio", "audio")
        } else {
            ("article video", "video")
        };
        let _: serde_json::Value = page
            .evaluate(format!(
                "(() => {{ const m = document.querySelector('{selector}'); m.muted = true; m.play(); return true; }})()"
            ))
            .await
            .unwrap()
            .into_value()
            .unwrap();
        let mut played = 0.0;
        for _ in 0..50 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            played = page
                .evaluate(format!("document.querySelector('{selector}').currentTime"))
                .await
                .unwrap()
                .into_value::<f64>()
                .unwrap();
            if played > 0.5 {
                break;
            }
        }
        let error: String = page
            .evaluate(format!(
                "(() => {{ const e = document.querySelector('{selector}').error; return e ? e.code + ' ' + e.message : 'none'; }})()"
            ))
            .await
            .unwrap()
            .into_value()
            .unwrap();
        assert!(played > 0.5, "the {what} did not play: currentTime {played}, error {error}");
        let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("reader-media.png");
        let png = screenshot(&page).await;
        std::fs::write(&shot, png).unwrap();
        eprintln!("the {what} played {played:.2} s; screenshot {}", shot.display());
        browser.close().await.unwrap();
        let _ = events.await;
    });
}
