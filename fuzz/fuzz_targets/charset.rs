//! A body's encoding as `fetch::decode` determines it (`fetch::charset`: BOM, `Content-Type`
//! charset, the `<meta>` prescan, chardetng) and the decoding itself, on arbitrary bytes.
//!
//! Input: the first line is a `Content-Type` value (empty: none), the rest is the body.
#![no_main]

use everblog::fetch::charset::{self, PRESCAN_BYTES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (header, body) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&b""[..], data),
    };
    let content_type = std::str::from_utf8(header)
        .ok()
        .filter(|h| !h.is_empty())
        .map(str::to_ascii_lowercase);
    let _ = charset::prescan(body);
    let _ = charset::prescan(&body[..body.len().min(PRESCAN_BYTES)]);
    if let Ok(h) = std::str::from_utf8(header) {
        let _ = charset::label(h);
        let _ = charset::html_encoding(body, Some(h));
    }
    let _ = charset::html_encoding(body, None);
    let _ = everblog::fetch::decode_body(body, content_type.as_deref());
});
