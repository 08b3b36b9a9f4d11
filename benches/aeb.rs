//! The fallback extractor on the article-extraction-benchmark's pages (for `benches/aeb.sh`).
//!
//! ```text
//! cargo bench --bench aeb -- HTML_DIR OUTPUT.json [--reps N]
//! ```
//!
//! `HTML_DIR` holds the benchmark's `*.html.gz` (or `*.html`) pages. Each page is decoded from
//! UTF-8 (lossy), then timed from the HTML string in memory to its article text
//! (`Page::parse` + `core::fallback::article_text`), once to warm up and `N` times more
//! (default 5), the median kept. Writes `{"<page>": {"articleBody": "…"}}` as the benchmark's
//! `evaluate.py` reads it, and prints to stderr the pages, the mean and median ms per page.

use everblog::core::fallback::article_text;
use everblog::core::page::Page;
use std::io::Read;
use std::time::Instant;

/// The allocator the `archive` binary ships with (src/main.rs), so the figures are its figures.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let (Some(dir), Some(out)) = (args.first(), args.get(1)) else {
        eprintln!("usage: cargo bench --bench aeb -- HTML_DIR OUTPUT.json [--reps N]");
        std::process::exit(2);
    };
    let reps: usize = args
        .iter()
        .position(|a| a == "--reps")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| {
            p.to_string_lossy().ends_with(".html.gz") || p.to_string_lossy().ends_with(".html")
        })
        .collect();
    paths.sort();
    let mut predictions = serde_json::Map::new();
    let mut times = Vec::new();
    let mut parse_times = Vec::new();
    for path in &paths {
        let name = path.file_name().expect("file name").to_string_lossy();
        let key = name
            .trim_end_matches(".gz")
            .trim_end_matches(".html")
            .to_string();
        let mut bytes = Vec::new();
        let file = std::fs::File::open(path).expect("page file");
        if name.ends_with(".gz") {
            flate2::read::GzDecoder::new(file).read_to_end(&mut bytes)
        } else {
            std::io::BufReader::new(file).read_to_end(&mut bytes)
        }
        .expect("page read");
        let html = String::from_utf8_lossy(&bytes);
        let text = article_text(&Page::parse(&html));
        if std::env::var("AEB_DEBUG").is_ok_and(|k| key.starts_with(&k)) {
            let page = Page::parse(&html);
            if let Some(a) = everblog::core::fallback::article(&page) {
                let e = &page.elements[a.root as usize];
                eprintln!(
                    "{key}: root <{} class={:?} id={:?}> chars {} skips {}",
                    e.name,
                    page.attr(a.root, "class"),
                    page.attr(a.root, "id"),
                    e.end - e.start,
                    a.skip.len()
                );
            }
            eprintln!("text: {}", text.chars().take(600).collect::<String>());
        }
        let (mut runs, mut parses): (Vec<f64>, Vec<f64>) = (0..reps)
            .map(|_| {
                let t = Instant::now();
                let page = Page::parse(&html);
                let parsed = t.elapsed().as_secs_f64() * 1e3;
                std::hint::black_box(article_text(&page));
                (t.elapsed().as_secs_f64() * 1e3, parsed)
            })
            .unzip();
        runs.sort_by(f64::total_cmp);
        parses.sort_by(f64::total_cmp);
        times.push(runs.get(runs.len() / 2).copied().unwrap_or(0.0));
        parse_times.push(parses.get(parses.len() / 2).copied().unwrap_or(0.0));
        predictions.insert(key, serde_json::json!({ "articleBody": text }));
    }
    std::fs::write(out, serde_json::Value::Object(predictions).to_string()).expect("write output");
    let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0.0);
    let parse = parse_times.iter().sum::<f64>() / parse_times.len().max(1) as f64;
    eprintln!(
        "everblog fallback: {} pages, mean {mean:.2} ms/page (of which Page::parse {parse:.2}), median {median:.2} ms/page",
        times.len()
    );
}
