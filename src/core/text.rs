//! Text normalisation, character bigrams and the Sørensen–Dice coefficient (paper §3.3).
//!
//! Page text and feed targets are normalised the same way before scoring: entities are already
//! decoded by the HTML5 parser, runs of whitespace collapse to one space, and letters are
//! lower-cased. Bigrams are *sets* of adjacent `char`s (not bytes: `strsim::sorensen_dice` divides
//! by byte lengths and is wrong for non-ASCII text), packed into a `u64` so that set operations
//! are integer hashing.

use rustc_hash::FxHashSet;

/// A character bigram, two `char`s packed as `(first << 32) | second`.
pub type Bigram = u64;

/// Packs two characters into one [`Bigram`].
#[inline]
pub fn bigram(a: char, b: char) -> Bigram {
    ((a as u64) << 32) | b as u64
}

/// The soft hyphen (U+00AD): a hint where a word may break, shown only at a line's end. It is
/// no part of the word's text: "Mit\u{ad}tel\u{ad}al\u{ad}ter" reads, and is searched, as
/// "Mittelalter". Page text, normalised text and collapsed text all leave it out.
pub const SOFT_HYPHEN: char = '\u{ad}';

/// Appends `text` to `out` normalised: whitespace runs become one space (never leading), letters
/// lower-cased. `pending_space` carries a whitespace run across calls, so text split over several
/// DOM text nodes normalises exactly as the concatenated string would.
pub fn push_normalised(out: &mut Vec<char>, text: &str, pending_space: &mut bool) {
    for c in text.chars() {
        if c.is_whitespace() {
            *pending_space = true;
            continue;
        }
        if c == SOFT_HYPHEN {
            continue;
        }
        if *pending_space && !out.is_empty() {
            out.push(' ');
        }
        *pending_space = false;
        if c.is_uppercase() {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
}

/// The normalised form of `text` as a vector of chars (see [`push_normalised`]).
pub fn normalise(text: &str) -> Vec<char> {
    let mut out = Vec::with_capacity(text.len());
    let mut pending = false;
    push_normalised(&mut out, text, &mut pending);
    out
}

/// `text` folded as the search index folds words (SQLite's `unicode61 remove_diacritics 2`,
/// PostgreSQL's `unaccent` and `lower`): compatibility-decomposed, combining marks dropped,
/// lower case ("Zoë" and "ZOE" are "zoe"; "François" is "francois").
pub fn fold(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    text.nfkd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Collapses whitespace runs to single spaces and trims; keeps case; leaves out soft hyphens
/// ([`SOFT_HYPHEN`]). For human-facing text (titles, `content_text`) and for the title
/// comparison of the evaluation.
pub fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        if word.contains(SOFT_HYPHEN) {
            out.extend(word.chars().filter(|&c| c != SOFT_HYPHEN));
        } else {
            out.push_str(word);
        }
    }
    out
}

/// The set of bigrams of already-normalised chars.
pub fn bigram_set(chars: &[char]) -> FxHashSet<Bigram> {
    chars.windows(2).map(|w| bigram(w[0], w[1])).collect()
}

/// Sørensen–Dice coefficient `2|A∩B| / (|A|+|B|)` from the sizes; 0 when both sets are empty.
#[inline]
pub fn dice_from_counts(intersection: usize, len_a: usize, len_b: usize) -> f64 {
    if len_a + len_b == 0 {
        0.0
    } else {
        2.0 * intersection as f64 / (len_a + len_b) as f64
    }
}

/// Sørensen–Dice between `excerpt` and the opening of `text` (as many chars as `excerpt` has,
/// plus a fifth and 20): how well a summary or a copied post matches where `text` begins.
pub fn dice_of_opening(excerpt: &str, text: &str) -> f64 {
    let n = excerpt.chars().count() * 6 / 5 + 20;
    let head: String = text.chars().take(n).collect();
    dice(excerpt, &head)
}

/// Sørensen–Dice similarity of two strings over their normalised bigram sets, in `[0, 1]`.
///
/// ```
/// use everblog::core::text::dice;
/// assert!((dice("Scheme Scala", "Scala Scheme") - 0.9).abs() < 0.05); // paper Table 1: 90%
/// assert!((dice("aéb", "aéc") - 0.5).abs() < 1e-9); // strsim gives 0.333 here
/// ```
pub fn dice(a: &str, b: &str) -> f64 {
    let (sa, sb) = (bigram_set(&normalise(a)), bigram_set(&normalise(b)));
    let inter = if sa.len() < sb.len() {
        sa.iter().filter(|x| sb.contains(x)).count()
    } else {
        sb.iter().filter(|x| sa.contains(x)).count()
    };
    dice_from_counts(inter, sa.len(), sb.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_collapses_and_lowercases() {
        let s: String = normalise("  Hello\n\t WORLD  ").into_iter().collect();
        assert_eq!(s, "hello world");
    }

    #[test]
    fn soft_hyphens_ruby_readings_and_word_breaks_are_no_part_of_the_text() {
        let s: String = normalise("Mit\u{ad}tel\u{ad}al\u{ad}ter")
            .into_iter()
            .collect();
        assert_eq!(s, "mittelalter");
        assert_eq!(
            collapse_whitespace(" Wein\u{ad}wirt\u{ad}schaft  x"),
            "Weinwirtschaft x"
        );
        let page = crate::core::page::Page::parse("<p>Mit\u{ad}tel&shy;al\u{ad}ter</p>");
        assert_eq!(page.text_of(0), "Mittelalter");
        let page = crate::core::page::Page::parse(
            "<p><ruby>子<rt>こ</rt></ruby>ども<ruby>漢<rp>(</rp><rt>かん</rt><rp>)</rp></ruby>, Wein<wbr>glas</p>",
        );
        assert_eq!(page.text_of(0), "子ども漢, Weinglas");
    }

    #[test]
    fn dice_paper_table_1() {
        // "Rachid" / "Richard": 18% in the paper (case-sensitive); lower-cased the sets are the same.
        assert!(dice("Rachid", "Richard") < 0.3);
        assert_eq!(dice("abc", "abc"), 1.0);
        assert_eq!(dice("", ""), 0.0);
        assert!((dice("日本語", "日本人") - 0.5).abs() < 1e-9);
    }
}
