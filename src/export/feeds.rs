//! What the blog-native exports (`export::atom`, `export::jsonfeed`, `export::wxr`) share:
//! one directory of documents per blog named by [`blog_slug`], the [`Documents`] they are
//! written to, and the small text helpers XML and WordPress need.

use anyhow::Result;
use std::borrow::Cow;
use std::io::Write;

/// Where one blog's documents go: a directory (`--output DIR`: `DIR/<blog slug>/<name>`) or
/// stdout (one document only). Implemented by `cli::export`, which owns the files.
pub trait Documents {
    /// Writes the document `name` (a file name such as `index.atom`, no directory) with
    /// `write`, which gets a buffered writer.
    ///
    /// # Errors
    /// `write` failed, or the document could not be created or committed (a full disk; a
    /// second document to stdout).
    fn document(
        &mut self,
        name: &str,
        write: &mut dyn FnMut(&mut dyn Write) -> Result<()>,
    ) -> Result<()>;
}

/// The directory name of a blog's documents: its home URL's host, port and path, lower case,
/// every run of characters other than `a-z`, `0-9` and `.` made one `-`
/// (`http://Blog.example:8080/en/` → `blog.example-8080-en`). Two blogs can share a slug
/// (`a.example/x-y` and `a.example/x/y`): callers make them unique.
pub fn blog_slug(home_url: &str) -> String {
    let raw = match url::Url::parse(home_url) {
        Ok(u) => format!(
            "{}-{}-{}",
            u.host_str().unwrap_or(""),
            u.port().map(|p| p.to_string()).unwrap_or_default(),
            u.path()
        ),
        Err(_) => home_url.to_string(),
    };
    let slug = dashed(&raw.to_lowercase(), |c| {
        c.is_ascii_alphanumeric() || c == '.'
    });
    if slug.is_empty() {
        "blog".into()
    } else {
        slug
    }
}

/// `s` with each run of characters `keep` refuses made one `-`, no `-` at either end.
pub(crate) fn dashed(s: &str, keep: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if keep(c) {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// `s` without the characters XML 1.0 forbids (C0 controls other than tab, newline and
/// carriage return; U+FFFE, U+FFFF; lone surrogates cannot occur in a `str`). Escaping is the
/// writer's; these cannot be written at all.
pub(crate) fn xml_chars(s: &str) -> Cow<'_, str> {
    let bad = |c: char| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{FFFE}' || c == '\u{FFFF}'
    };
    if s.chars().any(bad) {
        Cow::Owned(s.chars().filter(|&c| !bad(c)).collect())
    } else {
        Cow::Borrowed(s)
    }
}

/// The categories and tags to export for a post: `Post::tags` (categories and tags the page
/// gives, in page order, not told apart).
pub(crate) fn tags_of(post: &crate::store::Post) -> &[String] {
    &post.tags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_name_host_port_and_path() {
        assert_eq!(
            blog_slug("http://Blog.example:8080/en/"),
            "blog.example-8080-en"
        );
        assert_eq!(blog_slug("https://a.example/"), "a.example");
        assert_eq!(blog_slug("http://127.0.0.1:8000/"), "127.0.0.1-8000");
        assert_eq!(blog_slug("not a url"), "not-a-url");
    }

    #[test]
    fn xml_chars_drops_only_forbidden_ones() {
        assert_eq!(xml_chars("a\u{c}b\tc\u{FFFF}"), "ab\tc");
        assert!(matches!(xml_chars("plain <&>"), Cow::Borrowed(_)));
    }
}
