//! Daily price history and each station's latest details, in the same store as snapshots:
//! written from every published catalog extract and every imported archive month, read by
//! the history and statistics routes.
//!
//! Stations get a compact integer `sid`; the public id stays the SHA-256 station digest. Every
//! write keeps four tables in step, in one transaction:
//! - `price_days`: each (product, day)'s prices as `sid:price` pairs (statistics that filter
//!   stations read these);
//! - `day_summaries`: the figures of each (product, day) (statewide statistics over any
//!   window read one small row a day);
//! - `period_summaries`: the figures of each ISO week and calendar month (its days, distinct
//!   stations, extremes and the sums of its days' figures);
//! - `station_months`: each station's prices of a product and month as `day:price` pairs (its
//!   history over decades is one short range read).
//!
//! Here: the types, the reading statements and the store's implementation; `write` writes
//! (one transaction), `sums` computes the figures written beside the prices, `codec` says
//! how each value is written.

mod codec;
mod sums;
mod write;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use jiff::civil::Date;

use super::backend::{Backend, MonthRow};
use super::conn::{Arg, Conn, Statement, sql};
use super::{SqlStore, StoreError, counters};
pub use codec::{day_number, details, format_pairs, from_day_number, parse_pairs};
use codec::{month_days, month_of, parse_sids, period_code, shift, sids_text};
use sums::{Days, PeriodSums, station_month_rows, summary_values};
use wafuel_domain::codes::ProductCode;
use wafuel_domain::station::{Quote, Station};
use wafuel_domain::stats::{DayFigures, Interval, PeriodFigures};
pub(crate) use write::{Differing, Incoming, Move, apply, apply_with_moves, settle_summaries};

/// What one write did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct HistoryWrite {
    /// New (station, product, date) rows.
    pub written: u64,
    /// Existing rows whose price changed (a source correction).
    pub replaced: u64,
}

/// One catalog extract: a product's quotes on a Perth date.
#[derive(Debug, Clone, Copy)]
pub struct DayExtract<'a> {
    pub product: ProductCode,
    pub date: Date,
    pub quotes: &'a [Quote],
}

/// One station of the history, with its latest details.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryStation {
    pub station_id: String,
    pub brand: u8,
    /// The region an archive row named for it, when one did.
    pub region: Option<u8>,
    pub first_seen: Date,
    pub last_seen: Date,
}

/// One day's prices of a product: (sid, price in tenths of a cent), ascending by sid.
pub type DayPrices = std::sync::Arc<[(i64, i64)]>;

/// Every price of a product over a date range, for statistics.
#[derive(Debug, Default, Clone)]
pub struct MarketRows {
    /// Days with prices, ascending.
    pub days: Vec<(Date, DayPrices)>,
    /// The stations those rows name (and every other known station), by sid.
    pub stations: std::sync::Arc<HashMap<i64, HistoryStation>>,
}

impl MarketRows {
    /// Every (date, sid, price), ascending by date.
    pub fn prices(&self) -> Vec<(Date, i64, i64)> {
        self.days.iter().flat_map(|(d, prices)| prices.iter().map(move |&(sid, p)| (*d, sid, p))).collect()
    }
}

/// One (product, day)'s stored figures, with every station at its minimum.
#[derive(Debug, Clone, PartialEq)]
pub struct DaySummary {
    pub date: Date,
    pub figures: DayFigures,
    /// The sids at the day's minimum, ascending.
    pub cheapest: Vec<i64>,
}

/// One week's or month's stored figures, with every station at its minimum.
#[derive(Debug, Clone, PartialEq)]
pub struct PeriodSummary {
    /// Its first day.
    pub start: Date,
    pub figures: PeriodFigures,
    /// The distinct stations priced in it.
    pub stations: usize,
    /// The sids at its minimum, ascending.
    pub cheapest: Vec<i64>,
}

/// History persistence.
#[async_trait::async_trait]
pub trait HistoryStore: Send + Sync + 'static {
    /// Upsert catalog extracts' quotes and their stations, in one transaction (a bulk load
    /// passes many: each commit rewrites the index pages it touched, once). Idempotent: an
    /// unchanged price writes nothing.
    async fn record(&self, extracts: &[DayExtract<'_>]) -> Result<HistoryWrite, StoreError>;
    /// One station's prices of a product between two dates (inclusive), ascending; `None`
    /// when the station never had that product in the store.
    async fn station_history(
        &self,
        station_id: &str,
        product: ProductCode,
        from: Date,
        to: Date,
    ) -> Result<Option<Vec<(Date, i64)>>, StoreError>;
    /// Every station's price of a product between two dates (inclusive).
    async fn market(&self, product: ProductCode, from: Date, to: Date) -> Result<MarketRows, StoreError>;
    /// Every station of the history, by sid.
    async fn stations(&self) -> Result<std::sync::Arc<HashMap<i64, HistoryStation>>, StoreError>;
    /// Each day's prices of a product between two dates (inclusive), ascending by date, one
    /// day at a time: a range of decades costs one day of memory.
    async fn each_day(
        &self,
        product: ProductCode,
        from: Date,
        to: Date,
        each: &mut (dyn for<'d> FnMut(Date, &'d [(i64, i64)]) + Send),
    ) -> Result<(), StoreError>;
    /// The stored figures of each day of a product with prices between two dates (inclusive),
    /// ascending.
    async fn day_summaries(
        &self,
        product: ProductCode,
        from: Date,
        to: Date,
    ) -> Result<Vec<DaySummary>, StoreError>;
    /// The last `n` days' figures of a product with prices between two dates (inclusive),
    /// ascending.
    async fn last_day_summaries(
        &self,
        product: ProductCode,
        (from, to): (Date, Date),
        n: usize,
    ) -> Result<Vec<DaySummary>, StoreError>;
    /// The stored figures of each week or month of a product starting between two dates
    /// (inclusive), ascending. A period cut by pruning has none.
    async fn period_summaries(
        &self,
        product: ProductCode,
        interval: Interval,
        from: Date,
        to: Date,
    ) -> Result<Vec<PeriodSummary>, StoreError>;
    /// A number that changes with every write to the history (by any replica).
    async fn history_version(&self) -> Result<i64, StoreError>;
    /// Delete prices older than `before`, and stations last seen before it.
    async fn prune_history(&self, before: Date) -> Result<u64, StoreError>;
}

/// Rows per multi-row statement (at most 6 arguments each, well under both databases' limits).
pub const BATCH: usize = 500;

const STATIONS: &str = "SELECT sid, station_id, brand, first_seen, last_seen, region FROM history_stations";
const UPSERT_STATIONS: &str =
    "INSERT INTO history_stations (station_id, brand, details, first_seen, last_seen)";
const UPSERT_STATIONS_TAIL: &str = " ON CONFLICT (station_id) DO UPDATE SET \
     brand = CASE WHEN excluded.last_seen >= history_stations.last_seen THEN excluded.brand ELSE history_stations.brand END, \
     details = CASE WHEN excluded.last_seen >= history_stations.last_seen THEN excluded.details ELSE history_stations.details END, \
     first_seen = CASE WHEN excluded.first_seen < history_stations.first_seen THEN excluded.first_seen ELSE history_stations.first_seen END, \
     last_seen = CASE WHEN excluded.last_seen > history_stations.last_seen THEN excluded.last_seen ELSE history_stations.last_seen END \
     RETURNING sid, station_id";
const STATION_SID: &str = "SELECT sid FROM history_stations WHERE station_id = $1";
const HAS_PRODUCT: &str = "SELECT 1 FROM station_months WHERE sid = $1 AND product = $2 LIMIT 1";
const STATION_MONTHS: &str = "SELECT month, prices FROM station_months \
     WHERE sid = $1 AND product = $2 AND month >= $3 AND month <= $4 ORDER BY month";
const DAYS: &str =
    "SELECT day, pairs FROM price_days WHERE product = $1 AND day >= $2 AND day <= $3 ORDER BY day";
const PUT_DAYS: &str = "INSERT INTO price_days (product, day, pairs)";
const PUT_DAYS_TAIL: &str = " ON CONFLICT (product, day) DO UPDATE SET pairs = excluded.pairs";
const SUMMARIES: &str = "SELECT day, stations, min, p10, median, mean, p90, max, cheapest FROM day_summaries \
     WHERE product = $1 AND day >= $2 AND day <= $3 ORDER BY day";
const PUT_SUMMARIES: &str =
    "INSERT INTO day_summaries (product, day, stations, min, p10, median, mean, p90, max, cheapest)";
const PUT_SUMMARIES_TAIL: &str = " ON CONFLICT (product, day) DO UPDATE SET stations = excluded.stations, \
     min = excluded.min, p10 = excluded.p10, median = excluded.median, mean = excluded.mean, p90 = excluded.p90, \
     max = excluded.max, cheapest = excluded.cheapest";
const LAST_SUMMARIES: &str = "SELECT day, stations, min, p10, median, mean, p90, max, cheapest FROM day_summaries \
     WHERE product = $1 AND day >= $2 AND day <= $3 ORDER BY day DESC LIMIT $4";
const PERIODS: &str = "SELECT start, days, stations, min, max, p10_sum, median_sum, mean_sum, p90_sum, cheapest \
     FROM period_summaries WHERE product = $1 AND period = $2 AND start >= $3 AND start <= $4 ORDER BY start";
const PUT_PERIODS: &str = "INSERT INTO period_summaries \
     (product, period, start, days, stations, min, max, p10_sum, median_sum, mean_sum, p90_sum, cheapest)";
const PUT_PERIODS_TAIL: &str = " ON CONFLICT (product, period, start) DO UPDATE SET days = excluded.days, \
     stations = excluded.stations, min = excluded.min, max = excluded.max, p10_sum = excluded.p10_sum, \
     median_sum = excluded.median_sum, mean_sum = excluded.mean_sum, p90_sum = excluded.p90_sum, \
     cheapest = excluded.cheapest";
const PRODUCTS: &str = "SELECT DISTINCT product FROM price_days";
const PRUNED_PRICES: &str =
    "SELECT CAST(COALESCE(SUM(stations), 0) AS BIGINT) FROM day_summaries WHERE day < $1";
const DELETE_MONTH_ROW: &str = "DELETE FROM station_months WHERE sid = $1 AND product = $2 AND month = $3";
const PRUNE_DAYS: &str = "DELETE FROM price_days WHERE day < $1";
const PRUNE_SUMMARIES: &str = "DELETE FROM day_summaries WHERE day < $1";
const PRUNE_PERIODS: &str = "DELETE FROM period_summaries WHERE start < $1";
const PRUNE_MONTHS: &str = "DELETE FROM station_months WHERE month <= $1";
const PRUNE_STATIONS: &str = "DELETE FROM history_stations WHERE last_seen < $1";

/// A station of `history_stations` as read.
#[derive(sqlx::FromRow)]
struct StationRow {
    sid: i64,
    station_id: String,
    brand: i64,
    first_seen: i64,
    last_seen: i64,
    region: Option<i64>,
}

#[derive(sqlx::FromRow)]
struct SummaryRow {
    day: i64,
    stations: i64,
    min: i64,
    p10: i64,
    median: i64,
    mean: i64,
    p90: i64,
    max: i64,
    cheapest: String,
}

impl SummaryRow {
    fn summary(self) -> Option<DaySummary> {
        Some(DaySummary {
            date: from_day_number(self.day)?,
            figures: DayFigures {
                stations: usize::try_from(self.stations).ok()?,
                min: self.min,
                p10: self.p10,
                median: self.median,
                mean: self.mean,
                p90: self.p90,
                max: self.max,
            },
            cheapest: parse_sids(&self.cheapest),
        })
    }
}

#[derive(sqlx::FromRow)]
struct PeriodRow {
    start: i64,
    days: i64,
    stations: i64,
    min: i64,
    max: i64,
    p10_sum: i64,
    median_sum: i64,
    mean_sum: i64,
    p90_sum: i64,
    cheapest: String,
}

#[async_trait::async_trait]
impl<B: Backend> HistoryStore for SqlStore<B> {
    async fn record(&self, extracts: &[DayExtract<'_>]) -> Result<HistoryWrite, StoreError> {
        // The write lock first (SQLite): the stations read below decide the writes after it.
        let mut tx = self.db.write().await?;
        // sid, first seen, last seen of every known station.
        let mut known: HashMap<String, (i64, i64, i64)> = HashMap::new();
        let rows: Vec<StationRow> = tx.fetch_all(sql(STATIONS)).await?;
        for r in rows {
            known.insert(r.station_id, (r.sid, r.first_seen, r.last_seen));
        }
        let mut prices = Vec::new();
        for extract in extracts {
            let (product, quotes) = (extract.product, extract.quotes);
            let day = day_number(extract.date);
            // Stations: insert new ones; write details only when this date moves first or
            // last seen (a station's details are those of its first extract of its newest
            // day: one write per station and day, not per product).
            let mut pending = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for q in quotes {
                let st = &q.station;
                if !seen.insert(st.id.as_str()) {
                    continue;
                }
                match known.get(st.id.as_str()) {
                    Some((_, first, last)) if *first <= day && *last >= day => {}
                    _ => pending.push((st.id.clone(), i64::from(st.brand.get()), details(st)?)),
                }
            }
            // Rows in one order for every writer, so concurrent writers (replicas on
            // PostgreSQL) lock stations in the same order and never deadlock.
            pending.sort_by(|a, b| a.0.cmp(&b.0));
            for chunk in pending.chunks(BATCH) {
                let values = chunk.iter().map(|(id, brand, json)| {
                    vec![id.as_str().into(), (*brand).into(), json.into(), day.into(), day.into()]
                });
                let upsert = Statement::rows(UPSERT_STATIONS, values, UPSERT_STATIONS_TAIL);
                let returned: Vec<(i64, String)> = tx.fetch_all(upsert).await?;
                for (sid, id) in returned {
                    let entry = known.entry(id).or_insert((sid, day, day));
                    *entry = (sid, entry.1.min(day), entry.2.max(day));
                }
            }
            for q in quotes.iter().filter(|q| q.product == product) {
                let Some(&(sid, _, _)) = known.get(q.station.id.as_str()) else { continue };
                let price = wafuel_domain::station::tenths(q.price);
                prices.push(Incoming { product, day, sid, price });
            }
        }
        let applied = apply::<B>(&mut tx, &prices, Differing::Replace).await?;
        if applied.written + applied.replaced > 0 {
            counters::bump(&mut *tx, counters::HISTORY).await?;
        }
        B::commit(tx).await?;
        Ok(HistoryWrite { written: applied.written, replaced: applied.replaced })
    }

    async fn station_history(
        &self,
        station_id: &str,
        product: ProductCode,
        from: Date,
        to: Date,
    ) -> Result<Option<Vec<(Date, i64)>>, StoreError> {
        let mut conn = self.db.read().await?;
        let Some((sid,)) = conn.fetch_optional::<(i64,)>(sql(STATION_SID).bind(station_id)).await? else {
            return Ok(None);
        };
        let (first, last) = (month_of(day_number(from)), month_of(day_number(to)));
        let read = sql(STATION_MONTHS).bind(sid).bind(product).bind(first).bind(last);
        let months: Vec<(i64, String)> = conn.fetch_all(read).await?;
        if months.is_empty() {
            let any: Option<(i32,)> = conn.fetch_optional(sql(HAS_PRODUCT).bind(sid).bind(product)).await?;
            if any.is_none() {
                return Ok(None);
            }
        }
        let mut out = Vec::with_capacity(months.len() * 31);
        for (month, prices) in months {
            for (dom, price) in parse_pairs(&prices) {
                let Some(date) = from_day_number(month * 100 + dom) else { continue };
                if (from..=to).contains(&date) {
                    out.push((date, price));
                }
            }
        }
        Ok(Some(out))
    }

    async fn market(&self, product: ProductCode, from: Date, to: Date) -> Result<MarketRows, StoreError> {
        let stations = self.stations().await?;
        let read = sql(DAYS).bind(product).bind(day_number(from)).bind(day_number(to));
        let rows: Vec<(i64, String)> = self.db.read().await?.fetch_all(read).await?;
        let days = rows
            .into_iter()
            .filter_map(|(day, pairs)| Some((from_day_number(day)?, parse_pairs(&pairs).collect())))
            .collect();
        Ok(MarketRows { days, stations })
    }

    async fn stations(&self) -> Result<std::sync::Arc<HashMap<i64, HistoryStation>>, StoreError> {
        let rows: Vec<StationRow> = self.db.read().await?.fetch_all(sql(STATIONS)).await?;
        let stations = rows
            .into_iter()
            .filter_map(|r| {
                let station = HistoryStation {
                    station_id: r.station_id,
                    brand: u8::try_from(r.brand).unwrap_or(0),
                    region: r.region.and_then(|r| u8::try_from(r).ok()),
                    first_seen: from_day_number(r.first_seen)?,
                    last_seen: from_day_number(r.last_seen)?,
                };
                Some((r.sid, station))
            })
            .collect();
        Ok(std::sync::Arc::new(stations))
    }

    async fn each_day(
        &self,
        product: ProductCode,
        from: Date,
        to: Date,
        each: &mut (dyn for<'d> FnMut(Date, &'d [(i64, i64)]) + Send),
    ) -> Result<(), StoreError> {
        let read = sql(DAYS).bind(product).bind(day_number(from)).bind(day_number(to));
        let mut pairs: Vec<(i64, i64)> = Vec::new();
        let mut conn = self.db.read().await?;
        conn.fetch_each(read, &mut |(day, text): (i64, String)| {
            let Some(date) = from_day_number(day) else { return };
            pairs.clear();
            pairs.extend(parse_pairs(&text));
            each(date, &pairs);
        })
        .await
    }

    async fn day_summaries(
        &self,
        product: ProductCode,
        from: Date,
        to: Date,
    ) -> Result<Vec<DaySummary>, StoreError> {
        let read = sql(SUMMARIES).bind(product).bind(day_number(from)).bind(day_number(to));
        let rows: Vec<SummaryRow> = self.db.read().await?.fetch_all(read).await?;
        Ok(rows.into_iter().filter_map(SummaryRow::summary).collect())
    }

    async fn last_day_summaries(
        &self,
        product: ProductCode,
        (from, to): (Date, Date),
        n: usize,
    ) -> Result<Vec<DaySummary>, StoreError> {
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        let read = sql(LAST_SUMMARIES).bind(product).bind(day_number(from)).bind(day_number(to)).bind(n);
        let rows: Vec<SummaryRow> = self.db.read().await?.fetch_all(read).await?;
        let mut out: Vec<DaySummary> = rows.into_iter().filter_map(SummaryRow::summary).collect();
        out.reverse();
        Ok(out)
    }

    async fn period_summaries(
        &self,
        product: ProductCode,
        interval: Interval,
        from: Date,
        to: Date,
    ) -> Result<Vec<PeriodSummary>, StoreError> {
        let read = sql(PERIODS)
            .bind(product)
            .bind(period_code(interval))
            .bind(day_number(from))
            .bind(day_number(to));
        let rows: Vec<PeriodRow> = self.db.read().await?.fetch_all(read).await?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                Some(PeriodSummary {
                    start: from_day_number(r.start)?,
                    figures: PeriodFigures {
                        days: r.days,
                        sums: [r.p10_sum, r.median_sum, r.mean_sum, r.p90_sum],
                        min: r.min,
                        max: r.max,
                    },
                    stations: usize::try_from(r.stations).ok()?,
                    cheapest: parse_sids(&r.cheapest),
                })
            })
            .collect())
    }

    async fn history_version(&self) -> Result<i64, StoreError> {
        counters::read(&mut *self.db.read().await?, counters::HISTORY).await
    }

    async fn prune_history(&self, before: Date) -> Result<u64, StoreError> {
        let cut = day_number(before);
        let mut tx = self.db.write().await?;
        let (pruned,): (i64,) = tx.fetch_optional(sql(PRUNED_PRICES).bind(cut)).await?.unwrap_or((0,));
        tx.execute(sql(PRUNE_DAYS).bind(cut)).await?;
        tx.execute(sql(PRUNE_SUMMARIES).bind(cut)).await?;
        // A week or month cut in two counts stations of days no longer stored: statistics
        // count such a period from its days.
        tx.execute(sql(PRUNE_PERIODS).bind(cut)).await?;
        // The month of the cut keeps its days from the cut on: its rows are written again
        // from the days that stay.
        let month = month_of(cut);
        tx.execute(sql(PRUNE_MONTHS).bind(month)).await?;
        if let Some((_, last)) = month_days(month) {
            let mut days = Days::default();
            let products: Vec<(i64,)> = tx.fetch_all(sql(PRODUCTS)).await?;
            let mut rows = Vec::new();
            for (product,) in products {
                let Some(product) = u8::try_from(product).ok().and_then(ProductCode::parse) else { continue };
                days.load(&mut *tx, product, cut, day_number(last)).await?;
                let sids: BTreeSet<i64> = days
                    .map
                    .iter()
                    .filter(|((p, _), _)| *p == product)
                    .flat_map(|(_, prices)| prices.keys().copied())
                    .collect();
                rows.extend(station_month_rows(&days, product, month, &sids));
            }
            B::put_month_rows(&mut tx, &rows).await?;
        }
        tx.execute(sql(PRUNE_STATIONS).bind(cut)).await?;
        counters::bump(&mut *tx, counters::HISTORY).await?;
        B::commit(tx).await?;
        Ok(u64::try_from(pruned).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(code: u8) -> ProductCode {
        ProductCode::parse(code).expect("a product")
    }
    use jiff::civil::date;

    #[test]
    fn pairs() {
        let parsed: Vec<(i64, i64)> = parse_pairs("1:1899,22:2001,bad,3:").collect();
        assert_eq!(parsed, vec![(1, 1899), (22, 2001)]);
        let day = HashMap::from([(22, 2001), (1, 1899)]);
        assert_eq!(format_pairs(&day), "1:1899,22:2001");
        assert_eq!(parse_pairs(&format_pairs(&day)).count(), 2);
    }

    #[test]
    fn a_month_row_holds_each_day_of_the_station_in_order() {
        let mut days = Days::default();
        days.map.insert((p(1), 20_261_102), HashMap::from([(7, 1899), (8, 1910)]));
        days.map.insert((p(1), 20_261_101), HashMap::from([(7, 1889)]));
        days.map.insert((p(1), 20_261_130), HashMap::from([(7, 1999), (9, 2001)]));
        days.map.insert((p(4), 20_261_101), HashMap::from([(7, 2100)]));
        let rows = station_month_rows(&days, p(1), 202_611, &BTreeSet::from([7, 8]));
        assert_eq!(
            rows,
            vec![
                MonthRow { sid: 7, product: 1, month: 202_611, prices: "1:1889,2:1899,30:1999".into() },
                MonthRow { sid: 8, product: 1, month: 202_611, prices: "2:1910".into() },
            ]
        );
        let two = days.period(p(1), date(2026, 11, 1), date(2026, 11, 2));
        assert_eq!((two.sids.len(), two.figures.days, two.figures.min), (2, 2, 1889));
        assert_eq!(two.cheapest, BTreeSet::from([7]));
        assert_eq!(days.period(p(1), date(2026, 11, 1), date(2026, 11, 30)).sids.len(), 3);
    }

    #[test]
    fn a_day_summary_has_every_station_at_the_minimum() {
        let values =
            summary_values(p(1), 20_261_102, &HashMap::from([(9, 1800), (3, 1800), (4, 1950), (5, 2000)]))
                .expect("a day");
        assert_eq!(values[2], Arg::from(4_i64), "stations");
        assert_eq!(values[3], Arg::from(1800_i64), "min");
        assert_eq!(values[5], Arg::from(1875_i64), "median of 1800, 1800, 1950, 2000");
        assert_eq!(values[6], Arg::from(1888_i64), "mean 1887.5, rounded");
        assert_eq!(values[9], Arg::from("3,9"), "both stations at the minimum, ascending");
        assert_eq!(summary_values(p(1), 20_261_102, &HashMap::new()), None);
    }

    #[test]
    fn day_numbers_round_trip() {
        assert_eq!(day_number(date(2026, 11, 20)), 20_261_120);
        assert_eq!(from_day_number(20_261_120), Some(date(2026, 11, 20)));
        assert_eq!(from_day_number(20_261_340), None);
    }
}
