//! Days of price history decoded in memory for `/v1/stats`: each (product, day) is read from
//! the store once and kept until the store's history counter moves (any replica's write or
//! prune bumps it), checked at most once per recheck interval. A window of days already
//! held is answered without the store.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use jiff::Timestamp;
use jiff::civil::Date;

use crate::memo::Recheck;

use wafuel_domain::codes::{BrandCode, ProductCode, RegionCode};
use wafuel_domain::stats::{DayStats, Interval, Market, Periods};
use wafuel_store::StoreError;
use wafuel_store::history::{DayPrices, DaySummary, HistoryStation, HistoryStore, MarketRows};

/// Prices held at most (all products): three years of one product's statewide days, or
/// about 40 MiB at 16 bytes each; past it, everything held is dropped and read again.
pub const MAX_HELD_PRICES: usize = 1_100_000;

#[derive(Default)]
struct Held {
    /// The counter the days were read at; `None` before the first read.
    version: Option<i64>,
    checked_at: Option<Timestamp>,
    stations: Arc<HashMap<i64, HistoryStation>>,
    /// Whether `stations` was read at `version`.
    stations_read: bool,
    /// Every day read, with or without prices (`None`: the store has no row for it).
    days: HashMap<ProductCode, BTreeMap<Date, Option<DayPrices>>>,
    prices: usize,
}

/// Decoded history days in front of the store.
pub struct MarketDays {
    store: Arc<dyn HistoryStore>,
    recheck: Recheck,
    held: Mutex<Held>,
    /// One store read at a time: concurrent misses of the same window read it once.
    reading: tokio::sync::Mutex<()>,
}

impl MarketDays {
    pub fn new(store: Arc<dyn HistoryStore>, recheck: Recheck) -> Self {
        Self { store, recheck, held: Mutex::new(Held::default()), reading: tokio::sync::Mutex::new(()) }
    }

    /// Every price of `product` from `from` to `to`, as the store has it at `now`.
    pub async fn rows(
        &self,
        product: ProductCode,
        from: Date,
        to: Date,
        now: Timestamp,
    ) -> Result<MarketRows, StoreError> {
        self.confirm(now).await?;
        if let Some(rows) = self.window(product, from, to) {
            return Ok(rows);
        }
        let _reading = self.reading.lock().await;
        if let Some(rows) = self.window(product, from, to) {
            return Ok(rows);
        }
        let version = crate::sync::lock(&self.held).version;
        let read = self.store.market(product, from, to).await?;
        let mut held = crate::sync::lock(&self.held);
        // Read under a counter since replaced: answer with it, hold nothing of it.
        if held.version != version {
            return Ok(read);
        }
        if held.prices > MAX_HELD_PRICES {
            held.days.clear();
            held.prices = 0;
        }
        held.stations = read.stations.clone();
        held.stations_read = true;
        let mut got: BTreeMap<Date, Option<DayPrices>> =
            read.days.iter().map(|(d, p)| (*d, Some(p.clone()))).collect();
        let mut day = from;
        while day <= to {
            got.entry(day).or_insert(None);
            let Ok(next) = day.tomorrow() else { break };
            day = next;
        }
        let added: usize = got.values().flatten().map(|p| p.len()).sum();
        held.prices += added;
        held.days.entry(product).or_default().extend(got);
        Ok(read)
    }

    /// Every station of the history, by sid, as the store has it at `now`.
    async fn stations(&self, now: Timestamp) -> Result<Arc<HashMap<i64, HistoryStation>>, StoreError> {
        self.confirm(now).await?;
        let version = {
            let held = crate::sync::lock(&self.held);
            if held.stations_read {
                return Ok(held.stations.clone());
            }
            held.version
        };
        let stations = self.store.stations().await?;
        let mut held = crate::sync::lock(&self.held);
        if held.version == version {
            held.stations = stations.clone();
            held.stations_read = true;
        }
        Ok(stations)
    }

    /// Statewide statistics of `product` from `from` to `to` (no station filter), from the
    /// figures stored with each day, week and month: a row a day for daily statistics, a row
    /// a period for weekly and monthly ones (and the last year of days for the cycle), whatever
    /// the window. A week or month the window cuts (or pruning cut) is folded from its days
    /// inside the window.
    pub async fn statewide(
        &self,
        (product, from, to): (ProductCode, Date, Date),
        interval: Interval,
        now: Timestamp,
    ) -> Result<Market, StoreError> {
        let stations = self.stations(now).await?;
        let names = |sids: &[i64]| -> Vec<String> {
            sids.iter().filter_map(|sid| stations.get(sid)).map(|st| st.station_id.clone()).collect()
        };
        let day_rows = |summaries: Vec<DaySummary>| -> Vec<DayStats> {
            summaries.into_iter().map(|s| s.figures.stats(s.date, names(&s.cheapest))).collect()
        };
        if interval == Interval::Day {
            return Ok(Market::of_stats(day_rows(self.store.day_summaries(product, from, to).await?)));
        }
        // Whole periods of the window, as stored.
        let mut rows: BTreeMap<Date, DayStats> = BTreeMap::new();
        let mut gaps: Vec<(Date, Date)> = Vec::new();
        let mut cursor = from;
        for p in self.store.period_summaries(product, interval, from, to).await? {
            let end = interval.end(p.start);
            if end > to {
                continue;
            }
            if cursor < p.start {
                gaps.push((cursor, p.start.yesterday().unwrap_or(p.start)));
            }
            rows.insert(p.start, p.figures.stats(p.start, p.stations, names(&p.cheapest)));
            cursor = end.tomorrow().unwrap_or(end);
        }
        if cursor <= to {
            gaps.push((cursor, to));
        }
        // The rest (the window's cut ends, a period pruning cut) from its days.
        for (a, b) in gaps {
            let mut folded = Periods::new(interval, 0);
            for s in self.store.day_summaries(product, a, b).await? {
                folded.add_day(s.date, &s.figures, names(&s.cheapest));
            }
            for mut row in folded.finish().days {
                let end = interval.end(row.date);
                row.stations = self.distinct_stations(product, row.date.max(a), end.min(b)).await?;
                rows.insert(row.date, row);
            }
        }
        // The cycle and the weekday pattern: the window's last year of daily medians.
        let last = self.store.last_day_summaries(product, (from, to), CYCLE_WINDOW_DAYS).await?;
        let medians: Vec<(Date, f64)> =
            last.iter().map(|s| (s.date, s.figures.median as f64 / 10.0)).collect();
        Ok(Market::with_medians(rows.into_values().collect(), &medians))
    }

    /// The distinct stations priced in `product` from `from` to `to`, from the stored days.
    async fn distinct_stations(
        &self,
        product: ProductCode,
        from: Date,
        to: Date,
    ) -> Result<usize, StoreError> {
        let mut sids = HashSet::new();
        self.store
            .each_day(product, from, to, &mut |_, day| sids.extend(day.iter().map(|(sid, _)| *sid)))
            .await?;
        Ok(sids.len())
    }

    /// The window from memory, when every day of it is held.
    fn window(&self, product: ProductCode, from: Date, to: Date) -> Option<MarketRows> {
        let held = crate::sync::lock(&self.held);
        let days = held.days.get(&product)?;
        let span = days.range(from..=to);
        let expected = i64::from(to.since(from).ok()?.get_days()) + 1;
        let mut out = Vec::new();
        let mut seen = 0i64;
        for (d, prices) in span {
            seen += 1;
            if let Some(p) = prices {
                out.push((*d, p.clone()));
            }
        }
        (seen == expected).then(|| MarketRows { days: out, stations: held.stations.clone() })
    }

    /// The store's history changed (a catalog was published): the next read checks its
    /// counter instead of trusting the last check until the recheck interval ends.
    pub fn doubt(&self) {
        crate::sync::lock(&self.held).checked_at = None;
    }

    /// The counter last checked, without asking the store.
    pub fn known_version(&self) -> Option<i64> {
        crate::sync::lock(&self.held).version
    }

    /// The counter last checked, while that check is recent at `now` (within the recheck
    /// interval); `None` when the store must be asked again.
    pub fn recent_version(&self, now: Timestamp) -> Option<Option<i64>> {
        let held = crate::sync::lock(&self.held);
        self.recheck.recent(held.checked_at?, now).then_some(held.version)
    }

    /// The store's history counter at `now` (checked at most once per recheck interval).
    pub async fn version(&self, now: Timestamp) -> Result<Option<i64>, StoreError> {
        self.confirm(now).await?;
        Ok(crate::sync::lock(&self.held).version)
    }

    /// Drop what is held when the store's history changed since it was read.
    async fn confirm(&self, now: Timestamp) -> Result<(), StoreError> {
        if !self.recheck.due(crate::sync::lock(&self.held).checked_at, now) {
            return Ok(());
        }
        let version = self.store.history_version().await?;
        let mut held = crate::sync::lock(&self.held);
        if held.version != Some(version) {
            *held = Held { version: Some(version), ..Held::default() };
        }
        held.checked_at = Some(now);
        Ok(())
    }
}

/// Which stations statistics count: some brands, and some regions (a station is in a region
/// when the source lists it there today, or when an archive row named that region for it).
#[derive(Debug, Clone, Copy, Default)]
pub struct StationFilter<'a> {
    pub brands: Option<&'a [BrandCode]>,
    pub regions: Option<(&'a [RegionCode], &'a HashSet<String>)>,
}

impl StationFilter<'_> {
    pub fn keeps(&self, st: &HistoryStation) -> bool {
        self.brands.is_none_or(|b| b.iter().any(|c| *c == st.brand))
            && self.regions.is_none_or(|(regions, members)| {
                members.contains(&st.station_id) || st.region.is_some_and(|r| regions.iter().any(|c| *c == r))
            })
    }
}

/// Daily statistics of stored prices, for the stations `filter` keeps.
pub fn market(rows: &MarketRows, filter: StationFilter<'_>) -> Market {
    let mut by_day: Vec<(Date, Vec<(&str, i64)>)> = Vec::with_capacity(rows.days.len());
    for (date, day) in &rows.days {
        let mut prices = Vec::with_capacity(day.len());
        for (sid, price) in day.iter() {
            let Some(st) = rows.stations.get(sid) else { continue };
            if filter.keeps(st) {
                prices.push((st.station_id.as_str(), *price));
            }
        }
        if !prices.is_empty() {
            by_day.push((*date, prices));
        }
    }
    Market::of_days(&by_day)
}

/// Days of the daily series the cycle is computed from, in weekly or monthly statistics.
pub const CYCLE_WINDOW_DAYS: usize = 365;

/// Weekly or monthly statistics over any range, read from the store a day at a time (decades
/// of prices never sit in memory at once, and are not held after).
pub async fn periods(
    store: &dyn HistoryStore,
    (product, from, to): (ProductCode, Date, Date),
    interval: Interval,
    filter: StationFilter<'_>,
) -> Result<Market, StoreError> {
    let stations = store.stations().await?;
    // The kept stations' ids by sid (sids are small and dense): decades of days look each
    // price's station up millions of times.
    let size = stations.keys().copied().max().map_or(0, |m| usize::try_from(m).unwrap_or(0) + 1);
    let mut kept: Vec<Option<&str>> = vec![None; size];
    for (sid, st) in stations.iter() {
        if let Some(slot) = usize::try_from(*sid).ok().and_then(|i| kept.get_mut(i)) {
            *slot = filter.keeps(st).then_some(st.station_id.as_str());
        }
    }
    let mut periods = Periods::new(interval, CYCLE_WINDOW_DAYS);
    let mut prices: Vec<(&str, i64)> = Vec::new();
    store
        .each_day(product, from, to, &mut |date, day| {
            prices.clear();
            for (sid, price) in day {
                if let Some(id) = usize::try_from(*sid).ok().and_then(|i| kept.get(i).copied().flatten()) {
                    prices.push((id, *price));
                }
            }
            periods.add(date, &prices);
        })
        .await?;
    Ok(periods.finish())
}
