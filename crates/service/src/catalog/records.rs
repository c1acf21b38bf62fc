//! The forecast's live record (docs/forecast.md "The live record"): each forecast answered
//! for today recorded once per (subject, asOf) in the shared store, its days scored from the
//! history as they are published (each once), and `accuracy.live` and `/v1/forecast/record`
//! read from it. Recording is one insert per subject a day per replica (a replica remembers
//! what it recorded); the store's insert keeps the first of several replicas.

use std::sync::Arc;

use jiff::Timestamp;
use jiff::civil::Date;

use super::CatalogError;
use wafuel_domain::codes::{BrandCode, Code, ProductCode, RegionCode};
use wafuel_domain::forecast::{Forecast, LiveAccuracy, Recorded, Subject, live_accuracy};
use wafuel_domain::key::StationId;
use wafuel_query::forecast::{ForecastQuery, RecordQuery};
use wafuel_store::records::RecordStore;

/// Subjects this replica remembers having recorded (then forgets all and asks the store
/// again: an insert that finds its row does nothing).
const REMEMBERED: u64 = 10_000;

/// The live record: the shared store, and the subjects this replica has recorded.
pub struct ForecastRecord {
    store: Arc<dyn RecordStore>,
    recorded: moka::sync::Cache<(String, Date), ()>,
}

impl ForecastRecord {
    pub fn new(store: Arc<dyn RecordStore>) -> Self {
        Self { store, recorded: moka::sync::Cache::new(REMEMBERED) }
    }

    /// Record today's forecast of `of` unless it is recorded (`today`: its price on `asOf`).
    pub(super) async fn record(
        &self,
        of: Of<'_>,
        forecast: &Forecast,
        today: Option<f64>,
        now: Timestamp,
    ) -> Result<(), CatalogError> {
        let key = (of.subject(), forecast.as_of);
        if self.recorded.contains_key(&key) {
            return Ok(());
        }
        let recorded = Recorded::of(key.0.clone(), forecast, today, now);
        self.store.record_forecast(of.product, &recorded).await?;
        self.recorded.insert(key, ());
        Ok(())
    }

    /// The recorded forecasts of `of` made `from..=to`, each scored from `subject` on the days
    /// published by `last` (written once), with only those days' outcomes.
    pub(super) async fn scored(
        &self,
        of: Of<'_>,
        subject: Subject<'_>,
        (from, to): (Date, Date),
        last: Date,
    ) -> Result<Vec<Recorded>, CatalogError> {
        let store = &self.store;
        let key = of.subject();
        let mut records = store.recorded_forecasts(&key, from, to).await?;
        for r in &mut records {
            let due = r.due(last, |d| subject.actual(d));
            if due.is_empty() {
                continue;
            }
            if store.score_forecast(&key, r.as_of, &r.outcomes, &due).await? {
                r.outcomes.extend(due);
            } else if let Some(fresh) = store.recorded_forecasts(&key, r.as_of, r.as_of).await?.pop() {
                // Another replica scored it first: its outcomes are the record's.
                *r = fresh;
            }
        }
        for r in &mut records {
            r.outcomes.retain(|d, _| *d <= last);
        }
        Ok(records)
    }

    /// `accuracy.live` of a forecast of `of` at `to`: its record up to then, scored on the
    /// days published by `last`.
    pub(super) async fn live(
        &self,
        of: Of<'_>,
        subject: Subject<'_>,
        range: (Date, Date),
        last: Date,
    ) -> Result<Option<LiveAccuracy>, CatalogError> {
        Ok(live_accuracy(&self.scored(of, subject, range, last).await?))
    }
}

/// What a forecast is of: the product, and the station or the market's filters.
#[derive(Debug, Clone, Copy)]
pub struct Of<'a> {
    pub product: ProductCode,
    pub station: Option<&'a StationId>,
    pub brands: Option<&'a [BrandCode]>,
    pub regions: Option<&'a [RegionCode]>,
}

impl<'a> Of<'a> {
    pub fn forecast(q: &'a ForecastQuery) -> Self {
        Of {
            product: q.product,
            station: q.station.as_ref(),
            brands: q.brands.as_deref(),
            regions: q.regions.as_deref(),
        }
    }

    pub fn record(q: &'a RecordQuery) -> Self {
        Of {
            product: q.product,
            station: q.station.as_ref(),
            brands: q.brands.as_deref(),
            regions: q.regions.as_deref(),
        }
    }

    /// The live record's name for it: `<product>`, then `:s<stationId>`, `:r<regions>`,
    /// `:b<brands>` as given (the forecast's resource id without its `asOf`).
    pub fn subject(&self) -> String {
        let mut out = self.product.to_string();
        if let Some(s) = self.station {
            out.push_str(&format!(":s{}", s.as_str()));
        }
        if let Some(r) = self.regions {
            out.push_str(&format!(":r{}", list(r)));
        }
        if let Some(b) = self.brands {
            out.push_str(&format!(":b{}", list(b)));
        }
        out
    }
}

fn list<K>(v: &[Code<K>]) -> String {
    v.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")
}
