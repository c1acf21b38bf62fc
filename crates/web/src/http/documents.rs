//! The document endpoints, each described once (see [`super::endpoint`]): `/v1`, `/legacy`,
//! and the station API (`/v1/stations`, `/v1/stations/{id}`, `/v1/stations/{id}/history`,
//! `/v1/stats`, the forecasts). Station documents take their prices from the day catalogs (no extra
//! source traffic); history and statistics read only the history store.

use jiff::Timestamp;

use super::endpoint::{Endpoint, Offer};
use super::errors::{ApiError, Flavor};
use super::negotiate::Media;
use super::paths as routes;
use super::rendered::{RenderKey, Rendered, rendered_from};
use super::state::AppState;
use crate::render::brands::brands_jsonapi;
use crate::render::forecast::{forecast_jsonapi, record_csv, record_jsonapi};
use crate::render::market::{StatsScope, history_csv, history_jsonapi, stats_jsonapi};
use crate::render::representation::Representation;
use crate::render::stations::{render_csv, render_geojson, render_jsonapi};
use crate::render::status::status_jsonapi;
use crate::render::wholesale::{wholesale_csv, wholesale_jsonapi};
use crate::render::{jsonapi, legacy};
use wafuel_domain::documents::{PublicationStatus, SnapshotCache};
use wafuel_domain::key::StationId;
use wafuel_domain::time::perth_now;
use wafuel_query::forecast::{
    ForecastQuery, RecordQuery, parse_forecast, parse_record, parse_station_forecast,
};
use wafuel_query::market::{HistoryQuery, StatsQuery, parse_history, parse_stats};
use wafuel_query::stations::{
    BrandsQuery, StationsQuery, parse_brands, parse_station, parse_stations, parse_status,
};
use wafuel_query::wholesale::{WholesaleQuery, parse_wholesale};
use wafuel_query::{Dialect, QueryError, Selection, parse_selection};
use wafuel_service::cache_policy::{Freshness, stored_document_expiry};
use wafuel_service::catalog::Facts;

/// The media each station route offers: `/v1/stations` and one station.
pub const STATION_MEDIA: [Media; 3] = [Media::JsonApi, Media::GeoJson, Media::Csv];
/// A station's history.
pub const HISTORY_MEDIA: [Media; 2] = [Media::JsonApi, Media::Csv];
/// `/v1/stats`.
pub const STATS_MEDIA: [Media; 1] = [Media::JsonApi];

/// A price document (`/v1`, `/legacy`): the catalog's model, written by `render/`.
async fn price_document(state: &AppState, selection: &Selection) -> Result<Rendered, ApiError> {
    let (identity, facts) = match selection.dialect {
        Dialect::V1 => {
            let (doc, facts) = state.catalog.v1_document(selection, &state.meta).await?;
            (jsonapi::render(&doc)?, facts)
        }
        Dialect::Legacy => {
            let (doc, facts) = state.catalog.legacy_document(selection).await?;
            (legacy::render(&doc)?, facts)
        }
    };
    Ok(rendered_from(Representation::build(identity), &facts, state.catalog.now()))
}

/// `GET /v1` (JSON:API prices) and `GET /legacy` (the RSS-shaped JSON older clients read):
/// one selection grammar, two routes, two bodies.
pub struct Prices<const LEGACY: bool>;

pub type V1 = Prices<false>;
pub type Legacy = Prices<true>;

impl<const LEGACY: bool> Prices<LEGACY> {
    const DIALECT: Dialect = if LEGACY { Dialect::Legacy } else { Dialect::V1 };
}

impl<const LEGACY: bool> Endpoint for Prices<LEGACY> {
    const PATH: &'static str = if LEGACY { routes::LEGACY } else { routes::V1 };
    const ERRORS: Flavor = if LEGACY { Flavor::Legacy } else { Flavor::JsonApi };
    const OFFER: Offer = if LEGACY { Offer::LegacyJson } else { Offer::JsonApi };
    const FRESHNESS: Freshness = Freshness::Prices;
    const EXPLAINS: bool = false;
    type Query = Selection;

    fn parse(_: Option<&str>, query: &str, now: Timestamp) -> Result<Selection, QueryError> {
        parse_selection(Self::DIALECT, query, now)
    }

    fn key(selection: &Selection, _: Media) -> RenderKey {
        RenderKey::Prices(selection.clone())
    }

    async fn build(
        state: &AppState,
        selection: &Selection,
        _: Media,
        _: Timestamp,
    ) -> Result<Rendered, ApiError> {
        price_document(state, selection).await
    }
}

/// A station document (the list, or `only` that station) in one representation.
async fn stations_document(
    state: &AppState,
    query: &StationsQuery,
    only: Option<&StationId>,
    media: Media,
) -> Result<Rendered, ApiError> {
    let (doc, facts) = state.catalog.stations_document(query, only, &state.meta).await?;
    let identity = match media {
        Media::JsonApi => render_jsonapi(&doc),
        Media::GeoJson => render_geojson(&doc),
        Media::Csv => render_csv(&doc),
    }?;
    Ok(rendered_from(Representation::build(identity), &facts, state.catalog.now()))
}

/// `GET /v1/stations`.
pub struct Stations;

impl Endpoint for Stations {
    const PATH: &'static str = routes::STATIONS;
    const ERRORS: Flavor = Flavor::JsonApi;
    const OFFER: Offer = Offer::Negotiated(&STATION_MEDIA);
    const FRESHNESS: Freshness = Freshness::Prices;
    type Query = StationsQuery;

    fn parse(_: Option<&str>, query: &str, now: Timestamp) -> Result<StationsQuery, QueryError> {
        parse_stations(query, now)
    }

    fn key(query: &StationsQuery, media: Media) -> RenderKey {
        RenderKey::Stations(query.clone(), media)
    }

    async fn build(
        state: &AppState,
        query: &StationsQuery,
        media: Media,
        _: Timestamp,
    ) -> Result<Rendered, ApiError> {
        stations_document(state, query, None, media).await
    }
}

/// `GET /v1/stations/{stationId}`.
pub struct Station;

impl Endpoint for Station {
    const PATH: &'static str = routes::STATION;
    const ERRORS: Flavor = Flavor::JsonApi;
    const OFFER: Offer = Offer::Negotiated(&STATION_MEDIA);
    const FRESHNESS: Freshness = Freshness::Prices;
    const STATION_IN_PATH: bool = true;
    type Query = (StationId, StationsQuery);

    fn parse(id: Option<&str>, query: &str, now: Timestamp) -> Result<Self::Query, QueryError> {
        parse_station(id.unwrap_or(""), query, now)
    }

    fn key((id, query): &Self::Query, media: Media) -> RenderKey {
        RenderKey::Station(id.clone(), query.clone(), media)
    }

    async fn build(
        state: &AppState,
        (id, query): &Self::Query,
        media: Media,
        _: Timestamp,
    ) -> Result<Rendered, ApiError> {
        stations_document(state, query, Some(id), media).await
    }
}

/// `/v1/brands`.
pub const BRANDS_MEDIA: [Media; 1] = [Media::JsonApi];

/// `GET /v1/brands`: every brand code, its name and logo, and its stations on the day.
pub struct Brands;

impl Endpoint for Brands {
    const PATH: &'static str = routes::BRANDS;
    const ERRORS: Flavor = Flavor::JsonApi;
    const OFFER: Offer = Offer::Negotiated(&BRANDS_MEDIA);
    const FRESHNESS: Freshness = Freshness::Prices;
    type Query = BrandsQuery;

    fn parse(_: Option<&str>, query: &str, now: Timestamp) -> Result<BrandsQuery, QueryError> {
        parse_brands(query, now)
    }

    fn key(query: &BrandsQuery, _: Media) -> RenderKey {
        RenderKey::Brands(query.clone())
    }

    async fn build(
        state: &AppState,
        query: &BrandsQuery,
        _: Media,
        _: Timestamp,
    ) -> Result<Rendered, ApiError> {
        let (doc, facts) = state.catalog.brands_document(&query.selection).await?;
        let identity = brands_jsonapi(&doc, &state.meta)?;
        Ok(rendered_from(Representation::build(identity), &facts, state.catalog.now()))
    }
}

/// `GET /v1/status`: is the service updating? Fresh for 30 seconds.
pub struct Status;

/// How long a status answer is kept and may be cached.
pub const STATUS_MAX_AGE: jiff::SignedDuration = jiff::SignedDuration::from_secs(30);

impl Endpoint for Status {
    const PATH: &'static str = routes::STATUS;
    const ERRORS: Flavor = Flavor::JsonApi;
    const OFFER: Offer = Offer::Negotiated(&BRANDS_MEDIA);
    const FRESHNESS: Freshness = Freshness::Stored;
    const STORED: bool = true;
    type Query = ();

    fn parse(_: Option<&str>, query: &str, _: Timestamp) -> Result<(), QueryError> {
        parse_status(query)
    }

    fn key(_: &(), _: Media) -> RenderKey {
        RenderKey::Status
    }

    async fn build(state: &AppState, _: &(), _: Media, now: Timestamp) -> Result<Rendered, ApiError> {
        let doc = state.catalog.status().await?;
        let facts = Facts {
            date: perth_now(now).date(),
            fetched_at: now,
            expires_at: now.saturating_add(STATUS_MAX_AGE).unwrap_or(now),
            status: PublicationStatus::Available,
            cache: SnapshotCache::Hit,
        };
        Ok(rendered_from(Representation::build(status_jsonapi(&doc)?), &facts, now))
    }
}

/// A document read from the history store at `now`: dated today, reusable for five minutes
/// but never past the next Perth midnight (when "today" moves).
fn stored_document(identity: Vec<u8>, now: Timestamp) -> Rendered {
    let facts = Facts {
        date: perth_now(now).date(),
        fetched_at: now,
        expires_at: stored_document_expiry(now),
        status: PublicationStatus::Available,
        cache: SnapshotCache::Hit,
    };
    rendered_from(Representation::build(identity), &facts, now)
}

/// `GET /v1/stations/{stationId}/history`.
pub struct History;

impl Endpoint for History {
    const PATH: &'static str = routes::STATION_HISTORY;
    const ERRORS: Flavor = Flavor::JsonApi;
    const OFFER: Offer = Offer::Negotiated(&HISTORY_MEDIA);
    const FRESHNESS: Freshness = Freshness::Stored;
    const STATION_IN_PATH: bool = true;
    const STORED: bool = true;
    type Query = HistoryQuery;

    fn parse(id: Option<&str>, query: &str, now: Timestamp) -> Result<HistoryQuery, QueryError> {
        parse_history(id.unwrap_or(""), query, now)
    }

    fn key(q: &HistoryQuery, media: Media) -> RenderKey {
        RenderKey::History(q.clone(), media)
    }

    async fn build(
        state: &AppState,
        q: &HistoryQuery,
        media: Media,
        now: Timestamp,
    ) -> Result<Rendered, ApiError> {
        let points = state.catalog.history().station(&q.station_id, q.product, q.from, q.to).await?;
        let loading = state.catalog.history().loading().await;
        let identity = match media {
            Media::Csv => history_csv(&points),
            _ => history_jsonapi(
                q.station_id.as_str(),
                q.product,
                (q.from, q.to),
                &points,
                (loading.as_deref(), &state.meta),
            ),
        }?;
        Ok(stored_document(identity, now))
    }
}

/// `GET /v1/stats`.
pub struct Stats;

impl Endpoint for Stats {
    const PATH: &'static str = routes::STATS;
    const ERRORS: Flavor = Flavor::JsonApi;
    const OFFER: Offer = Offer::Negotiated(&STATS_MEDIA);
    const FRESHNESS: Freshness = Freshness::Stored;
    const STORED: bool = true;
    type Query = StatsQuery;

    fn parse(_: Option<&str>, query: &str, now: Timestamp) -> Result<StatsQuery, QueryError> {
        parse_stats(query, now)
    }

    fn key(query: &StatsQuery, media: Media) -> RenderKey {
        RenderKey::Stats(query.clone(), media)
    }

    async fn build(
        state: &AppState,
        query: &StatsQuery,
        _: Media,
        now: Timestamp,
    ) -> Result<Rendered, ApiError> {
        let market = state.catalog.history().stats(query).await?;
        let wholesale = state.catalog.wholesale().stats(query).await?;
        let loading = state.catalog.history().loading().await;
        let scope = StatsScope {
            product: query.product,
            brands: query.brands.as_deref(),
            regions: query.regions.as_deref(),
            from: query.from,
            to: query.to,
            interval: query.interval,
            wholesale: wholesale.as_ref().map(|(centre, means)| (*centre, means)),
            loading: loading.as_deref(),
        };
        Ok(stored_document(stats_jsonapi(&scope, &market, &state.meta)?, now))
    }
}

/// `/v1/forecast` and a station's forecast.
pub const FORECAST_MEDIA: [Media; 1] = [Media::JsonApi];

/// A forecast document: read from the history store like statistics (the answer changes only
/// when the history does, or when tomorrow is published).
async fn forecast_document(
    state: &AppState,
    query: &ForecastQuery,
    now: Timestamp,
) -> Result<Rendered, ApiError> {
    let doc = state.catalog.forecasts().forecast(query).await?;
    Ok(stored_document(forecast_jsonapi(&doc, &state.meta)?, now))
}

/// `GET /v1/forecast`: the market's next days and the advice.
pub struct Forecast;

impl Endpoint for Forecast {
    const PATH: &'static str = routes::FORECAST;
    const ERRORS: Flavor = Flavor::JsonApi;
    const OFFER: Offer = Offer::Negotiated(&FORECAST_MEDIA);
    const FRESHNESS: Freshness = Freshness::Stored;
    const STORED: bool = true;
    type Query = ForecastQuery;

    fn parse(_: Option<&str>, query: &str, now: Timestamp) -> Result<ForecastQuery, QueryError> {
        parse_forecast(query, now)
    }

    fn key(query: &ForecastQuery, _: Media) -> RenderKey {
        RenderKey::Forecast(query.clone())
    }

    async fn build(
        state: &AppState,
        query: &ForecastQuery,
        _: Media,
        now: Timestamp,
    ) -> Result<Rendered, ApiError> {
        forecast_document(state, query, now).await
    }
}

/// `GET /v1/stations/{stationId}/forecast`: one station's own price.
pub struct StationForecast;

impl Endpoint for StationForecast {
    const PATH: &'static str = routes::STATION_FORECAST;
    const ERRORS: Flavor = Flavor::JsonApi;
    const OFFER: Offer = Offer::Negotiated(&FORECAST_MEDIA);
    const FRESHNESS: Freshness = Freshness::Stored;
    const STATION_IN_PATH: bool = true;
    const STORED: bool = true;
    type Query = ForecastQuery;

    fn parse(id: Option<&str>, query: &str, now: Timestamp) -> Result<ForecastQuery, QueryError> {
        parse_station_forecast(id.unwrap_or(""), query, now)
    }

    fn key(query: &ForecastQuery, _: Media) -> RenderKey {
        RenderKey::Forecast(query.clone())
    }

    async fn build(
        state: &AppState,
        query: &ForecastQuery,
        _: Media,
        now: Timestamp,
    ) -> Result<Rendered, ApiError> {
        forecast_document(state, query, now).await
    }
}

/// `/v1/forecast/record`.
pub const RECORD_MEDIA: [Media; 2] = [Media::JsonApi, Media::Csv];

/// `GET /v1/forecast/record`: the forecasts answered for their own day, with their outcomes.
pub struct ForecastRecord;

impl Endpoint for ForecastRecord {
    const PATH: &'static str = routes::FORECAST_RECORD;
    const ERRORS: Flavor = Flavor::JsonApi;
    const OFFER: Offer = Offer::Negotiated(&RECORD_MEDIA);
    const FRESHNESS: Freshness = Freshness::Stored;
    const STORED: bool = true;
    type Query = RecordQuery;

    fn parse(_: Option<&str>, query: &str, now: Timestamp) -> Result<RecordQuery, QueryError> {
        parse_record(query, now)
    }

    fn key(query: &RecordQuery, media: Media) -> RenderKey {
        RenderKey::Record(query.clone(), media)
    }

    async fn build(
        state: &AppState,
        query: &RecordQuery,
        media: Media,
        now: Timestamp,
    ) -> Result<Rendered, ApiError> {
        let doc = state.catalog.forecasts().record_document(query).await?;
        let identity = match media {
            Media::Csv => record_csv(&doc),
            _ => record_jsonapi(&doc, &state.meta),
        }?;
        Ok(stored_document(identity, now))
    }
}

/// `/v1/wholesale`.
pub const WHOLESALE_MEDIA: [Media; 2] = [Media::JsonApi, Media::Csv];

/// `GET /v1/wholesale`: a centre's terminal gate prices by day, with the margin.
pub struct Wholesale;

impl Endpoint for Wholesale {
    const PATH: &'static str = routes::WHOLESALE;
    const ERRORS: Flavor = Flavor::JsonApi;
    const OFFER: Offer = Offer::Negotiated(&WHOLESALE_MEDIA);
    const FRESHNESS: Freshness = Freshness::Stored;
    const STORED: bool = true;
    type Query = WholesaleQuery;

    fn parse(_: Option<&str>, query: &str, now: Timestamp) -> Result<WholesaleQuery, QueryError> {
        parse_wholesale(query, now)
    }

    fn key(query: &WholesaleQuery, media: Media) -> RenderKey {
        RenderKey::Wholesale(query.clone(), media)
    }

    async fn build(
        state: &AppState,
        query: &WholesaleQuery,
        media: Media,
        now: Timestamp,
    ) -> Result<Rendered, ApiError> {
        let doc = state.catalog.wholesale().document(query).await?;
        let identity = match media {
            Media::Csv => wholesale_csv(&doc),
            _ => wholesale_jsonapi(&doc, &state.meta),
        }?;
        Ok(stored_document(identity, now))
    }
}
