//! Writing answers: every header of a document or file answer (validators, codings, CORS,
//! `Cache-Control` through [`CachePolicy`]), the coding `Accept-Encoding` asks for, 304 when
//! `If-None-Match` names the ETag (a comma list of entity tags, `W/` ignored, `*` matching any),
//! and HEAD without a body. The slow path ([`respond`]) and front-cache hits
//! ([`respond_prepared`], from [`PreparedHeads`] prepared once per entry) write the same answer;
//! files built into the binary (brand logos, the explorer) answer through [`serve_file`].

use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;

use super::negotiate::negotiate_encoding;
use super::rendered::Rendered;
use crate::render::asset::Asset;
use crate::render::representation::Coding;
use wafuel_service::cache_policy::CachePolicy;

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

/// A header's value as text, if it is text.
pub fn text<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Whether the header matches the representation's ETag (a quoted strong tag).
pub fn if_none_match_matches(header: &str, etag: &str) -> bool {
    let want = etag.trim_start_matches("W/");
    header.split(',').map(str::trim).any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == want)
}

/// [`respond`] for a hit, from headers prepared for the document.
pub fn respond_prepared(
    method: &Method,
    headers: &HeaderMap,
    doc: &Rendered,
    heads: &PreparedHeads,
    max_age: i64,
) -> Response {
    let (coding, not_modified) = choose(headers, doc);
    let mut head = heads.get(doc, coding, not_modified).clone();
    CachePolicy::Shared(max_age).write(&mut head);
    with_body(method, doc, coding, not_modified, head)
}

/// How a rendered document is served.
#[derive(Debug, Clone, Copy)]
pub struct ServingNow {
    pub media: &'static str,
    pub vary: &'static str,
    /// `s-maxage` (0 = `no-store`).
    pub max_age: i64,
    /// Whether the snapshot headers (`X-Fuel-Snapshot-Cache`, source date, fetched-at) apply.
    pub fuel_headers: bool,
}

/// 200 with the negotiated coding, or 304 when `If-None-Match` matches; HEAD without a body.
/// Every cached route answers through here (or, from the front cache, through the same
/// headers prepared by [`PreparedHeads`]), so validators and headers agree everywhere.
pub fn respond(
    method: &Method,
    headers: &HeaderMap,
    doc: &Rendered,
    cache_hit: bool,
    served: ServingNow,
) -> Response {
    let (coding, not_modified) = choose(headers, doc);
    let mut head = head(doc, &served, coding, not_modified, cache_hit);
    CachePolicy::Shared(served.max_age).write(&mut head);
    with_body(method, doc, coding, not_modified, head)
}

/// The coding `Accept-Encoding` asks for, and whether `If-None-Match` names its ETag.
fn choose(headers: &HeaderMap, doc: &Rendered) -> (Coding, bool) {
    let coding = negotiate_encoding(text(headers, &header::ACCEPT_ENCODING));
    let etag = &doc.etags[coding.index()];
    let not_modified = text(headers, &header::IF_NONE_MATCH)
        .is_some_and(|inm| if_none_match_matches(inm, etag.to_str().unwrap_or("")));
    (coding, not_modified)
}

/// The answer with its headers: 304 and HEAD without a body.
fn with_body(
    method: &Method,
    doc: &Rendered,
    coding: Coding,
    not_modified: bool,
    head: HeaderMap,
) -> Response {
    let mut response = if not_modified {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else if method == Method::HEAD {
        Response::new(Body::empty())
    } else {
        Response::new(Body::from(doc.repr.body(coding).clone()))
    };
    *response.headers_mut() = head;
    response
}

/// The headers of an answer but `Cache-Control` (it counts down, so each answer writes its
/// own): a 304 has the validators and cache headers, not the body's.
fn head(
    doc: &Rendered,
    served: &ServingNow,
    coding: Coding,
    not_modified: bool,
    cache_hit: bool,
) -> HeaderMap {
    // Room for every header below (and the request id added on the way out) at once.
    let mut h = HeaderMap::with_capacity(16);
    if !not_modified {
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(served.media));
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(doc.repr.body(coding).len()));
        if let Some(enc) = coding.header() {
            h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(enc));
        }
    }
    h.insert(header::ETAG, doc.etags[coding.index()].clone());
    h.insert(X_FUEL_CACHE, HeaderValue::from_static(if cache_hit { "HIT" } else { "MISS" }));
    if served.fuel_headers {
        let snapshot = if cache_hit { "HIT" } else { doc.snapshot_cache.as_str() };
        h.insert(X_FUEL_SNAPSHOT_CACHE, HeaderValue::from_static(snapshot));
        h.insert(X_FUEL_SOURCE_DATE, doc.source_date_header.clone());
        h.insert(X_FUEL_FETCHED_AT, doc.fetched_at_header.clone());
    }
    h.insert(header::VARY, HeaderValue::from_static(served.vary));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    apply_cors(&mut h);
    h
}

/// The headers of a front-cache hit on one document, each made the first time it is
/// needed and kept with the entry: for each coding, the 200's and the 304's, exactly as
/// [`respond`] makes them for a hit, Cache-Control aside (it counts down, so each answer sets
/// its own). Cloning one costs a fraction of inserting a dozen headers; making them lazily
/// keeps an entry that is never hit (a never-repeated query) small, and never compresses a
/// body for a coding nobody asked for.
pub struct PreparedHeads {
    served: ServingNow,
    maps: [std::sync::OnceLock<HeaderMap>; 6],
}

impl PreparedHeads {
    pub fn new(served: ServingNow) -> Self {
        Self { served, maps: Default::default() }
    }

    fn get(&self, doc: &Rendered, coding: Coding, not_modified: bool) -> &HeaderMap {
        self.maps[coding.index() * 2 + usize::from(not_modified)]
            .get_or_init(|| head(doc, &self.served, coding, not_modified, true))
    }
}

impl std::fmt::Debug for PreparedHeads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedHeads").finish_non_exhaustive()
    }
}

/// The response to `method` (GET or HEAD) for a file built into the binary, kept as `policy`
/// says, with `extra` headers.
pub fn serve_file(
    asset: &Asset,
    policy: CachePolicy,
    method: &Method,
    headers: &HeaderMap,
    extra: &[(HeaderName, HeaderValue)],
) -> Response {
    let coding = negotiate_encoding(headers.get(header::ACCEPT_ENCODING).and_then(|v| v.to_str().ok()));
    let body = asset.repr.body(coding);
    let mut response = serve_bytes(body, asset.content_type, asset.etag(coding), policy, method, headers);
    let modified = response.status() != StatusCode::NOT_MODIFIED;
    let h = response.headers_mut();
    if modified && let Some(encoding) = coding.header() {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding));
    }
    h.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    for (name, value) in extra {
        h.insert(name.clone(), value.clone());
    }
    response
}

/// The response to `method` for bytes with a strong `etag`: 304 when `If-None-Match` names
/// it, else the bytes (none for HEAD) with their type and length; cached as `policy` says.
pub fn serve_bytes(
    body: &Bytes,
    content_type: &'static str,
    etag: &str,
    policy: CachePolicy,
    method: &Method,
    headers: &HeaderMap,
) -> Response {
    let not_modified = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|inm| if_none_match_matches(inm, etag));
    let mut response = if not_modified || *method == Method::HEAD {
        Response::new(Body::empty())
    } else {
        Response::new(Body::from(body.clone()))
    };
    if not_modified {
        *response.status_mut() = StatusCode::NOT_MODIFIED;
    }
    let h = response.headers_mut();
    if !not_modified {
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    }
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    policy.write(h);
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::representation::Representation;
    use jiff::civil::date;
    use wafuel_domain::documents::PublicationStatus;
    use wafuel_domain::documents::SnapshotCache;
    use wafuel_domain::time::perth_instant;

    fn served(media: &'static str, max_age: i64, fuel_headers: bool) -> ServingNow {
        ServingNow { media, vary: "Accept, Accept-Encoding", max_age, fuel_headers }
    }

    async fn parts(response: Response) -> (StatusCode, Vec<(String, Vec<u8>)>, Vec<u8>) {
        let status = response.status();
        let headers =
            response.headers().iter().map(|(n, v)| (n.as_str().to_string(), v.as_bytes().to_vec())).collect();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("body");
        (status, headers, body.to_vec())
    }

    /// A front-cache hit from prepared headers is the answer `respond` makes for a hit: the
    /// same status, headers in the same order, and body, for every coding, 200 and 304, GET
    /// and HEAD, with and without the snapshot headers.
    #[tokio::test]
    async fn prepared_heads_answer_as_respond_does() {
        let now = perth_instant(date(2026, 11, 23).at(15, 0, 0, 0));
        let facts = wafuel_service::catalog::Facts {
            date: date(2026, 11, 23),
            fetched_at: now,
            expires_at: now + jiff::SignedDuration::from_hours(6),
            status: PublicationStatus::Available,
            cache: SnapshotCache::Miss,
        };
        let doc = super::super::rendered::rendered_from(
            Representation::build(br#"{"data":[{"id":"a","type":"station"}]}"#.repeat(40)),
            &facts,
            now,
        );
        for (media, max_age, fuel) in [("application/vnd.api+json", 321, true), ("text/csv", 0, false)] {
            // Prepared at another second: the Cache-Control of the answer is its own.
            let heads = PreparedHeads::new(served(media, max_age + 60, fuel));
            for (coding, etag) in [("identity", 0), ("gzip", 1), ("br", 2)] {
                for validator in [None, Some(doc.etags[etag].clone())] {
                    for method in [Method::GET, Method::HEAD] {
                        let mut request = HeaderMap::new();
                        request.insert(header::ACCEPT_ENCODING, HeaderValue::from_static(coding));
                        if let Some(v) = &validator {
                            request.insert(header::IF_NONE_MATCH, v.clone());
                        }
                        let made = respond(&method, &request, &doc, true, served(media, max_age, fuel));
                        let prepared = respond_prepared(&method, &request, &doc, &heads, max_age);
                        let (made, prepared) = (parts(made).await, parts(prepared).await);
                        assert_eq!(prepared, made, "{media} {coding} {method} {validator:?}");
                        let expected =
                            if validator.is_some() { StatusCode::NOT_MODIFIED } else { StatusCode::OK };
                        assert_eq!(made.0, expected);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod conditional_tests {
    use super::*;

    #[test]
    fn vectors() {
        let etag = "\"abc\"";
        assert!(if_none_match_matches("\"abc\"", etag));
        assert!(if_none_match_matches("W/\"abc\"", etag));
        assert!(if_none_match_matches("\"x\", \"abc\"", etag));
        assert!(if_none_match_matches("*", etag));
        assert!(!if_none_match_matches("\"abd\"", etag));
        assert!(!if_none_match_matches("abc", etag));
        assert!(!if_none_match_matches("", etag));
    }
}
