//! `archive status`, `archive coverage` and `archive report`: the open alerts, the blogs (posts,
//! crawl state, rendering, last and next
//! update, error streak) and the job queue.

use super::archive::{find, open_to_read};
use crate::store::{BlogId, DatabaseSettings, Store};
use crate::store::{Coverage, Job, JobState, OpenAlert, RenderMode, Renders, RevisitFigures};
use anyhow::{bail, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use std::collections::BTreeMap;
use std::time::Duration;

fn when(t: Option<DateTime<Utc>>, none: &str) -> String {
    t.map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
        .unwrap_or_else(|| none.to_string())
}

/// One blog in `archive status --json`.
#[derive(serde::Serialize)]
struct BlogStatus {
    home_url: String,
    feed_url: String,
    title: Option<String>,
    posts: u64,
    fetches: u64,
    errors: u64,
    queued: u64,
    crawl_started_at: Option<DateTime<Utc>>,
    crawled_at: Option<DateTime<Utc>>,
    last_update_at: Option<DateTime<Utc>>,
    next_update_at: Option<DateTime<Utc>>,
    errors_in_a_row: u32,
    last_error: Option<String>,
    render: RenderMode,
    renders: Option<Renders>,
    render_reason: Option<String>,
    coverage: Coverage,
}

/// `archive status --json`: the open alerts, the blogs, the states of the latest 50 jobs, the
/// jobs not done among them.
#[derive(serde::Serialize)]
struct StatusReport {
    alerts: Vec<OpenAlert>,
    blogs: Vec<BlogStatus>,
    latest_jobs: BTreeMap<JobState, usize>,
    jobs: Vec<Job>,
}

/// Prints the blogs and the latest 50 jobs (the ones not done, at most 20, in detail); with
/// `json`, the same as one JSON object (`StatusReport`) for scripts.
pub(super) fn status(db: &DatabaseSettings, revisit_within: Duration, json: bool) -> Result<()> {
    let store = open_to_read(db)?;
    let blogs = store.blogs()?;
    let jobs = store.jobs(50)?;
    let alerts = store.open_alerts()?;
    if json {
        let report = StatusReport {
            alerts,
            blogs: blogs
                .iter()
                .map(|b| {
                    let c = store.counts(b.id)?;
                    let coverage = coverage_with_revisits(&store, b.id, revisit_within)?;
                    Ok(BlogStatus {
                        home_url: b.home_url.clone(),
                        feed_url: b.feed_url.clone(),
                        title: b.title.clone(),
                        posts: c.posts,
                        fetches: c.fetches,
                        errors: c.errors,
                        queued: c.queued,
                        crawl_started_at: b.crawl_started_at,
                        crawled_at: b.crawled_at,
                        last_update_at: b.last_update_at,
                        next_update_at: b.next_update_at,
                        errors_in_a_row: b.errors_in_a_row,
                        last_error: b.last_error.clone(),
                        render: b.render,
                        renders: b.renders,
                        render_reason: b.render_reason.clone(),
                        coverage,
                    })
                })
                .collect::<Result<_>>()?,
            latest_jobs: JobState::ALL
                .iter()
                .map(|st| (*st, jobs.iter().filter(|j| j.state == *st).count()))
                .collect(),
            jobs: jobs
                .into_iter()
                .filter(|j| j.state != JobState::Done)
                .take(20)
                .collect(),
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    if !alerts.is_empty() {
        println!("alerts ({})", alerts.len());
        for a in &alerts {
            println!(
                "  {} {}{} (since {})",
                a.alert.kind,
                a.alert
                    .blog
                    .as_deref()
                    .map(|b| format!("{b}: "))
                    .unwrap_or_default(),
                a.alert.message,
                when(Some(a.raised_at), "")
            );
        }
    }
    println!("blogs ({})", blogs.len());
    for b in &blogs {
        let c = store.counts(b.id)?;
        let state = match (b.crawled_at, b.crawl_started_at) {
            (Some(at), _) => format!("crawled {}", when(Some(at), "")),
            (None, Some(_)) => format!("crawl in progress, {} queued", c.queued),
            (None, None) => "never crawled".into(),
        };
        println!(
            "  {}  {} posts · {} errors · {state}",
            b.home_url, c.posts, c.errors
        );
        if let Some(r) = b.renders {
            println!(
                "      renders: {r} ({}; --render {})",
                b.render_reason.as_deref().unwrap_or("-"),
                b.render
            );
        }
        println!(
            "      last update {} · next update {}",
            when(b.last_update_at, "never"),
            when(b.next_update_at, "not scheduled")
        );
        let c = store.coverage(b.id)?;
        println!("      coverage: {}", coverage_line(&c));
        let r = store.revisit_figures(b.id, Utc::now(), revisit_within)?;
        println!("      revisits: {}", revisit_line(&r, revisit_within));
        if b.errors_in_a_row > 0 {
            println!(
                "      {} failed job(s) in a row, backing off; last error: {}",
                b.errors_in_a_row,
                b.last_error.as_deref().unwrap_or("?")
            );
        }
    }
    let count = |st: JobState| jobs.iter().filter(|j| j.state == st).count();
    println!(
        "jobs: {} queued · {} running · {} done · {} failed (latest 50)",
        count(JobState::Queued),
        count(JobState::Running),
        count(JobState::Done),
        count(JobState::Failed)
    );
    for j in jobs.iter().filter(|j| j.state != JobState::Done).take(20) {
        let blog = blogs
            .iter()
            .find(|b| b.id == j.blog_id)
            .map_or("?", |b| b.home_url.as_str());
        println!("  {}", job_line(j, blog));
    }
    Ok(())
}

/// One line of coverage: posts archived of known, comments archived of declared, missing.
pub(crate) fn coverage_line(c: &Coverage) -> String {
    format!(
        "{}/{} posts · {}/{} declared comments · {} missing",
        c.counts.posts_archived,
        c.counts.posts_known,
        c.counts.comments_archived,
        c.counts.comments_declared,
        c.missing()
    )
}

/// One line of revisits (issue 30): posts fetched within the window, the longest any went
/// without a fetch, and the edits, deletions and moves found.
fn revisit_line(r: &RevisitFigures, within: Duration) -> String {
    let oldest = r.oldest_fetch.map_or("-".to_string(), |t| {
        let days = (Utc::now() - t).num_hours() as f64 / 24.0;
        format!("{} ({days:.1} days ago)", when(Some(t), ""))
    });
    format!(
        "{}/{} posts fetched within {} · oldest fetch {oldest} · {} edits kept · {} gone · {} moved",
        r.within_window,
        r.posts,
        humantime::format_duration(within),
        r.edits,
        r.gone,
        r.moved
    )
}

/// Blog `id`'s coverage with what revisits found within `revisit_within`, as `archive coverage
/// --json` and `archive status --json` print it.
fn coverage_with_revisits(store: &Store, id: BlogId, revisit_within: Duration) -> Result<Coverage> {
    let mut c = store.coverage(id)?;
    c.revisits = Some(store.revisit_figures(id, Utc::now(), revisit_within)?);
    Ok(c)
}

/// `archive coverage`: the coverage report of one blog or all; fails (exit 1) when something
/// known is missing.
pub(super) fn coverage(
    db: &DatabaseSettings,
    blog: Option<&str>,
    json: bool,
    revisit_within: Duration,
) -> Result<()> {
    let store = open_to_read(db)?;
    let blogs = match blog {
        Some(b) => vec![find(&store, b)?],
        None => store.blogs()?,
    };
    let reports: Vec<Coverage> = blogs
        .iter()
        .map(|b| coverage_with_revisits(&store, b.id, revisit_within))
        .collect::<Result<_>>()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    } else {
        for (b, c) in blogs.iter().zip(&reports) {
            print_coverage(b.title.as_deref().unwrap_or("(untitled blog)"), c);
            if let Some(r) = &c.revisits {
                println!("  revisits  {}", revisit_line(r, revisit_within));
            }
        }
    }
    let missing: u64 = reports.iter().map(Coverage::missing).sum();
    if missing > 0 {
        bail!("{missing} known posts or comments are not archived (see above)");
    }
    Ok(())
}

fn print_coverage(title: &str, c: &Coverage) {
    let date = |d: Option<chrono::DateTime<chrono::FixedOffset>>| {
        d.map(|d| d.format("%Y-%m-%d").to_string())
            .unwrap_or_else(|| "-".into())
    };
    println!("{title} ({})", c.blog);
    let by: Vec<String> = c
        .posts_known_by
        .iter()
        .map(|(s, n)| format!("{s} {n}"))
        .collect();
    println!(
        "  posts     {} known ({}) · {} archived · {} missing · {} gone from the blog (kept) · {} pages shaped like posts are none",
        c.counts.posts_known,
        by.join(", "),
        c.counts.posts_archived,
        c.posts_missing.len(),
        c.counts.posts_gone,
        c.not_posts.len()
    );
    if !c.pages.is_empty() {
        println!(
            "  pages     {} beside the posts, archived as pages: {}",
            c.pages.len(),
            c.pages.join(", ")
        );
    }
    println!(
        "  comments  {} declared · {} archived · {} missing",
        c.counts.comments_declared,
        c.counts.comments_archived,
        c.comments_missing
            .iter()
            .map(|m| m.declared.saturating_sub(m.archived))
            .sum::<u64>()
    );
    println!(
        "  dates     {} … {} · last verified {}",
        date(c.counts.oldest_post),
        date(c.counts.newest_post),
        when(c.counts.verified_at, "never")
    );
    for m in &c.posts_missing {
        println!(
            "  missing   {} ({}{}; last tried {})",
            m.url,
            m.state,
            m.error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default(),
            when(m.last_attempt, "never")
        );
    }
    for m in &c.not_posts {
        println!(
            "  not a post {} ({})",
            m.url,
            m.error.as_deref().unwrap_or("no reason kept")
        );
    }
    for m in &c.comments_missing {
        println!(
            "  comments  {}: {} declared, {} archived",
            m.url, m.declared, m.archived
        );
    }
}

fn job_line(j: &Job, blog: &str) -> String {
    let lease = j
        .owner
        .as_deref()
        .map(|o| format!(" · {o} until {}", when(j.lease_until, "-")))
        .unwrap_or_default();
    let error = j
        .error
        .as_deref()
        .map(|e| format!(" · error: {e}"))
        .unwrap_or_default();
    let due = match (j.not_before, j.state) {
        (Some(t), JobState::Queued) => format!(" · due {}", when(Some(t), "")),
        _ => String::new(),
    };
    format!("#{} {} {} {blog}{due}{lease}{error}", j.id, j.kind, j.state)
}

/// `archive report`: `blog`'s history (posts and comments per month, crawls, revisits, in
/// charts) as one HTML file at `output`, written beside it and renamed.
pub(super) fn report(db: &DatabaseSettings, blog: &str, output: &std::path::Path) -> Result<()> {
    let store = open_to_read(db)?;
    let blog = find(&store, blog)?;
    let html = store.snapshot(|s| crate::serve::history::report(s, &blog))?;
    super::export::write_file(output, |w| Ok(w.write_all(html.as_bytes())?))?;
    eprintln!(
        "wrote {} ({} bytes): {}'s history",
        output.display(),
        html.len(),
        blog.home_url
    );
    Ok(())
}
