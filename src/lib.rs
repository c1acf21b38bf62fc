//! wafuel: Western Australia's retail fuel prices as a JSON:API service.

pub mod app;
pub use wafuel_archive as archive;
pub(crate) mod cache_policy;
pub mod catalog;
pub mod cli;
pub mod http;
pub mod jobs;
pub mod malloc;
/// The pure domain, its own crate (`crates/domain`): no layer here can reach into it wrongly,
/// and it can reach none of them.
pub use wafuel_domain as model;
pub use wafuel_places as places;
pub mod query;
pub mod render;
pub mod server;
pub mod sim;
pub mod snapshot;
pub use wafuel_source as source;
pub use wafuel_store as store;
pub(crate) mod sync;
pub mod telemetry;
pub use wafuel_domain::time;
