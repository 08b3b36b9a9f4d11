//! Dates as blogs show them: the renderings of an instant a page may show ([`date_renderings`]:
//! long and short month names, day-first and month-first, ISO, with and without a 24- or
//! 12-hour time, "N years ago"), and parsing shown and machine-readable dates back
//! ([`parse_page_date`] with a learned format, relative dates, the blog's offset;
//! [`parse_instant`]); a blog's usual offset from its feed's dates ([`blog_offset`]).

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, NaiveDateTime, TimeZone, Utc};
use rustc_hash::FxHashMap;

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
}
