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
use wafuel_domain::codes::ProductCode;
use wafuel_domain::price::Hundredths;
use wafuel_domain::wholesale::{Centre, TerminalPrice};

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
    /// [`put_wholesale`](Self::put_wholesale) of prices given part by part (a large file's,
    /// never all in memory at once), every part in one transaction: all stored or none.
    async fn put_wholesale_parts(
        &self,
        parts: &mut (dyn Iterator<Item = Vec<TerminalPrice>> + Send),
    ) -> Result<WholesaleWrite, StoreError>;
    /// [`put_wholesale`](Self::put_wholesale) from a complete live read: each (product,
    /// centre, day) of `prices` then holds exactly the terminals of that read (a terminal the
    /// read no longer lists, renamed say, is dropped from those days, never counted twice).
    async fn put_live_wholesale(
        &self,
        prices: &[TerminalPrice],
        if_missing: &[TerminalPrice],
        news: Option<Date>,
        at: Timestamp,
    ) -> Result<WholesaleWrite, StoreError>;
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
            None => self.region.and_then(wafuel_domain::wholesale::region_centre),
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

/// Day rows per multi-row statement (4 arguments each). Small on purpose: 25 years of yearly
/// files (385,000 prices) import in seconds with a few dozen rows a statement, against 11.3 s
/// on SQLite and 38.7 s on PostgreSQL with 500 five-argument rows (PostgreSQL plans each large
/// statement anew; docs/benchmarks.md).
const BATCH: usize = 50;

// One centre's range of days is a range of the primary key (product, centre, day).
const RANGE: &str = "SELECT product, centre, day, terminals FROM wholesale_days \
     WHERE product = $1 AND centre = $2 AND day >= $3 AND day <= $4 ORDER BY day";
const RANGE_CENTRES: &str = "SELECT product, centre, day, terminals FROM wholesale_days \
     WHERE product = $1 AND day >= $2 AND day <= $3 ORDER BY day, centre";
const NEWEST: &str = "SELECT MAX(day) FROM wholesale_days WHERE product = $1 AND centre = $2";
const PUT: &str = "INSERT INTO wholesale_days (product, centre, day, terminals)";
const PUT_TAIL: &str = " ON CONFLICT (product, centre, day) DO UPDATE SET terminals = excluded.terminals";
const IMPORTS: &str = "SELECT file, rows, file_date, bytes FROM wholesale_imports";
const RECORD_IMPORT: &str = "INSERT INTO wholesale_imports (file, rows, file_date, bytes, imported_at) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (file) DO UPDATE SET rows = excluded.rows, \
     file_date = excluded.file_date, bytes = excluded.bytes, imported_at = excluded.imported_at";

/// The change counter of wholesale prices.
pub const COUNTER: &str = "wholesale";

/// One (product, centre, day): its terminals' prices by name.
type Day = BTreeMap<String, i64>;
type DayKey = (ProductCode, Centre, Date);

#[derive(sqlx::FromRow)]
struct Row {
    product: i64,
    centre: String,
    day: i64,
    terminals: String,
}

impl Row {
    /// The day, when this version can read the row (an unknown centre or product, or a line
    /// that is not `name TAB price`, is left out, never guessed).
    fn day(&self) -> Option<(DayKey, Day)> {
        let key = (
            u8::try_from(self.product).ok().and_then(ProductCode::parse)?,
            Centre::from_slug(&self.centre)?,
            from_day_number(self.day)?,
        );
        Some((key, parse_terminals(&self.terminals)))
    }
}

/// A terminal's name as stored: the separators of the day's text cannot be in it.
fn stored_name(name: &str) -> String {
    name.chars().map(|c| if c == '\t' || c == '\n' || c == '\r' { ' ' } else { c }).collect()
}

/// A day's terminals as stored: `name TAB price` lines (hundredths of a cent), by name.
fn format_terminals(day: &Day) -> String {
    let mut out = String::with_capacity(day.len() * 24);
    for (name, price) in day {
        out.push_str(name);
        out.push('\t');
        out.push_str(&price.to_string());
        out.push('\n');
    }
    out
}

fn parse_terminals(text: &str) -> Day {
    text.lines()
        .filter_map(|line| {
            let (name, price) = line.rsplit_once('\t')?;
            Some((name.to_string(), price.parse().ok()?))
        })
        .collect()
}

/// The stored days of `prices`' (product, centre) pairs over their days: one range of the
/// primary key for each pair.
async fn stored<C: Conn + ?Sized>(
    conn: &mut C,
    prices: impl Iterator<Item = &TerminalPrice>,
) -> Result<HashMap<DayKey, Day>, StoreError> {
    let mut spans: BTreeMap<(ProductCode, Centre), (Date, Date)> = BTreeMap::new();
    for p in prices {
        let span = spans.entry((p.product, p.centre)).or_insert((p.date, p.date));
        *span = (span.0.min(p.date), span.1.max(p.date));
    }
    let mut out = HashMap::new();
    for ((product, centre), (from, to)) in spans {
        let statement =
            sql(RANGE).bind(product).bind(centre.slug()).bind(day_number(from)).bind(day_number(to));
        let rows: Vec<Row> = conn.fetch_all(statement).await?;
        out.extend(rows.iter().filter_map(Row::day));
    }
    Ok(out)
}

/// Every terminal price of some stored days, ascending by day, centre and terminal.
fn prices_of(days: impl IntoIterator<Item = (DayKey, Day)>) -> Vec<TerminalPrice> {
    days.into_iter()
        .flat_map(|((product, centre, date), day)| {
            day.into_iter().map(move |(terminal, price)| TerminalPrice {
                product,
                centre,
                date,
                terminal,
                price,
            })
        })
        .collect()
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
        self.put_days(prices, if_missing, news, at, false).await
    }

    async fn put_wholesale_parts(
        &self,
        parts: &mut (dyn Iterator<Item = Vec<TerminalPrice>> + Send),
    ) -> Result<WholesaleWrite, StoreError> {
        let mut tx = self.db.write().await?;
        let mut write = WholesaleWrite::default();
        let mut changed = false;
        for part in parts {
            let merged = merge_days(&mut *tx, &part, &[], false).await?;
            write.add(merged.write);
            changed |= !merged.rows.is_empty();
        }
        if changed {
            counters::bump(&mut *tx, COUNTER).await?;
            B::commit(tx).await?;
        }
        Ok(write)
    }

    async fn put_live_wholesale(
        &self,
        prices: &[TerminalPrice],
        if_missing: &[TerminalPrice],
        news: Option<Date>,
        at: Timestamp,
    ) -> Result<WholesaleWrite, StoreError> {
        self.put_days(prices, if_missing, news, at, true).await
    }

    async fn wholesale(
        &self,
        product: ProductCode,
        centre: Option<Centre>,
        from: Date,
        to: Date,
    ) -> Result<Vec<TerminalPrice>, StoreError> {
        let (from, to) = (day_number(from), day_number(to));
        let statement = match centre {
            Some(c) => sql(RANGE).bind(product).bind(c.slug()).bind(from).bind(to),
            None => sql(RANGE_CENTRES).bind(product).bind(from).bind(to),
        };
        let rows: Vec<Row> = self.db.read().await?.fetch_all(statement).await?;
        Ok(prices_of(rows.iter().filter_map(Row::day)))
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

/// What merging prices into their stored days found, inside a write's transaction.
struct Merged {
    write: WholesaleWrite,
    /// The days as stored before, and as they are to be written.
    before: HashMap<DayKey, Day>,
    days: HashMap<DayKey, Day>,
    /// The days that changed, ascending.
    rows: Vec<DayKey>,
}

/// Merge `prices` (replacing a stored price of another value) and `if_missing` into their
/// stored days, and write the days that changed, in the caller's transaction; with `exact`,
/// each day of `prices` keeps only the terminals `prices` names for it.
async fn merge_days<C: Conn + ?Sized>(
    tx: &mut C,
    prices: &[TerminalPrice],
    if_missing: &[TerminalPrice],
    exact: bool,
) -> Result<Merged, StoreError> {
    let before = stored(tx, prices.iter().chain(if_missing)).await?;
    let mut days = before.clone();
    let mut write = WholesaleWrite::default();
    let mut changed: HashSet<DayKey> = HashSet::new();
    let cell = |p: &TerminalPrice| ((p.product, p.centre, p.date), stored_name(&p.terminal));
    for p in prices {
        let (key, name) = cell(p);
        match days.entry(key).or_default().insert(name, p.price) {
            Some(old) if old == p.price => write.unchanged += 1,
            Some(_) => {
                write.replaced += 1;
                changed.insert(key);
            }
            None => {
                write.written += 1;
                changed.insert(key);
            }
        }
    }
    if exact {
        let mut read: HashMap<DayKey, HashSet<String>> = HashMap::new();
        for p in prices {
            let (key, name) = cell(p);
            read.entry(key).or_default().insert(name);
        }
        for (key, names) in &read {
            let Some(day) = days.get_mut(key) else { continue };
            let before_len = day.len();
            day.retain(|name, _| names.contains(name));
            if day.len() != before_len {
                write.replaced += (before_len - day.len()) as u64;
                changed.insert(*key);
            }
        }
    }
    for p in if_missing {
        let (key, name) = cell(p);
        match days.entry(key).or_default().entry(name) {
            std::collections::btree_map::Entry::Occupied(_) => write.unchanged += 1,
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(p.price);
                write.written += 1;
                changed.insert(key);
            }
        }
    }
    let mut rows: Vec<DayKey> = changed.into_iter().collect();
    rows.sort();
    for chunk in rows.chunks(BATCH) {
        let values = chunk.iter().map(|key| {
            let (product, centre, date) = *key;
            let text = days.get(key).map(format_terminals).unwrap_or_default();
            vec![Arg::from(product), Arg::from(centre.slug()), Arg::from(day_number(date)), Arg::from(text)]
        });
        tx.execute(Statement::rows(PUT, values, PUT_TAIL)).await?;
    }
    Ok(Merged { write, before, days, rows })
}

impl WholesaleWrite {
    fn add(&mut self, other: WholesaleWrite) {
        self.written += other.written;
        self.replaced += other.replaced;
        self.unchanged += other.unchanged;
    }
}

impl<B: Backend> SqlStore<B> {
    /// Store a write in one transaction; with `exact`, each day of `prices` keeps only the
    /// terminals `prices` names for it.
    async fn put_days(
        &self,
        prices: &[TerminalPrice],
        if_missing: &[TerminalPrice],
        news: Option<Date>,
        at: Timestamp,
        exact: bool,
    ) -> Result<WholesaleWrite, StoreError> {
        let mut tx = self.db.write().await?;
        let Merged { write, before, days, rows } = merge_days(&mut *tx, prices, if_missing, exact).await?;
        if rows.is_empty() {
            // Nothing changed: dropped, rolled back.
            return Ok(write);
        }
        counters::bump(&mut *tx, COUNTER).await?;
        if let Some(day) = news {
            // Each (product, centre) priced on the news day for the first time: its event.
            let first: Vec<(DayKey, Day)> = rows
                .iter()
                .filter(|(_, _, date)| *date == day)
                .filter(|key| before.get(*key).is_none_or(|d| d.is_empty()))
                .filter_map(|key| Some((*key, days.get(key)?.clone())))
                .collect();
            let mut evented = false;
            for d in wafuel_domain::wholesale::days(&prices_of(first)) {
                let data = serde_json::json!({
                    "date": d.date.to_string(),
                    "centre": d.centre.slug(),
                    "product": d.product,
                    "mean": Hundredths(d.mean).cents(),
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_days_terminals_round_trip_through_their_text() {
        let day: Day =
            [("Ampol Kwinana".to_string(), 17_326), (String::new(), 14_920), ("BP Kewdale".into(), 17_105)]
                .into_iter()
                .collect();
        let text = format_terminals(&day);
        assert_eq!(text, "\t14920\nAmpol Kwinana\t17326\nBP Kewdale\t17105\n");
        assert_eq!(parse_terminals(&text), day);
        // A name cannot break the text: its separators become spaces.
        assert_eq!(stored_name("BP\tKwinana\r\n"), "BP Kwinana  ");
        // A line this version cannot read is left out.
        assert_eq!(parse_terminals("BP Kwinana\tabc\nno tab\n").len(), 0);
    }
}
