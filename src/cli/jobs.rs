//! `archive crawl` and `archive update`: a blog's NewCrawl or UpdateCrawl run now, in the
//! foreground, as a worker of its own under the blog's job lease (so no daemon runs it at the
//! same time) and with the daemon's job lifecycle (`daemon::Worker::run_leased`); the summary
//! is printed.

use super::archive::{find, open};
use super::progress::Bar;
use crate::config::Config;
use crate::core::rules::Field;
use crate::crawl::{CrawlSummary, UpdateSummary};
use crate::daemon::{stop_on_signals, Ran, Report};
use crate::store::DatabaseSettings;
use crate::store::{Blog, JobFilter, JobKind, Store};
use anyhow::{bail, Result};
use std::sync::atomic::Ordering;

/// Runs `kind` for each blog under a lease of its own, printing each outcome.
/// Returns the reports of the jobs that ran.
async fn run_each(
    db: &DatabaseSettings,
    config: &Config,
    store: &mut Store,
    blogs: Vec<Blog>,
    kind: JobKind,
) -> Result<Vec<(Blog, Report)>> {
    let stop = stop_on_signals()?;
    let worker = config.worker(db, format!("cli:{}", std::process::id()), stop.clone())?;
    let mut out = Vec::new();
    let (mut failed, mut stopped) = (0, false);
    for b in blogs {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        match kind {
            JobKind::NewCrawl => store.enqueue_job(b.id, kind)?,
            JobKind::UpdateCrawl => store.schedule_job(b.id, kind, chrono::Utc::now())?,
        };
        let filter = JobFilter {
            blog_id: Some(b.id),
            kind: Some(kind),
        };
        let Some(job) = worker.lease(store, filter)? else {
            println!(
                "{} is being crawled by a daemon right now; skipped",
                b.home_url
            );
            continue;
        };
        let bar = Bar::new(b.title.as_deref().unwrap_or(&b.home_url));
        let started = std::time::Instant::now();
        let ran = worker.run_leased(store, &job, &bar).await;
        bar.0.finish_and_clear();
        let elapsed = started.elapsed();
        let ran = ran?;
        stopped |= matches!(ran, Ran::Stopped(_));
        match ran {
            Ran::Done(r) | Ran::Stopped(r) => {
                match &r {
                    Report::NewCrawl(s) => print_crawl(&b, s, elapsed),
                    Report::UpdateCrawl(s) => print_update(&b, s, elapsed),
                }
                out.push((b, r));
            }
            Ran::Failed(e) => {
                failed += 1;
                eprintln!("error: {}: {e:#}", b.home_url);
            }
        }
    }
    let (what, again) = match kind {
        JobKind::NewCrawl => ("crawled", "archive crawl"),
        JobKind::UpdateCrawl => ("updated", "archive update"),
    };
    if stopped || stop.load(Ordering::Relaxed) {
        bail!("interrupted: stopped after the pages in flight were saved; run `{again}` again to resume");
    }
    if failed > 0 {
        bail!("{failed} blog(s) could not be {what}");
    }
    Ok(out)
}

/// `archive crawl`: NewCrawl of one blog, or of every blog not yet completely crawled.
pub(super) async fn crawl(
    db: &DatabaseSettings,
    blog: Option<&str>,
    config: &Config,
) -> Result<Vec<(Blog, Report)>> {
    let mut store = open(db)?;
    let blogs = match blog {
        Some(b) => vec![find(&store, b)?],
        None => store
            .blogs()?
            .into_iter()
            .filter(|b| b.crawled_at.is_none())
            .collect(),
    };
    if blogs.is_empty() {
        println!("every blog in the archive is completely crawled; `archive add` adds another");
        return Ok(Vec::new());
    }
    run_each(db, config, &mut store, blogs, JobKind::NewCrawl).await
}

/// `archive update`: UpdateCrawl now of one blog or of every crawled blog; the next one is
/// scheduled as the daemon would.
pub(super) async fn update(
    db: &DatabaseSettings,
    blog: Option<&str>,
    config: &Config,
) -> Result<()> {
    let mut store = open(db)?;
    let blogs = match blog {
        Some(b) => vec![find(&store, b)?],
        None => store.blogs()?,
    };
    let mut ready = Vec::new();
    for b in blogs {
        if b.crawled_at.is_some() || !store.rules(b.id)?.is_empty() {
            ready.push(b);
        } else {
            println!("{}: never crawled; run `archive crawl` first", b.home_url);
        }
    }
    run_each(db, config, &mut store, ready, JobKind::UpdateCrawl)
        .await
        .map(|_| ())
}

fn print_crawl(b: &Blog, s: &CrawlSummary, elapsed: std::time::Duration) {
    println!(
        "{} ({})",
        b.title.as_deref().unwrap_or("(untitled blog)"),
        b.home_url
    );
    let deferred;
    let state = if s.complete {
        "crawl complete"
    } else if let Some((n, at)) = s.deferred {
        deferred = format!(
            "crawl incomplete ({n} pages deferred until {}: the server asked to retry later; `archive crawl` then, or a running daemon, resumes)",
            at.format("%Y-%m-%d %H:%M UTC")
        );
        &deferred
    } else if s.stopped {
        "crawl incomplete (stopped; run crawl again to resume)"
    } else {
        "crawl incomplete (page budget reached; run crawl again to resume)"
    };
    println!(
        "  {state} · {} posts archived · {} pages fetched · {} errors · {:.1}s",
        s.posts,
        s.pages_fetched,
        s.errors,
        elapsed.as_secs_f64()
    );
    println!(
        "  last new post at page {} of this run · {:.1} posts estimated unseen · {} blocked by robots.txt · {} refused (private addresses) · {} links over the per-template cap · {} posts from sitemaps · {} pages rendered in {:.1} s ({} posts not rendered: their comment widget's data held no comment) · stopped: {}",
        s.pages_at_last_post, s.unseen_estimate, s.blocked, s.refused, s.trapped, s.sitemap_posts, s.rendered, s.render_seconds, s.render_skipped, s.stop_reason
    );
    if s.not_posts + s.unread > 0 {
        println!(
            "  pages shaped like posts: {} no post on the blog's evidence (listings, copies) · {} unread, possibly lost posts (see archive coverage)",
            s.not_posts, s.unread
        );
        for (u, state, why) in &s.declined_samples {
            println!("  {state} {u}: {why}");
        }
    }
    if s.browser.requests > 0 {
        println!("  {}", s.browser);
    }
    if s.media.posts > 0 {
        println!("  {}", s.media);
    }
    let marks = |f: Field| s.rules.iter().filter(|r| r.field == f).count();
    let (post_marks, listing_marks) = (marks(Field::PostMark), marks(Field::ListingMark));
    if post_marks + listing_marks > 0 {
        println!(
            "  post identification: {post_marks} post marks, {listing_marks} listing marks (archive rules lists them)"
        );
    }
    for r in s
        .rules
        .iter()
        .filter(|r| !matches!(r.field, Field::PostMark | Field::ListingMark))
    {
        println!(
            "  rule {:<8} {}  (score {:.2}, {} of {} entries voted)",
            r.field.as_str(),
            r.xpath,
            r.score,
            r.votes,
            r.samples
        );
    }
    for (u, why) in &s.error_samples {
        println!("  error {u}: {why}");
    }
}

fn print_update(b: &Blog, s: &UpdateSummary, elapsed: std::time::Duration) {
    println!(
        "{} ({}): {s} · {:.1}s",
        b.title.as_deref().unwrap_or("(untitled blog)"),
        b.home_url,
        elapsed.as_secs_f64()
    );
    if s.browser.requests > 0 {
        println!(
            "  {} pages rendered in {:.1} s · {}",
            s.rendered.0, s.rendered.1, s.browser
        );
    }
    if s.media.posts > 0 {
        println!("  {}", s.media);
    }
}
