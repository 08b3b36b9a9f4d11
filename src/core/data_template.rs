//! The address of a comment widget's data for any post (issue 41): learned from the addresses
//! renderings of posts asked, where the post's identity is found and replaced by a slot: its
//! URL, path or slug (escaped as sent or not), or else a token the post's own page holds (a
//! widget keyed by an id the blog writes into each page: `data-post-id="…"`, a thread address in
//! the page's script), found again in any post's page after the same words.

use serde::{Deserialize, Serialize};

/// The address of a widget's data for any post: the address it asked for one post, with that
/// post's identity in it (its URL, path or slug, as sent, escaped or not) replaced by a slot.
/// Shown as the address with the slot in braces (`…?path={path%}&page=1`); empty when no
/// address of one post carries anything another post's page or address gives (the data is then
/// read from renderings only).
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

    /// The address of the data of the post at `page` whose page holds `html`. `None` when the
    /// post has no such form (a slug-less URL), or its page no such token.
    pub fn fill(&self, page: &str, html: &str) -> Option<String> {
        let page = url::Url::parse(page).ok()?;
        let open = self.0.find('{')?;
        let close = open + self.0[open..].find('}')?;
        let slot = &self.0[open + 1..close];
        if let Some(anchor) = slot.strip_prefix("page:") {
            let anchor = percent_encoding::percent_decode_str(anchor)
                .decode_utf8()
                .ok()?;
            let at = html.find(anchor.as_ref())? + anchor.len();
            let v: String = html[at..].chars().take_while(|&c| !ends_token(c)).collect();
            return (!v.is_empty())
                .then(|| format!("{}{}{}", &self.0[..open], v, &self.0[close + 1..]));
        }
        let (form, escaped) = match slot.strip_suffix('%') {
            Some(f) => (f, true),
            None => (slot, false),
        };
        let v = form_of(form, &page)?;
        let v = if escaped { component(&v) } else { v };
        Some(format!("{}{}{}", &self.0[..open], v, &self.0[close + 1..]))
    }
}

/// What ends a token read from a page: quotes, markup, spaces, separators of addresses.
fn ends_token(c: char) -> bool {
    c.is_whitespace() || "\"'<>&,/?#\\);]}".contains(c)
}

/// Where a token sits in a request: the byte ranges of its path segments and query values.
fn tokens(request: &str) -> Vec<std::ops::Range<usize>> {
    let Ok(u) = url::Url::parse(request) else {
        return Vec::new();
    };
    let origin = u.origin().ascii_serialization().len();
    let mut out = Vec::new();
    let rest = &request[origin.min(request.len())..];
    let mut start = origin;
    for (i, c) in rest.char_indices() {
        let at = origin + i;
        if "/?&=#".contains(c) {
            if at > start {
                out.push(start..at);
            }
            start = at + 1;
        }
    }
    if request.len() > start {
        out.push(start..request.len());
    }
    out
}

impl DataTemplate {
    /// The template of requests keyed by a token of each post's own page: over `samples` (the
    /// address each post's rendering asked, and that post's page), the token of the first
    /// address that varies from post to post (or, with one sample, looks like an id: it holds
    /// a digit) and that each page holds after the same words (up to 24 characters before it).
    pub fn learn_from_pages(samples: &[(&str, &str)]) -> Option<DataTemplate> {
        let (first, first_html) = *samples.first()?;
        let mut ranges = tokens(first);
        // Id-like tokens first.
        ranges.sort_by_key(|r| !first[r.clone()].chars().any(|c| c.is_ascii_digit()));
        for r in ranges {
            let (prefix, suffix) = (&first[..r.start], &first[r.end..]);
            let values: Option<Vec<&str>> = samples
                .iter()
                .map(|(req, _)| {
                    (req.len() >= prefix.len() + suffix.len()
                        && req.starts_with(prefix)
                        && req.ends_with(suffix))
                    .then(|| &req[prefix.len()..req.len() - suffix.len()])
                    .filter(|v| !v.is_empty() && !v.contains(ends_token))
                })
                .collect();
            let Some(values) = values else { continue };
            let varies = values.iter().any(|v| *v != values[0]);
            if (samples.len() > 1 && !varies)
                || (samples.len() == 1 && !values[0].chars().any(|c| c.is_ascii_digit()))
            {
                continue;
            }
            // Each occurrence of the first value in its page, bounded, with the words before it.
            let v0 = values[0];
            let mut from = 0;
            while let Some(i) = first_html[from..].find(v0) {
                let at = from + i;
                from = at + v0.len();
                let after = first_html[from..].chars().next();
                if after.is_some_and(|c| !ends_token(c)) {
                    continue;
                }
                for len in (6..=24).rev() {
                    let Some(start) = at.checked_sub(len) else {
                        continue;
                    };
                    let Some(anchor) = first_html.get(start..at) else {
                        continue;
                    };
                    if anchor.contains('\n') || anchor.ends_with(|c: char| c.is_alphanumeric()) {
                        continue;
                    }
                    let holds = samples.iter().zip(&values).all(|((_, html), v)| {
                        html.find(anchor).is_some_and(|a| {
                            html[a + anchor.len()..].starts_with(v)
                                && html[a + anchor.len() + v.len()..]
                                    .chars()
                                    .next()
                                    .is_none_or(ends_token)
                        })
                    });
                    if holds {
                        const SET: &percent_encoding::AsciiSet =
                            &percent_encoding::CONTROLS.add(b'%').add(b'{').add(b'}');
                        let anchor = percent_encoding::utf8_percent_encode(anchor, SET);
                        return Some(DataTemplate(format!("{prefix}{{page:{anchor}}}{suffix}")));
                    }
                }
            }
        }
        None
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
            t.fill("http://127.0.0.1:8000/posts/hive-notes/", "")
                .unwrap(),
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

    #[test]
    fn a_token_of_the_page_is_found_again_after_the_same_words() {
        let page = |id: &str| {
            format!("<html><body><p>Post</p><script defer src=\"/c.js\" data-key=\"k1\" data-post-id=\"{id}\"></script></body></html>")
        };
        let (a, b) = (page("66a1f0c2e4b0"), page("77b2e1d3f5c1"));
        let t = DataTemplate::learn_from_pages(&[
            (
                "http://c.example/api/comments/post/66a1f0c2e4b0/?limit=20",
                &a,
            ),
            (
                "http://c.example/api/comments/post/77b2e1d3f5c1/?limit=20",
                &b,
            ),
        ])
        .unwrap();
        assert_eq!(
            t.fill("http://b.example/x/", &page("88c3")).unwrap(),
            "http://c.example/api/comments/post/88c3/?limit=20"
        );
        assert!(t.fill("http://b.example/x/", "<p>no widget</p>").is_none());
        // One sample: an id-like token.
        let one = DataTemplate::learn_from_pages(&[(
            "http://c.example/comments/api/page/18/",
            "<script>var props = {\"list_url\": \"http://c.example/comments/api/page/18/\"};</script>",
        )])
        .unwrap();
        assert_eq!(
            one.fill("http://b.example/y/", "<script>var props = {\"list_url\": \"http://c.example/comments/api/page/31/\"};</script>").unwrap(),
            "http://c.example/comments/api/page/31/"
        );
    }
}
