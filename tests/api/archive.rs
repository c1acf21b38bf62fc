//! `wafuel import-history` over a small archive, on SQLite and PostgreSQL: quirks of real
//! exports, matching to live stations, archive stations, idempotence, conflicts with live
//! prices, a bad header refused whole, and what history and statistics then answer.

use std::sync::Arc;

use jiff::civil::date;
use wafuel_archive::ImportError;
use wafuel_archive::import::{Importer, Plan, import_months, import_paths};
use wafuel_domain::key::sha256_hex;
use wafuel_store::Store;

use crate::support::*;

const HEADER: &str = "PUBLISH_DATE,TRADING_NAME,BRAND_DESCRIPTION,PRODUCT_DESCRIPTION,PRODUCT_PRICE,ADDRESS,LOCATION,POSTCODE,AREA_DESCRIPTION,REGION_DESCRIPTION\r\n";

fn csv_field(text: &str) -> String {
    if text.contains(',') { format!("\"{text}\"") } else { text.to_string() }
}

async fn small_archive(store: Arc<dyn Store>) {
    let (sim, clock) = origin_at(fixture_morning(), Default::default()).await;
    let state = app_state(&sim, &clock, store.clone(), None);
    // The live stations (and today's prices) first, as the command does for an empty history.
    let warm = wafuel_service::jobs::warm::warm_pass(state.catalog.prices()).await;
    assert!(warm.failed.is_empty(), "{:?}", warm.failed);
    let today = date(2026, 9, 29);
    let live_station = state
        .catalog
        .selection(
            &wafuel_query::parse_selection(wafuel_query::Dialect::V1, "product=1", state.catalog.now())
                .expect("q"),
        )
        .await
        .expect("today's prices")
        .data
        .quotes()
        .next()
        .map(|q| q.station.clone())
        .expect("a live station");
    let live_id = live_station.id.clone();
    let live_today =
        state.catalog.history().station(&live_id, p(1), today, today).await.expect("history")[0].1;

    // The live station written as the archive writes it: capitals, padded, other spacing.
    let address = format!("  {}  ", live_station.street.to_uppercase().replace(' ', "  "));
    let suburb = live_station.suburb.to_uppercase();
    let live_row = |day: &str, product: &str, price: &str| {
        format!(
            "{day},{} ,BP,{product},{price},{},{suburb},6000,North of River,Metro\r\n",
            live_station.trading_name,
            csv_field(&address)
        )
    };
    let closed_row = |day: &str, price: &str| {
        format!(
            "{day},Gull Closed,Gull,ULP,{price},\"1 Closed Rd, Cnr Elm St\",MADDINGTON,6109,East/Hills,Metro\r\n"
        )
    };
    let dir = tempfile::tempdir().expect("dir");
    let august = dir.path().join("FuelWatchRetail-08-2026.csv");
    let mut text = format!("\u{feff}{HEADER}");
    for (day, price) in [("01/08/2026", "180.10"), ("02/08/2026", "180.20"), ("03/08/2026", "180.30")] {
        text.push_str(&live_row(day, "ULP", price));
        text.push_str(&closed_row(day, "175.00"));
    }
    text.push_str(
        "01/08/2026,Depot,Independent,KEROSENE,150.00,1 Depot Rd,WELSHPOOL,6106,South of River,Metro\r\n",
    );
    text.push_str(
        "02/08/2026,Far Away,Puma,Diesel,210.00,2 Long Rd,SOUTHERN CROSS,6426,Southern Cross,Wheatbelt\r\n\r\n\r\n",
    );
    std::fs::write(&august, text).expect("write");
    // September: the live day, with a price that differs from the live feed's (a conflict).
    let september = dir.path().join("FuelWatchRetail-09-2026.csv.gz");
    let conflicting = format!("{:.2}", (live_today as f64 + 50.0) / 10.0);
    let body = format!("{HEADER}{}", live_row("29/09/2026", "ULP", &conflicting));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, body.as_bytes()).expect("gzip");
    std::fs::write(&september, gz.finish().expect("gzip")).expect("write");

    let quiet = |_: &str, _: &wafuel_store::archive::ImportWrite| {};
    let mut importer = Importer::new(store.clone()).await.expect("importer");
    assert!(importer.knows_live_stations());
    import_paths(&mut importer, &[august.clone(), september.clone()], &quiet).await.expect("import");
    let s = importer.summary.clone();
    assert_eq!((s.files, s.read.rows), (2, 9), "{s:?}");
    assert_eq!(s.written, 3 + 3 + 1, "live station's 3 days, the closed station's 3, the far one");
    assert_eq!((s.conflicts, s.unchanged), (1, 0), "the live price wins");
    assert_eq!((s.matched_stations, s.archive_stations), (1, 2));
    assert_eq!(s.read.skipped.get("not a fuel served here \"KEROSENE\""), Some(&1));
    assert_eq!(s.read.unknown_area, 1, "Southern Cross (no region code): kept, region unknown");
    assert!(s.line().contains("1 conflicts"), "{}", s.line());

    let history = |id: String, product: u8| {
        let store = store.clone();
        async move {
            store
                .station_history(&id, p(product), date(2026, 8, 1), today)
                .await
                .expect("read")
                .expect("known")
        }
    };
    assert_eq!(
        history(live_station.id.to_string(), 1).await,
        vec![
            (date(2026, 8, 1), 1801),
            (date(2026, 8, 2), 1802),
            (date(2026, 8, 3), 1803),
            (today, live_today)
        ]
    );
    let closed = sha256_hex(b"archive|1 closed rd, cnr elm st|maddington");
    assert_eq!(history(closed.clone(), 1).await.len(), 3);

    // Twice: nothing changes.
    let version = store.history_version().await.expect("version");
    let mut again = Importer::new(store.clone()).await.expect("importer");
    import_paths(&mut again, &[august.clone(), september], &quiet).await.expect("import again");
    assert_eq!((again.summary.written, again.summary.unchanged, again.summary.conflicts), (0, 7, 1));
    assert_eq!(store.history_version().await.expect("version"), version, "no write at all");

    // A bad header refuses its file whole, before anything of any file is written.
    let bad = dir.path().join("FuelWatchRetail-10-2026.csv");
    std::fs::write(&bad, "PUBLISH_DATE,TRADING_NAME,BRAND_DESCRIPTION,PRODUCT_DESCRIPTION,ADDRESS,LOCATION\r\n01/10/2026,a,BP,ULP,1 A St,PERTH\r\n").expect("write");
    let fresh = dir.path().join("FuelWatchRetail-07-2026.csv");
    std::fs::write(&fresh, format!("{HEADER}{}", closed_row("01/07/2026", "170.00"))).expect("write");
    let stations_before = store.known_stations().await.expect("stations").len();
    let mut refused = Importer::new(store.clone()).await.expect("importer");
    let err = import_paths(&mut refused, &[fresh, bad.clone()], &quiet).await.expect_err("refused");
    assert!(matches!(err, ImportError::Archive(_)), "{err}");
    assert!(
        err.to_string().contains("FuelWatchRetail-10-2026.csv") && err.to_string().contains("PRODUCT_PRICE"),
        "{err}"
    );
    assert_eq!(store.history_version().await.expect("version"), version, "nothing written");
    assert_eq!(store.known_stations().await.expect("stations").len(), stations_before);

    // Over HTTP: the archive station has a history but is no station of today.
    clock.advance(std::time::Duration::from_secs(2));
    let app = TestApp::start(app_config(&sim, &clock, store.clone(), None), sim, clock, dir).await;
    let r = app.get(&format!("/v1/stations/{closed}/history?product=1&from=2026-08-01")).await;
    assert_eq!(r.status, 200);
    let points = r.json()["data"]["attributes"]["points"].clone();
    assert_eq!(points[0], serde_json::json!({"date": "2026-08-01", "price": 175.0}));
    assert_eq!(app.get(&format!("/v1/stations/{closed}")).await.status, 404);
    let stats = app.get("/v1/stats?product=1&from=2026-08-01&to=2026-08-03").await;
    assert_eq!(stats.status, 200);
    let days = stats.json()["data"]["attributes"]["days"].clone();
    assert_eq!(days.as_array().map(Vec::len), Some(3));
    assert_eq!(days[0]["stations"], 2, "the live station and the closed one");
    assert_eq!(days[0]["min"], 175.0);

    // Months over the whole range: August folds three archive days, September the live day.
    let monthly = app.get("/v1/stats?product=1&from=2026-08-01&to=2026-09-29&interval=month").await;
    assert_eq!(monthly.status, 200);
    let doc = monthly.json();
    assert_eq!(doc["data"]["attributes"]["interval"], "month");
    let rows = doc["data"]["attributes"]["days"].as_array().cloned().unwrap_or_default();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!((rows[0]["date"].as_str(), rows[0]["stations"].as_u64()), (Some("2026-08-01"), Some(2)));
    assert_eq!((rows[0]["min"].as_f64(), rows[0]["max"].as_f64()), (Some(175.0), Some(180.3)));
    assert_eq!(rows[1]["date"], "2026-09-01");
    assert!(rows[1]["stations"].as_u64().unwrap_or(0) > 100, "every live station of the 29th");
    // A region filter counts the region an archive row named for a station.
    let east = app.get("/v1/stats?product=1&from=2026-08-01&to=2026-08-01&region=27").await.json();
    assert_eq!(east["data"]["attributes"]["days"][0]["min"], 175.0, "the closed station is East/Hills");
    let north = app.get("/v1/stats?product=1&from=2026-08-01&to=2026-08-01&region=25").await.json();
    let north_day = &north["data"]["attributes"]["days"][0];
    assert_eq!((north_day["stations"].as_u64(), north_day["min"].as_f64()), (Some(1), Some(180.1)));
}

#[tokio::test]
async fn a_small_archive_on_sqlite() {
    let dir = tempfile::tempdir().expect("dir");
    small_archive(sqlite_store(&dir).await).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn a_small_archive_on_postgres() {
    let url = postgres_url();
    small_archive(postgres_store(&url).await).await;
}

/// Downloads from the simulated archive by guessed names: months it has (the current one as
/// far as today), a month it does not (404, noted), and a re-run that skips what was imported.
#[tokio::test]
async fn months_download_from_the_simulated_archive() {
    let (sim, clock) = origin_at(fixture_morning(), Default::default()).await;
    let dir = tempfile::tempdir().expect("dir");
    let store = sqlite_store(&dir).await;
    let state = app_state(&sim, &clock, store.clone(), None);
    let base: url::Url = sim.archive_url().parse().expect("url");
    let quiet = |_: &str, _: &wafuel_store::archive::ImportWrite| {};
    let months = [(2026, 9), (2026, 10)];
    // An empty history: the importer learns today's stations from the source first.
    let mut importer = Importer::new(store.clone()).await.expect("importer");
    assert!(!importer.knows_live_stations());
    let warmed = wafuel_service::jobs::warm::warm_pass(state.catalog.prices()).await;
    assert!(warmed.failed.is_empty(), "{warmed:?}");
    importer.relearn_stations().await.expect("learn");
    assert!(importer.knows_live_stations());
    import_months(&mut importer, &base, &months, Default::default(), &quiet).await.expect("import");
    let s = importer.summary.clone();
    assert_eq!(s.files, 1, "September, as far as today; October is not there yet");
    assert_eq!(s.missing, vec!["2026-10".to_string()]);
    assert!(s.written > 28 * 900, "{s:?}");
    // Archive and feed agree everywhere, where two live stations share an address too: the
    // archive's rows of that address go to each by its trading name.
    assert!(shared_addresses(&store).await, "the simulated state has a shared address");
    assert_eq!(s.conflicts, 0, "{}", s.line());
    assert!(s.matched_stations > 900, "live stations matched by address: {s:?}");
    assert_eq!(
        s.archive_stations, 0,
        "every station matched (the depot sells only what we do not map); {s:?}"
    );
    let mut again = Importer::new(store.clone()).await.expect("importer");
    import_months(&mut again, &base, &months, Default::default(), &quiet).await.expect("again");
    assert_eq!((again.summary.files, again.summary.already_imported, again.summary.written), (0, 1, 0));

    // Any failure but a 404 stops the import, naming the month.
    let closed: url::Url = "http://127.0.0.1:1/historical-reports/".parse().expect("url");
    let mut failing = Importer::new(store.clone()).await.expect("importer");
    let err = import_months(&mut failing, &closed, &[(2026, 7)], Default::default(), &quiet)
        .await
        .expect_err("unreachable archive");
    assert!(matches!(err, ImportError::Download { .. }), "{err}");
    assert!(err.to_string().starts_with("FuelWatchRetail-07-2026.csv: "), "{err}");
}

/// Whether two live stations of the store share a normalised address and suburb.
async fn shared_addresses(store: &Arc<dyn Store>) -> bool {
    let mut seen = std::collections::HashSet::new();
    store.known_stations().await.expect("stations").iter().filter(|s| !s.archive).any(|s| {
        let key = (wafuel_domain::key::fold_text(&s.street), wafuel_domain::key::fold_text(&s.suburb));
        !seen.insert(key)
    })
}

/// FuelWatch's own list decides what is downloaded: the months of the range it lists (the
/// current one included), each once; when the current month has grown (its `fileDate` and
/// `bytes` changed) it is imported again, adding only the new days. Without the list, names
/// are guessed and the summary says so.
#[tokio::test]
async fn a_grown_current_month_is_imported_again_from_the_list() {
    let (sim, clock) = origin_at(fixture_morning(), Default::default()).await;
    let dir = tempfile::tempdir().expect("dir");
    let store = sqlite_store(&dir).await;
    let list_url: url::Url = sim.archive_list_url().parse().expect("url");
    let base: url::Url = sim.archive_url().parse().expect("url");
    let quiet = |_: &str, _: &wafuel_store::archive::ImportWrite| {};
    let today = |clock: &wafuel_domain::time::ManualClock| {
        use wafuel_domain::time::Clock;
        wafuel_domain::time::perth_now(clock.now()).date()
    };
    let range = (Some((2026, 8)), None);
    let plan = Plan::make(&list_url, &base, range, today(&clock), Default::default()).await;
    assert!(matches!(plan, Plan::Listed { .. }), "{plan:?}");
    assert_eq!(plan.len(), 2, "August and September (to the current month by default)");
    let mut first = Importer::new(store.clone()).await.expect("importer");
    plan.run(&mut first, Default::default(), &quiet).await.expect("import");
    assert_eq!((first.summary.files, first.summary.already_imported), (2, 0));
    let stored = first.summary.written;
    let imported = store.imported_months().await.expect("months");
    let september = imported.get(&(2026, 9)).expect("recorded");
    assert_eq!(september.file_date.as_deref(), Some("2026-09-29T00:00:00+08:00"));
    assert!(september.bytes.is_some_and(|b| b > 0));

    // The same day: nothing changed, nothing is read.
    let plan = Plan::make(&list_url, &base, range, today(&clock), Default::default()).await;
    let mut same = Importer::new(store.clone()).await.expect("importer");
    plan.run(&mut same, Default::default(), &quiet).await.expect("again");
    assert_eq!((same.summary.files, same.summary.already_imported, same.summary.written), (0, 2, 0));

    // Tomorrow the current month holds one more day: it alone is read again.
    clock.advance(std::time::Duration::from_secs(24 * 3600));
    let plan = Plan::make(&list_url, &base, range, today(&clock), Default::default()).await;
    let mut grown = Importer::new(store.clone()).await.expect("importer");
    plan.run(&mut grown, Default::default(), &quiet).await.expect("grown");
    let g = grown.summary.clone();
    assert_eq!((g.files, g.already_imported), (1, 1), "{g:?}");
    // The first import stored 60 days (31 of August, 29 of September).
    assert!(g.written > stored / 120 && g.written < stored / 30, "one new day's prices: {g:?}");
    assert!(g.unchanged > stored / 3, "September's earlier days were stored already: {g:?}");
    assert_eq!(g.conflicts, 0);
    let total = store.imported_months().await.expect("months");
    assert_eq!(
        total.get(&(2026, 9)).and_then(|m| m.file_date.clone()).as_deref(),
        Some("2026-09-30T00:00:00+08:00")
    );

    // No list: names are guessed (up to last month), and the summary line says so.
    let nowhere: url::Url = "http://127.0.0.1:1/api/report/monthly-retail-prices".parse().expect("url");
    let plan = Plan::make(&nowhere, &base, range, today(&clock), Default::default()).await;
    assert_eq!(plan, Plan::Guessed { base: base.clone(), months: vec![(2026, 8)] });
    let mut guessed = Importer::new(store.clone()).await.expect("importer");
    plan.run(&mut guessed, Default::default(), &quiet).await.expect("guessed");
    assert!(guessed.summary.line().ends_with("file names guessed (FuelWatch's file list could not be read)"));
    drop(sim);
}

/// Every `AREA_DESCRIPTION` text of FuelWatch's monthly retail files (2002–2021) with the
/// region code it names, as the files write them (FuelWatch, "Monthly retail prices").
const FUELWATCH_AREAS: [(&str, Option<u8>); 61] = [
    ("North of River", Some(25)),
    ("South of River", Some(26)),
    ("East/Hills", Some(27)),
    ("Mandurah", Some(18)),
    ("Murray", Some(23)),
    ("Waroona", Some(24)),
    ("Carnarvon", Some(4)),
    ("Exmouth", Some(40)),
    ("Boulder", Some(1)),
    ("Coolgardie", Some(34)),
    ("Esperance", Some(7)),
    ("Kalgoorlie", Some(8)),
    ("Kambalda", Some(43)),
    ("Munglinup", Some(61)),
    ("Norseman", Some(50)),
    ("Ravensthorpe", Some(51)),
    ("Albany", Some(15)),
    ("Denmark", Some(37)),
    ("Kojonup", Some(45)),
    ("Mt Barker", Some(48)),
    ("Broome", Some(2)),
    ("Derby", Some(38)),
    ("Fitzroy Cross", Some(41)),
    ("Kununurra", Some(10)),
    ("Dongara", Some(39)),
    ("Geraldton", Some(17)),
    ("Greenough", Some(21)),
    ("Meekatharra", Some(46)),
    ("Dampier", Some(6)),
    ("Newman", Some(49)),
    ("Sth Hedland", Some(14)),
    ("Augusta-M River", Some(28)),
    ("B-Town/G-Bushes", Some(30)),
    ("Bunbury", Some(16)),
    ("Busselton", Some(3)),
    ("Busselton-Shire", Some(29)),
    ("Capel", Some(19)),
    ("Collie", Some(5)),
    ("D-Brook/Bal-Up", Some(31)),
    ("Dardanup", Some(20)),
    ("Harvey", Some(22)),
    ("Manjimup", Some(32)),
    ("Cataby", Some(33)),
    ("Cunderdin", Some(35)),
    ("Dalwallinu", Some(36)),
    ("Jurien", Some(42)),
    ("Kellerberrin", Some(44)),
    ("Meckering", Some(58)),
    ("Moora", Some(47)),
    ("Narrogin", Some(11)),
    ("North Bannister", Some(60)),
    ("Northam", Some(12)),
    ("Northam-Shire", Some(62)),
    ("Regans Ford", Some(57)),
    ("Southern Cross", None),
    ("Tammin", Some(53)),
    ("Williams", Some(54)),
    ("Wubin", Some(55)),
    ("York", Some(56)),
    ("Karratha", Some(9)),
    ("Port Hedland", Some(13)),
];

/// One row per area text of FuelWatch's files, in the files' older form (trailing comma, LF),
/// imported into `store`: each archive station is stored in the region its area names, and an
/// area without a code (Southern Cross) keeps its row with the region unknown, counted.
async fn every_area_lands_in_its_region(store: Arc<dyn Store>) {
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("FuelWatchRetail-02-2021.csv");
    let mut text = format!("{},\n", HEADER.trim_end());
    for (i, (area, _)) in FUELWATCH_AREAS.iter().enumerate() {
        text.push_str(&format!(
            "01/02/2021,Station {i},BP,ULP,120.{i:02},{i} Area Rd,TOWN {i},6000,{area},Somewhere,\n"
        ));
    }
    std::fs::write(&file, text).expect("write");
    let quiet = |_: &str, _: &wafuel_store::archive::ImportWrite| {};
    let mut importer = Importer::new(store.clone()).await.expect("importer");
    import_paths(&mut importer, &[file], &quiet).await.expect("import");
    let s = importer.summary.clone();
    assert_eq!((s.read.rows, s.written), (61, 61), "{s:?}");
    assert_eq!(s.read.unknown_area, 1, "Southern Cross alone has no code");
    let stored: std::collections::HashMap<String, Option<u8>> = store
        .known_stations()
        .await
        .expect("stations")
        .into_iter()
        .map(|k| (k.station_id, k.region))
        .collect();
    for (i, (area, code)) in FUELWATCH_AREAS.iter().enumerate() {
        let id = sha256_hex(format!("archive|{i} area rd|town {i}").as_bytes());
        assert_eq!(stored.get(&id), Some(code), "{area}");
    }
}

#[tokio::test]
async fn every_area_lands_in_its_region_on_sqlite() {
    let dir = tempfile::tempdir().expect("dir");
    every_area_lands_in_its_region(sqlite_store(&dir).await).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn every_area_lands_in_its_region_on_postgres() {
    let url = postgres_url();
    every_area_lands_in_its_region(postgres_store(&url).await).await;
}

/// A month in FuelWatch's post-2025 form, written by hand from real 2026 texts: two
/// competitors at one address priced every day (7-Eleven Brabham and EG Ampol Brabham), a
/// site FuelWatch re-spells mid-month (`177 OConnor Rd` → `177 O'Connor Rd`, with one day
/// under both spellings at one price), and a rebrand (United → Astron at one address, never
/// both on one day). Every price must land in its own station's history.
async fn shared_addresses_keep_every_price(store: Arc<dyn Store>) {
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("FuelWatchRetail-05-2026.csv");
    let mut text = HEADER.to_string();
    let row = |day: u32, name: &str, brand: &str, price: f64, address: &str, suburb: &str| {
        format!(
            "{day:02}/05/2026,{name},{brand},ULP,{price:.1},{address},{suburb},6000,North of River,Metro\r\n"
        )
    };
    let mut expected: std::collections::BTreeMap<&str, Vec<(u32, f64)>> = Default::default();
    for day in 1..=6 {
        let seven = 180.0 + f64::from(day);
        let eg = 190.0 + f64::from(day);
        text.push_str(&row(day, "7-Eleven Brabham", "7-Eleven", seven, "3 Marvel Ent", "BRABHAM"));
        text.push_str(&row(day, "EG Ampol Brabham", "EG Ampol", eg, "3 Marvel Ent", "BRABHAM"));
        expected.entry("seven").or_default().push((day, seven));
        expected.entry("eg").or_default().push((day, eg));
        let atlas = 170.0 + f64::from(day);
        let spelling = if day <= 3 { "177 OConnor Rd" } else { "177 O'Connor Rd" };
        text.push_str(&row(day, "Atlas Fuel Stratton", "Atlas", atlas, spelling, "STRATTON"));
        if day == 3 {
            // The handover day: the same price under the new spelling too.
            text.push_str(&row(day, "Atlas Fuel Stratton", "Atlas", atlas, "177 O'Connor Rd", "STRATTON"));
        }
        expected.entry("atlas").or_default().push((day, atlas));
        let (name, brand) = if day <= 4 {
            ("United Rangeway Truck Stop", "United")
        } else {
            ("Astron Rangeway Truck Stop", "Astron")
        };
        let rangeway = 160.0 + f64::from(day);
        text.push_str(&row(day, name, brand, rangeway, "50 Rifle Range Road", "RANGEWAY"));
        expected.entry("rangeway").or_default().push((day, rangeway));
    }
    std::fs::write(&file, &text).expect("write");
    let quiet = |_: &str, _: &wafuel_store::archive::ImportWrite| {};
    let mut importer = Importer::new(store.clone()).await.expect("importer");
    import_paths(&mut importer, std::slice::from_ref(&file), &quiet).await.expect("import");
    let s = importer.summary.clone();
    assert_eq!((s.read.rows, s.written, s.conflicts), (25, 24, 0), "{}", s.line());
    assert_eq!(s.read.skipped.get("another row for the same station and day"), Some(&1), "{}", s.line());
    assert_eq!(s.archive_stations, 4, "{}", s.line());

    let id = |text: &str| sha256_hex(text.as_bytes());
    let ids = [
        ("seven", id("archive|3 marvel ent|brabham")),
        ("eg", id("archive|3 marvel ent|brabham|eg ampol brabham")),
        ("atlas", id("archive|177 oconnor rd|stratton")),
        ("rangeway", id("archive|50 rifle range road|rangeway")),
    ];
    for (who, station) in &ids {
        let history = store
            .station_history(station, p(1), date(2026, 5, 1), date(2026, 5, 31))
            .await
            .expect("read")
            .unwrap_or_else(|| panic!("{who} has a history"));
        let want: Vec<(jiff::civil::Date, i64)> = expected[who]
            .iter()
            .map(|(day, price)| (date(2026, 5, *day as i8), (price * 10.0).round() as i64))
            .collect();
        assert_eq!(history, want, "{who}");
    }
    let stations = store.known_stations().await.expect("stations");
    assert_eq!(stations.len(), 4, "{stations:?}");
    let rangeway = stations.iter().find(|k| k.station_id == ids[3].1).expect("rangeway");
    assert_eq!(rangeway.names, ["united rangeway truck stop", "astron rangeway truck stop"]);

    // Again: nothing moves, nothing is written.
    let mut again = Importer::new(store.clone()).await.expect("importer");
    import_paths(&mut again, &[file], &quiet).await.expect("import again");
    assert_eq!((again.summary.written, again.summary.unchanged), (0, 24), "{}", again.summary.line());
    assert_eq!(store.known_stations().await.expect("stations").len(), 4);
}

#[tokio::test]
async fn shared_addresses_keep_every_price_on_sqlite() {
    let dir = tempfile::tempdir().expect("dir");
    shared_addresses_keep_every_price(sqlite_store(&dir).await).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn shared_addresses_keep_every_price_on_postgres() {
    let url = postgres_url();
    shared_addresses_keep_every_price(postgres_store(&url).await).await;
}

/// A month imported after later ones (a backfill) that shows two names of one station on the
/// same day splits it, in one transaction: June (Shell Gidgegannup) and August (Atlas Fuel
/// Gidgegannup) first make one station at `2095 Toodyay Rd`, a handover; July has both on the
/// 30th, so Atlas's August prices move to a station of its own. Importing again changes nothing.
async fn a_backfill_splits_a_station(store: Arc<dyn Store>) {
    let dir = tempfile::tempdir().expect("dir");
    let month = |m: u32, rows: &[(u32, &str, &str, f64)]| {
        let path = dir.path().join(format!("FuelWatchRetail-{m:02}-2026.csv"));
        let mut text = HEADER.to_string();
        for (day, name, brand, price) in rows {
            text.push_str(&format!(
                "{day:02}/{m:02}/2026,{name},{brand},ULP,{price:.1},2095 Toodyay Rd,GIDGEGANNUP,6083,Swan,Metro\r\n"
            ));
        }
        std::fs::write(&path, text).expect("write");
        path
    };
    let (shell, atlas) = ("Shell Gidgegannup", "Atlas Fuel Gidgegannup");
    let june = month(6, &[(1, shell, "Shell", 170.1), (2, shell, "Shell", 170.2)]);
    let august = month(8, &[(1, atlas, "Atlas", 180.1), (2, atlas, "Atlas", 180.2)]);
    let july = month(
        7,
        &[
            (29, shell, "Shell", 175.9),
            (30, shell, "Shell", 176.0),
            (30, atlas, "Atlas", 179.0),
            (31, atlas, "Atlas", 179.1),
        ],
    );
    let quiet = |_: &str, _: &wafuel_store::archive::ImportWrite| {};
    let mut first = Importer::new(store.clone()).await.expect("importer");
    import_paths(&mut first, &[june.clone(), august.clone()], &quiet).await.expect("import");
    assert_eq!((first.summary.archive_stations, first.summary.split), (1, 0), "{}", first.summary.line());

    let mut backfill = Importer::new(store.clone()).await.expect("importer");
    import_paths(&mut backfill, std::slice::from_ref(&july), &quiet).await.expect("backfill");
    let s = backfill.summary.clone();
    assert_eq!((s.written, s.split, s.moved), (4, 1, 2), "{}", s.line());
    assert!(
        s.line().contains("1 stations split (two names on one day: 2 stored prices moved)"),
        "{}",
        s.line()
    );

    let shell_id = sha256_hex(b"archive|2095 toodyay rd|gidgegannup");
    let atlas_id = sha256_hex(b"archive|2095 toodyay rd|gidgegannup|atlas fuel gidgegannup");
    let history = |id: String| {
        let store = store.clone();
        async move {
            store
                .station_history(&id, p(1), date(2026, 6, 1), date(2026, 8, 31))
                .await
                .expect("read")
                .expect("known")
        }
    };
    assert_eq!(
        history(shell_id.clone()).await,
        vec![
            (date(2026, 6, 1), 1701),
            (date(2026, 6, 2), 1702),
            (date(2026, 7, 29), 1759),
            (date(2026, 7, 30), 1760)
        ]
    );
    assert_eq!(
        history(atlas_id.clone()).await,
        vec![
            (date(2026, 7, 30), 1790),
            (date(2026, 7, 31), 1791),
            (date(2026, 8, 1), 1801),
            (date(2026, 8, 2), 1802)
        ]
    );
    // The days' statistics name the station that now holds each price.
    let sid_of = |id: &str, stations: &[wafuel_store::archive::KnownStation]| {
        stations.iter().find(|k| k.station_id == id).map(|k| k.sid).expect("stored")
    };
    let stations = store.known_stations().await.expect("stations");
    let atlas_sid = sid_of(&atlas_id, &stations);
    let days = store.day_summaries(p(1), date(2026, 7, 30), date(2026, 8, 1)).await.expect("summaries");
    let figures: Vec<(u32, i64, Vec<i64>)> =
        days.iter().map(|d| (d.figures.stations as u32, d.figures.min, d.cheapest.clone())).collect();
    assert_eq!(figures[0].0, 2, "both stations on the 30th: {figures:?}");
    assert_eq!(figures[2], (1, 1801, vec![atlas_sid]), "{figures:?}");
    let names = stations.iter().find(|k| k.station_id == shell_id).map(|k| k.names.clone());
    assert_eq!(names, Some(vec!["shell gidgegannup".to_string()]), "the name left the station it shared");

    // Every month again, in any order: nothing moves.
    let version = store.history_version().await.expect("version");
    let mut again = Importer::new(store.clone()).await.expect("importer");
    import_paths(&mut again, &[august, july, june], &quiet).await.expect("again");
    let s = again.summary.clone();
    assert_eq!((s.written, s.unchanged, s.split, s.conflicts), (0, 8, 0, 0), "{}", s.line());
    assert_eq!(store.history_version().await.expect("version"), version, "no write at all");
}

#[tokio::test]
async fn a_backfill_splits_a_station_on_sqlite() {
    let dir = tempfile::tempdir().expect("dir");
    a_backfill_splits_a_station(sqlite_store(&dir).await).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn a_backfill_splits_a_station_on_postgres() {
    let url = postgres_url();
    a_backfill_splits_a_station(postgres_store(&url).await).await;
}
