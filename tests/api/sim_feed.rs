//! The simulated origin reproduces the real feed's shape, filters and day rules, and injects
//! every fault it documents.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use jiff::civil::date;
use wafuel_domain::codes::{BRANDS, brand_code_for_label};
use wafuel_domain::record::SourceRecord;
use wafuel_sim::{FaultMode, Faults};
use wafuel_source::rss;

use crate::support::*;

fn items(text: &str) -> Vec<SourceRecord<'static>> {
    rss::parse(text)
        .expect("the simulated feed is valid RSS")
        .items
        .into_iter()
        .map(SourceRecord::into_owned)
        .collect()
}

/// The `<item>…</item>` of the station with this trading name.
fn item_bytes<'a>(text: &'a str, trading_name: &str) -> &'a str {
    let marker = format!("<trading-name>{trading_name}</trading-name>");
    let at = text.find(&marker).expect("station present");
    let start = text[..at].rfind("<item>").expect("item start");
    let end = at + text[at..].find("</item>").expect("item end") + "</item>".len();
    &text[start..end]
}

/// The raw `<description>` of a record's item (the parser does not keep it).
fn description(text: &str, record: &SourceRecord) -> String {
    let name = record.trading_name.as_deref().unwrap_or("").replace('&', "&amp;");
    let item = item_bytes(text, &name);
    let start = item.find("<description>").map_or(0, |i| i + "<description>".len());
    let end = item.find("</description>").unwrap_or(start);
    item[start..end].to_string()
}

#[tokio::test]
async fn statewide_product_1_has_about_940_items() {
    let sim = origin(Faults::default()).await;
    let started = Instant::now();
    let text = get_text(&sim, "Product=1").await;
    let took = started.elapsed();
    let feed = items(&text);
    assert!((900..=960).contains(&feed.len()), "{} items", feed.len());
    // Not a timing assertion on the test's outcome, just a sanity note in the output.
    println!("Product=1: {} items, {} bytes in {took:?}", feed.len(), text.len());
    // Sorted by price, as the real feed is.
    let prices: Vec<f64> =
        feed.iter().map(|i| i.price.as_deref().unwrap_or("0").parse().expect("price")).collect();
    assert!(prices.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(sim.state.request_count(), 1);
    assert_eq!(sim.state.requests()[0].query, "Product=1");
}

#[tokio::test]
async fn fixture_stations_keep_their_real_bytes() {
    let sim = origin(Faults::default()).await;
    let ours = get_text(&sim, "Product=1").await;
    let real = std::fs::read_to_string("tests/fixtures/2026-09-29_statewide-excerpt_product-1.xml")
        .expect("fixture");
    for name in ["Billabong Roadhouse", "Shire of Wandering", "Meekatharra Corner Store"] {
        assert_eq!(item_bytes(&ours, name), item_bytes(&real, name), "{name}");
    }
    // The document's own quirks.
    assert!(
        ours.starts_with(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<rss version=\"2.0\"><channel><title>"
        )
    );
    assert!(ours.ends_with("</channel></rss>\r\n"));
    assert!(ours.contains("<phone />"));
    assert!(ours.contains("&amp;"), "entities in names");
    let whole = items(&ours).iter().filter(|i| !i.price.as_deref().unwrap_or(".").contains('.')).count();
    assert!(whole > 0, "whole-cent prices are written without decimals");
}

#[tokio::test]
async fn ellenbrook_matches_the_2022_response_field_for_field() {
    let sim = origin(Faults::default()).await;
    let ours_text = get_text(&sim, "Suburb=Ellenbrook&Surrounding=yes&Product=1").await;
    let ours = items(&ours_text);
    let real_text =
        std::fs::read_to_string("tests/fixtures/2022-12-05_suburb-ellenbrook_surrounding-yes_product-1.xml")
            .expect("fixture");
    let real = items(&real_text);
    let names = |v: &[SourceRecord<'static>]| {
        v.iter().filter_map(|i| i.trading_name.as_deref().map(str::to_string)).collect::<BTreeSet<_>>()
    };
    // Every real station of that answer is in ours (the simulated area may hold a few more).
    assert!(names(&real).is_subset(&names(&ours)), "{:?} vs {:?}", names(&real), names(&ours));
    for r in &real {
        let o = ours.iter().find(|o| o.trading_name == r.trading_name).expect("present");
        assert_eq!(
            (
                description(&ours_text, o),
                &o.brand,
                &o.location,
                &o.address,
                &o.phone,
                &o.latitude,
                &o.longitude,
                &o.site_features
            ),
            (
                description(&real_text, r),
                &r.brand,
                &r.location,
                &r.address,
                &r.phone,
                &r.latitude,
                &r.longitude,
                &r.site_features
            )
        );
        assert_eq!(o.date.as_deref(), Some("2026-09-29"));
    }
}

#[tokio::test]
async fn suburb_surrounding_and_exact() {
    let sim = origin(Faults::default()).await;
    let exact = items(&get_text(&sim, "Suburb=ELLENBROOK&Surrounding=no").await);
    assert!(!exact.is_empty());
    assert!(exact.iter().all(|i| i.location.as_deref() == Some("ELLENBROOK")));
    let around = items(&get_text(&sim, "Suburb=%20ellenbrook%20").await);
    assert!(around.len() > exact.len(), "neighbours within a few km are included");
    let nowhere = items(&get_text(&sim, "Suburb=Atlantis").await);
    assert!(nowhere.is_empty());
}

#[tokio::test]
async fn brand_region_product_filters() {
    let sim = origin(Faults::default()).await;
    for b in BRANDS.iter().map(|b| b.code) {
        let feed = items(&get_text(&sim, &format!("Product=1&Brand={b}")).await);
        assert!(!feed.is_empty(), "brand {b} has stations");
        assert!(feed.iter().all(|i| brand_code_for_label(i.brand.as_deref().unwrap_or("")) == b));
    }
    let region4 = items(&get_text(&sim, "Product=1&Region=4").await);
    assert!(region4.iter().any(|i| i.trading_name.as_deref() == Some("Billabong Roadhouse")));
    assert!(region4.iter().all(|i| i.location.as_deref() != Some("PERTH AIRPORT")));
    for region in wafuel_domain::codes::region_codes() {
        assert!(
            !items(&get_text(&sim, &format!("Product=1&Region={region}")).await).is_empty(),
            "region {region}"
        );
    }
    let e85 = items(&get_text(&sim, "Product=10").await);
    assert!((8..=16).contains(&e85.len()), "{} E85 stations", e85.len());
    let lpg = items(&get_text(&sim, "Product=5").await).len();
    let ulp = items(&get_text(&sim, "Product=1").await).len();
    assert!(lpg < ulp, "not every station sells every product");
    // Unknown parameters are ignored; unreadable values select nothing.
    assert_eq!(items(&get_text(&sim, "Product=1&Colour=blue").await).len(), ulp);
    assert!(items(&get_text(&sim, "Product=abc").await).is_empty());
    // No Product means Unleaded, as at the real origin.
    assert_eq!(items(&get_text(&sim, "").await).len(), ulp);
}

#[tokio::test]
async fn prices_are_deterministic_per_station_product_and_date() {
    let (sim, clock) = origin_at(fixture_morning(), Faults::default()).await;
    let first = get_text(&sim, "Product=4").await;
    let again = get_text(&sim, "Product=4").await;
    let strip = |t: &str| {
        t.split("<lastBuildDate>")
            .map(|p| p.split_once("</lastBuildDate>").map_or(p, |(_, r)| r).to_string())
            .collect::<String>()
    };
    assert_eq!(strip(&first), strip(&again));
    clock.advance(Duration::from_secs(86_400));
    let next_day = items(&get_text(&sim, "Product=4").await);
    let today = items(&first);
    let price_of = |v: &[SourceRecord<'static>], n: &str| {
        v.iter()
            .find(|i| i.trading_name.as_deref() == Some(n))
            .and_then(|i| i.price.as_deref().map(str::to_string))
    };
    let changed = today
        .iter()
        .filter_map(|i| i.trading_name.as_deref())
        .filter(|n| price_of(&today, n) != price_of(&next_day, n))
        .count();
    assert!(changed > today.len() / 2, "prices move from day to day");
    assert_eq!(next_day[0].date.as_deref(), Some("2026-09-30"));
}

#[tokio::test]
async fn day_words_resolve_in_perth_at_the_year_boundary() {
    let (sim, clock) = origin_at(date(2026, 12, 31).at(23, 59, 59, 0), Faults::default()).await;
    let dates = |t: String| {
        items(&t).iter().filter_map(|i| i.date.as_deref().map(str::to_string)).collect::<BTreeSet<_>>()
    };
    assert_eq!(dates(get_text(&sim, "Day=tomorrow").await), BTreeSet::from(["2027-01-01".to_string()]));
    assert_eq!(dates(get_text(&sim, "Day=TODAY").await), BTreeSet::from(["2026-12-31".to_string()]));
    clock.advance(Duration::from_secs(1));
    assert_eq!(dates(get_text(&sim, "Day=yesterday").await), BTreeSet::from(["2026-12-31".to_string()]));
    assert_eq!(dates(get_text(&sim, "Day=today").await), BTreeSet::from(["2027-01-01".to_string()]));
    // Midnight is before 14:30: tomorrow is not published yet.
    assert!(items(&get_text(&sim, "Day=tomorrow").await).is_empty());
}

#[tokio::test]
async fn tomorrow_appears_at_1430_perth() {
    let (sim, clock) = origin_at(date(2026, 9, 29).at(14, 29, 59, 0), Faults::default()).await;
    assert!(items(&get_text(&sim, "Day=tomorrow").await).is_empty());
    clock.advance(Duration::from_secs(1));
    let feed = items(&get_text(&sim, "Day=tomorrow").await);
    assert!(!feed.is_empty());
    assert_eq!(feed[0].date.as_deref(), Some("2026-09-30"));
}

#[tokio::test]
async fn status_faults_carry_retry_after_and_apply_per_product() {
    let sim = origin(Faults {
        status: Some(503),
        retry_after: Some(7),
        products: Some(vec![4]),
        ..Faults::default()
    })
    .await;
    let hit = get(&sim, "Product=4").await;
    assert_eq!(hit.status(), 503);
    assert_eq!(hit.headers()["retry-after"], "7");
    assert_eq!(get(&sim, "Product=1").await.status(), 200);
    for status in [403u16, 429, 500] {
        sim.state.set_faults(Faults { status: Some(status), ..Faults::default() });
        assert_eq!(get(&sim, "Product=1").await.status().as_u16(), status);
    }
}

#[tokio::test]
async fn limited_faults_stop_after_n_requests() {
    let sim = origin(Faults { status: Some(500), times: Some(2), ..Faults::default() }).await;
    assert_eq!(get(&sim, "Product=1").await.status(), 500);
    assert_eq!(get(&sim, "Product=2").await.status(), 500);
    assert_eq!(get(&sim, "Product=1").await.status(), 200);
    assert_eq!(sim.state.request_count(), 3);
}

#[tokio::test]
async fn body_faults_do_what_they_say() {
    let sim = origin(Faults::default()).await;
    let body = |mode| {
        sim.state.set_faults(Faults { mode: Some(mode), ..Faults::default() });
        async { get(&sim, "Product=1").await.bytes().await.expect("body").to_vec() }
    };
    let malformed = String::from_utf8(body(FaultMode::Malformed).await).expect("utf8");
    assert!(rss::parse(&malformed).is_err());
    let doctype = String::from_utf8(body(FaultMode::Doctype).await).expect("utf8");
    assert!(doctype.contains("<!DOCTYPE") && doctype.contains("<!ENTITY"));
    let oversize = body(FaultMode::Oversize).await;
    assert!(oversize.len() > 4 * 1024 * 1024);
    assert!(rss::parse(std::str::from_utf8(&oversize).expect("utf8")).is_ok(), "well-formed, just big");
    let wrong = String::from_utf8(body(FaultMode::WrongDate).await).expect("utf8");
    assert!(items(&wrong).iter().all(|i| i.date.as_deref() == Some("2026-09-28")));
    let conflict = items(&String::from_utf8(body(FaultMode::Conflict).await).expect("utf8"));
    let (a, b) = (&conflict[0], conflict.last().expect("duplicate"));
    assert_eq!((&a.address, &a.latitude), (&b.address, &b.latitude));
    assert_ne!(a.price, b.price);
    assert!(items(&String::from_utf8(body(FaultMode::Empty).await).expect("utf8")).is_empty());
    assert!(String::from_utf8(body(FaultMode::InvalidUtf8).await).is_err());
    let first = |mode| {
        let body = body(mode);
        async move { items(&String::from_utf8(body.await).expect("utf8"))[0].clone() }
    };
    assert_eq!(first(FaultMode::BadPrice).await.price.as_deref(), Some("0"));
    assert_eq!(first(FaultMode::BadCoordinate).await.latitude.as_deref(), Some("-91.5"));
    assert_eq!(first(FaultMode::MissingField).await.address, None);
    let repeated = String::from_utf8(body(FaultMode::RepeatedElement).await).expect("utf8");
    assert!(rss::parse(&repeated).is_err_and(|e| e.reason.contains("twice")));
    sim.state.set_faults(Faults { mode: Some(FaultMode::Redirect), ..Faults::default() });
    let redirect = get(&sim, "Product=1").await;
    assert_eq!(redirect.status(), 302);
    assert!(redirect.headers().contains_key("location"));
}

#[tokio::test]
async fn delay_and_slow_body() {
    let sim = origin(Faults { delay_ms: Some(300), ..Faults::default() }).await;
    let started = Instant::now();
    assert_eq!(get(&sim, "Product=10").await.status(), 200);
    assert!(started.elapsed() >= Duration::from_millis(300));
    // 4 KiB chunks 20 ms apart: an LPG feed of over 100 KiB takes at least 25 pauses.
    sim.state.set_faults(Faults { slow_body_ms: Some(20), ..Faults::default() });
    let started = Instant::now();
    let text = get_text(&sim, "Product=5").await;
    assert!(text.len() > 100 * 1024, "{} bytes", text.len());
    assert!(started.elapsed() >= Duration::from_millis(500));
    assert!(rss::parse(&text).is_ok());
}

#[tokio::test]
async fn admin_paths_expose_the_log_and_set_faults() {
    let sim = origin(Faults::default()).await;
    let http = http();
    let base = format!("http://{}", sim.addr);
    get(&sim, "Product=2&Day=today").await;
    let log: serde_json::Value =
        http.get(format!("{base}/_sim/requests")).send().await.expect("log").json().await.expect("json");
    assert_eq!(log["count"], 1);
    assert_eq!(log["requests"][0]["query"], "Product=2&Day=today");
    let put = http
        .put(format!("{base}/_sim/faults"))
        .json(&serde_json::json!({"status": 429, "retry_after": 1}))
        .send()
        .await
        .expect("put");
    assert_eq!(put.status(), 204);
    assert_eq!(get(&sim, "Product=1").await.status(), 429);
    let rules = http
        .put(format!("{base}/_sim/faults"))
        .json(&serde_json::json!([{"status": 403, "products": [4]}, {"mode": "empty"}]))
        .send()
        .await
        .expect("put rules");
    assert_eq!(rules.status(), 204);
    assert_eq!(get(&sim, "Product=4").await.status(), 403);
    assert!(get_text(&sim, "Product=1").await.contains("</image></channel>"), "empty feed");
    assert_eq!(http.delete(format!("{base}/_sim/requests")).send().await.expect("delete").status(), 204);
    assert_eq!(sim.state.request_count(), 0);
}
