//! Extraction speed on synthetic post pages of ~20, ~100 and ~500 KB (real post paragraphs in a
//! blog template, `common/mod.rs`).
//!
//! * `extract/parse/<size>`: `Page::parse` alone.
//! * `extract/parse+extract_fast/<size>`: one post as a crawl extracts it — `Page::parse` +
//!   `extract` with the learned class rules (`//*[@class='entry']`, `//*[@class='post-title']`),
//!   which the fast path answers from the page's class index.
//! * `extract/parse+extract_sxd/<size>`: the same with the same XPaths spelled
//!   `//*[@class = 'entry']`, which the fast path does not recognise: `extract` then goes through
//!   sxd-xpath (page converted to `sxd_document`, XPath evaluated) for both rules.
//! * `extract/apply_*/<size>`: applying the article rule alone to an already parsed page — class
//!   and absolute-path rules on the fast path (`apply_first`) and the same rules forced through
//!   sxd-xpath (`apply_slow`).
//!
//! Criterion's throughput (bytes of HTML per second) should stay flat across sizes: linear time.
//! `cargo bench --bench extract` (release). `BENCH_QUICK=1` shortens the measurement.

mod common;

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use everblog::core::extract::{extract, AuthorMetadata, RuleSet};
use everblog::core::page::Page;
use everblog::core::rules::{absolute_path, Rule, RuleKind};
use std::time::Duration;

/// The same XPath with spaces around `=`: same meaning, not a fast-path form.
fn sxd_spelling(xpath: &str) -> String {
    xpath.replacen("='", " = '", 1)
}

fn benches(c: &mut Criterion) {
    let paras = common::real_paragraphs();
    let sizes = [20_000, 100_000, 500_000];
    let pages: Vec<_> = sizes
        .iter()
        .map(|&s| common::synthetic_page(&paras, s, 0))
        .collect();
    let fast = || RuleSet {
        article: Rule::parse(common::SYN_ARTICLE).unwrap(),
        title: Some(Rule::parse(common::SYN_TITLE).unwrap()),
        exclude: Vec::new(),
        author: Vec::new(),
        author_metadata: AuthorMetadata::Fallback,
        declared_dates: true,
        date: None,
        people: Vec::new(),
    };
    let sxd = || RuleSet {
        article: Rule::parse(&sxd_spelling(common::SYN_ARTICLE)).unwrap(),
        title: Some(Rule::parse(&sxd_spelling(common::SYN_TITLE)).unwrap()),
        exclude: Vec::new(),
        author: Vec::new(),
        author_metadata: AuthorMetadata::Fallback,
        declared_dates: true,
        date: None,
        people: Vec::new(),
    };
    let (fast, sxd) = (fast(), sxd());
    assert_eq!(fast.article.kind(), RuleKind::Class);
    assert_eq!(sxd.article.kind(), RuleKind::Other);
    assert_eq!(sxd.title.as_ref().unwrap().kind(), RuleKind::Other);

    for (size, p) in sizes.iter().zip(&pages) {
        let page = Page::parse(&p.html);
        let a = extract(&page, &fast, &xctx()).expect("fast extraction");
        let b = extract(&page, &sxd, &xctx()).expect("sxd extraction");
        assert_eq!(a, b, "fast path and sxd-xpath disagree");
        assert_eq!(a.title.as_deref(), Some(p.title.as_str()));
        eprintln!(
            "synthetic {}: {} bytes, {} elements, article {} chars of text",
            common::size_label(*size),
            p.html.len(),
            page.elements.len(),
            a.content_text.chars().count()
        );
    }

    let mut g = c.benchmark_group("extract");
    for (size, p) in sizes.iter().zip(&pages) {
        let label = common::size_label(*size);
        g.throughput(Throughput::Bytes(p.html.len() as u64));
        g.bench_with_input(BenchmarkId::new("parse", &label), &p.html, |b, html| {
            b.iter(|| Page::parse(black_box(html)))
        });
        g.bench_with_input(
            BenchmarkId::new("parse+extract_fast", &label),
            &p.html,
            |b, html| b.iter(|| extract(&Page::parse(black_box(html)), &fast, &xctx())),
        );
        g.bench_with_input(
            BenchmarkId::new("parse+extract_sxd", &label),
            &p.html,
            |b, html| b.iter(|| extract(&Page::parse(black_box(html)), &sxd, &xctx())),
        );

        let page = Page::parse(&p.html);
        let class = Rule::parse(common::SYN_ARTICLE).unwrap();
        let entry = class.apply_first(&page).unwrap();
        let path = Rule::parse(&absolute_path(&page, entry).unwrap()).unwrap();
        assert_eq!(path.kind(), RuleKind::Path);
        assert_eq!(path.apply_first(&page), Some(entry));
        assert_eq!(path.apply_slow(&page).first(), Some(&entry));
        assert_eq!(class.apply_slow(&page).first(), Some(&entry));
        g.bench_function(BenchmarkId::new("apply_class_fast", &label), |b| {
            b.iter(|| class.apply_first(black_box(&page)))
        });
        g.bench_function(BenchmarkId::new("apply_class_sxd", &label), |b| {
            b.iter(|| class.apply_slow(black_box(&page)))
        });
        g.bench_function(BenchmarkId::new("apply_path_fast", &label), |b| {
            b.iter(|| path.apply_first(black_box(&page)))
        });
        g.bench_function(BenchmarkId::new("apply_path_sxd", &label), |b| {
            b.iter(|| path.apply_slow(black_box(&page)))
        });
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
    name = extract_benches;
    config = config();
    targets = benches
}
criterion_main!(extract_benches);

/// Extraction context for benchmarks: UTC, fetched at the epoch (dates are not what is timed).
fn xctx() -> everblog::core::extract::ExtractContext {
    everblog::core::extract::ExtractContext {
        offset: chrono::FixedOffset::east_opt(0).expect("zero offset"),
        fetched_at: chrono::DateTime::UNIX_EPOCH,
    }
}
