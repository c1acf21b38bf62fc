//! What every held summary shares: a value worked out from the store is kept with the store
//! counter it was read at ([`Memo`]), and the counter is confirmed against the store at most
//! once per recheck interval ([`Recheck`]). One eviction rule for them all: each memo is a
//! size-bounded `moka` cache, which drops the entries least likely to be asked again.

use std::hash::Hash;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

/// Values by key, each held with the counter (`C`) it was read at: a lookup at another
/// counter misses, so a value is never served once the store has moved past it.
pub struct Memo<K, C, V> {
    held: moka::sync::Cache<K, (C, V)>,
}

impl<K, C, V> Memo<K, C, V>
where
    K: Hash + Eq + Send + Sync + 'static,
    C: PartialEq + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    /// A memo of at most `entries` values.
    pub fn new(entries: u64) -> Self {
        Self { held: moka::sync::Cache::new(entries) }
    }

    /// The value of `key`, if it was read at `counter`.
    pub fn get(&self, key: &K, counter: &C) -> Option<V> {
        self.held.get(key).and_then(|(c, v)| (c == *counter).then_some(v))
    }

    /// Hold `value` of `key`, read at `counter`.
    pub fn insert(&self, key: K, counter: C, value: V) {
        self.held.insert(key, (counter, value));
    }

    /// Whether the value of `key` is held at `counter`.
    pub fn holds(&self, key: &K, counter: &C) -> bool {
        self.get(key, counter).is_some()
    }
}

/// How often a held counter is confirmed against the store (`--recheck`): within the
/// interval the held one is trusted, so a burst of requests costs one store read.
#[derive(Debug, Clone, Copy)]
pub struct Recheck(SignedDuration);

impl Recheck {
    pub fn every(interval: Duration) -> Self {
        Self(SignedDuration::try_from(interval).unwrap_or(SignedDuration::MAX))
    }

    /// Whether a check made at `checked_at` still holds at `now` (a clock gone backwards
    /// asks again).
    pub fn recent(&self, checked_at: Timestamp, now: Timestamp) -> bool {
        let since = now.duration_since(checked_at);
        since >= SignedDuration::ZERO && since < self.0
    }

    /// Whether a counter last checked at `checked_at` (`None`: never) is due at `now`.
    pub fn due(&self, checked_at: Option<Timestamp>, now: Timestamp) -> bool {
        checked_at.is_none_or(|at| !self.recent(at, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_served_only_at_the_counter_it_was_read_at() {
        let memo: Memo<&str, Option<i64>, u32> = Memo::new(8);
        memo.insert("span", Some(3), 7);
        assert_eq!(memo.get(&"span", &Some(3)), Some(7));
        assert_eq!(memo.get(&"span", &Some(4)), None, "the store moved on");
        assert!(!memo.holds(&"other", &Some(3)));
    }

    #[test]
    fn a_check_is_recent_within_the_interval_and_never_after_the_clock_went_back() {
        let recheck = Recheck::every(Duration::from_secs(2));
        let at = Timestamp::from_second(1_000).expect("time");
        let later = |s: i64| Timestamp::from_second(1_000 + s).expect("time");
        assert!(recheck.recent(at, later(1)));
        assert!(!recheck.recent(at, later(2)));
        assert!(!recheck.recent(at, later(-1)), "clock went back");
        assert!(recheck.due(None, at));
        assert!(!recheck.due(Some(at), later(1)));
    }
}
