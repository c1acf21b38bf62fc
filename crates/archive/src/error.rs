//! Why an import stops: one error for the whole importer, downloads included.

use crate::ArchiveError;
use wafuel_store::StoreError;

/// Why an import stopped.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A file's write failed (the store went away, say): nothing of it was written.
    #[error("{file}: {source}")]
    Write {
        file: String,
        #[source]
        source: StoreError,
    },
    #[error("{file}: {reason}")]
    Download { file: String, reason: String },
    #[error("{file}: {reason}")]
    Io { file: String, reason: String },
}
