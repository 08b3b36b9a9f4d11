//! Architecture invariants that the compiler does not check (see ARCHITECTURE.md):
//! every source file opens with a `//!` doc saying what it owns; `src/core` does no IO, no async
//! and no SQL; SQL statements appear only under `src/store`; no file under `src/` grows past
//! ~800 lines (past that it holds two concepts) unless it is listed here with a reason; no module
//! imports another that imports it back, directly or through others.

use std::collections::{BTreeMap, BTreeSet, HashMap};
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

/// A module of the library (its path from the crate root, `[]` for `lib.rs`) and its file.
fn library_modules() -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    for f in rust_files(&src()) {
        let rel = f.strip_prefix(src()).unwrap().with_extension("");
        let mut path: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if path.last().is_some_and(|p| p == "mod") {
            path.pop();
        }
        match path.as_slice() {
            [one] if one == "main" => continue,
            [one] if one == "lib" => path.clear(),
            _ => {}
        }
        out.insert(path, f);
    }
    out
}

/// A file's code as imports are read from it: without comments (line and block), string and
/// character literals (raw ones included, across lines) and items under `#[cfg(test)]` (a
/// unit-test module wherever it stands, on one line with its attribute or not).
fn code_of(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut code = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && {
            // After a word boundary, or a `b` after one (`br#"…"#`).
            let word = |k: Option<&char>| k.is_some_and(|p| p.is_alphanumeric() || *p == '_');
            let before = &chars[..i];
            !word(before.last())
                || (before.last() == Some(&'b') && !word(before.iter().rev().nth(1)))
        } {
            // A raw string: r"…", r#"…"#, br#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                code.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            code.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            code.push_str("\"\"");
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal ('x', '\n', '\u{1}'), not a lifetime.
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            code.push_str("' '");
        } else {
            code.push(c);
            i += 1;
        }
    }
    // Items under #[cfg(test)]: to the end of their braces, or their `;`.
    let mut out = String::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at + "#[cfg(test)]".len()..];
        let (mut depth, mut end) = (0i64, item.len());
        for (k, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The paths of one `use` tree (`a::{b, c::{d, self}}` → `a::b`, `a::c::d`, `a::c`), each
/// after `prefix`; an alias (`as x`) is dropped.
fn use_paths(prefix: &[String], tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    if let Some(inner) = tree.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        let (mut parts, mut depth, mut current) = (Vec::new(), 0, String::new());
        for c in inner.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(std::mem::take(&mut current));
                    continue;
                }
                _ => {}
            }
            current.push(c);
        }
        parts.push(current);
        return parts
            .iter()
            .filter(|p| !p.trim().is_empty())
            .flat_map(|p| use_paths(prefix, p))
            .collect();
    }
    if let Some(i) = tree.find("::{") {
        let mut longer = prefix.to_vec();
        longer.extend(tree[..i].split("::").map(|s| s.trim().to_string()));
        return use_paths(&longer, &tree[i + 2..]);
    }
    let mut path = prefix.to_vec();
    let plain = tree.split(" as ").next().unwrap_or(tree);
    path.extend(plain.split("::").map(|s| s.trim().to_string()));
    if path.last().is_some_and(|s| s == "self") {
        path.pop();
    }
    vec![path]
}

/// The `use` statements of `code` as (public, path), and the code without them.
fn uses_of(code: &str) -> (Vec<(bool, Vec<String>)>, String) {
    let mut out = Vec::new();
    let mut rest_of_code = String::new();
    let mut statement: Option<(bool, String)> = None;
    for line in code.lines() {
        if statement.is_none() {
            let t = line.trim_start();
            let public = t.starts_with("pub ") || t.starts_with("pub(");
            let rest = if public {
                t.split_once(' ').map_or("", |(_, r)| r).trim_start()
            } else {
                t
            };
            if let Some(tree) = rest.strip_prefix("use ") {
                statement = Some((public, tree.to_string()));
            } else {
                rest_of_code.push_str(line);
                rest_of_code.push('\n');
            }
        } else if let Some((_, text)) = &mut statement {
            text.push(' ');
            text.push_str(line.trim());
        }
        if let Some((public, text)) = &statement {
            if let Some(tree) = text.split(';').next().filter(|_| text.contains(';')) {
                out.extend(use_paths(&[], tree).into_iter().map(|p| (*public, p)));
                statement = None;
            }
        }
    }
    (out, rest_of_code)
}

/// A module: its path from the crate root (`[]` for `lib.rs`).
type Module = Vec<String>;

/// Per module, the names its `pub use` lines re-export and the paths they lead to.
type Reexports = HashMap<Module, HashMap<String, Vec<String>>>;

/// The names a module's code defines at its top level (`pub struct X`, `fn y`, `enum Z`…).
fn defined_names(code: &str) -> Vec<String> {
    let kinds = [
        "struct", "enum", "fn", "type", "const", "static", "trait", "mod", "union",
    ];
    let mut out = Vec::new();
    for line in code.lines().filter(|l| !l.starts_with(char::is_whitespace)) {
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        if let Some(i) = words.iter().position(|w| kinds.contains(w)) {
            if let Some(name) = words.get(i + 1) {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// The module (file) a path written in `from` leads to: `crate::`, `self::` and `super::`
/// paths down the module tree as far as modules go, then through a re-export of the next
/// name, if any, to where it is defined. `None` for paths into other crates.
fn resolve(
    from: &Module,
    path: &[String],
    modules: &BTreeMap<Module, PathBuf>,
    reexports: &Reexports,
    depth: usize,
) -> Option<Module> {
    let mut at: Module = match path.first()?.as_str() {
        "crate" => Vec::new(),
        "self" | "super" => from.clone(),
        _ => return None,
    };
    let mut rest = &path[1..];
    if path[0] == "super" {
        at.pop();
        while rest.first().is_some_and(|s| s == "super") {
            at.pop();
            rest = &rest[1..];
        }
    }
    while let Some(next) = rest.first() {
        let mut c = at.clone();
        c.push(next.clone());
        if !modules.contains_key(&c) {
            break;
        }
        at = c;
        rest = &rest[1..];
    }
    if rest.first().is_some_and(|n| n == "*") {
        // A glob import takes from the module itself.
        return Some(at);
    }
    if let (Some(name), true) = (rest.first(), depth < 5) {
        if let Some(target) = reexports.get(&at).and_then(|r| r.get(name)) {
            let mut longer = target.clone();
            longer.extend(rest[1..].iter().cloned());
            return resolve(&at, &longer, modules, reexports, depth + 1).or(Some(at));
        }
    }
    Some(at)
}

/// Who imports whom in `src/`, and by which paths: `use` lines and paths written in code,
/// each resolved to the module that defines what it names. Not read: `pub use` (a re-export
/// is a facade: a `mod.rs` re-exporting its children's items is their parent, not their
/// user) and method calls (an `impl` of a module's type in a child file, as in
/// `crawl::new_crawl::page_step`, is one concept over two files, counted as the parent's).
fn imports() -> BTreeMap<Module, BTreeMap<Module, Vec<String>>> {
    let modules = library_modules();
    let codes: BTreeMap<Module, String> = modules
        .iter()
        .map(|(m, f)| (m.clone(), code_of(&std::fs::read_to_string(f).unwrap())))
        .collect();
    let is_child = |m: &Module, name: &str| {
        let mut c = m.clone();
        c.push(name.to_string());
        modules.contains_key(&c)
    };
    // A glob (`pub use records::*`) re-exports the names the module defines at its top level.
    let mut reexports: Reexports = Default::default();
    for (m, code) in &codes {
        for (public, path) in uses_of(code).0 {
            let Some(first) = path.first() else { continue };
            let rooted = matches!(first.as_str(), "crate" | "super" | "self");
            if public && (rooted || is_child(m, first)) {
                let mut p = path.clone();
                if !rooted {
                    p.insert(0, "self".into());
                }
                let name = path.last().unwrap().clone();
                reexports.entry(m.clone()).or_default().insert(name, p);
            }
        }
    }
    let globs: Vec<(Module, Vec<String>)> = reexports
        .iter()
        .filter_map(|(m, names)| Some((m.clone(), names.get("*")?.clone())))
        .collect();
    for (m, glob) in globs {
        let module = &glob[..glob.len() - 1];
        let Some(from) = resolve(&m, module, &modules, &reexports, 0) else {
            continue;
        };
        for name in defined_names(&codes[&from]) {
            let mut p = module.to_vec();
            p.push(name.clone());
            reexports
                .entry(m.clone())
                .or_default()
                .entry(name)
                .or_insert(p);
        }
    }
    let mut edges: BTreeMap<Module, BTreeMap<Module, Vec<String>>> = Default::default();
    for (m, code) in &codes {
        // A `pub use` re-exports (a facade over the module's children): not counted.
        let (uses, code) = uses_of(code);
        let mut paths: Vec<Vec<String>> = uses
            .into_iter()
            .filter(|(public, _)| !public)
            .map(|(_, p)| p)
            .collect();
        let mut run = String::new();
        for c in code.chars().chain(std::iter::once(' ')) {
            if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
                run.push(c);
                continue;
            }
            let segments: Vec<String> = run
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            if run.contains("::") && !run.starts_with(':') && segments.len() > 1 {
                paths.push(segments);
            }
            run.clear();
        }
        for mut path in paths {
            let Some(first) = path.first() else { continue };
            if !matches!(first.as_str(), "crate" | "super" | "self") {
                if !is_child(m, first) {
                    continue;
                }
                path.insert(0, "self".into());
            }
            if let Some(to) = resolve(m, &path, &modules, &reexports, 0).filter(|to| to != m) {
                let why = edges.entry(m.clone()).or_default().entry(to).or_default();
                why.push(path.join("::"));
            }
        }
    }
    edges
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let edges = imports();
    let reach = |start: &Module| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.clone()];
        while let Some(m) = todo.pop() {
            for to in edges.get(&m).into_iter().flat_map(|e| e.keys()) {
                if seen.insert(to.clone()) {
                    todo.push(to.clone());
                }
            }
        }
        seen
    };
    let name = |m: &Module| {
        if m.is_empty() {
            "crate".to_string()
        } else {
            m.join("::")
        }
    };
    let mut circles = Vec::new();
    for (m, out) in &edges {
        for (to, why) in out {
            if reach(to).contains(m) {
                let mut why = why.clone();
                why.sort();
                why.dedup();
                circles.push(format!("{} -> {}: {}", name(m), name(to), why.join(", ")));
            }
        }
    }
    assert!(
        circles.is_empty(),
        "modules that import one another, directly or through others (move what both need \
         into a module of its own that imports neither; ARCHITECTURE.md, Invariants):\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_import_reader_sees_what_ties_modules() {
    // The circle test is only as good as the reading of imports: a grouped `use`, a path in
    // code, a `super::` path and a name re-exported by a glob each lead to their module.
    let edges = imports();
    let to = |from: &[&str], to: &[&str]| {
        let from: Module = from.iter().map(|s| s.to_string()).collect();
        let to: Module = to.iter().map(|s| s.to_string()).collect();
        edges.get(&from).is_some_and(|e| e.contains_key(&to))
    };
    assert!(to(&["serve", "pages"], &["serve", "render"]), "grouped use");
    assert!(
        to(&["serve"], &["serve", "pages"]),
        "a child's path in code"
    );
    assert!(
        to(&["serve", "reader"], &["serve", "failure"]),
        "super:: path"
    );
    assert!(
        to(&["serve", "views"], &["store", "records"]),
        "a glob re-export"
    );
    assert!(
        !to(&["serve", "routes"], &["serve", "pages"]),
        "no such import"
    );
}
