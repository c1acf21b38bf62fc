//! `/`: a redirect to `/v1` with the query kept as it came, not validated.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};

use super::answer::apply_cors;
use super::cors::preflight;
use super::errors::ApiError;
use super::state::AppState;
use wafuel_service::cache_policy::CachePolicy;

/// `/`: GET (and HEAD), preflights, 405 for the rest.
pub fn methods() -> MethodRouter<Arc<AppState>> {
    get(root).options(|headers: HeaderMap| async move { preflight(&headers) }).fallback(method_not_allowed)
}

async fn method_not_allowed() -> ApiError {
    ApiError::method_not_allowed()
}

/// 302 to `/v1`.
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
    CachePolicy::NoStore.write(h);
    apply_cors(h);
    response
}
