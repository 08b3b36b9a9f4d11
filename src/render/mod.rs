//! The render stage (paper §4.1: the first stage of the page pipeline): pages whose content or
//! comments exist only after JavaScript runs are loaded in headless Chromium (the system's
//! `/usr/bin/chromium`, driven with chromiumoxide over the DevTools protocol), left to settle,
//! expanded ("load more comments", "show more replies", infinite scroll), and returned as the
//! final DOM with the content of their iframes (Disqus renders its thread in a cross-site
//! iframe) inlined, so every later stage works the same on rendered and plain pages.
//!
//! One browser per process, launched on first use and reused, with a bounded pool of tabs. A
//! crashed or hung browser is killed and launched again and the page retried once; the browser
//! is recycled after `recycle_after` pages to bound its memory. Chromium runs with
//! `PR_SET_PDEATHSIG`, so it dies with the process even on `kill -9`.

pub mod expand;
pub mod network;
mod profile;
mod scripts;

use anyhow::{bail, Context, Result};
use chromiumoxide::browser::Browser;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::page::Page;
use futures::StreamExt;
use network::{Network, Slot};
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, Semaphore};

/// Knobs of the renderer: the `[render]` section of the configuration file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RenderSettings {
    /// The Chromium executable (default `/usr/bin/chromium`; never downloaded).
    pub chromium: PathBuf,
    /// Tabs rendering at once (default 4: on a 2-core machine rendering mostly waits on the
    /// page's timers and requests).
    pub tabs: usize,
    /// Whole-page bound: load, settle, expand and read (default 120 s).
    #[serde(with = "humantime_serde")]
    pub timeout: Duration,
    /// Longest wait for a page (or a frame after a click) to settle (default 8 s).
    #[serde(with = "humantime_serde")]
    pub settle: Duration,
    /// A page is settled when it has no pending request, short timer or loading script and
    /// nothing changed for this long (default 200 ms).
    #[serde(with = "humantime_serde")]
    pub quiet: Duration,
    /// Most "load more" / "show more" clicks and scrolls per page (default 200: a thread of
    /// 300 comments shown 10 at a time takes 30, and each collapsed reply one more).
    pub max_clicks: u32,
    /// Pages rendered before the browser is replaced by a fresh one (default 200).
    pub recycle_after: u64,
    /// CSS selectors of further "show more" controls to click, besides those whose words
    /// offer more comments (`render::expand`).
    pub show_more: Vec<String>,
    /// Longest time spent clicking and scrolling for more comments on one page (default 60 s).
    #[serde(with = "humantime_serde")]
    pub expand: Duration,
    /// Largest DOM read back, in MB (default 20); larger pages fail.
    pub max_dom_mb: u64,
}

impl Default for RenderSettings {
    fn default() -> Self {
        RenderSettings {
            chromium: PathBuf::from("/usr/bin/chromium"),
            tabs: 4,
            timeout: Duration::from_secs(120),
            settle: Duration::from_secs(8),
            quiet: Duration::from_millis(200),
            max_clicks: 200,
            expand: Duration::from_secs(60),
            recycle_after: 200,
            show_more: Vec::new(),
            max_dom_mb: 20,
        }
    }
}

/// A rendered page.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The final DOM (`document.documentElement.outerHTML`), each iframe's body inlined after
    /// its `<iframe>` in a `<div data-everblog-frame="URL">`.
    pub html: String,
    /// The URL the tab ended on (after redirects and script navigations).
    pub final_url: String,
    /// "Show more" controls clicked and scrolls that grew the page.
    pub clicks: u32,
    /// Iframes inlined.
    pub frames: u32,
    /// What was cut short (click bound reached, settle timeout…), for the log.
    pub notes: Vec<String>,
}

/// Counters of a renderer, for summaries and benchmarks.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderStats {
    /// Pages rendered.
    pub pages: u64,
    /// Renders that failed (after the retry).
    pub failures: u64,
    /// Browser launches (first launch, crash restarts and recycling).
    pub launches: u64,
    /// Time pages spent rendering (load, settle, expand, read; each page's own, added up).
    pub busy: Duration,
    /// Pages whose expansion stopped at a bound (`max_clicks`, `expand`) with more to show.
    pub cut: u64,
}

/// What the caller knows of a page it asks to render.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hints {
    /// A CSS selector of the blog's comment elements (from its learned comment rule): only the
    /// controls around them are clicked for more.
    pub comments: Option<String>,
}

/// A window and its request interception ([`network::intercept`]).
struct Tab {
    page: Page,
    /// The network answering the tab's requests during a rendering (`None`: Chromium fetches
    /// by itself; between renderings: nothing is sent).
    network: Slot,
    intercepting: bool,
    listener: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Tab {
    fn drop(&mut self) {
        if let Some(l) = self.listener.take() {
            l.abort();
        }
    }
}

struct Running {
    browser: Browser,
    /// Windows between two pages: reused, so a page costs a navigation, not a new window and
    /// renderer process.
    idle: std::sync::Mutex<Vec<Tab>>,
    child: std::process::Child,
    handler: tokio::task::JoinHandle<()>,
    pages: AtomicU64,
    /// Chromium's profile, removed once every process of this Chromium is gone.
    dir: tempfile::TempDir,
}

impl Drop for Running {
    fn drop(&mut self) {
        // The websocket closes with `browser`; the process group (Chromium and its helpers) is
        // killed and the browser reaped here, so no Chromium outlives its last page.
        self.handler.abort();
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: a signal to the group Chromium leads (`process_group(0)` at launch).
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        profile::remove(self.dir.path());
    }
}

/// The renderer: one Chromium per process, launched on first use.
pub struct Renderer {
    settings: RenderSettings,
    browser: Mutex<Option<Arc<Running>>>,
    tabs: Semaphore,
    pages: AtomicU64,
    failures: AtomicU64,
    launches: AtomicU64,
    busy_ms: AtomicU64,
    cut: AtomicU64,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("chromium", &self.settings.chromium)
            .field("stats", &self.stats())
            .finish()
    }
}

/// Whether the process `pid` runs (exists and is no zombie), from `/proc/PID/stat`.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(!matches!(state, 'Z' | 'X'))
        })
        .unwrap_or(false)
}

/// The exact Chromium flags (../shared/notes/dependencies.md §1): headless, no sandbox (we may
/// run as root; the systemd unit sandboxes the whole service), nothing phoning home, no
/// throttling of background tabs, and site isolation off so cross-site iframes are reachable.
const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-setuid-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
    "--window-size=1280,900",
    "--disable-dev-shm-usage",
    "--disable-default-apps",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--no-default-browser-check",
    "--password-store=basic",
    "--use-mock-keychain",
    "--metrics-recording-only",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
    "--disable-site-isolation-trials",
    "--disable-features=IsolateOrigins,site-per-process",
    "--disable-popup-blocking",
];

impl Renderer {
    /// A renderer; nothing is launched until the first [`Renderer::render`].
    pub fn new(settings: RenderSettings) -> Renderer {
        let tabs = settings.tabs.max(1);
        Renderer {
            settings,
            browser: Mutex::new(None),
            tabs: Semaphore::new(tabs),
            pages: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            launches: AtomicU64::new(0),
            busy_ms: AtomicU64::new(0),
            cut: AtomicU64::new(0),
        }
    }

    /// The settings.
    pub fn settings(&self) -> &RenderSettings {
        &self.settings
    }

    /// Counters so far.
    pub fn stats(&self) -> RenderStats {
        RenderStats {
            pages: self.pages.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            launches: self.launches.load(Ordering::Relaxed),
            busy: Duration::from_millis(self.busy_ms.load(Ordering::Relaxed)),
            cut: self.cut.load(Ordering::Relaxed),
        }
    }

    /// Renders `url`: load, settle, expand, inline iframes, read the DOM. Every request the tab
    /// makes is answered by `network` ([`network`]); `None` lets Chromium fetch by itself, for
    /// `archive render --direct` only (no robots.txt, no politeness, nothing kept). Bounded by
    /// `timeout`; a failure caused by the browser (crash, hang, lost connection) relaunches it
    /// and retries once.
    ///
    /// # Errors
    /// Chromium cannot be started (missing: the error says how to install it), or the page
    /// failed twice (timeout, navigation error, a navigation to a page that was refused, DOM
    /// larger than `max_dom_mb`).
    pub async fn render(
        &self,
        url: &str,
        network: Option<Arc<dyn Network>>,
        hints: &Hints,
    ) -> Result<Rendered> {
        let _tab = self.tabs.acquire().await.expect("semaphore never closed");
        let started = Instant::now();
        let result = self.render_attempts(url, network, hints).await;
        self.busy_ms
            .fetch_add(started.elapsed().as_millis() as u64, Ordering::Relaxed);
        crate::meters::rendered(result.is_ok(), started.elapsed());
        result
    }

    /// [`Renderer::render`] once a tab is free: up to two attempts.
    async fn render_attempts(
        &self,
        url: &str,
        network: Option<Arc<dyn Network>>,
        hints: &Hints,
    ) -> Result<Rendered> {
        let mut last = None;
        for attempt in 0..2 {
            let running = self.running().await?;
            // A browser that dies (a crash, a kill) ends the page at once, not at the time bound.
            let pid = running.child.id();
            let died = async {
                while alive(pid) {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            };
            let result = tokio::select! {
                r = tokio::time::timeout(
                    self.settings.timeout,
                    self.render_in(&running, url, network.clone(), hints),
                ) => r,
                () = died => Ok(Err(anyhow::anyhow!("the browser died while rendering"))),
            };
            match result {
                Ok(Ok(r)) => {
                    self.pages.fetch_add(1, Ordering::Relaxed);
                    self.maybe_recycle(&running).await;
                    return Ok(r);
                }
                Ok(Err(e)) => {
                    tracing::info!(url, attempt, error = %format!("{e:#}"), "render failed");
                    last = Some(e);
                }
                Err(_) => {
                    tracing::info!(url, attempt, "render timed out; restarting the browser");
                    last = Some(anyhow::anyhow!(
                        "rendering took longer than {:?}",
                        self.settings.timeout
                    ));
                }
            }
            // Whatever went wrong, the next attempt gets a fresh browser: a hung or crashed
            // one is the usual cause, and a fresh one costs half a second.
            self.discard(&running).await;
        }
        self.failures.fetch_add(1, Ordering::Relaxed);
        Err(last
            .expect("two attempts")
            .context(format!("rendering {url}")))
    }

    async fn running(&self) -> Result<Arc<Running>> {
        let mut slot = self.browser.lock().await;
        if let Some(r) = slot.as_ref() {
            return Ok(r.clone());
        }
        let r = Arc::new(self.launch().await?);
        self.launches.fetch_add(1, Ordering::Relaxed);
        *slot = Some(r.clone());
        Ok(r)
    }

    async fn discard(&self, running: &Arc<Running>) {
        let mut slot = self.browser.lock().await;
        if slot.as_ref().is_some_and(|r| Arc::ptr_eq(r, running)) {
            *slot = None;
        }
    }

    async fn maybe_recycle(&self, running: &Arc<Running>) {
        let n = running.pages.fetch_add(1, Ordering::Relaxed) + 1;
        if n >= self.settings.recycle_after.max(1) {
            // Pages still open in it finish; the process goes with its last handle.
            self.discard(running).await;
        }
    }

    /// Closes the browser (waits for nothing: open tabs fail). Call before exiting.
    pub async fn shutdown(&self) {
        self.browser.lock().await.take();
    }

    async fn launch(&self) -> Result<Running> {
        let exe = &self.settings.chromium;
        if !exe.exists() {
            bail!(
                "Chromium not found at {}: install it (`apt-get install chromium`) or set render.chromium in the config",
                exe.display()
            );
        }
        let (dir, tmp) = profile::create()?;
        let mut cmd = std::process::Command::new(exe);
        // Its own process group, so that its helpers are killed with it.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        // Chromium's own temporary files (org.chromium.Chromium.*) go with its profile.
        cmd.env("TMPDIR", &tmp);
        cmd.args(FLAGS)
            .arg(format!("--user-data-dir={}", dir.path().display()))
            .arg("about:blank")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        // Chromium dies with us, even on SIGKILL (its helper processes follow their parent).
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting {}", exe.display()))?;
        let stderr = child.stderr.take().expect("piped");
        // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/ID" on stderr.
        let ws = tokio::task::spawn_blocking(move || -> Option<String> {
            let mut lines = std::io::BufReader::new(stderr).lines();
            let ws = lines.by_ref().map_while(Result::ok).find_map(|l| {
                l.split_once("DevTools listening on ")
                    .map(|(_, u)| u.trim().to_string())
            });
            // Keep draining so Chromium never blocks on a full pipe.
            std::thread::spawn(move || for _ in lines {});
            ws
        });
        let ws = match tokio::time::timeout(Duration::from_secs(30), ws).await {
            Ok(Ok(Some(ws))) => ws,
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                bail!(
                    "{} did not start (no DevTools endpoint within 30 s)",
                    exe.display()
                );
            }
        };
        let (browser, mut handler) = Browser::connect(ws)
            .await
            .context("connecting to Chromium")?;
        let handler = tokio::spawn(async move {
            // Never stop on an error event: log it and keep the browser's events flowing.
            while let Some(ev) = handler.next().await {
                if let Err(e) = ev {
                    tracing::debug!(error = %e, "chromium handler");
                }
            }
        });
        tracing::info!(chromium = %exe.display(), "browser launched");
        Ok(Running {
            browser,
            idle: std::sync::Mutex::new(Vec::new()),
            child,
            handler,
            pages: AtomicU64::new(0),
            dir,
        })
    }

    async fn render_in(
        &self,
        running: &Running,
        url: &str,
        network: Option<Arc<dyn Network>>,
        hints: &Hints,
    ) -> Result<Rendered> {
        let wanted = network.is_some();
        let reused = {
            let mut idle = running.idle.lock().expect("lock");
            let at = idle.iter().position(|t| t.intercepting == wanted);
            at.map(|i| idle.swap_remove(i))
        };
        let tab = match reused {
            Some(t) => t,
            None => self.open_tab(running, wanted).await?,
        };
        *tab.network.lock().expect("lock") = network;
        let result = self.drive(&tab.page, url, hints).await;
        // Late requests of this page (beacons, timers) are not sent for it.
        tab.network.lock().expect("lock").take();
        if result.is_ok() {
            running.idle.lock().expect("lock").push(tab);
        } else {
            let _ = tab.page.clone().close().await;
        }
        result
    }

    /// A new window, its requests intercepted when `intercepting`.
    async fn open_tab(&self, running: &Running, intercepting: bool) -> Result<Tab> {
        // Each page in a window of its own: a background tab gets no scroll events or frames,
        // and infinite-scroll threads would never grow.
        let mut target =
            chromiumoxide::cdp::browser_protocol::target::CreateTargetParams::new("about:blank");
        target.new_window = Some(true);
        target.background = Some(false);
        let page = running
            .browser
            .new_page(target)
            .await
            .context("opening a tab")?;
        // Dialogs, pop-ups and the idle counters, in every document of this window.
        page.evaluate_on_new_document(scripts::INIT)
            .await
            .context("installing the page guard")?;
        let network: Slot = Arc::new(std::sync::Mutex::new(None));
        let listener = if intercepting {
            Some(
                network::intercept(&page, network.clone())
                    .await
                    .context("intercepting the tab's requests")?,
            )
        } else {
            None
        };
        Ok(Tab {
            page,
            network,
            intercepting,
            listener,
        })
    }

    async fn drive(&self, page: &Page, url: &str, hints: &Hints) -> Result<Rendered> {
        let cfg = &self.settings;
        let mut notes = Vec::new();
        page.goto(url)
            .await
            .with_context(|| format!("loading {url}"))?;
        if !self.settle_all(page).await? {
            notes.push(format!("page still changing after {:?}", cfg.settle));
        }
        self.still_there(page).await?;
        // Expand: click what offers more comments (`expand`) in every frame until nothing
        // does, then scroll each frame to its end until nothing grows; within `max_clicks`
        // clicks and scrolls and `expand` seconds.
        let click = expand::click_more(&cfg.show_more, hints.comments.as_deref());
        let started = Instant::now();
        let mut clicks = 0;
        let mut cut = None;
        // The most text each frame has shown: a click that shows no more was fruitless (a
        // control that switches views back and forth, or changes nothing).
        let mut most: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
        loop {
            if clicks >= cfg.max_clicks {
                cut = Some(format!(
                    "stopped after {} clicks ([render] max_clicks)",
                    cfg.max_clicks
                ));
                break;
            }
            // Half the page's time bound at most, so that what was shown is read in time.
            if started.elapsed() >= cfg.expand.min(cfg.timeout / 2) {
                cut = Some(format!(
                    "stopped expanding after {:?} ([render] expand, at most half of timeout)",
                    cfg.expand.min(cfg.timeout / 2)
                ));
                break;
            }
            let mut acted = false;
            for ctx in self.contexts(page).await? {
                let key = format!("{ctx:?}");
                let before: u64 = self.eval(page, ctx, expand::TEXT_SIZE).await.unwrap_or(0);
                let best = most.entry(key.clone()).or_insert(0);
                *best = (*best).max(before);
                let clicked: bool = self.eval(page, ctx, &click).await.unwrap_or(false);
                if clicked {
                    clicks += 1;
                    acted = true;
                    self.settle(page, ctx, cfg.settle).await.ok();
                    // A page turn keeps the page it replaced.
                    let _: bool = self
                        .eval(page, ctx, expand::COMMIT_TURN)
                        .await
                        .unwrap_or(false);
                    let after: u64 = self.eval(page, ctx, expand::TEXT_SIZE).await.unwrap_or(0);
                    let best = most.entry(key).or_insert(0);
                    let grew = after > *best;
                    *best = (*best).max(after);
                    if !grew {
                        // A control that changes nothing is not clicked again.
                        let _: bool = self
                            .eval(page, ctx, expand::MARK_FRUITLESS)
                            .await
                            .unwrap_or(false);
                    }
                    break;
                }
            }
            if !acted {
                // Infinite scroll, and what draws only when seen: the frames grow (or a frame
                // appears) once scrolled to the end.
                let before = self.total_size(page).await;
                for ctx in self.contexts(page).await? {
                    let _: bool = self
                        .eval(page, ctx, scripts::SCROLL_TO_END)
                        .await
                        .unwrap_or(false);
                }
                self.settle_all(page).await.ok();
                if self.total_size(page).await <= before {
                    break;
                }
                clicks += 1;
            }
            // Clicks and scrolls may add frames (a comment widget's iframe) or load them.
            self.settle_all(page).await.ok();
        }
        if let Some(cut) = &cut {
            self.cut.fetch_add(1, Ordering::Relaxed);
            notes.push(cut.clone());
        }
        // Inline the iframes' documents after their <iframe> elements.
        let main = page.mainframe().await?.context("page has no main frame")?;
        let mut frames = 0;
        for id in page.frames().await? {
            if id == main {
                continue;
            }
            let Some(ctx) = page.frame_execution_context(id.clone()).await? else {
                continue;
            };
            let Some(src) = page.frame_url(id).await? else {
                continue;
            };
            let body: String = self
                .eval(page, Some(ctx), scripts::BODY_HTML)
                .await
                .unwrap_or_default();
            if body.is_empty() {
                continue;
            }
            let inlined: bool = self
                .eval(page, None, &scripts::inline_frame(&src, &body))
                .await
                .unwrap_or(false);
            frames += inlined as u32;
        }
        self.still_there(page).await?;
        let html: String = self
            .eval(page, None, scripts::OUTER_HTML)
            .await
            .context("reading the DOM")?;
        if html.len() as u64 > cfg.max_dom_mb * 1024 * 1024 {
            bail!(
                "the rendered DOM is {} bytes, over the {} MB bound (raise [render] max_dom_mb)",
                html.len(),
                cfg.max_dom_mb
            );
        }
        let final_url = page.url().await?.unwrap_or_else(|| url.to_string());
        Ok(Rendered {
            html,
            final_url,
            clicks,
            frames,
            notes,
        })
    }

    /// Fails when the tab shows Chromium's error page: the page navigated (script, meta
    /// refresh) to a URL that was refused (robots.txt, address policy) or could not be fetched.
    async fn still_there(&self, page: &Page) -> Result<()> {
        let href: String = self.eval(page, None, "location.href").await?;
        if href.starts_with("chrome-error:") {
            bail!("the page navigated to a URL that was refused or failed (see the fetch log)");
        }
        Ok(())
    }

    /// Settles the main frame, then every iframe, waiting (within `settle`) for frames whose
    /// document does not exist yet: a comment widget injects its iframe after the page loaded.
    /// True when everything settled in time.
    async fn settle_all(&self, page: &Page) -> Result<bool> {
        let limit = self.settings.settle;
        let deadline = Instant::now() + limit;
        let left = || deadline.saturating_duration_since(Instant::now());
        let mut settled = self.settle(page, None, limit).await?;
        loop {
            let main = page.mainframe().await?;
            let frames = page.frames().await?;
            let mut missing = false;
            for id in frames {
                if Some(&id) == main.as_ref() {
                    continue;
                }
                match page.frame_execution_context(id).await? {
                    Some(ctx) => {
                        settled &= self.settle(page, Some(ctx), left()).await.unwrap_or(false)
                    }
                    None => missing = true,
                }
            }
            if !missing {
                return Ok(settled);
            }
            if left().is_zero() {
                return Ok(false);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The execution contexts of the page's frames, main frame first (`None` = main).
    async fn contexts(
        &self,
        page: &Page,
    ) -> Result<Vec<Option<chromiumoxide::cdp::js_protocol::runtime::ExecutionContextId>>> {
        let main = page.mainframe().await?;
        let mut out = vec![None];
        for id in page.frames().await? {
            if Some(&id) == main.as_ref() {
                continue;
            }
            if let Some(ctx) = page.frame_execution_context(id).await? {
                out.push(Some(ctx));
            }
        }
        Ok(out)
    }

    /// The size of every frame together ([`scripts::SIZE`]) and the number of frames.
    async fn total_size(&self, page: &Page) -> u64 {
        let mut total = 0;
        if let Ok(contexts) = self.contexts(page).await {
            for ctx in contexts {
                total += 1 + self.size(page, ctx).await.unwrap_or(0);
            }
        }
        total
    }

    async fn size(
        &self,
        page: &Page,
        ctx: Option<chromiumoxide::cdp::js_protocol::runtime::ExecutionContextId>,
    ) -> Result<u64> {
        self.eval(page, ctx, scripts::SIZE).await
    }

    /// Waits until the frame's DOM size and resource count stay still for `quiet`, at most
    /// `limit`. True when it settled.
    async fn settle(
        &self,
        page: &Page,
        ctx: Option<chromiumoxide::cdp::js_protocol::runtime::ExecutionContextId>,
        limit: Duration,
    ) -> Result<bool> {
        self.eval(
            page,
            ctx,
            &scripts::settle(
                self.settings.quiet.as_millis() as u64,
                limit.as_millis() as u64,
            ),
        )
        .await
    }

    async fn eval<T: serde::de::DeserializeOwned>(
        &self,
        page: &Page,
        ctx: Option<chromiumoxide::cdp::js_protocol::runtime::ExecutionContextId>,
        js: &str,
    ) -> Result<T> {
        // A page that navigates away (script, meta refresh) destroys the context mid-call: the
        // main frame's call is retried in the new document, a few times at most.
        let mut navigations = 0;
        loop {
            let mut p = EvaluateParams::new(js);
            p.context_id = ctx;
            p.await_promise = Some(true);
            p.return_by_value = Some(true);
            match page.evaluate_expression(p).await {
                Ok(r) => return Ok(r.into_value()?),
                Err(e) => {
                    let text = e.to_string();
                    let navigated = text.contains("navigated or closed")
                        || text.contains("context was destroyed")
                        || text.contains("Cannot find context");
                    if ctx.is_some() || !navigated || navigations >= 5 {
                        return Err(e.into());
                    }
                    navigations += 1;
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
            }
        }
    }
}
