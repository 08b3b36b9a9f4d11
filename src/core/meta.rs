//! Author and date rules (paper §3.5); the dates they extract are read by `core::dates`.
//!
//! Authors: a name appears in many places (byline, sidebar, comments), so a candidate's score is
//! the Sørensen–Dice similarity to the feed entry's author(s) divided by `1 + d`, where `d` is
//! the tree distance to the page's article node: the byline next to the post wins over the same
//! name in a sidebar. Dates: the same, against many renderings of the feed entry's date
//! ([`super::dates::date_renderings`]: long and short month names, day-first and month-first, ISO, with and
//! without a 24- or 12-hour time, and "N years ago" from the fetch time); an element whose
//! machine-readable `datetime`/`content`/`title` attribute is the entry's instant scores as an
//! exact match. Only short elements (≤ [`MAX_META_CHARS`] characters) that are not the article
//! node or its ancestors are candidates. The winning rendering's format is kept with the rule
//! so dates of other posts parse back with it.

use super::authors::same_person;
use super::dates::{date_renderings, parse_instant};
use super::page::{ElementIdx, Page};
use super::rules::{rule_for, RuleKind};
use super::rules::{Field, LearnedRule};
use super::text::{bigram_set, dice_from_counts, normalise};
use chrono::{DateTime, FixedOffset, Utc};
use rustc_hash::{FxHashMap, FxHashSet};

/// Longest element text considered for an author or a date.
pub const MAX_META_CHARS: u32 = 120;

/// Tree distance of every element to `anchor` (edges on the path through their lowest common
/// ancestor), in one pass.
fn distances(page: &Page, anchor: ElementIdx) -> Vec<u32> {
    let n = page.elements.len();
    let mut on_chain = vec![false; n];
    let mut cur = Some(anchor);
    while let Some(c) = cur {
        on_chain[c as usize] = true;
        cur = page.elements[c as usize].parent;
    }
    let anchor_depth = page.elements[anchor as usize].depth;
    let mut lca = vec![0u32; n];
    let mut out = vec![0u32; n];
    for i in 0..n {
        let e = &page.elements[i];
        lca[i] = if on_chain[i] {
            i as u32
        } else {
            e.parent.map_or(0, |p| lca[p as usize])
        };
        let l = page.elements[lca[i] as usize].depth;
        out[i] = (e.depth - l) + (anchor_depth - l);
    }
    out
}

fn is_ancestor_or_self(page: &Page, a: ElementIdx, b: ElementIdx) -> bool {
    page.contains(a, b)
}

/// One training page for author and date rules.
pub struct MetaSample<'a> {
    /// The post page.
    pub page: &'a Page,
    /// The article node on this page (the learned article rule's match).
    pub article: ElementIdx,
    /// The entry's author names (feed, or the page's own declarations).
    pub authors: Vec<String>,
    /// The author names the page's own metadata declares
    /// ([`crate::core::bylines::page_authors`]): judged site-wide or not against `authors`.
    pub declared: Vec<String>,
    /// The entry's publication time with the feed's offset.
    pub published: Option<DateTime<FixedOffset>>,
    /// The publication time the page's own metadata declares
    /// ([`crate::core::extract::page_published`]): judged against `published`.
    pub declared_published: Option<DateTime<FixedOffset>>,
    /// When the page was fetched (for relative dates).
    pub fetched_at: DateTime<Utc>,
}

/// The machine-readable time of an element: its `datetime`, `content` or `title` attribute, or
/// that of a `<time datetime>` inside it.
pub fn machine_time_of(page: &Page, idx: ElementIdx) -> Option<String> {
    machine_time(page, idx)
}

fn machine_time(page: &Page, idx: ElementIdx) -> Option<String> {
    for a in ["datetime", "content", "title"] {
        if let Some(v) = page.attr(idx, a) {
            return Some(v.to_string());
        }
    }
    let el = page.element_ref(idx);
    let sel = scraper::Selector::parse("time[datetime]").expect("static selector");
    el.select(&sel)
        .next()
        .and_then(|t| t.value().attr("datetime"))
        .map(str::to_string)
}

/// A page's best author or date candidate: (rule, score, format, the element's normalised
/// text).
type Candidate = (String, f32, String, String);

/// Best (rule, score, format, the element's normalised text) of one page for authors
/// (`instant = None`) or dates.
fn best_meta(
    page: &Page,
    article: ElementIdx,
    targets: &[(String, String)],
    instant: Option<i64>,
) -> Option<Candidate> {
    let dist = distances(page, article);
    let sets: Vec<(&str, rustc_hash::FxHashSet<u64>)> = targets
        .iter()
        .map(|(f, t)| (f.as_str(), bigram_set(&normalise(t))))
        .collect();
    let mut best: Option<(f32, u32, RuleKind, ElementIdx, String)> = None;
    for (i, e) in page.elements.iter().enumerate() {
        let i = i as ElementIdx;
        if e.end <= e.start
            || e.end - e.start > MAX_META_CHARS
            || is_ancestor_or_self(page, i, article)
        {
            continue;
        }
        let text = bigram_set(page.normalised_text_of(i));
        let (mut score, mut format) = (0.0f64, String::new());
        for (f, t) in &sets {
            let inter = text.iter().filter(|b| t.contains(b)).count();
            let d = dice_from_counts(inter, text.len(), t.len());
            if d > score {
                score = d;
                format = f.to_string();
            }
        }
        if let (Some(want), Some(raw)) = (instant, machine_time(page, i)) {
            if parse_instant(&raw, None).is_some_and(|t| t.timestamp() == want) {
                score = score.max(1.0);
                format = "machine".into();
            }
        }
        let s = (score / (1.0 + dist[i as usize] as f64)) as f32;
        if s <= 0.0 {
            continue;
        }
        let Some((_, kind)) = rule_for(page, i) else {
            continue;
        };
        let key = (
            s,
            std::cmp::Reverse(e.end - e.start),
            std::cmp::Reverse(kind),
        );
        if best
            .as_ref()
            .is_none_or(|b| key > (b.0, std::cmp::Reverse(b.1), std::cmp::Reverse(b.2)))
        {
            best = Some((s, e.end - e.start, kind, i, format));
        }
    }
    let (score, _, _, idx, format) = best?;
    let (rule, _) = rule_for(page, idx)?;
    Some((
        rule,
        score,
        format,
        page.normalised_text_of(idx).iter().collect(),
    ))
}

/// Votes for one rule: (pages, summed score, pages per date format).
type Tally = (u32, f64, FxHashMap<String, u32>);

/// The voted rules, best first (votes, then summed score): each with its most common format.
/// Rules fewer than one page in five agrees on are noise and dropped.
fn vote(field: Field, per_page: Vec<Option<(String, f32, String)>>) -> Vec<(LearnedRule, String)> {
    let samples = per_page.len() as u32;
    let mut votes: FxHashMap<String, Tally> = FxHashMap::default();
    for (rule, score, format) in per_page.into_iter().flatten() {
        let v = votes.entry(rule).or_default();
        v.0 += 1;
        v.1 += score as f64;
        *v.2.entry(format).or_default() += 1;
    }
    let mut ranked: Vec<(String, Tally)> = votes
        .into_iter()
        .filter(|(_, v)| v.0 > 0 && v.0 * 5 >= samples.max(1))
        .collect();
    ranked.sort_by(|a, b| {
        (b.1 .0, b.1 .1)
            .partial_cmp(&(a.1 .0, a.1 .1))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(&b.0))
    });
    ranked
        .into_iter()
        .map(|(xpath, (n, sum, formats))| {
            let format = formats
                .into_iter()
                .max_by_key(|(f, c)| (*c, std::cmp::Reverse(f.clone())))
                .map(|(f, _)| f)
                .unwrap_or_default();
            (
                LearnedRule {
                    field,
                    xpath,
                    score: sum / n as f64,
                    votes: n,
                    samples,
                },
                format,
            )
        })
        .collect()
}

/// One author sample: the page's best author candidate and what else the page shows.
#[derive(Debug)]
struct AuthorSample {
    /// The best candidate: (rule, score, format).
    best: Option<(String, f32, String)>,
    /// The best candidate's normalised text.
    text: Option<String>,
    /// The entry's author whose element `best` is.
    name: String,
    /// The entry's authors, one per line.
    entry: String,
    /// The authors the page's metadata declares, one per line.
    declared: String,
    /// The hashes of every short text outside the article.
    short_texts: FxHashSet<u64>,
}

/// Each page's best author and date candidates, one page at a time (pages need not be held),
/// then the votes.
#[derive(Debug, Default)]
pub struct MetaVotes {
    authors: Vec<AuthorSample>,
    dates: Vec<Option<(String, f32, String)>>,
    /// Per sample with both a feed date and a declared one: whether they agree.
    declared_dates: Vec<bool>,
}

/// What [`MetaVotes::unreliable_dates`] names for the page's own date metadata when it
/// disagrees with the feed: stored as an `unreliable-date` rule, extraction then does not read
/// it.
pub const DECLARED_DATES: &str = "page metadata";

/// A declared date within this many hours of the feed's agrees with it (a date shown without
/// its time, or in another zone).
pub const DATE_AGREEMENT_HOURS: i64 = 36;

/// At most this many of an entry's authors are looked for on its page.
const MAX_AUTHORS_PER_SAMPLE: usize = 5;

/// What [`MetaVotes::site_wide_authors`] names for the page's own author metadata (JSON-LD,
/// `meta name=author`, `article:author`, `rel=author`, h-card) when it is the same on every
/// page: stored as a `site-wide-author` rule, extraction then does not read it.
pub const DECLARED_AUTHORS: &str = "page metadata";

impl MetaVotes {
    /// Adds one page: its best author candidate (when the sample has authors) and its best date
    /// candidate (when it has a publication time).
    pub fn add(&mut self, s: &MetaSample<'_>) {
        if !s.authors.is_empty() {
            // Each name on its own (issue 42): the smallest element holding one author's name,
            // never the row of author cards that holds all the names with their job titles.
            // The page's vote goes to the rule most of its names chose, the first name's on a
            // tie.
            let per_name: Vec<(String, Option<Candidate>)> = s
                .authors
                .iter()
                .take(MAX_AUTHORS_PER_SAMPLE)
                .map(|n| {
                    let best = best_meta(s.page, s.article, &[(String::new(), n.clone())], None);
                    (n.clone(), best)
                })
                .collect();
            let chosen = |rule: &str| {
                per_name
                    .iter()
                    .filter(|(_, b)| b.as_ref().is_some_and(|b| b.0 == rule))
                    .count()
            };
            let (name, best) = per_name
                .iter()
                .enumerate()
                .max_by_key(|(i, (_, b))| {
                    (
                        b.as_ref().map_or(0, |b| chosen(&b.0)),
                        std::cmp::Reverse(*i),
                    )
                })
                .map(|(_, p)| p.clone())
                .expect("authors is not empty");
            let text = best.as_ref().map(|b| b.3.clone());
            self.authors.push(AuthorSample {
                best: best.map(|(r, sc, f, _)| (r, sc, f)),
                text,
                name,
                entry: s.authors.join("\n"),
                declared: s.declared.join("\n"),
                short_texts: short_texts(s.page, s.article),
            });
        }
        if let (Some(p), Some(d)) = (s.published, s.declared_published) {
            self.declared_dates
                .push((d - p).num_hours().abs() <= DATE_AGREEMENT_HOURS);
        }
        if let Some(p) = s.published {
            self.dates.push(
                best_meta(
                    s.page,
                    s.article,
                    &date_renderings(&p, s.fetched_at),
                    Some(p.timestamp()),
                )
                .map(|(r, sc, f, _)| (r, sc, f)),
            );
        }
    }

    /// The samples whose best author candidate is `rule`.
    fn won_by<'a>(&'a self, rule: &'a str) -> impl Iterator<Item = &'a AuthorSample> + 'a {
        self.authors
            .iter()
            .filter(move |s| s.best.as_ref().is_some_and(|(r, _, _)| r == rule))
    }

    /// What repeats identically on every page while the feed names different authors: an
    /// author rule whose one text (where it won) is on every sampled page (a footer "© 2026
    /// Name", an "About me" box), and [`DECLARED_AUTHORS`] when the page's metadata names the
    /// same people on every post. Learned per blog from the feed entries (issue 13).
    pub fn site_wide_authors(&self) -> Vec<String> {
        let several_authors = self.authors.len() >= 3
            && self
                .authors
                .iter()
                .map(|s| s.entry.as_str())
                .collect::<FxHashSet<_>>()
                .len()
                >= 2;
        let rules: FxHashSet<&str> = self
            .authors
            .iter()
            .filter_map(|s| s.best.as_ref().map(|(r, _, _)| r.as_str()))
            .collect();
        let mut out: Vec<String> = rules
            .into_iter()
            .filter(|rule| {
                if !several_authors {
                    return false;
                }
                let texts: FxHashSet<&str> = self
                    .won_by(rule)
                    .filter_map(|s| s.text.as_deref())
                    .collect();
                texts.len() == 1
                    && texts.iter().all(|one| {
                        let h = text_hash(one.chars());
                        self.authors.iter().all(|s| s.short_texts.contains(&h))
                    })
            })
            .map(str::to_string)
            .collect();
        out.sort_unstable();
        // The metadata: the same on every page that has some, over entries naming different
        // authors.
        let declaring: Vec<&AuthorSample> = self
            .authors
            .iter()
            .filter(|s| !s.declared.is_empty())
            .collect();
        let entries: FxHashSet<&str> = declaring.iter().map(|s| s.entry.as_str()).collect();
        let declared: FxHashSet<&str> = declaring.iter().map(|s| s.declared.as_str()).collect();
        if declaring.len() >= 2 && entries.len() >= 2 && declared.len() == 1 {
            out.push(DECLARED_AUTHORS.to_string());
        }
        out
    }

    /// [`DECLARED_AUTHORS`] when the page's own author metadata confirms bylines on this blog
    /// (issue 42 part 1): at least two sampled pages declare authors, not the same ones on
    /// every page, and on at least 80 % of them each declared name is one of the entry's
    /// authors ([`same_person`]). Never with [`Self::site_wide_authors`]' metadata.
    pub fn confirming_authors(&self) -> Option<&'static str> {
        let declaring: Vec<&AuthorSample> = self
            .authors
            .iter()
            .filter(|s| !s.declared.is_empty())
            .collect();
        let varies = declaring
            .iter()
            .map(|s| s.declared.as_str())
            .collect::<FxHashSet<_>>()
            .len()
            >= 2;
        let agreeing = declaring
            .iter()
            .filter(|s| {
                s.declared
                    .lines()
                    .all(|d| s.entry.lines().any(|e| same_person(d, e)))
            })
            .count();
        (declaring.len() >= 2 && varies && agreeing * 10 >= declaring.len() * 8)
            .then_some(DECLARED_AUTHORS)
    }

    /// The author rules: the winner, and the runner-up as a fallback for pages where the winner
    /// matches nothing (themes show some authors in a byline and others in an author box).
    /// Empty when too few pages agree; never a site-wide text ([`Self::site_wide_authors`]).
    pub fn authors(&self) -> Vec<LearnedRule> {
        let site_wide = self.site_wide_authors();
        // A rule names the authors: on most pages where it won, its text holds the name it
        // was chosen for (≥ 70 % of its bigrams: "Posted by Jo Bloggs on 3 May" does), not a
        // sentence that shares a few letters with it.
        let agrees = |rule: &str| {
            let (mut won, mut holds) = (0, 0);
            for s in self.won_by(rule) {
                won += 1;
                let names = bigram_set(&normalise(&s.name));
                let text = bigram_set(&normalise(s.text.as_deref().unwrap_or("")));
                let inside = names.iter().filter(|b| text.contains(b)).count();
                holds += usize::from(!names.is_empty() && inside * 10 >= names.len() * 7);
            }
            holds * 2 > won
        };
        let best = self.authors.iter().map(|s| s.best.clone()).collect();
        vote(Field::Author, best)
            .into_iter()
            .filter(|(r, _)| !site_wide.contains(&r.xpath) && agrees(&r.xpath))
            .take(2)
            .map(|(r, _)| r)
            .collect()
    }

    /// [`DECLARED_DATES`] when the page's own date metadata disagrees with the feed's dates
    /// (by more than [`DATE_AGREEMENT_HOURS`]) on most of at least two sampled pages that have
    /// both: a theme whose first `<time datetime>` is a widget's, metadata giving the build
    /// date. Learned per blog from the feed entries (issue 13).
    pub fn unreliable_dates(&self) -> Option<&'static str> {
        let wrong = self
            .declared_dates
            .iter()
            .filter(|&&agrees| !agrees)
            .count();
        (self.declared_dates.len() >= 2 && wrong * 2 > self.declared_dates.len())
            .then_some(DECLARED_DATES)
    }

    /// The date rule and the date format it shows. `None` when too few pages agree.
    pub fn date(&self) -> Option<(LearnedRule, String)> {
        vote(Field::Date, self.dates.clone()).into_iter().next()
    }
}

/// The hash of a normalised text.
fn text_hash(text: impl Iterator<Item = char>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    text.for_each(|c| c.hash(&mut h));
    h.finish()
}

/// The hashes of the normalised texts of the page's short elements (≤ [`MAX_META_CHARS`])
/// outside `article`: what a site-wide line would be one of.
fn short_texts(page: &Page, article: ElementIdx) -> FxHashSet<u64> {
    let article = page.subtree(article);
    (0..page.elements.len() as ElementIdx)
        .filter(|&i| {
            let e = &page.elements[i as usize];
            e.end > e.start && e.end - e.start <= MAX_META_CHARS && !article.contains(&i)
        })
        .map(|i| text_hash(page.normalised_text_of(i).iter().copied()))
        .collect()
}

/// Learns the author rules from the samples with authors (see [`MetaVotes::authors`]).
pub fn learn_author(samples: &[MetaSample<'_>]) -> Vec<LearnedRule> {
    let mut v = MetaVotes::default();
    samples.iter().for_each(|s| v.add(s));
    v.authors()
}

/// Learns the date rule and the date format it shows (see [`MetaVotes::date`]).
pub fn learn_date(samples: &[MetaSample<'_>]) -> Option<(LearnedRule, String)> {
    let mut v = MetaVotes::default();
    samples.iter().for_each(|s| v.add(s));
    v.date()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(s).unwrap()
    }

    #[test]
    fn a_site_wide_footer_is_never_the_author_a_long_byline_is() {
        let page = |byline: &str| {
            Page::parse(&format!(
                "<html><body><main><article><p class=meta>{byline}</p><div class=entry>Body text about several things.</div></article></main>\
                 <footer id=footer>© 2026 Jo Bloggs · Powered by Hexo</footer></body></html>"
            ))
        };
        let learn = |pages: &[(Page, &str)]| {
            let mut v = MetaVotes::default();
            for (p, author) in pages {
                v.add(&MetaSample {
                    page: p,
                    article: p.by_class("entry")[0],
                    authors: vec![author.to_string()],
                    declared: Vec::new(),
                    published: None,
                    declared_published: None,
                    fetched_at: at("2020-01-01T00:00:00+00:00").with_timezone(&Utc),
                });
            }
            v
        };
        let authors = ["Jo Bloggs", "Ann Smith", "Jo Bloggs", "Li Wei"];
        // A byline that holds the name among other words is learned.
        let with_byline: Vec<(Page, &str)> = authors
            .iter()
            .map(|a| (page(&format!("Posted by {a} on 3 May 2020 at 10:00")), *a))
            .collect();
        let v = learn(&with_byline);
        assert_eq!(v.authors()[0].xpath, "//*[@class='meta']");
        // No byline: the footer names the owner on every page; it is site-wide, not a rule.
        let without: Vec<(Page, &str)> = authors.iter().map(|a| (page(""), *a)).collect();
        let v = learn(&without);
        assert!(v.authors().is_empty(), "{:?}", v.authors());
        assert_eq!(v.site_wide_authors(), ["//*[@id='footer']"]);
    }

    #[test]
    fn the_byline_next_to_the_article_wins() {
        let page = Page::parse("<html><body><aside><p class=side>Jo Bloggs</p><p>Other</p></aside><main><article><p class=byline>By Jo Bloggs</p><div class=entry>Body text here about things.</div></article></main></body></html>");
        let article = page.by_class("entry")[0];
        let s = MetaSample {
            page: &page,
            article,
            authors: vec!["Jo Bloggs".into()],
            declared: Vec::new(),
            published: None,
            declared_published: None,
            fetched_at: at("2020-01-01T00:00:00+00:00").with_timezone(&Utc),
        };
        let r = learn_author(&[s]);
        assert_eq!(r[0].xpath, "//*[@class='byline']");
    }

    /// A page whose date metadata is the site's build time (or a widget's `<time>`) disagrees
    /// with the feed on every post: learned as unreliable. A date-only rendering a few hours
    /// off agrees.
    #[test]
    fn date_metadata_that_disagrees_with_the_feed_is_unreliable() {
        let page = Page::parse("<article><div class=entry>Body text here.</div></article>");
        let votes = |declared: &dyn Fn(&str) -> String| {
            let mut v = MetaVotes::default();
            for d in ["2021-03-04T10:00:00+01:00", "2023-07-08T07:15:00+01:00"] {
                v.add(&MetaSample {
                    page: &page,
                    article: page.by_class("entry")[0],
                    authors: Vec::new(),
                    declared: Vec::new(),
                    published: Some(at(d)),
                    declared_published: Some(at(&declared(d))),
                    fetched_at: at("2024-01-01T00:00:00+00:00").with_timezone(&Utc),
                });
            }
            v.unreliable_dates()
        };
        let build_time = |_: &str| "2024-01-01T00:00:00+00:00".to_string();
        assert_eq!(votes(&build_time), Some(DECLARED_DATES));
        assert_eq!(
            votes(&|d: &str| format!("{}T00:00:00+00:00", &d[..10])),
            None
        );
    }

    /// Issue 42 part 1: metadata that varies between posts and names the feed's authors
    /// confirms bylines; metadata naming one person on every post is site-wide instead, and
    /// metadata naming others (logins, the site) confirms nothing.
    #[test]
    fn author_metadata_confirms_bylines_only_where_it_names_the_feeds_authors() {
        let page = Page::parse("<article><div class=entry>Body text here.</div></article>");
        let entries = ["Ann Smith", "Li Wei", "Ann Smith", "Kim Lund"];
        let votes = |declared: &dyn Fn(&str) -> Vec<String>| {
            let mut v = MetaVotes::default();
            for e in entries {
                v.add(&MetaSample {
                    page: &page,
                    article: page.by_class("entry")[0],
                    authors: vec![e.to_string()],
                    declared: declared(e),
                    published: None,
                    declared_published: None,
                    fetched_at: at("2020-01-01T00:00:00+00:00").with_timezone(&Utc),
                });
            }
            v
        };
        let same = votes(&|e| vec![e.to_string()]);
        assert_eq!(same.confirming_authors(), Some(DECLARED_AUTHORS));
        assert!(same.site_wide_authors().is_empty());
        // One name in a different spelling still agrees.
        let spelled = votes(&|e| vec![e.replace("Ann", "A.")]);
        assert_eq!(spelled.confirming_authors(), Some(DECLARED_AUTHORS));
        let owner = votes(&|_| vec!["Ann Smith".into()]);
        assert_eq!(owner.confirming_authors(), None);
        assert_eq!(owner.site_wide_authors(), [DECLARED_AUTHORS]);
        let logins = votes(&|e| vec![format!("user{}", e.len())]);
        assert_eq!(logins.confirming_authors(), None);
        let none = votes(&|_| Vec::new());
        assert_eq!(none.confirming_authors(), None);
    }
}
