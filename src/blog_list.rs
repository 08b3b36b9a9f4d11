//! Blog lists for `archive add --from FILE`: one URL per line, or an OPML subscription list (what
//! feed readers export).

use anyhow::{bail, Context, Result};
use std::io::Read;
use std::path::Path;

/// The blog URLs listed in `path` (`-`: stdin), in file order, without duplicates.
///
/// Plain text: one URL per line; blank lines and `#` comments are skipped. OPML (detected by
/// its `<opml` root): the `xmlUrl` of every outline, nested ones included (`htmlUrl` when an
/// outline has no `xmlUrl`).
///
/// # Errors
/// The file cannot be read, is OPML that does not parse, lists nothing, or a line is not an
/// http(s) URL (the error names the file and line).
pub fn read(path: &Path) -> Result<Vec<String>> {
    let name = path.display().to_string();
    let mut text = String::new();
    if name == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the blog list from stdin")?;
    } else {
        text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the blog list {name}"))?;
    }
    let urls = parse(&text, &name)?;
    if urls.is_empty() {
        bail!("{name} lists no blog: write one feed or blog URL per line, or give an OPML file");
    }
    Ok(urls)
}

/// [`read`] on text already in memory; `name` names it in errors.
///
/// # Errors
/// As [`read`].
pub fn parse(text: &str, name: &str) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let head = text.trim_start_matches('\u{feff}').trim_start();
    if head.starts_with("<?xml")
        || head
            .get(..5)
            .is_some_and(|h| h.eq_ignore_ascii_case("<opml"))
    {
        let doc = opml::OPML::from_str(text)
            .map_err(|e| anyhow::anyhow!("{name} is not valid OPML: {e}"))?;
        fn walk(outlines: &[opml::Outline], out: &mut Vec<String>) {
            for o in outlines {
                if let Some(u) = o.xml_url.as_ref().or(o.html_url.as_ref()) {
                    out.push(u.trim().to_string());
                }
                walk(&o.outlines, out);
            }
        }
        walk(&doc.body.outlines, &mut out);
    } else {
        for (i, line) in text.lines().enumerate() {
            let line = line.split_once('#').map_or(line, |(l, _)| l).trim();
            let line = if line.is_empty() { continue } else { line };
            match url::Url::parse(line) {
                Ok(u) if matches!(u.scheme(), "http" | "https") => out.push(line.to_string()),
                _ => bail!(
                    "{name} line {}: {line:?} is not an http(s) URL; give one feed or blog URL per line",
                    i + 1
                ),
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|u| seen.insert(u.clone()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lists_skip_comments_and_duplicates() {
        let got = parse(
            "# my blogs\nhttps://a.example/feed/\n\n  https://b.example/  # friend\nhttps://a.example/feed/\n",
            "list.txt",
        )
        .unwrap();
        assert_eq!(got, ["https://a.example/feed/", "https://b.example/"]);
        let e = parse("https://a.example/\nnot a url\n", "list.txt").unwrap_err();
        assert_eq!(
            e.to_string(),
            "list.txt line 2: \"not a url\" is not an http(s) URL; give one feed or blog URL per line"
        );
    }

    #[test]
    fn opml_outlines_nested() {
        let opml = r#"<?xml version="1.0" encoding="UTF-8"?>
<opml version="2.0"><head><title>subs</title></head><body>
  <outline text="Tech">
    <outline type="rss" text="A" xmlUrl="https://a.example/atom.xml" htmlUrl="https://a.example/"/>
    <outline type="rss" text="B" xmlUrl="https://b.example/feed/"/>
  </outline>
  <outline text="C" htmlUrl="https://c.example/"/>
</body></opml>"#;
        assert_eq!(
            parse(opml, "subs.opml").unwrap(),
            [
                "https://a.example/atom.xml",
                "https://b.example/feed/",
                "https://c.example/"
            ]
        );
        assert!(parse("<opml><body>", "bad.opml")
            .unwrap_err()
            .to_string()
            .starts_with("bad.opml is not valid OPML"));
    }
}
