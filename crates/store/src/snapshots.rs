//! Published snapshots: the validated quotes of each key with their fetch time and expiry,
//! read by every replica; a publish happens under the key's fill lease and, for a day
//! catalog, writes its push event in the same transaction.

use std::sync::Arc;

use jiff::Timestamp;

use super::backend::Backend;
use super::conn::{Conn, sql};
use super::{
    Snapshot, SnapshotStore, SqlStore, Stamp, StoreError, codec, counters, events, from_millis, leases,
    millis,
};
use wafuel_domain::codes::ProductCode;

const LOAD: &str = "SELECT source_date, fetched_at, expires_at, payload, checksum FROM snapshots \
     WHERE key = $1 AND payload IS NOT NULL";
/// Only the times of a published snapshot: the columns before the payload, so neither
/// database reads the blob (SQLite stops at the row's first page).
const STAMP: &str = "SELECT fetched_at, expires_at FROM snapshots WHERE key = $1 AND payload IS NOT NULL";
const DELETE_CORRUPT: &str = "DELETE FROM snapshots WHERE key = $1 AND checksum = $2";
const PUBLISH: &str = "UPDATE snapshots SET source_date = $1, fetched_at = $2, expires_at = $3, payload = $4, \
     checksum = $5, lease_owner = NULL, lease_until = NULL WHERE key = $6 AND lease_owner = $7";
const PRUNE: &str = "DELETE FROM snapshots WHERE (lease_until IS NULL OR lease_until <= $1) \
     AND ((payload IS NOT NULL AND expires_at <= $2) OR (payload IS NULL))";
/// Reachable and migrated: the snapshot table answers.
const PING: &str = "SELECT 1 FROM snapshots LIMIT 1";

#[derive(sqlx::FromRow)]
struct StoredSnapshot {
    source_date: String,
    fetched_at: i64,
    expires_at: i64,
    payload: Vec<u8>,
    checksum: String,
}

#[derive(sqlx::FromRow)]
struct StoredStamp {
    fetched_at: i64,
    expires_at: i64,
}

impl StoredSnapshot {
    /// The snapshot, or why its row cannot be read.
    fn decode(&self, key: &str) -> Result<Snapshot, String> {
        let quotes = codec::decode(&self.payload, &self.checksum)?;
        let date = self.source_date.parse::<jiff::civil::Date>().map_err(|e| e.to_string())?;
        Ok(Snapshot {
            key: key.to_string(),
            date,
            fetched_at: from_millis(self.fetched_at),
            expires_at: from_millis(self.expires_at),
            quotes: Arc::new(quotes),
        })
    }
}

async fn load_in<C: Conn + ?Sized>(conn: &mut C, key: &str) -> Result<Option<StoredSnapshot>, StoreError> {
    conn.fetch_optional(sql(LOAD).bind(key)).await
}

#[async_trait::async_trait]
impl<B: Backend> SnapshotStore for SqlStore<B> {
    async fn load(&self, key: &str) -> Result<Option<Arc<Snapshot>>, StoreError> {
        let mut conn = self.db.read().await?;
        let Some(row) = load_in(&mut *conn, key).await? else { return Ok(None) };
        match row.decode(key) {
            Ok(snapshot) => Ok(Some(Arc::new(snapshot))),
            Err(why) => {
                tracing::warn!(key, %why, "corrupt snapshot row deleted; it will be refetched");
                metrics::counter!("wafuel_snapshot_corrupt_total").increment(1);
                // A write like any other: it waits its turn (on SQLite) on a connection of its own.
                drop(conn);
                self.db.single().await?.execute(sql(DELETE_CORRUPT).bind(key).bind(row.checksum)).await?;
                Ok(None)
            }
        }
    }

    async fn stamp(&self, key: &str) -> Result<Option<Stamp>, StoreError> {
        let mut conn = self.db.read().await?;
        let row: Option<StoredStamp> = conn.fetch_optional(sql(STAMP).bind(key)).await?;
        Ok(row
            .map(|r| Stamp { fetched_at: from_millis(r.fetched_at), expires_at: from_millis(r.expires_at) }))
    }

    async fn claim(
        &self,
        key: &str,
        owner: &str,
        now: Timestamp,
        until: Timestamp,
        force: bool,
    ) -> Result<bool, StoreError> {
        leases::claim(&mut *self.db.single().await?, key, owner, (now, until), force).await
    }

    async fn publish(
        &self,
        snapshot: &Snapshot,
        owner: &str,
        product: Option<ProductCode>,
    ) -> Result<bool, StoreError> {
        let (payload, checksum) = codec::encode(&snapshot.quotes).map_err(StoreError::Encoding)?;
        let date = snapshot.date.to_string();
        // The write lock first (SQLite). A day catalog's news is decided against what the
        // store holds inside this transaction (never a copy read before the lease): whether
        // its (date, product) was published before, and only then the catalog this publish
        // replaces, to count the stations that changed.
        let mut tx = self.db.write().await?;
        let mut published_before = false;
        let mut previous = None;
        if let Some(product) = product {
            published_before = events::published_before(&mut *tx, &date, product).await?;
            if published_before && let Some(row) = load_in(&mut *tx, &snapshot.key).await? {
                // A corrupt row counts as nothing published before it.
                previous = codec::decode(&row.payload, &row.checksum).ok();
            }
        }
        let publish = sql(PUBLISH)
            .bind(date.as_str())
            .bind(millis(snapshot.fetched_at))
            .bind(millis(snapshot.expires_at))
            .bind(payload)
            .bind(checksum)
            .bind(snapshot.key.as_str())
            .bind(owner);
        if tx.execute(publish).await? != 1 {
            // Dropped: rolled back.
            return Ok(false);
        }
        if let Some(product) = product
            && let Some((kind, data)) =
                events::event_for(previous.as_deref(), published_before, snapshot, product)
        {
            let id = counters::bump(&mut *tx, counters::EVENTS).await?;
            events::insert(&mut *tx, id, kind, (&date, product), data, snapshot.fetched_at).await?;
            if let Some(notify) = self.db.notify() {
                tx.execute(notify).await?;
            }
        }
        B::commit(tx).await?;
        Ok(true)
    }

    async fn release(&self, key: &str, owner: &str) -> Result<(), StoreError> {
        leases::release(&mut *self.db.single().await?, key, owner).await
    }

    async fn prune(&self, now: Timestamp, before: Timestamp) -> Result<u64, StoreError> {
        let mut conn = self.db.single().await?;
        let snapshots = conn.execute(sql(PRUNE).bind(millis(now)).bind(millis(before))).await?;
        leases::prune_jobs(&mut *conn, before).await?;
        Ok(snapshots)
    }

    async fn claim_job(
        &self,
        name: &str,
        owner: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, StoreError> {
        leases::claim_job(&mut *self.db.single().await?, name, owner, (now, until)).await
    }

    async fn release_job(&self, name: &str, owner: &str) -> Result<(), StoreError> {
        leases::release_job(&mut *self.db.single().await?, name, owner).await
    }

    async fn renew_job(
        &self,
        name: &str,
        owner: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, StoreError> {
        leases::renew_job(&mut *self.db.single().await?, name, owner, (now, until)).await
    }

    async fn job_state(&self, name: &str) -> Result<Option<String>, StoreError> {
        leases::job_state(&mut *self.db.read().await?, name).await
    }

    async fn put_job_state(&self, name: &str, value: &str, at: Timestamp) -> Result<(), StoreError> {
        leases::put_job_state(&mut *self.db.single().await?, name, value, at).await
    }

    async fn change_counter(&self, name: &str) -> Result<i64, StoreError> {
        counters::read(&mut *self.db.read().await?, name).await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let _: Option<(i32,)> = self.db.read().await?.fetch_optional(sql(PING)).await?;
        Ok(())
    }
}
