//! `/explore`: a price explorer page for people. Plain HTML, CSS and JavaScript written for
//! this service and built into the binary ([`super::explore_page`]); it reads only the public
//! API, like any client.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};

use super::answer::serve_file;
use super::errors::{ApiError, files_method_not_allowed as method_not_allowed};
use super::explore_page::file as built_in;
use super::state::AppState;
use wafuel_service::cache_policy::CachePolicy;

/// The page and its files: GET (and HEAD) only.
pub fn page_methods() -> MethodRouter<Arc<AppState>> {
    get(page).fallback(method_not_allowed)
}

pub fn file_methods() -> MethodRouter<Arc<AppState>> {
    get(file).fallback(method_not_allowed)
}

/// `GET /explore`: the page.
pub async fn page(State(state): State<Arc<AppState>>, method: Method, headers: HeaderMap) -> Response {
    let explorer = &state.explorer;
    // Short: a new release's page (and so its file versions) reaches browsers within minutes.
    serve_file(&explorer.page, CachePolicy::Page, &method, &headers, &explorer.headers)
}

/// `GET /explore/{file}`: its script and style sheet, Leaflet and the tile layer, and
/// `map.json`. A name that is not text (escapes that are not UTF-8) names no file either.
pub async fn file(
    State(state): State<Arc<AppState>>,
    method: Method,
    headers: HeaderMap,
    name: Result<Path<String>, PathRejection>,
) -> Response {
    let explorer = &state.explorer;
    let Ok(Path(name)) = name else { return ApiError::not_found().into_response() };
    if name == "map.json" {
        return serve_file(&explorer.map, CachePolicy::Page, &method, &headers, &explorer.headers);
    }
    match built_in(name.as_str()) {
        Some(found) => serve_file(found, CachePolicy::StaticAsset, &method, &headers, &explorer.headers),
        None => ApiError::not_found().into_response(),
    }
}
