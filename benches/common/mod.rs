//! Shared by the benchmarks: the BlogForever corpus (`../shared/corpora/blogforever/`), the
//! engine-generated fixture blogs (`fixtures/sites/`), feed → page mapping, the whole learning
//! pipeline, and a generator of synthetic-but-realistic post pages of a chosen size.
//!
//! Synthetic pages are built from real post paragraphs (the quantumdiaries.org posts of the
//! corpus, or the fixture blogs' posts when the corpus is absent) laid out in a WordPress-like
//! template: header and navigation, the post (title, byline, `<div class="entry">` body, tags),
//! a comment thread and a sidebar of links. Article, comments and sidebar all grow with the
//! requested size (≈ 55 %, 25 % and 15 % of the page), so a bigger page is a longer post with
//! more comments and a longer sidebar, not only a longer body.
#![allow(dead_code)]

/// The allocator the `archive` binary ships with (src/main.rs), so the figures are its figures.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use everblog::core::feed;
use everblog::core::feed::Target;
use everblog::core::learn::{learn, Sample};
use everblog::core::page::Page;
use everblog::core::rules::LearnedRule;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Article rule of the synthetic template (a class rule: fast path).
pub const SYN_ARTICLE: &str = "//*[@class='entry']";
/// Title rule of the synthetic template.
pub const SYN_TITLE: &str = "//*[@class='post-title']";

/// The arguments of a benchmark that fills a new archive: `DB [N]` (after cargo's `--bench`),
/// N defaulting to `default_n`. Fails, with the usage of `bench`, without a DB or when it
/// already exists.
pub fn new_archive_args(bench: &str, default_n: usize) -> anyhow::Result<(PathBuf, usize)> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(db) = args.first().map(PathBuf::from) else {
        anyhow::bail!("usage: cargo bench --bench {bench} -- DB [N]");
    };
    let n: usize = args.get(1).map_or(Ok(default_n), |a| a.parse())?;
    anyhow::ensure!(
        !db.exists(),
        "{} exists: give a new file, the benchmark fills an empty archive",
        db.display()
    );
    Ok((db, n))
}

/// The crate root.
pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/corpora/blogforever/<host>`, or `None` after saying why on stderr.
pub fn corpus_host(host: &str) -> Option<PathBuf> {
    let p = manifest_dir()
        .join("../shared/corpora/blogforever")
        .join(host);
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!(
            "skipping the corpus benchmarks: {} is absent (it ships with the team's shared/ folder)",
            p.display()
        );
        None
    }
}

/// Every non-empty file of a host folder keyed by URL path without slashes at either end; pages
/// with a `<link rel=canonical>` are also keyed by their canonical path (as tests/corpus_rules.rs).
pub fn pages_by_path(host_dir: &Path) -> HashMap<String, PathBuf> {
    let mut out = HashMap::new();
    let mut stack = vec![host_dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if e.metadata().map(|m| m.len()).unwrap_or(0) == 0 {
                continue;
            }
            let rel = p
                .strip_prefix(host_dir)
                .unwrap()
                .to_string_lossy()
                .trim_matches('/')
                .to_string();
            if let Ok(html) = std::fs::read_to_string(&p) {
                if let Some(i) = html
                    .find("rel=\"canonical\" href=\"")
                    .or_else(|| html.find("rel='canonical' href='"))
                {
                    let rest = &html[i + 23..];
                    let href = &rest[..rest.find(['"', '\'']).unwrap_or(0)];
                    if let Ok(u) = url::Url::parse(href) {
                        out.entry(u.path().trim_matches('/').to_string())
                            .or_insert(p.clone());
                    }
                }
            }
            out.insert(rel, p);
        }
    }
    out
}

/// A blog's feed and the HTML of its entries' pages, read into memory (disk I/O is not timed).
pub struct FeedBlog {
    /// Name for reports.
    pub name: String,
    /// Raw feed bytes.
    pub feed: Vec<u8>,
    /// Feed URL (entry URLs resolve against it).
    pub feed_url: String,
    /// Entry URL → page HTML, for the entries whose page is on disk.
    pub pages: HashMap<String, String>,
}

impl FeedBlog {
    /// Total bytes of the entry pages.
    pub fn page_bytes(&self) -> usize {
        self.pages.values().map(String::len).sum()
    }
}

fn read_lossy(p: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned()
}

/// A corpus blog: `<host>/<feed_file>` and the post pages its entries point to.
pub fn corpus_blog(host: &str, feed_file: &str) -> Option<FeedBlog> {
    let dir = corpus_host(host)?;
    let feed_bytes = std::fs::read(dir.join(feed_file)).ok()?;
    let feed_url = format!("http://{host}/{feed_file}");
    let f = feed::parse(&feed_bytes, &feed_url).ok()?;
    let files = pages_by_path(&dir);
    let mut pages = HashMap::new();
    for e in &f.entries {
        let path = url::Url::parse(&e.url)
            .ok()?
            .path()
            .trim_matches('/')
            .to_string();
        if let Some(file) = files.get(&path) {
            pages.insert(e.url.clone(), read_lossy(file));
        }
    }
    Some(FeedBlog {
        name: host.to_string(),
        feed: feed_bytes,
        feed_url,
        pages,
    })
}

/// A fixture site's file for a URL path (`/a/b/` → `site/a/b/index.html`).
pub fn fixture_file(site_dir: &Path, url_path: &str) -> PathBuf {
    let rel = url_path.trim_start_matches('/');
    let mut p = site_dir.join("site").join(rel);
    if rel.is_empty() || rel.ends_with('/') {
        p = p.join("index.html");
    }
    p
}

/// A fixture blog (`fixtures/sites/<engine>`): its `truth.json`, its feed, its entries' pages.
pub fn fixture_blog(site_dir: &Path) -> (serde_json::Value, FeedBlog) {
    let truth: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site_dir.join("truth.json")).unwrap()).unwrap();
    let base = truth["base_url"].as_str().unwrap().trim_end_matches('/');
    let feed_path = truth["feed_path"].as_str().unwrap();
    let feed_bytes = std::fs::read(fixture_file(site_dir, feed_path)).unwrap();
    let feed_url = format!("{base}{feed_path}");
    let f = feed::parse(&feed_bytes, &feed_url).unwrap();
    let mut pages = HashMap::new();
    for e in &f.entries {
        let u = url::Url::parse(&e.url).unwrap();
        let file = fixture_file(site_dir, u.path());
        if file.is_file() {
            pages.insert(e.url.clone(), read_lossy(&file));
        }
    }
    let name = site_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (
        truth,
        FeedBlog {
            name,
            feed: feed_bytes,
            feed_url,
            pages,
        },
    )
}

/// The whole learning pipeline, as a crawl runs it: parse the feed, derive the targets, parse
/// every entry's page, learn.
pub fn learn_blog(blog: &FeedBlog) -> Vec<LearnedRule> {
    let f = feed::parse(&blog.feed, &blog.feed_url).expect("feed parses");
    let targets = feed::targets(&f.entries);
    let mut pages = Vec::new();
    for (entry, t) in f.entries.iter().zip(&targets) {
        if let Some(html) = blog.pages.get(&entry.url) {
            pages.push((Page::parse(html), t.clone()));
        }
    }
    let samples: Vec<Sample> = pages
        .iter()
        .map(|(p, t)| Sample {
            page: p,
            title: t.title.as_deref().map(|s| Target::new(s, false)),
            article: t.article.as_deref().map(|s| Target::new(s, t.summary)),
        })
        .collect();
    learn(&samples)
}

/// Training data prepared ahead (pages parsed, targets built): what `learn` alone consumes.
pub struct Prepared {
    /// Parsed pages.
    pub pages: Vec<Page>,
    /// (title, article) targets, one per page.
    pub targets: Vec<(Option<Target>, Option<Target>)>,
}

impl Prepared {
    /// Borrowed samples for `learn`.
    pub fn samples(&self) -> Vec<Sample<'_>> {
        self.pages
            .iter()
            .zip(&self.targets)
            .map(|(p, (t, a))| Sample {
                page: p,
                title: t.clone(),
                article: a.clone(),
            })
            .collect()
    }
}

/// Feed parsed, targets derived and pages parsed, outside the timed region.
pub fn prepare_blog(blog: &FeedBlog) -> Prepared {
    let f = feed::parse(&blog.feed, &blog.feed_url).expect("feed parses");
    let targets = feed::targets(&f.entries);
    let mut out = Prepared {
        pages: Vec::new(),
        targets: Vec::new(),
    };
    for (entry, t) in f.entries.iter().zip(&targets) {
        if let Some(html) = blog.pages.get(&entry.url) {
            out.pages.push(Page::parse(html));
            out.targets.push((
                t.title.as_deref().map(|s| Target::new(s, false)),
                t.article.as_deref().map(|s| Target::new(s, t.summary)),
            ));
        }
    }
    out
}

/// Synthetic pages with their feed-like targets (full content, not a summary).
pub fn prepare_synthetic(pages: &[Synthetic]) -> Prepared {
    Prepared {
        pages: pages.iter().map(|s| Page::parse(&s.html)).collect(),
        targets: pages
            .iter()
            .map(|s| {
                (
                    Some(Target::new(&s.title, false)),
                    Some(Target::new(&feed::html_to_text(&s.article_html), false)),
                )
            })
            .collect(),
    }
}

/// The learned rule of a field, if any.
pub fn rule_of(rules: &[LearnedRule], field: everblog::core::rules::Field) -> Option<&str> {
    rules
        .iter()
        .find(|r| r.field == field)
        .map(|r| r.xpath.as_str())
}

// ---------------------------------------------------------------------------------------------
// Synthetic pages

/// A real paragraph: its HTML (`<p>…</p>`) and its text.
#[derive(Clone)]
pub struct Para {
    /// Outer HTML.
    pub html: String,
    /// Visible text.
    pub text: String,
}

/// One synthetic post page.
pub struct Synthetic {
    /// The whole page.
    pub html: String,
    /// Post title (what a feed entry's `<title>` would say).
    pub title: String,
    /// Inner HTML of the article element (what a full-content feed entry would carry).
    pub article_html: String,
}

/// Real post paragraphs (≥ 60 characters of text): from the quantumdiaries.org posts of the
/// corpus when present (inside their `<div class="entry">`), else from the fixture blogs' posts.
pub fn real_paragraphs() -> Vec<Para> {
    let mut htmls: Vec<String> = Vec::new();
    if let Some(b) = corpus_blog("www.quantumdiaries.org", "feed") {
        let mut urls: Vec<&String> = b.pages.keys().collect();
        urls.sort();
        htmls.extend(urls.into_iter().map(|u| b.pages[u].clone()));
    } else {
        for engine in ["pelican", "hexo", "nikola"] {
            let dir = manifest_dir().join("fixtures/sites").join(engine);
            let truth: serde_json::Value =
                serde_json::from_slice(&std::fs::read(dir.join("truth.json")).unwrap()).unwrap();
            for p in truth["posts"].as_array().unwrap() {
                let f = fixture_file(&dir, p["path"].as_str().unwrap());
                htmls.push(read_lossy(&f));
            }
        }
    }
    let mut out = Vec::new();
    for html in &htmls {
        let page = Page::parse(html);
        let entry = page.by_class("entry").first().copied();
        for (i, e) in page.elements.iter().enumerate() {
            let i = i as u32;
            if e.name != "p" || entry.is_some_and(|a| !page.contains(a, i)) {
                continue;
            }
            let text = page.text_of(i);
            if text.chars().count() >= 60 {
                out.push(Para {
                    html: page.element_ref(i).html(),
                    text,
                });
            }
        }
    }
    assert!(
        !out.is_empty(),
        "no paragraph found to build synthetic pages"
    );
    out
}

/// Small deterministic PRNG (xorshift), so every run builds the same data.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// The next number, of 53 random bits.
    pub fn next(&mut self) -> usize {
        (self.next_u64() >> 11) as usize
    }
}

fn words(text: &str, n: usize) -> String {
    text.split_whitespace()
        .filter(|w| w.chars().all(char::is_alphabetic))
        .take(n)
        .collect::<Vec<_>>()
        .join(" ")
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

const NAMES: &[&str] = &[
    "Seth Zenz",
    "Flip Tanedo",
    "Aidan Randle-Conde",
    "Ken Bloom",
    "Pauline Gagnon",
    "Kyle Cranmer",
    "Anna Phan",
    "Adam Davis",
    "Michael Schmitt",
    "Jim Rohlf",
];

/// `n` synthetic post pages of about `size` bytes each (within a few percent), page `i` built
/// from a different run of the real paragraphs.
pub fn synthetic_pages(paras: &[Para], size: usize, n: usize) -> Vec<Synthetic> {
    (0..n).map(|i| synthetic_page(paras, size, i)).collect()
}

/// One synthetic page of about `size` bytes.
pub fn synthetic_page(paras: &[Para], size: usize, seed: usize) -> Synthetic {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ ((seed as u64 + 1) * 0x1000_0000_01B3));
    let pick = |rng: &mut Rng| &paras[rng.next() % paras.len()];
    let title = {
        let w = words(&pick(&mut rng).text, 7);
        let mut c = w.chars();
        match c.next() {
            Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
            None => "Untitled".into(),
        }
    };
    let author = NAMES[seed % NAMES.len()];

    // The article: real paragraphs, now and then a heading, a quote or a list.
    let mut article = String::new();
    let mut k = 0;
    while article.len() < size * 55 / 100 {
        let p = pick(&mut rng);
        match k % 9 {
            4 => article.push_str(&format!("<h3>{}</h3>\n", escape(&words(&p.text, 5)))),
            7 => article.push_str(&format!("<blockquote>{}</blockquote>\n", p.html)),
            8 => {
                article.push_str("<ul>");
                for _ in 0..4 {
                    let q = pick(&mut rng);
                    article.push_str(&format!("<li>{}</li>", escape(&words(&q.text, 9))));
                }
                article.push_str("</ul>\n");
            }
            _ => {}
        }
        article.push_str(&p.html);
        article.push('\n');
        k += 1;
    }

    // The comment thread.
    let mut comments = String::new();
    let mut c = 0;
    while comments.len() < size * 25 / 100 {
        let p = pick(&mut rng);
        let body: String = p.text.chars().take(200 + rng.next() % 400).collect();
        comments.push_str(&format!(
            "<li class=\"comment even thread-even depth-1\" id=\"comment-{c}{seed}\">\
             <div class=\"comment-author vcard\"><img class=\"avatar\" src=\"/avatar/{c}.png\" alt=\"\" width=\"32\" height=\"32\"/>\
             <cite class=\"fn\"><a href=\"http://example.org/~{c}\" rel=\"external nofollow\">{}</a></cite> <span class=\"says\">says:</span></div>\
             <div class=\"comment-meta commentmetadata\"><a href=\"#comment-{c}{seed}\">August {}, 2013 at {}:{:02} pm</a></div>\
             <p>{}</p><div class=\"reply\"><a class=\"comment-reply-link\" href=\"?replytocom={c}#respond\">Reply</a></div></li>\n",
            NAMES[(seed + c + 3) % NAMES.len()],
            1 + c % 28,
            1 + c % 12,
            c % 60,
            escape(&body),
        ));
        c += 1;
    }

    // The sidebar: recent posts, archives, blogroll.
    let mut sidebar = String::new();
    let mut s = 0;
    while sidebar.len() < size * 15 / 100 {
        if s % 25 == 0 {
            sidebar.push_str(&format!(
                "</ul></li><li class=\"widget\"><h2 class=\"widgettitle\">{}</h2><ul>",
                ["Recent Posts", "Archives", "Blogroll", "Categories"][(s / 25) % 4]
            ));
        }
        let p = pick(&mut rng);
        sidebar.push_str(&format!(
            "<li>2013.{:02}.{:02} | <a href=\"/2013/{:02}/{:02}/{}/\">{}</a></li>",
            1 + s % 12,
            1 + s % 28,
            1 + s % 12,
            1 + s % 28,
            words(&p.text, 4).to_lowercase().replace(' ', "-"),
            escape(&words(&p.text, 6)),
        ));
        s += 1;
    }

    let html = format!(
        r#"<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" dir="ltr" lang="en-US">
<head profile="http://gmpg.org/xfn/11">
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
<title>{title_e} | Synthetic Diaries</title>
<link rel="stylesheet" href="/wp-content/themes/diaries/style.css" type="text/css" media="screen" />
<link rel="alternate" type="application/rss+xml" title="Synthetic Diaries RSS Feed" href="/feed/" />
<script type="text/javascript">var _gaq = _gaq || []; _gaq.push(['_setAccount', 'UA-0000000-1']); _gaq.push(['_trackPageview']);</script>
<style type="text/css">.recentcomments a{{display:inline !important;padding:0 !important;margin:0 !important;}}</style>
</head>
<body class="single single-post">
<div id="page">
<div id="header"><div id="headerimg"><h1><a href="/">Synthetic Diaries</a></h1><div class="description">Thoughts on work and life from particle physicists from around the world.</div></div>
<ul class="menu"><li><a href="/">Home</a></li><li><a href="/about/">About</a></li><li><a href="/bloggers/">Bloggers</a></li><li><a href="/archives/">Archives</a></li><li><a href="/contact/">Contact</a></li></ul></div>
<div id="content" class="narrowcolumn"><div id="content-body">
<div class="navigation"><div class="alignleft">&laquo; <a href="/2013/08/06/previous/" rel="prev">Previous post</a></div><div class="alignright"><a href="/2013/08/08/next/" rel="next">Next post</a> &raquo;</div></div>
<div class="post-{seed}0 post type-post status-publish hentry" id="post-{seed}0">
<h2 class="author_bio">{author} | USLHC | USA</h2>
<h3 class="post-title">{title_e}</h3>
<div class="entry">
{article}</div>
<p class="postmetadata">Posted in <a href="/category/latest-posts/" rel="category tag">Latest Posts</a> | Tags: <a href="/tag/physics/" rel="tag">physics</a></p>
</div>
<div id="comments"><h3 id="comments-title">{c} Responses to &#8220;{title_e}&#8221;</h3>
<ol class="commentlist">
{comments}</ol></div>
<div id="respond"><h3>Leave a Reply</h3><form action="/wp-comments-post.php" method="post" id="commentform"><p><input type="text" name="author" id="author" value="" size="22" /><label for="author">Name (required)</label></p><p><textarea name="comment" id="comment" cols="58" rows="10"></textarea></p><p><input name="submit" type="submit" id="submit" value="Submit Comment" /></p></form></div>
</div></div>
<div id="sidebar"><ul><li><ul>{sidebar}</ul></li></ul></div>
<div id="footer"><p>Synthetic Diaries is proudly powered by WordPress. <a href="/feed/">Entries (RSS)</a> and <a href="/comments/feed/">Comments (RSS)</a>.</p></div>
</div>
<script type="text/javascript">(function() {{ var ga = document.createElement('script'); ga.async = true; ga.src = '/ga.js'; document.body.appendChild(ga); }})();</script>
</body>
</html>
"#,
        title_e = escape(&title),
    );
    Synthetic {
        html,
        title,
        article_html: article,
    }
}

/// "20KB", "100KB", "500KB".
pub fn size_label(size: usize) -> String {
    format!("{}KB", size / 1000)
}
