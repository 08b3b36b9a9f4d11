//! What the reader's pages and its JSON API both show, gathered once from the store: a blog's
//! overview, a page of posts, search parameters, and the HTML a snippet or an article becomes.

use super::failure::{Failure, NotArchived};
use super::routes::{go_href, timestamp, web_href};
use crate::store::{
    Blog, BlogId, Capture, CoverageCounts, PostFilter, SearchOrder, SearchQuery, Store,
};
use chrono::{DateTime, NaiveDate, Utc};
use std::borrow::Cow;

/// A blog as the reader lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BlogView {
    /// Row id (`/blog/{id}`).
    pub id: BlogId,
    /// Feed title.
    pub title: Option<String>,
    /// Home page.
    pub home_url: String,
    /// Feed it was added with.
    pub feed_url: String,
    /// What the archive holds of it.
    pub coverage: CoverageCounts,
    /// When it was last brought up to date (UpdateCrawl, else NewCrawl).
    #[serde(serialize_with = "crate::store::records::rfc3339::utc_opt")]
    pub last_update: Option<DateTime<Utc>>,
    /// The fields it has learned extraction rules for (`article`, `title`, `author`, …).
    pub rules: Vec<String>,
    /// Updates (jobs) that failed in a row since the last that succeeded; 0 when it did.
    pub failed_updates: u32,
    /// The blog's language (BCP 47), when known.
    pub language: Option<String>,
}

impl BlogView {
    /// The overview of `blog`.
    ///
    /// # Errors
    /// The database failed.
    pub fn of(store: &Store, blog: Blog) -> anyhow::Result<BlogView> {
        let coverage = store.coverage_counts(blog.id)?;
        let mut rules: Vec<String> = store
            .rules(blog.id)?
            .into_iter()
            .map(|r| r.field.to_string())
            .collect();
        rules.sort();
        rules.dedup();
        Ok(BlogView {
            id: blog.id,
            title: blog.title,
            home_url: blog.home_url,
            feed_url: blog.feed_url,
            coverage,
            last_update: blog.last_update_at.or(blog.crawled_at),
            rules,
            failed_updates: blog.errors_in_a_row,
            language: blog.language,
        })
    }

    /// Every blog of the archive, in id order.
    ///
    /// # Errors
    /// The database failed.
    pub fn all(store: &Store) -> anyhow::Result<Vec<BlogView>> {
        store
            .blogs()?
            .into_iter()
            .map(|b| BlogView::of(store, b))
            .collect()
    }

    /// The blog's name for a person: its feed title, else its home page.
    pub fn name(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.home_url)
    }
}

/// The blog of id `id`.
///
/// # Errors
/// [`Failure::NotFound`] when there is none.
pub fn blog(store: &Store, id: BlogId) -> Result<Blog, Failure> {
    store
        .blog(id)?
        .ok_or_else(|| Failure::NotFound(format!("There is no blog {id} in this archive.")))
}

/// Query parameters of a blog's post list (`?page=&month=YYYY-MM&author=&tag=`).
#[derive(Debug, Default, serde::Deserialize)]
pub struct ListParams {
    /// 1-based page.
    pub page: Option<u32>,
    /// `YYYY-MM`.
    pub month: Option<String>,
    /// An author name.
    pub author: Option<String>,
    /// A category or tag.
    pub tag: Option<String>,
}

/// A date both back ends and every export can hold: years 1 to 9999 (what RFC 3339 writes
/// and PostgreSQL reads back the same).
fn sane(d: &NaiveDate) -> bool {
    use chrono::Datelike;
    (1..=9999).contains(&d.year())
}

impl ListParams {
    /// The store's filter.
    ///
    /// # Errors
    /// [`Failure::BadRequest`] when `month` is not `YYYY-MM`.
    pub fn filter(&self) -> Result<PostFilter, Failure> {
        let month = match self.month.as_deref().filter(|m| !m.is_empty()) {
            None => None,
            Some(m) => Some(
                NaiveDate::parse_from_str(&format!("{m}-01"), "%Y-%m-%d")
                    .ok()
                    .filter(sane)
                    .map(|d| {
                        use chrono::Datelike;
                        (d.year(), d.month())
                    })
                    .ok_or_else(|| {
                        Failure::BadRequest(format!(
                            "`month={m}` is not understood: month takes YYYY-MM, from 0001-01 to 9999-12."
                        ))
                    })?,
            ),
        };
        let nonempty = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
        Ok(PostFilter {
            month,
            author: nonempty(&self.author),
            tag: nonempty(&self.tag),
        })
    }

    /// The 1-based page asked for.
    pub fn page(&self) -> u32 {
        self.page.unwrap_or(1).max(1)
    }
}

/// Query parameters of a search
/// (`?q=&blog=&author=&tag=&from=YYYY-MM-DD&to=YYYY-MM-DD&sort=relevance|date&page=`).
#[derive(Debug, Default, Clone, serde::Deserialize)]
pub struct SearchParams {
    /// The words.
    pub q: Option<String>,
    /// A blog id.
    pub blog: Option<String>,
    /// An author (of the post or of a comment): the name's or a word's beginning.
    pub author: Option<String>,
    /// A category or tag (whole name).
    pub tag: Option<String>,
    /// `relevance` (default) or `date` (newest first).
    pub sort: Option<String>,
    /// First day.
    pub from: Option<String>,
    /// Last day.
    pub to: Option<String>,
    /// 1-based page.
    pub page: Option<u32>,
}

impl SearchParams {
    /// The store's query for page [`Self::page`] of `page_size` hits, asking one more to know
    /// whether a next page exists, ranking the newest `rank_window` matches.
    ///
    /// # Errors
    /// [`Failure::BadRequest`] naming a date that is not `YYYY-MM-DD`, a blog that is not a
    /// number or an order that is neither `relevance` nor `date`.
    pub fn query(&self, page_size: u32, rank_window: u32) -> Result<SearchQuery, Failure> {
        let day = |name: &str, v: &Option<String>| -> Result<Option<NaiveDate>, Failure> {
            match v.as_deref().filter(|s| !s.is_empty()) {
                None => Ok(None),
                Some(s) => NaiveDate::parse_from_str(s, "%Y-%m-%d")
                    .ok()
                    .filter(sane)
                    .map(Some)
                    .ok_or_else(|| {
                        Failure::BadRequest(format!(
                            "`{name}={s}` is not understood: {name} takes a day as YYYY-MM-DD, from 0001-01-01 to 9999-12-31."
                        ))
                    }),
            }
        };
        let blog = match self.blog.as_deref().filter(|s| !s.is_empty()) {
            None => None,
            Some(b) => Some(
                b.parse()
                    .map_err(|_| Failure::BadRequest(format!("`blog={b}` is not understood: blog takes a blog's number, as the home page's links give it.")))?,
            ),
        };
        let order = match self.sort.as_deref().filter(|s| !s.is_empty()) {
            None => SearchOrder::default(),
            Some(o) => o.parse().map_err(|_| {
                Failure::BadRequest(format!(
                    "`sort={o}` is not understood: sort takes relevance or date."
                ))
            })?,
        };
        Ok(SearchQuery {
            text: self.q.clone().unwrap_or_default(),
            blog,
            author: self.author.clone().filter(|s| !s.trim().is_empty()),
            tag: self.tag.clone().filter(|s| !s.trim().is_empty()),
            order,
            from: day("from", &self.from)?,
            to: day("to", &self.to)?,
            limit: page_size + 1,
            offset: (self.page() - 1).saturating_mul(page_size),
            rank_window,
        })
    }

    /// The 1-based page asked for.
    pub fn page(&self) -> u32 {
        self.page.unwrap_or(1).clamp(1, 10_000)
    }
}

/// The blogs whose title holds every word searched for (case and diacritics folded, a word
/// or its beginning; excluded words and `AND`, `OR`, `NOT` aside): shown above the posts, since
/// a word of a blog's name no longer lists every post of the blog (issue 45).
pub fn blogs_named<'b>(blogs: &'b [crate::store::Blog], text: &str) -> Vec<&'b crate::store::Blog> {
    // Folded letters-and-digits runs, as the filters compare names.
    let runs = |t: &str| -> Vec<String> {
        crate::core::text::fold(t)
            .split(|c: char| !c.is_alphanumeric())
            .filter(|r| !r.is_empty())
            .map(str::to_string)
            .collect()
    };
    let words: Vec<String> = text
        .split_whitespace()
        .filter(|w| !matches!(*w, "AND" | "OR" | "NOT") && !w.starts_with('-'))
        .flat_map(runs)
        .collect();
    if words.is_empty() {
        return Vec::new();
    }
    blogs
        .iter()
        .filter(|b| {
            let Some(title) = b.title.as_deref() else {
                return false;
            };
            let title = runs(title);
            words.iter().all(|w| {
                title.iter().any(|t| {
                    t.starts_with(w.as_str()) || (t.len() >= 3 && w.starts_with(t.as_str()))
                })
            })
        })
        .collect()
}

/// A search snippet as HTML: the text escaped, each match in `<mark>`.
pub fn snippet_html(marked: &str) -> String {
    quick_xml::escape::escape(marked)
        .replace('\u{1}', "<mark>")
        .replace('\u{2}', "</mark>")
}

/// Query `?url=`.
#[derive(Debug, serde::Deserialize)]
pub struct UrlParam {
    /// An archived address (a permalink, any captured URL).
    pub url: String,
}

/// What an address in archived HTML is for, when [`sanitize_with`] rewrites it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// An image to show (`<img src>`, a video's `poster`): never loaded from the live site.
    Image,
    /// Sound or video to play (`<audio src>`, `<video src>`, `<source src>`, `<track src>`):
    /// never loaded from the live site.
    Media,
    /// A link to follow (`href`, `cite`, `longdesc`).
    Link,
}

/// Archived HTML (an article, a comment) made safe to show in the reader (ammonia: no
/// script, no style, no event handler, no form; `<audio>`, `<video>` and `<picture>` kept
/// with their sources, never autoplaying), with every image and media file served from the
/// archive's capture nearest to `at` and every link going through [`go_href`]; relative
/// addresses are resolved against `base` first; an image not in `held` (the post's requisites
/// the archive holds) shows [`MISSING_IMAGE`] instead of a broken image. Addresses that are
/// not http(s) or mailto are dropped.
pub fn sanitize(
    html: &str,
    base: &str,
    at: DateTime<Utc>,
    held: &std::sync::Arc<std::collections::HashSet<String>>,
) -> String {
    let stamp = timestamp(at);
    let held = std::sync::Arc::clone(held);
    sanitize_with(html, base, move |target, url| {
        Some(match target {
            Target::Image if !held.contains(url.as_str()) => MISSING_IMAGE.to_string(),
            Target::Image | Target::Media => web_href(&stamp, true, url.as_str()),
            Target::Link => go_href(url.as_str()),
        })
    })
}

/// Sanitised HTML kept per version (issue 45 item 7): [`sanitize`]'s output for the same
/// archived HTML, page address, capture time and held images is the same, so each post or
/// comment version is made safe once, not on every request. Keyed by a hash of all four
/// (SipHash with this process's random keys: archived text cannot choose a collision); the
/// least recently used go first past `budget` bytes.
pub struct SanitizedCache {
    kept: std::sync::Mutex<(hashlink::LinkedHashMap<u64, std::sync::Arc<str>>, usize)>,
    keys: std::collections::hash_map::RandomState,
    budget: usize,
}

impl SanitizedCache {
    /// An empty cache holding at most `budget` bytes of sanitised HTML.
    pub fn new(budget: usize) -> SanitizedCache {
        SanitizedCache {
            kept: std::sync::Mutex::new((hashlink::LinkedHashMap::new(), 0)),
            keys: std::collections::hash_map::RandomState::new(),
            budget,
        }
    }

    /// A sanitiser for one page's HTML: addresses against `base`, media from the capture
    /// nearest `at`, images from `held` (as [`sanitize`]).
    pub fn for_page<'a>(
        &'a self,
        base: &'a str,
        at: DateTime<Utc>,
        held: &'a std::sync::Arc<std::collections::HashSet<String>>,
    ) -> impl Fn(&str) -> String + 'a {
        use std::hash::{BuildHasher, Hash, Hasher};
        let mut page = self.keys.build_hasher();
        base.hash(&mut page);
        at.timestamp_micros().hash(&mut page);
        let mut images: Vec<&String> = held.iter().collect();
        images.sort_unstable();
        images.hash(&mut page);
        let page = page.finish();
        move |html: &str| {
            let mut h = self.keys.build_hasher();
            page.hash(&mut h);
            html.hash(&mut h);
            let key = h.finish();
            if let Some(hit) = self.kept.lock().expect("lock").0.to_back(&key) {
                return hit.to_string();
            }
            let made: std::sync::Arc<str> = sanitize(html, base, at, held).into();
            let mut kept = self.kept.lock().expect("lock");
            let (map, bytes) = &mut *kept;
            if made.len() <= self.budget && map.insert(key, std::sync::Arc::clone(&made)).is_none()
            {
                *bytes += made.len();
            }
            while *bytes > self.budget {
                match map.pop_front() {
                    Some((_, old)) => *bytes -= old.len(),
                    None => break,
                }
            }
            made.to_string()
        }
    }
}

/// What an image the archive does not hold shows: a labelled grey box (an SVG `data:` URL,
/// which the reader's policy allows), never a broken image.
pub const MISSING_IMAGE: &str = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' \
    width='240' height='48'%3E%3Crect width='100%25' height='100%25' fill='%23ddd'/%3E%3Ctext \
    x='12' y='29' font-family='sans-serif' font-size='14' fill='%23444'%3EImage not in the \
    archive%3C/text%3E%3C/svg%3E";

/// Archived HTML made safe as [`sanitize`] makes it, each absolute http(s) address (relative
/// ones resolved against `base`) given to `rewrite`, which says where it leads now (`None`
/// drops the attribute: an image the archive does not hold). Fragments (`#id`) stay; mailto
/// links are kept as they are; other schemes are dropped.
pub fn sanitize_with(
    html: &str,
    base: &str,
    rewrite: impl Fn(Target, &url::Url) -> Option<String> + Send + Sync + 'static,
) -> String {
    let base = url::Url::parse(base).ok();
    let mut b = ammonia::Builder::default();
    b.add_tags(["audio", "video", "source", "track", "picture"])
        .add_tag_attributes("audio", ["controls", "loop", "preload", "src"])
        .add_tag_attributes(
            "video",
            [
                "controls",
                "loop",
                "preload",
                "src",
                "poster",
                "width",
                "height",
                "playsinline",
            ],
        )
        .add_tag_attributes("source", ["src", "type", "media"])
        .add_tag_attributes("track", ["src", "kind", "srclang", "label", "default"])
        // Shown as the author placed it, played only when the reader asks.
        .set_tag_attribute_value("audio", "controls", "")
        .set_tag_attribute_value("video", "controls", "")
        .link_rel(Some("noopener noreferrer nofollow"))
        .attribute_filter(move |element, attribute, value| {
            let is_url = matches!(
                (element, attribute),
                (_, "href") | (_, "src") | (_, "cite") | ("img", "longdesc") | ("video", "poster")
            );
            if !is_url || value.starts_with('#') {
                return Some(Cow::Borrowed(value));
            }
            let abs = match &base {
                Some(b) => b.join(value.trim()).ok()?,
                None => url::Url::parse(value.trim()).ok()?,
            };
            match abs.scheme() {
                "http" | "https" => {}
                "mailto" if attribute == "href" => return Some(Cow::Owned(abs.to_string())),
                _ => return None,
            }
            let target = match (element, attribute) {
                ("img", "src") | ("video", "poster") => Target::Image,
                ("audio" | "video" | "source" | "track", "src") => Target::Media,
                _ => Target::Link,
            };
            rewrite(target, &abs).map(Cow::Owned)
        });
    b.clean(html).to_string()
}

/// The capture of `url` nearest `at`, else (pywb's fuzzy matching, for the common cases) that
/// of `url` as the crawl keyed it: tracking parameters, `replytocom` and such dropped,
/// `index.html` dropped (`core::post_url::canonical`). Answers the URL that matched too.
pub fn capture_or_canonical(
    s: &Store,
    url: &str,
    at: DateTime<Utc>,
) -> anyhow::Result<Option<(String, Capture)>> {
    if let Some(c) = s.capture_near(url, at)? {
        return Ok(Some((url.to_string(), c)));
    }
    let Some(canonical) = url::Url::parse(url)
        .ok()
        .map(|u| crate::core::post_url::canonical(&u).to_string())
        .filter(|c| c != url)
    else {
        return Ok(None);
    };
    Ok(s.capture_near(&canonical, at)?.map(|c| (canonical, c)))
}

/// Why `url` answers nothing at `at`, with where to go instead ([`NotArchived`]): the capture
/// of its site's home page nearest `at` (the host's root on either scheme, else the home page
/// of the archived blog on that host), and that blog.
///
/// # Errors
/// The database failed.
pub fn not_archived(s: &Store, url: &str, at: DateTime<Utc>) -> anyhow::Result<Failure> {
    let mut out = NotArchived {
        url: url.to_string(),
        nearest: None,
        site: None,
    };
    if let Some(u) = url::Url::parse(url).ok().filter(|u| u.host_str().is_some()) {
        let host = |u: &url::Url| (u.host_str().map(str::to_ascii_lowercase), u.port());
        let blog = s
            .blogs()?
            .into_iter()
            .filter(|b| url::Url::parse(&b.home_url).is_ok_and(|h| host(&h) == host(&u)))
            .max_by_key(|b| {
                // The blog whose home the address lies under, else any on the host.
                usize::from(url.starts_with(b.home_url.trim_end_matches('/'))) * 10_000
                    + b.home_url.len()
            });
        let root = |scheme: &str| {
            let mut r = u.clone();
            r.set_path("/");
            r.set_query(None);
            r.set_fragment(None);
            let _ = r.set_scheme(scheme);
            r.to_string()
        };
        let other = if u.scheme() == "https" {
            "http"
        } else {
            "https"
        };
        let homes = blog
            .iter()
            .map(|b| b.home_url.clone())
            .chain([root(u.scheme()), root(other)]);
        for home in homes {
            if let Some(c) = s.capture_near(&home, at)? {
                out.nearest = Some(c);
                break;
            }
        }
        out.site = blog.map(|b| (b.id, b.name().to_string()));
    }
    Ok(Failure::NotArchived(Box::new(out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitized_articles_run_nothing_and_load_nothing_live() {
        let at = DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
            .unwrap()
            .with_timezone(&Utc);
        let html = r#"<p onclick="x()">Hi <script>alert(1)</script><img src="/a.png" srcset="b.png 2x"> <a href="../other/">o</a> <a href="javascript:alert(1)">j</a></p><style>p{}</style><form><input></form>"#;
        let held = std::sync::Arc::new(std::collections::HashSet::from([
            "http://blog.test/a.png".to_string()
        ]));
        let out = sanitize(html, "http://blog.test/2020/post/", at, &held);
        assert!(!out.contains("script") && !out.contains("onclick") && !out.contains("<form"));
        assert!(
            out.contains(r#"src="/web/20260102030405id_/http://blog.test/a.png""#),
            "{out}"
        );
        assert!(
            out.contains(r#"href="/go?url=http%3A%2F%2Fblog.test%2F2020%2Fother%2F""#),
            "{out}"
        );
        assert!(
            !out.contains("javascript") && !out.contains("srcset"),
            "{out}"
        );
    }

    #[test]
    fn media_plays_from_the_archive_and_missing_images_are_labelled() {
        let at = DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
            .unwrap()
            .with_timezone(&Utc);
        let html = r#"<video autoplay poster="p.png"><source src="v.mp4" type="video/mp4"></video><audio src="https://cdn.test/a.mp3"></audio><img src="gone.png" alt="A heron">"#;
        let held = std::sync::Arc::new(std::collections::HashSet::from([
            "http://blog.test/p.png".to_string()
        ]));
        let out = sanitize(html, "http://blog.test/", at, &held);
        assert!(
            out.contains(r#"poster="/web/20260102030405id_/http://blog.test/p.png""#),
            "{out}"
        );
        assert!(
            out.contains(
                r#"<source src="/web/20260102030405id_/http://blog.test/v.mp4" type="video/mp4">"#
            ),
            "{out}"
        );
        assert!(
            out.contains(
                r#"<audio src="/web/20260102030405id_/https://cdn.test/a.mp3" controls="">"#
            ),
            "{out}"
        );
        assert!(!out.contains("autoplay"), "{out}");
        assert!(out.contains(&format!(r#"src="{MISSING_IMAGE}""#)), "{out}");
        assert!(out.contains(r#"alt="A heron""#), "{out}");
    }

    #[test]
    fn snippets_are_escaped_around_their_marks() {
        assert_eq!(
            snippet_html("a <b> \u{1}night\u{2} & day"),
            "a &lt;b&gt; <mark>night</mark> &amp; day"
        );
    }

    /// Issue 45 item 7: a version is made safe once; the held images are part of the key;
    /// the least recently used go first past the budget.
    #[test]
    fn sanitised_html_is_kept_per_version_within_its_budget() {
        let at = DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
            .unwrap()
            .with_timezone(&Utc);
        let html = r#"<p>Hi <img src="/a.png"><script>x()</script></p>"#;
        let none = std::sync::Arc::new(std::collections::HashSet::new());
        let held = std::sync::Arc::new(std::collections::HashSet::from([
            "http://blog.test/a.png".to_string()
        ]));
        let cache = SanitizedCache::new(10_000);
        let clean = cache.for_page("http://blog.test/p/", at, &none);
        let first = clean(html);
        assert_eq!(first, sanitize(html, "http://blog.test/p/", at, &none));
        assert_eq!(clean(html), first);
        assert_eq!(cache.kept.lock().unwrap().0.len(), 1, "made once");
        let with_image = cache.for_page("http://blog.test/p/", at, &held)(html);
        assert_ne!(with_image, first, "the held images are part of the key");
        assert!(with_image.contains("/web/20260102030405id_/http://blog.test/a.png"));
        let small = SanitizedCache::new(first.len() * 2);
        let clean = small.for_page("http://blog.test/p/", at, &none);
        for n in 0..10 {
            clean(&format!("{html}<p>{n}</p>"));
        }
        let (map, bytes) = &*small.kept.lock().unwrap();
        assert!(
            *bytes <= first.len() * 2 && map.len() <= 2,
            "{bytes} bytes, {} kept",
            map.len()
        );
    }
}
