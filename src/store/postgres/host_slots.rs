//! Per-host request slots on PostgreSQL, shared by every worker on every machine: the earliest
//! time anyone may next request a host (`store::host_slots`).

use super::{after, server_now, PgStore};
use crate::store::ts;
use anyhow::Result;
use chrono::{DateTime, Utc};
use std::time::Duration;

impl PgStore {
    /// Reserves the next request slot of `host` for every worker on the database: the slot
    /// starts at the later of now (the server's clock) and the host's `next_at`, and the next
    /// one moves `delay` past it. Returns how long to wait (`Store::reserve_host`). The host's
    /// row is locked for the transaction, so two workers never get the same slot.
    ///
    /// # Errors
    /// The server failed.
    pub fn reserve_host(&mut self, host: &str, delay: Duration) -> Result<Duration> {
        let host = host.to_string();
        self.write(move |tx| {
            // '' sorts before every instant: a new host's slot is now.
            tx.execute(
                "INSERT INTO host_slots (host, next_at) VALUES ($1, '') ON CONFLICT DO NOTHING",
                &[&host],
            )?;
            let next: String = tx
                .query_one(
                    "SELECT next_at FROM host_slots WHERE host = $1 FOR UPDATE",
                    &[&host],
                )?
                .get(0);
            let now = server_now(tx)?;
            let next = DateTime::parse_from_rfc3339(&next)
                .ok()
                .map(|t| t.with_timezone(&Utc));
            let slot = next.filter(|n| *n > now).unwrap_or(now);
            tx.execute(
                "UPDATE host_slots SET next_at = $2 WHERE host = $1",
                &[&host, &ts(after(slot, delay))],
            )?;
            Ok((slot - now).to_std().unwrap_or_default())
        })
    }
}
