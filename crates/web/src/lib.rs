//! wafuel's web layer: content negotiation and the documents' bytes (`render`), the routes,
//! the front cache, conditional requests, errors as the contract writes them and the explorer
//! page (`http`). Its own crate (`wafuel-web`): it asks the service for models and never
//! reaches the store, the source or the binary's server and telemetry above it.

// The layers below under the names the web layer uses for them.

pub mod http;
pub mod render;
