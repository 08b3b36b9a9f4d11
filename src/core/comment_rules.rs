//! Comment rules: the classes that select a blog's comments on its post pages, whichever way they
//! were learned (the feed matching of `core::comments`, its class vocabulary, or the structure
//! of `core::comment_structure`), and which extraction in `core::comments` reads.

/// The learned comment rules of a blog.
#[derive(Debug, Clone, PartialEq)]
pub struct CommentRules {
    /// Class selecting each comment's content.
    pub content: String,
    /// Class selecting comment authors, if learned.
    pub author: Option<String>,
    /// Class selecting comment dates, if learned.
    pub date: Option<String>,
    /// Mean Dice of the content matching (0–1).
    pub score: f64,
}
