//! Wholesale prices for `/v1/wholesale` and `/v1/stats`: a centre's terminal prices by day
//! from the store, and beside them the retail median of the stations whose centre it is (the
//! margin's other side). Which stations are a centre's is worked out once per history counter
//! (a station's centre is the one nearest to it, or its region's when the history has no point).
//!
//! Both series are held in memory by day, per (product, centre), and read from the store only
//! for the days of a window not yet held: the store answers a year of terminal rows in about
//! 15 ms (SQLite hands rows over one at a time), a held window in microseconds. What is held is
//! dropped when the store's wholesale or history counter moves (checked at most once per
//! recheck interval, as the market's days are).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use jiff::Timestamp;
use jiff::civil::Date;

use super::CatalogError;
use super::history::History;
use crate::memo::{Memo, Recheck};
use wafuel_domain::codes::{ProductCode, RegionCode};
use wafuel_domain::forecast::Daily;
use wafuel_domain::stats::DayFigures;
use wafuel_domain::wholesale::{
    Centre, WholesaleDay, WholesaleDoc, WholesaleRow, days, forecast_products, has_wholesale, margin,
    regions_centre,
};
use wafuel_query::market::StatsQuery;
use wafuel_query::wholesale::WholesaleQuery;
use wafuel_store::StoreError;
use wafuel_store::history::HistoryStore;
use wafuel_store::wholesale::WholesaleStore;

/// Days held at most per series kind (every product and centre together): past it, all of
/// that kind is dropped and read again. 25 years of one centre are about 9,500 days.
const MAX_HELD_DAYS: usize = 200_000;

/// Days of one kind, per (product, centre), read at one store counter: `None` for a day the
/// store has nothing for.
struct Held<T> {
    version: Option<i64>,
    checked_at: Option<Timestamp>,
    days: HashMap<(ProductCode, Centre), BTreeMap<Date, Option<T>>>,
    count: usize,
}

impl<T> Default for Held<T> {
    fn default() -> Self {
        Self { version: None, checked_at: None, days: HashMap::new(), count: 0 }
    }
}

impl<T: Clone> Held<T> {
    /// The first and last day of `from..=to` not held, if any.
    fn missing(&self, series: (ProductCode, Centre), from: Date, to: Date) -> Option<(Date, Date)> {
        let days = self.days.get(&series);
        let held = |d: &Date| days.is_some_and(|m| m.contains_key(d));
        let mut first = None;
        let mut last = None;
        let mut day = from;
        while day <= to {
            if !held(&day) {
                first.get_or_insert(day);
                last = Some(day);
            }
            let Ok(next) = day.tomorrow() else { break };
            day = next;
        }
        Some((first?, last?))
    }

    /// Hold what the store had for `from..=to` (every day of it, with or without a value).
    fn put(&mut self, series: (ProductCode, Centre), (from, to): (Date, Date), mut got: BTreeMap<Date, T>) {
        if self.count > MAX_HELD_DAYS {
            self.days.clear();
            self.count = 0;
        }
        let days = self.days.entry(series).or_default();
        let mut day = from;
        while day <= to {
            if days.insert(day, got.remove(&day)).is_none() {
                self.count += 1;
            }
            let Ok(next) = day.tomorrow() else { break };
            day = next;
        }
    }

    /// What a read of the missing days `a..=b` made at counter `version` answers for
    /// `from..=to`: held, and answered from what is held, when the counter is still the same;
    /// else answered with the read over what was held, and nothing of it held.
    fn settle(
        &mut self,
        series: (ProductCode, Centre),
        (from, to): (Date, Date),
        (a, b): (Date, Date),
        read: BTreeMap<Date, T>,
        version: Option<i64>,
    ) -> Vec<(Date, T)> {
        if self.version == version {
            self.put(series, (a, b), read);
            return self.window(series, from, to);
        }
        let mut out = self.window(series, from, to);
        out.retain(|(d, _)| *d < a || *d > b);
        out.extend(read);
        out.sort_by_key(|(d, _)| *d);
        out
    }

    /// The held values of `from..=to`, ascending.
    fn window(&self, series: (ProductCode, Centre), from: Date, to: Date) -> Vec<(Date, T)> {
        self.days.get(&series).map_or_else(Vec::new, |m| {
            m.range(from..=to).filter_map(|(d, v)| Some((*d, v.clone()?))).collect()
        })
    }
}

/// Each history station's centre, by sid.
type StationCentres = Arc<HashMap<i64, Centre>>;

/// The wholesale service: the terminal gate prices of the store, and the margins' retail
/// side out of the history, each held by day.
pub struct Wholesale {
    store: Arc<dyn WholesaleStore>,
    history: Arc<History>,
    /// How often held prices are confirmed against the store's counter.
    recheck: Recheck,
    /// Each history station's centre, at one history counter.
    centres: Memo<(), i64, StationCentres>,
    /// Each centre's terminal figures by day, at one wholesale counter.
    prices: Mutex<Held<WholesaleDay>>,
    /// The median retail price (cents) of each centre's stations by day, at one history counter.
    medians: Mutex<Held<f64>>,
    /// One store read at a time: concurrent misses of one window read it once.
    reading: tokio::sync::Mutex<()>,
}

impl Wholesale {
    pub fn new(store: Arc<dyn WholesaleStore>, history: Arc<History>, recheck: Recheck) -> Self {
        Self {
            store,
            history,
            recheck,
            centres: Memo::new(1),
            prices: Mutex::default(),
            medians: Mutex::default(),
            reading: tokio::sync::Mutex::new(()),
        }
    }

    /// `/v1/wholesale`'s days, each with its margin.
    pub async fn document(&self, q: &WholesaleQuery) -> Result<WholesaleDoc, CatalogError> {
        if !has_wholesale(q.product) {
            return Ok(WholesaleDoc {
                product: q.product,
                centre: q.centre,
                from: q.from,
                to: q.to,
                rows: Vec::new(),
            });
        }
        let prices = self.centre_days(q.product, q.centre, (q.from, q.to)).await?;
        let medians: BTreeMap<Date, f64> =
            self.centre_medians(q.product, q.centre, (q.from, q.to)).await?.into_iter().collect();
        let rows = prices
            .into_iter()
            .map(|(_, day)| {
                let margin = medians.get(&day.date).map(|m| margin(*m, day.mean));
                WholesaleRow { day, margin }
            })
            .collect();
        Ok(WholesaleDoc { product: q.product, centre: q.centre, from: q.from, to: q.to, rows })
    }

    /// The terminal centre of a `/v1/stats` query (Perth statewide, else the one most of its
    /// regions are nearest to) and its mean terminal price on each day of the query's window
    /// with one (hundredths of a cent); `None` for a product without a terminal gate price.
    pub async fn stats(&self, q: &StatsQuery) -> Result<Option<(Centre, BTreeMap<Date, i64>)>, CatalogError> {
        if !has_wholesale(q.product) {
            return Ok(None);
        }
        let centre = regions_centre(q.regions.as_deref());
        let days = self.centre_days(q.product, centre, (q.from, q.to)).await?;
        Ok(Some((centre, days.into_iter().map(|(d, day)| (d, day.mean)).collect())))
    }

    /// The newest day with a terminal price of `product` at `centre` (`/v1/status`).
    pub async fn newest_day(&self, product: ProductCode, centre: Centre) -> Result<Option<Date>, StoreError> {
        self.store.newest_wholesale_day(product, centre).await
    }

    /// The terminal gate price a forecast of `product` over `regions` reads (c/L a day, the
    /// centre's mean, [`forecast_products`]' first with any), with the wholesale counter it
    /// was read at; `None` without a price in the window.
    pub async fn for_forecast(
        &self,
        product: ProductCode,
        regions: Option<&[RegionCode]>,
        range: (Date, Date),
    ) -> Result<(Option<Daily>, Option<i64>), CatalogError> {
        let centre = regions_centre(regions);
        let mut series = None;
        for tgp in tgp_products(product) {
            let days: Vec<WholesaleDay> =
                self.centre_days(tgp, centre, range).await?.into_iter().map(|(_, d)| d).collect();
            series = tgp_series(&days);
            if series.is_some() {
                break;
            }
        }
        // The counter the held days were read at (`centre_days` has just confirmed it).
        let version = crate::sync::lock(&self.prices).version;
        Ok((series, version))
    }

    /// A centre's terminal figures of each day of `from..=to` with prices.
    async fn centre_days(
        &self,
        product: ProductCode,
        centre: Centre,
        (from, to): (Date, Date),
    ) -> Result<Vec<(Date, WholesaleDay)>, CatalogError> {
        self.version(self.history.now()).await?;
        let series = (product, centre);
        let missing = crate::sync::lock(&self.prices).missing(series, from, to);
        if let Some((a, b)) = missing {
            let _reading = self.reading.lock().await;
            let version = crate::sync::lock(&self.prices).version;
            let read: BTreeMap<Date, WholesaleDay> =
                days(&self.store.wholesale(product, Some(centre), a, b).await?)
                    .into_iter()
                    .map(|d| (d.date, d))
                    .collect();
            let mut prices = crate::sync::lock(&self.prices);
            return Ok(prices.settle(series, (from, to), (a, b), read, version));
        }
        Ok(crate::sync::lock(&self.prices).window(series, from, to))
    }

    /// The median retail price (cents) of the stations whose centre is `centre`, each day of
    /// `from..=to` with prices.
    async fn centre_medians(
        &self,
        product: ProductCode,
        centre: Centre,
        (from, to): (Date, Date),
    ) -> Result<Vec<(Date, f64)>, CatalogError> {
        let version = self.history.version().await?.unwrap_or(0);
        {
            let mut medians = crate::sync::lock(&self.medians);
            if medians.version != Some(version) {
                *medians = Held { version: Some(version), ..Held::default() };
            }
        }
        let series = (product, centre);
        let missing = crate::sync::lock(&self.medians).missing(series, from, to);
        if let Some((a, b)) = missing {
            let _reading = self.reading.lock().await;
            let centres = self.station_centres(version).await?;
            let mut read: BTreeMap<Date, f64> = BTreeMap::new();
            let mut sorted: Vec<i64> = Vec::new();
            let store: &dyn HistoryStore = self.history.store().as_ref();
            // A day at a time from the store: decades never sit in memory as prices.
            store
                .each_day(product, a, b, &mut |date, prices| {
                    sorted.clear();
                    sorted.extend(
                        prices.iter().filter(|(sid, _)| centres.get(sid) == Some(&centre)).map(|(_, p)| *p),
                    );
                    sorted.sort_unstable();
                    if let Some(f) = DayFigures::of_sorted(&sorted) {
                        read.insert(date, wafuel_domain::price::Tenths(f.median).cents());
                    }
                })
                .await?;
            let mut medians = crate::sync::lock(&self.medians);
            return Ok(medians.settle(series, (from, to), (a, b), read, Some(version)));
        }
        Ok(crate::sync::lock(&self.medians).window(series, from, to))
    }

    /// Each history station's centre at history counter `version` (read again when it moved).
    async fn station_centres(&self, version: i64) -> Result<StationCentres, StoreError> {
        if let Some(map) = self.centres.get(&(), &version) {
            return Ok(map);
        }
        let places = self.store.station_places().await?;
        let map: StationCentres =
            Arc::new(places.iter().filter_map(|p| Some((p.sid, p.centre()?))).collect());
        self.centres.insert((), version, map.clone());
        Ok(map)
    }

    /// The store's wholesale counter at `now`, confirmed at most once per recheck interval;
    /// held prices read at another counter are dropped.
    pub async fn version(&self, now: Timestamp) -> Result<Option<i64>, CatalogError> {
        if self.recheck.due(crate::sync::lock(&self.prices).checked_at, now) {
            let version = self.store.wholesale_version().await?;
            let mut prices = crate::sync::lock(&self.prices);
            if prices.version != Some(version) {
                *prices = Held { version: Some(version), ..Held::default() };
            }
            prices.checked_at = Some(now);
        }
        Ok(crate::sync::lock(&self.prices).version)
    }

    /// The wholesale counter last confirmed, while that is recent at `now`.
    pub fn recent_version(&self, now: Timestamp) -> Option<Option<i64>> {
        let prices = crate::sync::lock(&self.prices);
        (!self.recheck.due(prices.checked_at, now)).then_some(prices.version)
    }
}

/// The products whose terminal gate price a forecast of `product` reads, in order: the first
/// with any day in the window is read (the answer's held days and the backtest's store alike).
pub fn tgp_products(product: ProductCode) -> impl Iterator<Item = ProductCode> {
    forecast_products(product).iter().filter_map(|&code| ProductCode::parse(code))
}

/// A centre's days as the series a forecast reads (c/L a day, the mean); `None` without a day.
pub fn tgp_series(days: &[WholesaleDay]) -> Option<Daily> {
    (!days.is_empty())
        .then(|| Daily::new(days.iter().map(|d| (d.date, wafuel_domain::price::Hundredths(d.mean).cents()))))
}
