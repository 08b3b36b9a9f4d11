//! NewCrawl's stopping rule: when a crawl may end before its frontier is empty. A pure decision
//! over the evidence gathered between batches ([`StopEvidence`]): the capture–recapture estimate
//! of posts still unseen (Chao1 over `f1` posts found once and `f2` found twice), the frontier's
//! look-ahead (queued pages still promising), how long the crawl has gone since its last new
//! post, and `patience`, the upper bound. Kinds of pages that keep linking no new post stop
//! counting as promising ([`BarrenStreaks`]).

use crate::core::listing::unseen_posts;
use std::collections::HashMap;
use url::Url;

/// Pages a crawl goes on past its last new post before the capture–recapture estimate may end
/// it.
pub const MIN_TAIL: u64 = 10;

/// Pages of one kind in a row that linked no new post, after which that kind of page no longer
/// keeps a crawl going.
pub const BARREN_STREAK: u32 = 5;

/// What the stopping rule weighs, as it stands once the next batch is chosen (the frontier has
/// scored what the last pages found).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct StopEvidence {
    /// `[crawl] patience`: pages without a new post after which the crawl stops while nothing
    /// promising is queued; 0 disables every early stop.
    pub(super) patience: u64,
    /// Promising pages in the frontier's look-ahead ([`BarrenStreaks::promising`]); `None` when
    /// the frontier does not look ahead (breadth-first), which never stops early.
    pub(super) promising: Option<usize>,
    /// Pages processed since the last new post.
    pub(super) since_new_post: u64,
    /// Pages processed when the last new post was found.
    pub(super) pages_at_last_post: u64,
    /// Known posts found exactly once (Chao1's singletons).
    pub(super) f1: u64,
    /// Known posts found exactly twice (Chao1's doubletons).
    pub(super) f2: u64,
    /// Post permalinks queued and due now.
    pub(super) queued_posts: u64,
}

impl StopEvidence {
    /// Posts still unseen, estimated by capture–recapture (`core::listing::unseen_posts`).
    pub(super) fn unseen(&self) -> f64 {
        unseen_posts(self.f1, self.f2)
    }

    /// The crawl has gone past its last new post for half as long as it took to find it, and at
    /// least [`MIN_TAIL`] pages.
    fn tail_reached(&self) -> bool {
        self.since_new_post >= (self.pages_at_last_post / 2).max(MIN_TAIL)
    }
}

/// Why the stopping rule ended a crawl.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum StopReason {
    /// Capture–recapture estimates under one post unseen, no post is queued, and the tail past
    /// the last new post is long enough.
    EstimateReached {
        /// Posts estimated unseen.
        unseen: f64,
        /// Posts found once.
        f1: u64,
        /// Posts found twice.
        f2: u64,
    },
    /// `patience` pages went by without a new post.
    PatienceSpent {
        /// Pages since the last new post.
        since_new_post: u64,
    },
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::EstimateReached { unseen, f1, f2 } => write!(
                f,
                "every post seems found: {unseen:.1} unseen by capture-recapture ({f1} posts found once, {f2} twice), no queued page expected to link a new one"
            ),
            StopReason::PatienceSpent { since_new_post } => write!(
                f,
                "no new post in the last {since_new_post} pages and no promising page left"
            ),
        }
    }
}

/// The stopping rule: whether the crawl may end now, and why. Never while `patience` is 0, the
/// frontier does not look ahead, or a page near the top of its queue is promising. Then it ends
/// when every post seems found (no post queued, under one estimated unseen, the tail reached),
/// or else when `patience` pages went by without a new post.
pub(super) fn stopping_rule(evidence: &StopEvidence) -> Option<StopReason> {
    let e = evidence;
    if e.patience == 0 || e.promising != Some(0) {
        return None;
    }
    let unseen = e.unseen();
    if e.tail_reached() && unseen < 1.0 && e.queued_posts == 0 {
        return Some(StopReason::EstimateReached {
            unseen,
            f1: e.f1,
            f2: e.f2,
        });
    }
    (e.since_new_post >= e.patience).then_some(StopReason::PatienceSpent {
        since_new_post: e.since_new_post,
    })
}

/// The posts a crawl that ends reports unseen: capture–recapture's `estimate`, except 0 when
/// the frontier is `exhausted` (every link followed) and no page shaped like a post was left
/// `unread`: each post a listing, sitemap or post names is then archived, and an estimate that
/// assumes posts are found at random is no evidence of more (issue 45: a blog archived whole
/// had been said to hide 18.8).
pub(super) fn reported_unseen(estimate: f64, exhausted: bool, unread: u64) -> f64 {
    if exhausted && unread == 0 {
        0.0
    } else {
        estimate
    }
}

/// Per kind of page ([`kind`]): pages processed in a row that linked no new post.
#[derive(Debug, Default)]
pub(super) struct BarrenStreaks(HashMap<String, u32>);

impl BarrenStreaks {
    /// Whether a queued non-post URL is worth fetching before the crawl may stop: its page is
    /// expected to hold at least half a post link, and its kind of page has not gone
    /// [`BARREN_STREAK`] pages in a row without linking a new post.
    pub(super) fn promising(&self, url: &str, estimate: f64) -> bool {
        estimate >= 0.5 && self.0.get(&kind(url)).copied().unwrap_or(0) < BARREN_STREAK
    }

    /// A parsed page of `url` linked `new_post_links` posts not known before.
    pub(super) fn observe(&mut self, url: &str, new_post_links: u32) {
        let streak = self.0.entry(kind(url)).or_insert(0);
        *streak = if new_post_links > 0 { 0 } else { *streak + 1 };
    }
}

/// The kind of a page for the yield-based stop: host, path segments with digit runs replaced by
/// `0` and the last segment by `*`, query keys without values — `/page/3/`, `/page/4/` are one
/// kind, `/news/2019/` and `/news/2020/` another, `/tag/chairs/` and `/tag/oak/` a third.
fn kind(url: &str) -> String {
    let Ok(u) = Url::parse(url) else {
        return url.to_string();
    };
    let mut segments: Vec<String> = u
        .path_segments()
        .map(|s| s.filter(|s| !s.is_empty()).map(digits_to_zero).collect())
        .unwrap_or_default();
    if let Some(last) = segments.last_mut() {
        *last = "*".into();
    }
    let mut keys: Vec<String> = u.query_pairs().map(|(k, _)| k.into_owned()).collect();
    keys.sort();
    format!(
        "{}/{}?{}",
        u.host_str().unwrap_or(""),
        segments.join("/"),
        keys.join("&")
    )
}

/// `s` with every run of ASCII digits replaced by one `0`.
pub(super) fn digits_to_zero(s: &str) -> String {
    let mut t = String::with_capacity(s.len());
    let mut digit = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !digit {
                t.push('0');
            }
            digit = true;
        } else {
            t.push(c);
            digit = false;
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crawl that has every reason to stop: patience left, nothing promising, a long tail,
    /// every known post found twice, no post queued.
    fn settled() -> StopEvidence {
        StopEvidence {
            patience: 1000,
            promising: Some(0),
            since_new_post: 60,
            pages_at_last_post: 100,
            f1: 0,
            f2: 12,
            queued_posts: 0,
        }
    }

    #[test]
    fn every_post_found_ends_the_crawl_by_the_estimate() {
        let reason = stopping_rule(&settled());
        assert_eq!(
            reason,
            Some(StopReason::EstimateReached {
                unseen: 0.0,
                f1: 0,
                f2: 12
            })
        );
        assert_eq!(
            reason.unwrap().to_string(),
            "every post seems found: 0.0 unseen by capture-recapture (0 posts found once, 12 twice), no queued page expected to link a new one"
        );
    }

    #[test]
    fn a_few_posts_found_once_still_count_as_all_found() {
        // Chao1: 2·1 / (2·11) ≈ 0.09 unseen.
        let e = StopEvidence {
            f1: 2,
            f2: 10,
            ..settled()
        };
        assert!(matches!(
            stopping_rule(&e),
            Some(StopReason::EstimateReached { f1: 2, f2: 10, unseen }) if unseen < 0.1
        ));
    }

    #[test]
    fn patience_zero_never_stops_early() {
        let e = StopEvidence {
            patience: 0,
            since_new_post: 5000,
            ..settled()
        };
        assert_eq!(stopping_rule(&e), None);
    }

    #[test]
    fn a_frontier_without_look_ahead_never_stops_early() {
        let e = StopEvidence {
            promising: None,
            since_new_post: 5000,
            ..settled()
        };
        assert_eq!(stopping_rule(&e), None);
    }

    #[test]
    fn a_promising_page_in_the_look_ahead_keeps_the_crawl_going() {
        let e = StopEvidence {
            promising: Some(1),
            since_new_post: 5000,
            ..settled()
        };
        assert_eq!(stopping_rule(&e), None);
    }

    #[test]
    fn the_tail_is_half_the_search_for_the_last_post() {
        // 100 pages to the last post: the estimate waits 50 more.
        let short = StopEvidence {
            since_new_post: 49,
            ..settled()
        };
        assert_eq!(stopping_rule(&short), None);
        let long = StopEvidence {
            since_new_post: 50,
            ..settled()
        };
        assert!(matches!(
            stopping_rule(&long),
            Some(StopReason::EstimateReached { .. })
        ));
    }

    #[test]
    fn the_tail_is_at_least_min_tail() {
        // The last post on page 4: half of it is 2, MIN_TAIL (10) is the floor.
        let early = StopEvidence {
            pages_at_last_post: 4,
            since_new_post: MIN_TAIL - 1,
            ..settled()
        };
        assert_eq!(stopping_rule(&early), None);
        let enough = StopEvidence {
            since_new_post: MIN_TAIL,
            ..early
        };
        assert!(matches!(
            stopping_rule(&enough),
            Some(StopReason::EstimateReached { .. })
        ));
    }

    #[test]
    fn posts_estimated_unseen_keep_the_crawl_going_until_patience() {
        // 10 posts found once, none twice: Chao1 says 45 unseen.
        let e = StopEvidence {
            f1: 10,
            f2: 0,
            ..settled()
        };
        assert_eq!(stopping_rule(&e), None);
    }

    #[test]
    fn a_queued_post_keeps_the_crawl_going_until_patience() {
        let e = StopEvidence {
            queued_posts: 1,
            ..settled()
        };
        assert_eq!(stopping_rule(&e), None);
    }

    #[test]
    fn patience_spent_since_the_last_new_post_ends_the_crawl() {
        // The estimate disagrees (45 unseen), but `patience` pages gave no post.
        let e = StopEvidence {
            patience: 200,
            since_new_post: 200,
            f1: 10,
            f2: 0,
            queued_posts: 3,
            ..settled()
        };
        let reason = stopping_rule(&e);
        assert_eq!(
            reason,
            Some(StopReason::PatienceSpent {
                since_new_post: 200
            })
        );
        assert_eq!(
            reason.unwrap().to_string(),
            "no new post in the last 200 pages and no promising page left"
        );
        let one_short = StopEvidence {
            since_new_post: 199,
            ..e
        };
        assert_eq!(stopping_rule(&one_short), None);
    }

    #[test]
    fn patience_spent_before_the_tail_ends_the_crawl() {
        // A small patience ends the crawl before the estimate's tail is reached.
        let e = StopEvidence {
            patience: 20,
            since_new_post: 20,
            ..settled()
        };
        assert_eq!(
            stopping_rule(&e),
            Some(StopReason::PatienceSpent { since_new_post: 20 })
        );
    }

    #[test]
    fn the_estimate_is_said_before_patience_when_both_hold() {
        let e = StopEvidence {
            patience: 50,
            since_new_post: 50,
            ..settled()
        };
        assert!(matches!(
            stopping_rule(&e),
            Some(StopReason::EstimateReached { .. })
        ));
    }

    #[test]
    fn kinds_of_pages_generalise_digits_and_the_last_segment() {
        assert_eq!(
            kind("https://b.example/page/3/"),
            kind("https://b.example/page/4/")
        );
        assert_eq!(
            kind("https://b.example/news/2019/"),
            kind("https://b.example/news/2020/")
        );
        assert_eq!(
            kind("https://b.example/tag/chairs/"),
            kind("https://b.example/tag/oak/")
        );
        assert_ne!(
            kind("https://b.example/tag/oak/"),
            kind("https://b.example/page/4/")
        );
        assert_eq!(kind("https://b.example/?p=2&a=1"), "b.example/?a&p");
        assert_eq!(digits_to_zero("/2019/05/x12y"), "/0/0/x0y");
    }

    #[test]
    fn a_kind_of_page_linking_no_new_post_stops_being_promising() {
        let mut streaks = BarrenStreaks::default();
        let next = "https://b.example/page/9/";
        assert!(streaks.promising(next, 0.5));
        assert!(
            !streaks.promising(next, 0.4),
            "under half a post link expected"
        );
        for n in 1..BARREN_STREAK {
            streaks.observe(&format!("https://b.example/page/{n}/"), 0);
        }
        assert!(streaks.promising(next, 3.0));
        streaks.observe("https://b.example/page/5/", 0);
        assert!(!streaks.promising(next, 3.0));
        assert!(
            streaks.promising("https://b.example/tag/oak/", 3.0),
            "another kind of page"
        );
        // A page of the kind that links a new post resets its streak.
        streaks.observe("https://b.example/page/6/", 2);
        assert!(streaks.promising(next, 3.0));
    }

    #[test]
    fn a_crawl_that_followed_every_link_reports_no_post_unseen() {
        assert_eq!(reported_unseen(18.8, true, 0), 0.0);
        assert_eq!(reported_unseen(18.8, true, 2), 18.8);
        assert_eq!(reported_unseen(18.8, false, 0), 18.8);
    }
}
