//! A page's character encoding as the HTML Standard determines it (§13.2.3.2, "determining the
//! character encoding"): a byte order mark, else the HTTP `Content-Type` charset, else the
//! `<meta>` prescan of the first 1,024 bytes, else a content detector (chardetng, Firefox's).
//! The prescan is written here, step for step, because no maintained crate offers it (html5ever
//! leaves it to its users); the encodings themselves are `encoding_rs`, the WHATWG Encoding
//! Standard's implementation. A `charset=` in a `<script>` tag or an attribute value is not a
//! declaration, and a declaration past the first 1,024 bytes is left to the detector.

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252, X_USER_DEFINED};

/// Bytes the `<meta>` prescan reads, as the HTML Standard advises.
pub const PRESCAN_BYTES: usize = 1024;

/// Bytes the content detector reads when nothing declares the encoding.
const DETECT_BYTES: usize = 64 * 1024;

/// The encoding of an HTML body whose `Content-Type` charset label (if any) is `header`:
/// BOM, header, prescan (UTF-8 instead of a legacy encoding it names when the whole body is
/// valid UTF-8 beyond ASCII), then chardetng over the first 64 KB.
pub fn html_encoding(body: &[u8], header: Option<&str>) -> &'static Encoding {
    if let Some((e, _)) = Encoding::for_bom(body) {
        return e;
    }
    if let Some(e) = header.and_then(label) {
        return e;
    }
    if let Some(e) = prescan(&body[..body.len().min(PRESCAN_BYTES)]) {
        // A page re-saved as UTF-8 that kept its old `<meta charset=gb2312>`: a body that is
        // valid UTF-8 and not ASCII alone is almost never text in a legacy multi-byte or
        // single-byte encoding, so UTF-8 wins over the declaration (browsers follow the
        // declaration and show mojibake; the text is what an archive reads).
        if e != UTF_8 && !body.is_ascii() && std::str::from_utf8(body).is_ok() {
            return UTF_8;
        }
        return e;
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    let sample = &body[..body.len().min(DETECT_BYTES)];
    detector.feed(sample, sample.len() == body.len());
    detector.guess(None, chardetng::Utf8Detection::Allow)
}

/// The encoding an encoding label names (trimmed, quotes around it dropped), as the Encoding
/// Standard's "get an encoding".
pub fn label(raw: &str) -> Option<&'static Encoding> {
    Encoding::for_label(raw.trim().trim_matches(['"', '\'']).trim().as_bytes())
}

fn is_space(b: u8) -> bool {
    matches!(b, 0x09 | 0x0A | 0x0C | 0x0D | 0x20)
}

/// The HTML Standard's "prescan a byte stream to determine its encoding" over `bytes`: the
/// encoding the first `<meta charset>` or `<meta http-equiv=content-type content="…charset=…">`
/// declares, skipping comments, other tags and their attributes.
pub fn prescan(bytes: &[u8]) -> Option<&'static Encoding> {
    let at = |i: usize, s: &[u8]| {
        bytes.len() >= i + s.len() && bytes[i..i + s.len()].eq_ignore_ascii_case(s)
    };
    let mut i = 0;
    while i < bytes.len() {
        if at(i, b"<!--") {
            // Past the first "-->" whose dashes follow the "<!".
            let from = i + 2;
            i = match bytes[from..].windows(3).position(|w| w == b"-->") {
                Some(p) => from + p + 3,
                None => return None,
            };
            continue;
        }
        if at(i, b"<meta") && bytes.get(i + 5).is_some_and(|&b| is_space(b) || b == b'/') {
            i += 6;
            let mut names: Vec<Vec<u8>> = Vec::new();
            let (mut got_pragma, mut need_pragma, mut charset) = (false, None, None);
            while let Some((name, value, next)) = attribute(bytes, i) {
                i = next;
                if names.contains(&name) {
                    continue;
                }
                match name.as_slice() {
                    b"http-equiv" => got_pragma |= value == b"content-type",
                    b"content" if charset.is_none() => {
                        if let Some(e) = charset_in_content(&value) {
                            charset = Some(Some(e));
                            need_pragma = Some(true);
                        }
                    }
                    b"charset" => {
                        charset = Some(std::str::from_utf8(&value).ok().and_then(label));
                        need_pragma = Some(false);
                    }
                    _ => {}
                }
                names.push(name);
            }
            // No attribute left: the tag is read to its end (or the bytes ran out).
            let declared = match need_pragma {
                None => None,
                Some(true) if !got_pragma => None,
                Some(_) => charset.flatten(),
            };
            if let Some(e) = declared {
                return Some(if e == UTF_16BE || e == UTF_16LE {
                    UTF_8
                } else if e == X_USER_DEFINED {
                    WINDOWS_1252
                } else {
                    e
                });
            }
            continue;
        }
        let letter_at = |j: usize| bytes.get(j).is_some_and(u8::is_ascii_alphabetic);
        if bytes[i] == b'<'
            && (letter_at(i + 1) || (bytes.get(i + 1) == Some(&b'/') && letter_at(i + 2)))
        {
            // Another tag: its name, then its attributes, are skipped.
            while i < bytes.len() && !is_space(bytes[i]) && bytes[i] != b'>' {
                i += 1;
            }
            while let Some((_, _, next)) = attribute(bytes, i) {
                i = next;
            }
            i += 1;
            continue;
        }
        if at(i, b"<!") || at(i, b"</") || at(i, b"<?") {
            i = match bytes[i..].iter().position(|&b| b == b'>') {
                Some(p) => i + p + 1,
                None => return None,
            };
            continue;
        }
        i += 1;
    }
    None
}

/// The HTML Standard's "get an attribute" from position `i`: (lower-cased name, value with
/// ASCII upper case lowered, the position after it). `None` at the tag's `>` or when the bytes
/// run out.
fn attribute(bytes: &[u8], mut i: usize) -> Option<(Vec<u8>, Vec<u8>, usize)> {
    let lower = |b: u8| b.to_ascii_lowercase();
    while i < bytes.len() && (is_space(bytes[i]) || bytes[i] == b'/') {
        i += 1;
    }
    if *bytes.get(i)? == b'>' {
        return None;
    }
    let mut name = Vec::new();
    let mut value = Vec::new();
    loop {
        let b = *bytes.get(i)?;
        if b == b'=' && !name.is_empty() {
            i += 1;
            break;
        }
        if is_space(b) {
            while is_space(*bytes.get(i)?) {
                i += 1;
            }
            if bytes[i] != b'=' {
                return Some((name, value, i));
            }
            i += 1;
            break;
        }
        if b == b'/' || b == b'>' {
            return Some((name, value, i));
        }
        name.push(lower(b));
        i += 1;
    }
    while is_space(*bytes.get(i)?) {
        i += 1;
    }
    let b = *bytes.get(i)?;
    if b == b'"' || b == b'\'' {
        i += 1;
        loop {
            let c = *bytes.get(i)?;
            i += 1;
            if c == b {
                return Some((name, value, i));
            }
            value.push(lower(c));
        }
    }
    if b == b'>' {
        return Some((name, value, i));
    }
    loop {
        let c = *bytes.get(i)?;
        if is_space(c) || c == b'>' {
            return Some((name, value, i));
        }
        value.push(lower(c));
        i += 1;
    }
}

/// The HTML Standard's "extracting a character encoding from a meta element": the encoding a
/// `content` attribute's `charset=…` names.
fn charset_in_content(content: &[u8]) -> Option<&'static Encoding> {
    let mut i = 0;
    loop {
        let p = content[i..]
            .windows(7)
            .position(|w| w.eq_ignore_ascii_case(b"charset"))?;
        i += p + 7;
        while content.get(i).is_some_and(|&b| is_space(b)) {
            i += 1;
        }
        if content.get(i) == Some(&b'=') {
            i += 1;
            break;
        }
    }
    while content.get(i).is_some_and(|&b| is_space(b)) {
        i += 1;
    }
    let rest = &content[i..];
    let value = match rest.first()? {
        &q @ (b'"' | b'\'') => {
            let end = rest[1..].iter().position(|&b| b == q)?;
            &rest[1..1 + end]
        }
        _ => {
            let end = rest
                .iter()
                .position(|&b| is_space(b) || b == b';')
                .unwrap_or(rest.len());
            &rest[..end]
        }
    };
    std::str::from_utf8(value).ok().and_then(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prescan_reads_declarations_not_scripts_or_comments() {
        assert_eq!(
            prescan(b"<meta charset=shift_jis>"),
            Some(encoding_rs::SHIFT_JIS)
        );
        assert_eq!(
            prescan(br#"<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-2">"#),
            Some(encoding_rs::ISO_8859_2)
        );
        // A content charset without the pragma declares nothing.
        assert_eq!(
            prescan(br#"<meta content="text/html; charset=koi8-r">"#),
            None
        );
        // A script's charset attribute, an attribute value, a comment: no declaration.
        assert_eq!(
            prescan(br#"<script charset="windows-1251" src=x.js></script><a title="charset=koi8-r"></a><!-- <meta charset=big5> --><meta charset="utf-8">"#),
            Some(UTF_8)
        );
        // UTF-16 declared in ASCII bytes is UTF-8 (the declaration could not have been read).
        assert_eq!(prescan(b"<meta charset=utf-16le>"), Some(UTF_8));
    }

    #[test]
    fn bom_then_header_then_prescan_then_detection() {
        let latin = b"<html><head><meta charset=iso-8859-1></head><body>caf\xe9</body></html>";
        assert_eq!(html_encoding(latin, None), WINDOWS_1252);
        assert_eq!(html_encoding(latin, Some("utf-8")), UTF_8);
        let bom = b"\xef\xbb\xbf<meta charset=iso-8859-1>caf\xc3\xa9";
        assert_eq!(html_encoding(bom, Some("iso-8859-1")), UTF_8);
        // A declaration past the first 1,024 bytes is not read; the detector sees Cyrillic.
        let mut late = vec![b' '; 2000];
        late.extend_from_slice(b"<meta charset=utf-8><p>");
        late.extend_from_slice(
            &encoding_rs::WINDOWS_1251
                .encode("Привет, как дела? Это тест кодировки страницы.")
                .0,
        );
        assert_eq!(html_encoding(&late, None), encoding_rs::WINDOWS_1251);
        // Re-saved as UTF-8 with its old declaration kept: the bytes win over the prescan
        // (not over the header); ASCII alone follows the declaration.
        let resaved = "<meta charset=gb2312><p>腾讯新闻，事实派。</p>".as_bytes();
        assert_eq!(html_encoding(resaved, None), UTF_8);
        assert_eq!(
            html_encoding(resaved, Some("gb2312")),
            encoding_rs::GBK,
            "a header is the server's word"
        );
        let gbk = encoding_rs::GBK
            .encode("<meta charset=gb2312><p>腾讯新闻，事实派。</p>")
            .0;
        assert_eq!(html_encoding(&gbk, None), encoding_rs::GBK);
        assert_eq!(
            html_encoding(b"<meta charset=gb2312><p>ascii</p>", None),
            encoding_rs::GBK
        );
    }
}
