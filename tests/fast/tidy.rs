//! Architecture invariants that the compiler does not check (see ARCHITECTURE.md):
//! every source file opens with a `//!` doc saying what it owns; `src/core` does no IO, no async
//! and no SQL; SQL statements appear only under `src/store`; no file under `src/` grows past
//! ~800 lines (past that it holds two concepts) unless it is listed here with a reason.

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

/// Every byte on the wire goes through `fetch` (ARCHITECTURE.md): no HTTP client or outbound
/// socket is made anywhere else, and the renderer intercepts every tab it opens for a network.
#[test]
fn only_fetch_opens_connections() {
    let clients = [
        "reqwest::Client",
        "reqwest::get",
        "ClientBuilder",
        "TcpStream::connect",
        "tokio::net::TcpStream",
        "UdpSocket",
        "ureq::",
        "hyper::client",
    ];
    for f in rust_files(&src()) {
        if f.starts_with(src().join("fetch")) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for word in clients {
            assert!(
                !text.contains(word),
                "{} makes connections of its own (`{word}`); requests go through src/fetch",
                f.display()
            );
        }
    }
    let render = std::fs::read_to_string(src().join("render/mod.rs")).unwrap();
    assert!(
        render.contains("network::intercept(&page"),
        "render/mod.rs no longer intercepts the tabs it opens"
    );
}

/// Files allowed past [`MAX_LINES`], each with the reason. Empty today: every concept has a home
/// of its own size.
const LONG_FILES: &[(&str, &str)] = &[];

/// The soft cap on a source file's length.
const MAX_LINES: usize = 800;

#[test]
fn no_file_holds_two_concepts() {
    for f in rust_files(&src()) {
        let lines = std::fs::read_to_string(&f).unwrap().lines().count();
        let name = f
            .strip_prefix(src())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let listed = LONG_FILES.iter().any(|(n, _)| *n == name);
        assert!(
            lines <= MAX_LINES || listed,
            "src/{name} has {lines} lines: past {MAX_LINES} a file holds two concepts; split it \
             along the code map in ARCHITECTURE.md, or list it in LONG_FILES with a reason"
        );
    }
}

#[test]
fn the_code_map_names_every_module() {
    let map =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
            .unwrap();
    for f in rust_files(&src()) {
        let rel = f.strip_prefix(src()).unwrap().with_extension("");
        let parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .filter(|p| p != "mod")
            .collect();
        if matches!(parts.as_slice(), [one] if one == "lib" || one == "main") {
            continue;
        }
        let module = parts.join("::");
        assert!(
            map.contains(&format!("`{module}`")),
            "ARCHITECTURE.md's code map does not name `{module}` (src/{})",
            rel.display()
        );
    }
}

#[test]
fn states_and_kinds_are_bound_not_spelled_in_the_store_sql() {
    // A state or kind written into SQL text drifts from its vocabulary; the store binds them
    // as parameters (the schema's own migrations and the partial indexes' conditions aside).
    use everblog::store::{JobKind, JobState, MediaState, PageState, ResponseKind};
    let names: Vec<&str> = (PageState::ALL.iter().map(|s| s.as_str()))
        .chain(JobState::ALL.iter().map(|s| s.as_str()))
        .chain(JobKind::ALL.iter().map(|s| s.as_str()))
        .chain(MediaState::ALL.iter().map(|s| s.as_str()))
        .chain(ResponseKind::ALL.iter().map(|s| s.as_str()))
        .collect();
    let mut spelled = Vec::new();
    for f in rust_files(&src().join("store")) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if name == "migrations.rs" || name == "schema.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for word in &names {
                if line.contains(&format!("'{word}'")) {
                    spelled.push(format!("{}:{}: '{word}'", f.display(), n + 1));
                }
            }
        }
    }
    assert!(spelled.is_empty(), "bind these as parameters: {spelled:#?}");
}
