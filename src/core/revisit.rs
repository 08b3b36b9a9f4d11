//! What a revisit of an archived post means (issue 30): when each post is fetched again, whether
//! what it says now is an edit, and what a redirect on the way says about the post.
//!
//! **The policy** ([`revisit_interval`]). Cho and Garcia-Molina ("Synchronizing a database to
//! improve freshness", SIGMOD 2000; "Effective page refresh policies", TODS 2003) show that with
//! a fixed budget of fetches, a *uniform* allocation (every item at the same interval) keeps a
//! collection fresher than a *proportional* one (items visited in proportion to how often they
//! change), that the optimum gives more visits to items that change moderately often and
//! fewer to those that change too often to be kept fresh, and that a *fixed order* (each item
//! at regular intervals) beats a random one. Change rates of single posts are unknown and
//! mostly zero, so everblog stays close to uniform, in fixed order: every post is revisited at
//! least once within `revisit_within`, and only two cheap priors shorten the interval: a post's
//! age (posts are corrected mostly in their first days and weeks: a quarter of the age, as for
//! comment checks) and its own history (each edit found halves the interval, at most three
//! times, never below a day). A post is first planned at a phase drawn from its URL, so the
//! posts of a blog archived in one crawl come due spread over the window, not all at once.
//!
//! Pure: the caller passes the clock.

use super::authors::same_person;
use super::rules::Field;
use super::text::collapse_whitespace;
use chrono::{DateTime, FixedOffset, Utc};
use std::time::Duration;

/// The shortest interval between two revisits of a post.
pub const MIN_REVISIT: Duration = Duration::from_secs(86_400);

/// The interval until a post's next revisit: a quarter of its `age`, halved for each of its
/// `edits` found (at most three halvings), within `[MIN_REVISIT, within]` (`within` wins when
/// shorter than a day).
///
/// ```
/// use everblog::core::revisit::revisit_interval;
/// use std::time::Duration;
/// let day = Duration::from_secs(86_400);
/// assert_eq!(revisit_interval(2000 * day, 0, 30 * day), 30 * day);
/// assert_eq!(revisit_interval(20 * day, 0, 30 * day), 5 * day);
/// assert_eq!(revisit_interval(2000 * day, 1, 30 * day), 15 * day);
/// assert_eq!(revisit_interval(2 * day, 0, 30 * day), day);
/// assert_eq!(revisit_interval(2000 * day, 0, Duration::from_secs(1)), Duration::from_secs(1));
/// ```
pub fn revisit_interval(age: Duration, edits: u32, within: Duration) -> Duration {
    let base = (age / 4).min(within);
    let shortened = base / (1u32 << edits.min(3));
    shortened.max(MIN_REVISIT).min(within)
}

/// A post's first planned revisit: `now` plus a fraction of `interval` drawn from its `url`
/// (FNV-1a), so posts archived together come due spread evenly over their interval.
pub fn first_revisit(url: &str, interval: Duration, now: DateTime<Utc>) -> DateTime<Utc> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in url.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let phase = (h >> 11) as f64 / (1u64 << 53) as f64;
    super::schedule::after(now, interval.mul_f64(phase))
}

/// What a post says: the fields an edit is judged on.
#[derive(Debug, Clone, Copy)]
pub struct Said<'a> {
    /// The title, if one was found.
    pub title: Option<&'a str>,
    /// The article's text.
    pub text: &'a str,
    /// The authors' names.
    pub authors: &'a [String],
    /// The publication date.
    pub published: Option<DateTime<FixedOffset>>,
    /// The date as the page showed it.
    pub published_raw: Option<&'a str>,
}

/// A date moved by less than this is the same date shown with another precision (a day
/// without its time, in the blog's zone).
const DATE_PRECISION: chrono::Duration = chrono::Duration::hours(36);

/// The fields whose change makes `new` an edit of `old` (empty: the same post): the title, the
/// article's text (whitespace aside), the authors as people (`same_person`), the date by more
/// than a day and a half. What a page merely fails to show now (no title, no authors, no date)
/// is not an edit, nor is a date shown relatively ("3 days ago"), which moves with the clock.
///
/// ```
/// use everblog::core::revisit::{edits, Said};
/// use everblog::core::rules::Field;
/// let authors = ["Orla Brennan".to_string()];
/// let old = Said { title: Some("Terns"), text: "Two terns.", authors: &authors, published: None, published_raw: None };
/// let same = Said { text: "Two  terns.", authors: &[], ..old };
/// assert!(edits(&old, &same).is_empty());
/// let retitled = Said { title: Some("Arctic terns"), ..old };
/// assert_eq!(edits(&old, &retitled), vec![Field::Title]);
/// ```
pub fn edits(old: &Said<'_>, new: &Said<'_>) -> Vec<Field> {
    let mut fields = Vec::new();
    let clean = |t: &str| collapse_whitespace(t.trim());
    if let (Some(a), Some(b)) = (old.title, new.title) {
        if clean(a) != clean(b) {
            fields.push(Field::Title);
        }
    }
    if clean(old.text) != clean(new.text) && !new.text.trim().is_empty() {
        fields.push(Field::Article);
    }
    let covered =
        |a: &[String], b: &[String]| a.iter().all(|x| b.iter().any(|y| same_person(x, y)));
    let same_people = covered(old.authors, new.authors) && covered(new.authors, old.authors);
    if !old.authors.is_empty() && !new.authors.is_empty() && !same_people {
        fields.push(Field::Author);
    }
    let relative = |raw: Option<&str>| raw.is_some_and(super::dates::is_relative);
    if let (Some(a), Some(b)) = (old.published, new.published) {
        if (a - b).abs() > DATE_PRECISION
            && !relative(old.published_raw)
            && !relative(new.published_raw)
        {
            fields.push(Field::Date);
        }
    }
    fields
}

/// What a permanent or temporary redirect met when a post was fetched again says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redirected {
    /// A permanent redirect (301, 308) to another permalink of the blog: the post moved there.
    Moved(String),
    /// A redirect to the blog's home page or to a login page: the post is gone.
    Gone,
    /// Any other redirect (temporary, or elsewhere): nothing is concluded.
    Elsewhere,
}

/// Judges a revisit that ended at `to` after a redirect whose first hop answered `status`:
/// `home` is the blog's home page, `is_permalink` says whether a URL has the shape of the
/// blog's permalinks (`core::post_url`). URLs are compared canonically by the caller.
pub fn judge_redirect(
    status: u16,
    to: &url::Url,
    home: &url::Url,
    is_permalink: impl Fn(&url::Url) -> bool,
) -> Redirected {
    let path = to.path().to_ascii_lowercase();
    let login = ["login", "signin", "sign-in", "sign_in", "wp-admin"]
        .iter()
        .any(|w| path.contains(w));
    let same_path = |a: &url::Url, b: &url::Url| {
        a.host_str() == b.host_str()
            && a.path().trim_end_matches('/') == b.path().trim_end_matches('/')
    };
    if login || (same_path(to, home) && to.query().is_none()) {
        return Redirected::Gone;
    }
    if matches!(status, 301 | 308) && to.host_str() == home.host_str() && is_permalink(to) {
        return Redirected::Moved(to.to_string());
    }
    Redirected::Elsewhere
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(day: u32, hour: u32) -> DateTime<FixedOffset> {
        FixedOffset::west_opt(5 * 3600)
            .unwrap()
            .with_ymd_and_hms(2025, 3, day, hour, 0, 0)
            .unwrap()
    }

    #[test]
    fn only_what_a_post_says_is_an_edit() {
        let a = ["Orla Brennan".to_string()];
        let b = ["orla brennan".to_string()];
        let two = ["Orla Brennan".to_string(), "Felix Amsel".to_string()];
        let old = Said {
            title: Some("Terns at dusk"),
            text: "Two terns\n over the marsh.",
            authors: &a,
            published: Some(at(10, 9)),
            published_raw: Some("10 March 2025"),
        };
        // Whitespace, spelling of a name, a day shown without its time, a missing byline.
        let same = Said {
            text: "Two terns over the marsh.",
            authors: &b,
            published: Some(at(10, 0)),
            ..old
        };
        assert!(edits(&old, &same).is_empty());
        assert!(edits(
            &old,
            &Said {
                authors: &[],
                title: None,
                published: None,
                ..old
            }
        )
        .is_empty());
        // A co-author added, a date moved by days, the text changed.
        let edited = Said {
            text: "Three terns over the marsh.",
            authors: &two,
            published: Some(at(14, 9)),
            ..old
        };
        assert_eq!(
            edits(&old, &edited),
            vec![Field::Article, Field::Author, Field::Date]
        );
        // A relative date moves with the clock: never an edit.
        let relative = Said {
            published: Some(at(20, 9)),
            published_raw: Some("3 weeks ago"),
            ..old
        };
        assert!(edits(
            &Said {
                published_raw: Some("2 weeks ago"),
                ..old
            },
            &relative
        )
        .is_empty());
    }

    #[test]
    fn redirects_say_moved_gone_or_nothing() {
        let home = url::Url::parse("https://b.example/").unwrap();
        let permalink = |u: &url::Url| u.path().starts_with("/20");
        let u = |s: &str| url::Url::parse(s).unwrap();
        assert_eq!(
            judge_redirect(
                301,
                &u("https://b.example/2024/03/new-slug/"),
                &home,
                permalink
            ),
            Redirected::Moved("https://b.example/2024/03/new-slug/".into())
        );
        assert_eq!(
            judge_redirect(
                302,
                &u("https://b.example/2024/03/new-slug/"),
                &home,
                permalink
            ),
            Redirected::Elsewhere
        );
        assert_eq!(
            judge_redirect(301, &u("https://b.example/"), &home, permalink),
            Redirected::Gone
        );
        assert_eq!(
            judge_redirect(
                302,
                &u("https://b.example/wp-login.php?redirect_to=x"),
                &home,
                permalink
            ),
            Redirected::Gone
        );
        assert_eq!(
            judge_redirect(
                301,
                &u("https://other.example/2024/03/x/"),
                &home,
                permalink
            ),
            Redirected::Elsewhere
        );
    }

    #[test]
    fn posts_archived_together_come_due_spread_over_the_window() {
        let now = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let window = Duration::from_secs(30 * 86_400);
        let mut per_day = [0u32; 30];
        for i in 0..3000 {
            let due = first_revisit(&format!("https://b.example/p/{i}/"), window, now);
            let day = (due - now).num_days();
            assert!((0..30).contains(&day));
            per_day[day as usize] += 1;
        }
        // 100 a day on average; no day far from it.
        assert!(
            per_day.iter().all(|n| (60..=140).contains(n)),
            "{per_day:?}"
        );
    }
}
