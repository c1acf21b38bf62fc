//! Enrichment state in the same store: station seeds, provider profiles, the daily request
//! budget and the provider pause. One implementation over both backends, like snapshots.

use jiff::Timestamp;

use super::backend::Backend;
use super::conn::{Conn, sql};
use super::{SqlStore, StoreError, counters, from_millis, leases, millis};
use wafuel_domain::profile::StoredProfile;

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

const SEED: &str =
    "SELECT name, brand, street, suburb, latitude, longitude FROM station_seeds WHERE station_key = $1";
const INSERT_SEED: &str = "INSERT INTO station_seeds (station_key, name, brand, street, suburb, latitude, longitude, next_attempt, failures) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, 0, 0) ON CONFLICT (station_key) DO UPDATE SET name = excluded.name, brand = excluded.brand, \
     street = excluded.street, suburb = excluded.suburb, latitude = excluded.latitude, longitude = excluded.longitude, \
     next_attempt = 0, failures = 0";
const CLEAR_PROFILE: &str = "DELETE FROM place_profiles WHERE station_key = $1";
const DUE: &str = "SELECT s.station_key, s.name, s.brand, s.street, s.suburb, s.latitude, s.longitude, s.failures, p.place_id \
     FROM station_seeds s LEFT JOIN place_profiles p ON p.station_key = s.station_key \
     WHERE s.next_attempt <= $1 AND (p.station_key IS NULL OR p.refresh_at <= $1) \
     ORDER BY s.next_attempt, s.station_key LIMIT $2";
const SAVE_PROFILE: &str = "INSERT INTO place_profiles (station_key, place_id, fetched_at, refresh_at, profile) VALUES ($1, $2, $3, $4, $5) \
     ON CONFLICT (station_key) DO UPDATE SET place_id = excluded.place_id, fetched_at = excluded.fetched_at, \
     refresh_at = excluded.refresh_at, profile = excluded.profile";
const RESCHEDULE: &str = "UPDATE station_seeds SET next_attempt = $1, failures = $2 WHERE station_key = $3";
const RESERVE: &str = "INSERT INTO provider_budget (day, used) VALUES ($1, 1) ON CONFLICT (day) DO UPDATE \
     SET used = provider_budget.used + 1 WHERE provider_budget.used < $2 RETURNING used";
const PROFILES: &str =
    "SELECT station_key, place_id, fetched_at, refresh_at, profile FROM place_profiles WHERE fetched_at > $1";

/// A seed as stored.
#[derive(sqlx::FromRow, PartialEq)]
struct SeedRow {
    name: String,
    brand: i64,
    street: String,
    suburb: String,
    latitude: f64,
    longitude: f64,
}

impl SeedRow {
    fn of(s: &Seed) -> Self {
        SeedRow {
            name: s.name.clone(),
            brand: i64::from(s.brand),
            street: s.street.clone(),
            suburb: s.suburb.clone(),
            latitude: s.latitude,
            longitude: s.longitude,
        }
    }
}

#[derive(sqlx::FromRow)]
struct DueRow {
    station_key: String,
    #[sqlx(flatten)]
    seed: SeedRow,
    failures: i64,
    place_id: Option<String>,
}

#[derive(sqlx::FromRow)]
struct ProfileRow {
    station_key: String,
    fetched_at: i64,
    refresh_at: i64,
    profile: String,
}

#[async_trait::async_trait]
impl<B: Backend> EnrichStore for SqlStore<B> {
    async fn upsert_seeds(&self, seeds: &[Seed]) -> Result<usize, StoreError> {
        let mut changed = 0;
        let mut cleared = false;
        // One enrichment pass runs at a time (job lease), but other writers (a publish,
        // another process's seeds) commit meanwhile: a writing transaction takes SQLite's
        // write lock before the first read, so the writes after it never meet SQLITE_BUSY. The
        // transaction keeps each seed and its profile consistent.
        let mut tx = self.db.write().await?;
        for s in seeds {
            let existing: Option<SeedRow> = tx.fetch_optional(sql(SEED).bind(&s.station_key)).await?;
            let row = SeedRow::of(s);
            if existing.as_ref() == Some(&row) {
                continue;
            }
            changed += 1;
            let insert = sql(INSERT_SEED)
                .bind(&s.station_key)
                .bind(row.name)
                .bind(row.brand)
                .bind(row.street)
                .bind(row.suburb)
                .bind(row.latitude)
                .bind(row.longitude);
            tx.execute(insert).await?;
            if existing.is_some() {
                tx.execute(sql(CLEAR_PROFILE).bind(&s.station_key)).await?;
                cleared = true;
            }
        }
        // Only a cleared profile changes what readers hold; a new seed has none yet.
        if cleared {
            counters::bump(&mut *tx, counters::PROFILES).await?;
        }
        B::commit(tx).await?;
        Ok(changed)
    }

    async fn due(&self, now: Timestamp, limit: i64) -> Result<Vec<DueStation>, StoreError> {
        let rows: Vec<DueRow> =
            self.db.read().await?.fetch_all(sql(DUE).bind(millis(now)).bind(limit)).await?;
        Ok(rows
            .into_iter()
            .map(|r| DueStation {
                seed: Seed {
                    station_key: r.station_key,
                    name: r.seed.name,
                    brand: u8::try_from(r.seed.brand).unwrap_or(0),
                    street: r.seed.street,
                    suburb: r.seed.suburb,
                    latitude: r.seed.latitude,
                    longitude: r.seed.longitude,
                },
                place_id: r.place_id,
                failures: r.failures,
            })
            .collect())
    }

    async fn save_profile(&self, p: &StoredProfile) -> Result<(), StoreError> {
        let json = serde_json::to_string(&p.profile).map_err(|e| StoreError::Encoding(e.to_string()))?;
        let mut tx = self.db.write().await?;
        let save = sql(SAVE_PROFILE)
            .bind(&p.station_key)
            .bind(&p.profile.place_id)
            .bind(millis(p.fetched_at))
            .bind(millis(p.refresh_at))
            .bind(json);
        tx.execute(save).await?;
        tx.execute(sql(RESCHEDULE).bind(millis(p.refresh_at)).bind(0_i64).bind(&p.station_key)).await?;
        counters::bump(&mut *tx, counters::PROFILES).await?;
        B::commit(tx).await
    }

    async fn defer(&self, station_key: &str, until: Timestamp, failures: i64) -> Result<(), StoreError> {
        let statement = sql(RESCHEDULE).bind(millis(until)).bind(failures).bind(station_key);
        self.db.single().await?.execute(statement).await?;
        Ok(())
    }

    async fn reserve_budget(&self, day: &str, limit: i64) -> Result<bool, StoreError> {
        if limit <= 0 {
            return Ok(false);
        }
        // To completion, so a failed commit is an error, not a spent request.
        let rows: Vec<(i64,)> = self.db.single().await?.fetch_all(sql(RESERVE).bind(day).bind(limit)).await?;
        Ok(!rows.is_empty())
    }

    async fn profiles(&self, since: Timestamp) -> Result<Vec<StoredProfile>, StoreError> {
        let rows: Vec<ProfileRow> =
            self.db.read().await?.fetch_all(sql(PROFILES).bind(millis(since))).await?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                // A profile that no longer decodes is skipped, never served half-read.
                Some(StoredProfile {
                    station_key: r.station_key,
                    fetched_at: from_millis(r.fetched_at),
                    refresh_at: from_millis(r.refresh_at),
                    profile: serde_json::from_str(&r.profile).ok()?,
                })
            })
            .collect())
    }

    async fn paused_until(&self) -> Result<Option<Timestamp>, StoreError> {
        leases::paused_until(&mut *self.db.read().await?).await
    }

    async fn pause(&self, until: Timestamp) -> Result<(), StoreError> {
        leases::pause(&mut *self.db.single().await?, until).await
    }

    async fn profiles_version(&self) -> Result<i64, StoreError> {
        counters::read(&mut *self.db.read().await?, counters::PROFILES).await
    }
}
