//! Locking plain shared data, and remembering the results of pure functions.

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
