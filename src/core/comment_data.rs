//! A comment widget's own data (issue 41): the JSON a post page fetched while it rendered, read
//! the way the paper reads a comment feed (§3.5). Its items (author, text, date, id, parent)
//! are the training targets the rendered DOM's comment rules are learned against
//! (`core::comments::learn`), they give each rendered comment its parent and exact date
//! (`core::comment_merge`), and the address the widget asked them from, turned into a
//! template (`core::data_template`), asks any post for its comments without a browser.
//!
//! Nothing here knows a widget by name. An item list is an array of objects whose text field
//! the rendered page shows; the fields are told apart by their values (the longest text the
//! page shows, a short name it shows, instants, ids unique across the items, references to
//! other items' ids, nested lists of items) and, between equals, by their names' words
//! (`author`, `name`; `created`, `date`; `parent`, `pid`).
//!
//! The renderer appends each JSON response a rendering fetched to the rendered DOM as
//! `<script type="application/json" data-everblog-data="URL">` ([`embed`]); [`responses`] reads
//! them back, so a stored rendering carries the data it was built from.

use super::page::Page;
use super::text::{bigram_set, normalise};
use chrono::{DateTime, FixedOffset, TimeZone, Utc};
use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The attribute naming the URL of a JSON response embedded in a rendered DOM.
pub const DATA_ATTR: &str = "data-everblog-data";

/// Nesting a walk of a JSON document goes down to, at most.
const MAX_DEPTH: usize = 12;

/// One JSON response a rendering fetched.
#[derive(Debug, Clone, PartialEq)]
pub struct DataResponse {
    /// The address it was fetched from.
    pub url: String,
    /// The document.
    pub json: Value,
}

/// The `<script>` element that carries `json`, fetched from `url`, inside a rendered DOM:
/// every `<` of the text escaped (`\u003c`), so no `</script>` or `<!--` can end it early.
pub fn embed(url: &str, json: &Value) -> String {
    let text = serde_json::to_string(json)
        .unwrap_or_default()
        .replace('<', "\\u003c");
    let attr = url
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;");
    format!("<script type=\"application/json\" {DATA_ATTR}=\"{attr}\">{text}</script>")
}

/// The JSON responses embedded in a rendered page ([`embed`]), in document order.
pub fn responses(page: &Page) -> Vec<DataResponse> {
    let mut out = Vec::new();
    for (i, e) in page.elements.iter().enumerate() {
        if e.name != "script" {
            continue;
        }
        let Some(url) = page.attr(i as u32, DATA_ATTR) else {
            continue;
        };
        let text: String = page.element_ref(i as u32).text().collect();
        if let Ok(json) = serde_json::from_str(&text) {
            out.push(DataResponse {
                url: url.to_string(),
                json,
            });
        }
    }
    out
}

/// One comment as the widget's data gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct DataItem {
    /// Its id in the widget's data, when the data has ids.
    pub id: Option<String>,
    /// The id of the comment it replies to (a reference field, or the item whose list of
    /// replies holds it).
    pub parent: Option<String>,
    /// The commenter's name.
    pub author: Option<String>,
    /// The commenter's website.
    pub author_url: Option<String>,
    /// The text, tags removed, whitespace collapsed.
    pub text: String,
    /// The text as the data holds it (HTML for most widgets).
    pub html: String,
    /// When it was written.
    pub published: Option<DateTime<FixedOffset>>,
}

/// Where a widget's comments are in its JSON and what their fields are called: learned per
/// blog ([`learn_shape`]), stored with the blog's rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataShape {
    /// Object keys from the document's root to the array of top-level items (empty: the root
    /// is that array).
    pub list: Vec<String>,
    /// The key, in an item, of the array of its replies.
    pub children: Option<String>,
    /// The text field (a key path inside an item: `content` or `body.html`).
    pub text: String,
    /// The commenter's name.
    pub author: Option<String>,
    /// The commenter's website.
    pub url: Option<String>,
    /// When it was written.
    pub date: Option<String>,
    /// The item's id.
    pub id: Option<String>,
    /// The id of the item it replies to.
    pub parent: Option<String>,
    /// A number beside the list that counts the thread's comments (key path from the root).
    pub total: Option<Vec<String>>,
}

impl DataShape {
    /// The comments `json` holds, flattened in document order (replies after their parent),
    /// those without text left out.
    pub fn items(&self, json: &Value) -> Vec<DataItem> {
        let Some(list) = at(json, &self.list).and_then(Value::as_array) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut stack: Vec<(&Value, Option<String>, usize)> =
            list.iter().rev().map(|v| (v, None, 0)).collect();
        while let Some((v, nested_in, depth)) = stack.pop() {
            let Some(obj) = v.as_object() else { continue };
            let id = self.id.as_deref().and_then(|k| scalar(leaf(v, k)?));
            let text_raw = leaf(v, &self.text).and_then(Value::as_str).unwrap_or("");
            let text = plain_text(text_raw);
            let parent = self
                .parent
                .as_deref()
                .and_then(|k| reference(leaf(v, k)?))
                .or(nested_in);
            if !text.is_empty() {
                out.push(DataItem {
                    id: id.clone(),
                    parent,
                    author: self
                        .author
                        .as_deref()
                        .and_then(|k| leaf(v, k)?.as_str())
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty()),
                    author_url: self
                        .url
                        .as_deref()
                        .and_then(|k| leaf(v, k)?.as_str())
                        .filter(|s| s.starts_with("http://") || s.starts_with("https://"))
                        .map(str::to_string),
                    text,
                    html: text_raw.to_string(),
                    published: self.date.as_deref().and_then(|k| instant(leaf(v, k)?)),
                });
            }
            if let (Some(k), true) = (&self.children, depth < MAX_DEPTH) {
                if let Some(kids) = obj.get(k).and_then(Value::as_array) {
                    for kid in kids.iter().rev() {
                        stack.push((kid, id.clone(), depth + 1));
                    }
                }
            }
        }
        out
    }

    /// The list of top-level items in `json`, when `json` has one where the shape says.
    pub fn lists<'a>(&self, json: &'a Value) -> Option<&'a Vec<Value>> {
        at(json, &self.list)?.as_array()
    }

    /// The thread's comment count as the data declares it beside the list, when the shape has
    /// such a number.
    pub fn total(&self, json: &Value) -> Option<u32> {
        let n = at(json, self.total.as_ref()?)?.as_u64()?;
        u32::try_from(n).ok()
    }
}

/// The value at `path` (object keys) below `v`.
fn at<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

/// A leaf of an item by its key path (`a` or `a.b`).
fn leaf<'a>(item: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.').try_fold(item, |v, k| v.get(k))
}

/// A string or integer as an id.
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A reference to another item: an id, never null, 0 or "".
fn reference(v: &Value) -> Option<String> {
    scalar(v).filter(|s| s != "0")
}

/// An instant from a JSON value: RFC 3339 and the usual ISO forms (UTC when they carry no
/// offset), or Unix time in seconds or milliseconds between 2000 and 2100.
pub fn instant(v: &Value) -> Option<DateTime<FixedOffset>> {
    match v {
        Value::String(s) => {
            let t = s.trim();
            if t.len() < 10 || !t.as_bytes()[..4].iter().all(u8::is_ascii_digit) {
                return t.parse::<f64>().ok().and_then(epoch);
            }
            super::meta::parse_instant(t, None)
        }
        Value::Number(n) => n.as_f64().and_then(epoch),
        _ => None,
    }
}

fn epoch(x: f64) -> Option<DateTime<FixedOffset>> {
    // 2000-01-01 and 2100-01-01, in seconds.
    const LOW: f64 = 946_684_800.0;
    const HIGH: f64 = 4_102_444_800.0;
    let secs = if (LOW..HIGH).contains(&x) {
        x
    } else if (LOW * 1000.0..HIGH * 1000.0).contains(&x) {
        x / 1000.0
    } else {
        return None;
    };
    let ms = (secs * 1000.0).round() as i64;
    Utc.timestamp_millis_opt(ms)
        .single()
        .map(|d| d.fixed_offset())
}

/// Text of a field: HTML tags removed and entities decoded when it holds markup, whitespace
/// collapsed.
pub fn plain_text(s: &str) -> String {
    let t = if s.contains('<') && s.contains('>') || s.contains('&') {
        let page = Page::parse(&format!("<body>{s}</body>"));
        page.text_of(0)
    } else {
        s.to_string()
    };
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A rendered page and the JSON its rendering fetched: what [`learn_shape`] learns from.
pub struct Sample<'a> {
    /// The rendered page.
    pub page: &'a Page,
    /// The JSON responses of its rendering.
    pub data: &'a [DataResponse],
}

/// One candidate list: where it is, and its items flattened with their parent (by nesting).
struct Candidate<'a> {
    list: Vec<String>,
    children: Option<String>,
    items: Vec<&'a Value>,
    wrapper_numbers: Vec<(Vec<String>, u64)>,
}

/// Every array of objects in `json` (not inside another such array's items), with the key of
/// each one's nested replies.
fn candidates(json: &Value) -> Vec<Candidate<'_>> {
    let mut out = Vec::new();
    type Numbers = Vec<(Vec<String>, u64)>;
    let mut stack: Vec<(&Value, Vec<String>, Numbers)> = vec![(json, Vec::new(), Vec::new())];
    while let Some((v, path, numbers)) = stack.pop() {
        if path.len() > MAX_DEPTH {
            continue;
        }
        match v {
            Value::Array(a) => {
                let objects = a.iter().filter(|x| x.is_object()).count();
                if objects == 0 || objects * 2 < a.len() {
                    continue;
                }
                let children = children_key(a);
                let mut items = Vec::new();
                flatten(a, children.as_deref(), 0, &mut items);
                out.push(Candidate {
                    list: path,
                    children,
                    items,
                    wrapper_numbers: numbers,
                });
            }
            Value::Object(o) => {
                let mut numbers = numbers.clone();
                for (k, x) in o {
                    if let Some(n) = x.as_u64() {
                        let mut p = path.clone();
                        p.push(k.clone());
                        numbers.push((p, n));
                    }
                }
                for (k, x) in o {
                    if x.is_array() || x.is_object() {
                        let mut p = path.clone();
                        p.push(k.clone());
                        stack.push((x, p, numbers.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The key under which the objects of `list` hold arrays of objects shaped like themselves
/// (sharing half their keys): their replies.
fn children_key(list: &[Value]) -> Option<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for item in list {
        let Some(o) = item.as_object() else { continue };
        for (k, v) in o {
            let Some(kids) = v.as_array() else { continue };
            let alike = kids.iter().filter_map(Value::as_object).any(|kid| {
                let shared = kid.keys().filter(|x| o.contains_key(*x)).count();
                shared * 2 >= o.len().max(1) && shared >= 2
            });
            if alike {
                match counts.iter_mut().find(|(x, _)| x == k) {
                    Some(c) => c.1 += 1,
                    None => counts.push((k.clone(), 1)),
                }
            }
        }
    }
    counts.into_iter().max_by_key(|(_, n)| *n).map(|(k, _)| k)
}

fn flatten<'a>(list: &'a [Value], children: Option<&str>, depth: usize, out: &mut Vec<&'a Value>) {
    for item in list.iter().filter(|x| x.is_object()) {
        out.push(item);
        if let (Some(k), true) = (children, depth < MAX_DEPTH) {
            if let Some(kids) = item.get(k).and_then(Value::as_array) {
                flatten(kids, children, depth + 1, out);
            }
        }
    }
}

/// The key paths of an item's leaves (`a`, `a.b`: two levels), arrays left out.
fn leaf_keys(item: &Value) -> Vec<String> {
    let mut keys = Vec::new();
    if let Some(o) = item.as_object() {
        for (k, v) in o {
            match v {
                Value::Object(inner) => {
                    for (k2, v2) in inner {
                        if !v2.is_array() && !v2.is_object() {
                            keys.push(format!("{k}.{k2}"));
                        }
                    }
                }
                Value::Array(_) => {}
                _ => keys.push(k.clone()),
            }
        }
    }
    keys
}

/// The words of a key (`createdAt` → created, at; `user_name` → user, name), lower case.
fn key_words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

fn key_has(key: &str, words: &[&str]) -> bool {
    key_words(key).iter().any(|w| words.contains(&w.as_str()))
}

/// What a page shows: its normalised text and that text's bigrams.
struct Shown {
    text: String,
    bigrams: FxHashSet<u64>,
}

impl Shown {
    fn of(page: &Page) -> Shown {
        let text: String = page.text.iter().collect();
        Shown {
            bigrams: bigram_set(&page.text),
            text,
        }
    }

    /// The page shows this text: most of its bigrams (short texts: verbatim).
    fn shows_text(&self, s: &str) -> bool {
        let n = normalise(s);
        if n.len() < 12 {
            return !n.is_empty() && self.text.contains(&n.iter().collect::<String>());
        }
        let b = bigram_set(&n);
        let hit = b.iter().filter(|x| self.bigrams.contains(x)).count();
        hit * 10 >= b.len() * 8
    }

    /// The page shows this name verbatim (case and spacing folded).
    fn shows_name(&self, s: &str) -> bool {
        let n: String = normalise(s).into_iter().collect();
        !n.is_empty() && self.text.contains(&n)
    }
}

/// Per key path, over a candidate's items: the values' share the page shows and their traits.
#[derive(Default, Clone)]
struct KeyStats {
    present: usize,
    strings: usize,
    text_hits: usize,
    name_hits: usize,
    total_len: usize,
    urls: usize,
    instants: usize,
    distinct: FxHashSet<String>,
}

/// Learns the shape of a widget's data from rendered pages and the JSON their renderings
/// fetched: the item list whose text field the pages show (at least 2 items in all, or 1
/// with an author and a date), its author, date, id, parent and reply fields, and the number
/// beside it that counts the thread. `None` when no JSON holds comments the pages show.
pub fn learn_shape(samples: &[Sample<'_>]) -> Option<DataShape> {
    // (shape, items matched, samples) of the best candidate of each (list path, children) kind.
    let mut best: Option<(DataShape, usize)> = None;
    for s in samples {
        let shown = Shown::of(s.page);
        for r in s.data {
            for c in candidates(&r.json) {
                if let Some((shape, hits)) = shape_of(&c, &shown) {
                    if best.as_ref().is_none_or(|(_, h)| hits > *h) {
                        best = Some((shape, hits));
                    }
                }
            }
        }
    }
    let (mut shape, _) = best?;
    shape.total = learn_total(samples, &shape);
    Some(shape)
}

/// The shape of one candidate list on one page, with the number of items whose text the page
/// shows; `None` when it holds no comments the page shows.
fn shape_of(c: &Candidate<'_>, shown: &Shown) -> Option<(DataShape, usize)> {
    let mut stats: Vec<(String, KeyStats)> = Vec::new();
    for item in &c.items {
        for k in leaf_keys(item) {
            let Some(v) = leaf(item, &k) else { continue };
            let i = match stats.iter().position(|(x, _)| *x == k) {
                Some(i) => i,
                None => {
                    stats.push((k.clone(), KeyStats::default()));
                    stats.len() - 1
                }
            };
            let st = &mut stats[i].1;
            if v.is_null() {
                continue;
            }
            st.present += 1;
            if instant(v).is_some() {
                st.instants += 1;
            }
            if let Some(s) = v.as_str() {
                if s.trim().is_empty() {
                    st.present -= 1;
                    continue;
                }
                st.strings += 1;
                if s.starts_with("http://") || s.starts_with("https://") || s.starts_with("//") {
                    st.urls += 1;
                    continue;
                }
                let text = plain_text(s);
                st.total_len += text.chars().count();
                st.distinct.insert(text.clone());
                if shown.shows_text(&text) {
                    st.text_hits += 1;
                }
                if text.chars().count() <= 60 && shown.shows_name(&text) {
                    st.name_hits += 1;
                }
            }
        }
    }
    let n = c.items.len();
    let mostly = |x: usize| x * 10 >= n * 6 && x > 0;
    // Text: the longest field the page shows for most items.
    let text = stats
        .iter()
        .filter(|(_, s)| mostly(s.text_hits) && s.urls == 0 && s.instants * 2 < s.strings.max(1))
        .filter(|(_, s)| s.distinct.len() * 2 >= s.present.max(1))
        .max_by_key(|(k, s)| (s.total_len / s.strings.max(1), std::cmp::Reverse(k.len())))?;
    let text_key = text.0.clone();
    let hits = text.1.text_hits;
    // Author: a short name the page shows, named like a person.
    let author = stats
        .iter()
        .filter(|(k, s)| {
            *k != text_key
                && mostly(s.name_hits)
                && s.urls == 0
                && s.instants == 0
                && s.total_len / s.strings.max(1) <= 60
                && !key_has(k, AUTHOR_NOT)
        })
        .max_by_key(|(k, s)| {
            (
                key_has(k, AUTHOR_WORDS),
                s.name_hits * 100 / n.max(1),
                s.distinct.len(),
            )
        })
        .map(|(k, _)| k.clone());
    let date = stats
        .iter()
        .filter(|(_, s)| s.present > 0 && s.instants * 10 >= s.present * 8)
        .max_by_key(|(k, s)| {
            (
                !key_has(k, DATE_NOT),
                key_has(k, DATE_WORDS),
                s.instants,
                std::cmp::Reverse(k.len()),
            )
        })
        .map(|(k, _)| k.clone());
    let url = stats
        .iter()
        .filter(|(k, s)| s.urls > 0 && s.urls == s.strings && key_has(k, URL_WORDS))
        .filter(|(k, _)| !key_has(k, URL_NOT))
        .max_by_key(|(k, s)| (s.urls, std::cmp::Reverse(k.len())))
        .map(|(k, _)| k.clone());
    // Id: unique across the items, named like an id.
    let ids_of = |k: &str| -> Vec<Option<String>> {
        c.items
            .iter()
            .map(|i| leaf(i, k).and_then(scalar))
            .collect()
    };
    let id = stats
        .iter()
        .filter(|(k, s)| {
            s.present == n && key_has(k, &["id", "uuid", "key"]) && {
                let v = ids_of(k);
                let set: FxHashSet<&Option<String>> = v.iter().collect();
                set.len() == n && v.iter().all(Option::is_some)
            }
        })
        .max_by_key(|(k, _)| (k.as_str() == "id", std::cmp::Reverse(k.len())))
        .map(|(k, _)| k.clone());
    // Parent: a field whose values are other items' ids (or empty), named like a parent.
    let parent = id.as_ref().and_then(|idk| {
        let ids: FxHashSet<String> = ids_of(idk).into_iter().flatten().collect();
        stats
            .iter()
            .filter(|(k, _)| k != idk)
            .filter_map(|(k, _)| {
                let refs: Vec<String> = c
                    .items
                    .iter()
                    .filter_map(|i| reference(leaf(i, k)?))
                    .collect();
                let all_known = refs.iter().all(|r| ids.contains(r));
                let named = key_has(k, PARENT_WORDS);
                let fits = all_known && (named || !refs.is_empty()) && refs.len() < n;
                fits.then(|| {
                    (
                        (named, !key_has(k, &["root", "thread", "rid"]), refs.len()),
                        k,
                    )
                })
            })
            .max_by_key(|(rank, _)| *rank)
            .map(|(_, k)| k.clone())
    });
    Some((
        DataShape {
            list: c.list.clone(),
            children: c.children.clone(),
            text: text_key,
            author,
            url,
            date,
            id,
            parent,
            total: None,
        },
        hits,
    ))
    .filter(|(s, hits)| *hits >= 2 || (*hits == 1 && s.author.is_some() && s.date.is_some()))
}

const AUTHOR_WORDS: &[&str] = &[
    "author", "name", "nick", "nickname", "user", "username", "login", "by", "display",
];
const AUTHOR_NOT: &[&str] = &[
    "url", "link", "mail", "email", "avatar", "ua", "browser", "os", "ip", "addr", "type",
    "status", "label", "title", "badge", "level", "role",
];
const DATE_WORDS: &[&str] = &[
    "created",
    "create",
    "inserted",
    "insert",
    "published",
    "posted",
    "date",
    "time",
    "at",
];
const DATE_NOT: &[&str] = &["updated", "update", "modified", "edited", "deleted", "last"];
const URL_WORDS: &[&str] = &["url", "link", "website", "site", "homepage", "web"];
const URL_NOT: &[&str] = &[
    "avatar", "gravatar", "image", "img", "pic", "picture", "photo", "icon", "api", "html",
];
const PARENT_WORDS: &[&str] = &["parent", "pid", "reply", "replyto", "to"];

/// The number beside the list that counts the thread: on every sample whose data holds items,
/// a number on the path to the list equal to the comments the post's data holds in all (its
/// pages together), or the top-level ones.
fn learn_total(samples: &[Sample<'_>], shape: &DataShape) -> Option<Vec<String>> {
    let mut agreed: Option<FxHashSet<Vec<String>>> = None;
    for s in samples {
        let responses: Vec<&DataResponse> = s
            .data
            .iter()
            .filter(|r| at(&r.json, &shape.list).is_some_and(Value::is_array))
            .collect();
        if responses.is_empty() {
            continue;
        }
        let mut seen = FxHashSet::default();
        let mut top = 0u64;
        for r in &responses {
            for i in shape.items(&r.json) {
                let key = i.id.clone().unwrap_or_else(|| i.text.clone());
                if seen.insert(key) && i.parent.is_none() {
                    top += 1;
                }
            }
        }
        let all = seen.len() as u64;
        let mut here = FxHashSet::default();
        for r in &responses {
            for c in candidates(&r.json) {
                if c.list != shape.list {
                    continue;
                }
                for (p, n) in c.wrapper_numbers {
                    if (n == all || n == top) && n > 0 && key_has(p.last()?, &["count", "total"]) {
                        here.insert(p);
                    }
                }
            }
        }
        agreed = Some(match agreed {
            None => here,
            Some(a) => a.intersection(&here).cloned().collect(),
        });
    }
    let mut keys: Vec<Vec<String>> = agreed?.into_iter().collect();
    keys.sort();
    keys.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A page that shows three comments, and a widget's JSON holding them with replies nested
    /// and a reference to the parent, besides fields the page shows too (a browser's name).
    fn sample() -> (Page, Vec<DataResponse>) {
        let page = Page::parse(
            r#"<html><body><article><p>The post about winter bees.</p></article>
            <div class="wl"><div class="card" id="11"><b>Ada Brook</b> <span>Chrome</span>
              <div class="c"><p>Lovely write-up on clustering bees.</p></div>
              <div class="card" id="12"><b>Tom Reed</b> <span>Chrome</span>
                <div class="c"><p>Agreed, the cluster photos are great.</p></div></div></div>
            <div class="card" id="13"><b>Mia Lund</b> <span>Chrome</span>
              <div class="c"><p>Do you wrap your hives in January?</p></div></div>
            <p>3 comments</p></div></body></html>"#,
        );
        let json = json!({
            "page": 1, "totalPages": 1, "count": 3,
            "data": [
                {"objectId": 11, "nick": "Ada Brook", "browser": "Chrome", "link": "https://ada.example/",
                 "avatar": "https://img.example/a.png", "comment": "<p>Lovely write-up on clustering bees.</p>",
                 "insertedAt": "2024-01-05T10:00:00.000Z", "updatedAt": "2024-02-01T00:00:00Z", "pid": null,
                 "children": [
                    {"objectId": 12, "nick": "Tom Reed", "browser": "Chrome", "link": "",
                     "avatar": "https://img.example/t.png", "comment": "<p>Agreed, the cluster photos are great.</p>",
                     "insertedAt": "2024-01-06T11:00:00.000Z", "updatedAt": "2024-02-01T00:00:00Z", "pid": 11, "children": []}
                 ]},
                {"objectId": 13, "nick": "Mia Lund", "browser": "Chrome", "link": "",
                 "avatar": "https://img.example/m.png", "comment": "<p>Do you wrap your hives in January?</p>",
                 "insertedAt": 1704888000000u64, "updatedAt": "2024-02-01T00:00:00Z", "pid": null, "children": []}
            ]
        });
        (
            page,
            vec![DataResponse {
                url: "http://127.0.0.1:8360/api/comment?path=%2Fp%2F".into(),
                json,
            }],
        )
    }

    #[test]
    fn the_shape_is_learned_from_what_the_page_shows() {
        let (page, data) = sample();
        let shape = learn_shape(&[Sample {
            page: &page,
            data: &data,
        }])
        .unwrap();
        assert_eq!(shape.list, vec!["data".to_string()]);
        assert_eq!(shape.children.as_deref(), Some("children"));
        assert_eq!(shape.text, "comment");
        assert_eq!(shape.author.as_deref(), Some("nick"));
        assert_eq!(shape.date.as_deref(), Some("insertedAt"));
        assert_eq!(shape.id.as_deref(), Some("objectId"));
        assert_eq!(shape.parent.as_deref(), Some("pid"));
        assert_eq!(shape.url.as_deref(), Some("link"));
        assert_eq!(shape.total, Some(vec!["count".to_string()]));
        let items = shape.items(&data[0].json);
        assert_eq!(items.len(), 3);
        assert_eq!(items[1].parent.as_deref(), Some("11"));
        assert_eq!(items[1].text, "Agreed, the cluster photos are great.");
        assert_eq!(
            items[2].published.unwrap().to_rfc3339(),
            "2024-01-10T12:00:00+00:00"
        );
        assert_eq!(items[0].author_url.as_deref(), Some("https://ada.example/"));
        assert_eq!(shape.total(&data[0].json), Some(3));
        // The data round-trips through a rendered DOM.
        let dom = Page::parse(&format!(
            "<html><body><p>x</p>{}</body></html>",
            embed(&data[0].url, &data[0].json)
        ));
        assert_eq!(responses(&dom), data);
        assert!(!dom.text.iter().collect::<String>().contains("Lovely"));
    }

    #[test]
    fn json_the_page_does_not_show_is_no_comment_data() {
        let (_, data) = sample();
        let other = Page::parse("<html><body><p>An unrelated page.</p></body></html>");
        assert!(learn_shape(&[Sample {
            page: &other,
            data: &data
        }])
        .is_none());
        assert_eq!(key_words("createdAt"), ["created", "at"]);
        assert_eq!(key_words("user_name"), ["user", "name"]);
        assert!(instant(&json!(1.7e9)).is_some() && instant(&json!(12)).is_none());
        assert!(instant(&json!("2024-01-05 10:00:00")).is_some());
    }
}
