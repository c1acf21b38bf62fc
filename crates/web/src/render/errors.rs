//! The two error document shapes: JSON:API (`/v1` and every other path) and legacy.

use serde_json::json;

use wafuel_domain::error_code::ErrorCode;

/// The HTTP status of an error code: transport, so the web layer's alone (the layers below
/// name the failure, never how HTTP says it).
pub fn status(code: ErrorCode) -> u16 {
    match code {
        ErrorCode::InvalidQuery => 400,
        ErrorCode::NotFound => 404,
        ErrorCode::MethodNotAllowed => 405,
        ErrorCode::NotAcceptable => 406,
        ErrorCode::UnsupportedMediaType => 415,
        ErrorCode::PayloadTooLarge => 413,
        ErrorCode::InternalError => 500,
        ErrorCode::InvalidFeed | ErrorCode::ResponseTooLarge | ErrorCode::UpstreamDenied => 502,
        ErrorCode::UpstreamUnavailable | ErrorCode::CacheRefreshBusy => 503,
        ErrorCode::UpstreamTimeout => 504,
    }
}

/// `{"jsonapi":{"version":"1.1"},"errors":[{"status","code","detail"[,"source":{"parameter"}]}]}`
pub fn jsonapi_error(code: ErrorCode, detail: &str, parameter: Option<&str>) -> Vec<u8> {
    let mut error = json!({"status": status(code).to_string(), "code": code.as_str(), "detail": detail});
    if let Some(parameter) = parameter {
        error["source"] = json!({ "parameter": parameter });
    }
    serde_json::to_vec(&json!({"jsonapi": {"version": "1.1"}, "errors": [error]})).unwrap_or_default()
}

/// `{"error":{"code","message"}}`
pub fn legacy_error(code: ErrorCode, message: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({"error": {"code": code.as_str(), "message": message}})).unwrap_or_default()
}
