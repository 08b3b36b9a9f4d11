//! `archive export`: JSON Lines of the posts, the captures as WARC, CDXJ or WACZ, each blog
//! as Atom, JSON Feed or WXR documents in a directory of its own, the blog list as OPML, or a
//! static copy of the reader's pages (HTML) that opens from disk.

use super::archive::{find, open_to_read};
use crate::export::feeds::{blog_slug, Documents};
use crate::export::{atom, jsonfeed, opml, webarchive, wxr};
use crate::serve::site;
use crate::store::DatabaseSettings;
use crate::store::{Blog, Store};
use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Posts, one JSON object per line.
    Jsonl,
    /// Every capture as WARC 1.1 records (gzip member per record; `.warc.gz`).
    Warc,
    /// The CDXJ index (SURT-sorted, pywb's JSON block) of the WARC `--format warc` writes.
    Cdxj,
    /// WACZ 1.1.1: the WARC, its index, the posts as pages, datapackage.json (a zip).
    Wacz,
    /// Atom 1.0 per blog: `index.atom` (newest posts) and RFC 5005 `archive-N.atom` pages.
    Atom,
    /// JSON Feed 1.1 per blog: `feed.json`.
    Jsonfeed,
    /// WordPress eXtended RSS 1.2 per blog (posts, tags, threaded comments): `wordpress.xml`.
    Wxr,
    /// OPML 2.0 of the blog list (each blog's title, feed and home page), for feed readers and
    /// `archive add`: one document, to `--output FILE` or stdout.
    Opml,
    /// A static copy of the reader's pages that opens from disk: `index.html`, then per blog
    /// its posts ([serve] page_size a page), each post with its comments and versions, and
    /// the images they show.
    Html,
}

/// How the blog-native formats are written, from the command line.
#[derive(Debug, Clone, Default)]
pub(super) struct NativeOptions {
    /// Posts per Atom archive document.
    pub atom_page_size: u64,
    /// Where a WordPress restore downloads the archived images from (WXR).
    pub media: wxr::MediaSource,
}

/// `archive export`: into `output` (written beside it as `.partial` and renamed, so a crash
/// never leaves a truncated export) or stdout. A closed stdout pipe is not an error.
pub(super) fn export(
    db: &DatabaseSettings,
    blog: Option<&str>,
    format: Format,
    output: Option<PathBuf>,
    warc_name: Option<String>,
    native: &NativeOptions,
    page_size: u32,
) -> Result<()> {
    let store = open_to_read(db)?;
    let found = blog.map(|b| find(&store, b)).transpose()?;
    let id = found.as_ref().map(|b| b.id);
    let file_name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    // The blog `--blog` named, else every blog.
    let chosen = |found: Option<Blog>| -> Result<Vec<Blog>> {
        Ok(match found {
            Some(b) => vec![b],
            None => store.blogs()?,
        })
    };
    match format {
        Format::Atom | Format::Jsonfeed | Format::Wxr => {
            let blogs = chosen(found)?;
            blog_native(&store, &blogs, format, output, native)
        }
        Format::Html => {
            let Some(dir) = output else {
                bail!("--format html writes a directory of pages: pass --output DIR");
            };
            let blogs = chosen(found)?;
            static_site(&store, blogs, &dir, page_size)
        }
        Format::Opml => {
            let blogs = chosen(found)?;
            write_out(output, |out| {
                let n = opml::write_opml(&blogs, chrono::Utc::now(), out)?;
                Ok(format!("{n} blogs"))
            })
        }
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
            let about = webarchive::WaczAbout::of(&store, found.as_ref())?;
            let tmp = partial(&path);
            let f = std::fs::File::create(&tmp)
                .with_context(|| format!("creating {}", tmp.display()))?;
            let (f, w) = webarchive::write_wacz(&store, id, &about, std::io::BufWriter::new(f))?;
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

/// Runs `write` on a buffered file written beside `path` and renamed into place once synced.
pub(super) fn write_file<T>(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<T>,
) -> Result<T> {
    let tmp = partial(path);
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?,
    );
    let out = write(&mut f)?;
    f.into_inner()
        .map_err(|e| e.into_error())
        .and_then(|f| f.sync_all())
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(out)
}

/// Runs `write` on a buffered `output` file (then renamed into place) or on stdout, and says
/// on stderr what was written to a file.
fn write_out(
    output: Option<PathBuf>,
    write: impl FnOnce(&mut dyn Write) -> Result<String>,
) -> Result<()> {
    match output {
        Some(path) => {
            let what = write_file(&path, write)?;
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

/// `--format atom|jsonfeed|wxr`: each blog's documents in `DIR/<blog slug>/` (slugs made
/// unique with the blog's id), or one blog's single document on stdout. Refuses, before
/// writing anything, stdout for several blogs or for an Atom feed that needs archive
/// documents. Each blog is read in one snapshot; stale `archive-N.atom` files (a smaller page
/// size, fewer posts) are removed.
fn blog_native(
    store: &Store,
    blogs: &[Blog],
    format: Format,
    output: Option<PathBuf>,
    native: &NativeOptions,
) -> Result<()> {
    let name = match format {
        Format::Atom => "atom",
        Format::Jsonfeed => "jsonfeed",
        _ => "wxr",
    };
    let Some(dir) = output else {
        let [blog] = blogs else {
            bail!(
                "--format {name} writes each blog's documents apart and the archive holds {} blogs: pass --output DIR (or --blog URL for one on stdout)",
                blogs.len()
            );
        };
        return write_out(None, |out| {
            let mut docs = Stdout { out, used: false };
            store.snapshot(|s| write_blog(s, blog, format, native, &mut docs, true))?;
            Ok(String::new())
        });
    };
    for (blog, slug) in blog_dirs(blogs.to_vec()) {
        let blog = &blog;
        let blog_dir = dir.join(&slug);
        std::fs::create_dir_all(&blog_dir)
            .with_context(|| format!("creating {}", blog_dir.display()))?;
        let mut docs = Directory(blog_dir.clone());
        let (what, archives) =
            store.snapshot(|s| write_blog(s, blog, format, native, &mut docs, false))?;
        if let Some(archives) = archives {
            remove_stale_archives(&blog_dir, archives)?;
        }
        eprintln!(
            "exported {what} of {} to {}",
            blog.home_url,
            blog_dir.display()
        );
    }
    Ok(())
}

/// Each blog with its directory's name: its [`blog_slug`], with the blog's id appended when an
/// earlier blog has the same slug.
fn blog_dirs(blogs: Vec<Blog>) -> Vec<(Blog, String)> {
    let mut taken = HashSet::new();
    blogs
        .into_iter()
        .map(|blog| {
            let mut slug = blog_slug(&blog.home_url);
            if !taken.insert(slug.clone()) {
                slug = format!("{slug}-{}", blog.id);
                taken.insert(slug.clone());
            }
            (blog, slug)
        })
        .collect()
}

/// `--format html`: the static copy in `dir` (`serve::site`), each blog read in one snapshot,
/// then the index of the blogs.
fn static_site(store: &Store, blogs: Vec<Blog>, dir: &Path, page_size: u32) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let blogs = blog_dirs(blogs);
    let mut docs = Directory(dir.to_path_buf());
    for (blog, slug) in &blogs {
        let w = store.snapshot(|s| site::write_blog(s, blog, slug, page_size, &mut docs))?;
        eprintln!(
            "exported {} posts, {} comments, {} images ({:.1} MB) of {} to {}",
            w.posts,
            w.comments,
            w.images,
            w.image_bytes as f64 / 1e6,
            blog.home_url,
            dir.join(slug).display()
        );
    }
    site::write_index(store, &blogs, &mut docs)?;
    eprintln!("open {} in a browser", dir.join("index.html").display());
    Ok(())
}

/// One blog's documents; says what was written ("36 posts, 4 archive documents") and, for
/// Atom, how many archive documents there are.
fn write_blog(
    store: &Store,
    blog: &Blog,
    format: Format,
    native: &NativeOptions,
    docs: &mut dyn Documents,
    stdout: bool,
) -> Result<(String, Option<u64>)> {
    match format {
        Format::Atom => {
            let layout = atom::Layout::new(store.post_count(blog.id)?, native.atom_page_size);
            if stdout && layout.documents() > 1 {
                bail!(
                    "{} has {} posts, more than one Atom document holds ({}): pass --output DIR to write its archive documents",
                    blog.home_url,
                    layout.posts,
                    layout.page_size
                );
            }
            let n = atom::write_atom(store, blog, layout, docs)?;
            Ok((
                format!("{n} posts, {} archive documents", layout.archives),
                Some(layout.archives),
            ))
        }
        Format::Jsonfeed => {
            let mut n = 0;
            docs.document(jsonfeed::FILE, &mut |out| {
                n = jsonfeed::write_jsonfeed(store, blog, out)?;
                Ok(())
            })?;
            Ok((format!("{n} posts"), None))
        }
        _ => {
            let mut n = (0, 0);
            docs.document(wxr::FILE, &mut |out| {
                n = wxr::write_wxr(store, blog, &native.media, out)?;
                Ok(())
            })?;
            Ok((format!("{} posts, {} comments", n.0, n.1), None))
        }
    }
}

/// `archive-N.atom` files in `dir` past the `archives` just written.
fn remove_stale_archives(dir: &Path, archives: u64) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        let n = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("archive-")?.strip_suffix(".atom"))
            .and_then(|n| n.parse::<u64>().ok());
        if n.is_some_and(|n| n > archives) {
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}

/// A directory: each document (a name, or a path below it) written beside its name and
/// renamed once synced.
struct Directory(PathBuf);

/// Stdout: one document.
struct Stdout<'a> {
    out: &'a mut dyn Write,
    used: bool,
}

impl Documents for Directory {
    fn document(
        &mut self,
        name: &str,
        write: &mut dyn FnMut(&mut dyn Write) -> Result<()>,
    ) -> Result<()> {
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        write_file(&path, write)
    }
}

impl Documents for Stdout<'_> {
    fn document(
        &mut self,
        name: &str,
        write: &mut dyn FnMut(&mut dyn Write) -> Result<()>,
    ) -> Result<()> {
        if std::mem::replace(&mut self.used, true) {
            bail!("{name} is a second document and stdout takes one: pass --output DIR");
        }
        write(self.out)
    }
}
