//! Extraction: a post page plus the blog's learned rules → one post record.
//!
//! The article and title come from the learned rules (first match, the paper's `Apply`); authors
//! and the publication date from the author and date rules (paper §3.5) when they were learned,
//! else from what the page itself declares: JSON-LD, `article:published_time`, `<time datetime>`,
//! `meta name=author`, `rel=author`, hCard. A date is taken from a machine-readable time when
//! the page has one (it carries the offset), else parsed from the shown text in the blog's
//! offset. Whatever could not be extracted is listed in [`Extracted::gaps`] with the reason.

use super::authors::confirm_byline;
use super::bylines::{byline_authors, declared_authors};
use super::dates::{parse_instant, parse_page_date};
use super::head::{json_ld, meta, meta_values, select};
use super::page::{ElementIdx, Page};
use super::rules::Rule;
use chrono::{DateTime, FixedOffset, Utc};

/// The rules used to extract posts of one blog.
pub struct RuleSet {
    /// Article body rule.
    pub article: Rule,
    /// Title rule, when one was learned.
    pub title: Option<Rule>,
    /// Elements these rules select inside the article are left out of it (bylines, titles).
    pub exclude: Vec<Rule>,
    /// Byline rules (paper §3.5), tried in order.
    pub author: Vec<Rule>,
    /// What the page's own author metadata (JSON-LD, `meta name=author`, `rel=author`,
    /// h-card, links to author pages) is worth on this blog, as learning judged it.
    pub author_metadata: AuthorMetadata,
    /// Whether the page's own publication-date metadata (JSON-LD, `article:published_time`,
    /// `<time datetime>`) is read when the date rule's element carries no machine time: false
    /// when learning found it disagreeing with the feed's dates
    /// ([`crate::core::meta::DECLARED_DATES`]).
    pub declared_dates: bool,
    /// Date rule (paper §3.5) and the format its dates are shown in.
    pub date: Option<(Rule, Option<String>)>,
    /// The people the blog's feed names as authors ([`super::authors::feed_people`]): a
    /// byline's text is split at commas only into these ([`names_in`]).
    pub people: Vec<String>,
}

/// What a blog's pages' own author metadata ([`super::bylines::page_authors`]: JSON-LD `author`,
/// `meta name=author`, `article:author`, `rel=author`, h-card, links to author pages) is worth,
/// learned from the feed entries (issue 42 part 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthorMetadata {
    /// The same people on every page of a blog whose feed names several
    /// ([`crate::core::meta::DECLARED_AUTHORS`] as a site-wide author): never read.
    SiteWide,
    /// Read only where no byline rule names anyone.
    Fallback,
    /// It varies between posts and names the feed's authors on most sampled pages: it also
    /// checks each page's byline ([`super::authors::confirm_byline`]). A byline that names
    /// none of its people is the rule missing on this page; co-authors it names beside the
    /// byline's are added.
    Confirms,
}

/// What extraction needs besides the page: the blog's offset (for local times shown without
/// one) and when the page was fetched (for "3 years ago").
#[derive(Debug, Clone, Copy)]
pub struct ExtractContext {
    /// The blog's UTC offset, from its feed's dates.
    pub offset: FixedOffset,
    /// Fetch time of the page.
    pub fetched_at: DateTime<Utc>,
}

/// Fields extracted from one post page.
#[derive(Debug, Clone, PartialEq)]
pub struct Extracted {
    /// Title text, whitespace collapsed.
    pub title: Option<String>,
    /// Inner HTML of the article node.
    pub content_html: String,
    /// Visible text of the article node, whitespace collapsed.
    pub content_text: String,
    /// Author names: from the author rule, else as the page declares them.
    pub authors: Vec<String>,
    /// Publication time: the page's machine-readable time, else the date rule's text parsed.
    pub published: Option<DateTime<FixedOffset>>,
    /// The date as the page shows it (the date rule's text), if any.
    pub published_raw: Option<String>,
    /// Last update time the page declares, if any.
    pub updated: Option<DateTime<FixedOffset>>,
    /// Categories and tags the page gives the post ([`declared_tags`]), in page order.
    pub tags: Vec<String>,
    /// Fields that could not be extracted: (field, reason for a person).
    pub gaps: Vec<(GapField, String)>,
    /// Which extractor gave each field.
    pub extracted_by: ExtractedBy,
}

super::vocabulary! {
    /// What gave a field of a post record.
    pub enum Extractor {
        /// The blog's feed entry: the truth for its post's authors and dates (paper §3.2).
        Feed = "feed",
        /// The rules learned from the blog's feed (paper §3.4–§3.5).
        Rules = "rules",
        /// The page alone: its own metadata (JSON-LD, OpenGraph, `<title>`, `<time>`) or the
        /// generic extractor ([`super::fallback`]).
        Fallback = "fallback",
    }
}

/// Which extractor gave each field of a post record; `None` for a field nothing gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExtractedBy {
    /// The title.
    pub title: Option<Extractor>,
    /// The article (`content_html`, `content_text`).
    pub content: Extractor,
    /// The author names.
    pub authors: Option<Extractor>,
    /// The publication date.
    pub published: Option<Extractor>,
}

super::vocabulary! {
    /// A field of a post that can be missing from its record (a gap), with a reason.
    pub enum GapField {
        /// No author name.
        Author = "author",
        /// No publication date.
        Published = "published",
        /// Comments the blog declares but the archive could not take.
        Comments = "comments",
    }
}

/// Extracts a post. `None` when the article rule selects nothing or only empty text: the page is
/// then not a post of this blog.
pub fn extract(page: &Page, rules: &RuleSet, ctx: &ExtractContext) -> Option<Extracted> {
    let article = rules.article.apply_first(page)?;
    let content_text = page.text_of(article);
    if content_text.trim().is_empty() && page.inner_html(article).trim().is_empty() {
        return None;
    }
    let title_idx = rules.title.as_ref().and_then(|r| r.apply_first(page));
    let ruled_title = title_idx.map(|i| page.text_of(i)).filter(|t| !t.is_empty());
    let title_by = if ruled_title.is_some() {
        Some(Extractor::Rules)
    } else {
        Some(Extractor::Fallback)
    };
    let title = ruled_title.or_else(|| super::blocks::page_title(page));
    let title_by = title_by.filter(|_| title.is_some());
    // The title is not part of the article: when the title element (or a small header around
    // it) is inside the article element, leave it out, with what the exclude rules select.
    let header = title_idx
        .filter(|&t| t != article && page.contains(article, t))
        .and_then(|t| {
            let mut child = t;
            while page.elements[child as usize].parent != Some(article) {
                child = page.elements[child as usize].parent?;
            }
            let (c, te) = (&page.elements[child as usize], &page.elements[t as usize]);
            ((c.end - c.start) <= (te.end - te.start) + 200
                && (c.end - c.start) * 2 < content_text.chars().count() as u32)
                .then_some(child)
        });
    let mut skip: Vec<ElementIdx> = rules
        .exclude
        .iter()
        .flat_map(|r| r.apply(page))
        .filter(|&x| x != article && page.contains(article, x))
        .collect();
    skip.extend(header);
    skip.sort_unstable();
    skip.dedup();
    let (content_html, content_text) = if skip.is_empty() {
        (page.inner_html(article), content_text)
    } else {
        (
            page.inner_html_excluding(article, &skip),
            page.text_excluding(article, &skip),
        )
    };
    let mut gaps = Vec::new();
    let mut authors = rules
        .author
        .iter()
        .find_map(|r| r.apply_first(page))
        .map(|a| byline_authors(page, a, &rules.people))
        .unwrap_or_default();
    let mut authors_by = (!authors.is_empty()).then_some(Extractor::Rules);
    if rules.author_metadata == AuthorMetadata::Confirms && !authors.is_empty() {
        let (confirmed, replaced) = confirm_byline(authors, &declared_authors(page));
        authors = confirmed;
        if replaced {
            authors_by = Some(Extractor::Fallback);
        }
    }
    if authors.is_empty() && rules.author_metadata != AuthorMetadata::SiteWide {
        authors = declared_authors(page);
        authors_by = (!authors.is_empty()).then_some(Extractor::Fallback);
    }
    if authors.is_empty() {
        let why = if rules.author_metadata == AuthorMetadata::SiteWide {
            "no byline names the post's author and the page's author metadata names the site's owner on every post"
        } else if !rules.author.is_empty() {
            "the author rule matched no name on this page and the page declares none"
        } else {
            "no author rule was learned and the page declares none"
        };
        gaps.push((GapField::Author, why.to_string()));
    }
    let date_node = rules.date.as_ref().and_then(|(r, _)| r.apply_first(page));
    let published_raw = date_node.map(|d| page.text_of(d)).filter(|t| !t.is_empty());
    let machine_raw = date_node.and_then(|d| super::meta::machine_time_of(page, d));
    let machine = machine_raw
        .as_deref()
        .and_then(|m| parse_instant(m, Some(ctx.offset)));
    let declared_raw = if rules.declared_dates {
        declared_published(page)
    } else {
        None
    };
    let declared = declared_raw
        .as_deref()
        .and_then(|d| parse_instant(d, Some(ctx.offset)));
    let shown = published_raw.as_deref().and_then(|t| {
        parse_page_date(
            t,
            rules.date.as_ref().and_then(|(_, f)| f.as_deref()),
            ctx.offset,
            ctx.fetched_at,
        )
    });
    // The date rule's element may show a day alone (`<time datetime="2019-07-26">`, "July 26,
    // 2019"), in the blog's zone, which the page does not say: the page's own exact time is
    // preferred when it falls on that day in some zone.
    let rule_day = match (machine, machine_raw.as_deref()) {
        (Some(m), Some(raw)) if !has_time(raw) => Some(m),
        (Some(_), _) => None,
        (None, _) => match &shown {
            Some(d) => (!d.has_time).then_some(d.instant),
            // No date rule: the page's own metadata may give the day alone.
            None => declared.filter(|_| declared_raw.as_deref().is_some_and(|r| !has_time(r))),
        },
    };
    // Dates in their own offset (issue 42): of the page's exact instants, the one whose local
    // day, in the offset it is written in, is the day shown; else one on that day somewhere.
    let same_day = rule_day.and_then(|day| {
        let exact = exact_instants(page);
        let shown_day = day.date_naive();
        exact
            .iter()
            .find(|e| e.date_naive() == shown_day)
            .or_else(|| exact.iter().find(|e| on_day_somewhere(**e, day)))
            .copied()
    });
    let shown = shown.map(|d| d.instant);
    let published_by = if same_day.is_some() {
        Some(Extractor::Fallback)
    } else if machine.is_some() {
        Some(Extractor::Rules)
    } else if declared.is_some() {
        Some(Extractor::Fallback)
    } else {
        shown.map(|_| Extractor::Rules)
    };
    let published = same_day.or(machine).or(declared).or(shown);
    if published.is_none() {
        let why = match (&rules.date, &published_raw) {
            (None, _) => "no date rule was learned and the page declares no machine-readable date"
                .to_string(),
            (Some(_), None) => "the date rule matched nothing on this page".to_string(),
            (Some(_), Some(raw)) => format!("the date shown ({raw:?}) could not be parsed"),
        };
        gaps.push((GapField::Published, why));
    }
    Some(Extracted {
        title,
        content_html: content_html.trim().to_string(),
        content_text,
        authors,
        published,
        published_raw,
        updated: declared_updated(page).and_then(|d| parse_instant(&d, Some(ctx.offset))),
        tags: declared_tags(page),
        gaps,
        extracted_by: ExtractedBy {
            title: title_by,
            content: Extractor::Rules,
            authors: authors_by,
            published: published_by,
        },
    })
}

/// Whether a machine-readable time gives a time of day (`2019-07-26T07:38`), not a day alone.
fn has_time(raw: &str) -> bool {
    raw.trim().len() > 10 && raw.contains(':')
}

/// Whether the instant `exact` falls on the calendar day of `day` (midnight of it in any
/// offset) in some time zone: UTC−12 to UTC+14.
fn on_day_somewhere(exact: DateTime<FixedOffset>, day: DateTime<FixedOffset>) -> bool {
    let start = day
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .expect("midnight")
        .and_utc()
        - chrono::Duration::hours(14);
    let end = start + chrono::Duration::hours(24 + 14 + 12);
    let e = exact.with_timezone(&Utc);
    e >= start && e < end
}

/// The publication time the page's own metadata declares (JSON-LD `datePublished`,
/// `article:published_time`, the first `<time datetime>`, `abbr.published`), read with
/// `offset` when it carries none.
pub fn page_published(page: &Page, offset: FixedOffset) -> Option<DateTime<FixedOffset>> {
    declared_published(page).and_then(|d| parse_instant(&d, Some(offset)))
}

/// The exact instants the page's own metadata gives, each in the offset it is written in:
/// JSON-LD `datePublished`, `article:published_time`, every `<time datetime>` with a time of
/// day and an offset. Day-only values and times without an offset are left out.
fn exact_instants(page: &Page) -> Vec<DateTime<FixedOffset>> {
    let mut raw: Vec<String> = json_ld(page)
        .iter()
        .filter_map(|v| {
            v.get("datePublished")
                .and_then(|d| d.as_str())
                .map(str::to_string)
        })
        .collect();
    raw.extend(meta_values(
        page,
        "meta[property='article:published_time']",
        "content",
    ));
    raw.extend(meta_values(page, "time[datetime]", "datetime"));
    raw.iter()
        .filter(|r| has_time(r))
        .filter_map(|r| DateTime::parse_from_rfc3339(r.trim()).ok())
        .collect()
}

/// The description the page declares of itself: OpenGraph `og:description`, `<meta
/// name=description>`, else JSON-LD `description`. Most engines write the post's opening
/// words there (Hexo, WordPress SEO plugins, Hugo, jekyll-seo-tag).
pub(super) fn declared_description(page: &Page) -> Option<String> {
    meta(page, "meta[property='og:description']", "content")
        .or_else(|| meta(page, "meta[name='description']", "content"))
        .or_else(|| {
            json_ld(page).iter().find_map(|v| {
                v.get("description")
                    .and_then(|d| d.as_str())
                    .map(super::text::collapse_whitespace)
            })
        })
}

/// The categories and tags a post page gives its post, in page order, each once (case
/// folded): the names of its term links ([`super::taxonomy::term_links`]: `rel="tag"`,
/// `rel="category"` (WordPress, Hexo, Nikola: `rel="category tag"`), links into a taxonomy
/// page (`/tag/x/`, `/category/x/`, `/topics/x/`, …; not the taxonomy's own index, `/tags/`)
/// outside navigation, asides, menus, sidebars, widgets and tag clouds), then OpenGraph
/// `article:tag` and JSON-LD `keywords`. At most 50.
pub fn declared_tags(page: &Page) -> Vec<String> {
    let mut tags: Vec<String> = Vec::new();
    let mut push = |t: &str| {
        let t = super::text::collapse_whitespace(t.trim_start_matches('#'));
        if !t.is_empty()
            && t.chars().count() <= 80
            && tags.len() < 50
            && !tags.iter().any(|x| x.to_lowercase() == t.to_lowercase())
        {
            tags.push(t);
        }
    };
    for link in super::taxonomy::term_links(page) {
        push(&link.name);
    }
    for e in select(page, "meta[property='article:tag']") {
        push(e.value().attr("content").unwrap_or_default());
    }
    for v in json_ld(page) {
        match v.get("keywords") {
            Some(serde_json::Value::String(s)) => s.split(',').for_each(&mut push),
            Some(serde_json::Value::Array(a)) => {
                a.iter().filter_map(|k| k.as_str()).for_each(&mut push)
            }
            _ => {}
        }
    }
    tags
}

pub(super) fn declared_updated(page: &Page) -> Option<String> {
    json_ld(page)
        .iter()
        .find_map(|v| {
            v.get("dateModified")
                .and_then(|d| d.as_str())
                .map(str::to_string)
        })
        .or_else(|| meta(page, "meta[property='article:modified_time']", "content"))
        .or_else(|| meta(page, "time.updated[datetime]", "datetime"))
}

pub(super) fn declared_published(page: &Page) -> Option<String> {
    json_ld(page)
        .iter()
        .find_map(|v| {
            v.get("datePublished")
                .and_then(|d| d.as_str())
                .map(str::to_string)
        })
        .or_else(|| meta(page, "meta[property='article:published_time']", "content"))
        .or_else(|| meta(page, "time[datetime]", "datetime"))
        .or_else(|| meta(page, "abbr.published[title]", "title"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_of_real_engine_pages_leave_menus_and_clouds_out() {
        // Pelican: the category menu in the site header is not the post's; "In …" and "tags:"
        // inside the article are.
        let pelican = Page::parse(include_str!(
            "../../fixtures/sites/pelican/site/2016/03/small-lessons-from-a-sun-warmed-herb-spiral.html"
        ));
        assert_eq!(
            declared_tags(&pelican),
            ["Tools & Sheds", "bees", "pruning", "soil"]
        );
        // WordPress: `rel="category tag"` and `rel="tag"` in the entry footer.
        let wordpress = Page::parse(include_str!(
            "../../fixtures/wordpress/site/2019/11/07/a-punctual-week-with-the-night-train/index.html"
        ));
        let tags = declared_tags(&wordpress);
        assert_eq!(tags.first().map(String::as_str), Some("Journeys"));
        assert!(tags.iter().any(|t| t == "alps") && tags.iter().any(|t| t == "food"));
    }

    #[test]
    fn tags_from_metadata_are_deduplicated_case_insensitively() {
        let page = Page::parse(
            r#"<html><head><meta property="article:tag" content="Rust">
            <script type="application/ld+json">{"@type":"BlogPosting","keywords":"rust, web , Archiving"}</script>
            </head><body><nav><a href="/tag/menu/">menu</a></nav>
            <div class="widget tagcloud"><a href="/tag/cloud/">cloud</a></div>
            <article><a href="/tags/rust/" rel="tag">rust</a></article></body></html>"#,
        );
        assert_eq!(declared_tags(&page), ["rust", "web", "Archiving"]);
    }

    /// Issue 42 part 1: on a blog whose author metadata names the feed's authors, it checks
    /// each page's byline. An absolute-path rule that lands on a photo credit on a page with a
    /// featured image gives way to the declared author; co-authors the byline element leaves
    /// out are added. Where learning found the metadata no evidence, the byline stands.
    #[test]
    fn author_metadata_that_confirms_corrects_a_byline_rule_that_misses() {
        let page = |first: &str, authors: &str| {
            Page::parse(&format!(
                r#"<html><head><script type="application/ld+json">{{"@type":"BlogPosting","author":[{authors}]}}</script></head>
                <body><article><p>{first}</p><p>Posted by Ann Smith</p><div class=entry>Body text of the post, long enough to stand.</div></article></body></html>"#
            ))
        };
        let rules = |author_metadata| RuleSet {
            article: Rule::parse("//*[@class='entry']").unwrap(),
            title: None,
            exclude: Vec::new(),
            author: vec![Rule::parse("/html/body/article/p[1]").unwrap()],
            author_metadata,
            declared_dates: true,
            date: None,
            people: vec!["Ann Smith".into(), "Li Wei".into()],
        };
        let ctx = ExtractContext {
            offset: FixedOffset::east_opt(0).unwrap(),
            fetched_at: DateTime::from_timestamp(1_750_000_000, 0).unwrap(),
        };
        let authors = |p: &Page, m| extract(p, &rules(m), &ctx).unwrap().authors;
        let credit = page(
            "Photo by Kim Lund",
            r#"{"@type":"Person","name":"Ann Smith"}"#,
        );
        assert_eq!(
            authors(&credit, AuthorMetadata::Fallback),
            ["Photo by Kim Lund"]
        );
        assert_eq!(authors(&credit, AuthorMetadata::Confirms), ["Ann Smith"]);
        let two = page(
            "By Ann Smith",
            r#"{"@type":"Person","name":"Ann Smith"},{"@type":"Person","name":"Li Wei"}"#,
        );
        assert_eq!(authors(&two, AuthorMetadata::Fallback), ["Ann Smith"]);
        assert_eq!(
            authors(&two, AuthorMetadata::Confirms),
            ["Ann Smith", "Li Wei"]
        );
        // The byline names one of the declared people in its own spelling: it stands.
        let initial = page("By A. Smith", r#"{"@type":"Person","name":"Ann Smith"}"#);
        assert_eq!(authors(&initial, AuthorMetadata::Confirms), ["A. Smith"]);
    }
}
