//! The HTTP layer's one error type and its responses (docs/api.md "Errors").
//!
//! Every failure a request can meet converts into [`ApiError`] (`?` in the endpoint
//! pipeline), and [`ApiError::respond`] is the one place that decides its status, code,
//! detail text, `Retry-After` and log line: the same condition answers the same everywhere.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::answer::{ALLOW_METHODS, apply_cors};
use crate::render::RenderError;
use crate::render::errors::{jsonapi_error, legacy_error};
use std::borrow::Cow;
use wafuel_domain::error_code::{ErrorCode, detail};
use wafuel_domain::forecast::NoForecast;
use wafuel_query::QueryError;
use wafuel_service::cache_policy::CachePolicy;
use wafuel_service::catalog::CatalogError;

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

/// A failed request, with its cause.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The query breaks a rule; nothing was read or fetched. The answer says which rule and
    /// names the parameter (`errors[].source.parameter`).
    #[error("invalid query: {}", .0.reason)]
    Query(#[from] QueryError),
    /// The same on `/v1` and `/legacy`, whose answers keep the reference's own texts (their
    /// clients match them) and gain nothing.
    #[error("invalid query: {}", .0.reason)]
    ReferenceQuery(QueryError),
    /// A document's data could not be had (prices, history, a station).
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// A document could not be written (never expected: bugs, not input).
    #[error("the document could not be written")]
    Render(#[from] RenderError),
    /// One build's failure, shared by every request that waited for that build.
    #[error(transparent)]
    Shared(#[from] Arc<ApiError>),
    /// Refused by the HTTP layer itself: method, media, path, load.
    #[error("{code:?}: {detail}")]
    Refused { code: ErrorCode, detail: Cow<'static, str>, retry_after: Option<u32> },
}

impl ApiError {
    pub fn refused(code: ErrorCode, detail: impl Into<Cow<'static, str>>) -> Self {
        Self::Refused { code, detail: detail.into(), retry_after: None }
    }

    pub fn not_found() -> Self {
        Self::refused(ErrorCode::NotFound, detail::NOT_FOUND)
    }

    pub fn method_not_allowed() -> Self {
        Self::refused(ErrorCode::MethodNotAllowed, detail::METHOD_NOT_ALLOWED)
    }

    /// A query that cannot even be carried into a header, or a malformed path parameter.
    pub fn query_text() -> Self {
        Self::refused(ErrorCode::InvalidQuery, detail::INVALID_QUERY)
    }

    /// Too many requests in flight: retry in a second.
    pub fn overloaded() -> Self {
        Self::Refused {
            code: ErrorCode::UpstreamUnavailable,
            detail: Cow::Borrowed(detail::OVERLOADED),
            retry_after: Some(1),
        }
    }

    /// The parameter an error names, when it names one.
    fn parameter(&self) -> Option<&str> {
        match self {
            Self::Query(e) => e.parameter.as_deref(),
            Self::Shared(e) => e.parameter(),
            _ => None,
        }
    }

    /// The error catalog's code, the safe text and `Retry-After` for this failure.
    fn public(&self) -> (ErrorCode, &str, Option<u32>) {
        match self {
            Self::Query(e) => (ErrorCode::InvalidQuery, e.reason.as_str(), None),
            Self::ReferenceQuery(e) => (ErrorCode::InvalidQuery, e.detail, None),
            Self::Catalog(CatalogError::Prices { code, detail, retry_after, .. }) => {
                (*code, detail, *retry_after)
            }
            // History and statistics have no other source than the history store.
            Self::Catalog(CatalogError::Store(_)) => {
                (ErrorCode::UpstreamUnavailable, detail::HISTORY_UNAVAILABLE, Some(5))
            }
            Self::Catalog(CatalogError::NotFound) => (ErrorCode::NotFound, detail::STATION_NOT_FOUND, None),
            Self::Catalog(CatalogError::NotSold(text) | CatalogError::ShortHistory(text)) => {
                (ErrorCode::NotFound, text.as_str(), None)
            }
            Self::Catalog(CatalogError::NoForecast(NoForecast::TooLittleHistory)) => {
                (ErrorCode::NotFound, detail::TOO_LITTLE_HISTORY, None)
            }
            Self::Catalog(CatalogError::NoForecast(NoForecast::NoRecentPrice)) => {
                (ErrorCode::NotFound, detail::NO_RECENT_PRICE, None)
            }
            Self::Render(_) => (ErrorCode::InternalError, detail::INTERNAL_ERROR, None),
            Self::Refused { code, detail, retry_after } => (*code, detail.as_ref(), *retry_after),
            Self::Shared(e) => e.public(),
        }
    }

    /// Log the cause: client mistakes quietly, failures of ours or upstream loudly.
    fn log(&self) {
        match self {
            Self::Query(e) | Self::ReferenceQuery(e) => tracing::debug!(reason = %e.reason, "invalid query"),
            Self::Catalog(CatalogError::Prices { code, reason, .. }) => {
                tracing::warn!(code = code.as_str(), reason = %reason, "source selection failed")
            }
            Self::Catalog(
                CatalogError::NotFound
                | CatalogError::NotSold(_)
                | CatalogError::NoForecast(_)
                | CatalogError::ShortHistory(_),
            )
            | Self::Refused { .. } => {}
            Self::Catalog(e) => tracing::warn!(error = %e, "history store unavailable"),
            Self::Render(e) => tracing::error!(error = %e, "document could not be written"),
            Self::Shared(e) => e.log(),
        }
    }

    /// The answer in a route's error body.
    pub fn respond(&self, flavor: Flavor) -> Response {
        self.log();
        let (code, detail, retry_after) = self.public();
        let status = StatusCode::from_u16(crate::render::errors::status(code))
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let (content_type, body) = match flavor {
            Flavor::JsonApi => ("application/vnd.api+json", jsonapi_error(code, detail, self.parameter())),
            Flavor::Legacy => ("application/json", legacy_error(code, detail)),
            Flavor::Empty => ("", Vec::new()),
        };
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = status;
        let h = response.headers_mut();
        if !content_type.is_empty() {
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        }
        CachePolicy::NoStore.write(h);
        h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        apply_cors(h);
        if code == ErrorCode::MethodNotAllowed {
            h.insert(header::ALLOW, HeaderValue::from_static(ALLOW_METHODS));
        }
        let retry_after = match code {
            ErrorCode::CacheRefreshBusy => Some(retry_after.unwrap_or(2)),
            _ => retry_after,
        };
        if let Some(secs) = retry_after {
            h.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// 405 with `Allow: GET, HEAD`: files built into the binary are only read.
pub async fn files_method_not_allowed() -> Response {
    let mut r = ApiError::method_not_allowed().into_response();
    r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    r
}

/// Outside the document endpoints (fallbacks, assets, the server's own limits) errors are
/// JSON:API documents.
impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        self.respond(Flavor::JsonApi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status_and_retry(e: ApiError) -> (u16, Option<String>) {
        let r = e.respond(Flavor::JsonApi);
        let retry = r.headers().get(header::RETRY_AFTER).map(|v| v.to_str().unwrap_or("").to_string());
        (r.status().as_u16(), retry)
    }

    #[test]
    fn the_same_condition_gives_the_same_status_wherever_it_comes_from() {
        // An unavailable origin, directly and as a shared build's failure (tests/api/catalog.rs
        // makes the history store fail for real).
        let failing = || CatalogError::Prices {
            code: ErrorCode::UpstreamUnavailable,
            detail: "",
            retry_after: Some(5),
            reason: String::new(),
        };
        assert_eq!(status_and_retry(ApiError::from(failing())), (503, Some("5".into())));
        let shared = ApiError::from(Arc::new(ApiError::from(failing())));
        assert_eq!(status_and_retry(shared), (503, Some("5".into())), "a shared build failure alike");
        assert_eq!(status_and_retry(ApiError::from(CatalogError::NotFound)).0, 404);
        let busy = CatalogError::Prices {
            code: ErrorCode::CacheRefreshBusy,
            detail: "",
            retry_after: None,
            reason: String::new(),
        };
        assert_eq!(status_and_retry(ApiError::from(busy)), (503, Some("2".into())));
        let bad = wafuel_query::grammar::invalid_in("radius", "radius must be more than 0");
        assert_eq!(status_and_retry(ApiError::from(bad.clone())), (400, None));
        assert_eq!(status_and_retry(ApiError::ReferenceQuery(bad)), (400, None));
    }

    #[test]
    fn causes_are_kept() {
        use std::error::Error;
        let source = CatalogError::Prices {
            code: ErrorCode::UpstreamUnavailable,
            detail: detail::UPSTREAM_UNAVAILABLE,
            retry_after: None,
            reason: "disk full".into(),
        };
        let e = ApiError::from(source);
        let mut chain = Vec::new();
        let mut next: Option<&dyn Error> = Some(&e);
        while let Some(err) = next {
            chain.push(err.to_string());
            next = err.source();
        }
        assert!(chain.iter().any(|t| t.contains("disk full")), "{chain:?}");
    }
}
