//! Decoded snapshots kept in memory in front of the store, so a request for a day whose
//! extract this replica already holds reads neither the store's blob nor JSON.
//!
//! The store stays the truth shared by replicas. A held snapshot is trusted without asking
//! the store for [`FillConfig::recheck`](super::FillConfig) after it was last confirmed; then
//! one metadata read (the [`Stamp`], never the payload) confirms it or, when another replica
//! published since, the new snapshot is loaded and decoded once. A publish by this replica
//! replaces the held snapshot at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use jiff::Timestamp;

use wafuel_domain::station::{Quote, Station};
use wafuel_store::Snapshot;

/// Quotes held at most (all keys together): the three days of every product's statewide
/// extract several times over; filtered extracts fill the rest and are evicted first by age.
pub const MAX_HELD_QUOTES: u64 = 150_000;

/// One held snapshot and when the store last confirmed it.
#[derive(Debug, Clone)]
pub struct Held {
    pub snapshot: Arc<Snapshot>,
    pub confirmed_at: Timestamp,
}

/// Held snapshots by key, bounded by their number of quotes.
pub struct HeldSnapshots {
    cache: moka::sync::Cache<String, Held>,
    stations: Interner,
}

impl Default for HeldSnapshots {
    fn default() -> Self {
        Self::with_capacity(MAX_HELD_QUOTES)
    }
}

impl HeldSnapshots {
    pub fn with_capacity(max_quotes: u64) -> Self {
        let cache = moka::sync::Cache::builder()
            .weigher(|_k: &String, v: &Held| u32::try_from(v.snapshot.quotes.len() + 1).unwrap_or(u32::MAX))
            .max_capacity(max_quotes)
            .build();
        Self { cache, stations: Interner::default() }
    }

    pub fn get(&self, key: &str) -> Option<Held> {
        self.cache.get(key)
    }

    /// Hold `snapshot` as confirmed at `now`; its stations are shared with every other held
    /// snapshot that has the same station (the same station appears in every product's and
    /// every day's extract). Returns the snapshot as held.
    pub fn hold(&self, snapshot: Arc<Snapshot>, now: Timestamp) -> Arc<Snapshot> {
        let snapshot = self.stations.share(snapshot);
        self.cache.insert(snapshot.key.clone(), Held { snapshot: snapshot.clone(), confirmed_at: now });
        snapshot
    }

    /// The store confirmed the held snapshot of `key` at `now`.
    pub fn confirm(&self, held: Held, now: Timestamp) {
        let key = held.snapshot.key.clone();
        self.cache.insert(key, Held { confirmed_at: now, ..held });
    }

    /// The store may hold something newer for `key` (another replica's publish was announced):
    /// the next read confirms the held snapshot by its stamp at once instead of trusting it
    /// for the rest of the recheck interval.
    pub fn doubt(&self, key: &str) {
        if let Some(held) = self.cache.get(key) {
            self.cache.insert(key.to_string(), Held { confirmed_at: Timestamp::UNIX_EPOCH, ..held });
        }
    }

    pub fn forget(&self, key: &str) {
        self.cache.invalidate(key);
    }

    /// Quotes held now (after pending evictions), for tests and metrics.
    pub fn weight(&self) -> u64 {
        self.cache.run_pending_tasks();
        self.cache.weighted_size()
    }
}

/// Stations by digest, weakly: a station equal to one already held is replaced by it.
#[derive(Default)]
struct Interner {
    map: Mutex<HashMap<wafuel_domain::key::StationId, Weak<Station>>>,
}

impl Interner {
    fn share(&self, snapshot: Arc<Snapshot>) -> Arc<Snapshot> {
        let mut map = crate::sync::lock(&self.map);
        // Dead entries are swept when the map has grown well past what is alive.
        if map.len() > 4 * 4096 {
            map.retain(|_, w| w.strong_count() > 0);
        }
        let mut changed = false;
        let quotes: Vec<Quote> = snapshot
            .quotes
            .iter()
            .map(|q| {
                let shared = match map.get(&q.station.id).and_then(Weak::upgrade) {
                    Some(known) if Arc::ptr_eq(&known, &q.station) => None,
                    Some(known) if *known == *q.station => Some(known),
                    _ => {
                        map.insert(q.station.id.clone(), Arc::downgrade(&q.station));
                        None
                    }
                };
                match shared {
                    Some(station) => {
                        changed = true;
                        Quote { station, ..q.clone() }
                    }
                    None => q.clone(),
                }
            })
            .collect();
        if !changed {
            return snapshot;
        }
        Arc::new(Snapshot { quotes: Arc::new(quotes), ..(*snapshot).clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;
    use wafuel_domain::testing;

    fn station(name: &str) -> Arc<Station> {
        testing::station(name, "BP", "-31.95", "115.86")
    }

    fn snapshot(key: &str, stations: &[Arc<Station>]) -> Arc<Snapshot> {
        let now = Timestamp::UNIX_EPOCH;
        Arc::new(Snapshot {
            key: key.into(),
            date: date(2026, 11, 23),
            fetched_at: now,
            expires_at: now,
            quotes: Arc::new(stations.iter().map(|s| testing::quote(s, 1, 180.0)).collect()),
        })
    }

    #[test]
    fn equal_stations_of_different_snapshots_are_shared() {
        let held = HeldSnapshots::default();
        let now = Timestamp::UNIX_EPOCH;
        let first = held.hold(snapshot("extract:1:2026-11-23", &[station("A"), station("B")]), now);
        // The same stations decoded again (another product's extract): equal, not shared.
        let second = held.hold(snapshot("extract:2:2026-11-23", &[station("B"), station("C")]), now);
        assert!(Arc::ptr_eq(&first.quotes[1].station, &second.quotes[0].station));
        assert!(!Arc::ptr_eq(&first.quotes[0].station, &second.quotes[1].station));
        assert_eq!(second.quotes[1].station.name, "C");
        assert!(held.get("extract:2:2026-11-23").is_some());
        assert_eq!(held.weight(), 6, "two quotes and one per key, twice");
    }

    #[test]
    fn bounded_by_quotes() {
        let held = HeldSnapshots::with_capacity(10);
        let now = Timestamp::UNIX_EPOCH;
        let many: Vec<_> = (0..4).map(|i| station(&format!("S{i}"))).collect();
        for i in 0..20 {
            held.hold(snapshot(&format!("filtered:{i}"), &many), now);
        }
        assert!(held.weight() <= 10);
    }
}
