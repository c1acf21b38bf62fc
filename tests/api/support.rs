//! Shared helpers: a simulated origin on port 0 with a clock the test controls.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use jiff::civil::{DateTime, date};
use wafuel_domain::time::{ManualClock, SharedClock};
use wafuel_sim::{Faults, SimHandle};
use wafuel_source::client::{ClientLimits, SourceClient};

pub const LOCAL: &str = "127.0.0.1:0";

pub fn local() -> SocketAddr {
    LOCAL.parse().expect("loopback address")
}

/// 29 September 2026, 10:00 in Perth: the day of the newest fixture.
pub fn fixture_morning() -> DateTime {
    date(2026, 9, 29).at(10, 0, 0, 0)
}

/// Now in Perth, as a civil time: the origin's clock for a `serve` process on the system clock.
pub fn perth_wall_clock() -> DateTime {
    jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::get("Australia/Perth").expect("tz")).datetime()
}

/// An origin whose clock stands at `at` (Perth time).
pub async fn origin_at(at: DateTime, faults: Faults) -> (SimHandle, Arc<ManualClock>) {
    let clock = ManualClock::at_perth(at);
    let shared: SharedClock = clock.clone();
    let sim = SimHandle::spawn(local(), shared, faults).await.expect("origin starts");
    (sim, clock)
}

pub async fn origin(faults: Faults) -> SimHandle {
    origin_at(fixture_morning(), faults).await.0
}

/// Fetch a feed path with query from the origin.
pub async fn get(sim: &SimHandle, query: &str) -> reqwest::Response {
    http().get(format!("{}?{query}", sim.feed_url())).send().await.expect("origin answers")
}

pub async fn get_text(sim: &SimHandle, query: &str) -> String {
    get(sim, query).await.text().await.expect("body")
}

/// Client limits short enough that timeout tests finish quickly.
pub fn quick_limits() -> ClientLimits {
    ClientLimits { deadline: Duration::from_millis(1500), ..ClientLimits::default() }
}

pub fn client_for(sim: &SimHandle, limits: ClientLimits) -> SourceClient {
    SourceClient::new(sim.feed_url().parse().expect("url"), limits).expect("client builds")
}

/// A plain HTTP client for tests (no redirects followed, so tests see them).
pub fn http() -> reqwest::Client {
    wafuel_source::client::install_crypto_provider();
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client")
}

/// The production application (`wafuel::app::Application`, as `serve` builds it) on port 0,
/// over a simulated origin on a random port, with a clock the test moves. Requests go over a
/// real connection to the public port: the request rules, the front cache, the limits and
/// telemetry all run as they do in production.
pub struct TestApp {
    pub sim: SimHandle,
    pub clock: Arc<ManualClock>,
    /// The running application; its state is `server.state`.
    pub server: Server,
    /// Holds the SQLite store's directory for the test's lifetime.
    pub dir: tempfile::TempDir,
}

/// A running [`wafuel::app::Application`]: its ports, its state, a client kept alive to it.
/// Dropping it stops the server.
pub struct Server {
    pub addr: SocketAddr,
    pub admin: SocketAddr,
    pub state: wafuel_web::http::AppState,
    client: HttpClient,
    _stop: tokio::sync::oneshot::Sender<()>,
}

type HttpClient =
    hyper_util::client::legacy::Client<hyper_util::client::legacy::connect::HttpConnector, axum::body::Body>;

impl Server {
    /// Build the application from `config` on free loopback ports and serve it until dropped.
    pub async fn start(config: wafuel::app::AppConfig, limits: wafuel::server::ServerLimits) -> Self {
        let listen = wafuel::app::Listen { limits, ..wafuel::app::Listen::loopback() };
        let app = wafuel::app::Application::build(config, listen).await.expect("the application builds");
        let (addr, admin) = (app.public_addr().expect("bound"), app.admin_addr().expect("bound"));
        let state = app.state().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(app.run_until(async move {
            let _ = stopped.await;
        }));
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build_http();
        Self { addr, admin, state, client, _stop: stop }
    }

    /// One request to the public port, as sent; the response with its body still streaming.
    pub async fn request(
        &self,
        mut request: axum::http::Request<axum::body::Body>,
    ) -> axum::http::Response<hyper::body::Incoming> {
        let target = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_string();
        *request.uri_mut() = format!("http://{}{target}", self.addr).parse().expect("uri");
        // As every HTTP/1.1 client does (the request rules refuse a request without one).
        if !request.headers().contains_key(axum::http::header::HOST) {
            request
                .headers_mut()
                .insert(axum::http::header::HOST, axum::http::HeaderValue::from_static("localhost"));
        }
        self.client.request(request).await.expect("the server answers")
    }

    /// One request, its whole response read and its JSON checked against docs/openapi.json.
    pub async fn send(&self, request: axum::http::Request<axum::body::Body>) -> TestResponse {
        use http_body_util::BodyExt;
        let path = request.uri().path().to_string();
        let response = self.request(request).await;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.into_body().collect().await.expect("body").to_bytes();
        let response = TestResponse { status, headers, body };
        check_against_openapi(&path, &response);
        response
    }

    pub async fn call(&self, method: &str, uri: &str, headers: &[(&str, &str)]) -> TestResponse {
        let mut builder = axum::http::Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        self.send(builder.body(axum::body::Body::empty()).expect("request")).await
    }

    pub async fn get(&self, uri: &str) -> TestResponse {
        self.call("GET", uri, &[]).await
    }
}

/// A whole response, body read.
#[derive(Debug)]
pub struct TestResponse {
    pub status: u16,
    pub headers: axum::http::HeaderMap,
    pub body: bytes::Bytes,
}

impl TestResponse {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }
}

impl TestApp {
    pub async fn at(at: DateTime) -> Self {
        Self::with(at, Faults::default(), None).await
    }

    pub async fn new() -> Self {
        Self::at(fixture_morning()).await
    }

    pub async fn with(at: DateTime, faults: Faults, public_origin: Option<&str>) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = sqlite_store(&dir).await;
        Self::over(store, dir, at, faults, public_origin).await
    }

    /// The app over a store the test opened (PostgreSQL, or a second handle on a file).
    pub async fn over(
        store: Arc<dyn wafuel_store::Store>,
        dir: tempfile::TempDir,
        at: DateTime,
        faults: Faults,
        public_origin: Option<&str>,
    ) -> Self {
        let (sim, clock) = origin_at(at, faults).await;
        let config = app_config(&sim, &clock, store, public_origin);
        Self::start(config, sim, clock, dir).await
    }

    /// The application built from `config` and served, as `serve` builds it.
    pub async fn start(
        config: wafuel::app::AppConfig,
        sim: SimHandle,
        clock: Arc<ManualClock>,
        dir: tempfile::TempDir,
    ) -> Self {
        let server = Server::start(config, wafuel::server::ServerLimits::default()).await;
        Self { server, sim, clock, dir }
    }

    pub fn source_requests(&self) -> usize {
        self.sim.state.request_count()
    }

    pub async fn call(&self, method: &str, uri: &str, headers: &[(&str, &str)]) -> TestResponse {
        self.server.call(method, uri, headers).await
    }

    pub async fn get(&self, uri: &str) -> TestResponse {
        self.server.get(uri).await
    }
}

/// Every JSON body a test sees is checked against docs/openapi.json: price and legacy
/// documents on 200, the matching error shape otherwise.
fn check_against_openapi(path: &str, r: &TestResponse) {
    if r.body.is_empty() || r.headers.contains_key("content-encoding") {
        return;
    }
    let stations = path.starts_with("/v1/stations");
    let one = stations && path.matches('/').count() == 3;
    let component = match (r.header("content-type"), r.status, path) {
        ("application/vnd.api+json", 200, _) if path.ends_with("/history") => "PriceHistoryDocument",
        ("application/vnd.api+json", 200, _) if path.ends_with("/forecast") => "ForecastDocument",
        ("application/vnd.api+json", 200, "/v1/stats") => "MarketStatsDocument",
        ("application/vnd.api+json", 200, "/v1/wholesale") => "WholesaleDocument",
        ("application/vnd.api+json", 200, "/v1/forecast/record") => "ForecastRecordDocument",
        ("application/vnd.api+json", 200, "/v1/brands") => "BrandsDocument",
        ("application/vnd.api+json", 200, "/v1/status") => "StatusDocument",
        ("application/vnd.api+json", 200, _) if one => "StationDocument",
        ("application/vnd.api+json", 200, _) if stations => "StationsDocument",
        ("application/geo+json", 200, _) if one => "StationFeature",
        ("application/geo+json", 200, _) => "StationFeatureCollection",
        ("application/vnd.api+json", 200, _) => "PriceDocument",
        ("application/json", 200, "/legacy") => "LegacyDocument",
        ("application/vnd.api+json", _, _) => "JsonApiErrorDocument",
        ("application/json", _, "/legacy") => "LegacyErrorDocument",
        _ => return,
    };
    assert_valid(component, &r.json());
}

/// The JSON Schemas of docs/openapi.json, by component name (compiled once each).
pub fn schema(component: &str) -> std::sync::Arc<jsonschema::Validator> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<String, std::sync::Arc<jsonschema::Validator>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut map = cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    map.entry(component.to_string()).or_insert_with(|| std::sync::Arc::new(compile_schema(component))).clone()
}

fn compile_schema(component: &str) -> jsonschema::Validator {
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("docs/openapi.json").expect("openapi.json"))
            .expect("json");
    doc["$ref"] = serde_json::Value::String(format!("#/components/schemas/{component}"));
    doc["$schema"] = serde_json::Value::String("https://json-schema.org/draft/2020-12/schema".into());
    jsonschema::validator_for(&doc).expect("schema compiles")
}

pub fn assert_valid(component: &str, body: &serde_json::Value) {
    let validator = schema(component);
    let errors: Vec<String> =
        validator.iter_errors(body).take(5).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{component} schema: {errors:#?}");
}

/// The conditional-GET contract of a cacheable route (as docs.rs checks every route): a
/// matching `If-None-Match` (exact, weak, in a list, or `*`) gives 304 with the same
/// validators and cache headers and no body; a different tag gives 200.
pub async fn assert_conditional_get(app: &TestApp, uri: &str, headers: &[(&str, &str)]) {
    let first = app.call("GET", uri, headers).await;
    assert_eq!(first.status, 200, "{uri}");
    let etag = first.header("etag").to_string();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "strong quoted ETag: {etag}");
    let weak = format!("W/{etag}");
    let listed = format!("\"nope\", {etag}");
    for inm in [etag.as_str(), weak.as_str(), listed.as_str(), "*"] {
        let mut h = headers.to_vec();
        h.push(("if-none-match", inm));
        let r = app.call("GET", uri, &h).await;
        assert_eq!(r.status, 304, "{uri} If-None-Match: {inm}");
        assert!(r.body.is_empty());
        for name in [
            "etag",
            "cache-control",
            "vary",
            "x-fuel-cache",
            "x-fuel-snapshot-cache",
            "x-fuel-source-date",
            "x-fuel-fetched-at",
            "access-control-allow-origin",
        ] {
            if first.headers.contains_key(name) {
                assert!(r.headers.contains_key(name), "304 of {uri} repeats {name}");
            }
        }
        assert_eq!(r.header("etag"), etag);
        let head = app.call("HEAD", uri, &h).await;
        assert_eq!(head.status, 304);
    }
    let mut h = headers.to_vec();
    h.push(("if-none-match", "\"something-else\""));
    assert_eq!(app.call("GET", uri, &h).await.status, 200);
}

/// HEAD answers like GET: same status and headers, no body.
pub async fn assert_head_parity(app: &TestApp, uri: &str, headers: &[(&str, &str)]) {
    let get = app.call("GET", uri, headers).await;
    let head = app.call("HEAD", uri, headers).await;
    assert_eq!(head.status, get.status, "{uri}");
    assert!(head.body.is_empty(), "HEAD {uri} has no body");
    for (name, value) in get.headers.iter() {
        // Every request gets its own id (telemetry), GET and HEAD alike.
        if matches!(name.as_str(), "x-fuel-cache" | "x-fuel-snapshot-cache" | "date" | "x-request-id") {
            continue;
        }
        assert_eq!(head.headers.get(name), Some(value), "HEAD {uri} header {name}");
    }
}

/// A real SQLite store in a temporary directory.
pub async fn sqlite_store(dir: &tempfile::TempDir) -> Arc<dyn wafuel_store::Store> {
    let url = format!("sqlite://{}/wafuel.sqlite3", dir.path().display());
    wafuel_store::open(&url).await.expect("sqlite store opens")
}

/// Break a test app's SQLite store by dropping one of its tables (a store that fails).
pub async fn drop_sqlite_table(dir: &tempfile::TempDir, table: &str) {
    use sqlx::Connection;
    let url = format!("sqlite://{}/wafuel.sqlite3", dir.path().display());
    let mut conn = sqlx::SqliteConnection::connect(&url).await.expect("sqlite");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP TABLE {table}"))).execute(&mut conn).await.expect("drop");
}

/// Application state over a store, talking to `sim`, on the test's clock.
pub fn app_state(
    sim: &SimHandle,
    clock: &Arc<ManualClock>,
    store: Arc<dyn wafuel_store::Store>,
    public_origin: Option<&str>,
) -> wafuel_web::http::AppState {
    wafuel::app::build_state(app_config(sim, clock, store, public_origin)).expect("state")
}

/// The application's configuration over a store, talking to `sim` with short client limits,
/// on the test's clock.
pub fn app_config(
    sim: &SimHandle,
    clock: &Arc<ManualClock>,
    store: Arc<dyn wafuel_store::Store>,
    public_origin: Option<&str>,
) -> wafuel::app::AppConfig {
    let shared: SharedClock = clock.clone();
    wafuel::app::AppConfig {
        limits: quick_limits(),
        public_origin: public_origin.map(|o| o.parse().expect("origin")),
        ..wafuel::app::AppConfig::new(sim.feed_url().parse().expect("url"), store, shared)
    }
}

/// The PostgreSQL URL for tests. A test that needs it is marked ignored when it is unset (see
/// build.rs); run anyway (`--include-ignored`), it fails rather than passing untried.
pub fn postgres_url() -> String {
    std::env::var("WAFUEL_TEST_POSTGRES")
        .ok()
        .filter(|url| !url.is_empty())
        .expect("WAFUEL_TEST_POSTGRES names the PostgreSQL database this test needs")
}

/// A PostgreSQL store in a fresh schema of its own, so tests run in parallel.
pub async fn postgres_store(url: &str) -> Arc<dyn wafuel_store::Store> {
    let schema = fresh_schema(url).await;
    Arc::new(wafuel_store::PostgresStore::connect(url, Some(&schema)).await.expect("postgres store"))
}

/// Two stores over one fresh PostgreSQL schema: two replicas sharing their store.
pub async fn postgres_replica_stores(
    url: &str,
) -> (Arc<dyn wafuel_store::Store>, Arc<dyn wafuel_store::Store>) {
    let schema = fresh_schema(url).await;
    let connect = || async {
        let store = wafuel_store::PostgresStore::connect(url, Some(&schema)).await.expect("postgres store");
        Arc::new(store) as Arc<dyn wafuel_store::Store>
    };
    (connect().await, connect().await)
}

/// Create an empty schema with a unique name.
pub async fn fresh_schema(url: &str) -> String {
    use sqlx::Connection;
    let schema = format!("t_{:016x}", rand_u64());
    let mut conn = sqlx::PgConnection::connect(url).await.expect("postgres reachable");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
        .execute(&mut conn)
        .await
        .expect("schema");
    schema
}

fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}

/// A product code of the product table, for tests that name one by number.
pub fn p(code: u8) -> wafuel_domain::codes::ProductCode {
    wafuel_domain::codes::ProductCode::parse(code).expect("a product code")
}

/// The header of the station API's CSV (docs/api.md), as every station list sends it.
pub const STATIONS_CSV_HEADER: &str = "stationId,name,brand,street,suburb,latitude,longitude,product,price,next,change,distance,detour,along,cost,open,closesAt,opensAt,effective,lastChange,lastChangePrevious";
