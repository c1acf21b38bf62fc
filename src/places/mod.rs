//! The map data provider (Google Places API (New)): client, shapes and matching. Used by the
//! enrichment job only; public requests never reach it.

pub mod client;
pub(crate) mod matching;
pub mod types;
