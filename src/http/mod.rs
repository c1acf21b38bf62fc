//! The public HTTP surface: exactly the routes of docs/api.md, and 404 for everything else.

pub mod answer;
pub mod asset;
pub mod conditional;
pub mod documents;
pub mod endpoint;
pub mod errors;
pub mod events;
pub mod explore;
pub mod front;
pub mod headers;
pub mod negotiate;
pub mod paths;
pub mod rendered;
pub mod routes;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};

use crate::error_code::detail;
use crate::model::documents::DocumentMeta;
use crate::render::logos;
use crate::snapshot::PriceService;
use errors::{ApiError, Flavor};
use headers::{ALLOW_METHODS, apply_cors};
use rendered::RenderCache;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub prices: Arc<PriceService>,
    /// Day catalogues and provider profiles in memory: where documents get their data.
    pub catalog: Arc<crate::catalog::Catalog>,
    pub rendered: RenderCache,
    pub meta: Arc<DocumentMeta>,
    /// Absolute origin for redirects; relative `Location` when unset.
    pub public_origin: Option<url::Url>,
    /// Request target → finished document, in front of the rendered cache.
    pub front: Arc<front::FrontCache>,
    /// `/v1/events`: this replica's fan-out of the store's events.
    pub events: Arc<crate::catalog::events::EventHub>,
}

/// The answer to a request the front cache can give as it stands, with its route (as
/// `router` names it, for metrics), or `None` for the router. Called before the router and
/// the request limits (`app::public_site`): a finished document needs no routing, timeout or
/// concurrency slot. Each document endpoint judges method and media first, as its handler
/// would, so every other answer, errors included, comes from the router unchanged; an entry
/// is only ever stored by its own route, and a target in the front cache passed the URI
/// bound when it was stored.
pub fn front_first(
    state: &AppState,
    request: &axum::http::request::Parts,
) -> Option<(&'static str, Response)> {
    routes::front_answer(state, request)
}

/// The public router: every route of [`routes::PUBLIC`] with its handlers by method.
pub fn router(state: AppState) -> Router {
    routes::PUBLIC
        .iter()
        .fold(Router::new(), |router, route| router.route(route.path, (route.methods)()))
        .fallback(|| async { ApiError::not_found() })
        // Shared behind one Arc: handlers clone a pointer per request, not the fields.
        .with_state(Arc::new(state))
}

/// `/`: GET (and HEAD), preflights, 405 for the rest.
fn root_methods() -> MethodRouter<Arc<AppState>> {
    get(root).options(|headers: HeaderMap| async move { preflight(&headers) }).fallback(method_not_allowed)
}

async fn method_not_allowed() -> ApiError {
    ApiError::method_not_allowed()
}

/// `/`: 302 to `/v1` with the query kept as it came, not validated.
async fn root(State(state): State<Arc<AppState>>, RawQuery(query): RawQuery) -> Response {
    let mut location = match &state.public_origin {
        Some(origin) => format!("{}/v1", origin.as_str().trim_end_matches('/')),
        None => "/v1".to_string(),
    };
    if let Some(q) = query {
        location.push('?');
        location.push_str(&q);
    }
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::FOUND;
    let h = response.headers_mut();
    match HeaderValue::from_str(&location) {
        Ok(v) => {
            h.insert(header::LOCATION, v);
        }
        Err(_) => return ApiError::query_text().into_response(),
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(crate::cache_policy::NO_STORE));
    apply_cors(h);
    response
}

/// CORS preflight: 204 with our methods and the requested headers echoed, or 405 (no body)
/// when the requested method is not ours. Reads no prices.
pub fn preflight(headers: &HeaderMap) -> Response {
    // Present but not one of ours (an empty value included): the preflight fails.
    if let Some(requested) = headers.get(header::ACCESS_CONTROL_REQUEST_METHOD) {
        let ok = matches!(requested.as_bytes(), b"GET" | b"HEAD" | b"OPTIONS");
        if !ok {
            let mut r = ApiError::method_not_allowed().respond(Flavor::Empty);
            r.headers_mut().insert(header::ALLOW, HeaderValue::from_static(ALLOW_METHODS));
            return r;
        }
    }
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::NO_CONTENT;
    let h = response.headers_mut();
    apply_cors(h);
    h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
    if let Some(requested) = headers.get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
        if !is_header_name_list(requested.as_bytes()) {
            return ApiError::query_text().respond(Flavor::Empty);
        }
        h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, requested.clone());
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(crate::cache_policy::NO_STORE));
    h.insert(
        header::VARY,
        HeaderValue::from_static("Access-Control-Request-Method, Access-Control-Request-Headers"),
    );
    response
}

/// A comma list of header names (RFC 9110 tokens), possibly empty: what a preflight may ask
/// us to echo.
fn is_header_name_list(value: &[u8]) -> bool {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    value.split(|&b| b == b',').all(|name| {
        let name = name.trim_ascii();
        name.iter().all(|&b| token(b))
    }) && (value.trim_ascii().is_empty() || value.split(|&b| b == b',').all(|n| !n.trim_ascii().is_empty()))
}

/// Brand logos: GET (and HEAD) only, as every built-in file.
fn logo_methods() -> MethodRouter<Arc<AppState>> {
    get(logo).fallback(asset::method_not_allowed)
}

/// `/static/image/brand/{filename}`: our SVG badges, exact file names only.
async fn logo(method: Method, headers: HeaderMap, Path(filename): Path<String>) -> Response {
    let Some(found) = logos::find(&filename) else {
        return ApiError::refused(crate::error_code::ErrorCode::NotFound, detail::IMAGE_NOT_FOUND)
            .into_response();
    };
    asset::serve(found, &method, &headers, &[(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")])
}
