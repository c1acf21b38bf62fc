//! The price history as the documents read it: its days held for statistics
//! ([`MarketDays`]), its span for `/v1/status`, one station's prices, and the backfill's
//! progress (what a document says while the history is still loading). Everything held is
//! read at one history counter and confirmed against the store once per recheck interval.

use std::collections::HashSet;
use std::sync::Arc;

use jiff::Timestamp;
use jiff::civil::Date;

use super::CatalogError;
use super::backfill::BackfillProgress;
use super::market::{self, MarketDays, StationFilter};
use crate::memo::{Memo, Recheck};
use crate::snapshot::PriceService;
use wafuel_domain::backfill::{Backfill, BackfillState};
use wafuel_domain::codes::{ProductCode, RegionCode};
use wafuel_domain::key::StationId;
use wafuel_domain::stats::{Interval, Market};
use wafuel_domain::time::Day;
use wafuel_query::market::StatsQuery;
use wafuel_query::{Dialect, Selection};
use wafuel_store::StoreError;
use wafuel_store::history::HistoryStore;

/// The history's first and last day, and its stations.
pub type HistorySpan = (Option<(Date, Date)>, usize);

/// The history service: the store, its days held, and the backfill's progress.
pub struct History {
    /// The prices of today, for region membership (the feed names no region per station).
    prices: Arc<PriceService>,
    market: Arc<MarketDays>,
    span: Memo<(), Option<i64>, HistorySpan>,
    backfill: BackfillProgress,
}

impl History {
    /// The history of the price service's store; `backfill`: whether this deployment runs
    /// the history backfill (what is said before any progress is recorded).
    pub fn new(prices: Arc<PriceService>, recheck: Recheck, backfill: bool) -> Self {
        let market = Arc::new(MarketDays::new(prices.history().store.clone(), recheck));
        let backfill = BackfillProgress::new(prices.store().clone(), backfill, recheck);
        Self { prices, market, span: Memo::new(1), backfill }
    }

    pub fn store(&self) -> &Arc<dyn HistoryStore> {
        &self.prices.history().store
    }

    /// The days held, and the history counter they were read at.
    pub fn market(&self) -> &Arc<MarketDays> {
        &self.market
    }

    pub fn now(&self) -> Timestamp {
        self.prices.clock().now()
    }

    /// The store's history counter, confirmed at most once per recheck interval.
    pub async fn version(&self) -> Result<Option<i64>, StoreError> {
        self.market.version(self.now()).await
    }

    /// The history backfill's progress as the shared store records it (whichever replica
    /// runs it); before any record, running where this deployment backfills, else off.
    pub async fn backfill(&self) -> Backfill {
        self.backfill.at(self.now()).await
    }

    /// What a document read from the history says while the history is still loading (the
    /// backfill running, or its lists unreadable): how far; `None` once done or off.
    pub async fn loading(&self) -> Option<String> {
        let backfill = self.backfill().await;
        matches!(backfill.state, BackfillState::Running | BackfillState::Failed)
            .then(|| backfill.loading_words())
    }

    /// The history's first and last day and its stations, read again only when the history
    /// counter moved (reading every station costs a store scan).
    pub async fn span(&self) -> Result<HistorySpan, StoreError> {
        let version = self.version().await?;
        if let Some(span) = self.span.get(&(), &version) {
            return Ok(span);
        }
        let stations = self.store().stations().await?;
        let first = stations.values().map(|s| s.first_seen).min();
        let last = stations.values().map(|s| s.last_seen).max();
        let span = (first.zip(last), stations.len());
        self.span.insert((), version, span);
        Ok(span)
    }

    /// The market a `/v1/stats` query asks for, from the history days held.
    pub async fn stats(&self, query: &StatsQuery) -> Result<Market, CatalogError> {
        let held = &self.market;
        let members = self.region_members(query.product, query.regions.as_deref()).await?;
        let range = (query.product, query.from, query.to);
        if query.brands.is_none() && query.regions.is_none() {
            return Ok(held.statewide(range, query.interval, self.now()).await?);
        }
        let filter = StationFilter {
            brands: query.brands.as_deref(),
            regions: query.regions.as_deref().zip(members.as_ref()),
        };
        if query.interval != Interval::Day {
            return Ok(market::periods(self.store().as_ref(), range, query.interval, filter).await?);
        }
        let rows = held.rows(query.product, query.from, query.to, self.now()).await?;
        // Up to three years of every matching station's days: CPU work, beside the workers.
        Ok(crate::sync::compute(|| market::market(&rows, filter)).await)
    }

    /// The stations of `regions` (`None` without a region filter). Region membership is the
    /// source's own answer for today (the feed names no region per station): the same
    /// source-filtered selection `/v1?region=` makes, held alike.
    pub(super) async fn region_members(
        &self,
        product: ProductCode,
        regions: Option<&[RegionCode]>,
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
        Ok(Some(data.quotes().map(|q| q.station.id.as_str().to_owned()).collect()))
    }

    /// One station's stored prices of `product` from `from` to `to`, as (date, tenths of a
    /// cent); `NotFound` when the history never had that station, `NotSold` when it never had
    /// it with that product (saying which products it has).
    pub async fn station(
        &self,
        station_id: &StationId,
        product: ProductCode,
        from: Date,
        to: Date,
    ) -> Result<Vec<(Date, i64)>, CatalogError> {
        let store = self.store();
        if let Some(points) = store.station_history(station_id.as_str(), product, from, to).await? {
            return Ok(points);
        }
        // Only on the way to a 404: which products the station has (a day's read each, empty
        // for a product it has and `None` for one it never had).
        let mut sold = Vec::new();
        for other in wafuel_domain::codes::product_codes().filter(|p| *p != product) {
            if store.station_history(station_id.as_str(), other, to, to).await?.is_some() {
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
}
