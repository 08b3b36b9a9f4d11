//! The reader's search grammar (issue 32): what people type, compiled into FTS5 (SQLite) or
//! `tsquery` (PostgreSQL) syntax of ours, so nothing typed is ever passed through as query
//! syntax.
//!
//! ```text
//! query  = clause { [ "AND" ] clause } clauses must all match (AND)
//! clause = term { "OR" term }         one of the terms must match
//! term   = [ "-" | "NOT" ] ( word | phrase )  "-" or "NOT": must not match
//! word   = letters and digits, a trailing "*" makes it a prefix
//! phrase = '"' words '"'              the words in this order, next to each other
//! ```
//!
//! `AND`, `OR` and `NOT` are operators only in capitals, as the signs they stand for; `and`,
//! `or` and `not` are words. Control characters (NUL among them) are spaces; punctuation inside a word separates its
//! parts (each must match: `l'été`). A query of exclusions only, or of nothing searchable, is
//! no query. At most [`MAX_TERMS`] terms are read.

/// Terms read from one query, at most.
pub const MAX_TERMS: usize = 32;

/// One term: a word (possibly a prefix) or a phrase, possibly excluded.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Term {
    /// Its words (one for a word; a phrase's in order), each made of letters and digits runs
    /// separated by punctuation as typed.
    words: Vec<String>,
    /// A trailing `*` on a word: its last part is a prefix.
    prefix: bool,
    /// Excluded (`-`).
    not: bool,
}

/// A parsed search query ([`Query::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// Clauses that must all match; each clause matches when one of its terms does.
    all: Vec<Vec<Term>>,
    /// Terms that must not match.
    none: Vec<Term>,
}

/// The letters-and-digits runs of a word, as typed.
fn runs(word: &str) -> impl Iterator<Item = &str> {
    word.split(|c: char| !c.is_alphanumeric())
        .filter(|r| !r.is_empty())
}

impl Query {
    /// Reads what a user typed; `None` when no term would be searched.
    pub fn parse(text: &str) -> Option<Query> {
        let text: String = text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let mut terms: Vec<(Term, bool)> = Vec::new(); // (term, joined to the previous by OR)
        let mut or = false;
        // The previous word was `NOT`: this term must not match.
        let mut negated = false;
        let mut rest = text.trim_start();
        while !rest.is_empty() && terms.len() < MAX_TERMS {
            let minus = rest.starts_with('-')
                && rest.len() > 1
                && !rest[1..].starts_with(char::is_whitespace);
            if minus {
                rest = &rest[1..];
            }
            let not = minus || negated;
            let term = if let Some(inner) = rest.strip_prefix('"') {
                let end = inner.find('"').unwrap_or(inner.len());
                let words = inner[..end]
                    .split_whitespace()
                    .filter(|w| runs(w).next().is_some())
                    .map(str::to_string)
                    .collect();
                rest = inner.get(end + 1..).unwrap_or("");
                Term {
                    words,
                    prefix: false,
                    not,
                }
            } else {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                let (word, after) = rest.split_at(end);
                rest = after;
                if word == "OR" && !not {
                    or = !terms.is_empty();
                    rest = rest.trim_start();
                    continue;
                }
                if (word == "AND" || word == "NOT") && !not {
                    negated = word == "NOT";
                    rest = rest.trim_start();
                    continue;
                }
                let prefix = word.ends_with('*');
                let word = word.trim_end_matches('*');
                let words = if runs(word).next().is_some() {
                    vec![word.to_string()]
                } else {
                    Vec::new()
                };
                Term { words, prefix, not }
            };
            rest = rest.trim_start();
            if !term.words.is_empty() {
                terms.push((term, or));
                negated = false;
            }
            or = false;
        }
        let mut all: Vec<Vec<Term>> = Vec::new();
        let mut none = Vec::new();
        for (term, joined) in terms {
            if term.not {
                none.push(term);
            } else if joined && !all.is_empty() {
                all.last_mut().expect("not empty").push(term);
            } else {
                all.push(vec![term]);
            }
        }
        (!all.is_empty()).then_some(Query { all, none })
    }

    /// The query in FTS5 syntax: every word quoted (quotes doubled), clauses with `AND`, `OR`
    /// in parentheses, exclusions with `NOT`.
    pub fn fts5(&self) -> String {
        let term = |t: &Term| {
            let quoted = format!("\"{}\"", t.words.join(" ").replace('"', "\"\""));
            if t.prefix {
                quoted + "*"
            } else {
                quoted
            }
        };
        let clauses: Vec<String> = self
            .all
            .iter()
            .map(|c| {
                let terms: Vec<String> = c.iter().map(term).collect();
                format!("({})", terms.join(" OR "))
            })
            .collect();
        let mut q = format!("({})", clauses.join(" AND "));
        for t in &self.none {
            q.push_str(&format!(" NOT {}", term(t)));
        }
        q
    }

    /// The query in `to_tsquery` syntax: each word's parts lower-cased and joined by `&` (in a
    /// phrase, by `<->`), a prefix's last part with `:*`, `|` within a clause, `&` between
    /// clauses, `!` before exclusions. Only letters, digits and these operators are written.
    pub fn tsquery(&self) -> String {
        let term = |t: &Term| {
            let parts: Vec<String> = t
                .words
                .iter()
                .flat_map(|w| runs(w))
                .map(str::to_lowercase)
                .collect();
            let last = parts.len().saturating_sub(1);
            let parts: Vec<String> = parts
                .into_iter()
                .enumerate()
                .map(|(i, p)| {
                    if t.prefix && i == last {
                        format!("{p}:*")
                    } else {
                        p
                    }
                })
                .collect();
            let joined = if t.words.len() > 1 {
                parts.join(" <-> ")
            } else {
                parts.join(" & ")
            };
            format!("({joined})")
        };
        let clauses: Vec<String> = self
            .all
            .iter()
            .map(|c| {
                let terms: Vec<String> = c.iter().map(term).collect();
                format!("({})", terms.join(" | "))
            })
            .collect();
        let mut q = clauses.join(" & ");
        for t in &self.none {
            q.push_str(&format!(" & !{}", term(t)));
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(q: &str) -> (String, String) {
        let q = Query::parse(q).unwrap();
        (q.fts5(), q.tsquery())
    }

    #[test]
    fn words_phrases_exclusions_and_or() {
        assert_eq!(both("owl"), ("((\"owl\"))".into(), "((owl))".into()));
        assert_eq!(
            both("barn owl*"),
            (
                "((\"barn\") AND (\"owl\"*))".into(),
                "((barn)) & ((owl:*))".into()
            )
        );
        assert_eq!(
            both("\"barn owl\" -tawny"),
            (
                "((\"barn owl\")) NOT \"tawny\"".into(),
                "((barn <-> owl)) & !(tawny)".into()
            )
        );
        assert_eq!(
            both("tern OR gull marsh"),
            (
                "((\"tern\" OR \"gull\") AND (\"marsh\"))".into(),
                "((tern) | (gull)) & ((marsh))".into()
            )
        );
        assert_eq!(both("l'été").1, "((l & été))");
        // The operators as words: NOT as "-", AND as nothing; in lower case they are words.
        assert_eq!(both("heron NOT owls"), both("heron -owls"));
        assert_eq!(both("heron AND owls"), both("heron owls"));
        assert_eq!(both("heron NOT \"barn owl\""), both("heron -\"barn owl\""));
        assert_eq!(both("heron NOT"), both("heron"));
        assert_eq!(both("heron NOT - owls"), both("heron -owls"));
        assert_eq!(both("heron NOT ... owls"), both("heron -owls"));
        assert_eq!(
            Query::parse("NOT owls"),
            None,
            "exclusions alone are no query"
        );
        assert_eq!(
            both("heron not owls").0,
            "((\"heron\") AND (\"not\") AND (\"owls\"))"
        );
    }

    #[test]
    fn nothing_typed_is_syntax() {
        for q in [
            "a\0b",
            "\"",
            "-",
            "OR",
            "-owl",
            "*",
            "NEAR(a b)",
            "a:*",
            "'Oahu",
            "(1)x",
            "!a | b",
            "col:val",
            "\"unclosed phrase",
            "a\"b",
            "^a",
            "a & b",
        ] {
            let Some(parsed) = Query::parse(q) else {
                continue;
            };
            let ts = parsed.tsquery();
            assert!(
                ts.chars()
                    .all(|c| c.is_alphanumeric() || " ()&|!<->:*".contains(c)),
                "{q:?} → {ts:?}"
            );
            assert!(!parsed.fts5().contains('\0'), "{q:?}");
        }
        assert_eq!(Query::parse("-owl"), None, "exclusions alone are no query");
        assert_eq!(Query::parse("  * \" \" "), None);
        assert_eq!(both("a\0b").0, "((\"a\") AND (\"b\"))");
    }
}
