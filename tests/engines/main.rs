//! The slow tests: whole blogs built by real engines (Pelican, Hexo, Nikola, WordPress, real
//! themes) archived end to end and scored against their ground truth, updates and backfills,
//! daemons sharing jobs, the frontier on a large site, exports and the web-archive tools
//! (Python, pinned), the render stage and the reader driven in real Chromium, and comment
//! widgets served by real self-hosted comment servers (`widgets`). One test
//! binary (one link of the crate) for all of them; each file is a module, run as threads of one
//! process.
//!
//! `tests/render_faults.rs` stays a test binary of its own: it kills every everblog Chromium and
//! counts those left, so it must not run beside the render tests here.

#[path = "../common/mod.rs"]
mod common;

/// Blogs are added as a user adds them: `--render auto` unless a test asks otherwise.
const RENDER_BY_DEFAULT: Option<&str> = None;

mod backfill;
mod browser_traffic;
mod charts;
mod comments_authors_dates;
mod daemon;
mod downloads;
mod exports;
mod fixture_blogs;
mod frontier;
mod health;
mod reader;
mod reader_media;
mod real_themes;
mod render;
mod render_holdout;
mod replay_links;
mod replay_scripts;
mod replaywebpage;
mod revisits;
mod update_crawl;
mod webarchive;
mod widgets;
mod wxr_readers;
mod wxr_restore;
