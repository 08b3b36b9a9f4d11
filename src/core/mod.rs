//! The pure core: feeds, pages, similarity, rule learning, post identification and extraction.
//!
//! **Architecture invariant:** nothing under `core` does IO, async, SQL or reads the clock. The
//! same feed and pages always give the same rules. `tests/tidy.rs` enforces it.
//!
//! Closed vocabularies (kinds, states, fields) are enums declared with `vocabulary!`, so a
//! stored, exported or configured name is written in exactly one place.

/// Declares a closed vocabulary: an enum whose values have stable names, the names stored in
/// the database, written in exports and configuration files, and shown to people.
///
/// The enum gets `ALL` (every value), `as_str` (the name), `Display`, `FromStr` (failing with
/// [`UnknownName`]) and serde as that name. Each variant is written `Variant = "name",`.
macro_rules! vocabulary {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The value's stable name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::core::UnknownName;

            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err($crate::core::UnknownName {
                        vocabulary: stringify!($name),
                        name: s.to_string(),
                        expected: &[$($text),+],
                    }),
                }
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                let name = <::std::string::String as ::serde::Deserialize>::deserialize(d)?;
                name.parse().map_err(<D::Error as ::serde::de::Error>::custom)
            }
        }
    };
}
pub(crate) use vocabulary;

/// A name outside a `vocabulary!`: read from a database written by a newer everblog, or
/// mistyped in a configuration file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {vocabulary} {name:?}; expected one of {}", expected.iter().map(|e| format!("{e:?}")).collect::<Vec<_>>().join(", "))]
pub struct UnknownName {
    /// The vocabulary (the enum's name).
    pub vocabulary: &'static str,
    /// The name that was not recognised.
    pub name: String,
    /// The names the vocabulary has.
    pub expected: &'static [&'static str],
}

/// Prose for unit tests: two sentences with commas, a text block's worth.
#[cfg(test)]
pub(crate) const TEST_PROSE: &str =
    "The hedge was pruned on Sunday, slowly, and it took far longer than planned. \
    Even so, blackbirds and rainy weekends are two sides of the same coin, as ever.";

pub mod alerts;
pub mod authors;
pub mod blocks;
pub mod bylines;
pub mod comment_data;
pub mod comment_merge;
pub mod comment_rules;
pub mod comment_structure;
pub mod comments;
pub mod data_template;
pub mod dates;
pub mod excludes;
pub mod extent;
pub mod extract;
pub mod fallback;
pub mod feed;
pub mod head;
pub mod html;
pub mod identify;
pub mod learn;
pub mod listing;
pub mod meta;
pub mod page;
pub mod post_url;
pub mod priority;
pub mod requisites;
pub mod revisit;
pub mod roles;
pub mod rules;
pub mod schedule;
pub mod sitemap;
pub mod taxonomy;
pub mod text;
pub mod url_features;
