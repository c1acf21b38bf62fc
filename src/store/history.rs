//! Daily price history and each station's latest details (docs/api.md "History store"),
//! in the same store as snapshots: written from every published catalogue extract, read by
//! the history and statistics routes. One implementation over both backends.
//!
//! Stations get a compact integer `sid` so that a statewide range of prices reads as three
//! integers a row; the public id stays the SHA-256 station digest.

use std::collections::HashMap;

use jiff::civil::Date;

use super::StoreError;
use crate::model::station::{Quote, Station};

/// What one write did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct HistoryWrite {
    /// New (station, product, date) rows.
    pub written: u64,
    /// Existing rows whose price changed (a source correction).
    pub replaced: u64,
}

/// One catalogue extract: a product's quotes on a Perth date.
#[derive(Debug, Clone, Copy)]
pub struct DayExtract<'a> {
    pub product: u8,
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

/// History persistence.
#[async_trait::async_trait]
pub trait HistoryStore: Send + Sync + 'static {
    /// Upsert catalogue extracts' quotes and their stations, in one transaction (a bulk load
    /// passes many: each commit rewrites the index pages it touched, once). Idempotent: an
    /// unchanged price writes nothing.
    async fn record(&self, extracts: &[DayExtract<'_>]) -> Result<HistoryWrite, StoreError>;
    /// One station's prices of a product between two dates (inclusive), ascending; `None`
    /// when the station never had that product in the store.
    async fn station_history(
        &self,
        station_id: &str,
        product: u8,
        from: Date,
        to: Date,
    ) -> Result<Option<Vec<(Date, i64)>>, StoreError>;
    /// Every station's price of a product between two dates (inclusive).
    async fn market(&self, product: u8, from: Date, to: Date) -> Result<MarketRows, StoreError>;
    /// Every station of the history, by sid.
    async fn stations(&self) -> Result<std::sync::Arc<HashMap<i64, HistoryStation>>, StoreError>;
    /// Each day's prices of a product between two dates (inclusive), ascending by date, one
    /// day at a time: a range of decades costs one day of memory.
    async fn each_day(
        &self,
        product: u8,
        from: Date,
        to: Date,
        each: &mut (dyn for<'d> FnMut(Date, &'d [(i64, i64)]) + Send),
    ) -> Result<(), StoreError>;
    /// A number that changes with every write to the history (by any replica).
    async fn history_version(&self) -> Result<i64, StoreError>;
    /// Delete prices older than `before`, and stations last seen before it.
    async fn prune_history(&self, before: Date) -> Result<u64, StoreError>;
}

/// A Perth date as the integer `YYYYMMDD` (compact, ordered, readable in SQL).
pub fn day_number(d: Date) -> i64 {
    i64::from(d.year()) * 10_000 + i64::from(d.month()) * 100 + i64::from(d.day())
}

pub fn from_day_number(n: i64) -> Option<Date> {
    let year = i16::try_from(n / 10_000).ok()?;
    let month = i8::try_from(n / 100 % 100).ok()?;
    let day = i8::try_from(n % 100).ok()?;
    Date::new(year, month, day).ok()
}

/// A station's stored details.
pub fn details(station: &Station) -> Result<String, StoreError> {
    serde_json::to_string(station).map_err(|e| StoreError::Encoding(e.to_string()))
}

/// Rows per multi-row statement (4–6 binds each, well under both backends' limits).
pub const BATCH: usize = 500;

pub const STATIONS: &str = "SELECT sid, station_id, brand, first_seen, last_seen FROM history_stations";
pub const STATIONS_WITH_REGION: &str =
    "SELECT sid, station_id, brand, first_seen, last_seen, region FROM history_stations";
pub const UPSERT_STATIONS: &str =
    "INSERT INTO history_stations (station_id, brand, details, first_seen, last_seen) ";
pub const UPSERT_STATIONS_TAIL: &str = " ON CONFLICT (station_id) DO UPDATE SET \
     brand = CASE WHEN excluded.last_seen >= history_stations.last_seen THEN excluded.brand ELSE history_stations.brand END, \
     details = CASE WHEN excluded.last_seen >= history_stations.last_seen THEN excluded.details ELSE history_stations.details END, \
     first_seen = CASE WHEN excluded.first_seen < history_stations.first_seen THEN excluded.first_seen ELSE history_stations.first_seen END, \
     last_seen = CASE WHEN excluded.last_seen > history_stations.last_seen THEN excluded.last_seen ELSE history_stations.last_seen END \
     RETURNING sid, station_id";
pub const EXISTING_PRICES: &str = "SELECT sid, price FROM price_history WHERE product = $1 AND day = $2";
pub const UPSERT_PRICES: &str = "INSERT INTO price_history (product, day, sid, price) ";
pub const UPSERT_PRICES_TAIL: &str = " ON CONFLICT (product, day, sid) DO UPDATE SET price = excluded.price";
pub const STATION_SID: &str = "SELECT sid FROM history_stations WHERE station_id = $1";
pub const HAS_PRODUCT: &str = "SELECT 1 FROM price_history WHERE sid = $1 AND product = $2 LIMIT 1";
pub const STATION_PRICES: &str = "SELECT day, price FROM price_history \
     WHERE sid = $1 AND product = $2 AND day >= $3 AND day <= $4 ORDER BY day";
pub const MARKET: &str =
    "SELECT day, pairs FROM price_days WHERE product = $1 AND day >= $2 AND day <= $3 ORDER BY day";
pub const UPSERT_DAY: &str = "INSERT INTO price_days (product, day, pairs) VALUES ($1, $2, $3) \
     ON CONFLICT (product, day) DO UPDATE SET pairs = excluded.pairs";
pub const PRUNE_DAYS: &str = "DELETE FROM price_days WHERE day < $1";

/// A day's prices as `sid:price` pairs, ascending by sid.
pub fn format_pairs(prices: &HashMap<i64, i64>) -> String {
    let mut sorted: Vec<(&i64, &i64)> = prices.iter().collect();
    sorted.sort_unstable();
    let mut out = String::with_capacity(sorted.len() * 10);
    for (i, (sid, price)) in sorted.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("{sid}:{price}"));
    }
    out
}

/// `sid:price` pairs, comma-separated; malformed pairs are skipped.
pub fn parse_pairs(text: &str) -> impl Iterator<Item = (i64, i64)> + '_ {
    text.split(',').filter_map(|pair| {
        let (sid, price) = pair.split_once(':')?;
        Some((sid.parse().ok()?, price.parse().ok()?))
    })
}
/// The change counter of price history, bumped in the transaction of every write to it.
pub const HISTORY_COUNTER: &str = "history";
pub const PRUNE_PRICES: &str = "DELETE FROM price_history WHERE day < $1";
pub const PRUNE_STATIONS: &str = "DELETE FROM history_stations WHERE last_seen < $1";

/// Implement `HistoryStore` for a store type holding `pool: sqlx::Pool<$db>`.
macro_rules! impl_history_store {
    ($store:ty, $db:ty, $begin:expr) => {
        #[async_trait::async_trait]
        impl $crate::store::history::HistoryStore for $store {
            async fn record(
                &self,
                extracts: &[$crate::store::history::DayExtract<'_>],
            ) -> Result<$crate::store::history::HistoryWrite, $crate::store::StoreError> {
                use sqlx::Row;
                use std::collections::HashMap;
                use $crate::store::history as h;
                // Take the write lock first: on SQLite a transaction that reads and then writes
                // fails (SQLITE_BUSY_SNAPSHOT, no busy wait) when another connection commits
                // in between, such as a snapshot publish of another product.
                let mut tx = self.pool.begin_with($begin).await?;
                // sid, first seen, last seen of every known station.
                let mut known: HashMap<String, (i64, i64, i64)> = HashMap::new();
                for r in sqlx::query(h::STATIONS).fetch_all(&mut *tx).await? {
                    let id: String = r.try_get(1)?;
                    known.insert(id, (r.try_get(0)?, r.try_get(3)?, r.try_get(4)?));
                }
                let mut report = $crate::store::history::HistoryWrite::default();
                for extract in extracts {
                    let (product, quotes) = (extract.product, extract.quotes);
                    let day = h::day_number(extract.date);
                    // Stations: insert new ones; write details only when this date moves first
                    // or last seen (a station's details are those of its first extract of its
                    // newest day: one write per station and day, not per product).
                    let mut pending = Vec::new();
                    let mut seen = std::collections::HashSet::new();
                    for q in quotes {
                        let st = &q.station;
                        if !seen.insert(st.digest.as_str()) {
                            continue;
                        }
                        match known.get(&st.digest) {
                            Some((_, first, last)) if *first <= day && *last >= day => {}
                            _ => pending.push((st.digest.clone(), i64::from(st.brand), h::details(st)?)),
                        }
                    }
                    // Rows in one order for every writer, so concurrent writers (replicas on
                    // PostgreSQL) lock stations in the same order and never deadlock.
                    pending.sort_by(|a, b| a.0.cmp(&b.0));
                    for chunk in pending.chunks(h::BATCH) {
                        let mut qb = sqlx::QueryBuilder::<$db>::new(h::UPSERT_STATIONS);
                        qb.push_values(chunk, |mut b, (id, brand, json)| {
                            b.push_bind(id.clone())
                                .push_bind(*brand)
                                .push_bind(json.clone())
                                .push_bind(day)
                                .push_bind(day);
                        });
                        qb.push(h::UPSERT_STATIONS_TAIL);
                        for r in qb.build().fetch_all(&mut *tx).await? {
                            let (sid, id): (i64, String) = (r.try_get(0)?, r.try_get(1)?);
                            let entry = known.entry(id).or_insert((sid, day, day));
                            *entry = (sid, entry.1.min(day), entry.2.max(day));
                        }
                    }

                    // Prices: only new or changed rows are written, and counted.
                    let mut existing: HashMap<i64, i64> = HashMap::new();
                    for r in sqlx::query(h::EXISTING_PRICES)
                        .bind(i64::from(product))
                        .bind(day)
                        .fetch_all(&mut *tx)
                        .await?
                    {
                        existing.insert(r.try_get(0)?, r.try_get(1)?);
                    }
                    let mut rows: Vec<(i64, i64)> = Vec::new();
                    for q in quotes.iter().filter(|q| q.product == product) {
                        let Some(&(sid, _, _)) = known.get(&q.station.digest) else { continue };
                        let price = crate::model::station::tenths(q.price);
                        match existing.insert(sid, price) {
                            None => report.written += 1,
                            Some(old) if old != price => report.replaced += 1,
                            Some(_) => continue,
                        }
                        rows.push((sid, price));
                    }
                    for chunk in rows.chunks(h::BATCH) {
                        let mut qb = sqlx::QueryBuilder::<$db>::new(h::UPSERT_PRICES);
                        qb.push_values(chunk, |mut b, (sid, price)| {
                            b.push_bind(i64::from(product)).push_bind(day).push_bind(*sid).push_bind(*price);
                        });
                        qb.push(h::UPSERT_PRICES_TAIL);
                        qb.build().execute(&mut *tx).await?;
                    }
                    if !rows.is_empty() {
                        // `existing` now holds the whole day: keep its summary row in step.
                        sqlx::query(h::UPSERT_DAY)
                            .bind(i64::from(product))
                            .bind(day)
                            .bind(h::format_pairs(&existing))
                            .execute(&mut *tx)
                            .await?;
                    }
                }
                if report.written + report.replaced > 0 {
                    sqlx::query($crate::store::enrich::BUMP_COUNTER)
                        .bind(h::HISTORY_COUNTER)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
                Ok(report)
            }

            async fn station_history(
                &self,
                station_id: &str,
                product: u8,
                from: jiff::civil::Date,
                to: jiff::civil::Date,
            ) -> Result<Option<Vec<(jiff::civil::Date, i64)>>, $crate::store::StoreError> {
                use sqlx::Row;
                use $crate::store::history as h;
                let Some(row) =
                    sqlx::query(h::STATION_SID).bind(station_id).fetch_optional(&self.pool).await?
                else {
                    return Ok(None);
                };
                let sid: i64 = row.try_get(0)?;
                let any = sqlx::query(h::HAS_PRODUCT)
                    .bind(sid)
                    .bind(i64::from(product))
                    .fetch_optional(&self.pool)
                    .await?;
                if any.is_none() {
                    return Ok(None);
                }
                let rows = sqlx::query(h::STATION_PRICES)
                    .bind(sid)
                    .bind(i64::from(product))
                    .bind(h::day_number(from))
                    .bind(h::day_number(to))
                    .fetch_all(&self.pool)
                    .await?;
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    if let Some(d) = h::from_day_number(r.try_get(0)?) {
                        out.push((d, r.try_get(1)?));
                    }
                }
                Ok(Some(out))
            }

            async fn market(
                &self,
                product: u8,
                from: jiff::civil::Date,
                to: jiff::civil::Date,
            ) -> Result<$crate::store::history::MarketRows, $crate::store::StoreError> {
                use sqlx::Row;
                use $crate::store::history as h;
                let mut out = h::MarketRows::default();
                let stations = $crate::store::history::HistoryStore::stations(self).await?;
                let rows = sqlx::query(h::MARKET)
                    .bind(i64::from(product))
                    .bind(h::day_number(from))
                    .bind(h::day_number(to))
                    .fetch_all(&self.pool)
                    .await?;
                for r in rows {
                    let Some(date) = h::from_day_number(r.try_get(0)?) else { continue };
                    let pairs: String = r.try_get(1)?;
                    out.days.push((date, h::parse_pairs(&pairs).collect()));
                }
                out.stations = stations;
                Ok(out)
            }

            async fn stations(
                &self,
            ) -> Result<
                std::sync::Arc<std::collections::HashMap<i64, $crate::store::history::HistoryStation>>,
                $crate::store::StoreError,
            > {
                use sqlx::Row;
                use $crate::store::history as h;
                let mut stations = std::collections::HashMap::new();
                for r in sqlx::query(h::STATIONS_WITH_REGION).fetch_all(&self.pool).await? {
                    let first = h::from_day_number(r.try_get(3)?);
                    let last = h::from_day_number(r.try_get(4)?);
                    let (Some(first_seen), Some(last_seen)) = (first, last) else { continue };
                    let region: Option<i64> = r.try_get(5)?;
                    stations.insert(
                        r.try_get(0)?,
                        h::HistoryStation {
                            station_id: r.try_get(1)?,
                            brand: u8::try_from(r.try_get::<i64, _>(2)?).unwrap_or(0),
                            region: region.and_then(|r| u8::try_from(r).ok()),
                            first_seen,
                            last_seen,
                        },
                    );
                }
                Ok(std::sync::Arc::new(stations))
            }

            async fn each_day(
                &self,
                product: u8,
                from: jiff::civil::Date,
                to: jiff::civil::Date,
                each: &mut (dyn for<'d> FnMut(jiff::civil::Date, &'d [(i64, i64)]) + Send),
            ) -> Result<(), $crate::store::StoreError> {
                use futures::TryStreamExt;
                use sqlx::Row;
                use $crate::store::history as h;
                let mut rows = sqlx::query(h::MARKET)
                    .bind(i64::from(product))
                    .bind(h::day_number(from))
                    .bind(h::day_number(to))
                    .fetch(&self.pool);
                let mut pairs: Vec<(i64, i64)> = Vec::new();
                while let Some(r) = rows.try_next().await? {
                    let Some(date) = h::from_day_number(r.try_get(0)?) else { continue };
                    let text: &str = r.try_get(1)?;
                    pairs.clear();
                    pairs.extend(h::parse_pairs(text));
                    each(date, &pairs);
                }
                Ok(())
            }

            async fn history_version(&self) -> Result<i64, $crate::store::StoreError> {
                $crate::store::SnapshotStore::change_counter(self, $crate::store::history::HISTORY_COUNTER)
                    .await
            }

            async fn prune_history(
                &self,
                before: jiff::civil::Date,
            ) -> Result<u64, $crate::store::StoreError> {
                use $crate::store::history as h;
                let day = h::day_number(before);
                let mut tx = self.pool.begin_with($begin).await?;
                let prices = sqlx::query(h::PRUNE_PRICES).bind(day).execute(&mut *tx).await?;
                sqlx::query(h::PRUNE_DAYS).bind(day).execute(&mut *tx).await?;
                sqlx::query(h::PRUNE_STATIONS).bind(day).execute(&mut *tx).await?;
                sqlx::query($crate::store::enrich::BUMP_COUNTER)
                    .bind(h::HISTORY_COUNTER)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(prices.rows_affected())
            }
        }
    };
}

pub(crate) use impl_history_store;

#[cfg(test)]
mod tests {
    use super::*;
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
    fn day_numbers_round_trip() {
        assert_eq!(day_number(date(2026, 11, 20)), 20_261_120);
        assert_eq!(from_day_number(20_261_120), Some(date(2026, 11, 20)));
        assert_eq!(from_day_number(20_261_340), None);
    }
}
