//! Posts on PostgreSQL: only the streaming of every post, 100 rows of a server-side portal at
//! a time on a stream thread of its own (`store::posts` has everything else, once for both
//! back ends).

use super::PgStore;
use crate::store::db::{pg_row, PgDb, Session};
use crate::store::posts::{whole_post, POST_ORDER, POST_SELECT};
use crate::store::{BlogId, Post};
use anyhow::Result;

impl PgStore {
    /// Calls `f` on each post of one blog, or of all blogs, in the order of `Store::posts`,
    /// 100 rows of a server-side portal at a time (memory stays flat). Stops at the first
    /// error `f` returns. Returns the number of posts.
    ///
    /// # Errors
    /// The server failed, a stored value is corrupt, or `f` failed.
    pub fn for_each_post(
        &self,
        blog_id: Option<BlogId>,
        mut f: impl FnMut(Post) -> Result<()>,
    ) -> Result<u64> {
        let blog_id = blog_id.map(BlogId::get);
        let rows = self.stream(move |c, rows| {
            let mut tx = c.transaction()?;
            let portal = tx.bind(
                &format!("{POST_SELECT} WHERE $1::BIGINT IS NULL OR p.blog_id = $1 {POST_ORDER}"),
                &[&blog_id],
            )?;
            let mut session = Session::default();
            loop {
                let batch = tx.query_portal(&portal, 100)?;
                if batch.is_empty() {
                    break;
                }
                for row in &batch {
                    let mut db = PgDb {
                        client: &mut tx,
                        session: &mut session,
                    };
                    let post = pg_row(row).and_then(|r| whole_post(&mut db, &r));
                    if rows.send(post).is_err() {
                        return Ok(());
                    }
                }
            }
            Ok(())
        })?;
        let mut n = 0;
        for post in rows {
            f(post?)?;
            n += 1;
        }
        Ok(n)
    }
}
