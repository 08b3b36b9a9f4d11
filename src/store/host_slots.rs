//! Per-host request slots shared by every process on the database: the earliest time anyone may
//! next request a host, so politeness holds across jobs and daemons (`fetch::politeness`
//! reaches them through [`StoreGate`]).

use super::db::ts;
use super::{utc_col, Store};
use anyhow::Result;
use chrono::Utc;
use rusqlite::{params, OptionalExtension};
use std::time::Duration;

/// The database's host slots as politeness's [`crate::fetch::politeness::HostGate`], on a
/// connection of its own.
pub struct StoreGate(std::sync::Mutex<Store>);

impl StoreGate {
    /// A gate on its own connection to the database `db` names.
    ///
    /// # Errors
    /// The database cannot be opened.
    pub fn open(db: &super::DatabaseSettings) -> Result<StoreGate> {
        Ok(StoreGate(std::sync::Mutex::new(Store::open(db)?)))
    }
}

impl crate::fetch::politeness::HostGate for StoreGate {
    fn reserve(&self, host: &str, delay: Duration) -> Duration {
        let mut store = self.0.lock().unwrap_or_else(|e| e.into_inner());
        store.reserve_host(host, delay).unwrap_or_else(|e| {
            tracing::warn!(host, error = %format!("{e:#}"), "shared host slot unavailable; spacing requests in this process only");
            Duration::ZERO
        })
    }
}

impl super::SqliteStore {
    pub(super) fn reserve_host(&mut self, host: &str, delay: Duration) -> Result<Duration> {
        self.write(|tx| {
            let now = Utc::now();
            let next = tx
                .query_row(
                    "SELECT next_at FROM host_slots WHERE host = ?1",
                    [host],
                    |r| utc_col(r, 0),
                )
                .optional()?
                .flatten();
            let slot = next.filter(|n| *n > now).unwrap_or(now);
            let after = crate::core::schedule::after(slot, delay);
            tx.execute(
                "INSERT INTO host_slots (host, next_at) VALUES (?1, ?2) ON CONFLICT (host) DO UPDATE SET next_at = excluded.next_at",
                params![host, ts(after)],
            )?;
            Ok((slot - now).to_std().unwrap_or_default())
        })
    }
}
