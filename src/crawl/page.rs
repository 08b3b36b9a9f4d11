//! The per-page kernel NewCrawl and UpdateCrawl share: one fetched page → its post, comments and
//! links ([`process`], panic-safe in [`process_safely`]), read with the blog's extraction context
//! (`crawl::blog_context`); the page's comments are `crawl::page_comments`'.

use super::blog_context::{load_context, BlogContext};
use super::links::{followable, site_of};
use super::page_comments::comments_of;
use super::UpdateSettings;
use crate::core::authors::AuthorPage;
use crate::core::extract::{extract, ExtractContext, Extractor, GapField};
use crate::core::feed::FeedEntry;
use crate::core::identify::{judge, Found, Verdict};
use crate::core::page::Page;
use crate::fetch::{self, Response};
use crate::store::{Blog, Comment, Gap, Link, NewPost, PageState, Source, Store};
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use url::Url;

/// Why a page whose URL looks like a permalink gave no post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declined {
    /// Nothing says the page is no post: a post possibly lost (`archive coverage` reports it
    /// as missing). False when the blog's evidence says it is none (a listing, a copy).
    pub lost: bool,
    /// Why, for a person.
    pub reason: String,
}

impl Declined {
    /// The frontier state of a processed page that gave no post for this reason.
    pub(super) fn state(&self) -> PageState {
        if self.lost {
            PageState::Unread
        } else {
            PageState::NotPost
        }
    }
}

/// What processing one page produced.
#[derive(Default)]
pub(super) struct Processed {
    /// The post, when the page is one.
    pub(super) post: Option<NewPost>,
    /// Followable links, posts marked.
    pub(super) links: Vec<Link>,
    /// L(u): links to posts on the page.
    pub(super) post_links: usize,
    /// Comments found, under the post they belong to (a comment page's post).
    pub(super) comments: Option<(String, Vec<Comment>)>,
    /// Why the page gave no post although its URL looks like a permalink.
    pub(super) declined: Option<Declined>,
    /// The page is one of the blog's pages beside its posts (About, Contact; issue 42).
    pub(super) page: Option<crate::store::NewPage>,
}

impl Processed {
    /// Keeps the post under `url`, the address it is archived under, whatever address
    /// fetching it ended at: a revisit's redirect is judged apart (moved, gone), and an archived
    /// post never changes identity.
    pub(super) fn keep_identity(&mut self, url: &str) {
        if let Some(p) = self.post.as_mut() {
            if let Some((owner, _)) = self.comments.as_mut().filter(|(o, _)| *o == p.url) {
                *owner = url.to_string();
            }
            p.url = url.to_string();
        }
    }

    /// The frontier state of the processed page and why, from the state its fetch left it in:
    /// a page that looked like a permalink and gave no post says so ([`Declined`]).
    pub(super) fn state(&self, fetched: PageState) -> (PageState, Option<String>) {
        match (&self.declined, fetched) {
            (Some(d), PageState::Done) => (d.state(), Some(d.reason.clone())),
            (_, s) => (s, None),
        }
    }
}

/// The feed's instant `feed` in the offset the page states it in (`page`), when the page gives
/// the same instant (within a minute) in another offset: feeds often write UTC where the post
/// was dated in the blog's own time, and the day a reader sees is the local one (issue 29,
/// item 6). Otherwise `feed` as it is.
fn in_local_time(
    feed: chrono::DateTime<chrono::FixedOffset>,
    page: Option<chrono::DateTime<chrono::FixedOffset>>,
) -> chrono::DateTime<chrono::FixedOffset> {
    match page {
        Some(local)
            if local.offset() != feed.offset() && (local - feed).num_seconds().abs() <= 60 =>
        {
            feed.with_timezone(local.offset())
        }
        _ => feed,
    }
}

/// One page read as a crawl of `blog` reads it, whatever its URL: its post (the blog's rules
/// first, the generic extractor where they do not fit) and the comments its comment rules find.
/// For `archive extract --blog`. `Err(Declined)` when the page holds no post, with why.
///
/// # Errors
/// The blog was never learned (no rules stored), a stored rule is corrupt, or the store failed.
pub fn read_page(
    store: &Store,
    blog: &Blog,
    response: &Response,
) -> Result<Result<(NewPost, Vec<Comment>), Declined>> {
    let (ctx, _) = load_context(store, blog)?;
    let url = Url::parse(&response.final_url)
        .with_context(|| format!("{}: not a URL", response.final_url))?;
    let page = Page::parse(&fetch::decode(response));
    let post_links = followable(&page, &url, &ctx.site)
        .iter()
        .filter(|l| ctx.pattern.is_post(l))
        .count();
    let entry = ctx.entries.get(url.as_str());
    let post = match post_of(&ctx, &page, &url, url.as_str(), entry, response, post_links) {
        Ok(p) => p,
        Err(d) => return Ok(Err(d)),
    };
    let comments = comments_of(&ctx, &page, &url, true, response)
        .map(|(_, c)| c)
        .unwrap_or_default();
    Ok(Ok((post, comments)))
}

/// The post a page holds. Extracted with the blog's rules, the generic extractor where they do
/// not fit; the feed entry, when there is one, is the truth for its authors and dates (paper
/// §3.2), the page fills in the rest. A page that is no feed entry is judged on the blog's own
/// evidence first (`core::identify`): a listing, a copy of another post, or a page without an
/// article is [`Declined`], with why.
fn post_of(
    ctx: &BlogContext,
    page: &Page,
    base: &Url,
    url: &str,
    entry: Option<&FeedEntry>,
    response: &Response,
    post_links: usize,
) -> Result<NewPost, Declined> {
    let xctx = ExtractContext {
        offset: ctx.offset,
        fetched_at: response.fetched_at,
    };
    // The blog's rules first; a page they do not fit (an older template, a special layout)
    // goes to the generic extractor, as does an article the page's own description disagrees
    // with.
    let (x, found) = match extract(page, &ctx.rules, &xctx) {
        Some(x) => (Some(crate::core::fallback::overrule(page, x)), Found::Rules),
        None => match crate::core::fallback::extract(page, &xctx) {
            Some(x) if x.published.is_none() && ctx.rules.date.is_some() => {
                (Some(x), Found::UndatedFallback)
            }
            Some(x) => (Some(x), Found::Fallback),
            None => (None, Found::Nothing),
        },
    };
    if entry.is_none() {
        let is_post = |u: &Url| ctx.pattern.is_post(u);
        match judge(
            page,
            base,
            &ctx.marks,
            &ctx.rules.article,
            found,
            post_links,
            is_post,
        ) {
            Verdict::Post => {}
            Verdict::NotPost(reason) => {
                return Err(Declined {
                    lost: false,
                    reason,
                })
            }
            Verdict::Lost(reason) => return Err(Declined { lost: true, reason }),
        }
    }
    let x = x.ok_or_else(|| Declined {
        lost: true,
        reason: "a feed entry's page, but neither the blog's rules nor the generic extractor find an article on it".into(),
    })?;
    // A page showing another feed entry's post, title and text, under another address (a
    // listing led by it, a re-post) is not a post of its own.
    if let (None, Some(title)) = (entry, &x.title) {
        let others = ctx
            .entries
            .values()
            .filter(|e| e.url != url && entry.is_none_or(|own| own.url != e.url));
        if let Some(e) = crate::core::listing::copy_of(title, &x.content_text, others) {
            return Err(Declined {
                lost: false,
                reason: format!(
                    "shows the post {} (its title and opening) under another address",
                    e.url
                ),
            });
        }
    }
    let mut by = x.extracted_by;
    // The entry's own authors are the truth; the feed's authors given to every entry (the
    // site's owner) are a weak default, never stronger than the page's byline.
    let authors = match entry {
        Some(e) if !e.authors.is_empty() && (!e.authors_inherited || x.authors.is_empty()) => {
            by.authors = Some(Extractor::Feed);
            crate::core::authors::merge_authors(&e.authors, &x.authors)
        }
        _ if x.authors.is_empty() && !ctx.feed_authors.is_empty() => {
            by.authors = Some(Extractor::Feed);
            ctx.feed_authors.clone()
        }
        _ => x.authors,
    };
    let published = match entry.and_then(|e| e.published) {
        Some(p) => {
            by.published = Some(Extractor::Feed);
            Some(in_local_time(p, x.published))
        }
        None => x.published,
    };
    if x.title.is_none() && entry.is_some_and(|e| e.title.is_some()) {
        by.title = Some(Extractor::Feed);
    }
    let gaps = x
        .gaps
        .into_iter()
        .filter(|(field, _)| match field {
            GapField::Author => authors.is_empty(),
            GapField::Published => published.is_none(),
            GapField::Comments => true,
        })
        .map(|(field, reason)| Gap { field, reason })
        .collect();
    let article = ctx.rules.article.apply_first(page);
    // Each author's page on the blog: the first the post page links for them on the blog's
    // own site (issue 42).
    let mut author_pages: Vec<AuthorPage> = Vec::new();
    let links_base = super::links::document_base(page, base);
    for p in crate::core::bylines::author_pages(page, &authors) {
        let Ok(page_url) = links_base.join(&p.url) else {
            continue;
        };
        let on_site = matches!(page_url.scheme(), "http" | "https")
            && site_of(&page_url) == ctx.site
            && page_url.as_str() != url;
        if on_site && !author_pages.iter().any(|a| a.name == p.name) {
            author_pages.push(AuthorPage {
                url: page_url.to_string(),
                ..p
            });
        }
    }
    Ok(NewPost {
        url: url.to_string(),
        title: x.title.or_else(|| entry.and_then(|e| e.title.clone())),
        authors,
        author_pages,
        published,
        published_raw: x.published_raw,
        updated: entry.and_then(|e| e.updated).or(x.updated),
        content_html: x.content_html,
        content_text: x.content_text,
        tags: x.tags,
        gaps,
        comments_feed: entry
            .and_then(|e| e.comments_feed.clone())
            .or_else(|| crate::core::listing::comment_feed(page, base)),
        comments_declared: entry
            .and_then(|e| e.comment_count)
            .or_else(|| super::page_comments::data_total(ctx, page))
            .or_else(|| crate::core::listing::declared_comments(page, article)),
        comments_closed: crate::core::listing::comments_closed(page),
        next_comment_check: None,
        extracted_by: Some(by),
    })
}

/// Schedules the first comment check of a post archived now (`[update] comment_checks`), when
/// the post can have comments: the blog has comment rules or a comment widget (`renders`), or
/// the post names a comment feed or declares comments. A post of a blog without comments is
/// never checked.
pub(super) fn schedule_comment_check(
    post: &mut NewPost,
    ctx: &BlogContext,
    renders: Option<crate::store::Renders>,
    update: &UpdateSettings,
    now: DateTime<Utc>,
) {
    let commented = ctx.comment_rules.is_some()
        || renders.is_some_and(|r| r.wants(true))
        || post.comments_feed.is_some()
        || post.comments_declared.is_some_and(|n| n > 0);
    if !commented {
        post.next_comment_check = None;
        return;
    }
    let age = post
        .published
        .map(|p| (now - p.with_timezone(&Utc)).to_std().unwrap_or_default())
        .unwrap_or_default();
    post.next_comment_check = crate::core::schedule::comment_check_interval(
        age,
        &update.comment_checks,
        update.comment_check_max_age,
    )
    .map(|wait| crate::core::schedule::after(now, wait));
}

/// Parses and extracts one fetched page: its post (when its URL is a feed entry or matches the
/// permalink pattern and the rules find an article), its comments, its followable links and
/// L(u). Synchronous: the parsed page is `!Send` and never crosses an await.
pub(super) fn process(ctx: &BlogContext, url: &str, depth: u32, response: &Response) -> Processed {
    if response.status >= 400 || !fetch::is_html(response) {
        return Processed::default();
    }
    let base = Url::parse(&response.final_url)
        .or_else(|_| Url::parse(url))
        .expect("fetched URLs parse");
    let page = Page::parse(&fetch::decode(response));
    let links = followable(&page, &base, &ctx.site);
    let post_links = links.iter().filter(|l| ctx.pattern.is_post(l)).count();
    let requested = url;
    // One post, one identity: a permalink that redirected to another address of the blog, or
    // names itself by its own address written otherwise, is archived under that address
    // (issue 42); the frontier URL becomes one of its other addresses.
    let url_parsed = crate::core::post_url::post_identity(
        &Url::parse(requested).expect("frontier URLs parse"),
        &base,
        crate::core::head::declared_address(&page, &base).as_ref(),
        &ctx.site,
        |u| ctx.pattern.is_post(u),
    );
    let url = url_parsed.as_str();
    let entry = ctx.entries.get(url).or_else(|| ctx.entries.get(requested));
    let (mut post, declined) = if entry.is_some()
        || ctx.pattern.is_post(&url_parsed)
        || ctx.pattern.is_post(&base)
        || (crate::core::post_url::comment_page_of(&url_parsed).is_none()
            && crate::core::identify::marked_post(&page, &ctx.marks))
    {
        match post_of(ctx, &page, &base, url, entry, response, post_links) {
            Ok(p) => (Some(p), None),
            Err(d) => {
                tracing::info!(page = url, reason = %d.reason, lost = d.lost, "shaped like a post, but no post taken");
                (None, Some(d))
            }
        }
    } else {
        (None, None)
    };
    let blog_page = match (&post, entry) {
        (None, None) => blog_page(ctx, &page, &url_parsed, response, post_links),
        _ => None,
    };
    let comments = comments_of(ctx, &page, &url_parsed, post.is_some(), response);
    // The count the feed or page declares against what the page yielded (a post's later
    // comment pages add theirs; `archive coverage` reports what is still missing).
    if let Some(declared) = post.as_ref().and_then(|p| p.comments_declared) {
        let found = comments.as_ref().map_or(0, |(_, c)| c.len());
        if found > declared as usize {
            tracing::warn!(
                post = url,
                declared,
                found,
                "more comments extracted than the post declares: check the comment rules"
            );
        } else if found < declared as usize {
            tracing::info!(
                post = url,
                declared,
                found,
                "fewer comments on the page than the post declares"
            );
        }
    }
    // The feed declares comments the page did not yield: say so on the post.
    if let (Some(p), Some(e)) = (post.as_mut(), entry) {
        let declared = e.comment_count.unwrap_or(0);
        let found = comments.as_ref().map_or(0, |(_, c)| c.len());
        if declared > 0 && found == 0 {
            let reason = if ctx.comment_rules.is_none() {
                format!("the feed declares {declared} comments but no comment rule could be learned (comment feeds missing or unmatched); only comment-feed copies are kept")
            } else {
                format!("the feed declares {declared} comments but the comment rules matched none on this page; only comment-feed copies are kept")
            };
            p.gaps.push(Gap {
                field: GapField::Comments,
                reason,
            });
        }
    }
    Processed {
        post,
        links: links
            .into_iter()
            .map(|l| Link {
                post: ctx.pattern.is_post(&l),
                url: l.to_string(),
                depth: depth + 1,
                source: Source::Link,
            })
            .collect(),
        post_links,
        comments,
        declined,
        page: blog_page,
    }
}

/// The page as one of the blog's pages beside its posts (About, Contact; issue 42), when the
/// blog's evidence says it is one ([`crate::core::identify::blog_page`]). A page listing posts
/// or a comment page never is; the generic extractor gives its text.
fn blog_page(
    ctx: &BlogContext,
    page: &Page,
    url: &Url,
    response: &Response,
    post_links: usize,
) -> Option<crate::store::NewPage> {
    if crate::core::post_url::comment_page_of(url).is_some() {
        return None;
    }
    let xctx = ExtractContext {
        offset: ctx.offset,
        fetched_at: response.fetched_at,
    };
    let mut found = None;
    let why = crate::core::identify::blog_page(
        page,
        url,
        &ctx.marks,
        &ctx.rules.article,
        post_links,
        || {
            let x = crate::core::fallback::extract(page, &xctx)?;
            let text = crate::core::identify::PageText {
                dated: x.published.is_some(),
                chars: x.content_text.chars().count(),
            };
            found = Some(x);
            Some(text)
        },
    )?;
    let x = found?;
    Some(crate::store::NewPage {
        url: url.to_string(),
        title: x.title,
        content_html: x.content_html,
        content_text: x.content_text,
        why,
    })
}

/// [`process`], with a panic caught: a bug on one page must not end a crawl. `None` when
/// processing panicked (logged).
pub(super) fn process_safely(
    ctx: &BlogContext,
    url: &str,
    depth: u32,
    response: &Response,
) -> Option<Processed> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        process(ctx, url, depth, response)
    }))
    .inspect_err(|_| tracing::error!(url = %url, "internal error while extracting this page"))
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_feed_instant_takes_the_offset_the_page_states_it_in() {
        let t = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap();
        let feed = t("2024-12-22T02:55:00+00:00");
        let local = in_local_time(feed, Some(t("2024-12-21T21:55:00-05:00")));
        assert_eq!(local, feed, "the same instant");
        assert_eq!(
            local.to_rfc3339(),
            "2024-12-21T21:55:00-05:00",
            "on the local day"
        );
        // Another instant (a page showing only the day, an edit date): the feed's as it is.
        let other = in_local_time(feed, Some(t("2024-12-21T00:00:00-05:00")));
        assert_eq!(other.to_rfc3339(), "2024-12-22T02:55:00+00:00");
        assert_eq!(in_local_time(feed, None), feed);
    }
}
