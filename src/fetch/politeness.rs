//! Politeness: the one place that decides how hard everblog hits a host.
//!
//! - [`HostState`]: per host (scheme, host, port) a semaphore bounding requests in flight, the
//!   earliest time of the next request (`delay` after the previous one started, raised by the
//!   host's `Crawl-delay` and by `Retry-After` backoff), and its parsed robots.txt.
//! - [`Robots`]: robots.txt for our User-Agent, fetched once per host on first contact (through
//!   the same delay), parsed with `texting_robots`. A robots.txt that is missing (4xx), HTML,
//!   unreachable or larger than 500 KiB allows everything; each case is logged.
//! - [`Politeness`]: the map of hosts and the [`PolitenessSettings`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{OnceCell, Semaphore};
use url::Url;

/// Largest robots.txt read (Google reads 500 KiB).
pub const MAX_ROBOTS: usize = 500 * 1024;
/// Longest pause a host may impose on us through `Crawl-delay` or `Retry-After`.
pub const MAX_HOST_DELAY: Duration = Duration::from_secs(600);

/// Politeness knobs: the `[politeness]` section of the configuration file. robots.txt is
/// always obeyed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolitenessSettings {
    /// Minimum time between the starts of two requests to one host (default 1 s). Loopback
    /// hosts (your own machine) get `loopback_delay` instead unless robots.txt asks for more.
    #[serde(with = "humantime_serde")]
    pub delay: Duration,
    /// Delay for 127.0.0.0/8, ::1 and localhost (default 0).
    #[serde(with = "humantime_serde")]
    pub loopback_delay: Duration,
    /// Requests in flight per host, per process (default 2).
    pub per_host: usize,
}

/// Request slots of hosts shared by several processes.
pub trait HostGate: Send + Sync {
    /// Books the next request slot of `host` (a [`host_key`]) at least `delay` after the
    /// previous one booked by anyone; returns how long to wait for it. Must not fail: on error,
    /// return zero (the process's own spacing still holds).
    fn reserve(&self, host: &str, delay: Duration) -> Duration;
}

/// A shared [`HostGate`].
#[derive(Clone)]
pub struct SharedGate(pub Arc<dyn HostGate>);

impl std::fmt::Debug for SharedGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedGate")
    }
}

impl Default for PolitenessSettings {
    fn default() -> Self {
        PolitenessSettings {
            delay: Duration::from_secs(1),
            loopback_delay: Duration::ZERO,
            per_host: 2,
        }
    }
}

/// robots.txt of one host.
#[derive(Debug, Default)]
pub struct Robots {
    robot: Option<texting_robots::Robot>,
    /// `Crawl-delay` for us, if any.
    pub crawl_delay: Option<Duration>,
    /// `Sitemap:` URLs.
    pub sitemaps: Vec<String>,
    /// Why the robots.txt was ignored (missing, HTML, unreachable…), for the log.
    pub note: Option<String>,
}

impl Robots {
    /// Parses a robots.txt body for `agent`.
    pub fn parse(agent: &str, body: &[u8]) -> Robots {
        // Past the cap, keep whole lines only: a line cut to "Disallow: /" would block the site.
        let body = if body.len() > MAX_ROBOTS {
            let cut = &body[..MAX_ROBOTS];
            &cut[..cut.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)]
        } else {
            body
        };
        match texting_robots::Robot::new(agent, body) {
            Ok(r) => Robots {
                crawl_delay: r
                    .delay
                    .filter(|d| d.is_finite() && *d > 0.0)
                    .map(|d| Duration::from_secs_f32(d).min(MAX_HOST_DELAY)),
                sitemaps: r.sitemaps.clone(),
                robot: Some(r),
                note: None,
            },
            Err(e) => Robots {
                note: Some(format!("unparsable robots.txt ({e}); allowing everything")),
                ..Default::default()
            },
        }
    }

    /// Robots that allow everything, with the reason.
    pub fn allow_all(note: impl Into<String>) -> Robots {
        Robots {
            note: Some(note.into()),
            ..Default::default()
        }
    }

    /// May `url` be fetched?
    pub fn allowed(&self, url: &str) -> bool {
        self.robot.as_ref().is_none_or(|r| r.allowed(url))
    }
}

/// State of one host.
pub struct HostState {
    slots: Semaphore,
    next_start: Mutex<Instant>,
    last_start: Mutex<Instant>,
    delay: Duration,
    backoff: Mutex<(Duration, u32)>,
    key: String,
    shared: Option<SharedGate>,
    /// The host's robots.txt, fetched on first use.
    pub robots: OnceCell<Robots>,
}

/// A permission to send one request to a host; dropping it frees the slot.
pub struct Permit<'a> {
    _permit: tokio::sync::SemaphorePermit<'a>,
}

impl HostState {
    /// Waits for a free slot and for the host's next allowed start time, then books the next one.
    pub async fn acquire(&self) -> Permit<'_> {
        let permit = self.slots.acquire().await.expect("semaphore never closed");
        let mut spacing = Duration::ZERO;
        loop {
            let wait = {
                let mut next = self.next_start.lock().expect("lock");
                let now = Instant::now();
                if *next <= now {
                    *self.last_start.lock().expect("lock") = now;
                    let crawl_delay = self
                        .robots
                        .get()
                        .and_then(|r| r.crawl_delay)
                        .unwrap_or_default();
                    let backoff = self.backoff.lock().expect("lock").0;
                    spacing = self.delay.max(crawl_delay).max(backoff);
                    *next = now + spacing;
                    None
                } else {
                    Some(*next - now)
                }
            };
            match wait {
                None => break,
                Some(d) => tokio::time::sleep(d).await,
            }
        }
        // Other processes on the same database book the same host's slots too.
        if let Some(gate) = self.shared.as_ref().filter(|_| !spacing.is_zero()) {
            let wait = gate.0.reserve(&self.key, spacing);
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
        }
        Permit { _permit: permit }
    }

    /// The host answered 429 or 503: pause it for `retry_after` (or an exponential backoff
    /// from 2 s, doubling, capped at [`MAX_HOST_DELAY`]). Returns the pause.
    pub fn back_off(&self, retry_after: Option<Duration>) -> Duration {
        let mut b = self.backoff.lock().expect("lock");
        b.1 += 1;
        let exp = Duration::from_secs(2u64.saturating_pow(b.1.min(9)));
        let pause = retry_after.unwrap_or(exp).min(MAX_HOST_DELAY);
        b.0 = pause;
        let mut next = self.next_start.lock().expect("lock");
        *next = (*next).max(Instant::now() + pause);
        pause
    }

    /// robots.txt has just been read: the request after it must already respect its
    /// `Crawl-delay` (the slot after robots.txt was booked before the delay was known).
    pub fn apply_crawl_delay(&self) {
        if let Some(d) = self.robots.get().and_then(|r| r.crawl_delay) {
            let last = *self.last_start.lock().expect("lock");
            let mut next = self.next_start.lock().expect("lock");
            *next = (*next).max(last + d);
        }
    }

    /// The host answered normally: clear any backoff.
    pub fn recovered(&self) {
        *self.backoff.lock().expect("lock") = (Duration::ZERO, 0);
    }
}

/// Per-host politeness for all hosts.
pub struct Politeness {
    settings: PolitenessSettings,
    shared: Option<SharedGate>,
    hosts: Mutex<HashMap<String, Arc<HostState>>>,
}

/// `scheme://host:port` of a URL: the unit of politeness.
pub fn host_key(url: &Url) -> String {
    format!(
        "{}://{}:{}",
        url.scheme(),
        url.host_str().unwrap_or(""),
        url.port_or_known_default().unwrap_or(0)
    )
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost" || d.ends_with(".localhost"),
        None => false,
    }
}

impl Politeness {
    /// Politeness with `settings`; `shared` books request slots with other processes too
    /// (`None`: this process only).
    pub fn new(settings: PolitenessSettings, shared: Option<SharedGate>) -> Politeness {
        Politeness {
            settings,
            shared,
            hosts: Mutex::new(HashMap::new()),
        }
    }

    /// The state of `url`'s host, created on first use.
    pub fn host(&self, url: &Url) -> Arc<HostState> {
        let mut hosts = self.hosts.lock().expect("lock");
        hosts
            .entry(host_key(url))
            .or_insert_with(|| {
                Arc::new(HostState {
                    slots: Semaphore::new(self.settings.per_host.max(1)),
                    next_start: Mutex::new(Instant::now()),
                    last_start: Mutex::new(Instant::now()),
                    delay: if is_loopback(url) {
                        self.settings.loopback_delay
                    } else {
                        self.settings.delay
                    },
                    backoff: Mutex::new((Duration::ZERO, 0)),
                    key: host_key(url),
                    shared: self.shared.clone(),
                    robots: OnceCell::new(),
                })
            })
            .clone()
    }
}

/// Parses a `Retry-After` value: delta-seconds or an HTTP date.
pub fn retry_after(value: &str) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let secs = (when.timestamp() - chrono::Utc::now().timestamp()).max(0) as u64;
    Some(Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robots_rules_and_delay() {
        let r = Robots::parse("everblog", b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\nSitemap: http://a.b/sitemap.xml\n");
        assert!(!r.allowed("http://a.b/private/x"));
        assert!(r.allowed("http://a.b/blog/x"));
        assert_eq!(r.crawl_delay, Some(Duration::from_secs(2)));
        assert_eq!(r.sitemaps, vec!["http://a.b/sitemap.xml"]);
        // 9 + 14 bytes of header, then 14-byte lines: byte MAX_ROBOTS falls right after
        // "Disallow: /" of a line.
        let big = format!(
            "#comment\nUser-agent: *\n{}",
            "Disallow: /x/\n".repeat(MAX_ROBOTS / 14 + 10)
        );
        let naive = texting_robots::Robot::new("everblog", &big.as_bytes()[..MAX_ROBOTS]).unwrap();
        assert!(
            !naive.allowed("http://a.b/page"),
            "the naive cut ends in \"Disallow: /\""
        );
        assert!(
            Robots::parse("everblog", big.as_bytes()).allowed("http://a.b/page"),
            "a line cut at the cap must not become Disallow: /"
        );
        let html = Robots::parse("everblog", b"<html><body>Not found</body></html>");
        assert!(html.allowed("http://a.b/anything"));
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(retry_after("120"), Some(Duration::from_secs(120)));
        assert!(retry_after("Wed, 21 Oct 2015 07:28:00 GMT").is_some());
        assert_eq!(retry_after("soon"), None);
    }
}
