//! The public routes, described once: the router, the front-cache dispatch and the metric
//! labels are all derived from [`PUBLIC`] (the labels are the router's own path patterns).

use std::sync::{Arc, LazyLock};

use axum::Router;
use axum::http::request::Parts;
use axum::response::Response;
use axum::routing::MethodRouter;

use super::documents as doc;
use super::endpoint::{Endpoint, front, methods};
use super::errors::ApiError;
use super::state::AppState;

pub use super::paths::*;

/// An answer from the front cache, before the router, or `None` for the router.
type FrontFn = fn(&AppState, &Parts) -> Option<Response>;

/// One public route: its path pattern, its handlers by method (with the 405 fallback), and,
/// for a document endpoint, its front-cache answer.
pub struct PublicRoute {
    pub path: &'static str,
    pub methods: fn() -> MethodRouter<Arc<AppState>>,
    pub front: Option<FrontFn>,
}

impl PublicRoute {
    /// A document endpoint: everything derived from its description.
    const fn document<E: Endpoint>() -> Self {
        Self { path: E::PATH, methods: methods::<E>, front: Some(front::<E>) }
    }

    const fn other(path: &'static str, methods: fn() -> MethodRouter<Arc<AppState>>) -> Self {
        Self { path, methods, front: None }
    }
}

/// Every public route, in the order metrics list them.
pub const PUBLIC: [PublicRoute; 18] = [
    PublicRoute::other(ROOT, super::root::methods),
    PublicRoute::document::<doc::V1>(),
    PublicRoute::document::<doc::Legacy>(),
    PublicRoute::document::<doc::Stations>(),
    PublicRoute::document::<doc::Station>(),
    PublicRoute::document::<doc::History>(),
    PublicRoute::document::<doc::Stats>(),
    PublicRoute::document::<doc::Brands>(),
    PublicRoute::document::<doc::Status>(),
    PublicRoute::document::<doc::Forecast>(),
    PublicRoute::document::<doc::ForecastRecord>(),
    PublicRoute::document::<doc::StationForecast>(),
    PublicRoute::document::<doc::Wholesale>(),
    PublicRoute::other(EVENTS, super::events::methods),
    PublicRoute::other(LOGO, super::logos::methods),
    PublicRoute::other(EXPLORE, super::explore::page_methods),
    PublicRoute::other(EXPLORE_FILE, super::explore::file_methods),
    PublicRoute::other(MAP_TILE, super::map_tiles::methods),
];

/// The public path patterns, in [`PUBLIC`]'s order.
pub const PUBLIC_PATHS: [&str; PUBLIC.len()] = {
    let mut paths = [""; PUBLIC.len()];
    let mut i = 0;
    while i < PUBLIC.len() {
        paths[i] = PUBLIC[i].path;
        i += 1;
    }
    paths
};

/// Request path → front-cache answer of its document endpoint, matched as the router
/// matches (the same patterns).
static FRONT: LazyLock<matchit::Router<(&'static str, FrontFn)>> = LazyLock::new(|| {
    let mut router = matchit::Router::new();
    for route in &PUBLIC {
        if let Some(front) = route.front {
            // The patterns are constants the axum router accepts too; a conflict is a bug
            // caught by the first test that builds the router.
            let inserted = router.insert(route.path, (route.path, front));
            debug_assert!(inserted.is_ok(), "{}: {inserted:?}", route.path);
        }
    }
    router
});

/// The answer to a request the front cache can give as it stands, with its route (as
/// [`router`] names it, for metrics), or `None` for the router. Called before the router and
/// the request limits (`app::public_site`): a finished document needs no routing, timeout or
/// concurrency slot. Each document endpoint judges method and media first, as its handler
/// would, so every other answer, errors included, comes from the router unchanged; an entry
/// is only ever stored by its own route, and a target in the front cache passed the URI
/// bound when it was stored.
pub fn front_first(state: &AppState, request: &Parts) -> Option<(&'static str, Response)> {
    let (path, front) = *FRONT.at(request.uri.path()).ok()?.value;
    Some((path, front(state, request)?))
}

/// The public router: every route of [`PUBLIC`] with its handlers by method.
pub fn router(state: AppState) -> Router {
    PUBLIC
        .iter()
        .fold(Router::new(), |router, route| router.route(route.path, (route.methods)()))
        .fallback(|| async { ApiError::not_found() })
        // Shared behind one Arc: handlers clone a pointer per request, not the fields.
        .with_state(Arc::new(state))
}
