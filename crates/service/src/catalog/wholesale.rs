//! Wholesale prices for `/v1/wholesale` and `/v1/stats`: a centre's terminal prices by day
//! from the store, and beside them the retail median of the stations whose centre it is (the
//! margin's other side). Which stations are a centre's is worked out once per history counter
//! (a station's centre is the one nearest to it, or its region's when the history has no point).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use jiff::civil::Date;

use super::{Catalog, CatalogError};
use crate::model::codes::ProductCode;
use crate::model::stats::DayFigures;
use crate::model::wholesale::{Centre, WholesaleDoc, WholesaleRow, days, has_wholesale, margin};
use crate::query::wholesale::WholesaleQuery;
use crate::store::StoreError;
use crate::store::history::HistoryStore;
use crate::store::wholesale::WholesaleStore;

/// The centre of each station of the history, read at one history counter.
#[derive(Default)]
pub struct Centres {
    held: Mutex<Option<(i64, Arc<HashMap<i64, Centre>>)>>,
}

impl Catalog {
    /// The store's wholesale prices, when the catalog has a store that keeps them.
    pub fn with_wholesale(mut self, store: Arc<dyn WholesaleStore>) -> Self {
        self.wholesale = Some(store);
        self
    }

    fn wholesale_store(&self) -> Result<&Arc<dyn WholesaleStore>, CatalogError> {
        self.wholesale.as_ref().ok_or(CatalogError::NoHistory)
    }

    /// `/v1/wholesale`'s days, each with its margin.
    pub async fn wholesale(&self, q: &WholesaleQuery) -> Result<WholesaleDoc, CatalogError> {
        let prices = self.wholesale_store()?.wholesale(q.product, Some(q.centre), q.from, q.to).await?;
        let medians = self.centre_medians(q.product, q.centre, (q.from, q.to)).await?;
        let rows = days(&prices)
            .into_iter()
            .map(|day| {
                let retail_median = medians.get(&day.date).copied();
                let margin = retail_median.map(|m| margin(m, day.mean));
                WholesaleRow { day, retail_median, margin }
            })
            .collect();
        Ok(WholesaleDoc { product: q.product, centre: q.centre, from: q.from, to: q.to, rows })
    }

    /// A centre's mean terminal price of a product on each day with one (hundredths of a
    /// cent); empty for a product without one, or without a store that keeps them.
    pub async fn wholesale_means(
        &self,
        product: ProductCode,
        centre: Centre,
        (from, to): (Date, Date),
    ) -> Result<BTreeMap<Date, i64>, CatalogError> {
        let Some(store) = self.wholesale.as_ref().filter(|_| has_wholesale(product)) else {
            return Ok(BTreeMap::new());
        };
        let prices = store.wholesale(product, Some(centre), from, to).await?;
        Ok(days(&prices).into_iter().map(|d| (d.date, d.mean)).collect())
    }

    /// The median retail price (cents) of the stations whose centre is `centre`, each day.
    async fn centre_medians(
        &self,
        product: ProductCode,
        centre: Centre,
        (from, to): (Date, Date),
    ) -> Result<BTreeMap<Date, f64>, CatalogError> {
        let (Some(market), Some(history)) = (self.market.as_ref(), self.prices.history()) else {
            return Ok(BTreeMap::new());
        };
        let now = self.now();
        let version = market.version(now).await?.unwrap_or(0);
        let centres = self.centres.of(self.wholesale_store()?.as_ref(), version).await?;
        let kept = move |sid: i64| centres.get(&sid) == Some(&centre);
        let median = |prices: &[(i64, i64)]| -> Option<f64> {
            let mut sorted: Vec<i64> = prices.iter().filter(|(sid, _)| kept(*sid)).map(|(_, p)| *p).collect();
            sorted.sort_unstable();
            DayFigures::of_sorted(&sorted).map(|f| crate::model::station::cents(f.median))
        };
        let mut out = BTreeMap::new();
        let days = (to - from).get_days() + 1;
        if days <= crate::time::THREE_YEARS_DAYS {
            // Held in memory for statistics already (the same rows `/v1/stats` reads).
            let rows = market.rows(product, from, to, now).await?;
            for (date, prices) in &rows.days {
                if let Some(m) = median(prices) {
                    out.insert(*date, m);
                }
            }
        } else {
            // Decades: a day at a time from the store, never all in memory.
            let store: &dyn HistoryStore = history.store.as_ref();
            store
                .each_day(product, from, to, &mut |date, prices| {
                    if let Some(m) = median(prices) {
                        out.insert(date, m);
                    }
                })
                .await?;
        }
        Ok(out)
    }
}

impl Centres {
    /// Each station's centre at history counter `version` (read again when it moved).
    async fn of(
        &self,
        store: &dyn WholesaleStore,
        version: i64,
    ) -> Result<Arc<HashMap<i64, Centre>>, StoreError> {
        if let Some((v, held)) = crate::sync::lock(&self.held).as_ref()
            && *v == version
        {
            return Ok(held.clone());
        }
        let places = store.station_places().await?;
        let map: Arc<HashMap<i64, Centre>> =
            Arc::new(places.iter().filter_map(|p| Some((p.sid, p.centre()?))).collect());
        *crate::sync::lock(&self.held) = Some((version, map.clone()));
        Ok(map)
    }
}
