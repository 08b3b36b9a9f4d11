//! Sitemaps (sitemaps.org): a `<urlset>` lists page URLs, a `<sitemapindex>` lists further
//! sitemaps. Gzipped sitemaps (`.xml.gz`) are inflated first. Parsing is bounded: at most
//! [`MAX_LOCS`] locations per file and [`MAX_INFLATED`] bytes after inflation.

use quick_xml::events::Event;
use std::io::Read;

/// Most `<loc>` entries read from one sitemap (the protocol allows 50,000).
pub const MAX_LOCS: usize = 50_000;
/// Largest sitemap read after inflation (the protocol allows 50 MB).
pub const MAX_INFLATED: u64 = 50 * 1024 * 1024;

/// What a sitemap file lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sitemap {
    /// Pages.
    Urls(Vec<SitemapUrl>),
    /// URLs of further sitemaps.
    Index(Vec<String>),
}

/// A page a sitemap lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SitemapUrl {
    /// Its URL.
    pub loc: String,
    /// When it last changed, if the sitemap says (`<lastmod>`, W3C datetime).
    pub lastmod: Option<chrono::DateTime<chrono::FixedOffset>>,
}

/// A file that is not a sitemap.
#[derive(Debug, thiserror::Error)]
#[error("not a sitemap: {0}")]
pub struct SitemapError(pub String);

/// Parses a sitemap (plain or gzipped XML).
///
/// # Errors
/// [`SitemapError`] when the bytes are not a `<urlset>` or `<sitemapindex>` document.
pub fn parse(bytes: &[u8]) -> Result<Sitemap, SitemapError> {
    let inflated;
    let xml: &[u8] = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .take(MAX_INFLATED)
            .read_to_end(&mut out)
            .map_err(|e| SitemapError(format!("bad gzip: {e}")))?;
        inflated = out;
        &inflated
    } else {
        bytes
    };
    let mut reader = quick_xml::Reader::from_reader(xml);
    reader.config_mut().trim_text(true);
    let mut root: Option<String> = None;
    // The text being read: of a <loc> (true) or a <lastmod> (false).
    let mut loc: Option<String> = None;
    let mut in_loc = true;
    let mut locs: Vec<SitemapUrl> = Vec::new();
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => {
                let name = e.local_name().as_ref().to_ascii_lowercase();
                if root.is_none() {
                    if name != "urlset" && name != "sitemapindex" {
                        return Err(SitemapError(format!("root element <{name}>")));
                    }
                    root = Some(name);
                } else if name == "loc" || name == "lastmod" {
                    loc = Some(String::new());
                    in_loc = name == "loc";
                }
            }
            Ok(Event::Text(t)) => {
                if let Some(l) = loc.as_mut() {
                    l.push_str(t.as_ref());
                }
            }
            Ok(Event::CData(t)) => {
                if let Some(l) = loc.as_mut() {
                    l.push_str(&t.into_inner());
                }
            }
            Ok(Event::GeneralRef(r)) => {
                if let Some(l) = loc.as_mut() {
                    let c = match r.as_ref() {
                        "amp" => Some('&'),
                        "lt" => Some('<'),
                        "gt" => Some('>'),
                        "quot" => Some('"'),
                        "apos" => Some('\''),
                        _ => r.resolve_char_ref().ok().flatten(),
                    };
                    l.extend(c);
                }
            }
            Ok(Event::End(e))
                if e.local_name().as_ref().eq_ignore_ascii_case("loc")
                    || e.local_name().as_ref().eq_ignore_ascii_case("lastmod") =>
            {
                if let Some(l) = loc.take() {
                    let text = l.trim().to_string();
                    if in_loc {
                        locs.push(SitemapUrl {
                            loc: text,
                            lastmod: None,
                        });
                    } else if let Some(last) = locs.last_mut() {
                        last.lastmod = super::dates::parse_instant(&text, None);
                    }
                }
            }
            Ok(Event::Eof) => break,
            Err(e) => return Err(SitemapError(e.to_string())),
            _ => {}
        }
        if locs.len() >= MAX_LOCS {
            break;
        }
        buf.clear();
    }
    locs.retain(|l| !l.loc.is_empty());
    match root.as_deref() {
        Some("urlset") => Ok(Sitemap::Urls(locs)),
        Some(_) => Ok(Sitemap::Index(locs.into_iter().map(|l| l.loc).collect())),
        None => Err(SitemapError("empty document".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urlsets_indexes_and_garbage() {
        let set = br#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://a.b/x?a=1&amp;b=2</loc><lastmod>2025-10-01</lastmod></url><url><loc> http://a.b/y </loc></url></urlset>"#;
        let Sitemap::Urls(urls) = parse(set).unwrap() else {
            panic!("a urlset")
        };
        let locs: Vec<&str> = urls.iter().map(|u| u.loc.as_str()).collect();
        assert_eq!(locs, ["http://a.b/x?a=1&b=2", "http://a.b/y"]);
        assert_eq!(
            urls[0].lastmod.map(|d| d.to_rfc3339()).as_deref(),
            Some("2025-10-01T00:00:00+00:00")
        );
        assert_eq!(urls[1].lastmod, None);
        let idx =
            br#"<sitemapindex><sitemap><loc>http://a.b/s1.xml</loc></sitemap></sitemapindex>"#;
        assert_eq!(
            parse(idx).unwrap(),
            Sitemap::Index(vec!["http://a.b/s1.xml".into()])
        );
        assert!(parse(b"<html><body>404</body></html>").is_err());
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, set).unwrap();
        assert!(matches!(parse(&gz.finish().unwrap()).unwrap(), Sitemap::Urls(v) if v.len() == 2));
    }
}
