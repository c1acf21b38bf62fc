//! CORS preflights (every answer's CORS headers are written by `answer::apply_cors`).

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use super::answer::{ALLOW_METHODS, apply_cors};
use super::errors::{ApiError, Flavor};
use wafuel_service::cache_policy::CachePolicy;

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
    CachePolicy::NoStore.write(h);
    h.insert(
        header::VARY,
        HeaderValue::from_static("Access-Control-Request-Method, Access-Control-Request-Headers"),
    );
    response
}

/// Longest `Access-Control-Request-Headers` echoed, and most names in it: a browser asks for
/// a handful; a longer list is refused rather than copied into the answer.
pub const MAX_REQUESTED_HEADERS_LEN: usize = 512;
pub const MAX_REQUESTED_HEADERS: usize = 32;

/// A short comma list of header names (RFC 9110 tokens), possibly empty: what a preflight may
/// ask us to echo.
fn is_header_name_list(value: &[u8]) -> bool {
    if value.len() > MAX_REQUESTED_HEADERS_LEN || value.split(|&b| b == b',').count() > MAX_REQUESTED_HEADERS
    {
        return false;
    }
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    value.split(|&b| b == b',').all(|name| {
        let name = name.trim_ascii();
        name.iter().all(|&b| token(b))
    }) && (value.trim_ascii().is_empty() || value.split(|&b| b == b',').all(|n| !n.trim_ascii().is_empty()))
}
