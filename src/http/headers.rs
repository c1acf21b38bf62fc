//! Header values shared by every response of the data routes.

use axum::http::{HeaderMap, HeaderName, HeaderValue, header};

use crate::cache_policy;

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
    thread_local! {
        /// The value last made on this thread: answers within the same second share it, so a
        /// cached answer clones a header instead of formatting and allocating one.
        static LAST: std::cell::RefCell<Option<(i64, HeaderValue)>> = const { std::cell::RefCell::new(None) };
    }
    if s_maxage <= 0 {
        return HeaderValue::from_static(cache_policy::NO_STORE);
    }
    LAST.with_borrow_mut(|last| match last {
        Some((age, value)) if *age == s_maxage => value.clone(),
        _ => {
            let value = HeaderValue::from_str(&cache_policy::shared(s_maxage))
                .unwrap_or(HeaderValue::from_static(cache_policy::NO_STORE));
            *last = Some((s_maxage, value.clone()));
            value
        }
    })
}

/// A header's value as text, if it is text.
pub fn text<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::cache_control;

    #[test]
    fn cache_control_is_right_whether_or_not_the_last_value_is_reused() {
        for (age, want) in [
            (60, "public, max-age=0, s-maxage=60"),
            (60, "public, max-age=0, s-maxage=60"),
            (0, "no-store"),
            (61, "public, max-age=0, s-maxage=61"),
            (-5, "no-store"),
            (60, "public, max-age=0, s-maxage=60"),
        ] {
            assert_eq!(cache_control(age), want, "s-maxage {age}");
        }
    }
}
