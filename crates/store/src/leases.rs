//! Leases, in one place: the fill lease of a snapshot key (who may fetch it from the source;
//! fenced, so a writer whose lease expired and was taken cannot publish), named job leases
//! (one warm per hour, one enrichment at a time) and the provider pause, which is a job lease
//! that nobody owns.

use jiff::Timestamp;

use super::conn::{Conn, sql};
use super::{StoreError, millis};

const CLAIM: &str = "INSERT INTO snapshots (key, lease_owner, lease_until) VALUES ($1, $2, $3) \
     ON CONFLICT (key) DO UPDATE SET lease_owner = excluded.lease_owner, lease_until = excluded.lease_until \
     WHERE (snapshots.lease_until IS NULL OR snapshots.lease_until <= $4) \
       AND ($5 = 1 OR snapshots.payload IS NULL OR snapshots.expires_at <= $4) \
     RETURNING lease_owner";
const RELEASE: &str =
    "UPDATE snapshots SET lease_owner = NULL, lease_until = NULL WHERE key = $1 AND lease_owner = $2";
const CLAIM_JOB: &str = "INSERT INTO job_leases (name, owner, lease_until) VALUES ($1, $2, $3) \
     ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until \
     WHERE job_leases.lease_until <= $4 RETURNING owner";
const RELEASE_JOB: &str = "UPDATE job_leases SET lease_until = 0 WHERE name = $1 AND owner = $2";
const RENEW_JOB: &str = "UPDATE job_leases SET lease_until = $3 WHERE name = $1 AND owner = $2 AND lease_until > $4 \
     RETURNING owner";
const JOB_STATE: &str = "SELECT value FROM job_state WHERE name = $1";
const PUT_JOB_STATE: &str = "INSERT INTO job_state (name, value, updated_at) VALUES ($1, $2, $3) \
     ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at";
const PRUNE_JOBS: &str = "DELETE FROM job_leases WHERE lease_until <= $1";
const PAUSED: &str = "SELECT lease_until FROM job_leases WHERE name = 'provider-pause'";
const PAUSE: &str = "INSERT INTO job_leases (name, owner, lease_until) VALUES ('provider-pause', 'provider', $1) \
     ON CONFLICT (name) DO UPDATE SET lease_until = excluded.lease_until";

/// Take the fill lease of `key` until `until` if nobody holds it and the snapshot is missing
/// or expired (or, with `force`, even when fresh). True when `owner` now holds it.
pub async fn claim<C: Conn + ?Sized>(
    conn: &mut C,
    key: &str,
    owner: &str,
    (now, until): (Timestamp, Timestamp),
    force: bool,
) -> Result<bool, StoreError> {
    let statement =
        sql(CLAIM).bind(key).bind(owner).bind(millis(until)).bind(millis(now)).bind(i64::from(force));
    // Every row, not the first: SQLite commits an autocommit statement when it runs to
    // completion, and a failed commit (disk full) is only reported then. Stopping at the first
    // RETURNING row would take a lease that was rolled back for a held one.
    let rows: Vec<(String,)> = conn.fetch_all(statement).await?;
    Ok(rows.first().is_some_and(|r| r.0 == owner))
}

/// Give up the fill lease of `key` without publishing.
pub async fn release<C: Conn + ?Sized>(conn: &mut C, key: &str, owner: &str) -> Result<(), StoreError> {
    conn.execute(sql(RELEASE).bind(key).bind(owner)).await?;
    Ok(())
}

/// Take the job lease `name` until `until` if it is free at `now`.
pub async fn claim_job<C: Conn + ?Sized>(
    conn: &mut C,
    name: &str,
    owner: &str,
    (now, until): (Timestamp, Timestamp),
) -> Result<bool, StoreError> {
    let statement = sql(CLAIM_JOB).bind(name).bind(owner).bind(millis(until)).bind(millis(now));
    // To completion, so a failed commit is an error (see `claim`).
    let rows: Vec<(String,)> = conn.fetch_all(statement).await?;
    Ok(rows.first().is_some_and(|r| r.0 == owner))
}

/// End a job lease early (the job finished).
pub async fn release_job<C: Conn + ?Sized>(conn: &mut C, name: &str, owner: &str) -> Result<(), StoreError> {
    conn.execute(sql(RELEASE_JOB).bind(name).bind(owner)).await?;
    Ok(())
}

/// Extend `owner`'s job lease `name` to `until`, if it still holds it at `now`. False when
/// the lease ran out (and may have been taken): the caller stops working under it.
pub async fn renew_job<C: Conn + ?Sized>(
    conn: &mut C,
    name: &str,
    owner: &str,
    (now, until): (Timestamp, Timestamp),
) -> Result<bool, StoreError> {
    let statement = sql(RENEW_JOB).bind(name).bind(owner).bind(millis(until)).bind(millis(now));
    let rows: Vec<(String,)> = conn.fetch_all(statement).await?;
    Ok(rows.first().is_some_and(|r| r.0 == owner))
}

/// A job's recorded state (its JSON text), if it ever wrote one.
pub async fn job_state<C: Conn + ?Sized>(conn: &mut C, name: &str) -> Result<Option<String>, StoreError> {
    let row: Option<(String,)> = conn.fetch_optional(sql(JOB_STATE).bind(name)).await?;
    Ok(row.map(|r| r.0))
}

/// Replace a job's recorded state.
pub async fn put_job_state<C: Conn + ?Sized>(
    conn: &mut C,
    name: &str,
    value: &str,
    at: Timestamp,
) -> Result<(), StoreError> {
    conn.execute(sql(PUT_JOB_STATE).bind(name).bind(value).bind(millis(at))).await?;
    Ok(())
}

/// Delete job leases that ended before `before`.
pub async fn prune_jobs<C: Conn + ?Sized>(conn: &mut C, before: Timestamp) -> Result<u64, StoreError> {
    conn.execute(sql(PRUNE_JOBS).bind(millis(before))).await
}

/// Until when the provider is paused.
pub async fn paused_until<C: Conn + ?Sized>(conn: &mut C) -> Result<Option<Timestamp>, StoreError> {
    let row: Option<(i64,)> = conn.fetch_optional(sql(PAUSED)).await?;
    Ok(row.map(|r| super::from_millis(r.0)))
}

/// Pause the provider until `until`.
pub async fn pause<C: Conn + ?Sized>(conn: &mut C, until: Timestamp) -> Result<(), StoreError> {
    conn.execute(sql(PAUSE).bind(millis(until))).await?;
    Ok(())
}
