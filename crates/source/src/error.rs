//! The one error type of the source layer (transport, parser, validator).

use wafuel_domain::error_code::{ErrorCode, detail};

/// A failed source selection: the public code and text, plus an internal reason for logs
/// that never reaches a client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code:?}: {reason}")]
pub struct SourceError {
    pub code: ErrorCode,
    pub detail: &'static str,
    pub retry_after: Option<u32>,
    pub reason: String,
}

impl SourceError {
    fn new(code: ErrorCode, detail: &'static str, reason: impl Into<String>) -> Self {
        Self { code, detail, retry_after: None, reason: reason.into() }
    }

    pub fn invalid_feed(reason: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidFeed, detail::INVALID_FEED, reason)
    }

    pub fn empty_response() -> Self {
        Self::new(ErrorCode::InvalidFeed, detail::EMPTY_RESPONSE, "empty body")
    }

    pub fn invalid_encoding(reason: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidFeed, detail::INVALID_ENCODING, reason)
    }

    pub fn conflict(reason: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidFeed, detail::CONFLICTING_QUOTES, reason)
    }

    pub fn empty_replacement() -> Self {
        Self::new(
            ErrorCode::InvalidFeed,
            detail::EMPTY_REPLACEMENT,
            "empty feed would replace published prices",
        )
    }

    pub fn too_large(reason: impl Into<String>) -> Self {
        Self::new(ErrorCode::ResponseTooLarge, detail::TOO_LARGE, reason)
    }

    pub fn combined_too_large(reason: impl Into<String>) -> Self {
        Self::new(ErrorCode::ResponseTooLarge, detail::COMBINED_TOO_LARGE, reason)
    }

    pub fn too_many_quotes(reason: impl Into<String>) -> Self {
        Self::new(ErrorCode::ResponseTooLarge, detail::TOO_MANY_QUOTES, reason)
    }

    pub fn denied(reason: impl Into<String>) -> Self {
        Self::new(ErrorCode::UpstreamDenied, detail::UPSTREAM_DENIED, reason)
    }

    pub fn unavailable(retry_after: Option<u32>, reason: impl Into<String>) -> Self {
        Self {
            retry_after,
            ..Self::new(ErrorCode::UpstreamUnavailable, detail::UPSTREAM_UNAVAILABLE, reason)
        }
    }

    pub fn unreachable(reason: impl Into<String>) -> Self {
        Self::new(ErrorCode::UpstreamUnavailable, detail::UPSTREAM_UNREACHABLE, reason)
    }

    /// Another replica holds the fill lease and did not finish in time.
    pub fn busy() -> Self {
        Self {
            retry_after: Some(2),
            ..Self::new(ErrorCode::CacheRefreshBusy, detail::CACHE_REFRESH_BUSY, "fill lease held elsewhere")
        }
    }

    /// A bug on our side (a task that panicked), never the source's fault.
    pub fn internal(reason: impl Into<String>) -> Self {
        Self::new(ErrorCode::InternalError, detail::INTERNAL_ERROR, reason)
    }

    pub fn timeout() -> Self {
        Self::new(ErrorCode::UpstreamTimeout, detail::UPSTREAM_TIMEOUT, "shared source deadline passed")
    }
}
