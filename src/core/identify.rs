//! Post identification per blog (paper §4.3, issue 28): whether a page whose URL looks like a
//! permalink shows a post of the blog, decided from the blog's own evidence, not from what pages
//! in general look like (a post template carries related-posts blocks, "More posts" loops,
//! tables of contents and "Read more" links that a generic heuristic takes for a listing).
//!
//! At NewCrawl the entry pages (posts, on the feed's word) are compared with the blog's listing
//! pages (its home page and the home page's next page) ([`MarkVotes`]):
//! - **post marks**: id/class rules present on most entry pages ([`POST_SHARE`]) and on no
//!   listing page: a comment form, a previous/next navigation, a byline block, a related-posts
//!   block;
//! - **listing marks**: id/class rules present on every listing page and on no entry page:
//!   pagination, a "latest posts" grid;
//! - [`OG_ARTICLE`], [`LD_ARTICLE`]: every entry page declares itself a post (`og:type=article`,
//!   JSON-LD `BlogPosting`, `Article`…) and no listing page does; a page that lacks a
//!   declaration all the blog's posts make and some of their marks (an "About" page with
//!   `og:type=website`, without the byline and "Read more" cards) is a page, not a post;
//! - [`CANONICAL_LINK`]: no entry page names another page as its canonical address, so a page
//!   that does is a copy or a listing;
//! - [`SEVERAL_ARTICLES`]: no entry page shows its article rule on two posts, so a page that
//!   does lists posts.
//!
//! Each is stored as a rule (`post-mark`, `listing-mark`) beside the extraction rules, and
//! [`judge`] reads a page against them. A blog learned before these marks existed reads pages
//! as before ([`Marks::legacy`]), but a page refused on generic grounds alone is reported as
//! possibly lost, never dropped silently.

use super::blocks::MIN_BLOCK;
use super::head::{ld_article, og_article};
use super::page::{ElementIdx, Page};
use super::rules::{rule_for, Rule, RuleError, RuleKind};
use super::rules::{Field, LearnedRule};
use rustc_hash::FxHashMap;
use url::Url;

/// The `post-mark` that stands for OpenGraph `og:type=article`, when the blog's entry pages
/// declare it and its listing pages do not.
pub const OG_ARTICLE: &str = "og:type article";

/// The `post-mark` that stands for JSON-LD naming the page a post (`@type` `BlogPosting`,
/// `Article`…), when the blog's entry pages say so and its listing pages do not.
pub const LD_ARTICLE: &str = "JSON-LD article";

/// The `listing-mark` that stands for the article rule selecting several posts on one page,
/// when no entry page shows that.
pub const SEVERAL_ARTICLES: &str = "several articles";

/// The `listing-mark` that stands for a canonical link naming another page of the site, when
/// no entry page names another page.
pub const CANONICAL_LINK: &str = "canonical link";

/// Share of the entry pages a post mark is present on (and on no listing page).
pub const POST_SHARE: f64 = 0.8;

/// Links to posts that make a page without an article a list of posts when the blog has no
/// template marks: more than related posts and neighbour links add up to.
const MANY_POST_LINKS: usize = 10;

/// Most marks of each kind kept: the most common first.
const MAX_MARKS: usize = 24;

/// What a blog's own pages say about which of its pages are posts (learned by [`MarkVotes`],
/// stored as `post-mark` and `listing-mark` rules).
#[derive(Debug, Default)]
pub struct Marks {
    /// id/class rules present on most entry pages and on no listing page.
    pub post: Vec<Rule>,
    /// id/class rules present on every listing page and on no entry page.
    pub listing: Vec<Rule>,
    /// The blog's posts declare `og:type=article` ([`OG_ARTICLE`]).
    pub og_article: bool,
    /// The blog's posts declare a JSON-LD post type ([`LD_ARTICLE`]).
    pub ld_article: bool,
    /// A page showing the article rule on several posts lists them ([`SEVERAL_ARTICLES`]).
    pub several_articles: bool,
    /// A canonical link to another page of the site makes the page a copy or a listing
    /// ([`CANONICAL_LINK`]).
    pub canonical: bool,
    /// The marks were learned (false: [`Marks::legacy`], a blog learned before them).
    pub learned: bool,
}

impl Marks {
    /// The marks of a blog learned before marks existed: canonical links and several articles
    /// count, as they did then; no template is known.
    pub fn legacy() -> Marks {
        Marks {
            canonical: true,
            several_articles: true,
            ..Marks::default()
        }
    }

    /// The marks among a blog's stored rules (`field`, `xpath`); [`Marks::legacy`] when it has
    /// none.
    ///
    /// # Errors
    /// A stored mark is not valid XPath.
    pub fn from_stored<'a>(
        rules: impl IntoIterator<Item = (Field, &'a str)>,
    ) -> Result<Marks, RuleError> {
        let mut marks = Marks::default();
        let mut any = false;
        for (field, xpath) in rules {
            match (field, xpath) {
                (Field::PostMark, OG_ARTICLE) => marks.og_article = true,
                (Field::PostMark, LD_ARTICLE) => marks.ld_article = true,
                (Field::ListingMark, SEVERAL_ARTICLES) => marks.several_articles = true,
                (Field::ListingMark, CANONICAL_LINK) => marks.canonical = true,
                (Field::PostMark, x) => marks.post.push(Rule::parse(x)?),
                (Field::ListingMark, x) => marks.listing.push(Rule::parse(x)?),
                _ => continue,
            }
            any = true;
        }
        marks.learned = any;
        Ok(if any { marks } else { Marks::legacy() })
    }
}

/// The page's canonical link when it names another page of the same site: not the page itself,
/// not a part of it (a fragment, a comment page of it: WordPress names `…/comment-page-1/` the
/// canonical address of a post whose comments show newest first), trailing slash, `index.html`
/// and noise parameters aside.
pub fn canonical_elsewhere(page: &Page, base: &Url) -> Option<Url> {
    let c = super::head::canonical_link(page, base)?;
    if c.origin() != base.origin() {
        return None;
    }
    let key = |u: &Url| {
        let u =
            super::post_url::comment_page_of(u).unwrap_or_else(|| super::post_url::canonical(u));
        let path = u.path().trim_end_matches('/').to_string();
        (path, u.query().map(str::to_string))
    };
    (key(&c) != key(base)).then_some(c)
}

/// How many posts the article rule shows on the page: its matches not inside one another, each
/// with a text block's worth of text ([`MIN_BLOCK`]); for an absolute path rule, its last
/// step's same-tag siblings too.
pub fn articles_shown(page: &Page, article: &Rule) -> usize {
    // An absolute path names one element: a listing repeats it as same-tag siblings
    // (Pelican's `simple` theme: `main/article[1]`, `[2]`, … on a listing).
    let siblings = article.any_last_position();
    let article = siblings.as_ref().unwrap_or(article);
    let mut shown: Vec<ElementIdx> = Vec::new();
    for m in article.apply(page) {
        let e = &page.elements[m as usize];
        if e.end - e.start < MIN_BLOCK || shown.iter().any(|&s| page.contains(s, m)) {
            continue;
        }
        shown.push(m);
    }
    shown.len()
}

/// The id/class rules that select something on the page (each element's own rule, when it is
/// an id or class rule: the element is that rule's first match).
fn candidate_marks(page: &Page) -> Vec<String> {
    (0..page.elements.len() as ElementIdx)
        .flat_map(|i| {
            let own = match rule_for(page, i) {
                Some((rule, RuleKind::Id | RuleKind::Class)) => Some(rule),
                _ => None,
            };
            // The class of an element with an id too: a listing's `<div class="markdown">`
            // is the class a post page's `<div id="…" class="markdown">` carries.
            own.into_iter()
                .chain(super::rules::class_rule_beside_id(page, i))
        })
        .collect()
}

/// The vote over a blog's entry pages and listing pages that gives its [`Marks`], one page at
/// a time.
#[derive(Debug, Default)]
pub struct MarkVotes {
    entries: u32,
    on_entries: FxHashMap<String, u32>,
    entries_og: u32,
    entries_ld: u32,
    entries_with_several: u32,
    entries_canonical_elsewhere: u32,
    listings: u32,
    on_listings: FxHashMap<String, u32>,
    listings_og: u32,
    listings_ld: u32,
}

impl MarkVotes {
    /// Adds an entry page (a post, at `base`), whose article the blog's `article` rule selects.
    pub fn add_entry(&mut self, page: &Page, base: &Url, article: &Rule) {
        self.entries += 1;
        for m in candidate_marks(page) {
            *self.on_entries.entry(m).or_default() += 1;
        }
        self.entries_og += og_article(page) as u32;
        self.entries_ld += ld_article(page) as u32;
        self.entries_with_several += (articles_shown(page, article) >= 2) as u32;
        self.entries_canonical_elsewhere += canonical_elsewhere(page, base).is_some() as u32;
    }

    /// Adds a listing page of the blog (its home page, an older page of it).
    pub fn add_listing(&mut self, page: &Page) {
        self.listings += 1;
        for m in candidate_marks(page) {
            *self.on_listings.entry(m).or_default() += 1;
        }
        self.listings_og += og_article(page) as u32;
        self.listings_ld += ld_article(page) as u32;
    }

    /// The marks, as rules to store: `post-mark` and `listing-mark` rows, `votes` the pages
    /// that carry each, `samples` the pages of its kind. Empty without entry pages.
    pub fn finish(self) -> Vec<LearnedRule> {
        if self.entries == 0 {
            return Vec::new();
        }
        let (entries, listings) = (self.entries, self.listings);
        let row = |field: Field, xpath: &str, votes: u32, samples: u32| LearnedRule {
            field,
            xpath: xpath.to_string(),
            score: votes as f64 / samples.max(1) as f64,
            votes,
            samples,
        };
        let mut out = Vec::new();
        // Without a listing page nothing tells a post's template from the site's: no template
        // marks.
        let on_listings = if listings > 0 {
            &self.on_listings
        } else {
            &self.on_entries
        };
        let mut post: Vec<(&String, u32)> = self
            .on_entries
            .iter()
            .filter(|&(m, &n)| {
                n as f64 >= POST_SHARE * entries as f64 && !on_listings.contains_key(m)
            })
            .map(|(m, &n)| (m, n))
            .collect();
        post.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        out.extend(
            post.into_iter()
                .take(MAX_MARKS)
                .map(|(m, n)| row(Field::PostMark, m, n, entries)),
        );
        if listings > 0 {
            let mut listing: Vec<(&String, u32)> = self
                .on_listings
                .iter()
                .filter(|&(m, &n)| n == listings && !self.on_entries.contains_key(m))
                .map(|(m, &n)| (m, n))
                .collect();
            listing.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            out.extend(
                listing
                    .into_iter()
                    .take(MAX_MARKS)
                    .map(|(m, n)| row(Field::ListingMark, m, n, listings)),
            );
        }
        for (mark, on_entries, on_listings) in [
            (OG_ARTICLE, self.entries_og, self.listings_og),
            (LD_ARTICLE, self.entries_ld, self.listings_ld),
        ] {
            // Every sampled post declares it: a page that does not is something else.
            if on_entries == entries && listings > 0 && on_listings == 0 {
                out.push(row(Field::PostMark, mark, on_entries, entries));
            }
        }
        if self.entries_with_several == 0 {
            out.push(row(Field::ListingMark, SEVERAL_ARTICLES, entries, entries));
        }
        if self.entries_canonical_elsewhere == 0 {
            out.push(row(Field::ListingMark, CANONICAL_LINK, entries, entries));
        }
        out
    }
}

/// Whether a page not shaped like a permalink is a post all the same, on the blog's own
/// evidence: it carries nearly every post mark (90 %, of at least [`MIN_MARKS_ALONE`]) and
/// makes every declaration the blog's posts make ([`judge`] reads it next). A blog whose older
/// posts sit at another address shape (Docusaurus: `/blog/2021/04/21/slug` beside
/// `/blog/slug`) keeps them.
pub fn marked_post(page: &Page, marks: &Marks) -> bool {
    let known = marks.post.len();
    if !marks.learned || known < MIN_MARKS_ALONE {
        return false;
    }
    let carried = marks
        .post
        .iter()
        .filter(|r| r.apply_first(page).is_some())
        .count();
    let declared =
        (!marks.og_article || og_article(page)) && (!marks.ld_article || ld_article(page));
    carried * 10 >= known * 9 && declared
}

/// Why a page that is no post of the blog is one of its pages beside the posts (About,
/// Contact, Now, a reading list; issue 42), on the blog's own evidence; `None` when it is not
/// one. `base` is the page's address; `text` reads the page's article ([`PageText`]), asked
/// only once the cheaper evidence holds, `None` when there is none. A page of the blog:
/// - carries fewer than half the blog's post marks and makes none of the declarations its
///   posts make (`og:type=article`, JSON-LD), or, where the blog has no post marks, is marked
///   a page by its own classes (`page`, `type-page`, `page-template`, on `<body>`, `<main>` or
///   `<article>`);
/// - shows no date;
/// - lists no posts: no listing mark, not several articles, fewer than [`MANY_POST_LINKS`]
///   links to posts, not a listing to the generic heuristic;
/// - has a text of its own (at least [`MIN_PAGE_CHARS`]).
///
/// Never from title words.
pub fn blog_page(
    page: &Page,
    base: &Url,
    marks: &Marks,
    article: &Rule,
    post_links: usize,
    text: impl FnOnce() -> Option<PageText>,
) -> Option<String> {
    if !marks.learned || post_links >= MANY_POST_LINKS {
        return None;
    }
    let carried = marks
        .post
        .iter()
        .filter(|r| r.apply_first(page).is_some())
        .count();
    let known = marks.post.len();
    let declares = (marks.og_article && og_article(page)) || (marks.ld_article && ld_article(page));
    let unmarked = if known >= MIN_MARKS_ALONE {
        carried * 2 < known && !declares
    } else {
        !declares && page_classes(page)
    };
    // The cheap evidence first; the article's text, then the generic listing judge (each a
    // pass of the generic extractor) only for a page that may still be one.
    if !unmarked
        || marks.listing.iter().any(|r| r.apply_first(page).is_some())
        || articles_shown(page, article) >= 2
    {
        return None;
    }
    let text = text()?;
    if text.dated || text.chars < MIN_PAGE_CHARS || super::listing::is_listing(page, base) {
        return None;
    }
    Some({
        if known >= MIN_MARKS_ALONE {
            format!(
                "a page of the blog, not a post: no date, {carried} of the {known} marks its posts carry, and no list of posts"
            )
        } else {
            "a page of the blog, not a post: its classes say page, it shows no date and lists no posts".to_string()
        }
    })
}

/// What [`blog_page`] reads of a page's article, from the generic extractor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageText {
    /// The extractor found a date on the page.
    pub dated: bool,
    /// The length of the article it found, in chars.
    pub chars: usize,
}

/// Text a page of the blog holds at least (a sentence or two).
const MIN_PAGE_CHARS: usize = 80;

/// Whether `<body>`, `<main>` or an `<article>` names the page a page by its classes, as
/// WordPress (`page`, `type-page`, `page-template-default`), Ghost (`page-template`) and
/// others write them.
fn page_classes(page: &Page) -> bool {
    page.elements.iter().enumerate().any(|(i, e)| {
        matches!(e.name.as_str(), "body" | "main" | "article")
            && page.attr(i as ElementIdx, "class").is_some_and(|c| {
                c.split_whitespace()
                    .any(|w| matches!(w, "page" | "type-page") || w.starts_with("page-template"))
            })
    })
}

/// Post marks a blog must have before they alone make a page a post ([`marked_post`]).
const MIN_MARKS_ALONE: usize = 3;

/// What extraction found on a page before it is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// The blog's rules fit: the article rule selects text.
    Rules,
    /// The rules do not fit; the generic extractor found an article.
    Fallback,
    /// The rules do not fit; the generic extractor found an article, but the page shows no
    /// date while the blog's posts do (its date rule was learned from them): a page of the
    /// site beside the posts (an authors or tags index, About).
    UndatedFallback,
    /// Neither found an article.
    Nothing,
}

/// What a page whose URL looks like a permalink is, on the blog's evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A post: archive it.
    Post,
    /// No post of its own, on the blog's evidence (a listing, a copy): why.
    NotPost(String),
    /// No post could be taken from it, and nothing says it is none: why. A post possibly lost,
    /// reported as missing.
    Lost(String),
}

/// Judges a page whose URL looks like one of the blog's permalinks (it is no feed entry):
/// - a canonical link to another page of the site makes it a copy of that post or a listing
///   (when the blog's entry pages never do that);
/// - the article rule selecting several posts makes it a listing (when it never does on an entry
///   page);
/// - where the rules fit, it is a post unless it carries the blog's listing marks and not its
///   post marks, or lacks both a declaration every post makes and some of the post marks;
/// - where only the generic extractor finds an article, it is a post when it declares itself one
///   (and the blog's posts do), or carries most of the post marks; a listing when it carries
///   listing marks; otherwise the generic listing heuristic decides, and a page it calls a
///   listing is reported as possibly lost;
/// - with no article at all, it is no post when it links to posts (`post_links`, at least two)
///   and carries too few of the post marks (an archive page), else a possibly lost post (a
///   maintenance page served for a post, a post without text).
pub fn judge(
    page: &Page,
    base: &Url,
    marks: &Marks,
    article: &Rule,
    found: Found,
    post_links: usize,
    is_post: impl Fn(&Url) -> bool,
) -> Verdict {
    if marks.canonical {
        if let Some(c) = canonical_elsewhere(page, base) {
            return Verdict::NotPost(if is_post(&c) {
                format!("a copy of the post {c} (its canonical address)")
            } else {
                format!("its canonical address is {c}, which is no post")
            });
        }
    }
    if marks.several_articles {
        let n = articles_shown(page, article);
        if n >= 2 {
            return Verdict::NotPost(format!(
                "a listing: the article rule {article} selects {n} posts on it"
            ));
        }
    }
    fn present<'r>(page: &Page, rules: &'r [Rule]) -> Vec<&'r Rule> {
        rules
            .iter()
            .filter(|r| r.apply_first(page).is_some())
            .collect()
    }
    let (post, listing) = (present(page, &marks.post), present(page, &marks.listing));
    let known = marks.post.len();
    let post_like = known > 0 && post.len() * 2 >= known;
    // Nearly every post mark (90 %): what a post page of the blog carries.
    let all_but_few = known > 0 && post.len() * 10 >= known * 9;
    let listing_like = !listing.is_empty() && !post_like;
    // The declarations the blog's posts make: all of them made, or one of them missing.
    let declarations = [
        (marks.og_article, og_article as fn(&Page) -> bool),
        (marks.ld_article, ld_article),
    ];
    let learned = declarations.iter().filter(|(l, _)| *l).count();
    let made = declarations.iter().filter(|(l, f)| *l && f(page)).count();
    let declared = learned > 0 && made == learned;
    let undeclared = learned > 0 && made < learned;
    let page_reason = || {
        format!(
            "a page of the site, not a post: it lacks the declaration the blog's posts make (og:type, JSON-LD) and carries {} of the {known} marks they carry",
            post.len()
        )
    };
    let listing_reason = || {
        let names: Vec<&str> = listing.iter().take(3).map(|r| r.as_str()).collect();
        format!(
            "a listing: it carries the blog's listing marks ({}) and {} of the {known} marks its posts carry",
            names.join(", "),
            post.len()
        )
    };
    let generic = || super::listing::is_listing(page, base);
    match found {
        Found::Rules if listing_like && !declared => Verdict::NotPost(listing_reason()),
        Found::Rules if known > 0 && !all_but_few && undeclared => Verdict::NotPost(page_reason()),
        Found::Rules if !marks.learned && generic() => Verdict::Lost(
            "the blog's rules fit it but it looks like a listing to the generic heuristic (the blog was learned before post marks existed, so nothing of its own tells)".into(),
        ),
        Found::Rules => Verdict::Post,
        Found::Fallback if declared || post_like => Verdict::Post,
        Found::Fallback if listing_like => Verdict::NotPost(listing_reason()),
        Found::Fallback if known > 0 && !all_but_few && undeclared => {
            Verdict::NotPost(page_reason())
        }
        Found::Fallback if generic() => Verdict::Lost(format!(
            "the blog's rules do not fit it, it carries {} of the {known} marks its posts carry, and it looks like a listing",
            post.len()
        )),
        Found::Fallback => Verdict::Post,
        Found::UndatedFallback if !(declared || post_like) => Verdict::NotPost(format!(
            "a page of the site, not a post: the blog's rules find no article on it, it shows no date where the blog's posts show theirs, and it carries {} of the {known} marks they carry",
            post.len()
        )),
        Found::UndatedFallback => Verdict::Post,
        Found::Nothing if known > 0 && !post_like && post_links >= 2 => Verdict::NotPost(format!(
            "a list of posts: no article, {post_links} links to posts, and {} of the {known} marks the blog's posts carry",
            post.len()
        )),
        // No template marks to read: many links to posts and no article is a list of posts
        // (an archive page), where a post's own related and neighbour links are a few.
        Found::Nothing if known == 0 && marks.learned && post_links >= MANY_POST_LINKS => {
            Verdict::NotPost(format!(
                "a list of posts: no article and {post_links} links to posts"
            ))
        }
        Found::Nothing => Verdict::Lost(
            "neither the blog's rules nor the generic extractor find an article on it".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::core::TEST_PROSE as PROSE;

    fn post(n: u32, extra: &str) -> String {
        format!(
            "<html><head><title>Post {n}</title><link rel=canonical href='http://b.org/2024/p{n}/'>\
             <meta property='og:type' content='article'></head><body>\
             <header class=site><a href=/>B</a></header><article class=post><h1 class=title>Post {n}</h1>\
             <div class=entry><p>{PROSE} {n}</p>{extra}</div>\
             <nav class=post-nav><a href=/2024/p0/>Previous</a></nav></article>\
             <div id=comments><form id=respond><textarea></textarea></form></div>\
             <div class=related><h3><a href=/2024/p8/>Eight</a></h3><h3><a href=/2024/p9/>Nine</a></h3>\
             <h3><a href=/2024/p7/>Seven</a></h3></div></body></html>"
        )
    }

    fn listing(posts: &[u32]) -> String {
        let items: String = posts
            .iter()
            .map(|n| {
                format!(
                    "<article class=post><h2 class=title><a href=/2024/p{n}/>Post {n}</a></h2>\
                     <div class=entry><p>{PROSE} {n}</p></div></article>"
                )
            })
            .collect();
        format!(
            "<html><head><title>B</title><meta property='og:type' content='website'></head><body>\
             <header class=site><a href=/>B</a></header>{items}\
             <nav class=pagination><a href=/page/2/>Older</a></nav></body></html>"
        )
    }

    fn learned() -> (Marks, Rule) {
        let article = Rule::parse("//*[@class='entry']").unwrap();
        let mut votes = MarkVotes::default();
        for n in 1..=5 {
            let url = Url::parse(&format!("http://b.org/2024/p{n}/")).unwrap();
            votes.add_entry(&Page::parse(&post(n, "")), &url, &article);
        }
        votes.add_listing(&Page::parse(&listing(&[1, 2, 3])));
        let rows = votes.finish();
        let marks = Marks::from_stored(rows.iter().map(|r| (r.field, r.xpath.as_str()))).unwrap();
        (marks, article)
    }

    fn verdict(html: &str, url: &str, found: Found) -> Verdict {
        let (marks, article) = learned();
        let base = Url::parse(url).unwrap();
        let page = Page::parse(html);
        let post_links = (0..page.elements.len() as ElementIdx)
            .filter(|&i| {
                page.attr(i, "href")
                    .is_some_and(|h| h.starts_with("/2024/"))
            })
            .count();
        judge(&page, &base, &marks, &article, found, post_links, |u| {
            u.path().starts_with("/2024/")
        })
    }

    #[test]
    fn a_post_at_another_address_shape_and_a_page_beside_the_posts_by_the_marks() {
        let (marks, article) = learned();
        let base = Url::parse("http://b.org/about/").unwrap();
        // A post of the blog's template, whatever its address: every mark, the declaration.
        assert!(marked_post(&Page::parse(&post(7, "")), &marks));
        // A listing, and a page without the posts' template, are not.
        assert!(!marked_post(&Page::parse(&listing(&[1, 2])), &marks));
        let about = format!(
            "<html><head><title>About</title><meta property='og:type' content='website'></head>\
             <body><header class=site><a href=/>B</a></header><main><h1>About</h1><p>{PROSE}</p></main>\
             </body></html>"
        );
        let about = Page::parse(&about);
        assert!(!marked_post(&about, &marks));
        // That page is a page of the blog: undated, unmarked, listing nothing.
        let text = |dated, chars| move || Some(PageText { dated, chars });
        let why = blog_page(&about, &base, &marks, &article, 0, text(false, 200));
        assert!(why.is_some_and(|w| w.contains("not a post")));
        // Not when dated, too short, or listing posts; and a post never is one.
        assert!(blog_page(&about, &base, &marks, &article, 0, text(true, 200)).is_none());
        assert!(blog_page(&about, &base, &marks, &article, 0, text(false, 20)).is_none());
        assert!(blog_page(&about, &base, &marks, &article, 0, || None).is_none());
        assert!(blog_page(
            &about,
            &base,
            &marks,
            &article,
            MANY_POST_LINKS,
            text(false, 200)
        )
        .is_none());
        let listing_page = Page::parse(&listing(&[1, 2, 3]));
        assert!(blog_page(&listing_page, &base, &marks, &article, 3, text(false, 900)).is_none());
        let a_post = Page::parse(&post(7, ""));
        assert!(blog_page(&a_post, &base, &marks, &article, 1, text(false, 900)).is_none());
    }

    #[test]
    fn marks_are_what_posts_carry_and_listings_do_not() {
        let (marks, _) = learned();
        let post: Vec<&str> = marks.post.iter().map(Rule::as_str).collect();
        assert!(post.contains(&"//*[@id='comments']"), "{post:?}");
        assert!(post.contains(&"//*[@class='post-nav']"), "{post:?}");
        // The article container is on listings too: no mark.
        assert!(!post.contains(&"//*[@class='entry']"), "{post:?}");
        let listing: Vec<&str> = marks.listing.iter().map(Rule::as_str).collect();
        assert_eq!(listing, ["//*[@class='pagination']"]);
        assert!(marks.og_article && !marks.ld_article && marks.several_articles && marks.canonical);
    }

    #[test]
    fn a_post_with_related_posts_and_a_read_more_link_is_a_post() {
        let extra = "<p><a class=more-link href=/about/>Read more about me</a></p>";
        let v = verdict(&post(9, extra), "http://b.org/2024/p9/", Found::Rules);
        assert_eq!(v, Verdict::Post);
        // Its canonical points into itself: a comment page of it is still the post.
        let html = post(9, "").replace("/2024/p9/'", "/2024/p9/comment-page-1/#comments'");
        let v = verdict(&html, "http://b.org/2024/p9/", Found::Rules);
        assert_eq!(v, Verdict::Post);
    }

    #[test]
    fn listings_shaped_like_permalinks_are_no_posts() {
        // Several posts in the article container.
        let v = verdict(
            &listing(&[1, 2, 3]),
            "http://b.org/2024/older/",
            Found::Rules,
        );
        assert!(
            matches!(v, Verdict::NotPost(ref r) if r.contains("3 posts")),
            "{v:?}"
        );
        // One excerpt in the container, but the listing's marks and none of a post's.
        let v = verdict(&listing(&[4]), "http://b.org/2024/tag-x/", Found::Rules);
        assert!(
            matches!(v, Verdict::NotPost(ref r) if r.contains("pagination")),
            "{v:?}"
        );
        // A canonical link to another post: a copy.
        let html = post(3, "").replace("/2024/p3/'", "/2024/p1/'");
        let v = verdict(&html, "http://b.org/2024/p3-amp/", Found::Rules);
        assert!(
            matches!(v, Verdict::NotPost(ref r) if r.contains("copy")),
            "{v:?}"
        );
        // No article and no post marks: a page of links.
        let links = "<html><body><ul><li><a href=/2024/p1/>One</a></li>\
            <li><a href=/2024/p2/>Two</a></li></ul></body></html>";
        let v = verdict(links, "http://b.org/2024/archive/", Found::Nothing);
        assert!(matches!(v, Verdict::NotPost(_)), "{v:?}");
    }

    #[test]
    fn a_maintenance_page_served_for_a_post_is_lost_not_a_listing() {
        let html = "<html><body><h1>Down for maintenance</h1><p>Back soon.</p></body></html>";
        let v = verdict(html, "http://b.org/2024/p5/", Found::Nothing);
        assert!(matches!(v, Verdict::Lost(_)), "{v:?}");
    }

    #[test]
    fn a_post_without_text_is_reported_lost_not_dropped() {
        let v = verdict(
            &post(4, "").replace(PROSE, ""),
            "http://b.org/2024/p4/",
            Found::Nothing,
        );
        assert!(matches!(v, Verdict::Lost(_)), "{v:?}");
    }
}
