//! What a post's archived page adds to its WXR item, read at export time from the page the
//! archive holds (so archives made before this was written export it too): which of its
//! terms are categories and which are tags, with the slugs WordPress built their pages from
//! (`/category/<slug>/`, `/tag/<slug>/`); the slugs of its authors' pages
//! (`/author/<nicename>/`, WordPress's login for most sites); whether its comments are
//! closed. And how WordPress stores the text it shows typographically (`wptexturize`).

use crate::core::page::Page;
use crate::core::taxonomy::{author_links, author_slug, term_links, TermKind};
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
    /// (name shown, slug) of each author page the page links.
    pub authors: Vec<(String, String)>,
    /// The page says its comments are closed.
    pub comments_closed: bool,
    /// The post's featured image as the page shows it: (`src` as written, `alt`).
    pub featured: Option<(String, String)>,
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
                let page = Page::parse(&crate::fetch::decode(&stored.response));
                out.insert(url, facts_of_page(&page));
            }
        }
    }
    Ok(out)
}

/// The facts of one post page.
pub(super) fn facts_of_page(page: &Page) -> PageFacts {
    let mut facts = PageFacts {
        comments_closed: crate::core::listing::comments_closed(page),
        featured: crate::core::taxonomy::featured_image(page),
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
    for (name, href) in author_links(page) {
        if let Some(s) = author_slug(&href) {
            if !facts.authors.iter().any(|(n, _)| *n == name) {
                facts.authors.push((name, s));
            }
        }
    }
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
}
