//! "Fill now or wait" (docs/forecast.md): the daily series a forecast reads, out of the
//! history store, and the replayed accuracy kept per (product, filter, asOf) and history
//! version, so a repeated or re-horizoned request never replays again.

use std::sync::Arc;

use jiff::Span;
use jiff::civil::Date;

use super::CatalogError;
use super::history::History;
use super::market::{StationFilter, market};
use super::records::{ForecastRecord, Of};
use super::wholesale::Wholesale;
use super::wholesale::{tgp_products, tgp_series};
use crate::memo::Memo;
use wafuel_domain::backfill::BackfillState;
use wafuel_domain::codes::{ProductCode, RegionCode};
use wafuel_domain::documents::{ForecastDoc, RecordDoc};
use wafuel_domain::forecast::{
    Accuracy, Daily, MAX_HORIZON, MIN_HISTORY_DAYS, NoForecast, RECENT_DAYS, REPLAY_DAYS, Replay, Subject,
    forecast, live_accuracy,
};
use wafuel_domain::price::Tenths;
use wafuel_domain::time::{perth_now, tomorrow_published};
use wafuel_domain::wholesale::{days, regions_centre};
use wafuel_query::forecast::{ForecastQuery, RecordQuery};
use wafuel_store::StoreError;
use wafuel_store::history::{HistoryStore, MarketRows};
use wafuel_store::records::RecordStore;
use wafuel_store::wholesale::WholesaleStore;

/// Replayed accuracies kept (each a few hundred bytes).
pub const KEPT_ACCURACIES: u64 = 4_096;

/// The replayed accuracies: by request (horizon and "today" aside), at the history and
/// wholesale counters they were computed at.
type Accuracies = Memo<ForecastQuery, (Option<i64>, Option<i64>), Arc<Accuracy>>;

/// The forecast service: the series out of the history and the terminal gate prices, the
/// replayed accuracies, and the live record.
pub struct Forecasts {
    history: Arc<History>,
    wholesale: Arc<Wholesale>,
    record: ForecastRecord,
    accuracies: Accuracies,
}

/// The first day a forecast at `as_of` reads: its replays' year, their lead-in and the weeks
/// each replay reads before its origin.
pub fn first_day(as_of: Date) -> Date {
    Replay::reads_from(first_origin(as_of))
}

/// The first replayed origin of a forecast at `as_of`.
pub fn first_origin(as_of: Date) -> Date {
    as_of.checked_sub(Span::new().days(REPLAY_DAYS)).unwrap_or(Date::MIN)
}

/// The daily medians of the stations `filter` keeps, from every price held.
fn filtered(rows: &MarketRows, filter: StationFilter<'_>) -> Daily {
    Daily::new(market(rows, filter).days.iter().map(|d| (d.date, d.median)))
}

/// The statewide daily medians, from the figures stored with each day.
async fn statewide(
    store: &dyn HistoryStore,
    product: ProductCode,
    (first, last): (Date, Date),
) -> Result<Daily, StoreError> {
    let days = store.day_summaries(product, first, last).await?;
    Ok(Daily::new(days.iter().map(|d| (d.date, Tenths(d.figures.median).cents()))))
}

/// The market's daily medians for a backtest (no server: a region is the one archive rows
/// named for a station).
pub async fn market_series(
    store: &dyn HistoryStore,
    product: ProductCode,
    regions: Option<&[RegionCode]>,
    range: (Date, Date),
) -> Result<Daily, StoreError> {
    match regions {
        None => statewide(store, product, range).await,
        Some(regions) => {
            let rows = store.market(product, range.0, range.1).await?;
            let nobody = std::collections::HashSet::new();
            Ok(filtered(&rows, StationFilter { brands: None, regions: Some((regions, &nobody)) }))
        }
    }
}

/// The terminal gate price a backtest of `product` over `regions` reads (no server: straight
/// from the store), as the forecast's answer reads it ([`Wholesale::for_forecast`]).
pub async fn wholesale_series(
    store: &dyn WholesaleStore,
    product: ProductCode,
    regions: Option<&[RegionCode]>,
    (first, last): (Date, Date),
) -> Result<Option<Daily>, StoreError> {
    let centre = regions_centre(regions);
    for tgp in tgp_products(product) {
        if let Some(series) = tgp_series(&days(&store.wholesale(tgp, Some(centre), first, last).await?)) {
            return Ok(Some(series));
        }
    }
    Ok(None)
}

/// The daily series a forecast of `of` reads over `range`: the market's, and the station's.
pub struct Series {
    pub market: Daily,
    pub station: Option<Daily>,
}

impl Series {
    pub fn subject<'a>(&'a self, wholesale: Option<&'a Daily>) -> Subject<'a> {
        Subject { market: &self.market, station: self.station.as_ref(), wholesale }
    }
}

impl Forecasts {
    pub fn new(history: Arc<History>, wholesale: Arc<Wholesale>, records: Arc<dyn RecordStore>) -> Self {
        Self {
            history,
            wholesale,
            record: ForecastRecord::new(records),
            accuracies: Memo::new(KEPT_ACCURACIES),
        }
    }

    /// The series of `of` over `range` from the history.
    async fn series(&self, of: Of<'_>, range: (Date, Date)) -> Result<Series, CatalogError> {
        let held = self.history.market();
        let store = self.history.store().as_ref();
        let market = if of.brands.is_none() && of.regions.is_none() {
            statewide(store, of.product, range).await?
        } else {
            let members = self.history.region_members(of.product, of.regions).await?;
            let rows = held.rows(of.product, range.0, range.1, self.history.now()).await?;
            let filter = StationFilter { brands: of.brands, regions: of.regions.zip(members.as_ref()) };
            filtered(&rows, filter)
        };
        let station = match of.station {
            None => None,
            Some(id) => {
                let points = store.station_history(id.as_str(), of.product, range.0, range.1).await?;
                let points = points.ok_or(CatalogError::NotFound)?;
                Some(Daily::new(points.iter().map(|(d, p)| (*d, Tenths(*p).cents()))))
            }
        };
        Ok(Series { market, station })
    }

    /// The forecast a query asks for, from prices of days up to its `asOf` (and tomorrow's,
    /// once published, when `asOf` is today).
    pub async fn forecast(&self, q: &ForecastQuery) -> Result<ForecastDoc, CatalogError> {
        let now = self.history.now();
        let known = q.today && tomorrow_published(now);
        let last = if known { q.as_of.tomorrow().unwrap_or(q.as_of) } else { q.as_of };
        let range = (first_day(q.as_of), last);
        let series = self.series(Of::forecast(q), range).await?;
        // The TGP over the same days as the retail prices: FuelWatch publishes tomorrow's of
        // both at 14:30, and a forecast from tomorrow's retail with only today's TGP reads the
        // wholesale price a day late, which loses most of what it gains (docs/forecast.md). The
        // outlook reads nothing after its basis, so each replayed origin reads its own day's.
        let (wholesale, wholesale_version) =
            self.wholesale.for_forecast(q.product, q.regions.as_deref(), range).await?;
        let subject = series.subject(wholesale.as_ref());
        let key = ForecastQuery { horizon: 0, today: false, ..q.clone() };
        let counters = (self.history.version().await?, wholesale_version);
        let accuracy = match self.accuracies.get(&key, &counters) {
            Some(kept) => kept,
            // A new `asOf` replays a year of forecasts: CPU work, run beside the async workers.
            None => {
                let replay = || Arc::new(Replay::run(subject, first_origin(q.as_of), q.as_of).accuracy());
                let replayed = crate::sync::compute(replay).await;
                self.accuracies.insert(key, counters, replayed.clone());
                replayed
            }
        };
        let answer = |horizon| forecast(subject, q.as_of, horizon, known, &accuracy);
        let forecast = match answer(q.horizon) {
            Ok(forecast) => forecast,
            // Short of history: say what is happening about it (loading, and how far; or the
            // command that fills it), not only the rule.
            Err(NoForecast::TooLittleHistory) => {
                let backfill = self.history.backfill().await;
                let why = match backfill.state {
                    BackfillState::Done => String::new(),
                    _ => format!("{} ", backfill.loading_words()),
                };
                return Err(CatalogError::ShortHistory(format!(
                    "{why}A forecast needs {MIN_HISTORY_DAYS} days with prices in the {RECENT_DAYS} before {}; the history has {}.",
                    q.as_of,
                    subject.market.days_before(q.as_of)
                )));
            }
            Err(e) => return Err(CatalogError::NoForecast(e)),
        };
        let of = Of::forecast(q);
        // No forecast answered while the backfill runs goes into the live record: it was made
        // from a history still filling in, and would be scored as the model's.
        let loading = self.history.backfill().await.state == BackfillState::Running;
        if q.today && !loading {
            // The live record keeps the whole week, whatever horizon was asked.
            let week = if q.horizon == MAX_HORIZON { Ok(forecast.clone()) } else { answer(MAX_HORIZON) };
            if let Ok(week) = week {
                // What filling cost on `asOf`: its price, else the basis's (as the advice reads it).
                let today = subject.actual(q.as_of).or_else(|| subject.actual(week.basis));
                self.record.record(of, &week, today, now).await?;
            }
        }
        let live = self.record.live(of, subject, (first_origin(q.as_of), q.as_of), last).await?;
        Ok(ForecastDoc {
            product: q.product,
            station: q.station.clone(),
            brands: q.brands.clone(),
            regions: q.regions.clone(),
            forecast,
            accuracy,
            live,
        })
    }

    /// `/v1/forecast/record`: the recorded forecasts of a subject with their outcomes so far.
    pub async fn record_document(&self, q: &RecordQuery) -> Result<RecordDoc, CatalogError> {
        let now = self.history.now();
        let today = perth_now(now).date();
        let last = if tomorrow_published(now) { today.tomorrow().unwrap_or(today) } else { today };
        let of = Of::record(q);
        // Scoring reads the records' own days only: from the first `asOf` listed on.
        let series = self.series(of, (q.from, last)).await?;
        let records = self.record.scored(of, series.subject(None), (q.from, q.to), last).await?;
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
