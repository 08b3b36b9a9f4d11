//! The tests that need PostgreSQL: each starts a private cluster (`tests/common/pg_cluster.rs`,
//! Debian's `postgresql`) and says it skips the PostgreSQL half where it is not installed. The
//! store's concerns on both back ends, and the real `archive` binary archiving, migrating and
//! sharing jobs on PostgreSQL. One test binary (one link of the crate) for all of them; each
//! file is a module, run as threads of one process.

#[path = "../common/mod.rs"]
mod common;

/// The back ends are compared on what a crawl stores, without a browser: blogs are added with
/// `--render never` (`EVERBLOG_RENDER`) unless a test asks otherwise.
const RENDER_BY_DEFAULT: Option<&str> = Some("never");

mod hostile_input;
mod postgres_archive;
mod postgres_daemons;
mod postgres_migrate;
mod store_backends;
mod store_revisits;
mod store_round_trips;
mod store_round_trips_posts;
