//! `archive render`: pages rendered in headless Chromium as a crawl would render them; one
//! page's DOM, or many pages' sizes and the throughput.

use crate::config::Config;
use crate::crawl::traffic::BrowserTraffic;
use crate::render::network::Network;
use crate::render::Renderer;
use anyhow::{bail, Result};
use std::sync::Arc;

/// Renders `urls`: one prints its DOM (summary on stderr), several print a line each and the
/// pages per second. The browser's requests go through the configured fetcher (allowed to
/// reach the hosts of `urls` even when private, as a blog added by them), unless `direct`.
pub(super) async fn render_pages(urls: &[String], config: &Config, direct: bool) -> Result<()> {
    let renderer = Arc::new(Renderer::new(config.render.clone()));
    let traffic = if direct {
        None
    } else {
        let fetcher = config
            .fetcher(None)?
            .for_blog(urls.iter().map(String::as_str))?;
        Some(BrowserTraffic::new(fetcher))
    };
    let network = || traffic.clone().map(|t| t as Arc<dyn Network>);
    if let [url] = urls {
        let r = renderer.render(url, network(), &Default::default()).await;
        renderer.shutdown().await;
        let r = r?;
        eprintln!(
            "rendered {} → {}: {} clicks, {} iframes inlined, {} bytes{}",
            url,
            r.final_url,
            r.clicks,
            r.frames,
            r.html.len(),
            r.notes.iter().map(|n| format!("; {n}")).collect::<String>()
        );
        if let Some(t) = &traffic {
            eprintln!("{}", t.summary());
        }
        println!("{}", r.html);
        return Ok(());
    }
    let started = std::time::Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for u in urls {
        let (renderer, u, network) = (renderer.clone(), u.clone(), network());
        set.spawn(async move {
            let r = renderer.render(&u, network, &Default::default()).await;
            (u, r)
        });
    }
    let mut failed = 0;
    while let Some(Ok((u, r))) = set.join_next().await {
        match r {
            Ok(r) => println!("{u}\t{}\t{}", r.html.len(), r.clicks),
            Err(e) => {
                failed += 1;
                println!("{u}\terror: {e:#}");
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let stats = renderer.stats();
    renderer.shutdown().await;
    eprintln!(
        "rendered {} pages in {secs:.1} s: {:.2} pages/s with {} tabs; {failed} failed; {} browser launches",
        urls.len(),
        urls.len() as f64 / secs,
        config.render.tabs,
        stats.launches
    );
    if let Some(t) = &traffic {
        eprintln!("{}", t.summary());
    }
    if failed > 0 {
        bail!("{failed} of {} pages could not be rendered", urls.len());
    }
    Ok(())
}
