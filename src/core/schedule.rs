//! When a blog's next UpdateCrawl is due (paper §4.4 leaves the policy open): from the blog's
//! observed posting and commenting frequency, within configured bounds, with jitter so blogs
//! added together do not stay synchronised, and exponential back-off after errors.
//!
//! Pure: the caller passes the clock and the random draw.

use chrono::{DateTime, Utc};
use std::time::Duration;

/// `t` plus `d`, or the latest representable time when that lies beyond it (a configured
/// "10000 years" means never, not an overflow).
pub fn after(t: DateTime<Utc>, d: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(d)
        .ok()
        .and_then(|d| t.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// `t` minus `d`, or the earliest representable time when that lies before it.
pub fn before(t: DateTime<Utc>, d: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(d)
        .ok()
        .and_then(|d| t.checked_sub_signed(d))
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// Bounds of the schedule: the `[schedule]` section of the configuration file.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Bounds {
    /// Shortest interval between two UpdateCrawls of a blog (`min_interval`, default 1 h).
    #[serde(rename = "min_interval", with = "humantime_serde")]
    pub min: Duration,
    /// Longest interval, also the interval of a blog with no dated activity (`max_interval`,
    /// default 7 days).
    #[serde(rename = "max_interval", with = "humantime_serde")]
    pub max: Duration,
    /// Relative jitter: the interval is scaled by a factor drawn in `[1 - jitter, 1 + jitter]`
    /// (default 0.1).
    pub jitter: f64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            min: Duration::from_secs(3600),
            max: Duration::from_secs(7 * 24 * 3600),
            jitter: 0.1,
        }
    }
}

/// When a post's comments are checked next: after a quarter of its age, rounded down to one of
/// `checks` (ascending; at least the first, at most the last), so a post a few days old is
/// checked daily and one years old twice a year. `None` once the post is older than `max_age`
/// (zero: no limit) or without `checks`.
///
/// ```
/// use everblog::core::schedule::comment_check_interval;
/// use std::time::Duration;
/// let day = Duration::from_secs(86_400);
/// let checks = [day, 7 * day, 30 * day, 90 * day, 180 * day];
/// assert_eq!(comment_check_interval(2 * day, &checks, Duration::ZERO), Some(day));
/// assert_eq!(comment_check_interval(40 * day, &checks, Duration::ZERO), Some(7 * day));
/// assert_eq!(comment_check_interval(2000 * day, &checks, Duration::ZERO), Some(180 * day));
/// assert_eq!(comment_check_interval(2000 * day, &checks, 1000 * day), None);
/// ```
pub fn comment_check_interval(
    age: Duration,
    checks: &[Duration],
    max_age: Duration,
) -> Option<Duration> {
    if !max_age.is_zero() && age > max_age {
        return None;
    }
    let quarter = age / 4;
    let first = *checks.first()?;
    Some(
        checks
            .iter()
            .copied()
            .filter(|c| *c <= quarter)
            .max()
            .unwrap_or(first),
    )
}

/// Activity older than this does not count towards the frequency.
pub const WINDOW: Duration = Duration::from_secs(90 * 24 * 3600);

/// The interval until the next UpdateCrawl: half the mean gap between the blog's recent posts
/// and comments (from the oldest counted to now) (`activity`, any order; only the last [`WINDOW`] before `now` counts, and
/// future dates are ignored), so a new item waits a quarter of a typical gap on average.
/// Clamped to `[min, max]` after jitter; `draw` is uniform in `[0, 1)`.
///
/// ```
/// use everblog::core::schedule::{interval, Bounds};
/// use chrono::{Duration as D, TimeZone, Utc};
/// let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
/// let b = Bounds { jitter: 0.0, ..Bounds::default() };
/// // A post a day for the last 10 days: every 12 hours.
/// let daily: Vec<_> = (0..10).map(|d| now - D::days(d)).collect();
/// assert_eq!(interval(&daily, now, &b, 0.5).as_secs(), 12 * 3600);
/// // Nothing dated: the maximum.
/// assert_eq!(interval(&[], now, &b, 0.5), b.max);
/// ```
pub fn interval(activity: &[DateTime<Utc>], now: DateTime<Utc>, b: &Bounds, draw: f64) -> Duration {
    let window = chrono::Duration::from_std(WINDOW).expect("constant fits");
    let recent: Vec<&DateTime<Utc>> = activity
        .iter()
        .filter(|t| **t <= now && now - **t <= window)
        .collect();
    let base = match recent.iter().min() {
        Some(oldest) if !recent.is_empty() => {
            // n items from the oldest to now: n - 1 gaps (the time since the newest item
            // stretches the last one, so a blog that fell silent is visited less and less).
            let span = (now - **oldest).to_std().unwrap_or_default();
            let span = span.max(Duration::from_secs(3600));
            span / (recent.len() as u32 - 1).max(1) / 2
        }
        _ => b.max,
    };
    jittered(base, b, draw)
}

/// The delay before retrying a blog after `errors_in_a_row` failures (≥ 1): `min · 2^(n-1)`,
/// at most `max`, jittered.
///
/// ```
/// use everblog::core::schedule::{backoff, Bounds};
/// let b = Bounds { jitter: 0.0, ..Bounds::default() };
/// assert_eq!(backoff(1, &b, 0.5).as_secs(), 3600);
/// assert_eq!(backoff(3, &b, 0.5).as_secs(), 4 * 3600);
/// assert_eq!(backoff(40, &b, 0.5), b.max);
/// ```
pub fn backoff(errors_in_a_row: u32, b: &Bounds, draw: f64) -> Duration {
    let exp = errors_in_a_row.saturating_sub(1).min(30);
    let base = b.min.saturating_mul(1u32 << exp).min(b.max);
    jittered(base, b, draw)
}

fn jittered(base: Duration, b: &Bounds, draw: f64) -> Duration {
    let factor = 1.0 + b.jitter.clamp(0.0, 1.0) * (2.0 * draw.clamp(0.0, 1.0) - 1.0);
    base.mul_f64(factor).clamp(b.min, b.max.max(b.min))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration as D, TimeZone};

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap()
    }

    #[test]
    fn times_past_the_calendar_saturate_instead_of_overflowing() {
        let year = Duration::from_secs(365 * 24 * 3600);
        assert_eq!(after(now(), year), now() + D::days(365));
        assert_eq!(before(now(), year), now() - D::days(365));
        assert_eq!(after(now(), Duration::MAX), DateTime::<Utc>::MAX_UTC);
        assert_eq!(after(now(), year * 400_000), DateTime::<Utc>::MAX_UTC);
        assert_eq!(before(now(), year * 400_000), DateTime::<Utc>::MIN_UTC);
    }

    #[test]
    fn busier_blogs_are_visited_more_often() {
        let b = Bounds {
            jitter: 0.0,
            ..Bounds::default()
        };
        let weekly: Vec<_> = (0..8).map(|w| now() - D::weeks(w)).collect();
        let hourly: Vec<_> = (0..48).map(|h| now() - D::hours(h)).collect();
        let (w, h) = (
            interval(&weekly, now(), &b, 0.5),
            interval(&hourly, now(), &b, 0.5),
        );
        assert!(h < w, "{h:?} !< {w:?}");
        assert_eq!(h, b.min, "clamped to the minimum");
        // Activity older than the window does not count: a dormant blog gets the maximum.
        let old: Vec<_> = (0..10).map(|d| now() - D::days(400 + d)).collect();
        assert_eq!(interval(&old, now(), &b, 0.5), b.max);
    }

    #[test]
    fn jitter_spreads_within_bounds() {
        let b = Bounds::default();
        let daily: Vec<_> = (0..10).map(|d| now() - D::days(d)).collect();
        let lo = interval(&daily, now(), &b, 0.0);
        let hi = interval(&daily, now(), &b, 0.999);
        assert!(lo < hi);
        assert!(lo.as_secs_f64() >= 12.0 * 3600.0 * 0.899);
        assert!(hi.as_secs_f64() <= 12.0 * 3600.0 * 1.101);
        assert!(backoff(1, &b, 0.0) >= b.min);
        assert!(backoff(99, &b, 0.999) <= b.max);
    }
}
