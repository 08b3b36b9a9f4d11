//! everblog: archives whole blogs, following the BlogForever crawler (Blanvillain, Kasioumis,
//! Banos, WIMS'14). The blog's feed is training data for XPath extraction rules; a crawl then
//! finds every post of the blog and the rules extract it; everything lives in SQLite.
//!
//! Pipeline, top-down: [`crawl`] drives [`fetch`] → [`render`] → [`core`] (learn, identify,
//! extract) → [`store`]. [`daemon`] runs crawls as jobs; the [`cli`] is a thin layer over these.
//! ARCHITECTURE.md maps every module.

#![warn(missing_docs)]

pub mod blog_list;
pub mod cli;
pub mod config;
pub mod core;
pub mod crawl;
pub mod daemon;
pub mod export;
pub mod fetch;
pub mod fixture_server;
pub mod health;
pub mod meters;
pub mod render;
pub mod serve;
pub mod store;
