//! Every post on real themes (issue 28): blogs built by real engines with the mess real themes
//! carry (`fixtures/themes/`: related-posts blocks inside the article, "More posts" query loops,
//! "Read more" sections of post cards, tables of contents, `og:type=website`, HTML5 `<header>`
//! and `<footer>` inside `<article>`, a feed-level author, two authors in one feed string,
//! canonical links to comment pages), served on 127.0.0.1: `archive add`, `archive crawl`,
//! `archive export` and `archive coverage` with the real binary and a real SQLite file. Each
//! blog is archived whole: every post, its article text (token F1 ≥ 0.9 on every post), exact
//! title, authors as separate names and published instant, no other page taken for a post, and
//! coverage complete, every page shaped like a post but refused listed with its reason.

use crate::common::*;

/// Archives the fixture blog `name` and checks every field of every post.
/// What a whole-blog archive of a fixture left: `archive coverage`'s report and the JSONL
/// export.
struct Archived {
    coverage: String,
    export: String,
}

fn archive_whole(name: &str) -> Archived {
    let blog = serve(name);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("archive.db");
    ok(&archive(&db, &["add", &blog.feed_url()]));
    let crawled = ok(&archive(&db, &["crawl"]));
    assert!(crawled.contains("crawl complete"), "{name}: {crawled}");
    let export = ok(&archive(&db, &["export", "--format", "jsonl"]));
    let s = score(&blog.truth, &export);
    let with_author_pages = export
        .lines()
        .filter(|l| l.contains("\"author_pages\":[{"))
        .count();
    let report = format!(
        "{name}: {}/{} posts, article {}, title {}, authors {}, published {}, {} not posts, {} duplicates, {with_author_pages} with their authors' pages\n{}\n{crawled}",
        s.found,
        s.posts,
        s.article_ok,
        s.title_ok,
        s.authors_ok,
        s.published_ok,
        s.false_positives,
        s.duplicates,
        s.failures.join("\n")
    );
    eprintln!("{report}");
    assert_eq!(s.found, s.posts, "{report}");
    assert_eq!(s.article_ok, s.posts, "{report}");
    assert_eq!(s.title_ok, s.posts, "{report}");
    assert_eq!(s.authors_ok, s.posts, "{report}");
    assert_eq!(s.published_ok, s.posts, "{report}");
    assert_eq!(s.false_positives, 0, "{report}");
    assert_eq!(s.duplicates, 0, "{report}");
    let coverage = archive(&db, &["coverage"]);
    let text = String::from_utf8_lossy(&coverage.stdout).into_owned();
    assert!(
        coverage.status.success(),
        "{name}: coverage reports something missing:\n{text}{}",
        String::from_utf8_lossy(&coverage.stderr)
    );
    Archived {
        coverage: text,
        export,
    }
}

/// WordPress 6.1 on the block theme Twenty Twenty-Three, its single template customised with a
/// "More posts" query loop (the default themes' pattern since 6.4), Jetpack's related-posts
/// markup inside the post content, comments newest first (the canonical link of every commented
/// post names a comment page), evening posts at −05:00/−06:00.
#[test]
fn wordpress_block_theme_more_posts_related_posts_newest_comments_first() {
    archive_whole("wordpress-blocks");
}

/// Pelican's bundled `simple` theme: a bare `<article>` whose `<header>` holds the title and
/// whose `<footer>` holds "Published … By … Category … Tags …", the body between them; a
/// full-content Atom feed; one-sentence posts.
#[test]
fn html5_article_with_header_and_footer_inside() {
    archive_whole("html5-article");
}

/// Hexo with the Fluid theme: the Atom feed names only the site's owner, at feed level, for
/// every entry; each post page names its real author.
#[test]
fn feed_level_author_is_a_weak_default() {
    archive_whole("feed-author");
}

/// Jekyll with minima and jekyll-feed: entries name two authors in one string ("A and B",
/// "A, B", "A & B").
#[test]
fn two_authors_in_one_feed_string() {
    archive_whole("two-authors");
}

/// Hugo with the Doks theme (npm): a table of contents before the body (twice: sidebar and
/// inline), a "Related posts" section of `<article>` cards under every post, Hugo's built-in
/// RSS of summaries only.
#[test]
fn hugo_table_of_contents_related_cards_summary_feed() {
    archive_whole("hugo-toc");
}

/// Material for MkDocs' blog with the social plugin: `og:type=website` on every post, the
/// site's description as every post's, a table of contents sidebar, excerpts in the feed.
#[test]
fn og_type_website_on_posts() {
    archive_whole("mkdocs-ogwebsite");
}

/// Ghost 5 with Casper: a "read more" aside of three post cards under every post, after a
/// sign-up box; the feed names only a post's first author; post pages show the local day only.
#[test]
fn ghost_casper() {
    archive_whole("ghost-casper");
}

/// Ghost 5 with Source, its current default theme: a "Read more" section of four `<article>`
/// cards under every post, outside any `<aside>`, and posts of 8 to 126 words.
#[test]
fn ghost_source_short_posts_above_read_more_cards() {
    archive_whole("ghost-source");
}

/// Docusaurus 3 with its classic theme (issue 42): author cards (avatar, name, job title, social
/// links) with up to three authors a post, an inline author whose job title holds a comma,
/// permalinks written without the trailing slash their host redirects to (`/blog/x` → 301
/// `/blog/x/`), pages beside the posts, two posts at date-shaped paths.
#[test]
fn docusaurus_author_cards_and_trailing_slash_redirects() {
    let Archived { coverage, export } = archive_whole("docusaurus");
    // Its pages are archived as pages (issue 42), each once, whichever address was fetched.
    // The contact page's two short lines are too little text for the generic extractor.
    let line = coverage
        .lines()
        .find(|l| l.trim_start().starts_with("pages "))
        .unwrap_or_else(|| panic!("no pages line:\n{coverage}"));
    let truth = fixture_dir("docusaurus").join("truth.json");
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(truth).unwrap()).unwrap();
    let mut want: Vec<String> = truth["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap().to_string())
        .filter(|p| p != "/contact/")
        .collect();
    let (_, listed) = line.split_once(": ").expect("the pages listed");
    let mut got: Vec<String> = listed
        .split(", ")
        .map(|u| url::Url::parse(u).unwrap().path().to_string())
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "{line}");
    // Each author's page on the blog is kept with the post (issue 42): the card's name links
    // it, the avatar and the social links do not name it.
    let truth_posts = truth["posts"].as_array().unwrap();
    let mut checked = 0;
    for line in export.lines() {
        let post: serde_json::Value = serde_json::from_str(line).unwrap();
        let path = url::Url::parse(post["url"].as_str().unwrap())
            .unwrap()
            .path()
            .to_string();
        let Some(t) = truth_posts.iter().find(|t| t["path"] == path.as_str()) else {
            continue;
        };
        let want: Vec<(String, String)> = t["authors"]
            .as_array()
            .unwrap()
            .iter()
            .zip(t["author_urls"].as_array().unwrap())
            .filter(|(_, u)| u.is_string())
            .map(|(a, u)| (a.as_str().unwrap().into(), u.as_str().unwrap().into()))
            .collect();
        let got: Vec<(String, String)> = post["author_pages"]
            .as_array()
            .map(|a| a.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|p| {
                let u = url::Url::parse(p["url"].as_str().unwrap()).unwrap();
                (p["name"].as_str().unwrap().into(), u.path().to_string())
            })
            .collect();
        assert_eq!(got, want, "{path}: author pages");
        checked += 1;
    }
    assert_eq!(
        checked,
        truth_posts.len(),
        "every post's author pages checked"
    );
}

/// Hugo with Doks, its author travelling (issue 42): posts dated in seven offsets, each page
/// showing the local day alone beside an exact `article:published_time` in the post's own
/// offset, and a hidden `<time datetime="1970-…">` on every page.
#[test]
fn hugo_posts_dated_in_their_own_offsets() {
    archive_whole("hugo-zones");
}

/// Pelican's `simple` theme with Pelican's default flat permalinks (`/<slug>.html`, as are its
/// listing pages `/index2.html` and `/archives.html`), the footer ("Published … By … Category …
/// Tags") inside a bare `<article>`, a third of the posts as short as the footer (issue 42).
#[test]
fn pelican_flat_permalinks_and_an_unclassed_article_footer() {
    archive_whole("pelican-footer");
}
