//! Rendering: quotes to document bytes, and bytes to their served representations. Pure.

pub mod asset;
pub mod errors;
pub mod jsonapi;
pub mod legacy;
pub mod logos;
pub mod market;
pub mod representation;
pub mod stations;

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

/// `meta.publicationStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublicationStatus {
    Available,
    Empty,
    NotYetPublished,
}

impl PublicationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PublicationStatus::Available => "available",
            PublicationStatus::Empty => "empty",
            PublicationStatus::NotYetPublished => "not_yet_published",
        }
    }
}

/// The configurable members of `meta`.
#[derive(Debug, Clone)]
pub struct DocumentMeta {
    pub copyright: String,
    pub documentation: String,
    pub issues: String,
}

impl Default for DocumentMeta {
    fn default() -> Self {
        Self {
            copyright: "Fuel prices © State of Western Australia (FuelWatch), reproduced unofficially. wafuel API © the wafuel authors.".into(),
            documentation: "https://github.com/wafuel/wafuel#readme".into(),
            issues: "https://github.com/wafuel/wafuel/issues".into(),
        }
    }
}
