//! Writing FuelWatch's monthly archives into the price history (`wafuel import-history`): one
//! transaction per batch (a month), many rows a statement, the per-day summaries that
//! statistics read rebuilt for every day touched, and the month recorded as imported.
//!
//! Idempotent: a price already stored for the same station, product and day is never
//! overwritten (the live feed's price wins; a differing archive value is counted as a
//! conflict), so importing a month twice changes nothing.

use std::collections::HashMap;

use super::StoreError;

/// A station the history already knows, with what the archive matches on.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownStation {
    pub sid: i64,
    pub station_id: String,
    /// Street and suburb as stored (the caller normalises them).
    pub street: String,
    pub suburb: String,
    /// Perth dates as `YYYYMMDD`.
    pub first_seen: i64,
    pub last_seen: i64,
    /// Known only from the archive.
    pub archive: bool,
    /// The region an archive row named for it.
    pub region: Option<u8>,
}

/// A station only the archive knows, as one batch saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveStationRow {
    pub station_id: String,
    pub brand: u8,
    /// JSON of its name, trading name, brand text, address, suburb, postcode and region.
    pub details: String,
    pub region: Option<u8>,
    pub first_seen: i64,
    pub last_seen: i64,
}

/// Which station a price belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Slot {
    /// A station the history knows, by sid.
    Known(i64),
    /// The batch's archive station at this index.
    Archive(usize),
}

/// One archive price: product, day (`YYYYMMDD`), station, tenths of a cent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportPrice {
    pub product: u8,
    pub day: i64,
    pub station: Slot,
    pub price: i64,
}

/// One write: a month's prices (or a file's), its archive stations, and the known stations
/// whose seen range it widens.
#[derive(Debug, Default)]
pub struct ImportBatch {
    /// Recorded as imported when set.
    pub month: Option<ImportedMonth>,
    pub stations: Vec<ArchiveStationRow>,
    pub prices: Vec<ImportPrice>,
    /// (sid, first seen, last seen, region) of known stations the batch saw earlier or later
    /// than the history had, or in a region the history did not know for them.
    pub widen: Vec<(i64, i64, i64, Option<u8>)>,
}

/// A month recorded as imported: the rows read from its file, and the file's `fileDate` and
/// `bytes` as FuelWatch's list gave them (absent when it was imported without the list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedMonth {
    pub month: (i16, i8),
    pub rows: u64,
    pub file_date: Option<String>,
    pub bytes: Option<u64>,
}

/// What one batch did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ImportWrite {
    /// The sid of each archive station of the batch, by station id.
    pub archive_sids: Vec<(String, i64)>,
    /// New (station, product, day) prices.
    pub written: u64,
    /// Prices the store already had, equal.
    pub unchanged: u64,
    /// Prices the store already had with another value (kept: the live feed wins).
    pub conflicts: u64,
}

/// Archive imports.
#[async_trait::async_trait]
pub trait ArchiveStore: Send + Sync + 'static {
    /// Every station of the history, live and archive.
    async fn known_stations(&self) -> Result<Vec<KnownStation>, StoreError>;
    /// The months recorded as imported.
    async fn imported_months(&self) -> Result<HashMap<(i16, i8), ImportedMonth>, StoreError>;
    /// Write one batch in one transaction.
    async fn import(&self, batch: &ImportBatch) -> Result<ImportWrite, StoreError>;
}

pub const KNOWN_STATIONS: &str =
    "SELECT sid, station_id, details, first_seen, last_seen, archive, region FROM history_stations";
pub const IMPORTED_MONTHS: &str = "SELECT month, rows, file_date, bytes FROM history_imports";
pub const UPSERT_ARCHIVE_STATIONS: &str =
    "INSERT INTO history_stations (station_id, brand, details, first_seen, last_seen, region, archive) ";
pub const UPSERT_ARCHIVE_STATIONS_TAIL: &str = " ON CONFLICT (station_id) DO UPDATE SET \
     first_seen = CASE WHEN excluded.first_seen < history_stations.first_seen THEN excluded.first_seen ELSE history_stations.first_seen END, \
     last_seen = CASE WHEN excluded.last_seen > history_stations.last_seen THEN excluded.last_seen ELSE history_stations.last_seen END, \
     details = CASE WHEN history_stations.archive = 1 AND excluded.last_seen >= history_stations.last_seen THEN excluded.details ELSE history_stations.details END, \
     region = CASE WHEN history_stations.region IS NULL THEN excluded.region ELSE history_stations.region END \
     RETURNING sid, station_id";
pub const WIDEN_STATION: &str = "UPDATE history_stations SET \
     first_seen = CASE WHEN $1 < first_seen THEN $1 ELSE first_seen END, \
     last_seen = CASE WHEN $2 > last_seen THEN $2 ELSE last_seen END, \
     region = CASE WHEN region IS NULL THEN $3 ELSE region END WHERE sid = $4";
pub const PRICES_IN_RANGE: &str =
    "SELECT day, sid, price FROM price_history WHERE product = $1 AND day >= $2 AND day <= $3";
pub const INSERT_PRICES: &str = "INSERT INTO price_history (product, day, sid, price) ";
pub const INSERT_PRICES_TAIL: &str = " ON CONFLICT (product, day, sid) DO NOTHING";
pub const RECORD_MONTH: &str = "INSERT INTO history_imports (month, rows, imported_at, file_date, bytes) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (month) DO UPDATE SET rows = excluded.rows, \
     imported_at = excluded.imported_at, file_date = excluded.file_date, bytes = excluded.bytes";

/// (product, day, sid, tenths of a cent) rows new to `price_history`.
pub type PriceRows = [(u8, i64, i64, i64)];

/// SQLite: multi-row `INSERT`s of [`super::history::BATCH`] rows, in the caller's transaction.
pub async fn insert_prices_sqlite(
    conn: &mut sqlx::SqliteConnection,
    rows: &PriceRows,
) -> Result<(), StoreError> {
    for chunk in rows.chunks(super::history::BATCH) {
        let mut qb = sqlx::QueryBuilder::<sqlx::Sqlite>::new(INSERT_PRICES);
        qb.push_values(chunk, |mut b, (product, day, sid, price)| {
            b.push_bind(i64::from(*product)).push_bind(*day).push_bind(*sid).push_bind(*price);
        });
        qb.push(INSERT_PRICES_TAIL);
        qb.build().execute(&mut *conn).await?;
    }
    Ok(())
}

/// 32 MiB of page cache for the connection that imports.
pub const SQLITE_IMPORT_CACHE: &str = "PRAGMA cache_size = -32768";

pub const COPY_TABLE: &str = "CREATE TEMP TABLE IF NOT EXISTS import_prices \
     (product BIGINT, day BIGINT, sid BIGINT, price BIGINT) ON COMMIT DELETE ROWS";
pub const COPY_IN: &str = "COPY import_prices (product, day, sid, price) FROM STDIN";
pub const COPY_MOVE: &str = "INSERT INTO price_history (product, day, sid, price) \
     SELECT product, day, sid, price FROM import_prices ON CONFLICT (product, day, sid) DO NOTHING";

/// PostgreSQL: `COPY` into a session table emptied at commit, then one `INSERT … SELECT` that
/// skips a row a concurrent live write stored meanwhile.
pub async fn insert_prices_postgres(
    conn: &mut sqlx::PgConnection,
    rows: &PriceRows,
) -> Result<(), StoreError> {
    use std::fmt::Write;
    if rows.is_empty() {
        return Ok(());
    }
    sqlx::query(COPY_TABLE).execute(&mut *conn).await?;
    let mut text = String::with_capacity(rows.len() * 32);
    for (product, day, sid, price) in rows {
        // Writing into a String cannot fail.
        let _ = writeln!(text, "{product}\t{day}\t{sid}\t{price}");
    }
    let mut copy = conn.copy_in_raw(COPY_IN).await?;
    copy.send(text.into_bytes()).await?;
    copy.finish().await?;
    sqlx::query(COPY_MOVE).execute(&mut *conn).await?;
    Ok(())
}

/// `YYYY-MM`.
pub fn month_text((year, month): (i16, i8)) -> String {
    format!("{year:04}-{month:02}")
}

pub fn parse_month_text(text: &str) -> Option<(i16, i8)> {
    let (year, month) = text.split_once('-')?;
    Some((year.parse().ok()?, month.parse().ok()?))
}

/// The `street` and `suburb` members of stored station details (live or archive).
pub fn street_and_suburb(details: &str) -> (String, String) {
    let value: serde_json::Value = serde_json::from_str(details).unwrap_or_default();
    let text = |name: &str| value.get(name).and_then(|v| v.as_str()).unwrap_or("").to_string();
    (text("street"), text("suburb"))
}

/// Implement `ArchiveStore` for a store type holding `pool: sqlx::Pool<$db>`; `$begin` opens
/// a writing transaction, `$insert` writes new prices in bulk.
macro_rules! impl_archive_store {
    ($store:ty, $db:ty, $begin:expr, $insert:path) => {
        #[async_trait::async_trait]
        impl $crate::store::archive::ArchiveStore for $store {
            async fn known_stations(
                &self,
            ) -> Result<Vec<$crate::store::archive::KnownStation>, $crate::store::StoreError> {
                use sqlx::Row;
                use $crate::store::archive as a;
                let mut out = Vec::new();
                for r in sqlx::query(a::KNOWN_STATIONS).fetch_all(&self.pool).await? {
                    let details: String = r.try_get(2)?;
                    let (street, suburb) = a::street_and_suburb(&details);
                    out.push(a::KnownStation {
                        sid: r.try_get(0)?,
                        station_id: r.try_get(1)?,
                        street,
                        suburb,
                        first_seen: r.try_get(3)?,
                        last_seen: r.try_get(4)?,
                        archive: r.try_get::<i64, _>(5)? == 1,
                        region: r.try_get::<Option<i64>, _>(6)?.and_then(|r| u8::try_from(r).ok()),
                    });
                }
                Ok(out)
            }

            async fn imported_months(
                &self,
            ) -> Result<
                std::collections::HashMap<(i16, i8), $crate::store::archive::ImportedMonth>,
                $crate::store::StoreError,
            > {
                use sqlx::Row;
                let rows = sqlx::query($crate::store::archive::IMPORTED_MONTHS).fetch_all(&self.pool).await?;
                let mut out = std::collections::HashMap::new();
                for r in rows {
                    let text: String = r.try_get(0)?;
                    let Some(month) = $crate::store::archive::parse_month_text(&text) else { continue };
                    let rows: i64 = r.try_get(1)?;
                    let bytes: Option<i64> = r.try_get(3)?;
                    out.insert(
                        month,
                        $crate::store::archive::ImportedMonth {
                            month,
                            rows: u64::try_from(rows).unwrap_or(0),
                            file_date: r.try_get(2)?,
                            bytes: bytes.and_then(|b| u64::try_from(b).ok()),
                        },
                    );
                }
                Ok(out)
            }

            async fn import(
                &self,
                batch: &$crate::store::archive::ImportBatch,
            ) -> Result<$crate::store::archive::ImportWrite, $crate::store::StoreError> {
                use sqlx::Row;
                use std::collections::HashMap;
                use $crate::store::archive as a;
                use $crate::store::history as h;
                let mut report = a::ImportWrite::default();
                let mut tx = self.pool.begin_with($begin).await?;
                // Archive stations first: their sids name the prices.
                let mut sids: HashMap<String, i64> = HashMap::new();
                for chunk in batch.stations.chunks(h::BATCH) {
                    let mut qb = sqlx::QueryBuilder::<$db>::new(a::UPSERT_ARCHIVE_STATIONS);
                    qb.push_values(chunk, |mut b, s| {
                        b.push_bind(s.station_id.clone())
                            .push_bind(i64::from(s.brand))
                            .push_bind(s.details.clone())
                            .push_bind(s.first_seen)
                            .push_bind(s.last_seen)
                            .push_bind(s.region.map(i64::from))
                            .push_bind(1_i64);
                    });
                    qb.push(a::UPSERT_ARCHIVE_STATIONS_TAIL);
                    for r in qb.build().fetch_all(&mut *tx).await? {
                        let (sid, station_id): (i64, String) = (r.try_get(0)?, r.try_get(1)?);
                        report.archive_sids.push((station_id.clone(), sid));
                        sids.insert(station_id, sid);
                    }
                }
                let sid_of = |slot: a::Slot| match slot {
                    a::Slot::Known(sid) => Some(sid),
                    a::Slot::Archive(i) => {
                        batch.stations.get(i).and_then(|s| sids.get(&s.station_id).copied())
                    }
                };
                for (sid, first, last, region) in &batch.widen {
                    sqlx::query(a::WIDEN_STATION)
                        .bind(*first)
                        .bind(*last)
                        .bind(region.map(i64::from))
                        .bind(*sid)
                        .execute(&mut *tx)
                        .await?;
                }
                // What the store holds over the batch's days decides each row: new, equal, or
                // a conflict (the stored price stays). Read per product: the primary key
                // leads with it.
                let mut ranges: HashMap<u8, (i64, i64)> = HashMap::new();
                for p in &batch.prices {
                    let range = ranges.entry(p.product).or_insert((p.day, p.day));
                    *range = (range.0.min(p.day), range.1.max(p.day));
                }
                let mut days: HashMap<(u8, i64), HashMap<i64, i64>> = HashMap::new();
                for (product, (first, last)) in &ranges {
                    let rows = sqlx::query(a::PRICES_IN_RANGE)
                        .bind(i64::from(*product))
                        .bind(*first)
                        .bind(*last)
                        .fetch_all(&mut *tx)
                        .await?;
                    for r in rows {
                        days.entry((*product, r.try_get(0)?))
                            .or_default()
                            .insert(r.try_get(1)?, r.try_get(2)?);
                    }
                }
                let mut fresh: Vec<(u8, i64, i64, i64)> = Vec::new();
                let mut touched: std::collections::HashSet<(u8, i64)> = std::collections::HashSet::new();
                for p in &batch.prices {
                    let Some(sid) = sid_of(p.station) else { continue };
                    let day = days.entry((p.product, p.day)).or_default();
                    match day.get(&sid) {
                        Some(&stored) if stored == p.price => report.unchanged += 1,
                        Some(_) => report.conflicts += 1,
                        None => {
                            day.insert(sid, p.price);
                            fresh.push((p.product, p.day, sid, p.price));
                            touched.insert((p.product, p.day));
                        }
                    }
                }
                // In primary-key order: the B-tree grows at its end instead of splitting pages.
                fresh.sort_unstable();
                $insert(&mut *tx, &fresh).await?;
                report.written = fresh.len() as u64;
                // The per-day summaries statistics read, for every day that gained prices.
                for (product, day) in &touched {
                    let Some(prices) = days.get(&(*product, *day)) else { continue };
                    sqlx::query(h::UPSERT_DAY)
                        .bind(i64::from(*product))
                        .bind(*day)
                        .bind(h::format_pairs(prices))
                        .execute(&mut *tx)
                        .await?;
                }
                if let Some(done) = &batch.month {
                    sqlx::query(a::RECORD_MONTH)
                        .bind(a::month_text(done.month))
                        .bind(i64::try_from(done.rows).unwrap_or(i64::MAX))
                        .bind(jiff::Timestamp::now().as_millisecond())
                        .bind(done.file_date.clone())
                        .bind(done.bytes.and_then(|b| i64::try_from(b).ok()))
                        .execute(&mut *tx)
                        .await?;
                }
                if report.written > 0 || !batch.stations.is_empty() {
                    sqlx::query($crate::store::enrich::BUMP_COUNTER)
                        .bind(h::HISTORY_COUNTER)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
                Ok(report)
            }
        }
    };
}

pub(crate) use impl_archive_store;
