//! UpdateCrawl's step 3: the pages fetched again, each for its reason (`Why`): fetched (or
//! rendered, or asked through the widget's data), extracted, compared with the archive and
//! recorded; the comment pages of changed posts next; a new page that repeats an archived post
//! read again once that post was checked. The agreement of each new or edited entry with its
//! page feeds drift detection.

use super::*;

/// A feed entry's agreement with the text extracted from its page: Dice of the entry's text and
/// the article (for a summary-only feed, the article's beginning of the same length).
fn agreement(target: &Targets, text: &str) -> Option<f64> {
    let t = target.article.as_deref()?;
    if target.summary {
        Some(crate::core::text::dice_of_opening(t, text))
    } else {
        Some(dice(t, text))
    }
}

impl Update<'_> {
    /// Step 3: the changed pages, then the comment pages they link to. Returns the agreement of
    /// each new or edited entry with its page (for drift) and the pages stored, or `None` when
    /// stopped on request.
    #[allow(clippy::type_complexity)]
    pub(super) async fn fetch_changed(
        &mut self,
    ) -> Result<Option<(Vec<(String, Option<f64>)>, Vec<String>)>> {
        let blog_id = self.blog.id;
        let mut done: HashSet<String> = HashSet::new();
        let mut stored_now: Vec<String> = Vec::new();
        let mut agreements: Vec<(String, Option<f64>)> = Vec::new();
        let targets: HashMap<String, Targets> = self
            .current
            .iter()
            .map(|e| e.url.clone())
            .zip(feed::targets(&self.current))
            .collect();
        let mut round: Vec<(String, Why)> = std::mem::take(&mut self.pages).into_iter().collect();
        // Pages read again once the round before them is done.
        let mut later: Vec<(String, Why)> = Vec::new();
        while !round.is_empty() {
            if self.opts.stopped() {
                self.summary.complete = false;
                return Ok(None);
            }
            let mut requests = Vec::new();
            let widgets = self.blog.renders.is_some_and(|r| r.wants(true));
            for (u, why) in &round {
                // A comment widget's comments change without its page: fetch it whole.
                let previous = match why {
                    Why::Comments if widgets => None,
                    _ => self.store.latest_response(blog_id, u)?.map(|s| s.response),
                };
                requests.push((u.clone(), previous));
            }
            let why: HashMap<String, Why> = round.into_iter().collect();
            let mut next_round = Vec::new();
            let fetched = self
                .fetcher
                .get_all(requests, Resource::Page, self.opts.settings.concurrency)
                .await;
            for (url, got) in fetched {
                done.insert(url.clone());
                self.summary.requests += got.requests().count() as u64;
                // The archived post this page is (under its first URL, however it is fetched).
                let archived = match self.identity.get(&url) {
                    Some(first) => self.store.archived_at(first)?,
                    None => self.store.archived_at(&url)?,
                };
                let now = Utc::now();
                let next_revisit = archived
                    .as_ref()
                    .map(|p| crate::crawl::revisit::next_revisit(p, &self.opts.update, now));
                if got.blocked || got.not_modified() {
                    self.summary.not_modified += got.not_modified() as u64;
                    self.store.log_fetches(Some(blog_id), got.requests())?;
                    if let (true, Some(p), Some(next)) =
                        (got.not_modified(), &archived, next_revisit)
                    {
                        self.store.revisited(&p.url, now, next)?;
                    }
                    continue;
                }
                let status = got.response.as_ref().map(|r| r.status);
                let redirect = archived.as_ref().map(|p| {
                    crate::crawl::revisit::redirected(p, &got, &self.home, &self.ctx.pattern)
                });
                let gone = archived.is_some()
                    && (matches!(status, Some(404 | 410)) || redirect == Some(Redirected::Gone));
                let moved_to = match (redirect, &archived) {
                    (Some(Redirected::Moved(to)), Some(p)) if p.moved_to.as_ref() != Some(&to) => {
                        tracing::info!(post = %p.url, to = %to, "post moved; it keeps its identity");
                        Some(to)
                    }
                    _ => None,
                };
                let failed = !gone && !matches!(status, Some(s) if s < 400);
                let why = why[&url];
                let url = archived.as_ref().map_or(url, |p| p.url.clone());
                if failed {
                    self.summary.errors += 1;
                    tracing::warn!(url = %url, status = ?status, "update crawl: page unavailable");
                }
                if matches!(why, Why::New | Why::Recheck) {
                    // Known to the frontier, so a resumed NewCrawl does not fetch it again.
                    let source = self.found_by.get(&url).copied().unwrap_or(Source::Feed);
                    self.store.enqueue(
                        blog_id,
                        &[Link {
                            url: url.clone(),
                            depth: 1,
                            source,
                            post: true,
                        }],
                    )?;
                }
                // Changed pages are posts (or their comment pages): rendered when the blog renders.
                let rendered = match (&self.opts.renderer, &got.response) {
                    (Some(renderer), Some(r))
                        if !failed
                            && !gone
                            && fetch::is_html(r)
                            && self.blog.renders.is_some_and(|x| x.wants(true)) =>
                    {
                        crate::crawl::rendering::render_all(
                            renderer,
                            &self.traffic,
                            self.store,
                            blog_id,
                            vec![(url.clone(), r.clone())],
                            &self.ctx.render_hints(),
                        )
                        .await?
                        .remove(&url)
                    }
                    _ => None,
                };
                let mut processed = match rendered.as_ref().or(got.response.as_ref()) {
                    Some(r) if !failed && !gone => {
                        process_safely(&self.ctx, &url, 1, r).unwrap_or_default()
                    }
                    _ => Default::default(),
                };
                if archived.is_some() {
                    processed.keep_identity(&url);
                }
                let twins = match (&processed.post, why) {
                    (Some(p), Why::New) => {
                        crate::crawl::revisit::twins(self.store, blog_id, &url, p)?
                    }
                    _ => Vec::new(),
                };
                if !twins.is_empty() {
                    // An archived post under another URL says the same: it may have moved
                    // here. Its URL is fetched first, this page read again after.
                    for t in twins {
                        let at = self.fetch_url_of(&t);
                        if done.insert(at.clone()) {
                            next_round.push((at, Why::Revisit));
                        }
                    }
                    later.push((url.clone(), Why::Recheck));
                    self.store.log_fetches(Some(blog_id), got.requests())?;
                    continue;
                }
                if let Some(p) = processed.post.as_mut() {
                    schedule_comment_check(
                        p,
                        &self.ctx,
                        self.blog.renders,
                        &self.opts.update,
                        Utc::now(),
                    );
                }
                if let (Some(t), true) = (targets.get(&url), matches!(why, Why::New | Why::Edited))
                {
                    if got.response.as_ref().is_some_and(fetch::is_html) && !gone && !failed {
                        // Drift is the rules' disagreement: an article the generic extractor
                        // had to give counts as none.
                        let score = processed
                            .post
                            .as_ref()
                            .filter(|p| {
                                p.extracted_by.is_none_or(|b| {
                                    b.content != crate::core::extract::Extractor::Fallback
                                })
                            })
                            .and_then(|p| agreement(t, &p.content_text));
                        agreements.push((url.clone(), score.or(Some(0.0))));
                    }
                }
                for link in &processed.links {
                    if let Ok(l) = Url::parse(&link.url) {
                        let owner = comment_page_of(&l).map(|p| canonical(&p).to_string());
                        if owner.as_deref() == Some(url.as_str()) && !done.contains(&link.url) {
                            next_round.push((link.url.clone(), Why::CommentPage));
                            done.insert(link.url.clone());
                        }
                    }
                }
                if got.response.is_some() && !failed && !gone {
                    stored_now.push(url.clone());
                }
                let (state, declined) = processed.state(if failed {
                    PageState::Failed
                } else {
                    PageState::Done
                });
                let error = got.record.failure().filter(|_| failed).or(declined);
                let comments = processed
                    .comments
                    .map(|(post_url, c)| comment_write(self.store, &post_url, &c))
                    .transpose()?;
                let written = self.store.record_page(&PageOutcome {
                    blog_id,
                    url: url.clone(),
                    fetches: got.requests().cloned().collect(),
                    response: got.response,
                    redirects: got.redirects,
                    rendered,
                    reused_response: None,
                    post: processed.post,
                    links: Vec::new(),
                    post_links: None,
                    state,
                    retry_at: None,
                    error,
                    comments,
                    gone,
                    moved_to,
                    next_revisit: next_revisit.filter(|_| !failed && !gone),
                    page: processed.page,
                })?;
                self.count(&url, written);
            }
            round = next_round;
            if round.is_empty() {
                round = std::mem::take(&mut later);
            }
        }
        Ok(Some((agreements, stored_now)))
    }

    pub(super) fn count(&mut self, url: &str, written: crate::store::Written) {
        match written.post {
            Some(PostWrite::New) => self.summary.new_posts += 1,
            Some(PostWrite::Edited(v)) => {
                self.summary.edited_posts += 1;
                tracing::info!(post = %url, version = v, "post changed; previous version kept");
            }
            _ => {}
        }
        self.summary.gone_posts += written.gone as u64;
        self.summary.moved_posts += written.moved as u64;
        self.summary.new_comments += written.new_comments as u64;
        self.summary.edited_comments += written.edited_comments as u64;
        if written.gone {
            tracing::info!(post = %url, "post gone from the blog; it stays archived");
        }
    }
}
