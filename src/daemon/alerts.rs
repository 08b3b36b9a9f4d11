//! The daemon's alert sweep (issue 44): every `[alerts] every` it gathers the archive's facts
//! (`Store::alert_facts`), judges them (`core::alerts::evaluate`), raises the alerts that
//! hold and clears those that no longer do (`Store::sync_alerts`: daemons sharing a database
//! raise each once), logs each new one and runs `[alerts] command` with it as JSON on stdin.

use crate::core::alerts::{Alert, Rules};
use crate::store::{DatabaseSettings, OpenAlert, Store};
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// When alerts hold and who is told: the `[alerts]` section of the configuration file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AlertSettings {
    /// How often each daemon judges the alerts (default 5 min).
    #[serde(with = "humantime_serde")]
    pub every: Duration,
    /// Failed jobs in a row that raise "failing" for a blog (default 3; 0: never).
    pub failing_after: u32,
    /// A blog is "silent" after this many times its usual interval between posts (the median
    /// of its latest 20; default 4)…
    pub silent_factor: f64,
    /// …and never sooner than this (default 7 days).
    #[serde(with = "humantime_serde")]
    pub silent_at_least: Duration,
    /// Share of `[database] max_size_mb` that raises "database-full" (default 0.9).
    pub full_share: f64,
    /// A due job waiting longer than this raises "queue-stalled" (default 1 h).
    #[serde(with = "humantime_serde")]
    pub stalled_after: Duration,
    /// A program and its arguments, run with each new alert as one JSON object on stdin
    /// (`kind`, `blog`, `message`, `raised_at`, `database`); empty (the default): none. Given
    /// at most 30 s.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
}

impl Default for AlertSettings {
    fn default() -> Self {
        AlertSettings {
            every: Duration::from_secs(300),
            failing_after: 3,
            silent_factor: 4.0,
            silent_at_least: Duration::from_secs(7 * 86_400),
            full_share: 0.9,
            stalled_after: Duration::from_secs(3600),
            command: Vec::new(),
        }
    }
}

impl AlertSettings {
    /// The rules `core::alerts::evaluate` judges by.
    pub fn rules(&self) -> Rules {
        Rules {
            failing_after: self.failing_after,
            silent_factor: self.silent_factor,
            silent_at_least: self.silent_at_least,
            full_share: self.full_share,
            stalled_after: self.stalled_after,
        }
    }
}

/// How long `[alerts] command` may run.
const COMMAND_TIME: Duration = Duration::from_secs(30);

/// Judges the alerts of the archive at `db` once, now, raising and clearing them; logs each
/// new one and tells `settings.command`. Returns the alerts raised. Blocking.
///
/// # Errors
/// The database failed.
pub fn sweep(
    db: &DatabaseSettings,
    settings: &AlertSettings,
    max_bytes: Option<u64>,
) -> Result<Vec<Alert>> {
    let mut store = Store::open(db)?;
    let now = Utc::now();
    let facts = store.alert_facts(now, max_bytes)?;
    let holding = crate::core::alerts::evaluate(&settings.rules(), &facts, now);
    let raised = store.sync_alerts(&holding, now)?;
    for a in &raised {
        tracing::warn!(kind = %a.kind, blog = a.blog.as_deref().unwrap_or("-"), "alert: {}", a.message);
        if let Err(e) = tell(&settings.command, a, now, db) {
            tracing::error!(kind = %a.kind, "[alerts] command failed: {e:#}");
        }
    }
    Ok(raised)
}

/// Runs `command` with `alert` as JSON on stdin; fails when it cannot start, exits non-zero,
/// or runs past [`COMMAND_TIME`] (then it is killed).
fn tell(command: &[String], alert: &Alert, at: DateTime<Utc>, db: &DatabaseSettings) -> Result<()> {
    let Some((program, args)) = command.split_first() else {
        return Ok(());
    };
    let mut json = serde_json::to_value(OpenAlert {
        alert: alert.clone(),
        raised_at: at,
    })?;
    json["database"] = db.shown().into();
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .with_context(|| format!("cannot run {program}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A command that reads nothing closes its end: not an error of ours.
        let _ = writeln!(stdin, "{json}");
    }
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            anyhow::ensure!(status.success(), "{program} exited with {status}");
            return Ok(());
        }
        if started.elapsed() > COMMAND_TIME {
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!("{program} ran past {COMMAND_TIME:?}; killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sweeps every `settings.every` (the first at once) on the blocking pool until `shutdown`.
pub(super) fn spawn(
    db: DatabaseSettings,
    settings: AlertSettings,
    max_bytes: Option<u64>,
    shutdown: Arc<AtomicBool>,
) {
    tokio::spawn(async move {
        let every = settings.every.max(Duration::from_secs(1));
        while !shutdown.load(Ordering::Relaxed) {
            let (db, settings) = (db.clone(), settings.clone());
            let swept = tokio::task::spawn_blocking(move || sweep(&db, &settings, max_bytes)).await;
            match swept {
                Ok(Err(e)) => tracing::warn!("alerts not judged: {e:#}"),
                Err(e) => tracing::error!("alert sweep panicked: {e}"),
                Ok(Ok(_)) => {}
            }
            super::lifecycle::sleep_unless(&shutdown, every).await;
        }
    });
}
