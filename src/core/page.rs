//! A parsed HTML page: the HTML5 tree (html5ever via `scraper`), a flat element table in
//! document order, the page's normalised text stream, and indexes of elements by their whole
//! `id` and `class` attribute values (paper §3.4: "indexing HTML nodes on their id and class
//! attributes, effectively making Apply ∈ O(1)").
//!
//! Every element owns a contiguous range `[start, end)` of the text stream: its visible text
//! (script, style, noscript and template text excluded; a space at block boundaries and `<br>`).
//! Rule learning scores nodes from these ranges without ever serialising a subtree.

use ego_tree::NodeId;
use html5ever::{local_name, LocalName};
use rustc_hash::FxHashMap;
use scraper::{ElementRef, Html, Node};

/// Index of an element in [`Page::elements`] (document order).
pub type ElementIdx = u32;

/// Elements whose text is not visible content, or not the text's words: a ruby annotation
/// (`<rt>`, its fallback parentheses `<rp>`) is a reading aid shown above the base text, and
/// "<ruby>子<rt>こ</rt></ruby>ども" reads "子ども".
const SKIP_TEXT: [LocalName; 6] = [
    local_name!("script"),
    local_name!("style"),
    local_name!("noscript"),
    local_name!("template"),
    local_name!("rt"),
    local_name!("rp"),
];
/// Inline elements: entering or leaving them does not separate words. (Interned names:
/// comparing two is comparing two integers.)
const INLINE: [LocalName; 37] = [
    local_name!("a"),
    local_name!("abbr"),
    local_name!("acronym"),
    local_name!("b"),
    local_name!("bdi"),
    local_name!("bdo"),
    local_name!("big"),
    local_name!("cite"),
    local_name!("code"),
    local_name!("data"),
    local_name!("del"),
    local_name!("dfn"),
    local_name!("em"),
    local_name!("font"),
    local_name!("i"),
    local_name!("ins"),
    local_name!("kbd"),
    local_name!("mark"),
    local_name!("nobr"),
    local_name!("q"),
    local_name!("rb"),
    local_name!("rp"),
    local_name!("rt"),
    local_name!("ruby"),
    local_name!("s"),
    local_name!("samp"),
    local_name!("small"),
    local_name!("span"),
    local_name!("strike"),
    local_name!("strong"),
    local_name!("sub"),
    local_name!("sup"),
    local_name!("time"),
    local_name!("tt"),
    local_name!("u"),
    local_name!("var"),
    local_name!("wbr"),
];
const XHTML_NS: &str = "http://www.w3.org/1999/xhtml";

/// One element of the page.
#[derive(Debug, Clone)]
pub struct Element {
    /// Node in the `scraper` tree.
    pub node: NodeId,
    /// Parent element, `None` for `<html>`.
    pub parent: Option<ElementIdx>,
    /// Child elements in document order.
    pub children: Vec<ElementIdx>,
    /// Depth below `<html>` (which has depth 0).
    pub depth: u32,
    /// Local tag name, lower case.
    pub name: String,
    /// True for HTML elements (not SVG or MathML), which absolute-path rules can address.
    pub html_ns: bool,
    /// 1-based position among the parent's child elements with the same name (XPath `name[k]`).
    pub position: u32,
    /// Start of this element's text in [`Page::text`].
    pub start: u32,
    /// End (exclusive) of this element's text in [`Page::text`].
    pub end: u32,
}

/// A parsed page. Not `Send` (the HTML tree is `!Send`): parse and query on one thread.
pub struct Page {
    html: Html,
    /// Elements in document order; index 0 is `<html>`.
    pub elements: Vec<Element>,
    /// The normalised (lower-cased, whitespace-collapsed) visible text of the whole page.
    pub text: Vec<char>,
    /// The same text with original case, aligned char for char with `text`.
    display: Vec<char>,
    id_index: FxHashMap<String, Vec<ElementIdx>>,
    class_index: FxHashMap<String, Vec<ElementIdx>>,
}

struct Builder {
    elements: Vec<Element>,
    sibling_counts: FxHashMap<(ElementIdx, html5ever::LocalName), u32>,
    text: Vec<char>,
    display: Vec<char>,
    pending_space: bool,
}

impl Builder {
    fn push_text(&mut self, s: &str) {
        for c in s.chars() {
            if c.is_whitespace() {
                self.pending_space = true;
                continue;
            }
            if c == super::text::SOFT_HYPHEN {
                continue;
            }
            if self.pending_space && !self.text.is_empty() {
                self.text.push(' ');
                self.display.push(' ');
            }
            self.pending_space = false;
            let l = if c.is_ascii() {
                c.to_ascii_lowercase()
            } else {
                let mut lower = c.to_lowercase();
                match (lower.next(), lower.next()) {
                    (Some(l), None) => l,
                    _ => c,
                }
            };
            self.text.push(l);
            self.display.push(c);
        }
    }

    /// Walks the tree in document order with an explicit stack (no recursion: tag soup can nest
    /// thousands deep), building the element table and the text stream.
    fn walk(&mut self, root: ego_tree::NodeRef<'_, Node>) {
        enum Step<'a> {
            Visit(ego_tree::NodeRef<'a, Node>, Option<ElementIdx>, u32, bool),
            Leave(ElementIdx, usize, bool),
        }
        let mut stack = vec![Step::Visit(root, None, 0, false)];
        while let Some(step) = stack.pop() {
            match step {
                Step::Visit(node, parent, depth, hidden) => match node.value() {
                    Node::Text(t) if !hidden => self.push_text(t),
                    Node::Element(el) => {
                        let name = el.name().to_ascii_lowercase();
                        let idx = self.elements.len() as ElementIdx;
                        // 1-based position among same-name siblings, counted per parent in O(1).
                        let position = match parent {
                            Some(p) => {
                                let key = (p, el.name.local.clone());
                                let n = self.sibling_counts.entry(key).or_insert(0);
                                *n += 1;
                                *n
                            }
                            None => 1,
                        };
                        if let Some(p) = parent {
                            self.elements[p as usize].children.push(idx);
                        }
                        let ns = &*el.name.ns;
                        let inline = INLINE.contains(&el.name.local);
                        let skip = hidden || SKIP_TEXT.contains(&el.name.local);
                        self.elements.push(Element {
                            node: node.id(),
                            parent,
                            children: Vec::new(),
                            depth,
                            html_ns: ns.is_empty() || ns == XHTML_NS,
                            name,
                            position,
                            start: 0,
                            end: 0,
                        });
                        if !inline {
                            self.pending_space = true;
                        }
                        stack.push(Step::Leave(idx, self.text.len(), inline));
                        for child in node.children().rev() {
                            stack.push(Step::Visit(child, Some(idx), depth + 1, skip));
                        }
                    }
                    _ => {}
                },
                Step::Leave(idx, start, inline) => {
                    if !inline {
                        self.pending_space = true;
                    }
                    let end = self.text.len();
                    // A separator space pushed just before this element's first char is not its text.
                    let start = if start < end && self.text[start] == ' ' {
                        start + 1
                    } else {
                        start
                    };
                    let e = &mut self.elements[idx as usize];
                    e.start = start as u32;
                    e.end = end.max(start) as u32;
                }
            }
        }
    }
}

/// An attribute of `el` without a namespace, by its local name. scraper's own
/// `Element::attr` interns `name` first (a hash and, for names outside the static set, a
/// global lock) to binary-search the attributes; an element has a handful, so a scan that
/// compares names is several times faster on the fallback extractor's per-element lookups.
pub fn attr_of<'a>(el: &'a scraper::node::Element, name: &str) -> Option<&'a str> {
    el.attrs
        .iter()
        .find(|(k, _)| k.ns.is_empty() && &*k.local == name)
        .map(|(_, v)| &**v)
}

impl Page {
    /// Parses an HTML document (any HTML: html5ever repairs it as browsers do). Linear in the
    /// size of the input.
    pub fn parse(source: &str) -> Page {
        let html = super::html::parse_document(source);
        let mut b = Builder {
            elements: Vec::with_capacity(source.len() / 256),
            sibling_counts: FxHashMap::default(),
            text: Vec::with_capacity(source.len() / 8),
            display: Vec::with_capacity(source.len() / 8),
            pending_space: false,
        };
        let root = html.root_element();
        b.walk(*root);
        let mut id_index: FxHashMap<String, Vec<ElementIdx>> = FxHashMap::default();
        let mut class_index: FxHashMap<String, Vec<ElementIdx>> = FxHashMap::default();
        for (i, e) in b.elements.iter().enumerate() {
            let el = html.tree.get(e.node).and_then(|n| n.value().as_element());
            if let Some(el) = el {
                for (name, index) in [("id", &mut id_index), ("class", &mut class_index)] {
                    if let Some(v) = attr_of(el, name) {
                        match index.get_mut(v) {
                            Some(list) => list.push(i as ElementIdx),
                            None => {
                                index.insert(v.to_string(), vec![i as ElementIdx]);
                            }
                        }
                    }
                }
            }
        }
        Page {
            html,
            elements: b.elements,
            text: b.text,
            display: b.display,
            id_index,
            class_index,
        }
    }

    /// The `scraper` element for an index.
    pub fn element_ref(&self, idx: ElementIdx) -> ElementRef<'_> {
        let node = self
            .html
            .tree
            .get(self.elements[idx as usize].node)
            .expect("element node");
        ElementRef::wrap(node).expect("element")
    }

    /// An attribute of an element.
    pub fn attr(&self, idx: ElementIdx, name: &str) -> Option<&str> {
        let node = self.html.tree.get(self.elements[idx as usize].node)?;
        attr_of(node.value().as_element()?, name)
    }

    /// Elements whose whole `id` attribute equals `value`, in document order.
    pub fn by_id(&self, value: &str) -> &[ElementIdx] {
        self.id_index.get(value).map_or(&[], |v| v.as_slice())
    }

    /// Elements whose whole `class` attribute equals `value`, in document order.
    pub fn by_class(&self, value: &str) -> &[ElementIdx] {
        self.class_index.get(value).map_or(&[], |v| v.as_slice())
    }

    /// The element's visible text, original case, whitespace collapsed.
    pub fn text_of(&self, idx: ElementIdx) -> String {
        let e = &self.elements[idx as usize];
        self.display[e.start as usize..e.end as usize]
            .iter()
            .collect()
    }

    /// The element's normalised (lower-cased) text.
    pub fn normalised_text_of(&self, idx: ElementIdx) -> &[char] {
        let e = &self.elements[idx as usize];
        &self.text[e.start as usize..e.end as usize]
    }

    /// The element's inner HTML (its children serialised).
    pub fn inner_html(&self, idx: ElementIdx) -> String {
        self.element_ref(idx).inner_html()
    }

    /// Inner HTML of `idx` with the subtrees of the `skip` elements (descendants of `idx`) left out.
    pub fn inner_html_excluding(&self, idx: ElementIdx, skip: &[ElementIdx]) -> String {
        let skip_nodes: Vec<NodeId> = skip
            .iter()
            .map(|&s| self.elements[s as usize].node)
            .collect();
        let mut out = String::new();
        self.serialise_children(self.element_ref(idx), &skip_nodes, &mut out);
        out
    }

    fn serialise_children(&self, el: ElementRef<'_>, skip: &[NodeId], out: &mut String) {
        for child in el.children() {
            if skip.contains(&child.id()) {
                continue;
            }
            match child.value() {
                Node::Element(e) => {
                    let child_el = ElementRef::wrap(child).expect("element");
                    if !child.descendants().any(|d| skip.contains(&d.id())) {
                        out.push_str(&child_el.html());
                        continue;
                    }
                    out.push('<');
                    out.push_str(e.name());
                    for (k, v) in e.attrs() {
                        out.push_str(&format!(
                            " {k}=\"{}\"",
                            v.replace('&', "&amp;").replace('"', "&quot;")
                        ));
                    }
                    out.push('>');
                    self.serialise_children(child_el, skip, out);
                    out.push_str(&format!("</{}>", e.name()));
                }
                Node::Text(t) => out.push_str(&escape_text(t)),
                Node::Comment(c) => {
                    out.push_str("<!--");
                    out.push_str(c);
                    out.push_str("-->");
                }
                _ => {}
            }
        }
    }

    /// Visible text of `idx` without the text of the `skip` elements (its descendants).
    pub fn text_excluding(&self, idx: ElementIdx, skip: &[ElementIdx]) -> String {
        let e = &self.elements[idx as usize];
        let mut ranges: Vec<(u32, u32)> = skip
            .iter()
            .map(|&s| {
                (
                    self.elements[s as usize].start,
                    self.elements[s as usize].end,
                )
            })
            .collect();
        ranges.sort_unstable();
        let mut out = String::new();
        let mut pos = e.start;
        for (s, t) in ranges {
            if s > pos {
                out.extend(&self.display[pos as usize..s as usize]);
                out.push(' ');
            }
            pos = pos.max(t);
        }
        if pos < e.end {
            out.extend(&self.display[pos as usize..e.end as usize]);
        }
        super::text::collapse_whitespace(&out)
    }

    /// The `scraper` document, for callers that need CSS selectors or raw attributes.
    pub fn html(&self) -> &Html {
        &self.html
    }

    /// The element and its descendants: they follow it in document order, deeper than it,
    /// so they are one range of [`Page::elements`] indices. Linear in the subtree's size.
    pub fn subtree(&self, idx: ElementIdx) -> std::ops::Range<ElementIdx> {
        let depth = self.elements[idx as usize].depth;
        let end = (idx as usize + 1..self.elements.len())
            .find(|&i| self.elements[i].depth <= depth)
            .unwrap_or(self.elements.len());
        idx..end as ElementIdx
    }

    /// True when `a` is `b` or an ancestor of `b`.
    pub fn contains(&self, a: ElementIdx, b: ElementIdx) -> bool {
        let mut cur = Some(b);
        while let Some(c) = cur {
            if c == a {
                return true;
            }
            cur = self.elements[c as usize].parent;
        }
        false
    }

    /// Converts the page into an `sxd_document` package for general XPath evaluation, linear in
    /// the page size (`sxd_html` is quadratic on long text nodes: see the dependency notes).
    /// Elements appear in the same pre-order as [`Page::elements`], which
    /// [`SxdPage::select`] relies on to map results back.
    pub fn to_sxd(&self) -> SxdPage {
        let package = sxd_document::Package::new();
        {
            let doc = package.as_document();
            let root = self.html.root_element();
            let el = doc.create_element(qname(&root.value().name.ns, root.value().name()));
            for (k, v) in root.value().attrs() {
                el.set_attribute_value(k, v);
            }
            doc.root().append_child(el);
            sxd_walk(&doc, el, *root);
        }
        SxdPage { package }
    }
}

fn escape_text(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\u{a0}', "&nbsp;")
}

fn qname<'a>(ns: &'a str, local: &'a str) -> sxd_document::QName<'a> {
    if ns.is_empty() || ns == XHTML_NS {
        sxd_document::QName::new(local)
    } else {
        sxd_document::QName::with_namespace_uri(Some(ns), local)
    }
}

fn sxd_walk<'d>(
    doc: &sxd_document::dom::Document<'d>,
    parent: sxd_document::dom::Element<'d>,
    node: ego_tree::NodeRef<'_, Node>,
) {
    let mut stack = vec![(parent, node)];
    while let Some((parent, node)) = stack.pop() {
        for c in node.children() {
            match c.value() {
                Node::Element(e) => {
                    let el = doc.create_element(qname(&e.name.ns, e.name()));
                    for (k, v) in e.attrs() {
                        el.set_attribute_value(k, v);
                    }
                    parent.append_child(el);
                    stack.push((el, c));
                }
                Node::Text(t) => parent.append_child(doc.create_text(t)),
                Node::Comment(x) => parent.append_child(doc.create_comment(x)),
                _ => {}
            }
        }
    }
}

/// A page converted to `sxd_document` for general XPath 1.0 evaluation (the slow path of
/// [`crate::core::rules::Rule::apply`]).
pub struct SxdPage {
    package: sxd_document::Package,
}

impl SxdPage {
    /// Evaluates `xpath` and returns the indexes (into [`Page::elements`], document order) of the
    /// element nodes it selects. Errors are XPath syntax or evaluation errors, as text.
    pub fn select(&self, xpath: &sxd_xpath::XPath) -> Result<Vec<ElementIdx>, String> {
        let doc = self.package.as_document();
        // Element order of this document equals Page::elements order (same pre-order walk).
        #[allow(clippy::mutable_key_type)] // sxd elements hash by node pointer, which never changes
        let mut index = rustc_hash::FxHashMap::default();
        let Some(html) = doc.root().children().into_iter().find_map(|c| c.element()) else {
            return Ok(Vec::new());
        };
        index.insert(html, 0);
        let mut stack = vec![(html.children(), 0usize)];
        let mut n: ElementIdx = 1;
        while let Some((children, pos)) = stack.last_mut() {
            let Some(child) = children.get(*pos).copied() else {
                stack.pop();
                continue;
            };
            *pos += 1;
            if let Some(el) = child.element() {
                index.insert(el, n);
                n += 1;
                stack.push((el.children(), 0));
            }
        }
        let ctx = sxd_xpath::Context::new();
        let value = xpath
            .evaluate(&ctx, doc.root())
            .map_err(|e| e.to_string())?;
        let sxd_xpath::Value::Nodeset(nodes) = value else {
            return Ok(Vec::new());
        };
        Ok(nodes
            .document_order()
            .into_iter()
            .filter_map(|node| node.element().and_then(|el| index.get(&el).copied()))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_tails_and_separate_blocks() {
        let p = Page::parse("<html><body><div id=a><p>Hello <b>big</b> world</p><p>line1<br>line2</p></div><script>x<y</script></body></html>");
        let a = p.by_id("a")[0];
        assert_eq!(p.text_of(a), "Hello big world line1 line2");
        let body = p.elements.iter().position(|e| e.name == "body").unwrap() as u32;
        assert_eq!(p.text_of(body), "Hello big world line1 line2");
    }

    #[test]
    fn deep_tag_soup_does_not_overflow_the_stack() {
        let html = format!(
            "<html><body>{}<p class=deep>bottom</p></body></html>",
            "<div>".repeat(20_000)
        );
        let p = Page::parse(&html);
        let deep = p.by_class("deep")[0];
        assert_eq!(p.text_of(deep), "bottom");
        let x = sxd_xpath::Factory::new()
            .build("//*[@class='deep']")
            .unwrap()
            .unwrap();
        assert_eq!(p.to_sxd().select(&x).unwrap(), vec![deep]);
    }

    #[test]
    fn positions_count_same_name_siblings() {
        let p = Page::parse("<html><body><div></div><p></p><div id=x></div></body></html>");
        let x = p.by_id("x")[0];
        assert_eq!(p.elements[x as usize].position, 2);
    }
}
