//! Locking plain shared data, and running CPU-heavy work beside the async workers.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Lock a mutex that guards plain data. A poisoned lock only means another thread panicked
/// mid-update; the data (a log, a map of handles) is still usable, so keep serving.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Read-lock a lock that guards plain data (see [`lock`] on poisoning).
pub fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Write-lock a lock that guards plain data (see [`lock`] on poisoning).
pub fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Run CPU-heavy work of one request (a route search, a forecast's replay, statistics over
/// years) without holding an async worker: at most [`compute_slots`] such jobs run at once,
/// each on a thread tokio hands its worker's other tasks away from (`block_in_place`), so
/// the answers that are a lookup (`/readyz`, a cached document) keep their workers whatever
/// mix of requests arrives. Jobs beyond the slots wait asynchronously, holding no thread.
/// On a current-thread runtime (unit tests) the work runs in place.
pub async fn compute<R>(work: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    static SLOTS: std::sync::LazyLock<tokio::sync::Semaphore> =
        std::sync::LazyLock::new(|| tokio::sync::Semaphore::new(compute_slots()));
    let multi_thread = Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread);
    if !multi_thread {
        return work();
    }
    // The semaphore is never closed, so acquiring only waits.
    let _slot = SLOTS.acquire().await.ok();
    tokio::task::block_in_place(work)
}

/// How many CPU-heavy jobs run at once: half the cores (at least one), so the other half is
/// left to the async workers that answer everything else.
pub fn compute_slots() -> usize {
    std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
}

/// Results of a pure function by its text input, remembered up to a bound (then forgotten
/// all at once and refilled). For memos read thousands of times per feed: a hash map behind
/// a read-write lock costs a fraction of a general-purpose cache with eviction and expiry
/// bookkeeping, which the profile of a cold catalog build showed taking a fifth of it.
///
/// Keys are whole station texts, hundreds of bytes each, hashed on every lookup: foldhash
/// (seeded per process) instead of the standard SipHash, which was 3 % of the build.
#[derive(Debug)]
pub struct Memo<V> {
    map: RwLock<std::collections::HashMap<String, V, foldhash::fast::RandomState>>,
    max_entries: usize,
}

impl<V: Clone> Memo<V> {
    pub fn new(max_entries: usize) -> Self {
        Self { map: RwLock::new(std::collections::HashMap::default()), max_entries }
    }

    pub fn get(&self, key: &str) -> Option<V> {
        read(&self.map).get(key).cloned()
    }

    pub fn insert(&self, key: String, value: V) {
        let mut map = write(&self.map);
        if map.len() >= self.max_entries && !map.contains_key(&key) {
            map.clear();
        }
        map.insert(key, value);
    }

    pub fn clear(&self) {
        write(&self.map).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::Memo;

    #[test]
    fn memo_remembers_up_to_its_bound() {
        let memo = Memo::new(2);
        memo.insert("a".into(), 1);
        memo.insert("b".into(), 2);
        assert_eq!((memo.get("a"), memo.get("b"), memo.get("c")), (Some(1), Some(2), None));
        memo.insert("b".into(), 3);
        assert_eq!(memo.get("a"), Some(1), "replacing a key is not growth");
        memo.insert("c".into(), 4);
        assert_eq!((memo.get("a"), memo.get("c")), (None, Some(4)));
        memo.clear();
        assert_eq!(memo.get("c"), None);
    }
}
