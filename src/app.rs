//! The composition root: [`Application::build`] wires the state, binds the public and admin
//! ports and serves them exactly as `serve` and `demo` do; the integration tests build the
//! same application on port 0.

use std::sync::Arc;

use wafuel_domain::documents::DocumentMeta;
use wafuel_domain::time::SharedClock;
use wafuel_service::catalog::Catalog;
use wafuel_service::catalog::events::EventHub;
use wafuel_service::snapshot::{FillConfig, PriceService};
use wafuel_source::client::{ClientLimits, SourceClient};
use wafuel_store::Store;
use wafuel_web::http::{AppState, rendered};

/// The machine's clock: the one place the service reads the time of day (every other layer
/// is handed a [`SharedClock`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl wafuel_domain::time::Clock for SystemClock {
    fn now(&self) -> jiff::Timestamp {
        jiff::Timestamp::now()
    }
}

/// The machine's clock moved to start at another instant (`demo --now`): it runs on at the
/// machine's pace from there, so timers and jobs behave as they would at that time of day.
#[derive(Debug)]
pub struct ShiftedClock {
    /// Where the clock starts.
    start: jiff::Timestamp,
    /// Nanoseconds ahead of (or behind) the machine's clock.
    offset_ns: std::sync::atomic::AtomicI64,
}

impl ShiftedClock {
    pub fn starting_at(start: jiff::Timestamp) -> Self {
        let clock = Self { start, offset_ns: std::sync::atomic::AtomicI64::new(0) };
        clock.restart();
        clock
    }

    /// Read the start again now: the demo restarts its clock when it begins serving, so the
    /// time it took to seed its store does not eat into the minutes before a publish.
    pub fn restart(&self) {
        let ahead = self.start.duration_since(jiff::Timestamp::now()).as_nanos();
        let ahead = i64::try_from(ahead).unwrap_or(if ahead < 0 { i64::MIN } else { i64::MAX });
        self.offset_ns.store(ahead, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn start(&self) -> jiff::Timestamp {
        self.start
    }
}

impl wafuel_domain::time::Clock for ShiftedClock {
    fn now(&self) -> jiff::Timestamp {
        let now = jiff::Timestamp::now();
        let offset =
            jiff::SignedDuration::from_nanos(self.offset_ns.load(std::sync::atomic::Ordering::SeqCst));
        now.checked_add(offset).unwrap_or(now)
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
    /// The explorer's base map (`--map-tiles`, `--map-pmtiles`).
    pub base_map: wafuel_web::http::street_map::BaseMap,
    /// The archive `/map/tiles` serves (`--map-pmtiles`).
    pub map_archive: Option<Arc<wafuel_service::map_tiles::MapArchive>>,
    /// Whether this deployment runs the history backfill (what `/v1/status` and a route
    /// short of history say before any progress is recorded).
    pub backfill: bool,
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
            history_days: wafuel_service::snapshot::DEFAULT_HISTORY_DAYS,
            max_streams: wafuel_service::catalog::events::DEFAULT_MAX_STREAMS,
            base_map: Default::default(),
            map_archive: None,
            backfill: false,
        }
    }
}

/// Build the application state.
pub fn build_state(config: AppConfig) -> anyhow::Result<AppState> {
    let client = SourceClient::new(config.source_url, config.limits)?;
    let history =
        wafuel_service::snapshot::History { store: config.store.clone(), days: config.history_days };
    let recheck = config.fill.recheck;
    let clock = config.clock.clone();
    let prices = PriceService::new(client, config.store.clone(), history, config.clock, config.fill);
    let events = EventHub::new(config.store.clone(), prices.clone(), clock, config.max_streams);
    let catalog = Arc::new(Catalog::new(prices, config.store, recheck, config.backfill));
    events.prepare_for(&catalog);
    Ok(AppState {
        catalog,
        rendered: rendered::new_cache(RENDER_CACHE_BYTES),
        meta: Arc::new(config.meta),
        public_origin: config.public_origin,
        front: Default::default(),
        events,
        explorer: Arc::new(wafuel_web::http::explore_page::Explorer::new(&config.base_map)),
        map_archive: config.map_archive,
    })
}

/// The public router for a state.
pub fn build_router(state: AppState) -> axum::Router {
    wafuel_web::http::router(state)
}

/// The public port as `serve` and `demo` run it: the router behind its request limits, and
/// the request rules (`http::gate`) then the front cache tried before both (`http::routes::front_first`): a finished document needs no
/// routing, timeout or concurrency slot.
pub fn public_site(state: AppState, limits: &crate::server::ServerLimits) -> crate::server::Site {
    let shared = Arc::new(state.clone());
    let bounds =
        wafuel_web::http::gate::Bounds { body_bytes: limits.max_body_bytes, uri_bytes: limits.max_uri_bytes };
    crate::server::Site {
        router: crate::server::harden(build_router(state), limits),
        shortcut: Some(Arc::new(move |request| {
            // The request rules first, so a cached document never answers a refused request.
            if let Some(refused) = wafuel_web::http::gate::refuse(request, bounds) {
                return Some((wafuel_web::http::gate::REFUSED_ROUTE, refused));
            }
            wafuel_web::http::front_first(&shared, request)
        })),
    }
}

/// Where and how the application listens.
#[derive(Debug, Clone)]
pub struct Listen {
    /// The public API's address (port 0: any free port).
    pub public: std::net::SocketAddr,
    /// The admin port's address: `/healthz`, `/readyz`, `/metrics`.
    pub admin: std::net::SocketAddr,
    pub limits: crate::server::ServerLimits,
}

impl Listen {
    /// Both ports on free loopback ports, with the default limits.
    pub fn loopback() -> Self {
        let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        Self { public: any, admin: any, limits: Default::default() }
    }
}

/// The service, built and bound, not yet serving: what `serve` and `demo` run and what the
/// integration tests run (there is no other way to assemble the public port).
pub struct Application {
    state: AppState,
    public: tokio::net::TcpListener,
    admin: tokio::net::TcpListener,
    limits: crate::server::ServerLimits,
    readiness: Arc<dyn wafuel_store::SnapshotStore>,
}

impl Application {
    /// Build the state, start the event reader, decode the day's stored catalogs, bind both ports.
    pub async fn build(config: AppConfig, listen: Listen) -> anyhow::Result<Self> {
        let readiness: Arc<dyn wafuel_store::SnapshotStore> = config.store.clone();
        let state = build_state(config)?;
        // The event reader runs whatever `--no-jobs` says: streams follow other replicas'
        // publishes even where this one never fetches.
        if let Err(e) = state.events.start().await {
            tracing::warn!(error = %e, "event reader not started; the first stream will try again");
        }
        // A replica starting over a filled store decodes the day's stored extracts before it
        // serves, so its first answers read memory (the source is never asked here).
        let preloaded =
            state.catalog.preload(wafuel_service::jobs::warm::warm_extracts(state.catalog.now())).await;
        tracing::info!(extracts = preloaded, "day catalogs decoded from the store");
        let public = crate::server::bind(listen.public).await?;
        let admin = crate::server::bind(listen.admin).await?;
        Ok(Self { state, public, admin, limits: listen.limits, readiness })
    }

    /// The state the routes answer from (the jobs run over its catalog).
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// The public port's bound address.
    pub fn public_addr(&self) -> std::io::Result<std::net::SocketAddr> {
        self.public.local_addr()
    }

    /// The admin port's bound address.
    pub fn admin_addr(&self) -> std::io::Result<std::net::SocketAddr> {
        self.admin.local_addr()
    }

    /// Serve both ports until `shutdown` resolves, then end the event streams and drain.
    pub async fn run_until(self, shutdown: impl std::future::Future<Output = ()>) -> anyhow::Result<()> {
        let events = self.state.events.clone();
        let site = public_site(self.state, &self.limits);
        let admin = crate::server::admin_router(Arc::new(crate::server::StoreReadiness(self.readiness)));
        crate::server::serve_until(
            vec![(self.public, site), (self.admin, admin.into())],
            self.limits,
            shutdown,
            move || events.close(),
        )
        .await
    }
}
