//! The statements both backends run, and the one implementation of the store interface over
//! either pool. `$n` placeholders are understood by PostgreSQL and SQLite alike (each number
//! appears first in ascending order, so SQLite's positional binding lines up).

pub const LOAD: &str = "SELECT source_date, fetched_at, expires_at, payload, checksum FROM snapshots WHERE key = $1 AND payload IS NOT NULL";

/// Only the times of a published snapshot: the columns before the payload, so neither backend
/// reads the blob (SQLite stops at the row's first page).
pub const STAMP: &str = "SELECT fetched_at, expires_at FROM snapshots WHERE key = $1 AND payload IS NOT NULL";

pub const DELETE_CORRUPT: &str = "DELETE FROM snapshots WHERE key = $1 AND checksum = $2";

pub const CLAIM: &str = "INSERT INTO snapshots (key, lease_owner, lease_until) VALUES ($1, $2, $3) \
     ON CONFLICT (key) DO UPDATE SET lease_owner = excluded.lease_owner, lease_until = excluded.lease_until \
     WHERE (snapshots.lease_until IS NULL OR snapshots.lease_until <= $4) \
       AND ($5 = 1 OR snapshots.payload IS NULL OR snapshots.expires_at <= $4) \
     RETURNING lease_owner";

pub const PUBLISH: &str = "UPDATE snapshots SET source_date = $1, fetched_at = $2, expires_at = $3, payload = $4, \
     checksum = $5, lease_owner = NULL, lease_until = NULL WHERE key = $6 AND lease_owner = $7";

pub const RELEASE: &str =
    "UPDATE snapshots SET lease_owner = NULL, lease_until = NULL WHERE key = $1 AND lease_owner = $2";

pub const PRUNE: &str = "DELETE FROM snapshots WHERE (lease_until IS NULL OR lease_until <= $1) \
     AND ((payload IS NOT NULL AND expires_at <= $2) OR (payload IS NULL))";

pub const PRUNE_JOBS: &str = "DELETE FROM job_leases WHERE lease_until <= $1";

pub const RELEASE_JOB: &str = "UPDATE job_leases SET lease_until = 0 WHERE name = $1 AND owner = $2";

pub const CLAIM_JOB: &str = "INSERT INTO job_leases (name, owner, lease_until) VALUES ($1, $2, $3) \
     ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until \
     WHERE job_leases.lease_until <= $4 RETURNING owner";

/// Reachable and migrated: the snapshot table answers.
pub const PING: &str = "SELECT 1 FROM snapshots LIMIT 1";

/// How each backend opens a transaction that writes. SQLite takes the write lock first: a
/// transaction that reads and then writes fails (SQLITE_BUSY_SNAPSHOT, no busy wait) when
/// another connection commits in between.
pub const SQLITE_BEGIN_WRITE: &str = "BEGIN IMMEDIATE";
pub const POSTGRES_BEGIN_WRITE: &str = "BEGIN";

/// Implement `SnapshotStore` for a store type holding `pool: sqlx::Pool<$db>`, opening write
/// transactions with `$begin` and sending `$notify` (if any) with each event.
macro_rules! impl_store {
    ($store:ty, $db:ty, $begin:expr, $notify:expr) => {
        #[async_trait::async_trait]
        impl $crate::store::SnapshotStore for $store {
            async fn load(
                &self,
                key: &str,
            ) -> Result<Option<std::sync::Arc<$crate::store::Snapshot>>, $crate::store::StoreError> {
                use sqlx::Row;
                let row = sqlx::query($crate::store::sql::LOAD).bind(key).fetch_optional(&self.pool).await?;
                let Some(row) = row else { return Ok(None) };
                let date: String = row.try_get(0)?;
                let fetched_at: i64 = row.try_get(1)?;
                let expires_at: i64 = row.try_get(2)?;
                let payload: Vec<u8> = row.try_get(3)?;
                let checksum: String = row.try_get(4)?;
                let decoded = $crate::store::codec::decode(&payload, &checksum)
                    .and_then(|quotes| date.parse::<jiff::civil::Date>().map(|d| (d, quotes)).map_err(|e| e.to_string()));
                match decoded {
                    Ok((date, quotes)) => Ok(Some(std::sync::Arc::new($crate::store::Snapshot {
                        key: key.to_string(),
                        date,
                        fetched_at: $crate::store::from_millis(fetched_at),
                        expires_at: $crate::store::from_millis(expires_at),
                        quotes: std::sync::Arc::new(quotes),
                    }))),
                    Err(why) => {
                        tracing::warn!(key, %why, "corrupt snapshot row deleted; it will be refetched");
                        metrics::counter!("wafuel_snapshot_corrupt_total").increment(1);
                        sqlx::query($crate::store::sql::DELETE_CORRUPT)
                            .bind(key)
                            .bind(&checksum)
                            .execute(&self.pool)
                            .await?;
                        Ok(None)
                    }
                }
            }

            async fn stamp(
                &self,
                key: &str,
            ) -> Result<Option<$crate::store::Stamp>, $crate::store::StoreError> {
                use sqlx::Row;
                let row = sqlx::query($crate::store::sql::STAMP).bind(key).fetch_optional(&self.pool).await?;
                let Some(row) = row else { return Ok(None) };
                let fetched_at: i64 = row.try_get(0)?;
                let expires_at: i64 = row.try_get(1)?;
                Ok(Some($crate::store::Stamp {
                    fetched_at: $crate::store::from_millis(fetched_at),
                    expires_at: $crate::store::from_millis(expires_at),
                }))
            }

            async fn claim(
                &self,
                key: &str,
                owner: &str,
                now: jiff::Timestamp,
                until: jiff::Timestamp,
                force: bool,
            ) -> Result<bool, $crate::store::StoreError> {
                use sqlx::Row;
                let row = sqlx::query($crate::store::sql::CLAIM)
                    .bind(key)
                    .bind(owner)
                    .bind($crate::store::millis(until))
                    .bind($crate::store::millis(now))
                    .bind(i64::from(force))
                    // Every row, not the first: SQLite commits an autocommit statement when it
                    // runs to completion, and a failed commit (disk full) is only reported
                    // then. Stopping at the first RETURNING row would take a lease that was
                    // rolled back for a held one.
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .next();
                Ok(match row {
                    Some(r) => r.try_get::<String, _>(0)? == owner,
                    None => false,
                })
            }

            async fn publish_catalogue(
                &self,
                snapshot: &$crate::store::Snapshot,
                owner: &str,
                product: Option<u8>,
            ) -> Result<bool, $crate::store::StoreError> {
                use sqlx::Row;
                use $crate::store::events as e;
                let (payload, checksum) =
                    $crate::store::codec::encode(&snapshot.quotes).map_err($crate::store::StoreError::Encoding)?;
                let date = snapshot.date.to_string();
                // The write lock first (SQLite). A day catalogue's news is decided against what
                // the store holds inside this transaction (never a copy read before the lease):
                // whether its (date, product) was published before, and only then the catalogue
                // this publish replaces, to count the stations that changed.
                let mut tx = self.pool.begin_with($begin).await?;
                let mut published_before = false;
                let mut previous = None;
                if let Some(product) = product {
                    published_before = sqlx::query(e::PUBLISHED_BEFORE)
                        .bind(&date)
                        .bind(i32::from(product))
                        .fetch_optional(&mut *tx)
                        .await?
                        .is_some();
                    if published_before
                        && let Some(row) =
                            sqlx::query($crate::store::sql::LOAD).bind(&snapshot.key).fetch_optional(&mut *tx).await?
                    {
                        let payload: Vec<u8> = row.try_get(3)?;
                        let checksum: String = row.try_get(4)?;
                        // A corrupt row counts as nothing published before it.
                        previous = $crate::store::codec::decode(&payload, &checksum).ok();
                    }
                }
                let done = sqlx::query($crate::store::sql::PUBLISH)
                    .bind(&date)
                    .bind($crate::store::millis(snapshot.fetched_at))
                    .bind($crate::store::millis(snapshot.expires_at))
                    .bind(payload)
                    .bind(checksum)
                    .bind(&snapshot.key)
                    .bind(owner)
                    .execute(&mut *tx)
                    .await?;
                if done.rows_affected() != 1 {
                    tx.rollback().await?;
                    return Ok(false);
                }
                if let Some(product) = product {
                    let code = i32::from(product);
                    if let Some((kind, data)) = e::event_for(previous.as_deref(), published_before, snapshot, product) {
                        let id: i64 = sqlx::query(e::NEXT_ID).bind(e::EVENTS_COUNTER).fetch_one(&mut *tx).await?.try_get(0)?;
                        sqlx::query(e::INSERT)
                            .bind(id)
                            .bind(kind.as_str())
                            .bind(&date)
                            .bind(code)
                            .bind(data)
                            .bind($crate::store::millis(snapshot.fetched_at))
                            .execute(&mut *tx)
                            .await?;
                        let notify: Option<&str> = $notify;
                        if let Some(notify) = notify {
                            sqlx::query(notify).bind(e::CHANNEL).execute(&mut *tx).await?;
                        }
                    }
                }
                tx.commit().await?;
                Ok(true)
            }

            async fn release(&self, key: &str, owner: &str) -> Result<(), $crate::store::StoreError> {
                sqlx::query($crate::store::sql::RELEASE).bind(key).bind(owner).execute(&self.pool).await?;
                Ok(())
            }

            async fn prune(
                &self,
                now: jiff::Timestamp,
                before: jiff::Timestamp,
            ) -> Result<u64, $crate::store::StoreError> {
                let snapshots = sqlx::query($crate::store::sql::PRUNE)
                    .bind($crate::store::millis(now))
                    .bind($crate::store::millis(before))
                    .execute(&self.pool)
                    .await?;
                sqlx::query($crate::store::sql::PRUNE_JOBS)
                    .bind($crate::store::millis(before))
                    .execute(&self.pool)
                    .await?;
                Ok(snapshots.rows_affected())
            }

            async fn claim_job(
                &self,
                name: &str,
                owner: &str,
                now: jiff::Timestamp,
                until: jiff::Timestamp,
            ) -> Result<bool, $crate::store::StoreError> {
                use sqlx::Row;
                let row = sqlx::query($crate::store::sql::CLAIM_JOB)
                    .bind(name)
                    .bind(owner)
                    .bind($crate::store::millis(until))
                    .bind($crate::store::millis(now))
                    // To completion, so a failed commit is an error (see `claim`).
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .next();
                Ok(match row {
                    Some(r) => r.try_get::<String, _>(0)? == owner,
                    None => false,
                })
            }

            async fn release_job(&self, name: &str, owner: &str) -> Result<(), $crate::store::StoreError> {
                sqlx::query($crate::store::sql::RELEASE_JOB).bind(name).bind(owner).execute(&self.pool).await?;
                Ok(())
            }

            async fn change_counter(&self, name: &str) -> Result<i64, $crate::store::StoreError> {
                use sqlx::Row;
                let row = sqlx::query($crate::store::enrich::READ_COUNTER)
                    .bind(name)
                    .fetch_optional(&self.pool)
                    .await?;
                Ok(match row {
                    Some(r) => r.try_get(0)?,
                    None => 0,
                })
            }

            async fn ping(&self) -> Result<(), $crate::store::StoreError> {
                // Reachable and migrated: the snapshot table answers.
                sqlx::query($crate::store::sql::PING).fetch_optional(&self.pool).await?;
                Ok(())
            }
        }
    };
}

pub(crate) use impl_store;
