//! The rules every request of the public port meets before anything answers it, the front
//! cache included: so an answer never depends on whether a document happened to be cached.
//!
//! - an HTTP/1.1 request names its `Host` exactly once (RFC 9112 3.2), else 400;
//! - a body: requests carry none (docs/api.md). One whose declared length is within the
//!   server's body bound is ignored; a longer one, or one of unstated length (chunked) on
//!   GET, HEAD or OPTIONS, is refused with 413 before a byte of any other answer, and the
//!   connection is closed (its body is never read);
//! - a path whose percent-escapes do not decode to UTF-8 names no route: 404, as every path
//!   that is not a route (no route or file name holds such bytes).
//!
//! Each refusal is the error catalog's JSON:API answer: `no-store`, CORS, `nosniff`.

use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, Version, header};
use axum::response::Response;

use super::errors::{ApiError, Flavor};
use crate::model::error_code::{ErrorCode, detail};

/// The metric label of requests refused here (no route was matched).
pub const REFUSED_ROUTE: &str = "unmatched";

/// The refusal of a request that breaks a rule above, or `None` to answer it.
pub fn refuse(request: &Parts, max_body_bytes: usize) -> Option<Response> {
    if request.version == Version::HTTP_11 {
        let mut hosts = request.headers.get_all(header::HOST).iter();
        if !matches!((hosts.next(), hosts.next()), (Some(_), None)) {
            return Some(
                ApiError::refused(ErrorCode::InvalidQuery, detail::HOST_REQUIRED).respond(Flavor::JsonApi),
            );
        }
    }
    if body_refused(request, max_body_bytes) {
        let mut response =
            ApiError::refused(ErrorCode::PayloadTooLarge, detail::BODY_REFUSED).respond(Flavor::JsonApi);
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        return Some(response);
    }
    if !decodes_to_utf8(request.uri.path()) {
        return Some(ApiError::not_found().respond(Flavor::JsonApi));
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

/// Whether a path's percent-escapes decode to UTF-8 (a `%` not followed by two hex digits is
/// taken as itself, as the router takes it).
fn decodes_to_utf8(path: &str) -> bool {
    if !path.contains('%') {
        return true;
    }
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        let escaped = match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => u8::try_from(hi * 16 + lo).ok(),
            _ => None,
        };
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                i += 3;
            }
            None => {
                decoded.push(bytes[i]);
                i += 1;
            }
        }
    }
    std::str::from_utf8(&decoded).is_ok()
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

    fn status(method: &str, target: &str, headers: &[(&str, &str)]) -> Option<u16> {
        refuse(&parts(method, target, Version::HTTP_11, headers), 64 * 1024).map(|r| r.status().as_u16())
    }

    #[test]
    fn host_once_on_http_1_1() {
        assert_eq!(status("GET", "/v1", &[("host", "x")]), None);
        assert_eq!(status("GET", "/v1", &[]), Some(400));
        assert_eq!(status("GET", "/v1", &[("host", "x"), ("host", "y")]), Some(400));
        let old = parts("GET", "/v1", Version::HTTP_10, &[]);
        assert!(refuse(&old, 1024).is_none(), "HTTP/1.0 needs no Host");
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
            refuse(&parts("GET", "/v1", Version::HTTP_11, &[host, ("content-length", "70000")]), 65536)
                .expect("refused");
        assert_eq!(refused.headers()["cache-control"], "no-store");
        assert_eq!(refused.headers()["connection"], "close");
        assert_eq!(refused.headers()["content-type"], "application/vnd.api+json");
    }

    #[test]
    fn paths_that_are_not_utf8_are_404() {
        let host = ("host", "x");
        for bad in ["/static/image/brand/%ff.svg", "/explore/%ff", "/v1/stations/%c3%28", "/%ed%a0%80"] {
            assert_eq!(status("GET", bad, &[host]), Some(404), "{bad}");
        }
        for ok in ["/v1", "/static/image/brand/bp.svg", "/explore/%41pp.js", "/x%2", "/caf%C3%A9", "/100%"] {
            assert_eq!(status("GET", ok, &[host]), None, "{ok}");
        }
    }
}
