//! Listening, middleware common to every listener, graceful shutdown, and the admin port.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use tokio::net::TcpListener;
use tower_http::request_id::{PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

use crate::telemetry::{self, CounterRequestId, REQUEST_ID_HEADER};

/// Request ids, a log line per request inside its span, and metrics by route.
pub fn with_observability(router: Router) -> Router {
    router
        .layer(axum::middleware::from_fn(telemetry::record_metrics))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(telemetry::request_span)
                .on_request(())
                .on_response(DefaultOnResponse::new().level(Level::INFO)),
        )
        .layer(PropagateRequestIdLayer::new(REQUEST_ID_HEADER))
        .layer(SetRequestIdLayer::new(REQUEST_ID_HEADER, CounterRequestId::default()))
}

/// Whether the process can serve: the admin port asks this for `/readyz`.
pub trait Readiness: Send + Sync + 'static {
    fn ready(&self) -> impl Future<Output = Result<(), String>> + Send;
}

/// Ready as long as the process runs (until a store exists to check).
#[derive(Debug, Clone, Copy)]
pub struct AlwaysReady;

impl Readiness for AlwaysReady {
    async fn ready(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Ready while the snapshot store answers.
pub struct StoreReadiness(pub Arc<dyn crate::store::SnapshotStore>);

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
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/readyz",
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
            "/metrics",
            get(move || {
                let body = handle.render();
                async move { ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body).into_response() }
            }),
        )
}

/// Resolves when SIGINT or SIGTERM arrives.
pub async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
    tracing::info!("shutdown signal received, draining in-flight requests");
}

/// Bind a listener, naming the address in the error.
pub async fn bind(addr: SocketAddr) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr).await.map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))
}

/// Serve routers on their listeners until a shutdown signal, then drain and return.
pub async fn serve_until_signal(listeners: Vec<(TcpListener, Router)>) -> anyhow::Result<()> {
    let (tx, _) = tokio::sync::broadcast::channel::<()>(1);
    let mut tasks = Vec::new();
    for (listener, router) in listeners {
        let mut rx = tx.subscribe();
        let app = with_observability(router);
        tasks.push(tokio::spawn(async move {
            axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
                .with_graceful_shutdown(async move {
                    let _ = rx.recv().await;
                })
                .await
        }));
    }
    shutdown_signal().await;
    let _ = tx.send(());
    for task in tasks {
        task.await??;
    }
    tracing::info!("stopped");
    Ok(())
}
