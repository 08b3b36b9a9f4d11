//! A fetched page as `crawl::page::process` reads it: `Page::parse`, the followable links,
//! rule extraction (`core::extract::extract` with a small `RuleSet` of every rule form) and
//! the generic extractor (`core::fallback`), the blog's judgement of a permalink-shaped page
//! (`core::identify::judge`), the listing heuristics (`core::listing`), comments by class
//! (`core::comments`) and the page's requisites (`core::requisites`).
#![no_main]

mod body {
    include!("../bodies/page.rs");
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
