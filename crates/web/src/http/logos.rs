//! `/static/image/brand/{filename}`: our SVG brand badges (`render::logos`), exact file names
//! only, GET and HEAD.

use std::sync::Arc;

use axum::extract::Path;
use axum::extract::rejection::PathRejection;
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};

use super::answer::serve_file;
use super::errors::{ApiError, files_method_not_allowed};
use super::state::AppState;
use crate::render::logos;
use wafuel_domain::error_code::{ErrorCode, detail};
use wafuel_service::cache_policy::CachePolicy;

/// Brand logos: GET (and HEAD) only, as every built-in file.
pub fn methods() -> MethodRouter<Arc<AppState>> {
    get(logo).fallback(files_method_not_allowed)
}

/// A file name that is not text (escapes that are not UTF-8) names no logo either.
async fn logo(method: Method, headers: HeaderMap, filename: Result<Path<String>, PathRejection>) -> Response {
    let Some(found) = filename.ok().and_then(|Path(name)| logos::find(&name)) else {
        return ApiError::refused(ErrorCode::NotFound, detail::IMAGE_NOT_FOUND).into_response();
    };
    serve_file(
        found,
        CachePolicy::StaticAsset,
        &method,
        &headers,
        &[(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"))],
    )
}
