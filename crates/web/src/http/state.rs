//! What every handler shares.

use std::sync::Arc;

use super::front::FrontCache;
use super::rendered::RenderCache;
use wafuel_domain::documents::DocumentMeta;
use wafuel_service::catalog::Catalog;
use wafuel_service::catalog::events::EventHub;

/// The application state behind the public router.
#[derive(Clone)]
pub struct AppState {
    /// Day catalogs, provider profiles and history in memory: where documents get their data.
    pub catalog: Arc<Catalog>,
    pub rendered: RenderCache,
    pub meta: Arc<DocumentMeta>,
    /// Absolute origin for redirects; relative `Location` when unset.
    pub public_origin: Option<url::Url>,
    /// Request target → finished document, in front of the rendered cache.
    pub front: Arc<FrontCache>,
    /// `/v1/events`: this replica's fan-out of the store's events.
    pub events: Arc<EventHub>,
    /// `/explore`: the page for this deployment's base map, and its headers.
    pub explorer: Arc<super::explore_page::Explorer>,
    /// `/map/tiles`: the deployment's own map archive (`--map-pmtiles`), if any.
    pub map_archive: Option<Arc<wafuel_service::map_tiles::MapArchive>>,
}
