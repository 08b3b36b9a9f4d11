//! A body's encoding as `fetch::decode` determines it (`fetch::charset`: BOM, `Content-Type`
//! charset, the `<meta>` prescan, chardetng) and the decoding itself, on arbitrary bytes.
//!
//! Input: the first line is a `Content-Type` value (empty: none), the rest is the body.
#![no_main]

mod body {
    include!("../bodies/charset.rs");
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
