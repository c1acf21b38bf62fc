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
use tracing::Instrument;
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Header carrying the request id, both ways.
pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// Lines the log writer may hold before a request waits for it: well above any burst, so
/// requests never wait on the disk, and bounded, so a stuck disk cannot eat the memory.
const LOG_QUEUE_LINES: usize = 64 * 1024;

/// Start logging. Lines are written to stderr by a background thread through a buffer that
/// is flushed whenever no line is waiting, so a request pays for formatting its line, not
/// for a write system call (nginx's buffered access log does the same). No line is dropped:
/// when the queue is full, the request waits. Keep the returned guard alive until exit: it
/// writes what is still queued when dropped. Safe to call more than once (later calls
/// install nothing and return `None`).
pub fn init_logging(format: Option<LogFormat>) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let format =
        format.unwrap_or(if std::io::stderr().is_terminal() { LogFormat::Pretty } else { LogFormat::Json });
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .thread_name("wafuel-log")
        .finish(std::io::BufWriter::with_capacity(64 * 1024, std::io::stderr()));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer);
    let installed = match format {
        LogFormat::Json => {
            builder.fmt_fields(crate::json_log::JsonFields).event_format(crate::json_log::JsonLine).try_init()
        }
        LogFormat::Pretty => builder.compact().try_init(),
    };
    installed.ok().map(|()| guard)
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

/// A new request id: a per-process random prefix and a counter, cheap and unique enough to
/// join the log lines of one request.
fn new_request_id() -> HeaderValue {
    static PREFIX: OnceLock<u32> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let prefix = *PREFIX.get_or_init(rand::random);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut text = [0u8; 32];
    let mut cursor = std::io::Cursor::new(&mut text[..]);
    // 8 hex digits, a dash and at most 20 digits always fit in 32 bytes.
    let _ = std::io::Write::write_fmt(&mut cursor, format_args!("{prefix:08x}-{n}"));
    let len = usize::try_from(cursor.position()).unwrap_or(0);
    HeaderValue::from_bytes(&text[..len]).unwrap_or(HeaderValue::from_static("-"))
}

/// A route label without allocating: the routes this process serves, else "other".
fn route_label(path: Option<&MatchedPath>) -> &'static str {
    match path.map(MatchedPath::as_str) {
        Some("/") => "/",
        Some("/v1") => "/v1",
        Some("/legacy") => "/legacy",
        Some("/v1/stations") => "/v1/stations",
        Some("/v1/stations/{station_id}") => "/v1/stations/{station_id}",
        Some("/v1/stations/{station_id}/history") => "/v1/stations/{station_id}/history",
        Some("/v1/stats") => "/v1/stats",
        Some("/static/image/brand/{filename}") => "/static/image/brand/{filename}",
        Some("/explore") => "/explore",
        Some("/explore/{file}") => "/explore/{file}",
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

/// Everything recorded about each request, in one layer: its id (the client's
/// `X-Request-Id`, else a new one, echoed on the response), a span that the handler's own log
/// lines carry, one log line when it is answered, and its count and duration by route,
/// method and status (labels are static strings: this runs on every request).
pub async fn observe(mut request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = route_label(request.extensions().get::<MatchedPath>());
    let method: &'static str = match *request.method() {
        axum::http::Method::GET => "GET",
        axum::http::Method::HEAD => "HEAD",
        axum::http::Method::OPTIONS => "OPTIONS",
        _ => "other",
    };
    let id = match request.headers().get(REQUEST_ID_HEADER) {
        Some(given) => given.clone(),
        None => {
            let made = new_request_id();
            request.headers_mut().insert(REQUEST_ID_HEADER, made.clone());
            made
        }
    };
    let span = tracing::info_span!(
        "request",
        request_id = id.to_str().unwrap_or("-"),
        method = request.method().as_str(),
        path = request.uri().path()
    );
    let mut response = next.run(request).instrument(span.clone()).await;
    let elapsed = started.elapsed();
    let status = response.status();
    let (count, duration) = request_metrics(route, method, status_label(status));
    count.increment(1);
    duration.record(elapsed.as_secs_f64());
    span.in_scope(|| {
        let latency = format_args!("{} ms", elapsed.as_millis());
        if status.is_server_error() {
            tracing::warn!(latency = %latency, status = status.as_u16(), "finished processing request");
        } else {
            tracing::info!(latency = %latency, status = status.as_u16(), "finished processing request");
        }
    });
    response.headers_mut().entry(REQUEST_ID_HEADER).or_insert(id);
    response
}
