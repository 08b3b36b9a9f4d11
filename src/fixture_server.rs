//! A static web server on 127.0.0.1 for fixture blogs: `archive demo` serves the bundled blog
//! with it, and tests serve the generated blogs of `fixtures/` with it. Not a production server.
//!
//! Fixture sites generated with an absolute base URL (`http://127.0.0.1:8000`) are rewritten on
//! the fly to the server's real origin, so any free port works.

use include_dir::Dir;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Where served files come from.
#[derive(Clone)]
pub enum Root {
    /// A directory on disk.
    Disk(PathBuf),
    /// A directory compiled into the binary.
    Embedded(&'static Dir<'static>),
}

/// A scripted answer for tests: replaces the file lookup for the paths it answers.
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Extra headers (name, value).
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Vec<u8>,
}

/// A hook that may answer a request path (with its query) instead of the files.
pub type Hook = Box<dyn Fn(&str) -> Option<Reply> + Send + 'static>;

/// One line of the access log: when and what was requested.
#[derive(Debug, Clone)]
pub struct Access {
    /// Time since the server started.
    pub at: std::time::Duration,
    /// Path with query.
    pub path: String,
    /// Status answered.
    pub status: u16,
}

/// A running server; stops when dropped.
pub struct Server {
    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub origin: String,
    stop: Arc<AtomicBool>,
    requests: Arc<AtomicU64>,
    log: Arc<Mutex<Vec<Access>>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

/// Sets `TCP_NODELAY` on `listener`, which the connections it accepts inherit (Linux): tiny_http
/// writes a response's headers and body separately, and with Nagle's algorithm the body then
/// waits for the client's delayed ACK, 40 ms a response on loopback.
fn no_delay(listener: &std::net::TcpListener) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    // SAFETY: a valid socket descriptor, and a c_int option value of the size given.
    let rc = unsafe {
        libc::setsockopt(
            listener.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

impl Server {
    /// Serves `root` on a free port of 127.0.0.1, rewriting `base_url` (if any) in text bodies
    /// to the server's origin.
    pub fn start(root: Root, base_url: Option<String>) -> std::io::Result<Server> {
        Server::start_with(root, base_url, None)
    }

    /// Like [`Server::start`], with a hook answering some paths itself.
    pub fn start_with(
        root: Root,
        base_url: Option<String>,
        hook: Option<Hook>,
    ) -> std::io::Result<Server> {
        Server::start_full(root, base_url, Vec::new(), hook)
    }

    /// Like [`Server::start_with`], with more (from, to) rewrites of text bodies: a fixture
    /// that names a second host (a comment widget's) gets that host's real origin.
    pub fn start_full(
        root: Root,
        base_url: Option<String>,
        rewrites: Vec<(String, String)>,
        hook: Option<Hook>,
    ) -> std::io::Result<Server> {
        Server::start_at([127, 0, 0, 1].into(), root, base_url, rewrites, hook)
    }

    /// Like [`Server::start_full`], on a free port of `ip` (another loopback address such as
    /// 127.0.0.2 stands for a second machine).
    pub fn start_at(
        ip: std::net::IpAddr,
        root: Root,
        base_url: Option<String>,
        rewrites: Vec<(String, String)>,
        hook: Option<Hook>,
    ) -> std::io::Result<Server> {
        let listener = std::net::TcpListener::bind(std::net::SocketAddr::new(ip, 0))?;
        no_delay(&listener)?;
        let server = tiny_http::Server::from_listener(listener, None)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let port = server.server_addr().to_ip().map(|a| a.port()).unwrap_or(0);
        let origin = format!("http://{ip}:{port}");
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(AtomicU64::new(0));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (stop2, requests2, origin2, log2) =
            (stop.clone(), requests.clone(), origin.clone(), log.clone());
        let started = std::time::Instant::now();
        let handle = std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                let Ok(Some(req)) = server.recv_timeout(std::time::Duration::from_millis(20))
                else {
                    continue;
                };
                // When the request arrived, before any work on it.
                let at = started.elapsed();
                requests2.fetch_add(1, Ordering::Relaxed);
                let full = req.url().to_string();
                let path = full.split(['?', '#']).next().unwrap_or("/").to_string();
                let rewrite = |bytes: Vec<u8>, ctype: &str| {
                    if !is_text(ctype) || (base_url.is_none() && rewrites.is_empty()) {
                        return bytes;
                    }
                    let mut text = String::from_utf8_lossy(&bytes).into_owned();
                    for (from, to) in &rewrites {
                        text = text.replace(from.as_str(), to);
                    }
                    if let Some(b) = &base_url {
                        text = text.replace(b.trim_end_matches('/'), &origin2);
                    }
                    text.into_bytes()
                };
                let (status, resp) = match hook.as_ref().and_then(|h| h(&full)) {
                    Some(reply) => {
                        let mut r = tiny_http::Response::from_data(reply.body)
                            .with_status_code(reply.status);
                        for (k, v) in reply.headers {
                            if let Ok(h) = tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes())
                            {
                                r = r.with_header(h);
                            }
                        }
                        (reply.status, r)
                    }
                    None => match lookup(&root, &path) {
                        Some((bytes, ctype)) => {
                            let body = rewrite(bytes, ctype);
                            // A strong validator like a real server's: a hash of the body.
                            let etag = format!("\"{:016x}\"", fnv1a(&body));
                            let unchanged = req.headers().iter().any(|h| {
                                h.field.equiv("If-None-Match")
                                    && h.value.as_str().split(',').any(|t| t.trim() == etag)
                            });
                            let etag_header =
                                tiny_http::Header::from_bytes("ETag", etag.as_bytes())
                                    .expect("hex header");
                            if unchanged {
                                (
                                    304,
                                    tiny_http::Response::from_data(Vec::new())
                                        .with_status_code(304)
                                        .with_header(etag_header),
                                )
                            } else {
                                (
                                    200,
                                    tiny_http::Response::from_data(body)
                                        .with_header(
                                            tiny_http::Header::from_bytes("Content-Type", ctype)
                                                .expect("static header"),
                                        )
                                        .with_header(etag_header),
                                )
                            }
                        }
                        None => (
                            404,
                            tiny_http::Response::from_data(b"not found".to_vec())
                                .with_status_code(404),
                        ),
                    },
                };
                log2.lock().expect("lock").push(Access {
                    at,
                    path: full,
                    status,
                });
                let _ = req.respond(resp);
            }
        });
        Ok(Server {
            origin,
            stop,
            requests,
            log,
            handle: Some(handle),
        })
    }

    /// Number of requests served so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// The access log so far.
    pub fn access_log(&self) -> Vec<Access> {
        self.log.lock().expect("lock").clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn is_text(ctype: &str) -> bool {
    ctype.starts_with("text/")
        || ctype.contains("xml")
        || ctype.contains("json")
        || ctype.contains("javascript")
}

fn content_type(path: &str, bytes: &[u8]) -> &'static str {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "xml" | "rss" | "atom" => "application/xml",
        "json" => "application/json",
        "css" => "text/css",
        "js" => "application/javascript",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "txt" => "text/plain; charset=utf-8",
        "ico" => "image/x-icon",
        "webp" => "image/webp",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "mp3" => "audio/mpeg",
        "mp4" => "video/mp4",
        "pdf" => "application/pdf",
        _ => {
            let head = String::from_utf8_lossy(&bytes[..bytes.len().min(256)]).to_ascii_lowercase();
            if head.trim_start().starts_with("<?xml")
                || head.contains("<rss")
                || head.contains("<feed")
            {
                "application/xml"
            } else if head.contains("<html") || head.contains("<!doctype") {
                "text/html; charset=utf-8"
            } else {
                "application/octet-stream"
            }
        }
    }
}

fn read(root: &Root, rel: &str) -> Option<Vec<u8>> {
    match root {
        Root::Disk(dir) => {
            let p = dir.join(rel);
            p.is_file().then(|| std::fs::read(p).ok()).flatten()
        }
        Root::Embedded(dir) => dir.get_file(rel).map(|f| f.contents().to_vec()),
    }
}

fn lookup(root: &Root, url_path: &str) -> Option<(Vec<u8>, &'static str)> {
    let decoded = percent_decode(url_path);
    let rel = decoded.trim_start_matches('/');
    if rel.split('/').any(|s| s == "..") {
        return None;
    }
    let candidates = [
        rel.to_string(),
        format!("{}/index.html", rel.trim_end_matches('/'))
            .trim_start_matches('/')
            .to_string(),
        format!("{rel}.html"),
    ];
    for c in candidates {
        if c.is_empty() {
            continue;
        }
        if let Some(bytes) = read(root, &c) {
            let ct = content_type(&c, &bytes);
            return Some((bytes, ct));
        }
    }
    None
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// Serves a directory on disk.
pub fn serve_dir(dir: &Path, base_url: Option<String>) -> std::io::Result<Server> {
    Server::start(Root::Disk(dir.to_path_buf()), base_url)
}

/// The demo blog bundled into the binary: `fixtures/sites/pelican` (Pelican 4, summary-only
/// RSS feed, 32 posts of which the feed lists 10).
static DEMO_SITE: Dir<'static> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/fixtures/sites/pelican/site");
static DEMO_TRUTH: &str = include_str!("../fixtures/sites/pelican/truth.json");

/// The bundled demo blog: (root, feed path, base URL the site was generated with).
pub fn demo_site() -> (Root, String, Option<String>) {
    let truth: serde_json::Value =
        serde_json::from_str(DEMO_TRUTH).expect("bundled truth.json is valid");
    let feed = truth["feed_path"]
        .as_str()
        .unwrap_or("/feeds/all.rss.xml")
        .to_string();
    let base = truth["base_url"].as_str().map(str::to_string);
    (Root::Embedded(&DEMO_SITE), feed, base)
}
