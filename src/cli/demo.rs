//! `archive demo`: the bundled fixture blog served on 127.0.0.1, added and crawled into a
//! temporary database, with the summary and a sample post. Needs no network and no blog.

use super::{add, jobs, open, read};
use crate::config::Config;
use crate::store::DatabaseSettings;
use crate::store::RenderMode;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::PathBuf;

/// Runs the demo; with `keep`, the database stays in that directory.
pub(super) async fn demo(keep: Option<PathBuf>) -> Result<()> {
    let (site, truth_feed, base) = crate::fixture_server::demo_site();
    let server = crate::fixture_server::Server::start(site, base)
        .context("starting the demo web server on 127.0.0.1")?;
    let tmp;
    let dir = match keep {
        Some(d) => d,
        None => {
            tmp = tempfile::tempdir()?;
            tmp.path().to_path_buf()
        }
    };
    let db = DatabaseSettings::at(dir.join("demo.db"));
    println!("serving the bundled fixture blog at {}/", server.origin);
    println!("archiving it into {}", dir.join("demo.db").display());
    println!();
    let feed = format!("{}{truth_feed}", server.origin);
    let config = Config::default();
    add::add(
        &db,
        &config,
        std::slice::from_ref(&feed),
        None,
        RenderMode::Auto,
    )
    .await?;
    println!();
    jobs::crawl(&db, Some(&feed), &config).await?;
    let posts = open(&db)?.posts(None)?;
    println!();
    if let Some(p) = posts
        .iter()
        .find(|p| p.content_text.len() > 400)
        .or(posts.first())
    {
        println!(
            "a sample post (`archive --db {} show {}`):",
            db.shown(),
            p.url
        );
        println!();
        read::print_post(p);
    }
    let _ = std::io::stdout().flush();
    Ok(())
}
