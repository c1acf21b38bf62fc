//! Errors that say what to fix: on every route beyond the reference a refused query names the
//! parameter (`errors[].source.parameter`) and its `detail` states the rule and a good value;
//! an unknown name is named as unknown, with the nearest known name when one is close. `/v1`
//! and `/legacy` keep the reference's own text and gain nothing. None asks the source.

use jiff::civil::date;
use serde_json::Value;

use crate::support::*;

/// `(target, parameter named, words the detail holds)`: the station id placeholder `{id}` is
/// a station of the day.
const CASES: &[(&str, Option<&str>, &[&str])] = &[
    // The station API.
    (
        "/v1/stations?near=115.86,-31.95",
        Some("near"),
        &["inside Western Australia", "latitude first: near=-31.95,115.86"],
    ),
    ("/v1/stations?near=-31.95", Some("near"), &["near is latitude,longitude", "e.g. near=-31.95,115.86"]),
    (
        "/v1/stations?near=-31.95,115.86&radius=500",
        Some("radius"),
        &["radius must be more than 0 and at most 100 km, e.g. radius=10", "\"500\""],
    ),
    ("/v1/stations?radius=5", Some("radius"), &["radius needs near"]),
    (
        "/v1/stations?product=ulp",
        Some("product"),
        &["product codes (1 Unleaded", "e.g. product=1", "\"ulp\" is not a code"],
    ),
    ("/v1/stations?product=3", Some("product"), &["e.g. product=1", "3 is not one"]),
    (
        "/v1/stations?prodcut=1",
        Some("prodcut"),
        &["prodcut is not a parameter of this route", "did you mean product?"],
    ),
    (
        "/v1/stations?colour=red",
        Some("colour"),
        &["colour is not a parameter", "this route takes product, brand"],
    ),
    (
        "/v1/stations?filter[near]=-31.95,115.86",
        Some("filter[near]"),
        &["near has no filter[…] spelling here"],
    ),
    ("/v1/stations?product=1&filter[product]=4", Some("product"), &["given more than once"]),
    ("/v1/stations?product=1&fill=50&consumption=8", Some("fill"), &["fill needs near or route"]),
    (
        "/v1/stations?product=1&near=-31.95,115.86&fill=50",
        Some("consumption"),
        &["fill needs consumption too, e.g. fill=50&consumption=8.5"],
    ),
    (
        "/v1/stations?product=1&near=-31.95,115.86&fill=500&consumption=8",
        Some("fill"),
        &["fill must be a number from 1 to 200 with at most one decimal, e.g. fill=50"],
    ),
    ("/v1/stations?near=-31.95,115.86&fill=50&consumption=8", Some("product"), &["exactly one product"]),
    ("/v1/stations?limit=0", Some("limit"), &["limit is a whole number from 1 to 5000, e.g. limit=10"]),
    ("/v1/stations?route=not-a-polyline", Some("route"), &["route is an encoded polyline"]),
    ("/v1/stations?detour=2", Some("detour"), &["detour needs route"]),
    (
        "/v1/stations?sort=cheap",
        Some("sort"),
        &["sort is distance, along, detour, price, cost or name, e.g. sort=price"],
    ),
    ("/v1/stations?sort=distance", Some("sort"), &["sort=distance needs near"]),
    ("/v1/stations?sort=price", Some("sort"), &["sort=price needs exactly one product, e.g. product=1"]),
    ("/v1/stations?day=2025-13-01", Some("day"), &["DD/MM/YYYY, e.g. day=tomorrow"]),
    ("/v1/stations?day=01/01/2020", Some("day"), &["is not one of them", "/history"]),
    ("/v1/stations?surrounding=maybe", Some("surrounding"), &["surrounding is yes or no"]),
    (
        "/v1/stations?expand=colour",
        Some("expand"),
        &["expand takes brand, siteFeatures, restrictions or all"],
    ),
    ("/v1/stations?open=25:00", Some("open"), &["open is now, a time today as HH:MM", "e.g. open=now"]),
    (
        "/v1/stations?open=2026-10-09T10:00",
        Some("open"),
        &["is not between today's midnight and 7 days from now"],
    ),
    (
        "/v1/stations?discount=2",
        Some("discount"),
        &["discount takes brand:cents-a-litre pairs", "e.g. discount=2:4"],
    ),
    ("/v1/stations?discount=2:80", Some("discount"), &["at most 50", "\"80\" is not such a discount"]),
    // Values the OpenAPI's patterns forbid are refused like any other bad value (a + in a
    // query is a space).
    ("/v1/stations?discount=3:+4", Some("discount"), &["is not such a discount"]),
    (
        "/v1/stations?product=1&near=-31.95,115.86&fill=+50&consumption=8",
        Some("fill"),
        &["fill has spaces around \"50\""],
    ),
    ("/v1/stations?open=%20now", Some("open"), &["open has spaces around \"now\""]),
    ("/v1/stats?product=1&from=+2026-01-01", Some("from"), &["from is a date as YYYY-MM-DD"]),
    ("/v1/wholesale?product=1,1", Some("product"), &["\"1,1\" names more than one"]),
    ("/v1/stations?id=xyz", Some("id"), &["a station id is 64 lowercase hex characters"]),
    ("/v1/stations?feature=999", Some("feature"), &["feature codes", "e.g. feature="]),
    // The short tables are listed in the refusal; a name typed for a code is told its code.
    ("/v1/stations?feature=99", Some("feature"), &["1 Credit Cards", "5 Toilets", "21 Open 24 hours"]),
    ("/v1/stations?feature=toilets", Some("feature"), &["Toilets is 5, e.g. feature=5"]),
    (
        "/v1/stations?excludeRestriction=membership%20required",
        Some("excludeRestriction"),
        &["Membership Required is 3, e.g. excludeRestriction=3"],
    ),
    (
        "/v1/stations?excludeBrand=0",
        Some("excludeBrand"),
        &["brand codes (GET /v1/brands lists them)", "0 is not one"],
    ),
    ("/v1/stations?excludeRestriction=x", Some("excludeRestriction"), &["restriction codes"]),
    (
        "/v1/stations/{id}?product=1",
        Some("product"),
        &["product is not a parameter of this route", "this route takes day"],
    ),
    // History and statistics.
    ("/v1/stations/{id}/history", Some("product"), &["product is required here", "e.g. product=1"]),
    ("/v1/stations/{id}/history?product=1,4", Some("product"), &["\"1,4\" names more than one"]),
    (
        "/v1/stations/{id}/history?product=1&from=2025-13-01",
        Some("from"),
        &["from is a date as YYYY-MM-DD", "is no such day"],
    ),
    (
        "/v1/stations/{id}/history?product=1&to=2099-01-01",
        Some("to"),
        &["after the newest published day, 2026-09-29; e.g. to=2026-09-29"],
    ),
    (
        "/v1/stations/{id}/history?product=1&from=2026-09-20&to=2026-09-10",
        Some("from"),
        &["from (2026-09-20) is after to (2026-09-10)"],
    ),
    (
        "/v1/stats?product=1&interval=hour",
        Some("interval"),
        &["interval is day, week or month, e.g. interval=week"],
    ),
    ("/v1/stats?product=1&region=999", Some("region"), &["region codes", "\"999\" is not a code"]),
    // The forecast and its record.
    (
        "/v1/forecast?product=1&horizon=14",
        Some("horizon"),
        &["horizon is a whole number of days from 1 to 7, e.g. horizon=3"],
    ),
    (
        "/v1/forecast?product=1&asOf=2099-01-01",
        Some("asOf"),
        &["asOf (2099-01-01) is after today; e.g. asOf=2026-09-29"],
    ),
    (
        "/v1/stations/{id}/forecast?product=1&brand=2",
        Some("brand"),
        &["brand is not a parameter of this route", "this route takes product, horizon, asof"],
    ),
    ("/v1/forecast/record?product=1&station=abc", Some("station"), &["64 lowercase hex"]),
    ("/v1/forecast/record?product=1&from=2025-01-01", Some("from"), &["at most 366 days"]),
    // Events, wholesale, brands and status.
    ("/v1/events?radius=5", Some("radius"), &["radius needs near"]),
    ("/v1/events?since=-1", Some("since"), &["since is an event id", "e.g. since=0 to replay"]),
    (
        "/v1/events?product=1&near=-31.95,115.86&below=0",
        Some("below"),
        &["below must be a number from 0.1 to 999.9", "e.g. below=180"],
    ),
    ("/v1/wholesale?product=3", Some("product"), &["e.g. product=1"]),
    ("/v1/wholesale?product=1&centre=mars", Some("centre"), &["centre is one of perth", "e.g. centre=perth"]),
    ("/v1/brands?colour=red", Some("colour"), &["colour is not a parameter of this route"]),
    ("/v1/status?verbose=1", Some("verbose"), &["this route takes no parameters"]),
    // A malformed id in the path: the rule, no parameter (it is no query parameter).
    ("/v1/stations/xyz", None, &["a station id is 64 lowercase hex characters", "\"xyz\" is not one"]),
];

#[tokio::test]
async fn every_refused_query_beyond_the_reference_names_its_parameter_and_rule() {
    let app = TestApp::at(date(2026, 9, 29).at(10, 0, 0, 0)).await;
    let id =
        app.get("/v1/stations?product=1").await.json()["data"][0]["id"].as_str().expect("an id").to_string();
    let requests = app.source_requests();
    for (target, parameter, words) in CASES {
        let target = target.replace("{id}", &id);
        let r = app.get(&target).await;
        assert_eq!(r.status, 400, "{target}: {}", String::from_utf8_lossy(&r.body));
        let doc = r.json();
        assert_valid("JsonApiErrorDocument", &doc);
        let error = &doc["errors"][0];
        assert_eq!(error["code"], "invalid_query", "{target}");
        assert_eq!(error["source"]["parameter"].as_str(), *parameter, "{target}: {error}");
        let detail = error["detail"].as_str().expect("a detail");
        for w in *words {
            assert!(detail.contains(w), "{target}: {detail:?} says {w:?}");
        }
        assert_ne!(detail, "Invalid or unsupported query.", "{target}");
    }
    assert_eq!(app.source_requests(), requests, "no refused query asks the source");
}

/// `/v1` and `/legacy` answer the same mistakes with the reference's text, and no `source`.
#[tokio::test]
async fn the_reference_routes_keep_their_texts_and_gain_nothing() {
    let app = TestApp::at(date(2026, 9, 29).at(10, 0, 0, 0)).await;
    for query in ["prodcut=1", "product=ulp", "day=2025-13-01", "filter[product]=1&product=1", "region=999"] {
        let v1 = app.get(&format!("/v1?{query}")).await;
        assert_eq!(v1.status, 400, "{query}");
        let doc: Value = v1.json();
        assert_eq!(doc["errors"][0]["detail"], "Invalid or unsupported query.", "{query}");
        assert!(doc["errors"][0].get("source").is_none(), "{query}: {doc}");
        let legacy = app.get(&format!("/legacy?{query}")).await.json();
        assert_eq!(
            legacy,
            serde_json::json!({"error": {"code": "invalid_query", "message": "Invalid or unsupported query."}})
        );
    }
    let expand = app.get("/v1?expand=colour").await.json();
    assert!(expand["errors"][0].get("source").is_none());
    assert_ne!(
        expand["errors"][0]["detail"], "Invalid or unsupported query.",
        "the reference's own expand text"
    );
    assert_eq!(app.source_requests(), 0);
}

/// `suburb=` naming a suburb no station of the day is in: the answer says so in
/// `meta.unknownSuburbs`, with the known names close to it; a known suburb is not named.
#[tokio::test]
async fn an_unknown_suburb_is_named_with_the_known_names_close_to_it() {
    let app = TestApp::at(date(2026, 9, 29).at(10, 0, 0, 0)).await;
    let all = app.get("/v1/stations?product=1").await.json();
    let suburbs: std::collections::BTreeSet<String> = all["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|s| s["attributes"]["address"]["suburb"].as_str().expect("suburb").to_uppercase())
        .collect();
    // A known suburb of eight letters or more, misspelt by one dropped letter.
    let known = suburbs
        .iter()
        .find(|s| s.len() >= 8 && s.chars().all(|c| c.is_ascii_uppercase()))
        .expect("a long suburb");
    let misspelt: String = known.chars().enumerate().filter(|(i, _)| *i != 2).map(|(_, c)| c).collect();
    assert!(!suburbs.contains(&misspelt));
    for surrounding in ["", "&surrounding=no"] {
        let uri = format!(
            "/v1/stations?product=1&suburb={},{}{surrounding}",
            misspelt.to_lowercase(),
            known.to_lowercase()
        );
        let r = app.get(&uri).await;
        assert_eq!(r.status, 200, "{uri}");
        let doc = r.json();
        assert_valid("StationsDocument", &doc);
        let unknown = doc["meta"]["unknownSuburbs"].as_array().expect("unknownSuburbs").clone();
        assert_eq!(unknown.len(), 1, "{unknown:?}");
        assert_eq!(unknown[0]["suburb"], misspelt.as_str());
        let meant: Vec<&str> =
            unknown[0]["didYouMean"].as_array().expect("list").iter().filter_map(|v| v.as_str()).collect();
        assert!(meant.contains(&known.as_str()) && meant.len() <= 3, "{meant:?}");
    }
    // Every suburb known, or no suburb filter: no member at all.
    let fine = app
        .get(&format!("/v1/stations?product=1&suburb={}&surrounding=no", known.to_lowercase()))
        .await
        .json();
    assert!(fine["meta"].get("unknownSuburbs").is_none(), "{}", fine["meta"]);
    assert!(!fine["data"].as_array().expect("data").is_empty());
    assert!(all["meta"].get("unknownSuburbs").is_none());
}

/// A `/v1` resource id (`<date>:<digest>`) pasted whole into the station API, in its path or
/// `id=`: the refusal says to drop the date and shows the id to use.
#[tokio::test]
async fn a_v1_id_pasted_into_the_station_api_is_told_to_drop_its_date() {
    let app = TestApp::at(date(2026, 9, 29).at(10, 0, 0, 0)).await;
    let dated = app.get("/v1?product=1").await.json()["data"][0]["id"].as_str().expect("an id").to_string();
    let (day, digest) = dated.split_once(':').expect("a dated id");
    assert_eq!(day, "2026-09-29");
    for target in [format!("/v1/stations/{dated}"), format!("/v1/stations?product=1&id={dated}")] {
        let r = app.get(&target).await;
        assert_eq!(r.status, 400, "{target}");
        let detail = r.json()["errors"][0]["detail"].as_str().expect("detail").to_string();
        assert!(detail.contains("drop the date and the colon"), "{target}: {detail}");
        assert!(detail.contains(digest), "{target}: {detail} shows the id to use");
    }
    assert_eq!(app.get(&format!("/v1/stations/{digest}")).await.status, 200, "the id as told");
}
