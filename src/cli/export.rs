//! `archive export`: JSON Lines of the posts, or the captures as WARC, CDXJ or WACZ.

use super::{find, open_to_read, Format};
use crate::export::webarchive;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `archive export`: into `output` (written beside it as `.partial` and renamed, so a crash
/// never leaves a truncated export) or stdout. A closed stdout pipe is not an error.
pub(super) fn export(
    db: &Path,
    blog: Option<&str>,
    format: Format,
    output: Option<PathBuf>,
    warc_name: Option<String>,
) -> Result<()> {
    let store = open_to_read(db)?;
    let found = blog.map(|b| find(&store, b)).transpose()?;
    let id = found.as_ref().map(|b| b.id);
    let file_name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    match format {
        Format::Jsonl => write_out(output, |out| {
            let n = store.for_each_post(id, |p| Ok(crate::export::write_jsonl(&p, out)?))?;
            Ok(format!("{n} posts"))
        }),
        Format::Warc => {
            let name = warc_name
                .or_else(|| output.as_deref().and_then(file_name))
                .unwrap_or_else(|| "everblog.warc.gz".into());
            write_out(output, |out| {
                let (_, w) = webarchive::write_warc(&store, id, &name, out)?;
                Ok(describe(&w))
            })
        }
        Format::Cdxj => {
            let name = warc_name.unwrap_or_else(|| "everblog.warc.gz".into());
            write_out(output, |out| {
                let (_, w) = webarchive::write_warc(&store, id, &name, std::io::sink())?;
                for line in &w.index {
                    out.write_all(line.as_bytes())?;
                    out.write_all(b"\n")?;
                }
                Ok(format!("{} index lines of {name}", w.index.len()))
            })
        }
        Format::Wacz => {
            let Some(path) = output else {
                bail!(
                    "--format wacz needs --output FILE.wacz (a zip cannot be streamed to stdout)"
                );
            };
            let title = found
                .as_ref()
                .map(|b| b.home_url.clone())
                .unwrap_or_else(|| "everblog archive".into());
            let tmp = partial(&path);
            let f = std::fs::File::create(&tmp)
                .with_context(|| format!("creating {}", tmp.display()))?;
            let (f, w) = webarchive::write_wacz(&store, id, &title, std::io::BufWriter::new(f))?;
            f.into_inner()
                .map_err(|e| e.into_error())
                .and_then(|f| f.sync_all())
                .with_context(|| format!("writing {}", tmp.display()))?;
            std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
            eprintln!(
                "exported {}, {} pages, to {}",
                describe(&w.warc),
                w.pages,
                path.display()
            );
            Ok(())
        }
    }
}

/// "12 responses, 3 revisits, 2 rendered pages, 10 posts (1.2 MB of WARC)".
fn describe(w: &webarchive::Written) -> String {
    format!(
        "{} responses, {} revisits, {} rendered pages, {} posts ({:.1} MB of WARC)",
        w.responses,
        w.revisits,
        w.resources,
        w.posts,
        w.bytes as f64 / 1e6
    )
}

fn partial(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

/// Runs `write` on a buffered `output` file (then renamed into place) or on stdout, and says
/// on stderr what was written to a file.
fn write_out(
    output: Option<PathBuf>,
    write: impl FnOnce(&mut dyn Write) -> Result<String>,
) -> Result<()> {
    match output {
        Some(path) => {
            let tmp = partial(&path);
            let mut f = std::io::BufWriter::new(
                std::fs::File::create(&tmp)
                    .with_context(|| format!("creating {}", tmp.display()))?,
            );
            let what = write(&mut f)?;
            f.into_inner()
                .map_err(|e| e.into_error())
                .and_then(|f| f.sync_all())
                .with_context(|| format!("writing {}", tmp.display()))?;
            std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("exported {what} to {}", path.display());
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            let result = write(&mut out).and_then(|_| Ok(out.flush()?));
            if let Err(e) = result {
                let broken_pipe = e
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe);
                if !broken_pipe {
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}
