//! Author and date rules (paper §3.5) and parsing what they extract.
//!
//! Authors: a name appears in many places (byline, sidebar, comments), so a candidate's score is
//! the Sørensen–Dice similarity to the feed entry's author(s) divided by `1 + d`, where `d` is
//! the tree distance to the page's article node: the byline next to the post wins over the same
//! name in a sidebar. Dates: the same, against many renderings of the feed entry's date
//! ([`date_renderings`]: long and short month names, day-first and month-first, ISO, with and
//! without a 24- or 12-hour time, and "N years ago" from the fetch time); an element whose
//! machine-readable `datetime`/`content`/`title` attribute is the entry's instant scores as an
//! exact match. Only short elements (≤ [`MAX_META_CHARS`] characters) that are not the article
//! node or its ancestors are candidates. The winning rendering's format is kept with the rule
//! so dates of other posts parse back with it.

use super::page::{ElementIdx, Page};
use super::rules::{rule_for, RuleKind};
use super::rules::{Field, LearnedRule};
use super::text::{bigram_set, dice_from_counts, normalise};
use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, NaiveDateTime, TimeZone, Utc};
use rustc_hash::{FxHashMap, FxHashSet};

/// Longest element text considered for an author or a date.
pub const MAX_META_CHARS: u32 = 120;

const DATE_FORMATS: &[&str] = &[
    "%A, %B %-d, %Y",
    "%A %B %-d, %Y",
    "%B %-d, %Y",
    "%b %-d, %Y",
    "%B %-d %Y",
    "%A, %-d %B %Y",
    "%A %-d %B %Y",
    "%-d %B %Y",
    "%-d %b %Y",
    "%d %B %Y",
    "%d %b %Y",
    "%a, %d %b %Y",
    "%a %b %d %Y",
    "%Y-%m-%d",
    "%Y/%m/%d",
    "%m/%d/%Y",
    "%d/%m/%Y",
    "%-m/%-d/%Y",
    "%-d/%-m/%Y",
    "%d.%m.%Y",
    "%-d.%-m.%Y",
    "%-d. %B %Y",
    "%B %Y",
];
const TIME_FORMATS: &[&str] = &[
    "",
    " %H:%M",
    " %H:%M:%S",
    " %-I:%M %p",
    " %-I:%M %P",
    " at %-I:%M %p",
    " at %-I:%M %P",
    " at %H:%M",
    ", %H:%M",
    ", %-I:%M %p",
    " - %H:%M",
    " @ %H:%M",
];

/// Every rendering of `date` that a blog theme may show: (format, text). Relative forms use
/// the format `relative`.
pub fn date_renderings(
    date: &DateTime<FixedOffset>,
    fetched_at: DateTime<Utc>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for d in DATE_FORMATS {
        for t in TIME_FORMATS {
            if d.ends_with("%Y") || t.is_empty() {
                let f = format!("{d}{t}");
                out.push((f.clone(), date.format(&f).to_string()));
            }
        }
    }
    out.push(("iso".into(), date.to_rfc3339()));
    out.push((
        "relative".into(),
        relative(date.with_timezone(&Utc), fetched_at),
    ));
    out
}

/// "3 years ago", "a month ago", "5 days ago", "yesterday", "2 hours ago" (rounded down).
pub fn relative(then: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = (now - then).num_seconds().max(0);
    let (n, unit) = match secs {
        s if s >= 365 * 86_400 => (s / (365 * 86_400), "year"),
        s if s >= 30 * 86_400 => (s / (30 * 86_400), "month"),
        s if s >= 7 * 86_400 => (s / (7 * 86_400), "week"),
        s if s >= 86_400 => (s / 86_400, "day"),
        s if s >= 3600 => (s / 3600, "hour"),
        s => (s / 60, "minute"),
    };
    match (n, unit) {
        (1, "day") => "yesterday".into(),
        (1, u) => format!("a {u} ago").replace("a hour", "an hour"),
        (n, u) => format!("{n} {u}s ago"),
    }
}

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
    /// ([`crate::core::extract::page_authors`]): judged site-wide or not against `authors`.
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

/// Best (rule, score, format, the element's normalised text) of one page for authors
/// (`instant = None`) or dates.
fn best_meta(
    page: &Page,
    article: ElementIdx,
    targets: &[(String, String)],
    instant: Option<i64>,
) -> Option<(String, f32, String, String)> {
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

/// What [`MetaVotes::site_wide_authors`] names for the page's own author metadata (JSON-LD,
/// `meta name=author`, `article:author`, `rel=author`, h-card) when it is the same on every
/// page: stored as a `site-wide-author` rule, extraction then does not read it.
pub const DECLARED_AUTHORS: &str = "page metadata";

impl MetaVotes {
    /// Adds one page: its best author candidate (when the sample has authors) and its best date
    /// candidate (when it has a publication time).
    pub fn add(&mut self, s: &MetaSample<'_>) {
        if !s.authors.is_empty() {
            let best = best_meta(
                s.page,
                s.article,
                &[(String::new(), s.authors.join(" and "))],
                None,
            );
            let text = best.as_ref().map(|b| b.3.clone());
            self.authors.push(AuthorSample {
                best: best.map(|(r, sc, f, _)| (r, sc, f)),
                text,
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

    /// The author rules: the winner, and the runner-up as a fallback for pages where the winner
    /// matches nothing (themes show some authors in a byline and others in an author box).
    /// Empty when too few pages agree; never a site-wide text ([`Self::site_wide_authors`]).
    pub fn authors(&self) -> Vec<LearnedRule> {
        let site_wide = self.site_wide_authors();
        // A rule names the authors: on most pages where it won, its text holds the entry's
        // names (≥ 70 % of their bigrams: "Posted by Jo Bloggs on 3 May" does), not a sentence
        // that shares a few letters with them.
        let agrees = |rule: &str| {
            let (mut won, mut holds) = (0, 0);
            for s in self.won_by(rule) {
                won += 1;
                let names = bigram_set(&normalise(&s.entry.replace('\n', " ")));
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

/// Parses a machine-readable time (RFC 3339, ISO 8601 with or without offset or time). A naive
/// time takes `offset` (the blog's), or UTC when none is known.
pub fn parse_instant(raw: &str, offset: Option<FixedOffset>) -> Option<DateTime<FixedOffset>> {
    let raw = raw.trim();
    if let Ok(d) = DateTime::parse_from_rfc3339(raw) {
        return Some(d);
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%d %H:%M:%S%.f%z",
        "%Y-%m-%dT%H:%M%z",
        "%Y-%m-%dT%H:%M:%S%.f%:z",
    ] {
        if let Ok(d) = DateTime::parse_from_str(raw, f) {
            return Some(d);
        }
    }
    let off = offset.unwrap_or_else(|| FixedOffset::east_opt(0).expect("zero offset"));
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(n) = NaiveDateTime::parse_from_str(raw, f) {
            return off.from_local_datetime(&n).single();
        }
    }
    let d = NaiveDate::parse_from_str(raw.get(..10)?, "%Y-%m-%d").ok()?;
    off.from_local_datetime(&d.and_hms_opt(0, 0, 0)?).single()
}

/// A date parsed from page text: the instant, and whether the text gave a time of day.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageDate {
    /// The instant (midnight in the blog's offset when only a day was shown).
    pub instant: DateTime<FixedOffset>,
    /// The text showed a time of day.
    pub has_time: bool,
}

fn try_format(text: &str, format: &str, offset: FixedOffset) -> Option<PageDate> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let want = format.split_whitespace().count().max(1);
    // The date is somewhere in the text ("Posted on March 3, 2019 by Jo"): try windows of the
    // format's word count, then one word more or less (names of days vary in length).
    for len in [want, want + 1, want.saturating_sub(1)] {
        if len == 0 || len > words.len() {
            continue;
        }
        for w in words.windows(len) {
            let cand = w
                .join(" ")
                .trim_matches(|c: char| c == '.' && !format.ends_with('.') || c == '|' || c == '·')
                .to_string();
            let cand = cand
                .trim_end_matches([',', ';', ')'])
                .trim_start_matches('(');
            if let Ok(n) = NaiveDateTime::parse_from_str(cand, format) {
                return offset
                    .from_local_datetime(&n)
                    .single()
                    .map(|instant| PageDate {
                        instant,
                        has_time: true,
                    });
            }
            if let Ok(d) = NaiveDate::parse_from_str(cand, format) {
                return offset
                    .from_local_datetime(&d.and_hms_opt(0, 0, 0)?)
                    .single()
                    .map(|instant| PageDate {
                        instant,
                        has_time: false,
                    });
            }
        }
    }
    None
}

/// Parses a date shown on a page: first with `format` (the one learned with the rule), then
/// every known rendering, then relative forms ("3 years ago", measured from `fetched_at`).
/// Local times take the blog's `offset`.
pub fn parse_page_date(
    text: &str,
    format: Option<&str>,
    offset: FixedOffset,
    fetched_at: DateTime<Utc>,
) -> Option<PageDate> {
    let text = text.replace('\u{a0}', " ");
    let mut formats: Vec<String> = format
        .filter(|f| !f.is_empty() && *f != "relative" && *f != "machine" && *f != "iso")
        .map(|f| vec![f.to_string()])
        .unwrap_or_default();
    // Longest formats first: a date with a time beats the same date without.
    let mut all: Vec<String> = DATE_FORMATS
        .iter()
        .flat_map(|d| TIME_FORMATS.iter().map(move |t| format!("{d}{t}")))
        .collect();
    all.sort_by_key(|f| std::cmp::Reverse(f.len()));
    formats.extend(all);
    for f in &formats {
        if let Some(d) = try_format(&text, f, offset) {
            return Some(d);
        }
    }
    if let Some(d) = parse_instant(&text, Some(offset)) {
        return Some(PageDate {
            instant: d,
            has_time: text.contains(':'),
        });
    }
    parse_relative(&text, fetched_at).map(|d| PageDate {
        instant: d.with_timezone(&offset),
        has_time: false,
    })
}

/// True when `raw` shows a date relative to when it was read ("yesterday", "3 days ago"): such
/// a date moves with the clock.
pub fn is_relative(raw: &str) -> bool {
    parse_relative(raw, DateTime::UNIX_EPOCH).is_some()
}

fn parse_relative(text: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let t = text.to_lowercase();
    if t.contains("yesterday") {
        return Some(now - chrono::Duration::days(1));
    }
    let words: Vec<&str> = t.split_whitespace().collect();
    let i = words
        .iter()
        .position(|w| w.trim_end_matches(',') == "ago")?;
    if i < 2 {
        return None;
    }
    let n: i64 = match words[i - 2] {
        "a" | "an" | "one" => 1,
        w => w.parse().ok()?,
    };
    let unit = words[i - 1].trim_end_matches('s');
    let days = match unit {
        "year" => 365 * n,
        "month" => 30 * n,
        "week" => 7 * n,
        "day" => n,
        "hour" => return Some(now - chrono::Duration::hours(n)),
        "minute" => return Some(now - chrono::Duration::minutes(n)),
        _ => return None,
    };
    Some(now - chrono::Duration::days(days))
}

/// The most common offset of the feed's dates: the blog's local offset.
pub fn blog_offset(dates: impl Iterator<Item = DateTime<FixedOffset>>) -> Option<FixedOffset> {
    let mut counts: FxHashMap<i32, (u32, i32)> = FxHashMap::default();
    for d in dates {
        let o = d.offset().local_minus_utc();
        let e = counts.entry(o).or_insert((0, d.year()));
        e.0 += 1;
    }
    counts
        .into_iter()
        .max_by_key(|(o, (n, _))| (*n, *o))
        .and_then(|(o, _)| FixedOffset::east_opt(o))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(s).unwrap()
    }

    #[test]
    fn renderings_and_parsing_round_trip() {
        let d = at("1970-01-01T00:00:00+00:00");
        let now = at("2013-06-01T00:00:00+00:00").with_timezone(&Utc);
        let r: Vec<String> = date_renderings(&d, now)
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        for want in [
            "Thursday, January 1, 1970",
            "January 1, 1970",
            "1 January 1970",
            "1970-01-01",
            "01/01/1970",
            "Jan 1, 1970",
            "43 years ago",
        ] {
            assert!(r.iter().any(|t| t == want), "missing {want}");
        }
        let off = FixedOffset::east_opt(3600).unwrap();
        let p =
            parse_page_date("Posted on March 4, 2019 at 10:20 am by Jo", None, off, now).unwrap();
        assert_eq!(p.instant.to_rfc3339(), "2019-03-04T10:20:00+01:00");
        assert!(p.has_time);
        let p = parse_page_date("04/03/2019", Some("%d/%m/%Y"), off, now).unwrap();
        assert_eq!(p.instant.to_rfc3339(), "2019-03-04T00:00:00+01:00");
        assert!(!p.has_time);
        let p = parse_page_date("3 years ago", None, off, now).unwrap();
        assert_eq!(p.instant.with_timezone(&Utc).date_naive().year(), 2010);
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
}
