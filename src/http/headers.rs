//! Header values shared by every response of the data routes.

use axum::http::{HeaderMap, HeaderName, HeaderValue, header};

pub const ALLOW_METHODS: &str = "GET, HEAD, OPTIONS";
pub const EXPOSE_HEADERS: &str =
    "ETag, Retry-After, X-Fuel-Cache, X-Fuel-Snapshot-Cache, X-Fuel-Source-Date, X-Fuel-Fetched-At";

pub const X_FUEL_CACHE: HeaderName = HeaderName::from_static("x-fuel-cache");
pub const X_FUEL_SNAPSHOT_CACHE: HeaderName = HeaderName::from_static("x-fuel-snapshot-cache");
pub const X_FUEL_SOURCE_DATE: HeaderName = HeaderName::from_static("x-fuel-source-date");
pub const X_FUEL_FETCHED_AT: HeaderName = HeaderName::from_static("x-fuel-fetched-at");

/// Public CORS: any origin, our methods, and the headers clients may read.
pub fn apply_cors(h: &mut HeaderMap) {
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(ALLOW_METHODS));
    h.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSE_HEADERS));
}

/// `Cache-Control` for a rendered response that may be kept `s_maxage` seconds.
pub fn cache_control(s_maxage: i64) -> HeaderValue {
    if s_maxage <= 0 {
        HeaderValue::from_static("no-store")
    } else {
        HeaderValue::from_str(&format!("public, max-age=0, s-maxage={s_maxage}"))
            .unwrap_or(HeaderValue::from_static("no-store"))
    }
}

/// A header's value as text, if it is text.
pub fn text<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}
