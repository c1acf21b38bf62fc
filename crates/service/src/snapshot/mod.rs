//! The price service: plan a selection into snapshot keys, read the store, fill what is
//! missing or stale from the source (once per key, however many ask), publish. The one place
//! that knows snapshot freshness.

pub mod held;
pub mod singleflight;

use std::sync::Arc;
use std::time::Duration;

use jiff::civil::Date;
use jiff::{SignedDuration, Timestamp};

use held::HeldSnapshots;
use singleflight::SingleFlight;
use wafuel_domain::codes::ProductCode;
use wafuel_domain::documents::Published;
use wafuel_domain::station::Quote;
use wafuel_domain::time::{Day, SharedClock};
use wafuel_query::{Mode, Selection};
use wafuel_source::SourceError;
use wafuel_source::client::{SourceClient, SourceRequest};
use wafuel_store::history::HistoryStore;
use wafuel_store::{Snapshot, SnapshotStore, StoreError};

pub use crate::cache_policy::{
    COMPLETE_SNAPSHOT_TTL as COMPLETE_TTL, INCOMPLETE_SNAPSHOT_TTL as INCOMPLETE_TTL,
};

pub use wafuel_domain::documents::SnapshotCache;

/// One unit of snapshot storage: a key and the source requests that fill it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Extract {
    pub key: String,
    pub date: Date,
    pub products: Vec<ProductCode>,
    pub requests: Vec<SourceRequest>,
}

/// The snapshot keys a selection needs. Selections without brand, region or suburb filters
/// upstream share the per-product catalog extracts.
pub fn plan(selection: &Selection) -> Vec<Extract> {
    let upstream_filters =
        selection.brands.is_some() || selection.regions.is_some() || selection.suburbs.is_some();
    if selection.mode() == Mode::WholeExtracts || !upstream_filters {
        return selection
            .products
            .iter()
            .map(|&p| catalog_extract(p, selection.day, selection.date))
            .collect();
    }
    let mut requests = Vec::with_capacity(selection.combinations());
    fn one<T: Copy>(v: &Option<Vec<T>>) -> Vec<Option<T>> {
        v.as_ref().map_or(vec![None], |l| l.iter().copied().map(Some).collect())
    }
    let suburbs = selection.suburbs.clone().map_or(vec![None], |l| l.into_iter().map(Some).collect());
    for &product in &selection.products {
        for brand in one(&selection.brands) {
            for region in one(&selection.regions) {
                for suburb in &suburbs {
                    requests.push(SourceRequest {
                        product,
                        brand,
                        region,
                        suburb: suburb.clone(),
                        surrounding: suburb.as_ref().and(selection.surrounding),
                        day: selection.day,
                    });
                }
            }
        }
    }
    vec![Extract {
        // `selection:`, not the `filtered:` of keys that joined suburbs with `|`: rows under
        // the old keys could hold another selection's quotes (migration 0009 drops them).
        key: format!("selection:{}", selection.data_key()),
        date: selection.date,
        products: selection.products.clone(),
        requests,
    }]
}

/// The snapshot key of the complete extract of one product for one Perth date.
pub fn catalog_key(product: ProductCode, date: Date) -> String {
    format!("extract:{product}:{date}")
}

/// The complete extract of one product for one Perth date.
pub fn catalog_extract(product: ProductCode, day: Day, date: Date) -> Extract {
    Extract {
        key: catalog_key(product, date),
        date,
        products: vec![product],
        requests: vec![SourceRequest::extract(product, day)],
    }
}

impl Extract {
    /// The product of a complete catalog extract (one unfiltered request); `None` for a
    /// source-filtered extract, which never writes history.
    pub fn catalog_product(&self) -> Option<ProductCode> {
        match self.requests.as_slice() {
            [r] if *r == SourceRequest::extract(r.product, r.day) => Some(r.product),
            _ => None,
        }
    }
}

/// The quotes of a selection's snapshots, before local filtering.
#[derive(Debug, Clone)]
pub struct SelectionSnapshots {
    pub snapshots: Vec<Arc<Snapshot>>,
    /// Oldest contributing fetch.
    pub fetched_at: Timestamp,
    /// Earliest expiry of a contributing snapshot.
    pub expires_at: Timestamp,
    pub cache: SnapshotCache,
}

impl SelectionSnapshots {
    pub fn quotes(&self) -> impl Iterator<Item = &Quote> {
        self.snapshots.iter().flat_map(|s| s.quotes.iter())
    }
}

/// Timings of the cross-replica fill lease (docs/design.md "One request").
#[derive(Debug, Clone)]
pub struct FillConfig {
    /// How long a filler holds a key before others may take over.
    pub lease: Duration,
    /// How long a reader waits for another replica's fill before answering busy.
    pub wait_limit: Duration,
    /// First poll interval while waiting; doubles up to `max_poll`.
    pub first_poll: Duration,
    pub max_poll: Duration,
    /// How long a snapshot held in memory is served without asking the store whether another
    /// replica published a newer one (one metadata read, never the payload).
    pub recheck: Duration,
}

impl Default for FillConfig {
    fn default() -> Self {
        Self {
            lease: Duration::from_secs(60),
            wait_limit: Duration::from_secs(10),
            first_poll: Duration::from_millis(250),
            max_poll: Duration::from_secs(2),
            recheck: Duration::from_secs(1),
        }
    }
}

/// Reads and fills snapshots.
pub struct PriceService {
    client: SourceClient,
    store: Arc<dyn SnapshotStore>,
    clock: SharedClock,
    fill: FillConfig,
    /// This process's lease owner token prefix.
    owner: String,
    fills: SingleFlight<String, Result<(Arc<Snapshot>, SnapshotCache), SourceError>>,
    /// Where published catalog extracts also go, as daily price history.
    history: History,
    /// Decoded snapshots in front of the store.
    held: HeldSnapshots,
    /// What this replica last saw of the origin and of its warm job (`/v1/status`).
    seen: std::sync::Mutex<Seen>,
}

/// What this replica last saw of the origin and of its warm job.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seen {
    pub origin_success: Option<Timestamp>,
    /// The last failed request to the origin and its error code.
    pub origin_failure: Option<(Timestamp, &'static str)>,
    /// The last warm pass this replica ran: when, and its refreshed, skipped and failed extracts.
    pub warm: Option<(Timestamp, usize, usize, usize)>,
}

/// Default days of price history kept: 0, every day (imported archives reach back to 2001).
pub const DEFAULT_HISTORY_DAYS: i32 = 0;

/// The price history the service writes, and how many days of it the warm job keeps.
#[derive(Clone)]
pub struct History {
    pub store: Arc<dyn HistoryStore>,
    /// `--history-days` (0: keep every day).
    pub days: i32,
}

/// Turn a lease duration into a signed one for timestamp arithmetic.
fn signed(d: Duration) -> SignedDuration {
    SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX)
}

impl PriceService {
    pub fn new(
        client: SourceClient,
        store: Arc<dyn SnapshotStore>,
        history: History,
        clock: SharedClock,
        fill: FillConfig,
    ) -> Arc<Self> {
        let owner = format!("{:016x}", rand::random::<u64>());
        Arc::new(Self {
            client,
            store,
            clock,
            fill,
            owner,
            fills: SingleFlight::default(),
            history,
            held: HeldSnapshots::default(),
            seen: std::sync::Mutex::new(Seen::default()),
        })
    }

    /// When the snapshot of `key` was fetched and whether it lists any price: this replica's
    /// held copy, else the store's.
    pub async fn published(&self, key: &str) -> Result<Option<Published>, StoreError> {
        let of = |s: &Snapshot| Published { fetched_at: s.fetched_at, priced: !s.quotes.is_empty() };
        if let Some(held) = self.held.get(key) {
            return Ok(Some(of(&held.snapshot)));
        }
        // Not held here: the stored snapshot says whether it lists any price (a fresh one is
        // held, so the next status or price request reads it from memory).
        let now = self.clock.now();
        Ok(self.store.load(key).await?.map(|s| {
            let published = of(&s);
            if s.is_fresh(now) {
                self.held.hold(s, now);
            }
            published
        }))
    }

    /// What this replica last saw of the origin and of its warm job.
    pub fn seen(&self) -> Seen {
        *crate::sync::lock(&self.seen)
    }

    /// A warm pass this replica ran at `at`.
    pub fn warmed(&self, at: Timestamp, refreshed: usize, skipped: usize, failed: usize) {
        crate::sync::lock(&self.seen).warm = Some((at, refreshed, skipped, failed));
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    /// Write a published catalog extract into the price history. Never fails the price
    /// request: a store problem is logged and counted.
    async fn record_history(&self, extract: &Extract, snapshot: &Snapshot) {
        let history = &self.history;
        let Some(product) = extract.catalog_product() else { return };
        let day =
            wafuel_store::history::DayExtract { product, date: snapshot.date, quotes: &snapshot.quotes };
        match history.store.record(&[day]).await {
            Ok(w) => {
                metrics::counter!("wafuel_history_rows_total", "result" => "written").increment(w.written);
                metrics::counter!("wafuel_history_rows_total", "result" => "replaced").increment(w.replaced);
            }
            Err(e) => {
                metrics::counter!("wafuel_history_rows_total", "result" => "failed").increment(1);
                tracing::warn!(error = %e, key = %snapshot.key, "price history not written");
            }
        }
    }

    /// Quotes of the decoded snapshots held in memory.
    pub fn held_quotes(&self) -> u64 {
        self.held.weight()
    }

    /// Another replica published the day catalog of `product` for `date` (its push event
    /// says so): the held snapshot is confirmed by its stamp on the next read, the same check
    /// the recheck interval would make a moment later.
    pub fn catalog_published(&self, product: ProductCode, date: Date) {
        self.held.doubt(&catalog_key(product, date));
    }

    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    pub fn store(&self) -> &Arc<dyn SnapshotStore> {
        &self.store
    }

    /// Every snapshot a selection needs, filled if necessary. Atomic: any failure fails all.
    pub async fn selection(
        self: &Arc<Self>,
        selection: &Selection,
    ) -> Result<SelectionSnapshots, SourceError> {
        let extracts = plan(selection);
        // One task per extract, so parsing and validating the extracts of a cold catalog
        // runs on every worker thread at once.
        let tasks: Vec<_> = extracts
            .into_iter()
            .map(|e| {
                let this = self.clone();
                tokio::spawn(async move { this.snapshot(e).await })
            })
            .collect();
        let results = futures::future::join_all(tasks).await;
        let mut snapshots = Vec::with_capacity(results.len());
        let mut cache = SnapshotCache::Hit;
        for result in results {
            let (snapshot, how) =
                result.map_err(|e| SourceError::internal(format!("extract task: {e}")))??;
            cache = cache.max(how);
            snapshots.push(snapshot);
        }
        let fetched_at = snapshots.iter().map(|s| s.fetched_at).min().unwrap_or_else(|| self.clock.now());
        let expires_at = snapshots.iter().map(|s| s.expires_at).min().unwrap_or_else(|| self.clock.now());
        Ok(SelectionSnapshots { snapshots, fetched_at, expires_at, cache })
    }

    /// One extract: a fresh stored snapshot, or a fill shared by every concurrent caller in
    /// this process and leased across replicas.
    pub async fn snapshot(
        self: &Arc<Self>,
        extract: Extract,
    ) -> Result<(Arc<Snapshot>, SnapshotCache), SourceError> {
        let now = self.clock.now();
        if let Some(s) = self.held_fresh(&extract.key, now).await {
            metrics::counter!("wafuel_snapshot_total", "result" => "hit").increment(1);
            return Ok((s, SnapshotCache::Hit));
        }
        match self.store.load(&extract.key).await {
            Ok(Some(s)) if s.is_fresh(now) => {
                metrics::counter!("wafuel_snapshot_total", "result" => "hit").increment(1);
                return Ok((self.held.hold(s, now), SnapshotCache::Hit));
            }
            Ok(_) => {}
            Err(e) => return self.bypass(&extract, &e).await,
        }
        // The fill loads again before claiming: a fill of this key by another request of this
        // process may have published between the load above and joining the flight.
        let this = self.clone();
        let (result, _) = self.fills.run(extract.key.clone(), async move { this.fill(extract).await }).await;
        result.unwrap_or_else(|| Err(SourceError::internal("fill cancelled by shutdown")))
    }

    /// Hold the stored snapshot of `extract` when it is fresh, without ever asking the source
    /// (a replica starting over a filled store decodes its day once, before it serves).
    /// The snapshot now held, if any.
    pub async fn preload(&self, extract: &Extract) -> Result<Option<Arc<Snapshot>>, StoreError> {
        let now = self.clock.now();
        Ok(match self.store.load(&extract.key).await? {
            Some(s) if s.is_fresh(now) => Some(self.held.hold(s, now)),
            _ => None,
        })
    }

    /// The snapshot of `key` this process holds, while it is fresh and the store still has it:
    /// confirmed without a store read within `recheck` of the last confirmation, else by its
    /// stamp. `None` sends the caller to the store (not held, expired, or replaced or removed
    /// by another replica). A store that cannot answer the stamp read leaves the held snapshot
    /// served until its own expiry: an outage never turns prices in memory into source
    /// requests (the stamp is asked again after the next `recheck`).
    async fn held_fresh(&self, key: &str, now: Timestamp) -> Option<Arc<Snapshot>> {
        let held = self.held.get(key)?;
        if !held.snapshot.is_fresh(now) {
            return None;
        }
        let since = now.duration_since(held.confirmed_at);
        if since >= SignedDuration::ZERO && since < signed(self.fill.recheck) {
            return Some(held.snapshot);
        }
        let unchanged = match self.store.stamp(key).await {
            Ok(stamp) => stamp == Some(held.snapshot.stamp()),
            Err(e) => {
                tracing::warn!(error = %e, key, "store unavailable; serving the snapshot held in memory");
                true
            }
        };
        if !unchanged {
            self.held.forget(key);
            return None;
        }
        let snapshot = held.snapshot.clone();
        self.held.confirm(held, now);
        Some(snapshot)
    }

    /// Take the lease and fetch, or wait for the replica that holds it.
    async fn fill(self: Arc<Self>, extract: Extract) -> Result<(Arc<Snapshot>, SnapshotCache), SourceError> {
        let started = tokio::time::Instant::now();
        let mut poll = self.fill.first_poll;
        let mut waited = false;
        loop {
            let now = self.clock.now();
            let previous = match self.store.load(&extract.key).await {
                Ok(Some(s)) if s.is_fresh(now) => {
                    let label = if waited { "waited" } else { "hit" };
                    metrics::counter!("wafuel_snapshot_total", "result" => label).increment(1);
                    return Ok((self.held.hold(s, now), SnapshotCache::Hit));
                }
                Ok(previous) => previous,
                Err(e) => return self.bypass(&extract, &e).await,
            };
            let owner = format!("{}-{:08x}", self.owner, rand::random::<u32>());
            let until = now.saturating_add(signed(self.fill.lease)).unwrap_or(now);
            match self.store.claim(&extract.key, &owner, now, until, false).await {
                Ok(true) => return self.fill_leased(&extract, previous, &owner).await,
                Ok(false) => {}
                Err(e) => return self.bypass(&extract, &e).await,
            }
            if started.elapsed() + poll > self.fill.wait_limit {
                metrics::counter!("wafuel_snapshot_busy_total").increment(1);
                return Err(SourceError::busy());
            }
            if !waited {
                metrics::counter!("wafuel_snapshot_lease_waits_total").increment(1);
                waited = true;
            }
            tokio::time::sleep(poll).await;
            poll = (poll * 2).min(self.fill.max_poll);
        }
    }

    /// Fetch under a held lease and publish, fenced; the lease is released on every path.
    async fn fill_leased(
        &self,
        extract: &Extract,
        previous: Option<Arc<Snapshot>>,
        owner: &str,
    ) -> Result<(Arc<Snapshot>, SnapshotCache), SourceError> {
        let fetched = self.fetch(extract, previous).await;
        let fresh = match fetched {
            Ok(s) => s,
            Err(e) => {
                if let Err(store) = self.store.release(&extract.key, owner).await {
                    tracing::warn!(error = %store, "could not release the fill lease; it will expire");
                }
                return Err(e);
            }
        };
        metrics::counter!("wafuel_snapshot_total", "result" => "miss").increment(1);
        match self.store.publish(&fresh, owner, extract.catalog_product()).await {
            Ok(true) => {
                self.record_history(extract, &fresh).await;
                Ok((self.held.hold(fresh, self.clock.now()), SnapshotCache::Miss))
            }
            Ok(false) => {
                // Our lease expired and another filler took it: its snapshot is the newer one.
                tracing::warn!(key = %extract.key, "fill lease lost; not publishing over the newer snapshot");
                Ok((fresh, SnapshotCache::Miss))
            }
            Err(e) => {
                tracing::warn!(error = %e, "store unavailable; serving the fetched snapshot unstored");
                Ok((fresh, SnapshotCache::Bypass))
            }
        }
    }

    /// The store failed: fetch directly and say so.
    async fn bypass(
        &self,
        extract: &Extract,
        e: &StoreError,
    ) -> Result<(Arc<Snapshot>, SnapshotCache), SourceError> {
        tracing::warn!(error = %e, key = %extract.key, "store unavailable; fetching directly");
        metrics::counter!("wafuel_snapshot_total", "result" => "bypass").increment(1);
        self.fetch(extract, None).await.map(|s| (s, SnapshotCache::Bypass))
    }

    /// Refresh an extract even if fresh (the warm job): readers keep the previous snapshot
    /// meanwhile, and a failed or empty replacement keeps it. Ok(false) when another replica
    /// holds the lease.
    pub async fn refresh(&self, extract: &Extract) -> Result<bool, RefreshError> {
        let now = self.clock.now();
        let until = now.saturating_add(signed(self.fill.lease)).unwrap_or(now);
        let owner = format!("{}-warm-{:08x}", self.owner, rand::random::<u32>());
        let previous = self.store.load(&extract.key).await?;
        if !self.store.claim(&extract.key, &owner, now, until, true).await? {
            return Ok(false);
        }
        Ok(self.fill_leased(extract, previous, &owner).await.map(|_| true)?)
    }

    /// Fetch and validate an extract. An empty answer never replaces published prices.
    async fn fetch(
        &self,
        extract: &Extract,
        previous: Option<Arc<Snapshot>>,
    ) -> Result<Arc<Snapshot>, SourceError> {
        let result = self.client.fetch_quotes(&extract.requests, extract.date).await;
        {
            let mut seen = crate::sync::lock(&self.seen);
            match &result {
                Ok(_) => seen.origin_success = Some(self.clock.now()),
                Err(e) => seen.origin_failure = Some((self.clock.now(), e.code.as_str())),
            }
        }
        let quotes = result?;
        if quotes.is_empty() && previous.as_ref().is_some_and(|p| !p.quotes.is_empty()) {
            return Err(SourceError::empty_replacement());
        }
        let fetched_at = self.clock.now();
        let complete = extract.products.iter().all(|p| quotes.iter().any(|q| q.product == *p));
        let ttl = if complete { COMPLETE_TTL } else { INCOMPLETE_TTL };
        Ok(Arc::new(Snapshot {
            key: extract.key.clone(),
            date: extract.date,
            fetched_at,
            expires_at: fetched_at.saturating_add(ttl).unwrap_or(fetched_at),
            quotes: Arc::new(quotes),
        }))
    }
}

/// Why a warm refresh failed: the source's answer, or the store it reads the lease and the
/// previous snapshot from. (A request never sees a store failure: it fetches directly.)
#[derive(Debug, thiserror::Error)]
pub enum RefreshError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

impl RefreshError {
    /// The code the warm report prints: the source's error code, or `store_unavailable`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Source(e) => e.code.as_str(),
            Self::Store(_) => "store_unavailable",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;
    use wafuel_domain::time::perth_instant;
    use wafuel_query::{Dialect, parse_selection};

    fn sel(dialect: Dialect, q: &str) -> Selection {
        parse_selection(dialect, q, perth_instant(date(2026, 9, 29).at(10, 0, 0, 0))).expect("valid")
    }

    #[test]
    fn plans() {
        let all = plan(&sel(Dialect::V1, ""));
        assert_eq!(all.len(), 7);
        assert_eq!(all[0].key, "extract:1:2026-09-29");
        assert!(all.iter().all(|e| e.catalog_product() == Some(e.products[0])));
        assert_eq!(plan(&sel(Dialect::V1, "brand=5&product=1,2")).len(), 2);
        let legacy = plan(&sel(Dialect::Legacy, ""));
        assert_eq!(legacy[0].key, "extract:1:2026-09-29", "legacy unfiltered shares the extract");
        let filtered = plan(&sel(Dialect::V1, "region=25,26&suburb=PERTH,fremantle&product=1,2"));
        assert_eq!(filtered.len(), 1);
        assert_eq!(filtered[0].requests.len(), 8);
        assert_eq!(filtered[0].catalog_product(), None, "filtered extracts write no history");
        let one_region = plan(&sel(Dialect::V1, "region=25&product=1"));
        assert_eq!(one_region[0].catalog_product(), None);
        assert!(filtered[0].requests.iter().all(|r| r.surrounding.is_none()));
        let brands = plan(&sel(Dialect::Legacy, "brand=5,6&product=1&suburb=perth&surrounding=yes"));
        assert_eq!(brands[0].requests.len(), 2);
        assert!(
            brands[0]
                .requests
                .iter()
                .all(|r| r.surrounding == Some(true) && r.suburb.as_deref() == Some("PERTH"))
        );
    }
}
