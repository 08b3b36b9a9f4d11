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

mod learn;
use chrono::{DateTime, FixedOffset, TimeZone, Utc};
pub use learn::{learn_shape, Sample};
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
    /// The fields naming the item it replies to, the most specific first (the comment answered,
    /// then the thread's first comment): an item's parent is the first one it names.
    #[serde(default)]
    pub parent: Vec<String>,
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
                .iter()
                .find_map(|k| reference(leaf(v, k)?).filter(|p| Some(p) != id.as_ref()))
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
            crate::core::dates::parse_instant(t, None)
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
        assert_eq!(shape.parent, ["pid"]);
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
        assert_eq!(learn::key_words("createdAt"), ["created", "at"]);
        assert_eq!(learn::key_words("user_name"), ["user", "name"]);
        assert!(instant(&json!(1.7e9)).is_some() && instant(&json!(12)).is_none());
        assert!(instant(&json!("2024-01-05 10:00:00")).is_some());
    }

    #[test]
    fn the_comment_answered_before_the_thread_it_is_in() {
        // Ghost's shape: `parent_id` names the thread's first comment, `in_reply_to_id` the
        // reply answered, when it is not the first comment.
        let page = Page::parse(
            "<html><body><p>Ann: First words here today.</p><p>Bo: A reply to the first.</p><p>Cy: A reply to the reply.</p></body></html>",
        );
        let json = json!({"comments": [
            {"id": "a", "parent_id": null, "in_reply_to_id": null, "html": "<p>First words here today.</p>",
             "member": {"name": "Ann"}, "created_at": "2024-01-01T10:00:00Z", "replies": [
                {"id": "b", "parent_id": "a", "in_reply_to_id": null, "html": "<p>A reply to the first.</p>",
                 "member": {"name": "Bo"}, "created_at": "2024-01-01T11:00:00Z", "replies": []},
                {"id": "c", "parent_id": "a", "in_reply_to_id": "b", "html": "<p>A reply to the reply.</p>",
                 "member": {"name": "Cy"}, "created_at": "2024-01-01T12:00:00Z", "replies": []}]}]});
        let data = vec![DataResponse {
            url: "http://c/api".into(),
            json,
        }];
        let shape = learn_shape(&[Sample {
            page: &page,
            data: &data,
        }])
        .unwrap();
        assert_eq!(shape.parent, ["in_reply_to_id", "parent_id"]);
        assert_eq!(shape.author.as_deref(), Some("member.name"));
        let parents: Vec<Option<String>> = shape
            .items(&data[0].json)
            .into_iter()
            .map(|i| i.parent)
            .collect();
        assert_eq!(parents, [None, Some("a".into()), Some("b".into())]);
    }
}
