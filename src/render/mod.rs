//! Rendering: quotes to document bytes, and bytes to their served representations. Pure.

pub mod asset;
pub mod errors;
pub mod jsonapi;
pub mod legacy;
pub mod logos;
pub mod market;
pub mod representation;
pub mod stations;

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
