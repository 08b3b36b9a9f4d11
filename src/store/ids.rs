//! The store's row ids as types of their own: [`BlogId`] (a row of `blogs`) and [`ResponseId`]
//! (a row of `responses`), so that a blog id is never passed where a response id, a job id or a
//! count is meant. Each is an `i64` as the database holds it, bound as a parameter and read
//! from a row like one, printed and parsed as its number, and serialised as that number.

use super::db::{FromValue, Value};
use anyhow::Result;

/// Writes a row id type: its constructor and accessor, `Display`/`FromStr` as the number, and
/// its binding into and reading from the store's values.
macro_rules! row_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(i64);

        impl $name {
            /// The id of the row numbered `id` (the database's own number: no row is checked).
            pub const fn new(id: i64) -> Self {
                $name(id)
            }

            /// The row's number, as the database holds it.
            pub const fn get(self) -> i64 {
                self.0
            }
        }

        /// The row's number.
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }

        /// Parses the row's number (as `i64` parses: an optional sign and decimal digits).
        impl std::str::FromStr for $name {
            type Err = std::num::ParseIntError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.parse().map($name)
            }
        }

        impl From<$name> for Value {
            fn from(id: $name) -> Self {
                Value::Int(id.0)
            }
        }

        impl FromValue for $name {
            fn from_value(v: &Value) -> Result<Self> {
                i64::from_value(v).map($name)
            }
        }
    };
}

row_id! {
    /// A blog: the row id of `blogs` (`/blog/{id}` in the reader).
    BlogId
}

row_id! {
    /// A stored response (raw, redirect or rendering): the row id of `responses`. Ids grow in
    /// the order responses are stored, from 1.
    ResponseId
}

/// `ResponseId::new(0)`: before every stored response (ids count from 1), where a range of
/// responses starts (`Store::for_each_capture`'s `after`, a new WARC roll's last response).
impl Default for ResponseId {
    fn default() -> Self {
        ResponseId(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_their_numbers() {
        let id: BlogId = "42".parse().unwrap();
        assert_eq!(id, BlogId::new(42));
        assert_eq!(id.to_string(), "42");
        assert_eq!(Value::from(id), Value::Int(42));
        assert_eq!(ResponseId::from_value(&Value::Int(7)).unwrap().get(), 7);
        assert!(ResponseId::from_value(&Value::Text("7".into())).is_err());
        assert!("x".parse::<BlogId>().is_err());
        assert_eq!(serde_json::to_string(&ResponseId::new(3)).unwrap(), "3");
    }
}
