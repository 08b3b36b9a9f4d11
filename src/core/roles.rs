//! What an element is by its tag, attributes and `class`/`id` words, for the generic extractor
//! (`core::fallback`) and the page-alone listing judgement (`core::listing`): hidden or a
//! control, a part of the site around the posts (navigation, sidebars, related posts,
//! comments), a part of a post that is not its text (byline, date, tags), the article itself, or
//! a marked article body.

use super::page::{attr_of, ElementIdx, Page};

/// Tags never shown as text, or shown as controls: never article text, nor anything inside.
const HIDDEN_TAGS: &[&str] = &[
    "button",
    "select",
    "textarea",
    "iframe",
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "input",
    "label",
    "object",
    "embed",
    "figcaption",
    "head",
];

/// Tags of site parts: never article text, nor anything inside.
const SITE_TAGS: &[&str] = &["nav", "aside", "footer", "dialog", "menu"];

/// Tags of site parts that sometimes wrap the whole page (an ASP.NET page's `<form>`): never
/// article text unless they hold most of the page's prose.
const WRAPPING_TAGS: &[&str] = &["form", "header"];

/// `class`/`id` words that name a part of the site around its posts (navigation, sidebars,
/// widgets, related and popular posts, comments, sharing, ratings, ads, sign-up boxes,
/// pagination):
/// never article text, and no post listed on the page (`core::listing`).
pub(super) const SITE_PARTS: &[&str] = &[
    "comment",
    "comments",
    "sidebar",
    "share",
    "sharing",
    "social",
    "related",
    "relatedposts",
    "yarpp",
    "footer",
    "nav",
    "navbar",
    "navigation",
    "menu",
    "breadcrumb",
    "breadcrumbs",
    "widget",
    "advert",
    "ad",
    "ads",
    "advertisement",
    "promo",
    "sponsor",
    "sponsored",
    "subscribe",
    "newsletter",
    "cookie",
    "popup",
    "modal",
    "banner",
    "masthead",
    "pagination",
    "pager",
    "signup",
    "outbrain",
    "taboola",
    "disqus",
    "recommended",
    "recommend",
    "trending",
    "popular",
    "toolbar",
    "login",
    "most-read",
    "more",
    "rss",
    "widgets",
    "rating",
    "ratings",
];

/// `class`/`id` words that name a part of a post that is not its article text: its header,
/// byline, date, tags, captions.
const POST_PARTS: &[&str] = &[
    "tags",
    "tag",
    "byline",
    "dateline",
    "author",
    "meta",
    "caption",
    "credit",
    "copyright",
    "head",
    "header",
    "headline",
    "subline",
    "subtitle",
    "date",
    "timestamp",
    "published",
    "kicker",
    "print",
    "skip",
    "hidden",
];

/// `class`/`id` words that name the article.
const POSITIVE: &[&str] = &[
    "article", "body", "content", "entry", "main", "post", "text", "blog", "story", "prose",
];

/// Classes and `itemprop`s that mark an article body on many sites (trafilatura's list of
/// body selectors, as words).
const BODY_MARKS: &[&str] = &[
    "articlebody",
    "article-body",
    "article__body",
    "article-content",
    "article_content",
    "articlecontent",
    "article-text",
    "articletext",
    "entry-content",
    "entry_content",
    "post-content",
    "post_content",
    "postcontent",
    "post-body",
    "post_body",
    "postbody",
    "post-text",
    "post_text",
    "post-entry",
    "story-body",
    "story_body",
    "storybody",
    "story-content",
    "body-text",
    "article-body-text",
    "c-article-body",
    "td-post-content",
    "main-content",
    "content-body",
    "blog-content",
    "blog-post-content",
    "entry-body",
    "single-content",
    "rich-text",
];

/// What an element's tag and attributes say of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    /// Never content, nor anything inside: navigation, forms, hidden elements.
    Hard,
    /// `class`/`id` names a site part.
    Negative,
    /// `class`/`id` names a part of a post that is not its text (date, byline, header): one
    /// while it holds no more prose than such a part does. Blogger groups a day's posts in
    /// `div.date-outer`.
    PostPart,
    /// Only a BEM modifier names a site part (`TestReport__Section--Ads`): a site part when
    /// its contents are mostly links (`rail--trending`), never when they are prose.
    NegativeVariant,
    /// `class`/`id` names the article.
    Positive,
    /// An `<article>` element.
    Article,
    Neutral,
}

/// What a `class`/`id` word names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The article ([`POSITIVE`]).
    Article,
    /// A part of the site around the posts ([`SITE_PARTS`]).
    Site,
    /// A part of a post that is not its text ([`POST_PARTS`]).
    Post,
}

/// [`POSITIVE`], [`SITE_PARTS`] and [`POST_PARTS`] as one lookup: word → what it names.
fn role_words() -> &'static rustc_hash::FxHashMap<&'static str, Role> {
    static WORDS: std::sync::OnceLock<rustc_hash::FxHashMap<&'static str, Role>> =
        std::sync::OnceLock::new();
    WORDS.get_or_init(|| {
        let site = SITE_PARTS.iter().map(|w| (*w, Role::Site));
        let post = POST_PARTS.iter().map(|w| (*w, Role::Post));
        // A word in both lists names the article.
        site.chain(post)
            .chain(POSITIVE.iter().map(|w| (*w, Role::Article)))
            .collect()
    })
}

/// What an element is by itself: tag, hidden, class/id words.
pub(super) fn classify(page: &Page, idx: ElementIdx) -> Class {
    classify_with(page, idx, SiteTags::Hard)
}

/// How [`classify_with`] reads the tags of site parts (`nav`, `aside`, `footer`…).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SiteTags {
    /// Never content ([`Class::Hard`]).
    Hard,
    /// `<aside>` a site part unless it holds most of the page's prose ([`Class::Negative`]),
    /// the others never content: for a page with no text block outside them (a story marked
    /// up as `<main><aside>`; a footer's copyright line is still no article).
    Soft,
}

/// [`classify`], with the tags of site parts read as `site_tags` says.
pub(super) fn classify_with(page: &Page, idx: ElementIdx, site_tags: SiteTags) -> Class {
    let e = &page.elements[idx as usize];
    if HIDDEN_TAGS.contains(&e.name.as_str()) {
        return Class::Hard;
    }
    if SITE_TAGS.contains(&e.name.as_str()) {
        return match site_tags {
            SiteTags::Soft if e.name == "aside" => Class::Negative,
            _ => Class::Hard,
        };
    }
    if WRAPPING_TAGS.contains(&e.name.as_str()) {
        return Class::Negative;
    }
    let el = page.element_ref(idx);
    let v = el.value();
    if attr_of(v, "hidden").is_some()
        || attr_of(v, "aria-hidden") == Some("true")
        || attr_of(v, "style").is_some_and(hides)
        || attr_of(v, "role").is_some_and(|r| {
            matches!(
                r,
                "navigation" | "complementary" | "contentinfo" | "banner" | "dialog" | "menu"
            )
        })
    {
        return Class::Hard;
    }
    if matches!(e.name.as_str(), "html" | "body" | "main") {
        return Class::Neutral;
    }
    // A compound word names its role last: `article-author` is an author line,
    // `sidebar-content` content. A BEM modifier (`block__element--modifier`) says which
    // variant, not what: `TestReport__Section--Ads` is a section of a test report that has an
    // ad slot, `rail--trending` a rail of trending stories. Its word counts only where the
    // rest names nothing ([`Class::NegativeVariant`]).
    // An `id` made from the section's heading (`div#sharing-with-a-single-developer` around
    // "Sharing with a single developer", as docutils, Sphinx and Markdown engines write them)
    // names its topic, not a role.
    let id = attr_of(v, "id").filter(|id| !slug_of_heading(page, idx, id));
    let (mut pos, mut site, mut post, mut neg_variant) = (false, false, false, false);
    let mut lower = String::new();
    for value in [attr_of(v, "class"), id].into_iter().flatten() {
        for word in value.split_whitespace() {
            lower.clear();
            lower.extend(word.chars().map(|c| c.to_ascii_lowercase()));
            let (element, modifier) = match lower.split_once("--") {
                Some((element, modifier)) if !element.is_empty() => (element, Some(modifier)),
                _ => (lower.as_str(), None),
            };
            let role_of = |w: &str| {
                std::iter::once(w)
                    .chain(w.rsplit(['-', '_']))
                    .find_map(|part| role_words().get(part).copied())
            };
            match (role_of(element), modifier.and_then(role_of)) {
                (Some(Role::Article), _) | (None, Some(Role::Article)) => pos = true,
                (Some(Role::Site), _) => site = true,
                (Some(Role::Post), _) => post = true,
                (None, Some(_)) => neg_variant = true,
                (None, None) => {}
            }
        }
    }
    // An `<article>` is an article unless its words name a site part: a login dialog
    // (`article.registry-message-modal`), a comment (`article.comment`).
    if e.name == "article" {
        return if site && !pos {
            Class::Negative
        } else {
            Class::Article
        };
    }
    match (pos, site, post) {
        (true, false, false) => Class::Positive,
        (false, true, _) => Class::Negative,
        (false, false, true) => Class::PostPart,
        (false, false, false) if neg_variant => Class::NegativeVariant,
        _ => Class::Neutral,
    }
}

/// Whether `id` is the slug of the heading that is or opens the element: its words are the
/// heading's words, lower-cased, in order (a numeric suffix, `-1`, allowed); or, made for a
/// table of contents, its first two words or more after one word of its own
/// (`h3#nav_nur_die_folie__1` for "Nur die Folie bleibt zurück", as heise.de writes them).
fn slug_of_heading(page: &Page, idx: ElementIdx, id: &str) -> bool {
    if !id.contains(['-', '_']) {
        return false;
    }
    let is_heading = |c: ElementIdx| {
        matches!(
            page.elements[c as usize].name.as_str(),
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6"
        )
    };
    let Some(heading) = std::iter::once(idx)
        .filter(|&i| is_heading(i))
        .chain(
            page.elements[idx as usize]
                .children
                .iter()
                .take(3)
                .copied()
                .filter(|&c| is_heading(c)),
        )
        .next()
    else {
        return false;
    };
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let mut slug = words(id);
    let text = words(&page.text_of(heading));
    if slug.last() != text.last()
        && slug
            .last()
            .is_some_and(|w| w.bytes().all(|b| b.is_ascii_digit()))
    {
        slug.pop();
    }
    let for_contents = slug.len() >= 3 && text.starts_with(&slug[1..]);
    (slug.len() >= 2 && slug == text) || for_contents
}

/// Whether an inline style hides the element (`display: none`, `visibility: hidden`).
fn hides(style: &str) -> bool {
    style.split(';').any(|decl| {
        let Some((prop, value)) = decl.split_once(':') else {
            return false;
        };
        let (prop, value) = (prop.trim(), value.trim());
        (prop.eq_ignore_ascii_case("display") && value.eq_ignore_ascii_case("none"))
            || (prop.eq_ignore_ascii_case("visibility") && value.eq_ignore_ascii_case("hidden"))
    })
}

/// Whether the page marks this element as an article body.
pub(super) fn is_marked_body(page: &Page, idx: ElementIdx) -> bool {
    let v = page.element_ref(idx);
    let v = v.value();
    if attr_of(v, "itemprop").is_some_and(|p| p.eq_ignore_ascii_case("articleBody")) {
        return true;
    }
    [attr_of(v, "class"), attr_of(v, "id")]
        .into_iter()
        .flatten()
        .flat_map(str::split_whitespace)
        .any(|w| BODY_MARKS.contains(&w.to_ascii_lowercase().as_str()))
}
