//! Push events in the store (docs/api.md "Push: `GET /v1/events` (Server-Sent Events)"): which publish of a day
//! catalog is news, written in the publish's own transaction, and how replicas read them
//! back. Every replica streams the same sequence because the sequence lives here.

use std::collections::HashMap;

use jiff::Timestamp;

use super::backend::{Backend, EventWaker};
use super::conn::{Conn, sql};
use super::{Snapshot, SqlStore, StoreError, counters};
use wafuel_domain::codes::ProductCode;
use wafuel_domain::station::{Quote, tenths};

const PUBLISHED_BEFORE: &str =
    "SELECT 1 FROM events WHERE source_date = $1 AND product = $2 AND kind = 'published' LIMIT 1";
const INSERT: &str =
    "INSERT INTO events (id, kind, source_date, product, data, created_at) VALUES ($1, $2, $3, $4, $5, $6)";
const AFTER: &str =
    "SELECT id, kind, product, data, source_date FROM events WHERE id > $1 ORDER BY id LIMIT $2";
const NEWEST_OLD: &str = "SELECT MAX(id) FROM events WHERE created_at < $1";
const DELETE_OLD: &str = "DELETE FROM events WHERE created_at < $1";

/// What kind of news an event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The store holds prices for this (date, product) for the first time.
    Published,
    /// A held catalog was replaced by one with different prices.
    Updated,
    /// A centre's terminal gate price of a product for a day (tomorrow's) was first stored.
    Wholesale,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Published => "published",
            EventKind::Updated => "updated",
            EventKind::Wholesale => "wholesale",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "published" => Some(EventKind::Published),
            "updated" => Some(EventKind::Updated),
            "wholesale" => Some(EventKind::Wholesale),
            _ => None,
        }
    }
}

/// One stored event, its JSON as it goes on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub id: i64,
    pub kind: EventKind,
    pub date: jiff::civil::Date,
    pub product: ProductCode,
    pub data: String,
}

/// Reading events back, for the replica's one reader and for clients resuming.
#[async_trait::async_trait]
pub trait EventStore: Send + Sync + 'static {
    /// Events with an id above `after`, in id order, at most `limit`.
    async fn events_after(&self, after: i64, limit: i64) -> Result<Vec<StoredEvent>, StoreError>;
    /// The newest id given out (0 before the first event).
    async fn last_event_id(&self) -> Result<i64, StoreError>;
    /// The newest id deleted for age (0 when none was).
    async fn events_pruned_through(&self) -> Result<i64, StoreError>;
    /// Delete events created before `before`, remembering the newest id deleted.
    async fn prune_events(&self, before: Timestamp) -> Result<u64, StoreError>;
    /// Something that resolves when another replica may have published (PostgreSQL's
    /// `LISTEN`), or `None` where the reader must poll (SQLite).
    async fn event_waker(&self) -> Option<Box<dyn EventWaker>>;
}

/// The event a publish of `snapshot`, the catalog of `product`, makes: `published` when no
/// catalog of that (date, product) was published before, `updated` with the number of
/// stations added, removed or repriced when the prices differ from `previous`, else none. An
/// empty catalog (tomorrow before it is out) is no news.
pub fn event_for(
    previous: Option<&[Quote]>,
    published_before: bool,
    snapshot: &Snapshot,
    product: ProductCode,
) -> Option<(EventKind, String)> {
    let now = prices_of(&snapshot.quotes, product);
    if now.is_empty() {
        return None;
    }
    let fetched_at =
        wafuel_domain::time::format_perth(&snapshot.fetched_at.to_zoned(wafuel_domain::time::perth()));
    let mut data = serde_json::json!({
        "date": snapshot.date.to_string(),
        "product": product,
        "publicationStatus": "available",
        "stations": now.len(),
        "fetchedAt": fetched_at,
    });
    if !published_before {
        return Some((EventKind::Published, data.to_string()));
    }
    let before = previous.map(|quotes| prices_of(quotes, product)).unwrap_or_default();
    let changed = changed_stations(&before, &now);
    if changed == 0 {
        return None;
    }
    data["changed"] = changed.into();
    Some((EventKind::Updated, data.to_string()))
}

/// Station digest → price in tenths of a cent, for one product.
fn prices_of(quotes: &[Quote], product: ProductCode) -> HashMap<&str, i64> {
    quotes.iter().filter(|q| q.product == product).map(|q| (q.station.id.as_str(), tenths(q.price))).collect()
}

/// Stations added, removed or repriced between two catalogs.
fn changed_stations(before: &HashMap<&str, i64>, after: &HashMap<&str, i64>) -> usize {
    let repriced_or_added =
        after.iter().filter(|(station, price)| before.get(*station) != Some(price)).count();
    let removed = before.keys().filter(|station| !after.contains_key(*station)).count();
    repriced_or_added + removed
}

/// An event row as stored.
#[derive(sqlx::FromRow)]
struct EventRow {
    id: i64,
    kind: String,
    product: i32,
    data: String,
    source_date: String,
}

/// Whether a `published` event of this (date, product) exists.
pub(super) async fn published_before<C: Conn + ?Sized>(
    conn: &mut C,
    date: &str,
    product: ProductCode,
) -> Result<bool, StoreError> {
    let row: Option<(i32,)> = conn.fetch_optional(sql(PUBLISHED_BEFORE).bind(date).bind(product)).await?;
    Ok(row.is_some())
}

/// Write event `id` of a catalog (its date and product).
pub(super) async fn insert<C: Conn + ?Sized>(
    conn: &mut C,
    id: i64,
    kind: EventKind,
    (date, product): (&str, ProductCode),
    data: String,
    at: Timestamp,
) -> Result<(), StoreError> {
    let statement =
        sql(INSERT).bind(id).bind(kind.as_str()).bind(date).bind(product).bind(data).bind(super::millis(at));
    conn.execute(statement).await?;
    Ok(())
}

#[async_trait::async_trait]
impl<B: Backend> EventStore for SqlStore<B> {
    async fn events_after(&self, after: i64, limit: i64) -> Result<Vec<StoredEvent>, StoreError> {
        let rows: Vec<EventRow> = self.db.read().await?.fetch_all(sql(AFTER).bind(after).bind(limit)).await?;
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                // A row this version cannot read is skipped, never streamed half-understood.
                Some(StoredEvent {
                    id: row.id,
                    kind: EventKind::parse(&row.kind)?,
                    date: row.source_date.parse().ok()?,
                    product: u8::try_from(row.product).ok().and_then(ProductCode::parse)?,
                    data: row.data,
                })
            })
            .collect())
    }

    async fn last_event_id(&self) -> Result<i64, StoreError> {
        counters::read(&mut *self.db.read().await?, counters::EVENTS).await
    }

    async fn events_pruned_through(&self) -> Result<i64, StoreError> {
        counters::read(&mut *self.db.read().await?, counters::EVENTS_PRUNED).await
    }

    async fn prune_events(&self, before: Timestamp) -> Result<u64, StoreError> {
        let before = super::millis(before);
        let mut tx = self.db.write().await?;
        let newest: Option<(Option<i64>,)> = tx.fetch_optional(sql(NEWEST_OLD).bind(before)).await?;
        let Some(newest) = newest.and_then(|r| r.0) else { return Ok(0) };
        counters::raise(&mut *tx, counters::EVENTS_PRUNED, newest).await?;
        let deleted = tx.execute(sql(DELETE_OLD).bind(before)).await?;
        B::commit(tx).await?;
        Ok(deleted)
    }

    async fn event_waker(&self) -> Option<Box<dyn EventWaker>> {
        self.db.waker().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(code: u8) -> ProductCode {
        ProductCode::parse(code).expect("a product")
    }
    use std::sync::Arc;
    use wafuel_domain::testing::{quote, station};

    fn catalog(prices: &[(&str, f64)]) -> Snapshot {
        let quotes = prices
            .iter()
            .map(|(name, price)| quote(&station(name, "BP", "-31.95", "115.86"), 1, *price))
            .collect();
        Snapshot {
            key: "extract:1:2026-11-25".into(),
            date: jiff::civil::date(2026, 11, 25),
            fetched_at: "2026-11-24T06:31:00Z".parse().expect("time"),
            expires_at: "2026-11-24T12:31:00Z".parse().expect("time"),
            quotes: Arc::new(quotes),
        }
    }

    #[test]
    fn first_catalog_is_published_then_only_changes_are_news() {
        let first = catalog(&[("a", 190.0), ("b", 191.0), ("c", 192.0)]);
        let (kind, data) = event_for(None, false, &first, p(1)).expect("news");
        assert_eq!(kind, EventKind::Published);
        assert_eq!(
            data,
            r#"{"date":"2026-11-25","fetchedAt":"2026-11-24T14:31:00+08:00","product":1,"publicationStatus":"available","stations":3}"#
        );
        assert_eq!(event_for(Some(&first.quotes), true, &first, p(1)), None, "the same prices are no news");
        // b repriced, c gone, d new: three stations changed.
        let second = catalog(&[("a", 190.0), ("b", 193.9), ("d", 188.0)]);
        let (kind, data) = event_for(Some(&first.quotes), true, &second, p(1)).expect("news");
        assert_eq!(kind, EventKind::Updated);
        let data: serde_json::Value = serde_json::from_str(&data).expect("json");
        assert_eq!(data["changed"], 3);
        assert_eq!(data["stations"], 3);
        assert_eq!(event_for(None, false, &catalog(&[]), p(1)), None, "an empty catalog is no news");
        assert_eq!(event_for(None, false, &first, p(4)), None, "another product's catalog has none of it");
    }
}
