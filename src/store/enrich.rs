//! Enrichment state in the same store: station seeds, provider profiles, the daily request
//! budget and the provider pause. One implementation over both backends, like snapshots.

use jiff::Timestamp;

use super::StoreError;
use crate::model::profile::StoredProfile;

/// What a provider match is judged on, keyed by station key.
#[derive(Debug, Clone, PartialEq)]
pub struct Seed {
    pub station_key: String,
    pub name: String,
    pub brand: u8,
    pub street: String,
    pub suburb: String,
    pub latitude: f64,
    pub longitude: f64,
}

/// A seed due for a provider lookup.
#[derive(Debug, Clone, PartialEq)]
pub struct DueStation {
    pub seed: Seed,
    /// The place matched before, for a details refresh.
    pub place_id: Option<String>,
    pub failures: i64,
}

/// Enrichment persistence.
#[async_trait::async_trait]
pub trait EnrichStore: Send + Sync + 'static {
    /// Insert or update seeds; a changed seed clears its profile. Returns how many changed.
    async fn upsert_seeds(&self, seeds: &[Seed]) -> Result<usize, StoreError>;
    /// Seeds without a profile or past its refresh deadline, not deferred, oldest first.
    async fn due(&self, now: Timestamp, limit: i64) -> Result<Vec<DueStation>, StoreError>;
    /// Store a match; the station is next due at the profile's refresh deadline.
    async fn save_profile(&self, profile: &StoredProfile) -> Result<(), StoreError>;
    /// Do not try this station again before `until`.
    async fn defer(&self, station_key: &str, until: Timestamp, failures: i64) -> Result<(), StoreError>;
    /// Reserve one provider request of `day`'s budget; false when it is spent.
    async fn reserve_budget(&self, day: &str, limit: i64) -> Result<bool, StoreError>;
    /// Profiles fetched after `since` (older ones are never served).
    async fn profiles(&self, since: Timestamp) -> Result<Vec<StoredProfile>, StoreError>;
    /// Until when the provider is paused (after 4xx refusals or rate limits).
    async fn paused_until(&self) -> Result<Option<Timestamp>, StoreError>;
    async fn pause(&self, until: Timestamp) -> Result<(), StoreError>;
    /// A number that changes whenever a profile is saved or cleared (by any replica).
    async fn profiles_version(&self) -> Result<i64, StoreError>;
}

pub const SEED: &str =
    "SELECT name, brand, street, suburb, latitude, longitude FROM station_seeds WHERE station_key = $1";
pub const INSERT_SEED: &str = "INSERT INTO station_seeds (station_key, name, brand, street, suburb, latitude, longitude, next_attempt, failures) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, 0, 0) ON CONFLICT (station_key) DO UPDATE SET name = excluded.name, brand = excluded.brand, \
     street = excluded.street, suburb = excluded.suburb, latitude = excluded.latitude, longitude = excluded.longitude, \
     next_attempt = 0, failures = 0";
pub const CLEAR_PROFILE: &str = "DELETE FROM place_profiles WHERE station_key = $1";
pub const DUE: &str = "SELECT s.station_key, s.name, s.brand, s.street, s.suburb, s.latitude, s.longitude, s.failures, p.place_id \
     FROM station_seeds s LEFT JOIN place_profiles p ON p.station_key = s.station_key \
     WHERE s.next_attempt <= $1 AND (p.station_key IS NULL OR p.refresh_at <= $1) \
     ORDER BY s.next_attempt, s.station_key LIMIT $2";
pub const SAVE_PROFILE: &str = "INSERT INTO place_profiles (station_key, place_id, fetched_at, refresh_at, profile) VALUES ($1, $2, $3, $4, $5) \
     ON CONFLICT (station_key) DO UPDATE SET place_id = excluded.place_id, fetched_at = excluded.fetched_at, \
     refresh_at = excluded.refresh_at, profile = excluded.profile";
pub const RESCHEDULE: &str =
    "UPDATE station_seeds SET next_attempt = $1, failures = $2 WHERE station_key = $3";
pub const RESERVE: &str = "INSERT INTO provider_budget (day, used) VALUES ($1, 1) ON CONFLICT (day) DO UPDATE \
     SET used = provider_budget.used + 1 WHERE provider_budget.used < $2 RETURNING used";
pub const PROFILES: &str =
    "SELECT station_key, place_id, fetched_at, refresh_at, profile FROM place_profiles WHERE fetched_at > $1";
/// The change counter of provider profiles, bumped in the transaction of every write to them.
pub const PROFILES_COUNTER: &str = "profiles";
pub const BUMP_COUNTER: &str = "INSERT INTO change_counters (name, value) VALUES ($1, 1) \
     ON CONFLICT (name) DO UPDATE SET value = change_counters.value + 1";
pub const READ_COUNTER: &str = "SELECT value FROM change_counters WHERE name = $1";
pub const PAUSED: &str = "SELECT lease_until FROM job_leases WHERE name = 'provider-pause'";
pub const PAUSE: &str = "INSERT INTO job_leases (name, owner, lease_until) VALUES ('provider-pause', 'provider', $1) \
     ON CONFLICT (name) DO UPDATE SET lease_until = excluded.lease_until";

/// Implement `EnrichStore` for a store type holding `pool: sqlx::Pool<_>`, opening write
/// transactions with `$begin` like every other write.
macro_rules! impl_enrich_store {
    ($store:ty, $begin:expr) => {
        #[async_trait::async_trait]
        impl $crate::store::enrich::EnrichStore for $store {
            async fn upsert_seeds(
                &self,
                seeds: &[$crate::store::enrich::Seed],
            ) -> Result<usize, $crate::store::StoreError> {
                use sqlx::Row;
                use $crate::store::enrich as q;
                let mut changed = 0;
                let mut cleared = false;
                // One enrichment pass runs at a time (job lease), but other writers (a publish,
                // another process's seeds) commit meanwhile: `$begin` takes SQLite's write lock
                // before the first read, so the writes after it never meet SQLITE_BUSY. The
                // transaction keeps each seed and its profile consistent.
                let mut tx = self.pool.begin_with($begin).await?;
                for s in seeds {
                    let existing = sqlx::query(q::SEED).bind(&s.station_key).fetch_optional(&mut *tx).await?;
                    let same = match &existing {
                        Some(r) => {
                            r.try_get::<String, _>(0)? == s.name
                                && r.try_get::<i64, _>(1)? == i64::from(s.brand)
                                && r.try_get::<String, _>(2)? == s.street
                                && r.try_get::<String, _>(3)? == s.suburb
                                && r.try_get::<f64, _>(4)? == s.latitude
                                && r.try_get::<f64, _>(5)? == s.longitude
                        }
                        None => false,
                    };
                    if same {
                        continue;
                    }
                    changed += 1;
                    sqlx::query(q::INSERT_SEED)
                        .bind(&s.station_key)
                        .bind(&s.name)
                        .bind(i64::from(s.brand))
                        .bind(&s.street)
                        .bind(&s.suburb)
                        .bind(s.latitude)
                        .bind(s.longitude)
                        .execute(&mut *tx)
                        .await?;
                    if existing.is_some() {
                        sqlx::query(q::CLEAR_PROFILE).bind(&s.station_key).execute(&mut *tx).await?;
                        cleared = true;
                    }
                }
                // Only a cleared profile changes what readers hold; a new seed has none yet.
                if cleared {
                    sqlx::query(q::BUMP_COUNTER).bind(q::PROFILES_COUNTER).execute(&mut *tx).await?;
                }
                tx.commit().await?;
                Ok(changed)
            }

            async fn due(
                &self,
                now: jiff::Timestamp,
                limit: i64,
            ) -> Result<Vec<$crate::store::enrich::DueStation>, $crate::store::StoreError> {
                use sqlx::Row;
                let rows = sqlx::query($crate::store::enrich::DUE)
                    .bind($crate::store::millis(now))
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?;
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    out.push($crate::store::enrich::DueStation {
                        seed: $crate::store::enrich::Seed {
                            station_key: r.try_get(0)?,
                            name: r.try_get(1)?,
                            brand: u8::try_from(r.try_get::<i64, _>(2)?).unwrap_or(0),
                            street: r.try_get(3)?,
                            suburb: r.try_get(4)?,
                            latitude: r.try_get(5)?,
                            longitude: r.try_get(6)?,
                        },
                        failures: r.try_get(7)?,
                        place_id: r.try_get(8)?,
                    });
                }
                Ok(out)
            }

            async fn save_profile(
                &self,
                p: &$crate::model::profile::StoredProfile,
            ) -> Result<(), $crate::store::StoreError> {
                let json = serde_json::to_string(&p.profile)
                    .map_err(|e| $crate::store::StoreError::Encoding(e.to_string()))?;
                let mut tx = self.pool.begin_with($begin).await?;
                sqlx::query($crate::store::enrich::SAVE_PROFILE)
                    .bind(&p.station_key)
                    .bind(&p.profile.place_id)
                    .bind($crate::store::millis(p.fetched_at))
                    .bind($crate::store::millis(p.refresh_at))
                    .bind(json)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query($crate::store::enrich::RESCHEDULE)
                    .bind($crate::store::millis(p.refresh_at))
                    .bind(0i64)
                    .bind(&p.station_key)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query($crate::store::enrich::BUMP_COUNTER)
                    .bind($crate::store::enrich::PROFILES_COUNTER)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(())
            }

            async fn defer(
                &self,
                station_key: &str,
                until: jiff::Timestamp,
                failures: i64,
            ) -> Result<(), $crate::store::StoreError> {
                sqlx::query($crate::store::enrich::RESCHEDULE)
                    .bind($crate::store::millis(until))
                    .bind(failures)
                    .bind(station_key)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn reserve_budget(&self, day: &str, limit: i64) -> Result<bool, $crate::store::StoreError> {
                if limit <= 0 {
                    return Ok(false);
                }
                let row = sqlx::query($crate::store::enrich::RESERVE)
                    .bind(day)
                    .bind(limit)
                    // To completion, so a failed commit is an error, not a spent request.
                    .fetch_all(&self.pool)
                    .await?;
                Ok(!row.is_empty())
            }

            async fn profiles(
                &self,
                since: jiff::Timestamp,
            ) -> Result<Vec<$crate::model::profile::StoredProfile>, $crate::store::StoreError> {
                use sqlx::Row;
                let rows = sqlx::query($crate::store::enrich::PROFILES)
                    .bind($crate::store::millis(since))
                    .fetch_all(&self.pool)
                    .await?;
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    let json: String = r.try_get(4)?;
                    // A profile that no longer decodes is skipped, never served half-read.
                    let Ok(profile) = serde_json::from_str(&json) else { continue };
                    out.push($crate::model::profile::StoredProfile {
                        station_key: r.try_get(0)?,
                        fetched_at: $crate::store::from_millis(r.try_get(2)?),
                        refresh_at: $crate::store::from_millis(r.try_get(3)?),
                        profile,
                    });
                }
                Ok(out)
            }

            async fn paused_until(&self) -> Result<Option<jiff::Timestamp>, $crate::store::StoreError> {
                use sqlx::Row;
                let row = sqlx::query($crate::store::enrich::PAUSED).fetch_optional(&self.pool).await?;
                Ok(match row {
                    Some(r) => Some($crate::store::from_millis(r.try_get(0)?)),
                    None => None,
                })
            }

            async fn profiles_version(&self) -> Result<i64, $crate::store::StoreError> {
                $crate::store::SnapshotStore::change_counter(self, $crate::store::enrich::PROFILES_COUNTER)
                    .await
            }

            async fn pause(&self, until: jiff::Timestamp) -> Result<(), $crate::store::StoreError> {
                sqlx::query($crate::store::enrich::PAUSE)
                    .bind($crate::store::millis(until))
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }
        }
    };
}

pub(crate) use impl_enrich_store;
