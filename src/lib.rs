//! wafuel: Western Australia's retail fuel prices as a JSON:API service.

pub mod app;
pub mod archive;
pub(crate) mod cache_policy;
pub mod catalog;
pub mod cli;
pub mod http;
pub mod jobs;
pub mod malloc;
/// The pure domain, its own crate (`crates/domain`): no layer here can reach into it wrongly,
/// and it can reach none of them.
pub use wafuel_domain as model;
pub mod places;
pub mod query;
pub mod render;
pub mod server;
pub mod sim;
pub mod snapshot;
pub mod source;
pub mod store;
pub(crate) mod sync;
pub mod telemetry;
pub mod time;
