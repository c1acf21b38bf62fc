//! Every caching rule the service states, in one place: how long it keeps what it has read
//! and rendered, and what each kind of answer tells clients and shared caches
//! (`Cache-Control`). The freshness of a rendered price document (its `s-maxage`) is worked
//! out by `snapshot::shared_until` from these durations and the Perth calendar.

use jiff::SignedDuration;

/// Errors, redirects, preflights and answers whose freshness has run out: never kept.
pub const NO_STORE: &str = "no-store";
/// Brand logos and the explorer's scripts and styles: they change only with a release.
pub const STATIC_ASSET: &str = "public, max-age=86400";
/// The explorer page itself: short, so a release reaches browsers within minutes.
pub const PAGE: &str = "public, max-age=300";

/// A snapshot where every selected product has a quote lives this long.
pub const COMPLETE_SNAPSHOT_TTL: SignedDuration = SignedDuration::from_hours(6);
/// An empty or partial snapshot lives at most this long.
pub const INCOMPLETE_SNAPSHOT_TTL: SignedDuration = SignedDuration::from_secs(30);
/// Longest shared-cache lifetime of a rendered response with prices (seconds).
pub const MAX_SHARED_AGE: i64 = 21_600;
/// Longest shared-cache lifetime when the selection is not `available` (seconds).
pub const MAX_SHARED_AGE_UNAVAILABLE: i64 = 30;
/// History and statistics change when an extract is written (hourly at most): documents of
/// them are kept this long, and never past the next Perth midnight.
pub const STORED_DOCUMENT_TTL: SignedDuration = SignedDuration::from_mins(5);
/// A cached document is rebuilt from the held data after this long (the enrichment interval),
/// so a changed profile reaches documents that are still fresh.
pub const REBUILD_AFTER: SignedDuration = SignedDuration::from_mins(15);

/// The `Cache-Control` of a rendered response that shared caches may keep `s_maxage`
/// seconds; `no-store` at 0 or less.
pub fn shared(s_maxage: i64) -> String {
    if s_maxage <= 0 { NO_STORE.to_string() } else { format!("public, max-age=0, s-maxage={s_maxage}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_freshness_or_none() {
        assert_eq!(shared(60), "public, max-age=0, s-maxage=60");
        assert_eq!(shared(0), NO_STORE);
        assert_eq!(shared(-5), NO_STORE);
    }
}
