//! The Places API (New) client: key only in `X-Goog-Api-Key` (never logged), an explicit
//! field mask, a 5 s deadline and a 256 KiB body cap.

use std::time::Duration;

use serde_json::json;

use super::types::{Place, SearchResponse, details_mask, search_mask};
use wafuel_store::enrich::Seed;

pub const DEADLINE: Duration = Duration::from_secs(5);
pub const MAX_BODY: usize = 256 * 1024;

/// How a provider call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlacesError {
    /// 400/401/403: configuration or key problem; pause for a day.
    #[error("provider refused the request ({0})")]
    Refused(u16),
    /// 429: pause for an hour.
    #[error("provider rate limit")]
    RateLimited,
    /// 5xx, network, timeout, oversize or undecodable: back off this station.
    #[error("provider unavailable: {0}")]
    Unavailable(String),
    /// 404 for a stored place id: the place is gone.
    #[error("place not found")]
    NotFound,
}

#[derive(Debug, Clone)]
pub struct PlacesClient {
    http: reqwest::Client,
    base: url::Url,
    key: String,
}

impl PlacesClient {
    pub fn new(base: url::Url, key: String) -> Result<Self, reqwest::Error> {
        let http = wafuel_source::client::outbound_client().timeout(DEADLINE).build()?;
        Ok(Self { http, base, key })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base.as_str().trim_end_matches('/'))
    }

    /// Text Search (New) for a station by name and address, or by address alone.
    pub async fn search(&self, seed: &Seed, by_name: bool) -> Result<Vec<Place>, PlacesError> {
        let text = if by_name {
            format!("{}, {}, {}, WA, Australia", seed.name, seed.street, seed.suburb)
        } else {
            format!("{}, {}, WA, Australia", seed.street, seed.suburb)
        };
        let body = json!({
            "textQuery": text,
            "includedType": "gas_station",
            "strictTypeFiltering": true,
            "pageSize": 5,
            "regionCode": "AU",
            "locationBias": {"circle": {"center": {"latitude": seed.latitude, "longitude": seed.longitude}, "radius": 500.0}},
        });
        let request = self
            .http
            .post(self.url("/v1/places:searchText"))
            .json_body(&body)
            .header("X-Goog-FieldMask", search_mask());
        let bytes = self.send(request).await?;
        let parsed: SearchResponse =
            serde_json::from_slice(&bytes).map_err(|e| PlacesError::Unavailable(format!("decode: {e}")))?;
        Ok(parsed.places)
    }

    /// Place Details (New) for a stored place id.
    pub async fn details(&self, place_id: &str) -> Result<Place, PlacesError> {
        let id: String = url::form_urlencoded::byte_serialize(place_id.as_bytes()).collect();
        let request =
            self.http.get(self.url(&format!("/v1/places/{id}"))).header("X-Goog-FieldMask", details_mask());
        let bytes = self.send(request).await?;
        serde_json::from_slice(&bytes).map_err(|e| PlacesError::Unavailable(format!("decode: {e}")))
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Result<bytes::Bytes, PlacesError> {
        let response = request
            .header("X-Goog-Api-Key", &self.key)
            .send()
            .await
            .map_err(|e| PlacesError::Unavailable(e.without_url().to_string()))?;
        let status = response.status().as_u16();
        match status {
            200 => {}
            400 | 401 | 403 => return Err(PlacesError::Refused(status)),
            404 => return Err(PlacesError::NotFound),
            429 => return Err(PlacesError::RateLimited),
            other => return Err(PlacesError::Unavailable(format!("status {other}"))),
        }
        use wafuel_source::client::{BodyError, body_within};
        match body_within(response, MAX_BODY).await {
            Ok(body) => Ok(body),
            Err(BodyError::TooLarge) => Err(PlacesError::Unavailable("response over 256 KiB".into())),
            Err(BodyError::Read(why)) => Err(PlacesError::Unavailable(why)),
        }
    }
}

/// JSON bodies without reqwest's `json` feature.
trait JsonBody {
    fn json_body(self, value: &serde_json::Value) -> Self;
}

impl JsonBody for reqwest::RequestBuilder {
    fn json_body(self, value: &serde_json::Value) -> Self {
        self.header(reqwest::header::CONTENT_TYPE, "application/json").body(value.to_string())
    }
}
