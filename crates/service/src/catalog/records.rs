//! The forecast's live record (docs/forecast.md "The live record"): each forecast answered
//! for today recorded once per (subject, asOf) in the shared store, its days scored from the
//! history as they are published (each once), and `accuracy.live` and `/v1/forecast/record`
//! read from it. Recording is one insert per subject a day per replica (a replica remembers
//! what it recorded); the store's insert keeps the first of several replicas.

use std::collections::HashSet;
use std::sync::Mutex;

use jiff::civil::Date;

use super::forecast::Of;
use super::{Catalog, CatalogError};
use wafuel_domain::documents::RecordDoc;
use wafuel_domain::forecast::{Forecast, LiveAccuracy, Recorded, Subject, live_accuracy};
use wafuel_domain::time::{perth_now, tomorrow_published};
use wafuel_query::forecast::RecordQuery;

/// Subjects this replica remembers having recorded (then forgets all and asks the store
/// again: an insert that finds its row does nothing).
const REMEMBERED: usize = 10_000;

/// What the catalog keeps for the live record.
#[derive(Default)]
pub struct RecordHeld {
    recorded: Mutex<HashSet<(String, Date)>>,
}

impl Catalog {
    /// Record today's forecast of `of` unless it is recorded (`today`: its price on `asOf`).
    pub(super) async fn record(
        &self,
        of: Of<'_>,
        forecast: &Forecast,
        today: Option<f64>,
    ) -> Result<(), CatalogError> {
        let store = &self.forecasts.records;
        let key = (of.subject(), forecast.as_of);
        if crate::sync::lock(&self.forecasts.held.recorded).contains(&key) {
            return Ok(());
        }
        let recorded = Recorded::of(key.0.clone(), forecast, today, self.now());
        store.record_forecast(of.product, &recorded).await?;
        let mut held = crate::sync::lock(&self.forecasts.held.recorded);
        if held.len() >= REMEMBERED {
            held.clear();
        }
        held.insert(key);
        Ok(())
    }

    /// The recorded forecasts of `of` made `from..=to`, each scored from `subject` on the days
    /// published by `last` (written once), with only those days' outcomes.
    async fn scored(
        &self,
        of: Of<'_>,
        subject: Subject<'_>,
        (from, to): (Date, Date),
        last: Date,
    ) -> Result<Vec<Recorded>, CatalogError> {
        let store = &self.forecasts.records;
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

    /// `/v1/forecast/record`: the recorded forecasts of a subject with their outcomes so far.
    pub async fn forecast_record(&self, q: &RecordQuery) -> Result<RecordDoc, CatalogError> {
        let now = self.now();
        let today = perth_now(now).date();
        let last = if tomorrow_published(now) { today.tomorrow().unwrap_or(today) } else { today };
        let of = Of::record(q);
        // Scoring reads the records' own days only: from the first `asOf` listed on.
        let series = self.series(of, (q.from, last)).await?;
        let records = self.scored(of, series.subject(None), (q.from, q.to), last).await?;
        Ok(RecordDoc {
            product: q.product,
            station: q.station.clone(),
            brands: q.brands.clone(),
            regions: q.regions.clone(),
            from: q.from,
            to: q.to,
            live: live_accuracy(&records),
            records,
        })
    }
}
