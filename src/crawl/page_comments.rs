//! A page's comments and their identity (paper §3.5): what the blog's comment rules find on a
//! page, completed by the comment widget's own data the rendering carried (issue 41: exact
//! dates, the comment each one answers, those the page did not show), the comments of comment
//! feeds, and how incoming comments meet the archived ones ([`reconcile_comments`]: decided
//! here, the store only stores).

use super::blog_context::BlogContext;
use crate::core::comment_data::{self, DataItem, DataShape};
use crate::core::comments::{same_comment, same_id};
use crate::core::feed::{self, Feed};
use crate::core::page::Page;
use crate::core::post_url::comment_page_of;
use crate::fetch::Response;
use crate::store::{Comment, CommentSource, CommentWrite, Store};
use anyhow::Result;
use std::collections::{HashMap, HashSet};
use url::Url;

/// The page number of a comment page (`comment-page-2/`, `?cpage=2`); 0 for a post page.
fn comment_page_number(url: &Url) -> i64 {
    url.path_segments()
        .and_then(|mut s| {
            s.find_map(|seg| {
                seg.strip_prefix("comment-page-")
                    .and_then(|n| n.parse().ok())
            })
        })
        .or_else(|| {
            url.query_pairs()
                .find(|(k, _)| k == "cpage")
                .and_then(|(_, v)| v.parse().ok())
        })
        .unwrap_or(0)
}

/// The comments a page shows (a post page, or one of its comment pages), under the post they
/// belong to, completed by the comment widget's data its rendering carried
/// (`core::comment_merge::merge`); `None` when there are none or the page belongs to no post.
pub(super) fn comments_of(
    ctx: &BlogContext,
    page: &Page,
    url: &Url,
    is_post: bool,
    response: &Response,
) -> Option<(String, Vec<Comment>)> {
    if ctx.comment_rules.is_none() && ctx.comment_data.is_none() {
        return None;
    }
    let (owner, page_no) = match comment_page_of(url) {
        Some(parent) => (parent.to_string(), comment_page_number(url)),
        None if is_post => (url.to_string(), 0),
        None => return None,
    };
    let found = ctx
        .comment_rules
        .as_ref()
        .map(|rules| crate::core::comments::extract(page, rules, ctx.offset, response.fetched_at))
        .unwrap_or_default();
    let merged = match &ctx.comment_data {
        Some((_, shape)) => {
            let items = data_items(page, shape);
            let threaded = !shape.parent.is_empty() || shape.children.is_some();
            crate::core::comment_merge::merge(found, &items, threaded)
        }
        None => found.into_iter().map(|c| (c, false)).collect(),
    };
    let comments: Vec<Comment> = merged
        .into_iter()
        .enumerate()
        .map(|(i, (c, data_only))| Comment {
            id: c.key,
            author: c.author,
            author_url: c.author_url,
            published: c.published,
            published_raw: c.published_raw,
            content_html: c.content_html,
            content_text: c.content_text,
            parent: c.parent,
            // What only the widget's data holds stays until a page shows it.
            source: if data_only {
                CommentSource::Feed
            } else {
                CommentSource::Page
            },
            position: page_no * 100_000 + i as i64,
        })
        .collect();
    (!comments.is_empty()).then_some((owner, comments))
}

/// The comment count the widget's data declares on a rendered page: its largest declared total
/// (a thread's pages repeat it), or the comments it holds if more.
pub(super) fn data_total(ctx: &BlogContext, page: &Page) -> Option<u32> {
    let (_, shape) = ctx.comment_data.as_ref()?;
    let responses = comment_data::responses(page);
    let total = responses.iter().filter_map(|r| shape.total(&r.json)).max();
    let items = data_items(page, shape).len() as u32;
    let listed = responses.iter().any(|r| shape.lists(&r.json).is_some());
    (listed || total.is_some()).then(|| total.unwrap_or(0).max(items))
}

/// The comments of the widget's data a rendered page carries, each once, in the order fetched.
pub(super) fn data_items(page: &Page, shape: &DataShape) -> Vec<DataItem> {
    let mut seen = HashSet::new();
    comment_data::responses(page)
        .iter()
        .flat_map(|r| shape.items(&r.json))
        .filter(|i| seen.insert(i.id.clone().unwrap_or_else(|| i.text.clone())))
        .collect()
}

/// The comments of a comment feed (a post's, or a blog's site-wide one), keyed `feed:<link>`,
/// in feed order; empty comments are dropped.
pub(super) fn comments_of_feed(cf: &Feed) -> Vec<Comment> {
    cf.entries
        .iter()
        .enumerate()
        .map(|(pos, c)| {
            let html = c
                .content_html
                .clone()
                .or(c.summary_html.clone())
                .unwrap_or_default();
            Comment {
                id: format!("feed:{}", c.url),
                author: c.authors.first().cloned(),
                author_url: None,
                published: c.published,
                published_raw: None,
                content_text: feed::html_to_text(&html),
                content_html: html,
                parent: None,
                source: CommentSource::Feed,
                position: pos as i64,
            }
        })
        .filter(|c| !c.content_text.is_empty())
        .collect()
}

/// Decides how `incoming` comments of a post meet the `archived` ones, so that no comment is
/// stored twice and none is lost:
/// - a page comment archived before under another key keeps that key: a new theme names the
///   same comment differently (`div-comment-12` → `comment-12`), or gives no id and the key is
///   a hash — same id number, or (without ids) same author and text;
/// - feed copies of comments the page now shows are deleted (page copies win);
/// - a feed copy of a comment a page already showed is not stored.
pub(super) fn reconcile_comments(
    post_url: &str,
    archived: &[Comment],
    incoming: &[Comment],
) -> CommentWrite {
    let same = |a: &Comment, b: &Comment| {
        same_comment(
            a.author.as_deref(),
            &a.content_text,
            b.author.as_deref(),
            &b.content_text,
        )
    };
    let from_page = |c: &&Comment| c.source == CommentSource::Page;
    let archived_page: Vec<&Comment> = archived.iter().filter(from_page).collect();
    let any_page = incoming.iter().any(|c| c.source == CommentSource::Page);
    let mut keys: HashMap<String, String> = HashMap::new();
    if any_page {
        let ids: HashSet<&str> = incoming.iter().map(|c| c.id.as_str()).collect();
        for c in incoming.iter().filter(from_page) {
            if archived_page.iter().any(|a| a.id == c.id) {
                continue;
            }
            let by_id = archived_page
                .iter()
                .find(|a| same_id(&a.id, &c.id) || same_id(&c.id, &a.id));
            let by_text = || {
                archived_page
                    .iter()
                    .find(|a| !ids.contains(a.id.as_str()) && same(c, a))
            };
            if let Some(a) = by_id.or_else(by_text) {
                if !ids.contains(a.id.as_str()) && !keys.values().any(|v| *v == a.id) {
                    keys.insert(c.id.clone(), a.id.clone());
                }
            }
        }
    }
    let key = |k: &String| keys.get(k).cloned().unwrap_or_else(|| k.clone());
    let remapped: Vec<Comment> = incoming
        .iter()
        .map(|c| Comment {
            id: key(&c.id),
            parent: c.parent.as_ref().map(key),
            ..c.clone()
        })
        .collect();
    let delete = if any_page {
        archived
            .iter()
            .filter(|a| a.source == CommentSource::Feed)
            .filter(|a| remapped.iter().any(|c| from_page(&c) && same(c, a)))
            .map(|a| a.id.clone())
            .collect()
    } else {
        Vec::new()
    };
    let upsert = remapped
        .into_iter()
        .filter(|c| !(c.source == CommentSource::Feed && archived_page.iter().any(|a| same(c, a))))
        .collect();
    CommentWrite {
        post_url: post_url.to_string(),
        delete,
        upsert,
    }
}

/// [`reconcile_comments`] against the comments the store holds for `post_url`.
pub(super) fn comment_write(
    store: &Store,
    post_url: &str,
    incoming: &[Comment],
) -> Result<CommentWrite> {
    Ok(reconcile_comments(
        post_url,
        &store.comments(post_url)?,
        incoming,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comment(id: &str, author: &str, text: &str, source: CommentSource) -> Comment {
        Comment {
            id: id.into(),
            author: Some(author.into()),
            author_url: None,
            published: None,
            published_raw: None,
            content_html: text.into(),
            content_text: text.into(),
            parent: None,
            source,
            position: 0,
        }
    }

    #[test]
    fn page_copies_replace_feed_copies_and_keep_archived_keys() {
        let archived = [
            comment("feed:x#c1", "Ada", "First!", CommentSource::Feed),
            comment("div-comment-12", "Bram", "Nice post.", CommentSource::Page),
        ];
        let incoming = [
            comment("comment-12", "Bram", "Nice post.", CommentSource::Page),
            comment("comment-13", "Ada", "First!", CommentSource::Page),
        ];
        let w = reconcile_comments("http://b/p", &archived, &incoming);
        assert_eq!(w.delete, vec!["feed:x#c1".to_string()]);
        let keys: Vec<&str> = w.upsert.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(keys, ["div-comment-12", "comment-13"]);
        // A feed copy of what a page showed is not stored again.
        let again = [comment(
            "feed:y#c2",
            "Bram",
            "Nice post.",
            CommentSource::Feed,
        )];
        assert!(reconcile_comments("http://b/p", &archived, &again)
            .upsert
            .is_empty());
    }
}
