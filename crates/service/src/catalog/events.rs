//! Push events for `/v1/events` (docs/api.md): one reader per replica tails the store's events
//! table and fans each event out to every stream of this replica through one broadcast
//! channel, so a thousand clients cost one query, not a thousand. PostgreSQL wakes the reader
//! with `LISTEN/NOTIFY` (a slow poll stays as the fallback); SQLite is polled every second.
//! A client resuming (`Last-Event-ID`) reads what it missed from the store once.
//!
//! Alerts (`price` events): the hub keeps the distinct alerts its streams hold; for each
//! publish the reader loads the day's catalog and the day before's once and evaluates each
//! distinct alert of that product once, and the result rides with the event to every stream.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::SignedDuration;
use tokio::sync::{broadcast, watch};

use super::alerts::price_event;
use super::day::DayCatalog;
use crate::snapshot::{PriceService, catalog_key};
use wafuel_domain::codes::ProductCode;
use wafuel_domain::documents::PriceAlert;
use wafuel_domain::time::SharedClock;
use wafuel_query::events::AlertFilter;
use wafuel_store::backend::EventWaker;
pub use wafuel_store::events::StoredEvent as Event;
use wafuel_store::events::{EventKind, EventStore};

use super::CatalogError;

/// How far back a client can resume (docs/api.md: 7 days). Events are pruned a day after
/// that, so a client exactly at the edge still resumes; an id pruned away gets a `reset`.
const RESUME_WINDOW: SignedDuration = SignedDuration::from_hours(7 * 24);
const PRUNE_MARGIN: SignedDuration = SignedDuration::from_hours(24);
/// The default `--max-streams`.
pub const DEFAULT_MAX_STREAMS: usize = 10_000;
/// Events a stream may fall behind by before it is dropped (a client that does not read).
const LAG_LIMIT: usize = 256;
/// How often the reader looks without a notification: SQLite's only way to learn of a
/// publish, PostgreSQL's fallback should a notification be lost.
const POLL: Duration = Duration::from_secs(1);
const POLL_WITH_NOTIFY: Duration = Duration::from_secs(5);
/// Most events read (or replayed to a resuming client) per query.
const PAGE: i64 = 1_000;

/// One event as the reader fans it out: with the `price` data of each distinct alert of its
/// product that streams held when it was read (`None`: evaluated, nothing matched). An alert
/// missing from the map was opened after the evaluation; its stream asks [`EventHub::price_for`].
#[derive(Debug)]
pub struct Fanned {
    pub event: Arc<Event>,
    pub prices: HashMap<Arc<AlertFilter>, Option<Arc<AlertPrice>>>,
}

/// What one alert reports for one catalog, with its `data` as the web layer writes it:
/// written by the first stream that sends it and shared by every other stream with the same
/// alert, so a thousand streams watching one area serialise it once.
#[derive(Debug)]
pub struct AlertPrice {
    pub report: PriceAlert,
    /// The written `data`; `None` inside when it could not be written (a bug, logged once).
    pub written: std::sync::OnceLock<Option<Arc<str>>>,
}

impl AlertPrice {
    pub fn new(report: PriceAlert) -> Arc<Self> {
        Arc::new(Self { report, written: std::sync::OnceLock::new() })
    }
}

/// The replica's event fan-out.
pub struct EventHub {
    store: Arc<dyn EventStore>,
    /// Told of every catalog another replica publishes, so held prices follow at once.
    prices: Arc<PriceService>,
    clock: SharedClock,
    sender: broadcast::Sender<Arc<Fanned>>,
    /// The distinct alerts of this replica's streams, each with how many streams hold it.
    alerts: Mutex<HashMap<Arc<AlertFilter>, usize>>,
    started: tokio::sync::OnceCell<()>,
    streams: AtomicUsize,
    max_streams: usize,
    closing: watch::Sender<bool>,
    /// The newest id this replica's reader has fanned out.
    read_through: AtomicI64,
    /// The catalog whose per-publish work runs when a catalog event is heard (weak: the
    /// catalog does not outlive the application for the reader's sake).
    catalog: std::sync::OnceLock<std::sync::Weak<super::Catalog>>,
}

/// A stream's place under `--max-streams`, given back when the stream ends.
pub struct StreamSlot(Arc<EventHub>);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.streams.fetch_sub(1, Ordering::AcqRel);
        metrics::gauge!("wafuel_event_streams").decrement(1.0);
    }
}

/// A stream's alert, registered with the hub while the stream lives.
pub struct AlertSlot {
    hub: Arc<EventHub>,
    pub alert: Arc<AlertFilter>,
}

impl Drop for AlertSlot {
    fn drop(&mut self) {
        let mut alerts = crate::sync::lock(&self.hub.alerts);
        if let Some(n) = alerts.get_mut(&self.alert) {
            *n -= 1;
            if *n == 0 {
                alerts.remove(&self.alert);
            }
        }
    }
}

/// Where a new stream starts: what it missed (in id order), or a reset to the newest id when
/// what it asks for is gone; then live events from `live` after `after`. This replica's reader
/// may be behind the store (it polls), so a live event the client already has (from the
/// replay, or from the replica it came from) is skipped by id.
pub struct Resume {
    pub missed: Vec<Arc<Event>>,
    pub reset_to: Option<i64>,
    pub after: i64,
    pub live: broadcast::Receiver<Arc<Fanned>>,
}

impl EventHub {
    pub fn new(
        store: Arc<dyn EventStore>,
        prices: Arc<PriceService>,
        clock: SharedClock,
        max_streams: usize,
    ) -> Arc<Self> {
        let (sender, _) = broadcast::channel(LAG_LIMIT);
        let (closing, _) = watch::channel(false);
        Arc::new(Self {
            store,
            prices,
            clock,
            sender,
            alerts: Mutex::new(HashMap::new()),
            started: tokio::sync::OnceCell::new(),
            streams: AtomicUsize::new(0),
            max_streams,
            closing,
            read_through: AtomicI64::new(0),
            catalog: std::sync::OnceLock::new(),
        })
    }

    /// Run `catalog`'s per-publish work (`LastChanges::prepare`) for every catalog
    /// event read from now on. Set once; later calls change nothing.
    pub fn prepare_for(&self, catalog: &Arc<super::Catalog>) {
        let _ = self.catalog.set(Arc::downgrade(catalog));
    }

    /// Start the reader once, from the newest id in the store now (later calls return at
    /// once). `serve` starts it at boot whatever `--no-jobs` says; otherwise the first stream
    /// does, before it subscribes, so every event committed after that reaches it.
    pub async fn start(self: &Arc<Self>) -> Result<(), CatalogError> {
        self.started
            .get_or_try_init(|| async {
                let last = self.store.last_event_id().await?;
                tokio::spawn(self.clone().read(last));
                Ok::<(), CatalogError>(())
            })
            .await
            .map(|_| ())
    }

    /// A slot for one more stream, or `None` at `--max-streams`.
    pub fn open(self: &Arc<Self>) -> Option<StreamSlot> {
        let taken = self.streams.fetch_add(1, Ordering::AcqRel);
        if taken >= self.max_streams {
            self.streams.fetch_sub(1, Ordering::AcqRel);
            metrics::counter!("wafuel_event_streams_refused_total").increment(1);
            return None;
        }
        metrics::gauge!("wafuel_event_streams").increment(1.0);
        Some(StreamSlot(self.clone()))
    }

    /// Register a stream's alert (before it subscribes, so every event it receives live was
    /// read with its alert known, but for the rare one read in between).
    pub fn watch(self: &Arc<Self>, alert: AlertFilter) -> AlertSlot {
        let mut alerts = crate::sync::lock(&self.alerts);
        let alert = match alerts.get_key_value(&alert) {
            Some((held, _)) => held.clone(),
            None => Arc::new(alert),
        };
        *alerts.entry(alert.clone()).or_insert(0) += 1;
        AlertSlot { hub: self.clone(), alert }
    }

    /// Distinct alerts held now.
    pub fn alerts(&self) -> usize {
        crate::sync::lock(&self.alerts).len()
    }

    /// The catalogs of `date` and the day before for `product`, from the store.
    async fn days(
        &self,
        product: ProductCode,
        date: jiff::civil::Date,
    ) -> (Option<DayCatalog>, Option<DayCatalog>) {
        let store = self.prices.store();
        let load = |d: jiff::civil::Date| async move {
            match store.load(&catalog_key(product, d)).await {
                Ok(s) => s.map(DayCatalog::new),
                Err(e) => {
                    tracing::warn!(error = %e, "alerts cannot read a catalog");
                    None
                }
            }
        };
        let day = load(date).await;
        let before = match (day.is_some(), date.yesterday()) {
            (true, Ok(d)) => load(d).await,
            _ => None,
        };
        (day, before)
    }

    /// The `price` data of `alert` for `event`, read from the stored catalogs (a stream
    /// replaying what it missed, or one whose alert the reader had not yet seen).
    pub async fn price_for(&self, alert: &AlertFilter, event: &Event) -> Option<Arc<AlertPrice>> {
        if event.product != alert.product || event.kind == EventKind::Wholesale {
            return None;
        }
        let (day, before) = self.days(event.product, event.date).await;
        price_event(alert, event.date, day.as_ref()?, before.as_ref()).map(AlertPrice::new)
    }

    /// Every held alert of the event's product, evaluated once against its catalogs.
    async fn evaluate(&self, event: &Event) -> HashMap<Arc<AlertFilter>, Option<Arc<AlertPrice>>> {
        let alerts: Vec<Arc<AlertFilter>> =
            crate::sync::lock(&self.alerts).keys().filter(|a| a.product == event.product).cloned().collect();
        if alerts.is_empty() {
            return HashMap::new();
        }
        let started = std::time::Instant::now();
        let (day, before) = self.days(event.product, event.date).await;
        let prices = alerts
            .into_iter()
            .map(|alert| {
                let data = day.as_ref().and_then(|d| price_event(&alert, event.date, d, before.as_ref()));
                (alert, data.map(AlertPrice::new))
            })
            .collect::<HashMap<_, _>>();
        metrics::histogram!("wafuel_alert_evaluation_seconds").record(started.elapsed().as_secs_f64());
        prices
    }

    /// Streams open now.
    pub fn streams(&self) -> usize {
        self.streams.load(Ordering::Acquire)
    }

    /// The newest event id this replica has fanned out (also the `wafuel_events_read_through`
    /// gauge: replicas that differ for long have a reader that cannot read the store).
    pub fn read_through(&self) -> i64 {
        self.read_through.load(Ordering::Acquire)
    }

    /// Subscribe, then read what a client that last saw `since` missed: subscribing first
    /// means an event committed meanwhile comes both ways (and is sent once), never neither.
    pub async fn resume(&self, since: Option<i64>) -> Result<Resume, CatalogError> {
        let live = self.sender.subscribe();
        let Some(since) = since else {
            return Ok(Resume { missed: Vec::new(), reset_to: None, after: 0, live });
        };
        let newest = self.store.last_event_id().await?;
        let pruned = self.store.events_pruned_through().await?;
        if since > newest || since < pruned {
            // From another deployment, or older than the window: start from now, saying so.
            return Ok(Resume { missed: Vec::new(), reset_to: Some(newest), after: newest, live });
        }
        let missed = self.all_after(since).await?;
        let after = missed.last().map_or(since, |e| e.id);
        Ok(Resume { missed, reset_to: None, after, live })
    }

    /// Every stored event after `after`, a page at a time, in id order.
    async fn all_after(&self, after: i64) -> Result<Vec<Arc<Event>>, wafuel_store::StoreError> {
        let mut all: Vec<Arc<Event>> = Vec::new();
        loop {
            let from = all.last().map_or(after, |e| e.id);
            let page = self.store.events_after(from, PAGE).await?;
            let full = page.len() as i64 == PAGE;
            all.extend(page.into_iter().map(Arc::new));
            if !full {
                return Ok(all);
            }
        }
    }

    /// Resolves when the server is shutting down: streams end with a last comment, so clients
    /// reconnect (to another replica) with their `Last-Event-ID`.
    pub fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// Shut every stream.
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// The reader: every event after `last`, in order, to every stream.
    async fn read(self: Arc<Self>, mut last: i64) {
        let mut closing = self.closing();
        let mut waker = self.store.event_waker().await;
        let mut next_prune = tokio::time::Instant::now();
        loop {
            if tokio::time::Instant::now() >= next_prune {
                self.prune().await;
                next_prune = tokio::time::Instant::now() + Duration::from_secs(3600);
            }
            match self.all_after(last).await {
                Ok(events) => {
                    for event in events {
                        last = event.id;
                        // The store's own "newer catalog" signal, heard now rather than at
                        // the next recheck: the held snapshot is confirmed by its stamp.
                        // A wholesale price is no catalog, and no station's price to alert on.
                        let catalog = event.kind != EventKind::Wholesale;
                        if catalog {
                            self.prices.catalog_published(event.product, event.date);
                            if let Some(prepared) = self.catalog.get().and_then(std::sync::Weak::upgrade) {
                                let (product, day) = (event.product, event.date);
                                tokio::spawn(async move {
                                    prepared.stations().last_changes().prepare(product, day).await
                                });
                            }
                        }
                        metrics::counter!("wafuel_events_total", "kind" => event.kind.as_str()).increment(1);
                        let prices = if catalog { self.evaluate(&event).await } else { HashMap::new() };
                        // No stream listening is no error.
                        let _ = self.sender.send(Arc::new(Fanned { event, prices }));
                    }
                    self.read_through.store(last, Ordering::Release);
                    metrics::gauge!("wafuel_events_read_through").set(last as f64);
                }
                Err(e) => tracing::warn!(error = %e, "event reader cannot read the store"),
            }
            tokio::select! {
                woke = wait(&mut waker) => if let Err(e) = woke {
                    // The listening connection is gone (PostgreSQL restarting): poll meanwhile;
                    // the listener reconnects on its next wait.
                    tracing::debug!(error = %e, "event notifications interrupted");
                    tokio::time::sleep(POLL).await;
                },
                _ = closing.changed() => return,
            }
        }
    }

    async fn prune(&self) {
        let Some(before) = self.clock.now().checked_sub(RESUME_WINDOW + PRUNE_MARGIN).ok() else { return };
        match self.store.prune_events(before).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(deleted = n, "old events pruned"),
            Err(e) => tracing::warn!(error = %e, "old events could not be pruned"),
        }
    }
}

/// The next notification, or the poll interval.
async fn wait(waker: &mut Option<Box<dyn EventWaker>>) -> Result<(), wafuel_store::StoreError> {
    match waker {
        Some(w) => tokio::select! {
            woke = w.wait() => woke,
            () = tokio::time::sleep(POLL_WITH_NOTIFY) => Ok(()),
        },
        None => {
            tokio::time::sleep(POLL).await;
            Ok(())
        }
    }
}
