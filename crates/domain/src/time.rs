//! Perth time: day words, price periods and the clock's interface. Pure: the machine's clock
//! (`app::SystemClock`) is injected, so tests can stand at any instant.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use jiff::civil::{Date, DateTime, Time};
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};

/// Source of the current instant.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> Timestamp;
}

/// A clock that stands still until moved; for tests.
#[derive(Debug)]
pub struct ManualClock {
    nanos: AtomicI64,
}

impl ManualClock {
    pub fn new(at: Timestamp) -> Arc<Self> {
        Arc::new(Self { nanos: AtomicI64::new(nanos_of(at)) })
    }

    /// A clock standing at a Perth wall-clock time.
    pub fn at_perth(datetime: DateTime) -> Arc<Self> {
        Self::new(perth_instant(datetime))
    }

    pub fn set(&self, at: Timestamp) {
        self.nanos.store(nanos_of(at), Ordering::SeqCst);
    }

    pub fn advance(&self, by: std::time::Duration) {
        let step = i64::try_from(by.as_nanos()).unwrap_or(i64::MAX);
        self.nanos.fetch_add(step, Ordering::SeqCst);
    }
}

fn nanos_of(at: Timestamp) -> i64 {
    // i64 nanoseconds cover 1677..2262, far beyond any date this service handles.
    i64::try_from(at.as_nanosecond()).unwrap_or(i64::MAX)
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_nanosecond(i128::from(self.nanos.load(Ordering::SeqCst)))
            .unwrap_or(Timestamp::UNIX_EPOCH)
    }
}

/// Shared handle to whichever clock the process runs on.
pub type SharedClock = Arc<dyn Clock>;

/// The Australia/Perth zone (bundled tzdb, so it works on images without zoneinfo).
pub fn perth() -> TimeZone {
    // `tzdb-bundle-always` guarantees the name resolves; the fixed +08:00 fallback is Perth's
    // offset since 2009 and keeps this infallible.
    TimeZone::get("Australia/Perth").unwrap_or_else(|_| TimeZone::fixed(jiff::tz::offset(8)))
}

/// The Perth wall-clock time of an instant.
pub fn perth_now(at: Timestamp) -> Zoned {
    at.to_zoned(perth())
}

/// The instant of a Perth wall-clock time.
pub fn perth_instant(datetime: DateTime) -> Timestamp {
    perth().to_ambiguous_zoned(datetime).compatible().map(|z| z.timestamp()).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// The three Perth days the source can answer for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Day {
    Yesterday,
    Today,
    Tomorrow,
}

impl Day {
    pub const ALL: [Day; 3] = [Day::Yesterday, Day::Today, Day::Tomorrow];

    /// The word the source takes in its `Day` parameter.
    pub fn word(self) -> &'static str {
        match self {
            Day::Yesterday => "yesterday",
            Day::Today => "today",
            Day::Tomorrow => "tomorrow",
        }
    }

    /// Parse a day word, case-insensitively.
    pub fn from_word(word: &str) -> Option<Day> {
        Day::ALL.into_iter().find(|d| d.word().eq_ignore_ascii_case(word))
    }

    /// Offset in days from today.
    fn offset(self) -> i8 {
        match self {
            Day::Yesterday => -1,
            Day::Today => 0,
            Day::Tomorrow => 1,
        }
    }

    /// The Perth calendar date this word names at `now`.
    pub fn resolve(self, now: Timestamp) -> Date {
        let today = perth_now(now).date();
        today.checked_add(jiff::Span::new().days(self.offset())).unwrap_or(today)
    }

    /// Which word names `date` at `now`, if any.
    pub fn for_date(date: Date, now: Timestamp) -> Option<Day> {
        Day::ALL.into_iter().find(|d| d.resolve(now) == date)
    }
}

/// Time of day at which a price period starts (and the previous one ends).
pub const PERIOD_START: Time = Time::constant(6, 0, 0, 0);
/// Time of day after which tomorrow's prices are published.
pub const PUBLICATION_TIME: Time = Time::constant(14, 30, 0, 0);

/// The price period of a source date: [06:00 that day, 06:00 the next day) in Perth.
pub fn price_period(date: Date) -> (Zoned, Zoned) {
    let start = at_perth(date, PERIOD_START);
    let end_date = date.tomorrow().unwrap_or(date);
    (start, at_perth(end_date, PERIOD_START))
}

/// `validFrom` and `validUntil` of a source date, as every document writes them.
pub fn period_texts(date: Date) -> (String, String) {
    let (from, until) = price_period(date);
    (format_perth(&from), format_perth(&until))
}

/// A Perth wall-clock time on a date as a zoned value.
pub fn at_perth(date: Date, time: Time) -> Zoned {
    let dt = date.to_datetime(time);
    perth().to_ambiguous_zoned(dt).compatible().unwrap_or_else(|_| Timestamp::UNIX_EPOCH.to_zoned(perth()))
}

/// The first Perth midnight after `now`: when the day words and date windows of every query
/// move.
pub fn next_perth_midnight(now: Timestamp) -> Timestamp {
    let today = perth_now(now).date();
    at_perth(today.tomorrow().unwrap_or(today), Time::midnight()).timestamp()
}

/// Three years of days, one of them a leap day: the default history retention and the
/// longest range a history or statistics query may ask for.
pub const THREE_YEARS_DAYS: i32 = 1_096;

/// Whether tomorrow's prices may exist yet (Perth 14:30 or later).
pub fn tomorrow_published(now: Timestamp) -> bool {
    perth_now(now).time() >= PUBLICATION_TIME
}

/// Today's publication time (14:30 Perth) as an instant.
pub fn publication_at(now: Timestamp) -> Timestamp {
    at_perth(perth_now(now).date(), PUBLICATION_TIME).timestamp()
}

/// RFC 3339 with the explicit `+08:00` offset every JSON timestamp carries.
pub fn format_perth(at: &Zoned) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn at(y: i16, m: i8, d: i8, h: i8, min: i8, s: i8) -> Timestamp {
        perth_instant(date(y, m, d).at(h, min, s, 0))
    }

    #[test]
    fn next_midnight_is_the_start_of_the_next_perth_day() {
        assert_eq!(next_perth_midnight(at(2026, 11, 23, 15, 0, 0)), at(2026, 11, 24, 0, 0, 0));
        assert_eq!(next_perth_midnight(at(2026, 11, 23, 23, 59, 59)), at(2026, 11, 24, 0, 0, 0));
        assert_eq!(next_perth_midnight(at(2026, 11, 24, 0, 0, 0)), at(2026, 11, 25, 0, 0, 0));
        assert_eq!(next_perth_midnight(at(2026, 12, 31, 8, 0, 0)), at(2027, 1, 1, 0, 0, 0));
    }

    #[test]
    fn day_words_at_the_year_boundary() {
        let now = at(2026, 1, 1, 0, 0, 0);
        assert_eq!(Day::Yesterday.resolve(now), date(2025, 12, 31));
        assert_eq!(Day::Today.resolve(now), date(2026, 1, 1));
        assert_eq!(Day::Tomorrow.resolve(now), date(2026, 1, 2));
        let eve = at(2026, 12, 31, 23, 59, 59);
        assert_eq!(Day::Tomorrow.resolve(eve), date(2027, 1, 1));
    }

    #[test]
    fn leap_day_is_tomorrow() {
        let now = at(2028, 2, 28, 23, 59, 59);
        assert_eq!(Day::Tomorrow.resolve(now), date(2028, 2, 29));
    }

    #[test]
    fn utc_evening_is_next_perth_day() {
        // 2026-12-31T18:00Z is 02:00 on 1 January in Perth.
        let now: Timestamp = "2026-12-31T18:00:00Z".parse().expect("timestamp");
        assert_eq!(Day::Today.resolve(now), date(2027, 1, 1));
        let (from, until) = price_period(Day::Today.resolve(now));
        assert_eq!(format_perth(&from), "2027-01-01T06:00:00+08:00");
        assert_eq!(format_perth(&until), "2027-01-02T06:00:00+08:00");
    }

    #[test]
    fn publication_time_boundary() {
        assert!(!tomorrow_published(at(2026, 9, 29, 14, 29, 59)));
        assert!(tomorrow_published(at(2026, 9, 29, 14, 30, 0)));
    }

    #[test]
    fn manual_clock_moves() {
        let clock = ManualClock::at_perth(date(2026, 9, 29).at(5, 59, 59, 0));
        assert_eq!(Day::for_date(date(2026, 9, 28), clock.now()), Some(Day::Yesterday));
        clock.advance(std::time::Duration::from_secs(1));
        assert_eq!(perth_now(clock.now()).time(), PERIOD_START);
        assert_eq!(Day::for_date(date(2026, 9, 26), clock.now()), None);
    }

    #[test]
    fn day_words_are_case_insensitive() {
        assert_eq!(Day::from_word("TOMORROW"), Some(Day::Tomorrow));
        assert_eq!(Day::from_word("now"), None);
    }
}
