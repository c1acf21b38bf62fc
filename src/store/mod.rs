//! Where validated snapshots live. The price service talks to this interface only; the
//! in-process [`MemoryStore`] holds snapshots until the shared SQLite/PostgreSQL stores land.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jiff::Timestamp;
use jiff::civil::Date;

use crate::model::station::Quote;

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
}

/// A store failure: reported as `BYPASS`, never as a failed price request.
#[derive(Debug, Clone, thiserror::Error)]
#[error("snapshot store: {0}")]
pub struct StoreError(pub String);

/// Snapshot persistence.
#[async_trait::async_trait]
pub trait SnapshotStore: Send + Sync + 'static {
    /// The newest snapshot for a key, fresh or not.
    async fn load(&self, key: &str) -> Result<Option<Arc<Snapshot>>, StoreError>;
    /// Make a snapshot the newest for its key.
    async fn publish(&self, snapshot: Arc<Snapshot>) -> Result<(), StoreError>;
    /// Whether the store answers (for `/readyz`).
    async fn ping(&self) -> Result<(), StoreError>;
}

/// Snapshots in this process's memory.
#[derive(Debug, Default)]
pub struct MemoryStore {
    snapshots: Mutex<HashMap<String, Arc<Snapshot>>>,
}

impl MemoryStore {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Snapshot>>> {
        self.snapshots.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[async_trait::async_trait]
impl SnapshotStore for MemoryStore {
    async fn load(&self, key: &str) -> Result<Option<Arc<Snapshot>>, StoreError> {
        Ok(self.map().get(key).cloned())
    }

    async fn publish(&self, snapshot: Arc<Snapshot>) -> Result<(), StoreError> {
        self.map().insert(snapshot.key.clone(), snapshot);
        Ok(())
    }

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }
}
