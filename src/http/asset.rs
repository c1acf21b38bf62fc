//! Files built into the binary (brand logos, the explorer page): GET and HEAD with a strong
//! ETag per coding, gzip or brotli as `Accept-Encoding` allows, `If-None-Match` → 304, and
//! 405 for any other method.

use super::conditional::if_none_match_matches;
use super::errors::ApiError;
use crate::render::asset::Asset;
use crate::render::representation::negotiate_encoding;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The response to `method` for `asset`, with `extra` headers on every answer but 405.
pub fn serve(
    asset: &Asset,
    method: &Method,
    headers: &HeaderMap,
    extra: &[(HeaderName, &'static str)],
) -> Response {
    let coding = negotiate_encoding(headers.get(header::ACCEPT_ENCODING).and_then(|v| v.to_str().ok()));
    let etag = asset.etag(coding);
    let not_modified = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|inm| if_none_match_matches(inm, etag));
    let body = asset.repr.body(coding);
    let mut response = if not_modified || *method == Method::HEAD {
        Response::new(Body::empty())
    } else {
        Response::new(Body::from(body.clone()))
    };
    if not_modified {
        *response.status_mut() = StatusCode::NOT_MODIFIED;
    }
    let h = response.headers_mut();
    if !not_modified {
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
        if let Some(encoding) = coding.header() {
            h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding));
        }
    }
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(asset.cache_control));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    for (name, value) in extra {
        h.insert(name.clone(), HeaderValue::from_static(value));
    }
    response
}

/// 405 with `Allow: GET, HEAD`: files are only read.
pub async fn method_not_allowed() -> Response {
    let mut r = ApiError::method_not_allowed().into_response();
    r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    r
}
