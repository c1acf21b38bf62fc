//! The history backfill's progress: what `serve` has brought in of FuelWatch's monthly and
//! yearly files, kept in the shared store so every replica reports the same
//! (`/v1/status`'s `history.backfill`), and the words a route says while the history it needs
//! is still loading.

use serde::{Deserialize, Serialize};

/// The job's name: its lease and its recorded state.
pub const JOB: &str = "backfill";

/// Where the backfill stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum BackfillState {
    /// Files are still to come (some perhaps waiting to be tried again).
    #[default]
    Running,
    /// Every listed file from the first month asked for is in.
    Done,
    /// FuelWatch's lists could not be read: nothing is known to fetch.
    Failed,
    /// This deployment runs no backfill (`--no-backfill` or `--no-jobs`).
    Off,
}

/// The last file that failed, why, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastError {
    pub file: String,
    pub message: String,
    /// RFC 3339, Perth time.
    pub at: String,
}

/// The backfill's progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Backfill {
    pub state: BackfillState,
    /// Listed files from the first month asked for that are in the store.
    pub files_done: u64,
    pub files_total: u64,
    /// The oldest month (`YYYY-MM`) whose file is in, as the backfill works back in time.
    pub oldest_month: Option<String>,
    pub last_error: Option<LastError>,
}

impl Backfill {
    /// A deployment without the job.
    pub const OFF: Backfill = Backfill {
        state: BackfillState::Off,
        files_done: 0,
        files_total: 0,
        oldest_month: None,
        last_error: None,
    };

    /// What a route short of history says about it: that it is loading and how far, or, with
    /// the backfill off, which command fills it.
    pub fn loading_words(&self) -> String {
        match self.state {
            BackfillState::Running => format!(
                "The history is loading: {} of {} files imported{}.",
                self.files_done,
                self.files_total,
                self.oldest_month.as_deref().map(|m| format!(", back to {m} so far")).unwrap_or_default()
            ),
            BackfillState::Failed => format!(
                "The history could not be loaded: FuelWatch's file lists could not be read{}; it is tried again.",
                self.last_error.as_ref().map(|e| format!(" ({})", e.message)).unwrap_or_default()
            ),
            BackfillState::Done => "The history holds every file FuelWatch lists from the first month asked for.".into(),
            BackfillState::Off => {
                "The history is not loaded by this deployment (its backfill is off): run `wafuel import-history` and `wafuel import-wholesale`, or start `serve` without --no-backfill.".into()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_reads_as_status_writes_it_and_says_how_far() {
        let b = Backfill {
            state: BackfillState::Running,
            files_done: 3,
            files_total: 306,
            oldest_month: Some("2026-06".into()),
            last_error: None,
        };
        let text = serde_json::to_string(&b).expect("json");
        assert_eq!(
            text,
            r#"{"state":"running","filesDone":3,"filesTotal":306,"oldestMonth":"2026-06","lastError":null}"#
        );
        assert_eq!(serde_json::from_str::<Backfill>(&text).expect("back"), b);
        assert_eq!(
            b.loading_words(),
            "The history is loading: 3 of 306 files imported, back to 2026-06 so far."
        );
        assert!(Backfill::OFF.loading_words().contains("wafuel import-history"));
    }
}
