//! The search grammar alone (`store::search::Query`): what a reader types, parsed and compiled
//! into FTS5 and `tsquery` syntax. The `search_query` target runs the FTS5 side against a real
//! SQLite; no target reaches a PostgreSQL server, so this one checks the `tsquery` text itself
//! against the grammar `to_tsquery` reads (PostgreSQL 17, `tsquery.c`):
//!
//! ```text
//! expr    = operand { ("&" | "|" | "<->") operand }
//! operand = "!" operand | "(" expr ")" | lexeme [ ":*" ]
//! ```
//!
//! where a lexeme holds no character `to_tsquery` reads as an operator, quote, weight or
//! space. Also checked: the FTS5 text quotes every word (an even number of `"`), parentheses
//! balance in both, at most `MAX_TERMS` terms are compiled, and parsing is deterministic.
#![no_main]

mod body {
    include!("../bodies/search_grammar.rs");
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
