//! `archive extract`: one page's post record as JSON, by a blog's rules or the generic
//! extractor alone.

use super::archive::{find, open_to_read};
use crate::core::extract::{ExtractContext, Extracted, ExtractedBy};
use crate::core::page::Page;
use crate::fetch::{self, Response};
use crate::store::DatabaseSettings;
use crate::store::{Comment, Gap, NewPost};
use anyhow::{bail, Context, Result};
use chrono::{DateTime, FixedOffset, Utc};
use std::io::Read;
use std::path::Path;

/// What `archive extract` prints.
#[derive(serde::Serialize)]
struct Record {
    url: String,
    title: Option<String>,
    authors: Vec<String>,
    published: Option<DateTime<FixedOffset>>,
    content_html: String,
    content_text: String,
    comments: Vec<Comment>,
    extracted_by: Option<ExtractedBy>,
    gaps: Vec<Gap>,
}

/// `archive extract [--url URL] [--blog BLOG] FILE|-`.
///
/// # Errors
/// FILE unreadable, `--url` not a URL, the blog unknown or never learned, or no article on the
/// page.
pub(super) fn extract(
    db: &DatabaseSettings,
    file: &Path,
    url: Option<&str>,
    blog: Option<&str>,
    cap: (usize, &str),
) -> Result<()> {
    let body = read_input(file, cap)?;
    let head = &body[..body.len().min(4096)];
    if head.contains(&0) || !body.contains(&b'<') {
        bail!(
            "{}: not HTML (binary, or no markup at all); give a saved web page",
            file.display()
        );
    }
    let url = match url {
        Some(u) => url::Url::parse(u)
            .with_context(|| format!("--url {u}: not a URL; give the page's absolute URL"))?,
        None => {
            let path = if file == Path::new("-") {
                Path::new("/dev/stdin").to_path_buf()
            } else {
                std::path::absolute(file)?
            };
            url::Url::from_file_path(&path).map_err(|()| {
                anyhow::anyhow!("{}: no file URL for this path; give --url", path.display())
            })?
        }
    };
    let response = Response {
        url: url.to_string(),
        final_url: url.to_string(),
        status: 200,
        headers: Vec::new(),
        body,
        fetched_at: Utc::now(),
    };
    let record = match blog {
        Some(b) => {
            let store = open_to_read(db)?;
            let blog = find(&store, b)?;
            let read = crate::crawl::read_page(&store, &blog, &response).with_context(|| {
                format!(
                    "{}: its rules could not be loaded; has `archive crawl` learned them?",
                    blog.home_url
                )
            })?;
            match read {
                Ok((post, comments)) => from_post(post, comments),
                Err(d) => bail!("{}: no post on this page: {}", file.display(), d.reason),
            }
        }
        None => {
            let page = Page::parse(&fetch::decode(&response));
            let ctx = ExtractContext {
                offset: FixedOffset::east_opt(0).expect("zero offset"),
                fetched_at: response.fetched_at,
            };
            if crate::core::listing::is_listing(&page, &url) {
                bail!(
                    "{}: no article on this page: it lists posts (give --blog for a blog's own judgement)",
                    file.display()
                );
            }
            match crate::core::fallback::extract(&page, &ctx) {
                Some(x) => from_extracted(url.to_string(), x),
                None => bail!("{}: no article on this page: no text block", file.display()),
            }
        }
    };
    println!("{}", serde_json::to_string_pretty(&record)?);
    Ok(())
}

/// Reads FILE (or stdin for `-`) up to `cap` bytes: a larger page is refused, as the crawl
/// refuses it (`[fetch] max_page_mb`), instead of filling memory with it.
fn read_input(file: &Path, (cap, setting): (usize, &str)) -> Result<Vec<u8>> {
    let too_large = || {
        anyhow::anyhow!(
            "{}: larger than {setting} ({:.0} MB), the largest page a crawl reads; raise {setting} in the configuration to read it",
            file.display(),
            cap as f64 / (1024.0 * 1024.0)
        )
    };
    let mut body = Vec::new();
    if file == Path::new("-") {
        std::io::stdin()
            .take(cap as u64 + 1)
            .read_to_end(&mut body)
            .context("stdin: could not be read")?;
    } else {
        let unreadable = || {
            format!(
                "{}: could not be read; give an HTML file or - for stdin",
                file.display()
            )
        };
        let f = std::fs::File::open(file).with_context(unreadable)?;
        f.take(cap as u64 + 1)
            .read_to_end(&mut body)
            .with_context(unreadable)?;
    }
    if body.len() > cap {
        return Err(too_large());
    }
    Ok(body)
}

fn from_post(p: NewPost, comments: Vec<Comment>) -> Record {
    Record {
        url: p.url,
        title: p.title,
        authors: p.authors,
        published: p.published,
        content_html: p.content_html,
        content_text: p.content_text,
        comments,
        extracted_by: p.extracted_by,
        gaps: p.gaps,
    }
}

fn from_extracted(url: String, x: Extracted) -> Record {
    Record {
        url,
        title: x.title,
        authors: x.authors,
        published: x.published,
        content_html: x.content_html,
        content_text: x.content_text,
        comments: Vec::new(),
        extracted_by: Some(x.extracted_by),
        gaps: x
            .gaps
            .into_iter()
            .map(|(field, reason)| Gap { field, reason })
            .collect(),
    }
}
