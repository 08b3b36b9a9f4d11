//! Comments recognised by their structure alone (issue 41), for a blog with no comment feed,
//! no widget data and no class that says "comment": repeated elements outside the article,
//! each holding a name-like node, a time-like node and a text node, the names of many
//! people. Post cards ("More posts", related posts) have the same three parts, but their names
//! are the blog's one or two authors, their titles are headings, and their text is a link.
//!
//! The result is the same [`CommentRules`] the paper's matching learns (§3.5): the classes of
//! the content, author and date nodes.

use super::comment_rules::CommentRules;
use super::page::{ElementIdx, Page};
use chrono::{DateTime, FixedOffset};
use rustc_hash::{FxHashMap, FxHashSet};

/// The fewest items, over all pages, a structure needs to be taken for comments.
const MIN_ITEMS: usize = 3;
/// The least share of distinct names among a structure's items, over all pages (comments are
/// by many people, regulars more than once; post cards by the blog's few authors).
const MIN_DISTINCT_NAMES: f64 = 0.1;
/// The fewest distinct names a structure needs.
const MIN_NAMES: usize = 3;
/// Items larger than this (in elements) are page layout, not one comment with its replies.
const MAX_ITEM_ELEMENTS: usize = 5_000;

/// The classes of one item's three parts.
type Triple = (String, String, String);

/// Repeated comment-like structures counted over pages: per (content, author, date) classes,
/// the names seen and the items.
#[derive(Debug, Default)]
pub struct StructureTally {
    seen: FxHashMap<Triple, (usize, FxHashSet<String>)>,
}

impl StructureTally {
    /// Counts the structures of `page` outside its article node `article`.
    pub fn add(&mut self, page: &Page, article: ElementIdx) {
        for (triple, items) in structures(page, article) {
            let e = self.seen.entry(triple).or_default();
            e.0 += items.len();
            e.1.extend(items.into_values());
        }
    }

    /// The structure with the most items that passes the thresholds, as comment rules; `None`
    /// when no page showed one.
    pub fn best(self) -> Option<CommentRules> {
        self.seen
            .into_iter()
            .filter(|(_, (n, names))| {
                *n >= MIN_ITEMS
                    && names.len() >= MIN_NAMES
                    && names.len() as f64 >= *n as f64 * MIN_DISTINCT_NAMES
            })
            .max_by(|a, b| {
                (a.1 .0, std::cmp::Reverse(&a.0)).cmp(&(b.1 .0, std::cmp::Reverse(&b.0)))
            })
            .map(|((content, author, date), _)| CommentRules {
                content,
                author: Some(author),
                date: Some(date),
                score: 0.0,
            })
    }
}

/// The comment-like structures of one page: per triple of classes, its items (by their text
/// node, so that the groups nested in one another count each item once) and their names.
fn structures(
    page: &Page,
    article: ElementIdx,
) -> FxHashMap<Triple, FxHashMap<ElementIdx, String>> {
    let mut groups: FxHashMap<&str, Vec<ElementIdx>> = FxHashMap::default();
    for i in 0..page.elements.len() as ElementIdx {
        let Some(class) = page.attr(i, "class") else {
            continue;
        };
        if class.contains(['\'', '"'])
            || page.contains(i, article)
            || page.contains(article, i)
            || in_chrome(page, i)
        {
            continue;
        }
        groups.entry(class).or_default().push(i);
    }
    let epoch = DateTime::UNIX_EPOCH;
    let utc = FixedOffset::east_opt(0).expect("zero offset");
    let dated = |i: ElementIdx, text: &str| {
        page.elements[i as usize].name == "time"
            || (text.len() <= 40 && super::dates::parse_page_date(text, None, utc, epoch).is_some())
    };
    let mut out: FxHashMap<Triple, FxHashMap<ElementIdx, String>> = FxHashMap::default();
    for items in groups.values().filter(|g| g.len() >= 2) {
        for &item in items {
            if page.subtree(item).len() > MAX_ITEM_ELEMENTS {
                continue;
            }
            if let Some((triple, text, name)) = parts(page, item, items, &dated) {
                out.entry(triple).or_default().insert(text, name);
            }
        }
    }
    out
}

/// Whether `i` sits in the page's navigation or sidebar.
fn in_chrome(page: &Page, i: ElementIdx) -> bool {
    let mut cur = Some(i);
    while let Some(c) = cur {
        if matches!(page.elements[c as usize].name.as_str(), "nav" | "aside") {
            return true;
        }
        cur = page.elements[c as usize].parent;
    }
    false
}

/// An item's name, time and text nodes (classed, in document order, outside the items nested
/// in it): the triple of their classes, the text node and the name.
fn parts(
    page: &Page,
    item: ElementIdx,
    group: &[ElementIdx],
    dated: &dyn Fn(ElementIdx, &str) -> bool,
) -> Option<(Triple, ElementIdx, String)> {
    let nested: Vec<ElementIdx> = group
        .iter()
        .copied()
        .filter(|&o| o != item && page.contains(item, o))
        .collect();
    let own = |i: ElementIdx| !nested.iter().any(|&n| n == i || page.contains(n, i));
    // A post card has a title; a comment has none.
    if page.subtree(item).any(|i| {
        own(i)
            && matches!(
                page.elements[i as usize].name.as_str(),
                "h1" | "h2" | "h3" | "h4" | "h5" | "h6"
            )
    }) {
        return None;
    }
    let heading = |i: ElementIdx| {
        let mut cur = Some(i);
        while let Some(c) = cur {
            if matches!(
                page.elements[c as usize].name.as_str(),
                "h1" | "h2" | "h3" | "h4" | "h5" | "h6"
            ) {
                return true;
            }
            if c == item {
                return false;
            }
            cur = page.elements[c as usize].parent;
        }
        false
    };
    let mut name: Option<(ElementIdx, String)> = None;
    let mut date: Option<ElementIdx> = None;
    let mut texts: Vec<(ElementIdx, usize)> = Vec::new();
    for i in page.subtree(item).skip(1) {
        if !own(i) {
            continue;
        }
        let Some(class) = page.attr(i, "class") else {
            continue;
        };
        if class.contains(['\'', '"']) {
            continue;
        }
        let t = page.text_of(i);
        if t.is_empty() || heading(i) {
            continue;
        }
        let len = t.chars().count();
        let words = t.split_whitespace().count();
        if len >= 20 && words >= 4 {
            texts.push((i, len));
        }
        // A name or a time is a leaf among the classed elements (a header holding both is
        // neither).
        let leaf = !page
            .subtree(i)
            .skip(1)
            .any(|d| page.attr(d, "class").is_some() && !page.normalised_text_of(d).is_empty());
        if !leaf {
            continue;
        }
        if date.is_none() && dated(i, &t) {
            date = Some(i);
        } else if name.is_none()
            && (2..=40).contains(&len)
            && words <= 4
            && t.chars().any(char::is_alphabetic)
        {
            name = Some((i, t));
        }
    }
    let (name_at, name) = name?;
    let date = date?;
    // The text: the longest after the name that holds neither the name, the time nor a reply,
    // and is not mostly a link (a post card's title).
    let (text_at, _) = texts
        .into_iter()
        .filter(|&(i, len)| {
            let linked: usize = page
                .subtree(i)
                .filter(|&a| page.elements[a as usize].name == "a")
                .map(|a| page.text_of(a).chars().count())
                .sum();
            i > name_at
                && linked * 2 < len
                && ![name_at, date]
                    .into_iter()
                    .chain(nested.iter().copied())
                    .any(|p| page.contains(i, p))
        })
        .max_by_key(|&(i, len)| (len, std::cmp::Reverse(i)))?;
    let class = |i: ElementIdx| page.attr(i, "class").map(str::to_string);
    Some((
        (class(text_at)?, class(name_at)?, class(date)?),
        text_at,
        name,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(html: &str) -> Option<CommentRules> {
        let page = Page::parse(html);
        let article = page.by_class("post")[0];
        let mut t = StructureTally::default();
        t.add(&page, article);
        t.best()
    }

    #[test]
    fn items_by_many_people_with_a_name_a_time_and_text() {
        let item = |n: &str, d: &str, t: &str| {
            format!(
                r#"<div class="x-item"><span class="x-nick">{n}</span><span class="x-when">{d}</span><div class="x-body"><p>{t}</p></div></div>"#
            )
        };
        let html = format!(
            r#"<body><div class="post"><p>The article text is here and long enough.</p></div><div id="w">{}{}{}</div></body>"#,
            item(
                "Ada Park",
                "2024-03-01",
                "I tried this on my own hives last spring and it worked."
            ),
            item(
                "Bo Lind",
                "2024-03-02",
                "Does the same hold for top-bar hives, do you think?"
            ),
            item(
                "Cy Moss",
                "2 days ago",
                "Thanks for writing this up, it saved me an afternoon."
            ),
        );
        let r = rules(&html).expect("a structure");
        assert_eq!(r.content, "x-body");
        assert_eq!(r.author.as_deref(), Some("x-nick"));
        assert_eq!(r.date.as_deref(), Some("x-when"));
    }

    #[test]
    fn post_cards_by_one_author_are_not_comments() {
        let card = |d: &str, t: &str| {
            format!(
                r#"<div class="card"><h3 class="card-title"><a href="/p/">{t}</a></h3><span class="card-by">Jo Author</span><span class="card-date">{d}</span><p class="card-excerpt">An excerpt of that other post, long enough to read.</p></div>"#
            )
        };
        let html = format!(
            r#"<body><div class="post"><p>The article text is here and long enough.</p></div>{}{}{}{}</body>"#,
            card("2024-03-01", "One"),
            card("2024-02-01", "Two"),
            card("2024-01-01", "Three"),
            card("2023-12-01", "Four"),
        );
        assert_eq!(rules(&html), None);
    }
}
