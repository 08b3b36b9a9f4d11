//! The process's meters (issue 44): counters and histograms of what this process did — requests
//! by status class, bytes, fetch and politeness-wait seconds, renders, jobs taken, taken again
//! and finished, lease renewals, bytes stored — recorded through the `metrics` facade where the
//! work happens, and rendered in Prometheus's text format by `metrics-exporter-prometheus`
//! ([`install`], [`render`]). The archive's own figures (posts, jobs queued, database size) are
//! gauges read from the store at scrape time (`health`).
//!
//! Until [`install`] runs (only `archive daemon` with `[daemon] metrics` and `archive serve` call
//! it) every recording is a no-op. Labels are closed sets (status class, job kind, outcome): no
//! label names a blog, a host or a URL, so the series stay bounded at any number of blogs.
//!
//! A leaf: imports nothing of the crate, so the fetcher, the renderer, the store and the daemon
//! all record here.

use metrics::{counter, gauge, histogram, Unit};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::Duration;

/// Upper bounds (seconds) of the histograms' buckets: from a loopback answer to a slow page.
const SECONDS_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the process's Prometheus recorder (once; later calls return the same handle) and
/// describes every metric, so that `/metrics` lists each with its help text from the start.
/// Spawns nothing: [`render`] drains the histograms, and the daemon's listener runs
/// [`upkeep`].
///
/// # Errors
/// Another recorder was installed in this process first (not done by everblog).
pub fn install() -> anyhow::Result<PrometheusHandle> {
    static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(h) = HANDLE.get() {
        return Ok(h.clone());
    }
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS_BUCKETS)?
        .install_recorder()?;
    describe();
    Ok(HANDLE.get_or_init(|| handle).clone())
}

/// The process's metrics in Prometheus's text format (version 0.0.4), or `None` before
/// [`install`].
pub fn render() -> Option<String> {
    HANDLE.get().map(PrometheusHandle::render)
}

/// Drains recorded histogram samples into their buckets; run every few seconds so that a
/// process nobody scrapes holds no growing buffers.
pub fn upkeep() {
    if let Some(h) = HANDLE.get() {
        h.run_upkeep();
    }
}

fn describe() {
    use metrics::{describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        FETCHES,
        "HTTP requests this process sent, by status class of the answer (error: no answer)"
    );
    describe_counter!(FETCHED_BYTES, Unit::Bytes, "Body bytes received");
    describe_histogram!(
        FETCH_SECONDS,
        Unit::Seconds,
        "Time from sending a request to its whole body, politeness waits excluded"
    );
    describe_histogram!(
        POLITENESS_SECONDS,
        Unit::Seconds,
        "Time a request waited for its host's slot (delay, Crawl-delay, Retry-After)"
    );
    describe_counter!(RENDERS, "Pages rendered in headless Chromium, by outcome");
    describe_histogram!(
        RENDER_SECONDS,
        Unit::Seconds,
        "Time to render one page in headless Chromium"
    );
    describe_counter!(JOBS_TAKEN, "Jobs this process leased, by kind");
    describe_counter!(
        JOBS_TAKEN_AGAIN,
        "Jobs this process leased from a worker whose lease had expired, by kind"
    );
    describe_counter!(
        JOBS_FINISHED,
        "Jobs this process ended, by kind and outcome"
    );
    describe_counter!(LEASE_RENEWALS, "Lease renewals of running jobs, by result");
    describe_counter!(
        STORED_BYTES,
        Unit::Bytes,
        "Response body bytes this process added to the archive (deflated; a body already held is not added again)"
    );
    describe_gauge!(BUILD_INFO, "Always 1; the version in a label");
    gauge!(BUILD_INFO, "version" => env!("CARGO_PKG_VERSION")).set(1.0);
}

const FETCHES: &str = "everblog_fetches_total";
const FETCHED_BYTES: &str = "everblog_fetched_bytes_total";
const FETCH_SECONDS: &str = "everblog_fetch_duration_seconds";
const POLITENESS_SECONDS: &str = "everblog_politeness_wait_seconds";
const RENDERS: &str = "everblog_renders_total";
const RENDER_SECONDS: &str = "everblog_render_duration_seconds";
const JOBS_TAKEN: &str = "everblog_jobs_taken_total";
const JOBS_TAKEN_AGAIN: &str = "everblog_jobs_taken_again_total";
const JOBS_FINISHED: &str = "everblog_jobs_finished_total";
const LEASE_RENEWALS: &str = "everblog_lease_renewals_total";
const STORED_BYTES: &str = "everblog_stored_bytes_total";
const BUILD_INFO: &str = "everblog_build_info";

/// The class of an HTTP answer: `1xx` … `5xx`, or `error` when none came (refused, timed out,
/// reset).
fn status_class(status: Option<u16>) -> &'static str {
    match status {
        Some(100..=199) => "1xx",
        Some(200..=299) => "2xx",
        Some(300..=399) => "3xx",
        Some(400..=499) => "4xx",
        Some(500..=599) => "5xx",
        _ => "error",
    }
}

/// One request sent: its answer's status (`None`: no answer), body bytes received, and the time
/// from sending it to its whole body.
pub fn fetched(status: Option<u16>, bytes: u64, took: Duration) {
    counter!(FETCHES, "class" => status_class(status)).increment(1);
    counter!(FETCHED_BYTES).increment(bytes);
    histogram!(FETCH_SECONDS).record(took.as_secs_f64());
}

/// A request waited `waited` for its host's slot (politeness).
pub fn politeness_wait(waited: Duration) {
    histogram!(POLITENESS_SECONDS).record(waited.as_secs_f64());
}

/// One page rendered (`ok`: a DOM came back) in `took`.
pub fn rendered(ok: bool, took: Duration) {
    let outcome = if ok { "ok" } else { "failed" };
    counter!(RENDERS, "outcome" => outcome).increment(1);
    histogram!(RENDER_SECONDS).record(took.as_secs_f64());
}

/// How a job ended in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobOutcome {
    /// Finished; the blog's next job is queued.
    Done,
    /// Given back to the queue (a stop signal, or pages to retry later).
    Stopped,
    /// Failed; retried after a back-off.
    Failed,
}

impl JobOutcome {
    fn as_str(self) -> &'static str {
        match self {
            JobOutcome::Done => "done",
            JobOutcome::Stopped => "stopped",
            JobOutcome::Failed => "failed",
        }
    }
}

/// A job of `kind` (the store's name: `new-crawl`, `update-crawl`) leased; `again` when its
/// previous worker's lease had expired (that worker died or hung).
pub fn job_taken(kind: &'static str, again: bool) {
    counter!(JOBS_TAKEN, "kind" => kind).increment(1);
    if again {
        counter!(JOBS_TAKEN_AGAIN, "kind" => kind).increment(1);
    }
}

/// A job of `kind` ended as `outcome`.
pub fn job_finished(kind: &'static str, outcome: JobOutcome) {
    counter!(JOBS_FINISHED, "kind" => kind, "outcome" => outcome.as_str()).increment(1);
}

/// A running job's lease renewed (`kept`), or found taken by another worker.
pub fn lease_renewed(kept: bool) {
    let result = if kept { "renewed" } else { "lost" };
    counter!(LEASE_RENEWALS, "result" => result).increment(1);
}

/// `bytes` of a new response body added to the archive (deflated, stored once by digest).
pub fn stored(bytes: u64) {
    counter!(STORED_BYTES).increment(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_classes_cover_answers_and_failures() {
        let classes: Vec<_> = [Some(101), Some(200), Some(304), Some(404), Some(503), None]
            .into_iter()
            .map(status_class)
            .collect();
        assert_eq!(classes, ["1xx", "2xx", "3xx", "4xx", "5xx", "error"]);
        assert_eq!(status_class(Some(999)), "error");
    }
}
