//! Continuous WARC output for institutions that ingest WARC files from a directory: with
//! `[archive] warc_dir`, the daemon appends each job's captures (responses with their requests,
//! identical-payload revisits, rendered DOMs: what `export::webarchive` writes per capture) to
//! a WARC 1.1 file of that directory as soon as the job ends. Files are named as Heritrix names
//! them, `EVERBLOG-<14-digit UTC time><3-digit ms>-<serial>-<pid>~<host>.warc.gz`, written
//! under a `.open` suffix and renamed when they pass `max_warc_mb` (default 1024): a file
//! without the suffix is complete and never changes again.
//!
//! Nothing half-written survives a crash: the store records the open file's length after its
//! last whole (synced) record and the last response written, in one transaction after the
//! sync; the next append first cuts the file back to that length, so a record interrupted by
//! `kill -9` is dropped and written again, never twice. Appenders sharing a directory take
//! turns (an exclusive `flock` on `.everblog-warc.lock`).

use super::webarchive::CaptureWriter;
use crate::store::Store;
use anyhow::{Context, Result};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// The `[archive]` section: continuous WARC files.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ArchiveSettings {
    /// Directory the daemon appends WARC files to after every job (default: none, no files).
    pub warc_dir: Option<PathBuf>,
    /// A file is closed (renamed without `.open`) once it reaches this many MB (default 1024;
    /// fractions allowed).
    pub max_warc_mb: f64,
}

impl Default for ArchiveSettings {
    fn default() -> Self {
        ArchiveSettings {
            warc_dir: None,
            max_warc_mb: 1024.0,
        }
    }
}

/// What one append wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Appended {
    /// Captures written.
    pub captures: u64,
    /// Bytes appended.
    pub bytes: u64,
    /// Files closed by this append (complete now), by name.
    pub closed: Vec<String>,
}

/// The suffix of the file being written.
const OPEN: &str = ".open";

/// A Heritrix-style file name: prefix, 17-digit UTC timestamp, 5-digit serial, pid and host.
fn file_name(serial: u64) -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    format!(
        "EVERBLOG-{}-{serial:05}-{}~{host}.warc.gz",
        chrono::Utc::now().format("%Y%m%d%H%M%S%3f"),
        std::process::id()
    )
}

/// Holds an exclusive lock on the directory's lock file while alive.
struct DirLock {
    _file: File,
}

impl DirLock {
    fn take(dir: &Path) -> Result<DirLock> {
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(".everblog-warc.lock"))?;
        // SAFETY: flock on a descriptor we own; released when the file is closed.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        Ok(DirLock { _file: f })
    }
}

/// Appends every capture stored since the last append to the open WARC file of
/// `settings.warc_dir` (starting one when none is open), closes it once it passes
/// `max_warc_mb`, and records the new position in `store`. `None` when no `warc_dir` is set.
///
/// # Errors
/// The directory cannot be created or written, its open file is shorter than the store says
/// (it was changed by someone else: move it away to go on), or the store failed.
pub fn append(store: &mut Store, settings: &ArchiveSettings) -> Result<Option<Appended>> {
    let Some(dir) = &settings.warc_dir else {
        return Ok(None);
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the WARC directory {}", dir.display()))?;
    let _lock = DirLock::take(dir)
        .with_context(|| format!("locking the WARC directory {}", dir.display()))?;
    let key = dir.to_string_lossy().into_owned();
    let mut roll = store.warc_roll(&key)?.unwrap_or_default();
    let mut out = Appended::default();
    let max = (settings.max_warc_mb.max(0.0) * 1024.0 * 1024.0) as u64;
    // A file the store no longer calls open was complete when that was recorded.
    close_strays(dir, roll.file.as_deref(), &mut out)?;
    let (name, file) = match roll.file.clone() {
        Some(name) => {
            let path = dir.join(format!("{name}{OPEN}"));
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .with_context(|| format!("opening {}", path.display()))?;
            let len = file.metadata()?.len();
            anyhow::ensure!(
                len >= roll.bytes,
                "{} is {len} bytes but {} were written to it: it was changed outside everblog; move it away to start a new file",
                path.display(),
                roll.bytes
            );
            // Drop what a crash left after the last whole record.
            file.set_len(roll.bytes)?;
            (name, file)
        }
        None => {
            roll.serial += 1;
            let name = file_name(roll.serial);
            let path = dir.join(format!("{name}{OPEN}"));
            let file = OpenOptions::new()
                .create_new(true)
                .write(true)
                .open(&path)
                .with_context(|| format!("creating {}", path.display()))?;
            roll.file = Some(name.clone());
            roll.bytes = 0;
            (name, file)
        }
    };
    let start = roll.bytes;
    let mut file = file;
    file.seek(SeekFrom::End(0))?;
    let mut last = roll.last_response;
    let mut captures = 0;
    let buffered = BufWriter::new(&mut file);
    let mut c = if start == 0 {
        // A new file starts with its warcinfo.
        CaptureWriter::start(buffered, &name, chrono::Utc::now(), false)?
    } else {
        CaptureWriter::continuing(buffered, &name, false)?
    };
    store.for_each_capture(None, roll.last_response, |id, r| {
        captures += 1;
        last = id;
        c.capture(id, r)
    })?;
    let (_, written_to) = c.finish()?;
    file.sync_all()?;
    roll.bytes = start + written_to;
    roll.last_response = last;
    out.captures = captures;
    out.bytes = written_to;
    let full = roll.bytes >= max;
    if full {
        roll.file = None;
    }
    store.set_warc_roll(&key, &roll)?;
    if full {
        close(dir, &name)?;
        out.closed.push(name);
    }
    Ok(Some(out))
}

/// Renames `.open` files other than `current` to their final names: the store closed them.
fn close_strays(dir: &Path, current: Option<&str>, out: &mut Appended) -> Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        let Some(base) = name.strip_suffix(OPEN) else {
            continue;
        };
        if Some(base) != current && base.starts_with("EVERBLOG-") {
            close(dir, base)?;
            out.closed.push(base.to_string());
        }
    }
    Ok(())
}

/// Renames `name.open` to `name`, synced.
fn close(dir: &Path, name: &str) -> Result<()> {
    std::fs::rename(dir.join(format!("{name}{OPEN}")), dir.join(name))?;
    File::open(dir)?.sync_all()?;
    tracing::info!(file = %dir.join(name).display(), "WARC file complete");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_heritrix() {
        let n = file_name(7);
        assert!(n.starts_with("EVERBLOG-") && n.ends_with(".warc.gz"), "{n}");
        let parts: Vec<&str> = n.trim_end_matches(".warc.gz").split('-').collect();
        assert_eq!(parts[1].len(), 17, "{n}");
        assert_eq!(parts[2], "00007");
        assert!(parts[3].contains('~'));
    }
}
