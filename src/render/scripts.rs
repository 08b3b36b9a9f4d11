//! The JavaScript the renderer runs in pages and frames. Each expression evaluates to a JSON
//! value (or a promise of one).

/// Installed before any page script, in every frame: dialogs answer at once, pop-ups open
/// nothing; and the page's pending work is counted — fetches, XHRs, timers up to 3 s, and
/// scripts, iframes and stylesheets being loaded — with the time of the last change of that
/// count or of the DOM, so "settled" means idle, not merely a fixed wait.
pub const INIT: &str = r#"
(() => {
  window.alert = function () {};
  window.confirm = function () { return true; };
  window.prompt = function () { return null; };
  window.print = function () {};
  window.open = function () { return null; };
  if (window.__everblog) return;
  const st = window.__everblog = { pending: 0, last: Date.now() };
  const inc = () => { st.pending++; st.last = Date.now(); };
  const dec = () => { st.pending = Math.max(0, st.pending - 1); st.last = Date.now(); };
  const ofetch = window.fetch;
  if (ofetch) {
    window.fetch = function () {
      inc();
      let done = false;
      const end = () => { if (!done) { done = true; dec(); } };
      try { return ofetch.apply(this, arguments).then(r => { end(); return r; }, e => { end(); throw e; }); }
      catch (e) { end(); throw e; }
    };
  }
  const osend = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function () {
    inc();
    this.addEventListener('loadend', dec, { once: true });
    try { return osend.apply(this, arguments); } catch (e) { dec(); throw e; }
  };
  const oset = window.setTimeout, oclear = window.clearTimeout, live = new Set();
  st.timer = oset.bind(window);
  window.setTimeout = function (fn, ms) {
    const rest = Array.prototype.slice.call(arguments, 2);
    if (typeof fn !== 'function' || (typeof ms === 'number' && ms > 3000)) return oset.apply(window, arguments);
    inc();
    const id = oset(function () { if (live.delete(id)) dec(); return fn.apply(this, rest); }, ms);
    live.add(id);
    return id;
  };
  window.clearTimeout = function (id) { if (live.delete(id)) dec(); return oclear(id); };
  const watch = n => {
    const loads = (n.tagName === 'SCRIPT' && n.src) || n.tagName === 'IFRAME'
      || (n.tagName === 'LINK' && /stylesheet/i.test(n.rel || ''));
    if (!loads) return;
    inc();
    let done = false;
    const end = () => { if (!done) { done = true; dec(); } };
    n.addEventListener('load', end, { once: true });
    n.addEventListener('error', end, { once: true });
    oset(end, 10000);
  };
  new MutationObserver(ms => {
    st.last = Date.now();
    for (const m of ms) for (const n of m.addedNodes) if (n.nodeType === 1) watch(n);
  }).observe(document, { childList: true, subtree: true, attributes: true, characterData: true });
})();
"#;

/// A frame's size: elements plus loaded resources.
pub const SIZE: &str =
    "document.getElementsByTagName('*').length + performance.getEntriesByType('resource').length";

/// The body of a frame.
pub const BODY_HTML: &str = "document.body ? document.body.innerHTML : ''";

/// The whole document.
pub const OUTER_HTML: &str = "document.documentElement.outerHTML";

/// Scrolls the frame to its end a screen at a time (at most 60 screens, 40 ms apart), so that
/// what loads when scrolled into view (a comment widget drawn only when seen) is seen on the
/// way; a promise of true.
pub const SCROLL_TO_END: &str = r#"new Promise(resolve => {
  const wait = (window.__everblog && window.__everblog.timer) || setTimeout;
  const step = Math.max(200, Math.floor(window.innerHeight * 0.8));
  let i = 0;
  const next = () => {
    const end = document.documentElement.scrollHeight - window.innerHeight;
    const y = Math.min(end, window.scrollY + step);
    window.scrollTo(0, y);
    // Listeners run even where the browser sends no scroll event (a page not being painted).
    window.dispatchEvent(new Event('scroll'));
    if (y >= end || ++i >= 60) {
      // What is drawn only when seen learns it from an IntersectionObserver, which headless
      // Chromium may not update until something asks for intersections: ask, and wait for
      // the answer (half a second at most).
      const io = new IntersectionObserver(() => { io.disconnect(); resolve(true); });
      io.observe(document.documentElement);
      wait(() => { io.disconnect(); resolve(true); }, 500);
      return;
    }
    wait(next, 40);
  };
  next();
})"#;

/// A promise of true once the frame is idle — no pending fetch, XHR, short timer or loading
/// script/iframe (counted by [`INIT`]), the document loaded, and nothing changed for
/// `quiet_ms` — or false after `limit_ms`. Without the counters (a frame [`INIT`] did not
/// reach) the DOM size must stay the same for `quiet_ms` instead.
pub fn settle(quiet_ms: u64, limit_ms: u64) -> String {
    format!(
        r#"new Promise(resolve => {{
  const t0 = Date.now();
  let last = -1, since = Date.now();
  const size = () => document.getElementsByTagName('*').length
    + performance.getEntriesByType('resource').length;
  const tick = () => {{
    const st = window.__everblog;
    let idle;
    if (st) {{
      idle = st.pending === 0 && Date.now() - st.last >= {quiet_ms};
    }} else {{
      const n = size();
      if (n !== last) {{ last = n; since = Date.now(); }}
      idle = Date.now() - since >= {quiet_ms};
    }}
    if (document.readyState === 'complete' && idle) return resolve(true);
    if (Date.now() - t0 >= {limit_ms}) return resolve(false);
    ((window.__everblog && window.__everblog.timer) || setTimeout)(tick, 25);
  }};
  tick();
}})"#
    )
}

/// Inserts `body` (a frame's body HTML) after the main document's `<iframe>` whose `src` is
/// `src` (fragment ignored), or at the end of the body when no element matches. True when
/// inserted.
pub fn inline_frame(src: &str, body: &str) -> String {
    let src_js = serde_json::to_string(src).expect("string serialises");
    let body_js = serde_json::to_string(body).expect("string serialises");
    format!(
        r#"(() => {{
  const src = {src_js}, body = {body_js};
  const strip = u => {{ try {{ const x = new URL(u, location.href); x.hash = ''; return x.href; }} catch (e) {{ return u; }} }};
  const wrap = document.createElement('div');
  wrap.setAttribute('data-everblog-frame', src);
  wrap.innerHTML = body;
  for (const f of document.querySelectorAll('iframe')) {{
    if (f.src && strip(f.src) === strip(src)) {{ f.after(wrap); return true; }}
  }}
  if (!document.body) return false;
  document.body.appendChild(wrap);
  return true;
}})()"#
    )
}
