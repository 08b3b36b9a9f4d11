//! `archive add`: adds blogs (a feed or home page URL each, or a list) and queues their
//! NewCrawl; prints what was added.

use super::archive::open;
use crate::config::Config;
use crate::crawl::{self, links::site_of};
use crate::store::DatabaseSettings;
use crate::store::{JobKind, RenderMode};
use anyhow::{bail, Context, Result};

/// Whether `archive add` ends by saying what to run next: not when the demo crawls at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NextStep {
    /// "next: archive crawl".
    Say,
    /// Nothing: the caller goes on itself.
    Quiet,
}

/// Adds each URL; with one URL its error is the command's error, with several each failure is
/// printed and the command fails at the end if any did.
pub(super) async fn add(
    db: &DatabaseSettings,
    config: &Config,
    urls: &[String],
    start: Option<&str>,
    render: RenderMode,
    next: NextStep,
) -> Result<()> {
    let mut store = open(db)?;
    let fetcher = config.fetcher(None)?;
    let mut failed = 0;
    for u in urls {
        let mut result = crawl::add(&mut store, &fetcher, u).await;
        if let (Ok(a), Some(start)) = (&mut result, start) {
            let s = url::Url::parse(start)
                .with_context(|| format!("--start {start:?} is not a URL"))?;
            let home = url::Url::parse(&a.blog.home_url)?;
            if site_of(&s) != site_of(&home) {
                bail!(
                    "--start {start} is not on the blog's site ({})",
                    site_of(&home)
                );
            }
            store.set_start_url(a.blog.id, s.as_str())?;
            a.blog.start_url = Some(s.to_string());
        }
        if let Ok(a) = &result {
            if a.blog.render != render && (!a.already || render != RenderMode::Auto) {
                store.set_render_mode(a.blog.id, render)?;
            }
        }
        match result {
            Err(e) if urls.len() == 1 => return Err(e),
            Ok(a) if a.already => println!(
                "{} is already in the archive (feed {}); nothing to do",
                a.blog.home_url, a.blog.feed_url
            ),
            Ok(a) => {
                store.enqueue_job(a.blog.id, JobKind::NewCrawl)?;
                println!(
                    "added {}",
                    a.blog.title.as_deref().unwrap_or("(untitled blog)")
                );
                println!("  home   {}", a.blog.home_url);
                println!(
                    "  feed   {} ({}, {} entries)",
                    a.blog.feed_url,
                    a.blog.feed_kind.label(),
                    a.feed.entries.len()
                );
                let summaries = a
                    .feed
                    .entries
                    .iter()
                    .filter(|e| e.content_html.is_none())
                    .count();
                if summaries > 0 {
                    println!("  note   {summaries} entries carry only a summary; rules are learned from those");
                }
                if next == NextStep::Say {
                    println!(
                    "next: archive crawl (or a running `archive daemon` takes it within seconds)"
                );
                }
            }
            Err(e) => {
                failed += 1;
                eprintln!("error: {e:#}");
            }
        }
    }
    if failed > 0 {
        bail!("{failed} of {} URLs could not be added", urls.len());
    }
    Ok(())
}
