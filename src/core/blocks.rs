//! The blocks of a page, read from its flat element table in linear passes, shared by the
//! generic extractor (`core::fallback`), the listing judge (`core::listing`) and learning
//! (`core::learn`): per-element text figures (`Figures`: boilerplate, chars, link chars,
//! paragraph scores), the site's parts around its posts, the headings that list other posts
//! and the blocks they make inside an article (`listed_block`), and the heading that names
//! the page ([`page_title`]).

use super::page::{attr_of, ElementIdx, Page};
use super::roles::{classify, classify_with, Class, SiteTags, SITE_PARTS};

/// Text blocks shorter than this (chars) score nothing.
pub const MIN_BLOCK: u32 = 25;

/// Chars of prose no date, byline or post header holds ([`Class::PostPart`]).
const POST_PART_PROSE: u32 = 1000;

/// Fewer chars than this per link make a part a list of links, not prose.
const CHARS_PER_LINK: u32 = 100;

/// Chars of prose a page keeps outside a part named boilerplate whose prose is mostly list items
/// (a gallery's captions) for the part to stay boilerplate however much prose it holds.
const OUTSIDE_LISTED_PART: u32 = 1000;

/// Inline elements: their text is part of the paragraph around them.
const INLINE: &[&str] = &[
    "a", "abbr", "acronym", "b", "bdi", "bdo", "big", "br", "cite", "code", "data", "del", "dfn",
    "em", "font", "i", "img", "ins", "kbd", "mark", "nobr", "q", "rb", "rp", "rt", "ruby", "s",
    "samp", "small", "span", "strike", "strong", "sub", "sup", "time", "tt", "u", "var", "wbr",
];

/// Per-element figures of one page, from one pass over its element table .
pub(super) struct Figures {
    /// The element or an ancestor is boilerplate by its tag or hidden state alone, whatever its
    /// class words say (`roles::Class::Hard`).
    pub(super) hard: Vec<bool>,
    /// The element or an ancestor is boilerplate.
    pub(super) boiler: Vec<bool>,
    /// Chars of text outside boilerplate in the element's subtree.
    pub(super) chars: Vec<u32>,
    /// Of those, chars inside links.
    pub(super) link_chars: Vec<u32>,
    /// Readability content score gathered from the paragraphs below.
    pub(super) score: Vec<f32>,
    /// Class/id weight: +25 positive, −25 negative.
    pub(super) weight: Vec<f32>,
}

impl Figures {
    /// The figures of every element of `page`.
    pub(super) fn of(page: &Page) -> Figures {
        Figures::with(page, SiteTags::Hard)
    }

    /// The figures of every element of `page`, the tags of site parts read as `site_tags` says
    /// ([`SiteTags::Soft`]: for a page with no text block outside them).
    pub(super) fn with(page: &Page, site_tags: SiteTags) -> Figures {
        let n = page.elements.len();
        // Hard boilerplate (tags, hidden) flows down; parents come before children.
        let mut hard = vec![false; n];
        let mut soft = vec![false; n];
        let mut weight = vec![0.0; n];
        let mut variant = vec![false; n];
        let mut post_part = vec![false; n];
        for i in 0..n {
            let inherited = page.elements[i].parent.is_some_and(|p| hard[p as usize]);
            let class = classify_with(page, i as ElementIdx, site_tags);
            hard[i] = inherited || class == Class::Hard;
            soft[i] = class == Class::Negative;
            variant[i] = class == Class::NegativeVariant;
            post_part[i] = class == Class::PostPart;
            weight[i] = match class {
                Class::Positive => 25.0,
                Class::Article => 10.0,
                Class::Negative => -25.0,
                _ => 0.0,
            };
        }
        let (chars, links) = sizes(page, &hard);
        // A part a BEM modifier alone names is one when it reads like one: mostly links, or a
        // link every few words (teasers under an overlay link, `rail--trending`); a section
        // of prose (`TestReport__Section--Ads`) is not.
        // (Counted only on a page that has such a part.)
        if variant.contains(&true) {
            let mut anchors = vec![0u32; n];
            for i in (0..n).rev() {
                if hard[i] {
                    continue;
                }
                let e = &page.elements[i];
                if e.name == "a" && page.attr(i as ElementIdx, "href").is_some() {
                    anchors[i] += 1;
                }
                if let Some(p) = e.parent {
                    anchors[p as usize] += anchors[i];
                }
            }
            for i in 0..n {
                if variant[i] && (links[i] * 2 > chars[i] || anchors[i] * CHARS_PER_LINK > chars[i])
                {
                    soft[i] = true;
                    weight[i] = -25.0;
                }
            }
        }
        // Prose: chars of the text blocks below each element, a container's own text outside
        // its block children (text between `<br>`s beside an image's `div`) among them.
        let mut prose = vec![0u32; n];
        for i in (0..n).rev() {
            if !hard[i] && chars[i] >= MIN_BLOCK {
                if is_block(page, i as ElementIdx) {
                    prose[i] = prose[i].max(chars[i]);
                } else {
                    let own = own_text(page, &chars, i);
                    if own >= MIN_BLOCK {
                        prose[i] += own;
                    }
                }
            }
            if let Some(p) = page.elements[i].parent {
                prose[p as usize] += prose[i];
            }
        }
        // A post part that is a subheading after text of the post (Neos CMS's
        // `neos-nodetypes-headline` around each `<h4>` of the body) is the post's.
        let subheading = |i: usize| {
            let e = &page.elements[i];
            let heading = page.subtree(i as ElementIdx).find(|&d| {
                matches!(
                    page.elements[d as usize].name.as_str(),
                    "h2" | "h3" | "h4" | "h5" | "h6"
                )
            });
            heading.is_some_and(|h| chars[h as usize] == chars[i])
                && e.parent.is_some_and(|p| {
                    page.elements[p as usize]
                        .children
                        .iter()
                        .take_while(|&&c| c as usize != i)
                        .any(|&c| prose[c as usize] >= MIN_BLOCK)
                })
        };
        for i in 0..n {
            if post_part[i] && prose[i] < POST_PART_PROSE && !subheading(i) {
                soft[i] = true;
                weight[i] = -25.0;
            }
        }
        // A site part by its class never holds most of the page's prose: an Elementor
        // "widget" or a "has-sidebar" wrapper around the article is not boilerplate. Unless
        // its prose is mostly list items while an article's worth of prose is left outside
        // it: a gallery's captions, a slideshow's slides, beside the story.
        let total = prose.first().copied().unwrap_or(0);
        let mut in_items = vec![0u32; n];
        for i in (0..n).rev() {
            if page.elements[i].name == "li" {
                in_items[i] = prose[i];
            }
            if let Some(p) = page.elements[i].parent {
                in_items[p as usize] += in_items[i];
            }
        }
        let items =
            |i: usize| in_items[i] * 2 > prose[i] && total - prose[i] >= OUTSIDE_LISTED_PART;
        let mark = |soft: &[bool]| {
            let mut boiler = hard.clone();
            for i in 0..n {
                let inherited = page.elements[i].parent.is_some_and(|p| boiler[p as usize]);
                boiler[i] |= inherited || (soft[i] && (prose[i] * 2 <= total || items(i)));
            }
            boiler
        };
        let mut boiler = mark(&soft);
        let (mut chars, mut link_chars) = sizes(page, &boiler);
        // Nor does one hold the article while almost nothing is left outside the site's parts
        // (a news story inside `div.article-header`): the part holding the most prose, at
        // least four times what is left, is not boilerplate.
        let outermost = |i: usize| {
            soft[i]
                && !hard[i]
                && page.elements[i]
                    .parent
                    .is_none_or(|p| !boiler[p as usize] || hard[p as usize])
        };
        if let Some(part) = (0..n)
            .filter(|&i| boiler[i] && outermost(i))
            .max_by_key(|&i| prose[i])
            .filter(|&i| prose[i] >= 2 * MIN_BLOCK && prose[i] >= 4 * chars[0])
            .filter(|&i| !items(i))
        {
            soft[part] = false;
            boiler = mark(&soft);
            (chars, link_chars) = sizes(page, &boiler);
        }
        let commas = commas(page, &boiler);
        let mut score = vec![0.0f32; n];
        // Paragraph scores, given to the ancestors. A container's own text outside its block
        // children (text between `<br>`s) is a paragraph of the container.
        for i in 0..n {
            if boiler[i] {
                continue;
            }
            let e = &page.elements[i];
            let (len, mut ancestor) = if is_block(page, i as ElementIdx) {
                (chars[i], e.parent)
            } else if !INLINE.contains(&e.name.as_str()) {
                (own_text(page, &chars, i), Some(i as ElementIdx))
            } else {
                continue;
            };
            if len < MIN_BLOCK {
                continue;
            }
            let commas = if len == chars[i] {
                commas[i] as f32
            } else {
                0.0
            };
            let s = 1.0 + commas + (len / 100).min(3) as f32;
            let mut level = 0;
            while let (Some(a), true) = (ancestor, level < 5) {
                let divider = match level {
                    0 => 1.0,
                    1 => 2.0,
                    l => l as f32 * 3.0,
                };
                score[a as usize] += s / divider;
                ancestor = page.elements[a as usize].parent;
                level += 1;
            }
        }
        Figures {
            hard,
            boiler,
            chars,
            link_chars,
            score,
            weight,
        }
    }
}

/// Chars of a container's own text: its `chars` outside its children that are not inline
/// (0 for an inline element, whose text is its parent's).
fn own_text(page: &Page, chars: &[u32], i: usize) -> u32 {
    let e = &page.elements[i];
    if INLINE.contains(&e.name.as_str()) {
        return 0;
    }
    let blocks: u32 = e
        .children
        .iter()
        .filter(|&&c| !INLINE.contains(&page.elements[c as usize].name.as_str()))
        .map(|&c| chars[c as usize])
        .sum();
    chars[i].saturating_sub(blocks)
}

/// Chars of text in each element's subtree outside `excluded` subtrees, and of those the chars
/// inside links ([`is_link`]). Children follow their parent in document order, so one reverse pass sums.
pub(super) fn sizes(page: &Page, excluded: &[bool]) -> (Vec<u32>, Vec<u32>) {
    let n = page.elements.len();
    let mut chars = vec![0u32; n];
    let mut links = vec![0u32; n];
    for i in (0..n).rev() {
        if excluded[i] {
            continue;
        }
        let e = &page.elements[i];
        let children: u32 = e
            .children
            .iter()
            .map(|&c| {
                let c = &page.elements[c as usize];
                c.end - c.start
            })
            .sum();
        chars[i] += (e.end - e.start).saturating_sub(children);
        if e.name == "a" && is_link(page, i as ElementIdx) {
            links[i] = chars[i];
        }
        if let Some(p) = e.parent {
            chars[p as usize] += chars[i];
            links[p as usize] += links[i];
        }
    }
    (chars, links)
}

/// Whether an `<a>` is a link: any with `href`, and those scripts make one (`<a class=share
/// data-network=x>`). A named anchor (`<a name=top>`) or a bare `<a>` is not: left open by
/// broken markup (`<a name=purpose>Purpose</h2>`, `TCLUG<a/>`), it spreads over every
/// paragraph after it.
fn is_link(page: &Page, idx: ElementIdx) -> bool {
    let el = page.element_ref(idx);
    let v = el.value();
    attr_of(v, "href").is_some() || (attr_of(v, "name").is_none() && !v.attrs.is_empty())
}

/// Commas (`,` and the full-width `，`) in each element's text outside the `excluded`
/// elements, counted as [`sizes`] counts characters: a comment list made boilerplate never
/// lends its commas to the list around it.
fn commas(page: &Page, excluded: &[bool]) -> Vec<u32> {
    let mut before = Vec::with_capacity(page.text.len() + 1);
    before.push(0u32);
    for &c in &page.text {
        let last = *before.last().expect("pushed");
        before.push(last + u32::from(c == ',' || c == '，'));
    }
    let in_range = |e: &super::page::Element| before[e.end as usize] - before[e.start as usize];
    let n = page.elements.len();
    let mut commas = vec![0u32; n];
    for i in (0..n).rev() {
        if excluded[i] {
            continue;
        }
        let e = &page.elements[i];
        let children: u32 = e
            .children
            .iter()
            .map(|&c| in_range(&page.elements[c as usize]))
            .sum();
        commas[i] += in_range(e).saturating_sub(children);
        if let Some(p) = e.parent {
            commas[p as usize] += commas[i];
        }
    }
    commas
}

/// Blocks whose text is scored as a paragraph.
pub(super) fn is_block(page: &Page, idx: ElementIdx) -> bool {
    let e = &page.elements[idx as usize];
    match e.name.as_str() {
        "p" | "pre" | "blockquote" | "td" | "dd" => true,
        "div" | "section" | "li" => !e.children.iter().any(|&c| {
            matches!(
                page.elements[c as usize].name.as_str(),
                "p" | "div" | "section" | "article" | "table" | "ul" | "ol" | "pre" | "blockquote"
            )
        }),
        _ => false,
    }
}

/// Whether an href names a site's root, as a logo links it: `/`, `./`, `../../`, `index.html`.
pub(super) fn root_href(href: &str) -> bool {
    let mut h = href.trim();
    while let Some(rest) = h.strip_prefix("../").or_else(|| h.strip_prefix("./")) {
        h = rest;
    }
    matches!(h, "" | "/" | "." | ".." | "index.html")
}

/// The headings that list a post on the page: `h1`–`h4` outside boilerplate whose text is
/// mostly one link to another page (not a fragment of this one, not the site's root: a logo),
/// with at least two words.
pub(super) fn listed_headings(page: &Page, parts: &[bool]) -> Vec<ElementIdx> {
    (0..page.elements.len() as ElementIdx)
        .filter(|&i| !parts[i as usize] && lists_a_post(page, i))
        .collect()
}

/// Whether element `i` is a heading that lists a post ([`listed_headings`]), wherever it is.
pub(super) fn lists_a_post(page: &Page, i: ElementIdx) -> bool {
    let e = &page.elements[i as usize];
    if !matches!(e.name.as_str(), "h1" | "h2" | "h3" | "h4") {
        return false;
    }
    let text = page.normalised_text_of(i);
    if text.len() < 6 || !text.contains(&' ') {
        return false;
    }
    heading_link(page, i).is_some_and(|a| {
        let ae = &page.elements[a as usize];
        (ae.end - ae.start) * 2 >= e.end - e.start
    })
}

/// The link a heading lists a page by: its first `<a>` whose `href` leads to another page (not
/// empty, not a fragment of this one, not the site's root as a logo links it).
pub(super) fn heading_link(page: &Page, heading: ElementIdx) -> Option<ElementIdx> {
    page.subtree(heading).find(|&d| {
        page.elements[d as usize].name == "a"
            && page.attr(d, "href").is_some_and(|h| {
                let h = h.trim();
                !h.is_empty() && !h.starts_with('#') && !root_href(h)
            })
    })
}

/// Which elements are in a part of the site around its posts: navigation, asides, footers,
/// hidden elements (by tag and role, `core::fallback`'s hard boilerplate) and elements whose
/// class or id names such a part (`core::fallback`'s site-part words), with their contents. A post's own
/// `<header>` is none of them.
pub(super) fn site_parts(page: &Page) -> Vec<bool> {
    let mut parts = vec![false; page.elements.len()];
    for i in 0..page.elements.len() {
        let inherited = page.elements[i].parent.is_some_and(|p| parts[p as usize]);
        parts[i] = inherited || {
            let idx = i as ElementIdx;
            classify(page, idx) == Class::Hard
                || [page.attr(idx, "class"), page.attr(idx, "id")]
                    .into_iter()
                    .flatten()
                    .flat_map(str::split_whitespace)
                    .any(|w| {
                        let w = w.to_ascii_lowercase();
                        SITE_PARTS.contains(&w.as_str())
                            || w.rsplit(['-', '_'])
                                .next()
                                .is_some_and(|last| SITE_PARTS.contains(&last))
                    })
        };
    }
    parts
}

/// Each listed heading's item: its highest ancestor that holds no other listed heading and not
/// the heading naming the page (`title`).
pub(super) fn items_of(
    page: &Page,
    headings: &[ElementIdx],
    title: Option<ElementIdx>,
) -> Vec<ElementIdx> {
    headings
        .iter()
        .map(|&x| {
            let mut cur = x;
            while let Some(p) = page.elements[cur as usize].parent {
                let holds_other = headings.iter().any(|&o| o != x && page.contains(p, o));
                if p == 0 || holds_other || title.is_some_and(|t| page.contains(p, t)) {
                    break;
                }
                cur = p;
            }
            cur
        })
        .collect()
}

/// What inside an article element lists other posts (a related-posts block, a "More posts"
/// loop, "Read more" cards) and is no article text: where at least two headings inside `root`
/// link to other pages, after text of the article's own, the smallest block holding their items
/// and little else (a "Related" heading); the items alone when they share `root` with the text.
pub(super) fn listed_block(page: &Page, figures: &Figures, root: ElementIdx) -> Vec<ElementIdx> {
    let range = page.subtree(root);
    let listed: Vec<ElementIdx> = listed_headings(page, &site_parts(page))
        .into_iter()
        .filter(|h| range.contains(h) && *h != root)
        .collect();
    // A heading that links to its section's subject, between headings of its level that link
    // nowhere, names a section of the article: a listed heading counts only beside another,
    // as the next or previous heading of its level inside `root`.
    // (Listed headings are `h1`–`h4`: their peers are among those, gathered once.)
    let level = |h: ElementIdx| page.elements[h as usize].name.as_str();
    let in_root: Vec<ElementIdx> = range
        .clone()
        .filter(|&i| matches!(level(i), "h1" | "h2" | "h3" | "h4"))
        .collect();
    let headings: Vec<ElementIdx> = listed
        .iter()
        .copied()
        .filter(|&h| {
            let peers: Vec<ElementIdx> = in_root
                .iter()
                .copied()
                .filter(|&i| level(i) == level(h))
                .collect();
            let at = peers.iter().position(|&p| p == h).unwrap_or(0);
            [at.checked_sub(1), Some(at + 1)]
                .into_iter()
                .flatten()
                .filter_map(|n| peers.get(n))
                .any(|p| listed.contains(p))
        })
        .collect();
    let (Some(&first), true) = (listed.first(), headings.len() >= 2) else {
        return Vec::new();
    };
    // The article's own text comes first, before any heading that links.
    let before = page.elements[first as usize].start - page.elements[root as usize].start;
    if before < MIN_BLOCK {
        return Vec::new();
    }
    // Each item stops below the element holding two headings, itself inside `root`.
    let items = items_of(page, &headings, None);
    let mut block = page.elements[items[0] as usize].parent.unwrap_or(root);
    while !items.iter().all(|&m| page.contains(block, m)) {
        block = page.elements[block as usize].parent.unwrap_or(root);
    }
    let listed: u32 = items.iter().map(|&m| figures.chars[m as usize]).sum();
    // Items scattered through the article (links to related stories between its paragraphs)
    // go alone: their common ancestor holds the article's text.
    if block == root || figures.chars[block as usize].saturating_sub(listed) > 60 {
        return items;
    }
    while block != root {
        let parent = page.elements[block as usize].parent.unwrap_or(root);
        if parent == root || figures.chars[parent as usize].saturating_sub(listed) > 60 {
            break;
        }
        block = parent;
    }
    vec![block]
}

/// The page's title without the site's name: the heading naming the page when a declared
/// title (`og:title`, `<title>`) contains its text ("Post | Site" → "Post"), else `og:title`,
/// else `<title>`.
pub fn page_title(page: &Page) -> Option<String> {
    let og = super::head::meta_values(page, "meta[property='og:title']", "content")
        .into_iter()
        .next();
    let document = super::head::document_title(page);
    let heading = title_heading(page, &site_parts(page))
        .map(|h| page.text_of(h))
        .filter(|h| !h.is_empty());
    let contains = |t: &Option<String>, h: &str| {
        t.as_deref()
            .is_some_and(|t| t.to_lowercase().contains(&h.to_lowercase()))
    };
    match heading {
        Some(h) if contains(&og, &h) || contains(&document, &h) => Some(h),
        _ => og.or(document),
    }
}

/// The heading that names the page: among `h1`–`h3` outside boilerplate, the one most like the
/// page's declared title (`og:title`, `<title>`, or a part of either around " | ", " - ", " — ",
/// " · ", " :: ", " » "), by bigram Dice ≥ 0.7, the later one on a tie; a heading linking to the
/// site's root (a logo) never is.
pub(super) fn title_heading(page: &Page, site: &[bool]) -> Option<ElementIdx> {
    let titles = super::head::meta_values(page, "meta[property='og:title']", "content")
        .into_iter()
        .chain(super::head::document_title(page));
    let mut parts: Vec<String> = Vec::new();
    for title in titles {
        for sep in [" | ", " - ", " – ", " — ", " · ", " :: ", " » ", " // "] {
            parts.extend(
                title
                    .split(sep)
                    .map(str::trim)
                    .filter(|p| p.chars().count() > 2)
                    .map(str::to_string),
            );
        }
        parts.push(title);
    }
    if parts.is_empty() {
        return None;
    }
    let mut best: Option<(ElementIdx, f64)> = None;
    for (i, e) in page.elements.iter().enumerate() {
        let i = i as ElementIdx;
        if !matches!(e.name.as_str(), "h1" | "h2" | "h3") || site[i as usize] {
            continue;
        }
        let logo = page.subtree(i).any(|d| {
            page.elements[d as usize].name == "a" && page.attr(d, "href").is_some_and(root_href)
        });
        if logo {
            continue;
        }
        let text = page.text_of(i);
        let score = parts
            .iter()
            .map(|p| super::text::dice(&text, p))
            .fold(0.0, f64::max);
        // Ties go to the later heading: a post's title follows the site's name.
        if score >= 0.7 && best.is_none_or(|(_, b)| score >= b) {
            best = Some((i, score));
        }
    }
    best.map(|(i, _)| i)
}

/// Chars of text after the heading `h` (its own subtree aside) outside boilerplate, links and
/// the listed `items`.
pub(super) fn own_text_after(
    page: &Page,
    figures: &Figures,
    h: ElementIdx,
    items: &[ElementIdx],
) -> u32 {
    let n = page.elements.len() as ElementIdx;
    let mut i = page.subtree(h).end;
    let mut own = 0;
    while i < n {
        let e = &page.elements[i as usize];
        if figures.boiler[i as usize] || e.name == "a" || items.contains(&i) {
            i = page.subtree(i).end;
            continue;
        }
        let children: u32 = e.children.iter().map(|&c| figures.chars[c as usize]).sum();
        own += figures.chars[i as usize].saturating_sub(children);
        i += 1;
    }
    own
}
