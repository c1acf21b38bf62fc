//! The normalised station and its price quotes.

use serde::{Deserialize, Serialize};

use super::site_features::WeekHours;
use crate::codes::ProductCode;

/// Original text the controlled schema could not represent (`sourceNotes`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceNotes {
    pub brand: Option<String>,
    pub features: Vec<String>,
    pub restrictions: Vec<String>,
    pub open_hours: Option<String>,
    pub phone: Option<String>,
}

impl SourceNotes {
    pub fn is_empty(&self) -> bool {
        self.brand.is_none()
            && self.features.is_empty()
            && self.restrictions.is_empty()
            && self.open_hours.is_none()
            && self.phone.is_none()
    }
}

/// Source text kept verbatim for the legacy rendering.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegacyText {
    pub brand: Option<String>,
    pub latitude: String,
    pub longitude: String,
    pub site_features: Option<String>,
    pub restrictions: Option<String>,
}

/// One service station as the API describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Station {
    /// `[street, suburb, latitude, longitude]`, folded (`key::station_key`).
    pub key: String,
    /// The lower-case hex SHA-256 of `key` (stored as `digest`); a price document's
    /// resource id is `<sourceDate>:<id>` (`key::resource_id`).
    #[serde(rename = "digest")]
    pub id: crate::key::StationId,
    pub name: String,
    pub trading_name: String,
    pub brand: crate::codes::StationBrand,
    pub street: String,
    pub suburb: String,
    pub latitude: f64,
    pub longitude: f64,
    pub phone: Option<String>,
    /// Feature codes, ascending and unique.
    pub features: Vec<u8>,
    /// Restriction codes, ascending and unique; `None` when none is known.
    pub restrictions: Option<Vec<u8>>,
    pub is_24_hours: Option<bool>,
    pub open_hours: Option<WeekHours>,
    pub notes: SourceNotes,
    pub legacy: LegacyText,
}

/// One station's price for one product on one source date.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quote {
    pub product: ProductCode,
    /// Cents per litre, in (0, 10000].
    pub price: f64,
    /// The price as the source wrote it.
    pub price_text: String,
    pub station: std::sync::Arc<Station>,
}

/// A price in integer tenths of a cent: the feed has at most one decimal, so differences and
/// stored values are exact in this unit.
pub fn tenths(price: f64) -> i64 {
    (price * 10.0).round() as i64
}
