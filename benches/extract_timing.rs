//! Per-page extraction timing, printed as JSON (for `extract_vs_trafilatura.sh`).
//!
//! Two ways to name the pages and rules:
//!
//! ```text
//! # fixture blogs: learn the rules from the blog's feed and entry pages (as a crawl does),
//! # then time every post page listed in truth.json
//! cargo bench --bench extract_timing -- --site fixtures/sites/pelican --site fixtures/sites/hexo
//!
//! # corpus blogs (../shared/corpora/blogforever/HOST, feed file `feed` unless HOST:FILE): rules
//! # learned from the feed, timed on the entries' pages; skipped, saying why, when absent
//! cargo bench --bench extract_timing -- --corpus www.quantumdiaries.org
//!
//! # any pages with given rules (PATH: an HTML file, or a directory searched for *.html)
//! cargo bench --bench extract_timing -- --article "//*[@class='entry']" --title "//h1" PATH...
//! ```
//!
//! Environment equivalents: `EXTRACT_SITES`, `EXTRACT_CORPUS` and `EXTRACT_PATHS` (`:`-separated), `EXTRACT_ARTICLE`,
//! `EXTRACT_TITLE`, `EXTRACT_REPS`. `--reps N` (default 20): each page is extracted once to warm
//! up, then N times; its time is the median. Timed: `Page::parse` + `extract` from the HTML
//! string already in memory (no disk I/O), as `trafilatura.extract(html)` is timed.

mod common;

use everblog::core::extract::{extract, AuthorMetadata, RuleSet};
use everblog::core::page::Page;
use everblog::core::rules::Field;
use everblog::core::rules::Rule;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

struct Job {
    name: String,
    /// "fixture", "corpus" or "pages".
    kind: &'static str,
    rules: (String, Option<String>, Vec<String>),
    /// (file, expected body text prefix from truth.json)
    pages: Vec<(PathBuf, Option<String>)>,
}

fn html_files(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for e in entries {
            if e.is_dir() {
                html_files(&e, out);
            } else if e.extension().is_some_and(|x| x == "html" || x == "htm") {
                out.push(e);
            }
        }
    } else {
        out.push(p.to_path_buf());
    }
}

fn site_job(dir: &Path) -> Job {
    let (truth, blog) = common::fixture_blog(dir);
    let rules = common::learn_blog(&blog);
    let article = common::rule_of(&rules, Field::Article)
        .unwrap_or_else(|| panic!("{}: no article rule learned", dir.display()))
        .to_string();
    let title = common::rule_of(&rules, Field::Title).map(str::to_string);
    let exclude = rules
        .iter()
        .filter(|r| r.field == Field::ArticleExclude)
        .map(|r| r.xpath.clone())
        .collect();
    let pages = truth["posts"]
        .as_array()
        .expect("truth.json posts")
        .iter()
        .map(|p| {
            let file = common::fixture_file(dir, p["path"].as_str().unwrap());
            let body: Option<String> = p["body_text"]
                .as_str()
                .map(|b| b.chars().take(40).collect());
            (file, body)
        })
        .collect();
    Job {
        name: blog.name,
        kind: "fixture",
        rules: (article, title, exclude),
        pages,
    }
}

/// A corpus blog (`../shared/corpora/blogforever/<host>`, feed file `feed`): rules learned from its
/// feed, timed on its entries' pages.
fn corpus_job(host: &str) -> Option<Job> {
    let (host, feed_file) = host.split_once(':').unwrap_or((host, "feed"));
    let blog = common::corpus_blog(host, feed_file)?;
    let rules = common::learn_blog(&blog);
    let article = common::rule_of(&rules, Field::Article)?.to_string();
    let title = common::rule_of(&rules, Field::Title).map(str::to_string);
    let exclude = rules
        .iter()
        .filter(|r| r.field == Field::ArticleExclude)
        .map(|r| r.xpath.clone())
        .collect();
    let dir = common::corpus_host(host)?;
    let files = common::pages_by_path(&dir);
    let f = everblog::core::feed::parse(&blog.feed, &blog.feed_url).ok()?;
    let pages = f
        .entries
        .iter()
        .filter_map(|e| {
            let path = url::Url::parse(&e.url)
                .ok()?
                .path()
                .trim_matches('/')
                .to_string();
            files.get(&path).map(|p| (p.clone(), None))
        })
        .collect();
    Some(Job {
        name: host.to_string(),
        kind: "corpus",
        rules: (article, title, exclude),
        pages,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn run(job: &Job, reps: usize) -> Value {
    let (article, title, exclude) = &job.rules;
    let rules = RuleSet {
        article: Rule::parse(article).expect("article rule"),
        title: title
            .as_deref()
            .map(|t| Rule::parse(t).expect("title rule")),
        exclude: exclude
            .iter()
            .map(|x| Rule::parse(x).expect("exclude rule"))
            .collect(),
        author: Vec::new(),
        author_metadata: AuthorMetadata::Fallback,
        declared_dates: true,
        date: None,
        people: Vec::new(),
    };
    let mut pages = Vec::new();
    let mut times = Vec::new();
    let mut total_bytes = 0;
    let mut found = 0;
    for (file, expected) in &job.pages {
        let html = String::from_utf8_lossy(
            &std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display())),
        )
        .into_owned();
        let first = extract(&Page::parse(&html), &rules, &xctx());
        let mut t = Vec::with_capacity(reps);
        for _ in 0..reps {
            let start = Instant::now();
            let out = extract(&Page::parse(std::hint::black_box(&html)), &rules, &xctx());
            t.push(start.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(out);
        }
        let ms = median(t);
        let text = first
            .as_ref()
            .map(|e| e.content_text.clone())
            .unwrap_or_default();
        let ok = expected.as_ref().map(|b| text.contains(b.as_str()));
        if first.is_some() {
            found += 1;
        }
        total_bytes += html.len();
        times.push(ms);
        pages.push(json!({
            "file": std::fs::canonicalize(file).unwrap_or(file.clone()),
            "bytes": html.len(),
            "ms": ms,
            "text_chars": text.chars().count(),
            "title": first.as_ref().and_then(|e| e.title.clone()),
            "body_found": ok,
        }));
    }
    let n = times.len().max(1) as f64;
    json!({
        "name": job.name,
        "kind": job.kind,
        "rules": {"article": article, "title": title, "exclude": exclude},
        "pages_n": pages.len(),
        "extracted_n": found,
        "total_bytes": total_bytes,
        "mean_ms": times.iter().sum::<f64>() / n,
        "median_ms": median(times.clone()),
        "pages": pages,
    })
}

fn main() {
    let env_list = |k: &str| -> Vec<String> {
        std::env::var(k)
            .ok()
            .map(|v| {
                v.split(':')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut sites = env_list("EXTRACT_SITES");
    let mut corpus = env_list("EXTRACT_CORPUS");
    let mut paths = env_list("EXTRACT_PATHS");
    let mut article = std::env::var("EXTRACT_ARTICLE").ok();
    let mut title = std::env::var("EXTRACT_TITLE").ok();
    let mut reps: usize = std::env::var("EXTRACT_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    // `cargo bench` appends `--bench`; ignore it.
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(a) = args.next() {
        let mut val = |name: &str| {
            args.next()
                .unwrap_or_else(|| panic!("{name} needs a value"))
        };
        match a.as_str() {
            "--site" => sites.push(val("--site")),
            "--corpus" => corpus.push(val("--corpus")),
            "--article" => article = Some(val("--article")),
            "--title" => title = Some(val("--title")),
            "--reps" => reps = val("--reps").parse().expect("--reps N"),
            "-h" | "--help" => {
                eprintln!(
                    "usage: extract_timing [--reps N] --site FIXTURE_DIR... --corpus HOST[:FEED_FILE]...\n       \
                     extract_timing [--reps N] --article XPATH [--title XPATH] PATH..."
                );
                return;
            }
            _ if a.starts_with("--") => panic!("unknown option {a}"),
            _ => paths.push(a),
        }
    }
    // Relative paths are taken from the crate root when they do not exist from here.
    let resolve = |p: &str| {
        let p = PathBuf::from(p);
        if p.exists() {
            p
        } else {
            common::manifest_dir().join(p)
        }
    };
    let mut jobs: Vec<Job> = sites.iter().map(|s| site_job(&resolve(s))).collect();
    jobs.extend(corpus.iter().filter_map(|h| corpus_job(h)));
    if !paths.is_empty() {
        let article = article.expect("--article XPATH is needed with pages");
        let mut files = Vec::new();
        for p in &paths {
            html_files(&resolve(p), &mut files);
        }
        jobs.push(Job {
            name: "pages".into(),
            kind: "pages",
            rules: (article, title, Vec::new()),
            pages: files.into_iter().map(|f| (f, None)).collect(),
        });
    }
    if jobs.is_empty() {
        eprintln!(
            "nothing to time: give --site FIXTURE_DIR or --article XPATH PATH... (see --help)"
        );
        std::process::exit(2);
    }
    let runs: Vec<Value> = jobs
        .iter()
        .map(|j| {
            let r = run(j, reps);
            eprintln!(
                "{}: {} pages, {:.3} ms/page (mean), rules {}",
                r["name"].as_str().unwrap_or(""),
                r["pages_n"],
                r["mean_ms"].as_f64().unwrap_or(0.0),
                r["rules"]
            );
            r
        })
        .collect();
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({"reps": reps, "runs": runs})).unwrap()
    );
}

/// Extraction context for benchmarks: UTC, fetched at the epoch (dates are not what is timed).
fn xctx() -> everblog::core::extract::ExtractContext {
    everblog::core::extract::ExtractContext {
        offset: chrono::FixedOffset::east_opt(0).expect("zero offset"),
        fetched_at: chrono::DateTime::UNIX_EPOCH,
    }
}
