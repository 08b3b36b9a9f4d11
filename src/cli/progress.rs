//! The progress line long commands show on stderr ([`Bar`]), fed by a crawl's progress.

use std::time::Duration;

/// A progress line on stderr for long work.
pub(super) struct Bar(pub(super) indicatif::ProgressBar);

impl Bar {
    pub(super) fn new(name: &str) -> Bar {
        let pb =
            indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        pb.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {prefix} {elapsed} {wide_msg}")
                .expect("static template"),
        );
        pb.set_prefix(name.to_string());
        pb.enable_steady_tick(Duration::from_millis(120));
        Bar(pb)
    }
}

impl crate::crawl::Progress for Bar {
    fn update(&self, pages: u64, posts: u64, errors: u64, queued: u64) {
        self.0.set_message(format!(
            "pages fetched {pages} · posts {posts} · errors {errors} · queued {queued}"
        ));
    }
    fn phase(&self, message: &str) {
        self.0.set_message(message.to_string());
    }
}
