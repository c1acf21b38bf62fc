//! The rendered-response cache: each document is built once per snapshot set and expand
//! set, with its encodings and validators, and shared by every request until its snapshots
//! expire. Concurrent identical misses wait for one build.

use std::sync::Arc;

use axum::http::HeaderValue;
use jiff::Timestamp;
use jiff::civil::Date;

use super::negotiate::Media;
use crate::render::representation::{Coding, Representation};
use wafuel_domain::documents::{PublicationStatus, SnapshotCache};
use wafuel_domain::key::StationId;
use wafuel_domain::time::{format_perth, perth};
use wafuel_query::Selection;
use wafuel_query::forecast::{ForecastQuery, RecordQuery};
use wafuel_query::market::{HistoryQuery, StatsQuery};
use wafuel_query::stations::{BrandsQuery, StationsQuery};
use wafuel_query::wholesale::WholesaleQuery;
use wafuel_service::cache_policy::{REBUILD_AFTER, shared_until};
use wafuel_service::catalog::Facts;

/// What a cache entry is keyed on: the parsed request (canonical, so equal requests are equal
/// keys however they were spelled) and the media it is written in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RenderKey {
    /// `/v1` or `/legacy` (the selection names its route).
    Prices(Selection),
    Stations(StationsQuery, Media),
    Station(StationId, StationsQuery, Media),
    History(HistoryQuery, Media),
    Stats(StatsQuery, Media),
    Brands(BrandsQuery),
    Status,
    /// A market or station forecast (JSON:API only).
    Forecast(ForecastQuery),
    /// The forecast's live record.
    Record(RecordQuery, Media),
    Wholesale(WholesaleQuery, Media),
}

impl RenderKey {
    /// What the key holds besides its own size: a route search's polyline and decoded route.
    fn heap_bytes(&self) -> usize {
        match self {
            RenderKey::Stations(q, _) | RenderKey::Station(_, q, _) => q.heap_bytes(),
            _ => 0,
        }
    }
}

/// A built document and what its headers need.
#[derive(Debug)]
pub struct Rendered {
    pub repr: Representation,
    /// Header values computed once per document: ETags per coding, source date, fetched-at.
    pub etags: [HeaderValue; 3],
    pub source_date_header: HeaderValue,
    pub fetched_at_header: HeaderValue,
    pub date: Date,
    pub expires_at: Timestamp,
    /// When this process rebuilds the document from the store, to pick up enrichment changes
    /// (the rebuilt bytes, and so the ETag, are the same when nothing changed).
    pub rebuild_at: Timestamp,
    pub status: PublicationStatus,
    pub snapshot_cache: SnapshotCache,
    /// For a document read from the store: the history's and wholesale prices' counters it
    /// was built at. Served only while both are unchanged.
    pub stored: Option<wafuel_service::catalog::StoredVersions>,
}

/// The rendered documents, bounded by weight (document bytes) so memory stays flat whatever
/// the query mix, and the keys of point and route searches asked once.
#[derive(Clone)]
pub struct RenderCache {
    docs: moka::future::Cache<RenderKey, Arc<Rendered>>,
    asked_once: Arc<AskedOnce>,
}

/// Bytes an entry costs besides its bodies: the key, the header values, the document's and
/// the cache's own bookkeeping (measured order of magnitude, rounded up).
const ENTRY_OVERHEAD: usize = 1_024;

/// The weight of an entry: its bodies as they may grow (codings are made on demand, after
/// the entry is weighed) and its overhead.
pub fn weight(key: &RenderKey, doc: &Rendered) -> u32 {
    let bytes = doc.repr.weight_bound() + ENTRY_OVERHEAD + key.heap_bytes();
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

pub fn new_cache(max_bytes: u64) -> RenderCache {
    RenderCache {
        docs: moka::future::Cache::builder()
            .weigher(|k: &RenderKey, v: &Arc<Rendered>| weight(k, v))
            .max_capacity(max_bytes)
            .build(),
        asked_once: Arc::new(AskedOnce::default()),
    }
}

impl RenderCache {
    /// The documents held.
    pub fn docs(&self) -> &moka::future::Cache<RenderKey, Arc<Rendered>> {
        &self.docs
    }
}

/// Fingerprints of point and route search keys asked once, in a fixed table (a fingerprint
/// overwrites whatever shared its slot). Such a search names a point or a polyline of its
/// client's own, so most are never asked again: kept from their first answer, they would fill
/// the rendered cache with documents nobody reads again (and the allocator with their
/// fragments), while one costs about 0.05 ms to build. They are kept from their second ask,
/// as a proxy cache's "minimum uses" does.
struct AskedOnce {
    slots: Box<[std::sync::atomic::AtomicU64]>,
}

/// Slots of [`AskedOnce`], as bits of a fingerprint: 2^16 slots, 512 KiB, thousands of recent
/// searches per second remembered for several seconds at least.
const ASKED_ONCE_BITS: u32 = 16;
const ASKED_ONCE_SLOTS: usize = 1 << ASKED_ONCE_BITS;

impl Default for AskedOnce {
    fn default() -> Self {
        Self { slots: (0..ASKED_ONCE_SLOTS).map(|_| std::sync::atomic::AtomicU64::new(0)).collect() }
    }
}

impl AskedOnce {
    /// Whether `key` was asked before (since its slot was last taken); remembers it either way.
    fn asked_before(&self, key: &RenderKey) -> bool {
        use std::hash::BuildHasher as _;
        static SEED: std::sync::LazyLock<std::collections::hash_map::RandomState> =
            std::sync::LazyLock::new(Default::default);
        // Never 0, the empty slot; the slot is chosen by the top bits (the lowest is always 1).
        let print = SEED.hash_one(key) | 1;
        let slot = &self.slots[(print >> (u64::BITS - ASKED_ONCE_BITS)) as usize];
        slot.swap(print, std::sync::atomic::Ordering::Relaxed) == print
    }
}

impl RenderKey {
    /// Whether the key names a client's own point or polyline (see [`AskedOnce`]).
    fn names_a_place(&self) -> bool {
        match self {
            RenderKey::Stations(q, _) | RenderKey::Station(_, q, _) => q.near.is_some() || q.route.is_some(),
            _ => false,
        }
    }
}

/// How a document was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// In the cache.
    Hit,
    /// Built and kept for the next request.
    Built,
    /// Built for this request only: a point or route search asked for the first time.
    BuiltOnce,
}

/// The document cached under `key` while it is fresh at `now` (and not due for a rebuild),
/// else the one `build` makes (concurrent misses of a key share one build; errors are not
/// cached); a point or route search's document is kept from its second ask on.
pub async fn cached<E, F>(
    cache: &RenderCache,
    key: RenderKey,
    now: Timestamp,
    build: F,
) -> Result<(Arc<Rendered>, Found), Arc<E>>
where
    E: Send + Sync + 'static,
    F: std::future::Future<Output = Result<Rendered, E>>,
{
    if let Some(hit) = cache.docs.get(&key).await {
        if now < hit.expires_at && now < hit.rebuild_at {
            return Ok((hit, Found::Hit));
        }
        cache.docs.invalidate(&key).await;
    }
    if key.names_a_place() && !cache.asked_once.asked_before(&key) {
        let doc = build.await.map_err(Arc::new)?;
        return Ok((Arc::new(doc), Found::BuiltOnce));
    }
    let entry = cache.docs.entry(key).or_try_insert_with(async { build.await.map(Arc::new) }).await?;
    let found = if entry.is_fresh() { Found::Built } else { Found::Hit };
    Ok((entry.into_value(), found))
}

impl Rendered {
    /// When this document's shared freshness runs out, and its cap, as decided at `now`.
    pub fn shared_until(&self, now: Timestamp) -> (Timestamp, i64) {
        shared_until(now, self.date, self.status == PublicationStatus::Available, self.expires_at, &[])
    }
}

/// A built representation with its header values, made at `now`.
pub fn rendered_from(repr: Representation, facts: &Facts, now: Timestamp) -> Rendered {
    let header = |text: String| HeaderValue::from_str(&text).unwrap_or(HeaderValue::from_static(""));
    let fetched_at_text = format_perth(&facts.fetched_at.to_zoned(perth()));
    Rendered {
        etags: Coding::ALL.map(|c| header(repr.etag(c))),
        source_date_header: header(facts.date.to_string()),
        fetched_at_header: header(fetched_at_text),
        repr,
        date: facts.date,
        expires_at: facts.expires_at,
        rebuild_at: now.saturating_add(REBUILD_AFTER).unwrap_or(now),
        status: facts.status,
        snapshot_cache: facts.cache,
        stored: None,
    }
}
