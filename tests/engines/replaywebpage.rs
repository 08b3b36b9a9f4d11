//! The WACZ in ReplayWeb.page (issue 29, item 8), the viewer most people open a WACZ in: the
//! npm package `replaywebpage` (pinned by `fixtures/webarchive/replaywebpage.sh`) embedded in
//! a page as `<replay-web-page source=blog.wacz url=POST>`, its service worker replaying from
//! the WACZ alone (fetched by range requests from a static server on 127.0.0.1), in headless
//! Chromium, after the blog's server is stopped: the post's title and text are shown in the
//! replay frame, and nothing asks the blog's origin for anything (a listener on its old port
//! counts every connection).

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The directory holding ReplayWeb.page's `ui.js` and `sw.js`, or `None` (the test skips)
/// without npm.
fn replaywebpage() -> Option<PathBuf> {
    if Command::new("npm").arg("--version").output().is_err() {
        eprintln!("skipped: no npm (apt-get install npm) to fetch ReplayWeb.page");
        return None;
    }
    let out = Command::new("bash")
        .arg(fixture_dir("webarchive").join("replaywebpage.sh"))
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "fixtures/webarchive/replaywebpage.sh failed (it needs npm and its registry):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).lines().last()?.trim());
    Some(dir)
}

/// One request the static server answered.
#[derive(Debug, Clone)]
struct Served {
    path: String,
    range: Option<String>,
    status: u16,
}

/// A static server of `root` on 127.0.0.1 as a WACZ viewer needs one: JavaScript served as
/// JavaScript (a service worker of any other type is refused), `HEAD`, and byte ranges
/// (`a-b`, `a-`, `-n`) answered 206 so the viewer reads the WACZ's members on demand.
struct StaticServer {
    origin: String,
    log: Arc<Mutex<Vec<Served>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StaticServer {
    fn start(root: PathBuf) -> StaticServer {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let origin = format!("http://{}", server.server_addr().to_ip().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log2, stop2) = (log.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                let Ok(Some(req)) = server.recv_timeout(Duration::from_millis(20)) else {
                    continue;
                };
                let path = req
                    .url()
                    .split(['?', '#'])
                    .next()
                    .unwrap_or("/")
                    .to_string();
                let range = req
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("Range"))
                    .map(|h| h.value.as_str().to_string());
                let file = root.join(path.trim_start_matches('/'));
                let body = (!path.contains("..") && file.is_file())
                    .then(|| std::fs::read(&file).ok())
                    .flatten();
                let header = |k: &str, v: &str| tiny_http::Header::from_bytes(k, v).unwrap();
                let (status, resp) = match body {
                    None => (404, tiny_http::Response::from_data(b"not found".to_vec())),
                    Some(body) => {
                        let ctype = match path.rsplit_once('.').map(|(_, e)| e) {
                            Some("html") => "text/html; charset=utf-8",
                            Some("js") => "application/javascript",
                            Some("json") => "application/json",
                            _ => "application/octet-stream",
                        };
                        let total = body.len() as u64;
                        let (status, part, extra) =
                            match range.as_deref().map(|r| byte_range(r, total)) {
                                None => (200, body, None),
                                Some(Some((a, b))) => (
                                    206,
                                    body[a as usize..=b as usize].to_vec(),
                                    Some(format!("bytes {a}-{b}/{total}")),
                                ),
                                Some(None) => (416, Vec::new(), Some(format!("bytes */{total}"))),
                            };
                        let mut r = tiny_http::Response::from_data(part)
                            .with_status_code(status)
                            .with_header(header("Content-Type", ctype))
                            .with_header(header("Accept-Ranges", "bytes"))
                            .with_header(header("Cache-Control", "no-store"));
                        if let Some(cr) = extra {
                            r = r.with_header(header("Content-Range", &cr));
                        }
                        (status, r)
                    }
                };
                log2.lock().unwrap().push(Served {
                    path: req.url().to_string(),
                    range,
                    status,
                });
                let _ = req.respond(resp.with_status_code(status));
            }
        });
        StaticServer {
            origin,
            log,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The inclusive byte span a `Range: bytes=…` header asks of a body of `total` bytes, or
/// `None` if it is not one satisfiable range.
fn byte_range(header: &str, total: u64) -> Option<(u64, u64)> {
    let spec = header.trim().strip_prefix("bytes=")?;
    if spec.contains(',') || total == 0 {
        return None;
    }
    let (a, b) = spec.split_once('-')?;
    let (a, b) = match (a.trim(), b.trim()) {
        ("", n) => {
            let n: u64 = n.parse().ok()?;
            (total.saturating_sub(n), total - 1)
        }
        (a, "") => (a.parse().ok()?, total - 1),
        (a, b) => (a.parse().ok()?, b.parse::<u64>().ok()?.min(total - 1)),
    };
    (a <= b && a < total).then_some((a, b))
}

/// A listener on the address the blog was served at, once its server is gone: every
/// connection is counted (with its first line) and closed unanswered, as a dead site's would
/// be refused.
struct Tripwire {
    hits: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Tripwire {
    fn at(origin: &str) -> Option<Tripwire> {
        let addr = origin.trim_start_matches("http://");
        let listener = match std::net::TcpListener::bind(addr) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("no tripwire on {addr} (taken again: {e}); the CDP check remains");
                return None;
            }
        };
        listener.set_nonblocking(true).unwrap();
        let hits = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (hits2, stop2) = (hits.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((mut s, _)) => {
                        use std::io::Read;
                        let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
                        let mut buf = [0u8; 512];
                        let n = s.read(&mut buf).unwrap_or(0);
                        let first = String::from_utf8_lossy(&buf[..n])
                            .lines()
                            .next()
                            .unwrap_or("")
                            .to_string();
                        hits2.lock().unwrap().push(first);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Some(Tripwire {
            hits,
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Tripwire {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Every document reachable from the top one, through shadow roots and same-origin iframes
/// (ReplayWeb.page nests the replayed page two iframes and several shadow roots deep): each
/// one's URL, title and text.
const FRAMES_JS: &str = r#"(() => {
    const docs = [];
    const visit = (root) => {
        for (const el of root.querySelectorAll('*')) {
            if (el.shadowRoot) visit(el.shadowRoot);
            if (el.tagName === 'IFRAME') {
                let doc = null;
                try { doc = el.contentDocument; } catch (e) {}
                if (doc && doc.body) {
                    docs.push({href: doc.location.href, title: doc.title, text: doc.body.innerText});
                    visit(doc);
                }
            }
        }
    };
    visit(document);
    return docs;
})()"#;

/// The first `n` words of `text`, one space apart.
fn first_words(text: &str, n: usize) -> String {
    text.split_whitespace()
        .take(n)
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the browser said while ReplayWeb.page ran: console calls, log entries and uncaught
/// exceptions of the page and its same-origin frames.
async fn collect_console(
    page: &chromiumoxide::Page,
    into: Arc<Mutex<Vec<String>>>,
) -> Vec<tokio::task::JoinHandle<()>> {
    use chromiumoxide::cdp::browser_protocol::log::EventEntryAdded;
    use chromiumoxide::cdp::js_protocol::runtime::{EventConsoleApiCalled, EventExceptionThrown};
    use futures::StreamExt;
    let mut calls = page
        .event_listener::<EventConsoleApiCalled>()
        .await
        .unwrap();
    let mut entries = page.event_listener::<EventEntryAdded>().await.unwrap();
    let mut thrown = page.event_listener::<EventExceptionThrown>().await.unwrap();
    let (a, b, c) = (into.clone(), into.clone(), into);
    vec![
        tokio::spawn(async move {
            while let Some(ev) = calls.next().await {
                let args: Vec<String> = ev
                    .args
                    .iter()
                    .map(|o| match &o.value {
                        Some(serde_json::Value::String(s)) => s.clone(),
                        Some(v) => v.to_string(),
                        None => o.description.clone().unwrap_or_default(),
                    })
                    .collect();
                a.lock()
                    .unwrap()
                    .push(format!("console.{:?}: {}", ev.r#type, args.join(" ")));
            }
        }),
        tokio::spawn(async move {
            while let Some(ev) = entries.next().await {
                let e = &ev.entry;
                b.lock().unwrap().push(format!(
                    "log {:?}/{:?}: {} {}",
                    e.source,
                    e.level,
                    e.text,
                    e.url.as_deref().unwrap_or("")
                ));
            }
        }),
        tokio::spawn(async move {
            while let Some(ev) = thrown.next().await {
                let d = &ev.exception_details;
                let what = d
                    .exception
                    .as_ref()
                    .and_then(|o| o.description.clone())
                    .unwrap_or_else(|| d.text.clone());
                c.lock().unwrap().push(format!(
                    "exception: {what} at {}:{}",
                    d.url.as_deref().unwrap_or(""),
                    d.line_number
                ));
            }
        }),
    ]
}

/// What ReplayWeb.page showed and did.
struct Seen {
    /// The replay frame showed the post's title and first words.
    shown: bool,
    /// Every document reached at the last look: `[{href, title, text}]`.
    docs: serde_json::Value,
    /// The collection as the viewer's own API describes it (`pages`, `verify`, …).
    collection: serde_json::Value,
    /// Console lines of the page, its frames and (from Chromium's log) the service worker.
    console: Vec<String>,
    /// Every URL the page and its frames asked for.
    requests: Vec<String>,
    /// (URL, status) of every response the page and its frames got.
    responses: Vec<(String, i64)>,
    screenshot: PathBuf,
}

/// Opens `index.html` of `site` (the embedding page) in headless Chromium and polls (60 s at
/// most) until a replay frame of `post_url` shows `title` and `words`.
async fn open_in_replaywebpage(
    chromium: &str,
    site: &str,
    post_url: &str,
    title: &str,
    words: &str,
    shot_name: &str,
) -> Seen {
    use chromiumoxide::browser::{Browser, BrowserConfig};
    use chromiumoxide::cdp::browser_protocol::network::{
        EventRequestWillBeSent, EventResponseReceived,
    };
    use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat;
    use chromiumoxide::cdp::browser_protocol::target::SetAutoAttachParams;
    use chromiumoxide::page::ScreenshotParams;
    use futures::StreamExt;

    let profile = tempfile::tempdir().unwrap();
    // The service worker's console reaches no page session; Chromium's own log has it.
    let log = profile.path().join("chromium.log");
    let config = BrowserConfig::builder()
        .chrome_executable(chromium)
        .request_timeout(Duration::from_secs(120))
        .no_sandbox()
        .user_data_dir(profile.path().join("profile"))
        .window_size(1280, 900)
        .arg("disable-gpu")
        .arg("enable-logging")
        .arg(("log-file", log.to_str().unwrap()))
        .build()
        .unwrap();
    let (mut browser, mut handler) = Browser::launch(config).await.unwrap();
    let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
    let page = browser.new_page("about:blank").await.unwrap();
    // chromiumoxide has Chromium hold each target a page brings along until a debugger lets
    // it run, then lets a service worker run and detaches from it in the same breath, which
    // races: in six runs of seven the worker stayed paused and the viewer never started.
    // Here nothing waits.
    page.execute(
        SetAutoAttachParams::builder()
            .auto_attach(true)
            .wait_for_debugger_on_start(false)
            .flatten(true)
            .build()
            .unwrap(),
    )
    .await
    .unwrap();
    let console = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = collect_console(&page, console.clone()).await;
    let requests = Arc::new(Mutex::new(Vec::new()));
    let mut sent = page
        .event_listener::<EventRequestWillBeSent>()
        .await
        .unwrap();
    let r = requests.clone();
    tasks.push(tokio::spawn(async move {
        while let Some(ev) = sent.next().await {
            r.lock().unwrap().push(ev.request.url.clone());
        }
    }));
    let responses = Arc::new(Mutex::new(Vec::new()));
    let mut received = page
        .event_listener::<EventResponseReceived>()
        .await
        .unwrap();
    let r = responses.clone();
    tasks.push(tokio::spawn(async move {
        while let Some(ev) = received.next().await {
            r.lock()
                .unwrap()
                .push((ev.response.url.clone(), ev.response.status));
        }
    }));

    // A first visit races in ReplayWeb.page itself: the element points its iframe at
    // `replay/` while its service worker is still installing, the static server answers 404,
    // and if the worker takes control of that 404 page before its load event, the viewer is
    // started inside it and never shows anything (one run in four here). So the page is
    // opened, the worker awaited, and the page reloaded: that visit, as a returning reader's,
    // starts under the worker.
    page.goto(format!("{site}/index.html")).await.unwrap();
    let ready = "navigator.serviceWorker.getRegistration('replay/')\
        .then(r => !!(r && r.active && r.active.state === 'activated'))";
    let deadline = Instant::now() + Duration::from_secs(20);
    while !page
        .evaluate(ready)
        .await
        .ok()
        .and_then(|v| v.into_value::<bool>().ok())
        .unwrap_or(false)
    {
        assert!(
            Instant::now() < deadline,
            "ReplayWeb.page's service worker not active after 20 s: {:?}",
            console.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    page.reload().await.unwrap();

    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut shown, mut docs) = (false, serde_json::Value::Null);
    let mut not_found = 0;
    while Instant::now() < deadline {
        docs = page
            .evaluate(FRAMES_JS)
            .await
            .ok()
            .and_then(|v| v.into_value().ok())
            .unwrap_or(serde_json::Value::Null);
        let of_post = |d: &&serde_json::Value| {
            d["href"]
                .as_str()
                .is_some_and(|h| h.contains(&format!("mp_/{post_url}")))
        };
        shown = docs
            .as_array()
            .into_iter()
            .flatten()
            .filter(of_post)
            .any(|d| {
                let text = flat(d["text"].as_str().unwrap_or(""));
                text.contains(title) && text.contains(words)
            });
        // The viewer's own answer for a URL it cannot find in the archive, given for 3 s on
        // end, is final.
        let missing = docs
            .as_array()
            .into_iter()
            .flatten()
            .filter(of_post)
            .any(|d| d["title"] == "Archived Page Not Found");
        not_found = if missing { not_found + 1 } else { 0 };
        if shown || not_found > 6 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // What the viewer made of the package: the collection as its service worker's API gives
    // it, asked from inside the viewer's frame (which the worker controls).
    let coll = docs
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| {
            d["href"]
                .as_str()?
                .split("/replay/w/")
                .nth(1)?
                .split('/')
                .next()
        })
        .find(|c| c.starts_with("id-"))
        .unwrap_or_default()
        .to_string();
    let collection: serde_json::Value = page
        .evaluate(format!(
            "(async () => {{
                const frame = document.querySelector('replay-web-page').shadowRoot.querySelector('iframe');
                const r = await frame.contentWindow.fetch('w/api/c/{coll}?all=1');
                return await r.json();
            }})()"
        ))
        .await
        .ok()
        .and_then(|v| v.into_value().ok())
        .unwrap_or(serde_json::Value::Null);
    let screenshot = Path::new(env!("CARGO_TARGET_TMPDIR")).join(shot_name);
    page.save_screenshot(
        ScreenshotParams::builder()
            .format(CaptureScreenshotFormat::Png)
            .build(),
        &screenshot,
    )
    .await
    .unwrap();
    // Late events (the replayed page's own) have a moment to arrive.
    tokio::time::sleep(Duration::from_millis(300)).await;
    browser.close().await.ok();
    let _ = browser.wait().await;
    events.abort();
    for t in tasks {
        t.abort();
    }
    let mut console = console.lock().unwrap().clone();
    // Chromium logs every console message, the service worker's too, as `…:CONSOLE:…] "…"`;
    // those of the page are in already.
    for line in std::fs::read_to_string(&log).unwrap_or_default().lines() {
        if let Some((_, said)) = line.split_once(":CONSOLE") {
            let said = said.split_once("] ").map_or(said, |(_, s)| s);
            if said.contains("/replay/sw.js") {
                console.push(format!("service worker: {said}"));
            }
        }
    }
    let requests = requests.lock().unwrap().clone();
    let responses = responses.lock().unwrap().clone();
    Seen {
        shown,
        docs,
        collection,
        console,
        requests,
        responses,
        screenshot,
    }
}

/// The served directory: the embedding page, ReplayWeb.page's bundles (the service worker
/// under `replay/`, the element's default `replayBase`, which is its scope) and the WACZ.
fn site_dir(dir: &Path, rwp: &Path, wacz: &Path, source: &str, post_url: &str) -> PathBuf {
    let site = dir.join("site");
    std::fs::create_dir_all(site.join("replay")).unwrap();
    std::fs::copy(rwp.join("ui.js"), site.join("ui.js")).unwrap();
    std::fs::copy(rwp.join("sw.js"), site.join("replay/sw.js")).unwrap();
    std::fs::copy(wacz, site.join("blog.wacz")).unwrap();
    std::fs::write(
        site.join("index.html"),
        format!(
            "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>everblog WACZ</title>\
             <script src=\"ui.js\"></script></head>\n\
             <body style=\"margin:0;height:100vh\">\
             <replay-web-page source=\"{source}\" url=\"{post_url}\"></replay-web-page>\
             </body></html>\n"
        ),
    )
    .unwrap();
    site
}

#[test]
fn replaywebpage_shows_an_archived_post_from_the_wacz_alone() {
    let Some(rwp) = replaywebpage() else { return };
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let Some(chromium) = chromium else {
        eprintln!("skipped: no Chromium (apt-get install chromium)");
        return;
    };
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let blog = serve("pelican");
    let db = dir.path().join("a.db");
    ok(&archive(&db, &["add", &blog.feed_url()]));
    let out = ok(&archive(&db, &["crawl"]));
    assert!(out.contains("media of 32 posts"), "{out}");
    let wacz = dir.path().join("blog.wacz");
    ok(&archive(
        &db,
        &["export", "--format", "wacz", "-o", wacz.to_str().unwrap()],
    ));
    let origin = blog.server.origin.clone();
    let truth = blog.truth.clone();
    drop(blog); // the live site is gone from here on
    let tripwire = Tripwire::at(&origin);
    let archived_in = started.elapsed();

    let post = &truth["posts"][3];
    let post_url = format!("{origin}{}", post["path"].as_str().unwrap());
    let title = post["title"].as_str().unwrap();
    let words = first_words(post["body_text"].as_str().unwrap(), 6);
    let site = site_dir(dir.path(), &rwp, &wacz, "blog.wacz", &post_url);
    let server = StaticServer::start(site);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let seen = rt.block_on(open_in_replaywebpage(
        chromium,
        &server.origin,
        &post_url,
        title,
        &words,
        "replaywebpage-post.png",
    ));
    eprintln!(
        "ReplayWeb.page: archived and exported in {archived_in:.1?}, shown in {:.1?}; \
         screenshot {}",
        started.elapsed() - archived_in,
        seen.screenshot.display()
    );
    for line in &seen.console {
        eprintln!("  console: {line}");
    }
    eprintln!(
        "  verification by the viewer: {}",
        seen.collection["verify"]
    );
    let served = server.log.lock().unwrap().clone();
    let of_wacz: Vec<&Served> = served
        .iter()
        .filter(|s| s.path.starts_with("/blog.wacz"))
        .collect();
    let ranges = of_wacz
        .iter()
        .filter(|s| s.range.is_some() && s.status == 206)
        .count();
    eprintln!(
        "  the WACZ ({} bytes) read in {} requests, {ranges} of them ranges",
        std::fs::metadata(&wacz).unwrap().len(),
        of_wacz.len()
    );

    let frames: Vec<String> = seen
        .docs
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            format!(
                "{} [{}]: {}",
                d["href"],
                d["title"],
                first_words(d["text"].as_str().unwrap_or(""), 40)
            )
        })
        .collect();
    assert!(
        seen.shown,
        "ReplayWeb.page did not show {post_url} ({title:?}, {words:?}); frames:\n{}\n\
         console:\n{}\nWACZ requests: {of_wacz:?}",
        frames.join("\n"),
        seen.console.join("\n")
    );
    // The WACZ was read on demand, by ranges, not downloaded whole.
    assert!(ranges > 0, "{of_wacz:?}");
    // The viewer's page list is the package's: every post, by its title.
    let pages = seen.collection["pages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let posts = truth["posts"].as_array().unwrap();
    assert_eq!(pages.len(), posts.len(), "{}", seen.collection);
    for p in posts {
        let url = format!("{origin}{}", p["path"].as_str().unwrap());
        let listed = pages.iter().find(|x| x["url"] == url.as_str());
        assert!(
            listed.is_some_and(|x| x["title"] == p["title"]),
            "{url} ({}) not listed as such: {listed:?}",
            p["title"]
        );
    }
    // Everything the replayed page asked of the archive was there (but the favicon Chromium
    // asks for by itself, which the blog never had).
    let missing: Vec<&(String, i64)> = seen
        .responses
        .iter()
        .filter(|(u, status)| u.contains("/replay/w/id-") && u.contains("_/http") && *status >= 400)
        .filter(|(u, _)| !u.ends_with("/favicon.ico"))
        .collect();
    assert!(missing.is_empty(), "not found in the archive: {missing:?}");
    assert!(
        seen.responses
            .iter()
            .any(|(u, s)| u.ends_with("/theme/css/main.css") && *s == 200),
        "the post's stylesheet was not replayed: {:?}",
        seen.responses
    );
    // Nothing went to the dead origin: not from the page's frames (CDP), not from the
    // service worker (the listener on its port).
    let to_origin: Vec<&String> = seen
        .requests
        .iter()
        .filter(|u| u.starts_with(&origin))
        .collect();
    assert!(
        to_origin.is_empty(),
        "asked of the dead origin: {to_origin:?}"
    );
    if let Some(t) = &tripwire {
        let hits = t.hits.lock().unwrap().clone();
        assert!(
            hits.is_empty(),
            "connections to the dead origin {origin}: {hits:?}"
        );
    }
}
