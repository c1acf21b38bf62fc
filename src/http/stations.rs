//! The station API (docs/api.md): `/v1/stations`, `/v1/stations/{id}`,
//! `/v1/stations/{id}/history` and `/v1/stats`. Same conventions as `/v1`: negotiation and
//! query rules before any store or source work, the rendered cache, conditional requests,
//! compression, CORS. Prices come from the day's catalogue extracts (no extra source
//! traffic); history and statistics read only the store.

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::http::request::Parts;
use axum::http::{Method, header};
use axum::response::{IntoResponse, Response};
use jiff::Timestamp;

use super::errors::{ApiError, Flavor};
use super::front::{Freshness, ServedAs, from_front, remember_and_respond};
use super::headers::text;
use super::negotiate::{Media, negotiate_media, unsupported_content_type};
use super::rendered::{RenderKey, Rendered, cached, rendered_from};
use super::{AppState, preflight};
use crate::catalog::{CatalogError, Subset, merged_profiles, publication_status};
use crate::error_code::{ErrorCode, detail};
use crate::query::{QueryError, Route, Selection};
use crate::render::PublicationStatus;
use crate::render::market::{StatsScope, history_csv, history_jsonapi, stats_jsonapi};
use crate::render::representation::Representation;
use crate::render::stations::{
    NextDay, StationsDoc, render_csv, render_geojson, render_jsonapi, station_rows,
};
use crate::snapshot::SnapshotCache;
use crate::source::SourceError;
use crate::station_query::{StationsQuery, parse_history, parse_station, parse_stations, parse_stats};
use crate::time::{Day, perth_now, tomorrow_published};

const VARY: &str = "Accept, Accept-Encoding";

/// Method, Content-Type and Accept checks shared by every route here; `Err` is the answer.
fn preamble(request: &Parts, offered: &[Media]) -> Result<Media, Box<Response>> {
    let headers = &request.headers;
    match request.method {
        Method::GET | Method::HEAD => {}
        Method::OPTIONS => return Err(Box::new(preflight(headers))),
        _ => return Err(Box::new(ApiError::method_not_allowed(Flavor::JsonApi).into_response())),
    }
    if unsupported_content_type(text(headers, &header::CONTENT_TYPE)) {
        let e =
            ApiError::new(ErrorCode::UnsupportedMediaType, detail::UNSUPPORTED_MEDIA_TYPE, Flavor::JsonApi);
        return Err(Box::new(e.into_response()));
    }
    negotiate_media(text(headers, &header::ACCEPT), offered).ok_or_else(|| {
        let e = ApiError::new(ErrorCode::NotAcceptable, detail::NOT_ACCEPTABLE_STATIONS, Flavor::JsonApi);
        Box::new(e.into_response())
    })
}

/// The media each station route offers: `/v1/stations` and one station.
pub const STATION_MEDIA: [Media; 3] = [Media::JsonApi, Media::GeoJson, Media::Csv];
/// A station's history.
pub const HISTORY_MEDIA: [Media; 2] = [Media::JsonApi, Media::Csv];
/// `/v1/stats`.
pub const STATS_MEDIA: [Media; 1] = [Media::JsonApi];

/// A station route from the front cache, after the same preamble with the media that route
/// offers (see `http::front_first`).
pub fn front_first(state: &AppState, offered: &[Media], request: &Parts) -> Option<Response> {
    let media = preamble(request, offered).ok()?;
    from_front(state, request, media, state.catalog.now())
}

/// A preflight for a malformed station id fails like the request would (400, no body).
fn malformed_preflight(method: &Method, id: &str) -> Option<Response> {
    (*method == Method::OPTIONS && crate::station_query::station_id(id).is_err())
        .then(|| ApiError::query_text(Flavor::Empty).into_response())
}

fn bad_query(e: &QueryError) -> Response {
    tracing::debug!(reason = %e.reason, "invalid query");
    ApiError::query(e, Flavor::JsonApi).into_response()
}

fn source_failed(e: &SourceError) -> Response {
    tracing::warn!(code = e.code.as_str(), reason = %e.reason, "source selection failed");
    ApiError::source(e, Flavor::JsonApi).into_response()
}

/// A document's data could not be had.
fn build_failed(e: &CatalogError) -> Response {
    match e {
        CatalogError::Source(e) => source_failed(e),
        // History and statistics have no other source than the history store.
        CatalogError::Store(_) | CatalogError::NoHistory => {
            tracing::warn!(error = %e, "history store unavailable");
            let mut err =
                ApiError::new(ErrorCode::UpstreamUnavailable, detail::HISTORY_UNAVAILABLE, Flavor::JsonApi);
            err.retry_after = Some(5);
            err.into_response()
        }
        CatalogError::NotFound => {
            ApiError::new(ErrorCode::NotFound, detail::STATION_NOT_FOUND, Flavor::JsonApi).into_response()
        }
    }
}

/// A cache key of a station-API document. Its data text starts with the route's own word
/// (`stations;`, `station:`, `history:`, `stats:`), so it never equals a `/v1` key (`p=…`).
fn station_key(data: String, expand: crate::query::Expand) -> RenderKey {
    RenderKey { route: Route::V1, data, expand }
}

/// The cached (or freshly built) document for `key`, served in `media`; the query was
/// parsed at `now`.
async fn answer<F>(
    state: &AppState,
    request: &Parts,
    (key, now): (RenderKey, Timestamp),
    media: Media,
    freshness: Freshness,
    build: F,
) -> Response
where
    F: std::future::Future<Output = Result<Rendered, CatalogError>>,
{
    match cached(&state.rendered, key, state.catalog.now(), build).await {
        Ok((doc, hit)) => {
            let served = ServedAs { media: media.content_type(), vary: VARY, freshness };
            remember_and_respond(state, request, media, (&doc, hit), served, now)
        }
        Err(e) => build_failed(&e),
    }
}

/// The selection of the day after the base day, when that day may have prices at `now`.
fn next_selection(selection: &Selection, now: Timestamp) -> Option<Selection> {
    let day = match selection.day {
        Day::Yesterday => Day::Today,
        Day::Today if tomorrow_published(now) => Day::Tomorrow,
        _ => return None,
    };
    Some(Selection { day, date: day.resolve(now), ..selection.clone() })
}

/// Build a station document (list or one station) in one representation, from the day
/// catalogues: one station by its id, nearby stations by the grid, never a scan of the store.
async fn build_stations(
    state: &AppState,
    query: &StationsQuery,
    only: Option<&str>,
    media: Media,
) -> Result<Rendered, CatalogError> {
    let catalog = &state.catalog;
    let base = catalog.selection(&query.selection).await?;
    let now = catalog.now();
    let next_sel = next_selection(&query.selection, now);
    let next = match &next_sel {
        Some(sel) => Some((sel, catalog.selection(sel).await?)),
        None => None,
    };
    let subset = match (only, query.near) {
        (Some(id), _) => Subset::Station(id),
        (None, Some(point)) => Subset::Near(point, query.radius_m),
        (None, None) => Subset::All,
    };
    let base_quotes = base.quotes(&query.selection, subset);
    if only.is_some() && base_quotes.is_empty() {
        return Err(CatalogError::NotFound);
    }
    let next_quotes: Option<Vec<_>> = next.as_ref().map(|(sel, data)| data.quotes(sel, subset));
    let mut expires_at = base.data.expires_at;
    if let Some((_, data)) = &next {
        expires_at = expires_at.min(data.data.expires_at);
    }
    let rows = station_rows(query, &base_quotes, next_quotes.as_deref());
    // Profiles are merged for the stations of the answer only.
    let profiles = catalog.profiles(now).await;
    let (enrichment, expires_at) =
        merged_profiles(rows.iter().map(|r| r.row.station), &profiles, now, expires_at);
    let status = publication_status(&query.selection, !base_quotes.is_empty(), now);
    let next_date = query.selection.date.tomorrow().unwrap_or(query.selection.date).to_string();
    // Without a next selection the following day is tomorrow before 14:30, or the day
    // after tomorrow: not yet published either way.
    let next_status = match (&next_sel, &next_quotes) {
        (Some(sel), Some(q)) => publication_status(sel, !q.is_empty(), now),
        _ => PublicationStatus::NotYetPublished,
    };
    let doc = StationsDoc {
        query,
        rows: &rows,
        fetched_at: base.data.fetched_at,
        status,
        next: NextDay { date: &next_date, status: next_status },
        meta: &state.meta,
        enrichment: &enrichment,
    };
    let one = only.is_some();
    let identity = match media {
        Media::JsonApi => render_jsonapi(&doc, one),
        Media::GeoJson => render_geojson(&doc, one),
        Media::Csv => render_csv(&doc),
    };
    Ok(rendered_from(
        Representation::build(identity),
        query.selection.date.to_string(),
        base.data.fetched_at,
        query.selection.date,
        (expires_at, now),
        status,
        base.data.cache,
    ))
}

/// The steps every station-API request takes before its own query is read, in order: a
/// preflight for a malformed station id fails as the request would; method, `Content-Type`
/// and `Accept`; then the front cache. The media to answer in and the instant the query is
/// read at, or the answer already.
// The error is the finished answer, moved out once per request: boxing it would add an
// allocation to every front-cache hit.
#[allow(clippy::result_large_err)]
fn begin(
    state: &AppState,
    request: &Parts,
    offered: &[Media],
    id: Option<&str>,
) -> Result<(Media, Timestamp), Response> {
    if let Some(r) = id.and_then(|id| malformed_preflight(&request.method, id)) {
        return Err(r);
    }
    let media = preamble(request, offered).map_err(|r| *r)?;
    let now = state.catalog.now();
    match from_front(state, request, media, now) {
        Some(r) => Err(r),
        None => Ok((media, now)),
    }
}

/// The raw query string of a request.
fn raw_query(request: &Parts) -> &str {
    request.uri.query().unwrap_or("")
}

/// `GET /v1/stations`.
pub async fn stations(State(state): State<Arc<AppState>>, request: Request) -> Result<Response, Response> {
    let request = request.into_parts().0;
    let (media, now) = begin(&state, &request, &STATION_MEDIA, None)?;
    let query = parse_stations(raw_query(&request), now).map_err(|e| bad_query(&e))?;
    let key = station_key(format!("{}|{}", query.data_key(), media.essence()), query.selection.expand);
    let build = build_stations(&state, &query, None, media);
    Ok(answer(&state, &request, (key, now), media, Freshness::Prices, build).await)
}

/// `GET /v1/stations/{stationId}`.
pub async fn station(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    request: Request,
) -> Result<Response, Response> {
    let request = request.into_parts().0;
    let (media, now) = begin(&state, &request, &STATION_MEDIA, Some(&id))?;
    let (id, query) = parse_station(&id, raw_query(&request), now).map_err(|e| bad_query(&e))?;
    let key =
        station_key(format!("station:{id}|{}|{}", query.data_key(), media.essence()), query.selection.expand);
    let build = build_stations(&state, &query, Some(&id), media);
    Ok(answer(&state, &request, (key, now), media, Freshness::Prices, build).await)
}

/// How long a stored-history document may be reused from `now`: five minutes, never past
/// the next Perth midnight (when "today" moves).
fn stored_expiry(now: Timestamp) -> Timestamp {
    now.saturating_add(crate::cache_policy::STORED_DOCUMENT_TTL)
        .unwrap_or(now)
        .min(crate::time::next_perth_midnight(now))
}

fn stored_rendered(identity: Vec<u8>, now: Timestamp) -> Rendered {
    let today = perth_now(now).date();
    rendered_from(
        Representation::build(identity),
        today.to_string(),
        now,
        today,
        (stored_expiry(now), now),
        PublicationStatus::Available,
        SnapshotCache::Hit,
    )
}

/// `GET /v1/stations/{stationId}/history`.
pub async fn history(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    request: Request,
) -> Result<Response, Response> {
    let request = request.into_parts().0;
    let (media, now) = begin(&state, &request, &HISTORY_MEDIA, Some(&id))?;
    let query = parse_history(&id, raw_query(&request), now).map_err(|e| bad_query(&e))?;
    let key = station_key(
        format!(
            "history:{}:{}:{}:{}|{}",
            query.station_id,
            query.product,
            query.from,
            query.to,
            media.essence()
        ),
        Default::default(),
    );
    let meta = state.meta.clone();
    let catalog = &state.catalog;
    let build = async {
        let points = catalog.station_history(&query.station_id, query.product, query.from, query.to).await?;
        let identity = match media {
            Media::Csv => history_csv(&points),
            _ => history_jsonapi(&query.station_id, query.product, (query.from, query.to), &points, &meta),
        };
        Ok(stored_rendered(identity, now))
    };
    Ok(answer(&state, &request, (key, now), media, Freshness::Stored, build).await)
}

/// `GET /v1/stats`.
pub async fn stats(State(state): State<Arc<AppState>>, request: Request) -> Result<Response, Response> {
    let request = request.into_parts().0;
    let (media, now) = begin(&state, &request, &STATS_MEDIA, None)?;
    let query = parse_stats(raw_query(&request), now).map_err(|e| bad_query(&e))?;
    let key = station_key(format!("stats:{:?}|{}", query, media.essence()), Default::default());
    let catalog = state.catalog.clone();
    let meta = state.meta.clone();
    let build = async {
        let m = catalog.stats(&query).await?;
        let scope = StatsScope {
            product: query.product,
            brands: query.brands.as_deref(),
            regions: query.regions.as_deref(),
            from: query.from,
            to: query.to,
        };
        Ok(stored_rendered(stats_jsonapi(&scope, &m, &meta), now))
    };
    Ok(answer(&state, &request, (key, now), media, Freshness::Stored, build).await)
}
