//! Listening, middleware common to every listener, graceful shutdown, and the admin port.

mod event_connection;
mod parse_errors;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use tokio::net::TcpListener;

use crate::telemetry;

/// Request ids, a log line per request inside its span, and metrics by route: one layer.
fn with_observability(router: Router) -> Router {
    router.layer(axum::middleware::from_fn(telemetry::observe))
}

/// An answer given before the router, with its route label, or `None` to route the request.
pub type Shortcut = Arc<
    dyn Fn(&axum::http::request::Parts) -> Option<(&'static str, axum::response::Response)> + Send + Sync,
>;

/// What a listener serves: its router (layers included) and, optionally, a shortcut tried
/// first for every request. The shortcut is for answers that are a lookup (the front cache):
/// below the router and its layers, it skips route matching, boxed middleware futures and the
/// request's span, which together cost more than the lookup. `telemetry::answered` records
/// its answers as `observe` records the router's.
#[derive(Clone)]
pub struct Site {
    pub router: Router,
    pub shortcut: Option<Shortcut>,
}

impl From<Router> for Site {
    fn from(router: Router) -> Self {
        Self { router, shortcut: None }
    }
}

/// One connection's hyper service over a [`Site`].
#[derive(Clone)]
struct SiteService(Site);

/// Over any request body: hyper's, and the empty one of a request read by `event_connection`.
impl<B> hyper::service::Service<axum::http::Request<B>> for SiteService
where
    B: axum::body::HttpBody<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = futures::future::Either<
        std::future::Ready<Result<Self::Response, Self::Error>>,
        axum::routing::future::RouteFuture<std::convert::Infallible>,
    >;

    fn call(&self, request: axum::http::Request<B>) -> Self::Future {
        use tower::Service as _;
        let started = std::time::Instant::now();
        let request = match &self.0.shortcut {
            Some(shortcut) => {
                let (parts, body) = request.into_parts();
                if let Some((route, mut response)) = shortcut(&parts) {
                    telemetry::answered(started, route, &parts, &mut response);
                    return futures::future::Either::Left(std::future::ready(Ok(response)));
                }
                axum::http::Request::from_parts(parts, body)
            }
            None => request,
        };
        // A router is always ready (axum's `Router::poll_ready`), so no readiness wait.
        futures::future::Either::Right(self.0.router.clone().call(request))
    }
}

/// Whether the process can serve: the admin port asks this for `/readyz`.
pub trait Readiness: Send + Sync + 'static {
    fn ready(&self) -> impl Future<Output = Result<(), String>> + Send;
}

/// Ready while the snapshot store answers.
pub struct StoreReadiness(pub Arc<dyn wafuel_store::SnapshotStore>);

impl Readiness for StoreReadiness {
    async fn ready(&self) -> Result<(), String> {
        match tokio::time::timeout(std::time::Duration::from_secs(2), self.0.ping()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("snapshot store did not answer within 2 s".into()),
        }
    }
}

/// The admin router: `/healthz`, `/readyz`, `/metrics`.
pub fn admin_router<R: Readiness>(readiness: Arc<R>) -> Router {
    let handle = telemetry::metrics_handle();
    Router::new()
        .route(wafuel_web::http::routes::HEALTHZ, get(|| async { "ok\n" }))
        .route(
            wafuel_web::http::routes::READYZ,
            get(move || {
                let readiness = readiness.clone();
                async move {
                    match readiness.ready().await {
                        Ok(()) => (StatusCode::OK, "ready\n".to_string()),
                        Err(why) => (StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {why}\n")),
                    }
                }
            }),
        )
        .route(
            wafuel_web::http::routes::METRICS,
            get(move || {
                let body = handle.render();
                async move { ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body).into_response() }
            }),
        )
}

/// Resolves when SIGINT or SIGTERM arrives.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    // The listeners are registered now, when this is called, not when the future is first
    // polled: a signal that arrives while the caller is busy before its first await (the
    // demo seeding its store) is kept for the future, never lost to a handler with no
    // listener.
    #[cfg(unix)]
    let (mut interrupt, mut terminate) = {
        use tokio::signal::unix::{SignalKind, signal};
        (signal(SignalKind::interrupt()).ok(), signal(SignalKind::terminate()).ok())
    };
    async move {
        #[cfg(unix)]
        {
            let interrupted = async {
                match interrupt.as_mut() {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            let terminated = async {
                match terminate.as_mut() {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = interrupted => {}
                () = terminated => {}
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        tracing::info!("shutdown signal received, draining in-flight requests");
    }
}

/// Bind a listener, naming the address in the error.
pub async fn bind(addr: SocketAddr) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr).await.map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))
}

/// Limits that keep slow, large or too many requests from hurting everyone else.
#[derive(Debug, Clone)]
pub struct ServerLimits {
    /// Requests in flight at once; more are shed at once with 503 rather than queued.
    pub max_concurrency: usize,
    /// Whole request, from headers read to response ready.
    pub request_timeout: Duration,
    /// Time a client has to send its request headers.
    pub header_read_timeout: Duration,
    /// Largest request body ignored (no request body is read; a larger one is refused).
    pub max_body_bytes: usize,
    /// Longest request target.
    pub max_uri_bytes: usize,
    /// Buffer for the request line and headers together.
    pub max_header_bytes: usize,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            max_concurrency: 4096,
            request_timeout: Duration::from_secs(30),
            header_read_timeout: Duration::from_secs(10),
            max_body_bytes: 64 * 1024,
            // Well above the longest query the API takes (8,192 characters, a route's), so an
            // over-long query is the API's own 400 `invalid_query`; past this, 414.
            max_uri_bytes: 16 * 1024,
            // The request line (up to the URI bound) and headers together.
            max_header_bytes: 32 * 1024,
        }
    }
}

/// The public port's protections behind the router: a whole-request timeout and a
/// concurrency limit that sheds load with a quick 503. The rules on the request itself (its
/// target's length, a body, `Host`) come before the router and the front cache alike
/// (`http::gate`, called by `app::public_site`).
pub fn harden(router: Router, limits: &ServerLimits) -> Router {
    router
        .layer(
            tower::ServiceBuilder::new()
                .layer(axum::error_handling::HandleErrorLayer::new(overloaded))
                .load_shed()
                .concurrency_limit(limits.max_concurrency),
        )
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            limits.request_timeout,
        ))
        // The timeout's own 408 carries no headers: every error is `no-store`.
        .layer(axum::middleware::map_response(|mut response: axum::response::Response| async move {
            if response.status() == StatusCode::REQUEST_TIMEOUT {
                wafuel_service::cache_policy::CachePolicy::NoStore.write_over_library(response.headers_mut());
            }
            response
        }))
}

/// The answer when the concurrency limit is reached.
async fn overloaded(_: tower::BoxError) -> axum::response::Response {
    metrics::counter!("wafuel_http_shed_total").increment(1);
    wafuel_web::http::errors::ApiError::overloaded().into_response()
}

/// Serve sites on their listeners until `shutdown` resolves (a signal, for the binary), then
/// call `on_signal` (which ends long-lived answers such as event streams, so draining can
/// finish), drain and return.
pub async fn serve_until(
    listeners: Vec<(TcpListener, Site)>,
    limits: ServerLimits,
    shutdown: impl Future<Output = ()>,
    on_signal: impl FnOnce(),
) -> anyhow::Result<()> {
    let (tx, _) = tokio::sync::broadcast::channel::<()>(1);
    let mut tasks = Vec::new();
    for (listener, site) in listeners {
        let mut rx = tx.subscribe();
        let app = Site { router: with_observability(site.router), shortcut: site.shortcut };
        let limits = limits.clone();
        tasks.push(tokio::spawn(async move {
            serve_connections(listener, app, &limits, async move {
                let _ = rx.recv().await;
            })
            .await
        }));
    }
    shutdown.await;
    on_signal();
    let _ = tx.send(());
    for task in tasks {
        task.await?;
    }
    tracing::info!("stopped");
    Ok(())
}

/// Accept connections and serve HTTP/1.1 on each with header size and read-time limits;
/// on `shutdown`, stop accepting and let in-flight requests finish (at most 30 s).
async fn serve_connections(
    listener: TcpListener,
    app: impl Into<Site>,
    limits: &ServerLimits,
    shutdown: impl Future<Output = ()>,
) {
    use hyper_util::rt::TokioIo;
    let app = SiteService(app.into());

    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    // Connections not (or not yet) served by hyper: told when draining starts, and waited for.
    let (draining_tx, _) = tokio::sync::watch::channel(false);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(limits.max_header_bytes.max(8192))
        .keep_alive(true);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of file descriptors and the like: back off instead of spinning.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let mut builder = builder.clone();
                builder.timer(HeaderTimer::default());
                let watcher = graceful.watcher();
                let mut draining = draining_tx.subscribe();
                let app = app.clone();
                let (header_read, max_head) = (limits.header_read_timeout, limits.max_header_bytes);
                tokio::spawn(async move {
                    use hyper::service::Service as _;
                    let opening = tokio::select! {
                        opening = event_connection::open(stream, wafuel_web::http::paths::EVENTS, header_read, max_head) => opening,
                        // Nothing asked yet: close, as hyper closes an idle connection.
                        _ = draining.changed() => return,
                    };
                    let io = match opening {
                        event_connection::Opening::Hyper(io) => io,
                        event_connection::Opening::Closed => return,
                        event_connection::Opening::Here(stream, request) => {
                            // `draining` is held until the answer ends: the drain waits for it
                            // (the stream itself ends when the server's `on_signal` closes it).
                            let Ok(response) = app.call(*request).await;
                            event_connection::answer(stream, response).await;
                            return;
                        }
                    };
                    drop(draining);
                    if let Err(e) = watcher.watch(builder.serve_connection(TokioIo::new(io), app)).await {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                });
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    let _ = draining_tx.send(true);
    let drained = async {
        tokio::join!(graceful.shutdown(), draining_tx.closed());
    };
    tokio::select! {
        () = drained => {}
        () = tokio::time::sleep(Duration::from_secs(30)) => tracing::warn!("connections still open after 30 s; closing"),
    }
}

/// One connection's header-read timer (hyper's only use of a timer on a server connection).
///
/// hyper asks for a new sleep for every request head, and with tokio's timer that is a timer
/// registered and removed per request: 8 % of a cached answer's throughput, measured with
/// `examples/hyper_floor`. Here a connection keeps one tokio sleep and only moves the deadline
/// it is checked against: deadlines only move later (each head's is "now + timeout"), so the
/// sleep fires early at most once per timeout period, and is re-armed to the current
/// deadline then.
#[derive(Clone, Default)]
struct HeaderTimer(Arc<std::sync::Mutex<Option<HeaderDeadline>>>);

struct HeaderDeadline {
    /// When the head being read must be complete.
    deadline: std::time::Instant,
    /// Fires at or before `deadline`.
    sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
}

impl hyper::rt::Timer for HeaderTimer {
    fn sleep(&self, duration: Duration) -> std::pin::Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until(std::time::Instant::now() + duration)
    }

    fn sleep_until(&self, deadline: std::time::Instant) -> std::pin::Pin<Box<dyn hyper::rt::Sleep>> {
        let mut slot = wafuel_service::sync::lock(&self.0);
        match slot.as_mut() {
            Some(current) => current.deadline = deadline,
            None => {
                let sleep = Box::pin(tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)));
                *slot = Some(HeaderDeadline { deadline, sleep });
            }
        }
        Box::pin(HeaderSleep(self.0.clone()))
    }
}

/// The sleep hyper polls while a head is incomplete: ready once the connection's current
/// deadline has passed.
struct HeaderSleep(Arc<std::sync::Mutex<Option<HeaderDeadline>>>);

impl Future for HeaderSleep {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        use std::task::Poll;
        let mut slot = wafuel_service::sync::lock(&self.0);
        let Some(current) = slot.as_mut() else { return Poll::Ready(()) };
        loop {
            if std::time::Instant::now() >= current.deadline {
                return Poll::Ready(());
            }
            let deadline = tokio::time::Instant::from_std(current.deadline);
            if current.sleep.deadline() > deadline {
                // Never later than the deadline (not expected: deadlines only move later).
                current.sleep.as_mut().reset(deadline);
            }
            match current.sleep.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                // Fired at an earlier deadline, since moved: wait for the current one.
                Poll::Ready(()) => current.sleep.as_mut().reset(deadline),
            }
        }
    }
}

impl hyper::rt::Sleep for HeaderSleep {}
