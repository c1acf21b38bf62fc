//! "Fill now or wait" (docs/forecast.md): the daily series a forecast reads, out of the
//! history store, and the replayed accuracy kept per (product, filter, asOf) and history
//! version, so a repeated or re-horizoned request never replays again.

use std::sync::Arc;

use jiff::Span;
use jiff::civil::Date;

use super::market::{StationFilter, market};
use super::wholesale::{tgp_products, tgp_series};
use super::{Catalog, CatalogError};
use wafuel_domain::backfill::BackfillState;
use wafuel_domain::codes::{BrandCode, Code, ProductCode, RegionCode};
use wafuel_domain::documents::ForecastDoc;
use wafuel_domain::forecast::{
    Accuracy, Daily, MAX_HORIZON, MIN_HISTORY_DAYS, NoForecast, RECENT_DAYS, REPLAY_DAYS, Replay, Subject,
    forecast,
};
use wafuel_domain::key::StationId;
use wafuel_domain::price::Tenths;
use wafuel_domain::time::tomorrow_published;
use wafuel_domain::wholesale::{days, regions_centre};
use wafuel_query::forecast::{ForecastQuery, RecordQuery};
use wafuel_store::StoreError;
use wafuel_store::history::{HistoryStore, MarketRows};
use wafuel_store::wholesale::WholesaleStore;

/// Replayed accuracies kept (each a few hundred bytes).
pub const KEPT_ACCURACIES: u64 = 4_096;

/// The cache of replayed accuracies: by request (horizon and "today" aside) and the history
/// and wholesale counters it was computed at.
pub type Accuracies = moka::sync::Cache<(ForecastQuery, Option<i64>, Option<i64>), Arc<Accuracy>>;

pub fn accuracies() -> Accuracies {
    moka::sync::Cache::new(KEPT_ACCURACIES)
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
/// from the store), as the forecast's answer reads it ([`Catalog::forecast_wholesale`]).
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

impl Catalog {
    /// The series of `of` over `range` from the history.
    pub(super) async fn series(&self, of: Of<'_>, range: (Date, Date)) -> Result<Series, CatalogError> {
        let held = &self.history.market;
        let history = self.prices.history();
        let store = history.store.as_ref();
        let market = if of.brands.is_none() && of.regions.is_none() {
            statewide(store, of.product, range).await?
        } else {
            let members = self.region_members(of.product, of.regions).await?;
            let rows = held.rows(of.product, range.0, range.1, self.now()).await?;
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
        let held = &self.history.market;
        let now = self.now();
        let known = q.today && tomorrow_published(now);
        let last = if known { q.as_of.tomorrow().unwrap_or(q.as_of) } else { q.as_of };
        let range = (first_day(q.as_of), last);
        let series = self.series(Of::forecast(q), range).await?;
        // The TGP over the same days as the retail prices: FuelWatch publishes tomorrow's of
        // both at 14:30, and a forecast from tomorrow's retail with only today's TGP reads the
        // wholesale price a day late, which loses most of what it gains (docs/forecast.md). The
        // outlook reads nothing after its basis, so each replayed origin reads its own day's.
        let (wholesale, wholesale_version) =
            self.forecast_wholesale(q.product, q.regions.as_deref(), range).await?;
        let subject = series.subject(wholesale.as_ref());
        let key = (
            ForecastQuery { horizon: 0, today: false, ..q.clone() },
            held.version(now).await?,
            wholesale_version,
        );
        let accuracy = match self.forecasts.accuracies.get(&key) {
            Some(kept) => kept,
            // A new `asOf` replays a year of forecasts: CPU work, run beside the async workers.
            None => {
                let replay = || Arc::new(Replay::run(subject, first_origin(q.as_of), q.as_of).accuracy());
                let replayed = crate::sync::compute(replay).await;
                self.forecasts.accuracies.insert(key, replayed.clone());
                replayed
            }
        };
        let answer = |horizon| forecast(subject, q.as_of, horizon, known, &accuracy);
        let forecast = match answer(q.horizon) {
            Ok(forecast) => forecast,
            // Short of history: say what is happening about it (loading, and how far; or the
            // command that fills it), not only the rule.
            Err(NoForecast::TooLittleHistory) => {
                let backfill = self.backfill().await;
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
        let loading = self.backfill().await.state == BackfillState::Running;
        if q.today && !loading {
            // The live record keeps the whole week, whatever horizon was asked.
            let week = if q.horizon == MAX_HORIZON { Ok(forecast.clone()) } else { answer(MAX_HORIZON) };
            if let Ok(week) = week {
                // What filling cost on `asOf`: its price, else the basis's (as the advice reads it).
                let today = subject.actual(q.as_of).or_else(|| subject.actual(week.basis));
                self.record(of, &week, today).await?;
            }
        }
        let live = self.live(of, subject, (first_origin(q.as_of), q.as_of), last).await?;
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
}
