//! Terminal gate (wholesale) prices beside the history: one row per (product, centre, day,
//! terminal) in hundredths of a cent, written by the live job and the yearly-file import,
//! each write one transaction that bumps the `wholesale` counter when anything changed and,
//! when a day's price is stored for the first time and the writer says it is news (tomorrow's,
//! from the live job), writes its `wholesale` push event in the same transaction.

use std::collections::{BTreeMap, HashMap, HashSet};

use jiff::Timestamp;
use jiff::civil::Date;

use super::backend::Backend;
use super::conn::{Arg, Conn, Statement, sql};
use super::events::{self, EventKind};
use super::history::{day_number, from_day_number};
use super::{SqlStore, StoreError, counters, millis};
use crate::model::codes::ProductCode;
use crate::model::wholesale::{Centre, TerminalPrice, cents, days};

/// What one write did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WholesaleWrite {
    /// New (product, centre, day, terminal) rows.
    pub written: u64,
    /// Stored prices that changed.
    pub replaced: u64,
    /// Prices already stored as they are.
    pub unchanged: u64,
}

/// A yearly file as imported, with what the list said of it then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WholesaleImport {
    pub file: String,
    pub rows: u64,
    pub file_date: Option<String>,
    pub bytes: Option<u64>,
}

/// Wholesale persistence.
#[async_trait::async_trait]
pub trait WholesaleStore: Send + Sync + 'static {
    /// Store `prices` (replacing a different stored price of the same key) and `if_missing`
    /// (only where no price of its key is stored), in one transaction. When `news` names a
    /// day, every (product, centre) whose first price of that day this write stores makes a
    /// `wholesale` event, stamped `at`.
    async fn put_wholesale(
        &self,
        prices: &[TerminalPrice],
        if_missing: &[TerminalPrice],
        news: Option<Date>,
        at: Timestamp,
    ) -> Result<WholesaleWrite, StoreError>;
    /// The stored prices of a product between two days (inclusive), of one centre or all,
    /// ascending by day, centre and terminal.
    async fn wholesale(
        &self,
        product: ProductCode,
        centre: Option<Centre>,
        from: Date,
        to: Date,
    ) -> Result<Vec<TerminalPrice>, StoreError>;
    /// The newest day with a stored price of a product at a centre.
    async fn newest_wholesale_day(
        &self,
        product: ProductCode,
        centre: Centre,
    ) -> Result<Option<Date>, StoreError>;
    /// Every yearly file imported.
    async fn wholesale_imports(&self) -> Result<Vec<WholesaleImport>, StoreError>;
    /// Remember a file as imported (again).
    async fn record_wholesale_import(
        &self,
        import: &WholesaleImport,
        at: Timestamp,
    ) -> Result<(), StoreError>;
    /// A number that changes with every write of a wholesale price (by any replica).
    async fn wholesale_version(&self) -> Result<i64, StoreError>;
    /// Where each station of the history is: its point when the history has one (a live
    /// station), and the region an archive row named for it — what finds its centre.
    async fn station_places(&self) -> Result<Vec<StationPlace>, StoreError>;
}

/// Where a station of the history is, as far as the history knows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StationPlace {
    pub sid: i64,
    /// (latitude, longitude).
    pub point: Option<(f64, f64)>,
    pub region: Option<u8>,
}

impl StationPlace {
    /// The station's centre: the nearest to its point, else its region's.
    pub fn centre(&self) -> Option<Centre> {
        match self.point {
            Some((lat, lon)) => Some(Centre::nearest(lat, lon)),
            None => self.region.and_then(crate::model::wholesale::region_centre),
        }
    }
}

const PLACES: &str = "SELECT sid, details, region FROM history_stations";

/// The point of stored station details (live stations have one; archive-only ones do not).
fn point_of(details: &str) -> Option<(f64, f64)> {
    let value: serde_json::Value = serde_json::from_str(details).ok()?;
    let (lat, lon) = (value.get("latitude")?.as_f64()?, value.get("longitude")?.as_f64()?);
    (lat.is_finite() && lon.is_finite() && (lat, lon) != (0.0, 0.0)).then_some((lat, lon))
}

/// Rows per multi-row statement (5 arguments each, well under both databases' limits).
const BATCH: usize = 500;

const RANGE: &str = "SELECT product, centre, day, terminal, price FROM wholesale_prices \
     WHERE product = $1 AND day >= $2 AND day <= $3 ORDER BY day, centre, terminal";
const RANGE_ALL: &str = "SELECT product, centre, day, terminal, price FROM wholesale_prices \
     WHERE day >= $1 AND day <= $2";
const NEWEST: &str = "SELECT MAX(day) FROM wholesale_prices WHERE product = $1 AND centre = $2";
const ON_DAY: &str = "SELECT DISTINCT product, centre FROM wholesale_prices WHERE day = $1";
const PUT: &str = "INSERT INTO wholesale_prices (product, centre, day, terminal, price)";
const PUT_TAIL: &str = " ON CONFLICT (product, centre, day, terminal) DO UPDATE SET price = excluded.price";
const PUT_MISSING_TAIL: &str = " ON CONFLICT (product, centre, day, terminal) DO NOTHING";
const IMPORTS: &str = "SELECT file, rows, file_date, bytes FROM wholesale_imports";
const RECORD_IMPORT: &str = "INSERT INTO wholesale_imports (file, rows, file_date, bytes, imported_at) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (file) DO UPDATE SET rows = excluded.rows, \
     file_date = excluded.file_date, bytes = excluded.bytes, imported_at = excluded.imported_at";

/// The change counter of wholesale prices.
pub const COUNTER: &str = "wholesale";

#[derive(sqlx::FromRow)]
struct Row {
    product: i64,
    centre: String,
    day: i64,
    terminal: String,
    price: i64,
}

impl Row {
    /// The price, when this version can read the row (an unknown centre or product is left
    /// out, never guessed).
    fn price(self) -> Option<TerminalPrice> {
        Some(TerminalPrice {
            product: u8::try_from(self.product).ok().and_then(ProductCode::parse)?,
            centre: Centre::from_slug(&self.centre)?,
            date: from_day_number(self.day)?,
            terminal: self.terminal,
            price: self.price,
        })
    }
}

type Key = (u8, Centre, Date, String);

fn key(p: &TerminalPrice) -> Key {
    (p.product.get(), p.centre, p.date, p.terminal.clone())
}

fn args(p: &TerminalPrice) -> Vec<Arg> {
    vec![
        Arg::from(p.product),
        Arg::from(p.centre.slug()),
        Arg::from(day_number(p.date)),
        Arg::from(&p.terminal),
        Arg::from(p.price),
    ]
}

/// The stored price of each key of `prices`' days.
async fn stored<C: Conn + ?Sized>(
    conn: &mut C,
    prices: &[TerminalPrice],
) -> Result<HashMap<Key, i64>, StoreError> {
    let mut out = HashMap::new();
    let (Some(from), Some(to)) = (prices.iter().map(|p| p.date).min(), prices.iter().map(|p| p.date).max())
    else {
        return Ok(out);
    };
    let rows: Vec<Row> = conn.fetch_all(sql(RANGE_ALL).bind(day_number(from)).bind(day_number(to))).await?;
    for price in rows.into_iter().filter_map(Row::price) {
        let value = price.price;
        out.insert(key(&price), value);
    }
    Ok(out)
}

/// The (product, centre) pairs with a price on `day`.
async fn priced_on<C: Conn + ?Sized>(conn: &mut C, day: Date) -> Result<HashSet<(u8, Centre)>, StoreError> {
    let rows: Vec<(i64, String)> = conn.fetch_all(sql(ON_DAY).bind(day_number(day))).await?;
    Ok(rows.into_iter().filter_map(|(p, c)| Some((u8::try_from(p).ok()?, Centre::from_slug(&c)?))).collect())
}

#[async_trait::async_trait]
impl<B: Backend> WholesaleStore for SqlStore<B> {
    async fn put_wholesale(
        &self,
        prices: &[TerminalPrice],
        if_missing: &[TerminalPrice],
        news: Option<Date>,
        at: Timestamp,
    ) -> Result<WholesaleWrite, StoreError> {
        let mut tx = self.db.write().await?;
        let before = match news {
            Some(day) => Some(priced_on(&mut *tx, day).await?),
            None => None,
        };
        let mut all: Vec<TerminalPrice> = prices.to_vec();
        all.extend_from_slice(if_missing);
        let stored = stored(&mut *tx, &all).await?;
        let mut write = WholesaleWrite::default();
        // The last price of a key wins within one write, as it would row by row.
        let mut changed: BTreeMap<Key, &TerminalPrice> = BTreeMap::new();
        for p in prices {
            match stored.get(&key(p)) {
                Some(old) if *old == p.price => write.unchanged += 1,
                Some(_) => {
                    write.replaced += 1;
                    changed.insert(key(p), p);
                }
                None => {
                    write.written += 1;
                    changed.insert(key(p), p);
                }
            }
        }
        let changed_keys: HashSet<Key> = changed.keys().cloned().collect();
        let changed: Vec<&TerminalPrice> = changed.into_values().collect();
        for chunk in changed.chunks(BATCH) {
            tx.execute(Statement::rows(PUT, chunk.iter().map(|p| args(p)), PUT_TAIL)).await?;
        }
        let missing: Vec<&TerminalPrice> = if_missing
            .iter()
            .filter(|p| !stored.contains_key(&key(p)) && !changed_keys.contains(&key(p)))
            .collect();
        for chunk in missing.chunks(BATCH) {
            let added =
                tx.execute(Statement::rows(PUT, chunk.iter().map(|p| args(p)), PUT_MISSING_TAIL)).await?;
            write.written += added;
        }
        write.unchanged += (if_missing.len() - missing.len()) as u64;
        if write.written + write.replaced == 0 {
            // Nothing changed: dropped, rolled back.
            return Ok(write);
        }
        counters::bump(&mut *tx, COUNTER).await?;
        if let (Some(day), Some(before)) = (news, before) {
            let first: Vec<TerminalPrice> = all
                .iter()
                .filter(|p| p.date == day && !before.contains(&(p.product.get(), p.centre)))
                .cloned()
                .collect();
            let mut evented = false;
            for d in days(&first) {
                let data = serde_json::json!({
                    "date": d.date.to_string(),
                    "centre": d.centre.slug(),
                    "product": d.product,
                    "mean": cents(d.mean),
                });
                let id = counters::bump(&mut *tx, counters::EVENTS).await?;
                let date = d.date.to_string();
                events::insert(&mut *tx, id, EventKind::Wholesale, (&date, d.product), data.to_string(), at)
                    .await?;
                evented = true;
            }
            if evented && let Some(notify) = self.db.notify() {
                tx.execute(notify).await?;
            }
        }
        B::commit(tx).await?;
        Ok(write)
    }

    async fn wholesale(
        &self,
        product: ProductCode,
        centre: Option<Centre>,
        from: Date,
        to: Date,
    ) -> Result<Vec<TerminalPrice>, StoreError> {
        let statement = sql(RANGE).bind(product).bind(day_number(from)).bind(day_number(to));
        let rows: Vec<Row> = self.db.read().await?.fetch_all(statement).await?;
        Ok(rows.into_iter().filter_map(Row::price).filter(|p| centre.is_none_or(|c| c == p.centre)).collect())
    }

    async fn newest_wholesale_day(
        &self,
        product: ProductCode,
        centre: Centre,
    ) -> Result<Option<Date>, StoreError> {
        let row: Option<(Option<i64>,)> =
            self.db.read().await?.fetch_optional(sql(NEWEST).bind(product).bind(centre.slug())).await?;
        Ok(row.and_then(|r| r.0).and_then(from_day_number))
    }

    async fn wholesale_imports(&self) -> Result<Vec<WholesaleImport>, StoreError> {
        let rows: Vec<(String, i64, Option<String>, Option<i64>)> =
            self.db.read().await?.fetch_all(sql(IMPORTS)).await?;
        Ok(rows
            .into_iter()
            .map(|(file, rows, file_date, bytes)| WholesaleImport {
                file,
                rows: u64::try_from(rows).unwrap_or(0),
                file_date,
                bytes: bytes.and_then(|b| u64::try_from(b).ok()),
            })
            .collect())
    }

    async fn record_wholesale_import(
        &self,
        import: &WholesaleImport,
        at: Timestamp,
    ) -> Result<(), StoreError> {
        let statement = sql(RECORD_IMPORT)
            .bind(import.file.as_str())
            .bind(i64::try_from(import.rows).unwrap_or(i64::MAX))
            .bind(import.file_date.clone())
            .bind(import.bytes.and_then(|b| i64::try_from(b).ok()))
            .bind(millis(at));
        self.db.single().await?.execute(statement).await?;
        Ok(())
    }

    async fn wholesale_version(&self) -> Result<i64, StoreError> {
        counters::read(&mut *self.db.read().await?, COUNTER).await
    }

    async fn station_places(&self) -> Result<Vec<StationPlace>, StoreError> {
        let mut out = Vec::new();
        let mut conn = self.db.read().await?;
        conn.fetch_each(sql(PLACES), &mut |(sid, details, region): (i64, String, Option<i64>)| {
            out.push(StationPlace {
                sid,
                point: point_of(&details),
                region: region.and_then(|r| u8::try_from(r).ok()),
            });
        })
        .await?;
        Ok(out)
    }
}
