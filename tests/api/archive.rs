//! `wafuel import-history` over a small archive, on SQLite and PostgreSQL: quirks of real
//! exports, matching to live stations, archive stations, idempotence, conflicts with live
//! prices, a bad header refused whole, and what history and statistics then answer.

use std::sync::Arc;

use jiff::civil::date;
use wafuel::archive::import::{ImportError, Importer, Plan, import_months, import_paths};
use wafuel::model::key::sha256_hex;
use wafuel::store::Store;

use crate::support::*;

const HEADER: &str = "PUBLISH_DATE,TRADING_NAME,BRAND_DESCRIPTION,PRODUCT_DESCRIPTION,PRODUCT_PRICE,ADDRESS,LOCATION,POSTCODE,AREA_DESCRIPTION,REGION_DESCRIPTION\r\n";

fn csv_field(text: &str) -> String {
    if text.contains(',') { format!("\"{text}\"") } else { text.to_string() }
}

async fn small_archive(store: Arc<dyn Store>) {
    let (sim, clock) = origin_at(fixture_morning(), Default::default()).await;
    let state = app_state(&sim, &clock, store.clone(), None);
    // The live stations (and today's prices) first, as the command does for an empty history.
    let warm = wafuel::jobs::warm::warm_pass(state.catalog.prices()).await;
    assert!(warm.failed.is_empty(), "{:?}", warm.failed);
    let today = date(2026, 9, 29);
    let live_station = state
        .catalog
        .selection(
            &wafuel::query::parse_selection(wafuel::query::Route::V1, "product=1", state.catalog.now())
                .expect("q"),
        )
        .await
        .expect("today's prices")
        .data
        .quotes()
        .next()
        .map(|q| q.station.clone())
        .expect("a live station");
    let live_id = wafuel::model::key::StationId::parse(&live_station.digest).expect("digest");
    let live_today = state.catalog.station_history(&live_id, p(1), today, today).await.expect("history")[0].1;

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

    let quiet = |_: &str, _: &wafuel::store::archive::ImportWrite| {};
    let mut importer = Importer::new(store.clone()).await.expect("importer");
    assert!(importer.knows_live_stations());
    import_paths(&mut importer, &[august.clone(), september.clone()], &quiet).await.expect("import");
    let s = importer.summary.clone();
    assert_eq!((s.files, s.read.rows), (2, 9), "{s:?}");
    assert_eq!(s.written, 3 + 3 + 1, "live station's 3 days, the closed station's 3, the far one");
    assert_eq!((s.conflicts, s.unchanged), (1, 0), "the live price wins");
    assert_eq!((s.matched_stations, s.archive_stations), (1, 2));
    assert_eq!(s.read.skipped.get("unknown product \"KEROSENE\""), Some(&1));
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
        history(live_station.digest.clone(), 1).await,
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
    let router = wafuel::app::build_router(state.clone());
    let app = TestApp { sim, clock, router, state, dir };
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

#[tokio::test]
async fn a_small_archive_on_postgres() {
    let Some(url) = postgres_url() else { return };
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
    let quiet = |_: &str, _: &wafuel::store::archive::ImportWrite| {};
    let months = [(2026, 9), (2026, 10)];
    // An empty history: the importer learns today's stations from the source first.
    let mut importer = Importer::new(store.clone()).await.expect("importer");
    assert!(!importer.knows_live_stations());
    importer.learn_live_stations(state.catalog.prices()).await.expect("learn");
    assert!(importer.knows_live_stations());
    import_months(&mut importer, &base, &months, Default::default(), &quiet).await.expect("import");
    let s = importer.summary.clone();
    assert_eq!(s.files, 1, "September, as far as today; October is not there yet");
    assert_eq!(s.missing, vec!["2026-10".to_string()]);
    assert!(s.written > 28 * 900, "{s:?}");
    // Archive and feed agree, except where two live stations share an address: the archive's
    // rows of that address belong to one of them (the smaller id), so the other's prices
    // meet it as conflicts, at most one a product and day.
    let shared = shared_addresses(&store).await;
    let most = if shared { 2 * 7 * 30 } else { 0 };
    assert!(s.conflicts <= most, "conflicts {} with an address shared: {shared}", s.conflicts);
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
        let key = (wafuel::model::key::fold_text(&s.street), wafuel::model::key::fold_text(&s.suburb));
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
    let quiet = |_: &str, _: &wafuel::store::archive::ImportWrite| {};
    let today = |clock: &wafuel::time::ManualClock| {
        use wafuel::time::Clock;
        wafuel::time::perth_now(clock.now()).date()
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
    let quiet = |_: &str, _: &wafuel::store::archive::ImportWrite| {};
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

#[tokio::test]
async fn every_area_lands_in_its_region_on_postgres() {
    let Some(url) = postgres_url() else { return };
    every_area_lands_in_its_region(postgres_store(&url).await).await;
}
