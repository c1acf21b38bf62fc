//! `price.lastChange` of the station API: each station's runs of equal prices over the
//! history's last [`LOOKBACK_DAYS`] days before the day shown, worked out once per (fuel, day)
//! and history counter when the day's catalog is published (the event reader hears it, on
//! every replica; the first answer instead only if it comes first), then read per row in O(1).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jiff::civil::Date;

use super::{Catalog, CatalogError};
use wafuel_domain::codes::ProductCode;
use wafuel_domain::last_change::Runs;

/// Days of history before the day shown that the last change is looked for in: past them,
/// a price unchanged that long says null (the stored days do not reach its change).
pub const LOOKBACK_DAYS: i64 = 120;
/// (fuel, day) pairs kept; past it, all are dropped and worked out again.
const KEPT: usize = 32;

/// Each station's runs by its station id.
pub type StationRuns = Arc<HashMap<String, Runs>>;

/// The runs of one (fuel, day), with the history counter they were read at.
type HeldRuns = (Option<i64>, StationRuns);

/// The runs held, per (fuel, day).
#[derive(Default)]
pub struct LastChanges {
    held: Mutex<HashMap<(ProductCode, Date), HeldRuns>>,
}

impl Catalog {
    /// The catalog of `product` for `day` was published: work its stations' last changes out
    /// now, so no answer waits for them.
    pub async fn prepare_last_changes(&self, product: ProductCode, day: Date) {
        let market = &self.history.market;
        market.doubt();
        if let Err(e) = self.station_runs(product, day).await {
            tracing::warn!(error = %e, product = product.get(), %day, "last changes not worked out at publish");
        }
    }

    /// Whether the last changes of `product` for `day` are held for the history as last
    /// checked (an answer for that day reads them without a store read).
    pub fn last_changes_ready(&self, product: ProductCode, day: Date) -> bool {
        let market = &self.history.market;
        let known = market.known_version();
        crate::sync::lock(&self.stations.last_changes.held)
            .get(&(product, day))
            .is_some_and(|(v, _)| known.is_some() && *v == known)
    }

    /// Every station's runs of `product` over the days before `day` (empty without history).
    pub(super) async fn station_runs(
        &self,
        product: ProductCode,
        day: Date,
    ) -> Result<StationRuns, CatalogError> {
        let market = &self.history.market;
        let now = self.now();
        let version = market.version(now).await?;
        if let Some((v, runs)) = crate::sync::lock(&self.stations.last_changes.held).get(&(product, day))
            && *v == version
        {
            return Ok(runs.clone());
        }
        let (Ok(from), Ok(to)) = (day.checked_sub(jiff::Span::new().days(LOOKBACK_DAYS)), day.yesterday())
        else {
            return Ok(StationRuns::default());
        };
        let rows = market.rows(product, from, to, now).await?;
        let mut series: HashMap<i64, Vec<(Date, i64)>> = HashMap::new();
        for (date, prices) in &rows.days {
            for &(sid, price) in prices.iter() {
                series.entry(sid).or_default().push((*date, price));
            }
        }
        let runs: StationRuns = Arc::new(
            series
                .into_iter()
                .filter_map(|(sid, days)| Some((rows.stations.get(&sid)?.station_id.clone(), Runs::of(days))))
                .collect(),
        );
        let mut held = crate::sync::lock(&self.stations.last_changes.held);
        if held.len() >= KEPT {
            held.clear();
        }
        held.insert((product, day), (version, runs.clone()));
        Ok(runs)
    }
}
