//! Downloads (issue 45 item 8): what `archive export` writes, from the reader. Each blog's
//! documents under `/blog/{id}/`: its Atom feed (`index.atom`, the newest posts, which a feed
//! reader subscribes to, and the RFC 5005 `archive-N.atom` documents it links), `feed.json`
//! (JSON Feed), `wordpress.xml` (WXR, whose images the importer downloads from this reader)
//! and `archive.wacz` (the blog's captures). The blog list as OPML at `/blogs.opml`. Each is
//! written by the same `export` writer as on the command line, inside one read snapshot.

use super::failure::Failure;
use super::reader::Reader;
use super::routes::WACZ_DOWNLOAD as WACZ;
use crate::export::feeds::Documents;
use crate::export::{atom, jsonfeed, opml, webarchive, wxr};
use crate::store::{Blog, BlogId, Store};
use anyhow::Context;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Arc;

/// One of a blog's documents, by the name it is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Download {
    /// `index.atom`: the Atom subscription document (the newest posts).
    AtomCurrent,
    /// `archive-N.atom`: Atom archive document N (1 = the oldest posts).
    AtomArchive(u64),
    /// `feed.json`: JSON Feed 1.1.
    JsonFeed,
    /// `wordpress.xml`: WXR 1.2.
    Wxr,
    /// `archive.wacz`: the blog's captures as WACZ 1.1.1.
    Wacz,
}

impl Download {
    /// The document named `name`, as the links on a blog's page write it; `None` for any other.
    pub fn parse(name: &str) -> Option<Download> {
        if name == atom::CURRENT {
            return Some(Download::AtomCurrent);
        }
        if name == jsonfeed::FILE {
            return Some(Download::JsonFeed);
        }
        if name == wxr::FILE {
            return Some(Download::Wxr);
        }
        if name == WACZ {
            return Some(Download::Wacz);
        }
        let n = name.strip_prefix("archive-")?.strip_suffix(".atom")?;
        let n: u64 = n.parse().ok().filter(|&n| n >= 1)?;
        (atom::archive_name(n) == name).then_some(Download::AtomArchive(n))
    }

    /// Its media type: feeds are shown or subscribed to, the others saved.
    fn content_type(self) -> &'static str {
        match self {
            Download::AtomCurrent | Download::AtomArchive(_) => "application/atom+xml",
            Download::JsonFeed => "application/feed+json",
            Download::Wxr => "application/rss+xml; charset=utf-8",
            Download::Wacz => "application/wacz+zip",
        }
    }
}

/// Keeps the one document asked for and skips the others (a blog's Atom documents are
/// written in one pass).
struct One {
    name: String,
    bytes: Option<Vec<u8>>,
}

impl Documents for One {
    fn document(
        &mut self,
        name: &str,
        write: &mut dyn FnMut(&mut dyn Write) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        if name == self.name {
            let mut bytes = Vec::new();
            write(&mut bytes)?;
            self.bytes = Some(bytes);
        }
        Ok(())
    }
}

/// `/blog/{id}/{name}`: one of the blog's documents ([`Download`]). Atom and JSON Feed are
/// shown inline (a feed reader subscribes to `index.atom`); WXR and WACZ are saved as
/// `<blog slug>.xml` and `<blog slug>.wacz`. The WXR's images lead to this reader's raw
/// captures, at the host the request named. 404 for another name, or an archive document
/// past the blog's last.
pub async fn document(
    State(reader): State<Arc<Reader>>,
    Path((id, name)): Path<(i64, String)>,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    let id = BlogId::new(id);
    let Some(which) = Download::parse(&name) else {
        return Err(Failure::NotFound(format!(
            "A blog offers {}, {}, {} and {}; not {name}.",
            atom::CURRENT,
            jsonfeed::FILE,
            wxr::FILE,
            WACZ
        )));
    };
    let media = own_address(&headers).map_or(wxr::MediaSource::Live, wxr::MediaSource::Archive);
    let (blog, body) = reader
        .read(move |s| {
            let blog = super::views::blog(s, id)?;
            let body = s
                .snapshot(|s| write(s, &blog, which, &media))
                .map_err(Failure::Internal)?;
            Ok((blog, body))
        })
        .await?;
    let Some(body) = body else {
        return Err(Failure::NotFound(format!(
            "{} has no Atom document {name}: its archive documents are listed in {}.",
            blog.home_url,
            atom::CURRENT
        )));
    };
    let slug = crate::export::feeds::blog_slug(&blog.home_url);
    let saved = match which {
        Download::Wxr => Some(format!("{slug}.xml")),
        Download::Wacz => Some(format!("{slug}.wacz")),
        _ => None,
    };
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(which.content_type()),
    );
    if let Some(file) = saved.and_then(|f| attachment(&f)) {
        h.insert(header::CONTENT_DISPOSITION, file);
    }
    Ok(r)
}

/// `/blogs.opml`: every blog as OPML 2.0, saved as `blogs.opml`.
pub async fn blogs_opml(State(reader): State<Arc<Reader>>) -> Result<Response, Failure> {
    let bytes = reader
        .read(|s| {
            let mut bytes = Vec::new();
            opml::write_opml(&s.blogs()?, chrono::Utc::now(), &mut bytes)?;
            Ok(bytes)
        })
        .await?;
    let mut r = Response::new(Body::from(bytes));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/x-opml; charset=utf-8"),
    );
    if let Some(file) = attachment(opml::FILE) {
        h.insert(header::CONTENT_DISPOSITION, file);
    }
    Ok(r.into_response())
}

/// The body of `which` for `blog`, `None` for an Atom archive document it does not have. A
/// WACZ is built in an unnamed temporary file (a zip needs to seek back) and streamed from it.
fn write(
    store: &Store,
    blog: &Blog,
    which: Download,
    media: &wxr::MediaSource,
) -> anyhow::Result<Option<Body>> {
    let bytes = match which {
        Download::AtomCurrent | Download::AtomArchive(_) => {
            let layout = atom::Layout::new(store.post_count(blog.id)?, atom::DEFAULT_PAGE_SIZE);
            let name = match which {
                Download::AtomArchive(n) if n > layout.archives => return Ok(None),
                Download::AtomArchive(n) => atom::archive_name(n),
                _ => atom::CURRENT.to_string(),
            };
            let mut one = One { name, bytes: None };
            atom::write_atom(store, blog, layout, &mut one)?;
            one.bytes
                .context("the Atom writer wrote no such document")?
        }
        Download::JsonFeed => {
            let mut bytes = Vec::new();
            jsonfeed::write_jsonfeed(store, blog, &mut bytes)?;
            bytes
        }
        Download::Wxr => {
            let mut bytes = Vec::new();
            wxr::write_wxr(store, blog, media, &mut bytes)?;
            bytes
        }
        Download::Wacz => {
            let about = webarchive::WaczAbout::of(store, Some(blog))?;
            let file = tempfile::tempfile().context("creating a temporary file for the WACZ")?;
            let (file, _) = webarchive::write_wacz(
                store,
                Some(blog.id),
                &about,
                std::io::BufWriter::new(file),
            )?;
            let mut file = file.into_inner().map_err(|e| e.into_error())?;
            file.seek(SeekFrom::Start(0))?;
            return Ok(Some(Body::from_stream(chunks(file))));
        }
    };
    Ok(Some(Body::from(bytes)))
}

/// `file` from where it stands to its end, read off the async threads in 64 KiB chunks.
fn chunks(
    file: std::fs::File,
) -> impl futures::Stream<Item = std::io::Result<bytes::Bytes>> + Send + 'static {
    futures::stream::try_unfold(file, |mut file| async move {
        tokio::task::spawn_blocking(move || {
            let mut buf = vec![0; 64 * 1024];
            let n = file.read(&mut buf)?;
            buf.truncate(n);
            Ok((n > 0).then(|| (bytes::Bytes::from(buf), file)))
        })
        .await
        .map_err(std::io::Error::other)?
    })
}

/// The reader's own address as the request named it (`http://HOST/`), where a WXR's images
/// are downloaded from; `None` without a usable `Host`.
fn own_address(headers: &HeaderMap) -> Option<url::Url> {
    let host = headers.get(header::HOST)?.to_str().ok()?;
    url::Url::parse(&format!("http://{host}/"))
        .ok()
        .filter(|u| u.host_str().is_some() && u.path() == "/")
}

/// `attachment; filename="…"` for a file name made of the slug's characters.
fn attachment(file: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(&format!("attachment; filename=\"{file}\"")).ok()
}
