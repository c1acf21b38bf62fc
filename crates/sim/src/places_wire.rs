//! The Places API (New) answer shapes the stand-in writes, from Google's reference for
//! `places.searchText` and `places.get` (a `Place` with the fields asked for, camelCase; a
//! search answers `{"places": […]}`, absent when nothing matched) and its error envelope
//! (`{"error": {"code", "message", "status"}}`). Written here, not taken from the client's
//! types, so a serde mistake in the client is not copied into the stand-in.

use serde::Serialize;

/// `LocalizedText`: a text and its language.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct LocalizedText {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language_code: Option<String>,
}

/// `AddressComponent`.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct AddressComponent {
    pub long_text: String,
    pub short_text: String,
    pub types: Vec<String>,
}

/// `LatLng`, in degrees.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct LatLng {
    pub latitude: f64,
    pub longitude: f64,
}

/// `OpeningHours.Period.Point`: `day` 0 is Sunday.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct Point {
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
}

/// `OpeningHours.Period`: an open point and, unless open around the clock, a close point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Period {
    pub open: Point,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close: Option<Point>,
}

/// `OpeningHours` (`regularOpeningHours`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OpeningHours {
    pub periods: Vec<Period>,
}

/// `PaymentOptions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct PaymentOptions {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepts_credit_cards: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepts_debit_cards: Option<bool>,
}

/// `Place.Attribution`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct PlaceAttribution {
    pub provider: String,
    pub provider_uri: String,
}

/// A `Place` with the fields the stand-in knows; a field without a value is left out, as the
/// real API leaves out what it does not have.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Place {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<LocalizedText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub formatted_address: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub address_components: Vec<AddressComponent>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<LatLng>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
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
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attributions: Vec<PlaceAttribution>,
}

impl Place {
    /// The display name's text.
    pub fn name(&self) -> &str {
        self.display_name.as_ref().map_or("", |n| n.text.as_str())
    }
}

/// A `places.searchText` answer: `places` is left out when nothing matched.
#[derive(Debug, Clone, Serialize, Default)]
pub struct SearchResponse {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub places: Vec<Place>,
}

/// Google APIs' error envelope.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorEnvelope {
    pub error: ErrorBody,
}

/// The error itself: the HTTP status, a message and the canonical status name.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorBody {
    pub code: u16,
    pub message: String,
    pub status: String,
}
