//! What a page says about the blog around it: the next page of a listing (pagination, for
//! walking back to older posts), the comment count a post page declares, whether its comments
//! are closed, and the comment feed it names. And how many posts are still unseen, estimated
//! from how often the seen ones were found (capture–recapture). And whether a page is a listing
//! at all rather than a post ([`is_listing`], issue 13).

use super::fallback::{classify, Class, MIN_BLOCK};
use super::page::{ElementIdx, Page};
use scraper::Selector;
use url::Url;

/// Link texts that lead to older posts on a listing page.
const OLDER: &[&str] = &[
    "older posts",
    "older entries",
    "older",
    "next page",
    "next",
    "more posts",
    "previous posts",
    "previous entries",
    "»",
    "→",
    "›",
    "next »",
    "older »",
    "older posts →",
    "next →",
];

/// The next page of a listing (older posts): `<link rel="next">` or `<a rel="next">`, else an
/// anchor whose text says "Older posts", "Next", "»"…, else a link to the following page
/// number (`/page/N+1/`, `indexN+1.html`, `?page=N+1`, `?paged=N+1`). `None` on the last page.
pub fn next_page(page: &Page, base: &Url) -> Option<Url> {
    let html = page.html();
    let rel_next = Selector::parse("link[rel~=next][href], a[rel~=next][href]").expect("static");
    if let Some(u) = html
        .select(&rel_next)
        .filter_map(|e| base.join(e.value().attr("href")?.trim()).ok())
        .find(|u| u != base)
    {
        return Some(u);
    }
    let anchors = Selector::parse("a[href]").expect("static");
    let by_text = html.select(&anchors).find_map(|a| {
        let text: String = a.text().collect::<String>().to_lowercase();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let label = a.value().attr("aria-label").unwrap_or("").to_lowercase();
        (OLDER.contains(&text.as_str()) || label.contains("older") || label.contains("next page"))
            .then(|| base.join(a.value().attr("href")?.trim()).ok())
            .flatten()
            .filter(|u| u != base)
    });
    if by_text.is_some() {
        return by_text;
    }
    let current = page_number(base).unwrap_or(1);
    html.select(&anchors)
        .filter_map(|a| base.join(a.value().attr("href")?.trim()).ok())
        .find(|u| page_number(u) == Some(current + 1) && same_listing(u, base))
}

/// The page number a listing URL names: `/page/N/`, `indexN.html`, `index-N.html`, `?page=N`,
/// `?paged=N`; `None` for the first page or another URL.
pub fn page_number(url: &Url) -> Option<u32> {
    if let Some(n) = url
        .query_pairs()
        .find(|(k, _)| k == "page" || k == "paged")
        .and_then(|(_, v)| v.parse().ok())
    {
        return Some(n);
    }
    let segments: Vec<&str> = url.path_segments()?.filter(|s| !s.is_empty()).collect();
    if let [.., "page", n] = segments.as_slice() {
        return n.parse().ok();
    }
    let last = segments.last()?;
    let digits = last
        .strip_prefix("index")?
        .strip_suffix(".html")?
        .trim_start_matches('-');
    digits.parse().ok()
}

/// Two listing URLs of the same listing (same host, same path apart from the page part).
fn same_listing(a: &Url, b: &Url) -> bool {
    let stem = |u: &Url| -> String {
        let p = u.path();
        let p = match p.find("/page/") {
            Some(i) => &p[..i],
            None => p
                .trim_end_matches(".html")
                .trim_end_matches(".htm")
                .trim_end_matches(|c: char| c.is_ascii_digit() || c == '-')
                .trim_end_matches("index"),
        };
        format!("{}{}", u.host_str().unwrap_or(""), p.trim_end_matches('/'))
    };
    stem(a) == stem(b)
}

/// The comment count a post page declares outside its article ("12 Comments", "3 thoughts
/// on …", "1 reply", "(4) responses"): the first such short text. `None` when it says none.
pub fn declared_comments(page: &Page, article: Option<u32>) -> Option<u32> {
    let words = [
        "comment",
        "comments",
        "responses",
        "response",
        "replies",
        "reply",
        "thoughts",
        "thought",
    ];
    for i in 0..page.elements.len() as u32 {
        if article.is_some_and(|a| page.contains(a, i)) {
            continue;
        }
        let e = &page.elements[i as usize];
        if !matches!(
            e.name.as_str(),
            "h2" | "h3" | "h4" | "span" | "a" | "p" | "div" | "strong"
        ) {
            continue;
        }
        let text = page.text_of(i);
        if text.len() > 80 || text.is_empty() {
            continue;
        }
        let lower = text.to_lowercase();
        let lower = lower.trim_start_matches('(');
        let mut parts = lower.split(|c: char| c.is_whitespace() || c == ')');
        let (Some(n), Some(w)) = (parts.next(), parts.find(|p| !p.is_empty())) else {
            continue;
        };
        let w = w.trim_end_matches(|c: char| !c.is_alphabetic());
        if let (Ok(n), true) = (n.parse::<u32>(), words.contains(&w)) {
            // The innermost element saying it (its parents say it too).
            if e.children.iter().all(|c| page.text_of(*c) != text) {
                return Some(n);
            }
        }
    }
    None
}

/// The page says its comments are closed ("Comments are closed.", "Comments closed").
pub fn comments_closed(page: &Page) -> bool {
    let text = page.text_of(0).to_lowercase();
    [
        "comments are closed",
        "comments closed",
        "commenting is closed",
        "comments have been closed",
        "comments are disabled",
    ]
    .iter()
    .any(|p| text.contains(p))
}

/// The comment feed of the post a page shows: among the `<link rel="alternate">` feeds whose
/// title or URL speaks of comments, the one under the post's URL (WordPress:
/// `<post>/feed/`), else the last one when there are several (engines declare the site-wide
/// comment feed first, the post's after it: Blogger's `feeds/<id>/comments/default`). A lone
/// site-wide comment feed (`/comments/feed/`, `/feeds/comments/default`) is not the post's.
pub fn comment_feed(page: &Page, base: &Url) -> Option<String> {
    let sel = Selector::parse("link[rel~=alternate][href]").expect("static");
    let candidates: Vec<Url> = page
        .html()
        .select(&sel)
        .filter_map(|l| {
            let v = l.value();
            let ty = v.attr("type").unwrap_or("").to_lowercase();
            let title = v.attr("title").unwrap_or("").to_lowercase();
            let href = v.attr("href")?;
            let feed = ty.contains("rss") || ty.contains("atom");
            (feed && (title.contains("comment") || href.to_lowercase().contains("comments")))
                .then(|| base.join(href).ok())
                .flatten()
        })
        .collect();
    let mut post = base.clone();
    post.set_fragment(None);
    post.set_query(None);
    let site_wide = |u: &Url| {
        let p = u.path().trim_end_matches('/');
        p == "/comments/feed" || p.ends_with("/feeds/comments/default")
    };
    candidates
        .iter()
        .find(|u| u.as_str().starts_with(post.as_str()) && u.as_str() != post.as_str())
        .or(match candidates.as_slice() {
            [one] if site_wide(one) => None,
            more => more.last(),
        })
        .map(|u| u.to_string())
}

/// Posts still unseen, estimated from how many times each seen post was found (Chao1,
/// bias-corrected): `f1` posts found once, `f2` found twice. Many posts found once and few
/// twice mean many more are out there; when every post was found at least twice, none is.
///
/// ```
/// use everblog::core::listing::unseen_posts;
/// assert_eq!(unseen_posts(0, 12), 0.0);
/// assert!(unseen_posts(10, 0) > 40.0);
/// assert!(unseen_posts(2, 10) < 1.0);
/// ```
pub fn unseen_posts(f1: u64, f2: u64) -> f64 {
    let (f1, f2) = (f1 as f64, f2 as f64);
    f1 * (f1 - 1.0).max(0.0) / (2.0 * (f2 + 1.0))
}

/// Whether two post titles name the same post: equal once case, punctuation and spacing are
/// folded, or nearly equal (strsim's normalised Levenshtein ≥ 0.95, a typo fixed) with the
/// same digits, so "Weekly links #12" and "Weekly links #13" stay two posts.
pub fn same_title(a: &str, b: &str) -> bool {
    let fold = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_alphanumeric() || c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (a, b) = (fold(a), fold(b));
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let digits = |s: &str| s.chars().filter(char::is_ascii_digit).collect::<String>();
    a == b || (digits(&a) == digits(&b) && strsim::normalized_levenshtein(&a, &b) >= 0.95)
}

/// The feed entry whose post a page shows (a listing led by it, a re-post): one of `entries`
/// with the same title ([`same_title`]) whose text opens the page's article (bigram Dice ≥
/// 0.8 against as much of `text` as the entry holds, plus a fifth). A post that only shares a
/// title ("Update") has its own text and is no copy.
pub fn copy_of<'a>(
    title: &str,
    text: &str,
    entries: impl IntoIterator<Item = &'a super::feed::FeedEntry>,
) -> Option<&'a super::feed::FeedEntry> {
    entries.into_iter().find(|e| {
        e.title.as_deref().is_some_and(|t| same_title(title, t))
            && e.content_html
                .as_deref()
                .or(e.summary_html.as_deref())
                .is_some_and(|h| {
                    super::text::dice_of_opening(&super::feed::html_to_text(h), text) >= 0.8
                })
    })
}

/// The page's `<link rel="canonical">`, resolved against `base`; `None` when it declares none
/// (or an unparsable one).
pub fn canonical_link(page: &Page, base: &Url) -> Option<Url> {
    let sel = Selector::parse("link[rel]").expect("static selector");
    page.html()
        .select(&sel)
        .filter(|l| {
            l.value().attr("rel").is_some_and(|r| {
                r.split_whitespace()
                    .any(|w| w.eq_ignore_ascii_case("canonical"))
            })
        })
        .find_map(|l| {
            l.value()
                .attr("href")
                .and_then(|h| base.join(h.trim()).ok())
        })
}

/// Whether the page lists posts rather than being one: OpenGraph declares it a `website`; or
/// it holds several article blocks (`<article>`, `h-entry`, `hentry`) side by side, each with a
/// text block's worth of text, none holding most of their text (a post with "related posts"
/// cards is still a post); or, outside its boilerplate, at least [`LISTED_TITLES`] headings
/// are links (the titles of the posts listed; a post links at most its own).
pub fn is_listing(page: &Page) -> bool {
    listing_in(page)
}

/// Linked headings that make a page a listing ([`is_listing`]).
pub const LISTED_TITLES: usize = 3;

fn listing_in(page: &Page) -> bool {
    // Headings in navigation, asides and footers (a sidebar's "Recent posts") do not count;
    // those in a listed post's own `<header>` do.
    let linked_headings = page
        .elements
        .iter()
        .enumerate()
        .filter(|&(i, e)| {
            if !matches!(e.name.as_str(), "h1" | "h2" | "h3" | "h4") || e.end == e.start {
                return false;
            }
            let links: u32 = page
                .subtree(i as ElementIdx)
                .filter(|&d| page.elements[d as usize].name == "a")
                .map(|d| page.elements[d as usize].end - page.elements[d as usize].start)
                .sum();
            links * 2 >= e.end - e.start && !site_part(page, i as ElementIdx)
        })
        .count();
    if linked_headings >= LISTED_TITLES || teaser(page) {
        return true;
    }
    let og_website = page
        .html()
        .select(&scraper::Selector::parse("meta[property='og:type']").expect("selector"))
        .filter_map(|m| m.value().attr("content"))
        .any(|t| t.trim().eq_ignore_ascii_case("website"));
    if og_website {
        return true;
    }
    let mut blocks: Vec<u32> = Vec::new();
    let mut i = 0;
    while i < page.elements.len() {
        let idx = i as ElementIdx;
        let e = &page.elements[i];
        let entry = e.name == "article"
            || page.attr(idx, "class").is_some_and(|c| {
                c.split_whitespace()
                    .any(|w| w == "h-entry" || w == "hentry")
            });
        // Comments (`<article class="comment-body">` in a comments area) are not listed posts.
        if entry && e.end - e.start >= MIN_BLOCK && !around_article(page, idx) {
            blocks.push(e.end - e.start);
            // Blocks nested in a counted block are its parts.
            i = page.subtree(idx).end as usize;
        } else {
            i += 1;
        }
    }
    let total: u32 = blocks.iter().sum();
    let largest = blocks.iter().copied().max().unwrap_or(0);
    blocks.len() >= 2 && largest * 5 < total * 3
}

/// Whether the element is in a part of the page around the article: a site part
/// ([`site_part`]) or one whose class/id names a site part (comments, sidebar, related…).
fn around_article(page: &Page, idx: ElementIdx) -> bool {
    within(page, idx, |c| matches!(c, Class::Hard | Class::Negative))
}

/// Whether the element is in a part of the site around the article (navigation, aside,
/// footer, hidden): by tag only, as a listed post's own `<header>` is not one.
fn site_part(page: &Page, idx: ElementIdx) -> bool {
    within(page, idx, |c| c == Class::Hard)
}

/// Whether the element or one of its ancestors is of a class `is` accepts.
fn within(page: &Page, idx: ElementIdx, is: impl Fn(Class) -> bool) -> bool {
    let mut cur = Some(idx);
    while let Some(c) = cur {
        if is(classify(page, c)) {
            return true;
        }
        cur = page.elements[c as usize].parent;
    }
    false
}

/// Whether the page shows a post's teaser: a "read more" link (`more-link`, `readmore`,
/// "Continue reading", "Weiterlesen", "Lire la suite"…) leads to the whole post elsewhere.
fn teaser(page: &Page) -> bool {
    const CLASSES: &[&str] = &["more-link", "readmore", "read-more", "read_more"];
    const TEXTS: &[&str] = &[
        "read more",
        "continue reading",
        "read the rest",
        "weiterlesen",
        "lire la suite",
        "leer más",
        "seguir leyendo",
        "leggi tutto",
        "lees meer",
    ];
    page.elements.iter().enumerate().any(|(i, e)| {
        e.name == "a"
            && page
                .attr(i as ElementIdx, "href")
                .is_some_and(|h| !h.starts_with('#'))
            && (page.attr(i as ElementIdx, "class").is_some_and(|c| {
                c.split_whitespace()
                    .any(|w| CLASSES.contains(&w.to_ascii_lowercase().as_str()))
            }) || {
                let text: String = page.normalised_text_of(i as ElementIdx).iter().collect();
                let text = text.trim_end_matches(['…', '.', '→', '»', ' ', '>']);
                TEXTS.iter().any(|t| text.starts_with(t)) && text.len() < 40
            })
            && !site_part(page, i as ElementIdx)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_titles_fold_case_punctuation_and_typos_but_not_numbers() {
        assert!(same_title(
            "Café thoughts on timeouts",
            "café thoughts on timeouts!"
        ));
        assert!(same_title(
            "The herb spiral I pruned near the compost bins",
            "The herb spiral I prunned near the compost bins"
        ));
        assert!(!same_title("Weekly links #12", "Weekly links #13"));
        assert!(!same_title(
            "On slugs and ladybirds",
            "On ladybirds and slugs"
        ));
        assert!(!same_title("", ""));
    }

    #[test]
    fn a_copy_has_the_title_and_the_opening_text() {
        let rss = br#"<?xml version="1.0"?><rss version="2.0"><channel><title>B</title><link>http://b.org/</link>
            <item><title>Update</title><link>http://b.org/update/</link><description>The compost heap needed turning again this week, twice.</description></item>
            <item><title>On slugs</title><link>http://b.org/slugs/</link><description>Slugs came back after the rain, as they always do.</description></item>
            </channel></rss>"#;
        let feed = super::super::feed::parse(rss, "http://b.org/feed/").unwrap();
        let listing =
            "The compost heap needed turning again this week, twice. On slugs. Slugs came back…";
        let copy = copy_of("Update", listing, &feed.entries).map(|e| e.url.as_str());
        assert_eq!(copy, Some("http://b.org/update/"));
        let another = "A different post that happens to share the title, about the shed.";
        assert_eq!(copy_of("Update", another, &feed.entries), None);
    }

    #[test]
    fn the_canonical_link_resolved() {
        let base = Url::parse("http://b.org/page/2/").unwrap();
        let page = Page::parse(
            "<html><head><link rel=stylesheet href=/s.css><link rel='Canonical' href='../../'></head><body></body></html>",
        );
        assert_eq!(
            canonical_link(&page, &base).unwrap().as_str(),
            "http://b.org/"
        );
        assert_eq!(canonical_link(&Page::parse("<p>x</p>"), &base), None);
    }

    #[test]
    fn the_posts_comment_feed_not_the_sites() {
        let post = Url::parse("http://b.org/2019/02/23/a/").unwrap();
        let wp = Page::parse(
            r#"<html><head>
            <link rel="alternate" type="application/rss+xml" title="B &raquo; Feed" href="/feed/">
            <link rel="alternate" type="application/rss+xml" title="B &raquo; Comments Feed" href="/comments/feed/">
            <link rel="alternate" type="application/rss+xml" title="B &raquo; A Comments Feed" href="/2019/02/23/a/feed/">
            </head><body></body></html>"#,
        );
        assert_eq!(
            comment_feed(&wp, &post).as_deref(),
            Some("http://b.org/2019/02/23/a/feed/")
        );
        let site_only = Page::parse(
            r#"<html><head><link rel="alternate" type="application/rss+xml" title="B &raquo; Comments Feed" href="/comments/feed/"></head></html>"#,
        );
        assert_eq!(comment_feed(&site_only, &post), None);
    }

    #[test]
    fn pagination_by_rel_text_and_number() {
        let base = Url::parse("http://b.org/").unwrap();
        let rel = Page::parse(
            r#"<html><body><a class="extend next" rel="next" href="/page/2/">Next »</a></body></html>"#,
        );
        assert_eq!(
            next_page(&rel, &base).unwrap().as_str(),
            "http://b.org/page/2/"
        );
        let text = Page::parse(
            r#"<html><body><a href="/page/3/">3</a><a class="next page-numbers" href="/page/2/">Older posts</a></body></html>"#,
        );
        assert_eq!(
            next_page(&text, &base).unwrap().as_str(),
            "http://b.org/page/2/"
        );
        let p2 = Url::parse("http://b.org/index2.html").unwrap();
        let num = Page::parse(
            r#"<html><body><a href="index.html">1</a><a href="index3.html">3</a></body></html>"#,
        );
        assert_eq!(
            next_page(&num, &p2).unwrap().as_str(),
            "http://b.org/index3.html"
        );
        let last = Page::parse(r#"<html><body><a href="/page/2/">2</a></body></html>"#);
        let p3 = Url::parse("http://b.org/page/3/").unwrap();
        assert_eq!(next_page(&last, &p3), None);
        assert_eq!(
            page_number(&Url::parse("http://b.org/feed/?paged=4").unwrap()),
            Some(4)
        );
    }

    #[test]
    fn declared_counts_closed_comments_and_comment_feeds() {
        let p = Page::parse(
            r#"<html><head><link rel="alternate" type="application/rss+xml" title="Notes &raquo; A post Comments Feed" href="/2020/01/a-post/feed/"></head><body><article><p>3 comments were made in 1920.</p></article><h2 class="comments-title">3 thoughts on &ldquo;A post&rdquo;</h2><p class="no-comments">Comments are closed.</p></body></html>"#,
        );
        let article = p
            .elements
            .iter()
            .position(|e| e.name == "article")
            .map(|i| i as u32);
        assert_eq!(declared_comments(&p, article), Some(3));
        assert!(comments_closed(&p));
        let base = Url::parse("http://b.org/2020/01/a-post/").unwrap();
        assert_eq!(
            comment_feed(&p, &base).as_deref(),
            Some("http://b.org/2020/01/a-post/feed/")
        );
        let none = Page::parse("<html><body><p>No comments yet</p></body></html>");
        assert_eq!(declared_comments(&none, None), None);
        assert!(!comments_closed(&none));
    }
}
