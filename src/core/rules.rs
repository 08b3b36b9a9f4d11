//! Extraction rules: XPath strings of the paper's three forms (§3.3, `AllRules`), candidate
//! generation for one node (id > class > absolute path), and applying a rule to a page.
//!
//! Rules are plain XPath 1.0 and always mean what sxd-xpath says they mean. The three forms that
//! rule learning produces are also evaluated on a fast path: `//*[@id='v']` and
//! `//*[@class='v']` through the page's attribute indexes (O(1)), and absolute paths
//! `/html/body/div[2]/p[1]` by walking the element table. Any other XPath goes to sxd-xpath on
//! the page converted to `sxd_document`. `tests/rules_fast_path.rs` checks both paths agree.

use super::page::{ElementIdx, Page};
use std::fmt;

/// The form of a rule, in the paper's order of preference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RuleKind {
    /// `//*[@id='…']`: ids are meant to be unique.
    Id = 0,
    /// `//*[@class='…']`: whole-attribute equality, as the paper and its oracle write it.
    Class = 1,
    /// `/html/body/…[k]`: the absolute path, the fallback.
    Path = 2,
    /// Any other XPath (hand-written or from another tool).
    Other = 3,
}

#[derive(Debug)]
enum Form {
    Id(String),
    Class(String),
    /// Steps below the root: (local name, 1-based position or None for "all").
    Path(Vec<(String, Option<u32>)>),
    Other(sxd_xpath::XPath),
}

/// A compiled extraction rule.
pub struct Rule {
    xpath: String,
    form: Form,
}

/// A rule string that is not valid XPath 1.0.
#[derive(Debug, thiserror::Error)]
#[error("invalid XPath rule {xpath:?}: {reason}")]
pub struct RuleError {
    /// The rule as given.
    pub xpath: String,
    /// The XPath parser's message.
    pub reason: String,
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Rule({})", self.xpath)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.xpath)
    }
}

/// An attribute value usable in a rule: non-empty, no quotes (XPath 1.0 has no escaping) and no
/// digits (digits mark per-post values such as `post-123`, which no other post shares).
fn valid_value(v: &str) -> bool {
    !v.trim().is_empty()
        && !v
            .chars()
            .any(|c| c.is_ascii_digit() || c == '\'' || c == '"')
}

impl Rule {
    /// Compiles an XPath rule, recognising the fast forms.
    ///
    /// # Errors
    /// [`RuleError`] when sxd-xpath cannot parse `xpath`.
    pub fn parse(xpath: &str) -> Result<Rule, RuleError> {
        let err = |reason: String| RuleError {
            xpath: xpath.to_string(),
            reason,
        };
        let compiled = sxd_xpath::Factory::new()
            .build(xpath)
            .map_err(|e| err(e.to_string()))?
            .ok_or_else(|| err("empty expression".into()))?;
        let form = fast_form(xpath).unwrap_or(Form::Other(compiled));
        Ok(Rule {
            xpath: xpath.to_string(),
            form,
        })
    }

    /// The XPath text.
    pub fn as_str(&self) -> &str {
        &self.xpath
    }

    /// The rule's form.
    pub fn kind(&self) -> RuleKind {
        match self.form {
            Form::Id(_) => RuleKind::Id,
            Form::Class(_) => RuleKind::Class,
            Form::Path(_) => RuleKind::Path,
            Form::Other(_) => RuleKind::Other,
        }
    }

    /// For an absolute path rule (`/html/body/main[1]/article[1]`), the same path with its
    /// last step at any position (`/html/body/main[1]/article`): the element and its same-tag
    /// siblings, as a listing repeats a post's container. `None` for other forms.
    pub fn any_last_position(&self) -> Option<Rule> {
        let Form::Path(steps) = &self.form else {
            return None;
        };
        let mut steps = steps.clone();
        steps.last_mut()?.1 = None;
        let path: String = steps
            .iter()
            .map(|(name, pos)| match pos {
                Some(k) => format!("/{name}[{k}]"),
                None => format!("/{name}"),
            })
            .collect();
        Rule::parse(&format!("/html{path}")).ok()
    }

    /// All elements the rule selects, in document order.
    pub fn apply(&self, page: &Page) -> Vec<ElementIdx> {
        match &self.form {
            Form::Id(v) => page.by_id(v).to_vec(),
            Form::Class(v) => page.by_class(v).to_vec(),
            Form::Path(steps) => apply_path(page, steps),
            Form::Other(x) => page.to_sxd().select(x).unwrap_or_default(),
        }
    }

    /// The first element the rule selects (the paper's `Apply`).
    pub fn apply_first(&self, page: &Page) -> Option<ElementIdx> {
        match &self.form {
            Form::Id(v) => page.by_id(v).first().copied(),
            Form::Class(v) => page.by_class(v).first().copied(),
            _ => self.apply(page).into_iter().next(),
        }
    }

    /// Evaluates the rule with sxd-xpath only, ignoring the fast path (for tests and benchmarks).
    pub fn apply_slow(&self, page: &Page) -> Vec<ElementIdx> {
        let compiled = sxd_xpath::Factory::new().build(&self.xpath).ok().flatten();
        compiled.map_or_else(Vec::new, |x| page.to_sxd().select(&x).unwrap_or_default())
    }
}

fn fast_form(xpath: &str) -> Option<Form> {
    for (prefix, id) in [("//*[@id='", true), ("//*[@class='", false)] {
        if let Some(rest) = xpath
            .strip_prefix(prefix)
            .and_then(|r| r.strip_suffix("']"))
        {
            if rest.contains('\'') {
                return None;
            }
            return Some(if id {
                Form::Id(rest.into())
            } else {
                Form::Class(rest.into())
            });
        }
    }
    let rest = xpath.strip_prefix("/html")?;
    let mut steps = Vec::new();
    for step in rest.split('/').skip(1) {
        let (name, pos) = match step.split_once('[') {
            Some((n, p)) => (n, Some(p.strip_suffix(']')?.parse::<u32>().ok()?)),
            None => (step, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return None;
        }
        steps.push((name.to_string(), pos));
    }
    if !rest.is_empty() && steps.is_empty() {
        return None;
    }
    Some(Form::Path(steps))
}

fn apply_path(page: &Page, steps: &[(String, Option<u32>)]) -> Vec<ElementIdx> {
    let mut current: Vec<ElementIdx> = match page.elements.first() {
        Some(e) if e.name == "html" && e.html_ns => vec![0],
        _ => return Vec::new(),
    };
    for (name, pos) in steps {
        let mut next = Vec::new();
        for &c in &current {
            for &child in &page.elements[c as usize].children {
                let e = &page.elements[child as usize];
                if e.html_ns && &e.name == name && pos.is_none_or(|p| p == e.position) {
                    next.push(child);
                }
            }
        }
        current = next;
    }
    current
}

/// The one candidate rule of a node (paper §3.3 `AllRules`): its id if valid, else its class if
/// valid, else its absolute path. An id or class is valid when it has no digit and no quote and
/// the node is the first element carrying it (the rule's `Apply` must return this node). `None` for nodes no rule can address (a path through SVG or
/// MathML).
pub fn rule_for(page: &Page, idx: ElementIdx) -> Option<(String, RuleKind)> {
    let el = page.element_ref(idx);
    // A rule is scored by what Apply (first match) extracts, so an id or class is this node's
    // rule only if the node is its first match; otherwise the next form is tried.
    if let Some(id) = el
        .value()
        .attr("id")
        .filter(|v| valid_value(v) && page.by_id(v).first() == Some(&idx))
    {
        return Some((format!("//*[@id='{id}']"), RuleKind::Id));
    }
    if let Some(class) = el
        .value()
        .attr("class")
        .filter(|v| valid_value(v) && page.by_class(v).first() == Some(&idx))
    {
        return Some((format!("//*[@class='{class}']"), RuleKind::Class));
    }
    absolute_path(page, idx).map(|p| (p, RuleKind::Path))
}

/// The class rule of a node that also has an id (which [`rule_for`] prefers), when its class
/// is valid and the node is that class's first element: what a template mark is known by on
/// pages where the same class stands without the id.
pub fn class_rule_beside_id(page: &Page, idx: ElementIdx) -> Option<String> {
    let el = page.element_ref(idx);
    el.value().attr("id")?;
    el.value()
        .attr("class")
        .filter(|v| valid_value(v) && page.by_class(v).first() == Some(&idx))
        .map(|class| format!("//*[@class='{class}']"))
}

/// `/html/body/div[2]/p[1]`: every step below `body`/`head` carries its position among
/// same-name siblings.
pub fn absolute_path(page: &Page, idx: ElementIdx) -> Option<String> {
    let mut steps = Vec::new();
    let mut cur = Some(idx);
    while let Some(c) = cur {
        let e = &page.elements[c as usize];
        if !e.html_ns
            || !e
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            return None;
        }
        if e.depth <= 1 {
            steps.push(e.name.clone());
        } else {
            steps.push(format!("{}[{}]", e.name, e.position));
        }
        cur = e.parent;
    }
    steps.reverse();
    Some(format!("/{}", steps.join("/")))
}

super::vocabulary! {
    /// A field of a post that rules are learned for; the name is the one stored with the rule
    /// and printed by `archive rules`.
    pub enum Field {
        /// The post body.
        Article = "article",
        /// The post title.
        Title = "title",
        /// Elements inside the article that are not article text (a byline or title before the
        /// text), learned from summary feeds; extraction removes what these rules select.
        ArticleExclude = "article-exclude",
        /// The byline (paper §3.5).
        Author = "author",
        /// Author candidates that repeat identically on every page while the feed names different
        /// authors (a footer, an "About me" box; `page metadata` for the page's own author
        /// metadata): never read as a post's authors. Learned from the feed entries (issue 13).
        SiteWideAuthor = "site-wide-author",
        /// The page's own author metadata (`page metadata`) when it varies between posts and
        /// names the feed's authors on most sampled pages: extraction checks each page's byline
        /// against it (`core::extract::AuthorMetadata::Confirms`, issue 42 part 1).
        ConfirmingAuthor = "confirming-author",
        /// The page's own publication-date metadata (JSON-LD `datePublished`,
        /// `article:published_time`, `<time datetime>`) when it disagrees with the feed's dates
        /// on most sampled pages (`page metadata`): never read as a post's date. Learned from the
        /// feed entries (issue 13).
        UnreliableDate = "unreliable-date",
        /// The publication date (paper §3.5).
        Date = "date",
        /// What most of the blog's entry pages carry and its listing pages do not (an id/class
        /// rule, or `page metadata`): a page whose URL looks like a permalink and carries
        /// them is a post (`core::identify`, issue 28).
        PostMark = "post-mark",
        /// What the blog's listing pages carry and its entry pages do not (an id/class rule,
        /// `several articles`, `canonical link`): a page carrying them and not the post marks
        /// lists posts (`core::identify`).
        ListingMark = "listing-mark",
        /// Comment contents (paper §3.5, bipartite matching).
        Comment = "comment",
        /// Comment authors.
        CommentAuthor = "comment-author",
        /// Comment dates.
        CommentDate = "comment-date",
        /// A comment widget's own data (issue 41): the rule is the address its JSON is asked
        /// from for any post (`core::data_template::DataTemplate`, not an XPath) and its format
        /// where the comments are in that JSON (`DataShape`, as JSON).
        CommentData = "comment-data",
    }
}

/// A learned rule for one field with its evidence.
#[derive(Debug, Clone)]
pub struct LearnedRule {
    /// The field.
    pub field: Field,
    /// The winning XPath.
    pub xpath: String,
    /// Mean Dice score of what the winning rule extracts, over all training pages (0–1).
    pub score: f64,
    /// Pages whose best rule was this one.
    pub votes: u32,
    /// Training pages for this field.
    pub samples: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    const HTML: &str = "<html><head><title>T</title></head><body><div class='a b'>x</div><div id='main'><p>1</p><p>2</p></div><svg><g></g></svg></body></html>";

    #[test]
    fn a_path_rule_at_any_last_position_selects_the_siblings() {
        let page = Page::parse(HTML);
        let one = Rule::parse("/html/body/div[2]/p[1]").unwrap();
        let any = one.any_last_position().unwrap();
        assert_eq!(any.as_str(), "/html/body/div[2]/p");
        assert_eq!(any.apply(&page).len(), 2);
        assert_eq!(any.apply(&page), any.apply_slow(&page));
        assert!(Rule::parse("//*[@id='main']")
            .unwrap()
            .any_last_position()
            .is_none());
    }

    #[test]
    fn fast_and_slow_paths_agree() {
        let page = Page::parse(HTML);
        for i in 0..page.elements.len() as u32 {
            if let Some((x, _)) = rule_for(&page, i) {
                let r = Rule::parse(&x).unwrap();
                assert_eq!(r.apply(&page), r.apply_slow(&page), "{x}");
                assert!(r.apply(&page).contains(&i), "{x}");
            }
        }
        let r = Rule::parse("//*[@id='main']/p[2]").unwrap();
        assert_eq!(r.kind(), RuleKind::Other);
        assert_eq!(page.text_of(r.apply_first(&page).unwrap()), "2");
    }

    #[test]
    fn candidates_follow_the_paper_order() {
        let page = Page::parse(HTML);
        let main = page.by_id("main")[0];
        assert_eq!(rule_for(&page, main).unwrap().0, "//*[@id='main']");
        let ab = page.by_class("a b")[0];
        assert_eq!(rule_for(&page, ab).unwrap().0, "//*[@class='a b']");
        let p2 = page.elements[main as usize].children[1];
        assert_eq!(rule_for(&page, p2).unwrap().0, "/html/body/div[2]/p[2]");
        assert!(Rule::parse("//*[").is_err());
    }
}
