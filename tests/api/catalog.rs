//! Day catalogs held in memory: a publish by another replica reaches this one without a
//! restart (and without re-reading the store per request), and a stream of never-repeated
//! queries leaves every cache within its bound.

use std::sync::Arc;
use std::time::Duration;

use jiff::civil::date;
use wafuel_domain::time::Day;
use wafuel_service::snapshot::catalog_extract;

use crate::support::*;

/// GET through a replica's router: status, headers and JSON body.
async fn get(router: &axum::Router, uri: &str, encoding: Option<&str>) -> TestResponse {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let mut request = axum::http::Request::get(uri);
    if let Some(e) = encoding {
        request = request.header("accept-encoding", e);
    }
    let response =
        router.clone().oneshot(request.body(axum::body::Body::empty()).expect("request")).await.expect("ok");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.expect("body").to_bytes();
    TestResponse { status, headers, body }
}

fn fetched_at(r: &TestResponse) -> String {
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["meta"]["fetchedAt"].as_str().expect("fetchedAt").to_string()
}

/// Replica A fills and later refreshes the product-1 extract; replica B, over the same
/// store, serves what it holds in memory until its recheck, then A's newer publication, for
/// nearby points and single stations it was never asked for, without a restart and without
/// a source request of its own.
async fn another_replicas_publish(
    a_store: Arc<dyn wafuel_store::Store>,
    b_store: Arc<dyn wafuel_store::Store>,
) {
    let (sim, clock) = origin_at(fixture_morning(), wafuel_sim::Faults::default()).await;
    let a = Server::start(app_config(&sim, &clock, a_store, None), Default::default()).await;
    let b = Server::start(app_config(&sim, &clock, b_store, None), Default::default()).await;

    let first = a.get("/v1").await;
    assert_eq!(fetched_at(&first), "2026-09-29T10:00:00+08:00");
    let held = b.get("/v1/stations?product=1&near=-31.96,115.87&limit=3").await;
    assert_eq!(fetched_at(&held), "2026-09-29T10:00:00+08:00");
    assert_eq!(held.header("x-fuel-snapshot-cache"), "HIT", "B reads A's publication from the store");
    assert_eq!(sim.state.request_count(), 7);

    // Ten minutes on, A's warm job publishes newer snapshots of the same keys.
    clock.advance(Duration::from_secs(600));
    for product in [1, 2, 4, 5, 6, 10, 11] {
        let extract = catalog_extract(p(product), Day::Today, date(2026, 9, 29));
        assert!(a.state.catalog.prices().refresh(&extract).await.expect("refresh"));
    }
    assert_eq!(sim.state.request_count(), 14);

    // B notices on its next request (its recheck interval has passed): a point and a
    // station it was never asked for are answered from A's newer snapshot.
    let moved = b.get("/v1/stations?product=1&near=-31.97,115.88&limit=3").await;
    assert_eq!(fetched_at(&moved), "2026-09-29T10:10:00+08:00");
    assert_eq!(moved.header("x-fuel-snapshot-cache"), "HIT");
    let id = moved.json()["data"][0]["id"].as_str().expect("station id").to_string();
    let one = b.get(&format!("/v1/stations/{id}")).await;
    assert_eq!(fetched_at(&one), "2026-09-29T10:10:00+08:00");
    assert_eq!(one.json()["data"]["id"], id.as_str());
    assert_eq!(one.header("x-fuel-snapshot-cache"), "HIT");
    assert_eq!(sim.state.request_count(), 14, "B never fetched from the source");
}

#[tokio::test]
async fn another_replicas_publish_is_served_without_a_restart_sqlite() {
    let dir = tempfile::tempdir().expect("dir");
    another_replicas_publish(sqlite_store(&dir).await, sqlite_store(&dir).await).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn another_replicas_publish_is_served_without_a_restart_postgres() {
    let (a, b) = postgres_replica_stores(&postgres_url()).await;
    another_replicas_publish(a, b).await;
}

/// Hundreds of nearby points and stations nobody asked before, in every coding, through a
/// render cache of 256 KiB: the cache stays within its bound, and no entry holds more bytes
/// than it was weighed at (codings are made after an entry is weighed).
#[tokio::test]
async fn never_repeated_queries_stay_within_the_byte_bounds() {
    const BOUND: u64 = 256 * 1024;
    let app = TestApp::new().await;
    let mut state = app.server.state.clone();
    state.rendered = wafuel_web::http::rendered::new_cache(BOUND);
    state.front = Default::default();
    let router = wafuel::app::build_router(state.clone());
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let codings = [None, Some("gzip"), Some("br"), Some("gzip, br")];
    let mut ids = Vec::new();
    for i in 0..300 {
        let (lat, lng) = (-32.3 + 0.6 * next(), 115.7 + 0.3 * next());
        let uri = format!("/v1/stations?near={lat:.5},{lng:.5}&radius=8&product=1&sort=price&limit=20");
        let r = get(&router, &uri, codings[i % codings.len()]).await;
        assert_eq!(r.status, 200);
        if i % codings.len() == 0 {
            let doc = r.json();
            ids.extend(
                doc["data"]
                    .as_array()
                    .expect("data")
                    .iter()
                    .filter_map(|s| s["id"].as_str())
                    .map(String::from),
            );
        }
    }
    ids.sort();
    ids.dedup();
    for (i, id) in ids.iter().take(100).enumerate() {
        let r = get(&router, &format!("/v1/stations/{id}"), codings[i % codings.len()]).await;
        assert_eq!(r.status, 200);
    }
    let cache = state.rendered.docs();
    cache.run_pending_tasks().await;
    assert!(cache.weighted_size() <= BOUND, "{} > {BOUND}", cache.weighted_size());
    assert!(cache.entry_count() < 300, "the bound was reached: entries were evicted");
    let mut held = 0;
    for (key, doc) in cache.iter() {
        let weighed = u64::from(wafuel_web::http::rendered::weight(&key, &doc));
        assert!(
            doc.repr.made_bytes() as u64 <= weighed,
            "{} bytes made, weighed {weighed}",
            doc.repr.made_bytes()
        );
        held += doc.repr.made_bytes() as u64;
    }
    assert!(held <= BOUND);
    assert!(state.catalog.prices().held_quotes() <= wafuel_service::snapshot::held::MAX_HELD_QUOTES);
    assert!(state.catalog.prices().held_quotes() > 0, "the day catalogs are held");
}

/// A point search is kept from its second ask: asked once, its document is answered and let
/// go (nothing held, nothing in the front cache); asked again, it is kept; the third ask is a
/// hit. A search by suburb is kept from its first answer.
#[tokio::test]
async fn a_point_search_is_kept_from_its_second_ask() {
    let app = TestApp::new().await;
    let held = || async {
        let docs = app.server.state.rendered.docs();
        docs.run_pending_tasks().await;
        docs.entry_count()
    };
    let near = "/v1/stations?near=-31.95,115.86&radius=5&product=1&sort=price";
    let first = app.get(near).await;
    assert_eq!(first.status, 200);
    assert_eq!(first.header("x-fuel-cache"), "MISS");
    let before = held().await;
    let second = app.get(near).await;
    assert_eq!(second.header("x-fuel-cache"), "MISS", "built again, and kept this time");
    assert_eq!(held().await, before + 1);
    let third = app.get(near).await;
    assert_eq!(third.header("x-fuel-cache"), "HIT");
    assert_eq!(first.body, third.body, "the same answer however it was found");
    assert_eq!(first.header("etag"), third.header("etag"));

    let suburb = "/v1/stations?suburb=ellenbrook&product=1";
    assert_eq!(app.get(suburb).await.header("x-fuel-cache"), "MISS");
    assert_eq!(app.get(suburb).await.header("x-fuel-cache"), "HIT");
}

/// Statistics read history days held in memory, and drop them when the store's history
/// changes (here a write through another handle, as another replica's would be).
#[tokio::test]
async fn statistics_follow_a_history_write_by_another_replica() {
    use wafuel_domain::time::Clock;
    let app = TestApp::new().await;
    let day = date(2026, 9, 29);
    let sel =
        wafuel_query::parse_selection(wafuel_query::Dialect::V1, "product=1", app.clock.now()).expect("q");
    let data = app.server.state.catalog.prices().selection(&sel).await.expect("extract");
    let quotes: Vec<wafuel_domain::station::Quote> = data.quotes().cloned().collect();
    let brand = quotes[0].station.brand.get();
    let stats = |extra: &str| format!("/v1/stats?product=1&from=2026-09-29&to=2026-09-29{extra}");
    let before = app.get(&stats("")).await.json();
    let min = |doc: &serde_json::Value| doc["data"]["attributes"]["days"][0]["min"].as_f64().expect("min");
    assert!(min(&before) > 123.4);

    let elsewhere = sqlite_store(&app.dir).await;
    let mut changed = quotes.clone();
    for q in &mut changed {
        q.price = 123.4;
    }
    let write = [wafuel_store::history::DayExtract { product: p(1), date: day, quotes: &changed }];
    assert!(elsewhere.record(&write).await.expect("record").replaced > 0);
    app.clock.advance(Duration::from_secs(2));
    // Another document over the same (held) day: read again, with the new prices.
    let after = app.get(&stats(&format!("&brand={brand}"))).await.json();
    assert_eq!(min(&after), 123.4);
}

/// A replica starting over a filled store decodes the day's stored extracts before it serves;
/// over an empty store it holds nothing and asks the source nothing.
#[tokio::test]
async fn a_restarted_replica_preloads_the_stored_day() {
    use wafuel_domain::time::Clock;
    let app = TestApp::new().await;
    let extracts = || wafuel_service::jobs::warm::warm_extracts(app.clock.now());
    let empty = app_state(&app.sim, &app.clock, sqlite_store(&app.dir).await, None);
    assert_eq!(empty.catalog.preload(extracts()).await, 0);
    assert_eq!(empty.catalog.prices().held_quotes(), 0);
    assert_eq!(app.source_requests(), 0, "preloading never asks the source");

    assert_eq!(app.get("/v1").await.status, 200);
    assert_eq!(app.source_requests(), 7);
    // A restart as `serve` does it: the application preloads while it is built.
    let config = app_config(&app.sim, &app.clock, sqlite_store(&app.dir).await, None);
    let restarted = Server::start(config, Default::default()).await;
    let held = restarted.state.catalog.prices().held_quotes();
    assert!(held > 3_000, "the day's seven extracts are held ({held} quotes)");
    assert_eq!(app.source_requests(), 7, "preloading never asks the source");
    let r = restarted.get("/v1/stations?near=-31.95,115.86&product=1&limit=3").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-fuel-snapshot-cache"), "HIT");
    assert_eq!(restarted.state.catalog.prices().held_quotes(), held, "served from what was preloaded");
    assert_eq!(app.source_requests(), 7);
}

/// A store that fails after the day was read leaves the prices held in memory served (until
/// their own expiry) instead of turning every request into a source request.
#[tokio::test]
async fn a_failing_store_leaves_the_held_prices_served() {
    let app = TestApp::new().await;
    assert_eq!(app.get("/v1?product=1").await.status, 200);
    assert_eq!(app.source_requests(), 1);
    drop_sqlite_table(&app.dir, "snapshots").await;
    // Past the recheck: the stamp read fails.
    app.clock.advance(Duration::from_secs(2));
    for near in ["-31.95,115.86", "-32.05,115.75", "-31.80,115.80"] {
        let r = app.get(&format!("/v1/stations?product=1&near={near}&limit=3")).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.header("x-fuel-snapshot-cache"), "HIT");
    }
    assert_eq!(app.source_requests(), 1, "no source request while the day is held and fresh");
    // A product never held still goes to the source directly (the store is gone).
    let other = app.get("/v1?product=4").await;
    assert_eq!(other.status, 200);
    assert_eq!(other.header("x-fuel-snapshot-cache"), "BYPASS");
}

/// A history store that fails answers the same everywhere it is read: 503
/// `upstream_unavailable` with `Retry-After: 5`, for a station's history and for statistics.
#[tokio::test]
async fn a_failing_history_store_is_one_error_everywhere() {
    let app = TestApp::new().await;
    // The id from the price document (`<date>:<stationId>`): the station API would hold the
    // history's recent days for its last changes, and the held days answer without the store.
    let listed = app.get("/v1?product=1").await.json();
    let id =
        listed["data"][0]["id"].as_str().and_then(|i| i.split(':').nth(1)).expect("a station").to_string();
    drop_sqlite_table(&app.dir, "station_months").await;
    drop_sqlite_table(&app.dir, "history_stations").await;
    app.clock.advance(Duration::from_secs(2));
    for uri in [format!("/v1/stations/{id}/history?product=1"), "/v1/stats?product=1".to_string()] {
        let r = app.get(&uri).await;
        assert_eq!(r.status, 503, "{uri}");
        assert_eq!(r.json()["errors"][0]["code"], "upstream_unavailable", "{uri}");
        assert_eq!(r.header("retry-after"), "5", "{uri}");
        assert_eq!(r.header("cache-control"), "no-store", "{uri}");
    }
}
