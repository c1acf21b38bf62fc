//! "Fill now or wait" over the real router and a real SQLite history seeded from the simulated
//! origin (whose cycle changed regime: weekly Tuesday, weekly Wednesday, then fortnightly):
//! the forecast against the origin's own later prices, no look-ahead, tomorrow known once
//! published, a flat diesel forecast, 404s for short histories, every query rule a 400 without
//! a source request, and `wafuel backtest` printing the accuracy the API shows.

use std::process::Command;
use std::sync::Arc;

use jiff::civil::{Date, date};
use wafuel_domain::error_code::detail;
use wafuel_store::history::HistoryStore;

use crate::support::*;

fn tenths(text: &str) -> i64 {
    (text.parse::<f64>().expect("price") * 10.0).round() as i64
}

/// The median of the origin's prices of `product` on `d`, in cents (as `/v1/stats` rounds it).
fn origin_median(app: &TestApp, product: u8, d: Date) -> f64 {
    let mut prices: Vec<i64> = app
        .sim
        .state
        .dataset()
        .stations
        .iter()
        .filter_map(|s| s.price_text(product, d).map(|t| tenths(&t)))
        .collect();
    prices.sort_unstable();
    let n = prices.len();
    let median =
        if n % 2 == 1 { prices[n / 2] as f64 } else { (prices[n / 2 - 1] + prices[n / 2]) as f64 / 2.0 };
    median.round() / 10.0
}

/// Record the `days` days before `today` of every product through the real parser.
async fn seed(app: &TestApp, today: Date, days: i32) {
    let history: Arc<dyn HistoryStore> = sqlite_store(&app.dir).await;
    let state = app.sim.state.clone();
    let w =
        wafuel_service::jobs::seed::seed_history(&history, today, days, |p, d| state.past_feed(p.get(), d))
            .await;
    assert!(w.written > 0);
}

/// The station id the API gives an origin station (the digest of its key).
fn id_of(s: &wafuel_sim::dataset::SimStation) -> String {
    let lat: f64 = s.latitude.parse().expect("lat");
    let lon: f64 = s.longitude.parse().expect("lon");
    wafuel_domain::key::key_digest(&wafuel_domain::key::station_key(&s.address, &s.location, lat, lon))
}

fn attrs(r: &TestResponse) -> serde_json::Value {
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["data"]["attributes"].clone()
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("number: {v}"))
}

fn day_of(v: &serde_json::Value) -> Date {
    v.as_str().expect("date").parse().expect("date")
}

#[tokio::test]
async fn the_market_forecast_beats_the_last_price_and_the_backtest_agrees() {
    let app = TestApp::new().await; // 29 September 2026, 10:00 Perth
    seed(&app, date(2026, 9, 29), 120).await;
    let r = app.get("/v1/forecast?product=1").await;
    let a = attrs(&r);
    assert_eq!(r.json()["data"]["id"], "1:2026-09-29");
    assert_eq!(r.json()["data"]["type"], "forecast");
    assert_eq!(app.source_requests(), 0, "a forecast reads only the history store");
    assert_eq!(a["asOf"], "2026-09-29");
    assert_eq!(a["basis"], "2026-09-28", "today is not in the history yet");
    let days = a["days"].as_array().expect("days");
    assert_eq!(days.len(), 7);
    // Against what the origin really priced on those days.
    let basis = origin_median(&app, 1, date(2026, 9, 28));
    let (mut model, mut naive) = (0.0, 0.0);
    for (k, d) in days.iter().enumerate() {
        let date_k = date(2026, 9, 30).checked_add(jiff::Span::new().days(k as i64)).expect("date");
        assert_eq!(day_of(&d["date"]), date_k);
        assert_eq!(d["known"], false);
        let (low, median, high) = (f(&d["low"]), f(&d["median"]), f(&d["high"]));
        assert!(low <= median && median <= high, "{d}");
        let p = f(&d["hikeProbability"]);
        assert!((0.0..=1.0).contains(&p));
        let actual = origin_median(&app, 1, date_k);
        model += (actual - median).abs();
        naive += (actual - basis).abs();
    }
    assert!(model < 0.6 * naive, "forecast error {model:.1} against the last price's {naive:.1}");
    assert_eq!(a["cycle"]["periodDays"], 14, "the origin has been fortnightly since January");
    let accuracy = &a["accuracy"];
    assert!(accuracy["days"].as_u64().expect("days") >= 50, "{accuracy}");
    let mae: Vec<f64> = accuracy["mae"].as_array().expect("mae").iter().map(f).collect();
    let naive_mae: Vec<f64> = accuracy["naiveMae"].as_array().expect("naive").iter().map(f).collect();
    assert!(mae[0] <= 0.6 * naive_mae[0], "{accuracy}");
    // The advice's replayed worth is said beside its MAE: a share of what hindsight saves.
    let (saved, hindsight) = (f(&accuracy["adviceSaving"]), f(&accuracy["hindsightSaving"]));
    assert!(hindsight > 0.0 && saved >= 0.5 * hindsight, "{accuracy}");
    let advice = &a["advice"];
    match advice["action"].as_str().expect("action") {
        "wait" => assert!(f(&advice["saving"]) >= 1.0 && advice["until"].is_string(), "{advice}"),
        "fill-now" => assert!(advice["until"].is_string(), "{advice}"),
        _ => assert!(advice["until"].is_null() && advice["saving"].is_null(), "{advice}"),
    }
    assert!(advice["reason"].as_str().expect("reason").ends_with('.'));
    assert_conditional_get(&app, "/v1/forecast?product=1", &[]).await;
    assert_head_parity(&app, "/v1/forecast?product=1&horizon=3", &[]).await;
    // A shorter horizon is the same forecast cut short, with the same replayed accuracy.
    let short = attrs(&app.get("/v1/forecast?product=1&horizon=3").await);
    assert_eq!(short["days"].as_array().expect("days")[..], days[..3]);
    assert_eq!(
        short["accuracy"]["mae"].as_array().expect("mae")[..],
        accuracy["mae"].as_array().expect("mae")[..3]
    );

    // A station's own forecast, against its own later prices.
    let stations = &app.sim.state.dataset().stations;
    let origin =
        stations.iter().find(|s| s.products.contains(&1) && s.fixed_prices.is_empty()).expect("a station");
    let price = |d: Date| origin.price_text(1, d).map(|t| tenths(&t) as f64 / 10.0).expect("price");
    let own = attrs(&app.get(&format!("/v1/stations/{}/forecast?product=1", id_of(origin))).await);
    assert_eq!(own["stationId"], id_of(origin).as_str());
    let (mut model, mut naive) = (0.0, 0.0);
    for d in own["days"].as_array().expect("days") {
        let actual = price(day_of(&d["date"]));
        model += (actual - f(&d["median"])).abs();
        naive += (actual - price(date(2026, 9, 28))).abs();
    }
    assert!(model < 0.7 * naive, "station forecast error {model:.1} against its last price's {naive:.1}");

    // `wafuel backtest --to D` prints the accuracy `/v1/forecast?asOf=D` shows.
    let out = Command::new(env!("CARGO_BIN_EXE_wafuel"))
        .args(["backtest", "--product", "1", "--to", "2026-09-29", "--store"])
        .arg(format!("sqlite://{}", app.dir.path().join("wafuel.sqlite3").display()))
        .env_remove("WAFUEL_STORE")
        .output()
        .expect("backtest runs");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(table.contains(&format!("{} forecasts replayed", accuracy["days"])), "{table}");
    for (k, m) in mae.iter().enumerate() {
        let row = format!("| +{} | {m:.2} | {:.2} |", k + 1, naive_mae[k]);
        assert!(table.contains(&row), "{row} not in\n{table}");
    }
    let hit = (f(&accuracy["hikeHitRate"]) * 100.0).round();
    assert!(table.contains(&format!("({hit:.0} %)")), "hit rate {hit} not in\n{table}");
    // Each day's row ends with the weekly-seasonal naive and the model against the best of the
    // three, which is never above its ratio to the better of the other two; the summary line
    // says the mean over the horizon against each day's best.
    for k in 0..7 {
        let row = table.lines().find(|l| l.starts_with(&format!("| +{} |", k + 1))).expect("a row");
        let cells: Vec<&str> = row.split('|').map(str::trim).filter(|c| !c.is_empty()).collect();
        assert_eq!(cells.len(), 9, "{row}");
        let (better, best): (f64, f64) = (cells[4].parse().expect("ratio"), cells[8].parse().expect("ratio"));
        assert!(cells[7].parse::<f64>().is_ok() && best >= better - 0.005, "{row}");
    }
    let summary =
        table.lines().find(|l| l.starts_with("Days +1 to +7: the model's mean MAE is ")).expect("summary");
    let mean: f64 = summary["Days +1 to +7: the model's mean MAE is ".len()..]
        .split(' ')
        .next()
        .and_then(|x| x.parse().ok())
        .expect("a ratio");
    assert!(mean > 0.0 && mean < 1.0, "{summary}");
}

#[tokio::test]
async fn a_past_forecast_never_reads_later_prices() {
    let app = TestApp::new().await;
    seed(&app, date(2026, 9, 16), 100).await; // up to 15 September
    let market = "/v1/forecast?product=1&asOf=2026-09-10";
    let before = app.get(market).await;
    assert_eq!(attrs(&before)["basis"], "2026-09-10");
    let id = app.sim.state.dataset().stations.first().map(id_of).expect("a station");
    let station = format!("/v1/stations/{id}/forecast?product=1&asOf=2026-09-10&horizon=5");
    let station_before = app.get(&station).await;
    assert_eq!(attrs(&station_before)["stationId"], id.as_str());
    // Later prices arrive; a fresh process over the same store answers byte for byte alike.
    seed(&app, date(2026, 9, 29), 13).await;
    let fresh = TestApp::over(
        sqlite_store(&app.dir).await,
        tempfile::tempdir().expect("dir"),
        fixture_morning(),
        Default::default(),
        None,
    )
    .await;
    let later = attrs(&fresh.get("/v1/forecast?product=1&asOf=2026-09-20").await);
    assert_eq!(later["basis"], "2026-09-20", "the new days are there");
    assert_eq!(fresh.get(market).await.body, before.body);
    assert_eq!(fresh.get(&station).await.body, station_before.body);
}

#[tokio::test]
async fn after_publication_tomorrow_is_known_and_is_the_published_median() {
    let app = TestApp::at(date(2026, 9, 29).at(15, 0, 0, 0)).await;
    seed(&app, date(2026, 9, 29), 80).await;
    // The warm pass publishes today and tomorrow, and writes both into the history.
    let report = wafuel_service::jobs::warm::warm_pass(app.server.state.catalog.prices()).await;
    assert!(report.refreshed >= 14, "{report:?}");
    let a = attrs(&app.get("/v1/forecast?product=1&horizon=3").await);
    let days = a["days"].as_array().expect("days");
    assert_eq!((days[0]["date"].as_str(), days[0]["known"].as_bool()), (Some("2026-09-30"), Some(true)));
    assert_eq!(a["basis"], "2026-09-30");
    let stats = attrs(&app.get("/v1/stats?product=1&from=2026-09-30&to=2026-09-30").await);
    let published = &stats["days"][0]["median"];
    assert_eq!(&days[0]["median"], published);
    assert_eq!((&days[0]["low"], &days[0]["high"]), (published, published));
    assert!(days[1..].iter().all(|d| d["known"] == false));
    // A past `asOf` knows nothing of its tomorrow, published or not.
    let past = attrs(&app.get("/v1/forecast?product=1&asOf=2026-09-28&horizon=2").await);
    assert!(past["days"].as_array().expect("days").iter().all(|d| d["known"] == false));
}

#[tokio::test]
async fn diesel_without_a_cycle_is_forecast_flat() {
    let app = TestApp::new().await;
    seed(&app, date(2026, 9, 29), 70).await;
    let a = attrs(&app.get("/v1/forecast?product=4").await);
    let basis = origin_median(&app, 4, date(2026, 9, 28));
    for d in a["days"].as_array().expect("days") {
        assert_eq!(f(&d["median"]), basis, "{d}");
        assert_eq!(f(&d["hikeProbability"]), 0.0);
    }
    assert_eq!(a["cycle"], serde_json::json!({"periodDays": null, "daysSinceHike": null, "nextHike": null}));
    assert_eq!(a["advice"]["action"], "either");
}

#[tokio::test]
async fn too_little_history_and_unknown_stations_are_404() {
    let app = TestApp::new().await;
    seed(&app, date(2026, 9, 29), 40).await;
    let r = app.get("/v1/forecast?product=1").await;
    assert_eq!(r.status, 404);
    // Said with what fills it (this app runs no backfill) and how far the history is.
    let said = r.json()["errors"][0]["detail"].as_str().expect("detail").to_string();
    assert!(said.contains("its backfill is off): run `wafuel import-history`"), "{said}");
    assert!(
        said.ends_with(
            "A forecast needs 56 days with prices in the 91 before 2026-09-29; the history has 40."
        ),
        "{said}"
    );
    let unknown = "0".repeat(64);
    let r = app.get(&format!("/v1/stations/{unknown}/forecast?product=1")).await;
    assert_eq!((r.status, r.json()["errors"][0]["detail"].as_str()), (404, Some(detail::STATION_NOT_FOUND)));
    let id = app.sim.state.dataset().stations.first().map(id_of).expect("a station");
    let r = app.get(&format!("/v1/stations/{id}/forecast?product=10")).await;
    assert_eq!(r.status, 404, "a product the station never had");
    assert_eq!(app.source_requests(), 0);
}

#[tokio::test]
async fn every_forecast_rule_is_a_400_without_a_source_request() {
    let app = TestApp::new().await;
    let id = "9f2c8a3b1d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8";
    for query in [
        "",
        "product=1,2",
        "product=3",
        "product=1&horizon=0",
        "product=1&horizon=8",
        "product=1&horizon=two",
        "product=1&asOf=2026-09-30",
        "product=1&asOf=2026-02-30",
        "product=1&asOf=yesterday",
        "product=1&brand=0",
        "product=1&region=99",
        "product=1&day=tomorrow",
        "product=1&asOf=2026-09-01&asof=2026-09-02",
    ] {
        for path in ["/v1/forecast".to_string(), format!("/v1/stations/{id}/forecast")] {
            let r = app.get(&format!("{path}?{query}")).await;
            assert_eq!(r.status, 400, "{path}?{query}");
            assert_eq!(r.json()["errors"][0]["code"], "invalid_query");
        }
    }
    for query in ["product=1&brand=5", "product=1&region=25"] {
        let r = app.get(&format!("/v1/stations/{id}/forecast?{query}")).await;
        assert_eq!(r.status, 400, "the station route takes no filter: {query}");
    }
    assert_eq!(app.get("/v1/stations/not-an-id/forecast?product=1").await.status, 400);
    assert_eq!(app.source_requests(), 0);
}

/// The live record over `days` mornings of a moving clock, on `apps` (replicas sharing one
/// store, answering in turn): each morning today's forecast is asked (twice, and with another
/// horizon) and the day before's prices arrive. Returns the record route's body.
async fn live_days(
    apps: &[&TestApp],
    history: &Arc<dyn HistoryStore>,
    start: Date,
    days: i64,
) -> bytes::Bytes {
    let mut today = start;
    for k in 0..days {
        for (i, app) in apps.iter().enumerate() {
            app.clock.set(wafuel_domain::time::perth_instant(today.at(9, i as i8, 0, 0)));
            for uri in
                ["/v1/forecast?product=1", "/v1/forecast?product=1&horizon=3", "/v1/forecast?product=1"]
            {
                let a = attrs(&app.get(uri).await);
                assert_eq!(a["asOf"], today.to_string());
            }
        }
        let record = apps[0].get("/v1/forecast/record?product=1").await;
        assert_eq!(record.status, 200, "{}", String::from_utf8_lossy(&record.body));
        let doc = record.json();
        let data = doc["data"].as_array().expect("records");
        assert_eq!(data.len() as i64, k + 1, "one record per morning, however often asked");
        for (j, r) in data.iter().enumerate() {
            let as_of = start.checked_add(jiff::Span::new().days(j as i64)).expect("day");
            assert_eq!(r["attributes"]["asOf"], as_of.to_string());
            assert_eq!(r["attributes"]["days"].as_array().map(Vec::len), Some(7), "the whole week is kept");
        }
        // The day's prices arrive.
        let state = apps[0].sim.state.clone();
        let next = today.tomorrow().expect("day");
        wafuel_service::jobs::seed::seed_history(history, next, 1, |p, d| state.past_feed(p.get(), d)).await;
        today = next;
    }
    apps[0].clock.set(wafuel_domain::time::perth_instant(today.at(9, 30, 0, 0)));
    apps[0].get("/v1/forecast/record?product=1").await.body
}

#[tokio::test]
async fn the_live_record_keeps_todays_forecast_once_and_scores_its_days_as_they_come() {
    let start = date(2026, 9, 16);
    let app = TestApp::at(start.at(9, 0, 0, 0)).await;
    seed(&app, start, 100).await;
    let history: Arc<dyn HistoryStore> = sqlite_store(&app.dir).await;
    let body = live_days(&[&app], &history, start, 4).await;
    let doc: serde_json::Value = serde_json::from_slice(&body).expect("json");
    let records = doc["data"].as_array().expect("records");
    assert_eq!(records.len(), 4);
    // Each recorded day is scored with the published median of that day, once it came.
    let mut scored = 0;
    for r in records {
        for d in r["attributes"]["days"].as_array().expect("days") {
            let date = day_of(&d["date"]);
            if date < date_of(&body_day(&doc)) {
                assert_eq!(f(&d["actual"]), origin_median(&app, 1, date), "{date}");
                assert!(!r["attributes"]["today"].is_null());
                let error = f(&d["actual"]) - f(&d["median"]);
                assert!((f(&d["error"]) - error).abs() < 0.051, "{d}");
                scored += 1;
            } else {
                assert!(d["actual"].is_null() && d["error"].is_null(), "{d}");
            }
        }
    }
    assert_eq!(scored, 3 + 2 + 1);
    // A restart over the same store: the same record, nothing recorded or scored again.
    let fresh = TestApp::over(
        sqlite_store(&app.dir).await,
        tempfile::tempdir().expect("dir"),
        start.at(9, 0, 0, 0),
        Default::default(),
        None,
    )
    .await;
    fresh.clock.set(wafuel_domain::time::Clock::now(&*app.clock));
    assert_eq!(fresh.get("/v1/forecast/record?product=1").await.body, body);
    let csv = fresh.call("GET", "/v1/forecast/record?product=1", &[("accept", "text/csv")]).await;
    assert_eq!(csv.status, 200);
    let text = String::from_utf8(csv.body.to_vec()).expect("utf8");
    assert!(text.starts_with(
        "as_of,recorded_at,date,median,low,high,known,hike_probability,actual,error,advice,advice_until\r\n"
    ));
    assert_eq!(text.lines().count(), 1 + 4 * 7);
    // accuracy.live says as much (and records today's forecast, the fifth).
    let live = &attrs(&fresh.get("/v1/forecast?product=1").await)["accuracy"]["live"];
    assert_eq!(live["forecasts"], 3);
    assert_eq!(doc["meta"]["live"], *live);
    assert!(live["mae"][0].as_f64().is_some() && live["mae"][3].is_null(), "{live}");
    // The record route's answer is kept as long as other stored documents (5 minutes).
    app.clock.advance(std::time::Duration::from_secs(6 * 60));
    let again = app.get("/v1/forecast/record?product=1").await.json();
    assert_eq!(again["data"].as_array().map(Vec::len), Some(5));
    let first4 = |v: &serde_json::Value| v["data"].as_array().map(|a| a[..4].to_vec());
    assert_eq!(first4(&again), first4(&doc), "what was recorded and scored stays");
}

/// The newest day of a record document's `to` (the day asked on).
fn body_day(doc: &serde_json::Value) -> serde_json::Value {
    doc["meta"]["to"].clone()
}

fn date_of(v: &serde_json::Value) -> Date {
    day_of(v)
}

#[tokio::test]
#[cfg_attr(not(wafuel_postgres), ignore = "needs WAFUEL_TEST_POSTGRES")]
async fn two_replicas_keep_one_live_record() {
    let url = postgres_url();
    let (a, b) = postgres_replica_stores(&url).await;
    let start = date(2026, 9, 16);
    let history: Arc<dyn HistoryStore> = a.clone();
    let one =
        TestApp::over(a, tempfile::tempdir().expect("dir"), start.at(9, 0, 0, 0), Default::default(), None)
            .await;
    let two =
        TestApp::over(b, tempfile::tempdir().expect("dir"), start.at(9, 0, 0, 0), Default::default(), None)
            .await;
    let state = one.sim.state.clone();
    wafuel_service::jobs::seed::seed_history(&history, start, 100, |p, d| state.past_feed(p.get(), d)).await;
    let body = live_days(&[&one, &two], &history, start, 3).await;
    two.clock.set(wafuel_domain::time::Clock::now(&*one.clock));
    assert_eq!(
        two.get("/v1/forecast/record?product=1").await.body,
        body,
        "both replicas answer the same record"
    );
    let doc: serde_json::Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(doc["meta"]["live"]["forecasts"], 2);
}

#[tokio::test]
async fn bad_record_queries_are_400_without_a_source_request() {
    let app = TestApp::new().await;
    let requests = app.source_requests();
    for bad in [
        "",
        "?product=1,2",
        "?product=1&from=2020-01-01",
        "?product=1&to=2999-01-01",
        "?product=1&station=xyz",
        "?product=1&horizon=2",
    ] {
        let r = app.get(&format!("/v1/forecast/record{bad}")).await;
        assert_eq!(r.status, 400, "{bad}");
        assert_eq!(r.json()["errors"][0]["code"], "invalid_query", "{bad}");
    }
    assert_eq!(app.source_requests(), requests);
}
