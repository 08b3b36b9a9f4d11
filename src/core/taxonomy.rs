//! What a post page says of its terms, authors and featured image as links: each category or tag link with
//! its kind and its archive page (WordPress's `rel="category tag"` and `rel="tag"`,
//! `/category/…/` and `/tag/…/`), and each author's page (`/author/jo/`). The reader lists
//! names; the WordPress export (WXR) needs the kind and the slug, which only these links
//! give: WordPress builds `/category/<slug>/`, `/tag/<slug>/` and `/author/<nicename>/` from
//! them.

use super::head::select;
use super::page::Page;

super::vocabulary! {
    /// Which taxonomy a term belongs to.
    pub enum TermKind {
        /// A category: `rel="category"` (WordPress: `rel="category tag"`) or a link under a
        /// `category`/`categories` path segment. Hierarchical in WordPress.
        Category = "category",
        /// A tag: any other term link (`rel="tag"`, `/tag/…/`, `/topics/…/`, …).
        Tag = "tag",
    }
}

/// One category or tag link of a post page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermLink {
    /// The name the link shows (whitespace collapsed, a leading `#` dropped).
    pub name: String,
    /// Category or tag.
    pub kind: TermKind,
    /// The link's `href` as written (absolute or relative).
    pub href: String,
}

impl TermLink {
    /// The term's slug: the last path segment of its page (`/category/journeys/` →
    /// `journeys`, `/category/misc.html` → `misc`), as the URL writes it (percent-encoded),
    /// lower case. `None` when the link
    /// has no path segment.
    pub fn slug(&self) -> Option<String> {
        segments(&self.href).last().map(|s| page_name(s))
    }

    /// The parent category's slug of a hierarchical category page
    /// (`/category/europe/alps/` → `europe`); `None` for tags and top-level categories.
    pub fn parent_slug(&self) -> Option<String> {
        if self.kind != TermKind::Category {
            return None;
        }
        let segs = segments(&self.href);
        let base = segs
            .iter()
            .rposition(|s| matches!(s.to_ascii_lowercase().as_str(), "category" | "categories"))?;
        (segs.len() >= base + 3).then(|| page_name(segs[segs.len() - 2]))
    }
}

/// Path segments that name a taxonomy page.
const TAXONOMY: [&str; 7] = [
    "tag",
    "tags",
    "category",
    "categories",
    "topics",
    "label",
    "labels",
];

/// Classes and ids of page chrome whose term links are the site's, not the post's.
const CHROME: [&str; 5] = ["menu", "sidebar", "widget", "cloud", "navbar"];

/// Path segments that name an author's page on blog engines (`/author/jo/`, `/contributors/jo/`).
pub(super) const AUTHOR_PAGES: &[&str] = &[
    "author",
    "authors",
    "contributor",
    "contributors",
    "people",
    "writers",
    "profile",
    "staff",
];

/// The non-empty path segments of an `href` (query and fragment left out).
fn segments(href: &str) -> Vec<&str> {
    let path = href.split(['?', '#']).next().unwrap_or_default();
    let path = path.split_once("://").map_or(path, |(_, rest)| {
        rest.split_once('/').map_or("", |(_, p)| p)
    });
    path.split('/').filter(|s| !s.is_empty()).collect()
}

/// The category and tag links of a post page, in page order: links marked `rel="tag"` or
/// `rel="category"`, and links to a taxonomy page (a path segment `tag`, `tags`,
/// `category`, `categories`, `topics`, `label`, `labels` before the last) outside navigation
/// (`nav`, `aside`, a site `header` outside `article`/`main`, menus, sidebars, widgets, tag
/// clouds). Every link is given, repeats included; names may be empty.
pub fn term_links(page: &Page) -> Vec<TermLink> {
    let mut out = Vec::new();
    for a in select(page, "a[href]") {
        let rel: Vec<&str> = a
            .value()
            .attr("rel")
            .map(|r| r.split_ascii_whitespace().collect())
            .unwrap_or_default();
        let href = a.value().attr("href").unwrap_or_default();
        let segs = segments(href);
        let under = |words: &[&str]| {
            segs.iter()
                .rev()
                .skip(1)
                .any(|s| words.contains(&s.to_ascii_lowercase().as_str()))
        };
        let rel_term = rel.iter().any(|w| matches!(*w, "tag" | "category"));
        if !rel_term && !under(&TAXONOMY) {
            continue;
        }
        let ancestors: Vec<_> = a
            .ancestors()
            .filter_map(scraper::ElementRef::wrap)
            .collect();
        let in_article = |i: usize| {
            ancestors[i + 1..]
                .iter()
                .any(|e| matches!(e.value().name(), "article" | "main"))
        };
        let in_chrome = ancestors.iter().enumerate().any(|(i, e)| {
            let v = e.value();
            matches!(v.name(), "nav" | "aside")
                || (v.name() == "header" && !in_article(i))
                || [v.attr("class"), v.attr("id")]
                    .into_iter()
                    .flatten()
                    .any(|c| {
                        let c = c.to_ascii_lowercase();
                        CHROME.iter().any(|w| c.contains(w))
                    })
        });
        if in_chrome {
            continue;
        }
        let kind = if rel.contains(&"category") || under(&["category", "categories"]) {
            TermKind::Category
        } else {
            TermKind::Tag
        };
        let name = super::text::collapse_whitespace(
            a.text().collect::<String>().trim().trim_start_matches('#'),
        );
        out.push(TermLink {
            name,
            kind,
            href: href.to_string(),
        });
    }
    out
}

/// Whether `href` (absolute or relative) is an author's page: a path below one of
/// [`AUTHOR_PAGES`] (`/author/zoe/`, `/blog/authors/lena`).
pub(super) fn is_author_page(href: &str) -> bool {
    let segs = segments(href);
    segs.len() >= 2
        && segs[..segs.len() - 1]
            .iter()
            .any(|s| AUTHOR_PAGES.contains(&s.to_ascii_lowercase().as_str()))
}

/// The links to author pages ([`AUTHOR_PAGES`], or `rel="author"`) a page shows, as (name
/// shown, `href`), in page order, repeats included; short names only (≤ 60 characters).
pub fn author_links(page: &Page) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for a in select(page, "a[href]") {
        let href = a.value().attr("href").unwrap_or_default();
        // A web address (absolute or relative), not `mailto:` or another scheme.
        let scheme = href.split(['/', '?', '#']).next().unwrap_or("");
        if scheme.contains(':') && !matches!(scheme, "http:" | "https:") {
            continue;
        }
        let author_page = is_author_page(href);
        let rel_author = a
            .value()
            .attr("rel")
            .is_some_and(|r| r.split_ascii_whitespace().any(|w| w == "author"));
        if !author_page && !rel_author {
            continue;
        }
        let name = super::text::collapse_whitespace(&a.text().collect::<String>());
        if !name.is_empty() && name.chars().count() <= 60 {
            out.push((name, href.to_string()));
        }
    }
    out
}

/// The ID WordPress gave the post or page a page shows, as `body_class()` writes it
/// (`postid-49` on a post, `page-id-7` on a page). `None` on other pages.
pub fn wordpress_post_id(page: &Page) -> Option<u64> {
    let body = *select(page, "body").first()?;
    let id = body.value().classes().find_map(|c| {
        c.strip_prefix("postid-")
            .or_else(|| c.strip_prefix("page-id-"))
            .and_then(|n| n.parse::<u64>().ok())
    });
    id.filter(|n| *n > 0)
}

/// The blog's own users who commented on a page, as WordPress marks their comments
/// (`comment_class()`: `byuser` and `comment-author-<user_nicename>` on the comment's
/// element): (name shown, nicename), in page order, each nicename once. The name is the
/// comment's first text, where every comment template puts its author (≤ 60 characters).
/// WordPress's login for most sites, where the theme links no author page (issue 45).
pub fn registered_commenters(page: &Page) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for el in select(page, ".byuser") {
        let Some(nicename) = el
            .value()
            .classes()
            .find_map(|c| c.strip_prefix("comment-author-"))
            .filter(|n| !n.is_empty())
        else {
            continue;
        };
        let name = el
            .text()
            .map(super::text::collapse_whitespace)
            .find(|t| !t.is_empty());
        if let Some(name) = name.filter(|n| n.chars().count() <= 60) {
            if !out.iter().any(|(_, n)| n == nicename) {
                out.push((name, nicename.to_string()));
            }
        }
    }
    out
}

/// The slug an author page gives its author: the last path segment (`/author/zoe/` →
/// `zoe`, `/author/zoe.html` → `zoe`), lower case, as the URL writes it. `None` without a
/// path segment.
pub fn author_slug(href: &str) -> Option<String> {
    segments(href).last().map(|s| page_name(s))
}

/// A path segment as a slug: lower case, without a page extension in any case (Pelican's
/// `/category/misc.html` → `misc`, `Post.HTML` → `post`). The WXR export names posts
/// with it too, so terms, authors and posts follow one rule.
pub fn page_name(segment: &str) -> String {
    let lower = segment.to_lowercase();
    [".html", ".htm", ".php"]
        .iter()
        .find_map(|ext| lower.strip_suffix(ext))
        .map_or(lower.clone(), str::to_string)
}

/// The post's featured image: WordPress marks it `wp-post-image` (`the_post_thumbnail`); the
/// first one outside navigation, asides and footers, which hold other posts' thumbnails.
pub fn featured_image(page: &Page) -> Option<(String, String)> {
    select(page, "img.wp-post-image[src]")
        .into_iter()
        .find(|img| {
            !img.ancestors()
                .filter_map(scraper::ElementRef::wrap)
                .any(|e| matches!(e.value().name(), "nav" | "aside" | "footer"))
        })
        .map(|img| {
            let v = img.value();
            (
                v.attr("src").unwrap_or_default().to_string(),
                v.attr("alt").unwrap_or_default().to_string(),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wordpress_post_ids_from_the_body_class() {
        let id = |html: &str| wordpress_post_id(&Page::parse(html));
        assert_eq!(
            id(r#"<body class="single single-post postid-49 x"></body>"#),
            Some(49)
        );
        assert_eq!(
            id(r#"<body class="page-template page page-id-7"></body>"#),
            Some(7)
        );
        assert_eq!(id(r#"<body class="home blog"></body>"#), None);
        assert_eq!(id(r#"<body class="postid-abc"></body>"#), None);
    }

    #[test]
    fn categories_tags_and_authors_from_a_wordpress_footer() {
        let page = Page::parse(
            r#"<html><body><nav><a href="/category/journeys/">Journeys</a></nav>
            <article><header><h1>A post</h1>
            <span class="byline">By <a href="http://b.example/author/zoe/" rel="author">Zoë C.</a></span></header>
            <p>Text</p>
            <footer class="entry-footer"><span class="cat-links">Categorized as
              <a href="http://b.example/category/europe/alps/" rel="category tag">Alps</a></span>
              <span class="tags-links">Tagged <a href="http://b.example/tag/night-trains/" rel="tag">night trains</a>,
              <a href="http://b.example/tag/caf%C3%A9/" rel="tag">café</a></span></footer></article>
            <aside class="widget"><a href="/tag/budget/" rel="tag">budget</a></aside></body></html>"#,
        );
        let terms = term_links(&page);
        let got: Vec<(&str, TermKind, Option<String>, Option<String>)> = terms
            .iter()
            .map(|t| (t.name.as_str(), t.kind, t.slug(), t.parent_slug()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "Alps",
                    TermKind::Category,
                    Some("alps".into()),
                    Some("europe".into())
                ),
                (
                    "night trains",
                    TermKind::Tag,
                    Some("night-trains".into()),
                    None
                ),
                ("café", TermKind::Tag, Some("caf%c3%a9".into()), None),
            ]
        );
        let pelican = TermLink {
            name: "Misc".into(),
            kind: TermKind::Category,
            href: "/category/misc.html".into(),
        };
        assert_eq!(pelican.slug().as_deref(), Some("misc"));
        let authors = author_links(&page);
        assert_eq!(authors.len(), 1);
        assert_eq!(author_slug(&authors[0].1).as_deref(), Some("zoe"));
        assert_eq!(authors[0].0, "Zoë C.");
    }
}
