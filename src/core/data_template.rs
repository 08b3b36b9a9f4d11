//! The address of a comment widget's data for any post (issue 41): learned from the address a
//! rendering of one post asked, where the post's identity (its URL, path or slug, escaped as
//! sent or not) is found and replaced by a slot.

use serde::{Deserialize, Serialize};

/// The address of a widget's data for any post: the address it asked for one post, with that
/// post's identity in it (its URL, path or slug, as sent, escaped or not) replaced by a slot.
/// Shown as the address with the slot in braces (`…?path={path%}&page=1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataTemplate(pub String);

/// The forms of a post's identity a widget sends, most specific first.
const FORMS: [&str; 6] = ["url", "url-", "path", "path-", "path--", "slug"];

fn form_of(form: &str, page: &url::Url) -> Option<String> {
    let mut u = page.clone();
    u.set_fragment(None);
    u.set_query(None);
    let full = u.to_string();
    let path = u.path().to_string();
    let v = match form {
        "url" => full,
        "url-" => full.strip_suffix('/')?.to_string(),
        "path" => path,
        "path-" => path
            .strip_suffix('/')
            .filter(|p| !p.is_empty())?
            .to_string(),
        "path--" => path.trim_matches('/').to_string(),
        "slug" => {
            let last = path.trim_end_matches('/').rsplit('/').next()?.to_string();
            last.rsplit_once('.')
                .map(|(stem, _)| stem.to_string())
                .unwrap_or(last)
        }
        _ => return None,
    };
    // A slug or path of one or two characters would match anywhere.
    (v.chars().count() >= 3).then_some(v)
}

/// `encodeURIComponent`: everything but ASCII letters, digits and `-_.!~*'()` escaped.
fn component(s: &str) -> String {
    const SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'!')
        .remove(b'~')
        .remove(b'*')
        .remove(b'\'')
        .remove(b'(')
        .remove(b')');
    percent_encoding::utf8_percent_encode(s, SET).to_string()
}

/// Whether `s[at..at + len]` stands alone: not inside a longer word of letters and digits.
fn bounded(s: &str, at: usize, len: usize) -> bool {
    let before = s[..at].chars().next_back();
    let after = s[at + len..].chars().next();
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_');
    !word(before) && !word(after)
}

impl DataTemplate {
    /// The template of `request` (an address a rendering of `page` fetched): the first form of
    /// the page's identity found in the request's path or query, escaped as it was sent.
    /// `None` when the request carries no form of it.
    pub fn learn(request: &str, page: &str) -> Option<DataTemplate> {
        let page = url::Url::parse(page).ok()?;
        let req = url::Url::parse(request).ok()?;
        let origin_len = req.origin().ascii_serialization().len();
        let (origin, rest) = request.split_at(origin_len.min(request.len()));
        for form in FORMS {
            let Some(v) = form_of(form, &page) else {
                continue;
            };
            let escaped = component(&v);
            for (needle, slot) in [
                (&escaped, format!("{{{form}%}}")),
                (&v, format!("{{{form}}}")),
            ] {
                if needle.is_empty() || (slot.ends_with("%}") && escaped == v) {
                    continue;
                }
                let mut from = 0;
                while let Some(i) = rest[from..].find(needle.as_str()) {
                    let at = from + i;
                    if bounded(rest, at, needle.len()) {
                        let t = format!(
                            "{origin}{}{slot}{}",
                            &rest[..at],
                            &rest[at + needle.len()..]
                        );
                        return Some(DataTemplate(t));
                    }
                    from = at + needle.len();
                }
            }
        }
        None
    }

    /// The address of `page`'s data. `None` when the page has no such form (a slug-less URL).
    pub fn fill(&self, page: &str) -> Option<String> {
        let page = url::Url::parse(page).ok()?;
        let open = self.0.find('{')?;
        let close = open + self.0[open..].find('}')?;
        let slot = &self.0[open + 1..close];
        let (form, escaped) = match slot.strip_suffix('%') {
            Some(f) => (f, true),
            None => (slot, false),
        };
        let v = form_of(form, &page)?;
        let v = if escaped { component(&v) } else { v };
        Some(format!("{}{}{}", &self.0[..open], v, &self.0[close + 1..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_find_the_posts_identity_as_sent() {
        let page = "http://127.0.0.1:8000/posts/bees-in-winter/";
        let t = DataTemplate::learn(
            "http://127.0.0.1:8360/api/comment?path=%2Fposts%2Fbees-in-winter%2F&pageSize=10&page=1",
            page,
        )
        .unwrap();
        assert_eq!(
            t.0,
            "http://127.0.0.1:8360/api/comment?path={path%}&pageSize=10&page=1"
        );
        assert_eq!(
            t.fill("http://127.0.0.1:8000/posts/hive-notes/").unwrap(),
            "http://127.0.0.1:8360/api/comment?path=%2Fposts%2Fhive-notes%2F&pageSize=10&page=1"
        );
        let t = DataTemplate::learn(
            "http://localhost:8001/api/threads/bees-in-winter/page-1.json",
            page,
        )
        .unwrap();
        assert_eq!(t.0, "http://localhost:8001/api/threads/{slug}/page-1.json");
        let t = DataTemplate::learn(
            "http://c.example/find?site=b&url=http://127.0.0.1:8000/posts/bees-in-winter/&sort=-time",
            page,
        )
        .unwrap();
        assert_eq!(t.0, "http://c.example/find?site=b&url={url}&sort=-time");
        // A word that merely contains the slug is not the slug.
        assert!(DataTemplate::learn("http://c.example/x/bees-in-winterly", page).is_none());
        assert!(DataTemplate::learn("http://c.example/api/stats.json", page).is_none());
    }
}
