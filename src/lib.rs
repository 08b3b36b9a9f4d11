//! everblog core (temporary)
pub mod core;
