//! Enrichment against the Places stand-in on a random port: matching, source priority,
//! rejections, fallback, budget, pauses, staleness and retention, seeds, a broken store.

use std::sync::Arc;
use std::time::Duration;

use wafuel_domain::time::Clock;
use wafuel_places::client::PlacesClient;
use wafuel_service::jobs::enrich::{EnrichConfig, EnrichReport, enrich_pass};
use wafuel_sim::places::PlacesHandle;
use wafuel_sim::places::{AddressComponent, LatLng, LocalizedText, Place};
use wafuel_store::Store;
use wafuel_store::enrich::Seed;

use crate::support::*;

const KEY: &str = "test-key";

struct Enrich {
    app: TestApp,
    places: PlacesHandle,
    store: Arc<dyn Store>,
}

fn comp(short: &str, kind: &str) -> AddressComponent {
    AddressComponent { long_text: short.into(), short_text: short.into(), types: vec![kind.into()] }
}

/// The stand-in's place for a simulated station (postcode forced to 6308 for assertions).
fn place_for(app: &TestApp, trading_name: &str, id: &str) -> Place {
    let s =
        app.sim.state.dataset().stations.iter().find(|s| s.trading_name == trading_name).expect("station");
    let mut place = wafuel_sim::places::place_for(s, id);
    if let Some(c) = place.address_components.iter_mut().find(|c| c.types.iter().any(|t| t == "postal_code"))
    {
        c.short_text = "6308".into();
        c.long_text = "6308".into();
    }
    place
}

async fn setup(places: impl Fn(&TestApp) -> Vec<Place>) -> Enrich {
    let app = TestApp::new().await;
    let handle = PlacesHandle::spawn(KEY, places(&app)).await.expect("stand-in");
    let store = sqlite_store(&app.dir).await;
    Enrich { app, places: handle, store }
}

/// Every product-1 station in one pass, within budget.
fn config() -> EnrichConfig {
    EnrichConfig {
        discover_product: Some(p(1)),
        batch: 2_000,
        daily_budget: 10_000,
        ..EnrichConfig::default()
    }
}

impl Enrich {
    fn client(&self, key: &str) -> PlacesClient {
        PlacesClient::new(self.places.base_url().parse().expect("url"), key.into()).expect("client")
    }

    async fn pass(&self, config: &EnrichConfig) -> EnrichReport {
        enrich_pass(self.app.server.state.catalog.prices(), &self.store, &self.client(KEY), config)
            .await
            .expect("pass")
    }

    async fn station(&self, uri: &str, trading_name: &str) -> serde_json::Value {
        let doc = self.app.get(uri).await.json();
        doc["data"]
            .as_array()
            .expect("data")
            .iter()
            .find(|s| s["attributes"]["tradingName"] == trading_name)
            .expect("station in document")["attributes"]
            .clone()
    }
}

#[tokio::test]
async fn a_match_fills_postcode_phone_features_and_hours() {
    let e = setup(|app| vec![place_for(app, "Shire of Wandering", "p-wandering")]).await;
    // A document cached before enrichment picks it up when it is rebuilt (15 minutes).
    let before = e.app.get("/v1?product=1").await.json();
    assert!(
        before["data"].as_array().expect("data").iter().all(|s| s["attributes"].get("enrichment").is_none())
    );
    let report = e.pass(&config()).await;
    assert_eq!(report.matched, 1, "{report:?}");
    e.app.clock.advance(Duration::from_secs(15 * 60 + 1));
    assert!(report.looked_up > 300, "every product-1 station was due: {report:?}");
    // Only enrichment requests reached the provider, each with the key and a field mask.
    for (what, mask) in e.places.state.log() {
        assert!(!mask.is_empty() && !mask.contains('*'), "{what}: {mask}");
    }
    let doc = e.app.get("/v1?product=1").await.json();
    let data = doc["data"].as_array().expect("data");
    let enriched: Vec<&serde_json::Value> =
        data.iter().filter(|s| s["attributes"].get("enrichment").is_some()).collect();
    assert_eq!(enriched.len(), 1, "enrichment only on the matched station");
    let a = &enriched[0]["attributes"];
    assert_eq!(a["tradingName"], "Shire of Wandering");
    assert_eq!(a["address"]["postcode"], "6308");
    assert_eq!(a["phone"], "+61898841056");
    assert_eq!(a["siteFeatures"], serde_json::json!([1, 5]));
    assert_eq!(a["is24Hours"], false);
    assert_eq!(a["openHours"]["Monday"], "07:00-18:00");
    assert_eq!(a["restrictions"], serde_json::json!([1]), "restrictions never come from the provider");
    let en = &a["enrichment"];
    assert_eq!(en["provider"], "Google Maps");
    assert_eq!(en["placeId"], "p-wandering");
    assert_eq!(en["stale"], false);
    assert_eq!(en["fetchedAt"], "2026-09-29T10:00:00+08:00");
    let fields: Vec<&str> =
        en["fields"].as_array().expect("fields").iter().filter_map(|f| f.as_str()).collect();
    for f in ["address.postcode", "phone", "siteFeatures", "openHours.Monday", "openHours.Sunday"] {
        assert!(fields.contains(&f), "{f} in {fields:?}");
    }
    assert_eq!(
        en["providerMapsUri"],
        "https://www.google.com/maps/search/?api=1&query=Shire+of+Wandering&query_place_id=p-wandering"
    );
    assert_eq!(en["googleMapsUri"], en["providerMapsUri"], "both names carry the one link");
    assert_eq!(
        en["attributions"],
        serde_json::json!([{"displayName": "Example Data", "uri": "https://example.org/"}])
    );
    // Legacy documents carry no enrichment.
    let legacy = e.app.get("/legacy?product=1").await;
    assert!(!String::from_utf8_lossy(&legacy.body).contains("p-wandering"));
}

#[tokio::test]
async fn the_source_wins_for_phone_hours_and_24_hour_sites() {
    let e = setup(|app| {
        vec![
            place_for(app, "Costco Perth Airport", "p-costco"),
            place_for(app, "Billabong Roadhouse", "p-billabong"),
            place_for(app, "Coles Express Ellenbrook", "p-coles"),
        ]
    })
    .await;
    assert_eq!(e.pass(&config()).await.matched, 3);
    let costco = e.station("/v1?product=1", "Costco Perth Airport").await;
    assert_eq!(costco["phone"], "+61893114700", "source phone kept");
    assert_eq!(costco["openHours"]["Sunday"], "07:00-19:00", "source hours kept");
    assert_eq!(costco["siteFeatures"], serde_json::json!([1, 5, 8]), "provider facilities add");
    let fields = costco["enrichment"]["fields"].as_array().expect("fields").clone();
    assert!(!fields.iter().any(|f| f == "phone" || f.as_str().is_some_and(|f| f.starts_with("openHours"))));
    let billabong = e.station("/v1?product=1", "Billabong Roadhouse").await;
    assert_eq!(billabong["openHours"]["Monday"], "06:00-20:30");
    assert_eq!(billabong["phone"], "+61898841056", "a missing source phone is filled");
    let coles = e.station("/v1?product=1", "Coles Express Ellenbrook").await;
    assert_eq!(coles["is24Hours"], true, "a 24-hour source is never narrowed");
    assert!(coles.get("openHours").is_none());
}

#[tokio::test]
async fn doubtful_candidates_are_rejected() {
    let e = setup(|app| {
        let mut competitor = place_for(app, "Meekatharra Corner Store", "p-shell");
        competitor.display_name =
            Some(LocalizedText { text: "Shell Meekatharra Corner Store".into(), language_code: None });
        let mut far = place_for(app, "Billabong Roadhouse", "p-far");
        far.location = far.location.map(|l| LatLng { latitude: l.latitude + 0.004, ..l });
        let mut closed = place_for(app, "Shire of Wandering", "p-closed");
        closed.business_status = Some("CLOSED_PERMANENTLY".into());
        // (An exact distinctive name within 50 m would accept before the address is compared,
        // per docs/design.md, so this candidate's name only overlaps.)
        let mut number = place_for(app, "Costco Perth Airport", "p-number");
        number.display_name =
            Some(LocalizedText { text: "Costco Perth Airport Fuel".into(), language_code: None });
        number.address_components[0] = comp("150", "street_number");
        let twin_a = place_for(app, "Vibe Byford", "p-twin-a");
        let mut twin_b = place_for(app, "Vibe Byford", "p-twin-b");
        twin_b.location = twin_b.location.map(|l| LatLng { latitude: l.latitude + 0.0002, ..l });
        vec![competitor, far, closed, number, twin_a, twin_b]
    })
    .await;
    let report = e.pass(&config()).await;
    assert_eq!(report.matched, 0, "{report:?}");
    let doc = e.app.get("/v1?product=1").await.json();
    assert!(
        doc["data"].as_array().expect("data").iter().all(|s| s["attributes"].get("enrichment").is_none())
    );
}

#[tokio::test]
async fn the_address_fallback_finds_a_renamed_place() {
    let e = setup(|app| {
        let mut p = place_for(app, "Shire of Wandering", "p-fallback");
        p.display_name = Some(LocalizedText { text: "Wandering Shire Fuel".into(), language_code: None });
        vec![p]
    })
    .await;
    let report = e.pass(&config()).await;
    assert_eq!(report.matched, 1);
    let log = e.places.state.log();
    assert!(log.iter().any(|(w, _)| w.starts_with("search shire of wandering")));
    assert!(log.iter().any(|(w, _)| w.starts_with("search 21 watts st")), "one address-only search");
    let a = e.station("/v1?product=1", "Shire of Wandering").await;
    assert_eq!(a["enrichment"]["placeId"], "p-fallback");
}

#[tokio::test]
async fn the_daily_budget_stops_the_pass_and_holds_across_runs() {
    let e = setup(|app| vec![place_for(app, "Shire of Wandering", "p-w")]).await;
    let tight = EnrichConfig { daily_budget: 5, ..config() };
    let first = e.pass(&tight).await;
    assert!(first.budget_exhausted);
    assert_eq!(first.provider_requests, 5);
    assert_eq!(e.places.state.requests(), 5);
    let second = e.pass(&tight).await;
    assert_eq!(second.skipped, None, "the first pass released its lease");
    assert_eq!(second.provider_requests, 0, "{second:?}");
    assert_eq!(e.places.state.requests(), 5, "no request once the day's budget is spent");
}

async fn concurrent_reservations(store: Arc<dyn Store>) {
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.reserve_budget("2026-09-29", 7).await.expect("reserve") })
        })
        .collect();
    let mut granted = 0;
    for t in tasks {
        granted += usize::from(t.await.expect("task"));
    }
    assert_eq!(granted, 7);
    assert!(store.reserve_budget("2026-09-30", 7).await.expect("next day"));
}

#[tokio::test]
async fn concurrent_budget_reservations_sqlite() {
    let dir = tempfile::tempdir().expect("dir");
    concurrent_reservations(sqlite_store(&dir).await).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn concurrent_budget_reservations_postgres() {
    let url = postgres_url();
    concurrent_reservations(postgres_store(&url).await).await;
}

#[tokio::test]
async fn refusals_pause_a_day_and_rate_limits_an_hour() {
    for (status, pause) in [(403u16, 24 * 3_600u64), (429, 3_600)] {
        let e = setup(|app| vec![place_for(app, "Shire of Wandering", "p-w")]).await;
        e.places.state.fail_with(Some(status));
        let report = e.pass(&config()).await;
        assert_eq!(report.failed, 1, "{status}: {report:?}");
        assert_eq!(e.places.state.requests(), 1, "{status}: the pass stopped at the first refusal");
        e.places.state.fail_with(None);
        e.app.clock.advance(Duration::from_secs(pause - 60));
        assert_eq!(e.pass(&config()).await.skipped, Some("provider paused"), "{status}");
        assert_eq!(e.places.state.requests(), 1);
        e.app.clock.advance(Duration::from_secs(120));
        let resumed = e.pass(&config()).await;
        assert_eq!(resumed.skipped, None, "{status}");
        assert!(e.places.state.requests() > 1);
    }
    // A wrong key is a refusal by the provider too.
    let e = setup(|app| vec![place_for(app, "Shire of Wandering", "p-w")]).await;
    let report = enrich_pass(e.app.server.state.catalog.prices(), &e.store, &e.client("wrong"), &config())
        .await
        .expect("pass");
    assert_eq!(report.failed, 1);
    assert_eq!(report.matched, 0);
}

#[tokio::test]
async fn stale_at_the_deadline_and_gone_at_thirty_days() {
    let e = setup(|app| vec![place_for(app, "Shire of Wandering", "p-w")]).await;
    assert_eq!(e.pass(&config()).await.matched, 1);
    // Just before the 7-day deadline, the response may not be kept past it.
    e.app.clock.advance(Duration::from_secs(7 * 86_400 - 100));
    let r = e.app.get("/v1?product=1").await;
    let cc = r.header("cache-control").to_string();
    let age: i64 = cc.rsplit('=').next().and_then(|n| n.parse().ok()).unwrap_or(i64::MAX);
    assert!(age <= 100, "freshness never outlives the profile deadline: {cc}");
    e.app.clock.advance(Duration::from_secs(100));
    let stale = e.station("/v1?product=1", "Shire of Wandering").await;
    assert_eq!(stale["enrichment"]["stale"], true);
    assert_eq!(stale["address"]["postcode"], "6308");
    e.app.clock.advance(Duration::from_secs(23 * 86_400));
    let gone = e.station("/v1?product=1", "Shire of Wandering").await;
    assert!(gone.get("enrichment").is_none(), "30 days old is never served");
    assert_eq!(gone["address"]["postcode"], serde_json::Value::Null);
}

#[tokio::test]
async fn a_changed_seed_clears_its_profile() {
    let e = setup(|app| vec![place_for(app, "Shire of Wandering", "p-w")]).await;
    assert_eq!(e.pass(&config()).await.matched, 1);
    let now = e.app.clock.now();
    let since = now.saturating_sub(jiff::SignedDuration::from_hours(1)).expect("t");
    let before = e.store.profiles(since).await.expect("profiles");
    assert_eq!(before.len(), 1);
    let key = before[0].station_key.clone();
    let seed = Seed {
        station_key: key.clone(),
        name: "Wandering Roadhouse".into(),
        brand: 15,
        street: "21 Watts St".into(),
        suburb: "WANDERING".into(),
        latitude: -32.680596,
        longitude: 116.675793,
    };
    assert_eq!(e.store.upsert_seeds(&[seed]).await.expect("upsert"), 1);
    assert!(e.store.profiles(since).await.expect("profiles").is_empty());
    // Unchanged seeds change nothing.
    let again = e.store.due(now, 1_000).await.expect("due");
    assert!(again.iter().any(|d| d.seed.station_key == key), "due again after the change");
}

#[tokio::test]
async fn a_broken_enrichment_table_leaves_prices_intact() {
    let e = setup(|app| vec![place_for(app, "Shire of Wandering", "p-w")]).await;
    assert_eq!(e.pass(&config()).await.matched, 1);
    drop_sqlite_table(&e.app.dir, "place_profiles").await;
    let r = e.app.get("/v1?product=1").await;
    assert_eq!(r.status, 200);
    let doc = r.json();
    assert!(doc["data"].as_array().expect("data").len() > 300);
    assert!(
        doc["data"].as_array().expect("data").iter().all(|s| s["attributes"].get("enrichment").is_none())
    );
}

#[tokio::test]
async fn the_enrich_command_then_the_api() {
    // The binary runs on the real clock, so the origin does too.
    let sim = wafuel_sim::SimHandle::spawn(local(), Arc::new(wafuel::app::SystemClock), Default::default())
        .await
        .expect("origin");
    let places = {
        let tmp = TestApp::new().await;
        vec![place_for(&tmp, "Shire of Wandering", "p-bin")]
    };
    let standin = PlacesHandle::spawn(KEY, places).await.expect("stand-in");
    let dir = tempfile::tempdir().expect("dir");
    let store_url = format!("sqlite://{}/wafuel.sqlite3", dir.path().display());
    let (store, source, places_url) = (store_url.clone(), sim.feed_url(), standin.base_url());
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_wafuel"))
            .args([
                "enrich",
                "--store",
                &store,
                "--source-url",
                &source,
                "--places-url",
                &places_url,
                "--places-api-key",
                KEY,
            ])
            .args([
                "--enrich-product",
                "1",
                "--enrich-batch",
                "2000",
                "--enrich-daily-budget",
                "10000",
                "--log-format",
                "json",
            ])
            .output()
            .expect("wafuel enrich runs")
    })
    .await
    .expect("join");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 matched"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let clock = wafuel_domain::time::ManualClock::new(jiff::Timestamp::now());
    let store = wafuel_store::open(&store_url).await.expect("store");
    let server = Server::start(app_config(&sim, &clock, store, None), Default::default()).await;
    let doc = server.get("/v1?product=1").await.json();
    let enriched: Vec<&serde_json::Value> = doc["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter(|s| s["attributes"].get("enrichment").is_some())
        .collect();
    assert_eq!(enriched.len(), 1);
    assert_eq!(enriched[0]["attributes"]["tradingName"], "Shire of Wandering");
}

#[tokio::test]
async fn a_refresh_uses_place_details() {
    let e = setup(|app| vec![place_for(app, "Shire of Wandering", "p-w")]).await;
    assert_eq!(e.pass(&config()).await.matched, 1);
    e.app.clock.advance(Duration::from_secs(7 * 86_400 + 60));
    let before = e.places.state.requests();
    let report = e.pass(&config()).await;
    assert_eq!(report.matched, 1, "{report:?}");
    let log = e.places.state.log();
    assert!(
        log[before..].iter().any(|(w, _)| w == "details p-w"),
        "the stored place id is refreshed by details"
    );
    let a = e.station("/v1?product=1", "Shire of Wandering").await;
    assert_eq!(a["enrichment"]["stale"], false);
}

async fn seeds_and_profiles(store: Arc<dyn Store>) {
    use wafuel_domain::profile::{PlaceProfile, StoredProfile};
    let now = jiff::Timestamp::from_second(1_790_000_000).expect("t");
    let seed = |name: &str| Seed {
        station_key: "k1".into(),
        name: name.into(),
        brand: 5,
        street: "1 Main St".into(),
        suburb: "PERTH".into(),
        latitude: -31.95,
        longitude: 115.86,
    };
    let version = |v: Result<i64, wafuel_store::StoreError>| v.expect("profiles version");
    let v0 = version(store.profiles_version().await);
    assert_eq!(store.upsert_seeds(&[seed("BP Perth")]).await.expect("upsert"), 1);
    let v1 = version(store.profiles_version().await);
    assert_eq!(store.upsert_seeds(&[seed("BP Perth")]).await.expect("upsert"), 0, "unchanged");
    assert_eq!(version(store.profiles_version().await), v1, "nothing written, nothing counted");
    assert_eq!(v1, v0, "a new seed has no profile: readers hold nothing to reload");
    let due = store.due(now, 10).await.expect("due");
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].seed, seed("BP Perth"));
    let week = jiff::SignedDuration::from_hours(168);
    let stored = StoredProfile {
        station_key: "k1".into(),
        fetched_at: now,
        refresh_at: now.checked_add(week).expect("t"),
        profile: PlaceProfile {
            place_id: "p".into(),
            postcode: Some("6000".into()),
            ..PlaceProfile::default()
        },
    };
    store.save_profile(&stored).await.expect("save");
    let v2 = version(store.profiles_version().await);
    assert!(v2 > v1, "a saved profile moves the counter readers compare");
    assert!(store.due(now, 10).await.expect("due").is_empty(), "not due until the refresh deadline");
    assert_eq!(
        store.profiles(now.checked_sub(week).expect("t")).await.expect("profiles"),
        vec![stored.clone()]
    );
    assert_eq!(store.due(stored.refresh_at, 10).await.expect("due")[0].place_id.as_deref(), Some("p"));
    assert_eq!(store.upsert_seeds(&[seed("BP Perth Connect")]).await.expect("upsert"), 1);
    assert!(
        store.profiles(now.checked_sub(week).expect("t")).await.expect("profiles").is_empty(),
        "changed seed"
    );
    assert!(version(store.profiles_version().await) > v2, "a cleared profile moves it too");
    assert_eq!(store.paused_until().await.expect("paused"), None);
    store.pause(now.checked_add(week).expect("t")).await.expect("pause");
    assert_eq!(store.paused_until().await.expect("paused"), now.checked_add(week).ok());
}

#[tokio::test]
async fn seeds_and_profiles_sqlite() {
    let dir = tempfile::tempdir().expect("dir");
    seeds_and_profiles(sqlite_store(&dir).await).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn seeds_and_profiles_postgres() {
    let url = postgres_url();
    seeds_and_profiles(postgres_store(&url).await).await;
}

#[tokio::test]
async fn provider_errors_back_off_the_station_only() {
    let e = setup(|app| vec![place_for(app, "Shire of Wandering", "p-w")]).await;
    e.places.state.fail_with(Some(500));
    let small = EnrichConfig { batch: 3, ..config() };
    let report = e.pass(&small).await;
    assert_eq!((report.failed, report.looked_up), (3, 3), "a 5xx does not stop the pass: {report:?}");
    assert_eq!(e.store.paused_until().await.expect("paused"), None, "nor pause the provider");
    // The three failed stations wait (15 min × 2); the others are due now.
    let now = e.app.clock.now();
    let failed: Vec<String> = e.places.state.log().iter().map(|(w, _)| w.clone()).collect();
    assert_eq!(failed.len(), 3);
    let due = e.store.due(now, 2_000).await.expect("due");
    assert_eq!(due.len(), 940 - 3);
    let later = now.checked_add(jiff::SignedDuration::from_mins(31)).expect("t");
    assert_eq!(e.store.due(later, 2_000).await.expect("due").len(), 940, "due again after the backoff");
}

/// A station whose hours and a feature came from the provider is filtered, timed and shown by
/// them on the station API: `open`, `closesAt`, `opensAt`, `open=`, `feature=`, the CSV's
/// columns and the answer's freshness all read the hours and features its answer shows.
#[tokio::test]
async fn the_station_api_reads_the_hours_and_features_the_provider_completed() {
    let e = setup(|app| vec![place_for(app, "Shire of Wandering", "p-wandering")]).await;
    let find = |doc: &serde_json::Value| -> serde_json::Value {
        doc["data"]
            .as_array()
            .expect("data")
            .iter()
            .find(|s| s["attributes"]["tradingName"] == "Shire of Wandering")
            .cloned()
            .unwrap_or(serde_json::Value::Null)
    };
    let before = find(&e.app.get("/v1/stations?product=1").await.json());
    let digest = before["id"].as_str().expect("id").rsplit(':').next().expect("digest").to_string();
    assert_eq!(before["attributes"]["open"], serde_json::Value::Null, "no hours known yet: {before}");
    let report = e.pass(&config()).await;
    assert_eq!(report.matched, 1, "{report:?}");
    e.app.clock.advance(Duration::from_secs(15 * 60 + 1));
    // Tuesday 10:15 in Perth: open until 18:00, opening again at 07:00 tomorrow.
    let uri = format!("/v1/stations?product=1&id={digest}");
    let answer = e.app.get(&uri).await;
    let a = find(&answer.json())["attributes"].clone();
    assert_eq!(a["openHours"]["Tuesday"], "07:00-18:00", "{a}");
    assert_eq!(a["open"], true, "{a}");
    assert_eq!(a["closesAt"], "2026-09-29T18:00+08:00");
    assert_eq!(a["opensAt"], "2026-09-30T07:00+08:00");
    // The answer is fresh no longer than the station stays open.
    let max_age = answer
        .header("cache-control")
        .split(',')
        .find_map(|d| d.trim().strip_prefix("s-maxage="))
        .and_then(|v| v.parse::<u64>().ok())
        .expect("s-maxage");
    assert!(max_age <= (18 * 60 - (10 * 60 + 15)) * 60, "{max_age}");
    // `open=` keeps it within its hours and not after them.
    let at = |time: &str| format!("/v1/stations?product=1&open={time}");
    assert!(!find(&e.app.get(&at("12:15")).await.json()).is_null(), "open at 12:15");
    assert!(find(&e.app.get(&at("19:00")).await.json()).is_null(), "closed at 19:00");
    // A feature only the provider named keeps it under `feature=`.
    let shown: Vec<u64> =
        a["siteFeatures"].as_array().expect("features").iter().filter_map(|f| f.as_u64()).collect();
    let own: Vec<u64> = before["attributes"]["siteFeatures"]
        .as_array()
        .expect("features")
        .iter()
        .filter_map(|f| f.as_u64())
        .collect();
    let added = shown.iter().find(|f| !own.contains(f)).expect("the provider added a feature");
    let codes: Vec<String> = shown.iter().map(u64::to_string).collect();
    for feature in [added.to_string(), codes.join(",")] {
        let kept = e.app.get(&format!("/v1/stations?product=1&feature={feature}")).await.json();
        assert!(!find(&kept).is_null(), "feature={feature} keeps the station showing it");
    }
    // The CSV's columns say the same.
    let csv = e.app.call("GET", &uri, &[("accept", "text/csv")]).await;
    let text = String::from_utf8(csv.body.to_vec()).expect("utf-8");
    let mut lines = text.lines();
    // Read from the end: a name or street before them may hold a quoted comma.
    let header: Vec<&str> = lines.next().expect("header").rsplit(',').collect();
    let row: Vec<&str> = lines.next().expect("row").rsplit(',').collect();
    let column = |name: &str| row[header.iter().position(|h| *h == name).expect("column")];
    assert_eq!(
        (column("open"), column("closesAt"), column("opensAt")),
        ("true", "2026-09-29T18:00+08:00", "2026-09-30T07:00+08:00")
    );
}
