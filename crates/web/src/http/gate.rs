//! The rules every request of the public port meets before anything answers it, the front
//! cache and the router alike: so an answer never depends on whether a document happened to
//! be cached.
//!
//! - an HTTP/1.1 request names its `Host` exactly once (RFC 9112 3.2), else 400;
//! - a request target (path and query) over the URI bound is 414, with no body (a long query
//!   within it is the query grammar's own 400);
//! - a body: requests carry none (docs/api.md). One whose declared length is within the
//!   server's body bound is ignored; a longer one, or one of unstated length (chunked) on
//!   GET, HEAD or OPTIONS, is refused with 413 before a byte of any other answer, and the
//!   connection is closed (its body is never read).
//!
//! A path whose escapes are not UTF-8 is no rule here: it matches no route but those that
//! read a name from the path, and each of those answers such a name as any other it does not
//! know (a station id: 400 `invalid_query`; a logo or explorer file: 404).
//!
//! Each refusal is `no-store`; all but the 414 are the error catalog's JSON:API answer.

use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, StatusCode, Version, header};
use axum::response::{IntoResponse, Response};

use super::errors::{ApiError, Flavor};
use wafuel_domain::error_code::{ErrorCode, detail};
use wafuel_service::cache_policy::CachePolicy;

/// The metric label of requests refused here (no route was matched).
pub const REFUSED_ROUTE: &str = "unmatched";

/// The server's bounds on a request, in bytes.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Largest body ignored.
    pub body_bytes: usize,
    /// Longest request target (path, `?` and query).
    pub uri_bytes: usize,
}

/// The refusal of a request that breaks a rule above, or `None` to answer it.
pub fn refuse(request: &Parts, bounds: Bounds) -> Option<Response> {
    if request.version == Version::HTTP_11 {
        let mut hosts = request.headers.get_all(header::HOST).iter();
        if !matches!((hosts.next(), hosts.next()), (Some(_), None)) {
            return Some(
                ApiError::refused(ErrorCode::InvalidQuery, detail::HOST_REQUIRED).respond(Flavor::JsonApi),
            );
        }
    }
    let target = request.uri.path().len() + request.uri.query().map_or(0, |q| q.len() + 1);
    if target > bounds.uri_bytes {
        let mut response = StatusCode::URI_TOO_LONG.into_response();
        CachePolicy::NoStore.write(response.headers_mut());
        return Some(response);
    }
    if body_refused(request, bounds.body_bytes) {
        let mut response =
            ApiError::refused(ErrorCode::PayloadTooLarge, detail::BODY_REFUSED).respond(Flavor::JsonApi);
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        return Some(response);
    }
    None
}

/// Whether a request's body is one the server refuses (see the module's rules).
fn body_refused(request: &Parts, max_body_bytes: usize) -> bool {
    let declared = request.headers.get(header::CONTENT_LENGTH).map(|v| {
        // hyper has already refused a malformed or conflicting length; be strict anyway.
        v.to_str().ok().and_then(|t| t.trim().parse::<u64>().ok())
    });
    match declared {
        Some(Some(length)) if length <= max_body_bytes as u64 => false,
        Some(_) => true,
        None => {
            let bodiless = matches!(request.method, Method::GET | Method::HEAD | Method::OPTIONS);
            bodiless && request.headers.contains_key(header::TRANSFER_ENCODING)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(method: &str, target: &str, version: Version, headers: &[(&str, &str)]) -> Parts {
        let mut builder = axum::http::Request::builder().method(method).uri(target).version(version);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.body(()).expect("request").into_parts().0
    }

    const BOUNDS: Bounds = Bounds { body_bytes: 64 * 1024, uri_bytes: 16 * 1024 };

    fn status(method: &str, target: &str, headers: &[(&str, &str)]) -> Option<u16> {
        refuse(&parts(method, target, Version::HTTP_11, headers), BOUNDS).map(|r| r.status().as_u16())
    }

    #[test]
    fn host_once_on_http_1_1() {
        assert_eq!(status("GET", "/v1", &[("host", "x")]), None);
        assert_eq!(status("GET", "/v1", &[]), Some(400));
        assert_eq!(status("GET", "/v1", &[("host", "x"), ("host", "y")]), Some(400));
        let old = parts("GET", "/v1", Version::HTTP_10, &[]);
        assert!(refuse(&old, BOUNDS).is_none(), "HTTP/1.0 needs no Host");
    }

    #[test]
    fn bodies_within_the_bound_are_ignored_others_refused() {
        let host = ("host", "x");
        assert_eq!(status("GET", "/v1", &[host, ("content-length", "5")]), None);
        assert_eq!(status("GET", "/v1", &[host, ("content-length", "65536")]), None);
        assert_eq!(status("GET", "/v1", &[host, ("content-length", "65537")]), Some(413));
        assert_eq!(status("HEAD", "/v1", &[host, ("transfer-encoding", "chunked")]), Some(413));
        assert_eq!(
            status("POST", "/v1", &[host, ("transfer-encoding", "chunked")]),
            None,
            "405 from the router"
        );
        assert_eq!(status("POST", "/v1", &[host, ("content-length", "99999999")]), Some(413));
        let refused =
            refuse(&parts("GET", "/v1", Version::HTTP_11, &[host, ("content-length", "70000")]), BOUNDS)
                .expect("refused");
        assert_eq!(refused.headers()["cache-control"], "no-store");
        assert_eq!(refused.headers()["connection"], "close");
        assert_eq!(refused.headers()["content-type"], "application/vnd.api+json");
    }

    #[test]
    fn targets_over_the_uri_bound_are_414() {
        let host = ("host", "x");
        let at_bound = format!("/v1?suburb={}", "a".repeat(16 * 1024 - 11));
        assert_eq!(at_bound.len(), 16 * 1024);
        assert_eq!(status("GET", &at_bound, &[host]), None, "the query grammar answers it");
        let over = format!("{at_bound}a");
        let refused = refuse(&parts("GET", &over, Version::HTTP_11, &[host]), BOUNDS).expect("refused");
        assert_eq!(refused.status(), StatusCode::URI_TOO_LONG);
        assert_eq!(refused.headers()["cache-control"], "no-store");
    }
}
