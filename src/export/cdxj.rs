//! CDXJ index lines (the pywb / OpenWayback form): `<SURT> <timestamp> <JSON>`, sorted, one
//! per replayable record, pointing at its gzip member in a WARC by offset and length.

use chrono::{DateTime, Utc};

/// The SURT (Sort-friendly URI Reordering Transform) of `url`, as Python's `surt` (used by
/// pywb and cdxj-indexer) writes it: no scheme, host lower-cased without a leading `www.`,
/// its labels reversed and joined by `,` (an IPv4 address's bytes too), a non-default port
/// as `:port`, then `)`, the path without trailing slashes (the root's kept) and the query
/// with its parameters sorted, all lower-cased, no fragment, no empty query. `http://www.Example.com/A?b=1&a=2` → `com,example)/a?a=2&b=1`. A string that
/// is not a URL (`urn:…`) is returned as it is.
pub fn surt(url: &str) -> String {
    let Ok(u) = url::Url::parse(url) else {
        return url.to_string();
    };
    let Some(host) = u.host() else {
        return url.to_string();
    };
    let host = match host {
        url::Host::Domain(d) => {
            let d = d.to_ascii_lowercase();
            let d = strip_www(&d);
            d.split('.').rev().collect::<Vec<_>>().join(",")
        }
        url::Host::Ipv4(ip) => ip
            .to_string()
            .split('.')
            .rev()
            .collect::<Vec<_>>()
            .join(","),
        url::Host::Ipv6(ip) => format!("[{ip}]"),
    };
    let mut key = host;
    if let Some(port) = u.port() {
        key.push_str(&format!(":{port}"));
    }
    key.push(')');
    // As the `surt` library (cdxj-indexer, pywb) keys paths: trailing slashes dropped, the
    // root's alone kept. pywb looks `…/post/` up as `…/post`.
    let path = u.path().to_ascii_lowercase();
    let trimmed = path.trim_end_matches('/');
    key.push_str(if trimmed.is_empty() { "/" } else { trimmed });
    if let Some(q) = u.query().filter(|q| !q.is_empty()) {
        let mut params: Vec<&str> = q.split('&').collect();
        params.sort_unstable();
        key.push('?');
        key.push_str(&params.join("&").to_ascii_lowercase());
    }
    key
}

fn strip_www(host: &str) -> &str {
    let Some(rest) = host.strip_prefix("www") else {
        return host;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    match rest[digits..].strip_prefix('.') {
        Some(tail) if tail.contains('.') => tail,
        _ => host,
    }
}

/// A capture's 14-digit timestamp, `YYYYMMDDhhmmss` UTC.
pub fn timestamp(t: DateTime<Utc>) -> String {
    t.format("%Y%m%d%H%M%S").to_string()
}

/// What one index line says about a record.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// The record's `WARC-Target-URI`.
    pub url: &'a str,
    /// When it was captured.
    pub date: DateTime<Utc>,
    /// MIME type of the payload (`warc/revisit` for revisits), when known.
    pub mime: Option<&'a str>,
    /// HTTP status, for responses and revisits.
    pub status: Option<u16>,
    /// `WARC-Payload-Digest` (`sha1:…`), when the record has one.
    pub digest: Option<&'a str>,
    /// Compressed length of the record, in bytes.
    pub length: u64,
    /// Offset of the record in its WARC, in bytes.
    pub offset: u64,
    /// The WARC's file name, as it will be found beside the index (or inside a WACZ).
    pub filename: &'a str,
}

/// One CDXJ line (no newline): `<surt> <timestamp> {"url": …, "mime": …, "status": …,
/// "digest": …, "length": …, "offset": …, "filename": …}`, numbers as strings, byte for byte
/// as cdxj-indexer writes them (no `mime` when the response had no `Content-Type`).
pub fn line(e: &Entry<'_>) -> String {
    let q = |s: &str| serde_json::to_string(s).expect("strings serialise");
    let mut fields = vec![format!("\"url\": {}", q(e.url))];
    if let Some(m) = e.mime {
        fields.push(format!("\"mime\": {}", q(m)));
    }
    if let Some(s) = e.status {
        fields.push(format!("\"status\": \"{s}\""));
    }
    if let Some(d) = e.digest {
        fields.push(format!("\"digest\": {}", q(d)));
    }
    fields.push(format!("\"length\": \"{}\"", e.length));
    fields.push(format!("\"offset\": \"{}\"", e.offset));
    fields.push(format!("\"filename\": {}", q(e.filename)));
    format!(
        "{} {} {{{}}}",
        surt(e.url),
        timestamp(e.date),
        fields.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surt_reverses_hosts_and_sorts_queries() {
        assert_eq!(
            surt("http://www.Example.com/A?b=1&a=2#frag"),
            "com,example)/a?a=2&b=1"
        );
        assert_eq!(surt("http://127.0.0.1:8000/"), "1,0,0,127:8000)/");
        assert_eq!(
            surt("https://blog.example.org:443/x"),
            "org,example,blog)/x"
        );
        assert_eq!(surt("http://www.com/"), "com,www)/");
        assert_eq!(surt("urn:everblog:post:X"), "urn:everblog:post:X");
        // Trailing slashes and an empty query go, as Python's surt drops them.
        assert_eq!(surt("http://x.org/a/"), "org,x)/a");
        assert_eq!(surt("http://x.org/a//?q=1"), "org,x)/a?q=1");
        assert_eq!(surt("http://x.org/a/b/?"), "org,x)/a/b");
        assert_eq!(surt("http://x.org"), "org,x)/");
    }
}
