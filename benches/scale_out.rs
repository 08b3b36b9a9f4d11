//! Scale-out benchmark (issue 16): the real `archive` binary as daemon processes.
//!
//! `throughput`: N daemons (1, 2, 4) archive B small blogs (default 200 copies of the Pelican
//! fixture, each served on its own 127.0.0.1 port, so each is its own host; no politeness delay
//! on loopback) into one archive, on SQLite and on PostgreSQL, each run from an empty database.
//! Figures: wall time from the first NewCrawl's start to the last one's end, pages fetched per
//! second, posts per second; every blog must end with the same posts and no job may fail.
//!
//! `hold`: one daemon holding B blogs (default 1,000; crawled first by four setup daemons with
//! `[crawl] max_pages` capped, then UpdateCrawls falling due every few minutes): its resident
//! memory (VmRSS sampled every 0.5 s, and VmHWM, the kernel's peak) and, for every UpdateCrawl it
//! started, the delay between the job falling due (`not_before`) and its start.
//!
//! PostgreSQL is a private cluster (`tests/common/pg_cluster.rs`) run with `fsync=on` and
//! `synchronous_commit=off`: like SQLite in WAL mode with `synchronous=NORMAL`, a commit does not
//! wait for the disk, and a crash loses at most the last commits, never consistency.
//!
//! Usage: `benches/scale_out.sh` (builds, then runs both), or
//! `cargo bench --bench scale_out -- throughput|hold --archive target/dist/archive
//! [--blogs B] [--daemons 1,2,4] [--backends sqlite,postgres] [--max-pages N] [--window SECONDS]
//! [--metrics]` (`--metrics`: each daemon serves /metrics, `[daemon] metrics`, as an operator
//! runs it).

#[allow(dead_code)]
#[path = "../tests/common/pg_cluster.rs"]
mod pg_cluster;

use everblog::fixture_server::{Root, Server};
use everblog::store::DatabaseSettings;
use everblog::store::{JobKind, JobState, Store};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free TCP port on 127.0.0.1 (for the cluster).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Args {
    mode: String,
    archive: PathBuf,
    blogs: usize,
    daemons: Vec<usize>,
    backends: Vec<String>,
    max_pages: Option<u64>,
    window: Duration,
    /// Each daemon serves /metrics (`[daemon] metrics`, a free port), as an operator runs it.
    metrics: bool,
}

fn args() -> Args {
    let mut a = Args {
        mode: String::new(),
        archive: PathBuf::from("target/dist/archive"),
        blogs: 0,
        daemons: vec![1, 2, 4],
        backends: vec!["sqlite".into(), "postgres".into()],
        max_pages: None,
        window: Duration::from_secs(240),
        metrics: false,
    };
    let mut it = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--archive" => a.archive = value().into(),
            "--blogs" => a.blogs = value().parse().unwrap(),
            "--daemons" => a.daemons = value().split(',').map(|n| n.parse().unwrap()).collect(),
            "--backends" => a.backends = value().split(',').map(String::from).collect(),
            "--max-pages" => a.max_pages = Some(value().parse().unwrap()),
            "--window" => a.window = Duration::from_secs(value().parse().unwrap()),
            "--metrics" => a.metrics = true,
            "throughput" | "hold" => a.mode = arg.clone(),
            other => {
                panic!("unknown argument {other}; see the doc comment of benches/scale_out.rs")
            }
        }
    }
    if a.blogs == 0 {
        a.blogs = if a.mode == "hold" { 1000 } else { 200 };
    }
    a
}

/// `n` copies of the Pelican fixture, each on its own port; their feed URLs in `list`.
fn serve_blogs(n: usize, list: &Path) -> Vec<Server> {
    let site = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sites/pelican");
    let truth: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site.join("truth.json")).unwrap()).unwrap();
    let base = truth["base_url"].as_str().map(String::from);
    let feed = truth["feed_path"].as_str().unwrap().to_string();
    let servers: Vec<Server> = (0..n)
        .map(|_| Server::start(Root::Disk(site.join("site")), base.clone()).unwrap())
        .collect();
    let urls: Vec<String> = servers
        .iter()
        .map(|s| format!("{}{feed}", s.origin))
        .collect();
    std::fs::write(list, urls.join("\n") + "\n").unwrap();
    servers
}

/// The `archive` binary under test (`--archive`).
static EXE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

fn archive(db: &str, config: &Path) -> Command {
    let mut c = Command::new(EXE.get().expect("set in main"));
    c.args(["--db", db, "--config"]).arg(config);
    c
}

fn run_ok(mut c: Command) {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{c:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn daemon(db: &str, config: &Path, owner: &str) -> Child {
    archive(db, config)
        .args(["daemon", "--owner", owner])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn stop(children: Vec<Child>) {
    for c in &children {
        let _ = Command::new("kill")
            .args(["-TERM", &c.id().to_string()])
            .status();
    }
    for mut c in children {
        let _ = c.wait();
    }
}

/// Waits until every job of `kind` has ended; returns them.
fn wait_for_jobs(db: &str, kind: JobKind, n: usize) -> Vec<everblog::store::Job> {
    let started = Instant::now();
    loop {
        let store = Store::open_read_only(&DatabaseSettings::at(Path::new(db))).unwrap();
        let jobs: Vec<_> = store
            .jobs(1_000_000)
            .unwrap()
            .into_iter()
            .filter(|j| j.kind == kind)
            .collect();
        let ended = jobs
            .iter()
            .filter(|j| matches!(j.state, JobState::Done | JobState::Failed))
            .count();
        if ended >= n {
            return jobs;
        }
        assert!(
            started.elapsed() < Duration::from_secs(3600),
            "{ended} of {n} jobs ended after an hour"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn config(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

fn throughput(a: &Args, work: &Path) {
    let list = work.join("blogs.txt");
    let _servers = serve_blogs(a.blogs, &list);
    let cluster = a.backends.iter().any(|b| b == "postgres").then(|| {
        pg_cluster::Cluster::start_with(
            "-c fsync=on -c full_page_writes=on -c synchronous_commit=off \
             -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=top",
        )
        .expect("PostgreSQL is installed (bash .ci/setup --tests)")
    });
    let cfg = work.join("config.toml");
    let mut text = String::from("[daemon]\npoll = \"200ms\"\n");
    if a.metrics {
        text += "metrics = \"127.0.0.1:0\"\n";
    }
    if let Some(p) = a.max_pages {
        text += &format!("[crawl]\nmax_pages = {p}\n");
    }
    config(&cfg, &text);
    println!(
        "| back end | daemons | blogs | pages | posts | wall s | pages/s | posts/s | failed jobs | statements/page |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for backend in &a.backends {
        for &n in &a.daemons {
            let db = match (backend.as_str(), &cluster) {
                ("postgres", Some(c)) => c.database(&format!("bench_{n}")),
                _ => work
                    .join(format!("sqlite-{n}.db"))
                    .to_string_lossy()
                    .into_owned(),
            };
            let mut add = archive(&db, &cfg);
            add.args(["add", "--from"]).arg(&list);
            run_ok(add);
            let statements = |reset: bool| -> Option<i64> {
                if backend != "postgres" {
                    return None;
                }
                let mut c = postgres::Client::connect(&db, postgres::NoTls).ok()?;
                c.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                    .ok()?;
                if reset {
                    c.batch_execute("SELECT pg_stat_statements_reset()").ok()?;
                }
                if !reset && std::env::var_os("SCALE_OUT_STATEMENTS").is_some() {
                    for r in c
                        .query(
                            "SELECT calls::BIGINT, total_exec_time, left(regexp_replace(query, '\\s+', ' ', 'g'), 100)
                             FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 25",
                            &[],
                        )
                        .ok()?
                    {
                        eprintln!(
                            "{:>8} {:>9.1} ms {}",
                            r.get::<_, i64>(0),
                            r.get::<_, f64>(1),
                            r.get::<_, String>(2)
                        );
                    }
                }
                let row = c
                    .query_one(
                        "SELECT COALESCE(SUM(calls), 0)::BIGINT FROM pg_stat_statements
                         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())",
                        &[],
                    )
                    .ok()?;
                Some(row.get(0))
            };
            statements(true);
            let daemons: Vec<Child> = (0..n)
                .map(|i| daemon(&db, &cfg, &format!("d{i}")))
                .collect();
            let jobs = wait_for_jobs(&db, JobKind::NewCrawl, a.blogs);
            stop(daemons);
            let t0 = jobs.iter().filter_map(|j| j.started_at).min().unwrap();
            let t1 = jobs.iter().filter_map(|j| j.finished_at).max().unwrap();
            let wall = (t1 - t0).num_milliseconds() as f64 / 1000.0;
            let failed = jobs.iter().filter(|j| j.state == JobState::Failed).count();
            // Every statement the daemons sent (top level: not the foreign-key checks and
            // triggers the server runs inside them; and the few of this bench's polls), each one
            // round trip: the store prepares each statement once per connection.
            // SCALE_OUT_STATEMENTS=1 prints the 25 that took the server longest (calls, total time).
            let calls = statements(false);
            let store = Store::open_read_only(&DatabaseSettings::at(Path::new(&db))).unwrap();
            let (mut pages, mut posts) = (0, 0);
            let mut per_blog = std::collections::BTreeSet::new();
            for b in store.blogs().unwrap() {
                let c = store.counts(b.id).unwrap();
                pages += c.fetches;
                posts += c.posts;
                per_blog.insert(c.posts);
            }
            println!(
                "| {backend} | {n} | {} | {pages} | {posts} | {wall:.1} | {:.1} | {:.1} | {failed} | {} |",
                a.blogs,
                pages as f64 / wall,
                posts as f64 / wall,
                calls.map_or("-".to_string(), |c| format!("{:.1}", c as f64 / pages as f64)),
            );
            if per_blog.len() > 1 || failed > 0 {
                println!("  (posts per blog differ: {per_blog:?})");
            }
        }
    }
}

/// The `VmRSS` and `VmHWM` of process `pid`, in MB.
fn memory(pid: u32) -> Option<(f64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb = |key: &str| -> Option<f64> {
        let line = status.lines().find(|l| l.starts_with(key))?;
        Some(line.split_whitespace().nth(1)?.parse::<f64>().ok()? / 1024.0)
    };
    Some((kb("VmRSS:")?, kb("VmHWM:")?))
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn hold(a: &Args, work: &Path) {
    let list = work.join("blogs.txt");
    let t = Instant::now();
    let _servers = serve_blogs(a.blogs, &list);
    let db = work.join("hold.db").to_string_lossy().into_owned();
    let cfg = work.join("config.toml");
    config(
        &cfg,
        &format!(
            "[crawl]\nmax_pages = {}\n[schedule]\nmin_interval = \"1min\"\nmax_interval = \"3min\"\njitter = 0.5\n",
            a.max_pages.unwrap_or(12)
        ),
    );
    let mut add = archive(&db, &cfg);
    add.args(["add", "--from"]).arg(&list);
    run_ok(add);
    eprintln!(
        "{} blogs added in {:.0?}; crawling them",
        a.blogs,
        t.elapsed()
    );
    let setup: Vec<Child> = (0..4)
        .map(|i| daemon(&db, &cfg, &format!("setup{i}")))
        .collect();
    wait_for_jobs(&db, JobKind::NewCrawl, a.blogs);
    stop(setup);
    eprintln!(
        "crawled in {:.0?}; one daemon for {:?}",
        t.elapsed(),
        a.window
    );

    let measured_from = chrono::Utc::now();
    let mut one = daemon(&db, &cfg, "held");
    let pid = one.id();
    let started = Instant::now();
    let mut samples = Vec::new();
    let mut hwm = 0.0;
    while started.elapsed() < a.window {
        if let Some((rss, peak)) = memory(pid) {
            samples.push(rss);
            hwm = peak;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let cpu = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let f: Vec<&str> = s.rsplit(')').next()?.split_whitespace().collect();
            Some((f[11].parse::<f64>().ok()? + f[12].parse::<f64>().ok()?) / 100.0)
        })
        .unwrap_or(f64::NAN);
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let _ = one.wait();
    let until = chrono::Utc::now();

    let store = Store::open_read_only(&DatabaseSettings::at(Path::new(&db))).unwrap();
    let jobs = store.jobs(1_000_000).unwrap();
    let updates: Vec<_> = jobs
        .iter()
        .filter(|j| j.kind == JobKind::UpdateCrawl && j.owner.as_deref() == Some("held"))
        .filter(|j| j.started_at.is_some_and(|s| s >= measured_from))
        .collect();
    let mut delays: Vec<f64> = updates
        .iter()
        .filter_map(|j| Some((j.started_at? - j.not_before?).num_milliseconds() as f64 / 1000.0))
        .collect();
    delays.sort_by(f64::total_cmp);
    let waiting = jobs
        .iter()
        .filter(|j| j.kind == JobKind::UpdateCrawl && j.state == JobState::Queued)
        .filter(|j| j.not_before.is_some_and(|t| t < until))
        .count();
    let failed = updates
        .iter()
        .filter(|j| j.state == JobState::Failed)
        .count();
    samples.sort_by(f64::total_cmp);
    println!(
        "| blogs | window s | UpdateCrawls run | failed | due, not started at the end | delay median s | p90 s | max s | RSS median MB | RSS max sampled MB | VmHWM MB | CPU s |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {} | {} | {failed} | {waiting} | {:.2} | {:.2} | {:.2} | {:.1} | {:.1} | {hwm:.1} | {cpu:.1} |",
        a.blogs,
        a.window.as_secs(),
        updates.len(),
        percentile(&delays, 0.5),
        percentile(&delays, 0.9),
        delays.last().copied().unwrap_or(f64::NAN),
        percentile(&samples, 0.5),
        samples.last().copied().unwrap_or(f64::NAN),
    );
}

fn main() {
    let a = args();
    EXE.set(
        std::fs::canonicalize(&a.archive)
            .expect("--archive: the benchmarked binary (cargo build --profile dist)"),
    )
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    match a.mode.as_str() {
        "throughput" => throughput(&a, work.path()),
        "hold" => hold(&a, work.path()),
        _ => eprintln!("usage: scale_out throughput|hold (see benches/scale_out.rs)"),
    }
}
