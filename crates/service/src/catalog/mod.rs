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
pub mod history;
pub mod last_change;
pub mod market;
pub mod profiles;
pub mod records;
pub mod search;
mod suburbs;
pub mod wholesale;

use std::collections::HashMap;
use std::sync::Arc;

use jiff::Timestamp;

pub use day::DayCatalog;
pub use documents::Facts;
pub use forecast::Forecasts;
pub use history::History;
pub use last_change::LastChanges;
pub use market::MarketDays;
pub use profiles::{ProfileMap, Profiles};
pub use wholesale::Wholesale;

use crate::memo::Recheck;
use crate::snapshot::held::MAX_HELD_QUOTES;
use crate::snapshot::{PriceService, SelectionSnapshots};
use wafuel_domain::documents::PublicationStatus;
use wafuel_domain::error_code::ErrorCode;
use wafuel_domain::geo::Point;
use wafuel_domain::key::StationId;
use wafuel_domain::profile::{Merged, merge};
use wafuel_domain::station::{Quote, Station};
use wafuel_domain::time::{Day, tomorrow_published};
use wafuel_query::{Mode, Selection};
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

/// The history's and the wholesale prices' change counters (`None`: not read yet).
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

/// The application's services, composed: the price service, and one service per capability
/// over it (the station views' held state, the history, the wholesale prices, the forecast).
pub struct Catalog {
    prices: Arc<PriceService>,
    stations: Stations,
    history: Arc<History>,
    wholesale: Arc<Wholesale>,
    forecasts: Forecasts,
}

/// What the station views read besides the prices: the profiles merged into every answer, the
/// day catalogs held, each station's runs of equal prices (`price.lastChange`).
pub struct Stations {
    profiles: Profiles,
    days: moka::sync::Cache<String, Arc<DayCatalog>>,
    last_changes: LastChanges,
}

impl Stations {
    fn new(store: Arc<dyn wafuel_store::Store>, history: Arc<History>, recheck: Recheck) -> Self {
        let days = moka::sync::Cache::builder()
            .weigher(|_k: &String, v: &Arc<DayCatalog>| {
                u32::try_from(v.quotes().len() + 1).unwrap_or(u32::MAX)
            })
            .max_capacity(MAX_HELD_QUOTES)
            .build();
        Self { profiles: Profiles::new(store, recheck), days, last_changes: LastChanges::new(history) }
    }

    /// The catalog of a snapshot: built once per published snapshot.
    fn day(&self, snapshot: &Arc<wafuel_store::Snapshot>) -> Arc<DayCatalog> {
        if let Some(day) = self.days.get(&snapshot.key)
            && Arc::ptr_eq(&day.snapshot, snapshot)
        {
            return day;
        }
        let day = Arc::new(DayCatalog::new(snapshot.clone()));
        self.days.insert(snapshot.key.clone(), day.clone());
        day
    }

    /// Each station's runs of equal prices, per (fuel, day).
    pub fn last_changes(&self) -> &LastChanges {
        &self.last_changes
    }
}

impl Catalog {
    /// The services over the price service and the store that keeps the rest (profiles,
    /// wholesale prices, the forecast's record); `backfill`: whether this deployment runs the
    /// history backfill.
    pub fn new(
        prices: Arc<PriceService>,
        store: Arc<dyn wafuel_store::Store>,
        recheck: std::time::Duration,
        backfill: bool,
    ) -> Self {
        let recheck = Recheck::every(recheck);
        let history = Arc::new(History::new(prices.clone(), recheck, backfill));
        let wholesale = Arc::new(Wholesale::new(store.clone(), history.clone(), recheck));
        Self {
            stations: Stations::new(store.clone(), history.clone(), recheck),
            forecasts: Forecasts::new(history.clone(), wholesale.clone(), store),
            history,
            wholesale,
            prices,
        }
    }

    /// The history's and the wholesale prices' change counters at `now`, each confirmed
    /// against the store at most once per recheck interval: what a document read from the
    /// store was computed at, so a cached one is never served once either moved (a file
    /// backfilled or imported, a publish) on this replica or another.
    pub async fn stored_versions(&self, now: Timestamp) -> Result<StoredVersions, CatalogError> {
        Ok((self.history.market().version(now).await?, self.wholesale.version(now).await?))
    }

    /// The counters as last confirmed, while both confirmations are recent at `now`, without
    /// asking the store (the fast path's check); `None` when the store must be asked.
    pub fn recent_stored_versions(&self, now: Timestamp) -> Option<StoredVersions> {
        Some((self.history.market().recent_version(now)?, self.wholesale.recent_version(now)?))
    }

    pub fn prices(&self) -> &Arc<PriceService> {
        &self.prices
    }

    pub fn stations(&self) -> &Stations {
        &self.stations
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    pub fn wholesale(&self) -> &Wholesale {
        &self.wholesale
    }

    pub fn forecasts(&self) -> &Forecasts {
        &self.forecasts
    }

    pub fn now(&self) -> Timestamp {
        self.prices.clock().now()
    }

    /// Every snapshot a selection needs (filled if necessary), with its day catalog.
    pub async fn selection(&self, selection: &Selection) -> Result<SelectionDays, SourceError> {
        let data = self.prices.selection(selection).await?;
        let days = data.snapshots.iter().map(|s| self.stations.day(s)).collect();
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
                            this.stations.day(&snapshot);
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
            SelectionPart::Station(id) => self.days.iter().flat_map(|d| d.station(id)).filter(keep).collect(),
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
) -> (HashMap<StationId, Merged>, Timestamp) {
    let mut enrichment: HashMap<StationId, Merged> = HashMap::new();
    for station in stations {
        if enrichment.contains_key(&station.id) {
            continue;
        }
        if let Some(stored) = profiles.get(&station.key)
            && let Some(merged) = merge(station, stored, now)
        {
            expires_at = expires_at.min(stored.next_deadline(now));
            enrichment.insert(station.id.clone(), merged);
        }
    }
    (enrichment, expires_at)
}
