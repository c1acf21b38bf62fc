//! `/v1` and `/legacy`: negotiation, query rules, the rendered cache, conditional requests.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{Method, header};
use axum::response::{IntoResponse, Response};

use super::errors::{ApiError, Flavor};
use super::front::{Freshness, ServedAs, from_front, remember_and_respond};
use super::headers::*;
use super::negotiate::{Media, accepts_json_api, unsupported_content_type};
use super::rendered::rendered;
use super::{AppState, preflight};
use crate::error_code::{ErrorCode, detail};
use crate::query::{Route, parse_selection};

pub async fn v1(State(state): State<Arc<AppState>>, request: Request) -> Response {
    prices(&state, Route::V1, &request.into_parts().0).await
}

pub async fn legacy(State(state): State<Arc<AppState>>, request: Request) -> Response {
    prices(&state, Route::Legacy, &request.into_parts().0).await
}

/// Method, `Content-Type` and `Accept` checks of `/v1` and `/legacy`, before anything else;
/// `Err` is the answer. Both have one representation each (their paths keep their front-cache
/// entries apart).
fn preamble(route: Route, request: &Parts) -> Result<Media, Box<Response>> {
    let (method, headers) = (&request.method, &request.headers);
    let flavor = if route == Route::V1 { Flavor::JsonApi } else { Flavor::Legacy };
    match *method {
        Method::GET | Method::HEAD => {}
        Method::OPTIONS => return Err(Box::new(preflight(headers))),
        _ => return Err(Box::new(ApiError::method_not_allowed(flavor).into_response())),
    }
    if route == Route::V1 {
        if unsupported_content_type(text(headers, &header::CONTENT_TYPE)) {
            let e = ApiError::new(ErrorCode::UnsupportedMediaType, detail::UNSUPPORTED_MEDIA_TYPE, flavor);
            return Err(Box::new(e.into_response()));
        }
        if !accepts_json_api(text(headers, &header::ACCEPT)) {
            let e = ApiError::new(ErrorCode::NotAcceptable, detail::NOT_ACCEPTABLE, flavor);
            return Err(Box::new(e.into_response()));
        }
    }
    Ok(Media::JsonApi)
}

async fn prices(state: &AppState, route: Route, request: &Parts) -> Response {
    let flavor = if route == Route::V1 { Flavor::JsonApi } else { Flavor::Legacy };
    let media = match preamble(route, request) {
        Ok(m) => m,
        Err(r) => return *r,
    };
    let now = state.prices.clock().now();
    if let Some(r) = from_front(state, request, media, now) {
        return r;
    }
    let selection = match parse_selection(route, request.uri.query().unwrap_or(""), now) {
        Ok(s) => s,
        Err(e) => {
            tracing::debug!(reason = %e.reason, "invalid query");
            return ApiError::query(&e, flavor).into_response();
        }
    };
    let (doc, cache_hit) = match rendered(&state.rendered, &state.catalog, &state.meta, &selection).await {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!(code = e.code.as_str(), reason = %e.reason, "source selection failed");
            return ApiError::source(&e, flavor).into_response();
        }
    };

    let served = ServedAs {
        media: if route == Route::V1 { "application/vnd.api+json" } else { "application/json" },
        vary: if route == Route::V1 { "Accept, Accept-Encoding" } else { "Accept-Encoding" },
        freshness: Freshness::Prices,
    };
    remember_and_respond(state, request, media, (&doc, cache_hit), served, now)
}

/// `/v1` or `/legacy` from the front cache, after the same preamble (see `http::front_first`).
pub fn front_first(state: &AppState, route: Route, request: &Parts) -> Option<Response> {
    let media = preamble(route, request).ok()?;
    from_front(state, request, media, state.prices.clock().now())
}
