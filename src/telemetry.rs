//! Logs (tracing, pretty or JSON), request ids, and Prometheus metrics.

use std::io::IsTerminal;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tower_http::request_id::{MakeRequestId, RequestId};
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Header carrying the request id, both ways.
pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// Start logging. Safe to call more than once (later calls do nothing).
pub fn init_logging(format: Option<LogFormat>) {
    let format =
        format.unwrap_or(if std::io::stderr().is_terminal() { LogFormat::Pretty } else { LogFormat::Json });
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(true).try_init(),
        LogFormat::Pretty => builder.compact().try_init(),
    };
}

/// The process-wide Prometheus recorder, installed on first use.
pub fn metrics_handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets(&[
                    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
                ])
                .map(PrometheusBuilder::build_recorder)
                .unwrap_or_else(|_| PrometheusBuilder::new().build_recorder());
            let handle = recorder.handle();
            // Another recorder may already be installed (e.g. by a test harness); metrics
            // then go there and /metrics shows what this handle saw.
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}

/// Request ids: a per-process random prefix and a counter, cheap and unique enough to join
/// log lines of one request.
#[derive(Clone)]
pub struct CounterRequestId {
    prefix: u32,
    next: std::sync::Arc<AtomicU64>,
}

impl Default for CounterRequestId {
    fn default() -> Self {
        Self { prefix: rand::random(), next: std::sync::Arc::new(AtomicU64::new(1)) }
    }
}

impl MakeRequestId for CounterRequestId {
    fn make_request_id<B>(&mut self, _request: &axum::http::Request<B>) -> Option<RequestId> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        HeaderValue::from_str(&format!("{:08x}-{n}", self.prefix)).ok().map(RequestId::new)
    }
}

/// A route label without allocating: the routes this process serves, else "other".
fn route_label(path: Option<&MatchedPath>) -> &'static str {
    match path.map(MatchedPath::as_str) {
        Some("/") => "/",
        Some("/v1") => "/v1",
        Some("/legacy") => "/legacy",
        Some("/static/image/brand/{filename}") => "/static/image/brand/{filename}",
        Some("/healthz") => "/healthz",
        Some("/readyz") => "/readyz",
        Some("/metrics") => "/metrics",
        Some(_) => "other",
        None => "unmatched",
    }
}

/// The statuses this service answers with, as static labels.
fn status_label(status: axum::http::StatusCode) -> &'static str {
    match status.as_u16() {
        200 => "200",
        204 => "204",
        302 => "302",
        304 => "304",
        400 => "400",
        404 => "404",
        405 => "405",
        406 => "406",
        408 => "408",
        413 => "413",
        414 => "414",
        415 => "415",
        500 => "500",
        502 => "502",
        503 => "503",
        504 => "504",
        _ => "other",
    }
}

type Handles = (metrics::Counter, metrics::Histogram);
type HandleMap =
    std::sync::Mutex<std::collections::HashMap<(&'static str, &'static str, &'static str), Handles>>;

/// The counter and histogram of one (route, method, status), registered once: building and
/// hashing metric keys on every request costs more than serving a cached document.
fn request_metrics(route: &'static str, method: &'static str, status: &'static str) -> Handles {
    static HANDLES: OnceLock<HandleMap> = OnceLock::new();
    let mut map = crate::sync::lock(HANDLES.get_or_init(Default::default));
    map.entry((route, method, status))
        .or_insert_with(|| {
            let labels = [("route", route), ("method", method), ("status", status)];
            (
                metrics::counter!("wafuel_http_requests_total", &labels),
                metrics::histogram!("wafuel_http_request_duration_seconds", &labels),
            )
        })
        .clone()
}

/// Count requests and time them by route and status (labels are static strings: this runs
/// on every request).
pub async fn record_metrics(request: Request, next: Next) -> Response {
    let route = route_label(request.extensions().get::<MatchedPath>());
    let method: &'static str = match *request.method() {
        axum::http::Method::GET => "GET",
        axum::http::Method::HEAD => "HEAD",
        axum::http::Method::OPTIONS => "OPTIONS",
        _ => "other",
    };
    let started = Instant::now();
    let response = next.run(request).await;
    let (count, duration) = request_metrics(route, method, status_label(response.status()));
    count.increment(1);
    duration.record(started.elapsed().as_secs_f64());
    response
}

/// The span for one request: its id, method and path (never the query's secrets: the API
/// has none, and the admin port has no query).
pub fn request_span<B>(request: &axum::http::Request<B>) -> tracing::Span {
    let id = request.headers().get(REQUEST_ID_HEADER).and_then(|v| v.to_str().ok()).unwrap_or("-");
    tracing::info_span!("request", request_id = %id, method = %request.method(), path = %request.uri().path())
}
