//! What inside the article element is not article text, learned with the article rule
//! (`core::learn`): for a summary target, what precedes the excerpt (the summary climb); for a
//! full-content target, the container's short children that are not in the feed's content; for
//! any target, template subtraction (what every article holds the same). Each becomes an
//! `article-exclude` vote.

use super::feed::Target;
use super::page::{ElementIdx, Page};
use super::rules::{rule_for, RuleKind};
use super::text::{bigram_set, dice_from_counts};
use rustc_hash::{FxHashMap, FxHashSet};

/// Pages on which an element inside the article must repeat its text to be template.
pub const TEMPLATE_PAGES: u32 = 3;

/// What inside an article element could be template: id or class rules whose every element
/// inside it holds one same text (or only links: a tag list, share links, a table of contents),
/// with some text but under half of the article's, the first within 3 levels of it; each as
/// (rule, hash of that normalised text). A class that also marks other text (`wp-block-heading`
/// on "Introduction" and on "Results") is never template.
pub(super) fn template_parts(page: &Page, idx: ElementIdx) -> Vec<(String, u64)> {
    use std::hash::{Hash, Hasher};
    let root = &page.elements[idx as usize];
    let total = root.end - root.start;
    // rule → (text hash, still one text, near the top, short enough)
    let mut seen: FxHashMap<String, (u64, bool, bool, bool)> = FxHashMap::default();
    for d in page.subtree(idx).skip(1) {
        let e = &page.elements[d as usize];
        let Some((rule, kind)) = rule_for(page, d) else {
            continue;
        };
        if !matches!(kind, RuleKind::Id | RuleKind::Class) {
            continue;
        }
        // A list of links (tags, categories, share links, a table of contents) counts as one
        // same text on every page: what it links to changes, what it is does not.
        let hash = if link_list(page, d) {
            LINK_LIST
        } else {
            let mut h = rustc_hash::FxHasher::default();
            page.normalised_text_of(d).hash(&mut h);
            h.finish()
        };
        let len = e.end - e.start;
        let (near, short) = (e.depth <= root.depth + 3, len > 0 && len * 2 < total);
        seen.entry(rule)
            .and_modify(|v| {
                v.1 &= v.0 == hash;
                v.2 |= near;
                v.3 &= short;
            })
            .or_insert((hash, true, near, short));
    }
    let mut out: Vec<(String, u64)> = seen
        .into_iter()
        .filter(|(_, v)| v.1 && v.2 && v.3)
        .map(|(rule, v)| (rule, v.0))
        .collect();
    out.sort();
    out
}

/// The text hash [`template_parts`] gives every list of links.
const LINK_LIST: u64 = u64::MAX;

/// Whether an element's text is all links (at least 90 %): a tag list, share links, a table of
/// contents.
fn link_list(page: &Page, idx: ElementIdx) -> bool {
    let e = &page.elements[idx as usize];
    let total = e.end - e.start;
    let mut links = 0;
    let mut i = idx + 1;
    let end = page.subtree(idx).end;
    while i < end {
        let d = &page.elements[i as usize];
        if d.name == "a" {
            links += d.end - d.start;
            i = page.subtree(i).end;
        } else {
            i += 1;
        }
    }
    total > 0 && links * 10 >= total * 9
}

/// Most chars of byline, date and taxonomy lines an article may hold beside its text.
const MAX_OUTSIDE: u32 = 300;

/// For a full-content target: what in the article element is not article text. A byline,
/// date line or tag list inside the article container is not in the feed's content, so Dice
/// either picks the container with it (long posts) or, for a one-paragraph post, the lone
/// paragraph beside it. Both become the container with that block excluded, so every entry
/// votes for one rule: a lone paragraph's (or list's, quote's) parent when its other children are short
/// (≤ [`MAX_OUTSIDE`] chars in all) and none is article text; then the element's children
/// whose text is not in the target, when they are short beside it or the template marks them
/// (an id or class of their own: a related-posts block inside the container, issue 28).
pub(super) fn full_content_excludes(
    page: &Page,
    idx: ElementIdx,
    target: &Target,
) -> (ElementIdx, Vec<ElementIdx>) {
    let words: Vec<String> = target
        .chars
        .iter()
        .collect::<String>()
        .split(' ')
        .map(str::to_string)
        .collect();
    let pairs: FxHashSet<(&str, &str)> = words
        .windows(2)
        .map(|w| (w[0].as_str(), w[1].as_str()))
        .collect();
    let singles: FxHashSet<&str> = words.iter().map(String::as_str).collect();
    let in_target = |c: ElementIdx| {
        let text: String = page.normalised_text_of(c).iter().collect();
        let w: Vec<&str> = text.split(' ').collect();
        if w.len() < 2 {
            return singles.contains(w[0]);
        }
        let found = w
            .windows(2)
            .filter(|p| pairs.contains(&(p[0], p[1])))
            .count();
        found * 2 >= w.len() - 1
    };
    let len = |c: ElementIdx| page.elements[c as usize].end - page.elements[c as usize].start;
    // A child the template marks (an id or class rule of its own: a related-posts block, a
    // share bar, a signup form) is the template's, however long; unmarked ones (a byline line,
    // a date) only while short.
    let marked =
        |c: ElementIdx| matches!(rule_for(page, c), Some((_, RuleKind::Id | RuleKind::Class)));
    let unmarked =
        |out: &[ElementIdx]| -> u32 { out.iter().filter(|&&c| !marked(c)).map(|&c| len(c)).sum() };
    let outside = |root: ElementIdx, except: Option<ElementIdx>| -> Option<Vec<ElementIdx>> {
        let mut out = Vec::new();
        for &c in &page.elements[root as usize].children {
            if Some(c) == except || len(c) == 0 {
                continue;
            }
            if Some(c) != except && except.is_some() && in_target(c) {
                return None;
            }
            if !in_target(c) {
                out.push(c);
            }
        }
        Some(out)
    };
    let mut root = idx;
    let block = matches!(
        page.elements[idx as usize].name.as_str(),
        "p" | "blockquote" | "pre" | "ul" | "ol"
    );
    if let (true, Some(parent)) = (block, page.elements[idx as usize].parent) {
        if let Some(others) = outside(parent, Some(idx)) {
            if !others.is_empty() && unmarked(&others) <= MAX_OUTSIDE {
                root = parent;
            }
        }
    }
    let excluded = outside(root, None).unwrap_or_default();
    let kept = len(root) - excluded.iter().map(|&c| len(c)).sum::<u32>();
    let loose = unmarked(&excluded);
    if loose <= MAX_OUTSIDE && loose * 2 < len(root) && kept > 0 {
        (root, excluded)
    } else {
        (idx, Vec::new())
    }
}

/// Dice between the target and the first `len(target)` characters of an element's text.
fn prefix_dice(page: &Page, idx: ElementIdx, target: &Target) -> f64 {
    let text = page.normalised_text_of(idx);
    let prefix = &text[..text.len().min(target.chars.len())];
    let set = bigram_set(prefix);
    let inter = set.iter().filter(|b| target.set.contains(b)).count();
    dice_from_counts(inter, set.len(), target.set.len())
}

/// For a summary target: the highest ancestor of `idx` (or `idx` itself) whose text starts where
/// `idx`'s text starts, i.e. still begins with the summary. When Dice landed on a lone paragraph
/// that has no such wrapper, one step up over short leading material (≤ 300 characters: a title,
/// a byline, a date) is allowed; those leading elements are returned as not part of the article.
/// `None` when the summary is not a prefix of `idx`'s text.
pub(super) fn climb_summary(
    page: &Page,
    idx: ElementIdx,
    target: &Target,
) -> Option<(ElementIdx, Vec<ElementIdx>)> {
    if prefix_dice(page, idx, target) < 0.5 {
        return None;
    }
    let same_start = |from: ElementIdx| {
        let start = page.elements[from as usize].start;
        let mut best = from;
        while let Some(p) = page.elements[best as usize].parent {
            if page.elements[p as usize].start != start {
                break;
            }
            best = p;
        }
        best
    };
    let c0 = same_start(idx);
    if c0 != idx || page.elements[idx as usize].name != "p" {
        return Some((c0, Vec::new()));
    }
    let Some(p1) = page.elements[c0 as usize].parent else {
        return Some((c0, Vec::new()));
    };
    let (pe, ce) = (&page.elements[p1 as usize], &page.elements[c0 as usize]);
    let lead = ce.start.saturating_sub(pe.start);
    let leading: Vec<ElementIdx> = pe
        .children
        .iter()
        .copied()
        .filter(|&k| {
            let e = &page.elements[k as usize];
            e.end > e.start && e.end <= ce.start
        })
        .collect();
    let covered: u32 = leading
        .iter()
        .map(|&k| page.elements[k as usize].end - page.elements[k as usize].start + 1)
        .sum();
    if lead == 0 || lead > 300 || leading.is_empty() || covered < lead {
        return Some((c0, Vec::new()));
    }
    Some((same_start(p1), leading))
}
