//! The fast path of `Rule::apply` (attribute indexes, element-table walk) must select exactly
//! what sxd-xpath selects, on real pages: the engine fixtures always, and the BlogForever corpus
//! when `../shared/corpora/` is present.

use everblog::core::page::Page;
use everblog::core::rules::{rule_for, Rule, RuleKind};
use std::path::{Path, PathBuf};

fn html_files(dir: &Path, limit: usize, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if out.len() >= limit {
            return;
        }
        if p.is_dir() {
            html_files(&p, limit, out);
        } else if std::fs::read(&p).is_ok_and(|b| {
            b.len() > 1000
                && String::from_utf8_lossy(&b[..b.len().min(2000)])
                    .to_ascii_lowercase()
                    .contains("<html")
        }) {
            out.push(p);
        }
    }
}

fn check_page(path: &Path) -> usize {
    let html = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    let page = Page::parse(&html);
    let mut checked = 0;
    // Every 7th element's candidate rule, plus its forms' neighbours, through both paths.
    for i in (0..page.elements.len() as u32).step_by(7) {
        let Some((xpath, kind)) = rule_for(&page, i) else {
            continue;
        };
        let rule = Rule::parse(&xpath).unwrap();
        assert_ne!(
            rule.kind(),
            RuleKind::Other,
            "{xpath} should take the fast path"
        );
        let (fast, slow) = (rule.apply(&page), rule.apply_slow(&page));
        assert_eq!(fast, slow, "{}: {xpath} ({kind:?})", path.display());
        assert_eq!(
            fast.first(),
            Some(&i),
            "{}: {xpath} does not select its node first",
            path.display()
        );
        checked += 1;
    }
    checked
}

#[test]
fn fast_path_equals_sxd_xpath_on_engine_pages() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sites");
    let mut files = Vec::new();
    for blog in ["pelican", "hexo", "nikola"] {
        let mut f = Vec::new();
        html_files(&root.join(blog).join("site"), 4, &mut f);
        files.extend(f);
    }
    assert!(files.len() >= 9);
    let n: usize = files.iter().map(|f| check_page(f)).sum();
    assert!(n > 100, "only {n} rules checked");
}

#[test]
fn fast_path_equals_sxd_xpath_on_the_blogforever_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora/blogforever");
    if !root.is_dir() {
        eprintln!(
            "skipping: {} is absent (it ships with the team's shared/ folder)",
            root.display()
        );
        return;
    }
    let mut files = Vec::new();
    for host in [
        "korben.info",
        "www.quantumdiaries.org",
        "digital-examples.blogspot.com",
        "mnmlist.com",
        "letitcrash.com",
        "meinrhyme.wordpress.com",
        "www.huffingtonpost.com",
    ] {
        let mut f = Vec::new();
        html_files(&root.join(host), 2, &mut f);
        files.extend(f);
    }
    let n: usize = files.iter().map(|f| check_page(f)).sum();
    assert!(n > 500, "only {n} rules checked");
}
