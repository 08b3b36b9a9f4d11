//! The methods of [`Store`] still written per back end (host slots; the post and capture
//! streams), documented once here and answered by the back end the store was opened on
//! (`store::<concern>` on SQLite, `store::postgres::<concern>` on PostgreSQL, the same names
//! and arguments). Every other method is written once, in its concern's module.

use super::*;
use crate::fetch::Response;
use std::time::Duration;

/// Writes each listed method of [`Store`] as a call of the same method on its back end.
macro_rules! forward {
    () => {};
    ($(#[$meta:meta])* pub fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty; $($rest:tt)*) => {
        impl Store {
            $(#[$meta])*
            pub fn $name(&self $(, $arg: $ty)*) -> $ret {
                match &self.0 {
                    Backend::Sqlite(s) => s.$name($($arg),*),
                    Backend::Postgres(p) => p.$name($($arg),*),
                }
            }
        }
        forward!($($rest)*);
    };
    ($(#[$meta:meta])* pub fn $name:ident(&mut self $(, $arg:ident: $ty:ty)*) -> $ret:ty; $($rest:tt)*) => {
        impl Store {
            $(#[$meta])*
            pub fn $name(&mut self $(, $arg: $ty)*) -> $ret {
                match &mut self.0 {
                    Backend::Sqlite(s) => s.$name($($arg),*),
                    Backend::Postgres(p) => p.$name($($arg),*),
                }
            }
        }
        forward!($($rest)*);
    };
}

forward! {
    // Per-host request slots shared by every process on the database (`store::host_slots`).
    /// Reserves the next request slot of `host`: the slot starts at the later of now and the
    /// host's `next_at`, and the host's next slot moves `delay` past it. Returns how long to
    /// wait before the request. One `BEGIN IMMEDIATE` transaction, so two processes never get
    /// the same slot.
    pub fn reserve_host(&mut self, host: &str, delay: Duration) -> Result<Duration>;
}

/// The methods taking closures or generic arguments, which the macro does not write.
impl Store {
    /// Calls `f` on each post of one blog, or of all blogs, in the order of [`Store::posts`],
    /// without loading them all into memory. Stops at the first error `f` returns. Returns the
    /// number of posts.
    pub fn for_each_post(
        &self,
        blog_id: Option<BlogId>,
        f: impl FnMut(Post) -> Result<()>,
    ) -> Result<u64> {
        match &self.0 {
            Backend::Sqlite(s) => s.for_each_post(blog_id, f),
            Backend::Postgres(p) => p.for_each_post(blog_id, f),
        }
    }

    /// Calls `f` with every stored response (raw and rendered), oldest first, one at a time
    /// (memory stays flat whatever the archive's size): `(id, response)`. `blog` limits it to
    /// one blog, `after` to responses stored after the one of that id (0: all). Returns how
    /// many there were.
    ///
    /// # Errors
    /// The database failed, a body did not inflate, or `f` failed.
    pub fn for_each_capture(
        &self,
        blog: Option<BlogId>,
        after: ResponseId,
        f: impl FnMut(ResponseId, Response) -> Result<()>,
    ) -> Result<u64> {
        match &self.0 {
            Backend::Sqlite(s) => s.for_each_capture(blog, after, f),
            Backend::Postgres(p) => p.for_each_capture(blog, after, f),
        }
    }
}
