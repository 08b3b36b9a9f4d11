//! Revisits (issue 30) in the store, the same on SQLite and PostgreSQL: posts planned, due
//! (planned for now or earlier, or beyond a shortened window), revisited, found moved (and
//! found by either URL), counted per blog.

use crate::common::pg_cluster::Cluster;
use chrono::{Duration as D, Utc};
use everblog::core::feed::FeedKind;
use everblog::store::{DatabaseSettings, NewPost, PageOutcome, PageState, Store};
use std::time::Duration;

fn post(url: &str, title: &str) -> NewPost {
    NewPost {
        url: url.into(),
        title: Some(title.into()),
        authors: vec!["Ann".into()],
        author_pages: vec![],
        published: Some(chrono::DateTime::parse_from_rfc3339("2024-03-01T10:00:00+01:00").unwrap()),
        published_raw: None,
        updated: None,
        content_html: "<p>Text</p>".into(),
        content_text: "Text".into(),
        gaps: vec![],
        tags: vec![],
        comments_feed: None,
        comments_declared: None,
        comments_closed: false,
        next_comment_check: None,
        extracted_by: None,
    }
}

fn page(blog: everblog::store::BlogId, p: NewPost) -> PageOutcome {
    PageOutcome {
        blog_id: blog,
        url: p.url.clone(),
        fetches: vec![],
        response: None,
        redirects: vec![],
        rendered: None,
        reused_response: None,
        post: Some(p),
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
    }
}

fn revisits_round_trip(backend: &str, mut s: Store) {
    let blog = s
        .insert_blog(
            "http://b.test/",
            "http://b.test/feed",
            None,
            FeedKind::Rss2,
            &[],
        )
        .unwrap()
        .id;
    let (a, b, c) = ("http://b.test/a/", "http://b.test/b/", "http://b.test/c/");
    for (url, title) in [(a, "Alpha"), (b, "Beta"), (c, "Gamma")] {
        s.record_page(&page(blog, post(url, title))).unwrap();
    }
    let now = Utc::now();
    let window = Duration::from_secs(30 * 86_400);
    assert_eq!(s.unplanned_revisits(blog).unwrap().len(), 3, "{backend}");
    s.plan_revisits(&[
        (a.into(), now - D::hours(1)),
        (b.into(), now + D::days(10)),
        (c.into(), now + D::days(40)),
    ])
    .unwrap();
    assert!(s.unplanned_revisits(blog).unwrap().is_empty(), "{backend}");
    let due = |s: &Store, within: Duration| -> Vec<String> {
        s.due_revisits(blog, now, within, 10)
            .unwrap()
            .into_iter()
            .map(|r| r.url)
            .collect()
    };
    // A is due; C was planned beyond the window set now (30 days): due too.
    assert_eq!(
        due(&s, window),
        vec![a.to_string(), c.to_string()],
        "{backend}"
    );
    // A one-day window: B is planned beyond it as well.
    assert_eq!(due(&s, Duration::from_secs(86_400)).len(), 3, "{backend}");
    // A revisit that changed nothing, one that found the post moved.
    s.revisited(a, now, now + D::days(20)).unwrap();
    let mut moved = page(blog, post(c, "Gamma"));
    moved.moved_to = Some("http://b.test/gamma/".into());
    moved.next_revisit = Some(now + D::days(25));
    let written = s.record_page(&moved).unwrap();
    assert!(written.moved, "{backend}");
    assert!(due(&s, window).is_empty(), "{backend}");
    // One post under both URLs.
    let by_new = s.archived_at("http://b.test/gamma/").unwrap().unwrap();
    assert_eq!(by_new.url, c, "{backend}");
    assert_eq!(by_new.fetch_url(), "http://b.test/gamma/", "{backend}");
    assert_eq!(
        s.post("http://b.test/gamma/").unwrap().unwrap().url,
        c,
        "{backend}"
    );
    assert!(s.has_post("http://b.test/gamma/").unwrap(), "{backend}");
    assert_eq!(s.posts_titled(blog, "Gamma").unwrap().len(), 1, "{backend}");
    // An edit, found by a revisit.
    let mut edited = post(b, "Beta, corrected");
    edited.content_text = "Text, corrected".into();
    s.record_page(&page(blog, edited)).unwrap();
    let f = s.revisit_figures(blog, now, window).unwrap();
    assert_eq!(
        (f.posts, f.edits, f.gone, f.moved),
        (3, 1, 0, 1),
        "{backend}: {f:?}"
    );
    assert_eq!(f.within_window, 3, "{backend}");
    assert!(f.oldest_fetch.is_some(), "{backend}");
}

#[test]
fn revisits_round_trip_the_same_on_both_back_ends() {
    let dir = tempfile::tempdir().unwrap();
    revisits_round_trip(
        "sqlite",
        Store::open(&DatabaseSettings::at(dir.path().join("revisits.db"))).unwrap(),
    );
    let Some(cluster) = Cluster::start() else {
        return;
    };
    revisits_round_trip(
        "postgres",
        Store::open(&DatabaseSettings::at(cluster.database("revisits"))).unwrap(),
    );
}
