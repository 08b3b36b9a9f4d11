//! Known JavaScript comment widgets: how to recognise them in a page's raw HTML, which
//! controls reveal more comments (paper §4.1: "the only hand-maintained selectors"), and where
//! their rendered comments, authors and dates sit (they have no comment feeds to learn from).

/// A comment widget.
#[derive(Debug, Clone, Copy)]
pub struct Widget {
    /// Name for logs.
    pub name: &'static str,
    /// Substrings of raw HTML that reveal the widget on a page.
    pub markers: &'static [&'static str],
    /// CSS selectors of its "load more" / "show more replies" controls.
    pub show_more: &'static [&'static str],
    /// Class of a comment's text element in the rendered widget.
    pub content: &'static str,
    /// Class of the author element.
    pub author: Option<&'static str>,
    /// Class of the date element.
    pub date: Option<&'static str>,
}

/// The widgets everblog knows.
pub const WIDGETS: &[Widget] = &[
    Widget {
        name: "Disqus",
        markers: &["disqus_thread", "disqus.com/embed.js", "disqus_config"],
        show_more: &[
            "[data-action=\"more-posts\"]",
            ".load-more__button",
            "a.load-more-refresh",
            "[data-action=\"show-children\"]",
            "a.show-children",
            "[data-action=\"reveal\"]",
        ],
        content: "post-message",
        author: Some("author publisher-anchor-color"),
        date: Some("time-ago"),
    },
    Widget {
        name: "Isso",
        markers: &["data-isso", "isso-thread"],
        show_more: &["a.isso-load-hidden", ".isso-load-hidden"],
        content: "isso-text",
        author: Some("isso-author"),
        date: Some("isso-permalink"),
    },
    Widget {
        name: "LiveFyre",
        markers: &["livefyre", "fyre.co"],
        show_more: &[
            ".fyre-stream-more-container",
            ".fyre-stream-more",
            ".fyre-comment-expand",
            ".fyre-view-replies",
        ],
        content: "fyre-comment",
        author: Some("fyre-comment-username"),
        date: Some("fyre-comment-date"),
    },
    Widget {
        name: "Commento",
        markers: &["commento", "cdn.commento.io"],
        show_more: &[
            ".commento-more-button",
            ".commento-show-replies",
            "button.commento-load-more",
        ],
        content: "commento-body",
        author: Some("commento-name"),
        date: Some("commento-timeago"),
    },
];

/// Widgets whose markers occur in `raw_html`.
pub fn detect(raw_html: &str) -> Vec<&'static Widget> {
    WIDGETS
        .iter()
        .filter(|w| w.markers.iter().any(|m| raw_html.contains(m)))
        .collect()
}

/// Every widget's show-more selectors, then `extra` (configured), without duplicates.
pub fn show_more_selectors(extra: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in WIDGETS
        .iter()
        .flat_map(|w| w.show_more.iter().map(|s| s.to_string()))
        .chain(extra.iter().cloned())
    {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widgets_are_recognised_by_their_embed_markup() {
        let disqus =
            r#"<div id="disqus_thread"></div><script>var disqus_config = function () {};</script>"#;
        assert_eq!(
            detect(disqus).iter().map(|w| w.name).collect::<Vec<_>>(),
            ["Disqus"]
        );
        let isso = r#"<script data-isso="/isso/" src="/isso/js/embed.min.js"></script><section id="isso-thread"></section>"#;
        assert_eq!(detect(isso)[0].name, "Isso");
        assert!(detect("<p>no comments here</p>").is_empty());
        let all = show_more_selectors(&["button.more".into(), "a.show-children".into()]);
        assert_eq!(all.last().map(String::as_str), Some("button.more"));
        assert_eq!(all.iter().filter(|s| *s == "a.show-children").count(), 1);
    }
}
