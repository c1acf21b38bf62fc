//! Push events in the store (docs/api.md, "Push: `GET /v1/events`"): which publish of a day
//! catalogue is news, written in the publish's own transaction, and how replicas read them
//! back. Every replica streams the same sequence because the sequence lives here.

use std::collections::HashMap;

use jiff::Timestamp;

use super::{Snapshot, StoreError};
use crate::model::station::{Quote, tenths};

/// The change counter that numbers events: bumped in the publish transaction, so ids commit
/// in increasing order (PostgreSQL holds the counter row locked until commit; SQLite has one
/// writer), and a reader past id n never later sees n−1.
pub const EVENTS_COUNTER: &str = "events";
/// The highest id deleted for age: a client resuming before it missed events.
pub const EVENTS_PRUNED: &str = "events_pruned";
/// The PostgreSQL channel a publish notifies, waking every replica's reader.
pub const CHANNEL: &str = "wafuel_events";

pub const NEXT_ID: &str = "INSERT INTO change_counters (name, value) VALUES ($1, 1) \
     ON CONFLICT (name) DO UPDATE SET value = change_counters.value + 1 RETURNING value";
pub const PUBLISHED_BEFORE: &str =
    "SELECT 1 FROM events WHERE source_date = $1 AND product = $2 AND kind = 'published' LIMIT 1";
pub const INSERT: &str =
    "INSERT INTO events (id, kind, source_date, product, data, created_at) VALUES ($1, $2, $3, $4, $5, $6)";
pub const AFTER: &str =
    "SELECT id, kind, product, data, source_date FROM events WHERE id > $1 ORDER BY id LIMIT $2";
pub const NEWEST_OLD: &str = "SELECT MAX(id) FROM events WHERE created_at < $1";
pub const DELETE_OLD: &str = "DELETE FROM events WHERE created_at < $1";
pub const SET_PRUNED: &str = "INSERT INTO change_counters (name, value) VALUES ($1, $2) \
     ON CONFLICT (name) DO UPDATE SET value = excluded.value WHERE change_counters.value < excluded.value";
/// PostgreSQL only: wake the other replicas once the publish commits (bound to [`CHANNEL`]).
pub const POSTGRES_NOTIFY: &str = "SELECT pg_notify($1, '')";

/// What kind of news an event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The store holds prices for this (date, product) for the first time.
    Published,
    /// A held catalogue was replaced by one with different prices.
    Updated,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Published => "published",
            EventKind::Updated => "updated",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "published" => Some(EventKind::Published),
            "updated" => Some(EventKind::Updated),
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
    pub product: u8,
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

/// Wakes the event reader when the store says a publish committed.
#[async_trait::async_trait]
pub trait EventWaker: Send {
    /// Resolves on the next notification; an error means the listening connection is gone.
    async fn wait(&mut self) -> Result<(), StoreError>;
}

/// The event a publish of `snapshot`, the catalogue of `product`, makes: `published` when no
/// catalogue of that (date, product) was published before, `updated` with the number of
/// stations added, removed or repriced when the prices differ from `previous`, else none. An
/// empty catalogue (tomorrow before it is out) is no news.
pub fn event_for(
    previous: Option<&[Quote]>,
    published_before: bool,
    snapshot: &Snapshot,
    product: u8,
) -> Option<(EventKind, String)> {
    let now = prices_of(&snapshot.quotes, product);
    if now.is_empty() {
        return None;
    }
    let fetched_at = crate::time::format_perth(&snapshot.fetched_at.to_zoned(crate::time::perth()));
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
fn prices_of(quotes: &[Quote], product: u8) -> HashMap<&str, i64> {
    quotes
        .iter()
        .filter(|q| q.product == product)
        .map(|q| (q.station.digest.as_str(), tenths(q.price)))
        .collect()
}

/// Stations added, removed or repriced between two catalogues.
fn changed_stations(before: &HashMap<&str, i64>, after: &HashMap<&str, i64>) -> usize {
    let repriced_or_added =
        after.iter().filter(|(station, price)| before.get(*station) != Some(price)).count();
    let removed = before.keys().filter(|station| !after.contains_key(*station)).count();
    repriced_or_added + removed
}

/// Implement `EventStore` for a store type holding `pool: sqlx::Pool<$db>`.
macro_rules! impl_event_store {
    ($store:ty, $db:ty, $begin:expr, $waker:expr) => {
        #[async_trait::async_trait]
        impl $crate::store::events::EventStore for $store {
            async fn events_after(
                &self,
                after: i64,
                limit: i64,
            ) -> Result<Vec<$crate::store::events::StoredEvent>, $crate::store::StoreError> {
                use sqlx::Row;
                use $crate::store::events as e;
                let mut events = Vec::new();
                for row in sqlx::query(e::AFTER).bind(after).bind(limit).fetch_all(&self.pool).await? {
                    let kind: String = row.try_get(1)?;
                    let product: i32 = row.try_get(2)?;
                    let date: String = row.try_get(4)?;
                    // A row this version cannot read is skipped, never streamed half-understood.
                    let (Some(kind), Ok(product), Ok(date)) = (
                        e::EventKind::parse(&kind),
                        u8::try_from(product),
                        date.parse::<jiff::civil::Date>(),
                    ) else {
                        continue;
                    };
                    events.push(e::StoredEvent {
                        id: row.try_get(0)?,
                        kind,
                        date,
                        product,
                        data: row.try_get(3)?,
                    });
                }
                Ok(events)
            }

            async fn last_event_id(&self) -> Result<i64, $crate::store::StoreError> {
                $crate::store::SnapshotStore::change_counter(self, $crate::store::events::EVENTS_COUNTER)
                    .await
            }

            async fn events_pruned_through(&self) -> Result<i64, $crate::store::StoreError> {
                $crate::store::SnapshotStore::change_counter(self, $crate::store::events::EVENTS_PRUNED).await
            }

            async fn prune_events(&self, before: jiff::Timestamp) -> Result<u64, $crate::store::StoreError> {
                use sqlx::Row;
                use $crate::store::events as e;
                let before = $crate::store::millis(before);
                let mut tx = self.pool.begin_with($begin).await?;
                let newest: Option<i64> =
                    sqlx::query(e::NEWEST_OLD).bind(before).fetch_one(&mut *tx).await?.try_get(0)?;
                let Some(newest) = newest else { return Ok(0) };
                sqlx::query(e::SET_PRUNED).bind(e::EVENTS_PRUNED).bind(newest).execute(&mut *tx).await?;
                let deleted =
                    sqlx::query(e::DELETE_OLD).bind(before).execute(&mut *tx).await?.rows_affected();
                tx.commit().await?;
                Ok(deleted)
            }

            async fn event_waker(&self) -> Option<Box<dyn $crate::store::events::EventWaker>> {
                ($waker)(self).await
            }
        }
    };
}

pub(crate) use impl_event_store;

/// SQLite has no notifications: its reader polls.
pub fn no_waker<S>(_: &S) -> futures::future::BoxFuture<'static, Option<Box<dyn EventWaker>>> {
    Box::pin(async { None })
}

/// PostgreSQL: `LISTEN wafuel_events` on a connection of its own.
pub struct PgWaker(sqlx::postgres::PgListener);

#[async_trait::async_trait]
impl EventWaker for PgWaker {
    async fn wait(&mut self) -> Result<(), StoreError> {
        self.0.recv().await?;
        Ok(())
    }
}

pub fn pg_waker(
    store: &super::PostgresStore,
) -> futures::future::BoxFuture<'static, Option<Box<dyn EventWaker>>> {
    let pool = store.pool.clone();
    Box::pin(async move {
        let mut listener = match sqlx::postgres::PgListener::connect_with(&pool).await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "cannot LISTEN for events; polling instead");
                return None;
            }
        };
        if let Err(e) = listener.listen(CHANNEL).await {
            tracing::warn!(error = %e, "cannot LISTEN for events; polling instead");
            return None;
        }
        Some(Box::new(PgWaker(listener)) as Box<dyn EventWaker>)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::station::testing::{quote, station};
    use std::sync::Arc;

    fn catalogue(prices: &[(&str, f64)]) -> Snapshot {
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
    fn first_catalogue_is_published_then_only_changes_are_news() {
        let first = catalogue(&[("a", 190.0), ("b", 191.0), ("c", 192.0)]);
        let (kind, data) = event_for(None, false, &first, 1).expect("news");
        assert_eq!(kind, EventKind::Published);
        assert_eq!(
            data,
            r#"{"date":"2026-11-25","fetchedAt":"2026-11-24T14:31:00+08:00","product":1,"publicationStatus":"available","stations":3}"#
        );
        assert_eq!(event_for(Some(&first.quotes), true, &first, 1), None, "the same prices are no news");
        // b repriced, c gone, d new: three stations changed.
        let second = catalogue(&[("a", 190.0), ("b", 193.9), ("d", 188.0)]);
        let (kind, data) = event_for(Some(&first.quotes), true, &second, 1).expect("news");
        assert_eq!(kind, EventKind::Updated);
        let data: serde_json::Value = serde_json::from_str(&data).expect("json");
        assert_eq!(data["changed"], 3);
        assert_eq!(data["stations"], 3);
        assert_eq!(event_for(None, false, &catalogue(&[]), 1), None, "an empty catalogue is no news");
        assert_eq!(event_for(None, false, &first, 4), None, "another product's catalogue has none of it");
    }
}
