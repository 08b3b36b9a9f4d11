//! The `archive` command line: clap definitions, one function per subcommand, human output.
//! Errors propagate to `main`, which prints them on one line and exits non-zero.

use crate::config::Config;
use crate::crawl::{self, CrawlOptions, CrawlSummary, FrontierKind, Progress};
use crate::fetch::politeness::PolitenessConfig;
use crate::fetch::Fetcher;
use crate::store::{Blog, Store};
use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// everblog: archive whole blogs, faithfully and for good.
///
/// Point it at a blog's feed (or home page): it learns where each post's title and article sit
/// in the blog's HTML from the feed's own entries (BlogForever crawler, WIMS'14), then crawls the
/// blog and archives every post, including the many the feed no longer lists, into SQLite.
///
/// Typical use: `archive add https://blog.example/feed/`, then `archive crawl`, then
/// `archive export > posts.jsonl`. Try `archive demo` first: it needs no blog.
#[derive(Debug, Parser)]
#[command(name = "archive", version, max_term_width = 100)]
pub struct Cli {
    /// The archive database (SQLite; created if missing). Default:
    /// `$XDG_DATA_HOME/everblog/archive.db` (`~/.local/share/everblog/archive.db`).
    #[arg(long, global = true, env = "EVERBLOG_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// The configuration file (TOML; `archive config --defaults` prints a documented one).
    /// Default: `$XDG_CONFIG_HOME/everblog/config.toml` if it exists. Flags override it.
    #[arg(long, global = true, env = "EVERBLOG_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// More log output on stderr (-v: info, -vv: debug). RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Add a blog by its feed URL (RSS, Atom, JSON Feed) or home page (its feed is discovered).
    ///
    /// The feed is fetched and parsed before anything is stored. Adding a blog twice is a no-op.
    Add {
        /// Feed or home page URLs.
        #[arg(required_unless_present = "from", value_name = "URL")]
        urls: Vec<String>,
        /// Also add every blog listed in FILE: one URL per line (`#` starts a comment), or an
        /// OPML subscription list (the `xmlUrl` of each outline). `-` reads stdin.
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
        /// Start the crawl here instead of the blog's home page (e.g. the root of a site the
        /// blog lives in). Same host as the blog.
        #[arg(long, value_name = "URL")]
        start: Option<String>,
        /// Render pages in headless Chromium: `auto` decides from the blog itself (when the
        /// raw HTML lacks the feed's text, or post pages carry a JavaScript comment widget such
        /// as Disqus or Isso), `always`, or `never`.
        #[arg(long, value_enum, default_value_t = RenderArg::Auto)]
        render: RenderArg,
    },
    /// Run NewCrawl for blogs never (completely) crawled: learn rules, crawl, archive every post.
    ///
    /// Interrupted crawls resume where they stopped. Progress goes to stderr; a summary to stdout.
    Crawl {
        /// Only this blog (its feed or home URL as given to `add`).
        #[arg(value_name = "BLOG")]
        blog: Option<String>,
        /// Crawl every blog not yet completely crawled (the default when no BLOG is given).
        #[arg(long, conflicts_with = "blog")]
        all: bool,
        /// Stop a blog's crawl after this many pages (resume later by running crawl again).
        /// [config crawl.max_pages, default 10000]
        #[arg(long, value_name = "N")]
        max_pages: Option<u64>,
        /// Requests in flight at once. [crawl.concurrency, 4]
        #[arg(long, value_name = "N")]
        concurrency: Option<usize>,
        /// Per-request timeout in seconds. [crawl.timeout, 30]
        #[arg(long, value_name = "SECONDS")]
        timeout: Option<f64>,
        /// Crawl order: `knn` ranks URLs by the distance-weighted kNN estimate of how many post
        /// links their page holds (paper §4.3); `bfs` is breadth-first. [crawl.frontier, knn]
        #[arg(long, value_enum)]
        frontier: Option<FrontierArg>,
        /// Neighbours of the kNN estimate. [crawl.k, 5]
        #[arg(long, value_name = "K")]
        k: Option<usize>,
        /// With the kNN frontier, stop once this many pages in a row brought no new post and no
        /// queued page looks promising (0: crawl until the frontier is empty).
        /// [crawl.patience, 1000]
        #[arg(long, value_name = "PAGES")]
        patience: Option<u64>,
        /// Seconds between two requests to one host (robots.txt Crawl-delay may ask for more;
        /// loopback hosts: politeness.loopback_delay). [politeness.delay, 1]
        #[arg(long, value_name = "SECONDS")]
        delay: Option<f64>,
        /// Requests in flight per host. [politeness.per_host, 2]
        #[arg(long, value_name = "N")]
        per_host: Option<usize>,
        /// Most links followed per URL template (digits generalised, query values dropped):
        /// bounds calendars and other endless generated URLs. [crawl.max_per_template, 2000]
        #[arg(long, value_name = "N")]
        max_per_template: Option<usize>,
    },
    /// Run UpdateCrawl now for crawled blogs: read their feeds and comment feeds (conditional
    /// GETs), archive new posts and comments, keep edited posts as new versions, mark deleted
    /// posts gone. Fetches only the pages the feeds say changed.
    Update {
        /// Only this blog (feed or home URL).
        #[arg(value_name = "BLOG")]
        blog: Option<String>,
    },
    /// List blogs (with post counts and crawl state), or the posts of one blog.
    List {
        /// List the posts of this blog (feed or home URL).
        #[arg(long, value_name = "BLOG")]
        blog: Option<String>,
    },
    /// Show one archived post: its fields, readable.
    Show {
        /// The post's URL.
        url: String,
    },
    /// Export archived posts as JSON Lines on stdout (format in README.md).
    Export {
        /// Only this blog (feed or home URL).
        #[arg(long, value_name = "BLOG")]
        blog: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Jsonl)]
        format: Format,
        /// Write to this file instead of stdout.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Show the learned extraction rules of each blog (XPath, score, votes).
    Rules {
        /// Only this blog.
        #[arg(value_name = "BLOG")]
        blog: Option<String>,
    },
    /// Run the service: take jobs from the database and run them until SIGTERM or SIGINT:
    /// NewCrawl of added blogs, then an UpdateCrawl of each blog whenever it is due (interval
    /// from the blog's posting and commenting frequency, within the config's schedule bounds;
    /// exponential back-off after errors). Any number of daemons may share one database; a job
    /// whose daemon died is taken again when its lease expires and resumes where it stopped.
    /// Stops, saying why, when the database is full or read-only.
    Daemon {
        /// Lease length in seconds (renewed every third of it while a job runs).
        /// [daemon.lease, 60]
        #[arg(long, value_name = "SECONDS")]
        lease: Option<f64>,
        /// Seconds between looks at an empty queue. [daemon.poll, 2]
        #[arg(long, value_name = "SECONDS")]
        poll: Option<f64>,
        /// Name of this worker in the jobs table (default: host:pid).
        #[arg(long, value_name = "NAME")]
        owner: Option<String>,
        /// Seconds between two requests to one host, across every daemon on the database
        /// (robots.txt Crawl-delay may ask for more). [politeness.delay, 1]
        #[arg(long, value_name = "SECONDS")]
        delay: Option<f64>,
    },
    /// Show blogs (posts, last and next crawl, errors) and the job queue.
    Status,
    /// Render pages in headless Chromium as a crawl would (settle, click "load more" /
    /// "show more replies", scroll, inline iframes). One URL: print its final DOM, with a
    /// summary (clicks, iframes, what was cut short) on stderr. Several: render them with the
    /// tab pool and print one line per page (URL, bytes, clicks) and the throughput.
    Render {
        /// The pages.
        #[arg(required = true)]
        urls: Vec<String>,
    },
    /// Print the effective configuration (TOML), or with --defaults the documented default
    /// file, ready to edit: `archive config --defaults > ~/.config/everblog/config.toml`.
    Config {
        /// Print the commented defaults instead of the effective configuration.
        #[arg(long)]
        defaults: bool,
    },
    /// Archive a bundled fixture blog served on 127.0.0.1 into a temporary database, and show
    /// the summary and a sample post. Needs no network and no blog.
    Demo {
        /// Keep the demo database in this directory instead of a temporary one.
        #[arg(long, value_name = "DIR")]
        keep: Option<PathBuf>,
    },
}

/// Crawl orders.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FrontierArg {
    /// Distance-weighted kNN priority (default).
    Knn,
    /// Breadth-first.
    Bfs,
}

/// Rendering choices.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum RenderArg {
    /// Decide per blog (default).
    Auto,
    /// Render every page.
    Always,
    /// Never render.
    Never,
}

impl RenderArg {
    fn as_str(self) -> &'static str {
        match self {
            RenderArg::Auto => "auto",
            RenderArg::Always => "always",
            RenderArg::Never => "never",
        }
    }
}

/// Export formats.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// One JSON object per line.
    Jsonl,
}

/// The default database: `$XDG_DATA_HOME/everblog/archive.db` (`~/.local/share/…`).
pub fn default_db() -> Result<PathBuf> {
    let dir = dirs::data_dir()
        .context("cannot find a data directory (set XDG_DATA_HOME or HOME, or pass --db)")?;
    Ok(dir.join("everblog").join("archive.db"))
}

/// Crawl options from the configuration (with a renderer that launches Chromium only if a
/// blog needs it).
pub fn crawl_options(c: &Config) -> CrawlOptions {
    CrawlOptions {
        renderer: Some(std::sync::Arc::new(crate::render::Renderer::new(
            c.render.config(),
        ))),
        max_pages: c.crawl.max_pages,
        concurrency: c.crawl.concurrency,
        frontier: if c.crawl.frontier == "bfs" {
            FrontierKind::BreadthFirst
        } else {
            FrontierKind::Knn
        },
        k: c.crawl.k,
        patience: c.crawl.patience,
        max_per_template: c.crawl.max_per_template,
        stop: None,
    }
}

/// The HTTP client the configuration describes.
pub fn fetcher(c: &Config) -> Result<Fetcher> {
    Fetcher::with_politeness(
        c.crawl.timeout,
        PolitenessConfig {
            delay: c.politeness.delay,
            loopback_delay: c.politeness.loopback_delay,
            per_host: c.politeness.per_host,
            ..PolitenessConfig::default()
        },
    )
}

fn secs(v: f64) -> Duration {
    Duration::from_secs_f64(if v.is_finite() { v.max(0.0) } else { 0.0 })
}

/// Runs the parsed command line.
pub async fn run(cli: Cli) -> Result<()> {
    let mut config = Config::load(cli.config.as_deref())?;
    let db = match (&cli.db, &config.database.path) {
        (Some(p), _) | (None, Some(p)) => p.clone(),
        (None, None) => default_db()?,
    };
    match cli.command {
        Command::Add {
            urls,
            from,
            start,
            render,
        } => {
            let mut all = urls;
            if let Some(f) = from {
                all.extend(crate::blog_list::read(&f)?);
            }
            add(&db, &all, start.as_deref(), render).await
        }
        Command::Crawl {
            blog,
            all,
            max_pages,
            concurrency,
            timeout,
            frontier,
            k,
            patience,
            delay,
            per_host,
            max_per_template,
        } => {
            // `--all` is what no BLOG means; clap keeps the two exclusive.
            let _ = all;
            let c = &mut config;
            c.crawl.max_pages = max_pages.unwrap_or(c.crawl.max_pages);
            c.crawl.concurrency = concurrency.unwrap_or(c.crawl.concurrency).max(1);
            c.crawl.timeout = timeout.map(secs).unwrap_or(c.crawl.timeout);
            if let Some(f) = frontier {
                c.crawl.frontier = match f {
                    FrontierArg::Knn => "knn".into(),
                    FrontierArg::Bfs => "bfs".into(),
                };
            }
            c.crawl.k = k.unwrap_or(c.crawl.k);
            c.crawl.patience = patience.unwrap_or(c.crawl.patience);
            c.crawl.max_per_template = max_per_template.unwrap_or(c.crawl.max_per_template);
            c.politeness.delay = delay.map(secs).unwrap_or(c.politeness.delay);
            c.politeness.per_host = per_host.unwrap_or(c.politeness.per_host).max(1);
            let fetcher = fetcher(&config)?;
            crawl_blogs(&db, blog.as_deref(), &config, &fetcher)
                .await
                .map(|_| ())
        }
        Command::Update { blog } => update(&db, blog.as_deref(), &config).await,
        Command::List { blog } => list(&db, blog.as_deref()),
        Command::Show { url } => show(&db, &url),
        Command::Export {
            blog,
            format: Format::Jsonl,
            output,
        } => export(&db, blog.as_deref(), output),
        Command::Rules { blog } => rules(&db, blog.as_deref()),
        Command::Demo { keep } => demo(keep).await,
        Command::Daemon {
            lease,
            poll,
            owner,
            delay,
        } => {
            let c = &mut config;
            c.daemon.lease = lease.map(secs).unwrap_or(c.daemon.lease);
            c.daemon.poll = poll.map(secs).unwrap_or(c.daemon.poll);
            c.politeness.delay = delay.map(secs).unwrap_or(c.politeness.delay);
            daemon(&db, owner, &config).await
        }
        Command::Status => status(&db),
        Command::Render { urls } => render_pages(&urls, &config).await,
        Command::Config { defaults } => {
            if defaults {
                print!("{}", crate::config::DEFAULTS);
            } else {
                println!("# effective configuration (database: {})", db.display());
                print!("{}", config.to_toml());
            }
            Ok(())
        }
    }
}

fn open(db: &std::path::Path) -> Result<Store> {
    Store::open(db)
}

fn find(store: &Store, url: &str) -> Result<Blog> {
    let trimmed = url.trim();
    if let Some(b) = store.find_blog(trimmed)? {
        return Ok(b);
    }
    let alt = if let Some(t) = trimmed.strip_suffix('/') {
        t.to_string()
    } else {
        format!("{trimmed}/")
    };
    store.find_blog(&alt)?.with_context(|| format!("no blog {trimmed} in the archive; `archive list` shows the blogs, `archive add` adds one"))
}

async fn add(
    db: &std::path::Path,
    urls: &[String],
    start: Option<&str>,
    render: RenderArg,
) -> Result<()> {
    let mut store = open(db)?;
    let fetcher = Fetcher::new(Duration::from_secs(30))?;
    let mut failed = 0;
    for u in urls {
        let mut result = crawl::add(&mut store, &fetcher, u).await;
        if let (Ok(a), Some(start)) = (&mut result, start) {
            let s = url::Url::parse(start)
                .with_context(|| format!("--start {start:?} is not a URL"))?;
            let home = url::Url::parse(&a.blog.home_url)?;
            if crawl::links::site_of(&s) != crawl::links::site_of(&home) {
                bail!(
                    "--start {start} is not on the blog's site ({})",
                    crawl::links::site_of(&home)
                );
            }
            store.set_start_url(a.blog.id, s.as_str())?;
            a.blog.start_url = Some(s.to_string());
        }
        if let Ok(a) = &result {
            if a.blog.render != render.as_str() && (!a.already || render != RenderArg::Auto) {
                store.set_render_mode(a.blog.id, render.as_str())?;
            }
        }
        // With one URL its error is the command's error, printed once by main.
        match result {
            Err(e) if urls.len() == 1 => return Err(e),
            Ok(a) if a.already => println!(
                "{} is already in the archive (feed {}); nothing to do",
                a.blog.home_url, a.blog.feed_url
            ),
            Ok(a) => {
                store.enqueue_job(a.blog.id, crate::daemon::NEW_CRAWL)?;
                println!(
                    "added {}",
                    a.blog.title.as_deref().unwrap_or("(untitled blog)")
                );
                println!("  home   {}", a.blog.home_url);
                println!(
                    "  feed   {} ({}, {} entries)",
                    a.blog.feed_url,
                    kind_name(&a.blog.feed_kind),
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
                println!(
                    "next: archive crawl (or a running `archive daemon` takes it within seconds)"
                );
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

fn kind_name(kind: &str) -> &str {
    match kind {
        "atom" => "Atom",
        "rss2" => "RSS 2.0",
        "rss1" => "RSS 1.0",
        "rss0" => "RSS 0.9x",
        "json" => "JSON Feed",
        other => other,
    }
}

struct Bar(indicatif::ProgressBar);

impl Bar {
    fn new(name: &str) -> Bar {
        let pb =
            indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        pb.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {prefix} {elapsed} {wide_msg}")
                .expect("static template"),
        );
        pb.set_prefix(name.to_string());
        pb.enable_steady_tick(Duration::from_millis(120));
        Bar(pb)
    }
}

impl Progress for Bar {
    fn update(&self, pages: u64, posts: u64, errors: u64, queued: u64) {
        self.0.set_message(format!(
            "pages fetched {pages} · posts {posts} · errors {errors} · queued {queued}"
        ));
    }
    fn phase(&self, message: &str) {
        self.0.set_message(message.to_string());
    }
}

/// Runs NewCrawl on the selected blogs and prints a summary per blog. Returns the summaries.
pub async fn crawl_blogs(
    db: &std::path::Path,
    blog: Option<&str>,
    config: &Config,
    fetcher: &Fetcher,
) -> Result<Vec<(Blog, CrawlSummary)>> {
    let opts = &crawl_options(config);
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
    let mut out = Vec::new();
    let mut failed = 0;
    let owner = format!("cli:{}", std::process::id());
    for b in blogs {
        // Take the blog's job, so a daemon on the same database does not crawl it at the same time.
        store.enqueue_job(b.id, crate::daemon::NEW_CRAWL)?;
        let lease = Duration::from_secs(60);
        let Some(job) = store.lease_job(&owner, lease, Some(b.id))? else {
            println!(
                "{} is being crawled by a daemon right now; skipped",
                b.home_url
            );
            continue;
        };
        let bar = Bar::new(b.title.as_deref().unwrap_or(&b.home_url));
        let started = std::time::Instant::now();
        let result = crate::daemon::renewing(
            db,
            job.id,
            &owner,
            lease,
            crawl::new_crawl(&mut store, fetcher, &b, opts, &bar),
        )
        .await;
        bar.0.finish_and_clear();
        let bounds = config.schedule.bounds();
        match result {
            Ok(s) => {
                let outcome = format!(
                    "{} posts, {} pages fetched, {} errors; {}",
                    s.posts, s.pages_fetched, s.errors, s.stop_reason
                );
                // Complete: the daemon keeps the blog up to date from now on. Incomplete: the
                // NewCrawl stays queued, resumed by the next `crawl` or a daemon.
                if s.complete {
                    crate::daemon::finish(
                        &mut store,
                        &job,
                        &owner,
                        crate::daemon::Ran::Done(outcome),
                        &bounds,
                    )?;
                } else {
                    store.end_job(job.id, &owner, "queued", Some(&outcome), None)?;
                }
                print_summary(&b, &s, started.elapsed());
                out.push((b, s));
            }
            Err(e) => {
                failed += 1;
                eprintln!("error: {}: {e:#}", b.home_url);
                crate::daemon::finish(
                    &mut store,
                    &job,
                    &owner,
                    crate::daemon::Ran::Failed(e),
                    &bounds,
                )?;
            }
        }
    }
    if failed > 0 {
        bail!("{failed} blog(s) could not be crawled");
    }
    Ok(out)
}

fn print_summary(b: &Blog, s: &CrawlSummary, elapsed: Duration) {
    println!(
        "{} ({})",
        b.title.as_deref().unwrap_or("(untitled blog)"),
        b.home_url
    );
    println!(
        "  {} · {} posts archived · {} pages fetched · {} errors · {:.1}s",
        if s.complete {
            "crawl complete"
        } else {
            "crawl incomplete (page budget reached; run crawl again to resume)"
        },
        s.posts,
        s.pages_fetched,
        s.errors,
        elapsed.as_secs_f64()
    );
    println!(
        "  last new post at page {} of this run · {} blocked by robots.txt · {} links over the per-template cap · {} posts from sitemaps · {} pages rendered · stopped: {}",
        s.pages_at_last_post, s.blocked, s.trapped, s.sitemap_posts, s.rendered, s.stop_reason
    );
    for r in &s.rules {
        println!(
            "  rule {:<8} {}  (score {:.2}, {} of {} entries voted)",
            r.field, r.xpath, r.score, r.votes, r.samples
        );
    }
    for (u, why) in &s.error_samples {
        println!("  error {u}: {why}");
    }
}

fn list(db: &std::path::Path, blog: Option<&str>) -> Result<()> {
    let store = open(db)?;
    if let Some(b) = blog {
        let b = find(&store, b)?;
        for p in store.posts(Some(b.id))? {
            println!(
                "{}  {}  {}",
                p.published
                    .as_deref()
                    .map(|d| &d[..d.len().min(10)])
                    .unwrap_or("----------"),
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
            (Some(at), _) => format!("crawled {at}"),
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

fn show(db: &std::path::Path, url: &str) -> Result<()> {
    let store = open(db)?;
    let post = store.post(url.trim())?.with_context(|| {
        format!("no post {url} in the archive; `archive list --blog <blog>` lists posts")
    })?;
    print_post(&post);
    Ok(())
}

fn print_post(p: &crate::store::Post) {
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
        p.published.as_deref().unwrap_or("(unknown)")
    );
    if let Some(raw) = &p.published_raw {
        println!("shown as   {raw}");
    }
    if let Some(u) = &p.updated {
        println!("updated    {u}");
    }
    if p.version > 1 {
        println!(
            "version    {} (the blog changed it; {} earlier version(s) kept)",
            p.version,
            p.version - 1
        );
    }
    if let Some(g) = &p.gone_at {
        println!("gone       since {g} (deleted from the blog; kept here)");
    }
    for g in &p.gaps {
        println!("missing    {}: {}", g.field, g.reason);
    }
    println!("fetched    {}", p.fetched_at);
    println!("words      {}", p.content_text.split_whitespace().count());
    println!();
    let text = textwrap(&p.content_text, 96);
    println!("{text}");
    if !p.comments.is_empty() {
        println!();
        println!("comments ({})", p.comments.len());
        print_thread(&p.comments, None, 0);
        // Comments whose parent is not archived (feed copies, lost pages) still show.
        let known: std::collections::HashSet<&str> =
            p.comments.iter().map(|c| c.id.as_str()).collect();
        let orphans: Vec<_> = p
            .comments
            .iter()
            .filter(|c| c.parent.as_deref().is_some_and(|x| !known.contains(x)))
            .cloned()
            .collect();
        for c in &orphans {
            print_comment(c, 0);
        }
    }
}

fn print_thread(comments: &[crate::store::Comment], parent: Option<&str>, depth: usize) {
    for c in comments.iter().filter(|c| c.parent.as_deref() == parent) {
        print_comment(c, depth);
        print_thread(comments, Some(&c.id), depth + 1);
    }
}

fn print_comment(c: &crate::store::Comment, depth: usize) {
    let indent = "    ".repeat(depth);
    let mark = if depth > 0 { "↳ " } else { "" };
    println!();
    println!(
        "{indent}{mark}{} · {}",
        c.author.as_deref().unwrap_or("(anonymous)"),
        c.published
            .as_deref()
            .or(c.published_raw.as_deref())
            .unwrap_or("(undated)")
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

fn export(db: &std::path::Path, blog: Option<&str>, output: Option<PathBuf>) -> Result<()> {
    let store = open(db)?;
    let id = blog.map(|b| find(&store, b)).transpose()?.map(|b| b.id);
    match output {
        Some(path) => {
            // Written next to the target and renamed: a crash never leaves a truncated export.
            let tmp = path.with_extension("partial");
            let mut f = std::io::BufWriter::new(
                std::fs::File::create(&tmp)
                    .with_context(|| format!("creating {}", tmp.display()))?,
            );
            let n = store.for_each_post(id, |p| Ok(crate::export::write_jsonl(&p, &mut f)?))?;
            f.flush()?;
            drop(f);
            std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("exported {n} posts to {}", path.display());
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            let result = store
                .for_each_post(id, |p| Ok(crate::export::write_jsonl(&p, &mut out)?))
                .and_then(|_| Ok(out.flush()?));
            if let Err(e) = result {
                let broken_pipe = e
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe);
                if !broken_pipe {
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

fn rules(db: &std::path::Path, blog: Option<&str>) -> Result<()> {
    let store = open(db)?;
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
                r.field, r.xpath, r.score, r.votes, r.samples, r.learned_at
            );
        }
        if let Some(p) = &b.post_pattern {
            println!("  posts    {p}");
        }
    }
    Ok(())
}

async fn demo(keep: Option<PathBuf>) -> Result<()> {
    let (site, truth_feed, base) = crate::serve::demo_site();
    let server = crate::serve::Server::start(site, base)
        .context("starting the demo web server on 127.0.0.1")?;
    let tmp;
    let dir = match keep {
        Some(d) => d,
        None => {
            tmp = tempfile::tempdir()?;
            tmp.path().to_path_buf()
        }
    };
    let db = dir.join("demo.db");
    println!("serving the bundled fixture blog at {}/", server.origin);
    println!("archiving it into {}", db.display());
    println!();
    let feed = format!("{}{truth_feed}", server.origin);
    add(&db, std::slice::from_ref(&feed), None, RenderArg::Auto).await?;
    println!();
    let config = Config::default();
    crawl_blogs(&db, Some(&feed), &config, &fetcher(&config)?).await?;
    let store = open(&db)?;
    let posts = store.posts(None)?;
    println!();
    if let Some(p) = posts
        .iter()
        .find(|p| p.content_text.len() > 400)
        .or(posts.first())
    {
        println!(
            "a sample post (`archive --db {} show {}`):",
            db.display(),
            p.url
        );
        println!();
        print_post(p);
    }
    let _ = std::io::stdout().flush();
    Ok(())
}

async fn daemon(db: &std::path::Path, owner: Option<String>, config: &Config) -> Result<()> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let shutdown = std::sync::Arc::new(AtomicBool::new(false));
    {
        let shutdown = shutdown.clone();
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("installing the SIGTERM handler")?;
        tokio::spawn(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            tracing::info!("shutdown requested: finishing the pages in flight");
            shutdown.store(true, Ordering::Relaxed);
        });
    }
    // Per-host request slots live in the database, so politeness holds across daemons.
    let gate = crate::daemon::StoreGate::open(db)?;
    let politeness = PolitenessConfig {
        delay: config.politeness.delay,
        loopback_delay: config.politeness.loopback_delay,
        per_host: config.politeness.per_host,
        shared: Some(crate::fetch::politeness::SharedGate(std::sync::Arc::new(
            gate,
        ))),
        ..PolitenessConfig::default()
    };
    let fetcher = Fetcher::with_politeness(config.crawl.timeout, politeness)?;
    let opts = crate::daemon::DaemonOptions {
        owner: owner.unwrap_or_else(crate::daemon::default_owner),
        lease: config.daemon.lease.max(Duration::from_secs(1)),
        poll: config.daemon.poll.max(Duration::from_millis(50)),
        crawl: crawl_options(config),
        schedule: config.schedule.bounds(),
        max_db_bytes: (config.database.max_size_mb > 0.0)
            .then_some((config.database.max_size_mb * 1024.0 * 1024.0) as u64),
    };
    eprintln!(
        "archive daemon {} on {}: waiting for jobs (stop with SIGTERM or Ctrl-C)",
        opts.owner,
        db.display()
    );
    crate::daemon::run(db, &fetcher, &opts, shutdown).await
}

async fn render_pages(urls: &[String], config: &Config) -> Result<()> {
    let renderer = std::sync::Arc::new(crate::render::Renderer::new(config.render.config()));
    if let [url] = urls {
        let r = renderer.render(url).await;
        renderer.shutdown().await;
        let r = r?;
        eprintln!(
            "rendered {} → {}: {} clicks, {} iframes inlined, {} bytes{}",
            url,
            r.final_url,
            r.clicks,
            r.frames,
            r.html.len(),
            r.notes.iter().map(|n| format!("; {n}")).collect::<String>()
        );
        println!("{}", r.html);
        return Ok(());
    }
    let started = std::time::Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for u in urls {
        let (renderer, u) = (renderer.clone(), u.clone());
        set.spawn(async move {
            let r = renderer.render(&u).await;
            (u, r)
        });
    }
    let mut failed = 0;
    while let Some(Ok((u, r))) = set.join_next().await {
        match r {
            Ok(r) => println!("{u}\t{}\t{}", r.html.len(), r.clicks),
            Err(e) => {
                failed += 1;
                println!("{u}\terror: {e:#}");
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let stats = renderer.stats();
    renderer.shutdown().await;
    eprintln!(
        "rendered {} pages in {secs:.1} s: {:.2} pages/s with {} tabs; {failed} failed; {} browser launches",
        urls.len(),
        urls.len() as f64 / secs,
        config.render.tabs,
        stats.launches
    );
    if failed > 0 {
        bail!("{failed} of {} pages could not be rendered", urls.len());
    }
    Ok(())
}

/// `archive update`: UpdateCrawl now, in the foreground, under the blog's update-crawl job lease
/// (so no daemon runs it at the same time); the next one is scheduled as the daemon would.
async fn update(db: &std::path::Path, blog: Option<&str>, config: &Config) -> Result<()> {
    let mut store = open(db)?;
    let blogs = match blog {
        Some(b) => vec![find(&store, b)?],
        None => store.blogs()?,
    };
    let blogs: Vec<Blog> = blogs
        .into_iter()
        .filter(|b| {
            let ready = b.crawled_at.is_some() || !store.rules(b.id).unwrap_or_default().is_empty();
            if !ready {
                println!("{}: never crawled; run `archive crawl` first", b.home_url);
            }
            ready
        })
        .collect();
    let fetcher = fetcher(config)?;
    let opts = crawl_options(config);
    let bounds = config.schedule.bounds();
    let owner = format!("cli:{}", std::process::id());
    let lease = Duration::from_secs(60);
    let mut failed = 0;
    for b in blogs {
        store.schedule_job(b.id, crate::daemon::UPDATE_CRAWL, chrono::Utc::now())?;
        let Some(job) = store
            .lease_job(&owner, lease, Some(b.id))?
            .filter(|j| j.kind == crate::daemon::UPDATE_CRAWL)
        else {
            println!(
                "{} is being crawled by a daemon right now; skipped",
                b.home_url
            );
            continue;
        };
        let bar = Bar::new(b.title.as_deref().unwrap_or(&b.home_url));
        bar.phase("UpdateCrawl: reading feeds");
        let started = std::time::Instant::now();
        let result = crate::daemon::renewing(
            db,
            job.id,
            &owner,
            lease,
            crawl::update_crawl(&mut store, &fetcher, &b, &opts),
        )
        .await;
        bar.0.finish_and_clear();
        match result {
            Ok(s) => {
                println!(
                    "{} ({}): {s} · {:.1}s",
                    b.title.as_deref().unwrap_or("(untitled blog)"),
                    b.home_url,
                    started.elapsed().as_secs_f64()
                );
                crate::daemon::finish(
                    &mut store,
                    &job,
                    &owner,
                    crate::daemon::Ran::Done(s.to_string()),
                    &bounds,
                )?;
            }
            Err(e) => {
                failed += 1;
                eprintln!("error: {}: {e:#}", b.home_url);
                crate::daemon::finish(
                    &mut store,
                    &job,
                    &owner,
                    crate::daemon::Ran::Failed(e),
                    &bounds,
                )?;
            }
        }
    }
    if failed > 0 {
        bail!("{failed} blog(s) could not be updated");
    }
    Ok(())
}

fn status(db: &std::path::Path) -> Result<()> {
    let store = open(db)?;
    let blogs = store.blogs()?;
    println!("blogs ({})", blogs.len());
    for b in &blogs {
        let c = store.counts(b.id)?;
        let state = match (&b.crawled_at, &b.crawl_started_at) {
            (Some(at), _) => format!("crawled {at}"),
            (None, Some(_)) => format!("crawl in progress, {} queued", c.queued),
            (None, None) => "never crawled".into(),
        };
        println!(
            "  {}  {} posts · {} errors · {state}",
            b.home_url, c.posts, c.errors
        );
        if let Some(r) = &b.renders {
            println!(
                "      renders: {r} ({}; --render {})",
                b.render_reason.as_deref().unwrap_or("-"),
                b.render
            );
        }
        let last = b.last_update_at.as_deref().unwrap_or("never");
        let next = b.next_update_at.as_deref().unwrap_or("not scheduled");
        println!("      last update {last} · next update {next}");
        if b.errors_in_a_row > 0 {
            println!(
                "      {} failed job(s) in a row, backing off; last error: {}",
                b.errors_in_a_row,
                b.last_error.as_deref().unwrap_or("?")
            );
        }
    }
    let jobs = store.jobs(50)?;
    let count = |st: &str| jobs.iter().filter(|j| j.state == st).count();
    println!(
        "jobs: {} queued · {} running · {} done · {} failed (latest 50)",
        count("queued"),
        count("running"),
        count("done"),
        count("failed")
    );
    for j in jobs.iter().filter(|j| j.state != "done").take(20) {
        let blog = blogs
            .iter()
            .find(|b| b.id == j.blog_id)
            .map_or("?", |b| b.home_url.as_str());
        let lease = j
            .owner
            .as_deref()
            .map(|o| format!(" · {o} until {}", j.lease_until.as_deref().unwrap_or("-")))
            .unwrap_or_default();
        let error = j
            .error
            .as_deref()
            .map(|e| format!(" · error: {e}"))
            .unwrap_or_default();
        let due = match (&j.not_before, j.state.as_str()) {
            (Some(t), "queued") => format!(" · due {t}"),
            _ => String::new(),
        };
        println!(
            "  #{} {} {} {blog}{due}{lease}{error}",
            j.id, j.kind, j.state
        );
    }
    Ok(())
}
