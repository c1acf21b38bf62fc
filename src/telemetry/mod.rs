//! Logs (tracing, pretty or JSON), request ids, and Prometheus metrics.

pub(crate) mod json_log;
pub(crate) mod log_sink;

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
use wafuel_web::http::routes::{ADMIN, PUBLIC_PATHS as PUBLIC};

use crate::telemetry::log_sink::{LogSink, SinkGuard};

/// Header carrying the request id, both ways.
pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// The sink of the installed JSON log, through which the fast path writes its request lines
/// directly (`answered`); unset under the pretty format and in tests.
static JSON_SINK: OnceLock<LogSink> = OnceLock::new();

/// How log lines are written (`--log-format`): one line of JSON each (the default when
/// stderr is not a terminal, except for `demo`: `Cli::log_format`), or compact text for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Pretty,
    Json,
}

/// Start logging. Lines are written to stderr in batches by a background thread
/// ([`LogSink`]), so a request pays for formatting its line, not for a system call or a
/// thread wake-up (nginx's buffered access log does the same). No line is dropped. Keep the
/// returned guard alive until exit: it writes what is still buffered when dropped. Safe to
/// call more than once (later calls install nothing and return `None`).
pub fn init_logging(format: Option<LogFormat>) -> Option<SinkGuard> {
    let format =
        format.unwrap_or(if std::io::stderr().is_terminal() { LogFormat::Pretty } else { LogFormat::Json });
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let (sink, guard) = LogSink::spawn(std::io::stderr()).ok()?;
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(sink.clone());
    let installed = match format {
        LogFormat::Json => builder
            .fmt_fields(crate::telemetry::json_log::JsonFields)
            .event_format(crate::telemetry::json_log::JsonLine)
            .try_init(),
        // Colour only for a terminal: a demo's text log written to a file or a pipe stays
        // plain text (`wafuel demo 2> demo.log`).
        LogFormat::Pretty => builder.compact().with_ansi(std::io::stderr().is_terminal()).try_init(),
    };
    installed.ok()?;
    if format == LogFormat::Json {
        let _ = JSON_SINK.set(sink);
    }
    Some(guard)
}

/// How often histogram samples are folded into their buckets. The recorder keeps every
/// sample until then: without this, an instance nobody scrapes grows by every request.
const METRICS_UPKEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// The process-wide Prometheus recorder, installed on first use, with a thread of its own
/// that folds histogram samples into buckets.
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
            let upkeep = handle.clone();
            let spawned = std::thread::Builder::new().name("wafuel-metrics".into()).spawn(move || {
                loop {
                    std::thread::sleep(METRICS_UPKEEP_EVERY);
                    upkeep.run_upkeep();
                }
            });
            if let Err(e) = spawned {
                tracing::warn!(error = %e, "no metrics upkeep thread: histograms are folded only when scraped");
            }
            handle
        })
        .clone()
}

/// A new request id: a per-process random prefix and a counter, cheap and unique enough to
/// join the log lines of one request (`4eea2259-3170367`). Made for every answer to a client
/// that sends none, so written without the formatting machinery.
fn new_request_id() -> HeaderValue {
    /// Eight hex digits and a dash, formatted once per process.
    static PREFIX: OnceLock<String> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let prefix = PREFIX.get_or_init(|| format!("{:08x}-", rand::random::<u32>())).as_bytes();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut number = itoa::Buffer::new();
    let digits = number.format(n).as_bytes();
    // 9 bytes of prefix and at most 20 digits.
    let mut text = [0u8; 29];
    let len = prefix.len() + digits.len();
    text[..prefix.len()].copy_from_slice(prefix);
    text[prefix.len()..len].copy_from_slice(digits);
    HeaderValue::from_bytes(&text[..len]).unwrap_or(HeaderValue::from_static("-"))
}

/// Route labels: the router's public and admin path patterns (`http::routes`), then "other"
/// (a path of neither) and "unmatched" (no route).
const ROUTE_COUNT: usize = PUBLIC.len() + ADMIN.len() + 2;

fn route_label(index: usize) -> &'static str {
    PUBLIC.iter().chain(ADMIN.iter()).copied().chain(["other", "unmatched"]).nth(index).unwrap_or("unmatched")
}

const METHODS: [&str; 4] = ["GET", "HEAD", "OPTIONS", "other"];
/// The statuses this service answers with, then "other".
const STATUSES: [u16; 16] = [200, 204, 302, 304, 400, 404, 405, 406, 408, 413, 414, 415, 500, 502, 503, 504];
const STATUS_LABELS: [&str; 17] = [
    "200", "204", "302", "304", "400", "404", "405", "406", "408", "413", "414", "415", "500", "502", "503",
    "504", "other",
];

/// A route label's place among the labels ("other" for a path that is not a route;
/// "unmatched", also by name, for a request no route was matched for).
fn route_index(route: Option<&str>) -> usize {
    match route {
        Some("unmatched") | None => ROUTE_COUNT - 1,
        Some(path) => {
            PUBLIC.iter().chain(ADMIN.iter()).position(|r| *r == path).unwrap_or(PUBLIC.len() + ADMIN.len())
        }
    }
}

fn method_index(method: &axum::http::Method) -> usize {
    match *method {
        axum::http::Method::GET => 0,
        axum::http::Method::HEAD => 1,
        axum::http::Method::OPTIONS => 2,
        _ => 3,
    }
}

fn status_index(status: axum::http::StatusCode) -> usize {
    STATUSES.iter().position(|s| *s == status.as_u16()).unwrap_or(STATUSES.len())
}

type Handles = (metrics::Counter, metrics::Histogram);
const HANDLE_SLOTS: usize = ROUTE_COUNT * METHODS.len() * STATUS_LABELS.len();

/// The counter and histogram of one (route, method, status), registered on first use and
/// then found by index without a lock: building and hashing metric keys on every request
/// costs more than serving a cached document.
fn request_metrics(route: usize, method: usize, status: usize) -> &'static Handles {
    static HANDLES: [OnceLock<Handles>; HANDLE_SLOTS] = [const { OnceLock::new() }; HANDLE_SLOTS];
    let (route, method, status) =
        (route.min(ROUTE_COUNT - 1), method.min(METHODS.len() - 1), status.min(STATUS_LABELS.len() - 1));
    HANDLES[(route * METHODS.len() + method) * STATUS_LABELS.len() + status].get_or_init(|| {
        // Handles are bound to the recorder installed when they are made: install ours first,
        // or a request served before `/metrics` was set up would be counted nowhere, forever.
        drop(metrics_handle());
        let labels =
            [("route", route_label(route)), ("method", METHODS[method]), ("status", STATUS_LABELS[status])];
        (
            metrics::counter!("wafuel_http_requests_total", &labels),
            metrics::histogram!("wafuel_http_request_duration_seconds", &labels),
        )
    })
}

/// Longest client request id echoed back and logged.
pub const MAX_REQUEST_ID_LEN: usize = 128;

/// The client's request id when it is one (a single value of 1 to [`MAX_REQUEST_ID_LEN`]
/// visible ASCII characters), else a new one. Anything else would be echoed on every answer
/// and written into every log line verbatim: unbounded, and with bytes no log reader expects.
fn request_id(headers: &axum::http::HeaderMap) -> (HeaderValue, bool) {
    let mut given = headers.get_all(REQUEST_ID_HEADER).iter();
    match (given.next(), given.next()) {
        (Some(id), None) if acceptable_request_id(id.as_bytes()) => (id.clone(), false),
        _ => (new_request_id(), true),
    }
}

fn acceptable_request_id(id: &[u8]) -> bool {
    (1..=MAX_REQUEST_ID_LEN).contains(&id.len()) && id.iter().all(|b| b.is_ascii_graphic())
}

/// The span a request's log lines carry.
fn request_span(id: &HeaderValue, method: &axum::http::Method, path: &str) -> tracing::Span {
    tracing::info_span!(
        "request",
        request_id = id.to_str().unwrap_or("-"),
        method = method.as_str(),
        path = path
    )
}

/// Count and time the answer; its time taken.
fn count(
    started: Instant,
    route: usize,
    method: usize,
    status: axum::http::StatusCode,
) -> std::time::Duration {
    let elapsed = started.elapsed();
    let (count, duration) = request_metrics(route, method, status_index(status));
    count.increment(1);
    duration.record(elapsed.as_secs_f64());
    elapsed
}

/// Count and time the answer, and log it inside `span`.
fn record(
    started: Instant,
    route: usize,
    method: usize,
    status: axum::http::StatusCode,
    span: &tracing::Span,
) {
    let elapsed = count(started, route, method, status);
    span.in_scope(|| {
        let latency = format_args!("{} ms", elapsed.as_millis());
        if status.is_server_error() {
            tracing::warn!(latency = %latency, status = status.as_u16(), "finished processing request");
        } else {
            tracing::info!(latency = %latency, status = status.as_u16(), "finished processing request");
        }
    });
}

/// Everything recorded about each request, in one layer: its id (the client's
/// `X-Request-Id`, else a new one, echoed on the response), a span that the handler's own log
/// lines carry, one log line when it is answered, and its count and duration by route,
/// method and status (labels are static strings: this runs on every request).
pub async fn observe(mut request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = route_index(request.extensions().get::<MatchedPath>().map(MatchedPath::as_str));
    let method = method_index(request.method());
    let (id, made) = request_id(request.headers());
    if made {
        request.headers_mut().insert(REQUEST_ID_HEADER, id.clone());
    }
    let span = request_span(&id, request.method(), request.uri().path());
    let mut response = next.run(request).instrument(span.clone()).await;
    record(started, route, method, response.status(), &span);
    response.headers_mut().entry(REQUEST_ID_HEADER).or_insert(id);
    response
}

/// What `observe` records, for an answer given before the router (`server::Site`'s
/// shortcut): the same id, metrics and log line. No handler runs, so no span is needed for
/// other lines: under the JSON log the line is written straight to the log sink, in the
/// shape the span and event would give it (`json_log::request_line`).
pub fn answered<B>(
    started: Instant,
    route: &'static str,
    request: &axum::http::request::Parts,
    response: &mut axum::http::Response<B>,
) {
    let (id, _) = request_id(&request.headers);
    let status = response.status();
    let route_at = route_index(Some(route));
    let method = method_index(&request.method);
    match JSON_SINK.get() {
        Some(sink) if !status.is_server_error() && tracing::enabled!(tracing::Level::INFO) => {
            let elapsed = count(started, route_at, method, status);
            let fields = crate::telemetry::json_log::RequestLine {
                request_id: id.to_str().unwrap_or("-"),
                method: request.method.as_str(),
                path: request.uri.path(),
                status: status.as_u16(),
                latency_ms: elapsed.as_millis(),
            };
            sink.append_staged(|line| crate::telemetry::json_log::request_line(line, LOG_TARGET, &fields));
        }
        _ => {
            record(started, route_at, method, status, &request_span(&id, &request.method, request.uri.path()))
        }
    }
    response.headers_mut().entry(REQUEST_ID_HEADER).or_insert(id);
}

/// The target of this module's events (what `record`'s lines carry).
const LOG_TARGET: &str = module_path!();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_labels_by_name() {
        let label = |route: Option<&str>| route_label(route_index(route));
        assert_eq!(label(Some(wafuel_web::http::paths::V1)), "/v1");
        assert_eq!(label(Some(wafuel_web::http::gate::REFUSED_ROUTE)), "unmatched", "refused before routing");
        assert_eq!(label(None), "unmatched");
        assert_eq!(label(Some("/nowhere")), "other");
    }

    fn without_timestamp(line: &str) -> serde_json::Value {
        let mut value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let stamp = value.as_object_mut().and_then(|o| o.remove("timestamp"));
        let stamp: jiff::Timestamp =
            stamp.and_then(|s| s.as_str()?.parse().ok()).expect("RFC 3339 timestamp");
        assert!(stamp > jiff::Timestamp::UNIX_EPOCH);
        value
    }

    /// The fast path's line is the line `observe` logs through its span, field for field:
    /// for text that needs escaping and text that is written whole.
    #[test]
    fn a_direct_request_line_is_the_line_the_span_gives() {
        for (id, path) in [("client \"7\"", "/v1/stations/ab\\cd"), ("4eea2259-3170367", "/v1")] {
            let header = HeaderValue::from_str(id).expect("header");
            let started = Instant::now();
            let spanned = crate::telemetry::json_log::tests::logged(|| {
                record(
                    started,
                    1,
                    0,
                    axum::http::StatusCode::NOT_MODIFIED,
                    &request_span(&header, &axum::http::Method::GET, path),
                );
            });
            // The latency the span's line measured (a second reading could fall in the next ms).
            let latency = without_timestamp(spanned.trim_end())["latency"].as_str().map(str::to_string);
            let latency_ms =
                latency.and_then(|l| l.strip_suffix(" ms")?.parse().ok()).expect("latency in ms");
            let mut direct = String::new();
            let fields = crate::telemetry::json_log::RequestLine {
                request_id: id,
                method: "GET",
                path,
                status: 304,
                latency_ms,
            };
            crate::telemetry::json_log::request_line(&mut direct, LOG_TARGET, &fields).expect("written");
            assert!(direct.ends_with('\n') && direct.matches('\n').count() == 1, "one line: {direct}");
            assert_eq!(without_timestamp(&direct), without_timestamp(spanned.trim_end()));
            // Same order of keys, too (serde_json's map sorts them, so compare the text).
            let keys = |line: &str| -> Vec<String> {
                line.split("\":").filter_map(|part| part.rsplit('"').next().map(str::to_string)).collect()
            };
            assert_eq!(keys(&direct), keys(&spanned));
        }
    }

    #[test]
    fn made_request_ids_are_a_process_prefix_and_a_rising_count() {
        let (first, second) = (new_request_id(), new_request_id());
        let parts = |id: &HeaderValue| -> (String, u64) {
            let text = id.to_str().expect("ascii");
            let (prefix, count) = text.split_once('-').expect("a dash");
            assert_eq!(prefix.len(), 8, "{text}");
            assert!(prefix.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()), "{text}");
            (prefix.to_string(), count.parse().expect("a count"))
        };
        let ((prefix, a), (same_prefix, b)) = (parts(&first), parts(&second));
        assert_eq!(prefix, same_prefix);
        assert!(b > a && a > 0, "{a} then {b}");
        assert!(acceptable_request_id(first.as_bytes()), "a made id passes the check a client's does");
    }

    #[test]
    fn route_method_and_status_labels_are_indexed_exactly() {
        for (i, route) in PUBLIC.iter().chain(ADMIN.iter()).enumerate() {
            assert_eq!(route_index(Some(route)), i);
            assert_eq!(route_label(i), *route);
        }
        assert_eq!(route_label(route_index(Some("/v1/elsewhere"))), "other");
        assert_eq!(route_label(route_index(None)), "unmatched");
        assert_eq!(route_index(None), ROUTE_COUNT - 1);
        assert_eq!(METHODS[method_index(&axum::http::Method::HEAD)], "HEAD");
        assert_eq!(METHODS[method_index(&axum::http::Method::POST)], "other");
        for status in STATUSES {
            let code = axum::http::StatusCode::from_u16(status).expect("status");
            assert_eq!(STATUS_LABELS[status_index(code)], status.to_string());
        }
        assert_eq!(STATUS_LABELS[status_index(axum::http::StatusCode::IM_A_TEAPOT)], "other");
    }
}
