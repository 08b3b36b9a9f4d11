// The body of the `search_query` fuzz target: `fuzz_targets/search_query.rs` wraps it for libFuzzer (and
// says what it runs); `tests/fast/fuzz_seeds.rs` runs it on every seed of `corpus/search_query/`.

use chrono::DateTime;
use everblog::core::feed::FeedKind;
use everblog::fetch::Response;
use everblog::serve::views::{snippet_html, SearchParams};
use everblog::store::{
    fts_query, Comment, CommentSource, CommentWrite, DatabaseSettings, NewPost, PageOutcome,
    PageState, Store,
};

const TEXTS: [(&str, &str, &str); 4] = [
    (
        "Lantern",
        "Ann",
        "a long text about a lantern and many other words to weigh it down",
    ),
    (
        "L'été à Paris",
        "Zoë Ó Briain",
        "l'été dernier, nous étions à Paris: café, crème brûlée",
    ),
    ("東京の夜", "山田", "東京の夜は長い。ʻOahu ŉ ⑴x ﬁsh Straße"),
    (
        "\"Quoted\" OR NOT",
        "AND",
        "NEAR(a b) col:term * ^ - + \"\" {x} [y] (z)",
    ),
];

fn archive() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&DatabaseSettings::at(dir.path().join("search.db"))).unwrap();
    let blog = s
        .insert_blog("http://b/", "http://b/feed", None, FeedKind::Rss2, &[])
        .unwrap()
        .id;
    for (n, (title, author, text)) in TEXTS.iter().enumerate() {
        let url = format!("http://b/{n}");
        let at = DateTime::from_timestamp(1_790_000_000 + n as i64, 0).unwrap();
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
                title: Some((*title).into()),
                authors: vec![(*author).into()],
                author_pages: vec![],
                published: Some(
                    DateTime::parse_from_rfc3339(&format!("2026-0{}-01T00:00:00+02:00", n + 1))
                        .unwrap(),
                ),
                published_raw: None,
                updated: None,
                content_html: String::new(),
                content_text: (*text).into(),
                gaps: vec![],
                tags: vec!["tag".into()],
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
            comments: Some(CommentWrite {
                post_url: url.clone(),
                delete: vec![],
                upsert: vec![Comment {
                    id: "c1".into(),
                    author: Some("Bea".into()),
                    author_url: None,
                    published: None,
                    published_raw: None,
                    content_html: String::new(),
                    content_text: format!("my {title} too"),
                    parent: None,
                    source: CommentSource::Page,
                    position: 0,
                }],
            }),
            gone: false,
            moved_to: None,
            next_revisit: None,
            page: None,
        })
        .unwrap();
    }
    (dir, s)
}

thread_local! {
    static ARCHIVE: (tempfile::TempDir, Store) = archive();
}

/// The target's body: one input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
    let mut p = SearchParams::default();
    for (k, v) in url::form_urlencoded::parse(data) {
        let v = v.into_owned();
        match &*k {
            "q" => p.q = Some(v),
            "blog" => p.blog = Some(v),
            "author" => p.author = Some(v),
            "from" => p.from = Some(v),
            "to" => p.to = Some(v),
            "page" => p.page = v.parse().ok(),
            _ => {}
        }
    }
    if let Some(q) = &p.q {
        if let Some(f) = fts_query(q) {
            assert!(!f.is_empty());
        }
    }
    let Ok(query) = p.query(20, 100) else {
        return;
    };
    ARCHIVE.with(|(_, store)| {
        match store.search(&query) {
            Ok(hits) => {
                for h in hits {
                    let _ = snippet_html(&h.marked);
                }
            }
            Err(e) => panic!("search {query:?} failed: {e:#}"),
        }
        if let Err(e) = store.search_matches(&query.text) {
            panic!("search_matches {:?} failed: {e:#}", query.text);
        }
    });
}
