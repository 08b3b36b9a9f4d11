//! The generic fallback extractor: a page's main text without any learned rule, for pages the
//! blog's rules do not fit (an older template, a special layout, a feed with no content to
//! learn from) and for `archive extract` without `--blog`.
//!
//! DOM scoring in the spirit of readability and the text-density seeds (CETD), on the flat
//! element table of [`Page`], in time linear in the page:
//! 1. **Boilerplate**: hidden elements, controls, navigation, asides, footers and
//!    their contents are never article text; nor are elements whose `class`/`id` names a site
//!    part by its last word (`comments-area`, `sidebar`, `share-buttons`, `article-author`…;
//!    `core::roles`)
//!    or that wrap the page (`<form>`, `<header>`), unless they hold most of the page's prose
//!    (an ASP.NET form, an Elementor "widget" around the article), or, by class words, four
//!    times all the prose left outside the site's parts (a story in `div.article-header`).
//!    On a page with no text block outside them, `<aside>` is read as class words are (a
//!    story marked up as `<main><aside>`).
//! 2. **Paragraph scores**: every text block of at least [`super::blocks::MIN_BLOCK`] characters scores
//!    `1 + commas + min(chars / 100, 3)`, given to its parent in full, its grandparent by
//!    half and further ancestors by a third of their level.
//! 3. **The article**: an element the page marks as the article body (`itemprop=articleBody`,
//!    the common article-body classes) when it holds most of the best candidate's text, else
//!    the best candidate: score × (1 − link density), plus its class weight (or, inside a
//!    quotation, the text quoting it); its siblings join it when they score nearly as well or
//!    are plain prose, with its repeated blocks and its lead, or the page's main text instead
//!    of a few words, with its lead ([`super::extent`]). A candidate that is mostly links (an
//!    archive page, a tag list) is no article.
//! 4. **Inside the article**: boilerplate, link lists, blocks listing other posts (related
//!    posts, "More posts") and the headline are left out, and the last headings when nothing
//!    kept follows them (a "Keep reading" over a list of links).
//!
//! Whether a page is a post at all is the blog's question (`core::identify`), or without a
//! blog [`super::listing::is_listing`]'s; [`overrule`]
//! takes this extractor's article over the learned rules' when the page's own description
//! agrees with it and not with theirs.
//!
//! Measured on the public article-extraction-benchmark (`benches/aeb.sh`; figures in
//! benches/README.md).

use super::blocks::Figures;
use super::bylines::declared_authors;
use super::dates::parse_instant;
use super::extent::{
    inner_skips, or_main_text, orphan_headings, quoting, with_lead, with_repeats, with_siblings,
};
use super::extract::{
    declared_description, declared_published, declared_tags, declared_updated, ExtractContext,
    Extracted, ExtractedBy, Extractor, GapField,
};
use super::page::{ElementIdx, Page};
use super::roles::{is_marked_body, SiteTags};

/// Chars of text outside links that make a link-dense candidate an article ([`article`]).
const PROSE_BESIDE_LINKS: u32 = 1000;

/// Where the article is on a page and what inside it is not article text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Article {
    /// The element holding the article.
    pub root: ElementIdx,
    /// Descendants of `root` whose subtrees are left out (boilerplate, link lists, headline,
    /// siblings of the best candidate that did not join it), in document order.
    pub skip: Vec<ElementIdx>,
}

/// Finds the article on a page. When no element outside the tags of site parts holds a text
/// block, `<aside>` is read as class words are (a site part unless it holds most of the page's
/// prose): a story marked up as `<main><aside>` is found. `None` when no element holds a text
/// block.
pub fn article(page: &Page) -> Option<Article> {
    article_with(page, &Figures::of(page))
        .or_else(|| article_with(page, &Figures::with(page, SiteTags::Soft)))
}

/// [`article`] with the page's figures already computed.
pub(super) fn article_with(page: &Page, stats: &Figures) -> Option<Article> {
    let n = page.elements.len();
    let density = |i: usize| {
        if stats.chars[i] == 0 {
            1.0
        } else {
            stats.link_chars[i] as f32 / stats.chars[i] as f32
        }
    };
    let score = |i: usize| {
        (stats.score[i] + stats.weight[i] + tag_base(&page.elements[i].name)) * (1.0 - density(i))
    };
    let mut best: Option<(usize, f32)> = None;
    for i in 0..n {
        if stats.boiler[i] || stats.score[i] <= 0.0 {
            continue;
        }
        let s = score(i);
        if best.is_none_or(|(_, b)| s > b) {
            best = Some((i, s));
        }
    }
    let (top, top_score) = best?;
    let quoted = quoting(page, stats, top);
    let (top, top_score) = if quoted == top {
        (top, top_score)
    } else {
        (quoted, score(quoted))
    };
    // A marked article body holding most of the best candidate's text wins (or an ancestor of
    // it that adds little).
    let marked = (0..n).find(|&i| {
        !stats.boiler[i]
            && stats.chars[i] * 2 >= stats.chars[top]
            && is_marked_body(page, i as ElementIdx)
            && density(i) < 0.5
    });
    let (root, mut skip) = match marked {
        Some(m) => (m as ElementIdx, Vec::new()),
        None => with_siblings(page, stats, top, top_score),
    };
    inner_skips(page, stats, root, &mut skip);
    let (root, skip) = with_repeats(page, stats, root, skip);
    let (root, skip) = with_lead(page, stats, root, skip);
    let (root, skip) = or_main_text(page, stats, root, skip);
    // The page's main text, taken instead of a few words, has its lead too.
    let (root, mut skip) = with_lead(page, stats, root, skip);
    orphan_headings(page, root, &mut skip);
    unless_links(stats, root, skip)
}

/// The article at `root` without `skip`, unless what is left is a list of links.
fn unless_links(stats: &Figures, root: ElementIdx, mut skip: Vec<ElementIdx>) -> Option<Article> {
    skip.sort_unstable();
    skip.dedup();
    // A list of links (an archive page's titles and dates, a tag list) is no article: over 60 %
    // of its text in links, or over 40 % with less than a few paragraphs of prose outside them
    // (a roundup of linked headlines, each with its summary, is an article).
    let left = |v: &[u32]| {
        let skipped: u32 = skip.iter().map(|&k| v[k as usize]).sum();
        v[root as usize].saturating_sub(skipped)
    };
    let (chars, links) = (left(&stats.chars), left(&stats.link_chars));
    if chars == 0
        || links * 5 > chars * 3
        || (links * 5 > chars * 2 && chars - links < PROSE_BESIDE_LINKS)
    {
        return None;
    }
    Some(Article { root, skip })
}

/// A post record from the page alone: the article by [`article`], the title (the heading
/// naming the page, without the site's name the `<title>` adds: [`super::blocks::page_title`]),
/// authors and dates the page declares (JSON-LD, OpenGraph, `<time datetime>`, `meta
/// name=author`, links to author pages).
/// Every field is marked [`Extractor::Fallback`]. `None` when the page has no article. Whether
/// the page is a post at all is the caller's question: the blog's evidence
/// ([`super::identify::judge`]), or without a blog [`super::listing::is_listing`].
pub fn extract(page: &Page, ctx: &ExtractContext) -> Option<Extracted> {
    let shown;
    let (body, a) = match article(page) {
        Some(a) => (page, a),
        None => {
            shown = without_scripts(page)?;
            let a = article(&shown)?;
            (&shown, a)
        }
    };
    let content_text = body.text_excluding(a.root, &a.skip);
    if content_text.is_empty() {
        return None;
    }
    let title = super::blocks::page_title(page).or_else(|| {
        let h1 = page.elements.iter().position(|e| e.name == "h1")?;
        Some(page.text_of(h1 as ElementIdx)).filter(|t| !t.is_empty())
    });
    let authors = declared_authors(page);
    let published = declared_published(page).and_then(|d| parse_instant(&d, Some(ctx.offset)));
    let mut gaps = Vec::new();
    if authors.is_empty() {
        gaps.push((
            GapField::Author,
            "the blog's rules do not fit this page and the page declares no author".to_string(),
        ));
    }
    if published.is_none() {
        gaps.push((
            GapField::Published,
            "the blog's rules do not fit this page and the page declares no machine-readable date"
                .to_string(),
        ));
    }
    let by = |found: bool| found.then_some(Extractor::Fallback);
    Some(Extracted {
        extracted_by: ExtractedBy {
            title: by(title.is_some()),
            content: Extractor::Fallback,
            authors: by(!authors.is_empty()),
            published: by(published.is_some()),
        },
        title,
        content_html: body
            .inner_html_excluding(a.root, &a.skip)
            .trim()
            .to_string(),
        content_text,
        authors,
        published,
        published_raw: None,
        updated: declared_updated(page).and_then(|d| parse_instant(&d, Some(ctx.offset))),
        tags: declared_tags(page),
        gaps,
    })
}

/// Chars of markup a `<noscript>` needs to be read as the page ([`without_scripts`]).
const NOSCRIPT_PAGE: usize = 500;

/// The page as a browser without scripts shows it, for a page whose text only a script puts
/// in place (Blogger's newer themes keep each post in a `<script type=text/template>` and a
/// `<noscript>` copy): the markup of the largest `<noscript>` in `<body>`, of at least
/// [`NOSCRIPT_PAGE`] chars, as a page of its own.
/// `None` when there is none.
fn without_scripts(page: &Page) -> Option<Page> {
    let body = page.elements.iter().position(|e| e.name == "body")? as ElementIdx;
    let markup = page
        .subtree(body)
        .map(|i| i as usize)
        .filter(|&i| page.elements[i].name == "noscript")
        .map(|i| {
            // Scripting off, its markup is elements; a parser with scripting on leaves it text.
            let e = page.element_ref(i as ElementIdx);
            if page.elements[i].children.is_empty() {
                e.text().collect::<String>()
            } else {
                e.inner_html()
            }
        })
        .max_by_key(String::len)
        .filter(|m| m.len() >= NOSCRIPT_PAGE)?;
    Some(Page::parse(&format!("<html><body>{markup}</body></html>")))
}

/// Words a page's description needs before it can overrule the rules ([`overrule`]).
pub const DESCRIPTION_WORDS: usize = 8;

/// The rules' post, with its article taken from the generic extractor instead when the page's
/// own description disagrees with the rules' article and agrees with the fallback's: the
/// description (`og:description`, `meta name=description`, JSON-LD; the post's opening words on
/// most engines) of at least [`DESCRIPTION_WORDS`] words, under half of its word pairs in the
/// rules' article and at least 80 % in the fallback's. A site-wide description (the blog's
/// tagline) agrees with neither and changes nothing.
pub fn overrule(page: &Page, mut x: Extracted) -> Extracted {
    let Some(description) = declared_description(page) else {
        return x;
    };
    let description: String = super::text::normalise(&description).into_iter().collect();
    let description = description
        .trim_end_matches(['…', '.', ' ', ']', '['])
        .trim_end_matches("[…")
        .trim_end();
    let words: Vec<&str> = description.split(' ').collect();
    if words.len() < DESCRIPTION_WORDS {
        return x;
    }
    // The last word may be cut ("…"): only whole pairs before it count.
    let pairs: Vec<(&str, &str)> = words[..words.len() - 1]
        .windows(2)
        .map(|w| (w[0], w[1]))
        .collect();
    let agreement = |text: &str| {
        let text: String = super::text::normalise(text).into_iter().collect();
        let have: rustc_hash::FxHashSet<(&str, &str)> = text
            .split(' ')
            .collect::<Vec<_>>()
            .windows(2)
            .map(|w| (w[0], w[1]))
            .collect();
        pairs.iter().filter(|p| have.contains(p)).count() as f64 / pairs.len() as f64
    };
    if agreement(&x.content_text) >= 0.5 {
        return x;
    }
    let Some(a) = article(page) else {
        return x;
    };
    let text = page.text_excluding(a.root, &a.skip);
    if agreement(&text) >= 0.8 {
        x.content_html = page
            .inner_html_excluding(a.root, &a.skip)
            .trim()
            .to_string();
        x.content_text = text;
        x.extracted_by.content = Extractor::Fallback;
    }
    x
}

/// The article text of a page found by [`article`], whitespace collapsed; empty when none.
pub fn article_text(page: &Page) -> String {
    article(page)
        .map(|a| page.text_excluding(a.root, &a.skip))
        .unwrap_or_default()
}

/// Readability's prior per tag.
fn tag_base(name: &str) -> f32 {
    match name {
        "div" | "article" | "section" | "main" => 5.0,
        "pre" | "td" | "blockquote" => 3.0,
        "address" | "ol" | "ul" | "dl" | "dd" | "dt" | "li" | "form" => -3.0,
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "th" => -5.0,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(html: &str) -> String {
        article_text(&Page::parse(html))
    }

    use crate::core::TEST_PROSE as PROSE;

    #[test]
    fn site_parts_are_left_out_and_a_wrapper_holding_the_article_is_not_one() {
        // An ASP.NET page's form and an Elementor "widget" wrap the article; a sidebar, a share
        // bar, WP-PostRatings' box and a byline do not.
        let html = format!(
            "<html><body><form id=aspnetForm><nav><a href=/>Home</a> <a href=/about>About</a></nav>\
             <div class='elementor-widget-container'><article>\
             <div class=byline>By Jo Bloggs, 3 May 2024</div><p>{PROSE}</p><p>{PROSE}</p>\
             <div class='share-buttons'>Share this on every network you know, please, now</div>\
             <span id=post-ratings-4373 class=post-ratings><strong>Was this article useful?</strong>\
             (95 votes: 4.73 of 5)</span>\
             </article></div>\
             <div class=sidebar><p>About me: a gardener who writes, sometimes, about hedges.</p></div>\
             </form></body></html>"
        );
        assert_eq!(text(&html), format!("{PROSE} {PROSE}"));
    }

    #[test]
    fn a_story_in_a_part_class_words_call_boilerplate_is_kept_when_nothing_else_is_left() {
        // pagesix.com: the whole story in `div.article-header`, less than half the page's
        // prose beside related stories and comments; nothing else is left outside such parts.
        // A real header beside an article stays out.
        let story = format!("<p>{PROSE}</p><p>{PROSE}</p><p>{PROSE}</p>");
        let other =
            "<p>Another story, told at length elsewhere, with its own long summary here.</p>";
        let html = format!(
            "<html><body><nav><a href=/>Home</a></nav><div class=box><div class=article-header>\
             <h1>Myers exits</h1><div class=entry-content>{story}</div></div>\
             <div class=related-posts>{other}{other}{other}{other}</div>\
             <div class=comments-area>{other}{other}{other}{other}</div></div>\
             <footer>© Page Six</footer></body></html>"
        );
        assert_eq!(text(&html), format!("{PROSE} {PROSE} {PROSE}"));
        let beside = format!(
            "<html><body><div class=site-header><p>The best gardening site in the county, \
             with news, reviews and more, every single day of the week.</p></div>\
             <div class=entry-content>{story}</div></body></html>"
        );
        assert_eq!(text(&beside), format!("{PROSE} {PROSE} {PROSE}"));
    }

    #[test]
    fn links_to_related_stories_between_paragraphs_leave_the_text_and_a_roundup_is_an_article() {
        let related =
            |n: u32| format!("<h4><a href=/story{n}.html>Another story number {n}</a></h4>");
        let html = format!(
            "<html><body><div class=story><p>{PROSE}</p>{}<p>{PROSE}</p>{}<p>{PROSE}</p>{}</div></body></html>",
            related(1),
            related(2),
            related(3)
        );
        let t = text(&html);
        assert_eq!(t.matches("blackbirds").count(), 3, "{t}");
        // Linked headlines, each with a one-line summary: 40-60 % of the text in links. Twenty
        // of them hold prose enough for an article (a roundup); ten do not (an archive page).
        let roundup = |n: u32| {
            let items: String = (10..10 + n)
                .map(|i| {
                    format!(
                        "<li><a href=/n{i}.html>Headline number {i} of the day, with words</a> \
                         The summary says what happened, and why, in a line.</li>"
                    )
                })
                .collect();
            Page::parse(&format!("<html><body><ul>{items}</ul></body></html>"))
        };
        assert!(article(&roundup(20)).is_some());
        assert!(article(&roundup(10)).is_none());
    }

    #[test]
    fn section_headings_linking_to_their_subject_stay_in_the_article() {
        // A weekly report (firefox-nightly-blog): most `h4`s link nowhere, two link to the bug
        // tracker or a wiki page about the section. They are the article's, not a listing.
        let plain = |n: u32| format!("<h4>Plain section {n}</h4><p>{PROSE}</p>");
        let linked = |n: u32| {
            format!("<h4><a href=https://bugs.example/{n}>Resolved bugs number {n}</a></h4><p>{PROSE}</p>")
        };
        let html = format!(
            "<html><body><article><p>{PROSE}</p>{}{}{}{}{}</article></body></html>",
            plain(1),
            linked(2),
            plain(3),
            linked(4),
            plain(5)
        );
        let t = text(&html);
        assert!(t.contains("Resolved bugs number 2"), "{t}");
        assert!(t.contains("Resolved bugs number 4"), "{t}");
    }

    #[test]
    fn a_gallery_of_captions_in_a_widget_is_left_out_beside_an_article() {
        // bug-1255978: a slideshow's 20 captions in a "widget" hold most of the page's prose,
        // the story beside it about 1,200 chars.
        let captions: String = (1..=20)
            .map(|n| format!("<li><h2>Slide {n}</h2><p>{PROSE} Caption {n}.</p></li>"))
            .collect();
        let gallery =
            format!("<div class='dnd-widget-wrapper type-gallery'><ul>{captions}</ul></div>");
        let story = format!("<p>{PROSE}</p>").repeat(8);
        let html =
            format!("<html><body><div class=text-wrapper>{story}{gallery}</div></body></html>");
        let t = text(&html);
        assert!(!t.contains("Caption 1."), "{t}");
        assert_eq!(t.matches("blackbirds").count(), 8, "{t}");
        // A list-shaped post in a widget wrapper, with nothing else on the page, stays.
        let html = format!("<html><body><p>{PROSE}</p>{gallery}</body></html>");
        assert!(text(&html).contains("Caption 20."), "{}", text(&html));
    }

    #[test]
    fn a_forum_thread_is_all_its_messages() {
        // XenForo: each message's two cells share their first class, and the user cell's
        // heading links the member's page. Every message is the thread's text.
        // One long message makes the first choice that message alone.
        let message = |n: u32, who: &str| {
            let body = format!("<p>{PROSE} Message {n}.</p>").repeat(if n == 2 { 6 } else { 1 });
            format!(
                "<article class='message message--post'><div class=message-inner>\
                 <div class='message-cell message-cell--user'><h4 class=message-name>\
                 <a href=/members/{who}.{n}/ class=username>{who}</a></h4></div>\
                 <div class='message-cell message-cell--main'><div class=message-main>\
                 <div class=message-content>{body}</div></div></div>\
                 </div></article>"
            )
        };
        let html = format!(
            "<html><body><nav><a href=/>Forums</a></nav><div class=block-body>{}{}{}</div>\
             <footer>Forum software by XenForo</footer></body></html>",
            message(1, "Pepemaus"),
            message(2, "yellowkitty"),
            message(3, "Lov100")
        );
        let t = text(&html);
        for n in 1..=3 {
            assert!(
                t.contains(&format!("Message {n}.")),
                "message {n} missing: {t}"
            );
        }
    }

    #[test]
    fn a_subheading_in_a_block_named_headline_is_the_posts() {
        // Neos CMS wraps each node of the body: text, and each subheading in
        // `div.neos-nodetypes-headline`. The post's own title block still stays out.
        let text_node = |n: u32| format!("<div class=neos-nodetypes-text><p>{PROSE} {n}</p></div>");
        let headline = |h: &str| {
            format!("<div class=neos-nodetypes-headline><div><{h}>The influence of heredity</{h}></div></div>")
        };
        let html = format!(
            "<html><body><div class=main-content>{}{}{}{}{}</div></body></html>",
            headline("h1"),
            text_node(1),
            headline("h4"),
            text_node(2),
            text_node(3)
        );
        let t = text(&html);
        assert_eq!(t.matches("The influence of heredity").count(), 1, "{t}");
        assert!(t.starts_with(PROSE), "{t}");
    }

    #[test]
    fn a_listicles_intro_before_its_repeated_items_is_the_articles() {
        // mitvergnuegen.com: an opening paragraph, then ten items of one class, each a title,
        // an image and its text.
        let intro =
            "Autumn is here, and these are the ten walks along the coast that make the most of it, with tea.";
        let item = |n: u32| {
            let body = format!("<p>{PROSE} Walk {n}.</p>").repeat(if n == 2 { 3 } else { 1 });
            format!("<div class=item><h3 class=title>Walk number {n}</h3><figure><img src=/w{n}.jpg></figure><div class=content>{body}</div></div>")
        };
        let html = format!(
            "<html><body><nav><a href=/>Home</a></nav><div class=contents><p>{intro}</p>{}{}{}</div>\
             <footer>© Coast Notes</footer></body></html>",
            item(1),
            item(2),
            item(3)
        );
        let t = text(&html);
        assert!(t.starts_with(intro), "{t}");
        assert!(t.contains("Walk 3."), "{t}");
    }

    #[test]
    fn the_lead_between_the_title_and_the_body_joins_the_article() {
        // Title, byline, lead in the post's header; the body marked apart. The lead joins; the
        // byline, the date and the site around do not.
        let lead =
            "Gardeners along the coast have watched the hedges thin out for three winters now.";
        let html = format!(
            "<html><head><title>Why the hedges thin | Coast Notes</title></head><body>             <nav><a href=/>Home</a> <a href=/about>About</a></nav><article>             <header class=post-header><h1>Why the hedges thin</h1>             <p class=byline>By Jo Bloggs</p><time class=date>3 May 2024</time>             <p class=standfirst>{lead}</p></header>             <div class=entry-content><p>{PROSE}</p><p>{PROSE}</p></div></article>             <div class=sidebar><p>About me: a gardener who writes, sometimes, about hedges.</p></div>             </body></html>"
        );
        assert_eq!(text(&html), format!("{lead} {PROSE} {PROSE}"));
        // Without a heading naming the page before the body, nothing moves.
        let no_title = html.replace("<h1>Why the hedges thin</h1>", "");
        assert_eq!(text(&no_title), format!("{PROSE} {PROSE}"));
    }

    #[test]
    fn the_main_text_taken_instead_of_a_caption_has_its_lead() {
        // ok-magazin.de (Drupal): a gallery's caption in `div.image-text` outscores the body,
        // a few words on a page of far more prose, so the page's main text is taken instead;
        // the intro between the title and that body joins it as it would the best block.
        let lead =
            "Gardeners along the coast have watched the hedges thin out for three winters now.";
        let html = format!(
            "<html><head><title>Why the hedges thin | Coast Notes</title></head><body><article>\
             <h1>Why the hedges thin</h1>\
             <div class=gallery><div class=image-text><p>Photo: the hedge in May, from the lane</p>\
             </div></div><div class=intro><p>{lead}</p></div>\
             <div class=copy><p>{PROSE}</p><p>{PROSE}</p><p>{PROSE}</p><p>{PROSE}</p></div>\
             </article></body></html>"
        );
        assert_eq!(
            text(&html),
            format!("{lead} {PROSE} {PROSE} {PROSE} {PROSE}")
        );
    }

    #[test]
    fn an_article_in_repeated_text_blocks_is_all_of_them_and_post_cards_are_not() {
        // A CMS's text components: one paragraph each, a heading between them.
        let block = |n: u32| format!("<div class='cmp-text text'><p>{PROSE} {n}</p></div>");
        let html = format!(
            "<html><body><nav><a href=/>Home</a></nav><main>{}<h2>Between the blocks</h2>{}{}</main>             <footer>© Coast Notes</footer></body></html>",
            block(1),
            block(2),
            block(3)
        );
        let t = text(&html);
        for n in 1..=3 {
            assert!(
                t.contains(&format!("{PROSE} {n}")),
                "block {n} missing: {t}"
            );
        }
        // Cards of other posts under the post, of one class with the post's own block: left out.
        let card = |n: u32| {
            format!("<div class='cmp-text card'><h3><a href=/p{n}>Another post {n}</a></h3><p>{PROSE}</p></div>")
        };
        let html = format!(
            "<html><body><main><div class='cmp-text body'><p>{PROSE} 0</p><p>{PROSE} 9</p></div>{}{}</main></body></html>",
            card(1),
            card(2)
        );
        let t = text(&html);
        assert!(!t.contains("Another post"), "{t}");
    }

    #[test]
    fn text_between_line_breaks_is_a_paragraph() {
        let html = format!(
            "<html><body><div class=menu><a href=/a>A</a> <a href=/b>B</a></div>\
             <div class=col><p class=titulo>A title</p>{PROSE}<br><br>{PROSE}</div></body></html>"
        );
        assert!(
            text(&html).ends_with(&format!("{PROSE} {PROSE}")),
            "{}",
            text(&html)
        );
    }

    #[test]
    fn a_bem_modifier_names_a_variant_and_a_post_part_holds_no_post() {
        // chip.de: the report's sections carry `--Ads` (each has an ad slot) and hold the
        // text; a rail of teasers under one overlay link each (`rail--trending`) stays out.
        let teaser = |n: u32| {
            format!(
                "<div class=rail__item><h3>Story {n}</h3><span>What happened to someone, somewhere, today</span>\
                 <a class=rail__anchor href=/s{n}></a></div>"
            )
        };
        let html = format!(
            "<html><body><article class=TestReport><section class='TestReport__Section \
             TestReport__Section--Ads'><p>{PROSE}</p><p>{PROSE}</p></section>\
             <section class='TestReport__Section TestReport__Section--Ads'><p>{PROSE}</p></section>\
             <div class='rail rail--trending'>{}{}{}{}</div></article></body></html>",
            teaser(1),
            teaser(2),
            teaser(3),
            teaser(4)
        );
        assert_eq!(text(&html), format!("{PROSE} {PROSE} {PROSE}"));
        // Blogger groups a day's posts in `div.date-outer`: a date part by its class, holding
        // the post (text between `<br>`s beside an image's `div`). The popular posts beside it
        // are a widget.
        let popular: String = (1..=6)
            .map(|n| format!("<li><a href=/p{n}.html>Popular post {n}</a> A summary of it, cut short here...</li>"))
            .collect();
        let html = format!(
            "<html><body><div class='widget Blog'><div class=date-outer><h2 class=date-header>Tuesday</h2>\
             <div class=post-body><div class=separator><img src=a.jpg></div>{PROSE}<br>{PROSE}<br>\
             {PROSE}<br>{PROSE}<br>{PROSE}</div></div></div>\
             <div class='widget PopularPosts'><ul>{popular}</ul></div></body></html>"
        );
        assert_eq!(
            text(&html),
            format!("{PROSE} {PROSE} {PROSE} {PROSE} {PROSE}")
        );
    }

    #[test]
    fn an_id_made_from_its_heading_names_no_role() {
        // docutils and Sphinx name each section after its heading: `sharing-with-...` is
        // about sharing, not a share bar. A share bar's own id still is one.
        let section = |id: &str, title: &str| {
            format!("<div class=section id={id}><h2>{title}</h2><p>{PROSE}</p><p>{PROSE}</p></div>")
        };
        let html = format!(
            "<html><body><div class=document><h1>Evolve</h1><p>{PROSE}</p>{}{}\
             <div id=share-this-page><p>Share this page on every network you know, please.</p></div>\
             </div></body></html>",
            section("sharing-with-a-single-developer", "Sharing with a single developer"),
            section("sharing-with-multiple-developers-1", "Sharing with multiple developers"),
        );
        let t = text(&html);
        assert_eq!(t.matches(PROSE).count(), 5, "{t}");
        assert!(!t.contains("Share this page"), "{t}");
        // heise.de: a subheading's id made for the table of contents, its first words after
        // `nav`, is about the section, not navigation.
        let html = format!(
            "<html><body><article><p>{PROSE}</p>\
             <h3 class=subheading id=nav_nur_die_folie__1>Nur die Folie bleibt zurück</h3>\
             <p>{PROSE}</p></article></body></html>"
        );
        assert!(text(&html).contains("Nur die Folie"), "{}", text(&html));
    }

    #[test]
    fn an_article_element_named_a_site_part_is_one() {
        // A login dialog and comments marked up as `<article>`s beside the post.
        let comment = |n: u32| {
            format!(
                "<article class=comment id=comment-{n}><p>I agree with every word of this, \
                 and I have pruned my own hedge, slowly, the same way, for years and years.</p></article>"
            )
        };
        let html = format!(
            "<html><body><article class='registry-message-modal dark-modal'><p>Welcome to My Site! \
             Check your mail, and confirm the link in it within a day, to finish signing up.</p></article>\
             <article class=post><p>{PROSE}</p><p>{PROSE}</p><p>{PROSE}</p></article>\
             <div class=thread>{}{}{}{}</div></body></html>",
            comment(1),
            comment(2),
            comment(3),
            comment(4)
        );
        assert_eq!(text(&html), format!("{PROSE} {PROSE} {PROSE}"));
    }

    #[test]
    fn a_story_marked_up_as_an_aside_is_found_when_nothing_else_holds_text() {
        // rnz.de: `<main><aside class=nfy-pa>` holds the story; the navigation and the footer
        // stay out. Beside a story of its own, an aside stays out.
        let html = format!(
            "<html><body><header><nav><ul><li><a href=/a>Region</a></li><li><a href=/b>Sport</a></li></ul></nav></header>\
             <main><aside class=nfy-pa><section><article><p>{PROSE}</p><p>{PROSE}</p></article></section></aside></main>\
             <footer><p>Contact us, every day of the week, at the address on our page.</p></footer></body></html>"
        );
        assert_eq!(text(&html), format!("{PROSE} {PROSE}"));
        let beside = html.replace(
            "<main>",
            "<main><div class=story><p>The council met on Monday, and the bridge will close in May.</p>\
             <p>Works start in May and last until the autumn, the council said on Monday night.</p></div>",
        );
        assert!(!text(&beside).contains(PROSE), "{}", text(&beside));
    }

    #[test]
    fn a_post_only_a_script_shows_is_read_from_its_noscript_copy() {
        // Blogger's newer themes: the post in a script template, and a `<noscript>` copy.
        let post = format!("<p>{PROSE}</p><p>{PROSE}</p><p>{PROSE}</p><p>{PROSE}</p>");
        let html = format!(
            "<html><head><title>A post</title></head><body><div class=post-content>\
             <script type='text/template'>{post}</script><noscript>{post}</noscript></div></body></html>"
        );
        let page = Page::parse(&html);
        assert_eq!(article(&page), None);
        let ctx = ExtractContext {
            offset: chrono::FixedOffset::east_opt(0).unwrap(),
            fetched_at: chrono::DateTime::UNIX_EPOCH,
        };
        let x = extract(&page, &ctx).expect("the noscript copy");
        assert_eq!(x.content_text, format!("{PROSE} {PROSE} {PROSE} {PROSE}"));
        assert!(x.content_html.starts_with("<p>"), "{}", x.content_html);
    }

    #[test]
    fn an_anchor_left_open_is_no_link() {
        // `<a name=purpose>` never closed, and `TCLUG<a/>`: every paragraph after sits inside
        // an `<a>` that links nowhere.
        let html = format!(
            "<html><body><h1>Rsync + Stunnel</h1><h2><a name=purpose>Purpose</h2><blockquote>\
             <p>A while back I went to a <a href=http://tclug.org/>TCLUG<a/> meeting.</p><p>{PROSE}</p>\
             <p>{PROSE}</p><p>{PROSE}</p></blockquote></body></html>"
        );
        assert!(
            text(&html).ends_with(&format!("{PROSE} {PROSE} {PROSE}")),
            "{}",
            text(&html)
        );
    }

    #[test]
    fn a_post_with_related_cards_keeps_its_text_and_a_list_of_links_is_no_article() {
        let post = format!(
            "<html><body><article><h1><a href=/p1.html>Post</a></h1><p>{PROSE}</p><p>{PROSE}</p>\
             <p>{PROSE}</p></article><aside><h3><a href=/p2.html>Related</a></h3>\
             <h3><a href=/p3.html>Also</a></h3><h3><a href=/p4.html>More</a></h3>\
             <a href=/p2.html>Read more</a></aside></body></html>"
        );
        assert_eq!(text(&post), format!("{PROSE} {PROSE} {PROSE}"));
        let archive = "<html><body><dl><dt>3 May</dt><dd><a href=/a.html>The herb spiral I pruned</a></dd>\
             <dt>4 May</dt><dd><a href=/b.html>Small lessons from a meadow</a></dd></dl></body></html>";
        assert_eq!(article(&Page::parse(archive)), None);
    }
}
