//! Extraction: a post page plus the blog's learned rules → one post record.
//!
//! The article and title come from the learned rules (first match, the paper's `Apply`). Until
//! author and date rules are learned (paper §3.5), authors and the publication date come from what
//! the page itself declares: JSON-LD, `article:published_time`, `<time datetime>`,
//! `meta name=author`, `rel=author`.

use super::page::{ElementIdx, Page};
use super::rules::Rule;
use scraper::Selector;

/// The rules used to extract posts of one blog.
pub struct RuleSet {
    /// Article body rule.
    pub article: Rule,
    /// Title rule, when one was learned.
    pub title: Option<Rule>,
    /// Elements these rules select inside the article are left out of it (bylines, titles).
    pub exclude: Vec<Rule>,
}

/// Fields extracted from one post page.
#[derive(Debug, Clone, PartialEq)]
pub struct Extracted {
    /// Title text, whitespace collapsed.
    pub title: Option<String>,
    /// Inner HTML of the article node.
    pub content_html: String,
    /// Visible text of the article node, whitespace collapsed.
    pub content_text: String,
    /// Author names declared by the page.
    pub authors: Vec<String>,
    /// Publication time declared by the page, as written (RFC 3339 / ISO 8601 usually).
    pub published: Option<String>,
}

/// Extracts a post. `None` when the article rule selects nothing or only empty text: the page is
/// then not a post of this blog.
pub fn extract(page: &Page, rules: &RuleSet) -> Option<Extracted> {
    let article = rules.article.apply_first(page)?;
    let content_text = page.text_of(article);
    if content_text.trim().is_empty() && page.inner_html(article).trim().is_empty() {
        return None;
    }
    let title_idx = rules.title.as_ref().and_then(|r| r.apply_first(page));
    let title = title_idx
        .map(|i| page.text_of(i))
        .filter(|t| !t.is_empty())
        .or_else(|| meta(page, "meta[property='og:title']", "content"))
        .or_else(|| first_text(page, "title"));
    // The title is not part of the article: when the title element (or a small header around
    // it) is inside the article element, leave it out, with what the exclude rules select.
    let header = title_idx
        .filter(|&t| t != article && page.contains(article, t))
        .and_then(|t| {
            let mut child = t;
            while page.elements[child as usize].parent != Some(article) {
                child = page.elements[child as usize].parent?;
            }
            let (c, te) = (&page.elements[child as usize], &page.elements[t as usize]);
            ((c.end - c.start) <= (te.end - te.start) + 200
                && (c.end - c.start) * 2 < content_text.chars().count() as u32)
                .then_some(child)
        });
    let mut skip: Vec<ElementIdx> = rules
        .exclude
        .iter()
        .flat_map(|r| r.apply(page))
        .filter(|&x| x != article && page.contains(article, x))
        .collect();
    skip.extend(header);
    skip.sort_unstable();
    skip.dedup();
    let (content_html, content_text) = if skip.is_empty() {
        (page.inner_html(article), content_text)
    } else {
        (
            page.inner_html_excluding(article, &skip),
            page.text_excluding(article, &skip),
        )
    };
    Some(Extracted {
        title,
        content_html: content_html.trim().to_string(),
        content_text,
        authors: declared_authors(page),
        published: declared_published(page),
    })
}

fn select<'a>(page: &'a Page, css: &str) -> Vec<scraper::ElementRef<'a>> {
    match Selector::parse(css) {
        Ok(s) => page.html().select(&s).collect(),
        Err(_) => Vec::new(),
    }
}

fn meta(page: &Page, css: &str, attr: &str) -> Option<String> {
    select(page, css)
        .into_iter()
        .filter_map(|e| e.value().attr(attr))
        .map(super::text::collapse_whitespace)
        .find(|v| !v.is_empty())
}

fn first_text(page: &Page, css: &str) -> Option<String> {
    select(page, css)
        .into_iter()
        .map(|e| super::text::collapse_whitespace(&e.text().collect::<String>()))
        .find(|t| !t.is_empty())
}

fn json_ld(page: &Page) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for e in select(page, "script[type='application/ld+json']") {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&e.text().collect::<String>()) else {
            continue;
        };
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            match v {
                serde_json::Value::Array(a) => stack.extend(a),
                serde_json::Value::Object(ref o) => {
                    if let Some(g) = o.get("@graph") {
                        stack.push(g.clone());
                    }
                    out.push(v);
                }
                _ => {}
            }
        }
    }
    out
}

fn declared_authors(page: &Page) -> Vec<String> {
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
                    .or_else(|| a.as_str());
                if let Some(n) = name.and_then(super::feed::author_name) {
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
        for css in ["[rel~='author']", ".p-author", ".author .fn", ".vcard .fn"] {
            if let Some(n) = first_text(page, css).and_then(|n| super::feed::author_name(&n)) {
                names.push(n);
                break;
            }
        }
    }
    names.dedup();
    names
}

fn declared_published(page: &Page) -> Option<String> {
    json_ld(page)
        .iter()
        .find_map(|v| {
            v.get("datePublished")
                .and_then(|d| d.as_str())
                .map(str::to_string)
        })
        .or_else(|| meta(page, "meta[property='article:published_time']", "content"))
        .or_else(|| meta(page, "time[datetime]", "datetime"))
        .or_else(|| meta(page, "abbr.published[title]", "title"))
}
