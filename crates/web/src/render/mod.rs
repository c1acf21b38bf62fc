//! Rendering: document models (`model::documents`, market figures) to bytes, and bytes to
//! their served representations. Pure: reaches nothing but `model/` and the Perth calendar.

pub(crate) mod asset;
pub mod brands;
pub mod errors;
pub mod events;
pub mod forecast;
pub mod jsonapi;
pub(crate) mod legacy;
pub(crate) mod logos;
pub mod market;
pub mod representation;
pub mod stations;
pub mod status;
pub mod wholesale;

/// A document that could not be written. Writing into memory fails only on a bug (a value
/// serde cannot represent, a CSV writer in a bad state), never on input, but the cause is kept
/// and answered as an internal error rather than hidden as an empty body.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("CSV: {0}")]
    Csv(#[from] csv::Error),
    #[error("CSV flush: {0}")]
    CsvFlush(String),
}

/// The bytes a CSV writer over a `Vec` wrote.
pub fn csv_bytes(w: csv::Writer<Vec<u8>>) -> Result<Vec<u8>, RenderError> {
    w.into_inner().map_err(|e| RenderError::CsvFlush(e.error().to_string()))
}
