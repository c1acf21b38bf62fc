//! A local stand-in for Google Places API (New): `POST /v1/places:searchText` and
//! `GET /v1/places/{id}` with the real request headers, response shapes and error envelope.
//! For tests and demos only.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;

pub use crate::places_wire::*;
use wafuel_domain::geo::distance_m;
use wafuel_domain::sync::lock;

/// The stand-in's places, key, faults and request log.
#[derive(Default)]
pub struct PlacesState {
    pub key: String,
    pub places: Mutex<Vec<Place>>,
    /// Answer every request with this status and the matching error envelope.
    pub fail_with: Mutex<Option<u16>>,
    /// (method path, field mask, key header seen) of every request.
    pub log: Mutex<Vec<(String, String)>>,
}

impl PlacesState {
    pub fn requests(&self) -> usize {
        lock(&self.log).len()
    }

    pub fn fail_with(&self, status: Option<u16>) {
        *lock(&self.fail_with) = status;
    }

    pub fn log(&self) -> Vec<(String, String)> {
        lock(&self.log).clone()
    }
}

fn envelope(code: u16, status: &str, message: &str) -> Response {
    let body = ErrorEnvelope { error: ErrorBody { code, message: message.into(), status: status.into() } };
    (StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), axum::Json(body))
        .into_response()
}

/// Key, field mask and injected faults, as the real API checks them: the error response, if
/// any.
fn check(state: &PlacesState, headers: &HeaderMap, what: String) -> Option<Response> {
    let mask = headers.get("x-goog-fieldmask").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    lock(&state.log).push((what, mask.clone()));
    if headers.get("x-goog-api-key").and_then(|v| v.to_str().ok()) != Some(state.key.as_str()) {
        return Some(envelope(403, "PERMISSION_DENIED", "The provided API key is invalid."));
    }
    if mask.is_empty() {
        return Some(envelope(400, "INVALID_ARGUMENT", "FieldMask is a required parameter."));
    }
    let fail_with = *lock(&state.fail_with);
    fail_with.map(|code| match code {
        429 => envelope(429, "RESOURCE_EXHAUSTED", "Quota exceeded."),
        403 => envelope(403, "PERMISSION_DENIED", "Places API (New) has not been used in this project."),
        400 => envelope(400, "INVALID_ARGUMENT", "Invalid request."),
        code => envelope(code, "INTERNAL", "Internal error encountered."),
    })
}

async fn search(State(state): State<Arc<PlacesState>>, headers: HeaderMap, body: String) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let text = request["textQuery"].as_str().unwrap_or("").to_lowercase();
    if let Some(r) = check(&state, &headers, format!("search {text}")) {
        return r;
    }
    if text.is_empty() {
        return envelope(400, "INVALID_ARGUMENT", "textQuery is required.");
    }
    let center = &request["locationBias"]["circle"]["center"];
    let (lat, lon) =
        (center["latitude"].as_f64().unwrap_or(0.0), center["longitude"].as_f64().unwrap_or(0.0));
    let radius = request["locationBias"]["circle"]["radius"].as_f64().unwrap_or(500.0);
    let page = request["pageSize"].as_u64().unwrap_or(5) as usize;
    // Relevance, simply: the query's first part (a name, or a street for an address search)
    // appears in the place's name or address.
    let lead = text.split(',').next().unwrap_or("").trim().to_string();
    let places = lock(&state.places);
    let mut found: Vec<(f64, Place)> = places
        .iter()
        .filter_map(|p| {
            let loc = p.location?;
            let d = distance_m((lat, lon), (loc.latitude, loc.longitude));
            let haystack =
                format!("{} {}", p.name(), p.formatted_address.as_deref().unwrap_or("")).to_lowercase();
            let relevant = !lead.is_empty() && haystack.contains(lead.as_str());
            // A bias, not a restriction, but far places are never relevant to a station.
            (d <= radius * 4.0 && relevant).then(|| (d, p.clone()))
        })
        .collect();
    found.sort_by(|a, b| a.0.total_cmp(&b.0));
    let response = SearchResponse { places: found.into_iter().take(page).map(|(_, p)| p).collect() };
    axum::Json(response).into_response()
}

async fn details(
    State(state): State<Arc<PlacesState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Some(r) = check(&state, &headers, format!("details {id}")) {
        return r;
    }
    match lock(&state.places).iter().find(|p| p.id == id) {
        Some(p) => axum::Json(p.clone()).into_response(),
        None => envelope(404, "NOT_FOUND", "Requested entity was not found."),
    }
}

pub fn router(state: Arc<PlacesState>) -> Router {
    Router::new()
        .route("/v1/places:searchText", post(search))
        .route("/v1/places/{id}", get(details))
        .with_state(state)
}

/// A running stand-in on a local port.
pub struct PlacesHandle {
    pub addr: SocketAddr,
    pub state: Arc<PlacesState>,
    task: tokio::task::JoinHandle<()>,
}

impl PlacesHandle {
    pub async fn spawn(key: &str, places: Vec<Place>) -> std::io::Result<Self> {
        let state =
            Arc::new(PlacesState { key: key.into(), places: Mutex::new(places), ..PlacesState::default() });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let app = router(state.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, state, task })
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for PlacesHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A provider place for a simulated station: same spot, name and address, operational,
/// with a postcode, phone, hours 07:00–18:00 daily, a restroom and card payments.
pub fn place_for(station: &crate::dataset::SimStation, id: &str) -> Place {
    let comp = |short: &str, kind: &str| AddressComponent {
        long_text: short.into(),
        short_text: short.into(),
        types: vec![kind.into()],
    };
    let (number, route) = station.address.split_once(' ').unwrap_or(("", &station.address));
    // WA postcodes run 6000–6999; a stable one per station.
    let postcode = format!("6{:03}", crate::dataset::mix(&[station.address.as_bytes()]) % 1000);
    Place {
        id: id.into(),
        display_name: Some(LocalizedText {
            text: station.trading_name.clone(),
            language_code: Some("en".into()),
        }),
        formatted_address: Some(format!(
            "{}, {} WA {postcode}, Australia",
            station.address, station.location
        )),
        address_components: vec![
            comp(number, "street_number"),
            comp(route, "route"),
            comp(&station.location, "locality"),
            comp("WA", "administrative_area_level_1"),
            comp("AU", "country"),
            comp(&postcode, "postal_code"),
        ],
        location: Some(LatLng { latitude: station.lat, longitude: station.lon }),
        types: vec!["gas_station".into(), "point_of_interest".into()],
        business_status: Some("OPERATIONAL".into()),
        international_phone_number: Some("+61 8 9884 1056".into()),
        regular_opening_hours: Some(OpeningHours {
            periods: (0..7)
                .map(|day| Period {
                    open: Point { day, hour: 7, minute: 0 },
                    close: Some(Point { day, hour: 18, minute: 0 }),
                })
                .collect(),
        }),
        restroom: Some(true),
        payment_options: Some(PaymentOptions { accepts_credit_cards: Some(true), accepts_debit_cards: None }),
        attributions: vec![PlaceAttribution {
            provider: "Example Data".into(),
            provider_uri: "https://example.org/".into(),
        }],
    }
}

/// Places for every tenth simulated station, for the demo.
pub fn demo_places(data: &crate::Dataset) -> Vec<Place> {
    data.stations
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 10 == 3)
        .map(|(i, s)| place_for(s, &format!("demo-{i}")))
        .collect()
}
