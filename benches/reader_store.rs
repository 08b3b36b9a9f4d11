//! Fills an archive database with one blog of N posts (default 10,000), for
//! `benches/reader.sh` (how fast `archive serve` answers on a large blog). Not a timing itself.
//!
//! ```text
//! cargo bench --bench reader_store -- DB [N]     # N posts into DB (a new file)
//! ```
//!
//! Each post is written as a crawl writes it (`Store::record_page`: its page as a stored
//! response, the post, its comments, one transaction): 3–12 real paragraphs of the corpus (or
//! the fixture blogs), one of 12 authors, 2 of 40 tags, a date spread over 15 years (about 55
//! posts a month), 0–8 comments (the count declared on the page, as WordPress does), links to
//! the posts before and after it (the frontier holds every post, as after a crawl), every 50th
//! post edited once (a second version).

mod common;

use chrono::{Duration, FixedOffset, TimeZone, Utc};
use common::Rng;
use everblog::core::feed::FeedKind;
use everblog::fetch::Response;
use everblog::store::DatabaseSettings;
use everblog::store::{
    Comment, CommentSource, CommentWrite, Link, NewPost, PageOutcome, PageState, Source, Store,
};

const AUTHORS: [&str; 12] = [
    "Ada Quill",
    "Bram Okafor",
    "Chiara Neri",
    "Dara Byrne",
    "Emeka Obi",
    "Fen Li",
    "Gus Moreau",
    "Hana Sato",
    "Ines Duarte",
    "Jonas Berg",
    "Kai Nakamura",
    "Lea Roth",
];

fn main() -> anyhow::Result<()> {
    let (db, n) = common::new_archive_args("reader_store", 10_000)?;
    let paras = common::real_paragraphs();
    anyhow::ensure!(!paras.is_empty(), "no paragraphs to build posts from");
    let mut store = Store::open(&DatabaseSettings::at(&db))?;
    let home = "http://127.0.0.1:8010/";
    let blog = store.insert_blog(
        home,
        "http://127.0.0.1:8010/feed.xml",
        Some("A large garden"),
        FeedKind::Rss2,
        &[],
    )?;
    let mut rng = Rng(0x5151_7a7a_0101_2323);
    let offset = FixedOffset::east_opt(3600).unwrap();
    let first = offset.with_ymd_and_hms(2011, 1, 1, 9, 0, 0).unwrap();
    let fetched = Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0).unwrap();
    let (mut comments_total, mut bytes) = (0usize, 0usize);
    let url_of = |i: usize| format!("{home}{}/post-{i}.html", 2011 + i * 15 / n.max(1));
    for i in 0..n {
        let url = url_of(i);
        let published = first + Duration::minutes((i as i64) * 15 * 365 * 24 * 60 / n as i64);
        let mut html = String::new();
        let mut text = String::new();
        for _ in 0..3 + rng.next() % 10 {
            let p = &paras[rng.next() % paras.len()];
            html.push_str(&p.html);
            html.push('\n');
            text.push_str(&p.text);
            text.push(' ');
        }
        let title: String = text
            .split_whitespace()
            .take(6)
            .collect::<Vec<_>>()
            .join(" ");
        let tags = vec![
            format!("topic {}", rng.next() % 40),
            format!("topic {}", rng.next() % 40),
        ];
        let comments: Vec<Comment> = (0..rng.next() % 9)
            .map(|k| {
                let p = &paras[rng.next() % paras.len()];
                Comment {
                    id: format!("comment-{i}-{k}"),
                    author: Some(AUTHORS[(i + k + 3) % AUTHORS.len()].to_string()),
                    author_url: None,
                    published: Some(published + Duration::hours(k as i64 + 1)),
                    published_raw: None,
                    content_html: p.html.clone(),
                    content_text: p.text.clone(),
                    parent: (k > 0 && k % 3 == 0).then(|| format!("comment-{i}-{}", k - 1)),
                    source: CommentSource::Page,
                    position: k as i64,
                }
            })
            .collect();
        comments_total += comments.len();
        let page = format!("<html><head><title>{title}</title></head><body><article>{html}</article></body></html>");
        bytes += page.len();
        let versions = if i % 50 == 0 { 2 } else { 1 };
        for v in 0..versions {
            let body = if v == 0 {
                text.clone()
            } else {
                format!("{text} An update, a year on.")
            };
            let outcome = PageOutcome {
                blog_id: blog.id,
                url: url.clone(),
                fetches: Vec::new(),
                response: Some(Response {
                    url: url.clone(),
                    final_url: url.clone(),
                    status: 200,
                    headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
                    body: page.clone().into_bytes(),
                    fetched_at: fetched + Duration::seconds((i * 3 + v) as i64),
                }),
                redirects: Vec::new(),
                rendered: None,
                reused_response: None,
                post: Some(NewPost {
                    url: url.clone(),
                    title: Some(title.clone()),
                    authors: vec![AUTHORS[i % AUTHORS.len()].to_string()],
                    author_pages: vec![],
                    published: Some(published),
                    published_raw: None,
                    updated: None,
                    content_html: html.clone(),
                    content_text: body,
                    gaps: Vec::new(),
                    tags: tags.clone(),
                    comments_feed: None,
                    comments_declared: Some(comments.len() as u32),
                    comments_closed: false,
                    next_comment_check: None,
                    extracted_by: None,
                }),
                links: [i.wrapping_sub(1), i + 1]
                    .into_iter()
                    .filter(|&j| j < n)
                    .map(|j| Link {
                        url: url_of(j),
                        depth: 1,
                        source: Source::Link,
                        post: true,
                    })
                    .collect(),
                post_links: Some(2),
                state: PageState::Done,
                retry_at: None,
                error: None,
                comments: Some(CommentWrite {
                    post_url: url.clone(),
                    delete: Vec::new(),
                    upsert: comments.clone(),
                }),
                gone: false,
                moved_to: None,
                next_revisit: None,
                page: None,
            };
            store.record_page(&outcome)?;
        }
    }
    println!(
        "{n} posts, {comments_total} comments, {:.1} MB of pages, into {}",
        bytes as f64 / 1e6,
        db.display()
    );
    Ok(())
}
