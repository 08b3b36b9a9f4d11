//! The records the store keeps and reads back (the vocabularies of their states and kinds are
//! `store::kinds`).
//!
//! Times are `chrono` values: instants the archive itself records (fetches, leases, due times)
//! are `DateTime<Utc>`; times a blog published (posts, comments, feed entries) keep the offset
//! the blog wrote, `DateTime<FixedOffset>`. Exported records serialise them as RFC 3339.

use super::kinds::{
    CommentSource, JobKind, JobState, MediaState, PageState, RenderMode, Renders, Source,
};
use super::{BlogId, ResponseId};
use crate::core::extract::{ExtractedBy, GapField};
use crate::core::post_url::PostUrlPattern;
use crate::core::rules::Field;
use crate::fetch::{FetchRecord, Response};
use chrono::{DateTime, FixedOffset, Utc};

/// A URL to add to a blog's frontier.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// Canonical URL.
    pub url: String,
    /// Link depth from the seeds.
    pub depth: u32,
    /// How it was found.
    pub source: Source,
    /// It matches the blog's post URL pattern (or is a feed entry).
    pub post: bool,
}

/// A blog as stored.
#[derive(Debug, Clone)]
pub struct Blog {
    /// Row id.
    pub id: BlogId,
    /// The blog's home page.
    pub home_url: String,
    /// The feed the blog was added with.
    pub feed_url: String,
    /// Feed title.
    pub title: Option<String>,
    /// Feed format.
    pub feed_kind: crate::core::feed::FeedKind,
    /// When NewCrawl first started.
    pub crawl_started_at: Option<DateTime<Utc>>,
    /// When NewCrawl completed; `None` for blogs never fully crawled.
    pub crawled_at: Option<DateTime<Utc>>,
    /// Learned post URL pattern; `None` before rules are learned.
    pub post_pattern: Option<PostUrlPattern>,
    /// Where NewCrawl starts; `None`: the home page.
    pub start_url: Option<String>,
    /// When the last UpdateCrawl finished without error.
    pub last_update_at: Option<DateTime<Utc>>,
    /// When the next UpdateCrawl is due.
    pub next_update_at: Option<DateTime<Utc>>,
    /// Failed jobs in a row (0 after a success): drives the exponential back-off.
    pub errors_in_a_row: u32,
    /// The error of the last failed job, for `archive status`.
    pub last_error: Option<String>,
    /// Rendering chosen by the user.
    pub render: RenderMode,
    /// What is rendered, once decided.
    pub renders: Option<Renders>,
    /// Why, for a person.
    pub render_reason: Option<String>,
    /// When its sitemaps were last read.
    pub sitemaps_read_at: Option<DateTime<Utc>>,
    /// The blog's language as a BCP 47 tag (its feed's, else its pages' `<html lang>`).
    pub language: Option<String>,
}

impl Blog {
    /// The blog's name for a person: its feed title, else (none, or blank) its home page.
    pub fn name(&self) -> &str {
        self.title
            .as_deref()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or(&self.home_url)
    }
}

/// A learned rule as stored.
#[derive(Debug, Clone)]
pub struct StoredRule {
    /// The field the rule extracts.
    pub field: Field,
    /// XPath.
    pub xpath: String,
    /// Mean Dice score on the training pages (0..=1).
    pub score: f64,
    /// Training pages that voted for it.
    pub votes: u32,
    /// Training pages.
    pub samples: u32,
    /// When it was learned.
    pub learned_at: DateTime<Utc>,
    /// For date rules: the chrono format the page shows dates in, or "relative" / "machine".
    pub format: Option<String>,
}

/// Times as RFC 3339 in exports: a blog's times with the offset it wrote (`+01:00`, `+00:00`),
/// the archive's own UTC times with `Z`; fractional seconds only when there are some.
pub(crate) mod rfc3339 {
    use chrono::{DateTime, FixedOffset, SecondsFormat, Utc};
    use serde::Serializer;

    pub fn local<S: Serializer>(
        t: &Option<DateTime<FixedOffset>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_str(&t.to_rfc3339()),
            None => s.serialize_none(),
        }
    }

    pub fn utc<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&t.to_rfc3339_opts(SecondsFormat::AutoSi, true))
    }

    pub fn utc_opt<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => utc(t, s),
            None => s.serialize_none(),
        }
    }
}

/// One requisite or media file of a post, as recorded (`post_media`) and exported.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Media {
    /// Absolute URL.
    pub url: String,
    /// What it is (image, stylesheet, font, icon, media, attachment).
    pub kind: crate::core::requisites::Kind,
    /// Stored, failed or skipped.
    pub state: MediaState,
    /// Why it was not stored.
    pub reason: Option<String>,
    /// HTTP status of the stored response.
    pub status: Option<u16>,
    /// SHA-256 (hex) of the stored body.
    pub sha256: Option<String>,
    /// MIME type of the stored response (`Content-Type` without parameters).
    pub mime: Option<String>,
    /// Size of the stored body, in bytes.
    pub bytes: Option<u64>,
}

impl Media {
    /// Whether the archive holds the file as it was (kept, and answered without an error: a
    /// 404 is not the file).
    pub fn is_held(&self) -> bool {
        self.state == MediaState::Stored && self.status.is_some_and(|s| s < 400)
    }
}

/// An archived post (as exported: see README "Export format").
#[derive(Debug, Clone, serde::Serialize)]
pub struct Post {
    /// Permalink.
    pub url: String,
    /// The blog's home page.
    pub blog: String,
    /// Title.
    pub title: Option<String>,
    /// Author names.
    pub authors: Vec<String>,
    /// Publication time, with the blog's offset.
    #[serde(serialize_with = "rfc3339::local")]
    pub published: Option<DateTime<FixedOffset>>,
    /// Last update, with the blog's offset.
    #[serde(serialize_with = "rfc3339::local")]
    pub updated: Option<DateTime<FixedOffset>>,
    /// The date as the page shows it.
    pub published_raw: Option<String>,
    /// Article HTML.
    pub content_html: String,
    /// Article text.
    pub content_text: String,
    /// When the page was fetched.
    #[serde(serialize_with = "rfc3339::utc")]
    pub fetched_at: DateTime<Utc>,
    /// Fields that could not be extracted and why.
    pub gaps: Vec<Gap>,
    /// 1 for the first archived text; +1 each time the blog changed it (earlier texts are kept,
    /// see [`super::Store::post_versions`]).
    pub version: u32,
    /// When the post was first found missing from the blog (HTTP 404/410); it stays archived.
    #[serde(serialize_with = "rfc3339::utc_opt")]
    pub gone_at: Option<DateTime<Utc>>,
    /// Where the post moved to, when a revisit found it at another permalink of its blog (a
    /// permanent redirect); the post keeps its first URL as its identity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_to: Option<String>,
    /// Categories and tags the post's page gives it, in page order.
    pub tags: Vec<String>,
    /// The pages the blog keeps for some of `authors`, in `authors`' order (filled with the
    /// comments; issue 42).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub author_pages: Vec<crate::core::authors::AuthorPage>,
    /// Which extractor gave each field; `None` for posts archived before this was recorded.
    pub extracted_by: Option<ExtractedBy>,
    /// Comments, oldest first (filled by [`super::Store::posts`], [`super::Store::post`] and
    /// [`super::Store::for_each_post`]).
    pub comments: Vec<Comment>,
    /// The page's requisites and media, in page order (filled by [`super::Store::post`] and
    /// [`super::Store::for_each_post`]).
    pub media: Vec<Media>,
}

/// A page of a blog that is no post (About, Contact, Now, a reading list; issue 42), as
/// extracted: archived beside the posts, never among them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPage {
    /// Its address.
    pub url: String,
    /// Its title, when the page names one.
    pub title: Option<String>,
    /// Its text as HTML (the generic extractor's article).
    pub content_html: String,
    /// Its text.
    pub content_text: String,
    /// Why it is a page of the blog and no post: the blog's evidence, for a person.
    pub why: String,
}

/// An archived page beside a blog's posts ([`NewPage`]), as last fetched.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BlogPage {
    /// Its address.
    pub url: String,
    /// Its title, when the page names one.
    pub title: Option<String>,
    /// Its text as HTML.
    pub content_html: String,
    /// Its text.
    pub content_text: String,
    /// When the reading archived was fetched.
    pub fetched_at: DateTime<Utc>,
    /// Why it is a page and no post.
    pub why: String,
}

/// A post to write, keyed by its canonical URL.
#[derive(Debug, Clone)]
pub struct NewPost {
    /// Canonical permalink.
    pub url: String,
    /// Title.
    pub title: Option<String>,
    /// Author names.
    pub authors: Vec<String>,
    /// The pages the blog keeps for some of `authors` (absolute addresses on the blog's site),
    /// kept per blog and author ([`super::Store::author_pages`]).
    pub author_pages: Vec<crate::core::authors::AuthorPage>,
    /// Publication time, with the blog's offset.
    pub published: Option<DateTime<FixedOffset>>,
    /// The date as the page shows it.
    pub published_raw: Option<String>,
    /// Last update, when the blog shows one.
    pub updated: Option<DateTime<FixedOffset>>,
    /// Article HTML.
    pub content_html: String,
    /// Article text.
    pub content_text: String,
    /// Fields that could not be extracted and why.
    pub gaps: Vec<Gap>,
    /// Categories and tags, in page order.
    pub tags: Vec<String>,
    /// The post's comment feed, when the feed or the page names one.
    pub comments_feed: Option<String>,
    /// How many comments the blog says the post has (feed `slash:comments` / `thr:total`, or a
    /// counter on the page), when it says.
    pub comments_declared: Option<u32>,
    /// The page says comments are closed.
    pub comments_closed: bool,
    /// When its comments are to be checked first (for a post not archived before).
    pub next_comment_check: Option<DateTime<Utc>>,
    /// Which extractor gave each field.
    pub extracted_by: Option<ExtractedBy>,
}

/// A comment of a post.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Comment {
    /// Stable key within the post (the page's comment id, `feed:<link>`, or a content hash).
    pub id: String,
    /// Author name.
    pub author: Option<String>,
    /// The author's website: the link the page puts on the author's name (absolute http(s)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author_url: Option<String>,
    /// Publication time, with the offset shown or the blog's.
    #[serde(serialize_with = "rfc3339::local")]
    pub published: Option<DateTime<FixedOffset>>,
    /// The date as shown.
    pub published_raw: Option<String>,
    /// Comment HTML.
    pub content_html: String,
    /// Comment text.
    pub content_text: String,
    /// `id` of the comment this one replies to.
    pub parent: Option<String>,
    /// Where it was read.
    #[serde(skip)]
    pub source: CommentSource,
    /// Order within the post (page number × 100,000 + position on the page).
    #[serde(skip)]
    pub position: i64,
}

/// A field of a post that could not be extracted, and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Gap {
    /// The missing field.
    pub field: GapField,
    /// What went wrong, for a person.
    pub reason: String,
}

/// Comments to write under one post, already reconciled with the archived ones by the crawl
/// (`crawl::page::reconcile_comments`): the store only stores.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommentWrite {
    /// The post's canonical URL.
    pub post_url: String,
    /// Keys of archived comments to remove (feed copies the page now shows).
    pub delete: Vec<String>,
    /// Comments to insert or update by key, in order. An update whose text differs from the
    /// archived text from the same source keeps the archived text as a version first.
    pub upsert: Vec<Comment>,
}

/// Everything one crawled page changes, written in one transaction.
#[derive(Debug, Clone)]
pub struct PageOutcome {
    /// The blog.
    pub blog_id: BlogId,
    /// The frontier URL that was processed.
    pub url: String,
    /// Its fetch-log lines: robots.txt and redirect hops, then the final request (empty when a
    /// stored response was reused).
    pub fetches: Vec<FetchRecord>,
    /// The response to keep (`None` on fetch errors or reuse).
    pub response: Option<Response>,
    /// The redirects that led to `response`, kept before it when it is kept
    /// ([`crate::fetch::Fetched::redirects`]).
    pub redirects: Vec<Response>,
    /// The page as rendered by Chromium, kept after `response` (so it is the URL's latest).
    pub rendered: Option<Response>,
    /// A stored response that was reused instead of fetching.
    pub reused_response: Option<ResponseId>,
    /// The post extracted from it.
    pub post: Option<NewPost>,
    /// Links to enqueue.
    pub links: Vec<Link>,
    /// L(u): links to posts on the page (kNN training value), when it was parsed.
    pub post_links: Option<u32>,
    /// New frontier state of `url` ([`PageState::Queued`] to retry after a 429/503).
    pub state: PageState,
    /// With [`PageState::Queued`]: not before this time.
    pub retry_at: Option<DateTime<Utc>>,
    /// Why the page failed or waits, for coverage reports.
    pub error: Option<String>,
    /// Comments found on the page (a comment page's comments go under its post).
    pub comments: Option<CommentWrite>,
    /// The blog answered 404/410 for this archived post, or redirected it to its home or a
    /// login page: mark it gone (it stays archived).
    pub gone: bool,
    /// A revisit found the post at another permalink of its blog (a permanent redirect): where
    /// it moved to. The post keeps its identity (`url`) and is found by both.
    pub moved_to: Option<String>,
    /// The page was a revisit of the archived post `url` (or a fetch of it for another reason):
    /// its next revisit is due then, and its last one is now.
    pub next_revisit: Option<DateTime<Utc>>,
    /// The page is a page of the blog beside its posts (About, Contact): archived as one.
    pub page: Option<NewPage>,
}

/// What [`super::Store::record_page`] changed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Written {
    /// What happened to the post, if the page had one.
    pub post: Option<PostWrite>,
    /// Comments not archived before.
    pub new_comments: u32,
    /// Archived comments whose text changed (previous text kept).
    pub edited_comments: u32,
    /// The post was newly marked gone.
    pub gone: bool,
    /// The post was newly found moved (or moved again).
    pub moved: bool,
    /// Links to post permalinks the frontier did not hold before.
    pub new_post_links: u32,
}

/// What writing a post did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PostWrite {
    /// First time archived.
    New,
    /// Same title and text as archived (metadata refreshed).
    Same,
    /// Title or text changed: the previous one was kept as a version; this is the new version
    /// number.
    Edited(u32),
}

/// An earlier text of a post, kept when the blog changed it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PostVersion {
    /// Version number (1 = first archived).
    pub version: u32,
    /// Title then.
    pub title: Option<String>,
    /// Article HTML then.
    pub content_html: String,
    /// Article text then.
    pub content_text: String,
    /// When that version was fetched.
    #[serde(serialize_with = "rfc3339::utc")]
    pub fetched_at: DateTime<Utc>,
    /// When a newer version replaced it.
    #[serde(serialize_with = "rfc3339::utc")]
    pub replaced_at: DateTime<Utc>,
}

/// A job of the work queue.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Job {
    /// Row id.
    pub id: i64,
    /// The blog.
    pub blog_id: BlogId,
    /// What the job does.
    pub kind: JobKind,
    /// Where it is.
    pub state: JobState,
    /// The worker holding or last holding the lease.
    pub owner: Option<String>,
    /// End of the current lease.
    pub lease_until: Option<DateTime<Utc>>,
    /// How many times a worker took it.
    pub attempts: u32,
    /// Last error.
    pub error: Option<String>,
    /// Summary of the finished job.
    pub outcome: Option<String>,
    /// A queued job is not taken before this time; `None`: at once.
    pub not_before: Option<DateTime<Utc>>,
    /// When a worker first took it.
    pub started_at: Option<DateTime<Utc>>,
    /// When it ended.
    pub finished_at: Option<DateTime<Utc>>,
}

/// How a job ended, for [`super::Store::finish_job`].
#[derive(Debug, Clone, Default)]
pub struct JobEnd {
    /// Summary for `archive status`.
    pub outcome: Option<String>,
    /// Set when the job failed.
    pub error: Option<String>,
    /// The blog's next jobs; one of a kind already open keeps its time.
    pub next: Vec<NextJob>,
}

/// A job to queue for a blog when another ends ([`JobEnd::next`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NextJob {
    /// Its kind.
    pub kind: JobKind,
    /// Not run before this.
    pub not_before: DateTime<Utc>,
}

/// A queued URL as the kNN frontier sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedUrl {
    /// The URL.
    pub url: String,
    /// Link depth from the seeds.
    pub depth: u32,
    /// Its priority (posts first, then the kNN estimate of L(u)).
    pub priority: f64,
    /// Number of training observations when the priority was computed (-1: never scored).
    pub scored_at: i64,
}

/// A queued URL's new priority (`Store::set_priorities`).
#[derive(Debug, Clone, PartialEq)]
pub struct Priority {
    /// The queued URL.
    pub url: String,
    /// Its priority (the kNN estimate of L(u)).
    pub priority: f64,
    /// Number of training observations the priority was computed at.
    pub scored_at: i64,
}

/// A post due for a comment check (`Store::due_comment_checks`).
#[derive(Debug, Clone, PartialEq)]
pub struct CommentCheck {
    /// The post's permalink.
    pub url: String,
    /// Its comment feed, when known.
    pub comments_feed: Option<String>,
    /// When it was published.
    pub published: Option<DateTime<FixedOffset>>,
    /// Comments archived so far.
    pub comments: u64,
}

/// A known post the archive does not hold, and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MissingPost {
    /// Its URL.
    pub url: String,
    /// Where the crawl is with it.
    pub state: PageState,
    /// Why it failed or waits, when known.
    pub error: Option<String>,
    /// When it was last tried.
    #[serde(serialize_with = "rfc3339::utc_opt")]
    pub last_attempt: Option<DateTime<Utc>>,
}

/// A post with fewer comments archived than the blog declares.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MissingComments {
    /// The post.
    pub url: String,
    /// Comments the blog declares (feed or page counter).
    pub declared: u64,
    /// Comments archived.
    pub archived: u64,
}

/// What the archive holds of a blog, counted: the figures every report of a blog shows (the
/// reader's lists, `archive status`), read without listing what is missing.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CoverageCounts {
    /// Post URLs known, from every source.
    pub posts_known: u64,
    /// Posts archived.
    pub posts_archived: u64,
    /// Archived posts the blog has deleted since (kept).
    pub posts_gone: u64,
    /// Comments the blog declares, over the posts that declare a count.
    pub comments_declared: u64,
    /// Comments archived.
    pub comments_archived: u64,
    /// The oldest archived post's date.
    #[serde(serialize_with = "rfc3339::local")]
    pub oldest_post: Option<DateTime<FixedOffset>>,
    /// The newest archived post's date.
    #[serde(serialize_with = "rfc3339::local")]
    pub newest_post: Option<DateTime<FixedOffset>>,
    /// When the blog was last verified complete: its last UpdateCrawl, else its NewCrawl.
    #[serde(serialize_with = "rfc3339::utc_opt")]
    pub verified_at: Option<DateTime<Utc>>,
}

/// What the archive holds of a blog against what is known to exist (`archive coverage`): the
/// counts, then by source and what is missing.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Coverage {
    /// The blog's home page.
    pub blog: String,
    /// The figures.
    #[serde(flatten)]
    pub counts: CoverageCounts,
    /// Post URLs known per source (a post found several ways counts in each).
    pub posts_known_by: std::collections::BTreeMap<Source, u64>,
    /// Known posts not archived: failed, blocked, refused, unread (a page shaped like a post
    /// that gave none, with nothing saying it is none), or not crawled yet.
    pub posts_missing: Vec<MissingPost>,
    /// Pages shaped like permalinks that the blog's own evidence says are no posts (listings,
    /// copies: [`PageState::NotPost`]), with why; not counted as known posts.
    pub not_posts: Vec<MissingPost>,
    /// Posts with fewer comments archived than declared.
    pub comments_missing: Vec<MissingComments>,
    /// The blog's pages beside its posts (About, Contact; issue 42), archived as pages, by
    /// address: never counted as posts.
    pub pages: Vec<String>,
    /// What revisits found (`archive coverage` fills it in; it needs the configured window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revisits: Option<super::RevisitFigures>,
}

impl Coverage {
    /// Posts known but not archived, plus comments declared but not archived.
    pub fn missing(&self) -> u64 {
        self.posts_missing.len() as u64
            + self
                .comments_missing
                .iter()
                .map(|m| m.declared.saturating_sub(m.archived))
                .sum::<u64>()
    }
}

/// Counts for summaries.
#[derive(Debug, Clone, Copy, Default)]
pub struct BlogCounts {
    /// Archived posts.
    pub posts: u64,
    /// Fetches logged.
    pub fetches: u64,
    /// Pages that failed (network error, HTTP ≥ 400, or given up after 429/503); a missing
    /// robots.txt or sitemap is not one.
    pub errors: u64,
    /// Frontier URLs still queued.
    pub queued: u64,
}
