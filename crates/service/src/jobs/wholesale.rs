//! The wholesale job: FuelWatch's terminal gate prices of every centre into the store, when
//! the service starts and then as the warm job runs (each Perth hour, and at 14:31 and 14:45,
//! just after tomorrow's prices come out), once across replicas (a job lease per run). A read
//! that fails, is slow or is malformed stores nothing and keeps what was stored, with a
//! warning naming the cause.

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use wafuel_domain::time::{SharedClock, perth_now};
use wafuel_domain::wholesale::{live_days, live_write};
use wafuel_source::wholesale::{WholesaleClient, WholesaleError};
use wafuel_store::wholesale::WholesaleWrite;
use wafuel_store::{Store, StoreError};

/// Why a pass stored nothing.
#[derive(Debug, thiserror::Error)]
pub enum WholesalePassError {
    #[error(transparent)]
    Source(#[from] WholesaleError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One read of every centre, stored as [`live_write`] says for the time it was read.
pub async fn wholesale_pass(
    store: &Arc<dyn Store>,
    client: &WholesaleClient,
    clock: &SharedClock,
) -> Result<WholesaleWrite, WholesalePassError> {
    let terminals = client.read().await?;
    // The clock after the read: an answer read across 14:30 is judged by when it came.
    let now = clock.now();
    let write = live_write(&terminals, live_days(perth_now(now).datetime()));
    Ok(store.put_live_wholesale(&write.prices, &write.if_missing, write.news, now).await?)
}

/// A pass under the job lease of `name`, logged; `None` when another replica holds it.
pub async fn leased_pass(
    store: &Arc<dyn Store>,
    client: &WholesaleClient,
    clock: &SharedClock,
    (name, owner): (&str, &str),
) -> Option<Result<WholesaleWrite, WholesalePassError>> {
    let now = clock.now();
    let until = now.saturating_add(SignedDuration::from_mins(10)).unwrap_or(now);
    match store.claim_job(name, owner, now, until).await {
        Ok(true) => {}
        Ok(false) => {
            tracing::debug!(job = name, "another replica reads the terminal gate prices");
            return None;
        }
        Err(e) => {
            tracing::warn!(error = %e, "wholesale job lease unavailable; skipping this run");
            return None;
        }
    }
    let result = wholesale_pass(store, client, clock).await;
    match &result {
        Ok(w) => tracing::info!(
            written = w.written,
            replaced = w.replaced,
            unchanged = w.unchanged,
            "terminal gate prices stored"
        ),
        Err(e) => {
            metrics::counter!("wafuel_wholesale_failures_total").increment(1);
            tracing::warn!(error = %e, "terminal gate prices not stored; what was stored is kept");
        }
    }
    // The lease is kept until it ends: another replica waking at the same minute finds it
    // taken and reads nothing.
    Some(result)
}

/// Run at start, then at each of the warm job's times, forever.
pub async fn run(store: Arc<dyn Store>, client: WholesaleClient, clock: SharedClock) {
    let owner = format!("wholesale-{:016x}", rand::random::<u64>());
    let mut next: Option<Timestamp> = None;
    loop {
        if let Some(at) = next {
            let wait = at.duration_since(clock.now()).unsigned_abs();
            tokio::time::sleep(wait.max(Duration::from_millis(10))).await;
        }
        let now = clock.now();
        let name = format!("wholesale:{}", perth_now(now).strftime("%Y-%m-%dT%H:%M"));
        leased_pass(&store, &client, &clock, (&name, &owner)).await;
        next = Some(super::warm::next_warm(clock.now()));
    }
}
