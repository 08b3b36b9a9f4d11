//! Round trips of the posts (with comments, versions, media and coverage) and reading (listings,
//! full-text search, captures) concerns, each body written once (a macro:
//! `Store` answers from either back end) and run on SQLite (a real file) and on PostgreSQL (a
//! private cluster started by the test: `tests/common/pg_cluster.rs`); the PostgreSQL half is
//! skipped, saying why, where PostgreSQL is not installed.

use crate::common::pg_cluster::Cluster;
use everblog::core::authors::AuthorPage;
use everblog::core::feed::FeedKind;
use everblog::store::DatabaseSettings;
use everblog::store::Store;
/// Posts, comments, versions and media on one back end: one crawled page in one transaction,
/// an edit kept as a version, a comment edit kept, a gone mark, posts streamed in order.
macro_rules! posts_round_trip {
    ($backend:expr, $store:expr) => {{
        use chrono::{DateTime, Utc};
        use everblog::core::requisites::Kind;
        use everblog::fetch::{FetchRecord, Response};
        use everblog::store::{
            AuthorsAndTags, Comment, CommentSource, CommentWrite, Link, MediaState, NewMedia,
            NewPost, Observation, PageOutcome, PageState, PostWrite, Source,
        };
        let backend: &str = $backend;
        let mut s = $store;
        let blog = s
            .insert_blog(
                "http://blog.test/",
                "http://blog.test/feed.xml",
                None,
                FeedKind::Rss2,
                &[],
            )
            .unwrap()
            .id;
        let url = |p: &str| format!("http://blog.test/{p}");
        let when = |d: &str| DateTime::parse_from_rfc3339(d).unwrap();
        let post = |p: &str, text: &str, published: &str| NewPost {
            url: url(p),
            title: Some(format!("Title of {p}")),
            authors: vec!["Ada Quill".into()],
            author_pages: vec![AuthorPage {
                name: "Ada Quill".into(),
                url: url("author/ada/"),
            }],
            published: Some(when(published)),
            published_raw: Some(published.into()),
            updated: None,
            content_html: format!("<p>{text}</p>"),
            content_text: text.into(),
            gaps: vec![],
            tags: vec!["garden".into(), p.into()],
            comments_feed: None,
            comments_declared: Some(1),
            comments_closed: false,
            next_comment_check: Some(Utc::now() - chrono::Duration::hours(1)),
            extracted_by: None,
        };
        let comment = |key: &str, text: &str| Comment {
            id: key.into(),
            author: Some("Bram".into()),
            author_url: Some("https://bram.example/".into()),
            published: Some(when("2026-03-02T08:00:00+01:00")),
            published_raw: None,
            content_html: format!("<p>{text}</p>"),
            content_text: text.into(),
            parent: None,
            source: CommentSource::Page,
            position: 0,
        };
        let page = |p: &str, np: Option<NewPost>, comments: Option<CommentWrite>, secs: i64| {
            let at = chrono::DateTime::from_timestamp(1_790_000_000 + secs, 0).unwrap();
            PageOutcome {
                blog_id: blog,
                url: url(p),
                fetches: vec![FetchRecord {
                    url: url(p),
                    status: Some(200),
                    bytes: Some(10),
                    elapsed_ms: 3,
                    fetched_at: at,
                    error: None,
                }],
                response: Some(Response {
                    url: url(p),
                    final_url: url(p),
                    status: 200,
                    headers: vec![],
                    body: format!("<html>{p} {secs}</html>").into_bytes(),
                    fetched_at: at,
                }),
                redirects: vec![],
                rendered: None,
                reused_response: None,
                post: np,
                links: vec![Link {
                    url: url("p/next.html"),
                    depth: 2,
                    source: Source::Link,
                    post: true,
                }],
                post_links: Some(1),
                state: PageState::Done,
                retry_at: None,
                error: None,
                comments,
                gone: false,
                moved_to: None,
                next_revisit: None,
                page: None,
            }
        };
        s.enqueue(
            blog,
            &[Link {
                url: url("p/a.html"),
                depth: 1,
                source: Source::Feed,
                post: true,
            }],
        )
        .unwrap();
        let w = s
            .record_page(&page(
                "p/a.html",
                Some(post("p/a.html", "First text.", "2026-03-01T09:00:00+01:00")),
                Some(CommentWrite {
                    post_url: url("p/a.html"),
                    delete: vec![],
                    upsert: vec![comment("c1", "Nice.")],
                }),
                1,
            ))
            .unwrap();
        assert_eq!(
            (w.post, w.new_comments, w.new_post_links),
            (Some(PostWrite::New), 1, 1),
            "{backend}"
        );
        let w = s
            .record_page(&page(
                "p/b.html",
                Some(post("p/b.html", "Older.", "2025-01-01T09:00:00Z")),
                None,
                2,
            ))
            .unwrap();
        assert_eq!(w.post, Some(PostWrite::New), "{backend}");
        let w = s
            .record_page(&page(
                "p/a.html",
                Some(post(
                    "p/a.html",
                    "First text, edited.",
                    "2026-03-01T09:00:00+01:00",
                )),
                Some(CommentWrite {
                    post_url: url("p/a.html"),
                    delete: vec![],
                    upsert: vec![comment("c1", "Nice!")],
                }),
                3,
            ))
            .unwrap();
        assert_eq!(
            (w.post, w.edited_comments),
            (Some(PostWrite::Edited(2)), 1),
            "{backend}"
        );
        assert_eq!(
            s.page_state(blog, &url("p/a.html")).unwrap(),
            Some(PageState::Done),
            "{backend}"
        );
        assert_eq!(
            s.observations(blog).unwrap(),
            vec![Observation {
                url: url("p/a.html"),
                post_links: 1
            }],
            "{backend}"
        );

        let a = s.post(&url("p/a.html")).unwrap().expect("post a");
        assert_eq!(
            (a.version, a.content_text.as_str()),
            (2, "First text, edited."),
            "{backend}"
        );
        assert_eq!(
            a.published,
            Some(when("2026-03-01T09:00:00+01:00")),
            "{backend}: offset kept"
        );
        assert_eq!(a.comments.len(), 1, "{backend}");
        assert_eq!(a.comments[0].content_text, "Nice!", "{backend}");
        let ada = AuthorPage {
            name: "Ada Quill".into(),
            url: url("author/ada/"),
        };
        assert_eq!(
            a.author_pages,
            std::slice::from_ref(&ada),
            "{backend}: the author's page"
        );
        assert_eq!(
            s.author_pages(blog).unwrap(),
            [ada],
            "{backend}: kept once per author"
        );
        assert_eq!(
            a.comments[0].author_url.as_deref(),
            Some("https://bram.example/"),
            "{backend}: the commenter's website"
        );
        assert_eq!(
            s.post_versions(&url("p/a.html")).unwrap()[0].content_text,
            "First text.",
            "{backend}"
        );
        let earlier = s.comment_versions(&url("p/a.html")).unwrap();
        assert_eq!(
            earlier
                .iter()
                .map(|v| (v.id.as_str(), v.content_text.as_str()))
                .collect::<Vec<_>>(),
            vec![("c1", "Nice.")],
            "{backend}"
        );
        let mut order = Vec::new();
        let n = s
            .for_each_post(Some(blog), |p| {
                order.push(p.url);
                Ok(())
            })
            .unwrap();
        assert_eq!(
            (n, order),
            (2, vec![url("p/a.html"), url("p/b.html")]),
            "{backend}: newest first"
        );
        assert_eq!(s.posts(None).unwrap().len(), 2, "{backend}");
        assert_eq!(s.post_count(blog).unwrap(), 2, "{backend}");
        assert_eq!(
            s.authors_and_tags(blog).unwrap(),
            AuthorsAndTags {
                authors: vec!["Ada Quill".to_string()],
                tags: vec!["garden".to_string(), "p/a.html".into(), "p/b.html".into()]
            },
            "{backend}"
        );
        assert!(
            s.has_post(&url("p/b.html")).unwrap() && !s.has_post(&url("p/c.html")).unwrap(),
            "{backend}"
        );

        // Comment checks: both due; one checked and closed is no longer.
        let now: DateTime<Utc> = Utc::now();
        assert_eq!(
            s.due_comment_checks(blog, now, 10).unwrap().len(),
            2,
            "{backend}"
        );
        s.set_comment_check(&url("p/b.html"), now, None, true)
            .unwrap();
        let due = s.due_comment_checks(blog, now, 10).unwrap();
        assert_eq!(
            due.iter().map(|c| c.url.clone()).collect::<Vec<_>>(),
            vec![url("p/a.html")],
            "{backend}"
        );
        assert_eq!(due[0].comments, 1, "{backend}");

        // Media: recorded in page order, their bytes counted once.
        let stored = s
            .response_for(blog, &url("p/a.html"))
            .unwrap()
            .expect("stored");
        let rid = stored.id;
        assert_eq!(stored.status, 200, "{backend}");
        assert_eq!(
            s.response_body(rid).unwrap().as_deref(),
            Some(&b"<html>p/a.html 3</html>"[..]),
            "{backend}"
        );
        assert_eq!(
            s.media_pending(blog, 10, chrono::Utc::now()).unwrap().len(),
            2,
            "{backend}"
        );
        let media = |u: &str, state| NewMedia {
            url: url(u),
            kind: Kind::Image,
            response_id: (state == MediaState::Stored).then_some(rid),
            state,
            reason: (state != MediaState::Stored).then(|| "HTTP 404".into()),
        };
        s.set_post_media(
            &url("p/a.html"),
            &[
                media("z.png", MediaState::Failed),
                media("a.png", MediaState::Failed),
                media("z.png", MediaState::Stored),
            ],
        )
        .unwrap();
        let got = s.post_media(&url("p/a.html")).unwrap();
        assert_eq!(
            got.iter()
                .map(|m| (m.url.clone(), m.state))
                .collect::<Vec<_>>(),
            vec![
                (url("a.png"), MediaState::Failed),
                (url("z.png"), MediaState::Stored)
            ],
            "{backend}: page order; a URL listed twice keeps its last entry, in its place"
        );
        assert_eq!(s.media_bytes(blog).unwrap(), 23, "{backend}");
        assert_eq!(
            s.media_pending(blog, 10, chrono::Utc::now()).unwrap().len(),
            1,
            "{backend}"
        );

        // Gone: marked once, kept.
        let mut gone = page("p/b.html", None, None, 4);
        gone.gone = true;
        gone.response = None;
        assert!(s.record_page(&gone).unwrap().gone, "{backend}");
        assert!(!s.record_page(&gone).unwrap().gone, "{backend}: once");
        assert_eq!(
            s.post_urls(blog).unwrap(),
            vec![url("p/a.html")],
            "{backend}"
        );
        assert!(
            s.post(&url("p/b.html")).unwrap().unwrap().gone_at.is_some(),
            "{backend}"
        );

        // Coverage: p/a and p/next known from the frontier, p/b archived without it.
        let cov = s.coverage(blog).unwrap();
        let c = &cov.counts;
        assert_eq!(
            (
                c.posts_known,
                c.posts_archived,
                c.posts_gone,
                c.comments_declared,
                c.comments_archived
            ),
            (3, 2, 1, 1, 1),
            "{backend}"
        );
        assert_eq!(
            c.oldest_post,
            Some(when("2025-01-01T09:00:00Z")),
            "{backend}"
        );
        assert_eq!(
            c.newest_post,
            Some(when("2026-03-01T09:00:00+01:00")),
            "{backend}"
        );
        assert_eq!(
            cov.posts_known_by.into_iter().collect::<Vec<_>>(),
            vec![(Source::Feed, 1), (Source::Link, 1)],
            "{backend}"
        );
        assert_eq!(
            cov.posts_missing
                .iter()
                .map(|m| (m.url.clone(), m.state))
                .collect::<Vec<_>>(),
            vec![(url("p/next.html"), PageState::Queued)],
            "{backend}"
        );
        assert!(cov.comments_missing.is_empty(), "{backend}");
    }};
}

#[test]
fn posts_comments_versions_and_media_round_trip_the_same_on_both_back_ends() {
    let dir = tempfile::tempdir().unwrap();
    posts_round_trip!(
        "sqlite",
        Store::open(&DatabaseSettings::at(dir.path().join("posts.db"))).unwrap()
    );
    let Some(cluster) = Cluster::start() else {
        return;
    };
    posts_round_trip!(
        "postgres",
        Store::open(&DatabaseSettings::at(std::path::Path::new(
            &cluster.database("posts")
        )))
        .unwrap()
    );
}

/// The reader's side on one back end: five posts holding "lantern" (post 1 in its title) and
/// a comment by Bea on post 2, as `store::reading`'s own unit test lays them out; listings by
/// month, author and tag; captures for Memento.
macro_rules! reading_round_trip {
    ($backend:expr, $store:expr) => {{
        use chrono::DateTime;
        use everblog::fetch::Response;
        use everblog::store::{
            Comment, CommentSource, CommentWrite, Count, MatchedIn, NewPost, PageOutcome,
            PageState, PostFilter, PostPage, SearchOrder, SearchQuery,
        };
        let backend: &str = $backend;
        let mut s = $store;
        let blog = s
            .insert_blog(
                "http://b/",
                "http://b/feed",
                Some("Night Owls"),
                FeedKind::Rss2,
                &[],
            )
            .unwrap()
            .id;
        for n in 1..=5u32 {
            let url = format!("http://b/{n}");
            let at = DateTime::from_timestamp(1_790_000_000 + i64::from(n), 0).unwrap();
            let comments = (n == 2).then(|| CommentWrite {
                post_url: url.clone(),
                delete: vec![],
                upsert: vec![Comment {
                    id: "c1".into(),
                    author: Some("Bea".into()),
                    author_url: None,
                    published: None,
                    published_raw: None,
                    content_html: String::new(),
                    content_text: "my lantern too".into(),
                    parent: None,
                    source: CommentSource::Page,
                    position: 0,
                }],
            });
            s.record_page(&PageOutcome {
                blog_id: blog,
                url: url.clone(),
                fetches: vec![],
                response: Some(Response {
                    url: url.clone(),
                    final_url: url.clone(),
                    status: 200,
                    headers: vec![],
                    body: format!("page {n}").into_bytes(),
                    fetched_at: at,
                }),
                redirects: vec![],
                rendered: None,
                reused_response: None,
                post: Some(NewPost {
                    url: url.clone(),
                    title: Some(if n == 1 {
                        "Lantern".into()
                    } else {
                        format!("Post {n}")
                    }),
                    authors: if n == 4 {
                        vec!["Ann".into(), "Zoë Castellanos".into()]
                    } else {
                        vec!["Ann".into()]
                    },
                    author_pages: vec![],
                    published: Some(
                        DateTime::parse_from_rfc3339(&format!("2026-0{n}-01T00:00:00+00:00"))
                            .unwrap(),
                    ),
                    published_raw: None,
                    updated: None,
                    content_html: String::new(),
                    content_text:
                        "a long text about a lantern and many other words to weigh it down".into(),
                    gaps: vec![],
                    tags: if n == 4 {
                        vec!["even".into(), "Café Culture".into()]
                    } else if n % 2 == 0 {
                        vec!["even".into()]
                    } else {
                        vec![]
                    },
                    comments_feed: None,
                    comments_declared: None,
                    comments_closed: false,
                    next_comment_check: None,
                    extracted_by: None,
                }),
                links: vec![],
                post_links: None,
                state: PageState::Done,
                retry_at: None,
                error: None,
                comments,
                gone: false,
                moved_to: None,
                next_revisit: None,
                page: None,
            })
            .unwrap();
        }
        let urls = |q: &SearchQuery| -> Vec<(String, bool)> {
            s.search(q)
                .unwrap()
                .into_iter()
                .map(|h| (h.url, !h.post_matches))
                .collect()
        };
        let q = |rank_window| SearchQuery {
            text: "lantern".into(),
            limit: 10,
            rank_window,
            ..SearchQuery::default()
        };
        assert_eq!(s.search_matches("lantern").unwrap(), 6, "{backend}");
        assert_eq!(s.search_matches("lant*").unwrap(), 6, "{backend}: a prefix");
        // A word's other forms (stemming): "lanterns" and "weighing" find "lantern", "weigh".
        assert_eq!(
            s.search_matches("lanterns").unwrap(),
            6,
            "{backend}: stemmed"
        );
        assert_eq!(
            s.search_matches("weighing").unwrap(),
            5,
            "{backend}: stemmed"
        );
        // "about" is on PostgreSQL's English stop-word list; here it is searched as a word.
        assert_eq!(
            s.search_matches("about").unwrap(),
            5,
            "{backend}: no stop word list"
        );
        assert_eq!(
            s.search_matches("\"*) OR").unwrap(),
            0,
            "{backend}: no syntax"
        );
        // One hit per post, its matching comment under it.
        let all = urls(&q(100));
        assert_eq!(all.len(), 5, "{backend}");
        assert_eq!(
            all[0],
            ("http://b/1".into(), false),
            "{backend}: the title hit first"
        );
        let two = s.search(&q(100)).unwrap();
        let two = two.iter().find(|h| h.url == "http://b/2").unwrap();
        assert_eq!(two.comments.len(), 1, "{backend}");
        assert_eq!(two.comments[0].author.as_deref(), Some("Bea"), "{backend}");
        assert!(two.comments[0].marked.contains('\u{1}'), "{backend}");
        let windowed = urls(&q(2));
        let rest = ["3", "2", "1"].map(|n| (format!("http://b/{n}"), false));
        assert_eq!(windowed[2..], rest, "{backend}");
        let mut paged = Vec::new();
        for offset in 0..5 {
            paged.extend(urls(&SearchQuery {
                limit: 1,
                offset,
                ..q(2)
            }));
        }
        assert_eq!(
            paged, windowed,
            "{backend}: paging loses and repeats nothing"
        );
        let newest = urls(&SearchQuery {
            order: SearchOrder::Date,
            ..q(100)
        });
        let by_date = ["5", "4", "3", "2", "1"].map(|n| (format!("http://b/{n}"), false));
        assert_eq!(newest, by_date, "{backend}: newest first");
        let by_bea = SearchQuery {
            author: Some("BE".into()),
            ..q(2)
        };
        assert_eq!(
            urls(&by_bea),
            [("http://b/2".to_string(), false)],
            "{backend}: an author's prefix"
        );
        // Tags are searched, and each hit says where its words are; the blog's title lists
        // no post (issue 45); a tag filters; filters alone list.
        let words = |t: &str| {
            urls(&SearchQuery {
                text: t.into(),
                ..q(100)
            })
            .len()
        };
        assert_eq!(words("even"), 2, "{backend}: tags");
        assert_eq!(
            words("owls"),
            0,
            "{backend}: the blog's title lists no post"
        );
        let even = s
            .search(&SearchQuery {
                text: "even".into(),
                ..q(100)
            })
            .unwrap();
        assert!(
            even.iter().all(|h| h.matched == [MatchedIn::Tags]),
            "{backend}: {even:?}"
        );
        let lantern = s.search(&q(100)).unwrap();
        assert_eq!(
            lantern[0].matched,
            [MatchedIn::Title, MatchedIn::Text],
            "{backend}"
        );
        let two = lantern.iter().find(|h| h.url == "http://b/2").unwrap();
        assert_eq!(
            two.matched,
            [MatchedIn::Text, MatchedIn::Comments],
            "{backend}"
        );
        let listing = |tag: Option<&str>, author: Option<&str>| {
            urls(&SearchQuery {
                text: String::new(),
                tag: tag.map(Into::into),
                author: author.map(Into::into),
                ..q(100)
            })
        };
        assert_eq!(
            listing(Some("EVEN"), None),
            ["4", "2"].map(|n| (format!("http://b/{n}"), true)),
            "{backend}: a tag's posts, newest first"
        );
        assert_eq!(listing(None, Some("an")).len(), 5, "{backend}");
        // Case and diacritics folded as the words are (issue 45 item 2).
        let four = [("http://b/4".to_string(), true)];
        assert_eq!(
            listing(None, Some("zoe")),
            four,
            "{backend}: an author, folded"
        );
        assert_eq!(listing(None, Some("CASTEL")), four, "{backend}");
        assert_eq!(
            listing(Some("cafe culture"), None),
            four,
            "{backend}: a tag, folded"
        );
        assert_eq!(listing(None, None), [], "{backend}: nothing asked");
        let spring = SearchQuery {
            from: chrono::NaiveDate::from_ymd_opt(2026, 3, 1),
            to: chrono::NaiveDate::from_ymd_opt(2026, 4, 1),
            ..q(1)
        };
        assert_eq!(
            urls(&spring),
            [
                ("http://b/4".to_string(), false),
                ("http://b/3".to_string(), false)
            ],
            "{backend}"
        );
        let hit = &s.search(&q(100)).unwrap()[0];
        assert!(
            hit.marked.contains("\u{1}"),
            "{backend}: marked {:?}",
            hit.marked
        );

        // Listings.
        let PostPage { posts: page, total } =
            s.post_page(blog, &PostFilter::default(), 2, 1).unwrap();
        assert_eq!(total, 5, "{backend}");
        assert_eq!(
            page.iter().map(|p| p.url.as_str()).collect::<Vec<_>>(),
            vec!["http://b/4", "http://b/3"],
            "{backend}: newest first, paged"
        );
        // The posts next to one, in the same order.
        let n = s.neighbours(blog, "http://b/4").unwrap();
        assert_eq!(
            (
                n.newer.map(|p| p.url).as_deref(),
                n.older.map(|p| p.url).as_deref()
            ),
            (Some("http://b/5"), Some("http://b/3")),
            "{backend}"
        );
        let n = s.neighbours(blog, "http://b/5").unwrap();
        assert!(n.newer.is_none() && n.older.is_some(), "{backend}: {n:?}");
        // Whether a blog has any comment archived: this one has one, a new one none.
        assert!(s.has_comments(blog).unwrap(), "{backend}");
        let quiet = s
            .insert_blog("http://q/", "http://q/feed", None, FeedKind::Rss2, &[])
            .unwrap()
            .id;
        assert!(!s.has_comments(quiet).unwrap(), "{backend}");
        let march = PostFilter {
            month: Some((2026, 3)),
            ..PostFilter::default()
        };
        assert_eq!(
            s.post_page(blog, &march, 10, 0).unwrap().total,
            1,
            "{backend}"
        );
        let even = PostFilter {
            tag: Some("even".into()),
            ..PostFilter::default()
        };
        let PostPage {
            posts: even_posts,
            total: n,
        } = s.post_page(blog, &even, 10, 0).unwrap();
        assert_eq!((n, even_posts[1].comments), (2, 1), "{backend}");
        assert_eq!(
            s.post_months(blog).unwrap()[0],
            Count {
                value: "2026-05".to_string(),
                posts: 1
            },
            "{backend}"
        );
        assert_eq!(
            s.post_authors(blog).unwrap(),
            vec![
                Count {
                    value: "Ann".to_string(),
                    posts: 5
                },
                Count {
                    value: "Zoë Castellanos".to_string(),
                    posts: 1
                }
            ],
            "{backend}"
        );
        assert_eq!(
            s.post_tags(blog).unwrap(),
            vec![
                Count {
                    value: "even".to_string(),
                    posts: 2
                },
                Count {
                    value: "Café Culture".to_string(),
                    posts: 1
                }
            ],
            "{backend}"
        );

        // Captures.
        let caps = s.captures_of("http://b/3").unwrap();
        assert_eq!(caps.len(), 1, "{backend}");
        let near = s
            .capture_near(
                "http://b/3",
                DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
            )
            .unwrap()
            .unwrap();
        assert_eq!(near.id, caps[0].id, "{backend}");
        assert_eq!(
            s.capture_response(near.id).unwrap().map(|r| r.body),
            Some(b"page 3".to_vec()),
            "{backend}"
        );

        // One post, one identity (issue 42): post 3 fetched at an address that redirected
        // to it stays one post, and the address answers it.
        let mut again = s.post("http://b/3").unwrap().unwrap();
        let alias = "http://b/3-old";
        let known = s.coverage_counts(blog).unwrap().posts_known;
        s.enqueue(
            blog,
            &[everblog::store::Link {
                url: alias.into(),
                depth: 1,
                source: everblog::store::Source::Feed,
                post: true,
            }],
        )
        .unwrap();
        s.record_page(&PageOutcome {
            blog_id: blog,
            url: alias.into(),
            fetches: vec![],
            response: None,
            redirects: vec![],
            rendered: None,
            reused_response: None,
            post: Some(NewPost {
                url: again.url.clone(),
                title: again.title.take(),
                authors: again.authors.clone(),
                author_pages: vec![],
                published: again.published,
                published_raw: None,
                updated: None,
                content_html: again.content_html.clone(),
                content_text: again.content_text.clone(),
                gaps: vec![],
                tags: again.tags.clone(),
                comments_feed: None,
                comments_declared: None,
                comments_closed: false,
                next_comment_check: None,
                extracted_by: None,
            }),
            links: vec![],
            post_links: None,
            state: PageState::Done,
            retry_at: None,
            error: None,
            comments: None,
            gone: false,
            moved_to: None,
            next_revisit: None,
            page: None,
        })
        .unwrap();
        assert_eq!(
            s.post_url_of(alias).unwrap().as_deref(),
            Some("http://b/3"),
            "{backend}"
        );
        assert_eq!(
            s.post(alias).unwrap().unwrap().url,
            "http://b/3",
            "{backend}"
        );
        assert!(
            s.post_versions("http://b/3").unwrap().is_empty(),
            "{backend}: no edit, no earlier version"
        );
        assert_eq!(
            s.post_url_of("http://b/nowhere").unwrap(),
            None,
            "{backend}"
        );
        assert_eq!(
            s.coverage_counts(blog).unwrap().posts_known,
            known,
            "{backend}: posts, not addresses"
        );
    }};
}

#[test]
fn reading_and_search_answer_the_same_on_both_back_ends() {
    let dir = tempfile::tempdir().unwrap();
    reading_round_trip!(
        "sqlite",
        Store::open(&DatabaseSettings::at(dir.path().join("reading.db"))).unwrap()
    );
    let Some(cluster) = Cluster::start() else {
        return;
    };
    reading_round_trip!(
        "postgres",
        Store::open(&DatabaseSettings::at(std::path::Path::new(
            &cluster.database("reading")
        )))
        .unwrap()
    );
}
