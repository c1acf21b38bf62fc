//! The application layer: from a parsed query to the data of its document, out of decoded
//! day catalogs held in memory. `http/` asks here; this asks the price service (snapshots,
//! freshness, fills) and holds what every view shares: each published extract decoded once
//! with its indexes ([`DayCatalog`]), and the provider profiles ([`Profiles`]).

pub mod alerts;
pub mod backfill;
pub mod day;
pub mod documents;
pub mod events;
pub mod forecast;
pub mod last_change;
pub mod market;
pub mod profiles;
pub mod records;
pub mod search;
mod suburbs;
pub mod wholesale;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use jiff::Timestamp;

pub use day::DayCatalog;
pub use documents::Facts;
pub use market::MarketDays;
pub use profiles::{ProfileMap, Profiles};

use crate::snapshot::held::MAX_HELD_QUOTES;
use crate::snapshot::{PriceService, SelectionSnapshots};
use wafuel_domain::codes::ProductCode;
use wafuel_domain::documents::PublicationStatus;
use wafuel_domain::error_code::ErrorCode;
use wafuel_domain::geo::Point;
use wafuel_domain::key::StationId;
use wafuel_domain::profile::{Merged, merge};
use wafuel_domain::station::{Quote, Station};
use wafuel_domain::time::{Day, tomorrow_published};
use wafuel_query::market::StatsQuery;
use wafuel_query::{Dialect, Mode, Selection};
use wafuel_source::SourceError;

/// Why the data of a document could not be had. Each variant carries what an answer needs
/// (the error catalog's code and text), so `http/` maps it without knowing the layers below.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The prices could not be had from the store or the source: the public code, text and
    /// `Retry-After`, and the reason (for logs only).
    #[error("{code:?}: {reason}")]
    Prices { code: ErrorCode, detail: &'static str, retry_after: Option<u32>, reason: String },
    /// The history store failed.
    #[error(transparent)]
    Store(#[from] wafuel_store::StoreError),
    /// No such station (in that day's catalog, or in the history with that product).
    #[error("station not found")]
    NotFound,
    /// The history has the station, but never with the product asked: what it does have, in
    /// words (`404 not_found`).
    #[error("{0}")]
    NotSold(String),
    /// Too little history for a forecast.
    #[error("no forecast: {0:?}")]
    NoForecast(wafuel_domain::forecast::NoForecast),
    /// Too little history for a forecast, said with what is happening about it (the backfill
    /// loading, and how far; or the command that fills it): `404 not_found`.
    #[error("{0}")]
    ShortHistory(String),
}

impl From<SourceError> for CatalogError {
    fn from(e: SourceError) -> Self {
        Self::Prices { code: e.code, detail: e.detail, retry_after: e.retry_after, reason: e.reason }
    }
}

/// The history's and the wholesale prices' change counters (`None`: no such store).
pub type StoredVersions = (Option<i64>, Option<i64>);

/// A selection's data with the day catalogs of its snapshots (same order).
#[derive(Debug, Clone)]
pub struct SelectionDays {
    pub data: SelectionSnapshots,
    pub days: Vec<Arc<DayCatalog>>,
}

/// Which of a selection's quotes a view reads.
#[derive(Debug, Clone, Copy)]
pub enum SelectionPart<'a> {
    All,
    /// One station's quotes.
    Station(&'a StationId),
    /// Quotes within `radius` metres of a point (a superset, measured by the caller).
    Near(Point, f64),
    /// Quotes in a route's corridor (a superset, measured by the caller).
    Along(&'a day::RouteCover),
}

/// Day catalogs and profiles over the price service.
pub struct Catalog {
    prices: Arc<PriceService>,
    stations: StationsHeld,
    history: HistoryHeld,
    wholesale: WholesalePrices,
    forecasts: ForecastsHeld,
}

/// What the station views read besides the prices: the profiles merged into every answer, the
/// day catalogs held, each station's runs of equal prices (`price.lastChange`).
struct StationsHeld {
    profiles: Profiles,
    days: moka::sync::Cache<String, Arc<DayCatalog>>,
    last_changes: last_change::LastChanges,
}

/// The price history's held summaries: its days for statistics, its span for `/v1/status`
/// (at one history counter), and the backfill's progress as the shared store records it.
struct HistoryHeld {
    market: MarketDays,
    span: std::sync::Mutex<Option<(Option<i64>, documents::HistorySpan)>>,
    backfill: backfill::BackfillProgress,
    /// How often held summaries are confirmed against the store's counters.
    recheck: jiff::SignedDuration,
}

/// Terminal gate prices: the store, and the prices and the margins' retail side held by day.
struct WholesalePrices {
    store: Arc<dyn wafuel_store::wholesale::WholesaleStore>,
    held: wholesale::WholesaleHeld,
    /// How often held prices are confirmed against the store's counter.
    recheck: jiff::SignedDuration,
}

/// The forecast's live record and its replayed accuracies.
struct ForecastsHeld {
    records: Arc<dyn wafuel_store::records::RecordStore>,
    held: records::RecordHeld,
    accuracies: forecast::Accuracies,
}

impl Catalog {
    /// The catalog over the price service and the store that keeps the rest (profiles,
    /// wholesale prices, the forecast's record).
    pub fn new(
        prices: Arc<PriceService>,
        store: Arc<dyn wafuel_store::Store>,
        recheck: std::time::Duration,
    ) -> Self {
        let market = MarketDays::new(prices.history().store.clone(), recheck);
        let profiles = Profiles::new(store.clone(), recheck);
        let days = moka::sync::Cache::builder()
            .weigher(|_k: &String, v: &Arc<DayCatalog>| {
                u32::try_from(v.quotes().len() + 1).unwrap_or(u32::MAX)
            })
            .max_capacity(MAX_HELD_QUOTES)
            .build();
        let recheck = jiff::SignedDuration::try_from(recheck).unwrap_or(jiff::SignedDuration::MAX);
        Self {
            history: HistoryHeld {
                market,
                span: std::sync::Mutex::new(None),
                backfill: backfill::BackfillProgress::new(prices.store().clone(), false, recheck),
                recheck,
            },
            prices,
            stations: StationsHeld { profiles, days, last_changes: last_change::LastChanges::default() },
            wholesale: WholesalePrices {
                store: store.clone(),
                held: wholesale::WholesaleHeld::default(),
                recheck,
            },
            forecasts: ForecastsHeld {
                records: store,
                held: records::RecordHeld::default(),
                accuracies: forecast::accuracies(),
            },
        }
    }

    /// The history's and the wholesale prices' change counters at `now`, each confirmed
    /// against the store at most once per recheck interval: what a document read from the
    /// store was computed at, so a cached one is never served once either moved (a file
    /// backfilled or imported, a publish) on this replica or another.
    pub async fn stored_versions(&self, now: Timestamp) -> Result<StoredVersions, CatalogError> {
        Ok((self.history.market.version(now).await?, self.wholesale_version(now).await?))
    }

    /// The counters as last confirmed, while both confirmations are recent at `now`, without
    /// asking the store (the fast path's check); `None` when the store must be asked.
    pub fn recent_stored_versions(&self, now: Timestamp) -> Option<StoredVersions> {
        Some((self.history.market.recent_version(now)?, self.recent_wholesale_version(now)?))
    }

    /// What a document read from the history says while the history is still loading (the
    /// backfill running, or its lists unreadable): how far; `None` once done or off.
    pub async fn history_loading(&self) -> Option<String> {
        use wafuel_domain::backfill::BackfillState;
        let backfill = self.backfill().await;
        matches!(backfill.state, BackfillState::Running | BackfillState::Failed)
            .then(|| backfill.loading_words())
    }

    /// A deployment that runs the history backfill (or not: the default).
    pub fn with_backfill(mut self, on: bool) -> Self {
        self.history.backfill =
            backfill::BackfillProgress::new(self.prices.store().clone(), on, self.history.recheck);
        self
    }

    /// The history backfill's progress as the shared store records it (whichever replica
    /// runs it); before any record, running where this deployment backfills, else off.
    pub async fn backfill(&self) -> wafuel_domain::backfill::Backfill {
        self.history.backfill.at(self.now()).await
    }

    /// The market a `/v1/stats` query asks for, from the history days held.
    pub async fn stats(&self, query: &StatsQuery) -> Result<wafuel_domain::stats::Market, CatalogError> {
        let held = &self.history.market;
        let members = self.region_members(query.product, query.regions.as_deref()).await?;
        if query.brands.is_none() && query.regions.is_none() {
            let range = (query.product, query.from, query.to);
            return Ok(held.statewide(range, query.interval, self.now()).await?);
        }
        let filter = market::StationFilter {
            brands: query.brands.as_deref(),
            regions: query.regions.as_deref().zip(members.as_ref()),
        };
        if query.interval != wafuel_domain::stats::Interval::Day {
            let history = self.prices.history();
            let range = (query.product, query.from, query.to);
            return Ok(market::periods(history.store.as_ref(), range, query.interval, filter).await?);
        }
        let rows = held.rows(query.product, query.from, query.to, self.now()).await?;
        // Up to three years of every matching station's days: CPU work, beside the workers.
        Ok(crate::sync::compute(|| market::market(&rows, filter)).await)
    }

    /// The stations of `regions` (`None` without a region filter). Region membership is the
    /// source's own answer for today (the feed names no region per station): the same
    /// source-filtered selection `/v1?region=` makes, held alike.
    async fn region_members(
        &self,
        product: ProductCode,
        regions: Option<&[wafuel_domain::codes::RegionCode]>,
    ) -> Result<Option<HashSet<String>>, CatalogError> {
        let Some(regions) = regions else { return Ok(None) };
        let now = self.now();
        let selection = Selection {
            dialect: Dialect::V1,
            products: vec![product],
            brands: None,
            regions: Some(regions.to_vec()),
            suburbs: None,
            surrounding: None,
            day: Day::Today,
            date: Day::Today.resolve(now),
            expand: Default::default(),
        };
        let data = self.prices.selection(&selection).await?;
        Ok(Some(data.quotes().map(|q| q.station.digest.clone()).collect()))
    }

    /// One station's stored prices of `product` from `from` to `to`, as (date, tenths of a
    /// cent); `NotFound` when the history never had that station, `NotSold` when it never had
    /// it with that product (saying which products it has).
    pub async fn station_history(
        &self,
        station_id: &StationId,
        product: ProductCode,
        from: jiff::civil::Date,
        to: jiff::civil::Date,
    ) -> Result<Vec<(jiff::civil::Date, i64)>, CatalogError> {
        let history = self.prices.history();
        if let Some(points) = history.store.station_history(station_id.as_str(), product, from, to).await? {
            return Ok(points);
        }
        // Only on the way to a 404: which products the station has (a day's read each, empty
        // for a product it has and `None` for one it never had).
        let mut sold = Vec::new();
        for other in wafuel_domain::codes::product_codes().filter(|p| *p != product) {
            if history.store.station_history(station_id.as_str(), other, to, to).await?.is_some() {
                sold.push(other);
            }
        }
        let Some(first) = sold.first() else { return Err(CatalogError::NotFound) };
        let name = |p: ProductCode| wafuel_domain::codes::product(p.get()).map_or("?", |p| p.name);
        let has: Vec<String> = sold.iter().map(|p| format!("{} ({})", p.get(), name(*p))).collect();
        Err(CatalogError::NotSold(format!(
            "This station has no stored {} prices; its history holds {} {}: e.g. product={}.",
            name(product),
            if has.len() == 1 { "product" } else { "products" },
            has.join(", "),
            first.get()
        )))
    }

    pub fn prices(&self) -> &Arc<PriceService> {
        &self.prices
    }

    pub fn now(&self) -> Timestamp {
        self.prices.clock().now()
    }

    /// Every snapshot a selection needs (filled if necessary), with its day catalog.
    pub async fn selection(&self, selection: &Selection) -> Result<SelectionDays, SourceError> {
        let data = self.prices.selection(selection).await?;
        let days = data.snapshots.iter().map(|s| self.day(s)).collect();
        Ok(SelectionDays { data, days })
    }

    /// Decode the stored, fresh snapshots of `extracts` and build their catalogs, a task per
    /// extract; the source is never asked. How many were held.
    pub async fn preload(self: &Arc<Self>, extracts: Vec<crate::snapshot::Extract>) -> usize {
        let tasks: Vec<_> = extracts
            .into_iter()
            .map(|extract| {
                let this = self.clone();
                tokio::spawn(async move {
                    match this.prices.preload(&extract).await {
                        Ok(Some(snapshot)) => {
                            this.day(&snapshot);
                            true
                        }
                        Ok(None) => false,
                        Err(e) => {
                            tracing::warn!(error = %e, key = %extract.key, "preload: store unavailable");
                            false
                        }
                    }
                })
            })
            .collect();
        futures::future::join_all(tasks).await.into_iter().filter(|held| matches!(held, Ok(true))).count()
    }

    /// The catalog of a snapshot: built once per published snapshot.
    fn day(&self, snapshot: &Arc<wafuel_store::Snapshot>) -> Arc<DayCatalog> {
        if let Some(day) = self.stations.days.get(&snapshot.key)
            && Arc::ptr_eq(&day.snapshot, snapshot)
        {
            return day;
        }
        let day = Arc::new(DayCatalog::new(snapshot.clone()));
        self.stations.days.insert(snapshot.key.clone(), day.clone());
        day
    }

    /// The servable provider profiles at `now` (empty without an enrichment store).
    pub async fn profiles(&self, now: Timestamp) -> Arc<ProfileMap> {
        self.stations.profiles.current(now).await
    }
}

impl SelectionDays {
    /// The quotes of `subset` after the selection's local filters, in extract order.
    pub fn quotes<'a>(&'a self, selection: &Selection, subset: SelectionPart<'_>) -> Vec<&'a Quote> {
        let keep = |q: &&Quote| keeps(selection, q);
        match subset {
            SelectionPart::All => selected_quotes(selection, &self.data),
            SelectionPart::Station(id) => {
                self.days.iter().flat_map(|d| d.station(id.as_str())).filter(keep).collect()
            }
            SelectionPart::Near(point, radius) => {
                self.days.iter().flat_map(|d| d.near(point, radius)).filter(keep).collect()
            }
            SelectionPart::Along(cover) => {
                self.days.iter().flat_map(|d| d.along(cover)).filter(keep).collect()
            }
        }
    }
}

/// Whether a quote passes a selection's local filters (brand and exact suburb of a
/// catalog selection; a source-filtered extract holds only what was asked).
fn keeps(selection: &Selection, q: &Quote) -> bool {
    selection.mode() != Mode::WholeExtracts
        || (selection.brands.as_ref().is_none_or(|b| b.iter().any(|c| *c == q.station.brand))
            && (selection.surrounding != Some(false) || selection.suburb_matches(&q.station.suburb)))
}

/// A selection's quotes after the local filters.
pub fn selected_quotes<'a>(selection: &Selection, data: &'a SelectionSnapshots) -> Vec<&'a Quote> {
    data.quotes().filter(|q| keeps(selection, q)).collect()
}

/// `meta.publicationStatus` of a selection with or without prices at `now`.
pub fn publication_status(selection: &Selection, has_prices: bool, now: Timestamp) -> PublicationStatus {
    if has_prices {
        PublicationStatus::Available
    } else if selection.day == Day::Tomorrow && !tomorrow_published(now) {
        PublicationStatus::NotYetPublished
    } else {
        PublicationStatus::Empty
    }
}

/// Provider contributions by station digest, and the expiry shortened so that a response
/// never outlives a profile it used.
pub fn merged_profiles<'s>(
    stations: impl IntoIterator<Item = &'s Station>,
    profiles: &ProfileMap,
    now: Timestamp,
    mut expires_at: Timestamp,
) -> (HashMap<String, Merged>, Timestamp) {
    let mut enrichment: HashMap<String, Merged> = HashMap::new();
    for station in stations {
        if enrichment.contains_key(&station.digest) {
            continue;
        }
        if let Some(stored) = profiles.get(&station.key)
            && let Some(merged) = merge(station, stored, now)
        {
            expires_at = expires_at.min(stored.next_deadline(now));
            enrichment.insert(station.digest.clone(), merged);
        }
    }
    (enrichment, expires_at)
}
