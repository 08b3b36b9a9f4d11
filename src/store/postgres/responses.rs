//! Responses on PostgreSQL: only the streaming of every capture, whose rows arrive from the
//! server on a stream thread of their own while the caller takes them (`store::responses` has
//! everything else, once for both back ends).

use super::PgStore;
use crate::fetch::Response;
use crate::store::db::pg_row;
use crate::store::responses::{response_columns, response_row};
use crate::store::{BlogId, ResponseId};
use anyhow::Result;

impl PgStore {
    /// Calls `f` with every stored response, oldest first, one at a time (rows stream from the
    /// server: memory stays flat): `(id, response)`; `blog` limits it to one blog, `after` to
    /// ids above it. Returns how many there were (`Store::for_each_capture`). Not retried on
    /// a lost connection: `f` has seen part of the rows.
    ///
    /// # Errors
    /// The server failed, a body did not inflate, or `f` failed.
    pub fn for_each_capture(
        &self,
        blog: Option<BlogId>,
        after: ResponseId,
        mut f: impl FnMut(ResponseId, Response) -> Result<()>,
    ) -> Result<u64> {
        let (blog, after) = (blog.map(BlogId::get), after.get());
        let rows = self.stream(move |c, rows| {
            let mut it = c.query_raw(
                &format!(
                    "SELECT id, {} FROM responses WHERE ($1::BIGINT IS NULL OR blog_id = $1) AND id > $2 ORDER BY id",
                    response_columns()
                ),
                [&blog as &(dyn postgres::types::ToSql + Sync), &after],
            )?;
            while let Some(row) = postgres::fallible_iterator::FallibleIterator::next(&mut it)? {
                let one = pg_row(&row).and_then(|r| Ok((r.get(0)?, response_row(&r, 1)?)));
                if rows.send(one).is_err() {
                    break;
                }
            }
            Ok(())
        })?;
        let mut n = 0;
        for row in rows {
            let (id, response) = row?;
            f(id, response)?;
            n += 1;
        }
        Ok(n)
    }
}
