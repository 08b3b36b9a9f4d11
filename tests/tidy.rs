//! Architecture invariants that the compiler does not check (see ARCHITECTURE.md):
//! every source file opens with a `//!` doc saying what it owns; `src/core` does no IO, no async
//! and no SQL; SQL statements appear only under `src/store`.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_module_says_what_it_owns() {
    for f in rust_files(&src()) {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            text.starts_with("//!"),
            "{} does not open with a //! module doc",
            f.display()
        );
    }
}

#[test]
fn core_is_pure() {
    let forbidden = [
        "tokio",
        "reqwest",
        "rusqlite",
        "std::fs",
        "std::net",
        "std::process",
        "Utc::now",
        "SystemTime",
        "crate::store",
        "crate::fetch",
        "crate::crawl",
    ];
    for f in rust_files(&src().join("core")) {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for word in forbidden {
                assert!(
                    !code.contains(word),
                    "{}:{}: `{word}` in the pure core",
                    f.display(),
                    n + 1
                );
            }
        }
    }
}

#[test]
fn sql_lives_only_in_the_store() {
    let sql = [
        "SELECT ",
        "INSERT ",
        "UPDATE ",
        "DELETE FROM",
        "CREATE TABLE",
        "PRAGMA ",
    ];
    for f in rust_files(&src()) {
        if f.starts_with(src().join("store")) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for word in sql {
            assert!(
                !text.contains(word),
                "{} contains SQL (`{word}`); SQL belongs in src/store",
                f.display()
            );
        }
    }
}
