//! Per-host request slots on PostgreSQL, shared by every worker on every machine: the earliest
//! time anyone may next request a host (`store::host_slots`).

use super::PgStore;
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use std::time::Duration;

/// Reserves a host's next slot in one statement (one round trip; a request of the crawl waits
/// for it): the slot is the later of now (the server's clock) and the host's `next_at`, and
/// `next_at` moves `$2` milliseconds past it. The upsert locks the host's row, so two workers
/// never get the same slot. Answers the new `next_at` and now, as the store writes instants.
const RESERVE: &str = r#"
WITH now AS (SELECT clock_timestamp() AS t)
INSERT INTO host_slots AS h (host, next_at)
SELECT $1, to_char((t + $2::BIGINT * interval '1 millisecond') AT TIME ZONE 'UTC',
                   'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') FROM now
ON CONFLICT (host) DO UPDATE SET next_at = to_char(
    (GREATEST(CAST(NULLIF(h.next_at, '') AS TIMESTAMPTZ), (SELECT t FROM now))
       + $2::BIGINT * interval '1 millisecond') AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
RETURNING next_at, to_char((SELECT t FROM now) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
"#;

impl PgStore {
    /// Reserves the next request slot of `host` for every worker on the database: the slot
    /// starts at the later of now (the server's clock) and the host's `next_at`, and the next
    /// one moves `delay` past it. Returns how long to wait (`Store::reserve_host`).
    ///
    /// # Errors
    /// The server failed.
    pub fn reserve_host(&mut self, host: &str, delay: Duration) -> Result<Duration> {
        let host = host.to_string();
        let delay_ms = i64::try_from(delay.as_millis()).unwrap_or(i64::MAX);
        self.call(move |c| {
            let r = c.query_one(RESERVE, &[&host, &delay_ms])?;
            let time = |i: usize| -> Result<DateTime<Utc>> {
                let t: String = r.get(i);
                Ok(DateTime::parse_from_rfc3339(&t)
                    .with_context(|| format!("host slot time {t:?} is not RFC 3339"))?
                    .with_timezone(&Utc))
            };
            let (next, now) = (time(0)?, time(1)?);
            let slot = next - chrono::Duration::milliseconds(delay_ms);
            Ok((slot - now).to_std().unwrap_or_default())
        })
    }
}
