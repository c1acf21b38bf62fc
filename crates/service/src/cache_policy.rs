//! Every caching rule the service states, in one place: how long it keeps what it has read
//! and rendered, how long shared caches may keep each kind of answer, and the one writer of
//! `Cache-Control` ([`CachePolicy::write`]; a test keeps the header name out of every other
//! file of `src/`). Pure: the Perth calendar is the only outside input.

use http::{HeaderMap, HeaderValue, header};
use jiff::civil::Date;
use jiff::{SignedDuration, Timestamp};

use wafuel_domain::time::{next_perth_midnight, price_period, publication_at};

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

/// What an answer tells clients and shared caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CachePolicy {
    /// Errors, redirects, preflights, event streams and answers whose freshness has run
    /// out: never kept.
    NoStore,
    /// Brand logos and the explorer's scripts and styles: they change only with a release.
    StaticAsset,
    /// The explorer page itself: short, so a release reaches browsers within minutes.
    Page,
    /// A rendered document shared caches may keep this many seconds (`no-store` at 0 or
    /// less); browsers revalidate every time (`max-age=0`), with the ETag.
    Shared(i64),
}

impl CachePolicy {
    /// The `Cache-Control` value.
    pub fn value(self) -> HeaderValue {
        match self {
            CachePolicy::NoStore => HeaderValue::from_static("no-store"),
            CachePolicy::StaticAsset => HeaderValue::from_static("public, max-age=86400"),
            CachePolicy::Page => HeaderValue::from_static("public, max-age=300"),
            CachePolicy::Shared(s_maxage) if s_maxage <= 0 => CachePolicy::NoStore.value(),
            CachePolicy::Shared(s_maxage) => shared_value(s_maxage),
        }
    }

    /// Write the answer's `Cache-Control`: the only code that does. A second write on one
    /// answer is a bug (two layers deciding one answer's freshness), caught in debug builds.
    pub fn write(self, headers: &mut HeaderMap) {
        debug_assert!(
            !headers.contains_key(header::CACHE_CONTROL),
            "Cache-Control written twice: {:?} over {:?}",
            self,
            headers.get(header::CACHE_CONTROL)
        );
        headers.insert(header::CACHE_CONTROL, self.value());
    }

    /// [`write`](Self::write) on a response a library made with a `Cache-Control` of its own
    /// (axum's event stream says `no-cache`): ours replaces it.
    pub fn write_over_library(self, headers: &mut HeaderMap) {
        headers.remove(header::CACHE_CONTROL);
        self.write(headers);
    }
}

/// `public, max-age=0, s-maxage=N`, made once per second and thread: answers within the same
/// second share it, so a cached answer clones a header instead of formatting one.
fn shared_value(s_maxage: i64) -> HeaderValue {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(i64, HeaderValue)>> = const { std::cell::RefCell::new(None) };
    }
    LAST.with_borrow_mut(|last| match last {
        Some((age, value)) if *age == s_maxage => value.clone(),
        _ => {
            let text = format!("public, max-age=0, s-maxage={s_maxage}");
            let value = HeaderValue::from_str(&text).unwrap_or(HeaderValue::from_static("no-store"));
            *last = Some((s_maxage, value.clone()));
            value
        }
    })
}

/// How a cached document's `s-maxage` is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// From the freshness of the snapshots the document was built from (price documents).
    Prices,
    /// Until the document's own expiry (documents read from the history store).
    Stored,
}

/// When a shared cache must stop keeping a rendered price document, and the cap on its
/// `s-maxage` (see [`max_age_at`]): the earliest of snapshot expiry, the next Perth midnight,
/// the end of the price period, 14:30 today while prices are not yet available, and any
/// other `deadlines` (such as enrichment refresh limits); capped at 6 hours, or 30 s when
/// not available. Both stay the same until the next Perth midnight or, for a response without
/// prices, today's publication time, so they can be worked out once per document.
pub fn shared_until(
    now: Timestamp,
    date: Date,
    available: bool,
    snapshot_expiry: Timestamp,
    deadlines: &[Timestamp],
) -> (Timestamp, i64) {
    let next_midnight = next_perth_midnight(now);
    let (_, period_end) = price_period(date);
    let mut earliest = snapshot_expiry.min(next_midnight).min(period_end.timestamp());
    let publication = publication_at(now);
    if !available && now < publication {
        earliest = earliest.min(publication);
    }
    if let Some(deadline) = deadlines.iter().min() {
        earliest = earliest.min(*deadline);
    }
    let cap = if available { MAX_SHARED_AGE } else { MAX_SHARED_AGE_UNAVAILABLE };
    (earliest, cap)
}

/// `s-maxage` at `now` of a response fresh until `until`, at most `cap` (0 = `no-store`).
pub fn max_age_at(now: Timestamp, until: Timestamp, cap: i64) -> i64 {
    until.duration_since(now).as_secs().max(0).min(cap)
}

/// When a document read from the history store at `now` stops being reused: after
/// [`STORED_DOCUMENT_TTL`], never past the next Perth midnight (when "today" moves).
pub fn stored_document_expiry(now: Timestamp) -> Timestamp {
    now.saturating_add(STORED_DOCUMENT_TTL).unwrap_or(now).min(next_perth_midnight(now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;
    use wafuel_domain::time::perth_instant;

    #[test]
    fn values() {
        let text = |p: CachePolicy| p.value().to_str().map(str::to_string).unwrap_or_default();
        // Twice in a row and after another value: the per-thread memo gives the right text.
        for (age, want) in [
            (60, "public, max-age=0, s-maxage=60"),
            (60, "public, max-age=0, s-maxage=60"),
            (0, "no-store"),
            (61, "public, max-age=0, s-maxage=61"),
            (-5, "no-store"),
            (60, "public, max-age=0, s-maxage=60"),
        ] {
            assert_eq!(text(CachePolicy::Shared(age)), want, "s-maxage {age}");
        }
        assert_eq!(text(CachePolicy::NoStore), "no-store");
        assert_eq!(text(CachePolicy::StaticAsset), "public, max-age=86400");
        assert_eq!(text(CachePolicy::Page), "public, max-age=300");
    }

    #[test]
    fn one_writer() {
        let mut headers = HeaderMap::new();
        CachePolicy::Page.write(&mut headers);
        assert_eq!(
            headers.get(header::CACHE_CONTROL),
            Some(&HeaderValue::from_static("public, max-age=300"))
        );
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "Cache-Control written twice")]
    fn a_second_writer_is_caught() {
        let mut headers = HeaderMap::new();
        CachePolicy::Shared(60).write(&mut headers);
        CachePolicy::NoStore.write(&mut headers);
    }

    /// The worked freshness examples, with a snapshot fetched just now.
    #[test]
    fn freshness_vectors() {
        let day = date(2026, 9, 29);
        // (Perth time, day offset, available, expected s-maxage)
        type Case = ((i8, i8, i8), i8, bool, i64);
        let cases: [Case; 8] = [
            ((16, 0, 0), 0, true, 21_600),
            ((13, 0, 0), 0, true, 21_600),
            ((5, 0, 0), 0, true, 21_600),
            ((16, 0, 0), 0, false, 30),
            ((23, 59, 45), 0, true, 15),
            ((5, 59, 45), -1, true, 15),
            ((6, 0, 0), -1, true, 0),
            ((14, 29, 45), 1, false, 15),
        ];
        for ((h, m, s), offset, available, expected) in cases {
            let now = perth_instant(day.at(h, m, s, 0));
            let date = day.checked_add(jiff::Span::new().days(offset)).expect("date");
            let ttl = if available { COMPLETE_SNAPSHOT_TTL } else { INCOMPLETE_SNAPSHOT_TTL };
            let expiry = now.saturating_add(ttl).expect("expiry");
            assert_eq!(shared_max_age(now, date, available, expiry, &[]), expected, "{h}:{m}:{s} {offset}");
        }
    }

    /// `s-maxage` at `now`, as a response is served.
    fn shared_max_age(
        now: Timestamp,
        date: Date,
        available: bool,
        expiry: Timestamp,
        deadlines: &[Timestamp],
    ) -> i64 {
        let (until, cap) = shared_until(now, date, available, expiry, deadlines);
        max_age_at(now, until, cap)
    }

    #[test]
    fn capped_by_snapshot_expiry_and_deadlines() {
        let now = perth_instant(date(2026, 9, 29).at(10, 0, 0, 0));
        let old = now.saturating_add(SignedDuration::from_secs(600)).expect("t");
        assert_eq!(shared_max_age(now, date(2026, 9, 29), true, old, &[]), 600);
        let deadline = now.saturating_add(SignedDuration::from_secs(90)).expect("t");
        assert_eq!(shared_max_age(now, date(2026, 9, 29), true, old, &[deadline]), 90);
        assert_eq!(shared_max_age(now, date(2026, 9, 29), true, now, &[]), 0);
    }

    #[test]
    fn stored_documents_never_outlive_the_perth_day() {
        let morning = perth_instant(date(2026, 9, 29).at(10, 0, 0, 0));
        assert_eq!(stored_document_expiry(morning).duration_since(morning), STORED_DOCUMENT_TTL);
        let late = perth_instant(date(2026, 9, 29).at(23, 58, 0, 0));
        assert_eq!(stored_document_expiry(late), next_perth_midnight(late));
    }
}
