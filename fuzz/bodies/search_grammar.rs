// The body of the `search_grammar` fuzz target: `fuzz_targets/search_grammar.rs` wraps it for libFuzzer (and
// says what it runs); `tests/fast/fuzz_seeds.rs` runs it on every seed of `corpus/search_grammar/`.

use everblog::store::search::{Query, MAX_TERMS};

/// Characters `to_tsquery`'s own parser gives a meaning to (operators, grouping, prefix and
/// weight marks, quotes, escapes) or splits on.
fn special(c: char) -> bool {
    "&|!()<>-:*'\"\\".contains(c) || c.is_whitespace()
}

/// Reads one operand of `t` from `i`; returns where it ends.
fn operand(t: &[char], mut i: usize) -> Result<usize, String> {
    while t.get(i) == Some(&' ') {
        i += 1;
    }
    match t.get(i) {
        Some('!') => operand(t, i + 1),
        Some('(') => {
            let j = expr(t, i + 1)?;
            let j = skip(t, j);
            match t.get(j) {
                Some(')') => Ok(j + 1),
                other => Err(format!("')' expected at {j}, found {other:?}")),
            }
        }
        Some(&c) if !special(c) => {
            let mut j = i;
            while t.get(j).is_some_and(|&c| !special(c)) {
                j += 1;
            }
            if t.get(j) == Some(&':') {
                if t.get(j + 1) != Some(&'*') {
                    return Err(format!("':' without '*' at {j}"));
                }
                j += 2;
            }
            Ok(j)
        }
        other => Err(format!("an operand expected at {i}, found {other:?}")),
    }
}

fn skip(t: &[char], mut i: usize) -> usize {
    while t.get(i) == Some(&' ') {
        i += 1;
    }
    i
}

/// Reads an expression of `t` from `i`; returns where it ends.
fn expr(t: &[char], i: usize) -> Result<usize, String> {
    let mut j = operand(t, i)?;
    loop {
        let k = skip(t, j);
        let next = match t.get(k) {
            Some('&') | Some('|') => k + 1,
            Some('<') if t.get(k + 1..k + 3) == Some(&['-', '>'][..]) => k + 3,
            _ => return Ok(j),
        };
        j = operand(t, next)?;
    }
}

/// The target's body: one input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = Query::parse(text);
    assert_eq!(parsed, Query::parse(text), "parsing {text:?} twice differs");
    let Some(q) = parsed else {
        return;
    };
    let ts = q.tsquery();
    let chars: Vec<char> = ts.chars().collect();
    match expr(&chars, 0) {
        Ok(end) if skip(&chars, end) == chars.len() => {}
        Ok(end) => panic!("tsquery {ts:?} of {text:?}: text left at {end}"),
        Err(e) => panic!("tsquery {ts:?} of {text:?}: {e}"),
    }
    assert!(
        !ts.chars().any(char::is_control),
        "tsquery {ts:?} holds a control character"
    );
    let fts = q.fts5();
    assert_eq!(
        fts.matches('"').count() % 2,
        0,
        "FTS5 {fts:?} of {text:?}: a quote left open"
    );
    let operands = ts.matches('(').count();
    assert!(
        operands <= 2 * MAX_TERMS + 1,
        "tsquery {ts:?}: {operands} groups for at most {MAX_TERMS} terms"
    );
    for compiled in [&ts, &fts] {
        let mut depth = 0i64;
        let mut quoted = false;
        for c in compiled.chars() {
            match c {
                '"' => quoted = !quoted,
                '(' if !quoted => depth += 1,
                ')' if !quoted => depth -= 1,
                _ => {}
            }
            assert!(depth >= 0, "{compiled:?}: ')' before its '('");
        }
        assert_eq!(depth, 0, "{compiled:?}: parentheses left open");
    }
}
