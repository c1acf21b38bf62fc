//! `/explore`: a price explorer page for people. Plain HTML, CSS and JavaScript written for
//! this service and built into the binary; it reads only the public API, like any client.
//!
//! The page names its script and style sheet with a version taken from their ETags, so a new
//! binary's page never runs with an old script from a cache, and the files themselves can be
//! cached for a day.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use axum::extract::Path;
use axum::extract::rejection::PathRejection;
use axum::http::{HeaderMap, HeaderName, Method, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};

use super::answer::serve_file;
use super::errors::{ApiError, files_method_not_allowed as method_not_allowed};
use super::state::AppState;
use crate::cache_policy::CachePolicy;
use crate::render::asset::Asset;

const HTML: &str = include_str!("../../assets/explore/index.html");
const SCRIPT: &str = include_str!("../../assets/explore/app.js");
const STYLE: &str = include_str!("../../assets/explore/app.css");

/// Only this origin's files and API; no inline code, no framing, no plugins, no `<base>`.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; base-uri 'none'; object-src 'none'; \
     frame-ancestors 'none'; form-action 'self'";

/// The page may ask for the visitor's location (for "cheapest near me"), nothing else.
const PERMISSIONS_POLICY: &str = "geolocation=(self), camera=(), microphone=()";

static FILES: LazyLock<HashMap<&'static str, Asset>> = LazyLock::new(|| {
    let file = |body: &str, kind| Asset::new(body, kind);
    HashMap::from([
        ("app.js", Asset::new(served_script(SCRIPT), "text/javascript; charset=utf-8")),
        ("app.css", file(STYLE, "text/css; charset=utf-8")),
    ])
});

static PAGE: LazyLock<Asset> = LazyLock::new(|| {
    let version = |name: &str| FILES.get(name).map(Asset::version).unwrap_or_default();
    let html = HTML.replace("{{app.js}}", version("app.js")).replace("{{app.css}}", version("app.css"));
    // Short: a new release's page (and so its file versions) reaches browsers within minutes.
    Asset::new(html, "text/html; charset=utf-8")
});

/// The script as browsers get it: without its comment lines, indentation and blank lines,
/// which are for its readers here and are a sixth of its bytes. Safe for this script because
/// no string or template in it spans lines (a test holds that), so every line's leading
/// blanks and every line that starts with `//` are outside any literal.
fn served_script(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    for line in source.lines().map(str::trim_start) {
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn page_headers() -> [(HeaderName, &'static str); 3] {
    [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (HeaderName::from_static("permissions-policy"), PERMISSIONS_POLICY),
        (header::REFERRER_POLICY, "no-referrer"),
    ]
}

/// The page and its files: GET (and HEAD) only.
pub fn page_methods() -> MethodRouter<Arc<AppState>> {
    get(page).fallback(method_not_allowed)
}

pub fn file_methods() -> MethodRouter<Arc<AppState>> {
    get(file).fallback(method_not_allowed)
}

/// `GET /explore`: the page.
pub async fn page(method: Method, headers: HeaderMap) -> Response {
    serve_file(&PAGE, CachePolicy::Page, &method, &headers, &page_headers())
}

/// `GET /explore/{file}`: its script and style sheet.
/// A name that is not text (escapes that are not UTF-8) names no file either.
pub async fn file(method: Method, headers: HeaderMap, name: Result<Path<String>, PathRejection>) -> Response {
    match name.ok().and_then(|Path(name)| FILES.get(name.as_str())) {
        Some(found) => serve_file(found, CachePolicy::StaticAsset, &method, &headers, &page_headers()),
        None => ApiError::not_found().into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_names_its_files_by_version() {
        let html = std::str::from_utf8(&PAGE.repr.identity).expect("utf8");
        for name in ["app.js", "app.css"] {
            let version = FILES[name].version();
            assert_eq!(version.len(), 8);
            assert!(html.contains(&format!("/explore/{name}?v={version}")), "{name}");
        }
        assert!(!html.contains("{{"), "every placeholder is filled");
    }

    #[test]
    fn the_served_script_drops_only_what_no_literal_holds() {
        // No template literal spans lines: each line opens and closes its own.
        for (n, line) in SCRIPT.lines().enumerate() {
            assert_eq!(line.matches('`').count() % 2, 0, "line {}: a template spans lines", n + 1);
        }
        let served = served_script("  const a = 1; // kept\n\n    // a comment\n  f(`x // y`);\n");
        assert_eq!(served, "const a = 1; // kept\nf(`x // y`);\n");
        let script = std::str::from_utf8(&FILES["app.js"].repr.identity).expect("utf8");
        assert!(script.contains("\"use strict\";") && script.len() < SCRIPT.len() * 9 / 10);
    }

    #[test]
    fn no_inline_code_that_the_policy_would_block() {
        let html = std::str::from_utf8(&PAGE.repr.identity).expect("utf8");
        // Scripts only by src, styles only by link, no inline handlers or style attributes.
        assert!(!html.contains("<script>") && !html.contains("<style"));
        assert!(!html.contains(" style=") && !html.contains(" onclick="));
        assert!(!SCRIPT.contains("innerHTML"), "the script builds nodes, never HTML text");
        assert!(!SCRIPT.contains("eval(") && !SCRIPT.contains("new Function"));
    }
}
