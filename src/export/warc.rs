//! WARC 1.1 (ISO 28500:2017) records, one gzip member each, so that a CDXJ index can point at
//! any record by (offset, length) in the compressed file and tools can decompress it alone.
//!
//! Our own small writer rather than the `warc` crate (0.4): that crate keeps a record's
//! headers in a `HashMap` (written in random order, `WARC-Type` anywhere), gzips a whole file
//! as one member (no per-record offsets), and writes with `write` instead of `write_all`.
//! Digests are `sha1:` + base32, as warcio, pywb and Heritrix write and check them.

use chrono::{DateTime, SecondsFormat, Utc};
use flate2::{Compress, Compression, Crc, FlushCompress, Status};
use sha1::{Digest, Sha1};
use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Write};
use std::sync::mpsc;

crate::core::vocabulary! {
    /// The kinds of WARC record everblog writes (ISO 28500 §6).
    pub enum RecordType {
        /// What made the file: software, format.
        Warcinfo = "warcinfo",
        /// The HTTP request a response answers.
        Request = "request",
        /// An HTTP response: status line, headers and payload.
        Response = "response",
        /// A capture whose payload is another record's (a 304, or an identical body).
        Revisit = "revisit",
        /// A resource not obtained by HTTP (a DOM rendered by Chromium).
        Resource = "resource",
        /// Data about another record (everblog's extracted post, JSON).
        Metadata = "metadata",
    }
}

/// `sha1:` and the base32 SHA-1 of `bytes`: the form of `WARC-Payload-Digest` and
/// `WARC-Block-Digest` that warcio, pywb and cdxj-indexer read.
pub fn sha1_digest(bytes: &[u8]) -> String {
    format!(
        "sha1:{}",
        data_encoding::BASE32.encode(&Sha1::digest(bytes))
    )
}

/// A `urn:uuid:` record id derived from `parts` (SHA-1 of their concatenation, shaped as a
/// version 5 UUID), so that exporting the same archive twice gives the same records, and a
/// CDXJ index computed apart matches the WARC.
pub fn record_id(parts: &[&str]) -> String {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0]);
    }
    let mut b: [u8; 16] = h.finalize()[..16].try_into().expect("SHA-1 has 20 bytes");
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "<urn:uuid:{}-{}-{}-{}-{}>",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// One record to write. The block is the record's content (for `response`: the HTTP status
/// line, headers and payload); its digest and length are computed on writing.
#[derive(Debug)]
pub struct Record<'a> {
    /// `WARC-Type`.
    pub kind: RecordType,
    /// `WARC-Record-ID`, from [`record_id`].
    pub id: String,
    /// `WARC-Date`: when the capture was made.
    pub date: DateTime<Utc>,
    /// `WARC-Target-URI`, if the record has one.
    pub target_uri: Option<&'a str>,
    /// `Content-Type` of the block (`application/http; msgtype=response`, `text/html`…).
    pub content_type: Option<&'a str>,
    /// Further WARC headers, written in this order after the standard ones.
    pub headers: Vec<(&'static str, String)>,
    /// The block.
    pub block: &'a [u8],
    /// The payload is already compressed ([`compressed_format`]: JPEG, PNG, audio, video,
    /// WOFF2, archives): its gzip member holds stored deflate blocks, as small as deflating it
    /// again would make it, and many times faster.
    pub compressed_payload: bool,
}

/// Whether a payload of MIME type `mime` is compressed already, so deflating it again gains
/// nothing: raster images but BMP and SVG, audio and video but WAV, WOFF/WOFF2 fonts, and
/// zip, gzip, 7z, RAR and xz archives (EPUB and office documents are zips).
pub fn compressed_format(mime: &str) -> bool {
    let m = mime.trim().to_ascii_lowercase();
    let (top, sub) = m.split_once('/').unwrap_or((&m, ""));
    match top {
        "image" => !matches!(
            sub,
            "bmp" | "svg+xml" | "x-icon" | "vnd.microsoft.icon" | "tiff"
        ),
        "audio" => !matches!(sub, "wav" | "x-wav" | "wave"),
        "video" => true,
        "font" => matches!(sub, "woff" | "woff2"),
        "application" => {
            matches!(
                sub,
                "zip"
                    | "gzip"
                    | "x-gzip"
                    | "x-7z-compressed"
                    | "vnd.rar"
                    | "x-rar-compressed"
                    | "x-xz"
                    | "epub+zip"
                    | "font-woff"
                    | "font-woff2"
                    | "ogg"
            ) || sub.starts_with("vnd.openxmlformats-")
                || sub.starts_with("vnd.oasis.opendocument.")
        }
        _ => false,
    }
}

/// Where a record landed in the output: byte offset of its gzip member and the member's
/// compressed length, as a CDXJ index records them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// Offset of the record's gzip member from the start of the file, in bytes.
    pub offset: u64,
    /// Length of the gzip member, in bytes.
    pub length: u64,
}

/// The fixed header of each gzip member (RFC 1952): deflate, no name, no time, unknown OS.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// Most threads deflating records at once.
const MAX_THREADS: usize = 8;

/// Records in flight (queued, not yet written out) per deflating thread, at most.
const IN_FLIGHT_PER_THREAD: u64 = 8;

/// Bytes of blocks in flight, at most (one record larger than this is still written, alone).
const IN_FLIGHT_BYTES: usize = 64 << 20;

/// One record to deflate: its WARC head up to the block digest, its block, and its level.
struct Job {
    seq: u64,
    head: String,
    block: Vec<u8>,
    compressed_payload: bool,
}

/// A deflating thread's state: one deflate state per level, reset for each record (a new
/// compressor per record costs 300 KB of fresh state, and glibc's heap grows by hundreds of MB
/// over thousands of them).
struct Deflater {
    /// Level 6 (the default), for text.
    default: Compress,
    /// Stored blocks, for payloads compressed already: deflating them again gains nothing.
    stored: Compress,
}

impl Deflater {
    fn new() -> Self {
        Deflater {
            default: Compress::new(Compression::default(), false),
            stored: Compress::new(Compression::none(), false),
        }
    }

    /// The gzip member of a record: the head completed with `WARC-Block-Digest` and
    /// `Content-Length`, a blank line, the block and two CRLFs.
    fn member(&mut self, job: &Job) -> io::Result<Vec<u8>> {
        let head = format!(
            "{}WARC-Block-Digest: {}\r\nContent-Length: {}\r\n\r\n",
            job.head,
            sha1_digest(&job.block),
            job.block.len()
        );
        let deflate = if job.compressed_payload {
            &mut self.stored
        } else {
            &mut self.default
        };
        let mut out = Vec::with_capacity(job.block.len() / 3 + 1024);
        gzip_member(
            deflate,
            &[head.as_bytes(), &job.block, b"\r\n\r\n"],
            &mut out,
        )?;
        Ok(out)
    }
}

/// Threads deflating jobs taken from one bounded queue (whichever thread is free takes the
/// next), all answering on one channel.
struct Pool {
    jobs: mpsc::SyncSender<Job>,
    threads: usize,
    results: mpsc::Receiver<(u64, io::Result<Vec<u8>>)>,
    handles: Vec<std::thread::JoinHandle<()>>,
}

impl Pool {
    fn start(threads: usize) -> io::Result<Pool> {
        let (answer, results) = mpsc::channel();
        let (jobs, queue) = mpsc::sync_channel::<Job>(4 * threads);
        let queue = std::sync::Arc::new(std::sync::Mutex::new(queue));
        let mut handles = Vec::new();
        for i in 0..threads {
            let answer = answer.clone();
            let queue = queue.clone();
            handles.push(
                std::thread::Builder::new()
                    .name(format!("warc-deflate-{i}"))
                    .spawn(move || {
                        let mut deflater = Deflater::new();
                        loop {
                            let job = match queue.lock() {
                                Ok(q) => q.recv(),
                                Err(_) => break,
                            };
                            let Ok(job) = job else { break };
                            if answer.send((job.seq, deflater.member(&job))).is_err() {
                                break;
                            }
                        }
                    })?,
            );
        }
        Ok(Pool {
            jobs,
            threads,
            results,
            handles,
        })
    }
}

/// Writes records to `W`, each as its own gzip member, in the order given, and tells where
/// each landed ([`Placement`]) with the tag `T` it was given.
///
/// Records are deflated by up to [`MAX_THREADS`] threads (one per core) while the caller
/// prepares the next ones; at most [`IN_FLIGHT_PER_THREAD`] records per thread and
/// [`IN_FLIGHT_BYTES`] of blocks are in flight, so memory stays flat. [`WarcWriter::write`] returns as soon as its record is queued: the
/// placements of the records written out so far come from [`WarcWriter::placed`], and
/// [`WarcWriter::finish`] waits for the rest. The output does not depend on the thread count.
pub struct WarcWriter<W: Write, T = ()> {
    out: W,
    written: u64,
    /// `None`: one core, records are deflated on the caller's thread.
    pool: Option<Pool>,
    inline: Option<Deflater>,
    /// Sequence number of the next record queued, and of the next one to write out.
    queued: u64,
    next_out: u64,
    /// Deflated records waiting for an earlier one, by sequence number.
    ready: BTreeMap<u64, Vec<u8>>,
    /// Tags and block sizes of the records queued and not yet written out, oldest first.
    tags: VecDeque<(T, usize)>,
    in_flight_bytes: usize,
    placed: Vec<(T, Placement)>,
}

impl<W: Write, T> WarcWriter<W, T> {
    /// A writer at offset 0 of `out`, deflating on one thread per core.
    ///
    /// # Errors
    /// A thread could not be started.
    pub fn new(out: W) -> io::Result<Self> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::with_threads(out, cores.min(MAX_THREADS))
    }

    /// A writer at offset 0 of `out` deflating on `threads` threads (1: on the caller's).
    ///
    /// # Errors
    /// A thread could not be started.
    pub fn with_threads(out: W, threads: usize) -> io::Result<Self> {
        let pool = if threads > 1 {
            Some(Pool::start(threads)?)
        } else {
            None
        };
        Ok(WarcWriter {
            out,
            written: 0,
            inline: pool.is_none().then(Deflater::new),
            pool,
            queued: 0,
            next_out: 0,
            ready: BTreeMap::new(),
            tags: VecDeque::new(),
            in_flight_bytes: 0,
            placed: Vec::new(),
        })
    }

    /// Bytes written out so far (the records still being deflated are not counted).
    pub fn offset(&self) -> u64 {
        self.written
    }

    /// Queues one record, to be written as one gzip member: `WARC/1.1`, the headers
    /// (`WARC-Type`, `WARC-Record-ID`, `WARC-Date` to the second, `WARC-Target-URI`,
    /// `Content-Type`, the extra headers, `WARC-Block-Digest`, `Content-Length`), a blank
    /// line, the block, and two CRLFs. Writes out the records before it that are ready.
    ///
    /// # Errors
    /// Writing to the output failed, or deflating an earlier record did.
    pub fn write(&mut self, r: &Record<'_>, tag: T) -> io::Result<()> {
        let mut head = format!(
            "WARC/1.1\r\nWARC-Type: {}\r\nWARC-Record-ID: {}\r\nWARC-Date: {}\r\n",
            r.kind.as_str(),
            r.id,
            r.date.to_rfc3339_opts(SecondsFormat::Secs, true)
        );
        if let Some(uri) = r.target_uri {
            head.push_str(&format!("WARC-Target-URI: {uri}\r\n"));
        }
        if let Some(ct) = r.content_type {
            head.push_str(&format!("Content-Type: {ct}\r\n"));
        }
        for (k, v) in &r.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        let job = Job {
            seq: self.queued,
            head,
            block: r.block.to_vec(),
            compressed_payload: r.compressed_payload,
        };
        self.queued += 1;
        self.tags.push_back((tag, job.block.len()));
        self.in_flight_bytes += job.block.len();
        if let Some(d) = &mut self.inline {
            let member = d.member(&job)?;
            self.ready.insert(job.seq, member);
            return self.write_out();
        }
        let pool = self.pool.as_ref().expect("a pool when not inline");
        pool.jobs
            .send(job)
            .map_err(|_| io::Error::other("a WARC deflating thread ended"))?;
        // Collect what is done without waiting, but bound the records and bytes in flight.
        let limit = IN_FLIGHT_PER_THREAD * pool.threads as u64;
        while let Ok((seq, member)) = pool.results.try_recv() {
            self.ready.insert(seq, member?);
        }
        self.write_out()?;
        while self.queued - self.next_out > limit
            || (self.in_flight_bytes > IN_FLIGHT_BYTES && self.queued - self.next_out > 1)
        {
            self.receive()?;
            self.write_out()?;
        }
        Ok(())
    }

    /// Waits for one deflated record.
    fn receive(&mut self) -> io::Result<()> {
        let pool = self.pool.as_ref().expect("a pool when not inline");
        let (seq, member) = pool
            .results
            .recv()
            .map_err(|_| io::Error::other("a WARC deflating thread ended"))?;
        self.ready.insert(seq, member?);
        Ok(())
    }

    /// Writes out the deflated records that come next, in order.
    fn write_out(&mut self) -> io::Result<()> {
        while let Some(member) = self.ready.remove(&self.next_out) {
            self.out.write_all(&member)?;
            let placement = Placement {
                offset: self.written,
                length: member.len() as u64,
            };
            self.written += placement.length;
            self.next_out += 1;
            let (tag, bytes) = self.tags.pop_front().expect("a tag per queued record");
            self.in_flight_bytes -= bytes;
            self.placed.push((tag, placement));
        }
        Ok(())
    }

    /// The records written out since the last call, in order, with their tags.
    pub fn placed(&mut self) -> std::vec::Drain<'_, (T, Placement)> {
        self.placed.drain(..)
    }

    /// Waits for every queued record, writes it out, and flushes: [`WarcWriter::placed`]
    /// then holds the rest of the placements, and [`WarcWriter::offset`] the file's length.
    ///
    /// # Errors
    /// Deflating or writing failed.
    pub fn flush(&mut self) -> io::Result<()> {
        while self.next_out < self.queued {
            self.receive()?;
            self.write_out()?;
        }
        self.out.flush()
    }

    /// Writes out every queued record, flushes, stops the threads, and returns the output
    /// with the placements not taken yet.
    ///
    /// # Errors
    /// Deflating or writing failed.
    pub fn finish(mut self) -> io::Result<(W, Vec<(T, Placement)>)> {
        self.flush()?;
        if let Some(pool) = self.pool.take() {
            drop(pool.jobs);
            for t in pool.handles {
                t.join()
                    .map_err(|_| io::Error::other("a WARC deflating thread panicked"))?;
            }
        }
        Ok((self.out, self.placed))
    }
}

/// Replaces `out` with one gzip member holding `parts` in order, deflated by `deflate`
/// (reset first).
fn gzip_member(deflate: &mut Compress, parts: &[&[u8]], out: &mut Vec<u8>) -> io::Result<()> {
    let fail = |e: flate2::CompressError| io::Error::other(e);
    deflate.reset();
    out.clear();
    out.extend_from_slice(&GZIP_HEADER);
    let mut crc = Crc::new();
    for part in parts {
        crc.update(part);
        let mut rest: &[u8] = part;
        while !rest.is_empty() {
            out.reserve(rest.len() / 2 + 1024);
            let before = deflate.total_in();
            deflate
                .compress_vec(rest, out, FlushCompress::None)
                .map_err(fail)?;
            rest = &rest[(deflate.total_in() - before) as usize..];
        }
    }
    loop {
        out.reserve(64 * 1024);
        if deflate
            .compress_vec(&[], out, FlushCompress::Finish)
            .map_err(fail)?
            == Status::StreamEnd
        {
            break;
        }
    }
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&crc.amount().to_le_bytes());
    Ok(())
}

/// The block of a `response` record: `HTTP/1.1 <status> <reason>`, the headers as received
/// except those describing an encoding the stored body no longer has (`Content-Encoding`,
/// `Transfer-Encoding`: bodies are kept decoded) and `Content-Length`, which is rewritten to
/// the body's length, as warcio and pywb expect of a decoded payload; then the body.
pub fn http_response_block(status: u16, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    let mut head = http_head(status, headers);
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut block = head.into_bytes();
    block.extend_from_slice(body);
    block
}

/// The block of a `revisit` record: the status line and headers only (no payload).
pub fn http_revisit_block(status: u16, headers: &[(String, String)]) -> Vec<u8> {
    let mut head = http_head(status, headers);
    head.push_str("\r\n");
    head.into_bytes()
}

/// Status line and headers (each line ending in CRLF), without `Content-Length` and the
/// encodings of the body as transferred, nor everblog's own `x-everblog-*` marks.
fn http_head(status: u16, headers: &[(String, String)]) -> String {
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut head = format!("HTTP/1.1 {status} {reason}\r\n");
    for (k, v) in headers {
        let k_lower = k.to_ascii_lowercase();
        if matches!(
            k_lower.as_str(),
            "content-encoding" | "transfer-encoding" | "content-length"
        ) || k_lower.starts_with("x-everblog-")
        {
            continue;
        }
        head.push_str(&format!("{k}: {}\r\n", v.replace(['\r', '\n'], " ")));
    }
    head
}

/// The block of a `request` record: what everblog sends for a GET of `url` (request line,
/// `Host`, `User-Agent`, `Accept-Encoding`).
pub fn http_request_block(url: &url::Url, user_agent: &str) -> Vec<u8> {
    let mut target = url.path().to_string();
    if let Some(q) = url.query() {
        target.push('?');
        target.push_str(q);
    }
    let host = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or("")),
        None => url.host_str().unwrap_or("").to_string(),
    };
    format!(
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {user_agent}\r\nAccept-Encoding: gzip, br, deflate\r\n\r\n"
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::MultiGzDecoder;
    use std::io::Read;

    #[test]
    fn each_record_is_its_own_gzip_member_at_its_offset() {
        let date = "2026-01-02T03:04:05Z".parse().unwrap();
        let block = http_response_block(200, &[("Content-Encoding".into(), "gzip".into())], b"hi");
        let big: Vec<u8> = (0..300_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let write = |threads: usize| {
            let mut w = WarcWriter::with_threads(Vec::new(), threads).unwrap();
            w.write(
                &Record {
                    kind: RecordType::Response,
                    id: record_id(&["a"]),
                    date,
                    target_uri: Some("http://example.org/"),
                    content_type: Some("application/http; msgtype=response"),
                    headers: vec![],
                    block: &block,
                    compressed_payload: false,
                },
                "a",
            )
            .unwrap();
            for (i, compressed_payload) in [(0, false), (1, true), (2, false)] {
                w.write(
                    &Record {
                        kind: RecordType::Resource,
                        id: record_id(&["big", &i.to_string()]),
                        date,
                        target_uri: Some("http://example.org/big"),
                        content_type: Some("application/octet-stream"),
                        headers: vec![],
                        block: &big,
                        compressed_payload,
                    },
                    "big",
                )
                .unwrap();
            }
            w.write(
                &Record {
                    kind: RecordType::Metadata,
                    id: record_id(&["b"]),
                    date,
                    target_uri: None,
                    content_type: Some("application/json"),
                    headers: vec![],
                    block: b"{}",
                    compressed_payload: false,
                },
                "b",
            )
            .unwrap();
            let mut placed: Vec<_> = w.placed().collect();
            let (out, rest) = w.finish().unwrap();
            placed.extend(rest);
            (out, placed)
        };
        let (out, placed) = write(1);
        assert_eq!(
            write(3),
            (out.clone(), placed.clone()),
            "threads change nothing"
        );
        let tags: Vec<&str> = placed.iter().map(|(t, _)| *t).collect();
        assert_eq!(tags, ["a", "big", "big", "big", "b"]);
        let mut offset = 0;
        for (_, p) in &placed {
            assert_eq!(p.offset, offset);
            offset += p.length;
        }
        assert_eq!(out.len() as u64, offset);
        let (a, stored) = (placed[0].1, placed[2].1);
        assert!(stored.length > big.len() as u64, "stored, not deflated");
        assert!(placed[1].1.length < big.len() as u64 / 10, "deflated");
        let mut first = String::new();
        MultiGzDecoder::new(&out[..a.length as usize])
            .read_to_string(&mut first)
            .unwrap();
        assert!(first.starts_with("WARC/1.1\r\nWARC-Type: response\r\n"));
        assert!(!first.contains("Content-Encoding"), "{first}");
        assert!(
            first.ends_with("Content-Length: 2\r\n\r\nhi\r\n\r\n"),
            "{first}"
        );
        let mut whole = Vec::new();
        MultiGzDecoder::new(&out[..])
            .read_to_end(&mut whole)
            .unwrap();
        assert!(whole.len() > 3 * big.len());
        assert_eq!(record_id(&["a"]), record_id(&["a"]));
        assert_ne!(record_id(&["a", "b"]), record_id(&["ab"]));
        assert_eq!(sha1_digest(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    }

    #[test]
    fn compressed_formats() {
        for m in [
            "image/jpeg",
            "image/png",
            "audio/mpeg",
            "video/mp4",
            "font/woff2",
            "application/zip",
        ] {
            assert!(compressed_format(m), "{m}");
        }
        for m in [
            "text/html",
            "image/svg+xml",
            "image/bmp",
            "application/json",
            "audio/wav",
            "font/ttf",
        ] {
            assert!(!compressed_format(m), "{m}");
        }
    }
}
