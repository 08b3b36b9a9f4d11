//! The archive as a standard web archive: every stored capture as WARC 1.1 records (with the
//! CDXJ index of the file), or both packaged as WACZ 1.1.1 with a page list of the posts, so
//! pywb, ReplayWeb.page and institutional repositories can read what everblog kept.
//!
//! Records, for each stored response, oldest first:
//! - a `response` (the HTTP status line and headers as received, the body as stored) and its
//!   `request` (`WARC-Concurrent-To`), or a `revisit` (profile identical-payload-digest) when
//!   the body is the same as the URL's previous capture;
//! - a DOM rendered by Chromium: a `resource` of `urn:everblog:rendered:<url>` (`text/html`);
//!
//! then a `revisit` (profile server-not-modified) for every 304 the fetch log holds, and a
//! `metadata` record of `urn:everblog:post:<url>` for every post: everblog's record of it, as
//! exported in JSON Lines, `WARC-Refers-To` the response it was extracted from.
//!
//! Record ids are derived from the store's ids, so exporting the same archive twice gives the
//! same file, and `--format cdxj` indexes exactly the WARC that `--format warc` writes.

use super::cdxj;
use super::warc::{self, Record, RecordType, WarcWriter};
use crate::fetch::{Response, USER_AGENT};
use crate::store::{Blog, BlogId, NotModified, ResponseId, Store};
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{Seek, Write};

/// Everblog's own URI of the rendered DOM of `url`.
pub fn rendered_uri(url: &str) -> String {
    format!("urn:everblog:rendered:{url}")
}

/// Everblog's own URI of the extracted post at `url`.
pub fn post_uri(url: &str) -> String {
    format!("urn:everblog:post:{url}")
}

/// What an export wrote.
#[derive(Debug, Default, Clone)]
pub struct Written {
    /// `response` records.
    pub responses: u64,
    /// `revisit` records (identical payloads and 304s).
    pub revisits: u64,
    /// `resource` records (rendered DOMs).
    pub resources: u64,
    /// `metadata` records (posts).
    pub posts: u64,
    /// Bytes of WARC written.
    pub bytes: u64,
    /// The CDXJ lines of every record but `warcinfo` and `request` (as cdxj-indexer
    /// indexes), sorted.
    pub index: Vec<String>,
}

/// The CDXJ fields of a record, kept until the writer has placed it in the file.
struct Pending {
    url: String,
    date: DateTime<Utc>,
    mime: Option<String>,
    status: Option<u16>,
    digest: String,
}

impl Pending {
    fn new(
        url: &str,
        date: DateTime<Utc>,
        mime: Option<&str>,
        status: Option<u16>,
        digest: &str,
    ) -> Option<Pending> {
        Some(Pending {
            url: url.to_string(),
            date,
            mime: mime.map(str::to_string),
            status,
            digest: digest.to_string(),
        })
    }
}

/// What the export remembers of a response written: enough to write a revisit of it.
struct Seen {
    id: String,
    date: DateTime<Utc>,
    digest: String,
    url: String,
}

/// Writes the captures of `blog` (all blogs when `None`) as a WARC to `out`, each record its
/// own gzip member, and returns what was written with the CDXJ index naming the WARC
/// `filename`. Memory holds one capture at a time plus ~200 bytes of index per record.
///
/// # Errors
/// The database failed or writing to `out` failed.
pub fn write_warc<W: Write>(
    store: &Store,
    blog: Option<BlogId>,
    filename: &str,
    out: W,
) -> Result<(W, Written)> {
    let span = store.capture_span(blog)?;
    let info_date = span.map(|s| s.newest).unwrap_or_default();
    let mut c = CaptureWriter::start(out, filename, info_date, true)?;
    store.for_each_capture(blog, ResponseId::default(), |id, r| c.capture(id, r))?;
    let CaptureWriter {
        mut w,
        info_id,
        mut written,
        seen,
        ..
    } = c;
    for NotModified {
        url,
        at: date,
        earlier,
    } in store.not_modified(blog)?
    {
        let Some(prev) = earlier.and_then(|id| seen.get(&id)) else {
            continue;
        };
        let block = warc::http_revisit_block(304, &[]);
        let tag = Pending::new(&url, date, Some("warc/revisit"), Some(304), &prev.digest);
        w.write(
            &Record {
                kind: RecordType::Revisit,
                id: warc::record_id(&["not-modified", &url, &date.to_rfc3339()]),
                date,
                target_uri: Some(&url),
                content_type: Some("application/http; msgtype=response"),
                headers: vec![
                    ("WARC-Warcinfo-ID", info_id.clone()),
                    (
                        "WARC-Profile",
                        "http://netpreserve.org/warc/1.1/revisit/server-not-modified".into(),
                    ),
                    ("WARC-Refers-To", prev.id.clone()),
                    ("WARC-Refers-To-Target-URI", prev.url.clone()),
                    (
                        "WARC-Refers-To-Date",
                        prev.date.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    ),
                    ("WARC-Payload-Digest", prev.digest.clone()),
                ],
                block: &block,
                compressed_payload: false,
            },
            tag,
        )?;
        written.revisits += 1;
        written.index(filename, &mut w);
    }

    store.for_each_post(blog, |post| {
        let mut json = Vec::new();
        super::write_jsonl(&post, &mut json)?;
        let uri = post_uri(&post.url);
        let mut headers = vec![("WARC-Warcinfo-ID", info_id.clone())];
        if let Some(prev) = store.post_response(&post.url)?.and_then(|id| seen.get(&id)) {
            headers.push(("WARC-Refers-To", prev.id.clone()));
        }
        let digest = warc::sha1_digest(&json);
        let tag = Pending::new(
            &uri,
            post.fetched_at,
            Some("application/json"),
            None,
            &digest,
        );
        w.write(
            &Record {
                kind: RecordType::Metadata,
                id: warc::record_id(&["post", &post.url, &post.version.to_string()]),
                date: post.fetched_at,
                target_uri: Some(&uri),
                content_type: Some("application/json"),
                headers,
                block: &json,
                compressed_payload: false,
            },
            tag,
        )?;
        written.posts += 1;
        written.index(filename, &mut w);
        Ok(())
    })?;

    w.flush()?;
    written.bytes = w.offset();
    let (out, rest) = w.finish()?;
    written.index_placed(filename, rest);
    written.index.sort_unstable();
    Ok((out, written))
}

/// Writes stored captures as WARC records, one gzip member each: a `warcinfo` first, then per
/// capture its `response` + `request` (or an identical-payload `revisit`), or a rendered DOM's
/// `resource`. Shared by the exports and the daemon's rolling WARC files
/// (`export::rolling`).
pub struct CaptureWriter<'a, W: Write> {
    w: WarcWriter<W, Option<Pending>>,
    filename: &'a str,
    info_id: String,
    written: Written,
    /// Whether CDXJ lines are collected (exports), or not (rolling files: memory stays flat).
    indexing: bool,
    latest: HashMap<String, ResponseId>,
    seen: HashMap<ResponseId, Seen>,
}

impl<'a, W: Write> CaptureWriter<'a, W> {
    /// Starts a WARC named `filename` on `out` with its `warcinfo` record dated `date`;
    /// `indexing`: collect the CDXJ lines of what follows.
    ///
    /// # Errors
    /// Writing failed.
    pub fn start(out: W, filename: &'a str, date: DateTime<Utc>, indexing: bool) -> Result<Self> {
        let mut w = WarcWriter::new(out)?;
        let info = format!(
            "software: everblog/{}\r\nformat: WARC File Format 1.1\r\nconformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\nrobots: obey\r\nhttp-header-user-agent: {USER_AGENT}\r\n",
            env!("CARGO_PKG_VERSION")
        );
        let info_id = warc::record_id(&["warcinfo", filename]);
        w.write(
            &Record {
                kind: RecordType::Warcinfo,
                id: info_id.clone(),
                date,
                target_uri: None,
                content_type: Some("application/warc-fields"),
                headers: vec![("WARC-Filename", filename.to_string())],
                block: info.as_bytes(),
                compressed_payload: false,
            },
            None,
        )?;
        Ok(CaptureWriter {
            w,
            filename,
            info_id,
            written: Written::default(),
            indexing,
            latest: HashMap::new(),
            seen: HashMap::new(),
        })
    }

    /// Goes on writing the WARC named `filename` whose `warcinfo` was written earlier (records
    /// refer to it by its id, derived from the name); offsets count from here.
    ///
    /// # Errors
    /// A deflating thread could not be started.
    pub fn continuing(out: W, filename: &'a str, indexing: bool) -> Result<Self> {
        Ok(CaptureWriter {
            w: WarcWriter::new(out)?,
            filename,
            info_id: warc::record_id(&["warcinfo", filename]),
            written: Written::default(),
            indexing,
            latest: HashMap::new(),
            seen: HashMap::new(),
        })
    }

    /// The counts so far.
    pub fn written(&self) -> &Written {
        &self.written
    }

    /// Writes out every record, flushes, and returns the output with the bytes written to it.
    ///
    /// # Errors
    /// Deflating or writing failed.
    pub fn finish(self) -> Result<(W, u64)> {
        let CaptureWriter { mut w, .. } = self;
        w.flush()?;
        let bytes = w.offset();
        Ok((w.finish()?.0, bytes))
    }

    /// The index fields of a record, when this writer indexes.
    fn tag(
        &self,
        url: &str,
        date: DateTime<Utc>,
        mime: Option<&str>,
        status: Option<u16>,
        digest: &str,
    ) -> Option<Pending> {
        self.indexing
            .then(|| Pending::new(url, date, mime, status, digest))
            .flatten()
    }

    /// Writes the records of stored response `id` (see the type's documentation).
    ///
    /// # Errors
    /// Writing failed.
    pub fn capture(&mut self, id: ResponseId, r: Response) -> Result<()> {
        let info_id = self.info_id.clone();
        let date = r.fetched_at;
        if r.is_rendered() {
            let uri = rendered_uri(&r.final_url);
            let rec_id = warc::record_id(&["resource", &id.to_string()]);
            let digest = warc::sha1_digest(&r.body);
            let tag = self.tag(&uri, date, Some("text/html"), None, &digest);
            self.w.write(
                &Record {
                    kind: RecordType::Resource,
                    id: rec_id,
                    date,
                    target_uri: Some(&uri),
                    content_type: Some("text/html; charset=utf-8"),
                    headers: vec![
                        ("WARC-Warcinfo-ID", info_id),
                        ("WARC-Payload-Digest", digest.clone()),
                    ],
                    block: &r.body,
                    compressed_payload: false,
                },
                tag,
            )?;
            self.written.resources += 1;
            self.written.index(self.filename, &mut self.w);
            return Ok(());
        }
        let target = r.final_url.clone();
        let digest = warc::sha1_digest(&r.body);
        let rec_id = warc::record_id(&["response", &id.to_string()]);
        let previous = self
            .latest
            .get(&target)
            .and_then(|p| self.seen.get(p))
            .filter(|p| p.digest == digest)
            .map(|p| Seen {
                id: p.id.clone(),
                date: p.date,
                digest: p.digest.clone(),
                url: p.url.clone(),
            });
        match &previous {
            Some(prev) => {
                let block = warc::http_revisit_block(r.status, &r.headers);
                self.written.revisits += 1;
                let tag = self.tag(&target, date, Some("warc/revisit"), Some(r.status), &digest);
                self.w.write(
                    &Record {
                        kind: RecordType::Revisit,
                        id: rec_id.clone(),
                        date,
                        target_uri: Some(&target),
                        content_type: Some("application/http; msgtype=response"),
                        headers: vec![
                            ("WARC-Warcinfo-ID", info_id.clone()),
                            (
                                "WARC-Profile",
                                "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
                                    .into(),
                            ),
                            ("WARC-Refers-To", prev.id.clone()),
                            ("WARC-Refers-To-Target-URI", prev.url.clone()),
                            (
                                "WARC-Refers-To-Date",
                                prev.date.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                            ),
                            ("WARC-Payload-Digest", digest.clone()),
                        ],
                        block: &block,
                        compressed_payload: false,
                    },
                    tag,
                )?;
            }
            None => {
                let block = warc::http_response_block(r.status, &r.headers, &r.body);
                let mime = crate::fetch::mime_type(&r.headers);
                self.written.responses += 1;
                let tag = self.tag(&target, date, mime.as_deref(), Some(r.status), &digest);
                self.w.write(
                    &Record {
                        kind: RecordType::Response,
                        id: rec_id.clone(),
                        date,
                        target_uri: Some(&target),
                        content_type: Some("application/http; msgtype=response"),
                        headers: vec![
                            ("WARC-Warcinfo-ID", info_id.clone()),
                            ("WARC-Payload-Digest", digest.clone()),
                        ],
                        block: &block,
                        compressed_payload: mime.as_deref().is_some_and(warc::compressed_format),
                    },
                    tag,
                )?;
            }
        }
        if let Ok(u) = url::Url::parse(&target) {
            let block = warc::http_request_block(&u, USER_AGENT);
            self.w.write(
                &Record {
                    kind: RecordType::Request,
                    id: warc::record_id(&["request", &id.to_string()]),
                    date,
                    target_uri: Some(&target),
                    content_type: Some("application/http; msgtype=request"),
                    headers: vec![
                        ("WARC-Warcinfo-ID", info_id),
                        ("WARC-Concurrent-To", rec_id.clone()),
                        // A GET has an empty payload; warcio writes its digest too.
                        ("WARC-Payload-Digest", warc::sha1_digest(b"")),
                    ],
                    block: &block,
                    compressed_payload: false,
                },
                None,
            )?;
        }
        self.written.index(self.filename, &mut self.w);
        // A revisit refers to the first record holding the payload, not to another revisit.
        let keep = previous.unwrap_or(Seen {
            id: rec_id,
            date,
            digest,
            url: target.clone(),
        });
        self.seen.insert(id, keep);
        self.latest.insert(target, id);
        Ok(())
    }
}

impl Written {
    /// Adds the CDXJ lines of the records `w` placed since last asked (those tagged with
    /// their index fields) in the WARC `filename`.
    fn index<W: Write>(&mut self, filename: &str, w: &mut WarcWriter<W, Option<Pending>>) {
        let placed: Vec<_> = w.placed().collect();
        self.index_placed(filename, placed);
    }

    fn index_placed(&mut self, filename: &str, placed: Vec<(Option<Pending>, warc::Placement)>) {
        for (pending, p) in placed {
            let Some(e) = pending else { continue };
            self.index.push(cdxj::line(&cdxj::Entry {
                url: &e.url,
                date: e.date,
                mime: e.mime.as_deref(),
                status: e.status,
                digest: Some(&e.digest),
                length: p.length,
                offset: p.offset,
                filename,
            }));
        }
    }
}

/// What a WACZ export wrote.
#[derive(Debug, Clone)]
pub struct WaczWritten {
    /// The WARC inside it.
    pub warc: Written,
    /// Posts listed in `pages/pages.jsonl`.
    pub pages: u64,
}

/// What a WACZ package says about itself in `datapackage.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct WaczAbout {
    /// `title`: the blog's (or the archive's) name.
    pub title: String,
    /// `mainPageURL` and `mainPageDate`: the page a viewer opens first (the blog's home page,
    /// as last captured); `None` writes `null`.
    pub main_page: Option<(String, DateTime<Utc>)>,
}

impl WaczAbout {
    /// What the WACZ of `blog` (every blog when `None`) says about itself: the blog's title
    /// (its home URL when the feed has none) and its home page as last captured with 200 as
    /// the page a viewer opens first; for every blog, the one blog's when there is one, else a
    /// count and no main page.
    ///
    /// # Errors
    /// The database failed.
    pub fn of(store: &Store, blog: Option<&Blog>) -> Result<WaczAbout> {
        let all;
        let blog = match blog {
            Some(b) => b,
            None => {
                all = store.blogs()?;
                let [one] = all.as_slice() else {
                    return Ok(WaczAbout {
                        title: format!("everblog archive of {} blogs", all.len()),
                        main_page: None,
                    });
                };
                one
            }
        };
        let main_page = store
            .captures_of(&blog.home_url)?
            .into_iter()
            .rfind(|c| c.status == 200)
            .map(|c| (c.url, c.fetched_at));
        Ok(WaczAbout {
            title: blog.name().to_string(),
            main_page,
        })
    }
}

/// Packages the captures of `blog` (all when `None`) as WACZ 1.1.1 into `out`: the WARC as
/// `archive/data.warc.gz` (stored, not recompressed), its CDXJ index as `indexes/index.cdx`
/// (the name pywb's `wb-manager add --unpack-wacz` and ReplayWeb.page look for), one line per
/// post in `pages/pages.jsonl` (`url`, `ts`, `title`, `text`; the header says `hasText`, which
/// turns on ReplayWeb.page's full-text search), `datapackage.json` (`about`,
/// the SHA-256 and size of every file) and `datapackage-digest.json`.
///
/// # Errors
/// The database failed or writing to `out` failed.
pub fn write_wacz<W: Write + Seek>(
    store: &Store,
    blog: Option<BlogId>,
    about: &WaczAbout,
    out: W,
) -> Result<(W, WaczWritten)> {
    use zip::write::SimpleFileOptions;
    let mut zip = zip::ZipWriter::new(out);
    let stored = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(true);
    let deflated =
        SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let mut resources = Vec::new();

    let warc_path = "archive/data.warc.gz";
    zip.start_file(warc_path, stored)?;
    let (hashed, warc) = write_warc(store, blog, "data.warc.gz", Hashing::new(&mut zip))?;
    resources.push(hashed.resource("data.warc.gz", warc_path));

    let index_path = "indexes/index.cdx";
    zip.start_file(index_path, deflated)?;
    let mut h = Hashing::new(&mut zip);
    for line in &warc.index {
        h.write_all(line.as_bytes())?;
        h.write_all(b"\n")?;
    }
    resources.push(h.resource("index.cdx", index_path));

    let pages_path = "pages/pages.jsonl";
    zip.start_file(pages_path, deflated)?;
    let mut h = Hashing::new(&mut zip);
    h.write_all(
        serde_json::json!({"format": "json-pages-1.0", "id": "pages", "title": "Posts", "hasText": true})
            .to_string()
            .as_bytes(),
    )?;
    h.write_all(b"\n")?;
    let mut pages = 0;
    store.for_each_post(blog, |post| {
        let ts = post
            .fetched_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let line = serde_json::json!({
            "id": warc::record_id(&["page", &post.url]).trim_matches(['<', '>']),
            "url": post.url,
            "ts": ts,
            "title": post.title.clone().unwrap_or_default(),
            "text": post.content_text,
        });
        serde_json::to_writer(&mut h, &line)?;
        h.write_all(b"\n")?;
        pages += 1;
        Ok(())
    })?;
    resources.push(h.resource("pages.jsonl", pages_path));

    let created = store
        .capture_span(blog)?
        .map(|s| s.newest)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let package = serde_json::to_vec_pretty(&serde_json::json!({
        "profile": "data-package",
        "wacz_version": "1.1.1",
        "title": about.title,
        "created": created,
        "modified": created,
        "software": format!("everblog/{}", env!("CARGO_PKG_VERSION")),
        "mainPageURL": about.main_page.as_ref().map(|(url, _)| url),
        "mainPageDate": about.main_page.as_ref()
            .map(|(_, at)| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        "resources": resources,
    }))?;
    zip.start_file("datapackage.json", deflated)?;
    zip.write_all(&package)?;
    zip.start_file("datapackage-digest.json", deflated)?;
    zip.write_all(
        serde_json::to_vec_pretty(&serde_json::json!({
            "path": "datapackage.json",
            "hash": format!("sha256:{:x}", Sha256::digest(&package)),
        }))?
        .as_slice(),
    )?;
    let out = zip.finish().context("finishing the WACZ (zip)")?;
    Ok((out, WaczWritten { warc, pages }))
}

/// Counts and SHA-256-hashes what passes through it, for `datapackage.json`.
struct Hashing<W: Write> {
    inner: W,
    hash: Sha256,
    bytes: u64,
}

impl<W: Write> Hashing<W> {
    fn new(inner: W) -> Self {
        Hashing {
            inner,
            hash: Sha256::new(),
            bytes: 0,
        }
    }

    fn resource(self, name: &str, path: &str) -> serde_json::Value {
        serde_json::json!({
            "name": name,
            "path": path,
            "hash": format!("sha256:{:x}", self.hash.finalize()),
            "bytes": self.bytes,
        })
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
