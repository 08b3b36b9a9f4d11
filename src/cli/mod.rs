//! The `archive` command line: clap definitions, one module per group of subcommands, human
//! output only. Work happens elsewhere (`crawl`, `daemon`, `store`); errors propagate to `main`,
//! which prints them on one line and exits non-zero.
//!
//! Flags override the configuration file once, here ([`run`]); the resolved [`Config`] then
//! builds what the commands need.

mod add;
mod archive;
mod demo;
mod export;
mod extract;
mod jobs;
mod migrate;
mod progress;
mod read;
mod render;
mod status;

pub use export::Format;

use crate::config::Config;
use crate::crawl::FrontierKind;
use crate::store::DatabaseSettings;
use crate::store::RenderMode;
use anyhow::Result;
use clap::builder::PossibleValue;
use clap::{Parser, Subcommand, ValueEnum};
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
    /// The archive database: an SQLite file (created if missing), or a PostgreSQL database as
    /// `postgres://user[:password]@host[:port]/dbname` (daemons on several machines sharing one
    /// archive and job queue). Default: `$XDG_DATA_HOME/everblog/archive.db`
    /// (`~/.local/share/everblog/archive.db`).
    #[arg(long, global = true, env = "EVERBLOG_DB", value_name = "PATH|URL")]
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
        /// Render pages in headless Chromium: `auto` decides from the blog itself (every page
        /// when the raw HTML lacks the feed's text; post pages when their comments are drawn by
        /// script, seen by rendering one to three entry pages once), `always`, or `never`.
        #[arg(long, value_enum, default_value_t = RenderMode::Auto, env = "EVERBLOG_RENDER")]
        render: RenderMode,
    },
    /// Run NewCrawl for blogs never (completely) crawled: learn rules, crawl, archive every post.
    ///
    /// Interrupted crawls resume where they stopped (Ctrl-C stops after the pages in flight;
    /// twice quits at once). Progress goes to stderr; a summary to stdout.
    Crawl {
        /// Only this blog (its feed or home URL as given to `add`).
        #[arg(value_name = "BLOG")]
        blog: Option<String>,
        /// Crawl every blog not yet completely crawled (the default when no BLOG is given).
        #[arg(long, conflicts_with = "blog")]
        all: bool,
        /// Stop a blog's crawl once this many of its pages are requested or processed, the
        /// entry pages learned from and the sitemaps read included (resume later by running
        /// crawl again with a larger budget). [config crawl.max_pages, default 10000]
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
        frontier: Option<FrontierKind>,
        /// Neighbours of the kNN estimate. [crawl.k, 5]
        #[arg(long, value_name = "K")]
        k: Option<usize>,
        /// With the kNN frontier, stop at the latest once this many pages in a row brought no
        /// new post and no queued page looks promising; it usually stops sooner, when
        /// capture–recapture says every post is found (0: no early stop, crawl until the
        /// frontier is empty).
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
    /// posts gone. Fetches only the pages the feeds say changed, and the older posts due for a
    /// revisit ([update] revisit_within, 30 days: every post once per window, spread over the
    /// updates), which catches edits, deletions and moves the feed never shows.
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
    /// Export the archive: posts as JSON Lines (default, on stdout), or every capture as a web
    /// archive that pywb and ReplayWeb.page replay: WARC 1.1, its CDXJ index, or both packaged
    /// as WACZ; or each blog as a feed or site export of its own: Atom (RFC 5005 archived
    /// feed), JSON Feed 1.1, WordPress WXR 1.2, written to `--output DIR/<blog>/`; or a static
    /// copy of the reader's pages (html) that opens from disk. Formats in README.md ("Export
    /// format", "Web archive output", "Blog-native exports").
    Export {
        /// Only this blog (feed or home URL).
        #[arg(long, value_name = "BLOG")]
        blog: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Jsonl)]
        format: Format,
        /// Write to this file instead of stdout (required for wacz). Written beside it and
        /// renamed at the end: an interrupted export never leaves a truncated file. For atom,
        /// jsonfeed, wxr and html, a directory: each blog's documents go to `DIR/<blog host
        /// slug>/` (stdout takes one blog's single document only; html needs a directory).
        #[arg(short, long, value_name = "FILE|DIR")]
        output: Option<PathBuf>,
        /// The WARC's file name, as recorded in its `warcinfo` and in the index's `filename`
        /// (default: the name of `--output` for warc, `everblog.warc.gz` for cdxj). For an
        /// index of a WARC exported earlier, give that WARC's name: the same archive always
        /// exports to the same bytes, so the offsets match.
        #[arg(long, value_name = "NAME")]
        warc_name: Option<String>,
        /// Posts per Atom archive document (RFC 5005); for tests.
        #[arg(long, value_name = "POSTS", hide = true, default_value_t = crate::export::atom::DEFAULT_PAGE_SIZE)]
        atom_page_size: u64,
        /// For wxr: where WordPress's importer is to download the archived images from, the
        /// address of an `archive serve` of this archive (e.g. http://127.0.0.1:8080/); the
        /// images' and the articles' image addresses then lead there. Without it, the images'
        /// own addresses (the blog still online). WordPress downloads from ports 80, 443 and
        /// 8080, or its own host.
        #[arg(long, value_name = "URL", value_parser = parse_media_from)]
        media_from: Option<url::Url>,
    },
    /// What the archive holds of each blog against what is known to exist: posts known (by
    /// source: feed, older feed pages, sitemaps, listing pages, links) vs archived vs missing
    /// (with the reason and the last attempt); comments declared (feed counts, "12 comments"
    /// on pages) vs archived; the oldest and newest post; when the blog was last verified.
    /// Exits 1 when something known is missing, for monitoring.
    Coverage {
        /// Only this blog.
        #[arg(long, value_name = "BLOG")]
        blog: Option<String>,
        /// JSON instead of text (one array of reports).
        #[arg(long)]
        json: bool,
    },
    /// Write a blog's history as one HTML file that opens from disk: posts and comments per
    /// month over the blog's life, its latest 200 jobs (pages fetched, failed, minutes) and
    /// what revisits found (edits, deletions, moves), in charts (SVG, no script) with the
    /// figures. The reader shows the same at /blog/ID/charts.
    Report {
        /// The blog (its feed or home page URL, as added).
        #[arg(long, value_name = "BLOG")]
        blog: String,
        /// The HTML file to write (written beside it, then renamed).
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
    },
    /// Serve the archive to read in a browser: the blogs, each blog's posts by month, author
    /// and tag, each post with its threaded comments, versions (word diffs) and captures,
    /// full-text search over posts and comments, Memento (TimeMap, TimeGate, captures with
    /// their original HTML, run without any script) and a JSON API (`/api/...`, README.md
    /// "Reading the archive"). Read-only; until SIGTERM or SIGINT.
    Serve {
        /// Address to listen on. Anything but loopback needs --auth or --read-only-public.
        /// [serve.bind, 127.0.0.1:8080]
        #[arg(long, value_name = "ADDR")]
        bind: Option<std::net::SocketAddr>,
        /// Require HTTP Basic credentials: a file of `name:$argon2id$...` lines (make one with
        /// `echo -n PASSWORD | argon2 $(openssl rand -hex 8) -id -e`). [serve.auth]
        #[arg(long, value_name = "FILE")]
        auth: Option<PathBuf>,
        /// Allow a non-loopback --bind without credentials: anyone who can reach it reads the
        /// archive. [serve.read_only_public, false]
        #[arg(long)]
        read_only_public: bool,
    },
    /// Extract one page and print its post record as JSON: title, authors, published,
    /// content_html, content_text, comments, extracted_by (which extractor gave each field:
    /// feed, rules or fallback) and gaps.
    ///
    /// With --blog, the page is read as that blog's crawl reads it: its learned rules first,
    /// the generic extractor where they do not fit, and its comment rules. Without, the generic
    /// extractor alone (no comments), so it can be compared with other extractors page by page.
    /// Fails, saying why, when the page holds no article (a listing page, or no text), or is
    /// larger than a crawl reads ([fetch] max_page_mb, default 20).
    Extract {
        /// The page's HTML file; `-` reads stdin.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// The page's URL (resolves its links; with --blog, finds its feed entry).
        /// [default: the file's file:// URL]
        #[arg(long)]
        url: Option<String>,
        /// Read the page with this blog's learned rules (feed or home URL, as given to `add`).
        #[arg(long, value_name = "BLOG")]
        blog: Option<String>,
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
        /// Serve /metrics (Prometheus), /healthz and /readyz on this address, e.g.
        /// 127.0.0.1:9464 (port 0: any free port, printed). [daemon.metrics, off]
        #[arg(long, value_name = "ADDR")]
        metrics: Option<std::net::SocketAddr>,
    },
    /// Show blogs (posts, last and next crawl, errors) and the job queue.
    Status {
        /// One JSON object for scripts: `alerts` (the open ones), `blogs` (each with its counts, crawl and update
        /// times, error streak, coverage and revisits), `latest_jobs` (states of the latest
        /// 50 jobs) and `jobs` (those not done, at most 20).
        #[arg(long)]
        json: bool,
    },
    /// Move the whole archive to another database: from SQLite to PostgreSQL when one machine
    /// is no longer enough (README.md "Scaling out"), or back. Every row is copied with its id,
    /// then both sides are compared table by table (row counts and digests); a difference
    /// fails the move. Interrupted, it resumes when run again. The source is only read: stop
    /// the daemons writing it first. The destination must be empty (or hold the interrupted
    /// move); point the daemons at it afterwards (`--db`, or `[database] path`).
    Migrate {
        /// The archive to move: an SQLite file or a `postgres://` URL. [default: --db]
        #[arg(long, value_name = "PATH|URL")]
        from: Option<PathBuf>,
        /// Where to move it: a `postgres://user@host/db` URL (an empty database the user may
        /// create tables in) or an SQLite file.
        #[arg(long, value_name = "PATH|URL")]
        to: PathBuf,
    },
    /// Render pages in headless Chromium as a crawl would (settle, click "load more" /
    /// "show more replies", scroll, inline iframes). One URL: print its final DOM, with a
    /// summary (clicks, iframes, what was cut short) on stderr. Several: render them with the
    /// tab pool and print one line per page (URL, bytes, clicks) and the throughput. Every
    /// request of the browser goes through everblog's fetcher (robots.txt, politeness), as in
    /// a crawl; nothing is stored.
    Render {
        /// The pages.
        #[arg(required = true)]
        urls: Vec<String>,
        /// Let Chromium fetch by itself: no robots.txt, no politeness. For benchmarks and
        /// debugging only; never used by crawls.
        #[arg(long)]
        direct: bool,
    },
    /// Print the effective configuration (TOML), or with --defaults the documented default
    /// file, ready to edit: `archive config --defaults > ~/.config/everblog/config.toml`.
    Config {
        /// Print the commented defaults instead of the effective configuration.
        #[arg(long)]
        defaults: bool,
    },
    /// Archive a bundled fixture blog served on 127.0.0.1 into a temporary database (or the
    /// one `--db` names), and show the summary and a sample post. Needs no network and no blog.
    Demo {
        /// Keep the demo database in this directory (as `demo.db`) instead of a temporary one.
        #[arg(long, value_name = "DIR")]
        keep: Option<PathBuf>,
    },
}

impl ValueEnum for RenderMode {
    fn value_variants<'a>() -> &'a [Self] {
        RenderMode::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            RenderMode::Auto => "Decide per blog (default)",
            RenderMode::Always => "Render every page",
            RenderMode::Never => "Never render",
        };
        Some(PossibleValue::new(self.as_str()).help(help))
    }
}

impl ValueEnum for FrontierKind {
    fn value_variants<'a>() -> &'a [Self] {
        FrontierKind::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            FrontierKind::Knn => "Distance-weighted kNN priority (default)",
            FrontierKind::BreadthFirst => "Breadth-first",
        };
        Some(PossibleValue::new(self.as_str()).help(help))
    }
}

/// Seconds from a flag (negative or not finite: 0).
fn secs(v: f64) -> Duration {
    Duration::from_secs_f64(if v.is_finite() { v.max(0.0) } else { 0.0 })
}

/// Runs the parsed command line: loads the configuration, applies the flags to it once, and
/// runs the command.
///
/// # Errors
/// The command's error, one line (`main` prints it and exits 1).
pub async fn run(cli: Cli) -> Result<()> {
    let mut config = Config::load(cli.config.as_deref())?;
    let db_given = cli.db.is_some();
    if let Some(db) = cli.db {
        config.database.path = Some(db);
    }
    let db = config.database()?;
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
            add::add(
                &db,
                &config,
                &all,
                start.as_deref(),
                render,
                add::NextStep::Say,
            )
            .await
        }
        Command::Crawl {
            blog,
            all: _, // what no BLOG means; clap keeps the two exclusive
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
            let (c, p) = (&mut config.crawl, &mut config.politeness);
            c.max_pages = max_pages.unwrap_or(c.max_pages);
            c.concurrency = concurrency.unwrap_or(c.concurrency).max(1);
            c.timeout = timeout.map(secs).unwrap_or(c.timeout);
            c.frontier = frontier.unwrap_or(c.frontier);
            c.k = k.unwrap_or(c.k);
            c.patience = patience.unwrap_or(c.patience);
            c.max_per_template = max_per_template.unwrap_or(c.max_per_template);
            p.delay = delay.map(secs).unwrap_or(p.delay);
            p.per_host = per_host.unwrap_or(p.per_host).max(1);
            let crawled = jobs::crawl(&db, blog.as_deref(), &config).await?;
            if !crawled.is_empty() {
                println!(
                    "next: archive serve, to read, search and cite it at http://{}/ (a running `archive daemon` keeps it current)",
                    config.serve.bind
                );
            }
            Ok(())
        }
        Command::Update { blog } => jobs::update(&db, blog.as_deref(), &config).await,
        Command::List { blog } => read::list(&db, blog.as_deref()),
        Command::Show { url } => read::show(&db, &url),
        Command::Export {
            blog,
            format,
            output,
            warc_name,
            atom_page_size,
            media_from,
        } => export::export(
            &db,
            blog.as_deref(),
            format,
            output,
            warc_name,
            &export::NativeOptions {
                atom_page_size,
                media: media_from.map_or(
                    crate::export::wxr::MediaSource::Live,
                    crate::export::wxr::MediaSource::Archive,
                ),
            },
            config.serve.page_size,
        ),
        Command::Serve {
            bind,
            auth,
            read_only_public,
        } => {
            let s = &mut config.serve;
            s.bind = bind.unwrap_or(s.bind);
            s.auth = auth.or(s.auth.take());
            s.read_only_public |= read_only_public;
            crate::serve::run(&db, &config.serve, |addr| {
                eprintln!("serving the archive {} at http://{addr}/", db.shown());
            })
            .await
        }
        Command::Rules { blog } => read::rules(&db, blog.as_deref()),
        Command::Extract { file, url, blog } => {
            let cap = config.fetch.cap(crate::fetch::Resource::Page);
            extract::extract(&db, &file, url.as_deref(), blog.as_deref(), cap)
        }
        Command::Report { blog, output } => status::report(&db, &blog, &output),
        Command::Coverage { blog, json } => {
            status::coverage(&db, blog.as_deref(), json, config.update.revisit_within)
        }
        Command::Demo { keep } => demo::demo(keep, db_given.then_some(db)).await,
        Command::Daemon {
            lease,
            poll,
            owner,
            delay,
            metrics,
        } => {
            let d = &mut config.daemon;
            d.lease = lease.map(secs).unwrap_or(d.lease);
            d.poll = poll.map(secs).unwrap_or(d.poll);
            d.metrics = metrics.or(d.metrics);
            config.politeness.delay = delay.map(secs).unwrap_or(config.politeness.delay);
            let owner = owner.unwrap_or_else(crate::daemon::default_owner);
            let shutdown = crate::daemon::stop_on_signals()?;
            let worker = config.worker(&db, owner, shutdown.clone())?;
            eprintln!(
                "archive daemon {} on {}: waiting for jobs (stop with SIGTERM or Ctrl-C)",
                worker.owner,
                db.shown()
            );
            let max_db_bytes = config.database.max_bytes();
            crate::daemon::run(
                &worker,
                &config.daemon,
                max_db_bytes,
                &config.archive,
                &config.alerts,
                shutdown,
            )
            .await
        }
        Command::Status { json } => status::status(&db, config.update.revisit_within, json),
        Command::Migrate { from, to } => {
            let from = match from {
                Some(p) => DatabaseSettings {
                    path: Some(p),
                    ..db.clone()
                },
                None => db.clone(),
            };
            migrate::migrate(
                &from,
                &DatabaseSettings {
                    path: Some(to),
                    ..db
                },
            )
        }
        Command::Render { urls, direct } => render::render_pages(&urls, &config, direct).await,
        Command::Config { defaults } => {
            if defaults {
                print!("{}", crate::config::DEFAULTS);
            } else {
                println!("# effective configuration (database: {})", db.shown());
                print!("{}", config.to_toml());
            }
            Ok(())
        }
    }
}

/// `--media-from`: an http(s) address.
fn parse_media_from(s: &str) -> std::result::Result<url::Url, String> {
    let u = url::Url::parse(s).map_err(|e| {
        format!("{e}: give the address of `archive serve`, e.g. http://127.0.0.1:8080/")
    })?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err("an http:// or https:// address of `archive serve`".into());
    }
    Ok(u)
}
