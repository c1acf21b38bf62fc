//! The hourly warm job (docs/design.md "Layers", `jobs/`): refresh the unfiltered single-product extracts that
//! readers will ask for next, three at a time, even when fresh; keep old prices when a
//! replacement fails; prune what nobody needs. Under many replicas each hour runs once.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use jiff::civil::Time;
use jiff::{SignedDuration, Timestamp};

use crate::snapshot::{Extract, PriceService, catalog_extract};
use wafuel_domain::codes::product_codes;
use wafuel_domain::time::{Day, PERIOD_START, PUBLICATION_TIME, perth_now};

/// Extract refreshes run at most this many at once.
pub const WARM_CONCURRENCY: usize = 3;
/// Snapshots expired longer than this are pruned (kept a day for the empty-replacement rule).
pub const PRUNE_AFTER: SignedDuration = SignedDuration::from_hours(24);

/// The extracts worth having at `now`: yesterday and today before 06:00, today until 14:29,
/// today and tomorrow from 14:30.
pub fn warm_extracts(now: Timestamp) -> Vec<Extract> {
    let time = perth_now(now).time();
    let days: &[Day] = if time < PERIOD_START {
        &[Day::Yesterday, Day::Today]
    } else if time < PUBLICATION_TIME {
        &[Day::Today]
    } else {
        &[Day::Today, Day::Tomorrow]
    };
    days.iter()
        .flat_map(|&day| product_codes().map(move |p| catalog_extract(p, day, day.resolve(now))))
        .collect()
}

/// What one pass did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WarmReport {
    pub refreshed: usize,
    /// Held by another replica's fill at the time.
    pub skipped: usize,
    /// Keys whose refresh failed, with the error code; their old snapshots stay.
    pub failed: Vec<(String, &'static str)>,
    pub pruned: u64,
    /// Price history rows older than the retention.
    pub history_pruned: u64,
}

/// One pass: refresh every extract, then prune.
pub async fn warm_pass(prices: &Arc<PriceService>) -> WarmReport {
    let now = prices.clock().now();
    let refreshes: Vec<_> = warm_extracts(now)
        .into_iter()
        .map(|extract| {
            let prices = prices.clone();
            async move {
                let result = prices.refresh(&extract).await;
                (extract.key, result)
            }
        })
        .collect();
    let mut results = futures::stream::iter(refreshes).buffer_unordered(WARM_CONCURRENCY);
    let mut report = WarmReport::default();
    while let Some((key, result)) = results.next().await {
        match result {
            Ok(true) => report.refreshed += 1,
            Ok(false) => report.skipped += 1,
            Err(e) => {
                tracing::warn!(key, code = e.code(), error = %e, "warm refresh failed; previous snapshot kept");
                report.failed.push((key, e.code()));
            }
        }
    }
    let before = now.saturating_sub(PRUNE_AFTER).unwrap_or(now);
    match prices.store().prune(now, before).await {
        Ok(n) => report.pruned = n,
        Err(e) => tracing::warn!(error = %e, "prune failed"),
    }
    let history = prices.history();
    if history.days > 0 {
        // Keep `--history-days` Perth days up to today (0: keep everything).
        let today = perth_now(now).date();
        let cutoff = today.checked_sub(jiff::Span::new().days(history.days - 1)).unwrap_or(today);
        match history.store.prune_history(cutoff).await {
            Ok(n) => report.history_pruned = n,
            Err(e) => tracing::warn!(error = %e, "history prune failed"),
        }
    }
    prices.warmed(now, report.refreshed, report.skipped, report.failed.len());
    metrics::counter!("wafuel_warm_passes_total").increment(1);
    metrics::counter!("wafuel_warm_failures_total").increment(report.failed.len() as u64);
    tracing::info!(
        refreshed = report.refreshed,
        skipped = report.skipped,
        failed = report.failed.len(),
        pruned = report.pruned,
        "warm pass done"
    );
    report
}

/// Run a pass at minute 0 of every Perth hour and at 14:31 and 14:45 (just after FuelWatch
/// publishes tomorrow), once across replicas (a job lease per run).
pub async fn run_hourly(prices: Arc<PriceService>) {
    let owner = format!("warm-{:016x}", rand::random::<u64>());
    loop {
        let now = prices.clock().now();
        let next = next_warm(now);
        let wait = next.duration_since(now).unsigned_abs();
        tokio::time::sleep(wait.max(Duration::from_millis(10))).await;
        let now = prices.clock().now();
        let name = format!("warm:{}", perth_now(now).strftime("%Y-%m-%dT%H:%M"));
        let until = now.saturating_add(SignedDuration::from_hours(1)).unwrap_or(now);
        match prices.store().claim_job(&name, &owner, now, until).await {
            Ok(true) => {
                warm_pass(&prices).await;
            }
            Ok(false) => tracing::debug!(job = name, "another replica warms this hour"),
            Err(e) => tracing::warn!(error = %e, "warm job lease unavailable; skipping this hour"),
        }
    }
}

/// Minutes past FuelWatch's 14:30 publication when the warm job also runs, so tomorrow's
/// prices are in the store (and pushed to `/v1/events`) soon after they appear, not at 15:00.
const AFTER_PUBLICATION: [i8; 2] = [31, 45];

/// The next time the warm job runs after `now`: the top of each hour, and 14:31 and 14:45.
pub(crate) fn next_warm(now: Timestamp) -> Timestamp {
    let here = perth_now(now);
    let at = |hour: i8, minute: i8| {
        Time::new(hour, minute, 0, 0)
            .ok()
            .and_then(|t| here.with().time(t).build().ok())
            .map(|z| z.timestamp())
    };
    let next_hour =
        at(here.hour(), 0).and_then(|h| h.checked_add(SignedDuration::from_hours(1)).ok()).unwrap_or(now);
    AFTER_PUBLICATION
        .iter()
        .filter_map(|&minute| at(PUBLICATION_TIME.hour(), minute))
        .filter(|&t| t > now)
        .fold(next_hour, Timestamp::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;
    use wafuel_domain::time::perth_instant;

    fn keys(h: i8, m: i8) -> Vec<String> {
        warm_extracts(perth_instant(date(2026, 9, 29).at(h, m, 0, 0))).into_iter().map(|e| e.key).collect()
    }

    #[test]
    fn warms_hourly_and_just_after_publication() {
        let at = |h, m| perth_instant(date(2026, 9, 29).at(h, m, 0, 0));
        assert_eq!(next_warm(at(9, 10)), at(10, 0));
        assert_eq!(next_warm(at(14, 0)), at(14, 31));
        assert_eq!(next_warm(at(14, 31)), at(14, 45));
        assert_eq!(next_warm(at(14, 45)), at(15, 0));
        assert_eq!(next_warm(at(23, 30)), perth_instant(date(2026, 9, 30).at(0, 0, 0, 0)));
    }

    #[test]
    fn extracts_follow_the_day() {
        let early = keys(5, 0);
        assert_eq!(early.len(), 14);
        assert!(early.contains(&"extract:1:2026-09-28".to_string()));
        let midday = keys(10, 0);
        assert_eq!(midday.len(), 7);
        assert!(midday.iter().all(|k| k.ends_with("2026-09-29")));
        let late = keys(14, 30);
        assert_eq!(late.len(), 14);
        assert!(late.contains(&"extract:11:2026-09-30".to_string()));
    }
}
