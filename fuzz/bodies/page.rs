// The body of the `page` fuzz target: `fuzz_targets/page.rs` wraps it for libFuzzer (and
// says what it runs); `tests/fast/fuzz_seeds.rs` runs it on every seed of `corpus/page/`.

use chrono::{DateTime, FixedOffset, Utc};
use everblog::core::comments::{self, CommentRules};
use everblog::core::extract::{self, AuthorMetadata, ExtractContext, RuleSet};
use everblog::core::identify::{self, Found, Marks};
use everblog::core::page::Page;
use everblog::core::post_url::PostUrlPattern;
use everblog::core::rules::Rule;
use everblog::core::{fallback, head, listing, requisites};
use url::Url;

fn rule(x: &str) -> Rule {
    Rule::parse(x).expect("valid rule")
}

/// The target's body: one input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
    let Ok(html) = std::str::from_utf8(data) else {
        return;
    };
    let base = Url::parse("http://b.log/2024/05/a-post/").unwrap();
    let site = "b.log";
    let page = Page::parse(html);
    let pattern = PostUrlPattern::learn(&[
        Url::parse("http://b.log/2024/05/a-post/").unwrap(),
        Url::parse("http://b.log/2023/11/another/").unwrap(),
    ])
    .expect("a pattern");
    let links = everblog::crawl::links::followable(&page, &base, site);
    let post_links = links.iter().filter(|l| pattern.is_post(l)).count();

    let ctx = ExtractContext {
        offset: FixedOffset::east_opt(3600).unwrap(),
        fetched_at: DateTime::<Utc>::from_timestamp(1_750_000_000, 0).unwrap(),
    };
    let rule_sets = [
        RuleSet {
            article: rule("//*[@class='entry-content']"),
            title: Some(rule("//*[@class='entry-title']")),
            exclude: vec![rule("//*[@class='byline']")],
            author: vec![rule("//*[@class='author']")],
            author_metadata: AuthorMetadata::Confirms,
            declared_dates: true,
            date: Some((rule("//*[@class='published']"), Some("%B %d, %Y".into()))),
            people: vec!["Ada Quill".into()],
        },
        RuleSet {
            article: rule("//*[@id='content']"),
            title: Some(rule("/html/body/div/h1")),
            exclude: vec![],
            author: vec![],
            author_metadata: AuthorMetadata::SiteWide,
            declared_dates: false,
            date: Some((rule("//time"), None)),
            people: vec![],
        },
        RuleSet {
            article: rule("/html/body/div[2]/article[1]"),
            title: Some(rule("//article//h1")),
            exclude: vec![rule("//*[@id='comments']")],
            author: vec![rule("//a[@rel='author']")],
            author_metadata: AuthorMetadata::Fallback,
            declared_dates: true,
            date: None,
            people: vec![],
        },
    ];
    let mut found = Found::Nothing;
    for rules in &rule_sets {
        if let Some(x) = extract::extract(&page, rules, &ctx) {
            let _ = fallback::overrule(&page, x);
            found = Found::Rules;
        }
    }
    let article = fallback::article(&page);
    if found == Found::Nothing {
        if let Some(_x) = fallback::extract(&page, &ctx) {
            found = Found::Fallback;
        }
    } else {
        let _ = fallback::extract(&page, &ctx);
    }
    let _ = fallback::article_text(&page);

    let marks = Marks {
        post: vec![rule("//*[@class='post']"), rule("//*[@id='comments']")],
        listing: vec![rule("//*[@class='archive']")],
        og_article: true,
        ld_article: true,
        several_articles: true,
        canonical: true,
        learned: true,
    };
    for m in [&marks, &Marks::legacy()] {
        let _ = identify::judge(
            &page,
            &base,
            m,
            &rule_sets[0].article,
            found,
            post_links,
            |u| pattern.is_post(u),
        );
    }
    let _ = identify::canonical_elsewhere(&page, &base);

    let _ = listing::is_listing(&page, &base);
    let _ = listing::next_page(&page, &base);
    let first = rule_sets[0].article.apply_first(&page);
    let _ = listing::declared_comments(&page, first);
    let _ = listing::comments_closed(&page);
    let _ = listing::comment_feed(&page, &base);
    let _ = head::canonical_link(&page, &base);
    let _ = head::declares_post(&page);
    let _ = extract::page_published(&page, ctx.offset);
    let _ = extract::declared_tags(&page);
    let _ = everblog::core::bylines::page_authors(&page);

    let fixed = CommentRules {
        content: "comment-content".into(),
        author: Some("comment-author".into()),
        date: Some("comment-date".into()),
        score: 1.0,
    };
    let _ = comments::extract(&page, &fixed, ctx.offset, ctx.fetched_at);
    if let Some(a) = &article {
        if let Some(guessed) = comments::guess(&[(&page, a.root)]) {
            let _ = comments::extract(&page, &guessed, ctx.offset, ctx.fetched_at);
        }
    }
    let _ = requisites::of_page(page.html(), &base);
}
