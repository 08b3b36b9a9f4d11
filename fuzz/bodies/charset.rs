// The body of the `charset` fuzz target: `fuzz_targets/charset.rs` wraps it for libFuzzer (and
// says what it runs); `tests/fast/fuzz_seeds.rs` runs it on every seed of `corpus/charset/`.

use everblog::fetch::charset::{self, PRESCAN_BYTES};

/// The target's body: one input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
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
}
