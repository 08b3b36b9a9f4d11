//! A write whose answer is taken later ([`Pending`]): on PostgreSQL the caller goes on while
//! the connection thread runs it (`store::postgres`); on SQLite it is answered at once.

use super::db;
use anyhow::{Context, Result};

/// A write sent to the store whose answer is taken later ([`Store::record_page_later`](super::Store::record_page_later)): the
/// caller does other work while PostgreSQL runs it.
#[must_use = "a write's answer says whether it was written"]
pub struct Pending<R>(pub(super) Answer<R>);

pub(super) enum Answer<R> {
    Ready(Result<R>),
    Sent(std::sync::mpsc::Receiver<Result<R>>),
}

impl<R> Pending<R> {
    /// A write sent to a connection thread, answered on `answered`.
    pub(crate) fn sent(answered: std::sync::mpsc::Receiver<Result<R>>) -> Pending<R> {
        Pending(Answer::Sent(answered))
    }

    /// Waits for the write's answer (inside a tokio runtime, through the store's one bridge,
    /// `store::db::wait`).
    ///
    /// # Errors
    /// The write failed (it was rolled back), or the PostgreSQL connection thread stopped.
    pub fn wait(self) -> Result<R> {
        match self.0 {
            Answer::Ready(out) => out,
            Answer::Sent(answered) => db::wait(|| answered.recv())
                .context("the PostgreSQL connection thread has stopped")?,
        }
    }
}
