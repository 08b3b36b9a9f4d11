//! Every address the reader makes and reads: [`Links`], where a page's own links lead (the
//! running reader's [`Routes`], or a static copy's files), the post, `/go` and search
//! addresses, and the Memento addresses of captures (`/web/{stamp}{modifier}/{url}`, [`View`],
//! the replay page) with their parsing. Imports no page module.

use crate::store::BlogId;
use axum::http::Uri;
use chrono::{DateTime, NaiveDateTime, Utc};

/// Where a page's own links lead: the running reader's routes ([`Routes`]) or the files of a
/// static copy (`serve::site`). Each answer is an address relative to the page or to the
/// server's root, ready for `href`.
pub trait Links {
    /// The stylesheet.
    fn stylesheet(&self) -> String;
    /// The list of blogs.
    fn home(&self) -> String;
    /// The first page of blog `id`'s posts.
    fn blog(&self, id: BlogId) -> String;
    /// The page of the archived post `url`.
    fn post(&self, url: &str) -> String;
    /// Any other address (a feed, a home page): what the archive holds of it, or the address
    /// itself where the copy cannot tell.
    fn go(&self, url: &str) -> String;
    /// The search form's action; `None` where there is no search (a static copy).
    fn search(&self) -> Option<String>;
    /// Blog `id`'s posts with `tag`; `None` where there is no such list (a static copy).
    fn tag(&self, _id: BlogId, _tag: &str) -> Option<String> {
        None
    }
    /// Blog `id`'s posts by `author`; `None` where there is no such list (a static copy).
    fn author(&self, _id: BlogId, _author: &str) -> Option<String> {
        None
    }
    /// The blog list as OPML; `None` where it is not offered (a static copy).
    fn blogs_opml(&self) -> Option<String> {
        None
    }
}

/// The running reader's routes (`/`, `/blog/{id}`, `/post?url=`, `/go?url=`, `/search`).
pub struct Routes;

impl Links for Routes {
    fn stylesheet(&self) -> String {
        "/assets/style.css".into()
    }
    fn home(&self) -> String {
        "/".into()
    }
    fn blog(&self, id: BlogId) -> String {
        format!("/blog/{id}")
    }
    fn post(&self, url: &str) -> String {
        post_href(url)
    }
    fn go(&self, url: &str) -> String {
        go_href(url)
    }
    fn search(&self) -> Option<String> {
        Some("/search".into())
    }
    fn tag(&self, id: BlogId, tag: &str) -> Option<String> {
        Some(format!("/blog/{id}?tag={}", query_value(tag)))
    }
    fn author(&self, id: BlogId, author: &str) -> Option<String> {
        Some(format!("/blog/{id}?author={}", query_value(author)))
    }
    fn blogs_opml(&self) -> Option<String> {
        Some("/blogs.opml".into())
    }
}

/// Blog `id`'s history in charts (`serve::history`): `/blog/{id}/charts`.
pub fn charts_href(id: BlogId) -> String {
    format!("/blog/{id}/charts")
}

/// The name a blog's WACZ download is asked by (`serve::downloads`).
pub const WACZ_DOWNLOAD: &str = "archive.wacz";

/// Blog `id`'s document `name` (`index.atom`, `feed.json`, `wordpress.xml`, `archive.wacz`:
/// `serve::downloads`).
pub fn download_href(id: BlogId, name: &str) -> String {
    format!("/blog/{id}/{name}")
}

/// The reader's page of the archived post `url` (`/post?url=`).
pub fn post_href(url: &str) -> String {
    format!("/post?url={}", query_value(url))
}

/// `value` encoded for a query string.
pub fn query_value(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// The reader's link to what `url` is in the archive (`/go?url=`): the post, else its capture.
pub fn go_href(url: &str) -> String {
    format!("/go?url={}", query_value(url))
}

/// How a capture is asked for, by the modifier after its time (`/web/{stamp}{modifier}/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// No modifier: the page with its addresses rewritten into the archive.
    Page,
    /// `id_`: the bytes as received.
    Raw,
    /// `fr_`: the page as [`View::Page`], shown inside the replay page's frame: its links
    /// lead the whole window to the next page's replay (`serve::replay`).
    Framed,
}

/// A capture time as Memento URLs write it: `YYYYMMDDhhmmss`, UTC.
pub fn timestamp(t: DateTime<Utc>) -> String {
    t.format("%Y%m%d%H%M%S").to_string()
}

/// The reader's URL of the capture of `url` at `stamp` ([`timestamp`]): the bytes as
/// received when `raw`, else the page with its links rewritten.
pub fn web_href(stamp: &str, raw: bool, url: &str) -> String {
    view_href(stamp, if raw { View::Raw } else { View::Page }, url)
}

/// The reader's URL of the capture of `url` at `stamp` as `view` shows it.
pub fn view_href(stamp: &str, view: View, url: &str) -> String {
    let modifier = match view {
        View::Page => "",
        View::Raw => "id_",
        View::Framed => "fr_",
    };
    format!("/web/{stamp}{modifier}/{url}")
}

/// The replay page (banner and frame, `serve::replay`) of the capture of `url` at `stamp`.
pub fn replay_href(stamp: &str, url: &str) -> String {
    format!("/replay/{stamp}/{url}")
}

/// The archived URL in a request path after `prefix` (the raw path, query included, as the
/// archive keyed it), with a scheme whose `//` a client collapsed restored.
pub fn archived_url(uri: &Uri, prefix: &str) -> Option<String> {
    let pq = uri.path_and_query()?.as_str();
    let rest = pq.strip_prefix(prefix)?;
    let fixed = ["http:/", "https:/"].iter().find_map(|s| {
        rest.strip_prefix(s)
            .filter(|r| !r.starts_with('/'))
            .map(|r| format!("{s}/{r}"))
    });
    let url = fixed.unwrap_or_else(|| rest.to_string());
    (url.starts_with("http://") || url.starts_with("https://")).then_some(url)
}

/// Parses `{prefix}{stamp}{modifier}/{url}`: the stamp padded to 14 digits (a year alone is
/// its 1 January), the [`View`] its modifier asks for (`id_`, `fr_`, none), the URL.
pub fn parse_stamped(uri: &Uri, prefix: &str) -> Option<(String, View, String, DateTime<Utc>)> {
    let pq = uri.path_and_query()?.as_str().strip_prefix(prefix)?;
    let digits: String = pq.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() || digits.len() > 14 {
        return None;
    }
    let rest = &pq[digits.len()..];
    let (view, rest) = if let Some(r) = rest.strip_prefix("id_") {
        (View::Raw, r)
    } else if let Some(r) = rest.strip_prefix("fr_") {
        (View::Framed, r)
    } else {
        (View::Page, rest)
    };
    let rest = rest.strip_prefix('/')?;
    let url = archived_url(&Uri::try_from(format!("/x/{rest}")).ok()?, "/x/")?;
    let stamp = format!("{digits}{}", &"19700101000000"[digits.len()..]);
    let at = NaiveDateTime::parse_from_str(&stamp, "%Y%m%d%H%M%S")
        .ok()?
        .and_utc();
    Some((stamp, view, url, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_paths_parse_with_short_stamps_queries_and_collapsed_slashes() {
        let u: Uri = "/web/2026id_/http:/b.test/p?q=1".parse().unwrap();
        let (stamp, view, url, _) = parse_stamped(&u, "/web/").unwrap();
        assert_eq!(
            (stamp.as_str(), view, url.as_str()),
            ("20260101000000", View::Raw, "http://b.test/p?q=1")
        );
        let framed: Uri = "/web/20260102fr_/http://b.test/".parse().unwrap();
        assert_eq!(parse_stamped(&framed, "/web/").unwrap().1, View::Framed);
        let web = |s: &str| parse_stamped(&s.parse().unwrap(), "/web/");
        assert!(web("/web/x/http://b.test/").is_none());
        assert!(web("/web/2026/file:///etc/passwd").is_none());
    }
}
