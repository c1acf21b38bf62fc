//! The public API against the simulated origin: every route, rule, header and error code of
//! docs/api.md, with bodies checked against docs/openapi.json.

use std::collections::BTreeSet;
use std::time::Duration;

use jiff::civil::date;
use wafuel_sim::{FaultMode, Faults};

use crate::support::*;

const JSON_API: (&str, &str) = ("accept", "application/vnd.api+json");

#[tokio::test]
async fn statewide_catalog_document() {
    let app = TestApp::new().await;
    let r = app.call("GET", "/v1", &[JSON_API]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), "application/vnd.api+json");
    let doc = r.json();
    assert_valid("PriceDocument", &doc);
    let meta = &doc["meta"];
    assert_eq!(meta["source"], "fuelwatch.wa.gov.au");
    assert_eq!(meta["sourceDate"], "2026-09-29");
    assert_eq!(meta["validFrom"], "2026-09-29T06:00:00+08:00");
    assert_eq!(meta["validUntil"], "2026-09-30T06:00:00+08:00");
    assert_eq!(meta["fetchedAt"], "2026-09-29T10:00:00+08:00");
    assert_eq!(meta["publicationStatus"], "available");
    assert_eq!(meta["products"], serde_json::json!([1, 2, 4, 5, 6, 10, 11]));
    assert!(meta.get("product").is_none());
    assert_eq!(meta["version"], env!("CARGO_PKG_VERSION"));
    let data = doc["data"].as_array().expect("data");
    assert!((900..=960).contains(&data.len()), "{} stations", data.len());
    // One resource per station, all selected fuels inside, ordered by suburb, name, id.
    let ids: BTreeSet<&str> = data.iter().filter_map(|s| s["id"].as_str()).collect();
    assert_eq!(ids.len(), data.len());
    let keys: Vec<(String, String, String)> = data
        .iter()
        .map(|s| {
            let a = &s["attributes"];
            (
                a["address"]["suburb"].as_str().unwrap_or("").into(),
                a["name"].as_str().unwrap_or("").into(),
                s["id"].as_str().unwrap_or("").into(),
            )
        })
        .collect();
    assert!(keys.windows(2).all(|w| w[0] <= w[1]), "ordered by suburb, name, id");
    let costco =
        data.iter().find(|s| s["attributes"]["tradingName"] == "Costco Perth Airport").expect("costco");
    assert_eq!(costco["id"], "2026-09-29:dca78516464d85042c12eab0fd45d71665adc32b578908bc8444f29201d02ba7");
    let a = &costco["attributes"];
    assert_eq!(a["price"]["products"], serde_json::json!({"1": 218.7, "6": 242.7, "11": 264.7}));
    assert_eq!(a["price"]["asAt"], "2026-09-29T06:00:00+08:00");
    assert_eq!(a["brand"], 32);
    assert_eq!(a["phone"], "+61893114700");
    assert_eq!(a["restrictions"], serde_json::json!([3]));
    assert_eq!(a["siteFeatures"], serde_json::json!([8]));
    assert_eq!(a["is24Hours"], false);
    assert_eq!(a["openHours"]["Sunday"], "07:00-19:00");
    assert_eq!(
        a["address"],
        serde_json::json!({"street": "142 Dunreath Dr", "suburb": "PERTH AIRPORT", "state": "WA", "postcode": null})
    );
    let wandering =
        data.iter().find(|s| s["attributes"]["tradingName"] == "Shire of Wandering").expect("wandering");
    assert_eq!(wandering["attributes"]["brand"], 0);
    assert_eq!(wandering["attributes"]["sourceNotes"], serde_json::json!({"brand": "Quest Fuel"}));
    // One source request per catalog extract.
    assert_eq!(app.source_requests(), 7);
    for h in [
        "etag",
        "cache-control",
        "x-fuel-cache",
        "x-fuel-snapshot-cache",
        "x-fuel-source-date",
        "x-fuel-fetched-at",
        "vary",
        "access-control-allow-origin",
    ] {
        assert!(r.headers.contains_key(h), "missing {h}");
    }
    assert_eq!(r.header("x-fuel-cache"), "MISS");
    assert_eq!(r.header("x-fuel-snapshot-cache"), "MISS");
    assert_eq!(r.header("x-fuel-source-date"), "2026-09-29");
    assert_eq!(r.header("x-fuel-fetched-at"), "2026-09-29T10:00:00+08:00");
    assert_eq!(r.header("cache-control"), "public, max-age=0, s-maxage=21600");
    assert_eq!(r.header("vary"), "Accept, Accept-Encoding");
    assert!(r.header("access-control-expose-headers").contains("X-Fuel-Fetched-At"));
    assert_eq!(r.header("x-content-type-options"), "nosniff");
}

#[tokio::test]
async fn cache_reads_keep_fetched_at_and_count_down_freshness() {
    let app = TestApp::new().await;
    let first = app.get("/v1?product=1").await;
    app.clock.advance(Duration::from_secs(600));
    let second = app.get("/v1?product=1").await;
    assert_eq!(second.header("x-fuel-cache"), "HIT");
    assert_eq!(second.header("etag"), first.header("etag"));
    assert_eq!(second.json()["meta"]["fetchedAt"], "2026-09-29T10:00:00+08:00");
    assert_eq!(second.header("cache-control"), "public, max-age=0, s-maxage=21000");
    // After 15 minutes the document is rebuilt from the stored snapshot (to pick up
    // enrichment): same bytes, same ETag, freshness still counting down from the fetch.
    app.clock.advance(Duration::from_secs(3_000));
    let rebuilt = app.get("/v1?product=1").await;
    assert_eq!(rebuilt.header("x-fuel-cache"), "MISS");
    assert_eq!(rebuilt.header("x-fuel-snapshot-cache"), "HIT");
    assert_eq!(rebuilt.header("etag"), first.header("etag"));
    assert_eq!(rebuilt.header("cache-control"), "public, max-age=0, s-maxage=18000");
    assert_eq!(app.source_requests(), 1);
    // Another selection over the same extract: built anew, but from the stored snapshot.
    let other = app.get("/v1?product=1&brand=5").await;
    assert_eq!(other.header("x-fuel-cache"), "MISS");
    assert_eq!(other.header("x-fuel-snapshot-cache"), "HIT");
    assert_eq!(app.source_requests(), 1);
    // After 6 hours the snapshot is refetched.
    app.clock.advance(Duration::from_secs(5 * 3_600 + 1));
    let later = app.get("/v1?product=1").await;
    assert_eq!(later.header("x-fuel-cache"), "MISS");
    assert_eq!(later.header("x-fuel-snapshot-cache"), "MISS");
    assert_eq!(app.source_requests(), 2);
    assert_eq!(later.json()["meta"]["fetchedAt"], "2026-09-29T16:00:01+08:00");
}

/// The fast path (request target → finished document) never outlives what the query text
/// means: the same target is answered anew once tomorrow is published and once Perth's date
/// moves, and a date that has left the window becomes a 400 even though it was cached.
#[tokio::test]
async fn a_cached_target_follows_the_clock() {
    let app = TestApp::at(date(2026, 9, 29).at(14, 29, 45, 0)).await;
    let tomorrow = "/v1?day=tomorrow&product=1";
    let yesterday = "/v1?day=28/09/2026&product=1";
    let early = app.get(tomorrow).await;
    assert_eq!(early.json()["meta"]["publicationStatus"], "not_yet_published");
    assert_eq!(app.get(tomorrow).await.header("x-fuel-cache"), "HIT");
    // After 14:30 and the 30 s an empty snapshot lives: the same target now has prices.
    app.clock.advance(Duration::from_secs(31));
    let published = app.get(tomorrow).await;
    assert_eq!(published.json()["meta"]["publicationStatus"], "available");
    assert_ne!(published.header("etag"), early.header("etag"));
    // Ten minutes before Perth midnight both targets are answered and remembered…
    app.clock.set(wafuel_domain::time::perth_instant(date(2026, 9, 29).at(23, 50, 0, 0)));
    assert_eq!(app.get(yesterday).await.status, 200);
    assert_eq!(app.get(yesterday).await.header("x-fuel-cache"), "HIT");
    let before = app.get("/v1?product=1").await.json();
    assert_eq!(before["meta"]["sourceDate"], "2026-09-29");
    // …and past it, well within the documents' own lifetimes, "today" is the 30th and the
    // 28th is two days ago.
    app.clock.set(wafuel_domain::time::perth_instant(date(2026, 9, 30).at(0, 0, 5, 0)));
    let gone = app.get(yesterday).await;
    assert_eq!(gone.status, 400);
    assert_eq!(gone.json()["errors"][0]["code"], "invalid_query");
    let today = app.get("/v1?product=1").await.json();
    assert_eq!(today["meta"]["sourceDate"], "2026-09-30");
}

/// The application's admin port, built beside the public one: alive, ready over its store,
/// and its metrics count the public port's answers by route.
#[tokio::test]
async fn the_admin_port_answers_beside_the_public_one() {
    let app = TestApp::new().await;
    assert_eq!(app.get("/v1?product=1").await.status, 200);
    let admin = http();
    let get = |path: &'static str| {
        let url = format!("http://{}{path}", app.server.admin);
        let admin = admin.clone();
        async move {
            let r = admin.get(url).send().await.expect("the admin port answers");
            (r.status().as_u16(), r.text().await.expect("body"))
        }
    };
    assert_eq!(get("/healthz").await, (200, "ok\n".to_string()));
    assert_eq!(get("/readyz").await, (200, "ready\n".to_string()));
    let (status, metrics) = get("/metrics").await;
    assert_eq!(status, 200);
    assert!(
        metrics.lines().any(|l| l.starts_with("wafuel_http_requests_total") && l.contains("route=\"/v1\"")),
        "{metrics}"
    );
}

/// The observe layer: a client's `X-Request-Id` is kept and echoed, otherwise each request
/// gets a new one; both on a fast-path hit and on a 404.
#[tokio::test]
async fn request_ids_are_echoed_or_made() {
    let app = TestApp::new().await;
    let send = |id: Option<&'static str>, uri: &'static str| {
        let mut headers = Vec::new();
        if let Some(id) = id {
            headers.push(("x-request-id", id));
        }
        let app = &app;
        async move {
            let response = app.call("GET", uri, &headers).await;
            (response.status, response.headers.get("x-request-id").cloned())
        }
    };
    assert_eq!(
        send(Some("client-7"), "/v1?product=1").await.1.as_ref().map(|v| v.as_bytes()),
        Some(&b"client-7"[..])
    );
    let (status, a) = send(None, "/v1?product=1").await;
    let (_, b) = send(None, "/v1?product=1").await;
    assert_eq!(status, 200);
    let (a, b) = (a.expect("id made"), b.expect("id made"));
    assert_ne!(a, b, "each request its own id");
    let (missing, id) = send(Some("lost-1"), "/nowhere").await;
    assert_eq!((missing, id.as_ref().map(|v| v.as_bytes())), (404, Some(&b"lost-1"[..])));
}

#[tokio::test]
async fn every_query_rule_is_400_without_touching_the_source() {
    let app = TestApp::new().await;
    let long = format!("suburb={}", "a".repeat(101));
    let over = format!("suburb=perth&product=1&filter[day]=today&x={}", "a".repeat(1010));
    let mut bad: Vec<String> = [
        "product=3",
        "product=",
        "product=1,,2",
        "product=abc",
        "product=1&product=2",
        "product=1&filter[product]=1",
        "PRODUCT=1&Filter[Product]=2",
        "brand=0",
        "brand=1",
        "brand=bp",
        "region=52",
        "region=0",
        "region=64",
        "suburb=",
        "suburb=,perth",
        "day=today,tomorrow",
        "day=someday",
        "day=31/09/2026",
        "day=26/09/2026",
        "day=2026-09-29",
        "surrounding=maybe",
        "surrounding=yes&surrounding=no",
        "expand=",
        "expand=prices",
        "expand=brand,",
        "expand=brand&expand=all",
        "unknown=1",
        "filter[unknown]=1",
        "page[size]=10",
        "include=brand",
        "sort=price",
        "fields[serviceStation]=name",
        "region=25,26,27,28",
        "brand=2,35&region=25,26,27&suburb=a,b",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    bad.push(long);
    bad.push(over);
    for q in &bad {
        let r = app.call("GET", &format!("/v1?{q}"), &[JSON_API]).await;
        assert_eq!(r.status, 400, "/v1?{q}");
        let doc = r.json();
        assert_valid("JsonApiErrorDocument", &doc);
        assert_eq!(doc["errors"][0]["code"], "invalid_query", "{q}");
        assert_eq!(doc["errors"][0]["status"], "400");
        assert_eq!(r.header("cache-control"), "no-store");
        if q.starts_with("region=25,26,27,28") || q.starts_with("brand=2,35&region") {
            continue; // 28 and 36 combinations for /v1's seven products; /legacy defaults to one
        }
        let legacy_q = if q.starts_with("expand") { "expand=brand".to_string() } else { q.clone() };
        let l = app.get(&format!("/legacy?{legacy_q}")).await;
        assert_eq!(l.status, 400, "/legacy?{legacy_q}");
        assert_valid("LegacyErrorDocument", &l.json());
        assert_eq!(l.json()["error"]["code"], "invalid_query");
    }
    // Legacy-only rules: expand is rejected; every selection is bounded to 24 requests.
    assert_eq!(app.get("/legacy?expand=all").await.status, 400);
    let r = app.get("/legacy?brand=2,35,5,6&product=1,2,4,5,6,10,11").await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["error"]["message"],
        "Request at most 24 product/brand/region/suburb combinations; split larger selections."
    );
    let e = app.get("/v1?expand=nope").await.json();
    assert_eq!(e["errors"][0]["detail"], "Expand brand, siteFeatures, restrictions, or all.");
    assert_eq!(app.source_requests(), 0, "no 400 contacted the source");
}

#[tokio::test]
async fn accept_and_content_type_negotiation() {
    let app = TestApp::new().await;
    let ok = [
        "application/vnd.api+json",
        "*/*",
        "application/*",
        "application/vnd.api+json;profile=\"https://example.com/p,a;b\"",
        "application/vnd.api+json;ext=\"https://example.com/x\", application/vnd.api+json;q=0.9",
        "application/vnd.api+json;charset=utf-8, application/vnd.api+json",
    ];
    let refused = [
        "application/vnd.api+json; charset=utf-8",
        "application/vnd.api+json; ext=\"https://example.com/unknown\"",
        "application/vnd.api+json;q=0, */*;q=1",
        "application/*;q=0, */*;q=1",
        "*/*;q=1, application/*;q=0",
        "application/json",
    ];
    for accept in refused {
        let r = app.call("GET", "/v1?product=10", &[("accept", accept)]).await;
        assert_eq!(r.status, 406, "{accept}");
        assert_eq!(r.json()["errors"][0]["code"], "not_acceptable");
        assert_eq!(r.header("cache-control"), "no-store");
    }
    let r = app
        .call("GET", "/v1?product=10", &[("content-type", "application/vnd.api+json; charset=utf-8")])
        .await;
    assert_eq!(r.status, 415);
    assert_eq!(r.json()["errors"][0]["code"], "unsupported_media_type");
    assert_eq!(app.source_requests(), 0, "negotiation fails before any source work");
    for accept in ok {
        assert_eq!(app.call("GET", "/v1?product=10", &[("accept", accept)]).await.status, 200, "{accept}");
    }
    assert_eq!(app.call("GET", "/v1?product=10", &[("content-type", "text/plain")]).await.status, 200);
    assert_eq!(app.get("/v1?product=10").await.status, 200, "no Accept header");
    // /legacy does not negotiate JSON:API.
    assert_eq!(app.call("GET", "/legacy", &[("accept", "application/json")]).await.status, 200);
}

#[tokio::test]
async fn conditional_requests_on_every_cacheable_route() {
    let app = TestApp::new().await;
    assert_conditional_get(&app, "/v1?product=1,4", &[JSON_API]).await;
    assert_conditional_get(&app, "/v1?product=2", &[("accept-encoding", "gzip")]).await;
    assert_conditional_get(&app, "/legacy?product=5", &[]).await;
    assert_conditional_get(&app, "/static/image/brand/bp.svg", &[]).await;
}

#[tokio::test]
async fn head_is_get_without_a_body_everywhere() {
    let app = TestApp::new().await;
    for uri in [
        "/v1?product=6",
        "/legacy?product=6",
        "/",
        "/?product=3",
        "/static/image/brand/generic.svg",
        "/nowhere",
        "/v1?product=3",
        "/legacy?expand=brand",
        "/static/image/brand/nope.svg",
    ] {
        assert_head_parity(&app, uri, &[]).await;
    }
}

#[tokio::test]
async fn preflight_and_methods() {
    let app = TestApp::new().await;
    let id = "ab".repeat(32);
    let (one, history) = (format!("/v1/stations/{id}"), format!("/v1/stations/{id}/history"));
    // Every route with a document takes the same methods and answers preflights alike.
    for path in ["/", "/v1", "/legacy", "/v1/stations", &one, &history, "/v1/stats"] {
        let r = app
            .call(
                "OPTIONS",
                path,
                &[
                    ("origin", "https://example.org"),
                    ("access-control-request-method", "GET"),
                    ("access-control-request-headers", "if-none-match, x-custom"),
                ],
            )
            .await;
        assert_eq!(r.status, 204, "{path}");
        assert!(r.body.is_empty());
        assert_eq!(r.header("access-control-allow-origin"), "*");
        assert_eq!(r.header("access-control-allow-methods"), "GET, HEAD, OPTIONS");
        assert_eq!(r.header("access-control-max-age"), "86400");
        assert_eq!(r.header("access-control-allow-headers"), "if-none-match, x-custom");
        let refused = app.call("OPTIONS", path, &[("access-control-request-method", "DELETE")]).await;
        assert_eq!(refused.status, 405, "{path}");
        assert!(refused.body.is_empty());
        for method in ["POST", "PUT", "DELETE", "PATCH"] {
            let r = app.call(method, path, &[]).await;
            assert_eq!(r.status, 405, "{method} {path}");
            assert_eq!(r.header("allow"), "GET, HEAD, OPTIONS");
            assert_eq!(r.header("cache-control"), "no-store");
            if path == "/legacy" {
                assert_eq!(r.json()["error"]["code"], "method_not_allowed");
            } else {
                assert_eq!(r.json()["errors"][0]["code"], "method_not_allowed");
            }
        }
    }
    let garbage = app
        .call(
            "OPTIONS",
            "/v1",
            &[
                ("access-control-request-method", "GET"),
                ("access-control-request-headers", "x-ok, bad header"),
            ],
        )
        .await;
    assert_eq!(garbage.status, 400, "requested headers that are not header names are not echoed");
    assert!(garbage.body.is_empty());
    assert_eq!(app.source_requests(), 0, "preflights read no prices");
}

#[tokio::test]
async fn root_redirects_with_the_query_unvalidated() {
    let app = TestApp::new().await;
    let r = app.get("/?product=3&x=%20y").await;
    assert_eq!(r.status, 302);
    assert_eq!(r.header("location"), "/v1?product=3&x=%20y");
    assert_eq!(r.header("cache-control"), "no-store");
    assert_eq!(app.get("/").await.header("location"), "/v1");
    let absolute =
        TestApp::with(fixture_morning(), Faults::default(), Some("https://fuel.example.org")).await;
    assert_eq!(absolute.get("/?product=1").await.header("location"), "https://fuel.example.org/v1?product=1");
    assert_eq!(app.source_requests(), 0);
}

#[tokio::test]
async fn unknown_paths_are_404() {
    let app = TestApp::new().await;
    for path in
        ["/v2", "/v1/", "/healthz", "/metrics", "/static/image/brand", "/legacy/x", "/static/other.svg"]
    {
        let r = app.get(path).await;
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.json()["errors"][0]["code"], "not_found");
        assert_eq!(r.header("cache-control"), "no-store");
    }
}

#[tokio::test]
async fn brand_logos() {
    let app = TestApp::new().await;
    let r = app.get("/static/image/brand/7_eleven.svg").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), "image/svg+xml");
    assert_eq!(r.header("cache-control"), "public, max-age=86400");
    assert_eq!(r.header("access-control-allow-origin"), "*");
    assert!(r.body.starts_with(b"<svg"));
    for bad in [
        "/static/image/brand/BP.svg",
        "/static/image/brand/bp.png",
        "/static/image/brand/unknown.svg",
        "/static/image/brand/..%2Fbp.svg",
        "/static/image/brand/%2E%2E",
    ] {
        let r = app.get(bad).await;
        assert_eq!(r.status, 404, "{bad}");
    }
    assert_eq!(app.get("/static/image/brand/bp.svg").await.status, 200);
    let options =
        app.call("OPTIONS", "/static/image/brand/bp.svg", &[("access-control-request-method", "GET")]).await;
    assert_eq!(options.status, 405);
    assert_eq!(app.call("POST", "/static/image/brand/bp.svg", &[]).await.status, 405);
    assert_eq!(app.source_requests(), 0, "logos need no prices");
}

#[tokio::test]
async fn expanded_forms_and_logos_resolve() {
    let app = TestApp::new().await;
    let doc = app.get("/v1?product=1&expand=all").await.json();
    assert_valid("PriceDocument", &doc);
    assert_eq!(doc["meta"]["product"], 1);
    assert!(doc["meta"].get("products").is_none());
    let data = doc["data"].as_array().expect("data");
    let costco =
        data.iter().find(|s| s["attributes"]["tradingName"] == "Costco Perth Airport").expect("costco");
    let a = &costco["attributes"];
    assert_eq!(
        a["brand"],
        serde_json::json!({"code": 32, "name": "Costco", "logo": "/static/image/brand/costco.svg"})
    );
    assert_eq!(a["siteFeatures"], serde_json::json!([{"code": 8, "name": "EFTPOS"}]));
    assert_eq!(a["restrictions"], serde_json::json!([{"code": 3, "name": "Membership Required"}]));
    // Empty feature lists stay [] (an expanded array is never empty).
    assert!(data.iter().any(|s| s["attributes"]["siteFeatures"] == serde_json::json!([])));
    let logos: BTreeSet<String> =
        data.iter().filter_map(|s| s["attributes"]["brand"]["logo"].as_str().map(str::to_string)).collect();
    for logo in logos {
        assert_eq!(app.get(&logo).await.status, 200, "{logo}");
    }
    // Ids are stable across selections and representations.
    let plain = app.get("/v1?product=1,6").await.json();
    let id = |d: &serde_json::Value| {
        d["data"]
            .as_array()
            .and_then(|v| v.iter().find(|s| s["attributes"]["tradingName"] == "Costco Perth Airport"))
            .map(|s| s["id"].clone())
    };
    assert_eq!(id(&plain), id(&doc));
    let brand_only = app.get("/v1?product=1&expand=brand").await.json();
    assert!(
        brand_only["data"][0]["attributes"]["siteFeatures"]
            .as_array()
            .is_some_and(|f| f.iter().all(|x| x.is_u64()))
    );
}

#[tokio::test]
async fn catalog_filters_are_local_and_share_extracts() {
    let app = TestApp::new().await;
    let bp = app.get("/v1?brand=5").await.json();
    assert_valid("PriceDocument", &bp);
    let stations = bp["data"].as_array().expect("data");
    assert!(!stations.is_empty());
    assert!(stations.iter().all(|s| s["attributes"]["brand"] == 5));
    assert_eq!(app.source_requests(), 7);
    let other = app.get("/v1?brand=29,35&product=1,2").await;
    assert_eq!(other.status, 200);
    assert_eq!(app.source_requests(), 7, "extracts are shared by every catalog selection");
    let exact = app.get("/v1?product=1&suburb=ellenbrook&surrounding=no").await.json();
    let suburbs: BTreeSet<&str> = exact["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|s| s["attributes"]["address"]["suburb"].as_str())
        .collect();
    assert_eq!(suburbs, BTreeSet::from(["ELLENBROOK"]));
    assert_eq!(app.source_requests(), 7);
}

#[tokio::test]
async fn source_filtered_selections_go_upstream() {
    let app = TestApp::new().await;
    let around = app.get("/v1?suburb=%20ellenbrook&product=1").await.json();
    assert_valid("PriceDocument", &around);
    let suburbs: BTreeSet<&str> = around["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|s| s["attributes"]["address"]["suburb"].as_str())
        .collect();
    assert!(suburbs.contains("ELLENBROOK") && suburbs.len() > 1, "{suburbs:?}");
    let log = app.sim.state.requests();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].query, "Product=1&Suburb=ELLENBROOK&Day=today");
    let regions = app.get("/v1?region=25,26&product=1,2").await;
    assert_eq!(regions.status, 200);
    assert_eq!(app.source_requests(), 1 + 4);
}

#[tokio::test]
async fn legacy_documents() {
    let app = TestApp::new().await;
    let r = app.get("/legacy").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), "application/json");
    assert_eq!(r.header("vary"), "Accept-Encoding");
    let doc = r.json();
    assert_valid("LegacyDocument", &doc);
    let items = doc["feed"]["items"].as_array().expect("items");
    assert!(items.len() > 900);
    assert!(items.iter().all(|i| i.get("product").is_none()));
    // Source order for one source request: the feed's price order.
    let prices: Vec<f64> =
        items.iter().map(|i| i["price"].as_str().unwrap_or("0").parse().unwrap_or(0.0)).collect();
    assert!(prices.windows(2).all(|w| w[0] <= w[1]));
    let billabong = items.iter().find(|i| i["trading-name"] == "Billabong Roadhouse").expect("billabong");
    assert_eq!(billabong["price"], "195.0");
    assert_eq!(billabong["latitude"], "-26.81603300");
    assert_eq!(billabong["phone"], serde_json::Value::Null);
    assert_eq!(billabong["date"], "2026-09-29");
    let meeka = items.iter().find(|i| i["trading-name"] == "Meekatharra Corner Store").expect("meeka");
    assert_eq!(meeka["phone"], "+61899811151");
    let multi = app.get("/legacy?product=4,1&brand=5").await.json();
    assert_valid("LegacyDocument", &multi);
    let items = multi["feed"]["items"].as_array().expect("items");
    assert!(items.iter().all(|i| i["product"] == 1 || i["product"] == 4));
    assert!(items.iter().all(|i| i["brand"] == "BP"));
    let order: Vec<(u64, f64)> = items
        .iter()
        .map(|i| {
            (i["product"].as_u64().unwrap_or(0), i["price"].as_str().unwrap_or("0").parse().unwrap_or(0.0))
        })
        .collect();
    assert!(order.windows(2).all(|w| w[0] <= w[1]), "product, then price");
}

#[tokio::test]
async fn tomorrow_before_and_after_publication() {
    let app = TestApp::at(date(2026, 9, 29).at(14, 29, 45, 0)).await;
    let early = app.get("/v1?day=tomorrow&product=1").await;
    assert_eq!(early.status, 200);
    let doc = early.json();
    assert_valid("PriceDocument", &doc);
    assert_eq!(doc["meta"]["publicationStatus"], "not_yet_published");
    assert_eq!(doc["meta"]["sourceDate"], "2026-09-30");
    assert_eq!(doc["data"], serde_json::json!([]));
    assert_eq!(early.header("cache-control"), "public, max-age=0, s-maxage=15");
    app.clock.advance(Duration::from_secs(31));
    let later = app.get("/v1?day=30/09/2026&product=1").await.json();
    assert_eq!(later["meta"]["publicationStatus"], "available");
    assert!(!later["data"].as_array().expect("data").is_empty());
}

#[tokio::test]
async fn empty_selection_is_a_valid_200() {
    let app = TestApp::new().await;
    let r = app.get("/v1?product=10&brand=4").await;
    assert_eq!(r.status, 200);
    let doc = r.json();
    assert_valid("PriceDocument", &doc);
    assert_eq!(doc["meta"]["publicationStatus"], "empty");
    assert_eq!(doc["data"], serde_json::json!([]));
}

#[tokio::test]
async fn upstream_failures_map_to_error_codes() {
    let cases = [
        (Faults { status: Some(403), ..Faults::default() }, 502, "upstream_denied", None),
        (
            Faults { status: Some(503), retry_after: Some(120), ..Faults::default() },
            503,
            "upstream_unavailable",
            Some("120"),
        ),
        (Faults { mode: Some(FaultMode::WrongDate), ..Faults::default() }, 502, "invalid_feed", None),
        (Faults { mode: Some(FaultMode::Doctype), ..Faults::default() }, 502, "invalid_feed", None),
        (Faults { mode: Some(FaultMode::Oversize), ..Faults::default() }, 502, "response_too_large", None),
        (Faults { delay_ms: Some(3_000), ..Faults::default() }, 504, "upstream_timeout", None),
    ];
    for (faults, status, code, retry_after) in cases {
        let app = TestApp::with(fixture_morning(), faults.clone(), None).await;
        let r = app.get("/v1?product=1,2").await;
        assert_eq!(r.status, status, "{faults:?}");
        assert_valid("JsonApiErrorDocument", &r.json());
        assert_eq!(r.json()["errors"][0]["code"], code);
        assert_eq!(r.header("cache-control"), "no-store");
        assert_eq!(r.headers.get("retry-after").and_then(|v| v.to_str().ok()), retry_after);
        let body = String::from_utf8_lossy(&r.body).to_string();
        assert!(
            !body.contains("127.0.0.1") && !body.contains("Request refused"),
            "no upstream detail leaks: {body}"
        );
        let l = app.get("/legacy").await;
        assert_eq!(l.status, status);
        assert_eq!(l.json()["error"]["code"], code);
    }
}

#[tokio::test]
async fn one_failing_product_fails_the_whole_selection() {
    let faults = Faults { mode: Some(FaultMode::Conflict), products: Some(vec![6]), ..Faults::default() };
    let app = TestApp::with(fixture_morning(), faults, None).await;
    let r = app.get("/v1").await;
    assert_eq!(r.status, 502);
    assert_eq!(r.json()["errors"][0]["detail"], "The source returned conflicting station quotes.");
    // Selections without the bad product still work.
    assert_eq!(app.get("/v1?product=1,2").await.status, 200);
}

#[tokio::test]
async fn an_empty_feed_never_replaces_published_prices() {
    let app = TestApp::new().await;
    let good = app.get("/v1?product=4").await;
    assert_eq!(good.status, 200);
    app.sim.state.set_faults(Faults { mode: Some(FaultMode::Empty), ..Faults::default() });
    app.clock.advance(Duration::from_secs(6 * 3_600 + 1));
    let r = app.get("/v1?product=4").await;
    assert_eq!(r.status, 502);
    assert_eq!(
        r.json()["errors"][0]["detail"],
        "The source returned an empty replacement for published prices."
    );
    app.sim.state.set_faults(Faults::default());
    let again = app.get("/v1?product=4").await;
    assert_eq!(again.status, 200);
    assert!(!again.json()["data"].as_array().expect("data").is_empty());
}

#[tokio::test]
async fn canonical_spellings_share_one_entry() {
    let app = TestApp::new().await;
    let a = app.get("/v1?brand=35,2&product=6,2,1&day=today").await;
    let b = app.get("/v1?filter[brand]=2,35&FILTER[Product]=1,2,6&filter[day]=TODAY").await;
    assert_eq!(a.header("etag"), b.header("etag"));
    assert_eq!(b.header("x-fuel-cache"), "HIT");
    let c = app.get("/v1?brand=2,35&product=1,2,6&day=29/09/2026").await;
    assert_eq!(c.header("x-fuel-cache"), "HIT");
}

#[tokio::test]
async fn encodings_have_their_own_validators() {
    let app = TestApp::new().await;
    let identity = app.get("/v1?product=1").await;
    let gzip = app.call("GET", "/v1?product=1", &[("accept-encoding", "gzip")]).await;
    let br = app.call("GET", "/v1?product=1", &[("accept-encoding", "gzip, br")]).await;
    assert_eq!(gzip.header("content-encoding"), "gzip");
    assert_eq!(br.header("content-encoding"), "br");
    assert!(identity.headers.get("content-encoding").is_none());
    let tag = identity.header("etag").trim_matches('"').to_string();
    assert_eq!(gzip.header("etag"), format!("\"{tag}-gzip\""));
    assert_eq!(br.header("etag"), format!("\"{tag}-br\""));
    assert!(br.body.len() < gzip.body.len() && gzip.body.len() < identity.body.len() / 4);
    let mut decoded = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gzip.body[..]), &mut decoded)
        .expect("gunzip");
    assert_eq!(decoded, identity.body);
    // The identity tag does not validate the gzip representation.
    let r = app
        .call(
            "GET",
            "/v1?product=1",
            &[("accept-encoding", "gzip"), ("if-none-match", identity.header("etag"))],
        )
        .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn fifty_concurrent_cold_requests_make_one_request_per_extract() {
    let app =
        TestApp::with(fixture_morning(), Faults { delay_ms: Some(200), ..Faults::default() }, None).await;
    let app = std::sync::Arc::new(app);
    let mut tasks = Vec::new();
    for i in 0..50 {
        let app = app.clone();
        let uri = if i % 2 == 0 { "/v1" } else { "/v1?product=1,2,4,5,6,10,11" };
        tasks.push(tokio::spawn(async move { app.get(uri).await }));
    }
    let mut etags = BTreeSet::new();
    let mut fetched = BTreeSet::new();
    for t in tasks {
        let r = t.await.expect("task");
        assert_eq!(r.status, 200);
        etags.insert(r.header("etag").to_string());
        fetched.insert(r.header("x-fuel-fetched-at").to_string());
    }
    assert_eq!(etags.len(), 1);
    assert_eq!(fetched.len(), 1);
    assert_eq!(app.source_requests(), 7, "one source request per extract");
    let queries: BTreeSet<String> = app.sim.state.requests().into_iter().map(|r| r.query).collect();
    assert_eq!(queries.len(), 7);
}

/// `docs/api.md`'s route table names every public route the router serves (the path patterns
/// of `crates/web/src/http/paths.rs`, with the documented spellings of their parameters).
#[test]
fn the_api_document_names_every_public_route() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let paths = std::fs::read_to_string(root.join("crates/web/src/http/paths.rs")).expect("paths.rs");
    let api = std::fs::read_to_string(root.join("docs/api.md")).expect("api.md");
    let admin = paths.split("/// The admin port's routes.").next().unwrap_or("");
    let public: Vec<String> = admin
        .lines()
        .filter_map(|l| l.strip_prefix("pub const ")?.split('"').nth(1).map(str::to_string))
        .collect();
    assert!(public.len() >= 11, "the public paths were read: {public:?}");
    for path in public {
        let documented = path.replace("{station_id}", "{stationId}").replace("{filename}", "{file}.svg");
        assert!(api.contains(&format!("| `{documented}` |")), "docs/api.md does not list {documented}");
    }
}
