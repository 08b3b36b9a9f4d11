//! The configuration file (TOML): every knob of crawls, politeness, the daemon, the update
//! schedule and rendering, with documented defaults. Command-line flags override it.
//!
//! Each section is the settings type of the module it configures, deserialised as is (no
//! mirror structs): `[database]` [`DatabaseSettings`], `[crawl]` [`CrawlSettings`], `[update]`
//! [`UpdateSettings`], `[fetch]`
//! [`FetchSettings`], `[politeness]` [`PolitenessSettings`], `[daemon]` [`DaemonSettings`], `[schedule]`
//! [`Bounds`], `[render]` [`RenderSettings`], `[media]` [`MediaSettings`], `[robots]`
//! [`RobotsSettings`], `[archive]` [`ArchiveSettings`], `[serve]` [`ServeSettings`], `[alerts]` [`AlertSettings`]; their `Default` impls hold the defaults. A
//! [`Config`] then builds the runtime objects ([`Config::fetcher`], [`Config::crawl_options`]),
//! as ripgrep's resolved arguments build its searcher.
//!
//! Looked up at `--config PATH` (or `$EVERBLOG_CONFIG`), else
//! `$XDG_CONFIG_HOME/everblog/config.toml` (`~/.config/everblog/config.toml`); a missing default
//! file means all defaults. `archive config --defaults` prints [`DEFAULTS`], the commented file.

use crate::core::schedule::Bounds;
use crate::crawl::media::MediaSettings;
use crate::crawl::{CrawlOptions, CrawlSettings, UpdateSettings};
use crate::daemon::{AlertSettings, DaemonSettings, Worker};
use crate::export::rolling::ArchiveSettings;
use crate::fetch::politeness::{PolitenessSettings, SharedGate};
use crate::fetch::{FetchSettings, Fetcher, RobotsSettings};
use crate::render::{RenderSettings, Renderer};
use crate::serve::ServeSettings;
use crate::store::{DatabaseSettings, StoreGate};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// The default configuration file, commented: parsing it gives [`Config::default`] (a unit test
/// keeps the two equal).
pub const DEFAULTS: &str = r#"# everblog configuration (TOML). Every key is optional; shown are the defaults.
# Durations are written like "500ms", "30s", "15min", "1h", "7days".

[database]
# The archive database: an SQLite file, or a PostgreSQL URL (`url` is another name for this
# key). `--db` and $EVERBLOG_DB override it.
# Default: $XDG_DATA_HOME/everblog/archive.db (~/.local/share/everblog/archive.db).
# path = "/var/lib/everblog/archive.db"
# path = "postgres://everblog@db.example.org/archive"
# Stop writing (and stop the daemon, saying why) once the database file reaches this many
# megabytes (fractions allowed), as a full disk would. 0: no limit. Every command that
# writes holds to it. SQLite only (PostgreSQL: use the server's quotas).
max_size_mb = 0.0
# SQLite: how long a statement waits for another process's write (a daemon, a crawl) before
# it fails with "database is locked".
busy_timeout = "5s"
# PostgreSQL: how long a call keeps reconnecting after the connection is lost (the server
# restarting, a network cut) before it fails.
reconnect_for = "30s"

[crawl]
# NewCrawl stops a blog's crawl after this many pages (a later crawl resumes it).
max_pages = 10000
# Requests in flight at once per crawl.
concurrency = 4
# Per-request timeout.
timeout = "30s"
# Crawl order: "knn" (kNN estimate of post links per page, paper §4.3) or "bfs".
frontier = "knn"
# Neighbours of the kNN estimate.
k = 5
# With "knn": stop after this many pages in a row without a new post once no queued page looks
# promising. 0: crawl until the frontier is empty.
patience = 1000
# Most links followed per URL template (bounds calendars and other generated URL spaces).
max_per_template = 2000
# Extraction rules are learned from at most this many feed entries, spread over the feed
# (never more than max_pages): a 5,000-entry feed costs 20 page fetches, not 5,000.
learn_entries = 20
# Once only pages a server asked to retry later (429/503 Retry-After, robots.txt unreachable)
# are left, wait at most this long; past it the crawl ends and they are retried by the next
# crawl (the daemon schedules one when they are due).
max_retry_wait = "10s"

[update]
# UpdateCrawl reads the feeds, then looks past them so that nothing slips through:
# - backfill: when the feed no longer reaches an archived post (more posts appeared than it
#   shows), older feed pages (RFC 5005, WordPress ?paged=N), the sitemaps and the listing pages
#   (home page pagination) are read until it does; at most this many pages per UpdateCrawl.
max_backfill_pages = 50
# Sitemaps are read again (conditional GETs, cheap) at least this often, so that posts published
# with an old date are caught.
sitemap_interval = "1day"
# - comments on old posts: each post's comments are checked again on a schedule decaying with
#   its age (its comment feed by conditional GET, else its page, re-rendered for comment
#   widgets): after a quarter of the post's age, rounded down to one of these intervals.
comment_checks = ["1day", "7days", "30days", "90days", "180days"]
# At most this many posts checked per UpdateCrawl, longest overdue first.
max_comment_checks = 20
# Posts older than this are not checked any more ("0s": no limit). Closed comments never are.
comment_check_max_age = "0s"
# - revisits: every archived post's page is fetched again (a conditional GET: an unchanged page
#   costs a 304) at least once within this window, so that edits, deletions and moves of posts
#   the feed no longer shows are kept too. Posts younger than four windows and posts found
#   edited before come sooner (a quarter of their age, halved per edit, at least a day); the
#   posts of a blog are spread over the window, so each update revisits a share of them. An
#   edit is a change of the post's title, text, authors or date (a new version is kept); a
#   404/410 marks the post gone; a permanent redirect to another permalink records the move.
revisit_within = "30days"
# At most this many posts revisited per UpdateCrawl, longest overdue first (`archive status`
# shows the oldest revisit, should a large blog outgrow it).
max_revisits = 300

[fetch]
# Largest response kept, in MB (fractions allowed), by kind; past it the fetch fails saying
# which of these to raise (a body is never cut and parsed).
max_feed_mb = 20.0
max_page_mb = 20.0
max_sitemap_mb = 50.0
# Anything else.
max_body_mb = 20.0
# everblog never reaches loopback, private (RFC 1918, fc00::/7), link-local (169.254/16, cloud
# metadata), multicast or other non-public addresses, checked after DNS resolution on every
# request and redirect: except the host of a blog added by such an address (say
# http://127.0.0.1:8000/, any port of it), and the networks listed here, e.g. ["10.1.0.0/16"].
allow_private = []

[politeness]
# Time between two requests to one host, shared by every job and every daemon on this
# database. robots.txt Crawl-delay may ask for more.
delay = "1s"
# The same for loopback hosts (127.0.0.1, localhost: fixtures and tests).
loopback_delay = "0s"
# Requests in flight per host, per process.
per_host = 2
# Longest pause of a whole host after it answers 429/503; a longer Retry-After parks only the
# page that got it (retried when due), while the host's other pages go on.
max_pause = "1min"

[daemon]
# Job lease, renewed every third of it while a job runs; a dead daemon's job is taken again
# once its lease expires.
lease = "1min"
# Pause between looks at an empty job queue.
poll = "2s"
# Serve /metrics (Prometheus text format), /healthz and /readyz on this address, e.g.
# "127.0.0.1:9464" (`--metrics` overrides it). Off by default. They show counts and sizes,
# never archived content; bind beyond loopback only where your scraper needs it.
# metrics = "127.0.0.1:9464"

[schedule]
# Bounds of the interval between two UpdateCrawls of a blog. Within them the interval follows
# the blog's posting and commenting frequency (half the mean gap of the last 90 days).
min_interval = "1h"
max_interval = "7days"
# Relative jitter of each interval, so blogs do not crawl in lockstep.
jitter = 0.1
# After a failed job a blog waits min_interval, doubled after each further failure in a row,
# at most max_interval.

[render]
# Headless Chromium for blogs that need JavaScript (decided per blog; `archive add --render`).
# The system's Chromium (Debian package `chromium`); never downloaded.
chromium = "/usr/bin/chromium"
# Pages rendering at once (tabs of one browser per process; rendering mostly waits, so 4
# suit a 2-core machine).
tabs = 4
# Bound of one page: load, settle, click "load more", read the DOM.
timeout = "120s"
# Longest wait for a page to settle: no pending request, short timer or loading script,
# and nothing changed for `quiet`.
settle = "8s"
quiet = "200ms"
# Most clicks and scrolls per page for more comments ("Load more", "Show 3 more replies",
# "12 hidden": found by what they say, in the page's language). A page stopped at a bound
# says so in the log and the crawl summary.
max_clicks = 200
# Longest time spent clicking and scrolling for more comments on one page.
expand = "60s"
# Replace the browser by a fresh one after this many pages (bounds its memory).
recycle_after = 200
# More CSS selectors of "show more" controls to click, besides those found by their words.
show_more = []
# Largest rendered DOM read back, in MB; a larger page fails (and is logged).
max_dom_mb = 20

[media]
# After a crawl archives posts, their requisites and media are kept too: images (every srcset
# candidate, lazy data-src), stylesheets and the fonts and images they use, the favicon,
# audio/video, and files the post links on its own site (PDF…). Each file is fetched once per
# blog and stored once by SHA-256; `archive show` and the export list them per post.
capture = true
# Largest file kept, in MB; a larger one is recorded as failed, saying so.
max_file_mb = 100.0
# Most media kept per blog, in MB of distinct files; past it files are recorded as skipped.
max_blog_mb = 2048.0
# Most files recorded per post.
max_per_post = 200
# Files fetched at once (each host still bounded by [politeness]).
concurrency = 4
# Also keep files on other hosts than the post's (CDNs, image hosts).
other_hosts = true

[robots]
# robots.txt always decides which pages are crawled. "ignore": a permitted page's images,
# stylesheets, fonts and media are fetched whatever robots.txt says of them (as Browsertrix
# and the Internet Archive treat embeds); "obey": only those it allows.
requisites = "ignore"

[archive]
# The daemon appends every job's captures to WARC 1.1 files in this directory as it goes
# (Heritrix-style names, EVERBLOG-<time>-<serial>-<pid>~<host>.warc.gz, written as *.open and
# renamed when complete), for repositories that ingest WARC files from a directory.
# Default: none (export with `archive export --format warc` instead).
# warc_dir = "/var/lib/everblog/warc"
# A file is complete once it reaches this many MB.
max_warc_mb = 1024.0

[serve]
# `archive serve`: where the reader listens (`--bind` overrides it). An address other than
# loopback needs `auth` or `read_only_public`.
bind = "127.0.0.1:8080"
# A file of `name:$argon2id$...` lines; when set, every request needs one of these users
# (HTTP Basic). Make a line with: echo -n PASSWORD | argon2 $(openssl rand -hex 8) -id -e
# auth = "/etc/everblog/readers"
# Serve to everyone who can reach `bind`, without credentials.
read_only_public = false
# Posts (or search hits) per page.
page_size = 50
# Read-only database connections kept open between requests.
connections = 16
# A search ranks (BM25) the newest this many matches of its words; older matches follow,
# newest first. Bounds the work of a word found in nearly every post.
search_rank_window = 2000
# Limits of a public server. A client that has not sent a whole request head this long after
# connecting, or after its previous answer on a kept-alive connection, is disconnected (slow
# clients, idle connections).
header_timeout = "10s"
# A request not answered within this gets 503 with Retry-After.
request_timeout = "30s"
# Connections open at once, at most; past it the oldest connection that has sent no request
# is closed to admit a new one (else the new one is closed at once). The open-files limit is
# raised to fit, as far as the system allows.
max_connections = 10000
# Requests being answered at once, at most; past it a request gets 503 with Retry-After.
max_requests = 256
# With `auth`: failed logins allowed per user name and client address per minute; past it
# that name gets 429 from that address until the minute is over (credentials let in before
# are still let in). A wrong password and an unknown name take the same time to refuse.
max_auth_failures = 20
# A PostgreSQL archive that cannot be reached is tried again this long, then the request gets
# 503 with Retry-After (the next one tries again).
database_timeout = "3s"

[alerts]
# Every daemon judges these this often; `archive status`, the reader's home page and /metrics
# (`everblog_alerts{kind}`) show the open ones, each raised once and cleared when it no longer
# holds.
every = "5min"
# "failing": a blog's jobs failed this many times in a row (0: never).
failing_after = 3
# "silent": a blog has published nothing for this many times its usual interval between posts
# (the median of its latest 20)...
silent_factor = 4.0
# ...and for at least this long.
silent_at_least = "7days"
# "database-full": the database reached this share of [database] max_size_mb.
full_share = 0.9
# "queue-stalled": a due job has waited this long untaken (no daemon running?).
stalled_after = "1h"
# "missing-posts" holds while posts the archive knows of are not archived and no crawl of the
# blog runs (`archive coverage` lists them).
# A program and its arguments run with each new alert as one JSON object on stdin (kind,
# blog, message, raised_at, database), e.g. to send mail or a chat message; at most 30 s.
# command = ["/usr/local/bin/notify-everblog"]
"#;

/// The whole configuration: one section per concern.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `[database]`.
    pub database: DatabaseSettings,
    /// `[crawl]`.
    pub crawl: CrawlSettings,
    /// `[update]`.
    pub update: UpdateSettings,
    /// `[fetch]`.
    pub fetch: FetchSettings,
    /// `[politeness]`.
    pub politeness: PolitenessSettings,
    /// `[daemon]`.
    pub daemon: DaemonSettings,
    /// `[schedule]`.
    pub schedule: Bounds,
    /// `[render]`.
    pub render: RenderSettings,
    /// `[media]`.
    pub media: MediaSettings,
    /// `[robots]`.
    pub robots: RobotsSettings,
    /// `[archive]`.
    pub archive: ArchiveSettings,
    /// `[serve]`.
    pub serve: ServeSettings,
    /// `[alerts]`.
    pub alerts: AlertSettings,
}

/// The default configuration file: `$XDG_CONFIG_HOME/everblog/config.toml`.
pub fn default_path() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("everblog").join("config.toml"))
}

/// The default database: `$XDG_DATA_HOME/everblog/archive.db` (`~/.local/share/…`).
///
/// # Errors
/// Neither `XDG_DATA_HOME` nor `HOME` is set.
pub fn default_database() -> Result<PathBuf> {
    let dir = dirs::data_dir()
        .context("cannot find a data directory (set XDG_DATA_HOME or HOME, or pass --db)")?;
    Ok(dir.join("everblog").join("archive.db"))
}

impl Config {
    /// Parses configuration text; `source` names it in errors.
    ///
    /// # Errors
    /// One line naming `source`, the line and what is wrong (bad TOML, unknown key, bad value).
    pub fn parse(text: &str, source: &str) -> Result<Config> {
        let config: Config = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let what = e.message().replace('\n', " ");
            anyhow::anyhow!(
                "{source}{}: {what}; `archive config --defaults` shows every key",
                line.map(|l| format!(" line {l}")).unwrap_or_default()
            )
        })?;
        config.validate(source)?;
        Ok(config)
    }

    fn validate(&self, source: &str) -> Result<()> {
        let bad = |what: &str| anyhow::anyhow!("{source}: {what}");
        if self.crawl.concurrency == 0 || self.politeness.per_host == 0 {
            return Err(bad(
                "crawl.concurrency and politeness.per_host must be at least 1",
            ));
        }
        if self.schedule.min > self.schedule.max {
            return Err(bad(
                "schedule.min_interval is longer than schedule.max_interval",
            ));
        }
        if !(0.0..=1.0).contains(&self.schedule.jitter) {
            return Err(bad("schedule.jitter must be between 0 and 1"));
        }
        if !(self.database.max_size_mb >= 0.0 && self.database.max_size_mb.is_finite()) {
            return Err(bad("database.max_size_mb must be 0 (no limit) or more"));
        }
        if !(self.media.max_file_mb >= 0.0 && self.media.max_blog_mb >= 0.0) {
            return Err(bad(
                "media.max_file_mb and media.max_blog_mb must be 0 or more",
            ));
        }
        if self.render.tabs == 0 {
            return Err(bad("render.tabs must be at least 1"));
        }
        if self.daemon.lease < Duration::from_secs(1) {
            return Err(bad("daemon.lease must be at least 1s"));
        }
        Ok(())
    }

    /// Loads `explicit` (which must exist), else the default file if it exists, else defaults.
    ///
    /// # Errors
    /// The explicit file cannot be read, or a file does not parse ([`Config::parse`]).
    pub fn load(explicit: Option<&Path>) -> Result<Config> {
        let path = match explicit {
            Some(p) => p.to_path_buf(),
            None => match default_path().filter(|p| p.exists()) {
                Some(p) => p,
                None => return Ok(Config::default()),
            },
        };
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "cannot read the config file {}; `archive config --defaults > FILE` writes one",
                path.display()
            )
        })?;
        Config::parse(&text, &path.display().to_string())
    }

    /// The effective configuration as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("config serialises")
    }

    /// `[database]` with its path resolved: `[database] path` (which `--db` sets), else
    /// [`default_database`]. Every store a command opens is opened from it.
    ///
    /// # Errors
    /// No path is configured and there is no data directory.
    pub fn database(&self) -> Result<DatabaseSettings> {
        Ok(DatabaseSettings {
            path: Some(match &self.database.path {
                Some(p) => p.clone(),
                None => default_database()?,
            }),
            ..self.database.clone()
        })
    }

    /// The HTTP client: `[crawl] timeout` per request, `[fetch]`, `[politeness]`; with `shared`, each
    /// host's request slots are booked with the other processes on the database too.
    ///
    /// # Errors
    /// The HTTP client cannot be built ([`Fetcher::new`]).
    pub fn fetcher(&self, shared: Option<SharedGate>) -> Result<Fetcher> {
        Fetcher::new(
            self.crawl.timeout,
            self.fetch.clone(),
            self.politeness.clone(),
            self.robots,
            shared,
        )
    }

    /// What crawls run with: `[crawl]`, and a renderer (`[render]`) that launches Chromium only
    /// when a blog needs it. No stop signal: [`CrawlOptions::stop`] is the caller's.
    pub fn crawl_options(&self) -> CrawlOptions {
        CrawlOptions {
            settings: self.crawl.clone(),
            update: self.update.clone(),
            media: self.media.clone(),
            renderer: Some(Arc::new(Renderer::new(self.render.clone()))),
            stop: None,
        }
    }

    /// A job worker named `owner` on `db`: `[daemon] lease`, a fetcher whose host slots are
    /// shared with every process on the database, the crawl options with `stop` as their stop
    /// flag, and the `[schedule]` bounds.
    ///
    /// # Errors
    /// The database or the HTTP client cannot be opened.
    pub fn worker(
        &self,
        db: &DatabaseSettings,
        owner: String,
        stop: Arc<AtomicBool>,
    ) -> Result<Worker> {
        let gate = SharedGate(Arc::new(StoreGate::open(db)?));
        Ok(Worker {
            db: db.clone(),
            owner,
            lease: self.daemon.lease.max(Duration::from_secs(1)),
            fetcher: self.fetcher(Some(gate))?.stopping_on(stop.clone()),
            crawl: CrawlOptions {
                stop: Some(stop),
                ..self.crawl_options()
            },
            schedule: self.schedule,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_defaults_are_the_defaults() {
        assert_eq!(
            Config::parse(DEFAULTS, "DEFAULTS").unwrap(),
            Config::default()
        );
        let round = Config::default().to_toml();
        assert_eq!(
            Config::parse(&round, "round trip").unwrap(),
            Config::default()
        );
    }

    #[test]
    fn errors_name_the_file_line_and_key() {
        let e = Config::parse("[crawl]\nmax_pages = 3\nmax_pagez = 4\n", "my.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("my.toml line 3:"), "{e}");
        assert!(e.contains("max_pagez"), "{e}");
        assert!(!e.contains('\n'));
        let e = Config::parse("[schedule]\nmin_interval = \"soon\"\n", "c.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2"), "{e}");
        let e = Config::parse("[schedule]\nmin_interval = \"8days\"\n", "c.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("min_interval is longer"), "{e}");
    }

    #[test]
    fn partial_files_keep_other_defaults() {
        let c = Config::parse("[politeness]\ndelay = \"250ms\"\n", "x").unwrap();
        assert_eq!(c.politeness.delay, Duration::from_millis(250));
        assert_eq!(c.crawl, CrawlSettings::default());
    }
}
