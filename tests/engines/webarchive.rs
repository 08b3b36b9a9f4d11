//! The archive as a standard web archive: a crawled fixture blog (Pelican) exported as WARC
//! 1.1, CDXJ and WACZ is read back record by record by warcio (digests checked), indexed by
//! cdxj-indexer into the same index as ours, validated by `wacz validate` (PyPI), added to pywb
//! by its own `wb-manager add --unpack-wacz` (through the WACZ's index) and replayed in proxy
//! mode in headless Chromium after the blog's server is stopped: the posts' text, their
//! stylesheets and fonts come from the archive alone. And the media fixture blog
//! (images of every form, another host, Isso comments) replays whole: images loaded, comments
//! shown, nothing from the live sites.
//!
//! The PyPI tools live in a venv made once by `fixtures/webarchive/tools.sh` (pinned versions).

use crate::common::*;
use everblog::store::DatabaseSettings;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// pywb replaying an archive in proxy mode (`fixtures/webarchive/pywb.sh`), stopped on drop.
pub(crate) struct Pywb {
    /// Its proxy port on 127.0.0.1.
    pub port: u16,
    dir: PathBuf,
}

impl Drop for Pywb {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(self.dir.join("pywb.pid")) {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
    }
}

/// Starts pywb in `coll` on `archive` (a WACZ: through its own index when `unpack`, pywb's
/// `wb-manager add --unpack-wacz`; else its WARCs indexed by pywb).
pub(crate) fn start_pywb(venv: &Path, coll: &Path, archive: &Path, unpack: bool) -> Pywb {
    let out = run(Command::new("bash")
        .arg(fixture_dir("webarchive").join("pywb.sh"))
        .arg(coll)
        .arg(archive)
        .env("PYWB_WACZ", if unpack { "unpack" } else { "warcs" })
        .env(
            "PATH",
            format!(
                "{}:{}",
                venv.join("bin").display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        ));
    Pywb {
        port: out.lines().last().unwrap().trim().parse().unwrap(),
        dir: coll.to_path_buf(),
    }
}

/// The venv with the PyPI web-archive tools (`fixtures/webarchive/tools.sh`).
pub(crate) fn tools() -> Option<PathBuf> {
    let out = Command::new("bash")
        .arg(fixture_dir("webarchive").join("tools.sh"))
        .output()
        .expect("bash");
    if !out.status.success() {
        panic!(
            "fixtures/webarchive/tools.sh failed (it needs python3-venv and PyPI):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let venv = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .map(|l| PathBuf::from(l.trim()))?;
    Some(venv)
}

pub(crate) fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("spawn");
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A crawled Pelican blog in `dir`, its server and its truth.
fn archived(dir: &Path) -> (Blog, PathBuf) {
    let blog = serve("pelican");
    let db = dir.join("a.db");
    ok(&archive(&db, &["add", &blog.feed_url()]));
    let out = ok(&archive(&db, &["crawl"]));
    assert!(out.contains("media of 32 posts"), "{out}");
    (blog, db)
}

#[test]
fn warc_cdxj_and_wacz_are_read_back_by_the_reference_tools() {
    let Some(venv) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (blog, db) = archived(dir.path());
    let warc = dir.path().join("blog.warc.gz");
    let cdxj = dir.path().join("blog.cdxj");
    let wacz = dir.path().join("blog.wacz");
    let w = warc.to_str().unwrap();
    ok(&archive(&db, &["export", "--format", "warc", "-o", w]));
    ok(&archive(
        &db,
        &[
            "export",
            "--format",
            "cdxj",
            "--warc-name",
            "blog.warc.gz",
            "-o",
            cdxj.to_str().unwrap(),
        ],
    ));
    ok(&archive(
        &db,
        &["export", "--format", "wacz", "-o", wacz.to_str().unwrap()],
    ));

    // Every record parses, every digest verifies, one record per gzip member.
    let check = fixture_dir("webarchive").join("check_warc.py");
    let py = venv.join("bin/python");
    let summary: serde_json::Value = serde_json::from_str(&run(Command::new(&py)
        .arg(&check)
        .arg("--require-digests")
        .arg(&warc)))
    .unwrap();
    let types = &summary["types"];
    let posts = blog.truth["posts"].as_array().unwrap().len() as u64;
    assert_eq!(types["metadata"].as_u64(), Some(posts), "{summary}");
    assert_eq!(types["warcinfo"].as_u64(), Some(1), "{summary}");
    let responses = types["response"].as_u64().unwrap();
    assert_eq!(
        types["request"].as_u64(),
        Some(responses + types["revisit"].as_u64().unwrap_or(0)),
        "{summary}"
    );
    let uris: Vec<String> = summary["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.to_string())
        .collect();
    for needle in ["main.css", ".woff", "feeds/all.rss.xml"] {
        assert!(
            uris.iter().any(|u| u.contains(needle)),
            "no capture of {needle}"
        );
    }
    // Our index is cdxj-indexer's index of our WARC, line for line.
    run(Command::new(&py)
        .arg(&check)
        .arg("cdxj")
        .arg(&warc)
        .arg(&cdxj));
    // The WACZ package validates.
    let out = run(Command::new(venv.join("bin/wacz"))
        .arg("validate")
        .arg("-f")
        .arg(&wacz));
    assert!(out.contains("valid"), "{out}");
    // It names itself: the blog's title, and its home page as the page to open first.
    let package: serde_json::Value = serde_json::from_str(&run(Command::new(&py)
        .arg("-c")
        .arg("import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(z.read('datapackage.json').decode()); assert 'indexes/index.cdx' in z.namelist(), z.namelist()")
        .arg(&wacz)))
    .unwrap();
    let home = format!("{}/", blog.server.origin);
    assert_eq!(
        package["mainPageURL"].as_str(),
        Some(home.as_str()),
        "{package}"
    );
    assert!(package["mainPageDate"].is_string(), "{package}");
    let title = package["title"].as_str().unwrap_or_default();
    assert!(!title.is_empty() && !title.starts_with("http"), "{package}");
    // Exporting twice gives the same bytes (record ids and dates come from the archive).
    let again = dir.path().join("again.warc.gz");
    ok(&archive(
        &db,
        &[
            "export",
            "--format",
            "warc",
            "--warc-name",
            "blog.warc.gz",
            "-o",
            again.to_str().unwrap(),
        ],
    ));
    assert_eq!(
        std::fs::read(&warc).unwrap(),
        std::fs::read(&again).unwrap()
    );
    // The JSON Lines record lists each post's media.
    let jsonl = ok(&archive(&db, &["export"]));
    let first: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    let media = first["media"].as_array().unwrap();
    assert!(
        media
            .iter()
            .any(|m| m["kind"] == "font" && m["state"] == "stored" && m["sha256"].is_string()),
        "{first}"
    );
}

#[test]
fn pywb_replays_the_posts_with_the_live_site_gone() {
    let Some(venv) = tools() else { return };
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let Some(chromium) = chromium else {
        eprintln!("skipped: no Chromium (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (blog, db) = archived(dir.path());
    let origin = blog.server.origin.clone();
    let truth = blog.truth.clone();
    let wacz = dir.path().join("blog.wacz");
    ok(&archive(
        &db,
        &["export", "--format", "wacz", "-o", wacz.to_str().unwrap()],
    ));
    drop(blog); // the live site is gone from here on

    // pywb's own way of adding a WACZ (issue 29, item 8): through the WACZ's index.
    let pywb = start_pywb(&venv, &dir.path().join("pywb"), &wacz, true);
    let port = pywb.port;

    let posts = truth["posts"].as_array().unwrap();
    for post in [&posts[0], &posts[posts.len() / 2], &posts[posts.len() - 1]] {
        let url = format!("{origin}{}", post["path"].as_str().unwrap());
        let profile = tempfile::tempdir().unwrap();
        let dom = run(Command::new(chromium).args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.path().display()),
            &format!("--proxy-server=http://127.0.0.1:{port}"),
            "--proxy-bypass-list=<-loopback>",
            "--virtual-time-budget=3000",
            "--dump-dom",
            &url,
        ]));
        let title = post["title"].as_str().unwrap();
        let text = post["content_text"]
            .as_str()
            .or(post["text"].as_str())
            .unwrap_or("");
        let words: Vec<&str> = text.split_whitespace().take(6).collect();
        assert!(
            dom.contains(&html_escape(title)) || dom.contains(title),
            "{url}: no title in replay:\n{}",
            &dom[..dom.len().min(2000)]
        );
        if words.len() == 6 {
            assert!(
                dom.contains(&words.join(" ")),
                "{url}: article text missing in replay"
            );
        }
    }
    // The page's requisites replay too: its stylesheet and font come from the archive.
    let get = |path: &str| {
        run(Command::new(venv.join("bin/python")).arg("-c").arg(format!(
            "import urllib.request as u; o=u.build_opener(u.ProxyHandler({{'http':'http://127.0.0.1:{port}'}})); r=o.open('{origin}{path}'); print(r.status, r.headers.get('Memento-Datetime') is not None, len(r.read()))"
        )))
    };
    for path in [
        "/theme/css/main.css",
        "/theme/fonts/Yanone_Kaffeesatz_400.woff2",
    ] {
        let out = get(path);
        assert!(out.starts_with("200 True"), "{path}: {out}");
    }
}

/// The media fixture blog (`fixtures/media`: Pelican, every kind of image, audio, video, a PDF,
/// an image on another host, Isso comments) archived and exported as WACZ, with every server
/// stopped afterwards: (truth, origin the posts were archived at, the WACZ).
fn media_archived(dir: &Path) -> (serde_json::Value, String, PathBuf) {
    let root = fixture_dir("media");
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("truth.json")).unwrap()).unwrap();
    let external = everblog::fixture_server::Server::start_at(
        [127, 0, 0, 2].into(),
        everblog::fixture_server::Root::Disk(root.join("external")),
        None,
        Vec::new(),
        None,
    )
    .unwrap();
    let isso_port = free_port();
    let blog = everblog::fixture_server::Server::start_full(
        everblog::fixture_server::Root::Disk(root.join("site")),
        t["base_url"].as_str().map(str::to_string),
        vec![
            (
                t["comments_base_url"].as_str().unwrap().to_string(),
                format!("http://127.0.0.1:{isso_port}"),
            ),
            (
                t["external_origin"].as_str().unwrap().to_string(),
                external.origin.clone(),
            ),
        ],
        None,
    )
    .unwrap();
    let isso = start_isso(
        &root.join("isso/start.sh"),
        &dir.join("isso"),
        isso_port,
        &blog.origin,
    );
    // The image on 127.0.0.2 stands for a CDN: kept (other hosts on, that network allowed).
    let config = dir.join("c.toml");
    std::fs::write(
        &config,
        "[media]\nother_hosts = true\n[fetch]\nallow_private = [\"127.0.0.2/32\"]\n",
    )
    .unwrap();
    let db = dir.join("a.db");
    let cfg = ["--config", config.to_str().unwrap()];
    let feed = format!("{}{}", blog.origin, t["feed_path"].as_str().unwrap());
    ok(&archive(&db, &[&cfg[..], &["add", &feed]].concat()));
    let out = ok(&archive(&db, &[&cfg[..], &["crawl"]].concat()));
    assert!(
        out.contains("pages rendered") && out.contains("browser requests"),
        "{out}"
    );
    let wacz = dir.join("blog.wacz");
    ok(&archive(
        &db,
        &[
            &cfg[..],
            &["export", "--format", "wacz", "-o", wacz.to_str().unwrap()],
        ]
        .concat(),
    ));
    let origin = blog.origin.clone();
    drop((blog, external, isso)); // the live sites are gone from here on
    (t, origin, wacz)
}

/// Every post of the media fixture lists, stored, each requisite its page or stylesheets use
/// (but scripts, which the renderer loads) and each enclosure its feed entry carries (podcast
/// episodes no page links), with the truth's SHA-256 and size.
fn media_match_the_truth(t: &serde_json::Value, db: &Path) {
    let jsonl = ok(&archive(db, &["export"]));
    let posts: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut enclosures = 0;
    for truth in t["posts"].as_array().unwrap() {
        let path = truth["path"].as_str().unwrap();
        let post = posts
            .iter()
            .find(|p| p["url"].as_str().unwrap().ends_with(path))
            .unwrap_or_else(|| panic!("{path} not archived"));
        let media = post["media"].as_array().unwrap();
        let stored = |sha: &str, bytes: &serde_json::Value| {
            media
                .iter()
                .find(|m| m["state"] == "stored" && m["sha256"] == sha && &m["bytes"] == bytes)
        };
        for r in truth["requisites"].as_array().unwrap() {
            if r["kind"] == "script" {
                continue;
            }
            assert!(
                stored(r["sha256"].as_str().unwrap(), &r["bytes"]).is_some(),
                "{path}: {r} not stored; media: {media:?}"
            );
        }
        for e in truth["enclosures"].as_array().unwrap() {
            let m = stored(e["sha256"].as_str().unwrap(), &e["bytes"])
                .unwrap_or_else(|| panic!("{path}: enclosure {e} not stored; media: {media:?}"));
            assert!(
                m["url"]
                    .as_str()
                    .unwrap()
                    .ends_with(e["url_path"].as_str().unwrap()),
                "{m}"
            );
            assert_eq!(m["kind"], "media", "{m}");
            assert_eq!(m["mime"], e["mime"], "{m}");
            enclosures += 1;
        }
    }
    assert_eq!(enclosures, 2, "the fixture's two podcast episodes");
}

/// Replay proof (issue 11, item 5): three posts of the media fixture opened through pywb (proxy
/// mode) in headless Chromium with every live server stopped: the article text is there, every
/// `<img>` loaded (`naturalWidth > 0`, lazy ones after scrolling), the Isso comments are shown,
/// and every response the browser got came from the archive (`Memento-Datetime`).
#[test]
fn pywb_replays_images_and_comments_with_every_server_gone() {
    use chromiumoxide::browser::{Browser, BrowserConfig};
    use chromiumoxide::cdp::browser_protocol::network::{EventResponseReceived, ResourceType};
    use futures::StreamExt;

    let Some(venv) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (t, origin, wacz) = media_archived(dir.path());
    media_match_the_truth(&t, &dir.path().join("a.db"));
    let pywb = start_pywb(&venv, &dir.path().join("pywb"), &wacz, false);
    let port = pywb.port;

    let posts = t["posts"].as_array().unwrap();
    let pick = |path: &str| {
        posts
            .iter()
            .find(|p| p["path"] == path)
            .unwrap_or_else(|| panic!("{path} not in truth"))
            .clone()
    };
    let chosen = [
        pick("/2025/02/field-notes-as-a-pdf.html"), // 3 comments, a plain image
        pick("/2024/05/a-pond-through-a-picture-element.html"), // <picture>, 2 comments
        pick("/2024/08/dawn-chorus-recorded-badly.html"), // an image on another host
    ];
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let profile = tempfile::tempdir().unwrap();
        let config = BrowserConfig::builder()
            .chrome_executable("/usr/bin/chromium")
            .request_timeout(Duration::from_secs(120))
            .no_sandbox()
            .user_data_dir(profile.path())
            .arg(("proxy-server", format!("http://127.0.0.1:{port}").as_str()))
            .arg(("proxy-bypass-list", "<-loopback>"))
            .arg("disable-gpu")
            .build()
            .unwrap();
        let (mut browser, mut handler) = Browser::launch(config).await.unwrap();
        let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
        for post in &chosen {
            let url = format!("{origin}{}", post["path"].as_str().unwrap());
            let page = browser.new_page("about:blank").await.unwrap();
            let mut responses = page
                .event_listener::<EventResponseReceived>()
                .await
                .unwrap();
            page.goto(&url).await.unwrap();
            let want_comments = post["comment_count"].as_u64().unwrap();
            let js = format!(
                "(async () => {{
                    for (let i = 0; i < 50; i++) {{
                        window.scrollTo(0, document.body.scrollHeight);
                        const imgs = [...document.images];
                        const done = imgs.every(i => i.complete && i.naturalWidth > 0);
                        const comments = [...document.querySelectorAll('.isso-comment .isso-text')].filter(c => c.innerText.trim()).length;
                        if (done && comments >= {want_comments}) break;
                        await new Promise(r => setTimeout(r, 200));
                    }}
                    return {{
                        text: document.body.innerText,
                        images: [...document.images].map(i => [i.currentSrc || i.src, i.naturalWidth]),
                        comments: [...document.querySelectorAll('.isso-comment .isso-text')].map(c => c.innerText).filter(t => t.trim()),
                    }};
                }})()"
            );
            let seen: serde_json::Value = page.evaluate(js).await.unwrap().into_value().unwrap();
            let title = post["title"].as_str().unwrap();
            let text = seen["text"].as_str().unwrap();
            assert!(text.contains(title), "{url}: no title in replay:\n{text}");
            let words: Vec<&str> = post["body_text"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .take(6)
                .collect();
            assert!(
                text.split_whitespace().collect::<Vec<_>>().join(" ").contains(&words.join(" ")),
                "{url}: article text missing in replay"
            );
            let images = seen["images"].as_array().unwrap();
            assert!(!images.is_empty(), "{url}: no images");
            for img in images {
                assert!(img[1].as_u64().unwrap() > 0, "{url}: image not replayed: {img}");
            }
            let comments = seen["comments"].as_array().unwrap();
            assert_eq!(comments.len() as u64, want_comments, "{url}: {comments:?}");
            for c in post["comments"].as_array().unwrap() {
                let want: String = c["text"].as_str().unwrap().split_whitespace().take(5).collect::<Vec<_>>().join(" ");
                assert!(
                    comments.iter().any(|x| x.as_str().unwrap().split_whitespace().collect::<Vec<_>>().join(" ").contains(&want)),
                    "{url}: comment {want:?} not replayed: {comments:?}"
                );
            }
            page.close().await.unwrap();
            // Everything the browser received came from the archive.
            let mut n = 0;
            while let Ok(Some(ev)) =
                tokio::time::timeout(std::time::Duration::from_millis(200), responses.next()).await
            {
                if ev.r#type == ResourceType::Preflight || ev.response.url.starts_with("data:") {
                    continue;
                }
                n += 1;
                let headers = ev.response.headers.inner().to_string().to_ascii_lowercase();
                // pywb marks what it replays: Memento-Datetime, or the archived headers renamed
                // X-Archive-Orig-* (CORS-mode fetches such as fonts).
                assert!(
                    headers.contains("memento-datetime") || headers.contains("x-archive-orig-"),
                    "{url}: {} was not answered from the archive ({}): {headers}",
                    ev.response.url,
                    ev.response.status
                );
            }
            assert!(n as usize > images.len(), "{url}: only {n} responses seen");
        }
        browser.close().await.ok();
        events.abort();
    });
}

/// The static copy (`archive export --format html`) of the media fixture opened from disk in
/// headless Chromium with every server stopped: each post's page shows its title, its article,
/// every image it holds (`naturalWidth > 0`, copied out of the archive) and its Isso comments
/// (archived from the rendered widget), and the browser asks for nothing but files.
#[test]
fn static_copy_opens_from_disk_with_images_and_comments() {
    use chromiumoxide::browser::{Browser, BrowserConfig};
    use chromiumoxide::cdp::browser_protocol::network::EventRequestWillBeSent;
    use futures::StreamExt;

    let dir = tempfile::tempdir().unwrap();
    let (t, _, _) = media_archived(dir.path());
    let site = dir.path().join("site");
    let out = archive(
        &dir.path().join("a.db"),
        &["export", "--format", "html", "-o", site.to_str().unwrap()],
    );
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{said}");
    assert!(said.contains("images"), "{said}");
    let blog_dir = std::fs::read_dir(&site)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap();
    let post_pages: Vec<PathBuf> = std::fs::read_dir(blog_dir.join("posts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let posts = t["posts"].as_array().unwrap();
    assert_eq!(post_pages.len(), posts.len(), "a page per post");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let profile = tempfile::tempdir().unwrap();
        let config = BrowserConfig::builder()
            .chrome_executable("/usr/bin/chromium")
            .request_timeout(Duration::from_secs(120))
            .no_sandbox()
            .user_data_dir(profile.path())
            .arg("disable-gpu")
            .build()
            .unwrap();
        let (mut browser, mut handler) = Browser::launch(config).await.unwrap();
        let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
        let mut images_seen = 0;
        for post in posts {
            let title = post["title"].as_str().unwrap();
            let page = browser.new_page("about:blank").await.unwrap();
            let mut requests = page
                .event_listener::<EventRequestWillBeSent>()
                .await
                .unwrap();
            // Find the post's file by its title (each page names its post in <h1>).
            let mut found = None;
            for f in &post_pages {
                let html = std::fs::read_to_string(f).unwrap();
                if html.contains(&format!("<h1>{}</h1>", html_escape(title))) {
                    found = Some(f.clone());
                }
            }
            let file = found.unwrap_or_else(|| panic!("no page for {title:?}"));
            let url = format!("file://{}", file.display());
            page.goto(&url).await.unwrap();
            let seen: serde_json::Value = page
                .evaluate(
                    "(async () => {
                        for (let i = 0; i < 50; i++) {
                            const imgs = [...document.images];
                            if (imgs.every(i => i.complete)) break;
                            await new Promise(r => setTimeout(r, 100));
                        }
                        return {
                            text: document.querySelector('article.post').innerText,
                            images: [...document.images].map(i => [i.src, i.naturalWidth]),
                            comments: [...document.querySelectorAll('li.comment > .content')].map(c => c.innerText).filter(t => t.trim()),
                        };
                    })()",
                )
                .await
                .unwrap()
                .into_value()
                .unwrap();
            let text = seen["text"].as_str().unwrap();
            assert!(text.contains(title), "{url}: no title:\n{text}");
            let words: Vec<&str> = post["body_text"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .take(6)
                .collect();
            assert!(
                text.split_whitespace().collect::<Vec<_>>().join(" ").contains(&words.join(" ")),
                "{url}: article text missing"
            );
            let shown_in_post = post["requisites"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["scope"] == "post" && r["kind"] == "image" && r["via"] == "src");
            let images = seen["images"].as_array().unwrap();
            if shown_in_post {
                assert!(!images.is_empty(), "{url}: no images");
            }
            for img in images {
                assert!(
                    img[0].as_str().unwrap().starts_with("file://"),
                    "{url}: {img} is not a file of the copy"
                );
                assert!(img[1].as_u64().unwrap() > 0, "{url}: image not shown: {img}");
                images_seen += 1;
            }
            let comments = seen["comments"].as_array().unwrap();
            assert_eq!(
                comments.len() as u64,
                post["comment_count"].as_u64().unwrap(),
                "{url}: {comments:?}"
            );
            page.close().await.unwrap();
            while let Ok(Some(ev)) =
                tokio::time::timeout(Duration::from_millis(200), requests.next()).await
            {
                let u = &ev.request.url;
                assert!(
                    u.starts_with("file://") || u.starts_with("data:") || u == "about:blank",
                    "{url} asked for {u}"
                );
            }
        }
        assert!(images_seen >= 10, "only {images_seen} images shown");
        browser.close().await.ok();
        events.abort();
    });
}

/// `[archive] warc_dir` (issue 11, item 6): the daemon appends each job's captures to a WARC
/// file of the directory as it goes; a torn record left by a crash is cut away at the next
/// start, a file past `max_warc_mb` is closed (renamed without `.open`), and across the files
/// every stored capture is written exactly once, every record read back by warcio.
#[test]
fn the_daemon_keeps_rolling_warc_files_that_survive_a_crash() {
    let Some(venv) = tools() else { return };
    let blog = serve("pelican");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let warcs = dir.path().join("warc");
    let config = dir.path().join("c.toml");
    let settings = |mb: f64| {
        write_config(
            &config,
            format!(
                "[archive]\nwarc_dir = \"{}\"\nmax_warc_mb = {mb}\n[daemon]\npoll = \"100ms\"\n",
                warcs.display()
            ),
        )
        .unwrap()
    };
    settings(1024.0);
    let cfg = config.to_str().unwrap();
    ok(&archive(&db, &["--config", cfg, "add", &blog.feed_url()]));
    let stored = || {
        let store = everblog::store::Store::open(&DatabaseSettings::at(&db)).unwrap();
        let (mut n, mut last) = (0, everblog::store::ResponseId::default());
        store
            .for_each_capture(None, Default::default(), |id, _| {
                n += 1;
                last = id;
                Ok(())
            })
            .unwrap();
        let roll = store.warc_roll(&warcs.to_string_lossy()).unwrap();
        (n, last, roll)
    };
    let d = daemon_with_config(&db, &config, "w1", std::process::Stdio::null());
    wait_for(
        "the NewCrawl's captures in the WARC directory",
        Duration::from_secs(120),
        || {
            let (n, last, roll) = stored();
            n > 50 && roll.is_some_and(|r| r.last_response == last)
        },
    );
    assert!(terminate(d).success());
    let open: Vec<PathBuf> = files(&warcs, ".warc.gz.open");
    assert_eq!(open.len(), 1, "{open:?}");
    // A crash mid-record: half a gzip member at the end of the open file.
    let good = std::fs::metadata(&open[0]).unwrap().len();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&open[0])
        .unwrap();
    std::io::Write::write_all(&mut f, &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3]).unwrap();
    drop(f);

    // The next daemon cuts the torn record and, the file being past 0.1 MB now, closes it.
    assert!(good > 100_000, "{good} bytes");
    settings(0.1);
    let d = daemon_with_config(&db, &config, "w2", std::process::Stdio::null());
    wait_for("the open WARC file closed", Duration::from_secs(60), || {
        files(&warcs, ".warc.gz.open").is_empty()
    });
    assert!(terminate(d).success());
    let closed = files(&warcs, ".warc.gz");
    assert_eq!(closed.len(), 1, "{closed:?}");
    assert_eq!(std::fs::metadata(&closed[0]).unwrap().len(), good);
    let name = closed[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        name.starts_with("EVERBLOG-") && name.contains('~'),
        "{name}"
    );

    let check = fixture_dir("webarchive").join("check_warc.py");
    let summary: serde_json::Value =
        serde_json::from_str(&run(Command::new(venv.join("bin/python"))
            .arg(&check)
            .arg("--require-digests")
            .arg(&closed[0])))
        .unwrap();
    let types = &summary["types"];
    let count = |k: &str| types[k].as_u64().unwrap_or(0);
    let (n, _, _) = stored();
    assert_eq!(
        count("response") + count("revisit") + count("resource"),
        n,
        "every capture exactly once: {summary}"
    );
    assert_eq!(count("warcinfo"), 1, "{summary}");
}

fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let n = p.to_string_lossy();
                    n.ends_with(suffix) && (suffix.ends_with(".open") || !n.ends_with(".open"))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The `[media]` caps: a file over `max_file_mb` is recorded as failed, saying which setting to
/// raise, and past the blog's `max_blog_mb` files are recorded as skipped and counted; neither
/// fails the crawl or costs a post.
#[test]
fn media_caps_and_budget_record_why_without_failing_the_crawl() {
    let blog = serve("pelican");
    let dir = tempfile::tempdir().unwrap();
    let media_of = |name: &str, media: &str| -> (String, Vec<serde_json::Value>) {
        let config = dir.path().join(format!("{name}.toml"));
        std::fs::write(&config, format!("[media]\n{media}\n")).unwrap();
        let db = dir.path().join(format!("{name}.db"));
        let cfg = ["--config", config.to_str().unwrap()];
        ok(&archive(
            &db,
            &[&cfg[..], &["add", &blog.feed_url()]].concat(),
        ));
        let out = ok(&archive(&db, &[&cfg[..], &["crawl"]].concat()));
        let posts: Vec<serde_json::Value> = ok(&archive(&db, &["export"]))
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(posts.len(), 32, "{name}: every post archived");
        let media = posts
            .iter()
            .flat_map(|p| p["media"].as_array().unwrap().clone())
            .collect();
        (out, media)
    };
    let with = |media: &[serde_json::Value], state: &str, url_end: &str| {
        media
            .iter()
            .filter(|m| m["state"] == state && m["url"].as_str().unwrap().ends_with(url_end))
            .cloned()
            .collect::<Vec<_>>()
    };

    // The theme's fonts are 18 and 22 KB; its stylesheets 10 KB at most.
    let (out, media) = media_of("file-cap", "max_file_mb = 0.015");
    for font in [".woff", ".woff2"] {
        let failed = with(&media, "failed", font);
        assert!(!failed.is_empty(), "{font}: {media:?}");
        assert!(
            failed.iter().all(|m| m["reason"]
                .as_str()
                .unwrap()
                .contains("[media] max_file_mb")),
            "{failed:?}"
        );
    }
    assert!(!with(&media, "stored", "/main.css").is_empty(), "{media:?}");
    assert!(out.contains("media of 32 posts"), "{out}");

    // A budget of 5 KB: main.css (10 KB) is fetched, then the budget is spent.
    let (out, media) = media_of("budget", "max_blog_mb = 0.005");
    assert!(!with(&media, "stored", "/main.css").is_empty(), "{media:?}");
    let skipped = with(&media, "skipped", "");
    // The stylesheets main.css imports are past the budget (and so are the fonts they use
    // never discovered).
    assert!(
        skipped
            .iter()
            .any(|m| m["url"].as_str().unwrap().ends_with("/reset.css")),
        "{media:?}"
    );
    assert!(
        skipped.iter().all(|m| m["reason"]
            .as_str()
            .unwrap()
            .contains("max_blog_mb = 0.005")),
        "{skipped:?}"
    );
    assert!(!out.contains(" 0 over budget"), "{out}");
    assert!(out.contains("over budget"), "{out}");
}

/// A redirect on the way to a page is kept as its own `response` record (status and
/// `Location` as received), so a replay of the URL first asked for redirects as the live site
/// did, and the page is the target's record. Hexo's theme links `/archives` on every page;
/// GitHub Pages and nginx answer a directory without its slash with a 301 to it, as this
/// server does here.
#[test]
fn redirects_on_the_way_are_kept_as_their_own_records() {
    use everblog::fixture_server::{Reply, Root, Server};
    use flate2::read::MultiGzDecoder;
    use std::io::Read;

    let dir = fixture_dir("hexo");
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).unwrap()).unwrap();
    let server = Server::start_full(
        Root::Disk(dir.join("site")),
        t["base_url"].as_str().map(str::to_string),
        Vec::new(),
        Some(Box::new(|path: &str| {
            (path == "/archives").then(|| Reply {
                status: 301,
                headers: vec![("Location".into(), "/archives/".into())],
                body: b"<html><body>Moved to /archives/</body></html>".to_vec(),
            })
        })),
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("a.db");
    let feed = format!("{}{}", server.origin, t["feed_path"].as_str().unwrap());
    ok(&archive(&db, &["add", &feed]));
    ok(&archive(&db, &["crawl"]));
    assert!(
        server
            .access_log()
            .iter()
            .any(|a| a.path == "/archives" && a.status == 301),
        "the crawl never met the redirect"
    );

    let index = ok(&archive(&db, &["export", "--format", "cdxj"]));
    let entry = |url: &str, status: &str| {
        index.lines().any(|l| {
            let json: serde_json::Value = serde_json::from_str(&l[l.find('{').unwrap()..]).unwrap();
            json["url"] == url && json["status"] == status
        })
    };
    let archives = format!("{}/archives", server.origin);
    assert!(entry(&archives, "301"), "{index}");
    assert!(entry(&format!("{archives}/"), "200"), "{index}");

    let warc = tmp.path().join("a.warc.gz");
    ok(&archive(
        &db,
        &["export", "--format", "warc", "-o", warc.to_str().unwrap()],
    ));
    let mut text = Vec::new();
    MultiGzDecoder::new(std::fs::File::open(&warc).unwrap())
        .read_to_end(&mut text)
        .unwrap();
    let text = String::from_utf8_lossy(&text);
    let at = text
        .find(&format!("WARC-Target-URI: {archives}\r\n"))
        .expect("a record of the redirecting URL");
    let record = &text[at..at + text[at..].find("\r\n\r\nWARC/1.1").unwrap_or(2000)];
    assert!(
        record.contains("HTTP/1.1 301 Moved Permanently\r\n"),
        "{record}"
    );
    // Header names as reqwest hands them over: lower case.
    assert!(record.contains("\r\nlocation: /archives/\r\n"), "{record}");

    // The redirect is no page: nothing was extracted from it, and the crawl read the target.
    let jsonl = ok(&archive(&db, &["export"]));
    assert!(
        !jsonl.contains(&format!("\"url\":\"{archives}\"")),
        "{jsonl}"
    );
}
