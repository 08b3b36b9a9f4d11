//! The quick tests: the architecture's invariants, rule learning on the corpus and the fast
//! path, and the real `archive` binary on small fixture blogs (errors, coverage, resumed
//! crawls, the fallback extractor, hostile input, pinned regressions). No browser, no
//! PostgreSQL, no Python tools: the binary to run while working. One test binary (one link of
//! the crate) for all of them; each file is a module, run as threads of one process.

#[path = "../common/mod.rs"]
mod common;

/// The quick suite runs no browser: blogs are added with `--render never` (`EVERBLOG_RENDER`)
/// unless a test asks otherwise.
const RENDER_BY_DEFAULT: Option<&str> = Some("never");

mod cli_errors;
mod corpus_rules;
mod coverage;
mod crawl_resume;
mod fallback;
mod fuzz_regressions;
mod fuzz_seeds;
mod hostile;
mod reader_pages;
mod regression;
mod rules_fast_path;
mod serve_limits;
mod tidy;
