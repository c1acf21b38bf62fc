//! Wholesale (terminal gate) prices: the store on both databases, the live job against the
//! simulated FuelWatch API (its clock rules and every hostile answer), the yearly-file import,
//! and `/v1/wholesale` and the margin in `/v1/stats` over HTTP.

use std::sync::Arc;

use jiff::civil::{Date, date};

use super::support::*;
use wafuel_domain::wholesale::{Centre, TerminalPrice};
use wafuel_sim::wholesale::WholesaleFaults;
use wafuel_source::wholesale::{WholesaleClient, WholesaleError};
use wafuel_store::Store;
use wafuel_store::events::EventKind;

fn tp(product: u8, centre: Centre, day: Date, terminal: &str, price: i64) -> TerminalPrice {
    TerminalPrice { product: p(product), centre, date: day, terminal: terminal.into(), price }
}

fn at(text: &str) -> jiff::Timestamp {
    text.parse().expect("time")
}

/// Writes are idempotent, `if_missing` never overwrites, a first price of the news day makes
/// one event per (product, centre), and every change bumps the counter.
async fn store_round_trip(store: Arc<dyn Store>) {
    let (d22, d23) = (date(2026, 4, 22), date(2026, 4, 23));
    let first =
        [tp(1, Centre::Perth, d22, "Ampol Kwinana", 17_326), tp(1, Centre::Perth, d22, "BP Kwinana", 18_000)];
    let w = store.put_wholesale(&first, &[], None, at("2026-04-22T16:15:00+08:00")).await.expect("put");
    assert_eq!((w.written, w.replaced, w.unchanged), (2, 0, 0));
    let v1 = store.wholesale_version().await.expect("version");
    let again = store.put_wholesale(&first, &[], None, at("2026-04-22T16:15:00+08:00")).await.expect("put");
    assert_eq!((again.written, again.replaced, again.unchanged), (0, 0, 2));
    assert_eq!(store.wholesale_version().await.expect("version"), v1, "nothing changed, no bump");
    // A correction replaces; a price kept only when missing does not.
    let fix = [tp(1, Centre::Perth, d22, "BP Kwinana", 18_010)];
    let keep = [
        tp(1, Centre::Perth, d22, "Ampol Kwinana", 100_000),
        tp(1, Centre::Perth, date(2026, 4, 21), "Ampol Kwinana", 17_594),
    ];
    let w = store.put_wholesale(&fix, &keep, None, at("2026-04-22T16:15:00+08:00")).await.expect("put");
    assert_eq!((w.written, w.replaced, w.unchanged), (1, 1, 1));
    assert!(store.wholesale_version().await.expect("version") > v1);
    let stored = store.wholesale(p(1), Some(Centre::Perth), date(2026, 4, 21), d22).await.expect("read");
    let prices: Vec<(Date, &str, i64)> =
        stored.iter().map(|t| (t.date, t.terminal.as_str(), t.price)).collect();
    assert_eq!(
        prices,
        vec![
            (date(2026, 4, 21), "Ampol Kwinana", 17_594),
            (d22, "Ampol Kwinana", 17_326),
            (d22, "BP Kwinana", 18_010)
        ]
    );
    // Tomorrow's first prices are news, once per product and centre.
    let events_before = store.last_event_id().await.expect("events");
    let tomorrow = [
        tp(1, Centre::Perth, d23, "Ampol Kwinana", 17_218),
        tp(1, Centre::Perth, d23, "BP Kwinana", 17_318),
        tp(4, Centre::Broome, d23, "BP Broome", 24_000),
    ];
    store.put_wholesale(&tomorrow, &[], Some(d23), at("2026-04-22T14:31:00+08:00")).await.expect("put");
    store.put_wholesale(&tomorrow, &[], Some(d23), at("2026-04-22T15:00:00+08:00")).await.expect("put");
    let events = store.events_after(events_before, 100).await.expect("events");
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events.iter().all(|e| e.kind == EventKind::Wholesale && e.date == d23));
    let perth: serde_json::Value = serde_json::from_str(&events[0].data).expect("json");
    assert_eq!(
        perth,
        serde_json::json!({"date": "2026-04-23", "centre": "perth", "product": 1, "mean": 172.68})
    );
    assert_eq!(store.newest_wholesale_day(p(1), Centre::Perth).await.expect("newest"), Some(d23));
    assert_eq!(store.newest_wholesale_day(p(2), Centre::Perth).await.expect("newest"), None);
    // Other centres and products stay apart.
    assert!(store.wholesale(p(1), Some(Centre::Broome), d23, d23).await.expect("read").is_empty());
    assert_eq!(store.wholesale(p(4), None, d23, d23).await.expect("read").len(), 1);
    // A later complete live read is the day's terminals exactly: a terminal it no longer
    // lists (renamed) is dropped from that day, never counted twice in its mean; a yearly
    // file's merge keeps the others.
    let renamed = [
        tp(1, Centre::Perth, d23, "Ampol Kwinana", 17_218),
        tp(1, Centre::Perth, d23, "BP Kwinana Refinery", 17_318),
    ];
    let w =
        store.put_live_wholesale(&renamed, &[], None, at("2026-04-22T16:00:00+08:00")).await.expect("put");
    assert_eq!((w.written, w.replaced, w.unchanged), (1, 1, 1), "one new name, one dropped, one kept");
    let day: Vec<String> = store
        .wholesale(p(1), Some(Centre::Perth), d23, d23)
        .await
        .expect("read")
        .into_iter()
        .map(|t| t.terminal)
        .collect();
    assert_eq!(day, ["Ampol Kwinana", "BP Kwinana Refinery"]);
    let merged = [tp(1, Centre::Perth, d23, "Test yearly-file terminal", 17_301)];
    store.put_wholesale(&merged, &[], None, at("2026-04-22T16:00:00+08:00")).await.expect("put");
    assert_eq!(store.wholesale(p(1), Some(Centre::Perth), d23, d23).await.expect("read").len(), 3);
}

#[tokio::test]
async fn the_store_keeps_wholesale_prices_on_sqlite() {
    let dir = tempfile::tempdir().expect("dir");
    store_round_trip(sqlite_store(&dir).await).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn the_store_keeps_wholesale_prices_on_postgres() {
    store_round_trip(postgres_store(&postgres_url()).await).await;
}

/// The simulated origin at a Perth time, its API client, and a store.
async fn live(
    at: jiff::civil::DateTime,
) -> (wafuel_sim::SimHandle, Arc<wafuel_domain::time::ManualClock>, WholesaleClient) {
    let (sim, clock) = origin_at(at, Default::default()).await;
    let client =
        WholesaleClient::new(sim.wholesale_url().parse().expect("url"), std::time::Duration::from_secs(2))
            .expect("client");
    (sim, clock, client)
}

#[tokio::test]
async fn the_live_job_keeps_todays_price_and_tomorrows_only_after_half_past_two() {
    let (d22, d23) = (date(2026, 4, 22), date(2026, 4, 23));
    let dir = tempfile::tempdir().expect("dir");
    let store = sqlite_store(&dir).await;
    // 22 April, 16:15 AWST: today's and tomorrow's prices of all six Perth terminals.
    let (_sim, clock, client) = live(d22.at(16, 15, 0, 0)).await;
    let shared: wafuel_domain::time::SharedClock = clock.clone();
    let w = wafuel_service::jobs::wholesale::wholesale_pass(&store, &client, &shared).await.expect("stored");
    assert!(w.written > 0);
    for day in [d22, d23] {
        let perth = store.wholesale(p(1), Some(Centre::Perth), day, day).await.expect("read");
        let names: Vec<&str> = perth.iter().map(|t| t.terminal.as_str()).collect();
        assert_eq!(
            names,
            [
                "Ampol Kwinana",
                "BP Kewdale",
                "BP Kwinana",
                "Caltex Kwinana",
                "Mobil Kwinana",
                "Viva Energy Kwinana"
            ],
            "{day}"
        );
        for t in &perth {
            assert_eq!(
                t.price,
                wafuel_sim::wholesale::price(&t.terminal, Centre::Perth, "ULP", day),
                "{day} {t:?}"
            );
        }
    }
    // Every centre, every fuel FuelWatch lists: 44 terminal·fuel pairs for tomorrow.
    let mut pairs = 0;
    for product in [1, 2, 4] {
        pairs += store.wholesale(p(product), None, d23, d23).await.expect("read").len();
    }
    assert_eq!(pairs, 44);

    // 14:00 on a fresh store: today's price, and nothing for tomorrow (the placeholder).
    let dir = tempfile::tempdir().expect("dir");
    let store = sqlite_store(&dir).await;
    let (_sim, clock, client) = live(d22.at(14, 0, 0, 0)).await;
    let shared: wafuel_domain::time::SharedClock = clock.clone();
    wafuel_service::jobs::wholesale::wholesale_pass(&store, &client, &shared).await.expect("stored");
    assert_eq!(store.wholesale(p(1), Some(Centre::Perth), d22, d22).await.expect("read").len(), 6);
    assert!(
        store.wholesale(p(1), None, d23, d23).await.expect("read").is_empty(),
        "no tomorrow before 14:30"
    );
    // Yesterday from pricePrevious, as it was missing.
    assert_eq!(
        store
            .wholesale(p(1), Some(Centre::Perth), date(2026, 4, 21), date(2026, 4, 21))
            .await
            .expect("read")
            .len(),
        6
    );
    assert_eq!(store.last_event_id().await.expect("events"), 0, "today's price is no news");
}

#[tokio::test]
async fn a_hostile_terminal_api_stores_nothing_and_keeps_what_was_stored() {
    let dir = tempfile::tempdir().expect("dir");
    let store = sqlite_store(&dir).await;
    let (sim, clock, client) = live(date(2026, 4, 22).at(10, 0, 0, 0)).await;
    let shared: wafuel_domain::time::SharedClock = clock.clone();
    wafuel_service::jobs::wholesale::wholesale_pass(&store, &client, &shared)
        .await
        .expect("a good read first");
    let kept = store.wholesale(p(1), None, date(2026, 4, 20), date(2026, 4, 24)).await.expect("read");
    let version = store.wholesale_version().await.expect("version");
    // The next day, every kind of bad answer.
    clock.set(wafuel_domain::time::perth_instant(date(2026, 4, 23).at(10, 0, 0, 0)));
    let cases: Vec<(WholesaleFaults, &str)> = vec![
        (WholesaleFaults { refuse_token: true, ..Default::default() }, "refused the token: HTTP 403"),
        (WholesaleFaults { status: Some(503), ..Default::default() }, "unavailable"),
        (WholesaleFaults { status: Some(401), ..Default::default() }, "refused the token: HTTP 401"),
        (WholesaleFaults { delay_ms: Some(3_000), ..Default::default() }, "timed out"),
        (WholesaleFaults { malformed: true, ..Default::default() }, "malformed"),
        (WholesaleFaults { price: Some(0.0), ..Default::default() }, "not 10 < p <= 1000"),
        (WholesaleFaults { price: Some(1_200.0), ..Default::default() }, "not 10 < p <= 1000"),
        (WholesaleFaults { price: Some(1_000.004), ..Default::default() }, "not 10 < p <= 1000"),
        // A centre, a terminal or a product given twice refuses the read whole (a second Perth
        // answer's 499.00 once replaced a real price).
        (WholesaleFaults { centre_twice: true, ..Default::default() }, "Perth is listed twice"),
        (WholesaleFaults { terminal_twice: true, ..Default::default() }, "is listed twice in"),
        (WholesaleFaults { product_twice: true, ..Default::default() }, "twice"),
    ];
    for (faults, said) in cases {
        sim.state.set_wholesale_faults(faults.clone());
        let err = wafuel_service::jobs::wholesale::wholesale_pass(&store, &client, &shared)
            .await
            .expect_err("refused");
        assert!(err.to_string().contains(said), "{faults:?}: {err}");
        let now = store.wholesale(p(1), None, date(2026, 4, 20), date(2026, 4, 24)).await.expect("read");
        assert_eq!(now, kept, "{faults:?} changed what was stored");
        assert_eq!(store.wholesale_version().await.expect("version"), version);
    }
    // The token check is real: a client without it is refused.
    let bare = http().get(format!("{}terminalgate/centres", sim.wholesale_url())).send().await.expect("sent");
    assert_eq!(bare.status(), 401);
    assert!(matches!(
        WholesaleClient::new(
            "http://127.0.0.1:9/api/".parse().expect("url"),
            std::time::Duration::from_secs(1)
        )
        .expect("client")
        .read()
        .await,
        Err(WholesaleError::Unavailable(_))
    ));
}

/// Yearly files in a folder, written by hand in FuelWatch's known columns.
fn yearly_files(dir: &std::path::Path) {
    std::fs::write(
        dir.join("FuelWatchWholesale-2025.csv"),
        "PUBLISH_DATE,TERMINAL_GATE,PRODUCT,PRODUCT_PRICE\r\n\
         30/12/2025,Perth terminals mean,ULP,158.3\r\n\
         30/12/2025,Perth terminals mean,Diesel,160.9\r\n\
         31/12/2025,Perth terminals mean,ULP,158.8\r\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("FuelWatchWholesale-2026.csv"),
        "PRODUCT,PRODUCT_PRICE,PUBLISH_DATE,ADDRESS,\n\
         ULP,149.2,01/01/2026,x,\n\
         ULP,abc,02/01/2026,x,\n\
         ULP,155.1,30/02/2026,x,\n\
         ULP,0,03/01/2026,x,\n\
         PULP,168.25,01/01/2026,x,\n\
         LPG,90,01/01/2026,x,\n",
    )
    .expect("write");
}

#[tokio::test]
async fn yearly_files_import_by_header_name_report_bad_rows_and_change_nothing_twice() {
    let dir = tempfile::tempdir().expect("dir");
    let files = tempfile::tempdir().expect("files");
    yearly_files(files.path());
    let store = sqlite_store(&dir).await;
    let mut importer = wafuel_archive::wholesale::WholesaleImporter::new(store.clone());
    importer.import_paths(&[files.path().to_path_buf()], &|_, _| {}).await.expect("imports");
    let s = importer.summary.clone();
    assert_eq!((s.files, s.write.written, s.bad_rows, s.other_products), (2, 5, 3, 1), "{s:?}");
    let line = s.line();
    assert!(line.contains("3 rows could not be read"), "{line}");
    assert!(line.contains("30/02/2026"), "{line}");
    let ulp = store
        .wholesale(p(1), Some(Centre::Perth), date(2025, 12, 30), date(2026, 1, 31))
        .await
        .expect("read");
    let got: Vec<(Date, &str, i64)> = ulp.iter().map(|t| (t.date, t.terminal.as_str(), t.price)).collect();
    assert_eq!(
        got,
        vec![
            (date(2025, 12, 30), "Perth terminals mean", 15_830),
            (date(2025, 12, 31), "Perth terminals mean", 15_880),
            (date(2026, 1, 1), "", 14_920),
        ]
    );
    // Again: nothing new.
    let mut again = wafuel_archive::wholesale::WholesaleImporter::new(store.clone());
    again.import_paths(&[files.path().to_path_buf()], &|_, _| {}).await.expect("imports");
    assert_eq!(
        (again.summary.write.written, again.summary.write.replaced, again.summary.write.unchanged),
        (0, 0, 5)
    );
    // A file without the columns is refused whole, naming what it has; nothing of it stored.
    let bad = files.path().join("FuelWatchWholesale-2024.csv");
    std::fs::write(&bad, "DATE,TERMINAL_GATE,FUEL,PRICE\n01/06/2024,BP Kwinana,ULP,170.0\n").expect("write");
    let version = store.wholesale_version().await.expect("version");
    let mut refused = wafuel_archive::wholesale::WholesaleImporter::new(store.clone());
    let err = refused.import_paths(&[bad], &|_, _| {}).await.expect_err("refused");
    let said = err.to_string();
    assert!(
        said.contains("PUBLISH_DATE, PRODUCT, PRODUCT_PRICE")
            && said.contains("DATE, TERMINAL_GATE, FUEL, PRICE"),
        "{said}"
    );
    assert_eq!(store.wholesale_version().await.expect("version"), version);
}

#[tokio::test]
async fn listed_years_are_downloaded_once_and_the_growing_one_again_when_it_changed() {
    let dir = tempfile::tempdir().expect("dir");
    let store = sqlite_store(&dir).await;
    let (sim, clock) = origin_at(date(2026, 4, 22).at(10, 0, 0, 0), Default::default()).await;
    let list: url::Url = sim.wholesale_list_url().parse().expect("url");
    let mut first = wafuel_archive::wholesale::WholesaleImporter::new(store.clone()).with_first_year(2025);
    first.import_listed(&list, Default::default(), &|_, _| {}).await.expect("imports");
    // 2025: 365 days, 2026 to 22 April: 112 days; 44 terminal·fuel pairs a day.
    assert_eq!(first.summary.write.written, (365 + 112) * 44, "{:?}", first.summary);
    assert_eq!(first.summary.bad_rows, 0);
    let mut second = wafuel_archive::wholesale::WholesaleImporter::new(store.clone()).with_first_year(2025);
    second.import_listed(&list, Default::default(), &|_, _| {}).await.expect("imports");
    assert_eq!((second.summary.files, second.summary.skipped), (0, 2), "both unchanged");
    // A day later the current year grew: only it is fetched again.
    clock.set(wafuel_domain::time::perth_instant(date(2026, 4, 23).at(10, 0, 0, 0)));
    let mut third = wafuel_archive::wholesale::WholesaleImporter::new(store.clone()).with_first_year(2025);
    third.import_listed(&list, Default::default(), &|_, _| {}).await.expect("imports");
    assert_eq!((third.summary.files, third.summary.skipped, third.summary.write.written), (1, 1, 44));
}

/// An app on the simulated market: `days` of retail history before `today` and the live
/// wholesale prices read at the app's clock, plus the days before from the yearly file.
async fn market_app(today: Date, days: i32) -> TestApp {
    let app = TestApp::at(today.at(16, 0, 0, 0)).await;
    let store = sqlite_store(&app.dir).await;
    let history: Arc<dyn wafuel_store::history::HistoryStore> = store.clone();
    let state = app.sim.state.clone();
    let w =
        wafuel_service::jobs::seed::seed_history(&history, today, days, |p, d| state.past_feed(p.get(), d))
            .await;
    assert!(w.written > 0);
    let mut importer = wafuel_archive::wholesale::WholesaleImporter::new(store).with_first_year(today.year());
    importer
        .import_listed(&app.sim.wholesale_list_url().parse().expect("url"), Default::default(), &|_, _| {})
        .await
        .expect("imports");
    app
}

#[tokio::test]
async fn the_wholesale_route_answers_each_day_with_its_terminals_and_margin() {
    let today = date(2026, 9, 29);
    let app = market_app(today, 30).await;
    let requests = app.source_requests();
    let r = app.get("/v1/wholesale?product=1&from=2026-09-01&to=2026-09-28").await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("content-type"), "application/vnd.api+json");
    let doc = r.json();
    let days = doc["data"].as_array().expect("days");
    assert_eq!(days.len(), 28);
    let stats = app.get("/v1/stats?product=1&from=2026-09-01&to=2026-09-28").await.json();
    for (day, row) in days.iter().zip(stats["data"]["attributes"]["days"].as_array().expect("rows")) {
        let a = &day["attributes"];
        let d: Date = a["date"].as_str().expect("date").parse().expect("date");
        assert_eq!(day["id"], format!("1:perth:{d}"));
        let terminals = a["terminals"].as_array().expect("terminals");
        assert_eq!(terminals.len(), 6);
        let expected: Vec<i64> = wafuel_sim::wholesale::TERMINALS
            .iter()
            .take(6)
            .map(|t| wafuel_sim::wholesale::price(t.1, Centre::Perth, "ULP", d))
            .collect();
        let mean = (expected.iter().sum::<i64>() as f64 / 6.0).round() / 100.0;
        assert_eq!(a["mean"].as_f64(), Some(mean), "{d}");
        assert_eq!(a["min"].as_f64(), expected.iter().min().map(|m| *m as f64 / 100.0), "{d}");
        // The margin: the median of the stations nearest Perth's terminals that day (worked
        // out here from the origin's own stations and prices) less the mean.
        let mut perth: Vec<i64> = app
            .sim
            .state
            .dataset()
            .stations
            .iter()
            .filter(|s| {
                let (lat, lon) = (s.latitude.parse().expect("lat"), s.longitude.parse().expect("lon"));
                Centre::nearest(lat, lon) == Centre::Perth
            })
            .filter_map(|s| s.price_text(1, d))
            .map(|t| (t.parse::<f64>().expect("price") * 10.0).round() as i64)
            .collect();
        perth.sort_unstable();
        let median =
            wafuel_domain::stats::DayFigures::of_sorted(&perth).expect("prices").median as f64 / 10.0;
        let mean_hundredths = (expected.iter().sum::<i64>() as f64 / 6.0).round() as i64;
        let margin = wafuel_domain::wholesale::margin(median, mean_hundredths);
        assert_eq!(a["margin"].as_f64(), Some(margin), "{d}");
        assert!(perth.len() < 900, "the far centres' stations are not Perth's ({})", perth.len());
        // /v1/stats: the same mean, and its margin is the day's median less it to 0.05 c/L.
        assert_eq!(row["date"], a["date"]);
        assert_eq!(row["wholesale"].as_f64(), Some(mean), "{d}");
        let statewide = row["median"].as_f64().expect("median") - mean;
        assert!((row["margin"].as_f64().expect("margin") - statewide).abs() <= 0.05 + 1e-9, "{row}");
    }
    assert_eq!(stats["data"]["attributes"]["wholesaleCentre"], "perth");
    // CSV: a row per terminal and day.
    let csv = app
        .call(
            "GET",
            "/v1/wholesale?product=4&centre=port-hedland&from=2026-09-27&to=2026-09-28",
            &[("accept", "text/csv")],
        )
        .await;
    assert_eq!(csv.status, 200);
    let text = String::from_utf8(csv.body.to_vec()).expect("utf-8");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("date,centre,product,terminal,price,mean,margin"));
    assert_eq!(lines.count(), 2 * 4, "four Port Hedland diesel terminals, two days: {text}");
    // Premium unleaded is its own terminals' price, never unleaded's.
    let pulp = app.get("/v1/wholesale?product=2&from=2026-09-28&to=2026-09-28").await.json();
    let pulp_mean = (wafuel_sim::wholesale::TERMINALS
        .iter()
        .take(6)
        .map(|t| wafuel_sim::wholesale::price(t.1, Centre::Perth, "PULP", date(2026, 9, 28)))
        .sum::<i64>() as f64
        / 6.0)
        .round()
        / 100.0;
    assert_eq!(pulp["data"][0]["attributes"]["mean"].as_f64(), Some(pulp_mean));
    assert_conditional_get(&app, "/v1/wholesale?product=2", &[]).await;
    // Weekly statistics: each week's mean terminal price.
    let weekly = app.get("/v1/stats?product=1&from=2026-09-07&to=2026-09-27&interval=week").await.json();
    for row in weekly["data"]["attributes"]["days"].as_array().expect("weeks") {
        assert!(row["wholesale"].as_f64().is_some() && row["margin"].as_f64().is_some(), "{row}");
    }
    // Products without a terminal gate price never show another's.
    for product in [5, 6, 10, 11] {
        let s = app.get(&format!("/v1/stats?product={product}&from=2026-09-20&to=2026-09-28")).await.json();
        assert_eq!(s["data"]["attributes"]["wholesaleCentre"], serde_json::Value::Null);
        for row in s["data"]["attributes"]["days"].as_array().expect("rows") {
            assert_eq!(
                (&row["wholesale"], &row["margin"]),
                (&serde_json::Value::Null, &serde_json::Value::Null)
            );
        }
        // The wholesale route answers them with no day and says why, in both media.
        let w = app.get(&format!("/v1/wholesale?product={product}&from=2026-09-01")).await;
        assert_eq!(w.status, 200, "{}", String::from_utf8_lossy(&w.body));
        let doc = w.json();
        assert_eq!(doc["data"], serde_json::json!([]), "product {product}: no other fuel's price");
        assert_eq!(doc["meta"]["product"], product);
        let note = doc["meta"]["note"].as_str().expect("meta.note says why");
        assert!(note.contains("1 Unleaded, 2 Premium 95 and 4 Diesel only"), "{note}");
        assert!(!note.contains("Premium 98"), "{note}");
        let csv =
            app.call("GET", &format!("/v1/wholesale?product={product}"), &[("accept", "text/csv")]).await;
        assert_eq!(csv.status, 200);
        assert_eq!(String::from_utf8_lossy(&csv.body).lines().count(), 1, "the header alone");
    }
    let ulp = app.get("/v1/wholesale?product=1").await.json();
    assert!(ulp["meta"].get("note").is_none(), "a fuel with a TGP carries no note");
    assert_eq!(app.source_requests(), requests, "the wholesale route never asks the feed");
}

#[tokio::test]
async fn bad_wholesale_queries_are_400_without_the_source() {
    let app = TestApp::new().await;
    let before = app.source_requests();
    for q in [
        "",
        "product=1,4",
        "product=3",
        "product=ulp",
        "product=1&centre=kwinana",
        "product=1&from=2025-13-01",
        "product=1&from=2026-09-10&to=2026-09-01",
        "product=1&to=2026-09-30",
        "product=1&interval=week",
        "prodcut=1",
    ] {
        let r = app.get(&format!("/v1/wholesale?{q}")).await;
        assert_eq!(r.status, 400, "{q}");
        assert_eq!(r.json()["errors"][0]["code"], "invalid_query", "{q}");
    }
    assert_eq!(app.source_requests(), before);
}

/// Two replicas over one store wake at the same minute: one reads FuelWatch, the other finds
/// the run's lease taken and reads nothing.
async fn one_replica_reads(a: Arc<dyn Store>, b: Arc<dyn Store>) {
    let (_sim, clock, client) = live(date(2026, 4, 22).at(16, 0, 0, 0)).await;
    let shared: wafuel_domain::time::SharedClock = clock.clone();
    let name = "wholesale:2026-04-22T16:00";
    let (first, second) = tokio::join!(
        wafuel_service::jobs::wholesale::leased_pass(&a, &client, &shared, (name, "replica-a")),
        wafuel_service::jobs::wholesale::leased_pass(&b, &client, &shared, (name, "replica-b")),
    );
    let ran: Vec<_> = [first, second].into_iter().flatten().collect();
    assert_eq!(ran.len(), 1, "exactly one replica read the terminal gate prices");
    assert!(ran[0].as_ref().is_ok_and(|w| w.written == 132), "{ran:?}");
    // The next run (another minute's lease) is anyone's; nothing new is written.
    let next = wafuel_service::jobs::wholesale::leased_pass(
        &b,
        &client,
        &shared,
        ("wholesale:2026-04-22T17:00", "replica-b"),
    )
    .await
    .expect("the next run's lease is free");
    assert_eq!(next.expect("read").written, 0);
}

#[tokio::test]
async fn one_replica_reads_the_terminal_gate_prices_on_sqlite() {
    let dir = tempfile::tempdir().expect("dir");
    one_replica_reads(sqlite_store(&dir).await, sqlite_store(&dir).await).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn one_replica_reads_the_terminal_gate_prices_on_postgres() {
    let (a, b) = postgres_replica_stores(&postgres_url()).await;
    one_replica_reads(a, b).await;
}

#[tokio::test]
async fn the_forecast_says_it_read_the_terminal_gate_price() {
    let today = date(2026, 9, 29);
    let app = market_app(today, 100).await;
    let requests = app.source_requests();
    let read = |r: &TestResponse| {
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        r.json()["data"]["attributes"]["inputs"].clone()
    };
    let both = serde_json::json!(["retail", "wholesale"]);
    assert_eq!(read(&app.get("/v1/forecast?product=1&asOf=2026-09-20").await), both);
    // 98 RON has no terminal gate price of its own: PULP's is read.
    assert_eq!(read(&app.get("/v1/forecast?product=6&asOf=2026-09-20").await), both);
    // LPG has none.
    assert_eq!(read(&app.get("/v1/forecast?product=5&asOf=2026-09-20").await), serde_json::json!(["retail"]));
    assert_eq!(app.source_requests(), requests);
    // The same history without the terminal prices: the forecast reads the retail only.
    let plain = TestApp::at(today.at(16, 0, 0, 0)).await;
    let history: Arc<dyn wafuel_store::history::HistoryStore> = sqlite_store(&plain.dir).await;
    let state = plain.sim.state.clone();
    wafuel_service::jobs::seed::seed_history(&history, today, 100, |p, d| state.past_feed(p.get(), d)).await;
    assert_eq!(
        read(&plain.get("/v1/forecast?product=1&asOf=2026-09-20").await),
        serde_json::json!(["retail"])
    );
}

/// After 14:30 tomorrow's retail prices and tomorrow's terminal gate price are both published;
/// a forecast from tomorrow reads both, so a move in tomorrow's TGP moves the days after it (a
/// quarter of the week's change by day +7, a seventh of that a day), for the market and for a
/// station that answers it (one that does not holds its price and reads no TGP). A past
/// `asOf` reads neither.
#[tokio::test]
async fn after_half_past_two_the_forecast_reads_tomorrows_terminal_gate_price() {
    let today = date(2026, 9, 29);
    let tomorrow = date(2026, 9, 30);
    let app = market_app(today, 100).await; // 16:00
    let report = wafuel_service::jobs::warm::warm_pass(app.server.state.catalog.prices()).await;
    assert!(report.refreshed > 0, "{report:?}");
    let store = sqlite_store(&app.dir).await;
    // Tomorrow's TGP at every Perth terminal of today's, `up` cents above today's.
    let todays = store.wholesale(p(1), Some(Centre::Perth), today, today).await.expect("read");
    assert!(!todays.is_empty());
    let put_tomorrow = |up: i64| {
        let next: Vec<TerminalPrice> = todays
            .iter()
            .map(|t| TerminalPrice { date: tomorrow, price: t.price + up, ..t.clone() })
            .collect();
        let store = store.clone();
        async move {
            store
                .put_wholesale(&next, &[], Some(tomorrow), at("2026-09-29T14:31:00+08:00"))
                .await
                .expect("put");
        }
    };
    // The market's forecast and the first stations' own.
    let listed = app.get("/v1/stations?product=1").await.json();
    let stations = listed["data"].as_array().expect("stations").iter().take(8);
    let paths: Vec<String> = std::iter::once("/v1/forecast?product=1".to_string())
        .chain(stations.map(|s| format!("/v1/stations/{}/forecast?product=1", s["id"].as_str().expect("id"))))
        .collect();
    let answers = || async {
        let mut out = Vec::new();
        for path in &paths {
            let r = app.get(path).await;
            assert_eq!(r.status, 200, "{path}: {}", String::from_utf8_lossy(&r.body));
            let a = r.json()["data"]["attributes"].clone();
            assert_eq!(a["basis"], "2026-09-30", "{path}: tomorrow is known");
            let medians: Vec<f64> = a["days"]
                .as_array()
                .expect("days")
                .iter()
                .map(|d| d["median"].as_f64().expect("median"))
                .collect();
            out.push((a["inputs"] == serde_json::json!(["retail", "wholesale"]), medians));
        }
        out
    };
    let past = "/v1/forecast?product=1&asOf=2026-09-28";
    put_tomorrow(0).await;
    let flat = answers().await;
    let past_flat = app.get(past).await.body;
    put_tomorrow(3_000).await; // 30 c/L
    // A stored document is rebuilt within 15 minutes of a change in the store.
    app.clock.advance(std::time::Duration::from_secs(16 * 60));
    let risen = answers().await;
    assert!(flat[0].0, "the market's forecast reads the TGP");
    assert!(flat[1..].iter().any(|(read, _)| *read), "no station answering the market among {paths:?}");
    for ((path, (read, a)), (_, b)) in paths.iter().zip(&flat).zip(&risen) {
        if !read {
            assert_eq!(a, b, "{path}: a station that does not answer the market holds its price");
            continue;
        }
        // Tomorrow itself is the published price, whatever the TGP.
        assert_eq!(a[0], b[0], "{path}");
        for (k, (a, b)) in a.iter().zip(b).enumerate().skip(1) {
            let added = 0.25 * 30.0 * k as f64 / 7.0;
            assert!((b - a - added).abs() <= 0.11, "{path} day {}: {a} → {b}, expected +{added:.2}", k + 1);
        }
    }
    assert_eq!(app.get(past).await.body, past_flat, "a past asOf reads no later TGP");
}

/// A terminal named like a formula is kept as named, and every CSV route writes it as text a
/// spreadsheet will not run (a leading `'`, as OWASP advises); refused rows change nothing.
#[tokio::test]
async fn a_formula_in_a_file_is_text_in_every_csv() {
    let app = TestApp::at(date(2026, 9, 29).at(10, 0, 0, 0)).await;
    let store = sqlite_store(&app.dir).await;
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("FuelWatchWholesale-2026.csv");
    std::fs::write(
        &file,
        "PUBLISH_DATE,TERMINAL_GATE,PRODUCT,PRODUCT_PRICE\n\
         28/09/2026,=HYPERLINK(\"http://x\"),ULP,150.00\n\
         28/09/2026,@SUM(A1),ULP,1000.001\n\
         01/01/9999,BP Kwinana,ULP,150.00\n",
    )
    .expect("write");
    let mut importer = wafuel_archive::wholesale::WholesaleImporter::new(store);
    importer.import_paths(&[file], &|_, _| {}).await.expect("imports");
    assert_eq!(
        (importer.summary.write.written, importer.summary.bad_rows),
        (1, 2),
        "{}",
        importer.summary.line()
    );
    app.clock.advance(std::time::Duration::from_secs(2));
    let csv = app
        .call("GET", "/v1/wholesale?product=1&from=2026-09-28&to=2026-09-28", &[("accept", "text/csv")])
        .await;
    let text = String::from_utf8_lossy(&csv.body).to_string();
    assert!(text.contains("'=HYPERLINK"), "{text}");
    assert!(!text.contains(",=HYPERLINK"), "{text}");
    let status = app.get("/v1/status").await.json();
    assert_ne!(status["data"]["attributes"]["wholesale"]["newestDay"], "9999-01-01");
}
