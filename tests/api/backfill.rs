//! The history backfill a fresh `serve` runs by itself, against a loopback origin that speaks
//! FuelWatch's list and file forms (the simulated FuelWatch's own files, served through an
//! origin of the test's that can refuse, cut short or hold a file and logs what was asked):
//! newest first; the forecast answering before the oldest month is in; a 503 and a cut
//! download retried with nothing of them kept; the loading texts; a statistics answer asked
//! mid-backfill never served after it; two replicas downloading each file once in all.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use jiff::civil::date;
use serde_json::{Value, json};

use wafuel_archive::backfill::{BackfillConfig, run};
use wafuel_sim::SimHandle;

use crate::support::*;

/// What the origin does to one request for a file.
#[derive(Debug, Clone, Copy)]
pub enum Fault {
    /// 503, as a blob store under load answers.
    Unavailable,
    /// Half the file, then the connection cut.
    CutShort,
}

/// The test's FuelWatch: lists and files from the simulated origin, with faults, holds and a
/// log of the files asked, in order.
#[derive(Clone)]
pub struct Origin {
    sim_base: String,
    address: std::net::SocketAddr,
    pub log: Arc<Mutex<Vec<String>>>,
    faults: Arc<Mutex<HashMap<String, VecDeque<Fault>>>>,
    held: Arc<Mutex<HashMap<String, Arc<tokio::sync::Semaphore>>>>,
    http: reqwest::Client,
}

impl Origin {
    pub async fn spawn(sim: &SimHandle) -> Origin {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let address = listener.local_addr().expect("address");
        let sim_base = sim.archive_url().trim_end_matches("/historical-reports/").to_string();
        let origin = Origin {
            sim_base,
            address,
            log: Arc::default(),
            faults: Arc::default(),
            held: Arc::default(),
            http: http(),
        };
        let app = axum::Router::new()
            .route("/api/report/monthly-retail-prices", axum::routing::get(list))
            .route("/api/report/wholesale-prices", axum::routing::get(list))
            .route("/files/{name}", axum::routing::get(file))
            .with_state(origin.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        origin
    }

    pub fn archive_list(&self) -> url::Url {
        format!("http://{}/api/report/monthly-retail-prices", self.address).parse().expect("url")
    }

    pub fn wholesale_list(&self) -> url::Url {
        format!("http://{}/api/report/wholesale-prices", self.address).parse().expect("url")
    }

    /// The next requests for `name` fail these ways, in turn.
    pub fn fail(&self, name: &str, faults: &[Fault]) {
        self.faults.lock().expect("faults").insert(name.into(), faults.iter().copied().collect());
    }

    /// Every file waits (the lists answer): a history that stays loading.
    pub fn hold_everything(&self) {
        self.hold("*");
    }

    /// Requests for `name` wait until [`release`](Self::release).
    pub fn hold(&self, name: &str) {
        self.held.lock().expect("held").insert(name.into(), Arc::new(tokio::sync::Semaphore::new(0)));
    }

    pub fn release(&self, name: &str) {
        if let Some(gate) = self.held.lock().expect("held").remove(name) {
            gate.add_permits(1_000);
        }
    }

    pub fn asked(&self) -> Vec<String> {
        self.log.lock().expect("log").clone()
    }
}

/// Either list, as the simulated FuelWatch writes it, its files' `url`s on this origin.
async fn list(State(origin): State<Origin>, uri: axum::http::Uri) -> Response {
    let path = if uri.path().ends_with("wholesale-prices") {
        "terminal-gate-prices"
    } else {
        "monthly-retail-prices"
    };
    let sim = format!("{}/api/report/{path}", origin.sim_base);
    let Ok(answer) = origin.http.get(sim).send().await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let Ok(mut list) = answer.json::<Vec<Value>>().await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    for entry in &mut list {
        let name = entry["fileName"].as_str().unwrap_or_default().to_string();
        entry["url"] = json!(format!("http://{}/files/{name}", origin.address));
    }
    axum::Json(list).into_response()
}

async fn file(State(origin): State<Origin>, Path(name): Path<String>) -> Response {
    origin.log.lock().expect("log").push(name.clone());
    let fault = origin.faults.lock().expect("faults").get_mut(&name).and_then(VecDeque::pop_front);
    if let Some(Fault::Unavailable) = fault {
        return (StatusCode::SERVICE_UNAVAILABLE, "Server Busy").into_response();
    }
    // A held file waits (a try that fails does not).
    let gate = {
        let held = origin.held.lock().expect("held");
        held.get(&name).or_else(|| held.get("*")).cloned().filter(|_| fault.is_none())
    };
    if let Some(gate) = gate {
        let _ = gate.acquire().await;
    }
    let sim = format!("{}/historical-reports/{name}", origin.sim_base);
    let Ok(answer) = origin.http.get(sim).send().await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let status = answer.status();
    let Ok(body) = answer.bytes().await else { return StatusCode::BAD_GATEWAY.into_response() };
    if !status.is_success() {
        return (StatusCode::from_u16(status.as_u16()).unwrap_or(StatusCode::BAD_GATEWAY), body)
            .into_response();
    }
    if let Some(Fault::CutShort) = fault {
        // The first half, then the stream fails: the connection is cut mid-body.
        let half = body.slice(..body.len() / 2);
        let parts: Vec<Result<bytes::Bytes, std::io::Error>> =
            vec![Ok(half), Err(std::io::Error::other("connection cut"))];
        return (
            [(header::CONTENT_TYPE, "text/csv")],
            axum::body::Body::from_stream(futures::stream::iter(parts)),
        )
            .into_response();
    }
    ([(header::CONTENT_TYPE, "text/csv")], body).into_response()
}

/// The backfill's configuration over `origin` from `from`, with the test's short waits.
pub fn config(origin: &Origin, from: (i16, i8)) -> BackfillConfig {
    let mut c = BackfillConfig::new(
        origin.archive_list(),
        origin.archive_list(),
        Some(origin.wholesale_list()),
        from,
    );
    c.retry_first = Duration::from_millis(200);
    c.retry_max = Duration::from_secs(1);
    c.wait = Duration::from_millis(200);
    c
}

/// An app that runs the backfill (as `serve` does), at 10:00 on 29 September 2026.
async fn backfilling_app() -> TestApp {
    let dir = tempfile::tempdir().expect("dir");
    let store = sqlite_store(&dir).await;
    let (sim, clock) = origin_at(date(2026, 9, 29).at(10, 0, 0, 0), Default::default()).await;
    let config = wafuel::app::AppConfig { backfill: true, ..app_config(&sim, &clock, store, None) };
    TestApp::start(config, sim, clock, dir).await
}

/// Poll `check` every 100 ms until it holds, for at most `limit`.
async fn eventually<F: std::future::Future<Output = bool>>(
    limit: Duration,
    what: &str,
    check: impl Fn() -> F,
) {
    let deadline = std::time::Instant::now() + limit;
    while !check().await {
        assert!(std::time::Instant::now() < deadline, "{what} within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The status's backfill, a second later on the app's clock (its store counters are
/// confirmed once a second).
async fn backfill_status(app: &TestApp) -> Value {
    app.clock.advance(Duration::from_secs(1));
    app.get("/v1/status").await.json()["data"]["attributes"]["history"]["backfill"].clone()
}

const JUNE: &str = "FuelWatchRetail-06-2026.csv";

#[tokio::test]
async fn a_fresh_store_fills_itself_newest_first_and_forecasts_before_the_oldest_month() {
    let app = backfilling_app().await;
    let origin = Origin::spawn(&app.sim).await;
    // Before anything is in: the forecast says the history is loading, in words.
    let short = app.get("/v1/forecast?product=1").await;
    assert_eq!(short.status, 404);
    let detail = short.json()["errors"][0]["detail"].as_str().expect("detail").to_string();
    assert!(detail.starts_with("The history is loading: 0 of 0 files imported."), "{detail}");
    assert!(
        detail
            .contains("A forecast needs 56 days with prices in the 91 before 2026-09-29; the history has 0.")
    );
    assert_eq!(backfill_status(&app).await["state"], "running");
    // The oldest month: refused once, cut short once, then held while the others are in.
    origin.fail(JUNE, &[Fault::Unavailable, Fault::CutShort]);
    origin.hold(JUNE);
    let store = sqlite_store(&app.dir).await;
    let job = tokio::spawn(run(store.clone(), app.clock.clone(), config(&origin, (2026, 6))));
    // Newest first: this year's wholesale file, then September back to June; June tried three
    // times (a 503, a cut download, then the one held).
    let asked = || {
        let origin = origin.clone();
        async move { origin.asked().iter().filter(|n| *n == JUNE).count() == 3 }
    };
    eventually(Duration::from_secs(120), "June asked a third time", asked).await;
    assert_eq!(
        origin.asked(),
        [
            "FuelWatchWholesale-2026.csv",
            "FuelWatchRetail-09-2026.csv",
            "FuelWatchRetail-08-2026.csv",
            "FuelWatchRetail-07-2026.csv",
            JUNE,
            JUNE,
            JUNE
        ]
    );
    // Nothing of the failed tries is kept: June is not imported, no June day has a price.
    let months = store.imported_months().await.expect("months");
    assert!(!months.contains_key(&(2026, 6)) && months.contains_key(&(2026, 7)), "{months:?}");
    app.clock.advance(Duration::from_secs(1));
    let mid = app.get("/v1/stats?product=1&from=2026-06-01&to=2026-06-30").await;
    assert_eq!(mid.status, 200);
    let days = |r: &TestResponse| r.json()["data"]["attributes"]["days"].as_array().map_or(0, Vec::len);
    assert_eq!(days(&mid), 0, "no June price while June is held");
    // The forecast answers before the oldest month is in (the answer refused before it had
    // the history is not served again).
    let forecast = app.get("/v1/forecast?product=1").await;
    assert_eq!(forecast.status, 200, "{}", String::from_utf8_lossy(&forecast.body));
    let progress = backfill_status(&app).await;
    assert_eq!(progress["state"], "running");
    assert_eq!(
        (progress["filesDone"].as_u64(), progress["filesTotal"].as_u64()),
        (Some(4), Some(5)),
        "{progress}"
    );
    assert_eq!(progress["oldestMonth"], "2026-07");
    assert_eq!(progress["lastError"]["file"], JUNE, "{progress}");
    // June comes in: done, and the June statistics asked before are not served again.
    origin.release(JUNE);
    let done = || {
        let app = &app;
        async move { backfill_status(app).await["state"] == "done" }
    };
    eventually(Duration::from_secs(120), "the backfill done", done).await;
    let progress = backfill_status(&app).await;
    assert_eq!(
        (progress["filesDone"].as_u64(), progress["oldestMonth"].as_str()),
        (Some(5), Some("2026-06"))
    );
    app.clock.advance(Duration::from_secs(1));
    let after = app.get("/v1/stats?product=1&from=2026-06-01&to=2026-06-30").await;
    assert_eq!(days(&after), 30, "June's days, not the answer cached before they came");
    assert_ne!(after.header("etag"), mid.header("etag"));
    assert_eq!(origin.asked().len(), 7, "every file once, June's two failed tries aside");
    job.abort();
}

/// Two replicas on one store both run the backfill: one holds the lease and downloads, the
/// other waits; each file is downloaded once in all.
async fn two_replicas(a: Arc<dyn wafuel_store::Store>, b: Arc<dyn wafuel_store::Store>) {
    let (sim, clock) = origin_at(date(2026, 9, 29).at(10, 0, 0, 0), Default::default()).await;
    let origin = Origin::spawn(&sim).await;
    let first = tokio::spawn(run(a.clone(), clock.clone(), config(&origin, (2026, 8))));
    let second = tokio::spawn(run(b.clone(), clock.clone(), config(&origin, (2026, 8))));
    let done = || {
        let a = a.clone();
        async move {
            wafuel_archive::backfill::recorded(&a)
                .await
                .is_some_and(|p| p.state == wafuel_domain::backfill::BackfillState::Done)
        }
    };
    eventually(Duration::from_secs(120), "the backfill done", done).await;
    // Long enough for the waiting replica to look again (every 200 ms) and find nothing owed.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let mut asked = origin.asked();
    asked.sort();
    assert_eq!(
        asked,
        ["FuelWatchRetail-08-2026.csv", "FuelWatchRetail-09-2026.csv", "FuelWatchWholesale-2026.csv"],
        "each file once in all"
    );
    first.abort();
    second.abort();
}

#[tokio::test]
async fn two_replicas_download_each_file_once_on_sqlite() {
    let dir = tempfile::tempdir().expect("dir");
    two_replicas(sqlite_store(&dir).await, sqlite_store(&dir).await).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn two_replicas_download_each_file_once_on_postgres() {
    let (a, b) = postgres_replica_stores(&postgres_url()).await;
    two_replicas(a, b).await;
}

/// `wafuel serve` over the simulated FuelWatch (on the machine's clock) with the backfill
/// reading `origin`, from October, with `extra` arguments; its store in `dir`.
pub(crate) fn serve_backfilling(
    sim: &SimHandle,
    origin: &Origin,
    dir: &tempfile::TempDir,
    extra: &[&str],
) -> crate::process::Running {
    let store = format!("sqlite://{}/wafuel.sqlite3", dir.path().display());
    let (feed, wholesale) = (sim.feed_url(), sim.wholesale_url());
    let (list, wholesale_list) = (origin.archive_list().to_string(), origin.wholesale_list().to_string());
    let mut args = vec![
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--admin-listen",
        "127.0.0.1:0",
        "--source-url",
        &feed,
        "--wholesale-url",
        &wholesale,
        "--store",
        &store,
        "--archive-list-url",
        &list,
        "--wholesale-list-url",
        &wholesale_list,
        "--backfill-from",
        "2026-10",
        "--backfill-lease",
        "3",
        "--log-format",
        "json",
    ];
    args.extend_from_slice(extra);
    crate::process::start(&args)
}

async fn status_of(run: &crate::process::Running) -> Value {
    let r = http().get(format!("{}/v1/status", run.public)).send().await.expect("status");
    r.json::<Value>().await.expect("json")["data"]["attributes"]["history"]["backfill"].clone()
}

/// Killed mid-backfill (SIGKILL, a file in flight), `serve` started again over the same store
/// takes over within its lease and never downloads a file that was in before the kill.
#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn a_killed_backfill_resumes_without_downloading_a_finished_file_again() {
    let sim = SimHandle::spawn(local(), Arc::new(wafuel::app::SystemClock), Default::default())
        .await
        .expect("origin");
    let origin = Origin::spawn(&sim).await;
    let october = "FuelWatchRetail-10-2026.csv";
    origin.hold(october);
    let dir = tempfile::tempdir().expect("dir");
    let mut first = serve_backfilling(&sim, &origin, &dir, &[]);
    let asked = || {
        let origin = origin.clone();
        async move { origin.asked().iter().any(|n| n == october) }
    };
    eventually(Duration::from_secs(120), "October asked (the files after it are in)", asked).await;
    let before_kill = origin.asked();
    first.child.kill().expect("SIGKILL");
    first.child.wait().expect("reaped");
    origin.release(october);
    let second = serve_backfilling(&sim, &origin, &dir, &[]);
    let done = || {
        let second = &second;
        async move { status_of(second).await["state"] == "done" }
    };
    eventually(Duration::from_secs(120), "the backfill done after the restart", done).await;
    let after: Vec<String> = origin.asked().split_off(before_kill.len());
    assert_eq!(
        after,
        [october],
        "only the file in flight at the kill, asked again (before: {before_kill:?})"
    );
    let progress = status_of(&second).await;
    assert_eq!(progress["oldestMonth"], "2026-10", "{progress}");
    assert_eq!(progress["filesDone"], progress["filesTotal"]);
}

/// `--no-backfill` (or its environment twin, as `1`) asks FuelWatch's lists and files nothing,
/// and the status says the backfill is off.
#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn no_backfill_asks_nothing() {
    let sim = SimHandle::spawn(local(), Arc::new(wafuel::app::SystemClock), Default::default())
        .await
        .expect("origin");
    let origin = Origin::spawn(&sim).await;
    let dir = tempfile::tempdir().expect("dir");
    let flagged = serve_backfilling(&sim, &origin, &dir, &["--no-backfill"]);
    let dir_env = tempfile::tempdir().expect("dir");
    let store = format!("sqlite://{}/wafuel.sqlite3", dir_env.path().display());
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_wafuel"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--no-jobs"])
        .args(["--source-url", &sim.feed_url(), "--store", &store])
        .args(["--archive-list-url", origin.archive_list().as_str()])
        .env("WAFUEL_NO_BACKFILL", "1")
        .stderr(std::process::Stdio::null());
    let by_env = crate::process::start_command(command);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(origin.asked().is_empty(), "{:?}", origin.asked());
    for run in [&flagged, &by_env] {
        assert_eq!(status_of(run).await["state"], "off");
    }
}
