//! What a page says about the blog around it: the next page of a listing (pagination, for
//! walking back to older posts), the comment count a post page declares, whether its comments
//! are closed, and the comment feed it names. And how many posts are still unseen, estimated
//! from how often the seen ones were found (capture–recapture). And whether a page is a listing
//! at all rather than a post ([`is_listing`], issue 13).

use super::blocks::{
    heading_link, items_of, listed_headings, own_text_after, site_parts, title_heading, Figures,
    MIN_BLOCK,
};
use super::page::Page;
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

/// Whether the page lists posts rather than being one, judged from the page alone: the
/// generic heuristic for pages without a blog's own evidence (`archive extract` without
/// `--blog`; a blog learned before `core::identify`'s marks). A page that declares itself a
/// post (JSON-LD `Article`/`BlogPosting`…, `og:type=article`) is none. Otherwise a listing shows
/// posts by linked titles (headings linking to other pages, outside the site's boilerplate:
/// navigation, asides, footers, related-posts and widget blocks) and has no article of its own:
/// no heading naming the page (its `<title>` or `og:title`) followed by text of its own, outside
/// the listed items and links, and no article the generic extractor finds outside them. So a
/// post with a related-posts block, a "More posts" loop, a table of contents, "Read more"
/// links or `og:type=website` is still a post. Nor is a heading linking to the page itself
/// (`base`, its address: a review's title linking to the review) or, for a page on the web, to
/// another site (a goodbye note's heading linking to a video) a listed post.
pub fn is_listing(page: &Page, base: &Url) -> bool {
    if super::head::declares_post(page) {
        return false;
    }
    let figures = Figures::of(page);
    let parts = site_parts(page);
    let mut headings = listed_headings(page, &parts);
    // The heading naming the page, linked or not (a post's title links to the post itself on
    // many themes), is no listed post.
    let title = title_heading(page, &parts);
    headings.retain(|&h| Some(h) != title && lists_on_site(page, h, base));
    if headings.len() < LISTED_TITLES {
        return false;
    }
    let items = items_of(page, &headings, title);
    if let Some(h) = title {
        if own_text_after(page, &figures, h, &items) >= MIN_BLOCK {
            return false;
        }
    }
    // No heading names the page: an article of its own outside the listed items still makes
    // it a post (a news page with a "more stories" list, its headline styled apart).
    let Some(a) = super::fallback::article_with(page, &figures) else {
        return true;
    };
    let mut skip = a.skip.clone();
    skip.extend(items.iter().filter(|&&m| page.contains(a.root, m)));
    skip.sort_unstable();
    skip.dedup();
    let own = page.text_excluding(a.root, &skip).chars().count();
    let inside = items.iter().any(|&m| page.contains(m, a.root));
    inside || own < OWN_ARTICLE
}

/// Whether a listed heading's link leads to another page of the page's own site: not to the
/// page itself (fragment and trailing slash aside), nor, for a page on the web, to another
/// host.
fn lists_on_site(page: &Page, heading: super::page::ElementIdx, base: &Url) -> bool {
    let Some(target) = heading_link(page, heading)
        .and_then(|a| page.attr(a, "href"))
        .and_then(|h| base.join(h.trim()).ok())
    else {
        return true;
    };
    let bare = |u: &Url| {
        let mut u = u.clone();
        u.set_fragment(None);
        u.as_str().trim_end_matches('/').to_string()
    };
    if bare(&target) == bare(base) {
        return false;
    }
    let web = matches!(base.scheme(), "http" | "https");
    !web || target.host_str() == base.host_str()
}

/// Linked titles that make a page a listing ([`is_listing`]) when it has no article of its own.
pub const LISTED_TITLES: usize = 1;

/// Chars of text an article of its own needs, outside listed items, to make a page with listed
/// titles and no heading naming it a post ([`is_listing`]).
const OWN_ARTICLE: usize = 200;

#[cfg(test)]
mod tests {
    use super::*;

    use crate::core::TEST_PROSE as PROSE;

    fn card(n: u32, tag: &str) -> String {
        format!(
            "<article class='post-card'><{tag} class=card-title><a href=/p{n}/>Post number {n}</a></{tag}>\
             <p class=excerpt>{PROSE}</p><a class=read-more href=/p{n}/>Read more</a></article>"
        )
    }

    /// The address the test pages are served from.
    fn base() -> Url {
        Url::parse("https://allotment.example/2024/a-page/").unwrap()
    }

    fn page(title: &str, body: &str) -> Page {
        Page::parse(&format!(
            "<html><head><title>{title}</title><meta property='og:type' content='website'></head>\
             <body><header class=site-header><h1><a href=/>The Allotment</a></h1></header>{body}</body></html>"
        ))
    }

    #[test]
    fn posts_with_the_mess_of_real_themes_are_no_listings() {
        let cards: String = (1..=3).map(|n| card(n, "h3")).collect();
        // A short post above a "Read more" section of post cards, og:type=website.
        let short = page(
            "A short note | The Allotment",
            &format!("<main><article><h1>A short note</h1><p>Eight words about the frost this morning, briefly.</p></article>\
             <section><h2>Read more</h2>{cards}</section></main>"),
        );
        assert!(!is_listing(&short, &base()));
        // A table of contents and a related-posts block inside the article.
        let toc = page(
            "A long read",
            &format!("<article><h1>A long read</h1><nav class=toc><ul><li><a href='#one'>Part one of it</a></li>\
             <li><a href='#two'>Part two of it</a></li></ul></nav><h2 id=one>Part one of it</h2><p>{PROSE}</p>\
             <h2 id=two>Part two of it</h2><p>{PROSE}</p><div id=jp-relatedposts class=jp-relatedposts>\
             <h4><a href=/p1/>Post number one</a></h4><h4><a href=/p2/>Post number two</a></h4>\
             <h4><a href=/p3/>Post number three</a></h4></div><p><a href=/about/>Read more about me</a></p></article>"),
        );
        assert!(!is_listing(&toc, &base()));
        // A headline styled apart from the title, and a "more stories" list: its own article.
        let news = page(
            "Council approves the new bridge - Daily",
            &format!("<div class=headline>Council approves the new bridge</div><div class=story><p>{PROSE}</p>\
             <p>{PROSE}</p><p>{PROSE}</p></div><div class=stories>{cards}</div>"),
        );
        assert!(!is_listing(&news, &base()));
    }

    #[test]
    fn listings_of_cards_excerpts_and_whole_posts_are_listings() {
        let cards: String = (1..=3).map(|n| card(n, "h2")).collect();
        assert!(is_listing(
            &page("The Allotment", &format!("<main>{cards}</main>")),
            &base()
        ));
        // A tag page with one post, its heading naming the tag.
        let one = page(
            "Tag: bees | The Allotment",
            &format!("<main><h1>Tag: bees</h1>{}</main>", card(4, "h2")),
        );
        assert!(is_listing(&one, &base()));
        // Whole posts, each under its linked title.
        let whole: String = (1..=2)
            .map(|n| {
                format!("<article><h1><a href=/p{n}/>Post number {n}</a></h1><p>{PROSE}</p><p>{PROSE}</p></article>")
            })
            .collect();
        assert!(is_listing(&page("The Allotment", &whole), &base()));
        // A post declaring itself one is none, whatever it shows.
        let declared = Page::parse(&format!(
            "<html><head><script type='application/ld+json'>{{\"@type\":\"BlogPosting\"}}</script></head><body>{cards}</body></html>"
        ));
        assert!(!is_listing(&declared, &base()));
    }

    #[test]
    fn a_heading_linking_to_the_page_itself_or_another_site_lists_nothing() {
        // A review's title links to the review; a goodbye note's heading to a video. The
        // same pages with the heading linking to another page of the site list a post.
        let note = |href: &str| {
            page(
                "Home",
                &format!(
                    "<main><h2><a href='{href}'>Time to say goodbye now</a></h2><p>{PROSE}</p>\
                 <p>{PROSE}</p></main>"
                ),
            )
        };
        assert!(!is_listing(&note("/2024/a-page/#top"), &base()));
        assert!(!is_listing(
            &note("https://video.example/watch?v=1"),
            &base()
        ));
        assert!(is_listing(&note("/2024/another-page/"), &base()));
    }

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
