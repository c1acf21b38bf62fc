//! Recorded upstream answers that both sides are held to: the service's reader reads each as
//! the upstream wrote it, and the simulated origin answers in the same form (the same keys,
//! each with the same JSON type), so a stand-in written wrong cannot hide a reader written
//! wrong, nor the other way round.

use std::collections::BTreeMap;

use serde_json::Value;
use wafuel_domain::wholesale::Centre;

const TERMINAL_GATE: &str = "tests/fixtures/terminalgate_2026-04-22_prices-ampol-kwinana.json";

/// Each key of an object with the kind of its value (a number, a text, …).
fn shape(object: &Value) -> BTreeMap<String, &'static str> {
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    object.as_object().expect("an object").iter().map(|(k, v)| (k.clone(), kind(v))).collect()
}

fn recorded() -> (Vec<u8>, Value) {
    let bytes = std::fs::read(TERMINAL_GATE).expect("fixture");
    let json = serde_json::from_slice(&bytes).expect("the recorded answer is JSON");
    (bytes, json)
}

#[test]
fn the_reader_reads_the_recorded_terminal_gate_answer() {
    let (bytes, _) = recorded();
    let read = wafuel_source::wholesale::parse_prices(Centre::Perth, &bytes).expect("read");
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].name, "Ampol Kwinana");
    // (product, previous, current, next)
    type Prices = (u8, Option<i64>, Option<i64>, Option<i64>);
    let prices: Vec<Prices> =
        read[0].prices.iter().map(|p| (p.product.get(), p.previous, p.current, p.next)).collect();
    assert_eq!(
        prices,
        [
            (1, Some(18_503), Some(18_249), Some(18_131)),
            (2, Some(19_878), Some(19_614), Some(19_499)),
            (4, Some(24_042), Some(23_057), Some(22_272)),
        ],
        "hundredths of a cent, as written"
    );
}

#[test]
fn the_simulated_terminal_gate_answers_in_the_recorded_form() {
    let (_, real) = recorded();
    let real_terminal = &real[0];
    let real_model = &real_terminal["terminalGateProductModels"][0];
    let at = "2026-04-22T16:15:00+08:00".parse().expect("instant");
    let ours = wafuel_sim::wholesale::prices_json(Centre::Perth.fuelwatch_id(), at).expect("Perth");
    let ours = ours.as_array().expect("an array of terminals");
    assert!(!ours.is_empty());
    let fuel_types: Vec<&str> = real_terminal["terminalGateProductModels"]
        .as_array()
        .expect("models")
        .iter()
        .filter_map(|m| m["fuelType"].as_str())
        .collect();
    for terminal in ours {
        assert_eq!(shape(terminal), shape(real_terminal), "{terminal}");
        for model in terminal["terminalGateProductModels"].as_array().expect("models") {
            assert_eq!(shape(model), shape(real_model), "{model}");
            let fuel = model["fuelType"].as_str().expect("fuelType");
            assert!(fuel_types.contains(&fuel), "{fuel} is one of FuelWatch's fuel types");
        }
    }
    // And the reader reads ours as it reads the real one.
    let bytes = serde_json::to_vec(ours).expect("bytes");
    let read = wafuel_source::wholesale::parse_prices(Centre::Perth, &bytes).expect("read");
    assert_eq!(read.len(), ours.len());
}

const PLACES_SEARCH: &str = "tests/fixtures/places_text-search_example.json";

#[test]
fn the_places_client_reads_the_recorded_search_answer() {
    let bytes = std::fs::read(PLACES_SEARCH).expect("fixture");
    // As `PlacesClient::search` reads a body: fields it does not ask for (`name`,
    // `nationalPhoneNumber`) are passed over.
    let read: wafuel_places::types::SearchResponse = serde_json::from_slice(&bytes).expect("read");
    assert_eq!(read.places.len(), 1);
    let place = &read.places[0];
    assert_eq!(place.id, "ChIJs5ydyTiuEmsR0fRSlU0C7k0");
    assert_eq!(place.name(), "Spiced @ Barangaroo");
    assert_eq!(place.formatted_address.as_deref(), Some("29 King St, Sydney NSW 2000, Australia"));
    assert_eq!(place.international_phone_number.as_deref(), Some("+61 433 479 794"));
    assert!(place.types.iter().any(|t| t == "point_of_interest"));
}

#[tokio::test]
async fn the_places_stand_in_answers_in_the_recorded_form() {
    let real: Value = serde_json::from_slice(&std::fs::read(PLACES_SEARCH).expect("fixture")).expect("JSON");
    let real_place = &real["places"][0];
    let sim = wafuel_sim::SimHandle::spawn(
        "127.0.0.1:0".parse().expect("addr"),
        std::sync::Arc::new(wafuel::app::SystemClock),
        Default::default(),
    )
    .await
    .expect("origin");
    let places = wafuel_sim::places::demo_places(sim.state.dataset());
    let first = places.first().expect("a place").clone();
    let standin = wafuel_sim::places::PlacesHandle::spawn("key", places).await.expect("stand-in");
    let body = serde_json::json!({
        "textQuery": format!("{}, WA, Australia", first.name()),
        "locationBias": {"circle": {"center": {
            "latitude": first.location.expect("point").latitude,
            "longitude": first.location.expect("point").longitude,
        }, "radius": 500.0}},
    });
    let answer: Value = crate::support::http()
        .post(format!("{}/v1/places:searchText", standin.base_url()))
        .header("X-Goog-Api-Key", "key")
        .header("X-Goog-FieldMask", wafuel_places::types::search_mask())
        .body(body.to_string())
        .send()
        .await
        .expect("answers")
        .json()
        .await
        .expect("JSON");
    let ours = &answer["places"][0];
    assert!(ours.is_object(), "{answer}");
    // Every field both write has the same kind, nested ones too.
    let (real_shape, our_shape) = (shape(real_place), shape(ours));
    let shared: Vec<&String> = real_shape.keys().filter(|k| our_shape.contains_key(*k)).collect();
    assert!(
        shared.len() >= 5,
        "id, types, internationalPhoneNumber, formattedAddress, displayName: {shared:?}"
    );
    for key in shared {
        assert_eq!(our_shape[key], real_shape[key], "{key}");
    }
    assert_eq!(shape(&ours["displayName"]), shape(&real_place["displayName"]));
    // And the client reads the stand-in's answer as it reads the real one.
    let read: wafuel_places::types::SearchResponse = serde_json::from_value(answer.clone()).expect("read");
    assert_eq!(read.places[0].id, first.id);
}
