//! A post's versions as readers read them (issue 29, item 5): each version on its own with
//! its dates (`/version?url=&n=`), the differences of two as blocks (`/diff?url=&from=&to=`:
//! paragraphs, headings and list items stay apart, each changed block with its changed words
//! marked), and every version and earlier comment text for machines (`/api/versions?url=`).

use super::pages::{layout, time, Routes};
use super::views::{query_value, sanitize};
use super::{Failure, Reader};
use crate::store::{CommentVersion, Post, PostVersion};
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Json, Response};
use maud::{html, Markup, PreEscaped};
use std::sync::Arc;

/// How long a diff may search for the smallest difference; past it, `similar` gives a correct
/// but coarser diff (whole runs replaced), so a page never waits longer on two very different
/// versions.
pub const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Query of `/diff`.
#[derive(Debug, serde::Deserialize)]
pub struct DiffParams {
    /// The post.
    pub url: String,
    /// The older version.
    pub from: u32,
    /// The newer version.
    pub to: u32,
}

/// Query of `/version`.
#[derive(Debug, serde::Deserialize)]
pub struct VersionParams {
    /// The post.
    pub url: String,
    /// The version (1 = the first archived).
    pub n: u32,
}

/// Query of `/api/versions`.
#[derive(Debug, serde::Deserialize)]
pub struct UrlOnly {
    /// The post.
    pub url: String,
}

/// One version of a post as the pages show it: number, title, article HTML and text, when
/// it was fetched and (for all but the current) when a newer one replaced it.
struct Version {
    n: u32,
    title: Option<String>,
    html: String,
    text: String,
    fetched_at: chrono::DateTime<chrono::Utc>,
    replaced_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Every version of `post`, oldest first, the current last.
fn all_versions(post: &Post, earlier: Vec<PostVersion>) -> Vec<Version> {
    let mut out: Vec<Version> = earlier
        .into_iter()
        .map(|v| Version {
            n: v.version,
            title: v.title,
            html: v.content_html,
            text: v.content_text,
            fetched_at: v.fetched_at,
            replaced_at: Some(v.replaced_at),
        })
        .collect();
    out.push(Version {
        n: post.version,
        title: post.title.clone(),
        html: post.content_html.clone(),
        text: post.content_text.clone(),
        fetched_at: post.fetched_at,
        replaced_at: None,
    });
    out
}

/// The post at `url` and its versions, or 404.
async fn load(reader: &Arc<Reader>, url: String) -> Result<(Post, Vec<Version>), Failure> {
    reader
        .read(move |s| {
            let Some(post) = s.post(&url)? else {
                return Err(Failure::NotFound(format!("{url} is not an archived post.")));
            };
            let earlier = s.post_versions(&post.url)?;
            let versions = all_versions(&post, earlier);
            Ok((post, versions))
        })
        .await
}

fn dates(v: &Version) -> Markup {
    html! {
        "fetched " (time(Some(v.fetched_at.fixed_offset()), true))
        @match v.replaced_at {
            Some(r) => { ", replaced " (time(Some(r.fixed_offset()), true)) }
            None => { " (current)" }
        }
    }
}

/// `/version?url=&n=`: one version of a post on its own, with its dates.
pub async fn version(
    State(reader): State<Arc<Reader>>,
    Query(q): Query<VersionParams>,
) -> Result<Markup, Failure> {
    let (post, versions) = load(&reader, q.url.clone()).await?;
    let Some(v) = versions.iter().find(|v| v.n == q.n) else {
        return Err(Failure::NotFound(format!(
            "{} has versions 1 to {}.",
            q.url, post.version
        )));
    };
    let title = v.title.clone().unwrap_or_else(|| post.url.clone());
    let html = sanitize(&v.html, &post.url, v.fetched_at, &Arc::default());
    Ok(layout(
        &Routes,
        &format!("{title} (version {})", v.n),
        html! {
            p.meta { a href={ "/post?url=" (query_value(&post.url)) } { "← the post as archived now" } }
            article.post {
                h1 { (title) }
                p.meta { "Version " (v.n) " of " (post.version) ", " (dates(v)) }
                div.content { (PreEscaped(html)) }
            }
        },
    ))
}

/// `/diff?url=&from=&to=`: two versions of a post compared block by block, with their dates.
pub async fn diff(
    State(reader): State<Arc<Reader>>,
    Query(q): Query<DiffParams>,
) -> Result<Markup, Failure> {
    let (post, versions) = load(&reader, q.url.clone()).await?;
    let find = |n: u32| versions.iter().find(|v| v.n == n);
    let (Some(a), Some(b)) = (find(q.from), find(q.to)) else {
        return Err(Failure::NotFound(format!(
            "{} has versions 1 to {}.",
            q.url, post.version
        )));
    };
    let title = post.title.clone().unwrap_or_else(|| post.url.clone());
    let version_href = |n: u32| format!("/version?url={}&n={n}", query_value(&post.url));
    Ok(layout(
        &Routes,
        &format!("{title}: versions {} and {}", q.from, q.to),
        html! {
            h1 { "Version " (q.from) " → " (q.to) }
            p { a href={ "/post?url=" (query_value(&post.url)) } { "← " (title) } }
            ul.meta {
                li { a href=(version_href(a.n)) { "Version " (a.n) } ", " (dates(a)) }
                li { a href=(version_href(b.n)) { "Version " (b.n) } ", " (dates(b)) }
            }
            h2.diff-title { (word_diff(a.title.as_deref().unwrap_or(""), b.title.as_deref().unwrap_or(""))) }
            div.diff { (block_diff(&a.html, &b.html)) }
        },
    ))
}

/// `/api/versions?url=`: `{url, version, versions: [{version, title, content_html,
/// content_text, fetched_at, replaced_at}], comment_versions: [{id, author, content_html,
/// content_text, replaced_at}]}`, oldest first; the current version last, with `replaced_at`
/// null.
pub async fn api(
    State(reader): State<Arc<Reader>>,
    Query(q): Query<UrlOnly>,
) -> Result<Response, super::api::ApiFailure> {
    let url = q.url.clone();
    let (post, versions, comments) = reader
        .read(move |s| {
            let Some(post) = s.post(&url)? else {
                return Err(Failure::NotFound(format!("{url} is not an archived post.")));
            };
            let earlier = s.post_versions(&post.url)?;
            let comments: Vec<CommentVersion> = s.comment_versions(&post.url)?;
            let versions = all_versions(&post, earlier);
            Ok((post, versions, comments))
        })
        .await?;
    let rfc =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    Ok(Json(serde_json::json!({
        "url": post.url,
        "version": post.version,
        "versions": versions.iter().map(|v| serde_json::json!({
            "version": v.n,
            "title": v.title,
            "content_html": v.html,
            "content_text": v.text,
            "fetched_at": rfc(v.fetched_at),
            "replaced_at": v.replaced_at.map(rfc),
        })).collect::<Vec<_>>(),
        "comment_versions": comments.iter().map(|c| serde_json::json!({
            "id": c.id,
            "author": c.author,
            "content_html": c.content_html,
            "content_text": c.content_text,
            "replaced_at": rfc(c.replaced_at),
        })).collect::<Vec<_>>(),
    }))
    .into_response())
}

/// `old` → `new` word by word: removed words in `<del>`, added ones in `<ins>` (similar),
/// within [`DIFF_TIMEOUT`].
pub fn word_diff(old: &str, new: &str) -> Markup {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_words(old, new);
    html! {
        @for change in diff.iter_all_changes() {
            @match change.tag() {
                ChangeTag::Equal => (change.value()),
                ChangeTag::Delete => del { (change.value()) },
                ChangeTag::Insert => ins { (change.value()) },
            }
        }
    }
}

/// Elements whose text is one block of an article.
const BLOCKS: &[&str] = &[
    "p",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "pre",
    "figcaption",
    "dt",
    "dd",
    "td",
    "th",
    "caption",
];

/// The blocks of archived HTML, in order: (element name, its text with whitespace squashed),
/// the innermost blocks only (a list item's paragraph once, not twice). HTML without any is
/// one block of its whole text.
pub fn blocks(html: &str) -> Vec<(String, String)> {
    let doc = scraper::Html::parse_fragment(html);
    let is_block = |e: &scraper::node::Element| BLOCKS.contains(&e.name());
    let mut out = Vec::new();
    for node in doc.root_element().descendants() {
        let Some(e) = scraper::ElementRef::wrap(node) else {
            continue;
        };
        if !is_block(e.value()) {
            continue;
        }
        let inner = e
            .descendants()
            .skip(1)
            .filter_map(scraper::ElementRef::wrap)
            .any(|d| is_block(d.value()));
        if inner {
            continue;
        }
        let text = e.text().collect::<String>();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if !text.is_empty() {
            out.push((e.value().name().to_string(), text));
        }
    }
    if out.is_empty() {
        let text: String = doc.root_element().text().collect();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if !text.is_empty() {
            out.push(("p".into(), text));
        }
    }
    out
}

/// Two versions' articles compared block by block: unchanged blocks as they are, a changed
/// block as removed and added with its changed words marked, whole blocks removed or added
/// marked as such; each block keeps its kind (`class` = the element: `p`, `li`, `h2`…),
/// within [`DIFF_TIMEOUT`].
pub fn block_diff(old_html: &str, new_html: &str) -> Markup {
    use similar::{ChangeTag, TextDiff};
    let (old, new) = (blocks(old_html), blocks(new_html));
    let lines =
        |b: &[(String, String)]| b.iter().map(|(_, t)| format!("{t}\n")).collect::<String>();
    let (old_text, new_text) = (lines(&old), lines(&new));
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(&old_text, &new_text);
    html! {
        @for op in diff.ops() {
            @for change in diff.iter_inline_changes(op) {
                @let kind = match change.tag() {
                    ChangeTag::Insert => change.new_index().and_then(|i| new.get(i)),
                    _ => change.old_index().and_then(|i| old.get(i)),
                }.map_or("p", |(k, _)| k.as_str());
                // A block with no word in common with its counterpart is marked whole.
                @let whole = !change.iter_strings_lossy().any(|(marked, _)| marked);
                @match change.tag() {
                    ChangeTag::Equal => div class={ "block " (kind) } {
                        @for (_, s) in change.iter_strings_lossy() { (s.trim_end_matches('\n')) }
                    },
                    ChangeTag::Delete => div class={ "block removed " (kind) } {
                        @for (marked, s) in change.iter_strings_lossy() {
                            @let s = s.trim_end_matches('\n').to_string();
                            @if marked || whole { del { (s) } } @else { (s) }
                        }
                    },
                    ChangeTag::Insert => div class={ "block added " (kind) } {
                        @for (marked, s) in change.iter_strings_lossy() {
                            @let s = s.trim_end_matches('\n').to_string();
                            @if marked || whole { ins { (s) } } @else { (s) }
                        }
                    },
                }
            }
        }
    }
}

/// The earlier texts of a comment, newest first, as the post page shows them under it.
pub fn earlier_texts(versions: &[&CommentVersion]) -> Markup {
    html! {
        details.earlier {
            summary { "edited: " (versions.len()) " earlier " (if versions.len() == 1 { "text" } else { "texts" }) }
            @for v in versions.iter().rev() {
                div.earlier-text {
                    p.meta { "until " (time(Some(v.replaced_at.fixed_offset()), true)) }
                    p { (v.content_text) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_paragraphs_and_list_items_apart() {
        let b =
            blocks("<p>One  two</p><ul><li><p>Item a</p></li><li>Item b</li></ul><div>loose</div>");
        assert_eq!(
            b,
            vec![
                ("p".to_string(), "One two".to_string()),
                ("p".to_string(), "Item a".to_string()),
                ("li".to_string(), "Item b".to_string()),
            ]
        );
        assert_eq!(blocks("just text"), vec![("p".into(), "just text".into())]);
    }

    #[test]
    fn a_block_diff_marks_words_within_the_changed_block_only() {
        let out = block_diff(
            "<p>The heron stood still.</p><p>Unchanged words.</p><li>gone</li>",
            "<p>The heron flew off.</p><p>Unchanged words.</p><li>new item</li>",
        )
        .into_string();
        assert!(
            out.contains(r#"<div class="block p">Unchanged words.</div>"#),
            "{out}"
        );
        assert!(
            out.contains("<del>stood still.</del>") || out.contains("<del>stood</del>"),
            "{out}"
        );
        assert!(out.contains(r#"class="block added li""#), "{out}");
        assert_eq!(out.matches("Unchanged").count(), 1, "{out}");
    }
}
