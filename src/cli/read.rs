//! Reading the archive: `archive list`, `show` and `rules`.

use super::archive::{find, open_to_read};
use crate::store::DatabaseSettings;
use crate::store::{Comment, Post};
use anyhow::{Context, Result};
use chrono::SecondsFormat;

/// `archive list`: the blogs with their counts and crawl state, or one blog's posts.
pub(super) fn list(db: &DatabaseSettings, blog: Option<&str>) -> Result<()> {
    let store = open_to_read(db)?;
    if let Some(b) = blog {
        let b = find(&store, b)?;
        for p in store.posts(Some(b.id))? {
            println!(
                "{}  {}  {}",
                p.published
                    .map(|d| d.format("%Y-%m-%d").to_string())
                    .unwrap_or_else(|| "----------".into()),
                p.url,
                p.title.unwrap_or_default()
            );
        }
        return Ok(());
    }
    let blogs = store.blogs()?;
    if blogs.is_empty() {
        println!("the archive is empty; add a blog with `archive add <feed-or-blog-url>`");
    }
    for b in blogs {
        let c = store.counts(b.id)?;
        let state = match (&b.crawled_at, &b.crawl_started_at) {
            (Some(at), _) => format!("crawled {}", at.to_rfc3339_opts(SecondsFormat::Secs, true)),
            (None, Some(_)) => format!("crawl in progress ({} queued)", c.queued),
            (None, None) => "never crawled".into(),
        };
        println!("{}  {}", b.home_url, b.title.as_deref().unwrap_or(""));
        println!(
            "  feed {} · {} posts · {} fetches ({} errors) · {state}",
            b.feed_url, c.posts, c.fetches, c.errors
        );
    }
    Ok(())
}

/// `archive show`: one post, readable.
pub(super) fn show(db: &DatabaseSettings, url: &str) -> Result<()> {
    let store = open_to_read(db)?;
    let post = store.post(url.trim())?.with_context(|| {
        format!("no post {url} in the archive; `archive list --blog <blog>` lists posts")
    })?;
    print_post(&post);
    Ok(())
}

/// Prints a post: its fields, its text wrapped, its comment thread.
pub(super) fn print_post(p: &Post) {
    println!("url        {}", p.url);
    println!("blog       {}", p.blog);
    println!("title      {}", p.title.as_deref().unwrap_or("(none)"));
    println!(
        "authors    {}",
        if p.authors.is_empty() {
            "(none)".to_string()
        } else {
            p.authors.join(", ")
        }
    );
    println!(
        "published  {}",
        p.published
            .map(|d| d.to_rfc3339())
            .unwrap_or_else(|| "(unknown)".into())
    );
    if let Some(raw) = &p.published_raw {
        println!("shown as   {raw}");
    }
    if let Some(u) = &p.updated {
        println!("updated    {}", u.to_rfc3339());
    }
    if p.version > 1 {
        println!(
            "version    {} (the blog changed it; {} earlier version(s) kept)",
            p.version,
            p.version - 1
        );
    }
    if let Some(g) = &p.gone_at {
        println!(
            "gone       since {} (deleted from the blog; kept here)",
            g.to_rfc3339_opts(SecondsFormat::Secs, true)
        );
    }
    for g in &p.gaps {
        println!("missing    {}: {}", g.field, g.reason);
    }
    println!(
        "fetched    {}",
        p.fetched_at.to_rfc3339_opts(SecondsFormat::Secs, true)
    );
    println!("words      {}", p.content_text.split_whitespace().count());
    if let Some(b) = &p.extracted_by {
        let name = |e: Option<crate::core::extract::Extractor>| e.map_or("none", |e| e.as_str());
        println!(
            "from       article {} · title {} · authors {} · published {}",
            b.content,
            name(b.title),
            name(b.authors),
            name(b.published)
        );
    }
    println!();
    println!("{}", textwrap(&p.content_text, 96));
    if !p.comments.is_empty() {
        println!();
        println!("comments ({})", p.comments.len());
        print_thread(&p.comments, None, 0);
        // Comments whose parent is not archived (feed copies, lost pages) still show.
        let known: std::collections::HashSet<&str> =
            p.comments.iter().map(|c| c.id.as_str()).collect();
        for c in p
            .comments
            .iter()
            .filter(|c| c.parent.as_deref().is_some_and(|x| !known.contains(x)))
        {
            print_comment(c, 0);
        }
    }
    if !p.media.is_empty() {
        println!();
        println!("media ({})", p.media.len());
        for m in &p.media {
            let what = match m.state {
                crate::store::MediaState::Stored => format!(
                    "{} · {} · {} bytes · sha256 {}",
                    m.status.map_or("-".into(), |s| s.to_string()),
                    m.mime.as_deref().unwrap_or("?"),
                    m.bytes.unwrap_or(0),
                    m.sha256.as_deref().map_or("-", |h| &h[..16.min(h.len())])
                ),
                state => format!("{state}: {}", m.reason.as_deref().unwrap_or("")),
            };
            println!("  {:<10} {} ({what})", m.kind.as_str(), m.url);
        }
    }
}

fn print_thread(comments: &[Comment], parent: Option<&str>, depth: usize) {
    for c in comments.iter().filter(|c| c.parent.as_deref() == parent) {
        print_comment(c, depth);
        print_thread(comments, Some(&c.id), depth + 1);
    }
}

fn print_comment(c: &Comment, depth: usize) {
    let indent = "    ".repeat(depth);
    let mark = if depth > 0 { "↳ " } else { "" };
    println!();
    println!(
        "{indent}{mark}{} · {}",
        c.author.as_deref().unwrap_or("(anonymous)"),
        c.published
            .map(|d| d.to_rfc3339())
            .or(c.published_raw.clone())
            .unwrap_or_else(|| "(undated)".into())
    );
    for line in textwrap(&c.content_text, 90usize.saturating_sub(4 * depth)).lines() {
        println!("{indent}  {line}");
    }
}

fn textwrap(s: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for w in s.split_whitespace() {
        if line > 0 && line + 1 + w.chars().count() > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(w);
        line += w.chars().count();
    }
    out
}

/// `archive rules`: each blog's learned rules and post URL pattern.
pub(super) fn rules(db: &DatabaseSettings, blog: Option<&str>) -> Result<()> {
    let store = open_to_read(db)?;
    let blogs = match blog {
        Some(b) => vec![find(&store, b)?],
        None => store.blogs()?,
    };
    for b in blogs {
        println!("{}", b.home_url);
        let rules = store.rules(b.id)?;
        if rules.is_empty() {
            println!("  no rules yet (learned by `archive crawl`)");
        }
        for r in rules {
            println!(
                "  {:<8} {}  score {:.3} · {}/{} votes · learned {}",
                r.field,
                r.xpath,
                r.score,
                r.votes,
                r.samples,
                r.learned_at.to_rfc3339_opts(SecondsFormat::Secs, true)
            );
        }
        if let Some(p) = &b.post_pattern {
            println!("  posts    {}", serde_json::to_string(p)?);
        }
    }
    Ok(())
}
