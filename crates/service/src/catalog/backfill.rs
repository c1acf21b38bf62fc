//! The history backfill's progress as this replica reads it: from the shared store, where
//! whichever replica runs the backfill records it, held for the recheck interval so the status,
//! a forecast and every history document built in that second read memory, not the store.

use std::sync::Arc;

use jiff::Timestamp;

use crate::memo::Recheck;

use wafuel_domain::backfill::{Backfill, BackfillState, JOB};
use wafuel_store::SnapshotStore;

/// The progress, read from the store at most once per recheck interval.
pub struct BackfillProgress {
    store: Arc<dyn SnapshotStore>,
    /// Whether this deployment runs the backfill: what is said before any progress is
    /// recorded (running, else off).
    runs: bool,
    recheck: Recheck,
    held: std::sync::Mutex<Option<(Timestamp, Backfill)>>,
}

impl BackfillProgress {
    pub fn new(store: Arc<dyn SnapshotStore>, runs: bool, recheck: Recheck) -> Self {
        Self { store, runs, recheck, held: std::sync::Mutex::new(None) }
    }

    /// The progress at `now`.
    pub async fn at(&self, now: Timestamp) -> Backfill {
        if let Some((read_at, progress)) = &*crate::sync::lock(&self.held)
            && self.recheck.recent(*read_at, now)
        {
            return progress.clone();
        }
        let recorded = match self.store.job_state(JOB).await {
            Ok(Some(text)) => serde_json::from_str::<Backfill>(&text).ok(),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(error = %e, "backfill progress unreadable");
                None
            }
        };
        let progress = match recorded {
            Some(progress) => progress,
            None if self.runs => Backfill { state: BackfillState::Running, ..Backfill::OFF },
            None => Backfill::OFF,
        };
        *crate::sync::lock(&self.held) = Some((now, progress.clone()));
        progress
    }
}
