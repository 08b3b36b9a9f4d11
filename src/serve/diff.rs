//! The differences of two versions as readers see them (`similar`): word by word
//! ([`word_diff`]) and block by block ([`block_diff`]: paragraphs, headings and list items
//! kept apart, changed words marked within each changed block), bounded by [`DIFF_TIMEOUT`].
//! Shared by the versions pages and the static copy; imports no page module.

use maud::{html, Markup};

/// How long a diff may search for the smallest difference; past it, `similar` gives a correct
/// but coarser diff (whole runs replaced), so a page never waits longer on two very different
/// versions.
pub const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// `old` → `new` word by word: removed words in `<del>`, added ones in `<ins>`, within
/// [`DIFF_TIMEOUT`]; punctuation is a word of its own ("stood." → "stood very still." gains
/// "very still", it does not lose "stood.").
pub fn word_diff(old: &str, new: &str) -> Markup {
    html! {
        @for (tag, run) in word_changes(old, new) {
            @match tag {
                ChangeTag::Equal => (run),
                ChangeTag::Delete => del { (run) },
                ChangeTag::Insert => ins { (run) },
            }
        }
    }
}

use similar::ChangeTag;

/// Words, runs of spaces and single other characters (punctuation), in order.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let class = |c: char| {
        if c.is_alphanumeric() || c == '\'' || c == '\u{2019}' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    let mut prev: Option<u8> = None;
    for (i, c) in text.char_indices() {
        let k = class(c);
        if let Some(p) = prev {
            if p != k || k == 2 {
                out.push(&text[start..i]);
                start = i;
            }
        }
        prev = Some(k);
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// `old` → `new` as runs of equal, removed and added text (similar on [`tokens`], within
/// [`DIFF_TIMEOUT`]); spaces between two removed or two added words join their run.
fn word_changes(old: &str, new: &str) -> Vec<(ChangeTag, String)> {
    let (a, b) = (tokens(old), tokens(new));
    let diff = similar::TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_slices(&a, &b);
    let changes: Vec<(ChangeTag, &str)> = diff
        .iter_all_changes()
        .map(|c| (c.tag(), c.value()))
        .collect();
    let mut out: Vec<(ChangeTag, String)> = Vec::new();
    for (i, &(tag, v)) in changes.iter().enumerate() {
        // A space between two changes of one kind belongs to them.
        let tag = match (
            tag,
            i.checked_sub(1).map(|p| changes[p].0),
            changes.get(i + 1),
        ) {
            (ChangeTag::Equal, Some(before), Some((after, _)))
                if v.trim().is_empty() && before == *after && before != ChangeTag::Equal =>
            {
                before
            }
            _ => tag,
        };
        match out.last_mut() {
            Some((t, run)) if *t == tag => run.push_str(v),
            _ => out.push((tag, v.to_string())),
        }
    }
    out
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

/// Two versions' articles compared block by block (issue 45 item 3): unchanged blocks as they
/// are; in a run of changed blocks, old and new are paired in order, and a pair that shares
/// words is one block with the words it gained (`<ins>`) or lost (`<del>`) when it only gained
/// or only lost, else the old block with its removed words marked right above the new one with
/// its added words marked; a block with no counterpart, or none of its words in common with
/// it, is marked whole as removed or added. Each block keeps its kind (`class` = the element:
/// `p`, `li`, `h2`…), within [`DIFF_TIMEOUT`].
pub fn block_diff(old_html: &str, new_html: &str) -> Markup {
    use similar::{DiffTag, TextDiff};
    let (old, new) = (blocks(old_html), blocks(new_html));
    let lines =
        |b: &[(String, String)]| b.iter().map(|(_, t)| format!("{t}\n")).collect::<String>();
    let (old_text, new_text) = (lines(&old), lines(&new));
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(&old_text, &new_text);
    let whole = |(kind, text): &(String, String), added: bool| {
        html! {
            @if added { div class={ "block added " (kind) } { ins { (text) } } }
            @else { div class={ "block removed " (kind) } { del { (text) } } }
        }
    };
    html! {
        @for op in diff.ops() {
            @let (tag, o, n) = op.as_tag_tuple();
            @match tag {
                DiffTag::Equal => @for (kind, text) in &old[o] { div class={ "block " (kind) } { (text) } },
                DiffTag::Delete => @for b in &old[o] { (whole(b, false)) },
                DiffTag::Insert => @for b in &new[n] { (whole(b, true)) },
                DiffTag::Replace => {
                    @let paired = o.len().min(n.len());
                    @for k in 0..paired { (pair(&old[o.start + k], &new[n.start + k])) }
                    @for b in &old[o.start + paired..o.end] { (whole(b, false)) }
                    @for b in &new[n.start + paired..n.end] { (whole(b, true)) }
                }
            }
        }
    }
}

/// One changed block, old and new ([`block_diff`]).
fn pair(old: &(String, String), new: &(String, String)) -> Markup {
    let changes = word_changes(&old.1, &new.1);
    let has = |tag: ChangeTag| {
        changes
            .iter()
            .any(|(t, v)| *t == tag && v.chars().any(char::is_alphanumeric))
    };
    let (lost, gained, shared) = (
        has(ChangeTag::Delete),
        has(ChangeTag::Insert),
        has(ChangeTag::Equal),
    );
    let kind = &new.0;
    let side = |keep: ChangeTag| {
        html! {
            @for (tag, v) in &changes {
                @if *tag == ChangeTag::Equal { (v) }
                @else if *tag == keep {
                    @if keep == ChangeTag::Delete { del { (v) } } @else { ins { (v) } }
                }
            }
        }
    };
    html! {
        @if !shared {
            div class={ "block removed " (old.0) } { del { (old.1) } }
            div class={ "block added " (kind) } { ins { (new.1) } }
        } @else if lost && gained {
            div class={ "block removed " (old.0) } { (side(ChangeTag::Delete)) }
            div class={ "block added " (kind) } { (side(ChangeTag::Insert)) }
        } @else {
            div class={ "block changed " (kind) } {
                @for (tag, v) in &changes {
                    @match tag {
                        ChangeTag::Equal => (v),
                        ChangeTag::Delete => del { (v) },
                        ChangeTag::Insert => ins { (v) },
                    }
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

    /// Issue 45 item 3: a paragraph that only gained words shows only them; changed
    /// paragraphs come paired (old, new, old, new), not grouped.
    #[test]
    fn paragraphs_are_paired_and_a_gain_shows_only_what_was_gained() {
        let out = block_diff(
            "<p>The heron stood.</p><p>Tide was low.</p><p>Owls at dusk.</p>",
            "<p>The heron stood very still.</p><p>Tide was high.</p><p>Two owls called at dusk.</p>",
        )
        .into_string();
        assert!(!out.contains("<del>The heron stood.</del>"), "{out}");
        assert!(
            out.contains(
                r#"<div class="block changed p">The heron stood<ins> very still</ins>.</div>"#
            ),
            "{out}"
        );
        assert_eq!(out.matches("block removed").count(), 2, "{out}");
        let at = |s: &str| out.find(s).unwrap_or_else(|| panic!("{s}: {out}"));
        // Old, new, old, new.
        assert!(at("<del>low</del>") < at("<ins>high</ins>"));
        assert!(at("<ins>high</ins>") < at("Owls"));
        let lost = block_diff("<p>A long grey heron.</p>", "<p>A heron.</p>").into_string();
        assert_eq!(
            lost,
            r#"<div class="block changed p">A <del>long grey </del>heron.</div>"#
        );
    }
}
