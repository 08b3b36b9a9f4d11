//! Rule learning from the feed (paper §3): each feed entry and its page form a training pair;
//! `core::learn` finds the article and title rules (Algorithm 1 with the linear-time Algorithm 2),
//! `core::meta` the author and date rules, `core::comments` the comment rules (maximum weighted
//! bipartite matching against comment feeds), and the feed's permalinks give the post URL
//! pattern. Everything learned is stored with the blog; the entries seed the frontier.
//!
//! Bounded whatever the feed: rules are learned from a spread sample of at most
//! `[crawl] learn_entries` entries (and never more than the page budget), and their pages are
//! read from the store, parsed and scored one at a time in two passes (votes, then the winners'
//! scores with the author, date and comment evidence), so memory holds one page, not the feed's.

use super::traffic::BrowserTraffic;
use super::training::{Pair, Training};
use super::CrawlOptions;
use super::{comment_learning, rendering};
use crate::core::feed::{self, FeedEntry, Targets};
use crate::core::identify::MarkVotes;
use crate::core::learn::{page_scores, Votes, Winners};
use crate::core::meta::MetaVotes;
use crate::core::page::Page;
use crate::core::post_url::{canonical, PostUrlPattern};
use crate::core::rules::Rule;
use crate::core::rules::{Field, LearnedRule};
use crate::fetch::{self, Fetcher, Resource, Response};
use crate::store::{Blog, Link, Renders, Source, Store, StoredResponse, StoredRule};
use anyhow::{bail, Context, Result};
use chrono::{DateTime, Utc};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use url::Url;

/// A fresh copy of the feed, kept like every response; its entries replace the stored ones. On
/// failure the stored entries serve.
///
/// # Errors
/// Only when the store fails.
pub(super) async fn refresh_entries(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
) -> Result<()> {
    let f = fetcher.get(&blog.feed_url, Resource::Feed).await;
    store.keep_fetched(blog.id, &f)?;
    let Some(r) = f.success() else {
        if let Some(why) = f.record.failure() {
            tracing::warn!(feed = %blog.feed_url, %why, "feed unavailable; using the stored entries");
        }
        return Ok(());
    };
    match feed::parse(&r.body, &r.final_url) {
        Ok(parsed) if !parsed.entries.is_empty() => {
            store.save_entries(blog.id, &super::canonical_entries(&parsed))?
        }
        Ok(_) => {
            tracing::warn!(feed = %blog.feed_url, "feed has no entries now; using the stored ones")
        }
        Err(e) => {
            tracing::warn!(feed = %blog.feed_url, error = %e, "feed no longer parses; using the stored entries")
        }
    }
    Ok(())
}

/// At most `n` of `len` items, spread evenly (first and last included): the indices.
fn spread(len: usize, n: usize) -> Vec<usize> {
    if len <= n {
        return (0..len).collect();
    }
    if n <= 1 {
        return vec![0];
    }
    let mut v: Vec<usize> = (0..n).map(|i| i * (len - 1) / (n - 1)).collect();
    v.dedup();
    v
}

/// The entry pages: stored responses reused, the others fetched (and kept). Returns the URLs of
/// the entries whose page is usable (stored or fetched, below 400; fetched ones HTML), and the
/// first reason one could not be fetched.
async fn entry_pages(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    entries: &[&FeedEntry],
    concurrency: usize,
) -> Result<(HashSet<String>, Option<String>)> {
    let mut usable = HashSet::new();
    let mut missing = Vec::new();
    for e in entries {
        match store.latest_response(blog.id, &e.url)? {
            Some(StoredResponse { response: r, .. }) if r.status < 400 => {
                usable.insert(e.url.clone());
            }
            _ => missing.push((e.url.clone(), None)),
        }
    }
    let mut failure = None;
    for (u, f) in fetcher.get_all(missing, Resource::Page, concurrency).await {
        store.keep_fetched(blog.id, &f)?;
        match f.response.as_ref() {
            Some(r) if r.status < 400 && fetch::is_html(r) => {
                usable.insert(u);
            }
            _ => failure = failure.or_else(|| f.record.failure().map(|why| format!("{u}: {why}"))),
        }
    }
    Ok((usable, failure))
}

/// What the first pass over the entry pages gives: the winning rules, the entries' permalinks
/// (as linked and as served) and when the first page was fetched.
struct FirstPass {
    winners: Winners,
    urls: Vec<Url>,
    fetched_at: Option<DateTime<Utc>>,
    /// The language most entry pages declare (`<html lang>`), if any does.
    language: Option<String>,
}

/// The evidence of the second pass around each page's article: author and date candidates,
/// comment structures, post marks.
#[derive(Default)]
struct Evidence {
    meta: MetaVotes,
    marks: MarkVotes,
}

/// One learning in progress.
struct Learner<'a> {
    store: &'a mut Store,
    fetcher: &'a Fetcher,
    traffic: &'a Arc<BrowserTraffic>,
    blog: &'a Blog,
    opts: &'a CrawlOptions,
}

/// Learns from the stored feed entries (only those in `only`, when given): a spread sample of
/// at most `[crawl] learn_entries` of them, within the page budget, their pages fetched when not
/// stored yet; a rendering browser's requests go through `traffic`. Stores the rules and the
/// post URL pattern and seeds the frontier with the start page and every entry.
///
/// # Errors
/// No entry page matched its entry's text (no article rule), no usable permalink, or the store
/// failed.
pub(super) async fn learn_from_entries(
    store: &mut Store,
    fetcher: &Fetcher,
    traffic: &Arc<BrowserTraffic>,
    blog: &Blog,
    opts: &CrawlOptions,
    only: Option<&HashSet<String>>,
) -> Result<()> {
    let mut learner = Learner {
        store,
        fetcher,
        traffic,
        blog,
        opts,
    };
    let training = learner.sample(only).await?;
    let pairs = training.pairs();
    learner.decide_rendering(&pairs).await?;
    let FirstPass {
        mut winners,
        urls,
        fetched_at,
        language,
    } = learner.vote(&pairs)?;
    // The feed did not say the blog's language (`archive add`): its posts do.
    if let (None, Some(language)) = (&blog.language, language) {
        learner.store.set_blog_language(blog.id, &language)?;
    }
    let Some(article) = winners.rule(Field::Article) else {
        bail!(
            "could not learn an article rule for {}: {} of {} sampled feed entry pages could be fetched and none matched its entry's text{}",
            blog.feed_url,
            pairs.len(),
            training.picked.len(),
            training.failure.as_ref().map(|f| format!(" (first failure: {f})")).unwrap_or_default()
        );
    };
    let article_rule = Rule::parse(&article.xpath)?;
    let pattern = PostUrlPattern::learn(&urls).context("no usable permalink in the feed")?;
    let feed_comments =
        comment_learning::comment_feeds(learner.store, fetcher, blog, &training.sampled()).await?;
    let mut evidence = learner.weigh(&pairs, &article_rule, &mut winners)?;
    // Relearning after template drift (`only`) reads the listing pages anew: the stored ones
    // show the old template.
    // Within the page budget: what the entry pages left of it.
    let room = (opts.settings.max_pages as usize).saturating_sub(training.picked.len());
    learner
        .add_listings(only.is_some(), room, &mut evidence.marks)
        .await?;
    let Evidence { meta, marks } = evidence;
    let mut learned = page_rules(winners, marks, &meta, pairs.len() as u32);
    let fetched_at = fetched_at.unwrap_or_else(Utc::now);
    let mut comments = comment_learning::learn(
        learner.store,
        blog,
        &pairs,
        &feed_comments,
        fetched_at,
        &article_rule,
    )?;
    let rendered_now = comment_learning::decide(
        learner.store,
        blog,
        opts,
        learner.traffic,
        &pairs,
        &article_rule,
        &comments,
    )
    .await?;
    if rendered_now {
        // The entry pages are renderings now: the comments are learned from what they show.
        comments = comment_learning::learn(
            learner.store,
            blog,
            &pairs,
            &feed_comments,
            fetched_at,
            &article_rule,
        )?;
    }
    learned.extend(comments.rules());
    learner.save(learned, &pattern, &training.entries)
}

/// The rules of the page around the post: the winners (article, title, excludes), the post
/// marks, author rules, site-wide authors and unreliable dates (judged on `sampled` pages), the
/// date rule with its format.
fn page_rules(
    winners: Winners,
    marks: MarkVotes,
    meta: &MetaVotes,
    sampled: u32,
) -> Vec<(LearnedRule, Option<String>)> {
    let mut learned: Vec<(LearnedRule, Option<String>)> =
        winners.finish().into_iter().map(|r| (r, None)).collect();
    learned.extend(marks.finish().into_iter().map(|r| (r, None)));
    learned.extend(meta.authors().into_iter().map(|r| (r, None)));
    let judged = |field: Field, xpath: String| LearnedRule {
        field,
        xpath,
        score: 0.0,
        votes: sampled,
        samples: sampled,
    };
    learned.extend(
        meta.site_wide_authors()
            .into_iter()
            .map(|xpath| (judged(Field::SiteWideAuthor, xpath), None)),
    );
    learned.extend(
        meta.confirming_authors()
            .map(|xpath| (judged(Field::ConfirmingAuthor, xpath.to_string()), None)),
    );
    learned.extend(
        meta.unreliable_dates()
            .map(|xpath| (judged(Field::UnreliableDate, xpath.to_string()), None)),
    );
    learned.extend(meta.date().map(|(r, f)| (r, Some(f))));
    learned
}

impl Learner<'_> {
    /// The training sample: the stored entries (only those in `only`, when given), their
    /// targets with the boilerplate repeated across all entries removed, a spread sample of at
    /// most `learn_entries` of them within the page budget, their pages stored or fetched.
    async fn sample(&mut self, only: Option<&HashSet<String>>) -> Result<Training> {
        let mut entries = self.store.entries(self.blog.id)?;
        if let Some(only) = only {
            entries.retain(|e| only.contains(&e.url));
        }
        // Boilerplate is what repeats across all entries; the sample is what is learned from.
        let targets = feed::targets(&entries);
        let settings = &self.opts.settings;
        let budget = settings.learn_entries.min(settings.max_pages as usize);
        let picked: Vec<usize> = spread(entries.len(), budget.max(1));
        let sample: Vec<&FeedEntry> = picked.iter().map(|&i| &entries[i]).collect();
        let (usable, failure) = entry_pages(
            self.store,
            self.fetcher,
            self.blog,
            &sample,
            settings.concurrency,
        )
        .await?;
        Ok(Training {
            entries,
            targets,
            picked,
            usable,
            failure,
        })
    }

    /// The render stage (paper §4.1): decide whether this blog's posts need Chromium for their
    /// text, and learn from the pages as the decision will have them.
    async fn decide_rendering(&mut self, pairs: &[Pair<'_>]) -> Result<()> {
        let with_targets: Vec<(&FeedEntry, &Targets)> =
            pairs.iter().map(|p| (p.entry, p.target)).collect();
        rendering::decide(
            self.store,
            self.blog,
            self.opts,
            self.traffic,
            &with_targets,
        )
        .await
    }

    /// Pass 1: every page votes for its best article and title rules.
    fn vote(&self, pairs: &[Pair<'_>]) -> Result<FirstPass> {
        let mut votes = Votes::default();
        let mut urls = Vec::new();
        let mut fetched_at = None;
        let mut languages: HashMap<String, usize> = HashMap::new();
        for p in pairs {
            let Some((page, r)) = p.page(self.store, self.blog)? else {
                continue;
            };
            if let Some(l) = crate::core::head::page_language(&page) {
                *languages.entry(l).or_default() += 1;
            }
            votes.add(&p.sample(&page));
            urls.push(Url::parse(&p.entry.url)?);
            urls.extend(Url::parse(&r.final_url).ok());
            fetched_at.get_or_insert(r.fetched_at);
        }
        Ok(FirstPass {
            winners: votes.winners(),
            urls,
            fetched_at,
            // The most declared; on a tie, the first in tag order, so a relearning agrees.
            language: languages
                .into_iter()
                .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
                .map(|(l, _)| l),
        })
    }

    /// Pass 2: the winners' scores; author, date and comment evidence around each article;
    /// what the entry pages carry, for post identification.
    fn weigh(
        &self,
        pairs: &[Pair<'_>],
        article_rule: &Rule,
        winners: &mut Winners,
    ) -> Result<Evidence> {
        let mut evidence = Evidence::default();
        for p in pairs {
            let Some((page, r)) = p.page(self.store, self.blog)? else {
                continue;
            };
            let sample = p.sample(&page);
            winners.add(&sample, &page_scores(&sample));
            if let Ok(base) = Url::parse(&r.final_url) {
                evidence.marks.add_entry(&page, &base, article_rule);
            }
            let Some(article) = article_rule.apply_first(&page) else {
                continue;
            };
            evidence
                .meta
                .add(&p.meta_sample(&page, article, r.fetched_at));
        }
        Ok(evidence)
    }

    /// Stores the rules and the post URL pattern, and seeds the frontier with the start page
    /// and every entry.
    fn save(
        &mut self,
        learned: Vec<(LearnedRule, Option<String>)>,
        pattern: &PostUrlPattern,
        entries: &[FeedEntry],
    ) -> Result<()> {
        let blog = self.blog;
        let at = Utc::now();
        let rules: Vec<StoredRule> = learned
            .into_iter()
            .map(|(r, format)| StoredRule {
                field: r.field,
                xpath: r.xpath,
                score: r.score,
                votes: r.votes,
                samples: r.samples,
                learned_at: at,
                format,
            })
            .collect();
        for r in &rules {
            tracing::info!(blog = %blog.feed_url, field = %r.field, xpath = %r.xpath, votes = r.votes, samples = r.samples, score = r.score, "learned rule");
        }
        self.store.save_rules(blog.id, &rules, pattern)?;
        let start = blog.start_url.as_deref().unwrap_or(&blog.home_url);
        let mut seeds = vec![Link {
            url: canonical(&Url::parse(start)?).to_string(),
            depth: 0,
            source: Source::Start,
            post: false,
        }];
        seeds.extend(entries.iter().map(|e| Link {
            url: e.url.clone(),
            depth: 1,
            source: Source::Feed,
            post: true,
        }));
        self.store.enqueue(blog.id, &seeds)?;
        Ok(())
    }
}

/// Listing pages read for post identification (`core::identify`).
const LISTING_SAMPLES: usize = 2;

impl Learner<'_> {
    /// Adds the blog's listing pages to the post-identification vote: its home page and the
    /// home page's next page ([`LISTING_SAMPLES`]), one at a time. Stored responses are reused
    /// unless `fresh`, the others fetched (at most `room` of them: the page budget) and kept
    /// (the crawl reads them from the store later, so nothing is requested twice); rendered when
    /// the blog renders every page, as its entry pages are.
    ///
    /// # Errors
    /// Only when the store fails (an unreachable page adds nothing).
    async fn add_listings(
        &mut self,
        fresh: bool,
        mut room: usize,
        votes: &mut MarkVotes,
    ) -> Result<()> {
        let blog_id = self.blog.id;
        let renders_all = self.store.blog(blog_id)?.and_then(|b| b.renders) == Some(Renders::All);
        let mut next = Url::parse(&self.blog.home_url)
            .ok()
            .map(|u| canonical(&u).to_string());
        for _ in 0..LISTING_SAMPLES {
            let Some(url) = next.take() else { break };
            let Some(mut response) = self.listing_page(&url, fresh, &mut room).await? else {
                break;
            };
            if !fetch::is_html(&response) {
                break;
            }
            if renders_all {
                response = self.rendered(&url, response).await?;
            }
            let page = Page::parse(&fetch::decode(&response));
            votes.add_listing(&page);
            next = Url::parse(&response.final_url)
                .ok()
                .and_then(|base| crate::core::listing::next_page(&page, &base))
                .map(|u| canonical(&u).to_string())
                .filter(|u| *u != url);
        }
        Ok(())
    }

    /// A listing page's response: the stored one unless `fresh`, else fetched (one of `room`)
    /// and kept. `None` when it could not be had: the budget is spent, or the fetch failed.
    async fn listing_page(
        &mut self,
        url: &str,
        fresh: bool,
        room: &mut usize,
    ) -> Result<Option<Response>> {
        let stored = if fresh {
            None
        } else {
            self.store
                .latest_response(self.blog.id, url)?
                .map(|s| s.response)
        };
        match stored {
            Some(r) if r.status < 400 => Ok(Some(r)),
            _ if *room == 0 => {
                tracing::info!(page = %url, "page budget spent on the entry pages: the listing page is not read for post marks");
                Ok(None)
            }
            _ => {
                *room -= 1;
                let f = self.fetcher.get(url, Resource::Page).await;
                self.store.keep_fetched(self.blog.id, &f)?;
                Ok(f.success().cloned())
            }
        }
    }

    /// A listing page of a blog rendered throughout, as rendered (the rendering kept); as
    /// served when it is rendered already, no renderer is at hand, or rendering failed.
    async fn rendered(&mut self, url: &str, response: Response) -> Result<Response> {
        let opts = self.opts;
        let Some(renderer) = &opts.renderer else {
            return Ok(response);
        };
        if response.is_rendered() {
            return Ok(response);
        }
        let pages = vec![(url.to_string(), response.clone())];
        let blog_id = self.blog.id;
        let hints = crate::render::Hints::default();
        let rendered =
            rendering::render_all(renderer, self.traffic, self.store, blog_id, pages, &hints)
                .await?
                .remove(url);
        match rendered {
            Some(r) => {
                self.store.keep_response(blog_id, &r)?;
                Ok(r)
            }
            None => Ok(response),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::spread;

    #[test]
    fn samples_spread_over_the_feed() {
        assert_eq!(spread(5, 20), vec![0, 1, 2, 3, 4]);
        assert_eq!(spread(100, 5), vec![0, 24, 49, 74, 99]);
        assert_eq!(spread(3, 1), vec![0]);
        assert_eq!(spread(0, 4), Vec::<usize>::new());
    }
}
