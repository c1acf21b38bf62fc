//! The document models: what a price or station document says, as plain data. The catalog
//! builds them (`catalog/documents.rs`), `render/` writes their bytes, and neither knows the
//! other. Pure.

use std::collections::HashMap;
use std::sync::Arc;

use jiff::Timestamp;
use jiff::civil::Date;

use super::geo::Point;
use super::key::{StationId, resource_id};
use super::profile::Merged;
use super::station::{Quote, Station};
use crate::codes::ProductCode;

/// `meta.publicationStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublicationStatus {
    Available,
    Empty,
    NotYetPublished,
}

impl PublicationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PublicationStatus::Available => "available",
            PublicationStatus::Empty => "empty",
            PublicationStatus::NotYetPublished => "not_yet_published",
        }
    }
}

/// Where a document's prices came from (`X-Fuel-Snapshot-Cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SnapshotCache {
    Hit,
    Miss,
    Bypass,
}

impl SnapshotCache {
    pub fn as_str(self) -> &'static str {
        match self {
            SnapshotCache::Hit => "HIT",
            SnapshotCache::Miss => "MISS",
            SnapshotCache::Bypass => "BYPASS",
        }
    }
}

/// The configurable members of `meta`.
#[derive(Debug, Clone)]
pub struct DocumentMeta {
    pub copyright: String,
    pub documentation: String,
    pub issues: String,
}

impl Default for DocumentMeta {
    fn default() -> Self {
        Self {
            copyright: "Fuel prices © State of Western Australia (FuelWatch), reproduced unofficially. wafuel API © the wafuel authors.".into(),
            documentation: "https://github.com/wafuel/wafuel#readme".into(),
            issues: "https://github.com/wafuel/wafuel/issues".into(),
        }
    }
}

/// Which code lists a document writes as objects with names (`expand=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Expand {
    pub brand: bool,
    pub site_features: bool,
    pub restrictions: bool,
}

/// What a document is about: the Perth date of its prices, the selected products (ascending)
/// and the code lists it expands.
#[derive(Debug, Clone, PartialEq)]
pub struct Scope {
    pub date: Date,
    pub products: Vec<ProductCode>,
    pub expand: Expand,
}

/// A station with its selected prices, in product order.
#[derive(Debug, Clone)]
pub struct PriceRow {
    pub station: Arc<Station>,
    /// The `/v1` resource id, `<date>:<digest>`.
    pub id: String,
    pub prices: Vec<(ProductCode, f64)>,
}

/// Group quotes by station, prices in product order, rows by suburb, name, then id
/// (docs/api.md "`/v1`: the price document").
pub fn price_rows<'q>(quotes: impl IntoIterator<Item = &'q Quote>, date: &str) -> Vec<PriceRow> {
    let mut rows: Vec<PriceRow> = grouped_prices(quotes)
        .into_iter()
        .map(|(q, prices)| PriceRow {
            station: q.station.clone(),
            id: resource_id(date, &q.station.id),
            prices,
        })
        .collect();
    rows.sort_by(|a, b| document_order(&a.station, &b.station));
    rows
}

/// The order of a price document's rows: suburb, name, then id. The ids of one document
/// share its date, so the digest orders them.
pub fn document_order(a: &Station, b: &Station) -> std::cmp::Ordering {
    a.suburb.cmp(&b.suburb).then_with(|| a.name.cmp(&b.name)).then_with(|| a.id.cmp(&b.id))
}

/// The quotes grouped by station, in the order of each station's first quote (which stands
/// for the station), with its prices in product order, one per product.
pub fn grouped_prices<'q>(
    quotes: impl IntoIterator<Item = &'q Quote>,
) -> Vec<(&'q Quote, Vec<(ProductCode, f64)>)> {
    let quotes = quotes.into_iter();
    let expected = quotes.size_hint().0;
    // Digests are the service's own SHA-256 hex, never a client's text: a fast hash is safe.
    let mut index: HashMap<&str, usize, foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(expected, Default::default());
    let mut groups: Vec<(&'q Quote, Vec<(ProductCode, f64)>)> = Vec::with_capacity(expected);
    for q in quotes {
        match index.get(q.station.id.as_str()) {
            Some(&i) => groups[i].1.push((q.product, q.price)),
            None => {
                index.insert(q.station.id.as_str(), groups.len());
                groups.push((q, vec![(q.product, q.price)]));
            }
        }
    }
    for (_, prices) in &mut groups {
        prices.sort_by_key(|(p, _)| *p);
        prices.dedup_by_key(|(p, _)| *p);
    }
    groups
}

/// A `/v1` price document.
#[derive(Debug, Clone)]
pub struct PriceDoc<'m> {
    pub scope: Scope,
    pub rows: Vec<PriceRow>,
    /// Oldest contributing origin fetch.
    pub fetched_at: Timestamp,
    pub status: PublicationStatus,
    pub meta: &'m DocumentMeta,
    /// Provider contributions by station digest (empty when enrichment is off or failed).
    pub enrichment: HashMap<StationId, Merged>,
}

/// A `/legacy` document: one item per quote, in the order given.
#[derive(Debug, Clone)]
pub struct LegacyDoc {
    pub date: Date,
    pub quotes: Vec<Quote>,
    /// Whether every item names its product (more than one product selected).
    pub multi_product: bool,
}

/// What the station API adds to a station's attributes (docs/api.md); `/v1` has none.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct StationExtra {
    /// The following day's prices of the selected products; `None` = null.
    pub next: Option<Vec<(ProductCode, f64)>>,
    /// next − base per product where both exist.
    pub change: Vec<(ProductCode, f64)>,
    /// Great-circle metres from `near`.
    pub distance: Option<i64>,
    /// Great-circle metres off the route (route searches).
    pub detour: Option<i64>,
    /// Metres along the route from its start to the station's nearest point (route searches).
    pub along: Option<i64>,
    /// Cents the stop costs: the fill and the fuel burnt getting there and back.
    pub cost: Option<i64>,
    /// Position by price (ties share a rank).
    pub rank: Option<usize>,
    /// Open at the answer's instant (`meta.openAt`), and the next closing and opening.
    pub open: crate::opening::OpenState,
    /// The prices less the query's discount at the station's brand (the prices without one).
    pub effective: Vec<(ProductCode, f64)>,
    /// Per fuel of `prices`: the day its current price began and the price before it, when
    /// the stored history reaches that change.
    pub last_change: Vec<(ProductCode, Option<(jiff::civil::Date, f64)>)>,
}

/// A station of a station document.
#[derive(Debug, Clone)]
pub struct StationRow {
    pub row: PriceRow,
    pub extra: StationExtra,
    /// The provider's contributions merged into the station, which its filters, `open` and
    /// attributes all read (`None`: the feed's own values alone).
    pub merged: Option<Merged>,
}

impl StationRow {
    /// The public station id (the `/v1` id without its date).
    pub fn station_id(&self) -> &str {
        self.row.station.id.as_str()
    }
}

/// The following day, as `meta.next` tells it.
#[derive(Debug, Clone)]
pub struct NextDay {
    pub date: Date,
    pub status: PublicationStatus,
}

/// The circle a nearby search covered (`meta.near`, `meta.radius`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Circle {
    pub centre: Point,
    pub radius_m: f64,
}

/// A route as a route search read it.
#[derive(Debug, Clone, Copy)]
pub struct RouteSummary {
    pub points: usize,
    /// Metres, rounded.
    pub length_m: i64,
    pub detour_m: f64,
}

/// A station document: the list (`/v1/stations`) or one station.
#[derive(Debug, Clone)]
pub struct StationsDoc<'m> {
    pub scope: Scope,
    pub near: Option<Circle>,
    /// A route search: what the route was read as.
    pub route: Option<RouteSummary>,
    /// A stop's fill and consumption, in tenths (litres; litres per 100 km).
    pub stop: Option<(i64, i64)>,
    /// Already searched: filtered, sorted, ranked and limited.
    pub rows: Vec<StationRow>,
    pub fetched_at: Timestamp,
    pub status: PublicationStatus,
    pub next: NextDay,
    pub meta: &'m DocumentMeta,
    /// One station (`/v1/stations/{id}`): a single resource, not a collection.
    pub one: bool,
    /// A favourites query: the ids asked for that the answer does not list.
    pub missing: Option<Vec<String>>,
    /// The Perth time stations' `open` is evaluated at.
    pub open_at: jiff::civil::DateTime,
    /// The query's discounts: (brand, tenths of a cent).
    pub discounts: Option<Vec<(u8, i64)>>,
    /// The suburbs asked for that no station of the day is in, each with up to three known
    /// names close to it; `None` without a `suburb` filter or when every one is known.
    pub unknown_suburbs: Option<Vec<UnknownSuburb>>,
}

/// A suburb no station of the day is in, and the known names it may have meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownSuburb {
    pub suburb: String,
    pub did_you_mean: Vec<String>,
}

/// A forecast document (`/v1/forecast`, `/v1/stations/{id}/forecast`).
#[derive(Debug, Clone)]
pub struct ForecastDoc {
    pub product: ProductCode,
    /// The station route's station.
    pub station: Option<crate::key::StationId>,
    pub brands: Option<Vec<crate::codes::BrandCode>>,
    pub regions: Option<Vec<crate::codes::RegionCode>>,
    pub forecast: crate::forecast::Forecast,
    /// The replayed accuracy, shared by every answer of one (product, filter, asOf).
    pub accuracy: std::sync::Arc<crate::forecast::Accuracy>,
    /// The live record's accuracy: the forecasts recorded for this subject up to `asOf`,
    /// scored on the days published by then; `None` until one is scored.
    pub live: Option<crate::forecast::LiveAccuracy>,
}

/// `/v1/brands`: every brand code with how many stations the day lists under it.
#[derive(Debug, Clone)]
pub struct BrandsDoc {
    pub date: jiff::civil::Date,
    pub fetched_at: Timestamp,
    /// (code, stations), in code order: every mapped brand, and the unmapped code 0 when the
    /// day lists a station under it.
    pub brands: Vec<(u8, usize)>,
}

/// `/v1/status`: is the service updating? From the shared store, and what this replica saw.
#[derive(Debug, Clone)]
pub struct StatusDoc {
    pub now: Timestamp,
    pub today: jiff::civil::Date,
    pub tomorrow: jiff::civil::Date,
    /// When tomorrow's prices are published (14:30 Perth today).
    pub expected_at: Timestamp,
    /// Per product: today's and tomorrow's whole-state extracts, if stored.
    pub products: Vec<(ProductCode, Option<Published>, Option<Published>)>,
    /// This replica's last request to the origin that answered, and the last that failed.
    pub origin_success: Option<Timestamp>,
    pub origin_failure: Option<(Timestamp, &'static str)>,
    /// This replica's last warm pass: when, refreshed, skipped and failed extracts.
    pub warm: Option<(Timestamp, usize, usize, usize)>,
    /// The newest day of Perth's stored terminal gate price of unleaded.
    pub wholesale_day: Option<jiff::civil::Date>,
    /// The history's first and last day with a price, and its stations.
    pub history: Option<(jiff::civil::Date, jiff::civil::Date)>,
    pub history_stations: usize,
    /// Stations with a provider profile.
    pub enriched: usize,
    /// The history backfill's progress, as every replica reads it.
    pub backfill: crate::backfill::Backfill,
}

/// A stored whole-state extract of one product and day: when it was fetched, and whether it
/// lists any price.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    pub fetched_at: Timestamp,
    pub priced: bool,
}

/// `/v1/forecast/record`: one subject's recorded forecasts with their outcomes.
#[derive(Debug, Clone)]
pub struct RecordDoc {
    pub product: ProductCode,
    pub station: Option<crate::key::StationId>,
    pub brands: Option<Vec<crate::codes::BrandCode>>,
    pub regions: Option<Vec<crate::codes::RegionCode>>,
    pub from: jiff::civil::Date,
    pub to: jiff::civil::Date,
    pub records: Vec<crate::forecast::Recorded>,
    pub live: Option<crate::forecast::LiveAccuracy>,
}

/// What one alert of the event stream reports for one publish (docs/api.md "Alerts"): the
/// watched stations that matched, cheapest first, one entry each. Written as the `data` of a
/// `price` event by `render`.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceAlert {
    /// The day of the catalog published.
    pub date: Date,
    pub product: ProductCode,
    pub stations: Vec<AlertedStation>,
}

/// One station an alert reports: its price that day, and the day before's when the store has it.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertedStation {
    /// The station id (the SHA-256 digest of its key).
    pub id: String,
    pub name: String,
    pub price: f64,
    pub previous: Option<f64>,
}
