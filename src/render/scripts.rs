//! The JavaScript the renderer runs in pages and frames. Each expression evaluates to a JSON
//! value (or a promise of one).

/// Installed before any page script: dialogs answer at once, pop-ups open nothing, and pages
/// cannot navigate away by `window.open`.
pub const QUIET_DIALOGS: &str = r#"
window.alert = function () {};
window.confirm = function () { return true; };
window.prompt = function () { return null; };
window.print = function () {};
window.open = function () { return null; };
window.onbeforeunload = null;
"#;

/// A frame's size: elements plus loaded resources.
pub const SIZE: &str =
    "document.getElementsByTagName('*').length + performance.getEntriesByType('resource').length";

/// The body of a frame.
pub const BODY_HTML: &str = "document.body ? document.body.innerHTML : ''";

/// The whole document.
pub const OUTER_HTML: &str = "document.documentElement.outerHTML";

/// Scrolls the frame (and its scrollable comment containers) to the end.
pub const SCROLL_TO_END: &str = r#"(() => {
  window.scrollTo(0, document.documentElement.scrollHeight);
  // Listeners run even where the browser sends no scroll event (a page not being painted).
  window.dispatchEvent(new Event('scroll'));
  return true;
})()"#;

/// A promise of true once the frame's size stayed the same for `quiet_ms` (and the document
/// finished loading), or false after `limit_ms`.
pub fn settle(quiet_ms: u64, limit_ms: u64) -> String {
    format!(
        r#"new Promise(resolve => {{
  const t0 = Date.now();
  let last = -1, since = Date.now();
  const size = () => document.getElementsByTagName('*').length
    + performance.getEntriesByType('resource').length;
  const tick = () => {{
    const n = size();
    if (n !== last) {{ last = n; since = Date.now(); }}
    if (document.readyState === 'complete' && Date.now() - since >= {quiet_ms}) return resolve(true);
    if (Date.now() - t0 >= {limit_ms}) return resolve(false);
    setTimeout(tick, 50);
  }};
  tick();
}})"#
    )
}

/// Clicks the first visible, enabled element matching one of `selectors` (in order) that was
/// not clicked before, or whose text offers more ("Load more comments", "Show 3 more
/// replies", "2 Hidden"…). True when something was clicked.
pub fn click_one(selectors: &[String]) -> String {
    let list = serde_json::to_string(selectors).expect("strings serialise");
    format!(
        r#"(() => {{
  const visible = el => {{
    const s = getComputedStyle(el);
    if (s.display === 'none' || s.visibility === 'hidden' || el.disabled) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  }};
  window.__everblogClicked = window.__everblogClicked || new WeakMap();
  for (const sel of {list}) {{
    let els;
    try {{ els = document.querySelectorAll(sel); }} catch (e) {{ continue; }}
    for (const el of els) {{
      if (!visible(el)) continue;
      // A control clicked before and still there is a "load more" that loads again; a link
      // that navigates elsewhere is not followed.
      const n = window.__everblogClicked.get(el) || 0;
      if (n >= 30) continue;
      window.__everblogClicked.set(el, n + 1);
      if (el.tagName === 'A') {{
        const href = el.getAttribute('href') || '';
        if (href && !href.startsWith('#') && !href.startsWith('javascript:')) {{
          el.addEventListener('click', e => e.preventDefault(), {{ once: true }});
        }}
      }}
      el.scrollIntoView({{ block: 'center' }});
      el.click();
      return true;
    }}
  }}
  return false;
}})()"#
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
