//! Authors on a post page (paper §3.5): the names a byline shows, co-authors one per author
//! element; the authors the page declares (JSON-LD, `meta name=author`, OpenGraph
//! `article:author`, `rel=author`, hCard, links to author pages), never the site's own name;
//! and the page the blog keeps for each author (issue 42). How a text names people is
//! [`super::authors`]'s.

use super::authors::{names_in, same_person, AuthorPage};
use super::head::{first_text, json_ld, meta, meta_values, select};
use super::page::{ElementIdx, Page};
use super::taxonomy::is_author_page;

/// Author names the page itself declares (JSON-LD, `meta name=author`, OpenGraph
/// `article:author`, `rel=author`, hCard), used
/// as training targets when the feed names no author.
pub fn page_authors(page: &Page) -> Vec<String> {
    declared_authors(page)
}

/// The pages this page links for each of `names`, best first, several per name: links whose
/// text is the name to an author-page address ([`is_author_page`]), then
/// JSON-LD's `author` `url` for that name, then other links whose text is the name, outside
/// navigation. `href` as written; fragments, `mailto:` and scripts are no page. The crawl
/// keeps the first on the blog's own site (a JSON-LD `url` is often the author's own website).
pub fn author_pages(page: &Page, names: &[String]) -> Vec<AuthorPage> {
    let page_like = |href: &str| {
        let h = href.trim().to_ascii_lowercase();
        !h.is_empty()
            && !h.starts_with('#')
            && !h.starts_with("mailto:")
            && !h.starts_with("javascript:")
            && !h.starts_with("tel:")
    };
    let mut declared: Vec<AuthorPage> = Vec::new();
    for v in json_ld(page) {
        let list = match v.get("author") {
            Some(serde_json::Value::Array(a)) => a.clone(),
            Some(other) => vec![other.clone()],
            None => continue,
        };
        for a in list {
            let (Some(name), Some(url)) = (
                a.get("name").and_then(|n| n.as_str()),
                a.get("url").and_then(|u| u.as_str()),
            ) else {
                continue;
            };
            if page_like(url) {
                declared.push(AuthorPage {
                    name: ld_text(name),
                    url: url.trim().to_string(),
                });
            }
        }
    }
    let links: Vec<AuthorPage> = select(page, "a[href]")
        .into_iter()
        .filter(|a| {
            !a.ancestors()
                .filter_map(scraper::ElementRef::wrap)
                .any(|e| e.value().name() == "nav")
        })
        .filter_map(|a| {
            let href = a.value().attr("href")?.trim();
            let name = super::text::collapse_whitespace(&a.text().collect::<String>());
            (page_like(href) && !name.is_empty() && name.chars().count() <= 60).then(|| {
                AuthorPage {
                    name,
                    url: href.to_string(),
                }
            })
        })
        .collect();
    let mut out: Vec<AuthorPage> = Vec::new();
    let mut done: Vec<&String> = Vec::new();
    for name in names {
        if done.iter().any(|d| same_person(d, name)) {
            continue;
        }
        done.push(name);
        let by_name = |p: &&AuthorPage| same_person(&p.name, name);
        let found = links
            .iter()
            .filter(by_name)
            .filter(|p| is_author_page(&p.url))
            .chain(declared.iter().filter(by_name))
            .chain(links.iter().filter(by_name));
        for p in found {
            if !out.iter().any(|o| &o.name == name && o.url == p.url) {
                out.push(AuthorPage {
                    name: name.clone(),
                    url: p.url.clone(),
                });
            }
        }
    }
    out
}

/// A JSON-LD string as text: character references decoded (Ghost writes `O&#x27;Rourke`
/// into its JSON-LD), whitespace collapsed.
fn ld_text(s: &str) -> String {
    if s.contains('&') {
        super::feed::html_to_text(s)
    } else {
        super::text::collapse_whitespace(s)
    }
}

/// The site's own name as the page declares it (`og:site_name`, `application-name`, JSON-LD
/// `WebSite`/`Organization` names): an "author" by that name is the site, not a person.
fn site_names(page: &Page) -> Vec<String> {
    let mut names = meta_values(page, "meta[property='og:site_name']", "content");
    names.extend(meta_values(
        page,
        "meta[name='application-name']",
        "content",
    ));
    for v in json_ld(page) {
        let kind = v.get("@type").and_then(|t| t.as_str()).unwrap_or_default();
        if matches!(kind, "WebSite" | "Organization" | "Blog") {
            if let Some(n) = v.get("name").and_then(|n| n.as_str()) {
                names.push(ld_text(n));
            }
        }
    }
    names
}

/// The byline a page shows, when it declares no author: the links to author pages
/// ([`is_author_page`]) outside navigation, asides and footers, those of the first parent that
/// holds any, each a short name.
fn visible_byline(page: &Page) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut parent = None;
    for a in select(page, "a[href]") {
        let href = a.value().attr("href").unwrap_or_default();
        if !is_author_page(href) {
            continue;
        }
        let in_chrome = a
            .ancestors()
            .filter_map(scraper::ElementRef::wrap)
            .any(|e| matches!(e.value().name(), "nav" | "aside" | "footer"));
        if in_chrome || parent.is_some_and(|p| Some(p) != a.parent().map(|n| n.id())) {
            continue;
        }
        let text = super::text::collapse_whitespace(&a.text().collect::<String>());
        if text.is_empty() || text.chars().count() > 60 {
            continue;
        }
        parent = a.parent().map(|n| n.id());
        for n in names_in(&text, &[]) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names
}

pub(super) fn declared_authors(page: &Page) -> Vec<String> {
    let mut names = metadata_authors(page);
    let site = site_names(page);
    names.retain(|n| !site.iter().any(|s| super::authors::same_person(n, s)));
    if names.is_empty() {
        names = visible_byline(page);
    }
    names
}

/// The authors the page's metadata names: JSON-LD, `meta name=author`, OpenGraph
/// `article:author`, `rel=author`, hCard.
fn metadata_authors(page: &Page) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for v in json_ld(page) {
        if let Some(a) = v.get("author") {
            let list = match a {
                serde_json::Value::Array(a) => a.clone(),
                other => vec![other.clone()],
            };
            for a in list {
                let name = a
                    .get("name")
                    .and_then(|n| n.as_str())
                    .or_else(|| a.as_str())
                    .map(ld_text);
                if let Some(n) = name.as_deref().and_then(super::feed::author_name) {
                    names.push(n);
                }
            }
        }
    }
    if names.is_empty() {
        if let Some(n) =
            meta(page, "meta[name='author']", "content").and_then(|n| super::feed::author_name(&n))
        {
            names.push(n);
        }
    }
    if names.is_empty() {
        // OpenGraph `article:author`: one per author, a name or a profile URL (left out).
        names.extend(
            select(page, "meta[property='article:author']")
                .into_iter()
                .filter_map(|m| m.value().attr("content"))
                .filter(|c| !c.contains("://"))
                .filter_map(super::feed::author_name),
        );
    }
    if names.is_empty() {
        for css in [
            "[rel~='author']",
            ".p-author",
            ".author .fn",
            ".vcard .fn",
            ".h-card .p-name",
        ] {
            if let Some(n) = first_text(page, css).and_then(|n| super::feed::author_name(&n)) {
                names.push(n);
                break;
            }
        }
    }
    names.dedup();
    names
}

/// Author names of the byline at `node`, with co-authors: where the byline (or one of its
/// three nearest ancestors) repeats as same-tag, same-class siblings — one link or one profile
/// card per author — the same child path is followed in each repetition. Each element's text
/// is read as people with the blog's `people` ([`names_in`]).
pub(super) fn byline_authors(page: &Page, node: ElementIdx, people: &[String]) -> Vec<String> {
    let mut nodes = vec![node];
    let mut path: Vec<(String, u32)> = Vec::new();
    let mut cur = node;
    for _ in 0..4 {
        let e = &page.elements[cur as usize];
        let Some(parent) = e.parent else { break };
        let class = page.attr(cur, "class").map(str::to_string);
        let siblings: Vec<ElementIdx> = page.elements[parent as usize]
            .children
            .iter()
            .copied()
            .filter(|&s| {
                s != cur
                    && page.elements[s as usize].name == e.name
                    && page.attr(s, "class").map(str::to_string) == class
            })
            .collect();
        if !siblings.is_empty() && (class.is_some() || !path.is_empty()) {
            for s in siblings.into_iter().take(10) {
                if let Some(found) = follow(page, s, &path) {
                    nodes.push(found);
                }
            }
            break;
        }
        path.insert(0, (e.name.clone(), e.position));
        cur = parent;
    }
    nodes.sort_unstable();
    let mut names: Vec<String> = Vec::new();
    for n in nodes {
        let found = match author_elements(page, n) {
            Some(each) => each
                .into_iter()
                .flat_map(|e| names_in(&page.text_of(e), people))
                .collect(),
            None => names_in(&page.text_of(n), people),
        };
        for name in found {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// One element per author inside the byline `node`, when it has them: two or more children
/// of one tag and class (or links to author pages), each a short text, that together make
/// most of the byline's text — Pelican's `<address>By <a class="url fn">A</a> <a class="url
/// fn">B</a></address>`, whose text alone would run the names together.
fn author_elements(page: &Page, node: ElementIdx) -> Option<Vec<ElementIdx>> {
    let letters = |i: ElementIdx| {
        page.text_of(i)
            .chars()
            .filter(|c| c.is_alphanumeric())
            .count()
    };
    let children = &page.elements[node as usize].children;
    let is_author_link = |c: ElementIdx| {
        page.attr(c, "rel").is_some_and(|r| r.contains("author"))
            || page.attr(c, "href").is_some_and(|h| h.contains("author"))
    };
    let mut best: Option<Vec<ElementIdx>> = None;
    for &c in children {
        let e = &page.elements[c as usize];
        let class = page.attr(c, "class");
        if class.is_none() && !is_author_link(c) {
            continue;
        }
        let group: Vec<ElementIdx> = children
            .iter()
            .copied()
            .filter(|&o| {
                page.elements[o as usize].name == e.name
                    && page.attr(o, "class") == class
                    && (class.is_some() || is_author_link(o))
            })
            .collect();
        let short = group.iter().all(|&g| (1..=60).contains(&letters(g)));
        if group.len() >= 2 && short && best.as_ref().is_none_or(|b| b.len() < group.len()) {
            best = Some(group);
        }
    }
    let group = best?;
    let covered: usize = group.iter().map(|&g| letters(g)).sum();
    (covered * 2 >= letters(node)).then_some(group)
}

/// Descends from `from` along (tag, position among same-tag siblings) steps.
fn follow(page: &Page, from: ElementIdx, path: &[(String, u32)]) -> Option<ElementIdx> {
    let mut cur = from;
    for (name, pos) in path {
        cur = page.elements[cur as usize]
            .children
            .iter()
            .copied()
            .find(|&c| {
                let e = &page.elements[c as usize];
                &e.name == name && e.position == *pos
            })?;
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn co_authors_of_a_real_pelican_byline_are_separate_names() {
        let page = Page::parse(include_str!(
            "../../fixtures/sites/pelican/site/2019/10/the-greenhouse-i-mulched-beside-the-path.html"
        ));
        let address = page.by_class("vcard author")[0];
        assert_eq!(
            byline_authors(&page, address, &[]),
            ["Margarethe Kühn", "Owen Pritchard"]
        );
        // Author links without a class; names in the text alone.
        let links = Page::parse(
            r#"<p class=byline>Von <a href="/author/jo/">Jo Bloggs</a> <a href="/author/ann/">Ann Smith</a> <a href="/author/li/">Li Wei</a></p>
            <p class=text>Por Ana Ruiz y Luis Gil</p>"#,
        );
        assert_eq!(
            byline_authors(&links, links.by_class("byline")[0], &[]),
            ["Jo Bloggs", "Ann Smith", "Li Wei"]
        );
        assert_eq!(
            byline_authors(&links, links.by_class("text")[0], &[]),
            ["Ana Ruiz", "Luis Gil"]
        );
    }

    #[test]
    fn author_pages_best_first() {
        // Docusaurus' author card: JSON-LD names the author's own website, the card's name
        // links the blog's author page; the avatar link has no text, the social links other
        // words.
        let page = Page::parse(
            r#"<html><head><script type="application/ld+json">{"@type":"BlogPosting",
            "author":[{"@type":"Person","name":"Lena Hoffmann","url":"https://lena.example/"}]}</script>
            </head><body><nav><a href="/blog/authors/lena">Lena Hoffmann</a></nav>
            <div class="avatar"><a href="/blog/authors/lena"><img alt="Lena Hoffmann"></a>
            <div class="avatar__name"><a href="/blog/authors/lena/"><span>Lena Hoffmann</span></a></div>
            <a href="https://github.com/lena">GitHub</a><a href="mailto:l@x">Lena Hoffmann</a></div>
            </body></html>"#,
        );
        let urls: Vec<String> = author_pages(&page, &["Lena Hoffmann".into(), "Ann".into()])
            .into_iter()
            .map(|p| format!("{}={}", p.name, p.url))
            .collect();
        assert_eq!(
            urls,
            [
                "Lena Hoffmann=/blog/authors/lena/",
                "Lena Hoffmann=https://lena.example/"
            ]
        );
    }

    #[test]
    fn json_ld_names_are_read_as_text() {
        let page = Page::parse(
            r#"<html><head><script type="application/ld+json">{"@type":"Article",
            "author":{"@type":"Person","name":"Declan O&#x27;Rourke","url":"/author/declan/"}}</script>
            </head><body><article><p>Text</p></article></body></html>"#,
        );
        assert_eq!(declared_authors(&page), ["Declan O'Rourke"]);
        let names = ["Declan O'Rourke".to_string()];
        assert_eq!(author_pages(&page, &names)[0].name, "Declan O'Rourke");
    }
}
