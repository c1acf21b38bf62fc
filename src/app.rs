//! Wiring: the application state and router shared by `main` and the tests.

use std::sync::Arc;

use crate::catalog::events::EventHub;
use crate::catalog::{Catalog, Profiles};
use crate::http::{AppState, rendered};
use crate::model::documents::DocumentMeta;
use crate::snapshot::{FillConfig, PriceService};
use crate::source::client::{ClientLimits, SourceClient};
use crate::store::Store;
use crate::time::SharedClock;

/// The machine's clock: the one place the service reads the time of day (every other layer
/// is handed a [`SharedClock`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl crate::time::Clock for SystemClock {
    fn now(&self) -> jiff::Timestamp {
        jiff::Timestamp::now()
    }
}

/// Memory for rendered documents (all encodings): plenty for every common selection.
pub const RENDER_CACHE_BYTES: u64 = 32 * 1024 * 1024;

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
    /// Concurrent `/v1/events` streams (`--max-streams`).
    pub max_streams: usize,
}

impl AppConfig {
    /// The defaults over a source, a store and a clock: default limits, fill timings and
    /// document texts, no public origin, the default history retention.
    pub fn new(source_url: url::Url, store: Arc<dyn Store>, clock: SharedClock) -> Self {
        Self {
            source_url,
            limits: ClientLimits::default(),
            store,
            fill: FillConfig::default(),
            clock,
            meta: DocumentMeta::default(),
            public_origin: None,
            history_days: crate::snapshot::DEFAULT_HISTORY_DAYS,
            max_streams: crate::catalog::events::DEFAULT_MAX_STREAMS,
        }
    }
}

/// Build the application state.
pub fn build_state(config: AppConfig) -> anyhow::Result<AppState> {
    let client = SourceClient::new(config.source_url, config.limits)?;
    let history = crate::snapshot::History { store: config.store.clone(), days: config.history_days };
    let recheck = config.fill.recheck;
    let clock = config.clock.clone();
    let prices = PriceService::new(client, config.store.clone(), Some(history), config.clock, config.fill);
    let events = EventHub::new(config.store.clone(), prices.clone(), clock, config.max_streams);
    let enrichment: Arc<dyn crate::store::enrich::EnrichStore> = config.store;
    let profiles = Profiles::new(Some(enrichment), recheck);
    Ok(AppState {
        catalog: Arc::new(Catalog::new(prices, profiles, recheck)),
        rendered: rendered::new_cache(RENDER_CACHE_BYTES),
        meta: Arc::new(config.meta),
        public_origin: config.public_origin,
        front: Default::default(),
        events,
    })
}

/// The public router for a state.
pub fn build_router(state: AppState) -> axum::Router {
    crate::http::router(state)
}

/// The public port as `serve` and `demo` run it: the router behind its request limits, and
/// the request rules (`http::gate`) then the front cache tried before both (`http::routes::front_first`): a finished document needs no
/// routing, timeout or concurrency slot.
pub fn public_site(state: AppState, limits: &crate::server::ServerLimits) -> crate::server::Site {
    let shared = Arc::new(state.clone());
    let bounds =
        crate::http::gate::Bounds { body_bytes: limits.max_body_bytes, uri_bytes: limits.max_uri_bytes };
    crate::server::Site {
        router: crate::server::harden(build_router(state), limits),
        shortcut: Some(Arc::new(move |request| {
            // The request rules first, so a cached document never answers a refused request.
            if let Some(refused) = crate::http::gate::refuse(request, bounds) {
                return Some((crate::http::gate::REFUSED_ROUTE, refused));
            }
            crate::http::front_first(&shared, request)
        })),
    }
}
