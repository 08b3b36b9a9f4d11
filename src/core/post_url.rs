//! Post identification (paper §4.3): a URL pattern learned from the feed entries' permalinks,
//! and URL canonicalisation.
//!
//! Permalinks are grouped by shape (number of path segments, query key); in each group a segment
//! position is a literal when every permalink has the same value there, digits when all are
//! numeric, and any slug otherwise (keeping a shared extension such as `.html`). The pattern is
//! anchored at both ends, trailing slashes and `index.html` are insignificant, and a URL with a
//! query string is a post only for `?p=123`-style permalinks. Unlike the original crawler's
//! prefix regex this never accepts `…/post.html?replytocom=5` or `/feed/` under a post.

use serde::{Deserialize, Serialize};
use url::Url;

/// One path segment of a pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Segment {
    /// Exactly this text.
    Literal(String),
    /// One or more ASCII digits.
    Digits,
    /// Any non-empty segment ending with this suffix (e.g. ".html"; empty for none).
    Slug(String),
}

/// One permalink shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// Path segments.
    pub segments: Vec<Segment>,
    /// Name of the query parameter carrying a numeric post id (`p` for `?p=123`).
    pub query_key: Option<String>,
}

/// The learned post URL pattern of one blog: a URL is a post iff it matches one of the shapes on
/// the blog's host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostUrlPattern {
    /// Host (with port) the posts live on.
    pub host: String,
    /// Accepted shapes.
    pub shapes: Vec<Shape>,
}

/// Query parameters that never identify a different page: tracking, comment-reply links,
/// session identifiers, and sort/filter/view switches (which multiply one listing into many).
const NOISE_PARAMS: &[&str] = &[
    "fbclid",
    "gclid",
    "dclid",
    "msclkid",
    "mc_cid",
    "mc_eid",
    "replytocom",
    "sid",
    "sessionid",
    "session_id",
    "sessid",
    "phpsessid",
    "jsessionid",
    "aspsessionid",
    "sort",
    "sortby",
    "sort_by",
    "order",
    "orderby",
    "dir",
    "filter",
    "view",
    "share",
];

/// Canonical form of a URL for de-duplication: fragment removed, noise parameters removed
/// (`utm_*` and `NOISE_PARAMS`), `;jsessionid=…` path parameters removed, percent-escapes of
/// unreserved characters decoded and the others upper-cased, `index.html`/`index.htm` dropped
/// from the path. Scheme and host case and default ports are normalised by `url` itself.
pub fn canonical(url: &Url) -> Url {
    let mut u = url.clone();
    u.set_fragment(None);
    if u.query().is_some() {
        let kept: Vec<(String, String)> = u
            .query_pairs()
            .filter(|(k, _)| {
                let k = k.to_ascii_lowercase();
                !(k.starts_with("utm_") || NOISE_PARAMS.contains(&k.as_str()))
            })
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        if kept.is_empty() {
            u.set_query(None);
        } else {
            u.query_pairs_mut().clear().extend_pairs(kept);
        }
    }
    let mut path = normalise_escapes(u.path());
    if let Some(i) = path.to_ascii_lowercase().find(";jsessionid=") {
        path.truncate(i);
    }
    for index in ["index.html", "index.htm"] {
        if let Some(dir) = path.strip_suffix(index).filter(|d| d.ends_with('/')) {
            path = dir.to_string();
        }
    }
    if path != u.path() {
        u.set_path(&path);
    }
    u
}

/// Decodes `%XX` escapes of unreserved characters (RFC 3986 §2.3) and upper-cases the rest.
/// A hex digit stays escaped after a stray `%` (one not starting an escape) or a stray `%`
/// and one hex digit: decoded, it would make a new escape (`%e%38` would read `%e8`), and
/// `canonical` of its own answer would differ (found by the `cdxj` fuzz target).
fn normalise_escapes(path: &str) -> String {
    let b = path.as_bytes();
    let mut out = String::with_capacity(path.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() && b[i + 1..i + 3].iter().all(u8::is_ascii_hexdigit) {
            let hex = &path[i + 1..i + 3];
            let v = u8::from_str_radix(hex, 16).expect("two hex digits are a byte");
            let tail = out.as_bytes();
            let would_join = v.is_ascii_hexdigit()
                && (tail.ends_with(b"%")
                    || (tail.len() >= 2
                        && tail[tail.len() - 2] == b'%'
                        && tail[tail.len() - 1].is_ascii_hexdigit()));
            if !would_join && (v.is_ascii_alphanumeric() || matches!(v, b'-' | b'.' | b'_' | b'~'))
            {
                out.push(v as char);
            } else {
                out.push('%');
                out.push_str(&hex.to_ascii_uppercase());
            }
            i += 3;
            continue;
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

/// The site of a URL: host without `www.`, lower case, with the port if not the default. Posts,
/// and the pages a blog's crawl follows, are on one site.
pub fn site_of(url: &Url) -> String {
    let host = url
        .host_str()
        .unwrap_or("")
        .trim_start_matches("www.")
        .to_ascii_lowercase();
    match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host,
    }
}

/// Whether two URLs are one address written otherwise: equal once [`canonical`], but for a
/// trailing slash on the path, `http` against `https` and a leading `www.`.
pub fn written_otherwise(a: &Url, b: &Url) -> bool {
    let key = |u: &Url| {
        let c = canonical(u);
        let path = c.path().trim_end_matches('/').to_string();
        (site_of(&c), path, c.query().map(str::to_string))
    };
    key(a) == key(b)
}

/// The address a post fetched at `requested` is archived under (issue 42: one post, one
/// identity), with `final_url` where its redirects ended and `declared` the address the page
/// names itself by (`rel=canonical`, `og:url`):
/// - a redirect to another address of the blog's site (`site`) that is a permalink
///   (`is_post`), or the requested address written otherwise (a trailing slash added or
///   removed, `http` → `https`, `index.html`), gives the final address;
/// - else the declared address, when it is the requested address written otherwise (a
///   redirect wins over it: Docusaurus names `/blog/x` canonical while its host serves
///   `/blog/x/`).
///
/// Otherwise the requested address, [`canonical`]. A redirect elsewhere (the home page, a
/// login page) leaves the identity alone: what it means is for the caller to judge.
pub fn post_identity(
    requested: &Url,
    final_url: &Url,
    declared: Option<&Url>,
    site: &str,
    is_post: impl Fn(&Url) -> bool,
) -> Url {
    let id = canonical(requested);
    let last = canonical(final_url);
    if last != id && site_of(&last) == site && (is_post(&last) || written_otherwise(&id, &last)) {
        // What the server answers wins over what the page says of itself.
        return last;
    }
    match declared.map(canonical) {
        Some(d) if d != id && site_of(&d) == site && written_otherwise(&d, &id) => d,
        _ => id,
    }
}

fn segments(url: &Url) -> Vec<String> {
    url.path()
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn numeric_query(url: &Url) -> Option<String> {
    let pairs: Vec<_> = url.query_pairs().collect();
    match pairs.as_slice() {
        [(k, v)] if !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()) => Some(k.to_string()),
        _ => None,
    }
}

fn suffix_of(s: &str) -> &str {
    s.rfind('.').map_or("", |i| &s[i..])
}

/// The post a comment page belongs to: `…/slug/comment-page-2/` → `…/slug/`, and
/// `…?p=12&cpage=2` → `…?p=12`. `None` for URLs that are not comment pages.
pub fn comment_page_of(url: &Url) -> Option<Url> {
    let mut u = canonical(url);
    let segs: Vec<String> = u.path().split('/').map(str::to_string).collect();
    let is_page = |s: &str| {
        s.strip_prefix("comment-page-")
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    if let Some(i) = segs.iter().rposition(|s| is_page(s)) {
        let path = format!("{}/", segs[..i].join("/"));
        u.set_path(&path);
        return Some(u);
    }
    if u.query_pairs().any(|(k, _)| k == "cpage") {
        let kept: Vec<(String, String)> = u
            .query_pairs()
            .filter(|(k, _)| k != "cpage")
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        if kept.is_empty() {
            u.set_query(None);
        } else {
            u.query_pairs_mut().clear().extend_pairs(kept);
        }
        return Some(u);
    }
    None
}

impl PostUrlPattern {
    /// Learns the pattern from the feed entries' permalinks. `None` when no URL is usable.
    pub fn learn(urls: &[Url]) -> Option<PostUrlPattern> {
        let urls: Vec<Url> = urls.iter().map(canonical).collect();
        let host = site_of(urls.first()?);
        // (segment count, query key) → the permalinks' path segments.
        type Group = ((usize, Option<String>), Vec<Vec<String>>);
        let mut groups: Vec<Group> = Vec::new();
        for u in urls.iter().filter(|u| site_of(u) == host) {
            let key = (segments(u).len(), numeric_query(u));
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => g.push(segments(u)),
                None => groups.push((key, vec![segments(u)])),
            }
        }
        let shapes = groups
            .into_iter()
            .map(|((len, query_key), group)| {
                let segments = (0..len)
                    .map(|i| {
                        let values: Vec<&str> = group.iter().map(|s| s[i].as_str()).collect();
                        let last = i + 1 == len;
                        if values.iter().all(|v| v.chars().all(|c| c.is_ascii_digit())) {
                            Segment::Digits
                        } else if values.iter().all(|v| *v == values[0])
                            && !(last && group.len() == 1)
                        {
                            Segment::Literal(values[0].to_string())
                        } else {
                            let sfx = suffix_of(values[0]);
                            let common = values.iter().all(|v| suffix_of(v) == sfx);
                            Segment::Slug(if common {
                                sfx.to_string()
                            } else {
                                String::new()
                            })
                        }
                    })
                    .collect();
                Shape {
                    segments,
                    query_key,
                }
            })
            .collect();
        Some(PostUrlPattern { host, shapes })
    }

    /// True when `url` is a post permalink under this pattern.
    pub fn is_post(&self, url: &Url) -> bool {
        let url = canonical(url);
        if site_of(&url) != self.host {
            return false;
        }
        let segs = segments(&url);
        let query = numeric_query(&url);
        self.shapes.iter().any(|shape| {
            if shape.query_key != query || (shape.query_key.is_none() && url.query().is_some()) {
                return false;
            }
            shape.segments.len() == segs.len()
                && shape.segments.iter().zip(&segs).all(|(p, s)| match p {
                    Segment::Literal(l) => l == s,
                    Segment::Digits => s.chars().all(|c| c.is_ascii_digit()),
                    Segment::Slug(sfx) => {
                        s.ends_with(sfx.as_str())
                            && s.len() > sfx.len()
                            && !matches!(s.as_str(), "feed" | "rss" | "atom.xml" | "page")
                    }
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(v: &[&str]) -> Vec<Url> {
        v.iter().map(|u| Url::parse(u).unwrap()).collect()
    }

    #[test]
    fn one_post_one_identity() {
        let u = |s: &str| Url::parse(s).unwrap();
        let never = |_: &Url| false;
        let site = "b.org";
        // A trailing slash added, http → https, index.html: the final address.
        for (from, to) in [
            ("http://b.org/blog/x", "http://b.org/blog/x/"),
            ("http://b.org/blog/x/", "http://b.org/blog/x"),
            ("http://b.org/blog/x/", "https://b.org/blog/x/"),
            ("http://b.org/blog/x/index.html", "http://b.org/blog/x/"),
        ] {
            assert_eq!(post_identity(&u(from), &u(to), None, site, never), u(to));
        }
        // A redirect to another permalink of the blog: the permalink.
        let shaped = |x: &Url| x.path().starts_with("/20");
        assert_eq!(
            post_identity(
                &u("http://b.org/?p=12"),
                &u("http://b.org/2024/x/"),
                None,
                site,
                shaped
            ),
            u("http://b.org/2024/x/")
        );
        // To the home page or another site: the requested address stays.
        assert_eq!(
            post_identity(
                &u("http://b.org/2024/x/"),
                &u("http://b.org/"),
                None,
                site,
                shaped
            ),
            u("http://b.org/2024/x/")
        );
        assert_eq!(
            post_identity(
                &u("http://b.org/x"),
                &u("http://c.org/x/"),
                None,
                site,
                never
            ),
            u("http://b.org/x")
        );
        // The declared address, when it is the same one written otherwise; never another page.
        let x = u("http://b.org/blog/x");
        assert_eq!(
            post_identity(&x, &x, Some(&u("http://b.org/blog/x/")), site, never),
            u("http://b.org/blog/x/")
        );
        assert_eq!(
            post_identity(
                &x,
                &x,
                Some(&u("http://b.org/blog/x/comment-page-1/")),
                site,
                never
            ),
            x
        );
    }

    #[test]
    fn wordpress_dates() {
        let p = PostUrlPattern::learn(&urls(&[
            "http://b.org/2013/08/15/a-post/",
            "http://b.org/2014/01/02/other/",
        ]))
        .unwrap();
        assert!(p.is_post(&Url::parse("http://b.org/2010/11/30/old-one/").unwrap()));
        assert!(p.is_post(&Url::parse("http://b.org/2010/11/30/old-one/#respond").unwrap()));
        // replytocom is a view of the same post: canonicalised away, not a second post.
        assert!(p.is_post(&Url::parse("http://b.org/2010/11/30/old-one/?replytocom=5").unwrap()));
        assert!(!p.is_post(&Url::parse("http://b.org/2010/11/30/old-one/?lang=de").unwrap()));
        assert!(!p.is_post(&Url::parse("http://b.org/2010/11/30/old-one/feed/").unwrap()));
        assert!(!p.is_post(&Url::parse("http://b.org/2010/11/").unwrap()));
        assert!(!p.is_post(&Url::parse("http://other.org/2010/11/30/x/").unwrap()));
    }

    #[test]
    fn extensions_literals_and_queries() {
        let p = PostUrlPattern::learn(&urls(&[
            "http://k.info/posts/a.html",
            "http://k.info/posts/b.html",
        ]))
        .unwrap();
        assert!(p.is_post(&Url::parse("http://k.info/posts/zz.html").unwrap()));
        assert!(!p.is_post(&Url::parse("http://k.info/tags/zz.html").unwrap()));
        assert!(!p.is_post(&Url::parse("http://k.info/posts/zz.html?showComment=1").unwrap()));
        let q =
            PostUrlPattern::learn(&urls(&["http://e.com/?p=234", "http://e.com/?p=235"])).unwrap();
        assert!(q.is_post(&Url::parse("http://e.com/?p=1").unwrap()));
        assert!(!q.is_post(&Url::parse("http://e.com/about").unwrap()));
        assert!(!q.is_post(&Url::parse("http://e.com/?cat=3&x=1").unwrap()));
    }

    #[test]
    fn comment_pages() {
        let c = |s: &str| comment_page_of(&Url::parse(s).unwrap()).map(|u| u.to_string());
        assert_eq!(
            c("http://b.org/2019/03/04/x/comment-page-2/").as_deref(),
            Some("http://b.org/2019/03/04/x/")
        );
        assert_eq!(
            c("http://b.org/2019/03/04/x/comment-page-2/#comments").as_deref(),
            Some("http://b.org/2019/03/04/x/")
        );
        assert_eq!(
            c("http://b.org/?p=12&cpage=3").as_deref(),
            Some("http://b.org/?p=12")
        );
        assert_eq!(c("http://b.org/2019/03/04/x/"), None);
    }

    #[test]
    fn canonical_drops_noise() {
        let c = |s: &str| canonical(&Url::parse(s).unwrap()).to_string();
        assert_eq!(
            c("http://a.b/x/index.html?utm_source=f&id=3#c"),
            "http://a.b/x/?id=3"
        );
        assert_eq!(
            c("HTTP://A.b:80/x?PHPSESSID=abc&sort=desc&page=2"),
            "http://a.b/x?page=2"
        );
        assert_eq!(
            c("http://a.b/shop;jsessionid=F00?x=1"),
            "http://a.b/shop?x=1"
        );
        assert_eq!(
            c("http://a.b/%7Euser/caf%c3%a9/a%2Fb"),
            "http://a.b/~user/caf%C3%A9/a%2Fb"
        );
        // A decoded hex digit after a stray `%` would make a new escape.
        for (raw, want) in [
            ("http://a.b/x%e%38y", "http://a.b/x%e%38y"),
            ("http://a.b/%%341", "http://a.b/%%341"),
            ("http://a.b/%zz%41", "http://a.b/%zzA"),
        ] {
            assert_eq!(c(raw), want);
            assert_eq!(c(&c(raw)), want, "canonical of {raw} again");
        }
    }
}
