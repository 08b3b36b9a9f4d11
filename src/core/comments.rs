//! Comments (paper §3.5): rules learned from a post's comment feed, and comments extracted from
//! post pages with them.
//!
//! Learning. A comment feed lists at most a few comments; the page shows all of them. Each
//! candidate rule is a class shared by several elements (`//*[@class='…']`). Rules returning
//! fewer nodes than the feed has comments score zero; the rest score by the maximum weighted
//! matching in the bipartite graph of returned nodes × feed comments, with edge weight the
//! Sørensen–Dice similarity (Kuhn–Munkres, from the `pathfinding` crate). The content rule is
//! learned against the comments' text, the author rule against their authors, the date rule
//! against renderings of their dates.
//!
//! Extraction. Every node of the content rule is one comment. Its author and date are the
//! author-rule and date-rule nodes nearest to it in the tree (not the i-th of independent lists,
//! which one missing field would shift). Its *element* is the lowest enclosing `<li>` or element
//! with a numeric id (`comment-123`), else its highest ancestor holding no other comment; a
//! comment's parent is the comment whose element most closely encloses its own (WordPress,
//! Blogger, Disqus and most engines nest replies inside the parent's element).

pub use super::comment_rules::CommentRules;
use super::dates::{parse_instant, parse_page_date};
use super::meta::machine_time_of;
use super::page::{ElementIdx, Page};
use super::text::{bigram_set, dice_from_counts, normalise};
use chrono::{DateTime, FixedOffset, Utc};
use pathfinding::prelude::{kuhn_munkres, Matrix};
use rustc_hash::{FxHashMap, FxHashSet};

/// A comment from a comment feed: the training target.
#[derive(Debug, Clone)]
pub struct FeedComment {
    /// Author name.
    pub author: Option<String>,
    /// Publication time.
    pub published: Option<DateTime<FixedOffset>>,
    /// Text of the comment.
    pub text: String,
}

/// A comment extracted from a page.
#[derive(Debug, Clone, PartialEq)]
pub struct PageComment {
    /// Stable key: the container's id (`comment-123`), else a hash of author, date and text.
    pub key: String,
    /// Author name.
    pub author: Option<String>,
    /// The author's website: the absolute http(s) link on the author's name ([`author_link`]).
    pub author_url: Option<String>,
    /// Publication time (machine-readable time first, else the shown text).
    pub published: Option<DateTime<FixedOffset>>,
    /// The date as shown.
    pub published_raw: Option<String>,
    /// Inner HTML of the content node.
    pub content_html: String,
    /// Text of the content node.
    pub content_text: String,
    /// Key of the comment this one replies to.
    pub parent: Option<String>,
}

/// Author names compare equal after folding typographic quotes and case ("Dan O’Connor" is
/// "Dan O'Connor": themes curl apostrophes that feeds keep straight).
pub fn same_author(a: Option<&str>, b: Option<&str>) -> bool {
    let fold = |s: &str| {
        s.replace(['\u{2019}', '\u{2018}', '\u{02bc}'], "'")
            .replace(['\u{201c}', '\u{201d}'], "\"")
            .to_lowercase()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    match (a, b) {
        (Some(a), Some(b)) => fold(a) == fold(b),
        (None, None) => true,
        _ => false,
    }
}

/// Two copies of one comment (a feed's and a page's): same author, texts with Dice ≥ 0.8.
pub fn same_comment(
    a_author: Option<&str>,
    a_text: &str,
    b_author: Option<&str>,
    b_text: &str,
) -> bool {
    same_author(a_author, b_author) && super::text::dice(a_text, b_text) >= 0.8
}

/// The page's text of a comment and a comment feed's text of it are the same text: one
/// contains the other (feeds prefix replies with "In reply to …"), or their Dice is ≥ 0.95. A
/// difference beyond that is an edit.
pub fn same_text(page: &str, feed: &str) -> bool {
    let norm = |s: &str| -> String { super::text::normalise(s).into_iter().collect() };
    let (p, f) = (norm(page), norm(feed));
    (!p.is_empty() && (f.contains(&p) || p.contains(&f))) || super::text::dice(page, feed) >= 0.95
}

/// A page comment's element id and a comment link's fragment name the same comment:
/// `div-comment-17` and `comment-17` (themes prefix the id the permalink uses).
pub fn same_id(element_id: &str, fragment: &str) -> bool {
    element_id == fragment
        || element_id.strip_suffix(fragment).is_some_and(|pre| {
            pre.ends_with('-') && fragment.ends_with(|c: char| c.is_ascii_digit())
        })
}

/// The class value of a `//*[@class='v']` rule.
pub fn class_of(rule: &str) -> Option<&str> {
    rule.strip_prefix("//*[@class='")?.strip_suffix("']")
}

/// Max-weight matching score of `nodes` × `targets` (weights: Dice of bigram sets), as the mean
/// weight per target; 0 when there are fewer nodes than targets.
fn matching_score(node_sets: &[FxHashSet<u64>], targets: &[FxHashSet<u64>]) -> f64 {
    if targets.is_empty() || node_sets.len() < targets.len() {
        return 0.0;
    }
    let weights = Matrix::from_fn(targets.len(), node_sets.len(), |(t, n)| {
        let (a, b) = (&targets[t], &node_sets[n]);
        let inter = a.iter().filter(|x| b.contains(x)).count();
        (dice_from_counts(inter, a.len(), b.len()) * 10_000.0) as i64
    });
    let (total, _) = kuhn_munkres(&weights);
    total as f64 / 10_000.0 / targets.len() as f64
}

/// The best class rule for one kind of target over the training pages: (class, mean score).
fn best_class(pages: &[(&Page, Vec<String>)], max_chars: Option<u32>) -> Option<(String, f64)> {
    let mut candidates: FxHashMap<String, f64> = FxHashMap::default();
    let mut usable = 0;
    for (page, targets) in pages {
        let targets: Vec<String> = targets
            .iter()
            .filter(|t| !t.trim().is_empty())
            .cloned()
            .collect();
        if targets.is_empty() {
            continue;
        }
        usable += 1;
        let target_sets: Vec<FxHashSet<u64>> =
            targets.iter().map(|t| bigram_set(&normalise(t))).collect();
        let mut classes: FxHashMap<&str, Vec<ElementIdx>> = FxHashMap::default();
        for i in 0..page.elements.len() as ElementIdx {
            if let Some(c) = page
                .attr(i, "class")
                .filter(|c| !c.contains(['\'', '"']) && !c.trim().is_empty())
            {
                classes.entry(c).or_default().push(i);
            }
        }
        for (class, nodes) in classes {
            if nodes.len() < target_sets.len() || nodes.len() > 40 * target_sets.len() + 40 {
                continue;
            }
            let sets: Vec<FxHashSet<u64>> = nodes
                .iter()
                .map(|&n| {
                    let e = &page.elements[n as usize];
                    if max_chars.is_some_and(|m| e.end - e.start > m) {
                        FxHashSet::default()
                    } else {
                        bigram_set(page.normalised_text_of(n))
                    }
                })
                .collect();
            let s = matching_score(&sets, &target_sets);
            if s > 0.0 {
                *candidates.entry(class.to_string()).or_default() += s;
            }
        }
    }
    let usable = usable.max(1) as f64;
    // Highest mean score; on a tie, the shorter class (the more generic one).
    candidates
        .into_iter()
        .map(|(c, s)| (c, s / usable))
        .max_by(|a, b| {
            a.1.total_cmp(&b.1)
                .then(b.0.len().cmp(&a.0.len()))
                .then(b.0.cmp(&a.0))
        })
}

/// Learns comment rules from pages and the comments their feeds list. `None` when no class
/// matches the comments' text well (mean Dice < 0.5).
pub fn learn(
    samples: &[(&Page, Vec<FeedComment>)],
    fetched_at: DateTime<Utc>,
) -> Option<CommentRules> {
    let content: Vec<(&Page, Vec<String>)> = samples
        .iter()
        .map(|(p, c)| (*p, c.iter().map(|c| c.text.clone()).collect()))
        .collect();
    let (content_class, score) = best_class(&content, None)?;
    if score < 0.5 {
        return None;
    }
    let authors: Vec<(&Page, Vec<String>)> = samples
        .iter()
        .map(|(p, c)| (*p, c.iter().filter_map(|c| c.author.clone()).collect()))
        .collect();
    let author = best_class(&authors, Some(80))
        .filter(|(c, s)| *s >= 0.5 && *c != content_class)
        .map(|(c, _)| c);
    let dates: Vec<(&Page, Vec<String>)> = samples
        .iter()
        .map(|(p, c)| {
            let shown: Vec<String> = c
                .iter()
                .filter_map(|c| c.published)
                .map(|d| {
                    // The rendering closest to what comment templates show: long date and time.
                    super::dates::date_renderings(&d, fetched_at)
                        .into_iter()
                        .map(|(_, t)| t)
                        .take(40)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            (*p, shown)
        })
        .collect();
    let date = best_class(&dates, Some(120))
        .filter(|(c, s)| *s >= 0.2 && *c != content_class)
        .map(|(c, _)| c);
    Some(CommentRules {
        content: content_class,
        author,
        date,
        score,
    })
}

/// Comment rules for a blog without comment feeds: no targets to match, so the page's own
/// vocabulary decides. On the pages given, the content rule is the class that names comment
/// content (`comment` with `content`, `body` or `text`, or `e-content` inside an `h-entry`
/// reply), repeated outside the article; author and date likewise (`comment` with `author`
/// or `fn`, with `date`, `time` or `meta`). Without such classes, a repeated structure of a
/// name, a time and a text by many people ([`super::comment_structure`]). `None` when no page
/// shows either.
pub fn guess(pages: &[(&Page, ElementIdx)]) -> Option<CommentRules> {
    let mut g = Guess::default();
    for (page, article) in pages {
        g.add(page, *article);
    }
    g.finish()
}

/// [`guess`], one page at a time: the classes outside the article, counted over the pages.
#[derive(Debug, Default)]
pub struct Guess {
    counts: FxHashMap<String, usize>,
    /// Classes one of whose elements holds another of the same class: a thread's containers
    /// (a comment with its replies), never one comment's text.
    nesting: FxHashSet<String>,
    /// Comment-like structures, for pages whose classes say nothing of comments.
    structure: super::comment_structure::StructureTally,
}

impl Guess {
    /// Counts the classes of `page` outside its article node `article`.
    pub fn add(&mut self, page: &Page, article: ElementIdx) {
        self.structure.add(page, article);
        for i in 0..page.elements.len() as ElementIdx {
            let Some(class) = page.attr(i, "class") else {
                continue;
            };
            if class.contains(['\'', '"']) || page.contains(i, article) || page.contains(article, i)
            {
                continue;
            }
            *self.counts.entry(class.to_string()).or_default() += 1;
            if !self.nesting.contains(class)
                && page
                    .by_class(class)
                    .iter()
                    .any(|&o| o != i && page.contains(i, o))
            {
                self.nesting.insert(class.to_string());
            }
        }
    }

    /// The comment rules the counted vocabulary names, if any (see [`guess`]).
    pub fn finish(self) -> Option<CommentRules> {
        let counts = &self.counts;
        let nesting = &self.nesting;
        // Keywords in order of preference; sidebar widgets ("latest comments") are not a post's.
        let pick = |want: &[&str], text: bool| -> Option<String> {
            want.iter().find_map(|w| {
                counts
                    .iter()
                    .filter(|(c, _)| !(text && nesting.contains(*c)))
                    .filter(|(c, _)| {
                        let l = c.to_lowercase();
                        l.contains("comment")
                            && l.contains(w)
                            && ![
                                "form",
                                "respond",
                                "count",
                                "latest",
                                "recent",
                                "widget",
                                "reply-link",
                            ]
                            .iter()
                            .any(|x| l.contains(x))
                    })
                    .max_by_key(|(c, n)| (**n, std::cmp::Reverse(c.len())))
                    .map(|(c, _)| c.clone())
            })
        };
        let Some(content) = pick(&["content", "text", "body"], true)
            .filter(|c| counts.get(c).copied().unwrap_or(0) >= 1)
        else {
            // No class says "comment": a repeated name, time and text by many people.
            return self.structure.best();
        };
        let author =
            pick(&["author-name", "author", "fn", "name"], false).filter(|a| *a != content);
        let date = pick(&["metadata", "date", "time", "meta"], false).filter(|d| *d != content);
        Some(CommentRules {
            content,
            author,
            date,
            score: 0.0,
        })
    }
}

fn tree_distance(page: &Page, a: ElementIdx, b: ElementIdx) -> u32 {
    let mut ancestors = FxHashMap::default();
    let mut cur = Some(a);
    let mut d = 0;
    while let Some(c) = cur {
        ancestors.insert(c, d);
        d += 1;
        cur = page.elements[c as usize].parent;
    }
    let mut cur = Some(b);
    let mut d = 0;
    while let Some(c) = cur {
        if let Some(da) = ancestors.get(&c) {
            return da + d;
        }
        d += 1;
        cur = page.elements[c as usize].parent;
    }
    u32::MAX
}

fn nearest(page: &Page, from: ElementIdx, candidates: &[ElementIdx]) -> Option<ElementIdx> {
    candidates
        .iter()
        .copied()
        .min_by_key(|&c| (tree_distance(page, from, c), c))
}

/// A comment's key when nothing on the page names it: FNV-1a of its author, instant and the
/// first 200 characters of its text (`h` and 16 hex digits), the same on every run.
pub fn stable_key(
    author: &Option<String>,
    published: &Option<DateTime<FixedOffset>>,
    text: &str,
) -> String {
    // FNV-1a of author, instant and the text's first 200 characters: stable across runs.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let s = format!(
        "{}|{}|{}",
        author.as_deref().unwrap_or(""),
        published.map(|d| d.timestamp()).unwrap_or(0),
        text.chars().take(200).collect::<String>()
    );
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("h{h:016x}")
}

/// Placeholders comment widgets show where comments would be (lower case).
const PLACEHOLDERS: [&str; 12] = [
    "no comments yet",
    "no comments",
    "be the first to comment",
    "be the first to leave a comment",
    "leave a comment",
    "leave a reply",
    "add a comment",
    "write a comment",
    "log in to comment",
    "sign in to comment",
    "loading comments",
    "comments are closed",
];

/// Whether the element the comment rule selected holds a comment: some text, not a form (a
/// widget's postbox: `form`, `textarea`, text `input`), not a placeholder ("No comments yet",
/// "Log in to comment", "Loading comments…") or a skeleton (issue 13: no phantom comments).
pub fn is_comment_text(page: &Page, c: ElementIdx) -> bool {
    let text = page.text_of(c);
    if !text.chars().any(char::is_alphanumeric) {
        return false;
    }
    let form = |i: ElementIdx| {
        matches!(page.elements[i as usize].name.as_str(), "form" | "textarea")
            || (page.elements[i as usize].name == "input"
                && page
                    .attr(i, "type")
                    .is_none_or(|t| t.eq_ignore_ascii_case("text")))
    };
    if page.subtree(c).any(form) {
        return false;
    }
    let folded: String = text
        .to_lowercase()
        .chars()
        .filter(|ch| ch.is_alphanumeric() || ch.is_whitespace())
        .collect();
    let folded = folded.split_whitespace().collect::<Vec<_>>().join(" ");
    !PLACEHOLDERS
        .iter()
        .any(|p| folded == *p || (folded.starts_with(p) && folded.len() <= p.len() + 12))
}

/// Extracts every comment a page shows, in document order: never an empty element, a
/// widget's form or a placeholder ([`is_comment_text`]).
pub fn extract(
    page: &Page,
    rules: &CommentRules,
    offset: FixedOffset,
    fetched_at: DateTime<Utc>,
) -> Vec<PageComment> {
    let contents: Vec<ElementIdx> = page
        .by_class(&rules.content)
        .iter()
        .copied()
        .filter(|&c| is_comment_text(page, c))
        .collect();
    if contents.is_empty() {
        return Vec::new();
    }
    let authors: Vec<ElementIdx> = rules
        .author
        .as_deref()
        .map(|c| page.by_class(c).to_vec())
        .unwrap_or_default();
    let dates: Vec<ElementIdx> = rules
        .date
        .as_deref()
        .map(|c| page.by_class(c).to_vec())
        .unwrap_or_default();
    // A comment's element: the lowest enclosing <li> or element with a numeric id (one comment
    // of a thread), else its container — the highest ancestor holding no other comment.
    let content_set: FxHashSet<ElementIdx> = contents.iter().copied().collect();
    let holds_other =
        |a: ElementIdx, me: ElementIdx| content_set.iter().any(|&c| c != me && page.contains(a, c));
    // Each author element belongs to the comment text nearest to it (bounded work on huge
    // threads: without the map any author counts).
    let owner: FxHashMap<ElementIdx, ElementIdx> =
        if authors.len().saturating_mul(contents.len()) <= 1_000_000 {
            authors
                .iter()
                .filter_map(|&a| {
                    contents
                        .iter()
                        .copied()
                        .min_by_key(|&c| (tree_distance(page, a, c), c))
                        .map(|c| (a, c))
                })
                .collect()
        } else {
            FxHashMap::default()
        };
    let containers: Vec<ElementIdx> = contents
        .iter()
        .map(|&c| {
            // An <li> first (replies nest in the item, next to the comment's own markup), then an
            // element with a numeric id; of those, the lowest that also holds this comment's
            // author element when the page has them (Commento gives the text's own wrapper a
            // numeric id too), else the lowest.
            let has_author = |p: ElementIdx| {
                authors.is_empty()
                    || authors
                        .iter()
                        .any(|&a| owner.get(&a).is_none_or(|&o| o == c) && page.contains(p, a))
            };
            for want_li in [true, false] {
                let mut first = None;
                let mut cur = page.elements[c as usize].parent;
                while let Some(p) = cur {
                    let numeric_id = page
                        .attr(p, "id")
                        .is_some_and(|v| v.chars().any(|ch| ch.is_ascii_digit()));
                    if (want_li && page.elements[p as usize].name == "li")
                        || (!want_li && numeric_id)
                    {
                        if has_author(p) {
                            return p;
                        }
                        first.get_or_insert(p);
                    }
                    cur = page.elements[p as usize].parent;
                }
                if let Some(f) = first {
                    return f;
                }
            }
            let mut top = c;
            while let Some(p) = page.elements[top as usize].parent {
                if holds_other(p, c) {
                    break;
                }
                top = p;
            }
            top
        })
        .collect();
    let mut out: Vec<PageComment> = Vec::new();
    for (i, &c) in contents.iter().enumerate() {
        let container = containers[i];
        // Author and date inside this comment's container, nearest first.
        // Author and date in this comment's element, not in a reply nested inside it.
        let nested: Vec<ElementIdx> = containers
            .iter()
            .copied()
            .filter(|&o| o != container && page.contains(container, o))
            .collect();
        let inside = |v: &[ElementIdx]| -> Vec<ElementIdx> {
            v.iter()
                .copied()
                .filter(|&x| {
                    page.contains(container, x) && !nested.iter().any(|&o| page.contains(o, x))
                })
                .collect()
        };
        let author_node = nearest(page, c, &inside(&authors));
        let author_url = author_node.and_then(|a| author_link(page, a, container));
        let author = author_node.map(|a| {
            let t = page.text_of(a);
            t.trim_end_matches(" says:")
                .trim_end_matches(':')
                .trim()
                .to_string()
        });
        let date_node = nearest(page, c, &inside(&dates));
        let published_raw = date_node.map(|d| page.text_of(d)).filter(|t| !t.is_empty());
        let published = date_node
            .and_then(|d| machine_time_of(page, d))
            .and_then(|m| parse_instant(&m, Some(offset)))
            .or_else(|| {
                published_raw
                    .as_deref()
                    .and_then(|t| parse_page_date(t, None, offset, fetched_at))
                    .map(|d| d.instant)
            });
        let content_text = page.text_of(c);
        let id = {
            let mut cur = Some(c);
            let mut found = None;
            while let Some(x) = cur {
                if let Some(id) = page
                    .attr(x, "id")
                    .filter(|v| v.chars().any(|ch| ch.is_ascii_digit()))
                {
                    found = Some(id.to_string());
                    break;
                }
                if x == container {
                    break;
                }
                cur = page.elements[x as usize].parent;
            }
            found
        };
        let key = id.unwrap_or_else(|| stable_key(&author, &published, &content_text));
        out.push(PageComment {
            key,
            author_url: author_url.filter(|_| author.as_deref().is_some_and(|a| !a.is_empty())),
            author: author.filter(|a| !a.is_empty()),
            published,
            published_raw,
            content_html: page.inner_html(c).trim().to_string(),
            content_text,
            parent: None,
        });
    }
    // Parent: the comment whose container most closely encloses this one's.
    for i in 0..contents.len() {
        let parent = (0..contents.len())
            .filter(|&j| {
                j != i
                    && containers[j] != containers[i]
                    && page.contains(containers[j], containers[i])
            })
            .max_by_key(|&j| page.elements[containers[j] as usize].depth);
        out[i].parent = parent.map(|j| out[j].key.clone());
    }
    out
}

/// The commenter's website: the link on the author element `a` (a link itself, the first link
/// inside it, or a link around it below the comment's `container`), when it is an absolute
/// http(s) URL. Themes link a commenter's name to the site the comment form asked for
/// (WordPress: `<a href="…" class="url" rel="ugc external nofollow">`, hCard's `url`).
fn author_link(page: &Page, a: ElementIdx, container: ElementIdx) -> Option<String> {
    let is_link = |x: ElementIdx| page.elements[x as usize].name == "a";
    let around = {
        let mut cur = Some(a);
        let mut found = None;
        while let Some(x) = cur {
            if is_link(x) {
                found = Some(x);
                break;
            }
            if x == container {
                break;
            }
            cur = page.elements[x as usize].parent;
        }
        found
    };
    let link = around.or_else(|| page.subtree(a).find(|&x| is_link(x)))?;
    let href = page.attr(link, "href")?.trim();
    let lower = href.to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://"))
        .then(|| url::Url::parse(href).ok())
        .flatten()
        .map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widget_forms_and_placeholders_are_not_comments() {
        // Isso 0.14's postbox as its embed.min.js builds it (template "postbox"): a form whose
        // preview holds an empty `isso-text`, the class of the comments' text; then one comment.
        let page = Page::parse(
            r#"<section id="isso-thread"><h4>1 Comment</h4>
            <div class='isso-postbox'><div class='isso-form-wrapper'><div class='isso-textarea-wrapper'><textarea class='isso-textarea' rows='5' minlength='3' maxlength='65535' placeholder='Type Comment Here (at least 3 chars)'></textarea><div class='isso-preview'><div class='isso-comment'><div class='isso-text-wrapper'><div class='isso-text'></div></div></div></div></div>
            <div class='isso-auth-section'><p class='isso-input-wrapper'><label for='isso-postbox-author'>Name (optional)</label><input id='isso-postbox-author' type='text' name='author' placeholder='John Doe' value='' /></p></div></div></div>
            <div class="isso-root"><div class="isso-comment" id="isso-1">
              <div class="isso-text-wrapper"><div class="isso-comment-header"><span class="isso-author">Ada</span></div>
              <div class="isso-text"><p>Lovely cattle grids.</p></div></div></div></div>
            <div class="isso-text">   </div>
            <div class="isso-text">No comments yet.</div>
            <div class="isso-text">Loading comments…</div></section>"#,
        );
        let rules = CommentRules {
            content: "isso-text".into(),
            author: Some("isso-author".into()),
            date: None,
            score: 1.0,
        };
        let utc = FixedOffset::east_opt(0).unwrap();
        let got = extract(&page, &rules, utc, DateTime::<Utc>::UNIX_EPOCH);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].content_text, "Lovely cattle grids.");
        assert_eq!(got[0].author.as_deref(), Some("Ada"));
        // A comment that merely mentions a placeholder's words is one.
        let real = Page::parse(
            r#"<div class=c>No comments yet on the old post, so here is mine: the grids are back.</div>"#,
        );
        assert!(is_comment_text(&real, real.by_class("c")[0]));
    }

    #[test]
    fn feed_reply_prefixes_are_not_edits() {
        assert!(same_text(
            "Same here, Dan!",
            "In reply to Dan O'Connor. Same here, Dan!"
        ));
        assert!(!same_text(
            "Bookmarked. We counted 36.",
            "My notes from that day are short."
        ));
    }

    const PAGE: &str = r#"<html><body><article><div class="entry">Post body.</div></article>
      <ol class="comment-list">
        <li id="comment-1"><article id="div-comment-1"><div class="meta"><b class="fn">Ann</b> <time datetime="2020-01-02T10:00:00+01:00">2 January 2020</time></div><div class="comment-content">First! Lovely post about gardens.</div></article>
          <ol class="children"><li id="comment-2"><div class="meta"><b class="fn">Bob</b> <time datetime="2020-01-03T11:00:00+01:00">3 January 2020</time></div><div class="comment-content">Replying to Ann: agreed, the roses were great.</div></li></ol>
        </li>
        <li id="comment-3"><div class="meta"><b class="fn">Cy</b> <time datetime="2020-01-04T12:00:00+01:00">4 January 2020</time></div><div class="comment-content">A third voice with different words entirely.</div></li>
      </ol></body></html>"#;

    #[test]
    fn learns_by_matching_and_threads_replies() {
        let page = Page::parse(PAGE);
        let feed = vec![
            FeedComment {
                author: Some("Cy".into()),
                published: None,
                text: "A third voice with different words entirely.".into(),
            },
            FeedComment {
                author: Some("Bob".into()),
                published: None,
                text: "Replying to Ann: agreed, the roses were great.".into(),
            },
        ];
        let now = DateTime::parse_from_rfc3339("2021-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let rules = learn(&[(&page, feed)], now).unwrap();
        assert_eq!(rules.content, "comment-content");
        assert_eq!(rules.author.as_deref(), Some("fn"));
        let off = FixedOffset::east_opt(3600).unwrap();
        let got = extract(&page, &rules, off, now);
        assert_eq!(got.len(), 3);
        assert_eq!(got[1].author.as_deref(), Some("Bob"));
        assert_eq!(got[1].key, "comment-2");
        assert_eq!(got[1].parent.as_deref(), Some("div-comment-1"));
        assert_eq!(got[2].parent, None);
        let rules = CommentRules {
            date: Some("meta".into()),
            ..rules
        };
        let got = extract(&page, &rules, off, now);
        assert_eq!(
            got[0].published.unwrap().to_rfc3339(),
            "2020-01-02T10:00:00+01:00"
        );
    }

    #[test]
    fn without_a_feed_the_structure_is_recognised() {
        let page = Page::parse(PAGE);
        let article = page.by_class("entry")[0];
        let rules = guess(&[(&page, article)]).unwrap();
        assert_eq!(rules.content, "comment-content");
        let now = DateTime::parse_from_rfc3339("2021-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            extract(&page, &rules, FixedOffset::east_opt(0).unwrap(), now).len(),
            3
        );
    }

    #[test]
    fn feed_and_page_copies_are_one_comment() {
        assert!(same_comment(
            Some("Dan O\u{2019}Connor"),
            "I\u{2019}m not so sure.",
            Some("Dan O'Connor"),
            "I\u{2019}m not so sure."
        ));
        assert!(!same_comment(
            Some("Ann"),
            "Great post",
            Some("Bob"),
            "Great post"
        ));
    }

    #[test]
    fn rules_returning_too_few_nodes_score_zero() {
        let sets = vec![FxHashSet::default()];
        assert_eq!(
            matching_score(&sets, &[FxHashSet::default(), FxHashSet::default()]),
            0.0
        );
    }

    #[test]
    fn comment_ids_match_their_permalink_fragments() {
        assert!(same_id("comment-17", "comment-17"));
        assert!(same_id("div-comment-17", "comment-17"));
        assert!(!same_id("div-comment-117", "comment-17"));
        assert!(!same_id("xcomment-17", "comment-17"));
        assert!(!same_id("div-comments", "comments"));
    }
}
