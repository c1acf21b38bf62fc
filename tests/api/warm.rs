//! The warm job: refreshes even fresh extracts, keeps old prices when a replacement fails or
//! is empty, and reports failures.

use std::time::Duration;

use wafuel_service::jobs::warm::warm_pass;
use wafuel_sim::{FaultMode, Faults};

use crate::support::*;

#[tokio::test]
async fn warm_refreshes_even_fresh_snapshots() {
    let app = TestApp::new().await;
    assert_eq!(app.get("/v1").await.status, 200);
    assert_eq!(app.source_requests(), 7);
    app.clock.advance(Duration::from_secs(600));
    let report = warm_pass(app.server.state.catalog.prices()).await;
    assert_eq!(report.refreshed, 7);
    assert!(report.failed.is_empty());
    assert_eq!(app.source_requests(), 14);
    // A new selection reads the refreshed snapshots.
    let r = app.get("/v1?product=1,2,4,5,6,10,11&brand=5").await;
    assert_eq!(r.header("x-fuel-snapshot-cache"), "HIT");
    assert_eq!(r.json()["meta"]["fetchedAt"], "2026-09-29T10:10:00+08:00");
}

/// A store that cannot be read fails the warm pass as the store's failure, not the source's,
/// and the source is never asked (without the lease, no replica may fetch for the store).
#[tokio::test]
async fn a_failing_store_fails_the_warm_pass_as_the_store() {
    let app = TestApp::new().await;
    drop_sqlite_table(&app.dir, "snapshots").await;
    let report = warm_pass(app.server.state.catalog.prices()).await;
    assert_eq!(report.refreshed, 0);
    assert_eq!(report.failed.len(), 7, "{:?}", report.failed);
    assert!(report.failed.iter().all(|(_, code)| *code == "store_unavailable"), "{:?}", report.failed);
    assert_eq!(app.source_requests(), 0);
}

#[tokio::test]
async fn failed_or_empty_replacements_keep_the_old_prices() {
    for faults in [
        Faults { status: Some(500), ..Faults::default() },
        Faults { mode: Some(FaultMode::Empty), ..Faults::default() },
        Faults { mode: Some(FaultMode::WrongDate), ..Faults::default() },
    ] {
        let app = TestApp::new().await;
        assert_eq!(app.get("/v1").await.status, 200);
        app.sim.state.set_faults(faults.clone());
        app.clock.advance(Duration::from_secs(600));
        let report = warm_pass(app.server.state.catalog.prices()).await;
        assert_eq!(report.failed.len(), 7, "{faults:?}");
        let r = app.get("/v1?product=1&brand=5").await;
        assert_eq!(r.status, 200, "{faults:?}");
        assert_eq!(r.json()["meta"]["fetchedAt"], "2026-09-29T10:00:00+08:00", "old snapshot kept");
        assert!(!r.json()["data"].as_array().expect("data").is_empty());
    }
}

#[tokio::test]
async fn warm_before_six_covers_yesterday_and_today() {
    let app = TestApp::at(jiff::civil::date(2026, 9, 29).at(5, 0, 0, 0)).await;
    let report = warm_pass(app.server.state.catalog.prices()).await;
    assert_eq!(report.refreshed, 14);
    let days: std::collections::BTreeSet<String> = app
        .sim
        .state
        .requests()
        .into_iter()
        .map(|r| r.query.rsplit('=').next().unwrap_or("").to_string())
        .collect();
    assert_eq!(days, ["today".to_string(), "yesterday".to_string()].into_iter().collect());
    let y = app.get("/v1?day=yesterday&product=1").await;
    assert_eq!(y.header("x-fuel-snapshot-cache"), "HIT");
}
