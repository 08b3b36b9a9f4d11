//! `archive migrate`: the whole archive to another database, with a progress bar and a
//! report of what was copied and verified.

use crate::store::transfer::{self, Step};
use crate::store::DatabaseSettings;
use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Moves the archive at `from` into `to` ([`transfer::transfer`]) and prints, per table, the
/// rows it holds, how many this run copied and their digest.
///
/// # Errors
/// The move's, one line.
pub fn migrate(from: &DatabaseSettings, to: &DatabaseSettings) -> Result<()> {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix:>9} [{bar:30}] {human_pos}/{human_len} rows {per_sec} eta {eta} {wide_msg}",
        )
        .expect("static template")
        .progress_chars("=> "),
    );
    let moved = transfer::transfer(from, to, |step| match step {
        Step::Copy { rows, done } => {
            bar.set_prefix("copying");
            bar.set_length(rows);
            bar.set_position(done.min(rows));
            bar.reset_eta();
        }
        Step::Table(t) => bar.set_message(t.to_string()),
        Step::Rows(n) => bar.inc(n),
        Step::Verify { rows } => {
            bar.set_prefix("verifying");
            bar.set_message("");
            bar.set_length(rows);
            bar.set_position(0);
            bar.reset_eta();
        }
    });
    bar.finish_and_clear();
    let moved = moved?;
    println!("{:<18} {:>10} {:>10}  digest", "table", "rows", "copied");
    for m in &moved {
        println!(
            "{:<18} {:>10} {:>10}  {}",
            m.table, m.digest.rows, m.copied, m.digest
        );
    }
    let rows: u64 = moved.iter().map(|m| m.digest.rows).sum();
    println!(
        "moved {} to {}: {rows} rows in {} tables, verified (counts and digests equal on both sides); point the daemons at {} now",
        from.shown(),
        to.shown(),
        moved.len(),
        to.shown()
    );
    Ok(())
}
