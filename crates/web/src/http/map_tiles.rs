//! `GET /map/tiles/{z}/{x}/{y}`: the tiles of the deployment's own PMTiles archive
//! (`--map-pmtiles`), decompressed, with a strong ETag (the archive's size and time, and the
//! tile's place) and a day's caching. A tile place within the archive's zooms that it holds
//! no tile for (beyond its area) is 204, empty; no archive, or a place that is no tile (a zoom
//! the archive lacks, x or y past the zoom's last, anything but plain digits), is 404.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};

use super::answer::serve_bytes;
use super::errors::{ApiError, files_method_not_allowed};
use super::state::AppState;
use wafuel_service::cache_policy::CachePolicy;

pub fn methods() -> MethodRouter<Arc<AppState>> {
    get(tile).fallback(files_method_not_allowed)
}

async fn tile(
    State(state): State<Arc<AppState>>,
    method: Method,
    headers: HeaderMap,
    uri: axum::http::Uri,
    place: Result<Path<(String, String, String)>, PathRejection>,
) -> Response {
    let Some(archive) = state.map_archive.as_ref() else { return ApiError::not_found().into_response() };
    // The path as sent: a percent-encoded digit (`%31`) is no plain digit either.
    if uri.path().contains('%') {
        return ApiError::not_found().into_response();
    }
    let Ok(Path((z, x, y))) = place else { return ApiError::not_found().into_response() };
    // Digits only: `+1`, `01` or `1.png` name no tile (one URL per tile, one cache entry).
    let number = |s: &str| {
        (!s.is_empty()
            && s.len() < 11
            && s.bytes().all(|b| b.is_ascii_digit())
            && (s == "0" || !s.starts_with('0')))
        .then(|| s.parse::<u32>().ok())
        .flatten()
    };
    let (Some(z), Some(x), Some(y)) = (number(&z).and_then(|z| u8::try_from(z).ok()), number(&x), number(&y))
    else {
        return ApiError::not_found().into_response();
    };
    if !archive.has_place(z, x, y) {
        return ApiError::not_found().into_response();
    }
    let etag = format!("\"{}-{z}-{x}-{y}\"", archive.tag());
    let found = match archive.tile(z, x, y).await {
        Ok(Some(found)) => found,
        // A place of the archive's zooms beyond its area: an empty tile, not an error, so a
        // map's edges log nothing in the browser and a cache keeps the answer.
        Ok(None) => {
            let mut empty = StatusCode::NO_CONTENT.into_response();
            CachePolicy::StaticAsset.write(empty.headers_mut());
            return empty;
        }
        Err(e) => {
            tracing::warn!(error = %e, z, x, y, "map tile unreadable");
            return ApiError::not_found().into_response();
        }
    };
    serve_bytes(&found, archive.kind().content_type(), &etag, CachePolicy::StaticAsset, &method, &headers)
}
