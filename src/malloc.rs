//! glibc's allocator gives each thread that contends for it an arena of its own (up to eight
//! per core), and memory freed in one arena is not returned while others hold theirs. A
//! replica's threads (the async workers, SQLite's connection threads, blocking tasks such as
//! reading an archive file) each allocate, so the process kept far more than its heap held at
//! its peak: measured with heaptrack on `wafuel demo` (archive import included), a peak heap
//! of 50 MiB against a resident set of 118–138 MiB.
//!
//! Measured on 2 cores, 2026-11-27 (`wafuel demo`: its archive import, then never-repeated
//! nearby queries with 32 connections, arena counts alternated, two runs each): 4 arenas
//! 4,600–5,500 answers/s and a 113–119 MiB peak, 3 arenas 4,300–5,000/s and 107 MiB, 2 arenas
//! 4,600–6,000/s and 85–93 MiB; the front cache's 304 and small selection showed no
//! difference beyond run-to-run noise (41,000–53,000/s and 30,000–33,000/s either way). An
//! earlier measurement had 2 arenas losing a third of the throughput; repeated, alternated runs
//! do not show it, so one arena per core it is (the import alone peaks at 78 MiB with one).
//!
//! The arena count can only be set before the allocator starts, by the environment
//! (`MALLOC_ARENA_MAX`); so when it is not set, the process executes itself again, same
//! arguments and process id, with one arena per core. An operator's own setting wins.

/// The arenas the process runs with when nobody said otherwise: one per core.
pub fn arenas() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Run this program again with [`arenas`] malloc arenas unless `MALLOC_ARENA_MAX` is set.
/// Call first thing in `main`, before any thread starts; it returns only when nothing needed
/// doing or the new image could not be started (the process then goes on as it was).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn use_one_arena_per_core() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let err = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env("MALLOC_ARENA_MAX", arenas().to_string())
        .exec();
    eprintln!("wafuel: running with glibc's default malloc arenas ({err})");
}

/// Other platforms' allocators are left as they are.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn use_one_arena_per_core() {}
