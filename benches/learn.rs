//! Rule learning speed.
//!
//! * `learn/quantumdiaries/*`: the rules of www.quantumdiaries.org from its feed (15 entries,
//!   64–82 KB pages, `../shared/corpora/blogforever/`): `learn` alone on pre-parsed pages, and the
//!   whole job a crawl does — feed parse + targets + parse the 15 pages + learn (pages already in
//!   memory: no disk or network), and for comparison parsing the 15 pages alone. Skipped, saying why, when the corpus is absent.
//! * `learn/synthetic/<size>`: `learn` on 10 synthetic post pages of ~20, ~100 and ~500 KB built
//!   from real post paragraphs (`common/mod.rs`), targets as a full-content feed would give.
//!   Criterion's throughput (bytes of HTML per second) should stay flat: linear time.
//!
//! `cargo bench --bench learn` (release). `BENCH_QUICK=1` shortens the measurement.

mod common;

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use everblog::core::learn::learn;
use everblog::core::page::Page;
use everblog::core::rules::Field;
use std::time::Duration;

fn quantumdiaries(c: &mut Criterion) {
    let Some(blog) = common::corpus_blog("www.quantumdiaries.org", "feed") else {
        return;
    };
    let rules = common::learn_blog(&blog);
    eprintln!(
        "quantumdiaries: {} pages, {} KB; learned article {:?}, title {:?}",
        blog.pages.len(),
        blog.page_bytes() / 1000,
        common::rule_of(&rules, Field::Article),
        common::rule_of(&rules, Field::Title),
    );
    assert_eq!(
        common::rule_of(&rules, Field::Article),
        Some("//*[@class='entry']")
    );
    let prepared = common::prepare_blog(&blog);
    let mut g = c.benchmark_group("learn/quantumdiaries");
    g.throughput(Throughput::Bytes(blog.page_bytes() as u64));
    g.bench_function("learn_only", |b| {
        let samples = prepared.samples();
        b.iter(|| learn(black_box(&samples)))
    });
    g.bench_function("parse_pages_only", |b| {
        b.iter(|| {
            blog.pages
                .values()
                .map(|h| Page::parse(black_box(h)).elements.len())
                .sum::<usize>()
        })
    });
    g.bench_function("feed+targets+parse+learn", |b| {
        b.iter(|| common::learn_blog(black_box(&blog)))
    });
    g.finish();
}

fn synthetic(c: &mut Criterion) {
    let paras = common::real_paragraphs();
    let mut g = c.benchmark_group("learn/synthetic");
    for size in [20_000, 100_000, 500_000] {
        let pages = common::synthetic_pages(&paras, size, 10);
        let bytes: usize = pages.iter().map(|p| p.html.len()).sum();
        let prepared = common::prepare_synthetic(&pages);
        let samples = prepared.samples();
        let rules = learn(&samples);
        eprintln!(
            "synthetic {}: 10 pages, {} KB in all, {} elements/page; learned article {:?}, title {:?}",
            common::size_label(size),
            bytes / 1000,
            prepared.pages[0].elements.len(),
            common::rule_of(&rules, Field::Article),
            common::rule_of(&rules, Field::Title),
        );
        assert_eq!(
            common::rule_of(&rules, Field::Article),
            Some(common::SYN_ARTICLE)
        );
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_with_input(
            BenchmarkId::new("learn_only", common::size_label(size)),
            &samples,
            |b, s| b.iter(|| learn(black_box(s))),
        );
    }
    g.finish();
}

fn config() -> Criterion {
    let quick = std::env::var_os("BENCH_QUICK").is_some();
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(if quick { 300 } else { 1000 }))
        .measurement_time(Duration::from_secs(if quick { 1 } else { 3 }))
}

criterion_group! {
    name = benches;
    config = config();
    targets = quantumdiaries, synthetic
}
criterion_main!(benches);
