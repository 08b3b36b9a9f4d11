//! `archive serve`: the archive as a web site people read, search and cite (axum on tokio,
//! maud templates). Pages ([`pages`]): the blogs, a blog's posts by month, author and tag, a
//! post with its threaded comments, versions and word diffs, full-text search. Memento
//! (RFC 7089, [`memento`]): TimeMaps, TimeGates, and each capture as it was stored, under a
//! policy that runs no script. A JSON API ([`api`]) for scripts.
//!
//! Layers: the base modules ([`routes`], [`layout`], [`failure`], [`reader`], [`views`],
//! [`render`], [`diff`], [`charts`]) import no page family; each page family ([`pages`], [`versions`],
//! [`api`], [`memento`], [`replay`], [`downloads`], [`captures`], [`history`]; the static copy
//! [`site`])
//! imports only the base and the store; this module only routes requests to them. [`caching`]
//! tags answers.
//!
//! Safety: nothing on disk is served but the database's content and the embedded stylesheet;
//! no script runs on any page (`script-src 'none'` everywhere, captures sandboxed); bound to
//! loopback unless `--read-only-public` or `--auth FILE` (argon2 hashes, HTTP Basic) says
//! otherwise; URLs over 8 KiB answer 414. Errors go to the log; a page says only that one
//! happened.

pub mod api;
pub mod auth;
pub mod caching;
pub mod captures;
pub mod charts;
pub mod diff;
pub mod downloads;
pub mod failure;
pub mod history;
pub mod layout;
pub mod memento;
pub mod pages;
pub mod reader;
pub mod render;
pub mod replay;
pub mod routes;
pub mod site;
pub mod versions;
pub mod views;

use failure::{busy, Failure};
use layout::message;
use reader::Reader;

use crate::store::DatabaseSettings;
use crate::store::Store;
use anyhow::{bail, Context, Result};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// The reader's settings: the `[serve]` section of the configuration file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServeSettings {
    /// Address and port to listen on; `--bind` overrides it.
    pub bind: SocketAddr,
    /// A file of `name:$argon2id$…` lines (PHC strings); when set, every request needs HTTP
    /// Basic credentials matching one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<PathBuf>,
    /// Allow a non-loopback `bind` without `auth`: the archive is readable by everyone who
    /// can reach it.
    pub read_only_public: bool,
    /// Posts or hits per page.
    pub page_size: u32,
    /// Read-only database connections kept open between requests (more requests at once
    /// each open their own, closed after).
    pub connections: u32,
    /// A search ranks (BM25) the newest this many matches of its words; older matches follow,
    /// newest first. Ranking reads every ranked match's statistics: this bounds the work of a
    /// word found in nearly every post (benches/reader.sh: `the` over a 10,000-post blog).
    pub search_rank_window: u32,
    /// A client that has not sent a whole request head this long after connecting, or after its
    /// previous answer on a kept-alive connection, is disconnected (default 10 s): slow clients
    /// and idle connections do not hold the server's descriptors (hyper's header read timeout).
    #[serde(with = "humantime_serde")]
    pub header_timeout: std::time::Duration,
    /// A request not answered within this gets 503 with `Retry-After` (default 30 s).
    #[serde(with = "humantime_serde")]
    pub request_timeout: std::time::Duration,
    /// Connections open at once, at most (default 10,000); past it the oldest connection that
    /// has sent no request is closed to admit a new one, and a new one is closed at once only
    /// when every open connection has sent one. The process's open-files limit is raised to
    /// fit where the system allows.
    pub max_connections: usize,
    /// Requests answered at once, at most (default 256); past it a request gets 503 with
    /// `Retry-After` at once (tower's load shedding) instead of queueing.
    pub max_requests: usize,
    /// Failed logins allowed per user name and client address per minute (default 20); past it
    /// that name gets 429 from that address until the minute is over; credentials let in
    /// before are still let in ([`auth`]).
    pub max_auth_failures: u32,
    /// A PostgreSQL archive that cannot be reached is tried again for this long (default 3 s;
    /// `[database] reconnect_for` is the writers'), then the request gets 503 with
    /// `Retry-After`; the next request tries again.
    #[serde(with = "humantime_serde")]
    pub database_timeout: std::time::Duration,
}

impl Default for ServeSettings {
    fn default() -> Self {
        ServeSettings {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            auth: None,
            read_only_public: false,
            page_size: 50,
            connections: 16,
            search_rank_window: 2000,
            header_timeout: std::time::Duration::from_secs(10),
            request_timeout: std::time::Duration::from_secs(30),
            max_connections: 10_000,
            max_requests: 256,
            max_auth_failures: 20,
            database_timeout: std::time::Duration::from_secs(3),
        }
    }
}

/// The longest request target answered (bytes); longer ones get 414 URI Too Long.
pub const MAX_URI: usize = 8 * 1024;

/// The policy of the reader's own pages: no script, nothing from another origin.
const PAGE_POLICY: &str =
    "default-src 'none'; img-src 'self' data:; media-src 'self'; frame-src 'self'; style-src 'self'; \
    form-action 'self'; frame-ancestors 'none'; base-uri 'none'; script-src 'none'";

/// The reader's routes over the archive at `db`, with `/metrics`, `/healthz` and `/readyz`
/// (`health`; the last two need no credentials).
///
/// # Errors
/// The auth file is unreadable or malformed, or another Prometheus recorder is installed.
pub fn router(db: &DatabaseSettings, settings: &ServeSettings) -> Result<Router> {
    let auth = settings
        .auth
        .as_deref()
        .map(|path| auth::Credentials::read(path, settings.max_auth_failures).map(Arc::new))
        .transpose()?;
    let reader = Arc::new(Reader::new(
        DatabaseSettings {
            reconnect_for: settings.database_timeout,
            ..db.clone()
        },
        auth,
        settings.page_size,
        settings.connections as usize,
        settings.search_rank_window,
    ));
    let health = crate::health::Health::new(db)?;
    Ok(Router::new()
        .route("/", get(pages::blogs))
        .route("/blog/{id}", get(pages::blog))
        .route("/blog/{id}/captures", get(captures::captures))
        .route("/blog/{id}/charts", get(history::charts))
        .route("/blog/{id}/charts/{file}", get(history::chart))
        .route("/blog/{id}/{name}", get(downloads::document))
        .route("/blogs.opml", get(downloads::blogs_opml))
        .route("/post", get(pages::post))
        .route("/diff", get(versions::diff))
        .route("/version", get(versions::version))
        .route("/search", get(pages::search))
        .route("/go", get(pages::go))
        .route("/assets/style.css", get(layout::stylesheet))
        .route("/api/blogs", get(api::blogs))
        .route("/api/blog/{id}/posts", get(api::posts))
        .route("/api/post", get(api::post))
        .route("/api/search", get(api::search))
        .route("/api/versions", get(versions::api))
        .route("/timemap/{*rest}", get(memento::timemap))
        .route("/timegate/{*rest}", get(memento::timegate))
        .route("/web/{*rest}", get(memento::capture))
        .route("/replay/{*rest}", get(replay::replay))
        .merge(crate::health::routes(health))
        .fallback(|| async { Failure::NotFound("No such page.".into()) })
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&reader),
            guard,
        ))
        .layer(axum::middleware::from_fn(caching::conditional))
        .layer(
            tower::ServiceBuilder::new()
                .layer(axum::error_handling::HandleErrorLayer::new(
                    |_: tower::BoxError| async { busy() },
                ))
                .load_shed()
                .concurrency_limit(settings.max_requests.max(1)),
        )
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            settings.request_timeout,
        ))
        .layer(axum::middleware::from_fn(api::uniform_errors))
        .layer(axum::middleware::from_fn(headers))
        .with_state(reader))
}

/// The outermost layer: the reader's headers on every answer, errors included (its policy
/// unless a capture set a stricter one), and `Retry-After` on every 503.
async fn headers(req: Request, next: Next) -> Response {
    let mut r = next.run(req).await;
    let status = r.status();
    let h = r.headers_mut();
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(PAGE_POLICY),
        );
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if status == StatusCode::SERVICE_UNAVAILABLE && !h.contains_key(header::RETRY_AFTER) {
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    }
    r
}

/// Every request: 414 past [`MAX_URI`], 401 without valid credentials (when required).
async fn guard(State(reader): State<Arc<Reader>>, req: Request, next: Next) -> Response {
    let target = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if target > MAX_URI {
        return (
            StatusCode::URI_TOO_LONG,
            message(StatusCode::URI_TOO_LONG, "That address is too long."),
        )
            .into_response();
    }
    let client = req
        .extensions()
        .get::<axum::extract::ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let open = crate::health::OPEN_PATHS.contains(&req.uri().path());
    let verdict = match reader.auth().filter(|_| !open) {
        Some(creds) => {
            creds
                .check(req.headers().get(header::AUTHORIZATION), client)
                .await
        }
        None => auth::Verdict::Granted,
    };
    if let auth::Verdict::TooMany(wait) = verdict {
        let mut r = (
            StatusCode::TOO_MANY_REQUESTS,
            message(
                StatusCode::TOO_MANY_REQUESTS,
                "Too many wrong names or passwords from here; wait a minute.",
            ),
        )
            .into_response();
        let secs = wait.as_secs().max(1).to_string();
        if let Ok(v) = HeaderValue::from_str(&secs) {
            r.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return r;
    }
    if verdict == auth::Verdict::Refused {
        let mut r = (
            StatusCode::UNAUTHORIZED,
            message(
                StatusCode::UNAUTHORIZED,
                "This archive needs a name and password.",
            ),
        )
            .into_response();
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"everblog\", charset=\"UTF-8\""),
        );
        return r;
    }
    let path = req.uri().path().to_string();
    let r = next.run(req).await;
    tracing::debug!("serve: {} {path}", r.status().as_u16());
    r
}

/// Checks that `settings` may be served: a non-loopback address needs `auth` or
/// `read_only_public`.
///
/// # Errors
/// One line saying which flag to add.
pub fn check_exposure(settings: &ServeSettings) -> Result<()> {
    if !settings.bind.ip().is_loopback() && settings.auth.is_none() && !settings.read_only_public {
        bail!(
            "--bind {} is not a loopback address: add --auth FILE (users with argon2 hashes) or --read-only-public (anyone who can reach it reads the archive)",
            settings.bind
        );
    }
    Ok(())
}

/// Serves the archive at `db` until SIGINT or SIGTERM. `ready` is told the address actually
/// bound (port 0 picks a free one).
///
/// # Errors
/// The address is exposed without `--auth`/`--read-only-public`, the port cannot be bound, the
/// auth file is bad, or the database cannot be opened.
pub async fn run(
    db: &DatabaseSettings,
    settings: &ServeSettings,
    ready: impl FnOnce(SocketAddr),
) -> Result<()> {
    check_exposure(settings)?;
    // A reader never creates an archive: a mistyped path is an error, not an empty archive.
    let path = db.path()?;
    if !crate::store::is_postgres(path) && !path.exists() {
        bail!(
            "no archive at {}: check --db (`archive serve` reads an archive, it never creates one)",
            path.display()
        );
    }
    // Open (and upgrade) once with write access when possible, so read-only connections see
    // the current schema; this also says at once when the file is not an archive.
    drop(Store::open_read_only(db)?);
    let app = router(db, settings)?;
    let listener = tokio::net::TcpListener::bind(settings.bind)
        .await
        .with_context(|| format!("cannot listen on {}", settings.bind))?;
    ready(listener.local_addr()?);
    let max_connections = room_for_connections(settings.max_connections);
    accept(listener, app, settings.header_timeout, max_connections).await;
    Ok(())
}

/// Descriptors kept for everything but connections (the database, logs, the runtime).
const SPARE_FILES: u64 = 256;

/// Raises the open-files limit so `wanted` connections fit; returns how many do.
fn room_for_connections(wanted: usize) -> usize {
    let want = wanted as u64 + SPARE_FILES;
    match rlimit::increase_nofile_limit(want) {
        Ok(limit) if limit >= want => wanted,
        Ok(limit) => {
            let fits = limit.saturating_sub(SPARE_FILES).max(1) as usize;
            tracing::warn!(
                wanted,
                fits,
                "the open-files limit ({limit}) leaves room for fewer connections than [serve] max_connections; raise it (LimitNOFILE= in the service unit)"
            );
            fits
        }
        Err(e) => {
            tracing::warn!("the open-files limit could not be read or raised: {e}");
            wanted
        }
    }
}

/// The open connections that have not sent a request yet, oldest first (by accept order), each
/// with the signal that closes it: at the connection cap, the oldest is closed to admit a new
/// one (issue 45), as nginx closes idle connections when it runs out.
#[derive(Default)]
struct Silent(std::sync::Mutex<std::collections::BTreeMap<u64, Arc<tokio::sync::Notify>>>);

impl Silent {
    fn add(&self, id: u64) -> Arc<tokio::sync::Notify> {
        let close = Arc::new(tokio::sync::Notify::new());
        self.0.lock().expect("lock").insert(id, Arc::clone(&close));
        close
    }

    fn spoke(&self, id: u64) {
        self.0.lock().expect("lock").remove(&id);
    }

    /// Closes the oldest silent connection; false when every open connection has spoken.
    fn close_oldest(&self) -> bool {
        match self.0.lock().expect("lock").pop_first() {
            Some((_, close)) => {
                close.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Accepts connections until SIGINT or SIGTERM, each served by hyper with `header_timeout`
/// (a head not whole by then, or a kept-alive connection idle that long, is closed). Past
/// `max_connections` open at once, the oldest connection that has not sent a request is
/// closed to admit the new one; when every open connection has sent one, the new connection
/// is closed at once. On a signal, connections finish the request they are answering.
async fn accept(
    listener: tokio::net::TcpListener,
    app: Router,
    header_timeout: std::time::Duration,
    max_connections: usize,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let open = Arc::new(tokio::sync::Semaphore::new(max_connections));
    let silent = Arc::new(Silent::default());
    let mut accepted: u64 = 0;
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM handler");
    loop {
        let (stream, peer) = tokio::select! {
            got = listener.accept() => match got {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors, say: wait for connections to close.
                    tracing::warn!("serve: accepting a connection failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = tokio::signal::ctrl_c() => break,
            _ = term.recv() => break,
        };
        let permit = match Arc::clone(&open).try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) if silent.close_oldest() => {
                // The closed connection's task gives its slot back at once.
                let freed = tokio::time::timeout(
                    std::time::Duration::from_secs(1),
                    Arc::clone(&open).acquire_owned(),
                )
                .await;
                match freed {
                    Ok(Ok(permit)) => permit,
                    _ => continue,
                }
            }
            Err(_) => {
                tracing::debug!("serve: {max_connections} connections open, each has sent a request; one more closed");
                drop(stream);
                continue;
            }
        };
        accepted += 1;
        let id = accepted;
        let close = silent.add(id);
        let _ = stream.set_nodelay(true);
        // The peer's address, for the per-client limits (`auth`); a request makes its
        // connection one that has spoken.
        let spoke = Arc::clone(&silent);
        let app = tower::ServiceExt::map_request(
            app.clone(),
            move |mut req: hyper::Request<hyper::body::Incoming>| {
                spoke.spoke(id);
                req.extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                req
            },
        );
        let service = hyper_util::service::TowerToHyperService::new(app);
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(header_timeout)
            .serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        let silent = Arc::clone(&silent);
        tokio::spawn(async move {
            tokio::select! {
                ended = conn => if let Err(e) = ended {
                    tracing::debug!("serve: connection ended: {e}");
                },
                () = close.notified() => {
                    tracing::debug!("serve: closed a connection that sent no request, to admit a new one");
                }
            }
            silent.spoke(id);
            drop(permit);
        });
    }
    // Requests in flight finish; idle connections close (bounded, should one hang).
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), graceful.shutdown()).await;
}
