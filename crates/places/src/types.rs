//! The Places API (New) shapes we send and read (and the stand-in writes).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct LocalizedText {
    pub text: String,
    #[serde(rename = "languageCode", skip_serializing_if = "Option::is_none")]
    pub language_code: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct AddressComponent {
    pub long_text: String,
    pub short_text: String,
    #[serde(default)]
    pub types: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct LatLng {
    pub latitude: f64,
    pub longitude: f64,
}

/// A point of a weekly period; `day` 0 is Sunday.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Point {
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Period {
    pub open: Point,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close: Option<Point>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct OpeningHours {
    #[serde(default)]
    pub periods: Vec<Period>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct PaymentOptions {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepts_credit_cards: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepts_debit_cards: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct PlaceAttribution {
    pub provider: String,
    pub provider_uri: String,
}

/// One place, with the fields of our field mask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Place {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<LocalizedText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub formatted_address: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub address_components: Vec<AddressComponent>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<LatLng>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub types: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub business_status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub international_phone_number: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regular_opening_hours: Option<OpeningHours>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restroom: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment_options: Option<PaymentOptions>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributions: Vec<PlaceAttribution>,
}

impl Place {
    pub fn name(&self) -> &str {
        self.display_name.as_ref().map_or("", |n| n.text.as_str())
    }

    /// The short text of the first address component of a type.
    pub fn component(&self, kind: &str) -> Option<&str> {
        self.address_components
            .iter()
            .find(|c| c.types.iter().any(|t| t == kind))
            .map(|c| c.short_text.as_str())
    }
}

/// `places:searchText` response.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct SearchResponse {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub places: Vec<Place>,
}

/// The error envelope of Google APIs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorEnvelope {
    pub error: ErrorBody,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorBody {
    pub code: u16,
    pub message: String,
    pub status: String,
}

/// The fields we read, for the `X-Goog-FieldMask` of a details request. Text Search takes
/// the same fields under `places.`. Each field is used: identity and matching (id,
/// displayName, formattedAddress, addressComponents, location, types, businessStatus), the
/// merge (internationalPhoneNumber, regularOpeningHours, restroom, paymentOptions) and the
/// attributions we must display. No `*`.
pub const FIELDS: [&str; 12] = [
    "id",
    "displayName",
    "formattedAddress",
    "addressComponents",
    "location",
    "types",
    "businessStatus",
    "internationalPhoneNumber",
    "regularOpeningHours",
    "restroom",
    "paymentOptions",
    "attributions",
];

pub fn details_mask() -> String {
    FIELDS.join(",")
}

pub fn search_mask() -> String {
    FIELDS.iter().map(|f| format!("places.{f}")).collect::<Vec<_>>().join(",")
}
