//! The enrichment job (docs/design.md "Decisions worth knowing"): discover today's stations of one product (rotating),
//! then look up due stations at the map data provider within a daily budget, under one lease
//! for all replicas. Never on a request path.

use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;

use crate::snapshot::{PriceService, catalog_extract};
use wafuel_domain::codes::PRODUCTS;
use wafuel_domain::codes::ProductCode;
use wafuel_domain::profile::{REFRESH_AFTER, StoredProfile};
use wafuel_domain::time::{Day, perth_now};
use wafuel_places::client::{PlacesClient, PlacesError};
use wafuel_places::matching::{choose, profile_of};
use wafuel_store::Store;
use wafuel_store::enrich::{DueStation, Seed};

/// How the job runs.
#[derive(Debug, Clone)]
pub struct EnrichConfig {
    /// Stations looked up per pass.
    pub batch: i64,
    /// Provider requests per Perth day.
    pub daily_budget: i64,
    /// Time until a profile is due again (and `stale` after).
    pub refresh_after: SignedDuration,
    pub interval: Duration,
    /// Discover this product's stations instead of rotating (tests and operators).
    pub discover_product: Option<ProductCode>,
}

impl Default for EnrichConfig {
    fn default() -> Self {
        Self {
            batch: 100,
            daily_budget: 300,
            refresh_after: REFRESH_AFTER,
            interval: Duration::from_secs(15 * 60),
            discover_product: None,
        }
    }
}

/// What one pass did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct EnrichReport {
    pub seeds_changed: usize,
    pub looked_up: usize,
    pub matched: usize,
    pub unmatched: usize,
    pub failed: usize,
    pub provider_requests: usize,
    pub budget_exhausted: bool,
    /// Skipped: the provider is paused, or another replica holds the lease.
    pub skipped: Option<&'static str>,
}

const PAUSE_REFUSED: SignedDuration = SignedDuration::from_hours(24);
const PAUSE_RATE_LIMITED: SignedDuration = SignedDuration::from_hours(1);

/// One pass.
pub async fn enrich_pass(
    prices: &Arc<PriceService>,
    store: &Arc<dyn Store>,
    client: &PlacesClient,
    config: &EnrichConfig,
) -> Result<EnrichReport, String> {
    let now = prices.clock().now();
    let mut report = EnrichReport::default();
    if store.paused_until().await.map_err(|e| e.to_string())?.is_some_and(|until| until > now) {
        report.skipped = Some("provider paused");
        return Ok(report);
    }
    let owner = format!("enrich-{:016x}", rand::random::<u64>());
    let until = now.saturating_add(SignedDuration::from_mins(10)).unwrap_or(now);
    if !store.claim_job("enrich", &owner, now, until).await.map_err(|e| e.to_string())? {
        report.skipped = Some("another replica is enriching");
        return Ok(report);
    }

    let result = leased_pass(prices, store, client, config, now, &mut report).await;
    if let Err(e) = store.release_job("enrich", &owner).await {
        tracing::warn!(error = %e, "could not release the enrichment lease; it will expire");
    }
    result.map(|()| report)
}

/// The pass proper, under the enrichment lease.
async fn leased_pass(
    prices: &Arc<PriceService>,
    store: &Arc<dyn Store>,
    client: &PlacesClient,
    config: &EnrichConfig,
    now: jiff::Timestamp,
    report: &mut EnrichReport,
) -> Result<(), String> {
    // Discover: today's extract of one product, rotating every pass interval.
    let slot = now.as_second().div_euclid(config.interval.as_secs().max(1) as i64);
    let rotating = PRODUCTS[usize::try_from(slot.rem_euclid(PRODUCTS.len() as i64)).unwrap_or(0)].code;
    let product = config.discover_product.unwrap_or(rotating);
    let extract = catalog_extract(product, Day::Today, Day::Today.resolve(now));
    let (snapshot, _) = prices.snapshot(extract).await.map_err(|e| format!("discovery: {}", e.reason))?;
    let seeds: Vec<Seed> = snapshot
        .quotes
        .iter()
        .map(|q| Seed {
            station_key: q.station.key.clone(),
            name: q.station.name.clone(),
            brand: q.station.brand.get(),
            street: q.station.street.clone(),
            suburb: q.station.suburb.clone(),
            latitude: q.station.latitude,
            longitude: q.station.longitude,
        })
        .collect();
    report.seeds_changed = store.upsert_seeds(&seeds).await.map_err(|e| e.to_string())?;

    let day = perth_now(now).date().to_string();
    for due in store.due(now, config.batch).await.map_err(|e| e.to_string())? {
        report.looked_up += 1;
        match look_up(store, client, config, &day, &due, report).await {
            Ok(Some(place)) => {
                let profile = StoredProfile {
                    station_key: due.seed.station_key.clone(),
                    fetched_at: now,
                    refresh_at: now.saturating_add(config.refresh_after).unwrap_or(now),
                    profile: profile_of(&place),
                };
                store.save_profile(&profile).await.map_err(|e| e.to_string())?;
                report.matched += 1;
            }
            Ok(None) => {
                // No confident match: try again at the next refresh, not every pass.
                let later = now.saturating_add(config.refresh_after).unwrap_or(now);
                store.defer(&due.seed.station_key, later, 0).await.map_err(|e| e.to_string())?;
                report.unmatched += 1;
            }
            Err(Stop::Budget) => {
                report.budget_exhausted = true;
                report.looked_up -= 1;
                break;
            }
            Err(Stop::Provider(e @ (PlacesError::Refused(_) | PlacesError::RateLimited))) => {
                // Refusals (key, project, request) pause a day; rate limits an hour.
                let pause = if e == PlacesError::RateLimited { PAUSE_RATE_LIMITED } else { PAUSE_REFUSED };
                tracing::warn!(error = %e, hours = pause.as_hours(), "pausing enrichment");
                store.pause(now.saturating_add(pause).unwrap_or(now)).await.map_err(|e| e.to_string())?;
                report.failed += 1;
                break;
            }
            Err(Stop::Provider(e)) => {
                // Back off this station: 15 min × 2^failures, at most a day.
                let failures = due.failures + 1;
                let minutes = (15i64 << failures.min(7)).min(24 * 60);
                let later = now.saturating_add(SignedDuration::from_mins(minutes)).unwrap_or(now);
                tracing::info!(error = %e, station = %due.seed.station_key, "provider lookup failed; backing off");
                store.defer(&due.seed.station_key, later, failures).await.map_err(|e| e.to_string())?;
                report.failed += 1;
            }
            Err(Stop::Store(e)) => return Err(e),
        }
    }
    metrics::counter!("wafuel_enrich_provider_requests_total").increment(report.provider_requests as u64);
    metrics::counter!("wafuel_enrich_matched_total").increment(report.matched as u64);
    tracing::info!(
        looked_up = report.looked_up,
        matched = report.matched,
        unmatched = report.unmatched,
        failed = report.failed,
        requests = report.provider_requests,
        budget_exhausted = report.budget_exhausted,
        "enrichment pass done"
    );
    Ok(())
}

enum Stop {
    Budget,
    Provider(PlacesError),
    Store(String),
}

/// Reserve one request of today's budget, or stop.
async fn reserve(
    store: &Arc<dyn Store>,
    config: &EnrichConfig,
    day: &str,
    report: &mut EnrichReport,
) -> Result<(), Stop> {
    match store.reserve_budget(day, config.daily_budget).await {
        Ok(true) => {
            report.provider_requests += 1;
            Ok(())
        }
        Ok(false) => Err(Stop::Budget),
        Err(e) => Err(Stop::Store(e.to_string())),
    }
}

/// Details for a known place, else a name search, then one address-only search.
async fn look_up(
    store: &Arc<dyn Store>,
    client: &PlacesClient,
    config: &EnrichConfig,
    day: &str,
    due: &DueStation,
    report: &mut EnrichReport,
) -> Result<Option<wafuel_places::types::Place>, Stop> {
    if let Some(id) = &due.place_id {
        reserve(store, config, day, report).await?;
        match client.details(id).await {
            Ok(place) => return Ok(choose(&due.seed, std::slice::from_ref(&place)).cloned()),
            Err(PlacesError::NotFound) => {}
            Err(e) => return Err(Stop::Provider(e)),
        }
    }
    for by_name in [true, false] {
        reserve(store, config, day, report).await?;
        let candidates = client.search(&due.seed, by_name).await.map_err(Stop::Provider)?;
        if let Some(place) = choose(&due.seed, &candidates) {
            return Ok(Some(place.clone()));
        }
    }
    Ok(None)
}

/// Run a pass every `interval` until the process stops.
pub async fn run_every(
    prices: Arc<PriceService>,
    store: Arc<dyn Store>,
    client: PlacesClient,
    config: EnrichConfig,
) {
    loop {
        if let Err(e) = enrich_pass(&prices, &store, &client, &config).await {
            tracing::warn!(error = %e, "enrichment pass failed");
        }
        tokio::time::sleep(config.interval).await;
    }
}
