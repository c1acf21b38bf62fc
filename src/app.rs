//! Wiring: the application state and router shared by `main` and the tests.

use std::sync::Arc;

use crate::http::{AppState, rendered};
use crate::render::DocumentMeta;
use crate::snapshot::{FillConfig, PriceService};
use crate::source::client::{ClientLimits, SourceClient};
use crate::store::Store;
use crate::time::SharedClock;

/// Memory for rendered documents (all encodings): plenty for every common selection.
pub const RENDER_CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// Everything needed to build the public API.
pub struct AppConfig {
    pub source_url: url::Url,
    pub limits: ClientLimits,
    pub store: Arc<dyn Store>,
    pub fill: FillConfig,
    pub clock: SharedClock,
    pub meta: DocumentMeta,
    pub public_origin: Option<url::Url>,
    /// Days of price history kept (`--history-days`).
    pub history_days: i32,
}

/// Build the application state.
pub fn build_state(config: AppConfig) -> anyhow::Result<AppState> {
    let client = SourceClient::new(config.source_url, config.limits)?;
    let history = crate::snapshot::History { store: config.store.clone(), days: config.history_days };
    let prices = PriceService::new(client, config.store.clone(), Some(history), config.clock, config.fill);
    Ok(AppState {
        prices,
        rendered: rendered::new_cache(RENDER_CACHE_BYTES),
        meta: Arc::new(config.meta),
        enrichment: Some(config.store),
        public_origin: config.public_origin,
        front: Default::default(),
    })
}

/// The public router for a state.
pub fn build_router(state: AppState) -> axum::Router {
    crate::http::router(state)
}

/// The public port as served: the router under the request limits of `server::harden`, with
/// the front cache's hits answered before those limits (a finished document needs no timeout
/// or concurrency slot: it is a lookup and a copy of headers).
pub fn public_router(state: AppState, limits: &crate::server::ServerLimits) -> axum::Router {
    let shared = Arc::new(state.clone());
    crate::server::harden(build_router(state), limits)
        .layer(axum::middleware::from_fn_with_state(shared, front_first))
}

async fn front_first(
    axum::extract::State(state): axum::extract::State<Arc<AppState>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let (parts, body) = request.into_parts();
    if let Some(hit) = crate::http::front_first(&state, &parts) {
        return hit;
    }
    next.run(axum::extract::Request::from_parts(parts, body)).await
}
