//! Politeness: the one place that decides how hard everblog hits a host.
//!
//! - [`HostState`]: per host (scheme, host, port) a semaphore bounding requests in flight, the
//!   earliest time of the next request (`delay` after the previous one started, raised by the
//!   host's `Crawl-delay` and by `Retry-After` backoff), and its parsed robots.txt.
//! - robots.txt per host ([`super::robots`]), read through the same delay before anything else
//!   is requested from the host.
//! - [`Politeness`]: the map of hosts and the [`PolitenessSettings`].

use super::robots::Robots;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{OnceCell, Semaphore};
use url::Url;

/// How late past its booked slot a request may start, at least, when another process books
/// the host's next slot ([`HostGate`]): slots are booked this much longer than the spacing (or
/// a twentieth of the spacing, when that is more: [`late_wake`]), and a request that starts
/// later books a new slot (at most [`LATE_WAKE_RETRIES`] times; the last one is taken however
/// late).
pub const LATE_WAKE: Duration = Duration::from_millis(10);

/// The slack of a shared slot for requests `spacing` apart: [`LATE_WAKE`], or 5 % of the
/// spacing when that is more (a second's spacing tolerates 50 ms; rebooking would cost a whole
/// second).
pub fn late_wake(spacing: Duration) -> Duration {
    LATE_WAKE.max(spacing / 20)
}
/// Slots booked at most for one request after waking too late ([`LATE_WAKE`]).
pub const LATE_WAKE_RETRIES: u32 = 3;
/// Longest a host stays disallowed, between two reads, while its robots.txt is unreachable
/// (RFC 9309 §2.3.1.4 allows caching for 24 hours).
pub const ROBOTS_RETRY_MAX: Duration = Duration::from_secs(24 * 3600);

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
    /// Longest pause of a whole host after it answered 429/503 (default 60 s): a longer
    /// `Retry-After` parks only the URL that got it (the crawl retries it when due) while the
    /// host's other URLs go on.
    #[serde(with = "humantime_serde")]
    pub max_pause: Duration,
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
            max_pause: Duration::from_secs(60),
        }
    }
}

/// State of one host.
pub struct HostState {
    slots: Semaphore,
    next_start: Mutex<Instant>,
    last_start: Mutex<Instant>,
    delay: Duration,
    max_pause: Duration,
    /// The server-asked pause: its length (also the spacing after it until a normal answer),
    /// how many 429/503 in a row, and until when it holds.
    backoff: Mutex<(Duration, u32, Instant)>,
    key: String,
    shared: Option<SharedGate>,
    /// The host's robots.txt, fetched on first use.
    pub robots: OnceCell<Robots>,
    /// While robots.txt cannot be read: until when the host is treated as disallowed, how many
    /// reads failed in a row, and why.
    unreachable: Mutex<Option<(Instant, u32, String)>>,
    /// The process's stop flag, if any: a wait ends when it is set.
    stop: Option<Arc<std::sync::atomic::AtomicBool>>,
}

/// A permission to send one request to a host; dropping it frees the slot.
pub struct Permit<'a> {
    _permit: tokio::sync::SemaphorePermit<'a>,
}

impl HostState {
    /// Waits for a free slot and for the host's next allowed start time, then books the next one.
    pub async fn acquire(&self) -> Permit<'_> {
        match self.wait_for_slot(None, false).await {
            Ok(p) => p,
            Err(_) => unreachable!("neither bounded nor stoppable"),
        }
    }

    /// [`HostState::acquire`], unless the host is paused by a server's 429/503 for longer than
    /// `bound` (when given), or the process is asked to stop while waiting: then at once `Err`
    /// with how long the wait still had to go.
    pub async fn acquire_within(&self, bound: Option<Duration>) -> Result<Permit<'_>, Duration> {
        self.wait_for_slot(bound, true).await
    }

    async fn wait_for_slot(
        &self,
        bound: Option<Duration>,
        stoppable: bool,
    ) -> Result<Permit<'_>, Duration> {
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
                Some(d) if bound.is_some_and(|b| d > b) && self.paused_for().is_some() => {
                    return Err(d);
                }
                Some(d) => match self.stop.as_ref().filter(|_| stoppable) {
                    Some(stop) => {
                        // In short steps, so a stop request ends the wait at once.
                        let until = Instant::now() + d;
                        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                            let left = until.saturating_duration_since(Instant::now());
                            if left.is_zero() {
                                break;
                            }
                            tokio::time::sleep(left.min(Duration::from_millis(50))).await;
                        }
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            return Err(until.saturating_duration_since(Instant::now()));
                        }
                    }
                    None => tokio::time::sleep(d).await,
                },
            }
        }
        // Other processes on the same database book the same host's slots too. Each slot is
        // booked `late_wake` longer than the spacing, so a request that starts up to that late
        // still leaves the spacing before the next process's slot; one that starts later (a
        // busy machine, a slow database) gives its slot up and books the next free one. The
        // database's clock read the slot somewhere within the round trip: waiting from the
        // answer is never early, and lateness counts from the question, so a slow round trip
        // is late too.
        if let Some(gate) = self.shared.as_ref().filter(|_| !spacing.is_zero()) {
            let slack = late_wake(spacing);
            for _ in 0..LATE_WAKE_RETRIES {
                let asked = tokio::time::Instant::now();
                let wait = gate.0.reserve(&self.key, spacing + slack);
                if !wait.is_zero() {
                    tokio::time::sleep_until(tokio::time::Instant::now() + wait).await;
                }
                if tokio::time::Instant::now() <= asked + wait + slack {
                    break;
                }
            }
        }
        Ok(Permit { _permit: permit })
    }

    /// The host answered 429 or 503: pause it for `retry_after` (or an exponential backoff
    /// from 2 s, doubling), at most `max_pause`. Returns how long the URL that got the
    /// answer should wait: the whole `retry_after` (at most 24 h), or the backoff.
    pub fn back_off(&self, retry_after: Option<Duration>) -> Duration {
        let mut b = self.backoff.lock().expect("lock");
        b.1 += 1;
        let exp = Duration::from_secs(2u64.saturating_pow(b.1.min(9)));
        let wait = retry_after.unwrap_or(exp).min(ROBOTS_RETRY_MAX);
        let pause = wait.min(self.max_pause);
        b.0 = pause;
        b.2 = Instant::now() + pause;
        let mut next = self.next_start.lock().expect("lock");
        *next = (*next).max(Instant::now() + pause);
        wait
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

    /// How long until the host's next request may start, while a server-asked pause (429/503)
    /// holds it; `None` when it is not paused.
    pub fn paused_for(&self) -> Option<Duration> {
        if self.backoff.lock().expect("lock").0.is_zero() {
            return None;
        }
        let next = *self.next_start.lock().expect("lock");
        next.checked_duration_since(Instant::now())
    }

    /// The host answered normally: clear any backoff, once the pause it asked for has passed
    /// (a request sent before the server asked to wait may answer normally meanwhile; the
    /// pause stands, so a bounded wait still sees the host paused and does not sit it out).
    pub fn recovered(&self) {
        let mut b = self.backoff.lock().expect("lock");
        if Instant::now() >= b.2 {
            *b = (Duration::ZERO, 0, b.2);
        }
    }

    /// robots.txt could not be read (5xx, network error): the host is disallowed until a
    /// retry after an exponential back-off (1 min, doubling, at most [`ROBOTS_RETRY_MAX`]).
    /// Returns how long.
    pub fn robots_unreachable(&self, why: String) -> Duration {
        let mut u = self.unreachable.lock().expect("lock");
        let failures = u.as_ref().map_or(0, |(_, n, _)| *n) + 1;
        let wait = (Duration::from_secs(60) * 2u32.saturating_pow(failures.min(12) - 1))
            .min(ROBOTS_RETRY_MAX);
        *u = Some((Instant::now() + wait, failures, why));
        wait
    }

    /// While robots.txt is unreachable and not yet due for a retry: how long until the retry,
    /// and why.
    pub fn robots_retry(&self) -> Option<(Duration, String)> {
        let u = self.unreachable.lock().expect("lock");
        let (until, _, why) = u.as_ref()?;
        let left = until.saturating_duration_since(Instant::now());
        (!left.is_zero()).then(|| (left, why.clone()))
    }
}

/// Per-host politeness for all hosts.
pub struct Politeness {
    settings: PolitenessSettings,
    shared: Option<SharedGate>,
    hosts: Mutex<HashMap<String, Arc<HostState>>>,
    /// Set on SIGTERM/SIGINT ([`Politeness::stopping_on`]): waits for a host end at once.
    stop: std::sync::OnceLock<Arc<std::sync::atomic::AtomicBool>>,
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
            stop: std::sync::OnceLock::new(),
        }
    }

    /// Ends every wait for a host at once when `stop` is set (the process's stop flag: a
    /// SIGTERM is not held up by a host that asked to wait a minute). Set once, before hosts
    /// are used.
    pub fn stopping_on(&self, stop: Arc<std::sync::atomic::AtomicBool>) {
        let _ = self.stop.set(stop);
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
                    max_pause: self.settings.max_pause,
                    backoff: Mutex::new((Duration::ZERO, 0, Instant::now())),
                    key: host_key(url),
                    shared: self.shared.clone(),
                    robots: OnceCell::new(),
                    unreachable: Mutex::new(None),
                    stop: self.stop.get().cloned(),
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
    fn a_normal_answer_does_not_end_a_pause_the_server_asked_for() {
        let p = Politeness::new(PolitenessSettings::default(), None);
        let host = p.host(&Url::parse("http://b.test/").unwrap());
        assert_eq!(
            host.back_off(Some(Duration::from_secs(3600))),
            Duration::from_secs(3600)
        );
        // A request sent before the 503 answers 200 meanwhile: the host stays paused.
        host.recovered();
        assert!(host
            .paused_for()
            .is_some_and(|d| d > Duration::from_secs(50)));
        assert_eq!(late_wake(Duration::from_millis(150)), LATE_WAKE);
        assert_eq!(late_wake(Duration::from_secs(1)), Duration::from_millis(50));
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(retry_after("120"), Some(Duration::from_secs(120)));
        assert!(retry_after("Wed, 21 Oct 2015 07:28:00 GMT").is_some());
        assert_eq!(retry_after("soon"), None);
    }
}

crate::core::vocabulary! {
    /// Whether robots.txt decides the requisites of a permitted page (`[robots] requisites`).
    pub enum Requisites {
        /// Fetch a permitted page's images, stylesheets, scripts, fonts and media whatever
        /// robots.txt says of them (the default, as Browsertrix and the Internet Archive treat
        /// embeds: comment widgets' and CDNs' hosts often disallow everything).
        Ignore = "ignore",
        /// Fetch only what robots.txt allows.
        Obey = "obey",
    }
}

/// The `[robots]` section: robots.txt always decides which pages are crawled (RFC 9309); this
/// says whether it also decides their requisites.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RobotsSettings {
    /// `"ignore"` (default) or `"obey"`.
    pub requisites: Requisites,
}

impl Default for RobotsSettings {
    fn default() -> Self {
        RobotsSettings {
            requisites: Requisites::Ignore,
        }
    }
}
