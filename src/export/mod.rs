//! Export: the archive written out in standard formats. JSON Lines of the posts (`jsonl`, our
//! own stable format, README "Export format"); the captures as a web archive (`warc`
//! records, their `cdxj` index, both packaged by `webarchive` as WACZ; the daemon's
//! continuous WARC files, `rolling`); and each blog as a blog-native feed or site export
//! (`atom` with RFC 5005 archive documents, `jsonfeed`, `wxr` for WordPress), one directory
//! of documents per blog (`feeds`); the blog list as `opml`.

pub mod atom;
pub mod cdxj;
pub mod feeds;
pub mod jsonfeed;
mod jsonl;
pub mod opml;
pub mod rolling;
pub mod warc;
pub mod webarchive;
pub mod wxr;
mod wxr_media;
mod wxr_page;
mod wxr_xml;

pub use jsonl::write_jsonl;
