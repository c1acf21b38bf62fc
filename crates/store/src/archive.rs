//! Writing FuelWatch's monthly archives into the price history (`wafuel import-history`): one
//! transaction per batch (a month), written like every price (`history::apply`: the days, their
//! summaries, the stations' month rows), and the month recorded as imported.
//!
//! Idempotent: a price already stored for the same station, product and day is never
//! overwritten (the live feed's price wins; a differing archive value is counted as a
//! conflict), so importing a month twice changes nothing.

use std::collections::HashMap;

use super::backend::Backend;
use super::conn::{Conn, Statement, sql};
use super::history::{BATCH, Differing, Incoming, Move, apply_with_moves};
use super::{SqlStore, StoreError, counters};
use wafuel_domain::codes::ProductCode;

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
    /// Its trading names as stored: every name an archive station has had, a live station's
    /// current one.
    pub names: Vec<String>,
    /// An archive station's first day under each name (as `names`); empty when not stored.
    pub firsts: Vec<i64>,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    /// A station the history knows, by sid.
    Known(i64),
    /// The batch's archive station at this index.
    Archive(usize),
}

/// One archive price: product, day (`YYYYMMDD`), station, tenths of a cent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportPrice {
    pub product: ProductCode,
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
    /// Known archive stations whose trading names (or their days) the batch changed.
    pub names: Vec<StationNames>,
    /// Prices a split takes from a known archive station to one of the batch's new stations.
    pub moves: Vec<ArchiveMove>,
}

/// An archive station's trading names, each with its first day (`YYYYMMDD`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StationNames {
    pub sid: i64,
    pub names: Vec<String>,
    pub firsts: Vec<i64>,
}

/// Every price of station `from` between two days (inclusive) moved to the batch's archive
/// station `to` (an index of [`ImportBatch::stations`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveMove {
    pub from: i64,
    pub to: usize,
    pub days: (i64, i64),
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
    /// Stored prices a split moved to another station.
    pub moved: u64,
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

const KNOWN_STATIONS: &str =
    "SELECT sid, station_id, details, first_seen, last_seen, archive, region FROM history_stations";
const IMPORTED_MONTHS: &str = "SELECT month, rows, file_date, bytes FROM history_imports";
const UPSERT_ARCHIVE_STATIONS: &str =
    "INSERT INTO history_stations (station_id, brand, details, first_seen, last_seen, region, archive)";
const UPSERT_ARCHIVE_STATIONS_TAIL: &str = " ON CONFLICT (station_id) DO UPDATE SET \
     first_seen = CASE WHEN excluded.first_seen < history_stations.first_seen THEN excluded.first_seen ELSE history_stations.first_seen END, \
     last_seen = CASE WHEN excluded.last_seen > history_stations.last_seen THEN excluded.last_seen ELSE history_stations.last_seen END, \
     details = CASE WHEN history_stations.archive = 1 AND excluded.last_seen >= history_stations.last_seen THEN excluded.details ELSE history_stations.details END, \
     region = CASE WHEN history_stations.region IS NULL THEN excluded.region ELSE history_stations.region END \
     RETURNING sid, station_id";
const WIDEN_STATION: &str = "UPDATE history_stations SET \
     first_seen = CASE WHEN $1 < first_seen THEN $1 ELSE first_seen END, \
     last_seen = CASE WHEN $2 > last_seen THEN $2 ELSE last_seen END, \
     region = CASE WHEN region IS NULL THEN $3 ELSE region END WHERE sid = $4";
const RECORD_MONTH: &str = "INSERT INTO history_imports (month, rows, imported_at, file_date, bytes) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (month) DO UPDATE SET rows = excluded.rows, \
     imported_at = excluded.imported_at, file_date = excluded.file_date, bytes = excluded.bytes";

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

/// The trading names of stored station details, with the first day of each when stored: an
/// archive station's `names` and `firsts`, else its (or a live station's) `trading_name`.
pub fn trading_names(details: &str) -> (Vec<String>, Vec<i64>) {
    let value: serde_json::Value = serde_json::from_str(details).unwrap_or_default();
    let names: Vec<String> = match value.get("names").and_then(|v| v.as_array()) {
        Some(names) => names.iter().filter_map(|n| n.as_str().map(str::to_string)).collect(),
        None => value.get("trading_name").and_then(|v| v.as_str()).map(str::to_string).into_iter().collect(),
    };
    let firsts: Vec<i64> = value
        .get("firsts")
        .and_then(|v| v.as_array())
        .map(|firsts| firsts.iter().filter_map(serde_json::Value::as_i64).collect())
        .unwrap_or_default();
    // Days only when there is one per name.
    let firsts = if firsts.len() == names.len() { firsts } else { Vec::new() };
    (names, firsts)
}

const STATION_DETAILS: &str = "SELECT details FROM history_stations WHERE sid = $1";
const PUT_STATION_DETAILS: &str = "UPDATE history_stations SET details = $1 WHERE sid = $2";

#[derive(sqlx::FromRow)]
struct KnownRow {
    sid: i64,
    station_id: String,
    details: String,
    first_seen: i64,
    last_seen: i64,
    archive: i64,
    region: Option<i64>,
}

#[derive(sqlx::FromRow)]
struct ImportedRow {
    month: String,
    rows: i64,
    file_date: Option<String>,
    bytes: Option<i64>,
}

#[async_trait::async_trait]
impl<B: Backend> ArchiveStore for SqlStore<B> {
    async fn known_stations(&self) -> Result<Vec<KnownStation>, StoreError> {
        let rows: Vec<KnownRow> = self.db.read().await?.fetch_all(sql(KNOWN_STATIONS)).await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let (street, suburb) = street_and_suburb(&r.details);
                let (names, firsts) = trading_names(&r.details);
                KnownStation {
                    names,
                    firsts,
                    sid: r.sid,
                    station_id: r.station_id,
                    street,
                    suburb,
                    first_seen: r.first_seen,
                    last_seen: r.last_seen,
                    archive: r.archive == 1,
                    region: r.region.and_then(|r| u8::try_from(r).ok()),
                }
            })
            .collect())
    }

    async fn imported_months(&self) -> Result<HashMap<(i16, i8), ImportedMonth>, StoreError> {
        let rows: Vec<ImportedRow> = self.db.read().await?.fetch_all(sql(IMPORTED_MONTHS)).await?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let month = parse_month_text(&r.month)?;
                let done = ImportedMonth {
                    month,
                    rows: u64::try_from(r.rows).unwrap_or(0),
                    file_date: r.file_date,
                    bytes: r.bytes.and_then(|b| u64::try_from(b).ok()),
                };
                Some((month, done))
            })
            .collect())
    }

    async fn import(&self, batch: &ImportBatch) -> Result<ImportWrite, StoreError> {
        let mut report = ImportWrite::default();
        let mut tx = self.db.write().await?;
        // Archive stations first: their sids name the prices.
        let mut sids: HashMap<String, i64> = HashMap::new();
        for chunk in batch.stations.chunks(BATCH) {
            let values = chunk.iter().map(|s| {
                vec![
                    (&s.station_id).into(),
                    s.brand.into(),
                    (&s.details).into(),
                    s.first_seen.into(),
                    s.last_seen.into(),
                    s.region.map(i64::from).into(),
                    1_i64.into(),
                ]
            });
            let upsert = Statement::rows(UPSERT_ARCHIVE_STATIONS, values, UPSERT_ARCHIVE_STATIONS_TAIL);
            let returned: Vec<(i64, String)> = tx.fetch_all(upsert).await?;
            for (sid, station_id) in returned {
                report.archive_sids.push((station_id.clone(), sid));
                sids.insert(station_id, sid);
            }
        }
        for (sid, first, last, region) in &batch.widen {
            let widen = sql(WIDEN_STATION).bind(*first).bind(*last).bind(region.map(i64::from)).bind(*sid);
            tx.execute(widen).await?;
        }
        // Names first read and written back whole: the details are JSON of either backend.
        for update in &batch.names {
            let details: Option<(String,)> = tx.fetch_optional(sql(STATION_DETAILS).bind(update.sid)).await?;
            let Some((details,)) = details else { continue };
            let mut value: serde_json::Value = serde_json::from_str(&details).unwrap_or_default();
            if let Some(object) = value.as_object_mut() {
                object.insert("names".into(), serde_json::json!(update.names));
                object.insert("firsts".into(), serde_json::json!(update.firsts));
                tx.execute(sql(PUT_STATION_DETAILS).bind(value.to_string()).bind(update.sid)).await?;
            }
        }
        let sid_of = |slot: Slot| match slot {
            Slot::Known(sid) => Some(sid),
            Slot::Archive(i) => batch.stations.get(i).and_then(|s| sids.get(&s.station_id).copied()),
        };
        let moves: Vec<Move> = batch
            .moves
            .iter()
            .filter_map(|m| Some(Move { from: m.from, to: sid_of(Slot::Archive(m.to))?, days: m.days }))
            .collect();
        let prices: Vec<Incoming> = batch
            .prices
            .iter()
            .filter_map(|p| {
                Some(Incoming { product: p.product, day: p.day, sid: sid_of(p.station)?, price: p.price })
            })
            .collect();
        // A price already stored (the live feed's, or this month's before) stays.
        let applied = apply_with_moves::<B>(&mut tx, &prices, Differing::Keep, &moves).await?;
        // A moved price is stored under its new station, not a new price.
        report.written = applied.written.saturating_sub(applied.moved);
        report.moved = applied.moved;
        report.unchanged = applied.unchanged;
        report.conflicts = applied.conflicts;
        if let Some(done) = &batch.month {
            let record = sql(RECORD_MONTH)
                .bind(month_text(done.month))
                .bind(i64::try_from(done.rows).unwrap_or(i64::MAX))
                .bind(jiff::Timestamp::now().as_millisecond())
                .bind(done.file_date.clone())
                .bind(done.bytes.and_then(|b| i64::try_from(b).ok()));
            tx.execute(record).await?;
        }
        if report.written > 0 || report.moved > 0 || !batch.stations.is_empty() || !batch.names.is_empty() {
            counters::bump(&mut *tx, counters::HISTORY).await?;
        }
        B::commit(tx).await?;
        Ok(report)
    }
}
