//! The station API against the simulated origin on port 0: nearby with distance and rank,
//! tomorrow's change, one station, history across simulated days, market statistics and the
//! cycle, representations, conditional requests, and every 400 without a source request.
//! Expected numbers are computed here from the origin's own prices, independently of `src/`.

use std::sync::Arc;
use std::time::Duration;

use jiff::civil::{Date, date};
use wafuel_sim::dataset::SimStation;
use wafuel_store::history::HistoryStore;

use crate::support::*;

const PERTH: (f64, f64) = (-31.9523, 115.8613);

/// Great-circle metres by the spherical law of cosines (not the haversine `src/` uses).
fn great_circle(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (p1, p2) = (a.0.to_radians(), b.0.to_radians());
    let dl = (b.1 - a.1).to_radians();
    let c = (p1.sin() * p2.sin() + p1.cos() * p2.cos() * dl.cos()).clamp(-1.0, 1.0);
    6_371_000.0 * c.acos()
}

fn tenths(text: &str) -> i64 {
    (text.parse::<f64>().expect("price") * 10.0).round() as i64
}

fn price_of(s: &SimStation, product: u8, d: Date) -> Option<i64> {
    s.price_text(product, d).map(|t| tenths(&t))
}

fn json_tenths(v: &serde_json::Value) -> i64 {
    (v.as_f64().expect("number") * 10.0).round() as i64
}

/// The station of the origin's data set with this station id (digest of its key).
fn sim_station<'a>(app: &'a TestApp, id: &str) -> &'a SimStation {
    app.sim
        .state
        .dataset()
        .stations
        .iter()
        .find(|s| {
            let lat: f64 = s.latitude.parse().expect("lat");
            let lon: f64 = s.longitude.parse().expect("lon");
            let key = wafuel_domain::key::station_key(&s.address, &s.location, lat, lon);
            wafuel_domain::key::key_digest(&key) == id
        })
        .expect("station of the origin")
}

#[tokio::test]
async fn nearby_cheapest_with_distance_rank_and_tomorrows_change() {
    let app = TestApp::at(date(2026, 9, 29).at(15, 0, 0, 0)).await;
    let (today, tomorrow) = (date(2026, 9, 29), date(2026, 9, 30));
    let uri = format!("/v1/stations?near={},{}&radius=8&product=1&sort=price", PERTH.0, PERTH.1);
    let r = app.get(&uri).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), "application/vnd.api+json");
    let doc = r.json();
    assert_eq!(doc["meta"]["next"]["sourceDate"], "2026-09-30");
    assert_eq!(doc["meta"]["next"]["publicationStatus"], "available");
    assert_eq!(doc["meta"]["radius"], 8.0);
    let data = doc["data"].as_array().expect("data");
    // Exactly the origin's product-1 stations within 8 km.
    let expected: usize = app
        .sim
        .state
        .dataset()
        .stations
        .iter()
        .filter(|s| s.products.contains(&1) && great_circle(PERTH, (s.lat, s.lon)) <= 8_000.0)
        .count();
    assert!(expected > 20, "a dense area: {expected}");
    assert_eq!(data.len(), expected);
    let mut last = (0, 0);
    for (i, s) in data.iter().enumerate() {
        assert_eq!(s["type"], "station");
        let a = &s["attributes"];
        let id = s["id"].as_str().expect("id");
        let origin = sim_station(&app, id);
        let d = a["distance"].as_i64().expect("distance");
        let truth = great_circle(PERTH, (origin.lat, origin.lon));
        assert!((d as f64 - truth).abs() <= 1.0, "{id}: {d} vs {truth}");
        let base = json_tenths(&a["price"]["products"]["1"]);
        assert_eq!(Some(base), price_of(origin, 1, today));
        let next = json_tenths(&a["price"]["next"]["1"]);
        assert_eq!(Some(next), price_of(origin, 1, tomorrow));
        assert_eq!(json_tenths(&a["price"]["change"]["1"]), next - base, "change = next − base");
        // Cheapest first; equal prices share a rank (competition ranking).
        let rank = a["rank"].as_u64().expect("rank") as usize;
        assert!(base >= last.0);
        if i > 0 && base == last.0 {
            assert_eq!(rank, last.1);
        } else {
            assert_eq!(rank, i + 1);
        }
        last = (base, rank);
    }
    // Two catalog extracts (today, tomorrow) however many points are asked.
    let before = app.source_requests();
    assert_eq!(before, 2);
    for (lat, lon) in [(-31.8, 115.8), (-32.05, 115.75), (-33.3, 115.6)] {
        let r = app.get(&format!("/v1/stations?near={lat},{lon}&product=1&sort=distance&limit=5")).await;
        assert_eq!(r.status, 200);
        let ds: Vec<i64> = r.json()["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|s| s["attributes"]["distance"].as_i64().expect("d"))
            .collect();
        assert!(ds.len() <= 5 && ds.windows(2).all(|w| w[0] <= w[1]), "{ds:?}");
    }
    assert_eq!(app.source_requests(), before, "no source traffic per coordinate");
}

#[tokio::test]
async fn before_publication_next_is_null_and_stations_match_v1() {
    let app = TestApp::new().await; // 10:00, tomorrow not published
    let doc = app.get("/v1/stations?product=4").await.json();
    assert_eq!(doc["meta"]["next"]["publicationStatus"], "not_yet_published");
    let v1 = app.get("/v1?product=4").await.json();
    let ids: Vec<String> =
        doc["data"].as_array().expect("data").iter().map(|s| s["id"].to_string()).collect();
    let v1_ids: Vec<String> = v1["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|s| format!("\"{}\"", s["id"].as_str().expect("id").split_once(':').expect("id").1))
        .collect();
    assert_eq!(ids, v1_ids, "same stations, same order as /v1 without near or sort");
    for s in doc["data"].as_array().expect("data") {
        assert_eq!(s["attributes"]["price"]["next"], serde_json::Value::Null);
        assert_eq!(s["attributes"]["price"]["change"], serde_json::json!({}));
        assert!(s["attributes"].get("distance").is_none());
    }
    assert_eq!(app.source_requests(), 1, "tomorrow is not fetched before 14:30");
}

#[tokio::test]
async fn one_station_with_every_product_and_404() {
    let app = TestApp::at(date(2026, 9, 29).at(15, 0, 0, 0)).await;
    let list = app.get("/v1/stations?product=1&sort=name&limit=1").await.json();
    let id = list["data"][0]["id"].as_str().expect("id").to_string();
    let r = app.get(&format!("/v1/stations/{id}")).await;
    assert_eq!(r.status, 200);
    let doc = r.json();
    assert_eq!(doc["data"]["id"], id.as_str());
    let origin = sim_station(&app, &id);
    let products = doc["data"]["attributes"]["price"]["products"].as_object().expect("products");
    let mut sold: Vec<String> = origin.products.iter().map(u8::to_string).collect();
    let mut keys: Vec<String> = products.keys().cloned().collect();
    sold.sort();
    keys.sort();
    assert_eq!(keys, sold, "every product it sells");
    assert_conditional_get(&app, &format!("/v1/stations/{id}"), &[]).await;
    let missing = app.get(&format!("/v1/stations/{}", "0".repeat(64))).await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["errors"][0]["code"], "not_found");
    let geo = app.call("GET", &format!("/v1/stations/{id}"), &[("accept", "application/geo+json")]).await;
    assert_eq!(geo.json()["type"], "Feature");
}

#[tokio::test]
async fn history_across_several_simulated_days() {
    let app = TestApp::at(date(2026, 9, 27).at(9, 0, 0, 0)).await;
    let days = [date(2026, 9, 27), date(2026, 9, 28), date(2026, 9, 29)];
    for _ in days {
        assert_eq!(app.get("/v1?product=1,4").await.status, 200);
        app.clock.advance(Duration::from_secs(86_400));
    }
    app.clock.advance(Duration::from_secs(3_600));
    // Filtered extracts write nothing: a region selection of a day without a catalog
    // extract leaves that day empty in the history.
    let r = app.get("/v1?product=1&region=25").await;
    assert_eq!(r.status, 200);
    assert!(!r.json()["data"].as_array().expect("data").is_empty());
    let store = sqlite_store(&app.dir).await;
    let sept30 = date(2026, 9, 30);
    assert!(store.market(p(1), sept30, sept30).await.expect("market").prices().is_empty());
    let list = app.get("/v1/stations?product=1&limit=3").await.json();
    let id = list["data"][0]["id"].as_str().expect("id").to_string();
    let origin = sim_station(&app, &id);
    let uri = format!("/v1/stations/{id}/history?product=1&from=2026-09-01&to=2026-09-30");
    let r = app.get(&uri).await;
    assert_eq!(r.status, 200);
    let doc = r.json();
    assert_eq!(doc["data"]["type"], "priceHistory");
    assert_eq!(doc["data"]["id"], format!("{id}:1"));
    let points = doc["data"]["attributes"]["points"].as_array().expect("points");
    let dates: Vec<&str> = points.iter().map(|p| p["date"].as_str().expect("date")).collect();
    assert_eq!(dates, ["2026-09-27", "2026-09-28", "2026-09-29", "2026-09-30"]);
    for p in points {
        let d: Date = p["date"].as_str().expect("date").parse().expect("date");
        assert_eq!(Some(json_tenths(&p["price"])), price_of(origin, 1, d), "{d}");
    }
    let csv = app.call("GET", &uri, &[("accept", "text/csv")]).await;
    assert_eq!(csv.header("content-type"), "text/csv; charset=utf-8; header=present");
    let text = String::from_utf8(csv.body.to_vec()).expect("utf-8");
    assert!(text.starts_with("date,price\r\n2026-09-27,"), "{text}");
    assert_eq!(text.lines().count(), 5);
    assert_conditional_get(&app, &uri, &[]).await;
    assert_head_parity(&app, &uri, &[]).await;
    // A product the station never had in the store: 404, saying which it has.
    let never = app.get(&format!("/v1/stations/{id}/history?product=10")).await;
    assert_eq!(never.status, 404);
    let error = &never.json()["errors"][0];
    assert_eq!(error["code"], "not_found");
    let detail = error["detail"].as_str().expect("detail");
    assert!(
        detail.starts_with("This station has no stored E85 prices; its history holds product")
            && detail.contains(" 1 (Unleaded Petrol)"),
        "{detail}"
    );
    assert!(detail.ends_with(": e.g. product=1."), "{detail}");
    assert_eq!(detail.contains("4 (Diesel)"), origin.products.contains(&4), "{detail}");
    // A station the history never had: the plain text.
    let unknown = app.get(&format!("/v1/stations/{}/history?product=1", "0".repeat(64))).await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json()["errors"][0]["detail"], "Station not found.");
}

/// Seed `days` past days through the real parser, as the demo does.
async fn seeded(days: i32) -> TestApp {
    let app = TestApp::new().await;
    let store = sqlite_store(&app.dir).await;
    let history: Arc<dyn HistoryStore> = store;
    let state = app.sim.state.clone();
    let w = wafuel_service::jobs::seed::seed_history(&history, date(2026, 9, 29), days, |p, d| {
        state.past_feed(p.get(), d)
    })
    .await;
    assert!(w.written > 0);
    app
}

#[tokio::test]
async fn the_warm_job_writes_history_and_prunes_past_the_retention() {
    let app = seeded(10).await; // 19–28 September, before the clock's 29 September 10:00
    let shared: wafuel_domain::time::SharedClock = app.clock.clone();
    let state = wafuel::app::build_state(wafuel::app::AppConfig {
        limits: quick_limits(),
        history_days: 5,
        ..wafuel::app::AppConfig::new(
            app.sim.feed_url().parse().expect("url"),
            sqlite_store(&app.dir).await,
            shared,
        )
    })
    .expect("state");
    let report = wafuel_service::jobs::warm::warm_pass(state.catalog.prices()).await;
    assert_eq!(report.refreshed, 7, "{report:?}");
    assert!(report.history_pruned > 0, "{report:?}");
    let store = sqlite_store(&app.dir).await;
    for product in [1u8, 4] {
        let rows = store.market(p(product), date(2026, 9, 1), date(2026, 9, 29)).await.expect("market");
        let mut days: Vec<Date> = rows.prices().iter().map(|(d, _, _)| *d).collect();
        days.dedup();
        // Five Perth days up to today: today's written by the warm refresh, older ones pruned.
        let expected: Vec<Date> = (25..=29).map(|d| date(2026, 9, d)).collect();
        assert_eq!(days, expected, "product {product}");
    }
}

/// The default retention (0) keeps every day: the warm job prunes nothing, imported decades
/// included.
#[tokio::test]
async fn the_default_retention_keeps_every_day() {
    let app = seeded(10).await; // 19–28 September
    let shared: wafuel_domain::time::SharedClock = app.clock.clone();
    let config = wafuel::app::AppConfig::new(
        app.sim.feed_url().parse().expect("url"),
        sqlite_store(&app.dir).await,
        shared,
    );
    assert_eq!(config.history_days, 0, "the default");
    let state =
        wafuel::app::build_state(wafuel::app::AppConfig { limits: quick_limits(), ..config }).expect("state");
    let report = wafuel_service::jobs::warm::warm_pass(state.catalog.prices()).await;
    assert_eq!((report.refreshed, report.history_pruned), (7, 0), "{report:?}");
    let rows =
        sqlite_store(&app.dir).await.market(p(1), date(2026, 9, 1), date(2026, 9, 29)).await.expect("market");
    let mut days: Vec<Date> = rows.prices().iter().map(|(d, _, _)| *d).collect();
    days.dedup();
    assert_eq!(days, (19..=29).map(|d| date(2026, 9, d)).collect::<Vec<_>>());
}

#[tokio::test]
async fn statistics_and_the_fortnightly_cycle() {
    let app = seeded(60).await;
    let (from, to) = (date(2026, 8, 1), date(2026, 9, 28));
    let r = app.get("/v1/stats?product=1&from=2026-08-01&to=2026-09-28").await;
    assert_eq!(r.status, 200, "{:?}", String::from_utf8_lossy(&r.body));
    assert_eq!(app.source_requests(), 0, "statistics read only the store");
    let doc = r.json();
    let attrs = &doc["data"]["attributes"];
    let days = attrs["days"].as_array().expect("days");
    assert_eq!(days.len(), 59);
    // Every day's numbers from the origin's prices, computed here.
    let stations = &app.sim.state.dataset().stations;
    for day in days.iter().step_by(7) {
        let d: Date = day["date"].as_str().expect("date").parse().expect("date");
        assert!(d >= from && d <= to);
        let mut prices: Vec<i64> = stations.iter().filter_map(|s| price_of(s, 1, d)).collect();
        prices.sort_unstable();
        let n = prices.len();
        assert_eq!(day["stations"].as_u64(), Some(n as u64));
        assert_eq!(json_tenths(&day["min"]), prices[0]);
        assert_eq!(json_tenths(&day["max"]), prices[n - 1]);
        let median =
            if n % 2 == 1 { prices[n / 2] as f64 } else { (prices[n / 2 - 1] + prices[n / 2]) as f64 / 2.0 };
        assert_eq!(json_tenths(&day["median"]), median.round() as i64, "{d}");
        let mean = prices.iter().sum::<i64>() as f64 / n as f64;
        assert_eq!(json_tenths(&day["mean"]), mean.round() as i64, "{d}");
        // p10 and p90 by linear interpolation between closest ranks.
        let at = |p: f64| {
            let rank = p * (n - 1) as f64;
            let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
            prices[lo] as f64 + (prices[hi] - prices[lo]) as f64 * (rank - lo as f64)
        };
        assert_eq!(json_tenths(&day["p10"]), at(0.1).round() as i64, "{d}");
        assert_eq!(json_tenths(&day["p90"]), at(0.9).round() as i64, "{d}");
        let cheapest = day["cheapest"].as_array().expect("cheapest");
        assert!(!cheapest.is_empty() && cheapest.len() <= 3);
        let first = sim_station(&app, cheapest[0].as_str().expect("id"));
        assert_eq!(price_of(first, 1, d), Some(prices[0]));
    }
    let cycle = &attrs["cycle"];
    assert_eq!(cycle["periodDays"], 14, "{cycle}");
    assert!(cycle["strength"].as_f64().expect("strength") >= 0.5);
    // The origin's rises fall on Wednesdays (every 14 days from 7 Jan 2026).
    let peak: Date = cycle["lastPeak"].as_str().expect("peak").parse().expect("date");
    assert!(matches!(peak.weekday(), jiff::civil::Weekday::Wednesday | jiff::civil::Weekday::Thursday));
    assert_eq!(attrs["weekdays"].as_object().expect("weekdays").len(), 7);
    // Diesel drifts without a cycle: a valid answer is none.
    let diesel = app.get("/v1/stats?product=4&from=2026-08-01&to=2026-09-28").await.json();
    assert_eq!(diesel["data"]["attributes"]["cycle"], serde_json::Value::Null);
    // Brand filter: only that brand's stations count.
    let bp = app.get("/v1/stats?product=1&brand=5&from=2026-09-01&to=2026-09-28").await.json();
    let bp_count = stations.iter().filter(|s| s.brand_code == 5 && s.products.contains(&1)).count();
    assert_eq!(bp["data"]["attributes"]["days"][0]["stations"].as_u64(), Some(bp_count as u64));
    assert_conditional_get(&app, "/v1/stats?product=1", &[]).await;
    // Fewer than 28 days: no cycle.
    let short = app.get("/v1/stats?product=1&from=2026-09-10&to=2026-09-28").await.json();
    assert_eq!(short["data"]["attributes"]["cycle"], serde_json::Value::Null);
}

#[tokio::test]
async fn representations_negotiation_and_validators() {
    let app = TestApp::new().await;
    let uri = "/v1/stations?near=-31.95,115.86&product=1,4&radius=3";
    let json = app.get(uri).await;
    let geo = app.call("GET", uri, &[("accept", "application/geo+json")]).await;
    let csv = app.call("GET", uri, &[("accept", "text/csv")]).await;
    assert_eq!(geo.header("content-type"), "application/geo+json");
    let fc = geo.json();
    assert_eq!(fc["type"], "FeatureCollection");
    let n = json.json()["data"].as_array().expect("data").len();
    assert_eq!(fc["features"].as_array().expect("features").len(), n);
    let f = &fc["features"][0];
    assert_eq!(f["geometry"]["type"], "Point");
    let coords = f["geometry"]["coordinates"].as_array().expect("coordinates");
    assert_eq!(coords[0], f["properties"]["longitude"], "[lng, lat]");
    assert!(f["properties"].get("price_1").is_some() || f["properties"].get("price_4").is_some());
    let text = String::from_utf8(csv.body.to_vec()).expect("utf-8");
    let mut lines = text.split("\r\n");
    assert_eq!(lines.next(), Some(STATIONS_CSV_HEADER));
    let rows = text.split("\r\n").filter(|l| !l.is_empty()).count() - 1;
    let quotes: usize = json.json()["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|s| s["attributes"]["price"]["products"].as_object().expect("p").len())
        .sum();
    assert_eq!(rows, quotes, "one row per station and product");
    // Each representation has its own validator; each is conditional and HEAD-equal.
    let tags = [json.header("etag"), geo.header("etag"), csv.header("etag")];
    assert!(tags[0] != tags[1] && tags[1] != tags[2] && tags[0] != tags[2]);
    for accept in ["application/vnd.api+json", "application/geo+json", "text/csv"] {
        assert_conditional_get(&app, uri, &[("accept", accept)]).await;
        assert_head_parity(&app, uri, &[("accept", accept), ("accept-encoding", "gzip")]).await;
    }
    assert_eq!(json.header("vary"), "Accept, Accept-Encoding");
    // `expand` works as on /v1.
    let expanded = app.get(&format!("{uri}&expand=brand,siteFeatures")).await.json();
    let brand = &expanded["data"][0]["attributes"]["brand"];
    assert!(brand["code"].is_u64() && brand["name"].is_string(), "{brand}");
    assert!(brand["logo"].as_str().is_some_and(|l| l.starts_with("/static/image/brand/")));
    let gz = app.call("GET", uri, &[("accept-encoding", "br")]).await;
    assert_eq!(gz.header("content-encoding"), "br");
    let refused = app.call("GET", uri, &[("accept", "text/html")]).await;
    assert_eq!(refused.status, 406);
    // The refusal names what the route offers (plain JSON is not one of them).
    let plain = app.call("GET", uri, &[("accept", "application/json")]).await;
    assert_eq!(plain.status, 406);
    let detail = plain.json()["errors"][0]["detail"].as_str().expect("detail").to_string();
    for offered in ["application/vnd.api+json", "application/geo+json", "text/csv"] {
        assert!(detail.contains(offered), "{detail} names {offered}");
    }
    let stats = app.call("GET", "/v1/stats?product=1", &[("accept", "text/csv")]).await;
    assert_eq!(stats.status, 406);
    let detail = stats.json()["errors"][0]["detail"].as_str().expect("detail").to_string();
    assert!(detail.ends_with("application/vnd.api+json.") && !detail.contains("text/csv"), "{detail}");
    assert_eq!(app.call("POST", uri, &[]).await.status, 405);
    let pre = app.call("OPTIONS", uri, &[("access-control-request-method", "GET")]).await;
    assert_eq!(pre.status, 204);
    assert_eq!(pre.header("access-control-allow-origin"), "*");
}

#[tokio::test]
async fn every_invalid_query_is_400_without_a_source_request() {
    let app = TestApp::new().await;
    let id = "238232d151f5f92bbce32951b828cb7fe4887fdc1ac868628c7ab33d4eda4e3b";
    let bad = [
        "/v1/stations?near=-31.95".to_string(),
        "/v1/stations?near=-40,115".into(),
        "/v1/stations?near=-31.95,131".into(),
        "/v1/stations?near=-31.95,115.86&near=-31.95,115.86".into(),
        "/v1/stations?radius=5".into(),
        "/v1/stations?near=-31.95,115.86&radius=0".into(),
        "/v1/stations?near=-31.95,115.86&radius=101".into(),
        "/v1/stations?sort=distance".into(),
        "/v1/stations?sort=price".into(),
        "/v1/stations?sort=up".into(),
        "/v1/stations?limit=0".into(),
        "/v1/stations?limit=5001".into(),
        "/v1/stations?product=3".into(),
        "/v1/stations?product=1&filter[product]=1".into(),
        "/v1/stations?colour=red".into(),
        "/v1/stations?expand=prices".into(),
        format!("/v1/stations?suburb={}", "a".repeat(1030)),
        "/v1/stations/ABC".into(),
        // Not text once decoded: the same 400 document, not the router's plain text.
        "/v1/stations/%FF%FE".into(),
        "/v1/stations/%FF/history?product=1".into(),
        format!("/v1/stations/{}", id.to_uppercase()),
        format!("/v1/stations/{id}?product=1"),
        format!("/v1/stations/{id}?day=someday"),
        format!("/v1/stations/{id}/history"),
        format!("/v1/stations/{id}/history?product=1,2"),
        format!("/v1/stations/{id}/history?product=1&from=2026-09-10&to=2026-09-01"),
        format!("/v1/stations/{id}/history?product=1&to=2026-09-30"),
        "/v1/stats?product=1&from=2020-01-01".into(),
        "/v1/stats?product=1&interval=quarter".into(),
        format!("/v1/stations/{id}/history?product=1&from=29/09/2026"),
        format!("/v1/stations/{id}/history?product=1&product=1"),
        "/v1/stats".into(),
        "/v1/stats?product=1,4".into(),
        "/v1/stats?product=1&brand=0".into(),
        "/v1/stats?product=1&region=52".into(),
        "/v1/stats?product=1&day=today".into(),
        "/v1/stats?product=1&from=2026-13-01".into(),
        format!(
            "/v1/stats?product=1&region={}",
            (1..=30).map(|r| r.to_string()).collect::<Vec<_>>().join(",")
        ),
    ];
    for uri in &bad {
        let r = app.get(uri).await;
        assert_eq!(r.status, 400, "{uri}");
        assert_eq!(r.json()["errors"][0]["code"], "invalid_query", "{uri}");
        assert_eq!(r.header("cache-control"), "no-store");
    }
    let pre =
        app.call("OPTIONS", "/v1/stations/xyz/history", &[("access-control-request-method", "GET")]).await;
    assert_eq!(pre.status, 400, "a preflight for a malformed id fails like the request");
    assert!(pre.body.is_empty());
    assert_eq!(app.source_requests(), 0, "no 400 contacted the source");
}

/// One product-1 extract of a day.
fn one(date: Date, quotes: &[wafuel_domain::station::Quote]) -> [wafuel_store::history::DayExtract<'_>; 1] {
    [wafuel_store::history::DayExtract { product: p(1), date, quotes }]
}

async fn history_store_suite(store: Arc<dyn wafuel_store::Store>) {
    let app = TestApp::new().await;
    let sel = wafuel_query::parse_selection(wafuel_query::Dialect::V1, "product=1", {
        use wafuel_domain::time::Clock;
        app.clock.now()
    })
    .expect("q");
    let data = app.server.state.catalog.prices().selection(&sel).await.expect("extract");
    let quotes: Vec<wafuel_domain::station::Quote> = data.quotes().cloned().collect();
    let d = date(2026, 9, 29);
    let first = store.record(&one(d, &quotes)).await.expect("record");
    assert_eq!((first.written, first.replaced), (quotes.len() as u64, 0));
    let again = store.record(&one(d, &quotes)).await.expect("record");
    assert_eq!((again.written, again.replaced), (0, 0), "idempotent");
    // A corrected price replaces the row and is counted.
    let mut corrected = quotes.clone();
    corrected[0].price += 1.0;
    let fix = store.record(&one(d, &corrected)).await.expect("record");
    assert_eq!((fix.written, fix.replaced), (0, 1));
    let id = corrected[0].station.id.clone();
    let points = store.station_history(id.as_str(), p(1), d, d).await.expect("read").expect("has product");
    assert_eq!(points, vec![(d, (corrected[0].price * 10.0).round() as i64)]);
    assert_eq!(store.station_history(id.as_str(), p(4), d, d).await.expect("read"), None);
    assert_eq!(store.station_history(&"f".repeat(64), p(1), d, d).await.expect("read"), None);
    // Several extracts in one write (a bulk load): the days before and after.
    let (earlier, later) = (date(2026, 9, 27), date(2026, 10, 1));
    let both = [one(later, &quotes)[0], one(earlier, &quotes)[0]];
    let w = store.record(&both).await.expect("record");
    assert_eq!(w.written, 2 * quotes.len() as u64);
    let market = store.market(p(1), earlier, later).await.expect("market");
    assert_eq!(market.prices().len(), quotes.len() * 3);
    assert!(market.prices().windows(2).all(|w| w[0].0 <= w[1].0), "ascending by date");
    let station = market.stations.values().find(|s| s.station_id == id.as_str()).expect("station");
    assert_eq!((station.first_seen, station.last_seen), (earlier, later));
    assert_eq!(store.prune_history(later).await.expect("prune"), 2 * quotes.len() as u64);
    assert_eq!(store.market(p(1), earlier, later).await.expect("market").prices().len(), quotes.len());
}

#[tokio::test]
async fn history_store_sqlite() {
    let dir = tempfile::tempdir().expect("dir");
    history_store_suite(sqlite_store(&dir).await).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn history_store_postgres() {
    let url = postgres_url();
    history_store_suite(postgres_store(&url).await).await;
}

/// A list rendered before 14:30 says tomorrow is not yet published; it must not be served
/// (by this server's caches or, through `s-maxage`, by shared ones) past 14:30, when the same
/// request names tomorrow's prices and their change.
#[tokio::test]
async fn a_list_rendered_before_publication_is_not_served_after_it() {
    let app = TestApp::at(date(2026, 9, 29).at(14, 29, 0, 0)).await;
    let path = "/v1/stations?product=1&limit=3";
    let before = app.get(path).await;
    assert_eq!(before.json()["meta"]["next"]["publicationStatus"], "not_yet_published");
    let shared = before
        .headers
        .get("cache-control")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split("s-maxage=").nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .expect("s-maxage");
    assert!(shared <= 60, "shared caches keep it past 14:30: s-maxage={shared}");
    app.clock.advance(std::time::Duration::from_secs(120));
    let after = app.get(path).await.json();
    assert_eq!(after["meta"]["next"]["publicationStatus"], "available", "{}", after["meta"]);
    assert!(after["data"][0]["attributes"]["price"]["change"].get("1").is_some(), "tomorrow's change");
}

/// The station API's own filters, against the origin's stations as the list answers them.
#[tokio::test]
async fn favourites_features_and_left_out_brands_and_restrictions() {
    let app = TestApp::at(date(2026, 9, 29).at(10, 0, 0, 0)).await;
    let all = app.get("/v1/stations?product=1").await.json();
    let rows = all["data"].as_array().expect("rows").clone();
    assert!(rows.len() > 100);
    let attr = |r: &serde_json::Value, k: &str| r["attributes"][k].clone();
    let id = |r: &serde_json::Value| r["id"].as_str().expect("id").to_string();
    let requests = app.source_requests();
    // Favourites: in the order asked; an id the day does not list is named in meta.missing.
    let picked: Vec<String> = [7, 3, 40].iter().map(|&i| id(&rows[i])).collect();
    let absent = "0".repeat(64);
    let uri = format!("/v1/stations?product=1&id={},{absent},{},{}", picked[0], picked[1], picked[2]);
    let fav = app.get(&uri).await.json();
    let got: Vec<String> = fav["data"].as_array().expect("rows").iter().map(id).collect();
    assert_eq!(got, picked);
    assert_eq!(fav["meta"]["missing"], serde_json::json!([absent]));
    // A limit that cuts the answer names no id missing: which the day lists is not known.
    let cut = app.get(&format!("{uri}&limit=2")).await.json();
    assert_eq!(cut["data"].as_array().map(Vec::len), Some(2));
    assert_eq!(cut["meta"]["missing"], serde_json::json!([]));
    // With a sort, the sort's order over the same stations.
    let by_name = app.get(&format!("{uri}&sort=name")).await.json();
    let named: Vec<String> = by_name["data"].as_array().expect("rows").iter().map(id).collect();
    let mut expected: Vec<(String, String)> = [7, 3, 40]
        .iter()
        .map(|&i| (attr(&rows[i], "name").as_str().unwrap_or_default().to_string(), id(&rows[i])))
        .collect();
    expected.sort();
    assert_eq!(named, expected.into_iter().map(|(_, i)| i).collect::<Vec<_>>());
    // Fifty ids are allowed; fifty-one, a repeated one or a malformed one is 400.
    let fifty: Vec<String> = rows.iter().take(50).map(id).collect();
    let r = app.get(&format!("/v1/stations?product=1&id={}", fifty.join(","))).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["data"].as_array().map(Vec::len), Some(50));
    let fifty_one: Vec<String> = rows.iter().take(51).map(id).collect();
    for bad in [
        format!("id={}", fifty_one.join(",")),
        format!("id={},{}", picked[0], picked[0]),
        "id=abc".to_string(),
        "feature=999".to_string(),
        "feature=x".to_string(),
        "excludeBrand=999".to_string(),
        "brand=5&excludeBrand=5,6".to_string(),
        "excludeRestriction=9".to_string(),
    ] {
        let r = app.get(&format!("/v1/stations?product=1&{bad}")).await;
        assert_eq!(r.status, 400, "{bad}");
        assert_eq!(r.json()["errors"][0]["code"], "invalid_query", "{bad}");
    }
    // Features, brands and restrictions against the full list.
    let codes = |r: &serde_json::Value, k: &str| -> Vec<u64> {
        attr(r, k)
            .as_array()
            .map(|a| a.iter().filter_map(|c| c["code"].as_u64().or(c.as_u64())).collect())
            .unwrap_or_default()
    };
    let feature =
        rows.iter().flat_map(|r| codes(r, "siteFeatures")).next().expect("a station with a feature");
    let with: Vec<String> =
        rows.iter().filter(|r| codes(r, "siteFeatures").contains(&feature)).map(id).collect();
    let kept = app.get(&format!("/v1/stations?product=1&feature={feature}")).await.json();
    let kept: Vec<String> = kept["data"].as_array().expect("rows").iter().map(id).collect();
    assert_eq!(kept, with);
    let brand =
        attr(&rows[0], "brand")["code"].as_u64().or(attr(&rows[0], "brand").as_u64()).expect("brand code");
    let others: Vec<String> = rows
        .iter()
        .filter(|r| attr(r, "brand")["code"].as_u64().or(attr(r, "brand").as_u64()) != Some(brand))
        .map(id)
        .collect();
    let left = app.get(&format!("/v1/stations?product=1&excludeBrand={brand}")).await.json();
    let left: Vec<String> = left["data"].as_array().expect("rows").iter().map(id).collect();
    assert_eq!(left, others);
    assert!(others.len() < rows.len());
    let unrestricted: Vec<String> =
        rows.iter().filter(|r| !codes(r, "restrictions").contains(&3)).map(id).collect();
    let open = app.get("/v1/stations?product=1&excludeRestriction=3").await.json();
    let open: Vec<String> = open["data"].as_array().expect("rows").iter().map(id).collect();
    assert_eq!(open, unrestricted);
    assert_eq!(app.source_requests(), requests, "no request to the source");
}

#[tokio::test]
async fn brands_name_every_code_with_its_logo_and_stations() {
    let app = TestApp::at(date(2026, 9, 29).at(10, 0, 0, 0)).await;
    let all = app.get("/v1/stations").await.json();
    let mut by_brand: std::collections::BTreeMap<u64, usize> = std::collections::BTreeMap::new();
    for r in all["data"].as_array().expect("rows") {
        let b = &r["attributes"]["brand"];
        *by_brand.entry(b["code"].as_u64().or(b.as_u64()).expect("brand")).or_default() += 1;
    }
    let r = app.get("/v1/brands").await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let doc = r.json();
    let data = doc["data"].as_array().expect("brands");
    assert!(data.len() >= wafuel_domain::codes::BRANDS.len());
    for b in data {
        let a = &b["attributes"];
        assert_eq!(b["type"], "brand");
        let code = a["code"].as_u64().expect("code");
        assert_eq!(b["id"], code.to_string());
        assert_eq!(
            a["stations"].as_u64().map(|n| n as usize),
            Some(by_brand.get(&code).copied().unwrap_or(0)),
            "{code}"
        );
        if let Some(logo) = a["logo"].as_str() {
            let served = app.get(logo).await;
            assert_eq!(served.status, 200, "{logo}");
            assert_eq!(served.header("content-type"), "image/svg+xml");
        }
    }
    assert_eq!(app.get("/v1/brands?product=1").await.status, 400, "it takes no parameters");
}

/// `open`, `closesAt` and `opensAt` on every station, and `open=` keeping the open ones.
#[tokio::test]
async fn open_now_and_at_a_time_keep_the_stations_open_then() {
    // Tuesday 29 September 2026, 06:30 Perth: some stations open, some not yet.
    let app = TestApp::at(date(2026, 9, 29).at(6, 30, 0, 0)).await;
    let ids = |doc: &serde_json::Value| -> Vec<String> {
        doc["data"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| r["id"].as_str().expect("id").to_string())
            .collect()
    };
    let all = app.get("/v1/stations?product=1").await;
    let doc = all.json();
    assert_eq!(doc["meta"]["openAt"], "2026-09-29T06:30+08:00");
    let rows = doc["data"].as_array().expect("rows");
    let (mut open, mut closed, mut unknown, mut day_shops) = (0, 0, 0, 0);
    for r in rows {
        let a = &r["attributes"];
        match a["open"].as_bool() {
            Some(true) => open += 1,
            Some(false) => closed += 1,
            None => unknown += 1,
        }
        if a["is24Hours"] == true {
            assert_eq!(a["open"], true);
            assert!(a["closesAt"].is_null() && a["opensAt"].is_null());
        }
        if a["is24Hours"] != true && a.get("openHours").is_none() {
            assert!(a["open"].is_null(), "unknown hours are never closed: {a}");
        }
        // A shop of 06:00-22:00 every day: open, closing at 22:00 today.
        if a["openHours"]["Tuesday"] == "06:00-22:00" && a["openHours"]["Wednesday"] == "06:00-22:00" {
            day_shops += 1;
            assert_eq!(a["open"], true);
            assert_eq!(a["closesAt"], "2026-09-29T22:00+08:00");
            assert_eq!(a["opensAt"], "2026-09-30T06:00+08:00");
        }
    }
    assert!(
        open > 0 && closed > 0 && day_shops > 0,
        "open {open}, closed {closed}, unknown {unknown}, {day_shops}"
    );
    // The answer is fresh no longer than the next opening or closing among its stations.
    let max_age: i64 = all
        .header("cache-control")
        .split(',')
        .find_map(|d| d.trim().strip_prefix("max-age=").and_then(|v| v.parse().ok()))
        .expect("max-age");
    assert!(max_age <= 30 * 60, "{max_age}");
    // open=now keeps exactly the ones open now; its answer lasts a minute at most.
    let now = app.get("/v1/stations?product=1&open=now").await;
    let kept: Vec<String> = rows
        .iter()
        .filter(|r| r["attributes"]["open"] == true)
        .map(|r| r["id"].as_str().expect("id").to_string())
        .collect();
    assert_eq!(ids(&now.json()), kept);
    let max_age: i64 = now
        .header("cache-control")
        .split(',')
        .find_map(|d| d.trim().strip_prefix("max-age=").and_then(|v| v.parse().ok()))
        .expect("max-age");
    assert!(max_age <= 60, "{max_age}");
    // open=20:30 answers what the list says at 20:30.
    let later = app.get("/v1/stations?product=1&open=20:30").await.json();
    assert_eq!(later["meta"]["openAt"], "2026-09-29T20:30+08:00");
    app.clock.set(wafuel_domain::time::perth_instant(date(2026, 9, 29).at(20, 30, 0, 0)));
    let evening = app.get("/v1/stations?product=1&limit=5000").await.json();
    let open_then: Vec<String> = evening["data"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["attributes"]["open"] == true)
        .map(|r| r["id"].as_str().expect("id").to_string())
        .collect();
    assert_eq!(ids(&later), open_then);
    assert!(open_then.len() < rows.len());
    // Combined with near and sort.
    let near = app
        .get(&format!("/v1/stations?product=1&near={},{}&radius=10&open=now&sort=price", PERTH.0, PERTH.1))
        .await;
    assert_eq!(near.status, 200);
    assert!(near.json()["data"].as_array().expect("rows").iter().all(|r| r["attributes"]["open"] == true));
    let requests = app.source_requests();
    for bad in [
        "open=later",
        "open=25:00",
        "open=2026-10-07T21:00",
        "open=2026-09-28T23:00",
        "open=2026-09-30T9:00",
        "open=",
    ] {
        let r = app.get(&format!("/v1/stations?product=1&{bad}")).await;
        assert_eq!(r.status, 400, "{bad}");
    }
    assert_eq!(app.source_requests(), requests);
}

/// `discount`: each station's effective price, and the price sort and rank read it.
#[tokio::test]
async fn a_docket_discount_lowers_the_effective_price_and_the_sort_reads_it() {
    let app = TestApp::at(date(2026, 9, 29).at(10, 0, 0, 0)).await;
    let near = format!("/v1/stations?product=1&near={},{}&radius=10&sort=price", PERTH.0, PERTH.1);
    let plain = app.get(&near).await.json();
    let rows = plain["data"].as_array().expect("rows");
    let price = |r: &serde_json::Value, k: &str| r["attributes"]["price"][k]["1"].as_f64().expect("price");
    // Without a discount the effective price is the price.
    assert!(rows.iter().all(|r| price(r, "effective") == price(r, "products")));
    // 8 c/L off at the brand of the dearest station.
    let last = rows.last().expect("a station");
    let brand = last["attributes"]["brand"].as_u64().expect("brand");
    let doc = app.get(&format!("{near}&discount={brand}:8")).await.json();
    assert_eq!(doc["meta"]["discounts"][brand.to_string()], 8.0);
    let got = doc["data"].as_array().expect("rows");
    let tenths = |x: f64| (x * 10.0).round() as i64;
    for r in got {
        let off = if r["attributes"]["brand"].as_u64() == Some(brand) { 80 } else { 0 };
        assert_eq!(tenths(price(r, "effective")), tenths(price(r, "products")) - off, "{r}");
    }
    // Cheapest effective price first, ranks on it.
    let eff: Vec<i64> = got.iter().map(|r| tenths(price(r, "effective"))).collect();
    assert!(eff.windows(2).all(|w| w[0] <= w[1]), "{eff:?}");
    let mut expected: Vec<i64> = rows
        .iter()
        .map(|r| {
            tenths(price(r, "products"))
                - if r["attributes"]["brand"].as_u64() == Some(brand) { 80 } else { 0 }
        })
        .collect();
    expected.sort_unstable();
    assert_eq!(eff, expected);
    assert_eq!(got[0]["attributes"]["rank"], 1);
    // cost reads it too: 50 L of the effective price, the drive included.
    let cost = app.get(&format!("{near}&discount={brand}:8&fill=50&consumption=8&limit=3")).await.json();
    assert!(cost["data"].is_array(), "{cost}");
    for r in cost["data"].as_array().expect("rows") {
        let c = r["attributes"]["cost"].as_i64().expect("cost");
        assert!(c as f64 >= price(r, "effective") * 50.0 - 0.5, "{r}");
    }
    let requests = app.source_requests();
    for bad in [
        "discount=5",
        "discount=5:0",
        "discount=5:50.1",
        "discount=5:4.25",
        "discount=999:4",
        "discount=5:4,5:3",
        "discount=1:1,2:1,3:1,4:1,5:1,6:1,7:1,8:1,9:1,10:1,11:1",
    ] {
        let r = app.get(&format!("/v1/stations?product=1&{bad}")).await;
        assert_eq!(r.status, 400, "{bad}");
    }
    assert_eq!(app.source_requests(), requests);
}

/// `price.lastChange` on every station of a day, against the origin's own prices of the
/// simulated month before it.
#[tokio::test]
async fn last_change_is_right_on_every_station_over_a_simulated_month() {
    let app = seeded(31).await;
    let today = date(2026, 9, 29);
    let doc = app.get("/v1/stations?product=1,4").await.json();
    let rows = doc["data"].as_array().expect("rows");
    let (mut known, mut none) = (0, 0);
    for r in rows {
        let a = &r["attributes"];
        let name = a["name"].as_str().expect("name");
        let s = sim_station(&app, r["id"].as_str().expect("id"));
        for product in [1u8, 4] {
            let Some(price) = a["price"]["products"][product.to_string()].as_f64() else { continue };
            // Brute force: walk back day by day through the origin's prices of the month.
            let now = (price * 10.0).round() as i64;
            let mut expected = None;
            let mut start = today;
            for back in 1..=31 {
                let day = today.checked_sub(jiff::Span::new().days(back)).expect("day");
                let Some(then) = price_of(s, product, day) else { continue };
                if then != now {
                    expected = Some((start, then));
                    break;
                }
                start = day;
            }
            let got = &a["price"]["lastChange"][product.to_string()];
            match expected {
                Some((day, before)) => {
                    known += 1;
                    assert_eq!(got["date"], day.to_string(), "{name} {product}");
                    assert_eq!(
                        (got["previous"].as_f64().expect("previous") * 10.0).round() as i64,
                        before,
                        "{name} {product}"
                    );
                }
                None => {
                    none += 1;
                    assert!(got.is_null(), "{name} {product}: {got}");
                }
            }
        }
    }
    assert!(known > 100, "{known} changes, {none} without");
}

/// Worked out when the day's catalog is published (the event reader hears it), so the first
/// answer of the day reads it ready: the warm job publishes, no request has asked yet.
#[tokio::test]
async fn last_change_is_worked_out_when_the_day_is_published() {
    let app = seeded(31).await;
    let state = &app.server.state;
    state.events.start().await.expect("the event reader");
    let today = date(2026, 9, 29);
    assert!(!state.catalog.stations().last_changes().ready(p(1), today), "nothing published yet");
    let report = wafuel_service::jobs::warm::warm_pass(state.catalog.prices()).await;
    assert!(report.refreshed > 0, "{report:?}");
    // Worked out by the event reader's task, beside every other test of the run: given the
    // time a loaded machine may take, but never asked for by a request.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(40);
    while !state.catalog.stations().last_changes().ready(p(1), today) {
        assert!(tokio::time::Instant::now() < deadline, "ULP's last changes ready after its publish");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let doc = app.get("/v1/stations?product=1").await.json();
    let changes = doc["data"].as_array().expect("rows").iter();
    let known = changes.filter(|r| r["attributes"]["price"]["lastChange"]["1"].is_object()).count();
    assert!(known > 50, "{known} stations with a last change");
}

#[tokio::test]
async fn status_says_what_is_stored_and_what_the_origin_last_answered() {
    let app = TestApp::at(date(2026, 9, 29).at(10, 0, 0, 0)).await;
    let before = app.get("/v1/status").await;
    assert_eq!(before.status, 200, "{}", String::from_utf8_lossy(&before.body));
    let a = before.json()["data"]["attributes"].clone();
    assert_eq!(a["products"][0]["today"]["publicationStatus"], "not_fetched");
    assert_eq!(a["products"][0]["tomorrow"]["publicationStatus"], "not_yet_published");
    assert_eq!(a["products"][0]["tomorrow"]["expectedAt"], "2026-09-29T14:30:00+08:00");
    assert!(a["origin"]["lastSuccess"].is_null());
    let requests = app.source_requests();
    assert_eq!(app.source_requests(), requests, "status asks the source nothing");
    // Shared caches keep it 30 seconds; browsers revalidate with the ETag, as every document.
    assert!(before.header("cache-control").contains("s-maxage=30"), "{}", before.header("cache-control"));
    // After a price request: ULP today is stored, the origin answered.
    assert_eq!(app.get("/v1?product=1").await.status, 200);
    app.clock.advance(Duration::from_secs(31));
    let after = app.get("/v1/status").await;
    let a = after.json()["data"]["attributes"].clone();
    let ulp =
        a["products"].as_array().expect("products").iter().find(|p| p["product"] == 1).expect("ULP").clone();
    assert_eq!(ulp["today"]["publicationStatus"], "available");
    assert!(ulp["today"]["fetchedAt"].as_str().is_some_and(|t| t.starts_with("2026-09-29T10:00")), "{ulp}");
    assert!(a["origin"]["lastSuccess"].as_str().is_some());
    assert_eq!(a["version"], env!("CARGO_PKG_VERSION"));
    let body = String::from_utf8_lossy(&after.body).to_string();
    for secret in ["sqlite", "postgres", "127.0.0.1", "localhost"] {
        assert!(!body.contains(secret), "{secret} in {body}");
    }
    assert_eq!(app.get("/v1/status?verbose=1").await.status, 400);
}

/// `/v1/status` speaks `/v1`'s own words for each day and product: a product FuelWatch lists
/// no price of reads `empty` in both, tomorrow before 14:30 `not_yet_published` in both.
#[tokio::test]
async fn status_and_v1_say_the_same_publication_status() {
    let app = TestApp::at(date(2026, 9, 29).at(10, 0, 0, 0)).await;
    // FuelWatch lists no E85 price today (a channel with no items, as it answers then).
    app.sim.state.set_faults(wafuel_sim::Faults {
        mode: Some(wafuel_sim::FaultMode::Empty),
        products: Some(vec![10]),
        ..wafuel_sim::Faults::default()
    });
    let mut said = Vec::new();
    for product in [1, 2, 4, 5, 6, 10, 11] {
        for day in ["today", "tomorrow"] {
            let v1 = app.get(&format!("/v1?product={product}&day={day}")).await;
            assert_eq!(v1.status, 200, "{}", String::from_utf8_lossy(&v1.body));
            said.push((product, day, v1.json()["meta"]["publicationStatus"].clone()));
        }
    }
    assert!(said.contains(&(10, "today", serde_json::json!("empty"))), "{said:?}");
    app.clock.advance(Duration::from_secs(31));
    let status = app.get("/v1/status").await.json();
    let products = status["data"]["attributes"]["products"].as_array().expect("products").clone();
    for (product, day, v1) in said {
        let entry = products.iter().find(|p| p["product"] == product).expect("product listed");
        assert_eq!(entry[day]["publicationStatus"], v1, "product {product} {day}: {entry}");
    }
}
