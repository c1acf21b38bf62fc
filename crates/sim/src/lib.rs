//! The simulated FuelWatch origin: the real feed's format and quirks over a statewide data
//! set, with a request log and fault injection. The binary's `simulate-source` and the
//! integration tests run this same code.

// It depends on the domain only (its code tables and Perth time): the forms it answers in
// (FuelWatch's lists and files, the terminal gate API, Places answers) are written here from
// the upstreams' own definitions, never from the readers under test.

pub mod archive;
pub mod dataset;
pub mod faults;
pub mod feed;
pub mod listing;
pub mod places;
mod places_wire;
pub mod wholesale;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use serde::Serialize;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use dataset::Dataset;
pub use faults::{FaultMode, Faults};
use feed::SimQuery;
use wafuel_domain::sync::lock;
use wafuel_domain::time::SharedClock;

/// The feed's path on the origin.
pub const FEED_PATH: &str = "/fuelwatch/fuelWatchRSS";

/// One request the origin received.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LoggedRequest {
    pub seq: u64,
    /// The raw query string ("" when none).
    pub query: String,
    /// The `User-Agent` the client sent.
    pub user_agent: Option<String>,
}

/// Shared state of one simulated origin.
pub struct SimState {
    data: Dataset,
    clock: SharedClock,
    /// Fault rules; the first that applies to a request is used.
    faults: Mutex<Vec<Faults>>,
    log: Mutex<Vec<LoggedRequest>>,
    /// Faults of the terminal gate API.
    wholesale_faults: Mutex<wholesale::WholesaleFaults>,
    /// Feed requests being answered now, the most ever at once, and how many were answered
    /// in full (a request its client dropped mid-answer is not): what a client's concurrency
    /// and cancelling did, seen from the origin.
    in_flight: std::sync::atomic::AtomicUsize,
    most_in_flight: std::sync::atomic::AtomicUsize,
    answered: std::sync::atomic::AtomicUsize,
}

/// Counts a feed request in flight for as long as it is being answered.
struct InFlight<'a>(&'a SimState);

impl<'a> InFlight<'a> {
    fn enter(state: &'a SimState) -> Self {
        use std::sync::atomic::Ordering::SeqCst;
        let now = state.in_flight.fetch_add(1, SeqCst) + 1;
        state.most_in_flight.fetch_max(now, SeqCst);
        InFlight(state)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl SimState {
    pub fn new(clock: SharedClock, faults: Faults) -> Result<Arc<Self>, serde_json::Error> {
        Ok(Arc::new(Self {
            data: Dataset::build()?,
            clock,
            faults: Mutex::new(vec![faults]),
            log: Mutex::new(Vec::new()),
            wholesale_faults: Mutex::default(),
            in_flight: Default::default(),
            most_in_flight: Default::default(),
            answered: Default::default(),
        }))
    }

    pub fn dataset(&self) -> &Dataset {
        &self.data
    }

    /// The list of monthly files at `now`, with `url`s under `base`.
    pub fn archive_list(&self, base: &str, now: jiff::Timestamp) -> Vec<listing::ListedFile> {
        archive::file_list(&self.data, base, wafuel_domain::time::perth_now(now).date())
    }

    pub fn requests(&self) -> Vec<LoggedRequest> {
        lock(&self.log).clone()
    }

    pub fn request_count(&self) -> usize {
        lock(&self.log).len()
    }

    pub fn clear_requests(&self) {
        lock(&self.log).clear();
    }

    /// The most feed requests ever answered at once.
    pub fn most_in_flight(&self) -> usize {
        self.most_in_flight.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Feed requests answered in full (delays and faults included), not dropped by their
    /// client before the answer was ready.
    pub fn answered_count(&self) -> usize {
        self.answered.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Replace every fault rule with this one.
    pub fn set_faults(&self, faults: Faults) {
        self.set_fault_rules(vec![faults]);
    }

    /// Several rules at once (e.g. product 4 refused while the others are slow); the first
    /// rule that applies to a request wins.
    pub fn set_fault_rules(&self, rules: Vec<Faults>) {
        *lock(&self.faults) = rules;
    }

    pub fn fault_rules(&self) -> Vec<Faults> {
        lock(&self.faults).clone()
    }

    /// Replace the terminal gate API's faults.
    pub fn set_wholesale_faults(&self, faults: wholesale::WholesaleFaults) {
        *lock(&self.wholesale_faults) = faults;
    }

    /// The list of yearly wholesale files at `now`, with `url`s under `base`.
    pub fn wholesale_list(&self, base: &str, now: jiff::Timestamp) -> Vec<listing::ListedFile> {
        wholesale::file_list(base, wafuel_domain::time::perth_now(now).date())
    }

    /// The faults that apply to this request, consuming one use of a limited rule.
    fn take_faults(&self, product: Option<u8>) -> Option<Faults> {
        let mut rules = lock(&self.faults);
        let rule = rules.iter_mut().find(|f| !f.is_empty() && f.applies_to(product) && f.times != Some(0))?;
        if let Some(n) = rule.times {
            rule.times = Some(n - 1);
        }
        Some(rule.clone())
    }

    /// The statewide feed of one product for any date, as the origin would have written it
    /// that day. In-process only (the demo seeds past days with it): the origin's HTTP
    /// answer, like the real feed's, covers yesterday, today and tomorrow only.
    pub fn past_feed(&self, product: u8, date: jiff::civil::Date) -> Vec<u8> {
        let q = SimQuery::parse(&format!("Product={product}"));
        let now = wafuel_domain::time::at_perth(date, jiff::civil::Time::constant(12, 0, 0, 0)).timestamp();
        let items = feed::select(&self.data, &q, date, now);
        feed::render(&items, &q, date, now, None)
    }

    /// The feed body for a query at the clock's current time, without faults.
    pub fn feed_body(&self, query: &str, mode: Option<FaultMode>) -> Vec<u8> {
        let now = self.clock.now();
        let q = SimQuery::parse(query);
        let date = q.day.resolve(now);
        let items = feed::select(&self.data, &q, date, now);
        feed::render(&items, &q, date, now, mode)
    }
}

/// The origin's router: the feed, and `/_sim/…` for its log and faults.
pub fn router(state: Arc<SimState>) -> Router {
    Router::new()
        .route(FEED_PATH, get(feed_handler))
        .route(ARCHIVE_PATH, get(archive_handler))
        .route(ARCHIVE_LIST_PATH, get(archive_list_handler))
        .route(WHOLESALE_LIST_PATH, get(wholesale_list_handler))
        .route("/api/token", get(token_handler))
        .route("/api/terminalgate/centres", get(centres_handler))
        .route("/api/terminalgate/prices/{centre}", get(terminal_prices_handler))
        .route("/_sim/wholesale-faults", axum::routing::put(put_wholesale_faults))
        .route("/_sim/requests", get(list_requests).delete(clear_requests))
        .route("/_sim/faults", get(get_faults).put(put_faults))
        .with_state(state)
}

/// Where the simulated archive's monthly files are (as FuelWatch's blob store names them).
pub const ARCHIVE_PATH: &str = "/historical-reports/{file}";

/// Where FuelWatch lists its monthly files.
pub const ARCHIVE_LIST_PATH: &str = "/api/report/monthly-retail-prices";

/// Where FuelWatch lists its yearly wholesale files.
pub const WHOLESALE_LIST_PATH: &str = "/api/report/terminal-gate-prices";

/// The base of FuelWatch's API on this origin, for `--wholesale-url`.
pub const API_PATH: &str = "/api/";

fn host_of(headers: &axum::http::HeaderMap) -> String {
    headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1").to_string()
}

async fn wholesale_list_handler(
    State(state): State<Arc<SimState>>,
    headers: axum::http::HeaderMap,
) -> Response {
    let base = format!("http://{}/historical-reports/", host_of(&headers));
    axum::Json(state.wholesale_list(&base, state.clock.now())).into_response()
}

/// The terminal gate API's faults for this request, after their delay; an answer when they
/// say to fail.
async fn wholesale_fault(state: &SimState) -> (wholesale::WholesaleFaults, Option<Response>) {
    let faults = lock(&state.wholesale_faults).clone();
    if let Some(ms) = faults.delay_ms {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    let failed = faults.status.map(|status| {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, "Request refused").into_response()
    });
    (faults, failed)
}

/// Whether a request carries the simulated token.
fn authorised(headers: &axum::http::HeaderMap) -> bool {
    headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok())
        == Some(&format!("Bearer {}", wholesale::TOKEN))
}

async fn token_handler(State(state): State<Arc<SimState>>) -> Response {
    let (faults, failed) = wholesale_fault(&state).await;
    if let Some(failed) = failed {
        return failed;
    }
    if faults.refuse_token {
        return (StatusCode::FORBIDDEN, "Forbidden").into_response();
    }
    axum::Json(wholesale::TOKEN).into_response()
}

async fn centres_handler(State(state): State<Arc<SimState>>, headers: axum::http::HeaderMap) -> Response {
    let (faults, failed) = wholesale_fault(&state).await;
    if let Some(failed) = failed {
        return failed;
    }
    if !authorised(&headers) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let mut centres = wholesale::centres_json();
    if faults.centre_twice
        && let Some(list) = centres.as_array_mut()
        && let Some(perth) = list.iter().find(|c| c["description"] == "Perth").cloned()
    {
        list.push(serde_json::json!({"id": 999, "description": perth["description"]}));
    }
    axum::Json(centres).into_response()
}

async fn terminal_prices_handler(
    State(state): State<Arc<SimState>>,
    axum::extract::Path(centre): axum::extract::Path<u32>,
    headers: axum::http::HeaderMap,
) -> Response {
    let (faults, failed) = wholesale_fault(&state).await;
    if let Some(failed) = failed {
        return failed;
    }
    if !authorised(&headers) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    if faults.malformed {
        return ([(header::CONTENT_TYPE, "application/json")], "{\"message\":\"An error has occurred.\"")
            .into_response();
    }
    let Some(mut body) = wholesale::prices_json(centre, state.clock.now()) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if let (Some(price), Some(first)) = (faults.price, body.get_mut(0)) {
        first["terminalGateProductModels"][0]["priceCurrent"] = serde_json::json!(price);
    }
    if faults.product_twice
        && let Some(models) = body.get_mut(0).and_then(|t| t["terminalGateProductModels"].as_array_mut())
        && let Some(first) = models.first().cloned()
    {
        models.push(first);
    }
    if faults.terminal_twice
        && let Some(list) = body.as_array_mut()
        && let Some(mut again) = list.first().cloned()
    {
        again["terminalGateProductModels"][0]["priceCurrent"] = serde_json::json!(499.0);
        list.push(again);
    }
    axum::Json(body).into_response()
}

async fn put_wholesale_faults(
    State(state): State<Arc<SimState>>,
    axum::Json(faults): axum::Json<wholesale::WholesaleFaults>,
) -> StatusCode {
    state.set_wholesale_faults(faults);
    StatusCode::NO_CONTENT
}

/// The list of monthly files, as FuelWatch writes it, with `url`s on this origin (named by the
/// request's `Host`).
async fn archive_list_handler(
    State(state): State<Arc<SimState>>,
    headers: axum::http::HeaderMap,
) -> Response {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1").to_string();
    let base = format!("http://{host}/historical-reports/");
    let now = state.clock.now();
    let data = state.clone();
    let list = tokio::task::spawn_blocking(move || data.archive_list(&base, now)).await.unwrap_or_default();
    axum::Json(list).into_response()
}

/// `FuelWatchRetail-MM-YYYY.csv` for a month up to the simulated clock's (the current month
/// as far as today); 404 otherwise.
async fn archive_handler(
    State(state): State<Arc<SimState>>,
    axum::extract::Path(file): axum::extract::Path<String>,
) -> Response {
    let today = wafuel_domain::time::perth_now(state.clock.now()).date();
    if let Some(year) = listing::year_of_file(&file) {
        return match wholesale::year_file(year, today) {
            Some(text) => ([(header::CONTENT_TYPE, "text/csv")], text).into_response(),
            None => (StatusCode::NOT_FOUND, "The specified blob does not exist.").into_response(),
        };
    }
    let month = listing::month_of_file(&file);
    let month = month.filter(|m| archive::has_month(*m, today));
    match month.and_then(|m| Some((m, archive::last_day(m, today)?))) {
        Some((month, through)) => {
            // Streamed a day at a time, as a blob store sends a large file: the origin never
            // holds a whole month.
            let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(2);
            let data = state.clone();
            tokio::task::spawn_blocking(move || {
                archive::write_month(data.dataset(), month, through, &mut |chunk| {
                    tx.blocking_send(chunk).is_ok()
                });
            });
            let chunks = futures::stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|chunk| (Ok::<Bytes, std::io::Error>(Bytes::from(chunk)), rx))
            });
            ([(header::CONTENT_TYPE, "text/csv")], Body::from_stream(chunks)).into_response()
        }
        None => (StatusCode::NOT_FOUND, "The specified blob does not exist.").into_response(),
    }
}

async fn feed_handler(
    State(state): State<Arc<SimState>>,
    RawQuery(query): RawQuery,
    headers: axum::http::HeaderMap,
) -> Response {
    let query = query.unwrap_or_default();
    {
        let mut log = lock(&state.log);
        let seq = log.len() as u64 + 1;
        let user_agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).map(str::to_string);
        log.push(LoggedRequest { seq, query: query.clone(), user_agent });
    }
    let faults = state.take_faults(SimQuery::product_hint(&query)).unwrap_or_default();
    let in_flight = InFlight::enter(&state);
    if let Some(delay) = faults.delay() {
        tokio::time::sleep(delay).await;
    }
    drop(in_flight);
    state.answered.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    if let Some(status) = faults.status {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response =
            (status, [(header::CONTENT_TYPE, "text/html")], "<html><body>Request refused</body></html>")
                .into_response();
        if let Some(secs) = faults.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        return response;
    }
    if faults.mode == Some(FaultMode::Redirect) {
        return (StatusCode::FOUND, [(header::LOCATION, "/fuelwatch/moved")]).into_response();
    }
    let body = state.feed_body(&query, faults.mode);
    let body = match faults.slow_body() {
        Some(pause) => slow_body(body, pause),
        None => Body::from(body),
    };
    ([(header::CONTENT_TYPE, "text/xml;charset=UTF-8")], body).into_response()
}

/// Send the body in 4 KiB pieces with a pause before each.
fn slow_body(body: Vec<u8>, pause: Duration) -> Body {
    let chunks: Vec<Bytes> = body.chunks(4096).map(Bytes::copy_from_slice).collect();
    let stream = futures::stream::unfold(chunks.into_iter(), move |mut rest| async move {
        let next = rest.next()?;
        tokio::time::sleep(pause).await;
        Some((Ok::<Bytes, std::io::Error>(next), rest))
    });
    Body::from_stream(stream)
}

#[derive(Serialize)]
struct RequestLog {
    count: usize,
    requests: Vec<LoggedRequest>,
}

async fn list_requests(State(state): State<Arc<SimState>>) -> axum::Json<RequestLog> {
    let requests = state.requests();
    axum::Json(RequestLog { count: requests.len(), requests })
}

async fn clear_requests(State(state): State<Arc<SimState>>) -> StatusCode {
    state.clear_requests();
    StatusCode::NO_CONTENT
}

async fn get_faults(State(state): State<Arc<SimState>>) -> axum::Json<Vec<Faults>> {
    axum::Json(state.fault_rules())
}

/// `PUT /_sim/faults` takes one rule object or an array of rules.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum FaultBody {
    One(Faults),
    Many(Vec<Faults>),
}

async fn put_faults(
    State(state): State<Arc<SimState>>,
    axum::Json(body): axum::Json<FaultBody>,
) -> StatusCode {
    state.set_fault_rules(match body {
        FaultBody::One(rule) => vec![rule],
        FaultBody::Many(rules) => rules,
    });
    StatusCode::NO_CONTENT
}

/// A running origin on a local port.
pub struct SimHandle {
    pub addr: SocketAddr,
    pub state: Arc<SimState>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl SimHandle {
    /// Start an origin on `listen` (port 0 for a random port).
    pub async fn spawn(listen: SocketAddr, clock: SharedClock, faults: Faults) -> std::io::Result<Self> {
        let state = SimState::new(clock, faults).map_err(std::io::Error::other)?;
        let listener = TcpListener::bind(listen).await?;
        let addr = listener.local_addr()?;
        let (tx, rx) = oneshot::channel::<()>();
        let app = router(state.clone());
        let task = tokio::spawn(async move {
            let served = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = rx.await;
            });
            if let Err(e) = served.await {
                tracing::error!(error = %e, "simulated source stopped");
            }
        });
        Ok(Self { addr, state, shutdown: Some(tx), task: Some(task) })
    }

    /// The base URL of the simulated archive (for `--archive-url`).
    pub fn archive_url(&self) -> String {
        format!("http://{}/historical-reports/", self.addr)
    }

    /// The simulated archive's file list (for `--archive-list-url`).
    pub fn archive_list_url(&self) -> String {
        format!("http://{}{ARCHIVE_LIST_PATH}", self.addr)
    }

    /// The simulated FuelWatch API, to pass as `--wholesale-url`.
    pub fn wholesale_url(&self) -> String {
        format!("http://{}{API_PATH}", self.addr)
    }

    /// The simulated list of yearly wholesale files (for `import-wholesale --list-url`).
    pub fn wholesale_list_url(&self) -> String {
        format!("http://{}{WHOLESALE_LIST_PATH}", self.addr)
    }

    /// The feed URL, to pass as `--source-url`.
    pub fn feed_url(&self) -> String {
        format!("http://{}{FEED_PATH}", self.addr)
    }

    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}
