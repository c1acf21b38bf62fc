//! Change counters, in one place: a number per kind of data that writers bump in the
//! transaction of each change, so a reader holding that data in memory compares one number
//! instead of re-reading it; event ids are one of them.

use super::StoreError;
use super::conn::{Conn, sql};

/// Provider profiles (enrichment).
pub const PROFILES: &str = "profiles";
/// Price history (live records, imports, pruning).
pub const HISTORY: &str = "history";
/// The highest event id given out: bumped in the publish transaction, so ids commit in
/// increasing order (PostgreSQL holds the counter row locked until commit; SQLite has one
/// writer), and a reader past id n never later sees n−1.
pub const EVENTS: &str = "events";
/// The highest event id deleted for age: a client resuming before it missed events.
pub const EVENTS_PRUNED: &str = "events_pruned";
/// 1 while the summaries of days stored before they existed are owed (a migration sets it).
pub const SUMMARIES_OWED: &str = "summaries_owed";

const BUMP: &str = "INSERT INTO change_counters (name, value) VALUES ($1, 1) \
     ON CONFLICT (name) DO UPDATE SET value = change_counters.value + 1 RETURNING value";
const READ: &str = "SELECT value FROM change_counters WHERE name = $1";
const RAISE: &str = "INSERT INTO change_counters (name, value) VALUES ($1, $2) \
     ON CONFLICT (name) DO UPDATE SET value = excluded.value WHERE change_counters.value < excluded.value";
const SET: &str = "INSERT INTO change_counters (name, value) VALUES ($1, $2) \
     ON CONFLICT (name) DO UPDATE SET value = excluded.value";

/// Add one to `name` (from 0); its new value.
pub async fn bump<C: Conn + ?Sized>(conn: &mut C, name: &str) -> Result<i64, StoreError> {
    let rows: Vec<(i64,)> = conn.fetch_all(sql(BUMP).bind(name)).await?;
    rows.first().map(|r| r.0).ok_or_else(|| StoreError::Encoding(format!("counter {name} not returned")))
}

/// The value of `name`; 0 before its first write.
pub async fn read<C: Conn + ?Sized>(conn: &mut C, name: &str) -> Result<i64, StoreError> {
    let row: Option<(i64,)> = conn.fetch_optional(sql(READ).bind(name)).await?;
    Ok(row.map_or(0, |r| r.0))
}

/// Set `name` to `value` unless it is already higher.
pub async fn raise<C: Conn + ?Sized>(conn: &mut C, name: &str, value: i64) -> Result<(), StoreError> {
    conn.execute(sql(RAISE).bind(name).bind(value)).await?;
    Ok(())
}

/// Set `name` to `value`.
pub async fn set<C: Conn + ?Sized>(conn: &mut C, name: &str, value: i64) -> Result<(), StoreError> {
    conn.execute(sql(SET).bind(name).bind(value)).await?;
    Ok(())
}
