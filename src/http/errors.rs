//! The HTTP layer's one error type and its responses (docs/api.md "Errors").

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::headers::{ALLOW_METHODS, apply_cors};
use crate::error_code::{ErrorCode, detail};
use crate::query::QueryError;
use crate::render::errors::{jsonapi_error, legacy_error};
use crate::source::SourceError;

/// Which error body a route uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// `{"jsonapi":…,"errors":[…]}`: `/v1` and every path that is not `/legacy`.
    JsonApi,
    /// `{"error":{"code","message"}}`
    Legacy,
    /// No body (preflight failures).
    Empty,
}

/// A failed request: code, safe text, and the headers some codes carry.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: ErrorCode,
    pub detail: &'static str,
    pub retry_after: Option<u32>,
    pub flavor: Flavor,
}

impl ApiError {
    pub fn new(code: ErrorCode, detail: &'static str, flavor: Flavor) -> Self {
        Self { code, detail, retry_after: None, flavor }
    }

    pub fn not_found(flavor: Flavor) -> Self {
        Self::new(ErrorCode::NotFound, detail::NOT_FOUND, flavor)
    }

    pub fn method_not_allowed(flavor: Flavor) -> Self {
        Self::new(ErrorCode::MethodNotAllowed, detail::METHOD_NOT_ALLOWED, flavor)
    }

    pub fn query(e: &QueryError, flavor: Flavor) -> Self {
        Self::new(ErrorCode::InvalidQuery, e.detail, flavor)
    }

    pub fn source(e: &SourceError, flavor: Flavor) -> Self {
        Self { retry_after: e.retry_after, ..Self::new(e.code, e.detail, flavor) }
    }

    /// A query that cannot even be carried into a header.
    pub fn query_text(flavor: Flavor) -> Self {
        Self::new(ErrorCode::InvalidQuery, detail::INVALID_QUERY, flavor)
    }

    pub fn internal(flavor: Flavor) -> Self {
        Self::new(ErrorCode::InternalError, detail::INTERNAL_ERROR, flavor)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let (content_type, body) = match self.flavor {
            Flavor::JsonApi => ("application/vnd.api+json", jsonapi_error(self.code, self.detail)),
            Flavor::Legacy => ("application/json", legacy_error(self.code, self.detail)),
            Flavor::Empty => ("", Vec::new()),
        };
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = status;
        let h = response.headers_mut();
        if !content_type.is_empty() {
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        }
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static(crate::cache_policy::NO_STORE));
        h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        apply_cors(h);
        if self.code == ErrorCode::MethodNotAllowed {
            h.insert(header::ALLOW, HeaderValue::from_static(ALLOW_METHODS));
        }
        let retry_after = match self.code {
            ErrorCode::CacheRefreshBusy => Some(self.retry_after.unwrap_or(2)),
            _ => self.retry_after,
        };
        if let Some(secs) = retry_after {
            h.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}
