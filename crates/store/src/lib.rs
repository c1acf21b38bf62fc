//! Where validated snapshots live, shared by every replica: SQLite by default, PostgreSQL
//! for many. One implementation ([`SqlStore`]) runs the same statements on either database
//! (`conn`), which differ only in what `backend` says; the fill lease and its fencing are SQL
//! (`leases`), and so are the change counters replicas compare (`counters`). Its own crate
//! (`wafuel-store`): it builds on the domain alone.

// The domain under the names the service's other layers use for it.

pub mod archive;
pub mod backend;
mod codec;
mod conn;
mod counters;
pub mod enrich;
pub mod events;
pub mod history;
mod leases;
pub mod records;
mod snapshots;
pub mod wholesale;

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use jiff::civil::Date;
use sqlx::postgres::PgPoolOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use wafuel_domain::codes::ProductCode;
use wafuel_domain::station::Quote;

/// The validated quotes of one snapshot key, as fetched at one time.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub key: String,
    pub date: Date,
    pub fetched_at: Timestamp,
    pub expires_at: Timestamp,
    /// In source order within each component, components in request order.
    pub quotes: Arc<Vec<Quote>>,
}

impl Snapshot {
    pub fn is_fresh(&self, now: Timestamp) -> bool {
        now < self.expires_at
    }

    /// What tells this publication of the key from another.
    pub fn stamp(&self) -> Stamp {
        Stamp { fetched_at: self.fetched_at, expires_at: self.expires_at }
    }
}

/// The times of one published snapshot, read without its payload: a replica holding a decoded
/// snapshot with the same stamp holds what the store holds (a publish always writes a new
/// fetch time and expiry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub fetched_at: Timestamp,
    pub expires_at: Timestamp,
}

/// A store failure: reported as `BYPASS`, never as a failed price request. The database's
/// own error is kept as the source (shared, so a failure reported to several waiters is one).
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The database failed or refused a statement.
    #[error("snapshot store: {0}")]
    Database(#[source] Arc<sqlx::Error>),
    /// The schema could not be brought up to date.
    #[error("snapshot store: migration: {0}")]
    Migration(#[source] Arc<sqlx::migrate::MigrateError>),
    /// A value could not be encoded for storage.
    #[error("snapshot store: encoding: {0}")]
    Encoding(String),
    /// The store could not be opened as configured.
    #[error("snapshot store: {0}")]
    Setup(String),
    /// Another writer of this process held the store longer than a writer waits.
    #[error("snapshot store: busy: no turn to write within {0:?}")]
    Busy(std::time::Duration),
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        StoreError::Database(Arc::new(e))
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        StoreError::Migration(Arc::new(e))
    }
}

/// Snapshot persistence with a fenced fill lease per key.
#[async_trait::async_trait]
pub trait SnapshotStore: Send + Sync + 'static {
    /// The newest snapshot for a key, fresh or not. A corrupt row is deleted and reads as
    /// absent.
    async fn load(&self, key: &str) -> Result<Option<Arc<Snapshot>>, StoreError>;
    /// The stamp of the published snapshot of `key`, without reading its payload.
    async fn stamp(&self, key: &str) -> Result<Option<Stamp>, StoreError>;
    /// Take the fill lease of `key` until `until` if nobody holds it and the snapshot is
    /// missing or expired (or, with `force`, even when fresh). True when `owner` now holds it.
    async fn claim(
        &self,
        key: &str,
        owner: &str,
        now: Timestamp,
        until: Timestamp,
        force: bool,
    ) -> Result<bool, StoreError>;
    /// Publish under the lease and release it. False when the lease was lost (expired and
    /// taken): the snapshot is then not written. When the snapshot is the day catalog of
    /// `product`, the push event it makes (`events::event_for`), in the same transaction.
    async fn publish(
        &self,
        snapshot: &Snapshot,
        owner: &str,
        product: Option<ProductCode>,
    ) -> Result<bool, StoreError>;
    /// Give up the lease without publishing.
    async fn release(&self, key: &str, owner: &str) -> Result<(), StoreError>;
    /// Delete snapshots expired before `before` and stale lease-only rows, sparing leased rows.
    async fn prune(&self, now: Timestamp, before: Timestamp) -> Result<u64, StoreError>;
    /// Take a named job lease (one warm per hour, one enrichment at a time).
    async fn claim_job(
        &self,
        name: &str,
        owner: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, StoreError>;
    /// End a job lease early (the job finished).
    async fn release_job(&self, name: &str, owner: &str) -> Result<(), StoreError>;
    /// Extend a job lease `owner` still holds at `now` to `until`; false when it ran out.
    async fn renew_job(
        &self,
        name: &str,
        owner: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, StoreError>;
    /// A job's recorded state (JSON text), shared by every replica.
    async fn job_state(&self, name: &str) -> Result<Option<String>, StoreError>;
    /// Replace a job's recorded state.
    async fn put_job_state(&self, name: &str, value: &str, at: Timestamp) -> Result<(), StoreError>;
    /// The value of a change counter (0 before its first write): a number writers bump in the
    /// transaction of each change, so readers holding data in memory compare one number.
    async fn change_counter(&self, name: &str) -> Result<i64, StoreError>;
    /// Whether the store answers (for `/readyz`).
    async fn ping(&self) -> Result<(), StoreError>;
}

/// Open the store named by `--store`: `sqlite://PATH`, `sqlite::memory:` or `postgres://…`.
pub async fn open(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(PostgresStore::connect(url, None).await?))
    } else if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteStore::open(url).await?))
    } else {
        Err(StoreError::Setup(format!("unsupported store URL scheme in {}", redact(url))))
    }
}

/// A store URL without its password, for logs.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_string(),
    }
}

/// The store over one database.
#[derive(Debug, Clone)]
pub struct SqlStore<B> {
    db: B,
}

/// The embedded SQLite store (WAL, busy timeout).
pub type SqliteStore = SqlStore<backend::Sqlite>;
/// The shared PostgreSQL store.
pub type PostgresStore = SqlStore<backend::Postgres>;

impl SqlStore<backend::Sqlite> {
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true);
        let file = options.get_filename();
        if file != Path::new(":memory:")
            && let Some(dir) = file.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError::Setup(format!("create {}: {e}", dir.display())))?;
        }
        let pool = SqlitePoolOptions::new().max_connections(4).connect_with(options).await?;
        sqlx::migrate!("migrations/sqlite").run(&pool).await?;
        let db = backend::Sqlite::new(pool);
        history::settle_summaries(&db).await?;
        Ok(Self { db })
    }
}

impl SqlStore<backend::Postgres> {
    /// Connect and migrate; `schema` (tests) puts every table in that schema.
    pub async fn connect(url: &str, schema: Option<&str>) -> Result<Self, StoreError> {
        let mut options = PgPoolOptions::new().max_connections(8).acquire_timeout(Duration::from_secs(3));
        if let Some(schema) = schema {
            let statement = format!("SET search_path TO \"{}\"", schema.replace('"', ""));
            options = options.after_connect(move |conn, _meta| {
                // The schema name is ours (tests), not user input.
                let statement = sqlx::AssertSqlSafe(statement.clone());
                Box::pin(async move {
                    sqlx::raw_sql(statement).execute(conn).await?;
                    Ok(())
                })
            });
        }
        let pool = options.connect(url).await?;
        sqlx::migrate!("migrations/postgres").run(&pool).await?;
        let db = backend::Postgres { pool };
        history::settle_summaries(&db).await?;
        Ok(Self { db })
    }
}

/// Everything a process keeps in its store.
pub trait Store:
    SnapshotStore
    + enrich::EnrichStore
    + history::HistoryStore
    + archive::ArchiveStore
    + events::EventStore
    + wholesale::WholesaleStore
    + records::RecordStore
{
}
impl<T> Store for T where
    T: SnapshotStore
        + enrich::EnrichStore
        + history::HistoryStore
        + archive::ArchiveStore
        + events::EventStore
        + wholesale::WholesaleStore
        + records::RecordStore
{
}

fn millis(t: Timestamp) -> i64 {
    t.as_millisecond()
}

fn from_millis(ms: i64) -> Timestamp {
    Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH)
}
