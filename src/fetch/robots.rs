//! robots.txt (RFC 9309) for our User-Agent: read once per host before anything else is
//! requested there, through the host's politeness, and obeyed for every page.
//!
//! - 2xx: parsed with `texting_robots` (at most [`MAX_ROBOTS`] read, cut at a line boundary); an
//!   HTML page instead of rules allows everything;
//! - redirects are followed up to [`MAX_ROBOTS_REDIRECTS`] hops (more: "unavailable");
//! - 4xx ("unavailable", §2.3.1.3): everything is allowed;
//! - 5xx or a network error ("unreachable", §2.3.1.4): the host is completely disallowed, and
//!   robots.txt read again after a back-off (`politeness::HostState::robots_unreachable`, at
//!   most 24 hours as the RFC allows); the pages wait (they are retried, not blocked).
//!
//! Each case is logged.

use std::time::Duration;

/// Longest pause a host may impose on us through `Crawl-delay`.
pub const MAX_HOST_DELAY: Duration = Duration::from_secs(600);

/// Largest robots.txt read (RFC 9309 §2.5: at least 500 KiB; Google reads 500 KiB).
pub const MAX_ROBOTS: usize = 500 * 1024;
/// Redirects followed to reach robots.txt (RFC 9309 §2.3.1.2: at least five).
pub const MAX_ROBOTS_REDIRECTS: usize = 5;

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
}
