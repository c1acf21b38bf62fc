//! The source: fetch the FuelWatch feed, read it safely, validate it whole.

pub mod error;
pub mod rss;

pub use error::SourceError;
