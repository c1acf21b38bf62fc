//! wafuel's web layer: content negotiation and the documents' bytes (`render`), the routes,
//! the front cache, conditional requests, errors as the contract writes them and the explorer
//! page (`http`). Its own crate (`wafuel-web`): it asks the service for models and never
//! reaches the store, the source or the binary's server and telemetry above it.

// The layers below under the names the web layer uses for them.
use wafuel_domain as model;
use wafuel_domain::time;
use wafuel_query as query;
use wafuel_service::{cache_policy, catalog, map_tiles, sync};

pub mod http;
pub mod render;
