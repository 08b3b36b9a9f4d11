//! Chromium's profile directories (`everblog-chromium-*` in the temporary directory, Chromium's
//! own temporary files inside): one per browser ([`create`]), removed when it closes
//! ([`remove`]); those a killed process left behind are swept at the next launch ([`sweep`]).

use anyhow::{Context, Result};
use std::path::Path;
use std::time::Duration;

/// The start of every profile directory's name.
const PREFIX: &str = "everblog-chromium-";

/// A new profile directory for one browser, after sweeping those no running Chromium holds
/// ([`sweep`], idle for an hour): the directory, and inside it the directory for Chromium's
/// own temporary files (its `TMPDIR`, so that they go with the profile).
///
/// # Errors
/// A directory cannot be created in the temporary directory.
pub fn create() -> Result<(tempfile::TempDir, std::path::PathBuf)> {
    let swept = sweep(&std::env::temp_dir(), Duration::from_secs(3600));
    if swept > 0 {
        tracing::info!(swept, "removed Chromium profiles no browser holds");
    }
    let dir = tempfile::Builder::new()
        .prefix(PREFIX)
        .tempdir()
        .context("creating Chromium's profile directory")?;
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).context("creating Chromium's temporary directory")?;
    Ok((dir, tmp))
}

/// Removes a closed browser's profile. Its helpers, still dying, may write into it while it is
/// removed: tried again for half a second, then left to the next launch's [`sweep`].
pub fn remove(dir: &Path) {
    for _ in 0..20 {
        match std::fs::remove_dir_all(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                std::thread::sleep(Duration::from_millis(25));
            }
            _ => break,
        }
    }
}

/// Removes the profiles (`everblog-chromium-*` in `tmp`) that no running Chromium holds: those
/// whose `SingletonLock` names a process that is gone, and those without one untouched for
/// `idle` (a Chromium killed with its parent, or a removal that raced its helpers). Profiles
/// of other users are left alone (their removal fails and is ignored). Returns how many were
/// removed.
pub fn sweep(tmp: &Path, idle: Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        let path = e.path();
        let stale = match std::fs::read_link(path.join("SingletonLock")) {
            // "HOST-PID": stale when no such process runs.
            Ok(target) => target
                .to_string_lossy()
                .rsplit_once('-')
                .and_then(|(_, pid)| pid.parse::<u32>().ok())
                .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()),
            Err(_) => e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age >= idle),
        };
        if stale && std::fs::remove_dir_all(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn profiles_no_browser_holds_are_swept() {
        let tmp = tempfile::tempdir().unwrap();
        let make = |name: &str, lock: Option<String>| {
            let d = tmp.path().join(name);
            std::fs::create_dir_all(d.join("Default")).unwrap();
            if let Some(l) = lock {
                symlink(l, d.join("SingletonLock")).unwrap();
            }
            d
        };
        let gone = make("everblog-chromium-gone", Some("host-4194303999".into()));
        let live = make(
            "everblog-chromium-live",
            Some(format!("host-{}", std::process::id())),
        );
        let fresh = make("everblog-chromium-fresh", None);
        let other = make("someone-else", Some("host-4194303999".into()));
        assert_eq!(sweep(tmp.path(), Duration::from_secs(3600)), 1);
        assert!(!gone.exists() && live.exists() && fresh.exists() && other.exists());
        // Without a lock, only once idle long enough.
        assert_eq!(sweep(tmp.path(), Duration::ZERO), 1);
        assert!(!fresh.exists() && live.exists());
    }
}
