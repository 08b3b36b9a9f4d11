//! WARC 1.1 (ISO 28500:2017) records, one gzip member each, so that a CDXJ index can point at
//! any record by (offset, length) in the compressed file and tools can decompress it alone.
//!
//! Our own small writer rather than the `warc` crate (0.4): that crate keeps a record's
//! headers in a `HashMap` (written in random order, `WARC-Type` anywhere), gzips a whole file
//! as one member (no per-record offsets), and writes with `write` instead of `write_all`.
//! Digests are `sha1:` + base32, as warcio, pywb and Heritrix write and check them.

use chrono::{DateTime, SecondsFormat, Utc};
use flate2::write::GzEncoder;
use flate2::Compression;
use sha1::{Digest, Sha1};
use std::io::{self, Write};

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

/// Writes records to `W`, each as its own gzip member, counting bytes for [`Placement`].
pub struct WarcWriter<W: Write> {
    out: W,
    written: u64,
}

impl<W: Write> WarcWriter<W> {
    /// A writer at offset 0 of `out`.
    pub fn new(out: W) -> Self {
        WarcWriter { out, written: 0 }
    }

    /// Bytes written so far (the offset of the next record).
    pub fn offset(&self) -> u64 {
        self.written
    }

    /// Writes one record as one gzip member: `WARC/1.1`, the headers (`WARC-Type`,
    /// `WARC-Record-ID`, `WARC-Date` to the second, `WARC-Target-URI`, `Content-Type`, the
    /// extra headers, `WARC-Block-Digest`, `Content-Length`), a blank line, the block, and two
    /// CRLFs.
    ///
    /// # Errors
    /// Writing to the output failed.
    pub fn write(&mut self, r: &Record<'_>) -> io::Result<Placement> {
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
        head.push_str(&format!(
            "WARC-Block-Digest: {}\r\nContent-Length: {}\r\n\r\n",
            sha1_digest(r.block),
            r.block.len()
        ));
        let offset = self.written;
        let mut counting = Counting {
            inner: &mut self.out,
            n: 0,
        };
        let mut gz = GzEncoder::new(&mut counting, Compression::default());
        gz.write_all(head.as_bytes())?;
        gz.write_all(r.block)?;
        gz.write_all(b"\r\n\r\n")?;
        gz.finish()?;
        let length = counting.n;
        self.written += length;
        Ok(Placement { offset, length })
    }

    /// Flushes and returns the output.
    ///
    /// # Errors
    /// Flushing failed.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

struct Counting<'a, W: Write> {
    inner: &'a mut W,
    n: u64,
}

impl<W: Write> Write for Counting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
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
        let mut w = WarcWriter::new(Vec::new());
        let date = "2026-01-02T03:04:05Z".parse().unwrap();
        let block = http_response_block(200, &[("Content-Encoding".into(), "gzip".into())], b"hi");
        let a = w
            .write(&Record {
                kind: RecordType::Response,
                id: record_id(&["a"]),
                date,
                target_uri: Some("http://example.org/"),
                content_type: Some("application/http; msgtype=response"),
                headers: vec![],
                block: &block,
            })
            .unwrap();
        let b = w
            .write(&Record {
                kind: RecordType::Metadata,
                id: record_id(&["b"]),
                date,
                target_uri: None,
                content_type: Some("application/json"),
                headers: vec![],
                block: b"{}",
            })
            .unwrap();
        let out = w.into_inner().unwrap();
        assert_eq!(a.offset, 0);
        assert_eq!(b.offset, a.length);
        assert_eq!(out.len() as u64, a.length + b.length);
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
        assert_eq!(record_id(&["a"]), record_id(&["a"]));
        assert_ne!(record_id(&["a", "b"]), record_id(&["ab"]));
        assert_eq!(sha1_digest(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    }
}
