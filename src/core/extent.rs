//! How far a page's article reaches beyond the best-scoring block ([`super::fallback`]'s step
//! 3): the text quoting it, the siblings that join it, the repeated blocks it is split into (a CMS's text
//! components, steps), the post's lead above it, the page's main text when the block is only
//! a few words; and what inside it is left out (boilerplate, link lists, listed posts, the
//! headline, the headings left over nothing).

use super::blocks::{lists_a_post, Figures};
use super::page::{ElementIdx, Page};

/// The best candidate with the siblings that join it: the candidate alone when none does,
/// else the parent with the siblings that did not join left out.
pub(super) fn with_siblings(
    page: &Page,
    stats: &Figures,
    top: usize,
    top_score: f32,
) -> (ElementIdx, Vec<ElementIdx>) {
    let Some(parent) = page.elements[top].parent else {
        return (top as ElementIdx, Vec::new());
    };
    let threshold = (top_score * 0.2).max(10.0);
    let siblings = &page.elements[parent as usize].children;
    let mut joined = 0;
    let mut skip = Vec::new();
    for &s in siblings {
        let s = s as usize;
        if s == top {
            continue;
        }
        let density = if stats.chars[s] == 0 {
            1.0
        } else {
            stats.link_chars[s] as f32 / stats.chars[s] as f32
        };
        let e = &page.elements[s];
        let joins = !stats.boiler[s]
            && ((stats.score[s] + stats.weight[s]) * (1.0 - density) >= threshold
                || (e.name == "p" && stats.chars[s] > 80 && density < 0.25)
                || (e.name == "p" && stats.chars[s] > 0 && density == 0.0 && {
                    let t = page.normalised_text_of(s as ElementIdx);
                    t.ends_with(&['.'])
                }));
        if joins {
            joined += 1;
        } else {
            skip.push(s as ElementIdx);
        }
    }
    if joined == 0 {
        (top as ElementIdx, Vec::new())
    } else {
        (parent, skip)
    }
}

/// Levels above the best block where a quotation holding it is looked for ([`quoting`]).
const QUOTE_LEVELS: usize = 6;

/// A quotation is part of the text quoting it: a best block inside a `<blockquote>` (a forum
/// message quoting an earlier one, a post quoting a press release) whose parent holds prose of
/// its own beside the quotation climbs to that parent. Otherwise `top` as it is.
pub(super) fn quoting(page: &Page, stats: &Figures, top: usize) -> usize {
    let mut quote = None;
    let mut x = Some(top as ElementIdx);
    for _ in 0..=QUOTE_LEVELS {
        let Some(i) = x else { break };
        if page.elements[i as usize].name == "blockquote" {
            quote = Some(i);
        }
        x = page.elements[i as usize].parent;
    }
    let Some(quote) = quote else {
        return top;
    };
    match page.elements[quote as usize].parent {
        Some(p)
            if !stats.boiler[p as usize]
                && prose(stats, p).saturating_sub(prose(stats, quote))
                    >= 2 * super::blocks::MIN_BLOCK =>
        {
            p as usize
        }
        _ => top,
    }
}

/// Below this many characters of prose (text outside links and boilerplate), an article is
/// too short to trust when the page holds far more prose elsewhere ([`or_main_text`]).
const SHORT_ARTICLE: u32 = 200;

/// The share of the page's prose the main text block holds ([`or_main_text`]).
const MAIN_SHARE: u32 = 60;

/// An article of a few words on a page of far more prose (a recipe's lists and steps, a post
/// of annotated links, text in `<span>`s and `<li>`s that the paragraph scores pass over) is
/// the wrong block: the page's [`main_text`] is taken instead when it holds at least three
/// times the article's prose and [`SHORT_ARTICLE`] × 2 characters. Otherwise `root` and
/// `skip` as they are.
pub(super) fn or_main_text(
    page: &Page,
    stats: &Figures,
    root: ElementIdx,
    skip: Vec<ElementIdx>,
) -> (ElementIdx, Vec<ElementIdx>) {
    let prose = |i: ElementIdx| prose(stats, i);
    let kept = prose(root).saturating_sub(
        skip.iter()
            .filter(|&&k| page.contains(root, k))
            .map(|&k| prose(k))
            .sum(),
    );
    if kept >= SHORT_ARTICLE {
        return (root, skip);
    }
    match main_text(page, stats) {
        Some(main) if prose(main) >= kept.saturating_mul(3).max(SHORT_ARTICLE * 2) => {
            let mut main_skip = Vec::new();
            inner_skips(page, stats, main, &mut main_skip);
            (main, main_skip)
        }
        _ => (root, skip),
    }
}

/// Characters of text outside links and boilerplate in `i`'s subtree.
fn prose(stats: &Figures, i: ElementIdx) -> u32 {
    stats.chars[i as usize].saturating_sub(stats.link_chars[i as usize])
}

/// The page's main text: the deepest element holding [`MAIN_SHARE`] % of the page's prose,
/// followed from the root through the child holding the most; `None` on an empty page or
/// when no child of `<html>` holds that share.
fn main_text(page: &Page, stats: &Figures) -> Option<ElementIdx> {
    let total = prose(stats, 0);
    let mut main: ElementIdx = 0;
    while let Some(&next) = page
        .elements
        .get(main as usize)?
        .children
        .iter()
        .max_by_key(|&&c| prose(stats, c))
    {
        if prose(stats, next) * 100 < total * MAIN_SHARE || stats.boiler[next as usize] {
            break;
        }
        main = next;
    }
    (main != 0).then_some(main)
}

/// Levels above the article's root where its repeated blocks are looked for (XenForo keeps a
/// message's text seven levels below the message).
const REPEAT_LEVELS: usize = 8;

/// Levels below the root's siblings where its repeated blocks are looked for (stray wrappers).
const NESTED_REPEATS: usize = 3;

/// An article split into repeated blocks (a CMS's text components, Medium's sections: the
/// same tag and first class, or the same id but for its number, `blockid-4647400`, one after
/// another) is all of them: within [`REPEAT_LEVELS`] above `root`, at the first level where
/// the path's child has such siblings (or blocks up to [`NESTED_REPEATS`] wrappers below
/// them) that hold the same path down to a block like `root` (not boilerplate, under 30 %
/// links, no heading listing a post: [`lists_a_post`]), their parent becomes the root,
/// keeping those blocks, the few-link blocks between them (headings, images) and the
/// paragraphs of [`INTRO_CHARS`] or more before the first (a listicle's opening), each with its
/// own inner skips. A level whose child has neither class nor id counts only with a
/// classed element below it on the path.
pub(super) fn with_repeats(
    page: &Page,
    stats: &Figures,
    root: ElementIdx,
    skip: Vec<ElementIdx>,
) -> (ElementIdx, Vec<ElementIdx>) {
    let first_class = |i: ElementIdx| {
        page.attr(i, "class")
            .and_then(|c| c.split_whitespace().next())
            .map(str::to_string)
    };
    // What marks a block: its tag with its first class, else its id without the digits.
    let mark = |i: ElementIdx| -> (String, Option<String>) {
        let id_stem = || {
            page.attr(i, "id")
                .map(|d| d.trim_end_matches(|c: char| c.is_ascii_digit()).to_string())
                .filter(|d| !d.is_empty())
        };
        (
            page.elements[i as usize].name.clone(),
            first_class(i).or_else(id_stem),
        )
    };
    let dense = |i: ElementIdx| {
        let (c, l) = (stats.chars[i as usize], stats.link_chars[i as usize]);
        c == 0 || l * 10 >= c * 3
    };
    // A card of another post (its heading a link to it) is never a block of this one; a
    // forum message whose heading links its author's name is.
    let card = |c: ElementIdx| page.subtree(c).any(|d| lists_a_post(page, d));
    // Whether `from` holds, child by child, blocks marked as `path` (top down): through any of
    // its children so marked, as two cells of one class (XenForo's `message-cell--user` and
    // `message-cell--main`) share a mark.
    fn holds(
        page: &Page,
        mark: &dyn Fn(ElementIdx) -> (String, Option<String>),
        from: ElementIdx,
        path: &[(String, Option<String>)],
    ) -> bool {
        let Some((m, rest)) = path.split_first() else {
            return true;
        };
        page.elements[from as usize]
            .children
            .iter()
            .any(|&c| &mark(c) == m && holds(page, mark, c, rest))
    }
    let holds =
        |from: ElementIdx, path: &[(String, Option<String>)]| holds(page, &mark, from, path);
    let mut path: Vec<(String, Option<String>)> = Vec::new();
    let mut child = root;
    for _ in 0..REPEAT_LEVELS {
        let Some(parent) = page.elements[child as usize].parent else {
            break;
        };
        let own = mark(child);
        if own.1.is_none() && !path.iter().any(|m| m.1.is_some()) {
            path.insert(0, own);
            child = parent;
            continue;
        }
        let same = |c: ElementIdx| {
            c != child
                && mark(c) == own
                && holds(c, &path)
                && !stats.boiler[c as usize]
                && !dense(c)
                && !card(c)
        };
        let children = &page.elements[parent as usize].children;
        // The blocks like the path's child: its siblings, or blocks a few stray wrappers below
        // them (`<span><span><div class="step">`).
        let mut members: Vec<ElementIdx> = Vec::new();
        let mut below: Vec<(ElementIdx, usize)> = children
            .iter()
            .filter(|&&c| c != child)
            .map(|&c| (c, 1))
            .collect();
        while let Some((c, depth)) = below.pop() {
            if same(c) {
                members.push(c);
            } else if depth < NESTED_REPEATS {
                below.extend(
                    page.elements[c as usize]
                        .children
                        .iter()
                        .map(|&d| (d, depth + 1)),
                );
            }
        }
        if members.is_empty() {
            path.insert(0, own);
            child = parent;
            continue;
        }
        members.push(child);
        let holds = |c: ElementIdx| members.iter().any(|&m| m == c || page.contains(c, m));
        let holders: Vec<ElementIdx> = children.iter().copied().filter(|&c| holds(c)).collect();
        let (first, last) = (holders[0], *holders.last().expect("the child is one"));
        let mut new_skip = skip;
        // Inside the path's child, only the root as chosen.
        let mut x = root;
        while x != child {
            let Some(p) = page.elements[x as usize].parent else {
                break;
            };
            new_skip.extend(
                page.elements[p as usize]
                    .children
                    .iter()
                    .copied()
                    .filter(|&s| s != x),
            );
            x = p;
        }
        // The intro before the first block: paragraphs of prose (a listicle's opening).
        let intro = |c: ElementIdx| {
            c < first
                && matches!(page.elements[c as usize].name.as_str(), "p" | "blockquote")
                && stats.chars[c as usize] >= INTRO_CHARS
        };
        for &c in children {
            let between = (first < c && c < last) || intro(c);
            if holders.contains(&c) {
                if c != child {
                    inner_skips(page, stats, c, &mut new_skip);
                }
            } else if !between || stats.boiler[c as usize] || dense(c) {
                new_skip.push(c);
            }
        }
        return (parent, new_skip);
    }
    (root, skip)
}

/// Chars of a paragraph before an article's first repeated block that make it the article's
/// intro ([`with_repeats`]).
const INTRO_CHARS: u32 = 80;

/// Levels between the article's root and the heading naming the page that the lead may cross.
const LEAD_LEVELS: usize = 6;

/// The post's lead (standfirst, deck, its first paragraphs) joins the article: most engines lay
/// a post out as title, byline, lead, body, and the lead often sits outside the body's
/// container (in the post's `<header>`, a "teaser" or "intro" block). When the heading naming
/// the page ([`super::blocks::title_heading`]) comes before `root`, their common ancestor (at
/// most [`LEAD_LEVELS`] above `root`) becomes the root, keeping only the prose blocks between
/// the heading and the old root: paragraphs, `h2`–`h6`, quotes or blocks without block
/// children, under 25 % links, a sentence or 80 characters long; never boilerplate by tag, a
/// part of the site, a byline, date, tag, credit or caption by its class words, a figure,
/// list or table. Nothing changes when there is no such prose.
pub(super) fn with_lead(
    page: &Page,
    stats: &Figures,
    root: ElementIdx,
    skip: Vec<ElementIdx>,
) -> (ElementIdx, Vec<ElementIdx>) {
    let site = super::blocks::site_parts(page);
    let Some(title) = super::blocks::title_heading(page, &site) else {
        return (root, skip);
    };
    if title >= root || page.contains(title, root) || page.contains(root, title) {
        return (root, skip);
    }
    // The common ancestor, and how far above the root it is.
    let mut above = Vec::new();
    let mut a = page.elements[root as usize].parent;
    while let Some(x) = a {
        if page.contains(x, title) {
            break;
        }
        above.push(x);
        a = page.elements[x as usize].parent;
    }
    let Some(common) = a.filter(|_| above.len() < LEAD_LEVELS) else {
        return (root, skip);
    };
    let (chars, links) = super::blocks::sizes(page, &stats.hard);
    let words = |i: ElementIdx| {
        let mut w: Vec<String> = Vec::new();
        for v in [page.attr(i, "class"), page.attr(i, "id")]
            .into_iter()
            .flatten()
        {
            for token in v.split_whitespace() {
                let token = token.to_lowercase();
                w.extend(
                    token
                        .split(['-', '_'])
                        .filter(|p| !p.is_empty())
                        .map(str::to_string),
                );
                w.push(token);
            }
        }
        w
    };
    let meta = |i: ElementIdx| {
        let w = words(i);
        w.iter().any(|x| META_WORDS.contains(&x.as_str()))
            && !w.iter().any(|x| LEAD_WORDS.contains(&x.as_str()))
    };
    let prose = |i: ElementIdx| {
        let (c, l) = (chars[i as usize], links[i as usize]);
        let e = &page.elements[i as usize];
        if c < super::blocks::MIN_BLOCK || l * 4 > c {
            return false;
        }
        if !matches!(
            e.name.as_str(),
            "p" | "blockquote" | "h2" | "h3" | "h4" | "h5" | "h6"
        ) && !super::blocks::is_block(page, i)
        {
            return false;
        }
        c >= 80
            || page
                .text_of(i)
                .trim_end()
                .ends_with(['.', '!', '?', '…', ':', ';', '"', '“', '”', '»', '«', ')'])
    };
    let mut keep = Vec::new();
    let mut i = page.subtree(title).end;
    while i < root {
        let e = &page.elements[i as usize];
        if page.contains(i, root) {
            i += 1;
            continue;
        }
        if stats.hard[i as usize]
            || site[i as usize]
            || meta(i)
            || matches!(e.name.as_str(), "figure" | "h1" | "table" | "ul" | "ol")
        {
            i = page.subtree(i).end;
            continue;
        }
        if prose(i) {
            keep.push(i);
            i = page.subtree(i).end;
            continue;
        }
        i += 1;
    }
    if keep.is_empty() {
        return (root, skip);
    }
    keep.push(root);
    let kept: Vec<std::ops::Range<ElementIdx>> = keep.iter().map(|&k| page.subtree(k)).collect();
    // Everything under the common ancestor but the kept blocks and the old root.
    let mut new_skip = skip;
    let end = page.subtree(common).end;
    let mut i = common + 1;
    while i < end {
        if let Some(k) = kept.iter().find(|k| k.contains(&i)) {
            i = k.end;
        } else if kept.iter().any(|k| page.contains(i, k.start)) {
            i += 1;
        } else {
            new_skip.push(i);
            i = page.subtree(i).end;
        }
    }
    (common, new_skip)
}

/// Class and id words of a byline, date, taxonomy or caption: never the lead.
const META_WORDS: &[&str] = &[
    "author",
    "byline",
    "dateline",
    "date",
    "timestamp",
    "published",
    "meta",
    "tags",
    "tag",
    "credit",
    "copyright",
    "caption",
    "print",
    "skip",
    "hidden",
];

/// Class and id words of a lead, which may share a word with [`META_WORDS`]'s blocks.
const LEAD_WORDS: &[&str] = &[
    "lead",
    "intro",
    "teaser",
    "summary",
    "excerpt",
    "abstract",
    "standfirst",
    "deck",
];

/// What inside the article is left out: boilerplate, link lists, the headline, blocks listing
/// other posts ([`super::blocks::listed_block`]).
pub(super) fn inner_skips(
    page: &Page,
    stats: &Figures,
    root: ElementIdx,
    skip: &mut Vec<ElementIdx>,
) {
    skip.extend(super::blocks::listed_block(page, stats, root));
    let range = page.subtree(root);
    let mut i = range.start + 1;
    while i < range.end {
        let e = &page.elements[i as usize];
        let link_list = matches!(
            e.name.as_str(),
            "ul" | "ol" | "div" | "p" | "section" | "table"
        ) && stats.chars[i as usize] > 0
            && stats.link_chars[i as usize] * 10 > stats.chars[i as usize] * 6;
        if stats.boiler[i as usize] || e.name == "h1" || link_list {
            skip.push(i);
            i = page.subtree(i).end;
        } else {
            i += 1;
        }
    }
}

/// Whether an element is a heading below the title: `h2`–`h6`, or any with `role=heading`.
fn is_heading(page: &Page, i: ElementIdx) -> bool {
    matches!(
        page.elements[i as usize].name.as_str(),
        "h2" | "h3" | "h4" | "h5" | "h6"
    ) || page
        .attr(i, "role")
        .is_some_and(|r| r.eq_ignore_ascii_case("heading"))
}

/// Chars a heading may hold to be a label ([`orphan_headings`]): a lead or a question set as a
/// heading is longer.
const LABEL_CHARS: u32 = 80;

/// The article's last headings are left out when nothing after them is kept but links: labels
/// over what the article leaves out ("Share this page" over its share buttons, "Keep reading"
/// over a list of links, "You might also like" over related posts), of [`LABEL_CHARS`] or
/// fewer and not a sentence (a pull quote closing a story is one).
pub(super) fn orphan_headings(page: &Page, root: ElementIdx, skip: &mut Vec<ElementIdx>) {
    let range = page.subtree(root);
    let skipped: rustc_hash::FxHashSet<ElementIdx> = skip.iter().copied().collect();
    // The article's headings outside skipped subtrees, in document order.
    let mut headings: Vec<ElementIdx> = Vec::new();
    let mut i = range.start + 1;
    while i < range.end {
        if skipped.contains(&i) {
            i = page.subtree(i).end;
            continue;
        }
        if is_heading(page, i) {
            headings.push(i);
            i = page.subtree(i).end;
            continue;
        }
        i += 1;
    }
    if headings.is_empty() {
        return;
    }
    // Kept chars (not whitespace) before each position of the article's text.
    let e = &page.elements[root as usize];
    let (from, to) = (e.start as usize, e.end as usize);
    let mut kept: Vec<bool> = page.text[from..to]
        .iter()
        .map(|c| !c.is_whitespace())
        .collect();
    for &s in skip.iter().filter(|&&s| page.contains(root, s)) {
        let s = &page.elements[s as usize];
        let (a, b) = (s.start as usize, s.end as usize);
        if a < b {
            kept[a - from..b - from].iter_mut().for_each(|k| *k = false);
        }
    }
    let mut before = Vec::with_capacity(kept.len() + 1);
    before.push(0u32);
    for &k in &kept {
        let last = *before.last().expect("pushed");
        before.push(last + u32::from(k));
    }
    let at = |pos: u32| before[(pos as usize).clamp(from, to) - from];
    // The same outside links: a heading over links alone ("F T I" sharing the page) labels
    // no text.
    for l in range.clone() {
        let x = &page.elements[l as usize];
        if x.name == "a" && page.attr(l, "href").is_some() && x.start < x.end {
            kept[x.start as usize - from..x.end as usize - from]
                .iter_mut()
                .for_each(|k| *k = false);
        }
    }
    let mut prose_before = Vec::with_capacity(kept.len() + 1);
    prose_before.push(0u32);
    for &k in &kept {
        let last = *prose_before.last().expect("pushed");
        prose_before.push(last + u32::from(k));
    }
    let prose_at = |pos: u32| prose_before[(pos as usize).clamp(from, to) - from];
    // From the last heading back, while nothing but links and the headings left out follows.
    let mut left_out = 0;
    for &h in headings.iter().rev() {
        let h_el = &page.elements[h as usize];
        let own = at(h_el.end) - at(h_el.start);
        let own_prose = prose_at(h_el.end) - prose_at(h_el.start);
        let sentence = page
            .normalised_text_of(h)
            .iter()
            .rev()
            .find(|c| !c.is_whitespace())
            == Some(&'.');
        // A heading with no text kept before it stays: the article is not left empty.
        if own > LABEL_CHARS
            || sentence
            || prose_at(to as u32) - prose_at(h_el.end) > left_out
            || at(h_el.start) == 0
        {
            break;
        }
        skip.push(h);
        left_out += own_prose;
    }
}

#[cfg(test)]
mod tests {
    use crate::core::fallback::article_text;
    use crate::core::page::Page;
    use crate::core::TEST_PROSE as PROSE;

    fn text(html: &str) -> String {
        article_text(&Page::parse(html))
    }

    #[test]
    fn headings_over_nothing_the_article_keeps_are_left_out() {
        // "Keep reading" over a list of links, "Share this page" over share buttons: labels
        // of what the article leaves out (wired.com, urania.de). A section heading with its
        // text stays, and so does a pull quote closing the story.
        let links: String = (1..=4)
            .map(|n| format!("<li><a href=/story{n}>Another story about hedges, {n}</a></li>"))
            .collect();
        let html = format!(
            "<html><body><div class=story><p>{PROSE}</p><h2>Why it matters</h2><p>{PROSE}</p>\
             <h3>Share this page</h3><div class=share-buttons><a href=/f>Facebook</a></div>\
             <h2>Keep reading</h2><ul>{links}</ul></div></body></html>"
        );
        assert_eq!(text(&html), format!("{PROSE} Why it matters {PROSE}"));
        let quote = "<h4>The hedge will outlast us all.</h4>";
        let html = format!(
            "<html><body><div class=story><p>{PROSE}</p><p>{PROSE}</p>{quote}</div></body></html>"
        );
        assert_eq!(
            text(&html),
            format!("{PROSE} {PROSE} The hedge will outlast us all.")
        );
    }

    #[test]
    fn a_last_heading_over_links_alone_is_left_out() {
        // urania.de: "Diese Seite teilen" over three one-letter share links, too few words
        // between them to make a list of links that is left out.
        let html = format!(
            "<html><body><div class=story><p>{PROSE}</p><p>{PROSE}</p>\
             <h2>Diese Seite teilen</h2><p><a href=/f>F</a> <a href=/t>T</a> <a href=/i>I</a></p>\
             </div></body></html>"
        );
        let t = text(&html);
        assert!(!t.contains("teilen"), "{t}");
        assert!(t.starts_with(&format!("{PROSE} {PROSE}")), "{t}");
    }

    #[test]
    fn a_forum_message_quoting_another_is_read_with_the_thread() {
        // XenForo (villagersandheroes.com): each message's text sits seven levels below the
        // message, and the first quotes a long post whose `bbCodeBlock-content` outscores
        // every message. The quotation is the message's, and the message one of the thread's.
        let message = |text: &str| {
            format!(
                "<article class='message message--post'><div class=message-inner>\
                 <div class='message-cell message-cell--main'><div class=message-main>\
                 <div class=message-content><div class=message-userContent>\
                 <article class=message-body><div class=bbWrapper>{text}</div></article>\
                 </div></div></div></div></div></article>"
            )
        };
        let quote = format!(
            "Our developers read your feedback over the weekend, and these changes follow:\
             <blockquote class=bbCodeBlock><div class=bbCodeBlock-title>Damon said:</div>\
             <div class=bbCodeBlock-content><p>{PROSE} Quoted.</p><p>{PROSE}</p><p>{PROSE}</p>\
             </div></blockquote>"
        );
        let html = format!(
            "<html><body><div class=block-body>{}{}{}</div></body></html>",
            message(&format!("<p>{PROSE} First.</p>")),
            message(&quote),
            message(&format!("<p>{PROSE} Third.</p>"))
        );
        let t = text(&html);
        for part in ["First.", "Our developers read", "Quoted.", "Third."] {
            assert!(t.contains(part), "{part} missing: {t}");
        }
    }
}
