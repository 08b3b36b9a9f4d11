//! Pages nested deep (hostile or broken HTML): time to parse, score (Algorithm 2) and extract a
//! page of about 1 MB nested N elements deep, for N up to 100,000. Parsing caps the tree's depth
//! (`core::html::MAX_DEPTH`), so every step stays linear in the page's size.
//!
//! ```text
//! cargo bench --bench deep_pages            # depths 1,000 … 100,000, median of 5 runs each
//! ```

use everblog::core::extract::{extract, AuthorMetadata, ExtractContext, RuleSet};
use everblog::core::feed::Target;
use everblog::core::learn::score_elements;
use everblog::core::page::Page;
use everblog::core::rules::Rule;
use std::time::{Duration, Instant};

/// The allocator the `archive` binary ships with (src/main.rs).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// About 1 MB of HTML (1.1 MB at 100,000 deep): `depth` nested `<div>`s, every hundredth with
/// a word, then filler paragraphs.
fn page(depth: usize) -> String {
    let mut s =
        String::from("<html><head><title>Deep</title></head><body><article class=\"post\">");
    for i in 0..depth {
        s.push_str("<div>");
        if i % 100 == 0 {
            s.push_str(&format!("w{i} "));
        }
    }
    s.push_str(&"</div>".repeat(depth));
    while s.len() < 1_000_000 {
        s.push_str("<p>Filler text of an ordinary paragraph, to reach a megabyte.</p>");
    }
    s.push_str("</article></body></html>");
    s
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let rules = RuleSet {
        article: Rule::parse("//*[@class='post']").unwrap(),
        title: Some(Rule::parse("//title").unwrap()),
        exclude: Vec::new(),
        author: Vec::new(),
        author_metadata: AuthorMetadata::Fallback,
        declared_dates: true,
        date: None,
        people: Vec::new(),
    };
    let ctx = ExtractContext {
        offset: chrono::FixedOffset::east_opt(0).unwrap(),
        fetched_at: chrono::Utc::now(),
    };
    let target = Target::new("Filler text of an ordinary paragraph", false);
    println!("depth     bytes  parse_ms  score_ms  extract_ms  elements  max_depth");
    for depth in [1_000, 10_000, 25_000, 100_000] {
        let html = page(depth);
        let (mut parse, mut score, mut ext) = (Vec::new(), Vec::new(), Vec::new());
        let mut shape = (0, 0);
        for _ in 0..5 {
            let t = Instant::now();
            let p = Page::parse(&html);
            parse.push(t.elapsed());
            let t = Instant::now();
            std::hint::black_box(score_elements(&p, &[&target]));
            score.push(t.elapsed());
            let t = Instant::now();
            std::hint::black_box(extract(&p, &rules, &ctx));
            ext.push(t.elapsed());
            shape = (
                p.elements.len(),
                p.elements.iter().map(|e| e.depth).max().unwrap_or(0),
            );
        }
        println!(
            "{depth:>7} {:>9} {:>9.1} {:>9.1} {:>11.1} {:>9} {:>10}",
            html.len(),
            median(parse).as_secs_f64() * 1e3,
            median(score).as_secs_f64() * 1e3,
            median(ext).as_secs_f64() * 1e3,
            shape.0,
            shape.1
        );
    }
}
