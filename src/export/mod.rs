//! Export: the archive written out in standard formats. JSON Lines of the posts (`jsonl`, our
//! own stable format, README "Export format"), and the captures as a web archive (`warc`
//! records, their `cdxj` index, both packaged by `webarchive` as WACZ; the daemon's
//! continuous WARC files, `rolling`).

pub mod cdxj;
mod jsonl;
pub mod rolling;
pub mod warc;
pub mod webarchive;

pub use jsonl::write_jsonl;
