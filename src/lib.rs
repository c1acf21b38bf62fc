//! wafuel: Western Australia's retail fuel prices as a JSON:API service.
//!
//! This package is the binary's own parts: the command line, the composition root that builds
//! the application from its services, the servers and the telemetry. Every layer below is a
//! crate of the workspace used by its own name (`wafuel_domain`, `wafuel_store`,
//! `wafuel_service`, `wafuel_web`, …), so a path names the crate that holds it and a lower
//! crate cannot reach a layer above it (docs/design.md).

pub mod app;
pub mod cli;
pub mod malloc;
pub mod server;
pub mod telemetry;
