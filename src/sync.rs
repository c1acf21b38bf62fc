//! Locking plain shared data.

use std::sync::{Mutex, MutexGuard};

/// Lock a mutex that guards plain data. A poisoned lock only means another thread panicked
/// mid-update; the data (a log, a map of handles) is still usable, so keep serving.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
