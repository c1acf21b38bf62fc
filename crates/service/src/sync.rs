//! Locking plain shared data (the domain's helpers), and running CPU-heavy work beside the
//! async workers.

pub use wafuel_domain::sync::{lock, read, write};

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
