//! One description per document endpoint, and the one pipeline every request to any of them
//! takes. An [`Endpoint`] names its path, its error body, the media it offers, how its
//! answers stay fresh, how its query is parsed, what its cache key is and how its document is
//! built; [`methods`] and [`front`] turn that description into the router's handlers and the
//! front-cache dispatch, so no endpoint repeats a step of another.
//!
//! The pipeline, in order:
//! 1. method: axum's method routing (`GET`/`HEAD`, `OPTIONS` for CORS preflights), one 405
//!    fallback with `Allow`;
//! 2. `Content-Type` and `Accept` against the media offered (415, 406);
//! 3. the front cache (request target → finished document), consulted before the router by
//!    [`front`] (with the same steps 1 and 2) and only there: a request that reaches the
//!    router missed it, so the pipeline does not look again;
//! 4. the path's station id and the query, parsed into the endpoint's own query type (400,
//!    before any store or source work);
//! 5. the rendered cache under the endpoint's key, or one build for concurrent misses;
//! 6. the answer: coding, conditional request, headers; remembered in the front cache.

use std::future::Future;
use std::sync::Arc;

use axum::extract::{FromRequestParts, Path, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, header};
use axum::response::Response;
use axum::routing::{MethodRouter, get};
use jiff::Timestamp;

use super::answer::text;
use super::cors::preflight;
use super::errors::{ApiError, Flavor};
use super::front::{Serving, from_front, remember_and_respond};
use super::negotiate::{Media, accepts_json_api, negotiate_media, unsupported_content_type};
use super::rendered::{RenderKey, Rendered, cached};
use super::state::AppState;
use wafuel_domain::error_code::{ErrorCode, detail};
use wafuel_query::QueryError;
use wafuel_service::cache_policy::Freshness;

/// The media an endpoint offers, and how a request's `Content-Type` and `Accept` are judged.
#[derive(Debug, Clone, Copy)]
pub enum Offer {
    /// JSON:API only, as `/v1`: a JSON:API `Content-Type` with parameters other than
    /// `profile` is 415; an `Accept` that does not allow clean JSON:API is 406.
    JsonApi,
    /// Plain JSON whatever the request says, as `/legacy` (its clients send anything).
    LegacyJson,
    /// The best of these that `Accept` allows (the station API); 415 as for `JsonApi`.
    Negotiated(&'static [Media]),
}

impl Offer {
    /// The media a request is answered in, or why it is refused.
    fn judge(self, headers: &HeaderMap) -> Result<Media, ApiError> {
        let content_type = || text(headers, &header::CONTENT_TYPE);
        let accept = text(headers, &header::ACCEPT);
        let refused = ApiError::refused;
        match self {
            Offer::LegacyJson => Ok(Media::JsonApi),
            _ if unsupported_content_type(content_type()) => {
                Err(refused(ErrorCode::UnsupportedMediaType, detail::UNSUPPORTED_MEDIA_TYPE))
            }
            Offer::JsonApi if accepts_json_api(accept) => Ok(Media::JsonApi),
            Offer::JsonApi => Err(refused(ErrorCode::NotAcceptable, detail::NOT_ACCEPTABLE)),
            Offer::Negotiated(offered) => negotiate_media(accept, offered).ok_or_else(|| {
                // The refusal names what the route offers, so a client knows what to ask.
                let types: Vec<&str> = offered.iter().map(|m| m.essence()).collect();
                ApiError::refused(
                    ErrorCode::NotAcceptable,
                    format!("{} {}.", detail::NOT_ACCEPTABLE_OFFERS, types.join(", ")),
                )
            }),
        }
    }

    /// The constant part of how a document in `media` is served.
    fn served(self, media: Media, freshness: Freshness) -> Serving {
        match self {
            Offer::LegacyJson => Serving { media: "application/json", vary: "Accept-Encoding", freshness },
            Offer::JsonApi | Offer::Negotiated(_) => {
                Serving { media: media.content_type(), vary: "Accept, Accept-Encoding", freshness }
            }
        }
    }
}

/// A document endpoint.
pub trait Endpoint: Send + Sync + 'static {
    /// Its path pattern, as the router takes it (`crate::http::routes`).
    const PATH: &'static str;
    /// The body its errors carry.
    const ERRORS: Flavor;
    const OFFER: Offer;
    const FRESHNESS: Freshness;
    /// Whether the path ends in `{station_id}`.
    const STATION_IN_PATH: bool = false;
    /// Whether a refused query is answered with its rule and parameter (every route but the
    /// reference's `/v1` and `/legacy`, which keep their documented texts).
    const EXPLAINS: bool = true;
    /// Whether its documents are read from the history or wholesale store: a cached one is
    /// served only while the store's counters are those it was built at.
    const STORED: bool = false;

    /// The parsed query (and station id).
    type Query: Send + Sync;

    /// Parse the path's station id (when the path has one) and the raw query string, read at
    /// `now`.
    fn parse(station_id: Option<&str>, query: &str, now: Timestamp) -> Result<Self::Query, QueryError>;

    /// The rendered-cache key of a query's document in `media`.
    fn key(query: &Self::Query, media: Media) -> RenderKey;

    /// Build the document (its data from the catalog, its bytes from `render/`).
    fn build(
        state: &AppState,
        query: &Self::Query,
        media: Media,
        now: Timestamp,
    ) -> impl Future<Output = Result<Rendered, ApiError>> + Send;
}

/// The router's handlers of an endpoint: GET (and HEAD), OPTIONS, 405 for the rest.
pub fn methods<E: Endpoint>() -> MethodRouter<Arc<AppState>> {
    get(handle::<E>)
        .options(options::<E>)
        .fallback(|| async { ApiError::method_not_allowed().respond(E::ERRORS) })
}

/// The answer to a request from the front cache, before the router (see `routes::front_first`):
/// only GET and HEAD with acceptable media, else the router answers.
pub fn front<E: Endpoint>(state: &AppState, request: &Parts) -> Option<Response> {
    if !matches!(request.method, Method::GET | Method::HEAD) {
        return None;
    }
    let media = E::OFFER.judge(&request.headers).ok()?;
    let now = state.catalog.now();
    // A stored document is current only while the counters it was built at are, as last
    // confirmed within the recheck interval; else the slow path asks the store.
    let recent = if E::STORED { Some(state.catalog.recent_stored_versions(now)?) } else { None };
    from_front(&state.front, request, media, now, |doc| doc.stored == recent)
}

async fn handle<E: Endpoint>(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let mut request = request.into_parts().0;
    match pipeline::<E>(&state, &mut request).await {
        Ok(response) => response,
        Err(e) => e.respond(E::ERRORS),
    }
}

async fn pipeline<E: Endpoint>(state: &AppState, request: &mut Parts) -> Result<Response, ApiError> {
    let media = E::OFFER.judge(&request.headers)?;
    let now = state.catalog.now();
    // The front cache was tried before the router (`app::public_site`): a request here missed.
    let id = path_station_id::<E>(request).await?;
    let query = E::parse(id.as_deref(), request.uri.query().unwrap_or(""), now)
        .map_err(|e| if E::EXPLAINS { ApiError::Query(e) } else { ApiError::ReferenceQuery(e) })?;
    let key = E::key(&query, media);
    let (doc, found) = if E::STORED {
        // Built at the counters read first: a later change rebuilds it (at worst once more).
        let versions = state.catalog.stored_versions(now).await?;
        let query = &query;
        let build = || async move {
            let mut doc = E::build(state, query, media, now).await?;
            doc.stored = Some(versions);
            Ok::<_, ApiError>(doc)
        };
        let (doc, found) = cached(&state.rendered, key.clone(), state.catalog.now(), build()).await?;
        if doc.stored == Some(versions) {
            (doc, found)
        } else {
            // Computed before the history or wholesale prices changed: never served again.
            state.rendered.docs().invalidate(&key).await;
            cached(&state.rendered, key, state.catalog.now(), build()).await?
        }
    } else {
        let built = E::build(state, &query, media, now);
        cached(&state.rendered, key, state.catalog.now(), built).await?
    };
    let served = E::OFFER.served(media, E::FRESHNESS);
    Ok(remember_and_respond(&state.front, request, media, (&doc, found), served, (now, state.catalog.now())))
}

/// The path's station id, percent-decoded, for endpoints that have one. An id that does not
/// decode to text is a malformed query.
async fn path_station_id<E: Endpoint>(request: &mut Parts) -> Result<Option<String>, ApiError> {
    if !E::STATION_IN_PATH {
        return Ok(None);
    }
    match Path::<String>::from_request_parts(request, &()).await {
        Ok(Path(id)) => Ok(Some(id)),
        Err(_) => Err(ApiError::query_text()),
    }
}

/// A CORS preflight. For a malformed station id it fails as the request would (400, no body).
async fn options<E: Endpoint>(request: Request) -> Response {
    let mut request = request.into_parts().0;
    if E::STATION_IN_PATH {
        let well_formed = path_station_id::<E>(&mut request)
            .await
            .is_ok_and(|id| id.is_some_and(|id| wafuel_query::values::station_id(&id).is_ok()));
        if !well_formed {
            return ApiError::query_text().respond(Flavor::Empty);
        }
    }
    preflight(&request.headers)
}
