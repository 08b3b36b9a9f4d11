//! Chromium's profile directories (`everblog-chromium-*` in the temporary directory): one
//! per browser, removed when it closes; those a killed process left behind are swept at the
//! next launch.

use std::time::Duration;

/// Removes the profiles (`everblog-chromium-*` in `tmp`) that no running Chromium holds: those
/// whose `SingletonLock` names a process that is gone, and those without one untouched for
/// `idle` (a Chromium killed with its parent, or a removal that raced its helpers). Profiles
/// of other users are left alone (their removal fails and is ignored). Returns how many were
/// removed.
pub fn sweep(tmp: &std::path::Path, idle: Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        if !e
            .file_name()
            .to_string_lossy()
            .starts_with("everblog-chromium-")
        {
            continue;
        }
        let path = e.path();
        let stale = match std::fs::read_link(path.join("SingletonLock")) {
            // "HOST-PID": stale when no such process runs.
            Ok(target) => target
                .to_string_lossy()
                .rsplit_once('-')
                .and_then(|(_, pid)| pid.parse::<u32>().ok())
                .is_some_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists()),
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
