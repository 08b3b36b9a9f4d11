//! `archive demo`: the bundled fixture blog served on 127.0.0.1, added and crawled into a
//! temporary database, with the summary and a sample post. Needs no network and no blog.

use super::archive::open;
use super::{add, jobs, read};
use crate::config::Config;
use crate::store::DatabaseSettings;
use crate::store::RenderMode;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::PathBuf;

/// Runs the demo: into `db` when `--db` named one, else into `demo.db` in `keep`, else into a
/// temporary database removed on exit.
///
/// # Errors
/// Both `--db` and `--keep` given; the demo server could not start; the crawl failed.
pub(super) async fn demo(keep: Option<PathBuf>, db: Option<DatabaseSettings>) -> Result<()> {
    let (site, truth_feed, base) = crate::fixture_server::demo_site();
    let tmp;
    let (db, kept) = match (db, keep) {
        (Some(_), Some(dir)) => bail!(
            "--db and --keep {} both say where the demo archive goes: pass one of them",
            dir.display()
        ),
        (Some(db), None) => (db, true),
        (None, Some(dir)) => {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            (DatabaseSettings::at(dir.join("demo.db")), true)
        }
        (None, None) => {
            tmp = tempfile::tempdir()?;
            (DatabaseSettings::at(tmp.path().join("demo.db")), false)
        }
    };
    let server = crate::fixture_server::Server::start(site, base)
        .context("starting the demo web server on 127.0.0.1")?;
    println!("serving the bundled fixture blog at {}/", server.origin);
    println!("archiving it into {}", db.shown());
    println!();
    let feed = format!("{}{truth_feed}", server.origin);
    let config = Config::default();
    add::add(
        &db,
        &config,
        std::slice::from_ref(&feed),
        None,
        RenderMode::Auto,
        add::NextStep::Quiet,
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
        if kept {
            println!(
                "a sample post (`archive --db {} show {}`):",
                db.shown(),
                p.url
            );
        } else {
            println!("a sample post (the demo archive is removed on exit: keep it with --keep DIR or --db FILE):");
        }
        println!();
        read::print_post(p);
    }
    println!();
    if kept {
        println!(
            "next: archive --db {} serve, to read, search and cite it in a browser at http://{}/",
            db.shown(),
            config.serve.bind
        );
    } else {
        println!(
            "to read it in a browser: run the demo with --keep DIR, then `archive serve` with --db DIR/demo.db"
        );
    }
    let _ = std::io::stdout().flush();
    Ok(())
}
