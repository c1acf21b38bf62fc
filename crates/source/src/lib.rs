//! The source: fetch the FuelWatch feed, read it safely, validate it whole. Its own crate
//! (`wafuel-source`): it builds on the domain alone.

// The domain under the names the service's other layers use for it.

pub mod client;
mod error;
pub mod rss;
pub mod validate;
pub mod wholesale;

pub use error::SourceError;
