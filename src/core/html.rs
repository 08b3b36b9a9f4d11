//! HTML5 parsing: html5ever (the parser scraper uses, repairing tag soup as browsers do) with
//! the tree's nesting capped at [`MAX_DEPTH`], so parsing stays linear in the input whatever its
//! depth.
//!
//! html5ever's tree construction scans its stack of open elements on most start tags ("is there
//! a `p` in button scope?"), which is O(depth): a page nested 100,000 elements deep took 41 s.
//! Browsers cap the depth instead (Blink at 512, inserting deeper elements as siblings); here a
//! filter between the tokenizer and the tree builder does the same: a start tag that would open
//! element number [`MAX_DEPTH`] + 1 first closes the innermost open element, so the new one
//! becomes its sibling, keeping its attributes and text; the closed element's own end tag is
//! dropped when it comes. Open elements are tracked from tag names (siblings such as `p`, `li`,
//! `td` that close each other are understood).

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::tree_builder::{create_element, TreeBuilder, TreeBuilderOpts, TreeSink};
use html5ever::{local_name, ns, LocalName, QualName, TokenizerResult};
use scraper::{Html, HtmlTreeSink};
use std::cell::RefCell;

/// Most elements open at once; deeper ones are inserted as siblings (Blink's parser limit).
pub const MAX_DEPTH: usize = 512;

/// How far down the open tags an end tag looks for its start tag (bounds stray end tags).
const END_TAG_REACH: usize = 4 * MAX_DEPTH;

/// Elements without content: they never open a level. Interned names: comparing two is
/// comparing two integers.
const VOID: [LocalName; 18] = [
    local_name!("area"),
    local_name!("base"),
    local_name!("br"),
    local_name!("col"),
    local_name!("embed"),
    local_name!("hr"),
    local_name!("img"),
    local_name!("input"),
    local_name!("link"),
    local_name!("meta"),
    local_name!("param"),
    local_name!("source"),
    local_name!("track"),
    local_name!("wbr"),
    local_name!("keygen"),
    local_name!("basefont"),
    local_name!("bgsound"),
    local_name!("frame"),
];

/// Elements a start tag of the same name closes when it is the current one.
const SELF_SIBLING: [LocalName; 13] = [
    local_name!("p"),
    local_name!("li"),
    local_name!("dd"),
    local_name!("dt"),
    local_name!("option"),
    local_name!("optgroup"),
    local_name!("tr"),
    local_name!("td"),
    local_name!("th"),
    local_name!("rb"),
    local_name!("rt"),
    local_name!("rp"),
    local_name!("rtc"),
];

/// The tags the document has open: each still open in the tree, or closed early by the cap.
#[derive(Default)]
struct Open {
    tags: Vec<(LocalName, bool)>,
    /// How many of `tags` are still open in the tree.
    in_tree: usize,
}

/// The token filter between html5ever's tokenizer and tree builder.
struct DepthCap<S> {
    inner: S,
    open: RefCell<Open>,
}

fn end_tag(name: LocalName) -> Token {
    Token::TagToken(Tag {
        kind: TagKind::EndTag,
        name,
        self_closing: false,
        attrs: Vec::new(),
        had_duplicate_attributes: false,
    })
}

impl<S: TokenSink> DepthCap<S> {
    /// Forwards the tokens `token` stands for, and what the tree builder answers to the last.
    fn filter(&self, token: Token, line: u64) -> TokenSinkResult<S::Handle> {
        let Token::TagToken(tag) = &token else {
            return self.inner.process_token(token, line);
        };
        let name = &tag.name;
        let mut open = self.open.borrow_mut();
        match tag.kind {
            TagKind::StartTag if tag.self_closing || VOID.contains(name) => {}
            TagKind::StartTag => {
                if SELF_SIBLING.contains(name)
                    && open
                        .tags
                        .last()
                        .is_some_and(|(n, in_tree)| *in_tree && n == name)
                {
                    open.tags.pop();
                    open.in_tree -= 1;
                }
                if open.in_tree >= MAX_DEPTH {
                    // Close the innermost element still open, so this one is its sibling.
                    if let Some(i) = open.tags.iter().rposition(|(_, in_tree)| *in_tree) {
                        open.tags[i].1 = false;
                        open.in_tree -= 1;
                        let closed = open.tags[i].0.clone();
                        drop(open);
                        // An end tag's answer is `Continue`: no `script` is open while start
                        // tags are read (its text is).
                        let _ = self.inner.process_token(end_tag(closed), line);
                        open = self.open.borrow_mut();
                    }
                }
                open.tags.push((tag.name.clone(), true));
                open.in_tree += 1;
            }
            TagKind::EndTag => {
                let floor = open.tags.len().saturating_sub(END_TAG_REACH);
                if let Some(i) = open.tags[floor..]
                    .iter()
                    .rposition(|(n, _)| *n == tag.name)
                    .map(|i| floor + i)
                {
                    let still_open: Vec<LocalName> = open.tags[i + 1..]
                        .iter()
                        .filter(|(_, t)| *t)
                        .map(|(n, _)| n.clone())
                        .collect();
                    let matched_in_tree = open.tags[i].1;
                    let gone = open.tags[i..].iter().filter(|(_, t)| *t).count();
                    open.tags.truncate(i);
                    open.in_tree -= gone;
                    drop(open);
                    if !matched_in_tree {
                        // Its element was closed early: close what opened since, drop the tag.
                        for n in still_open.into_iter().rev() {
                            let _ = self.inner.process_token(end_tag(n), line);
                        }
                        return TokenSinkResult::Continue;
                    }
                    return self.inner.process_token(token, line);
                }
            }
        }
        drop(open);
        self.inner.process_token(token, line)
    }
}

impl<S: TokenSink> TokenSink for DepthCap<S> {
    type Handle = S::Handle;

    fn process_token(&self, token: Token, line_number: u64) -> TokenSinkResult<Self::Handle> {
        self.filter(token, line_number)
    }

    fn end(&self) {
        self.inner.end()
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.inner
            .adjusted_current_node_present_but_not_in_html_namespace()
    }
}

/// Runs `builder` over `html` through the depth cap and returns the tree.
fn run(
    builder: TreeBuilder<ego_tree::NodeId, HtmlTreeSink>,
    opts: TokenizerOpts,
    html: &str,
) -> Html {
    let tokenizer = Tokenizer::new(
        DepthCap {
            inner: builder,
            open: RefCell::default(),
        },
        opts,
    );
    let input = BufferQueue::default();
    input.push_back(StrTendril::from(html));
    while !matches!(tokenizer.feed(&input), TokenizerResult::Done) {}
    tokenizer.end();
    tokenizer.sink.inner.sink.finish()
}

/// Parses an HTML document, repaired as browsers repair it, nesting capped at [`MAX_DEPTH`].
/// Linear in the length of `html`.
pub fn parse_document(html: &str) -> Html {
    let sink = HtmlTreeSink::new(Html::new_document());
    run(
        TreeBuilder::new(sink, TreeBuilderOpts::default()),
        TokenizerOpts::default(),
        html,
    )
}

/// Parses an HTML fragment (feed content, as if inside `<body>`), nesting capped at
/// [`MAX_DEPTH`]. Linear in the length of `html`.
pub fn parse_fragment(html: &str) -> Html {
    let sink = HtmlTreeSink::new(Html::new_fragment());
    let body = QualName::new(None, ns!(html), local_name!("body"));
    let context = create_element(&sink, body, Vec::new());
    let builder = TreeBuilder::new_for_fragment(sink, context, None, TreeBuilderOpts::default());
    let opts = TokenizerOpts {
        initial_state: Some(builder.tokenizer_state_for_context_elem(false)),
        ..TokenizerOpts::default()
    };
    run(builder, opts, html)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_of_deepest(html: &Html) -> usize {
        html.tree
            .nodes()
            .map(|n| n.ancestors().count())
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn ordinary_pages_parse_as_scraper_parses_them() {
        let page = "<!doctype html><title>T</title><p>a<p>b<ul><li>x<li>y</ul><table><tr><td>1<td>2</table><script>if (a<b) {}</script><div><span>s</span></div>";
        let ours = parse_document(page);
        let theirs = Html::parse_document(page);
        assert_eq!(ours.html(), theirs.html());
    }

    #[test]
    fn fragments_parse_as_scraper_parses_them() {
        let feed = "<p>One &amp; <b>two</b><p>three<img src=x>";
        assert_eq!(
            parse_fragment(feed).html(),
            Html::parse_fragment(feed).html()
        );
    }

    #[test]
    fn deep_nesting_is_capped_and_keeps_the_text() {
        let n = 3_000;
        let mut page = String::from("<html><body>");
        for i in 0..n {
            page.push_str(&format!("<div>t{i} "));
        }
        page.push_str(&"</div>".repeat(n));
        page.push_str("<p>after</p></body></html>");
        let html = parse_document(&page);
        assert!(
            depth_of_deepest(&html) <= MAX_DEPTH + 4,
            "{}",
            depth_of_deepest(&html)
        );
        let text: String = html.root_element().text().collect();
        assert!(text.contains("t0 ") && text.contains(&format!("t{} ", n - 1)));
        // The end tags of dropped elements do not close the ones kept: "after" is the body's.
        let after = html
            .select(&scraper::Selector::parse("body > p").unwrap())
            .next()
            .map(|p| p.text().collect::<String>());
        assert_eq!(after.as_deref(), Some("after"));
    }
}
