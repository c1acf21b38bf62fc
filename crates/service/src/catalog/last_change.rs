//! `price.lastChange` of the station API: each station's runs of equal prices over the
//! history's last [`LOOKBACK_DAYS`] days before the day shown, worked out once per (fuel, day)
//! and history counter (at the first answer after a publish), then read per row in O(1).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jiff::civil::Date;

use super::{Catalog, CatalogError};
use crate::model::codes::ProductCode;
use crate::model::last_change::Runs;

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
    /// Every station's runs of `product` over the days before `day` (empty without history).
    pub(super) async fn station_runs(
        &self,
        product: ProductCode,
        day: Date,
    ) -> Result<StationRuns, CatalogError> {
        let Some(market) = self.market.as_ref() else { return Ok(StationRuns::default()) };
        let now = self.now();
        let version = market.version(now).await?;
        if let Some((v, runs)) = crate::sync::lock(&self.last_changes.held).get(&(product, day))
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
        let mut held = crate::sync::lock(&self.last_changes.held);
        if held.len() >= KEPT {
            held.clear();
        }
        held.insert((product, day), (version, runs.clone()));
        Ok(runs)
    }
}
