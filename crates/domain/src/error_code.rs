//! The error catalog of docs/api.md: codes and their safe texts. Every layer reports
//! failures with one of these codes; only the web layer gives each its HTTP status
//! (`wafuel_web::render::errors::status`) and turns it into a response.

/// A public error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    InvalidQuery,
    NotFound,
    MethodNotAllowed,
    NotAcceptable,
    UnsupportedMediaType,
    PayloadTooLarge,
    InternalError,
    InvalidFeed,
    ResponseTooLarge,
    UpstreamDenied,
    UpstreamUnavailable,
    CacheRefreshBusy,
    UpstreamTimeout,
}

impl ErrorCode {
    /// The `code` member clients branch on.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidQuery => "invalid_query",
            ErrorCode::NotFound => "not_found",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::NotAcceptable => "not_acceptable",
            ErrorCode::UnsupportedMediaType => "unsupported_media_type",
            ErrorCode::PayloadTooLarge => "payload_too_large",
            ErrorCode::InternalError => "internal_error",
            ErrorCode::InvalidFeed => "invalid_feed",
            ErrorCode::ResponseTooLarge => "response_too_large",
            ErrorCode::UpstreamDenied => "upstream_denied",
            ErrorCode::UpstreamUnavailable => "upstream_unavailable",
            ErrorCode::CacheRefreshBusy => "cache_refresh_busy",
            ErrorCode::UpstreamTimeout => "upstream_timeout",
        }
    }
}

/// The `detail` (JSON:API) and `message` (legacy) texts.
pub mod detail {
    pub const INVALID_QUERY: &str = "Invalid or unsupported query.";
    pub const TOO_MANY_COMBINATIONS: &str =
        "Request at most 24 product/brand/region/suburb combinations; split larger selections.";
    pub const BAD_EXPAND: &str = "Expand brand, siteFeatures, restrictions, or all.";
    pub const NOT_FOUND: &str = "Endpoint not found.";
    pub const IMAGE_NOT_FOUND: &str = "Brand image not found.";
    pub const METHOD_NOT_ALLOWED: &str = "Use GET or HEAD.";
    pub const BODY_REFUSED: &str = "Requests carry no body: send the query in the URL (a body over 64 KiB, or of unstated length, is refused).";
    pub const HOST_REQUIRED: &str = "An HTTP/1.1 request names its Host exactly once.";
    pub const NOT_ACCEPTABLE: &str = "Request application/vnd.api+json without unsupported media parameters.";
    pub const UNSUPPORTED_MEDIA_TYPE: &str = "Unsupported JSON:API Content-Type parameters.";
    pub const INTERNAL_ERROR: &str = "The price service could not complete the request.";
    pub const INVALID_FEED: &str = "The source returned an invalid price snapshot.";
    pub const EMPTY_RESPONSE: &str = "The source returned an empty response.";
    pub const INVALID_ENCODING: &str = "The source returned an invalid text encoding.";
    pub const CONFLICTING_QUOTES: &str = "The source returned conflicting station quotes.";
    pub const EMPTY_REPLACEMENT: &str = "The source returned an empty replacement for published prices.";
    pub const TOO_LARGE: &str = "The source response exceeds the size limit.";
    pub const COMBINED_TOO_LARGE: &str = "The combined source responses exceed the size limit.";
    pub const TOO_MANY_QUOTES: &str = "The source selection exceeds the quote limit.";
    pub const UPSTREAM_DENIED: &str = "The source could not fulfil the request.";
    pub const UPSTREAM_UNAVAILABLE: &str = "The source is temporarily unavailable.";
    pub const UPSTREAM_UNREACHABLE: &str = "The source could not be reached.";
    pub const CACHE_REFRESH_BUSY: &str = "This price snapshot is being refreshed. Please retry shortly.";
    pub const OVERLOADED: &str = "The service is temporarily overloaded. Please retry shortly.";
    pub const UPSTREAM_TIMEOUT: &str = "The source did not respond within the time limit.";
    // The station API (docs/api.md).
    /// Followed by the media types the route offers.
    pub const NOT_ACCEPTABLE_OFFERS: &str = "Request one of the representations this route offers:";
    pub const STATION_NOT_FOUND: &str = "Station not found.";
    pub const HISTORY_UNAVAILABLE: &str = "The price history is temporarily unavailable.";
    // "Fill now or wait" (docs/forecast.md).
    pub const TOO_LITTLE_HISTORY: &str =
        "A forecast needs at least 56 days with prices in the 91 days before asOf.";
    pub const NO_RECENT_PRICE: &str = "The station has no price in the 91 days before asOf.";
    // Push (`/v1/events`).
    pub const NOT_ACCEPTABLE_EVENTS: &str = "This route streams text/event-stream only.";
    pub const EVENTS_UNAVAILABLE: &str = "The event stream is temporarily unavailable.";
}
