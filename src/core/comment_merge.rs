//! A page's comments completed by its comment widget's data (issue 41): each comment the
//! blog's rules found paired with the data item that is the same comment, which gives it its
//! exact instant and the comment it answers; the items the page did not show added after.

use super::comment_data::DataItem;
use super::comments::{same_author, same_text, stable_key, PageComment};
use super::text::normalise;
use rustc_hash::FxHashMap;

/// A page's comments completed by the widget's data: each comment the rules found is paired
/// with the data item of the same author and text; a paired comment takes the item's instant
/// (exact, where pages show "3 days ago"), its commenter's site when the page links none, and,
/// when the data is `threaded` (it names parents or nests replies), the item's parent (the
/// comment replied to, where a widget shows replies flat under the thread's first comment).
/// Items no comment matches follow, keyed by their data id (`data-ID`), marked `true`: the
/// page did not show them (a page of the thread not expanded).
pub fn merge(
    found: Vec<PageComment>,
    items: &[DataItem],
    threaded: bool,
) -> Vec<(PageComment, bool)> {
    let fold = |s: &str| -> String { normalise(s).into_iter().collect() };
    let mut by_text: FxHashMap<String, Vec<usize>> = FxHashMap::default();
    for (j, it) in items.iter().enumerate() {
        by_text.entry(fold(&it.text)).or_default().push(j);
    }
    let mut used = vec![false; items.len()];
    let mut pair: Vec<Option<usize>> = vec![None; found.len()];
    let authors_agree = |c: &PageComment, it: &DataItem| {
        c.author.is_none()
            || it.author.is_none()
            || same_author(c.author.as_deref(), it.author.as_deref())
    };
    // Exact texts first, then texts that are the same (`same_text`).
    for (i, c) in found.iter().enumerate() {
        let Some(js) = by_text.get(&fold(&c.content_text)) else {
            continue;
        };
        if let Some(&j) = js
            .iter()
            .find(|&&j| !used[j] && authors_agree(c, &items[j]))
        {
            used[j] = true;
            pair[i] = Some(j);
        }
    }
    for (i, c) in found.iter().enumerate() {
        if pair[i].is_some() {
            continue;
        }
        if let Some(j) = (0..items.len()).find(|&j| {
            !used[j] && authors_agree(c, &items[j]) && same_text(&c.content_text, &items[j].text)
        }) {
            used[j] = true;
            pair[i] = Some(j);
        }
    }
    // Each item's key: its comment's on the page, else its own.
    let mut key_of: FxHashMap<String, String> = FxHashMap::default();
    let own_key = |it: &DataItem| match &it.id {
        Some(id) => format!("data-{id}"),
        None => stable_key(&it.author, &it.published, &it.text),
    };
    for (i, p) in pair.iter().enumerate() {
        if let Some(id) = p.and_then(|j| items[j].id.clone()) {
            key_of.insert(id, found[i].key.clone());
        }
    }
    for (j, it) in items.iter().enumerate() {
        if let (false, Some(id)) = (used[j], &it.id) {
            key_of.insert(id.clone(), own_key(it));
        }
    }
    let parent_of = |it: &DataItem| it.parent.as_ref().and_then(|p| key_of.get(p).cloned());
    let mut out: Vec<(PageComment, bool)> = Vec::with_capacity(found.len());
    for (i, mut c) in found.into_iter().enumerate() {
        if let Some(j) = pair[i] {
            let it = &items[j];
            if it.published.is_some() {
                c.published = it.published;
            }
            if c.author_url.is_none() {
                c.author_url = it.author_url.clone();
            }
            if threaded {
                c.parent = parent_of(it);
            }
        }
        out.push((c, false));
    }
    for (j, it) in items.iter().enumerate() {
        if used[j] {
            continue;
        }
        out.push((
            PageComment {
                key: own_key(it),
                author: it.author.clone(),
                author_url: it.author_url.clone(),
                published: it.published,
                published_raw: None,
                content_html: it.html.clone(),
                content_text: it.text.clone(),
                parent: parent_of(it),
            },
            true,
        ));
    }
    out
}
