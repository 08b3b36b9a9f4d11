//! Shared test helpers: fixture blogs served on 127.0.0.1, the real `archive` binary run on a
//! temporary database, and the per-field scoring of an export against a blog's ground truth.
#![allow(dead_code)]

pub mod pg_cluster;

use everblog::fixture_server::{serve_dir, Root, Server};
use everblog::store::Store;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A fixture blog of `fixtures/sites/<name>` served on a free port.
pub struct Blog {
    pub server: Server,
    pub truth: Value,
}

/// `fixtures/sites/<name>` (engine blogs), `fixtures/themes/<name>` (real themes' mess, issue
/// 28) or `fixtures/<name>` (WordPress mirrors).
pub fn fixture_dir(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    ["sites", "themes"]
        .iter()
        .map(|d| root.join(d).join(name))
        .find(|d| d.is_dir())
        .unwrap_or_else(|| root.join(name))
}

pub fn serve(name: &str) -> Blog {
    let dir = fixture_dir(name);
    let truth: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).unwrap()).unwrap();
    let base = truth["base_url"].as_str().map(str::to_string);
    let site = dir.join("site");
    let server = if truth["trailing_slash_redirect"].as_bool() == Some(true) {
        let hook = trailing_slash_redirect(site.clone());
        Server::start_with(Root::Disk(site), base, Some(hook)).unwrap()
    } else {
        serve_dir(&site, base).unwrap()
    };
    Blog { server, truth }
}

/// What GitHub Pages, Netlify, S3 and Python's `http.server` do for a directory asked without
/// its trailing slash: a 301 to the address with it (`/blog/x` → `/blog/x/`).
fn trailing_slash_redirect(site: PathBuf) -> everblog::fixture_server::Hook {
    Box::new(move |path_and_query: &str| {
        let (path, query) = match path_and_query.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path_and_query, None),
        };
        let rel = percent_encoding::percent_decode_str(path.trim_start_matches('/'))
            .decode_utf8_lossy()
            .into_owned();
        if path.ends_with('/') || rel.split('/').any(|s| s == "..") {
            return None;
        }
        let dir = site.join(&rel);
        if dir.is_file() || !dir.join("index.html").is_file() {
            return None;
        }
        let to = match query {
            Some(q) => format!("{path}/?{q}"),
            None => format!("{path}/"),
        };
        Some(everblog::fixture_server::Reply {
            status: 301,
            headers: vec![("Location".into(), to)],
            body: Vec::new(),
        })
    })
}

impl Blog {
    pub fn feed_url(&self) -> String {
        format!(
            "{}{}",
            self.server.origin,
            self.truth["feed_path"].as_str().unwrap()
        )
    }
}

/// Runs `archive --db <db> args…` and returns its output.
pub fn archive(db: &Path, args: &[&str]) -> Output {
    archive_command()
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "archive failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn tokens(s: &str) -> HashMap<String, usize> {
    let mut m = HashMap::new();
    for t in s
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
    {
        *m.entry(t.to_lowercase()).or_insert(0) += 1;
    }
    m
}

/// Token F1 of two texts (case-folded alphanumeric tokens, multiset).
pub fn token_f1(a: &str, b: &str) -> f64 {
    let (ta, tb) = (tokens(a), tokens(b));
    let common: usize = ta
        .iter()
        .map(|(k, n)| (*n).min(*tb.get(k).unwrap_or(&0)))
        .sum();
    let (na, nb): (usize, usize) = (ta.values().sum(), tb.values().sum());
    if common == 0 || na == 0 || nb == 0 {
        return if na == nb { 1.0 } else { 0.0 };
    }
    let (p, r) = (common as f64 / na as f64, common as f64 / nb as f64);
    2.0 * p * r / (p + r)
}

pub fn normalise_path(url_or_path: &str) -> String {
    let path = match url::Url::parse(url_or_path) {
        Ok(u) => u.path().to_string(),
        Err(_) => url_or_path.to_string(),
    };
    let path = percent_encoding::percent_decode_str(&path)
        .decode_utf8_lossy()
        .into_owned();
    let path = path.strip_suffix("index.html").unwrap_or(&path).to_string();
    path.trim_end_matches('/').to_string()
}

/// Per-field accuracy of an export against the truth: (coverage, article ok, title ok, false positives).
pub struct Score {
    pub posts: usize,
    pub found: usize,
    pub article_ok: usize,
    pub title_ok: usize,
    /// Posts whose authors are the truth's, each name separately and in order.
    pub authors_ok: usize,
    /// Posts archived with no author (a gap, not a wrong name).
    pub authors_missing: usize,
    pub false_positives: usize,
    /// Export rows beyond one per post (a post stored under a second address).
    pub duplicates: usize,
    /// Posts whose published instant is the truth's.
    pub published_ok: usize,
    pub failures: Vec<String>,
}

pub fn score(truth: &Value, export_jsonl: &str) -> Score {
    let rows: Vec<Value> = export_jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_path: HashMap<String, &Value> = rows
        .iter()
        .map(|r| (normalise_path(r["url"].as_str().unwrap()), r))
        .collect();
    let posts = truth["posts"].as_array().unwrap();
    let mut s = Score {
        posts: posts.len(),
        found: 0,
        article_ok: 0,
        title_ok: 0,
        authors_ok: 0,
        authors_missing: 0,
        false_positives: 0,
        duplicates: 0,
        published_ok: 0,
        failures: Vec::new(),
    };
    let truth_paths: std::collections::HashSet<String> = posts
        .iter()
        .map(|p| normalise_path(p["path"].as_str().unwrap()))
        .collect();
    s.false_positives = by_path.keys().filter(|k| !truth_paths.contains(*k)).count();
    // One post stored under two addresses (`/x` and `/x/`) is one path here: counted apart.
    s.duplicates = rows.len() - by_path.len();
    if s.duplicates > 0 {
        s.failures.push(format!(
            "{} posts stored under a second address",
            s.duplicates
        ));
    }
    for p in posts {
        let path = normalise_path(p["path"].as_str().unwrap());
        let Some(row) = by_path.get(&path) else {
            s.failures.push(format!("missing {path}"));
            continue;
        };
        s.found += 1;
        let f1 = token_f1(
            row["content_text"].as_str().unwrap_or(""),
            p["body_text"].as_str().unwrap(),
        );
        if f1 >= 0.9 {
            s.article_ok += 1;
        } else {
            s.failures.push(format!("{path}: article F1 {f1:.3}"));
        }
        let norm = |v: &Value| {
            v.as_str()
                .unwrap_or("")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        if norm(&row["title"]) == norm(&p["title"]) {
            s.title_ok += 1;
        } else {
            s.failures.push(format!(
                "{path}: title {:?} vs {:?}",
                row["title"], p["title"]
            ));
        }
        let instant = |v: &Value| {
            v.as_str()
                .and_then(|d| chrono::DateTime::parse_from_rfc3339(d).ok())
                .map(|d| d.timestamp())
        };
        if instant(&row["published"]).is_some()
            && instant(&row["published"]) == instant(&p["published"])
        {
            s.published_ok += 1;
        } else {
            s.failures.push(format!(
                "{path}: published {} vs {}",
                row["published"], p["published"]
            ));
        }
        if row["authors"] == p["authors"] {
            s.authors_ok += 1;
        } else if row["authors"].as_array().is_some_and(|a| a.is_empty()) {
            s.authors_missing += 1;
        } else {
            s.failures.push(format!(
                "{path}: authors {} vs {}",
                row["authors"], p["authors"]
            ));
        }
    }
    s
}

/// `archive --db DB --config CONFIG daemon --owner OWNER`, stdout discarded.
pub fn daemon_with_config(db: &Path, config: &Path, owner: &str, stderr: Stdio) -> Child {
    archive_command()
        .arg("--db")
        .arg(db)
        .arg("--config")
        .arg(config)
        .args(["daemon", "--owner", owner])
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// SIGTERM, then the exit status (fails the test after 30 s).
pub fn terminate(mut child: Child) -> std::process::ExitStatus {
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "daemon did not stop within 30 s of SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Polls `cond` every 100 ms; fails the test after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Truth comments (the `comments` of each post of `truth`) archived exactly once with their
/// author and text (token F1 ≥ 0.9): (found, total, descriptions of the others).
pub fn comment_recall(store: &Store, origin: &str, truth: &Value) -> (usize, usize, Vec<String>) {
    let (mut found, mut total, mut missing) = (0, 0, Vec::new());
    for p in truth["posts"].as_array().unwrap() {
        let url = format!("{origin}{}", p["path"].as_str().unwrap());
        let archived = store.comments(&url).unwrap();
        for c in p["comments"].as_array().into_iter().flatten() {
            total += 1;
            let n = archived
                .iter()
                .filter(|a| {
                    a.author.as_deref().map(str::trim) == c["author"].as_str()
                        && token_f1(&a.content_text, c["text"].as_str().unwrap()) >= 0.9
                })
                .count();
            if n == 1 {
                found += 1;
            } else {
                missing.push(format!("{url} #{} ({n} copies)", c["id"]));
            }
        }
    }
    (found, total, missing)
}

/// A configuration for tests run without `--config`: the fixture blogs link stylesheets and
/// fonts on public CDNs, which tests must not reach (only 127.0.0.1), so requisites on other
/// hosts are not kept.
pub fn loopback_config() -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("everblog-test-config-{}.toml", std::process::id()));
    if !path.exists() {
        let tmp = path.with_extension(
            format!("{:?}", std::thread::current().id())
                .replace(|c: char| !c.is_alphanumeric(), ""),
        );
        std::fs::write(&tmp, "[media]\nother_hosts = false\n").unwrap();
        std::fs::rename(&tmp, &path).unwrap();
    }
    path
}

/// Writes a test's configuration file: `text`, and requisites on other hosts not kept (see
/// [`loopback_config`]).
pub fn write_config(path: impl AsRef<Path>, text: impl AsRef<str>) -> std::io::Result<()> {
    std::fs::write(
        path,
        format!("{}\n[media]\nother_hosts = false\n", text.as_ref()),
    )
}

/// The `archive` binary, with [`loopback_config`] as its configuration unless `--config` is
/// given.
pub fn archive_command() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_archive"));
    c.env("EVERBLOG_CONFIG", loopback_config());
    if let Some(mode) = crate::RENDER_BY_DEFAULT {
        c.env("EVERBLOG_RENDER", mode);
    }
    c
}

/// Points the served directory `link` at `target` (one state of a fixture blog) atomically: a
/// symlink renamed over the old one, so a crawl never sees half of each state.
pub fn switch_to(link: &Path, target: &Path) {
    let tmp = link.with_extension("new");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp).unwrap();
    std::fs::rename(&tmp, link).unwrap();
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An Isso server started detached by a fixture's `start.sh` (`fixtures/js/isso/start.sh`
/// or its symlink in `fixtures/media/isso`); killed when dropped.
pub struct Isso(pub PathBuf);

impl Drop for Isso {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(self.0.join("isso.pid")) {
            let _ = Command::new("kill").args(["-9", pid.trim()]).status();
        }
    }
}

/// Starts a real Isso (PyPI, pinned by the script) on `port` with its state in `dir`, seeded
/// with the fixture's comments and answering CORS for `blog_origin`.
pub fn start_isso(script: &Path, dir: &Path, port: u16, blog_origin: &str) -> Isso {
    let out = Command::new("bash")
        .arg(script)
        .arg(dir)
        .arg(port.to_string())
        .arg(blog_origin)
        .env("ISSO_DETACH", "1")
        .output()
        .unwrap();
    let isso = Isso(dir.to_path_buf());
    assert!(
        out.status.success(),
        "Isso did not start: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    isso
}

/// `s` with `&`, `<` and `>` escaped as HTML text.
pub fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One raw HTTP/1.1 request (the path sent as is, no client normalising it): (status, body).
pub fn raw_get(port: u16, target: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, text)
}

/// The `archive serve` child, killed if the test fails before stopping it.
pub struct Serving(pub Option<std::process::Child>);

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `s` encoded for a query string.
pub fn url_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Starts `archive serve` on `db` with `config` and waits until it answers.
pub fn serve_archive(db: &Path, config: &Path, extra: &[&str]) -> (Serving, u16) {
    let port = free_port();
    let child = archive_command()
        .args([
            "--db",
            db.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
        ])
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .args(extra)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let serving = Serving(Some(child));
    wait_for("archive serve to answer", Duration::from_secs(20), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    (serving, port)
}

/// The header `name` of a raw answer, if present.
pub fn header<'a>(answer: &'a str, name: &str) -> Option<&'a str> {
    let head = answer.split("\r\n\r\n").next().unwrap_or("");
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Debian's headless Chromium as the browser tests drive it: no sandbox (containers), no GPU,
/// a window of `width` × `height`, its profile in `profile`, and `args` (flags without `--`).
pub fn headless(
    profile: &Path,
    (width, height): (u32, u32),
    args: &[&str],
) -> chromiumoxide::browser::BrowserConfig {
    let mut b = chromiumoxide::browser::BrowserConfig::builder()
        .chrome_executable("/usr/bin/chromium")
        .no_sandbox()
        .user_data_dir(profile)
        .window_size(width, height)
        // The engines tests run as threads of one process, several browsers at once on
        // 2 cores: chromiumoxide's 30 s per request is too short under that load.
        .request_timeout(Duration::from_secs(120))
        .arg("disable-gpu");
    for a in args {
        b = b.arg(*a);
    }
    b.build().expect("a browser configuration")
}

/// The page as a PNG.
pub async fn screenshot(page: &chromiumoxide::Page) -> Vec<u8> {
    page.screenshot(
        chromiumoxide::page::ScreenshotParams::builder()
            .format(chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat::Png)
            .build(),
    )
    .await
    .expect("a screenshot")
}

/// The body of `GET /metrics` on 127.0.0.1:`port`, or `None` when it does not answer 200.
pub fn scrape(port: u16) -> Option<String> {
    std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    let (status, answer) = raw_get(port, "/metrics");
    let body = answer.split_once("\r\n\r\n")?.1.to_string();
    (status == 200).then_some(body)
}

/// The value of the series `series` (its name and labels as the text format writes them, e.g.
/// `everblog_fetches_total{class="2xx"}`) in a Prometheus text exposition.
pub fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}
