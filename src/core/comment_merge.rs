//! A page's comments completed by its comment widget's data (issue 41): each comment the
//! blog's rules found paired with the data item that is the same comment, which gives it its
//! exact instant and the comment it answers; the items the page did not show added after.

use super::comment_data::DataItem;
use super::comments::{same_author, same_text, stable_key, PageComment};
use super::text::normalise;
use rustc_hash::FxHashMap;

/// A page's comments completed by the widget's data: each comment the rules found is paired
/// with the data item of the same author and text; a paired comment takes the item's instant
/// (exact, where pages show "3 days ago") and name (the page's author element may hold more),
/// its commenter's site when the page links none, and,
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
    // The page's author element may hold more than the name (a header with the date): the
    // item's name within it agrees.
    let authors_agree = |c: &PageComment, it: &DataItem| match (&c.author, &it.author) {
        (Some(a), Some(b)) => {
            same_author(Some(a), Some(b)) || fold(a).contains(&fold(b)) && !fold(b).is_empty()
        }
        _ => true,
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
            if it.author.is_some() {
                c.author = it.author.clone();
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

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn page(key: &str, author: &str, text: &str, parent: Option<&str>) -> PageComment {
        PageComment {
            key: key.into(),
            author: Some(author.into()),
            author_url: None,
            published: None,
            published_raw: Some("3 days ago".into()),
            content_html: text.into(),
            content_text: text.into(),
            parent: parent.map(str::to_string),
        }
    }

    fn item(id: &str, parent: Option<&str>, author: &str, text: &str) -> DataItem {
        DataItem {
            id: Some(id.into()),
            parent: parent.map(str::to_string),
            author: Some(author.into()),
            author_url: None,
            text: text.into(),
            html: format!("<p>{text}</p>"),
            published: DateTime::parse_from_rfc3339("2024-05-01T10:00:00Z").ok(),
        }
    }

    #[test]
    fn the_data_gives_parents_dates_and_what_the_page_did_not_show() {
        // A widget showing replies flat under the thread's first comment, the header's date
        // and name in one element.
        let found = vec![
            page("1", "Ann", "First.", None),
            page("2", "Bo", "@Ann: agreed.", Some("1")),
            page("3", "2024-05-01 - Cy", "@Bo: not me.", Some("1")),
        ];
        let items = [
            item("1", None, "Ann", "First."),
            item("2", Some("1"), "Bo", "agreed."),
            item("3", Some("2"), "Cy", "not me."),
            item("4", Some("3"), "Di", "Late to this."),
        ];
        let merged = merge(found, &items, true);
        let got: Vec<(&str, Option<&str>, Option<&str>, bool)> = merged
            .iter()
            .map(|(c, only)| {
                (
                    c.key.as_str(),
                    c.parent.as_deref(),
                    c.author.as_deref(),
                    *only,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("1", None, Some("Ann"), false),
                ("2", Some("1"), Some("Bo"), false),
                ("3", Some("2"), Some("Cy"), false),
                ("data-4", Some("3"), Some("Di"), true),
            ]
        );
        assert!(merged.iter().all(|(c, _)| c.published.is_some()));
        // Data that names no parents leaves the page's threading alone.
        let merged = merge(
            vec![page("2", "Bo", "agreed.", Some("1"))],
            &items[1..2],
            false,
        );
        assert_eq!(merged[0].0.parent.as_deref(), Some("1"));
    }
}
