//! The differences of two versions as readers see them (`similar`): word by word
//! ([`word_diff`]) and block by block ([`block_diff`]: paragraphs, headings and list items
//! kept apart, changed words marked within each changed block), bounded by [`DIFF_TIMEOUT`].
//! Shared by the versions pages and the static copy; imports no page module.

use maud::{html, Markup};

/// How long a diff may search for the smallest difference; past it, `similar` gives a correct
/// but coarser diff (whole runs replaced), so a page never waits longer on two very different
/// versions.
pub const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// `old` → `new` word by word: removed words in `<del>`, added ones in `<ins>` (similar),
/// within [`DIFF_TIMEOUT`].
pub fn word_diff(old: &str, new: &str) -> Markup {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_words(old, new);
    html! {
        @for change in diff.iter_all_changes() {
            @match change.tag() {
                ChangeTag::Equal => (change.value()),
                ChangeTag::Delete => del { (change.value()) },
                ChangeTag::Insert => ins { (change.value()) },
            }
        }
    }
}

/// Elements whose text is one block of an article.
const BLOCKS: &[&str] = &[
    "p",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "pre",
    "figcaption",
    "dt",
    "dd",
    "td",
    "th",
    "caption",
];

/// The blocks of archived HTML, in order: (element name, its text with whitespace squashed),
/// the innermost blocks only (a list item's paragraph once, not twice). HTML without any is
/// one block of its whole text.
pub fn blocks(html: &str) -> Vec<(String, String)> {
    let doc = scraper::Html::parse_fragment(html);
    let is_block = |e: &scraper::node::Element| BLOCKS.contains(&e.name());
    let mut out = Vec::new();
    for node in doc.root_element().descendants() {
        let Some(e) = scraper::ElementRef::wrap(node) else {
            continue;
        };
        if !is_block(e.value()) {
            continue;
        }
        let inner = e
            .descendants()
            .skip(1)
            .filter_map(scraper::ElementRef::wrap)
            .any(|d| is_block(d.value()));
        if inner {
            continue;
        }
        let text = e.text().collect::<String>();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if !text.is_empty() {
            out.push((e.value().name().to_string(), text));
        }
    }
    if out.is_empty() {
        let text: String = doc.root_element().text().collect();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if !text.is_empty() {
            out.push(("p".into(), text));
        }
    }
    out
}

/// Two versions' articles compared block by block: unchanged blocks as they are, a changed
/// block as removed and added with its changed words marked, whole blocks removed or added
/// marked as such; each block keeps its kind (`class` = the element: `p`, `li`, `h2`…),
/// within [`DIFF_TIMEOUT`].
pub fn block_diff(old_html: &str, new_html: &str) -> Markup {
    use similar::{ChangeTag, TextDiff};
    let (old, new) = (blocks(old_html), blocks(new_html));
    let lines =
        |b: &[(String, String)]| b.iter().map(|(_, t)| format!("{t}\n")).collect::<String>();
    let (old_text, new_text) = (lines(&old), lines(&new));
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(&old_text, &new_text);
    html! {
        @for op in diff.ops() {
            @for change in diff.iter_inline_changes(op) {
                @let kind = match change.tag() {
                    ChangeTag::Insert => change.new_index().and_then(|i| new.get(i)),
                    _ => change.old_index().and_then(|i| old.get(i)),
                }.map_or("p", |(k, _)| k.as_str());
                // A block with no word in common with its counterpart is marked whole.
                @let whole = !change.iter_strings_lossy().any(|(marked, _)| marked);
                @match change.tag() {
                    ChangeTag::Equal => div class={ "block " (kind) } {
                        @for (_, s) in change.iter_strings_lossy() { (s.trim_end_matches('\n')) }
                    },
                    ChangeTag::Delete => div class={ "block removed " (kind) } {
                        @for (marked, s) in change.iter_strings_lossy() {
                            @let s = s.trim_end_matches('\n').to_string();
                            @if marked || whole { del { (s) } } @else { (s) }
                        }
                    },
                    ChangeTag::Insert => div class={ "block added " (kind) } {
                        @for (marked, s) in change.iter_strings_lossy() {
                            @let s = s.trim_end_matches('\n').to_string();
                            @if marked || whole { ins { (s) } } @else { (s) }
                        }
                    },
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_paragraphs_and_list_items_apart() {
        let b =
            blocks("<p>One  two</p><ul><li><p>Item a</p></li><li>Item b</li></ul><div>loose</div>");
        assert_eq!(
            b,
            vec![
                ("p".to_string(), "One two".to_string()),
                ("p".to_string(), "Item a".to_string()),
                ("li".to_string(), "Item b".to_string()),
            ]
        );
        assert_eq!(blocks("just text"), vec![("p".into(), "just text".into())]);
    }

    #[test]
    fn a_block_diff_marks_words_within_the_changed_block_only() {
        let out = block_diff(
            "<p>The heron stood still.</p><p>Unchanged words.</p><li>gone</li>",
            "<p>The heron flew off.</p><p>Unchanged words.</p><li>new item</li>",
        )
        .into_string();
        assert!(
            out.contains(r#"<div class="block p">Unchanged words.</div>"#),
            "{out}"
        );
        assert!(
            out.contains("<del>stood still.</del>") || out.contains("<del>stood</del>"),
            "{out}"
        );
        assert!(out.contains(r#"class="block added li""#), "{out}");
        assert_eq!(out.matches("Unchanged").count(), 1, "{out}");
    }
}
