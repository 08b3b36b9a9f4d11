//! `archive status`: the blogs (posts, crawl state, rendering, last and next update, error
//! streak) and the job queue.

use super::open_to_read;
use crate::store::{Job, JobState};
use anyhow::Result;
use chrono::{DateTime, SecondsFormat, Utc};
use std::path::Path;

fn when(t: Option<DateTime<Utc>>, none: &str) -> String {
    t.map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
        .unwrap_or_else(|| none.to_string())
}

/// Prints the blogs and the latest 50 jobs (the ones not done, at most 20, in detail).
pub(super) fn status(db: &Path) -> Result<()> {
    let store = open_to_read(db)?;
    let blogs = store.blogs()?;
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
        if b.errors_in_a_row > 0 {
            println!(
                "      {} failed job(s) in a row, backing off; last error: {}",
                b.errors_in_a_row,
                b.last_error.as_deref().unwrap_or("?")
            );
        }
    }
    let jobs = store.jobs(50)?;
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
