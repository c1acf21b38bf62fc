//! Stations along a route and what a stop costs, against the simulated origin: the stations
//! within the detour of a real-shaped route (Perth CBD to Fremantle, then a long arc south
//! to Mandurah), each with its detour, distance along and cost, checked against a walk along
//! the route computed here (not `src/`'s vector method), in every representation; the long
//! query's bound end to end; and every bad input as 400 before any source request.

use jiff::civil::date;

use crate::support::*;

/// The route's points: Perth CBD, Kings Park's edge, Fremantle, then one 50 km arc to
/// Mandurah (stations near its middle are far from every vertex).
const POINTS: [(f64, f64); 5] = [
    (-31.9523, 115.8613),
    (-31.9640, 115.8330),
    (-32.0082, 115.7950),
    (-32.0569, 115.7439),
    (-32.5297, 115.7231),
];

/// The Encoded Polyline Algorithm Format at precision 5, written out here.
pub fn encode(points: &[(f64, f64)]) -> String {
    fn value(v: i64, out: &mut String) {
        let mut v = if v < 0 { !(v << 1) } else { v << 1 } as u64;
        while v >= 0x20 {
            out.push(char::from(((0x20 | (v & 0x1f)) + 63) as u8));
            v >>= 5;
        }
        out.push(char::from((v + 63) as u8));
    }
    let (mut lat, mut lng) = (0i64, 0i64);
    let mut out = String::new();
    for &(la, lo) in points {
        let (a, b) = ((la * 1e5).round() as i64, (lo * 1e5).round() as i64);
        value(a - lat, &mut out);
        value(b - lng, &mut out);
        (lat, lng) = (a, b);
    }
    out
}

/// Great-circle metres by the spherical law of cosines.
fn metres(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (p1, p2) = (a.0.to_radians(), b.0.to_radians());
    let dl = (b.1 - a.1).to_radians();
    6_371_000.0 * (p1.sin() * p2.sin() + p1.cos() * p2.cos() * dl.cos()).clamp(-1.0, 1.0).acos()
}

/// (metres off the route, metres along it) by walking each arc in steps of about 2 m
/// (points interpolated on the sphere), the nearest sample winning.
fn walk(point: (f64, f64)) -> (f64, f64) {
    let unit = |(la, lo): (f64, f64)| {
        let (la, lo) = (la.to_radians(), lo.to_radians());
        [la.cos() * lo.cos(), la.cos() * lo.sin(), la.sin()]
    };
    let mut best = (f64::MAX, 0.0);
    let mut start = 0.0;
    for pair in POINTS.windows(2) {
        let length = metres(pair[0], pair[1]);
        let (a, b) = (unit(pair[0]), unit(pair[1]));
        let theta = length / 6_371_000.0;
        let steps = (length / 2.0).ceil() as usize;
        for k in 0..=steps {
            let t = k as f64 / steps as f64;
            let (wa, wb) = (((1.0 - t) * theta).sin() / theta.sin(), (t * theta).sin() / theta.sin());
            let v = [wa * a[0] + wb * b[0], wa * a[1] + wb * b[1], wa * a[2] + wb * b[2]];
            let at = (v[2].asin().to_degrees(), v[1].atan2(v[0]).to_degrees());
            let d = metres(at, point);
            if d < best.0 {
                best = (d, start + length * t);
            }
        }
        start += length;
    }
    best
}

fn tenths(v: &serde_json::Value) -> i64 {
    (v.as_f64().expect("price") * 10.0).round() as i64
}

#[tokio::test]
async fn stations_along_a_route_with_detour_along_and_the_cost_of_the_stop() {
    let app = TestApp::at(date(2026, 9, 29).at(15, 0, 0, 0)).await;
    let route = encode(&POINTS);
    let uri = format!("/v1/stations?route={route}&detour=1.5&product=1");
    let r = app.get(&uri).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let doc = r.json();
    assert_valid("StationsDocument", &doc);
    assert_eq!(doc["meta"]["route"]["points"], 5);
    assert_eq!(doc["meta"]["route"]["detour"], 1.5);
    let length: f64 = POINTS.windows(2).map(|w| metres(w[0], w[1])).sum();
    assert!((doc["meta"]["route"]["length"].as_f64().expect("length") - length).abs() <= 2.0);
    let data = doc["data"].as_array().expect("data");
    // Exactly the origin's product-1 stations within 1.5 km of the route (those within a
    // metre of the edge left out of the comparison: the walk is that coarse).
    let walked: Vec<(String, f64, f64)> = app
        .sim
        .state
        .dataset()
        .stations
        .iter()
        .filter(|s| s.products.contains(&1))
        .filter_map(|s| {
            let (d, along) = walk((s.lat, s.lon));
            let key = wafuel_domain::key::station_key(&s.address, &s.location, s.lat, s.lon);
            (d <= 1_501.0).then(|| (wafuel_domain::key::key_digest(&key), d, along))
        })
        .collect();
    assert!(walked.len() > 15, "a busy road: {}", walked.len());
    let served: Vec<&str> = data.iter().map(|s| s["id"].as_str().expect("id")).collect();
    for (id, d, _) in &walked {
        assert!(*d > 1_499.0 || served.contains(&id.as_str()), "{id} at {d} m is missing");
    }
    let mut far_from_vertices = 0;
    let mut last_along = i64::MIN;
    for s in data {
        let a = &s["attributes"];
        let id = s["id"].as_str().expect("id");
        let (_, d, along) =
            walked.iter().find(|(w, _, _)| w == id).expect("served stations are within the detour");
        let detour = a["detour"].as_i64().expect("detour");
        let served_along = a["along"].as_i64().expect("along");
        assert!((detour as f64 - d).abs() <= 1.5, "{id}: detour {detour} vs {d}");
        assert!((served_along as f64 - along).abs() <= 3.0, "{id}: along {served_along} vs {along}");
        assert!(served_along >= last_along, "sorted by along by default");
        last_along = served_along;
        assert!(a.get("distance").is_none() && a.get("cost").is_none() && a.get("rank").is_none());
        let (lat, lon) = (a["latitude"].as_f64().expect("lat"), a["longitude"].as_f64().expect("lon"));
        if POINTS.iter().all(|&v| metres(v, (lat, lon)) > 10_000.0) {
            far_from_vertices += 1;
        }
    }
    assert!(far_from_vertices > 0, "stations beside the long arc's middle are found");
    // Two catalog extracts (today and tomorrow), whatever the route.
    assert_eq!(app.source_requests(), 2);

    // The cost of the stop: 45.5 L at the station's price plus 2 × detour at 9.5 L/100 km.
    let r = app.get(&format!("{uri}&fill=45.5&consumption=9.5&sort=cost&limit=10")).await;
    assert_eq!(r.status, 200);
    let doc = r.json();
    assert_eq!(doc["meta"]["stop"]["fill"], 45.5);
    assert_eq!(doc["meta"]["stop"]["consumption"], 9.5);
    let data = doc["data"].as_array().expect("data");
    assert_eq!(data.len(), 10);
    let mut last = (0, 0);
    for (i, s) in data.iter().enumerate() {
        let a = &s["attributes"];
        let price = tenths(&a["price"]["products"]["1"]);
        let detour = a["detour"].as_i64().expect("detour");
        // cents = price (c/L) × (45.5 + 9.5 × 2 × detour km / 100), half away from zero,
        // in whole numbers: price_tenths × (455 × 10⁵ + 95 × 2 × metres) / 10⁷.
        let exact = i128::from(price) * (455 * 100_000 + 95 * 2 * i128::from(detour));
        let cents = ((exact + 5_000_000) / 10_000_000) as i64;
        let cost = a["cost"].as_i64().expect("cost");
        assert_eq!(cost, cents, "{}", s["id"]);
        let rank = a["rank"].as_u64().expect("rank") as usize;
        assert!(cost >= last.0, "cheapest stop first");
        assert_eq!(rank, if i > 0 && cost == last.0 { last.1 } else { i + 1 });
        last = (cost, rank);
    }

    // GeoJSON and CSV carry the same fields.
    let geo = app
        .call("GET", &format!("{uri}&fill=45.5&consumption=9.5"), &[("accept", "application/geo+json")])
        .await;
    let props = &geo.json()["features"][0]["properties"];
    assert!(props["detour"].is_i64() && props["along"].is_i64() && props["cost"].is_i64(), "{props}");
    let csv = app.call("GET", &uri, &[("accept", "text/csv")]).await;
    let text = String::from_utf8(csv.body.to_vec()).expect("utf-8");
    let mut lines = text.split("\r\n");
    assert_eq!(lines.next(), Some(STATIONS_CSV_HEADER));
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    for row in reader.records() {
        let row = row.expect("a CSV row");
        let tail: Vec<&str> = (11..15).map(|i| row.get(i).expect("15 columns")).collect();
        assert!(
            tail[0].is_empty() && !tail[1].is_empty() && !tail[2].is_empty() && tail[3].is_empty(),
            "{row:?}"
        );
    }
    assert_conditional_get(&app, &uri, &[]).await;
}

#[tokio::test]
async fn near_with_a_stop_cost_ranks_the_detour_against_the_price() {
    let app = TestApp::at(date(2026, 9, 29).at(10, 0, 0, 0)).await;
    let near = "/v1/stations?near=-31.9523,115.8613&radius=15&product=1";
    let by_price = app.get(&format!("{near}&sort=price&fill=60&consumption=12")).await.json();
    let by_cost = app.get(&format!("{near}&sort=cost&fill=60&consumption=12")).await.json();
    let rows = |doc: &serde_json::Value| -> Vec<(String, i64, i64, i64)> {
        doc["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|s| {
                let a = &s["attributes"];
                (
                    s["id"].as_str().expect("id").to_string(),
                    tenths(&a["price"]["products"]["1"]),
                    a["distance"].as_i64().expect("distance"),
                    a["cost"].as_i64().expect("cost"),
                )
            })
            .collect()
    };
    let (priced, costed) = (rows(&by_price), rows(&by_cost));
    assert_eq!(priced.len(), costed.len());
    for (_, price, distance, cost) in &costed {
        let exact = i128::from(*price) * (600 * 100_000 + 120 * 2 * i128::from(*distance));
        assert_eq!(*cost, ((exact + 5_000_000) / 10_000_000) as i64);
    }
    assert!(costed.windows(2).all(|w| w[0].3 <= w[1].3), "sorted by cost");
    // The cheapest stop costs no more than filling at the cheapest price, wherever that is.
    assert!(costed[0].3 <= priced[0].3);
}

#[tokio::test]
async fn every_bad_route_or_stop_is_400_without_a_source_request() {
    let app = TestApp::new().await;
    let route = encode(&POINTS);
    let california = encode(&[(38.5, -120.2), (40.7, -120.95)]);
    let bad = [
        format!("/v1/stations?route={route}&near=-31.95,115.86"),
        "/v1/stations?detour=2".to_string(),
        format!("/v1/stations?route={route}&detour=0"),
        format!("/v1/stations?route={route}&detour=21"),
        format!("/v1/stations?route={route}&radius=2"),
        format!("/v1/stations?route={route}&sort=distance"),
        format!("/v1/stations?route={}", encode(&POINTS[..1])),
        format!("/v1/stations?route={california}"),
        format!("/v1/stations?route={route}%7F"),
        format!("/v1/stations?route={}", &route[..route.len() - 1]),
        "/v1/stations?near=-31.95,115.86&sort=detour".to_string(),
        "/v1/stations?near=-31.95,115.86&product=1&fill=50".to_string(),
        "/v1/stations?near=-31.95,115.86&fill=50&consumption=8".to_string(),
        "/v1/stations?product=1&fill=50&consumption=8".to_string(),
        "/v1/stations?near=-31.95,115.86&product=1&fill=201&consumption=8".to_string(),
        "/v1/stations?near=-31.95,115.86&product=1&fill=50&consumption=8.25".to_string(),
        "/v1/stations?near=-31.95,115.86&product=1&sort=cost".to_string(),
        format!("/v1/stations?product=1&suburb=perth&x={}", "a".repeat(2_000)),
        format!("/v1?route={route}"),
    ];
    for uri in &bad {
        let r = app.get(uri).await;
        assert_eq!(r.status, 400, "{uri}");
        assert_eq!(r.json()["errors"][0]["code"], "invalid_query", "{uri}");
    }
    // 1,001 points: one too many.
    let many: Vec<(f64, f64)> = (0..1_001).map(|i| (-31.9, 115.8 + f64::from(i) * 0.0001)).collect();
    let r = app.get(&format!("/v1/stations?route={}", encode(&many))).await;
    assert_eq!(r.status, 400);
    assert_eq!(app.source_requests(), 0, "no 400 contacted the source");
}

/// The drivers' filters (`id`, `feature`, `excludeBrand`, `open`, `discount`) with a route,
/// a stop's cost, `sort=cost` and `limit`: exactly the route's own stations that pass each
/// rule, in the route answer's cost order (a filter never reorders), cut by the limit.
#[tokio::test]
async fn the_drivers_filters_combine_with_a_route_a_stop_and_a_limit() {
    let app = TestApp::at(date(2026, 9, 29).at(19, 30, 0, 0)).await;
    let route = encode(&POINTS);
    let code = |v: &serde_json::Value| v["code"].as_u64().or(v.as_u64());
    let brand_of = |s: &serde_json::Value| code(&s["attributes"]["brand"]).expect("brand");
    let features = |s: &serde_json::Value| -> Vec<u64> {
        s["attributes"]["siteFeatures"]
            .as_array()
            .map(|a| a.iter().filter_map(code).collect())
            .unwrap_or_default()
    };
    let base_uri = format!("/v1/stations?route={route}&detour=3&product=1&fill=40&consumption=8&sort=cost");
    let plain = app.get(&base_uri).await.json();
    let plain = plain["data"].as_array().expect("data").clone();
    assert!(plain.len() > 20, "a busy road: {}", plain.len());
    // The most common brand is left out; another gets a 6 c/L docket; the feature is one that
    // some but not all of the route's stations have.
    let mut counts = std::collections::BTreeMap::new();
    for s in &plain {
        *counts.entry(brand_of(s)).or_insert(0) += 1;
    }
    // (Brand 0, the unmapped ones, is no code a query may name.)
    counts.remove(&0);
    let (&excluded, _) = counts.iter().max_by_key(|(_, n)| **n).expect("a brand");
    let docket = *counts.keys().find(|&&b| b != excluded).expect("a second brand");
    let feature = plain
        .iter()
        .flat_map(features)
        .find(|f| plain.iter().filter(|s| features(s).contains(f)).count() < plain.len())
        .expect("a feature some stations lack");
    let ids: Vec<String> =
        plain.iter().step_by(2).take(40).map(|s| s["id"].as_str().expect("id").to_string()).collect();
    let requests = app.source_requests();

    let discounted = app.get(&format!("{base_uri}&discount={docket}:6")).await.json();
    let discounted = discounted["data"].as_array().expect("data").clone();
    let filters = format!(
        "&discount={docket}:6&excludeBrand={excluded}&feature={feature}&open=now&id={}",
        ids.join(",")
    );
    let got = app.get(&format!("{base_uri}{filters}")).await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    let got = got.json();
    let want: Vec<&str> = discounted
        .iter()
        .filter(|s| ids.iter().any(|i| i == s["id"].as_str().unwrap_or_default()))
        .filter(|s| brand_of(s) != excluded && features(s).contains(&feature))
        .filter(|s| s["attributes"]["open"] == serde_json::json!(true))
        .map(|s| s["id"].as_str().expect("id"))
        .collect();
    let served: Vec<&str> =
        got["data"].as_array().expect("data").iter().map(|s| s["id"].as_str().expect("id")).collect();
    assert_eq!(served, want);
    assert!(!want.is_empty(), "the filters leave some stations to compare");
    // Each kept station's cost is the route answer's with the same docket; at the docket's
    // brand the effective price is 6 c/L under the pump's.
    for s in got["data"].as_array().expect("data") {
        let same = discounted.iter().find(|d| d["id"] == s["id"]).expect("on the route");
        assert_eq!(s["attributes"]["cost"], same["attributes"]["cost"]);
        let price = &s["attributes"]["price"];
        let off = tenths(&price["products"]["1"]) - tenths(&price["effective"]["1"]);
        assert_eq!(off, if brand_of(s) == docket { 60 } else { 0 }, "{}", s["id"]);
    }
    // The limit cuts the same order.
    let cut = app.get(&format!("{base_uri}{filters}&limit=2")).await.json();
    let cut: Vec<&str> =
        cut["data"].as_array().expect("data").iter().map(|s| s["id"].as_str().expect("id")).collect();
    assert_eq!(cut, want.iter().take(2).copied().collect::<Vec<_>>());
    assert_eq!(app.source_requests(), requests, "answered from the day's catalog");
}
