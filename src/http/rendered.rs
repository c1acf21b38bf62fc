//! The rendered-response cache: each document is built once per snapshot set and expand
//! set, with its encodings and validators, and shared by every request until its snapshots
//! expire. Concurrent identical misses wait for one build.

use std::sync::Arc;

use jiff::Timestamp;
use jiff::civil::Date;

use crate::model::station::Quote;
use crate::query::{Expand, Mode, Route, Selection};
use crate::render::representation::Representation;
use crate::render::{DocumentMeta, PublicationStatus, jsonapi, legacy};
use crate::snapshot::{PriceService, SelectionData, SnapshotCache};
use crate::source::SourceError;
use crate::time::{Day, format_perth, perth, tomorrow_published};

/// What a cache entry is keyed on: the document's data and its representation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RenderKey {
    pub route: Route,
    pub data: String,
    pub expand: Expand,
}

impl RenderKey {
    pub fn of(selection: &Selection) -> Self {
        Self { route: selection.route, data: selection.data_key(), expand: selection.expand }
    }
}

/// A built document and what its headers need.
#[derive(Debug)]
pub struct Rendered {
    pub repr: Representation,
    pub date: Date,
    pub fetched_at: Timestamp,
    pub fetched_at_text: String,
    pub expires_at: Timestamp,
    pub status: PublicationStatus,
    pub snapshot_cache: SnapshotCache,
}

/// Bounded by weight (document bytes), so memory stays flat whatever the query mix.
pub type RenderCache = moka::future::Cache<RenderKey, Arc<Rendered>>;

pub fn new_cache(max_bytes: u64) -> RenderCache {
    moka::future::Cache::builder()
        .weigher(|_k: &RenderKey, v: &Arc<Rendered>| {
            let bytes = v.repr.identity.len() + v.repr.gzip.len() + v.repr.br.len();
            u32::try_from(bytes).unwrap_or(u32::MAX)
        })
        .max_capacity(max_bytes)
        .build()
}

/// The rendered document for a selection, and whether it came from the cache.
pub async fn rendered(
    cache: &RenderCache,
    prices: &Arc<PriceService>,
    meta: &DocumentMeta,
    selection: &Selection,
) -> Result<(Arc<Rendered>, bool), Arc<SourceError>> {
    let key = RenderKey::of(selection);
    let now = prices.clock().now();
    if let Some(hit) = cache.get(&key).await {
        if now < hit.expires_at {
            return Ok((hit, true));
        }
        cache.invalidate(&key).await;
    }
    let entry = cache
        .entry(key)
        .or_try_insert_with(async {
            let data = prices.selection(selection).await?;
            Ok::<_, SourceError>(Arc::new(build(selection, &data, meta, prices.clock().now())))
        })
        .await?;
    let fresh = entry.is_fresh();
    Ok((entry.into_value(), !fresh))
}

/// Filter, order and render a selection's quotes.
pub fn build(selection: &Selection, data: &SelectionData, meta: &DocumentMeta, now: Timestamp) -> Rendered {
    let catalogue = selection.mode() == Mode::Catalogue;
    let mut quotes: Vec<&Quote> = data
        .quotes()
        .filter(|q| {
            !catalogue
                || (selection.brands.as_ref().is_none_or(|b| b.contains(&q.station.brand))
                    && (selection.surrounding != Some(false) || selection.suburb_matches(&q.station.suburb)))
        })
        .collect();
    let status = if !quotes.is_empty() {
        PublicationStatus::Available
    } else if selection.day == Day::Tomorrow && !tomorrow_published(now) {
        PublicationStatus::NotYetPublished
    } else {
        PublicationStatus::Empty
    };
    let date = selection.date.to_string();
    let identity = match selection.route {
        Route::V1 => jsonapi::render(&jsonapi::PriceDocument {
            selection,
            quotes: &quotes,
            fetched_at: data.fetched_at,
            status,
            meta,
        }),
        Route::Legacy => {
            let one_request = data.snapshots.len() == 1 && selection.combinations() == 1;
            if !one_request {
                quotes.sort_by(|a, b| {
                    a.product
                        .cmp(&b.product)
                        .then_with(|| a.price.total_cmp(&b.price))
                        .then_with(|| a.station.key.cmp(&b.station.key))
                });
            }
            legacy::render(&quotes, &date, selection.products.len() > 1)
        }
    };
    Rendered {
        repr: Representation::build(identity),
        date: selection.date,
        fetched_at: data.fetched_at,
        fetched_at_text: format_perth(&data.fetched_at.to_zoned(perth())),
        expires_at: data.expires_at,
        status,
        snapshot_cache: data.cache,
    }
}
