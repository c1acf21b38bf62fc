//! Days of price history decoded in memory for `/v1/stats`: each (product, day) is read from
//! the store once and kept until the store's history counter moves (any replica's write or
//! prune bumps it), checked at most once per recheck interval. A window of days already
//! held is answered without the store.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::civil::Date;
use jiff::{SignedDuration, Timestamp};

use crate::model::stats::Market;
use crate::store::StoreError;
use crate::store::history::{DayPrices, HistoryStation, HistoryStore, MarketRows};

/// Prices held at most (all products): three years of one product's statewide days, or
/// about 40 MiB at 16 bytes each; past it, everything held is dropped and read again.
pub const MAX_HELD_PRICES: usize = 1_100_000;

#[derive(Default)]
struct Held {
    /// The counter the days were read at; `None` before the first read.
    version: Option<i64>,
    checked_at: Option<Timestamp>,
    stations: Arc<HashMap<i64, HistoryStation>>,
    /// Every day read, with or without prices (`None`: the store has no row for it).
    days: HashMap<u8, BTreeMap<Date, Option<DayPrices>>>,
    prices: usize,
}

/// Decoded history days in front of the store.
pub struct MarketDays {
    store: Arc<dyn HistoryStore>,
    recheck: SignedDuration,
    held: Mutex<Held>,
    /// One store read at a time: concurrent misses of the same window read it once.
    reading: tokio::sync::Mutex<()>,
}

impl MarketDays {
    pub fn new(store: Arc<dyn HistoryStore>, recheck: Duration) -> Self {
        Self {
            store,
            recheck: SignedDuration::try_from(recheck).unwrap_or(SignedDuration::MAX),
            held: Mutex::new(Held::default()),
            reading: tokio::sync::Mutex::new(()),
        }
    }

    /// Every price of `product` from `from` to `to`, as the store has it at `now`.
    pub async fn rows(
        &self,
        product: u8,
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

    /// The window from memory, when every day of it is held.
    fn window(&self, product: u8, from: Date, to: Date) -> Option<MarketRows> {
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

    /// Drop what is held when the store's history changed since it was read.
    async fn confirm(&self, now: Timestamp) -> Result<(), StoreError> {
        {
            let held = crate::sync::lock(&self.held);
            if let Some(at) = held.checked_at {
                let since = now.duration_since(at);
                if since >= SignedDuration::ZERO && since < self.recheck {
                    return Ok(());
                }
            }
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

/// Statistics of stored prices, optionally only for some brands or some stations.
pub fn market(rows: &MarketRows, brands: Option<&[u8]>, stations: Option<&HashSet<String>>) -> Market {
    let mut by_day: Vec<(Date, Vec<(&str, i64)>)> = Vec::with_capacity(rows.days.len());
    for (date, day) in &rows.days {
        let mut prices = Vec::with_capacity(day.len());
        for (sid, price) in day.iter() {
            let Some(st) = rows.stations.get(sid) else { continue };
            if brands.is_some_and(|b| !b.contains(&st.brand)) {
                continue;
            }
            if stations.is_some_and(|set| !set.contains(&st.station_id)) {
                continue;
            }
            prices.push((st.station_id.as_str(), *price));
        }
        if !prices.is_empty() {
            by_day.push((*date, prices));
        }
    }
    Market::of_days(&by_day)
}
