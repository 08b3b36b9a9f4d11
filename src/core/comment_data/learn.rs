//! Learning where a widget's comments are in its JSON (issue 41): every array of objects a
//! rendering fetched is a candidate list; the one whose text field the rendered page shows
//! wins, and its fields are told apart by their values, then their names' words.

use super::{at, instant, leaf, plain_text, reference, scalar, DataResponse, DataShape, MAX_DEPTH};
use crate::core::page::Page;
use crate::core::text::{bigram_set, normalise};
use rustc_hash::FxHashSet;
use serde_json::Value;

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
pub(super) fn key_words(key: &str) -> Vec<String> {
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
    let parent = id
        .as_ref()
        .map(|idk| parent_fields(c, &stats, idk, n))
        .unwrap_or_default();
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

/// A field whose values are other items' ids: how it names them.
struct RefField {
    key: String,
    /// References to items that are replies themselves (a chain of answers).
    chains: usize,
    /// Named like a parent (`parent`, `pid`, `reply_to`).
    named: bool,
    /// Not named like a thread's root (`root`, `rid`).
    not_root: bool,
    /// The items that name another.
    who: FxHashSet<String>,
}

/// The fields naming an item's parent, the most specific first: fields whose values are other
/// items' ids (or nothing), named like a parent; one that chains (points at replies) before
/// one that does not, one set on fewer items and always along with another (the comment
/// answered, where the other names the thread: `in_reply_to_id` beside `parent_id`) before it.
fn parent_fields(
    c: &Candidate<'_>,
    stats: &[(String, KeyStats)],
    idk: &str,
    n: usize,
) -> Vec<String> {
    let id_of = |i: &Value| leaf(i, idk).and_then(scalar);
    let ids: FxHashSet<String> = c.items.iter().filter_map(|i| id_of(i)).collect();
    let fields: Vec<RefField> = stats
        .iter()
        .filter(|(k, _)| k != idk)
        .filter_map(|(k, _)| {
            // Every value an id or nothing; an item naming itself is no reply (a thread's
            // first comment as its own parent).
            let scalars = c
                .items
                .iter()
                .all(|i| leaf(i, k).is_none_or(|v| v.is_null() || v.is_string() || v.is_number()));
            let refs: Vec<(Option<String>, String)> = c
                .items
                .iter()
                .filter_map(|i| {
                    let own = id_of(i);
                    let r = reference(leaf(i, k)?).filter(|r| Some(r) != own.as_ref())?;
                    Some((own, r))
                })
                .collect();
            let named = key_has(k, PARENT_WORDS);
            let fits = scalars
                && refs.iter().all(|(_, r)| ids.contains(r))
                && (named || !refs.is_empty())
                && refs.len() < n;
            let who: FxHashSet<String> = refs.iter().filter_map(|(o, _)| o.clone()).collect();
            let chains = refs.iter().filter(|(_, r)| who.contains(r)).count();
            fits.then(|| RefField {
                key: k.clone(),
                chains,
                named,
                not_root: !key_has(k, &["root", "thread", "rid"]),
                who,
            })
        })
        .collect();
    let narrower = |f: &RefField| {
        fields
            .iter()
            .filter(|g| f.who.len() < g.who.len() && f.who.is_subset(&g.who))
            .count()
    };
    let mut ranked: Vec<&RefField> = fields.iter().collect();
    ranked.sort_by_key(|f| {
        std::cmp::Reverse((f.chains, narrower(f), f.named, f.not_root, f.who.len()))
    });
    ranked.into_iter().take(2).map(|f| f.key.clone()).collect()
}

const AUTHOR_WORDS: &[&str] = &[
    "author", "name", "nick", "nickname", "user", "username", "login", "by", "display",
];
const AUTHOR_NOT: &[&str] = &[
    "id", "pid", "uuid", "key", "url", "link", "mail", "email", "avatar", "ua", "browser", "os",
    "ip", "addr", "type", "status", "label", "title", "badge", "level", "role",
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
