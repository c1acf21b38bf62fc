//! The source: fetch the FuelWatch feed, read it safely, validate it whole.

pub mod client;
pub(crate) mod error;
pub mod rss;
pub mod validate;

pub use error::SourceError;
