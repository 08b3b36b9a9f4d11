//! One page of a NewCrawl batch, read and recorded: its verdict (`ready::judge`, then
//! `page::process`: post, comments, links), the trap bound on its links, the post counted, and
//! its write sent to the store while the next page is read.

use super::*;

/// A page's frontier state once judged and extracted, and why it failed or gave no post.
pub(super) struct Verdict {
    state: PageState,
    /// With [`PageState::Queued`]: not before this time.
    retry_at: Option<DateTime<Utc>>,
    /// Why the page failed, for a person.
    failure: Option<String>,
    /// Why a page shaped like a permalink gave no post.
    declined: Option<String>,
    /// The page was parsed: its L(u) trains the frontier, whether or not it gave a post.
    parsed: bool,
}

/// The template of a URL for the trap bound: host, path with digit runs replaced by `0`, query
/// keys without values.
fn template(url: &str) -> String {
    let Ok(u) = Url::parse(url) else {
        return url.to_string();
    };
    let t = digits_to_zero(u.path());
    let mut keys: Vec<String> = u.query_pairs().map(|(k, _)| k.into_owned()).collect();
    keys.sort();
    format!("{}{t}?{}", u.host_str().unwrap_or(""), keys.join("&"))
}

impl ReadPage {
    /// Sends the page's write to the store ([`Store::record_page_later`]).
    pub(super) fn send(self, store: &mut Store) -> Recording {
        Recording {
            url: self.outcome.url.clone(),
            written: store.record_page_later(self.outcome),
            parsed: self.parsed,
        }
    }
}

impl NewCrawl<'_> {
    /// A batch page read: its verdict tallied, its links bounded, its comments reconciled,
    /// ready to write ([`ReadPage::send`]).
    pub(super) fn read(&mut self, page: Ready) -> Result<ReadPage> {
        let (verdict, processed) = self.extract(&page)?;
        self.tally(&page.url, &verdict);
        let Processed {
            mut post,
            mut links,
            post_links,
            comments,
            declined: _,
            page: blog_page,
        } = processed;
        if let Some(p) = post.as_mut() {
            self.prepare_post(p, page.render_failed());
        }
        self.trap_bound(&mut links);
        if verdict.parsed {
            self.frontier.observe(&page.url, post_links);
        }
        let comments = comments
            .map(|(post_url, c)| comment_write(self.store, &post_url, &c))
            .transpose()?;
        let error = verdict
            .failure
            .or(verdict.declined)
            .or_else(|| page.failure());
        let found = Found {
            post,
            links,
            post_links: verdict.parsed.then_some(post_links as u32),
            state: verdict.state,
            retry_at: verdict.retry_at,
            error,
            comments,
            page: blog_page,
        };
        Ok(ReadPage {
            outcome: page.outcome(self.blog.id, found),
            parsed: verdict.parsed,
        })
    }

    /// A page's write answered: the link streaks, the processed count and the posts counted.
    pub(super) fn recorded(&mut self, r: Recording) -> Result<()> {
        let written = r.written.wait()?;
        if r.parsed {
            self.streaks.observe(&r.url, written.new_post_links);
        }
        self.processed += 1;
        self.count_posts(written.post == Some(crate::store::PostWrite::New))
    }

    /// The page's frontier state ([`judge`]) and, when it is done, what it holds
    /// (`page::process`): a panic while extracting fails the page, not the crawl.
    pub(super) fn extract(&mut self, page: &Ready) -> Result<(Verdict, Processed)> {
        let (mut state, retry_at) = judge(self.store, &self.blog, page)?;
        self.summary.blocked += (state == PageState::Blocked) as u64;
        self.summary.refused += (state == PageState::Refused) as u64;
        let mut failure = (state == PageState::Failed).then(|| {
            if page.render_failed() {
                "rendering in Chromium failed twice (see the log)".to_string()
            } else {
                page.failure().unwrap_or_default()
            }
        });
        let processed = match (page.page(), state) {
            (Some(r), PageState::Done) => {
                match process_safely(&self.ctx, &page.url, page.depth, r) {
                    Some(p) => p,
                    None => {
                        // A bug on one page must not end the crawl: the page is recorded as
                        // failed.
                        state = PageState::Failed;
                        failure =
                            Some("internal error while extracting this page (see the log)".into());
                        Processed::default()
                    }
                }
            }
            _ => Processed::default(),
        };
        let parsed = state == PageState::Done && page.response().is_some();
        let (state, declined) = processed.state(state);
        let verdict = Verdict {
            state,
            retry_at,
            failure,
            declined,
            parsed,
        };
        Ok((verdict, processed))
    }

    /// Counts the page's failure or declined post in the summary, with a few samples.
    pub(super) fn tally(&mut self, url: &str, verdict: &Verdict) {
        let s = &mut self.summary;
        if let Some(why) = &verdict.failure {
            s.errors += 1;
            if s.error_samples.len() < 10 {
                s.error_samples.push((url.to_string(), why.clone()));
            }
        }
        match verdict.state {
            PageState::NotPost => s.not_posts += 1,
            PageState::Unread => s.unread += 1,
            _ => {}
        }
        if let (Some(why), true) = (&verdict.declined, s.declined_samples.len() < 10) {
            s.declined_samples
                .push((url.to_string(), verdict.state, why.clone()));
        }
    }

    /// A post's next comment check, and the gap its failed rendering leaves.
    pub(super) fn prepare_post(&self, post: &mut NewPost, render_failed: bool) {
        let (ctx, renders) = (&self.ctx, self.blog.renders);
        schedule_comment_check(post, ctx, renders, &self.opts.update, Utc::now());
        if render_failed {
            post.gaps.push(Gap {
                field: GapField::Comments,
                reason: "the page could not be rendered in Chromium; comments shown by JavaScript are missing (see the log)".into(),
            });
        }
    }

    /// The trap bound: links past `max_per_template` of their URL template are dropped.
    pub(super) fn trap_bound(&mut self, links: &mut Vec<Link>) {
        let max = self.opts.settings.max_per_template;
        links.retain(|l| {
            let n = self.templates.entry(template(&l.url)).or_insert(0);
            *n += 1;
            *n <= max
        });
    }

    /// After each page: whether the archive gained a post (`new_post`: the page's write added
    /// one; the yield-based stop), and the progress display, whose queued count is read from
    /// the store every [`QUEUED_COUNT_EVERY`] pages only.
    pub(super) fn count_posts(&mut self, new_post: bool) -> Result<()> {
        if new_post {
            self.posts_before += 1;
            self.since_new_post = 0;
            self.summary.pages_at_last_post = self.processed;
        } else {
            self.since_new_post += 1;
        }
        if self.processed % QUEUED_COUNT_EVERY == 1 {
            self.queued = self.store.counts(self.blog.id)?.queued;
        }
        let s = &self.summary;
        self.progress
            .update(s.pages_fetched, self.posts_before, s.errors, self.queued);
        Ok(())
    }
}
