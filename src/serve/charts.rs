//! Base: a blog's history drawn as SVG (issue 44, feature row 17) with plotters' SVG backend,
//! on the server, no script: posts and comments per month over the blog's life, the pages and
//! errors of each of its latest jobs with how long each ran, and what revisits found per month.
//! Each chart is a standalone SVG document ([`Chart::draw`]); the reader links them as images
//! (`serve::history`), `archive report` embeds them. No text of the blog is drawn: labels are
//! months, dates and figures.

use crate::store::{BlogHistory, JobState};
use plotters::prelude::*;

/// Chart size in pixels (width, height).
const SIZE: (u32, u32) = (880, 300);
const POSTS: RGBColor = RGBColor(0x1a, 0x73, 0xe8);
const COMMENTS: RGBColor = RGBColor(0xe3, 0x74, 0x00);
const ERRORS: RGBColor = RGBColor(0xc5, 0x22, 0x1f);
const MOVED: RGBColor = RGBColor(0x7b, 0x1f, 0xa2);

/// The charts of a blog's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chart {
    /// Posts (bars) and comments (line, right axis) per month over the blog's life.
    Activity,
    /// Pages fetched (bars), of them failed (red), and minutes (line, right axis) per job.
    Crawls,
    /// Edits, deletions and moves revisits found, per month.
    Revisits,
}

impl Chart {
    /// Every chart, in page order.
    pub const ALL: [Chart; 3] = [Chart::Activity, Chart::Crawls, Chart::Revisits];

    /// Its name in addresses and files (`activity`, `crawls`, `revisits`).
    pub fn name(self) -> &'static str {
        match self {
            Chart::Activity => "activity",
            Chart::Crawls => "crawls",
            Chart::Revisits => "revisits",
        }
    }

    /// The chart named `name`.
    pub fn named(name: &str) -> Option<Chart> {
        Chart::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Its title for people.
    pub fn title(self) -> &'static str {
        match self {
            Chart::Activity => "Posts and comments per month",
            Chart::Crawls => "Crawls: pages, errors and minutes per job",
            Chart::Revisits => "Revisits: edits, deletions and moves found per month",
        }
    }

    /// The chart of `history` as an SVG document.
    pub fn draw(self, history: &BlogHistory) -> String {
        let mut svg = String::new();
        let drawn = {
            let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
            match self {
                Chart::Activity => activity(&root, history),
                Chart::Crawls => crawls(&root, history),
                Chart::Revisits => revisits(&root, history),
            }
            .and_then(|()| root.present().map_err(|e| e.to_string()))
        };
        if let Err(e) = drawn {
            tracing::warn!(chart = self.name(), "chart not drawn: {e}");
        }
        svg
    }
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
/// One figure of a month.
type Figure = fn(&crate::store::MonthFigures) -> u64;
type Drawn = Result<(), String>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A chart with nothing to show yet: its title and why.
fn nothing(root: &Area<'_>, title: &str, why: &str) -> Drawn {
    root.fill(&WHITE).map_err(err)?;
    root.titled(title, ("sans-serif", 18))
        .map_err(err)?
        .draw(&Text::new(
            why.to_string(),
            (20, 40),
            ("sans-serif", 15).into_font().color(&BLACK.mix(0.6)),
        ))
        .map_err(err)
}

/// The index a segment label stands for (its centre); `None` for the segment's edges.
fn centre(v: &SegmentValue<usize>) -> Option<usize> {
    match v {
        SegmentValue::CenterOf(i) => Some(*i),
        _ => None,
    }
}

/// Pixels left between bars: none once they are too thin for it.
fn bar_gap(n: usize) -> u32 {
    if n > 200 {
        0
    } else {
        2
    }
}

/// Every `step`-th of `n` labels, so at most about 12 show.
fn label_step(n: usize) -> usize {
    n.div_ceil(12).max(1)
}

fn activity(root: &Area<'_>, h: &BlogHistory) -> Drawn {
    let title = Chart::Activity.title();
    let months = &h.months;
    if months.iter().all(|m| m.posts == 0 && m.comments == 0) {
        return nothing(root, title, "No dated post archived yet.");
    }
    root.fill(&WHITE).map_err(err)?;
    let n = months.len();
    let most_posts = months.iter().map(|m| m.posts).max().unwrap_or(0).max(1);
    let most_comments = months.iter().map(|m| m.comments).max().unwrap_or(0).max(1);
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(44)
        .right_y_label_area_size(44)
        .build_cartesian_2d(
            (0..n - 1).into_segmented(),
            0..most_posts + most_posts / 10 + 1,
        )
        .map_err(err)?
        .set_secondary_coord(
            (0..n - 1).into_segmented(),
            0..most_comments + most_comments / 10 + 1,
        );
    let step = label_step(n);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n + 1)
        .x_label_formatter(&|v| {
            centre(v)
                .filter(|i| i % step == 0)
                .and_then(|i| months.get(i))
                .map(|m| m.month.clone())
                .unwrap_or_default()
        })
        .y_desc("posts")
        .draw()
        .map_err(err)?;
    chart
        .configure_secondary_axes()
        .y_desc("comments")
        .draw()
        .map_err(err)?;
    let bars = Histogram::vertical(&chart)
        .style(POSTS.mix(0.8).filled())
        .margin(bar_gap(n))
        .data(months.iter().enumerate().map(|(i, m)| (i, m.posts)));
    chart
        .draw_series(bars)
        .map_err(err)?
        .label("posts")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], POSTS.filled()));
    chart
        .draw_secondary_series(LineSeries::new(
            months
                .iter()
                .enumerate()
                .map(|(i, m)| (SegmentValue::CenterOf(i), m.comments)),
            COMMENTS.stroke_width(2),
        ))
        .map_err(err)?
        .label("comments")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], COMMENTS.stroke_width(2)));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(err)
}

fn crawls(root: &Area<'_>, h: &BlogHistory) -> Drawn {
    let title = Chart::Crawls.title();
    let jobs = &h.jobs;
    if jobs.is_empty() {
        return nothing(root, title, "No job has finished yet.");
    }
    root.fill(&WHITE).map_err(err)?;
    let n = jobs.len();
    let most_pages = jobs.iter().map(|j| j.pages).max().unwrap_or(0).max(1);
    let minutes = |j: &crate::store::JobRun| {
        (j.finished_at - j.started_at).num_milliseconds().max(0) as f64 / 60_000.0
    };
    let longest = jobs.iter().map(minutes).fold(0.0, f64::max).max(0.1);
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(44)
        .right_y_label_area_size(44)
        .build_cartesian_2d(
            (0..n - 1).into_segmented(),
            0..most_pages + most_pages / 10 + 1,
        )
        .map_err(err)?
        .set_secondary_coord((0..n - 1).into_segmented(), 0.0..longest * 1.1);
    let step = label_step(n);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n + 1)
        .x_label_formatter(&|v| {
            centre(v)
                .filter(|i| i % step == 0)
                .and_then(|i| jobs.get(i))
                .map(|j| j.finished_at.format("%m-%d %H:%M").to_string())
                .unwrap_or_default()
        })
        .y_desc("pages")
        .draw()
        .map_err(err)?;
    chart
        .configure_secondary_axes()
        .y_desc("minutes")
        .draw()
        .map_err(err)?;
    let bars = Histogram::vertical(&chart)
        .style_func(|i, _| {
            let failed = jobs
                .get(*centre(i).get_or_insert(0))
                .is_some_and(|j| j.state == JobState::Failed);
            if failed {
                ERRORS.mix(0.35).filled()
            } else {
                POSTS.mix(0.8).filled()
            }
        })
        .margin(bar_gap(n))
        .data(jobs.iter().enumerate().map(|(i, j)| (i, j.pages)));
    chart
        .draw_series(bars)
        .map_err(err)?
        .label("pages fetched")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], POSTS.filled()));
    let bars = Histogram::vertical(&chart)
        .style(ERRORS.filled())
        .margin(bar_gap(n))
        .data(jobs.iter().enumerate().map(|(i, j)| (i, j.errors)));
    chart
        .draw_series(bars)
        .map_err(err)?
        .label("failed")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], ERRORS.filled()));
    chart
        .draw_secondary_series(LineSeries::new(
            jobs.iter()
                .enumerate()
                .map(|(i, j)| (SegmentValue::CenterOf(i), minutes(j))),
            BLACK.stroke_width(2),
        ))
        .map_err(err)?
        .label("minutes")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], BLACK.stroke_width(2)));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(err)
}

fn revisits(root: &Area<'_>, h: &BlogHistory) -> Drawn {
    let title = Chart::Revisits.title();
    let found: Vec<_> = h
        .months
        .iter()
        .skip_while(|m| m.edits + m.gone + m.moved == 0)
        .collect();
    if found.is_empty() {
        return nothing(
            root,
            title,
            "No edit, deletion or move found yet: every revisit found the post as archived.",
        );
    }
    root.fill(&WHITE).map_err(err)?;
    let n = found.len();
    let most = found
        .iter()
        .map(|m| m.edits.max(m.gone).max(m.moved))
        .max()
        .unwrap_or(0)
        .max(1);
    // Three bars a month: each month is three units wide, plus a gap.
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(44)
        .build_cartesian_2d((0..4 * n - 2).into_segmented(), 0..most + most / 10 + 1)
        .map_err(err)?;
    let step = label_step(n);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(4 * n + 1)
        .x_label_formatter(&|v| {
            centre(v)
                .filter(|i| i % 4 == 1 && (i / 4) % step == 0)
                .and_then(|i| found.get(i / 4))
                .map(|m| m.month.clone())
                .unwrap_or_default()
        })
        .y_desc("posts")
        .draw()
        .map_err(err)?;
    let series: [(&str, RGBColor, Figure); 3] = [
        ("edited", POSTS, |m| m.edits),
        ("deleted", ERRORS, |m| m.gone),
        ("moved", MOVED, |m| m.moved),
    ];
    for (k, (label, color, value)) in series.into_iter().enumerate() {
        chart
            .draw_series(
                Histogram::vertical(&chart)
                    .style(color.filled())
                    .margin(1)
                    .data(found.iter().enumerate().map(|(i, m)| (4 * i + k, value(m)))),
            )
            .map_err(err)?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{JobKind, JobRun, MonthFigures};
    use chrono::{TimeZone, Utc};

    fn history() -> BlogHistory {
        let month = |m: &str, posts, comments, edits| MonthFigures {
            month: m.into(),
            posts,
            comments,
            edits,
            ..MonthFigures::default()
        };
        let at = |h| Utc.with_ymd_and_hms(2026, 12, 1, h, 0, 0).unwrap();
        BlogHistory {
            months: vec![
                month("2026-10", 3, 10, 0),
                month("2026-11", 0, 0, 0),
                month("2026-12", 5, 2, 1),
            ],
            jobs: vec![
                JobRun {
                    kind: JobKind::NewCrawl,
                    state: JobState::Done,
                    started_at: at(1),
                    finished_at: at(2),
                    pages: 40,
                    errors: 2,
                },
                JobRun {
                    kind: JobKind::UpdateCrawl,
                    state: JobState::Failed,
                    started_at: at(3),
                    finished_at: at(4),
                    pages: 3,
                    errors: 3,
                },
            ],
        }
    }

    #[test]
    fn each_chart_draws_a_bar_per_month_or_job() {
        let h = history();
        let svg = Chart::Activity.draw(&h);
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{svg}"
        );
        assert!(svg.contains("2026-10") && svg.contains("posts") && svg.contains("comments"));
        let svg = Chart::Crawls.draw(&h);
        assert!(
            svg.contains("pages fetched") && svg.contains("minutes"),
            "{svg}"
        );
        let svg = Chart::Revisits.draw(&h);
        assert!(svg.contains("edited") && svg.contains("2026-12"), "{svg}");
    }

    #[test]
    fn an_empty_history_says_so() {
        for c in Chart::ALL {
            let svg = c.draw(&BlogHistory::default());
            assert!(svg.contains(c.title()), "{svg}");
            assert!(svg.contains("yet"), "{svg}");
        }
        assert_eq!(Chart::named("crawls"), Some(Chart::Crawls));
        assert_eq!(Chart::named("x"), None);
    }
}
