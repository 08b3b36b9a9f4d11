//! What an operator's tools ask a running everblog (issue 44): `/metrics` (Prometheus text
//! format: the process's meters, `meters`, and the archive's figures as gauges, read from the
//! store at most every [`FIGURES_EVERY`]), `/healthz` (200 while the process runs) and `/readyz`
//! (200 once the database answers and its schema is current, else 503 saying why). The same
//! [`routes`] serve in `archive serve` and, on `[daemon] metrics`, in a listener of the daemon's
//! own ([`listen`]).
//!
//! Series stay bounded at any number of blogs: the age of each blog's last successful update
//! is counted into a few windows (`everblog_blogs_updated_within{window}`) plus the oldest age,
//! never one series per blog.

use crate::meters;
use crate::store::{ArchiveFigures, DatabaseSettings, Store};
use anyhow::{Context, Result};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use chrono::{DateTime, Utc};
use metrics::gauge;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The archive's figures are read again after this long (a scrape in between gets the last).
pub const FIGURES_EVERY: Duration = Duration::from_secs(10);

/// How long `/readyz` and a scrape wait for an unreachable PostgreSQL before answering.
const DATABASE_PATIENCE: Duration = Duration::from_secs(2);

/// The windows `everblog_blogs_updated_within` counts blogs in, with their labels.
const WINDOWS: &[(&str, i64)] = &[
    ("1h", 3600),
    ("1d", 86_400),
    ("7d", 7 * 86_400),
    ("30d", 30 * 86_400),
];

/// What the health routes share: where the archive is, the connection the figures are read
/// on (opened again after a failure), and when they were last read.
pub struct Health {
    db: DatabaseSettings,
    store: Mutex<Option<Store>>,
    read_at: Mutex<Option<Instant>>,
}

impl Health {
    /// The health of the archive at `db`. Installs the process's Prometheus recorder
    /// (`meters::install`) and, inside a Tokio runtime, a task draining its histograms every
    /// 5 s.
    ///
    /// # Errors
    /// Another Prometheus recorder is installed in this process.
    pub fn new(db: &DatabaseSettings) -> Result<Arc<Health>> {
        meters::install()?;
        describe();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async {
                loop {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    meters::upkeep();
                }
            });
        }
        Ok(Arc::new(Health {
            db: DatabaseSettings {
                reconnect_for: DATABASE_PATIENCE,
                ..db.clone()
            },
            store: Mutex::new(None),
            read_at: Mutex::new(None),
        }))
    }

    /// Reads the archive's figures into the gauges unless read within [`FIGURES_EVERY`];
    /// `everblog_database_up` says whether the last read worked. Blocking: call off the async
    /// threads.
    fn refresh(&self) {
        let mut read_at = self.read_at.lock().expect("lock");
        if read_at.is_some_and(|t| t.elapsed() < FIGURES_EVERY) {
            return;
        }
        let mut slot = self.store.lock().expect("lock");
        let now = Utc::now();
        let read = match slot.take() {
            Some(s) => Ok(s),
            None => Store::open_read_only(&self.db),
        }
        .and_then(|s| s.archive_figures(now).map(|f| (s, f)));
        match read {
            Ok((store, figures)) => {
                *slot = Some(store);
                set_gauges(&figures, now);
                gauge!(DATABASE_UP).set(1.0);
            }
            Err(e) => {
                tracing::warn!(error = %format!("{e:#}"), "metrics: the archive's figures cannot be read");
                gauge!(DATABASE_UP).set(0.0);
            }
        }
        *read_at = Some(Instant::now());
    }

    /// `Ok` when the database answers and its schema is current, else why not. Blocking.
    fn ready(&self) -> Result<()> {
        let store = Store::open_read_only(&self.db).context("the database does not answer")?;
        anyhow::ensure!(
            store
                .schema_is_current()
                .context("the database does not answer")?,
            "the database's schema is older than this everblog's: run a command that writes (archive daemon does) to upgrade it"
        );
        Ok(())
    }
}

const DATABASE_UP: &str = "everblog_database_up";
const BLOGS: &str = "everblog_blogs";
const POSTS: &str = "everblog_posts";
const COMMENTS: &str = "everblog_comments";
const JOBS_OPEN: &str = "everblog_jobs_open";
const REVISITS_DUE: &str = "everblog_revisits_due";
const DATABASE_BYTES: &str = "everblog_database_bytes";
const UPDATED_WITHIN: &str = "everblog_blogs_updated_within";
const NEVER_UPDATED: &str = "everblog_blogs_never_updated";
const OLDEST_UPDATE: &str = "everblog_oldest_update_age_seconds";
const ALERTS: &str = "everblog_alerts";
const JOBS_DUE: &str = "everblog_jobs_due";
const OLDEST_DUE: &str = "everblog_oldest_due_job_age_seconds";

fn describe() {
    use metrics::{describe_gauge, Unit};
    describe_gauge!(
        DATABASE_UP,
        "1 when the archive's figures were last read, 0 when the database did not answer"
    );
    describe_gauge!(BLOGS, "Blogs in the archive");
    describe_gauge!(POSTS, "Posts archived, gone ones included");
    describe_gauge!(COMMENTS, "Comments archived");
    describe_gauge!(
        JOBS_OPEN,
        "Jobs queued or running in the archive's queue, by kind and state"
    );
    describe_gauge!(REVISITS_DUE, "Archived posts whose planned revisit is due");
    describe_gauge!(DATABASE_BYTES, Unit::Bytes, "The database's size");
    describe_gauge!(
        UPDATED_WITHIN,
        "Blogs whose last successful crawl ended within the window"
    );
    describe_gauge!(NEVER_UPDATED, "Blogs never crawled to the end");
    describe_gauge!(
        OLDEST_UPDATE,
        Unit::Seconds,
        "Age of the oldest last successful crawl among blogs crawled at least once"
    );
    describe_gauge!(JOBS_DUE, "Queued jobs whose time has come");
    describe_gauge!(
        OLDEST_DUE,
        Unit::Seconds,
        "How long the longest-waiting due job has waited (0: none waits): no daemon takes jobs when it grows"
    );
    describe_gauge!(
        ALERTS,
        "Open alerts by kind (archive status lists them; [alerts] command is told of each)"
    );
}

fn set_gauges(f: &ArchiveFigures, now: DateTime<Utc>) {
    gauge!(BLOGS).set(f.blogs as f64);
    gauge!(POSTS).set(f.posts as f64);
    gauge!(COMMENTS).set(f.comments as f64);
    for (kind, state, n) in &f.open_jobs {
        gauge!(JOBS_OPEN, "kind" => kind.as_str(), "state" => state.as_str()).set(*n as f64);
    }
    gauge!(REVISITS_DUE).set(f.revisits_due as f64);
    gauge!(DATABASE_BYTES).set(f.database_bytes as f64);
    let ages: Vec<i64> = f
        .last_success
        .iter()
        .flatten()
        .map(|t| (now - *t).num_seconds().max(0))
        .collect();
    for (label, secs) in WINDOWS {
        let n = ages.iter().filter(|a| **a <= *secs).count();
        gauge!(UPDATED_WITHIN, "window" => *label).set(n as f64);
    }
    gauge!(NEVER_UPDATED).set((f.last_success.len() - ages.len()) as f64);
    gauge!(OLDEST_UPDATE).set(ages.iter().max().copied().unwrap_or(0) as f64);
    gauge!(JOBS_DUE).set(f.jobs_due as f64);
    let waited = f
        .oldest_due_job
        .map_or(0, |t| (now - t).num_seconds().max(0));
    gauge!(OLDEST_DUE).set(waited as f64);
    for (kind, n) in &f.open_alerts {
        gauge!(ALERTS, "kind" => kind.as_str()).set(*n as f64);
    }
}

/// `/metrics`, `/healthz` and `/readyz` over `health`, for any router's state.
pub fn routes<S: Clone + Send + Sync + 'static>(health: Arc<Health>) -> Router<S> {
    let (scraped, probed) = (Arc::clone(&health), health);
    Router::new()
        .route(
            "/metrics",
            get(move || metrics_answer(Arc::clone(&scraped))),
        )
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(move || ready_answer(Arc::clone(&probed))))
}

/// The paths [`routes`] answers without credentials: they tell only whether the process and
/// its database are up.
pub const OPEN_PATHS: &[&str] = &["/healthz", "/readyz"];

async fn metrics_answer(health: Arc<Health>) -> Response {
    let text = tokio::task::spawn_blocking(move || {
        health.refresh();
        meters::render()
    })
    .await
    .ok()
    .flatten();
    match text {
        Some(text) => (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        None => (StatusCode::INTERNAL_SERVER_ERROR, "no metrics recorder\n").into_response(),
    }
}

async fn ready_answer(health: Arc<Health>) -> Response {
    let ready = tokio::task::spawn_blocking(move || health.ready())
        .await
        .unwrap_or_else(|e| Err(anyhow::anyhow!("the readiness check failed: {e}")));
    match ready {
        Ok(()) => "ready\n".into_response(),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {e:#}\n"),
        )
            .into_response(),
    }
}

/// Serves [`routes`] on `bind` (the daemon's `[daemon] metrics`) until `shutdown` is set, each
/// request answered within 10 s. Returns the address bound (port 0 picks a free one) once
/// listening.
///
/// # Errors
/// The address cannot be bound, or the recorder cannot be installed.
pub async fn listen(
    bind: SocketAddr,
    db: &DatabaseSettings,
    shutdown: Arc<AtomicBool>,
) -> Result<SocketAddr> {
    let health = Health::new(db)?;
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .with_context(|| format!("cannot listen on {bind} ([daemon] metrics, --metrics)"))?;
    let bound = listener.local_addr()?;
    let app = routes(health).layer(tower_http::timeout::TimeoutLayer::with_status_code(
        StatusCode::SERVICE_UNAVAILABLE,
        Duration::from_secs(10),
    ));
    tokio::spawn(async move {
        let stopped = async move {
            while !shutdown.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        };
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(stopped)
            .await
        {
            tracing::error!("metrics listener stopped: {e}");
        }
    });
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blogs_are_counted_into_windows_not_series() {
        let now = Utc::now();
        let f = ArchiveFigures {
            blogs: 3,
            posts: 0,
            comments: 0,
            open_jobs: vec![],
            revisits_due: 0,
            last_success: vec![
                Some(now - chrono::Duration::minutes(5)),
                Some(now - chrono::Duration::days(3)),
                None,
            ],
            database_bytes: 0,
            open_alerts: vec![],
            jobs_due: 0,
            oldest_due_job: None,
        };
        let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        metrics::with_local_recorder(&recorder, || set_gauges(&f, now));
        let text = handle.render();
        for line in [
            "everblog_blogs_updated_within{window=\"1h\"} 1",
            "everblog_blogs_updated_within{window=\"1d\"} 1",
            "everblog_blogs_updated_within{window=\"7d\"} 2",
            "everblog_blogs_never_updated 1",
            "everblog_oldest_update_age_seconds 259200",
        ] {
            assert!(text.contains(line), "{line} not in:\n{text}");
        }
    }
}
