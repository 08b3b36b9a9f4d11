//! Page requisites and media of archived posts: after a crawl archives posts, each post's
//! images, stylesheets (and the fonts and images they use), favicon, audio/video and
//! attachments (`core::requisites`), and the enclosures its feed entry carries, are fetched through `fetch` (politeness always; robots.txt
//! per `[robots] requisites`), kept as responses (bodies once by SHA-256) and listed on the
//! post (`post_media`). A requisite shared by many posts is fetched once per blog. A rendered
//! post's requisites are those of its rendered DOM and of the page as served.
//!
//! Stateless and resumable: posts whose media are not captured yet (`media_at`) are found in
//! the store, so a crash or a stop only leaves work for the next job.

use crate::core::html::parse_document;
use crate::core::requisites::{self, Kind, Requisite};
use crate::fetch::{decode_body, Fetched, Fetcher};
use crate::store::{Blog, MediaState, NewMedia, PendingMedia, ResponseId, ResponseStatus, Store};
use anyhow::Result;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use url::Url;

/// The `[media]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MediaSettings {
    /// Capture posts' requisites and media at all (default true).
    pub capture: bool,
    /// Largest file kept, in MB (default 100); larger ones are recorded as failed, saying so.
    pub max_file_mb: f64,
    /// Most media kept per blog, in MB of distinct bodies (default 2048); past it files are
    /// recorded as skipped, logged and counted, not an error.
    pub max_blog_mb: f64,
    /// Most requisites recorded per post (default 200).
    pub max_per_post: usize,
    /// Requests in flight at once (each host still bounded by its politeness; default 4).
    pub concurrency: usize,
    /// Also keep files on other hosts than the post's (CDNs, image hosts; default true).
    pub other_hosts: bool,
}

impl Default for MediaSettings {
    fn default() -> Self {
        MediaSettings {
            capture: true,
            max_file_mb: 100.0,
            max_blog_mb: 2048.0,
            max_per_post: 200,
            concurrency: 4,
            other_hosts: true,
        }
    }
}

/// What a capture run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MediaSummary {
    /// Posts whose media were captured.
    pub posts: u64,
    /// Files fetched by this run.
    pub fetched: u64,
    /// Files already in the archive (shared with other posts), not fetched again.
    pub reused: u64,
    /// Files whose fetch failed (network, cap, robots.txt with `requisites = "obey"`).
    pub failed: u64,
    /// Files left for a later job: their host asked to wait (429/503 with a long
    /// `Retry-After`), or its robots.txt could not be read (the host not found, say), so this
    /// one did not.
    pub deferred: u64,
    /// Files not fetched: the blog's media budget was spent.
    pub skipped: u64,
    /// Bytes fetched.
    pub bytes: u64,
}

impl std::fmt::Display for MediaSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "media of {} posts: {} files fetched ({:.1} MB), {} shared, {} failed, {} over budget",
            self.posts,
            self.fetched,
            self.bytes as f64 / 1e6,
            self.reused,
            self.failed,
            self.skipped
        )?;
        if self.deferred > 0 {
            write!(
                f,
                ", {} left for a later job (their host asked to wait, or could not be reached)",
                self.deferred
            )?;
        }
        Ok(())
    }
}

/// Captures the media of every post of `blog` not captured yet, `chunk` posts at a time,
/// until none is left or `stopped()` says to stop.
///
/// # Errors
/// The store failed (fetch errors are recorded per file, not returned).
pub async fn capture_pending(
    store: &mut Store,
    fetcher: &Fetcher,
    blog: &Blog,
    settings: &MediaSettings,
    stopped: &dyn Fn() -> bool,
) -> Result<MediaSummary> {
    if !settings.capture {
        return Ok(MediaSummary::default());
    }
    // Posts whose media this run deferred are not taken again by it.
    let started = store.now()?;
    let mut capture = Capture {
        used: store.media_bytes(blog.id)?,
        store,
        fetcher,
        blog,
        settings,
        summary: MediaSummary::default(),
        max_file: (settings.max_file_mb.max(0.0) * 1024.0 * 1024.0) as usize,
        budget: (settings.max_blog_mb.max(0.0) * 1024.0 * 1024.0) as u64,
        failed: HashMap::new(),
        sheet_uses: HashMap::new(),
        archived: HashMap::new(),
    };
    loop {
        let posts = capture.store.media_pending(blog.id, BATCH, started)?;
        if posts.is_empty() || stopped() {
            break;
        }
        // The batch's media are written together (one transaction), what was captured when
        // asked to stop included; a failed store loses only this batch's lists (the files
        // fetched are kept already, and found again).
        let mut done = Vec::with_capacity(posts.len());
        for p in posts {
            if stopped() {
                break;
            }
            let media = capture.post(p).await?;
            done.push(media);
        }
        capture.store.set_posts_media(&done)?;
    }
    let summary = capture.summary;
    if summary.posts > 0 {
        tracing::info!(blog = %blog.home_url, "{summary}");
    }
    Ok(summary)
}

/// One capture run in progress.
struct Capture<'a> {
    store: &'a mut Store,
    fetcher: &'a Fetcher,
    blog: &'a Blog,
    settings: &'a MediaSettings,
    summary: MediaSummary,
    /// Largest file kept, in bytes.
    max_file: usize,
    /// The blog's media budget, in bytes of distinct bodies.
    budget: u64,
    /// What the blog's media use of it.
    used: u64,
    /// Failures of this run, so a broken image on every post is requested once.
    failed: HashMap<String, String>,
    /// What each stylesheet kept uses, by its response id: read from the archive once per
    /// run, though every post of a theme links the same sheets.
    sheet_uses: HashMap<ResponseId, Vec<Requisite>>,
    /// Requisites found in the archive by this run, by URL: the theme's
    /// files every post links are looked up once. A run fetches only what the archive lacks,
    /// so what it found stays the latest response.
    archived: HashMap<String, ResponseStatus>,
}

/// Posts whose media are captured, and then written, together.
const BATCH: usize = 20;

impl Capture<'_> {
    /// Captures one post's requisites and media, from its stored page, in waves: the page's
    /// requisites, then what its stylesheets use, then theirs. Returns the post's URL and its
    /// media in page order, for [`Store::set_posts_media`].
    async fn post(&mut self, p: PendingMedia) -> Result<(String, Vec<NewMedia>)> {
        let Ok(base) = Url::parse(&p.post_url) else {
            return Ok((p.post_url, Vec::new()));
        };
        let Some(mut wanted) = self.wanted(&p, &base)? else {
            return Ok((p.post_url, Vec::new()));
        };
        let mut done: Vec<NewMedia> = Vec::new();
        for _wave in 0..3 {
            if wanted.is_empty() {
                break;
            }
            let sheets = self.wave(&p.post_url, wanted, &mut done).await?;
            wanted = self.used_by_sheets(sheets, &base, &done)?;
        }
        self.summary.posts += 1;
        Ok((p.post_url, done))
    }

    /// What a post needs and carries: the requisites of its stored page, of its page as
    /// served when that is a rendering, and its feed entry's enclosures, within the settings
    /// (other hosts, most per post). `None` when the page's body is gone.
    fn wanted(&self, p: &PendingMedia, base: &Url) -> Result<Option<Vec<Requisite>>> {
        let Some(body) = &p.body else {
            return Ok(None);
        };
        let html = String::from_utf8_lossy(body);
        let mut wanted = requisites::of_page(&parse_document(&html), base);
        // A rendered post's DOM has lost what its scripts replaced (a lazy loader's
        // placeholder `src`), which the page as served still loads first: add the raw
        // page's requisites too.
        if let Some(raw_id) = p.raw_id.filter(|&id| id != p.response_id) {
            if let Some(raw) = self.store.response_body(raw_id)? {
                let raw = parse_document(&String::from_utf8_lossy(&raw));
                for r in requisites::of_page(&raw, base) {
                    push_new(&mut wanted, r);
                }
            }
        }
        // The feed's enclosures (podcast episodes) are the post's media even when the
        // page never links them.
        for e in &p.enclosures {
            let kind = requisites::enclosure_kind(e.mime.as_deref());
            push_new(
                &mut wanted,
                Requisite {
                    url: e.url.clone(),
                    kind,
                },
            );
        }
        if !self.settings.other_hosts {
            wanted.retain(|r| same_host(&r.url, base));
        }
        wanted.truncate(self.settings.max_per_post);
        Ok(Some(wanted))
    }

    /// One wave: each of `wanted` found in the archive, known failed by this run, over the
    /// budget, or fetched and kept; all of them added to `done`. Returns the stylesheets kept,
    /// whose own requisites come next.
    async fn wave(
        &mut self,
        post_url: &str,
        wanted: Vec<Requisite>,
        done: &mut Vec<NewMedia>,
    ) -> Result<Vec<(Requisite, ResponseId)>> {
        let mut sheets: Vec<(Requisite, ResponseId)> = Vec::new();
        let mut to_fetch = Vec::new();
        let unknown: Vec<String> = wanted
            .iter()
            .filter(|r| !self.archived.contains_key(&r.url))
            .map(|r| r.url.clone())
            .collect();
        if !unknown.is_empty() {
            let found = self.store.responses_for(self.blog.id, &unknown)?;
            self.archived.extend(found);
        }
        for r in wanted {
            match self.archived.get(&r.url).copied() {
                Some(ResponseStatus { id, status }) => {
                    self.summary.reused += 1;
                    done.push(stored(&r, id));
                    if r.kind == Kind::Stylesheet && status < 400 {
                        sheets.push((r, id));
                    }
                }
                None if self.failed.contains_key(&r.url) => {
                    self.summary.failed += 1;
                    let reason = self.failed[&r.url].clone();
                    done.push(unkept(r, MediaState::Failed, reason));
                }
                None if self.used >= self.budget => {
                    self.summary.skipped += 1;
                    let reason = format!(
                        "over the blog's media budget ([media] max_blog_mb = {})",
                        self.settings.max_blog_mb
                    );
                    done.push(unkept(r, MediaState::Skipped, reason));
                }
                None => to_fetch.push(r),
            }
        }
        for (r, f) in self.fetch_all(to_fetch).await {
            if let Some(sheet) = self.keep(post_url, r, &f, done)? {
                sheets.push(sheet);
            }
        }
        Ok(sheets)
    }

    /// Fetches `wanted` as requisites, `concurrency` at a time.
    async fn fetch_all(&self, wanted: Vec<Requisite>) -> Vec<(Requisite, Fetched)> {
        let (max_file, fetcher) = (self.max_file, self.fetcher);
        futures::stream::iter(wanted.into_iter().map(|r| {
            let fetcher = fetcher.clone();
            async move {
                let f = fetcher
                    .get_requisite(&r.url, max_file, "[media] max_file_mb")
                    .await;
                (r, f)
            }
        }))
        .buffer_unordered(self.settings.concurrency.max(1))
        .collect()
        .await
    }

    /// Keeps a fetched requisite (its bytes counted against the budget), or records why it
    /// could not be kept; adds it to `done`. Returns it with its response when it is a
    /// stylesheet that arrived.
    fn keep(
        &mut self,
        post_url: &str,
        r: Requisite,
        f: &Fetched,
        done: &mut Vec<NewMedia>,
    ) -> Result<Option<(Requisite, ResponseId)>> {
        if f.retry_after.is_some() && f.kept().is_none() {
            // The host asked to wait: a later job fetches it; this one goes on.
            self.summary.deferred += 1;
            self.store.log_fetches(Some(self.blog.id), f.requests())?;
            let reason = f
                .record
                .failure()
                .unwrap_or_else(|| "the host asked to wait".to_string());
            done.push(unkept(r, MediaState::Deferred, reason));
            return Ok(None);
        }
        let Some(id) = self.store.keep_fetched(self.blog.id, f)? else {
            self.summary.failed += 1;
            let reason = f
                .record
                .failure()
                .unwrap_or_else(|| "no response".to_string());
            tracing::info!(url = %r.url, post = %post_url, "requisite not kept: {reason}");
            self.failed.insert(r.url.clone(), reason.clone());
            done.push(unkept(r, MediaState::Failed, reason));
            return Ok(None);
        };
        self.summary.fetched += 1;
        let bytes = f.response.as_ref().map_or(0, |r| r.body.len() as u64);
        self.summary.bytes += bytes;
        self.used += bytes;
        done.push(stored(&r, id));
        let sheet = r.kind == Kind::Stylesheet && f.success().is_some();
        Ok(sheet.then_some((r, id)))
    }

    /// What the stylesheets kept use (fonts, images, imports), not known yet, within the
    /// settings (other hosts, most per post).
    fn used_by_sheets(
        &mut self,
        sheets: Vec<(Requisite, ResponseId)>,
        base: &Url,
        done: &[NewMedia],
    ) -> Result<Vec<Requisite>> {
        let mut wanted: Vec<Requisite> = Vec::new();
        for (sheet, id) in sheets {
            if !self.sheet_uses.contains_key(&id) {
                let uses = match (self.store.response_body(id)?, Url::parse(&sheet.url)) {
                    (Some(body), Ok(sheet_url)) => {
                        requisites::css_urls(&decode_body(&body, None), &sheet_url)
                    }
                    _ => Vec::new(),
                };
                self.sheet_uses.insert(id, uses);
            }
            for r in self.sheet_uses[&id].clone() {
                let known =
                    done.iter().any(|d| d.url == r.url) || wanted.iter().any(|w| w.url == r.url);
                let allowed = self.settings.other_hosts || same_host(&r.url, base);
                if !known && allowed && done.len() + wanted.len() < self.settings.max_per_post {
                    wanted.push(r);
                }
            }
        }
        Ok(wanted)
    }
}

/// Adds `r` to `wanted` unless its URL is there already.
fn push_new(wanted: &mut Vec<Requisite>, r: Requisite) {
    if !wanted.iter().any(|w| w.url == r.url) {
        wanted.push(r);
    }
}

/// A requisite recorded as not kept (failed, or over the budget), and why.
fn unkept(r: Requisite, state: MediaState, reason: String) -> NewMedia {
    NewMedia {
        url: r.url,
        kind: r.kind,
        response_id: None,
        state,
        reason: Some(reason),
    }
}

/// A requisite kept as the stored response `id`.
fn stored(r: &Requisite, id: ResponseId) -> NewMedia {
    NewMedia {
        url: r.url.clone(),
        kind: r.kind,
        response_id: Some(id),
        state: MediaState::Stored,
        reason: None,
    }
}

/// Whether `url` is on `base`'s host.
fn same_host(url: &str, base: &Url) -> bool {
    Url::parse(url).is_ok_and(|u| u.host_str() == base.host_str())
}
