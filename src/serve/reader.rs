//! [`Reader`], what every request of `archive serve` shares: where the archive is, a pool of
//! read-only connections used off the async threads, the credentials, the page size, the
//! sanitised HTML kept per version. Imports no page module.

use super::auth;
use super::failure::Failure;
use super::views::SanitizedCache;
use crate::store::{DatabaseSettings, Store};
use std::sync::{Arc, Mutex};

/// Shared by every request: where the archive is, a pool of read-only connections, the
/// credentials.
pub struct Reader {
    db: DatabaseSettings,
    pool: Mutex<Vec<Store>>,
    auth: Option<Arc<auth::Credentials>>,
    /// Posts or hits per page.
    pub page_size: u32,
    /// Connections kept in `pool`.
    connections: usize,
    /// A search ranks the newest this many matches (`[serve] search_rank_window`).
    pub search_rank_window: u32,
    /// Posts' and comments' HTML made safe, kept per version ([`SANITIZED_BYTES`]).
    pub sanitized: SanitizedCache,
}

/// Bytes of sanitised HTML the reader keeps ([`SanitizedCache`]): the articles and comments
/// of a few hundred recently read posts.
pub const SANITIZED_BYTES: usize = 32 * 1024 * 1024;

impl Reader {
    /// The reader of the archive at `db` (opened on demand, read-only): `auth` checks every
    /// request when set, `page_size` posts or hits a page (1 to 1,000), `connections` kept open
    /// between requests, a search ranking its newest `search_rank_window` matches (at least 1).
    pub fn new(
        db: DatabaseSettings,
        auth: Option<Arc<auth::Credentials>>,
        page_size: u32,
        connections: usize,
        search_rank_window: u32,
    ) -> Reader {
        Reader {
            db,
            pool: Mutex::new(Vec::new()),
            auth,
            page_size: page_size.clamp(1, 1000),
            connections,
            search_rank_window: search_rank_window.max(1),
            sanitized: SanitizedCache::new(SANITIZED_BYTES),
        }
    }

    /// The credentials every request must give, when the archive needs them (`--auth`).
    pub fn auth(&self) -> Option<&Arc<auth::Credentials>> {
        self.auth.as_ref()
    }

    /// Runs `f` on a pooled read-only connection, off the async threads.
    ///
    /// # Errors
    /// The database could not be opened, or `f` failed.
    pub async fn read<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&Store) -> Result<T, Failure> + Send + 'static,
    ) -> Result<T, Failure> {
        let me = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let store = match me.pool.lock().expect("pool lock").pop() {
                Some(s) => s,
                None => Store::open_read_only(&me.db)?,
            };
            let out = f(&store);
            let mut pool = me.pool.lock().expect("pool lock");
            if pool.len() < me.connections {
                pool.push(store);
            }
            out
        })
        .await
        .map_err(|e| Failure::Internal(anyhow::anyhow!("reader task: {e}")))?
    }
}
