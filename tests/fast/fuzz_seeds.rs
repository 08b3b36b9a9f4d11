//! The fuzz targets' bodies (`fuzz/bodies/`, wrapped for libFuzzer by `fuzz/fuzz_targets/`),
//! compiled into this test binary and run on every seed of their corpus (`fuzz/corpus/<target>/`):
//! a signature a target calls cannot move unnoticed, and every target still runs clean on what
//! it starts from. Fuzzing itself (nightly, sanitizers) runs by hand: `fuzz/README.md`.

use std::path::Path;

macro_rules! targets {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                include!(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/bodies/", stringify!($name), ".rs"));
            }
        )*

        /// Every target, by name, with its body.
        const TARGETS: &[(&str, fn(&[u8]))] = &[$((stringify!($name), $name::run)),*];
    };
}

targets!(
    cdxj,
    charset,
    feed,
    page,
    robots,
    search_grammar,
    search_query,
    sitemap
);

#[test]
fn every_fuzz_target_runs_clean_on_its_seeds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut wrapped: Vec<String> = std::fs::read_dir(root.join("fuzz_targets"))
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    wrapped.sort();
    let named: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        wrapped, named,
        "every target in fuzz/fuzz_targets is listed here"
    );
    for (name, run) in TARGETS {
        let wrapper =
            std::fs::read_to_string(root.join(format!("fuzz_targets/{name}.rs"))).unwrap();
        assert!(
            wrapper.contains(&format!("include!(\"../bodies/{name}.rs\")"))
                && wrapper.contains("fuzz_target!(|data: &[u8]| body::run(data))"),
            "fuzz_targets/{name}.rs wraps its body and nothing else"
        );
        let mut seeds = 0;
        for seed in std::fs::read_dir(root.join("corpus").join(name)).unwrap() {
            let bytes = std::fs::read(seed.unwrap().path()).unwrap();
            run(&bytes);
            seeds += 1;
        }
        assert!(seeds > 0, "corpus/{name} has no seed");
    }
}
