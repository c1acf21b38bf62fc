//! `price.lastChange` of the station API: each station's runs of equal prices over the
//! history's last [`LOOKBACK_DAYS`] days before the day shown, worked out once per (fuel, day)
//! and history counter when the day's catalog is published (the event reader hears it, on
//! every replica; the first answer instead only if it comes first), then read per row in O(1).

use std::collections::HashMap;
use std::sync::Arc;

use jiff::civil::Date;

use super::CatalogError;
use super::history::History;
use crate::memo::Memo;
use wafuel_domain::codes::ProductCode;
use wafuel_domain::last_change::Runs;

/// Days of history before the day shown that the last change is looked for in: past them,
/// a price unchanged that long says null (the stored days do not reach its change).
pub const LOOKBACK_DAYS: i64 = 120;
/// (fuel, day) pairs kept.
const KEPT: u64 = 32;

/// Each station's runs by its station id.
pub type StationRuns = Arc<HashMap<String, Runs>>;

/// Each station's runs per (fuel, day), held at the history counter they were read at.
pub struct LastChanges {
    history: Arc<History>,
    held: Memo<(ProductCode, Date), Option<i64>, StationRuns>,
}

impl LastChanges {
    pub fn new(history: Arc<History>) -> Self {
        Self { history, held: Memo::new(KEPT) }
    }

    /// The catalog of `product` for `day` was published: work its stations' last changes out
    /// now, so no answer waits for them.
    pub async fn prepare(&self, product: ProductCode, day: Date) {
        self.history.market().doubt();
        if let Err(e) = self.runs(product, day).await {
            tracing::warn!(error = %e, product = product.get(), %day, "last changes not worked out at publish");
        }
    }

    /// Whether the last changes of `product` for `day` are held for the history as last
    /// checked (an answer for that day reads them without a store read).
    pub fn ready(&self, product: ProductCode, day: Date) -> bool {
        let known = self.history.market().known_version();
        known.is_some() && self.held.holds(&(product, day), &known)
    }

    /// Every station's runs of `product` over the days before `day` (empty without history).
    pub async fn runs(&self, product: ProductCode, day: Date) -> Result<StationRuns, CatalogError> {
        let now = self.history.now();
        let market = self.history.market();
        let version = market.version(now).await?;
        if let Some(runs) = self.held.get(&(product, day), &version) {
            return Ok(runs);
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
        self.held.insert((product, day), version, runs.clone());
        Ok(runs)
    }
}
