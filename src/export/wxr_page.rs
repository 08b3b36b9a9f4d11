//! What a post's archived page adds to its WXR item, read at export time from the page the
//! archive holds (so archives made before this was written export it too): which of its
//! terms are categories and which are tags, with the slugs WordPress built their pages from
//! (`/category/<slug>/`, `/tag/<slug>/`); the slugs of its authors' pages
//! (`/author/<nicename>/`, WordPress's login for most sites); whether its comments are
//! closed. And how WordPress stores the text it shows typographically (`wptexturize`).

use crate::core::page::Page;
use crate::core::taxonomy::{
    author_links, author_slug, registered_commenters, term_links, wordpress_post_id, TermKind,
};
use crate::store::{BlogId, Store};
use anyhow::Result;
use std::collections::HashMap;
use unicode_normalization::UnicodeNormalization;

/// A category or tag as WXR declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Term {
    /// Shown name.
    pub name: String,
    /// WordPress's slug (`nicename`): from the term's page when the page links one, else
    /// made from the name.
    pub slug: String,
    /// The parent category's slug, for a hierarchical category page.
    pub parent: Option<String>,
}

/// What one post page says, beyond the post record.
#[derive(Debug, Clone, Default)]
pub(super) struct PageFacts {
    /// Categories, in page order, each once.
    pub categories: Vec<Term>,
    /// Tags, in page order, each once.
    pub tags: Vec<Term>,
    /// (name shown, slug) of each author page the page links, then of each of the blog's
    /// users who commented ([`registered_commenters`]).
    pub authors: Vec<(String, String)>,
    /// The page says its comments are closed.
    pub comments_closed: bool,
    /// The post's featured image as the page shows it: (`src` as written, `alt`).
    pub featured: Option<(String, String)>,
    /// The page's `<title>` as its HTML source writes it, character references undecoded:
    /// which typographic characters WordPress made (`&#8212;`) and which were typed (`—`)
    /// ([`stored_text`]).
    pub raw_title: Option<String>,
    /// The ID WordPress gave the post, where the page shows it
    /// ([`wordpress_post_id`]).
    pub post_id: Option<u64>,
}

impl PageFacts {
    /// Adds (name shown, slug) pairs to `authors`, each name once (the first slug kept).
    fn add_authors(&mut self, found: impl IntoIterator<Item = (String, String)>) {
        for (name, slug) in found {
            if !self.authors.iter().any(|(n, _)| *n == name) {
                self.authors.push((name, slug));
            }
        }
    }
}

/// The facts of each post of a blog (permalink → facts), gone posts included, for the posts
/// whose page the archive holds (its latest 2xx answer). One page in memory at a time.
///
/// # Errors
/// The database failed.
pub(super) fn facts_of_blog(store: &Store, blog: BlogId) -> Result<HashMap<String, PageFacts>> {
    let mut out = HashMap::new();
    for url in store.every_post_url(blog)? {
        if let Some(stored) = store.latest_page(blog, &url)? {
            if crate::fetch::is_html(&stored.response) {
                let html = crate::fetch::decode(&stored.response);
                let mut facts = facts_of_page(&Page::parse(&html));
                facts.raw_title = raw_title(&html).map(str::to_string);
                out.insert(url, facts);
            }
        }
    }
    Ok(out)
}

/// Adds to `facts` (from [`facts_of_blog`]) the blog's users who commented on a post's other
/// pages, its comment pages (`…/slug/comment-page-2/`: each captured HTML page whose address
/// extends the post's permalink by a path), as its own page's ([`registered_commenters`]).
/// Paged comments leave most of a WordPress post's comments off its page (issue 45). One
/// page in memory at a time.
///
/// # Errors
/// The database failed.
pub(super) fn add_commenters_below_posts(
    store: &Store,
    blog: BlogId,
    facts: &mut HashMap<String, PageFacts>,
) -> Result<()> {
    let mut posts: Vec<String> = facts.keys().cloned().collect();
    posts.sort();
    let mut offset = 0u32;
    loop {
        let batch = store.captured_pages(blog, 1000, offset)?.pages;
        if batch.is_empty() {
            return Ok(());
        }
        offset += batch.len() as u32;
        for captured in batch {
            let url = captured.url;
            // The post whose permalink the address extends: the last one sorted before it.
            let Some(post) = posts[..posts.partition_point(|p| *p < url)].last() else {
                continue;
            };
            let below = url.strip_prefix(post.as_str()).is_some_and(|rest| {
                !rest.is_empty() && (post.ends_with('/') || rest.starts_with('/'))
            });
            if !below {
                continue;
            }
            let Some(stored) = store.latest_page(blog, &url)? else {
                continue;
            };
            if !crate::fetch::is_html(&stored.response) {
                continue;
            }
            let page = Page::parse(&crate::fetch::decode(&stored.response));
            if let Some(f) = facts.get_mut(post) {
                f.add_authors(registered_commenters(&page));
            }
        }
    }
}

/// The facts of one post page.
pub(super) fn facts_of_page(page: &Page) -> PageFacts {
    let mut facts = PageFacts {
        comments_closed: crate::core::listing::comments_closed(page),
        featured: crate::core::taxonomy::featured_image(page),
        post_id: wordpress_post_id(page),
        ..PageFacts::default()
    };
    for link in term_links(page) {
        if link.name.is_empty() {
            continue;
        }
        let list = match link.kind {
            TermKind::Category => &mut facts.categories,
            TermKind::Tag => &mut facts.tags,
        };
        if list
            .iter()
            .any(|t| t.name.to_lowercase() == link.name.to_lowercase())
        {
            continue;
        }
        list.push(Term {
            slug: link.slug().unwrap_or_else(|| slug(&link.name, "term")),
            parent: link.parent_slug(),
            name: link.name,
        });
    }
    let linked = author_links(page)
        .into_iter()
        .filter_map(|(name, href)| Some((name, author_slug(&href)?)));
    facts.add_authors(linked.chain(registered_commenters(page)));
    facts
}

/// A WordPress-style slug of a name, as `sanitize_title` and `sanitize_user` make one: accents
/// taken off (`Zoë` → `zoe`), lower case, ASCII letters and digits, other runs as `-`;
/// `fallback` when nothing is left.
pub(super) fn slug(name: &str, fallback: &str) -> String {
    let plain: String = name
        .nfkd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .collect();
    let s = super::feeds::dashed(&plain.to_lowercase(), |c| c.is_ascii_alphanumeric());
    if s.is_empty() {
        fallback.into()
    } else {
        s
    }
}

/// The source of a page's first `<title>` element, as written (at most 4 KiB).
fn raw_title(html: &str) -> Option<&str> {
    let lower = html.get(..html.len().min(256 * 1024))?.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    (end - start <= 4096).then(|| &html[start..end])
}

/// `shown`, text a page shows, as WordPress stores it, read from `source`, the HTML that
/// shows it (the page's `<title>`). WordPress writes the typographic characters that
/// `wptexturize` makes as character references (`&#8212;`, `&#8217;`), while characters the
/// author typed stay as they were (`—`): the first are stored as typed ([`untexturized`]),
/// the others kept. So a title typed `Why I rode — again` is stored so, and one typed `Why I
/// rode -- again` as that, though both show `—`; the importer's duplicate check compares
/// titles with what the database holds. [`untexturized`] alone when `source` does not
/// show `shown`.
pub(super) fn stored_text(shown: &str, source: Option<&str>) -> String {
    match source.and_then(|s| typed_form(shown, s)) {
        Some(s) => s,
        None => untexturized(shown),
    }
}

/// The characters of `source` read as text: (character, written as a character reference),
/// whitespace runs as one space.
fn source_chars(source: &str) -> Vec<(char, bool)> {
    let mut out: Vec<(char, bool)> = Vec::new();
    let mut rest = source;
    while let Some(c) = rest.chars().next() {
        let (ch, len, referenced) = match c {
            '&' => match char_reference(rest) {
                Some((ch, len)) => (ch, len, true),
                None => ('&', 1, false),
            },
            c => (c, c.len_utf8(), false),
        };
        rest = &rest[len..];
        if ch.is_whitespace() {
            if out.last().is_some_and(|(l, _)| *l != ' ') {
                out.push((' ', false));
            }
        } else {
            out.push((ch, referenced));
        }
    }
    out
}

/// The character reference at the start of `s` (`&#8212;`, `&#x2014;`, `&mdash;`, …) and
/// its length in bytes.
fn char_reference(s: &str) -> Option<(char, usize)> {
    let end = s.bytes().take(12).position(|b| b == b';')?;
    let name = &s[1..end];
    let ch = if let Some(hex) = name.strip_prefix("#x").or_else(|| name.strip_prefix("#X")) {
        char::from_u32(u32::from_str_radix(hex, 16).ok()?)?
    } else if let Some(dec) = name.strip_prefix('#') {
        char::from_u32(dec.parse().ok()?)?
    } else {
        let decoded = crate::core::feed::html_to_text(&s[..=end]);
        let mut chars = decoded.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c != '&' => c,
            _ => return None,
        }
    };
    Some((ch, end + 1))
}

/// `shown` as stored, when `source` shows it: see [`stored_text`].
fn typed_form(shown: &str, source: &str) -> Option<String> {
    let wanted: Vec<char> = shown
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .collect();
    let have = source_chars(source);
    if wanted.is_empty() || have.len() < wanted.len() {
        return None;
    }
    let at = (0..=have.len() - wanted.len()).find(|&i| {
        have[i..i + wanted.len()]
            .iter()
            .map(|(c, _)| *c)
            .eq(wanted.iter().copied())
    })?;
    // Typed typographic characters stand aside (as private-use placeholders) while the rest
    // is stored as typed, then come back.
    const PLACEHOLDER: u32 = 0xF0000;
    let mut typed = Vec::new();
    let marked: String = have[at..at + wanted.len()]
        .iter()
        .map(|&(c, referenced)| {
            if !referenced && c != untexturized(&c.to_string()).chars().next().unwrap_or(c) {
                typed.push(c);
                char::from_u32(PLACEHOLDER + typed.len() as u32 - 1).unwrap_or(c)
            } else {
                c
            }
        })
        .collect();
    Some(
        untexturized(&marked)
            .chars()
            .map(|c| match (c as u32).checked_sub(PLACEHOLDER) {
                Some(i) if (i as usize) < typed.len() => typed[i as usize],
                _ => c,
            })
            .collect(),
    )
}

/// Text as WordPress stores what it shows through `wptexturize`: curly quotes and
/// apostrophes straight, `…` as `...`, dashes as the hyphens they were typed as (` – ` ←
/// ` - `, ` — ` ← ` -- `, `—` ← `---`, `–` ← `--`). WordPress curls them again on display, so
/// the restored site shows the same text; and the importer's duplicate checks compare
/// titles and commenter names with what the database holds.
pub(super) fn untexturized(s: &str) -> String {
    s.replace(['\u{2019}', '\u{2018}', '\u{2032}'], "'")
        .replace(['\u{201C}', '\u{201D}', '\u{2033}'], "\"")
        .replace('\u{2026}', "...")
        .replace(" \u{2014} ", " -- ")
        .replace(" \u{2013} ", " - ")
        .replace('\u{2014}', "---")
        .replace('\u{2013}', "--")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wordpress_stores_typed_text() {
        assert_eq!(
            untexturized("Don’t miss the “night train” – or the 8:15… — ok"),
            "Don't miss the \"night train\" - or the 8:15... -- ok"
        );
        assert_eq!(slug("Inês Zoë", "author"), "ines-zoe");
        // Typed characters stay; those WordPress made (character references) are stored as
        // typed.
        let source = "Why I rode &#8212; again, don&#8217;t — ask &#8211; Spokes";
        assert_eq!(
            stored_text("Why I rode — again, don’t — ask", Some(source)),
            "Why I rode -- again, don't — ask"
        );
        assert_eq!(
            stored_text("Café — again", Some("Caf&eacute;  — again &amp; more")),
            "Café — again"
        );
        assert_eq!(stored_text("Not — here", Some(source)), "Not -- here");
        assert_eq!(stored_text("a — b", None), "a -- b");
        assert_eq!(slug("日本", "author"), "author");
    }

    #[test]
    fn facts_of_a_wordpress_post_page() {
        let page = Page::parse(
            r#"<article><span class="byline"><a href="/author/ines/" rel="author">Inês</a></span>
            <footer><a href="/category/journeys/" rel="category tag">Journeys</a>
            <a href="/tag/alps/" rel="tag">alps</a><a href="/tag/alps/" rel="tag">alps</a></footer></article>
            <p class="no-comments">Comments are closed.</p>"#,
        );
        let f = facts_of_page(&page);
        assert_eq!(f.categories.len(), 1);
        assert_eq!(f.categories[0].slug, "journeys");
        assert_eq!(f.tags.len(), 1, "each term once");
        assert_eq!(f.authors, [("Inês".to_string(), "ines".to_string())]);
        assert!(f.comments_closed);
    }

    #[test]
    fn the_blogs_users_who_commented_give_their_logins() {
        // A block theme's comment by one of the blog's users, with a reply by another
        // inside it and a visitor's comment that names no user.
        let page = Page::parse(
            r#"<ol><li id="comment-7" class="comment byuser comment-author-dariusz bypostauthor">
            <div class="wp-block-avatar"><img alt="Dariusz Wójcik Avatar" src="a.png"></div>
            <div class="wp-block-comment-author-name">Dariusz Wójcik</div><p>Thanks, Keisha Bell</p>
            <ol class="children"><li class="comment byuser comment-author-keisha">
            <div class="wp-block-comment-author-name"> Keisha  Bell </div><p>Yes</p></li></ol></li>
            <li class="comment comment-author-name"><div>Visitor</div></li></ol>"#,
        );
        assert_eq!(
            facts_of_page(&page).authors,
            [
                ("Dariusz Wójcik".to_string(), "dariusz".to_string()),
                ("Keisha Bell".to_string(), "keisha".to_string())
            ]
        );
    }
}
