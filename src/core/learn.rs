//! Rule learning: the paper's Algorithm 2 (§3.4) and the vote of Algorithm 1 (§3.2).
//!
//! For each (post page, feed entry) pair, one post-order pass over the page scores every element
//! by the Sørensen–Dice coefficient between its text's bigram set and each target's: an element's
//! bigram set is the union of its children's sets, plus the bigrams of its own text and those
//! that cross child boundaries. The union reuses the largest child's set and inserts the others
//! into it (small-to-large), so each bigram is inserted O(log n) times and no subtree is ever
//! serialised; intersection counts with every target are kept incrementally. The best element of
//! each page becomes one rule (id > class > absolute path); the rule most pages vote for wins,
//! ties broken by the summed score.
//!
//! Summary-only feeds: Dice prefers the paragraph that resembles the summary over the article
//! that contains it, so when a target is a summary the page's best element is replaced by its
//! highest ancestor whose text still *starts* like the summary (excerpts are article prefixes).

use super::excludes::{climb_summary, full_content_excludes, template_parts, TEMPLATE_PAGES};
use super::feed::Target;
use super::page::{ElementIdx, Page};
use super::rules::{rule_for, Field, LearnedRule, Rule, RuleKind};
use super::text::{bigram, dice_from_counts, Bigram};
use rustc_hash::{FxHashMap, FxHashSet};

/// Dice score of every element of `page` against each target: `scores[t][element]`.
///
/// Paper §3.4, Algorithm 2. Runs in O(n log n) set operations for n characters of page text.
pub fn score_elements(page: &Page, targets: &[&Target]) -> Vec<Vec<f32>> {
    let n = page.elements.len();
    let k = targets.len();
    let text = &page.text;
    let mut sets: Vec<Option<FxHashSet<Bigram>>> = (0..n).map(|_| None).collect();
    let mut inter: Vec<u32> = vec![0; n * k]; // inter[element * k + t]
    let mut scores = vec![vec![0f32; n]; k];
    for i in (0..n).rev() {
        let e = &page.elements[i];
        // Reuse the largest child's set.
        let largest = e
            .children
            .iter()
            .copied()
            .filter(|&c| sets[c as usize].is_some())
            .max_by_key(|&c| sets[c as usize].as_ref().map_or(0, |s| s.len()));
        let mut set = largest
            .and_then(|c| sets[c as usize].take())
            .unwrap_or_default();
        let mut counts: Vec<u32> = match largest {
            Some(c) => inter[c as usize * k..(c as usize + 1) * k].to_vec(),
            None => vec![0; k],
        };
        let insert = |b: Bigram, set: &mut FxHashSet<Bigram>, counts: &mut [u32]| {
            if set.insert(b) {
                for (t, target) in targets.iter().enumerate() {
                    if target.set.contains(&b) {
                        counts[t] += 1;
                    }
                }
            }
        };
        for &c in &e.children {
            if Some(c) == largest {
                continue;
            }
            if let Some(child_set) = sets[c as usize].take() {
                for b in child_set {
                    insert(b, &mut set, &mut counts);
                }
            }
        }
        // Bigrams owned by this element: its own text and those crossing child boundaries.
        let (start, end) = (e.start as usize, e.end as usize);
        let mut cursor = start;
        let own = |from: usize, to: usize, set: &mut FxHashSet<Bigram>, counts: &mut [u32]| {
            for pos in from..to.min(end.saturating_sub(1)) {
                insert(bigram(text[pos], text[pos + 1]), set, counts);
            }
        };
        for &c in &e.children {
            let ce = &page.elements[c as usize];
            if ce.start >= ce.end {
                continue;
            }
            own(cursor, ce.start as usize, &mut set, &mut counts);
            cursor = cursor.max(ce.end as usize - 1);
        }
        own(cursor, end, &mut set, &mut counts);
        for t in 0..k {
            scores[t][i] =
                dice_from_counts(counts[t] as usize, set.len(), targets[t].set.len()) as f32;
        }
        inter[i * k..(i + 1) * k].copy_from_slice(&counts);
        sets[i] = Some(set);
    }
    scores
}

/// The best element of a page for one target and its rule. Ties (equal bigram-set Dice) go to the
/// element with less text (a wrapper whose extra text adds no new bigram is noise around the
/// target), then by the paper's order id > class > path, then to the deeper element, then to
/// the first in document order. For titles, a heading (`h1`–`h6`) wins a tie over other
/// elements of the same text.
fn best_element(page: &Page, scores: &[f32], target: &Target, field: Field) -> Option<Best> {
    let max = scores.iter().copied().fold(0f32, f32::max);
    if max <= 0.0 {
        return None;
    }
    let mut best: Option<(ElementIdx, String, RuleKind)> = None;
    for (i, &s) in scores.iter().enumerate() {
        if s < max {
            continue;
        }
        let Some((rule, kind)) = rule_for(page, i as u32) else {
            continue;
        };
        let better = match &best {
            None => true,
            Some((b, _, bk)) => {
                let heading = |e: &super::page::Element| {
                    field == Field::Title
                        && matches!(e.name.as_str(), "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
                };
                let key = |e: &super::page::Element, k: RuleKind| {
                    (e.end - e.start, !heading(e), k, std::cmp::Reverse(e.depth))
                };
                key(&page.elements[i], kind) < key(&page.elements[*b as usize], *bk)
            }
        };
        if better {
            best = Some((i as u32, rule, kind));
        }
    }
    let (mut idx, mut rule, _) = best?;
    let mut excluded = Vec::new();
    if target.summary {
        if let Some((up, leading)) = climb_summary(page, idx, target) {
            if let Some((r, _)) = rule_for(page, up) {
                idx = up;
                rule = r;
                excluded = leading;
            }
        }
    } else if field == Field::Article {
        let (up, outside) = full_content_excludes(page, idx, target);
        if let Some((r, _)) = rule_for(page, up) {
            idx = up;
            rule = r;
            excluded = outside;
        }
    }
    if field == Field::Article {
        // A block inside the article listing other posts (related posts, "More posts") is the
        // template's, whatever the feed holds (issue 28).
        let figures = super::blocks::Figures::of(page);
        for b in super::blocks::listed_block(page, &figures, idx) {
            if !excluded.iter().any(|&x| page.contains(x, b)) {
                excluded.push(b);
            }
        }
    }
    Some(Best {
        idx,
        rule,
        score: scores[idx as usize],
        excluded,
    })
}

/// The best element of one page for one field.
struct Best {
    /// The element (after a climb).
    idx: ElementIdx,
    rule: String,
    score: f32,
    /// Leading elements inside `idx` that are not article text (summary climbs only).
    excluded: Vec<ElementIdx>,
}

/// One training pair: a post page and the targets of its feed entry.
pub struct Sample<'a> {
    /// The parsed post page.
    pub page: &'a Page,
    /// Title target, if the entry has a title.
    pub title: Option<Target>,
    /// Article target, if the entry has content or a summary.
    pub article: Option<Target>,
}

/// The score of every element of a sample's page for each of its targets (article, title):
/// Algorithm 2 on one page.
pub struct PageScores(Vec<(Field, Vec<f32>)>);

fn fields<'s>(s: &'s Sample<'_>) -> Vec<(Field, &'s Target)> {
    [
        (Field::Article, s.article.as_ref()),
        (Field::Title, s.title.as_ref()),
    ]
    .into_iter()
    .filter_map(|(f, t)| t.map(|t| (f, t)))
    .collect()
}

/// Algorithm 2 on a sample's page, for each of its targets.
pub fn page_scores(s: &Sample<'_>) -> PageScores {
    let fields = fields(s);
    let targets: Vec<&Target> = fields.iter().map(|(_, t)| *t).collect();
    let scores = score_elements(s.page, &targets);
    PageScores(fields.into_iter().map(|(f, _)| f).zip(scores).collect())
}

/// The first pass of Algorithm 1, one page at a time: each page votes for its best rule per
/// field (and for the elements the summary climb stepped over), so pages need not be held.
#[derive(Debug, Default)]
pub struct Votes {
    votes: FxHashMap<(Field, String), (u32, f64)>,
    n_samples: FxHashMap<Field, u32>,
    /// (article rule, exclude rule) → pages where the climb stepped over that element.
    exclude_votes: FxHashMap<(String, String), u32>,
    /// (article rule, id/class rule of an element inside the article, hash of its text) →
    /// pages where that element held that text (template subtraction).
    template_votes: FxHashMap<(String, String, u64), u32>,
}

impl Votes {
    /// Adds one page's votes; returns its scores (for [`Winners::add`], when the caller keeps
    /// the page).
    pub fn add(&mut self, s: &Sample<'_>) -> PageScores {
        let scores = page_scores(s);
        for (field, sc) in &scores.0 {
            let Some(target) = fields(s).into_iter().find(|(f, _)| f == field).map(|x| x.1) else {
                continue;
            };
            *self.n_samples.entry(*field).or_default() += 1;
            if let Some(best) = best_element(s.page, sc, target, *field) {
                if *field == Field::Article {
                    for key in template_parts(s.page, best.idx) {
                        *self
                            .template_votes
                            .entry((best.rule.clone(), key.0, key.1))
                            .or_default() += 1;
                    }
                }
                for e in &best.excluded {
                    if let Some((x, _)) = rule_for(s.page, *e) {
                        *self
                            .exclude_votes
                            .entry((best.rule.clone(), x))
                            .or_default() += 1;
                    }
                }
                let v = self.votes.entry((*field, best.rule)).or_default();
                v.0 += 1;
                v.1 += best.score as f64;
            }
        }
        scores
    }

    /// The rule most pages voted for, per field (ties: more summed score, then the smaller
    /// rule), and the excludes most of the article rule's pages agree on. Their scores are
    /// computed in a second pass ([`Winners::add`]).
    pub fn winners(self) -> Winners {
        let mut best: FxHashMap<Field, (String, u32, f64)> = FxHashMap::default();
        for ((field, rule), (n, sum)) in self.votes {
            let w = best.entry(field).or_insert_with(|| (rule.clone(), n, sum));
            if (n, sum, std::cmp::Reverse(&rule)) > (w.1, w.2, std::cmp::Reverse(&w.0)) {
                *w = (rule, n, sum);
            }
        }
        let mut rules = Vec::new();
        for (field, (xpath, n, _)) in best {
            let Ok(parsed) = Rule::parse(&xpath) else {
                continue;
            };
            let samples = self.n_samples.get(&field).copied().unwrap_or(1);
            rules.push((
                LearnedRule {
                    field,
                    xpath,
                    score: 0.0,
                    votes: n,
                    samples,
                },
                parsed,
            ));
        }
        let mut excludes = Vec::new();
        if let Some((article, _)) = rules.iter().find(|(r, _)| r.field == Field::Article) {
            let mut voted: Vec<(String, u32)> = self
                .exclude_votes
                .into_iter()
                .filter(|((a, _), n)| *a == article.xpath && *n * 2 >= article.votes)
                .map(|((_, x), n)| (x, n))
                .collect();
            // Template subtraction: an element inside the article holding the same text on
            // most of its pages (a share bar, "Posted in", a signature block) is the template.
            let mut template: FxHashMap<String, u32> = FxHashMap::default();
            for ((a, x, _), n) in self.template_votes {
                if a == article.xpath && n >= TEMPLATE_PAGES && n * 2 >= article.votes {
                    let m = template.entry(x).or_default();
                    *m = (*m).max(n);
                }
            }
            for (x, n) in template {
                if !voted.iter().any(|(v, _)| *v == x) {
                    voted.push((x, n));
                }
            }
            voted.sort();
            for (xpath, n) in voted {
                excludes.push(LearnedRule {
                    field: Field::ArticleExclude,
                    xpath,
                    score: 1.0,
                    votes: n,
                    samples: article.samples,
                });
            }
        }
        Winners { rules, excludes }
    }
}

/// The winning rules of [`Votes`], collecting their mean score over the pages (the second pass).
#[derive(Debug)]
pub struct Winners {
    rules: Vec<(LearnedRule, Rule)>,
    excludes: Vec<LearnedRule>,
}

impl Winners {
    /// The winning rule of `field`, if any page voted.
    pub fn rule(&self, field: Field) -> Option<&LearnedRule> {
        self.rules.iter().map(|(r, _)| r).find(|r| r.field == field)
    }

    /// Adds a page's score under the winning rules: the score of the element each selects.
    pub fn add(&mut self, s: &Sample<'_>, scores: &PageScores) {
        for (rule, parsed) in &mut self.rules {
            if let Some((_, sc)) = scores.0.iter().find(|(f, _)| *f == rule.field) {
                rule.score += parsed
                    .apply_first(s.page)
                    .map_or(0.0, |i| sc[i as usize] as f64);
            }
        }
    }

    /// The learned rules, each scored by its mean over its field's samples, sorted by field.
    pub fn finish(self) -> Vec<LearnedRule> {
        let mut out: Vec<LearnedRule> = self
            .rules
            .into_iter()
            .map(|(mut r, _)| {
                r.score /= r.samples.max(1) as f64;
                r
            })
            .chain(self.excludes)
            .collect();
        out.sort_by(|a, b| (a.field, &a.xpath).cmp(&(b.field, &b.xpath)));
        out
    }
}

/// Learns one rule per field from the samples (Algorithm 1 with Algorithm 2 inside), pages
/// held: [`Votes`] then [`Winners`] over the same scores. Fields without any usable sample are
/// absent from the result.
pub fn learn(samples: &[Sample<'_>]) -> Vec<LearnedRule> {
    let mut votes = Votes::default();
    let scores: Vec<PageScores> = samples.iter().map(|s| votes.add(s)).collect();
    let mut winners = votes.winners();
    for (s, sc) in samples.iter().zip(&scores) {
        winners.add(s, sc);
    }
    winners.finish()
}

/// Per-page best rules for one field (debugging aid for `archive rules --explain` and tests).
pub fn page_votes(samples: &[Sample<'_>], field: Field) -> Vec<Option<(String, f32)>> {
    samples
        .iter()
        .map(|s| {
            let target = match field {
                Field::Article => s.article.as_ref()?,
                Field::Title => s.title.as_ref()?,
                Field::ArticleExclude
                | Field::Author
                | Field::SiteWideAuthor
                | Field::ConfirmingAuthor
                | Field::UnreliableDate
                | Field::PostMark
                | Field::ListingMark
                | Field::Date
                | Field::Comment
                | Field::CommentAuthor
                | Field::CommentDate
                | Field::CommentData => return None,
            };
            let scores = score_elements(s.page, &[target]);
            best_element(s.page, &scores[0], target, field).map(|b| (b.rule, b.score))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(body: &str) -> Page {
        Page::parse(&format!(
            "<html><head><title>My post | Blog</title></head><body>{body}</body></html>"
        ))
    }

    #[test]
    fn scores_match_direct_dice() {
        let p = page("<div id=side>Recent posts: other things</div><div class=post><h1>My post</h1><div class=entry><p>Alpha beta gamma.</p><p>Delta <b>epsilon</b> zeta.</p></div></div>");
        let t = Target::new("Alpha beta gamma. Delta epsilon zeta.", false);
        let scores = score_elements(&p, &[&t]);
        for (i, &s) in scores[0].iter().enumerate() {
            let direct = crate::core::text::dice(
                &p.text_of(i as u32),
                "Alpha beta gamma. Delta epsilon zeta.",
            );
            assert!(
                (s as f64 - direct).abs() < 1e-6,
                "element {i}: dp {s} vs direct {direct}"
            );
        }
        let entry = p.by_class("entry")[0];
        assert_eq!(scores[0][entry as usize], 1.0);
    }

    #[test]
    fn learns_class_rules_by_vote() {
        let pages: Vec<Page> = (0..3)
            .map(|i| page(&format!("<div id=side>Recent posts</div><article><h1 class=t>Post number {i} title words</h1><div class=entry><p>Body {i} of the post with some unique words {i}{i}.</p><p>More text.</p></div></article>")))
            .collect();
        let samples: Vec<Sample> = pages
            .iter()
            .enumerate()
            .map(|(i, p)| Sample {
                page: p,
                title: Some(Target::new(&format!("Post number {i} title words"), false)),
                article: Some(Target::new(
                    &format!("Body {i} of the post with some unique words {i}{i}. More text."),
                    false,
                )),
            })
            .collect();
        let rules = learn(&samples);
        assert_eq!(rules[0].xpath, "//*[@class='entry']");
        assert_eq!(rules[0].votes, 3);
        assert_eq!(rules[1].xpath, "//*[@class='t']");
    }

    #[test]
    fn summary_targets_climb_to_the_article() {
        let p = page("<article><h1>Title</h1><div class=content><p>First paragraph of the article is long enough to be the summary of it all.</p><p>Second paragraph says other things entirely.</p></div></article>");
        let t = Target::new(
            "First paragraph of the article is long enough to be the summary …",
            true,
        );
        let rules = learn(&[Sample {
            page: &p,
            title: None,
            article: Some(t),
        }]);
        assert_eq!(rules[0].xpath, "//*[@class='content']");
    }

    /// Summary feeds say nothing of the article's end: a share bar inside the article
    /// container, the same on every page, is found by template subtraction; a class that
    /// marks different text on each page (headings) is not.
    #[test]
    fn template_subtraction_excludes_what_every_article_repeats() {
        let openings = [
            "The hedge was pruned on Sunday, slowly, and it took far longer than planned.",
            "Nobody warned me about late frosts, least of all the postman on his round.",
            "The compost heap and the onion set both needed attention at once this week.",
            "I measured the potting bench with great care before the rain came back in.",
        ];
        let pages: Vec<Page> = openings
            .iter()
            .enumerate()
            .map(|(i, o)| {
                page(&format!(
                    "<article><h1>Post {i}</h1><div class=entry><p>{o}</p><h2 class=sub>Part {i} of the story</h2>\
                     <p>Then something else happened on day {i}, which is another story.</p>\
                     <div class=share>Share this: Twitter Facebook Email</div></div></article>"
                ))
            })
            .collect();
        let samples: Vec<Sample> = pages
            .iter()
            .zip(openings)
            .map(|(p, o)| Sample {
                page: p,
                title: None,
                article: Some(Target::new(o, true)),
            })
            .collect();
        let rules = learn(&samples);
        let of = |f: Field| -> Vec<&str> {
            rules
                .iter()
                .filter(|r| r.field == f)
                .map(|r| r.xpath.as_str())
                .collect()
        };
        assert_eq!(of(Field::Article), ["//*[@class='entry']"]);
        assert_eq!(of(Field::ArticleExclude), ["//*[@class='share']"]);
    }

    /// Pelican's notmyidea theme: the byline block is inside the article container. With a
    /// full-content feed, a one-paragraph post makes Dice pick the paragraph and a long post
    /// the container with the byline; both vote for the container, the byline excluded.
    #[test]
    fn full_content_targets_exclude_the_byline_inside_the_article() {
        let byline = "<footer class=post-info>Published: Tue 11 June 2024 By Owen Pritchard In Tools. tags: compost frost</footer>";
        let one = "The second attempt went better, mostly because I sketched the orchard first.";
        let two = "Half of the advice about earthworms online is wrong, and the other half is frost-bitten.";
        let three =
            "I made an unruly sketch of the rain barrel and pinned it above my desk, quietly.";
        let short = page(&format!(
            "<article><h1>A</h1><div class=entry-content>{byline}<p>{one}</p></div></article>"
        ));
        let long = page(&format!(
            "<article><h1>B</h1><div class=entry-content>{byline}<p>{one}</p><p>{two}</p><p>{three}</p></div></article>"
        ));
        let rules = learn(&[
            Sample {
                page: &short,
                title: None,
                article: Some(Target::new(one, false)),
            },
            Sample {
                page: &long,
                title: None,
                article: Some(Target::new(&format!("{one} {two} {three}"), false)),
            },
        ]);
        let of = |f: Field| {
            rules
                .iter()
                .find(|r| r.field == f)
                .map(|r| r.xpath.as_str())
        };
        assert_eq!(of(Field::Article), Some("//*[@class='entry-content']"));
        assert_eq!(of(Field::ArticleExclude), Some("//*[@class='post-info']"));
    }
}
