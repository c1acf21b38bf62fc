//! The map data provider (Google Places API (New)): client, shapes and matching. Used by the
//! enrichment job only; public requests never reach it.

pub mod client;
pub mod matching; // The domain and the layers below under the names the service uses for them.

pub mod types;
