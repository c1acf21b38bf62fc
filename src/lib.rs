//! wafuel: Western Australia's retail fuel prices as a JSON:API service.
//!
//! This package is the binary's parts (cli, app, server, telemetry); the layers below, the
//! web layer (`crates/web`: render, http) included, are crates of the workspace,
//! re-exported here under their layers' names, so `wafuel::store::…` reads as it did and a
//! lower crate cannot reach a layer above it (docs/design.md).

pub mod app;
pub mod cli;
pub mod malloc;
pub mod server;
pub mod telemetry;

pub use wafuel_archive as archive;
/// The pure domain (`crates/domain`).
pub use wafuel_domain as model;
pub use wafuel_domain::time;
pub use wafuel_places as places;
pub use wafuel_query as query;
pub(crate) use wafuel_service::cache_policy;
pub(crate) use wafuel_service::sync;
pub use wafuel_service::{catalog, jobs, map_tiles, snapshot};
pub use wafuel_sim as sim;
pub use wafuel_source as source;
pub use wafuel_store as store;
pub use wafuel_web::{http, render};
