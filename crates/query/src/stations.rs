//! Query strings of the station API (docs/api.md) → validated requests: nearby or along a
//! route, with distance, ranking and what a stop costs; one station, its history, market statistics. Read by the one
//! grammar (`query::grammar`), decided here before any store or source access. Pure.

use std::sync::Arc;

use jiff::Timestamp;

use super::grammar::{
    MAX_QUERY_LEN, MAX_ROUTE_QUERY_LEN, Param, QueryError, Values, invalid, invalid_in, plain, read,
    tenths_within,
};
use super::selection::{Dialect, Selection, V1_PARAMS, code_list, codes, parse_selection_up_to, selection};
use super::values::{WA_LATITUDE, WA_LONGITUDE, iso_date, kilometres, parse_near, radius_km, station_id};
use wafuel_domain::codes::{BrandCode, StationBrand};
use wafuel_domain::geo::Point;
use wafuel_domain::key::StationId;
use wafuel_domain::route;
use wafuel_domain::station::Station;
use wafuel_domain::time::perth_now;

/// Default and largest `detour` off a route, in kilometres.
pub const DEFAULT_DETOUR_KM: f64 = 2.0;
pub const MAX_DETOUR_KM: f64 = 20.0;
/// Largest corridor a route search covers (its length × 2 × `detour`), in km²: it bounds the
/// search's work (6,000 km of route at the 20 km maximum, or 60,000 km at 2 km).
pub const MAX_CORRIDOR_KM2: f64 = 250_000.0;
/// Bounds of a stop's `fill` (litres) and `consumption` (litres per 100 km), in tenths.
pub const FILL_TENTHS: (i64, i64) = (10, 2_000);
pub const CONSUMPTION_TENTHS: (i64, i64) = (10, 300);
/// Largest `limit`.
pub const MAX_LIMIT: usize = 5_000;
/// How `/v1/stations` orders its stations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sort {
    /// Nearest first (needs `near`).
    Distance,
    /// Cheapest first for the one selected product.
    Price,
    /// By name.
    Name,
    /// `/v1`'s order: suburb, name, id.
    Suburb,
    /// By the distance along a route from its start (needs `route`).
    Along,
    /// By the distance off a route (needs `route`).
    Detour,
    /// Cheapest stop first: fuel bought plus fuel burnt getting there (needs `fill`).
    Cost,
    /// The order of the ids asked (`id` without `sort`).
    Asked,
}

impl Sort {
    pub fn as_str(self) -> &'static str {
        match self {
            Sort::Distance => "distance",
            Sort::Price => "price",
            Sort::Name => "name",
            Sort::Suburb => "suburb",
            Sort::Along => "along",
            Sort::Detour => "detour",
            Sort::Cost => "cost",
            Sort::Asked => "id",
        }
    }
}

/// A validated `/v1/stations` (or `/v1/stations/{id}`) request. Equal queries are equal
/// values (and hash alike, coordinates by their bits), so one is a cache key.
#[derive(Debug, Clone, PartialEq)]
pub struct StationsQuery {
    /// The base day's selection (filters, day, expand), as `/v1` would read it.
    pub selection: Selection,
    pub near: Option<Point>,
    /// Metres; only meaningful with `near`.
    pub radius_m: f64,
    pub sort: Sort,
    pub limit: Option<usize>,
    /// Stations along a route (never with `near`).
    pub route: Option<RouteSearch>,
    /// What a stop costs (with `near` or `route`).
    pub stop: Option<StopCost>,
    /// The station API's own filters: favourites, features, brands and restrictions left out.
    pub keep: Keep,
    /// `open`: keep the stations open then (and evaluate every station's hours then).
    pub open: Option<OpenAt>,
    /// `discount`: the docket or card discount per brand (tenths of a cent), by brand.
    pub discounts: Option<Vec<(BrandCode, i64)>>,
}

/// Brands a `discount` may name, and the largest discount (tenths of a cent: 50 c/L).
pub const MAX_DISCOUNTS: usize = 10;
pub const MAX_DISCOUNT_TENTHS: i64 = 500;

/// `discount=<brand>:<c/L>,…`: up to [`MAX_DISCOUNTS`] distinct brands, each 0 < d ≤ 50 with
/// at most one decimal; by brand code.
fn discounts(value: &str) -> Result<Vec<(BrandCode, i64)>, QueryError> {
    let mut out: Vec<(BrandCode, i64)> = Vec::new();
    for item in value.split(',') {
        let rule = "discount takes brand:cents-a-litre pairs, comma-separated, each discount more than 0 \
                    and at most 50 with at most one decimal, e.g. discount=2:4,23:6.5";
        let bad = |why: String| invalid_in("discount", format!("{rule}; {why}"));
        let (brand, amount) =
            item.trim().split_once(':').ok_or_else(|| bad(format!("{:?} has no ':'", item.trim())))?;
        let brand: Vec<BrandCode> = code_list(brand, "brand")
            .map_err(|_| bad(format!("{brand:?} is not a brand code (GET /v1/brands)")))?;
        let [brand] = brand.as_slice() else { return Err(bad(format!("{item:?} names no single brand"))) };
        // As written: `3:+4` is `3: 4` once decoded, and no discount has spaces.
        let tenths = tenths_within("discount", amount, (1, MAX_DISCOUNT_TENTHS), "discount=2:4")
            .map_err(|_| bad(format!("{amount:?} is not such a discount")))?;
        if out.iter().any(|(b, _)| b == brand) {
            return Err(bad(format!("brand {brand} is named twice")));
        }
        out.push((*brand, tenths));
    }
    if out.len() > MAX_DISCOUNTS {
        return Err(invalid_in(
            "discount",
            format!("discount names {} brands; at most {MAX_DISCOUNTS}, e.g. discount=2:4", out.len()),
        ));
    }
    out.sort_by_key(|(b, _)| *b);
    Ok(out)
}

impl StationsQuery {
    /// The discount at a brand (tenths of a cent), 0 without one.
    pub fn discount(&self, brand: StationBrand) -> i64 {
        self.discounts.as_ref().and_then(|d| d.iter().find(|(b, _)| *b == brand)).map_or(0, |(_, t)| *t)
    }
}

/// When `open` asks about (Perth time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpenAt {
    /// The answer's own instant.
    Now,
    At(jiff::civil::DateTime),
}

/// How far ahead `open` may ask.
pub const OPEN_AHEAD_DAYS: i64 = 7;

const OPEN_RULE: &str = "open is now, a time today as HH:MM or a Perth date and time up to 7 days ahead as \
                         YYYY-MM-DDTHH:MM, e.g. open=now or open=21:30";

/// `open=now|HH:MM|YYYY-MM-DDTHH:MM`: `HH:MM` is today; a date-time from today's midnight to
/// [`OPEN_AHEAD_DAYS`] days ahead of `now`.
fn open_at(value: &str, now: Timestamp) -> Result<OpenAt, QueryError> {
    let v = value.trim();
    if v.eq_ignore_ascii_case("now") {
        return Ok(OpenAt::Now);
    }
    let here = perth_now(now).datetime();
    let clock = |t: &str| -> Option<jiff::civil::Time> {
        let b = t.as_bytes();
        let shape =
            b.len() == 5 && b[2] == b':' && b.iter().enumerate().all(|(i, c)| i == 2 || c.is_ascii_digit());
        let (h, m) = (t.get(..2)?.parse::<i8>().ok()?, t.get(3..)?.parse::<i8>().ok()?);
        if shape { jiff::civil::Time::new(h, m, 0, 0).ok() } else { None }
    };
    let at = match v.split_once('T') {
        None => clock(v).map(|t| here.date().to_datetime(t)),
        Some((d, t)) => iso_date("open", d).ok().zip(clock(t)).map(|(d, t)| d.to_datetime(t)),
    }
    .ok_or_else(|| invalid_in("open", format!("{OPEN_RULE}; not {value:?}")))?;
    let latest = here.checked_add(jiff::Span::new().days(OPEN_AHEAD_DAYS)).unwrap_or(here);
    if at < here.date().to_datetime(jiff::civil::Time::midnight()) || at > latest {
        return Err(invalid_in(
            "open",
            format!(
                "{OPEN_RULE}; {value} is not between today's midnight and {OPEN_AHEAD_DAYS} days from now"
            ),
        ));
    }
    Ok(OpenAt::At(at))
}

/// Favourites, at most this many ids.
pub const MAX_IDS: usize = 50;
/// A query with `id` may be this long (fifty ids and their commas, with room for the rest).
pub const MAX_ID_QUERY_LEN: usize = 4096;

/// `id`, `feature`, `excludeBrand` and `excludeRestriction`: which stations of the search
/// are kept (each test is the station's own, read from the day catalog's station).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Keep {
    /// Only these stations, in the order asked (distinct).
    pub ids: Option<Vec<StationId>>,
    /// Stations whose features hold every one of these codes.
    pub features: Option<Vec<u8>>,
    /// Brands left out.
    pub exclude_brands: Option<Vec<BrandCode>>,
    /// Stations with any of these restrictions left out.
    pub exclude_restrictions: Option<Vec<u8>>,
}

impl Keep {
    /// Whether the filters keep `station`, whose features as its answer shows them (the
    /// provider's merged in) are `features`, ascending.
    pub fn keeps(&self, station: &Station, features: &[u8]) -> bool {
        self.ids.as_ref().is_none_or(|ids| ids.contains(&station.id))
            && self.features.as_ref().is_none_or(|f| f.iter().all(|c| features.binary_search(c).is_ok()))
            && self.exclude_brands.as_ref().is_none_or(|b| b.iter().all(|c| *c != station.brand))
            && self.exclude_restrictions.as_ref().is_none_or(|r| {
                let held = station.restrictions.as_deref().unwrap_or(&[]);
                r.iter().all(|c| !held.contains(c))
            })
    }

    /// Whether any filter is given.
    pub fn any(&self) -> bool {
        self.ids.is_some()
            || self.features.is_some()
            || self.exclude_brands.is_some()
            || self.exclude_restrictions.is_some()
    }

    /// Where `station` stands in the ids asked (the order of a favourites answer).
    pub fn position(&self, station: &StationId) -> usize {
        self.ids.as_ref().and_then(|ids| ids.iter().position(|id| id == station)).unwrap_or(usize::MAX)
    }
}

/// `id=`: 1…[`MAX_IDS`] distinct station ids, in the order given.
fn station_ids(value: &str) -> Result<Vec<StationId>, QueryError> {
    let mut out: Vec<StationId> = Vec::new();
    for item in value.split(',') {
        let id = station_id(item.trim()).map_err(|e| e.for_parameter("id"))?;
        if out.contains(&id) {
            return Err(invalid_in("id", format!("id names station {} twice; name each once", id.as_str())));
        }
        out.push(id);
    }
    if out.len() > MAX_IDS {
        return Err(invalid_in("id", format!("id names {} stations; at most {MAX_IDS}", out.len())));
    }
    Ok(out)
}

/// The station API's own filters of a query's values.
fn keep(values: &Values, selection: &Selection) -> Result<Keep, QueryError> {
    let get = |name: &str| values.get(name).map(str::trim);
    let ids = get("id").map(station_ids).transpose()?;
    let features = get("feature")
        .map(|v| codes(v, "feature", |c| wafuel_domain::codes::feature(c).is_some()))
        .transpose()?;
    let exclude_brands = get("excludebrand").map(|v| code_list(v, "excludeBrand")).transpose()?;
    if let (Some(kept), Some(left)) = (&selection.brands, &exclude_brands)
        && let Some(both) = left.iter().find(|b| kept.contains(b))
    {
        return Err(invalid_in(
            "excludeBrand",
            format!("brand {both} is both in brand and in excludeBrand; name it in one of them"),
        ));
    }
    let exclude_restrictions = get("excluderestriction")
        .map(|v| codes(v, "excludeRestriction", |c| wafuel_domain::codes::restriction(c).is_some()))
        .transpose()?;
    Ok(Keep { ids, features, exclude_brands, exclude_restrictions })
}

/// `route` and `detour`: the stations within `detour_m` of the decoded route.
#[derive(Debug, Clone)]
pub struct RouteSearch {
    /// The polyline as sent: equal texts decode to equal routes, so it is the key.
    pub encoded: Box<str>,
    pub route: Arc<route::Route>,
    pub detour_m: f64,
}

impl PartialEq for RouteSearch {
    fn eq(&self, other: &Self) -> bool {
        self.encoded == other.encoded && self.detour_m.to_bits() == other.detour_m.to_bits()
    }
}

/// What a stop costs (its arithmetic is the domain's).
pub use wafuel_domain::stop_cost::StopCost;

impl StationsQuery {
    /// Bytes the query holds on the heap: a route's text and decoded route.
    pub fn heap_bytes(&self) -> usize {
        self.route.as_ref().map_or(0, |r| r.encoded.len() + r.route.heap_bytes())
    }

    /// The fields that are not exact numbers, as bits.
    fn bits(&self) -> (Option<(u64, u64)>, u64) {
        (self.near.map(|p| (p.latitude.to_bits(), p.longitude.to_bits())), self.radius_m.to_bits())
    }
}

/// Parsed numbers are never NaN, so equality on them is an equivalence.
impl Eq for StationsQuery {}

impl std::hash::Hash for StationsQuery {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.selection.hash(state);
        self.bits().hash(state);
        self.sort.hash(state);
        self.limit.hash(state);
        self.route.as_ref().map(|r| (&r.encoded, r.detour_m.to_bits())).hash(state);
        self.stop.hash(state);
        self.keep.hash(state);
        self.open.hash(state);
        self.discounts.hash(state);
    }
}

/// Parse `/v1/stations` at `now`.
pub fn parse_stations(raw: &str, now: Timestamp) -> Result<StationsQuery, QueryError> {
    const EXTRAS: [Param; 14] = [
        plain("discount"),
        plain("open"),
        plain("id"),
        plain("feature"),
        plain("excludebrand"),
        plain("excluderestriction"),
        plain("near"),
        plain("radius"),
        plain("sort"),
        plain("limit"),
        plain("route"),
        plain("detour"),
        plain("fill"),
        plain("consumption"),
    ];
    // A route's polyline may make the query up to 8,192 characters; any other stays at 1,024.
    let (selection, values) = parse_selection_up_to(Dialect::V1, raw, now, &EXTRAS, MAX_ROUTE_QUERY_LEN)?;
    // Every parameter of its own is written without spaces, but near, radius, detour, limit
    // and sort, whose documented forms allow them around the value as the reference's do.
    values.unspaced(&EXTRAS, &["near", "radius", "detour", "limit", "sort"])?;
    let get = |name: &str| values.get(name).map(str::trim);
    // Fifty favourites' ids make a query up to 4,096 characters.
    let bound = match (get("route"), get("id")) {
        (Some(_), _) => MAX_ROUTE_QUERY_LEN,
        (None, Some(_)) => MAX_ID_QUERY_LEN,
        (None, None) => MAX_QUERY_LEN,
    };
    if raw.len() > bound {
        return Err(invalid(format!(
            "the query is {} characters long; at most {bound} are read here (4,096 with id, 8,192 with route)",
            raw.len()
        )));
    }
    let keep = keep(&values, &selection)?;
    let open = get("open").map(|v| open_at(v, now)).transpose()?;
    let discounts = get("discount").map(discounts).transpose()?;
    let near = get("near").map(parse_near).transpose()?;
    let radius_km = radius_km(get("radius"), near.is_some())?;
    let route = match get("route") {
        None if get("detour").is_some() => {
            return Err(invalid_in("detour", "detour needs route (an encoded polyline)"));
        }
        None => None,
        Some(_) if near.is_some() => {
            return Err(invalid_in(
                "route",
                "route and near do not go together: ask along a route or near a point",
            ));
        }
        Some(encoded) => {
            let bounds = (WA_LATITUDE, WA_LONGITUDE);
            let decoded = route::Route::decode(encoded, bounds).map_err(|e| {
                invalid_in(
                    "route",
                    format!(
                        "route is an encoded polyline (precision 5, as map services return) of 2 to 1,000 points \
                         inside Western Australia; {e}"
                    ),
                )
            })?;
            let detour_km = match get("detour") {
                None => DEFAULT_DETOUR_KM,
                Some(v) => kilometres("detour", v, MAX_DETOUR_KM, "detour=2")?,
            };
            // The search's work grows with the corridor's area (the grid cells it covers and
            // the segments each cell names), so the area is what is bounded.
            let corridor_km2 = decoded.length_m() / 1000.0 * 2.0 * detour_km;
            if corridor_km2 > MAX_CORRIDOR_KM2 {
                return Err(invalid_in(
                    "detour",
                    format!(
                        "the route's corridor is {corridor_km2:.0} km² (length × 2 × detour), over \
                         {MAX_CORRIDOR_KM2:.0} km²: ask with a smaller detour or a shorter route"
                    ),
                ));
            }
            Some(RouteSearch {
                encoded: encoded.into(),
                route: Arc::new(decoded),
                detour_m: detour_km * 1000.0,
            })
        }
    };
    let stop = match (get("fill"), get("consumption")) {
        (None, None) => None,
        (Some(_), None) => {
            return Err(invalid_in(
                "consumption",
                "fill needs consumption too, e.g. fill=50&consumption=8.5",
            ));
        }
        (None, Some(_)) => {
            return Err(invalid_in("fill", "consumption needs fill too, e.g. fill=50&consumption=8.5"));
        }
        (Some(_), Some(_)) if near.is_none() && route.is_none() => {
            return Err(invalid_in(
                "fill",
                "fill needs near or route: the drive is from a point or along a route",
            ));
        }
        (Some(_), Some(_)) if selection.products.len() != 1 => {
            return Err(invalid_in("product", "fill needs exactly one product, e.g. product=1"));
        }
        (Some(f), Some(c)) => Some(StopCost {
            fill_tenths: tenths_within("fill", f, FILL_TENTHS, "fill=50")?,
            consumption_tenths: tenths_within("consumption", c, CONSUMPTION_TENTHS, "consumption=8.5")?,
        }),
    };
    let one_product = selection.products.len() == 1;
    let sort = match get("sort").map(str::to_ascii_lowercase).as_deref() {
        None if keep.ids.is_some() => Sort::Asked,
        None if near.is_some() => Sort::Distance,
        None if route.is_some() => Sort::Along,
        None => Sort::Suburb,
        Some("distance") if near.is_some() => Sort::Distance,
        Some("distance") => {
            return Err(invalid_in("sort", "sort=distance needs near, e.g. near=-31.95,115.86"));
        }
        Some("along") if route.is_some() => Sort::Along,
        Some("detour") if route.is_some() => Sort::Detour,
        Some(s @ ("along" | "detour")) => return Err(invalid_in("sort", format!("sort={s} needs route"))),
        Some("cost") if stop.is_some() => Sort::Cost,
        Some("cost") => {
            return Err(invalid_in(
                "sort",
                "sort=cost needs fill and consumption, e.g. fill=50&consumption=8.5",
            ));
        }
        Some("price") if one_product => Sort::Price,
        Some("price") => {
            return Err(invalid_in("sort", "sort=price needs exactly one product, e.g. product=1"));
        }
        Some("name") => Sort::Name,
        Some(other) => {
            return Err(invalid_in(
                "sort",
                format!(
                    "sort is distance, along, detour, price, cost or name, e.g. sort=price; not {other:?}"
                ),
            ));
        }
    };
    let limit = match get("limit") {
        None => None,
        Some(v) => {
            let ok = !v.is_empty() && v.len() <= 4 && v.bytes().all(|b| b.is_ascii_digit());
            let n: usize = if ok { v.parse().unwrap_or(0) } else { 0 };
            if !(1..=MAX_LIMIT).contains(&n) {
                return Err(invalid_in(
                    "limit",
                    format!("limit is a whole number from 1 to {MAX_LIMIT}, e.g. limit=10; not {v:?}"),
                ));
            }
            Some(n)
        }
    };
    Ok(StationsQuery {
        selection,
        near,
        radius_m: radius_km * 1000.0,
        sort,
        limit,
        route,
        stop,
        keep,
        open,
        discounts,
    })
}

/// A validated `/v1/brands` request: today's stations of every product (no parameters).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BrandsQuery {
    pub selection: Selection,
}

/// Parse `/v1/brands` at `now`: it takes no parameters.
pub fn parse_brands(raw: &str, now: Timestamp) -> Result<BrandsQuery, QueryError> {
    Ok(BrandsQuery { selection: selection(Dialect::V1, &read(raw, &[])?, now)? })
}

/// Parse `/v1/status`: it takes no parameters.
pub fn parse_status(raw: &str) -> Result<(), QueryError> {
    read(raw, &[]).map(|_| ())
}

/// Parse `/v1/stations/{id}`: only `day` and `expand` apply (all products, no filters).
pub fn parse_station(id: &str, raw: &str, now: Timestamp) -> Result<(StationId, StationsQuery), QueryError> {
    let id = station_id(id)?;
    let params: Vec<Param> = V1_PARAMS.into_iter().filter(|p| matches!(p.name, "day" | "expand")).collect();
    let selection = selection(Dialect::V1, &read(raw, &params)?, now)?;
    Ok((
        id,
        StationsQuery {
            selection,
            near: None,
            radius_m: 0.0,
            sort: Sort::Suburb,
            limit: None,
            route: None,
            stop: None,
            keep: Keep::default(),
            open: None,
            discounts: None,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::{parse_history, parse_stats};
    use jiff::civil::date;
    use wafuel_domain::codes::RegionCode;
    use wafuel_domain::stats::Interval;
    use wafuel_domain::time::perth_instant;

    fn at(h: i8) -> Timestamp {
        perth_instant(date(2026, 11, 20).at(h, 0, 0, 0))
    }

    const ID: &str = "238232d151f5f92bbce32951b828cb7fe4887fdc1ac868628c7ab33d4eda4e3b";

    #[test]
    fn nearby_defaults_and_rules() {
        let q = parse_stations("near=-31.95,115.86&product=1", at(10)).expect("ok");
        assert_eq!(q.near, Some(Point { latitude: -31.95, longitude: 115.86 }));
        assert_eq!(q.radius_m, 10_000.0);
        assert_eq!(q.sort, Sort::Distance);
        assert_eq!(parse_stations("", at(10)).expect("ok").sort, Sort::Suburb);
        let q = parse_stations("NEAR=-31.95,115.86&Radius=2.5&sort=PRICE&filter[product]=4&limit=3", at(10))
            .expect("ok");
        assert_eq!((q.radius_m, q.sort, q.limit), (2_500.0, Sort::Price, Some(3)));
        assert_eq!(parse_stations("sort=name", at(10)).expect("ok").sort, Sort::Name);
    }

    #[test]
    fn favourites_and_the_station_filters() {
        let other = ID.replace('2', "3");
        let q = parse_stations(&format!("product=1&id={ID},{other}"), at(10)).expect("ok");
        assert_eq!(q.sort, Sort::Asked);
        assert_eq!(
            q.keep.ids.as_ref().map(|i| i.iter().map(|s| s.as_str().to_string()).collect::<Vec<_>>()),
            Some(vec![ID.to_string(), other.clone()])
        );
        assert_eq!(q.keep.position(&StationId::parse(&other).expect("an id")), 1);
        let q =
            parse_stations(&format!("id={ID}&sort=price&product=1&near=-31.95,115.86"), at(10)).expect("ok");
        assert_eq!(q.sort, Sort::Price);
        let q =
            parse_stations("feature=5,10,5&excludeBrand=2&excludeRestriction=3&brand=5", at(10)).expect("ok");
        assert_eq!(q.keep.features, Some(vec![5, 10]));
        assert_eq!(
            q.keep.exclude_brands.map(|b| b.iter().map(|c| c.get()).collect::<Vec<_>>()),
            Some(vec![2])
        );
        assert_eq!(q.keep.exclude_restrictions, Some(vec![3]));
        // Fifty ids make a query past 1,024 characters: allowed up to 4,096.
        let fifty: Vec<String> = (0..50).map(|i| format!("{i:064x}")).collect();
        assert!(parse_stations(&format!("product=1&id={}", fifty.join(",")), at(10)).is_ok());
        for bad in [
            format!("id={}", (0..51).map(|i| format!("{i:064x}")).collect::<Vec<_>>().join(",")),
            format!("id={ID},{ID}"),
            "id=".to_string(),
            "id=xyz".to_string(),
            format!("id={}", ID.to_uppercase().replace('E', "G")),
            "feature=0".to_string(),
            "feature=22".to_string(),
            "feature=a".to_string(),
            "excludeBrand=200".to_string(),
            "brand=2&excludeBrand=2".to_string(),
            "excludeRestriction=0".to_string(),
            format!("product=1&suburb={}", "A".repeat(1100)),
        ] {
            assert!(parse_stations(&bad, at(10)).is_err(), "{bad}");
        }
    }

    #[test]
    fn nearby_rejections() {
        let bad = [
            "near=-31.95",
            "near=-31.95,115.86,1",
            "near=-40,115.86",
            "near=-31.95,140",
            "near=1e1,115",
            "near=-31.95,115.86&near=-31.9,115.8",
            "near=nan,115",
            "radius=5",
            "near=-31.95,115.86&radius=0",
            "near=-31.95,115.86&radius=100.1",
            "near=-31.95,115.86&radius=-1",
            "sort=distance",
            "sort=price",
            "near=-31.95,115.86&sort=price&product=1,2",
            "sort=cheapest",
            "limit=0",
            "limit=5001",
            "limit=1.5",
            "limit=",
            "product=3",
            "colour=red",
        ];
        for q in bad {
            assert!(parse_stations(q, at(10)).is_err(), "{q} should be rejected");
        }
    }

    /// Perth CBD → Fremantle (four points), as a routing service would encode it.
    const ROUTE: &str = "zt_bEcddbUbhAzoDfsGnlFjoHj~H";

    #[test]
    fn route_and_stop_cost() {
        let q = parse_stations(&format!("route={ROUTE}&product=1"), at(10)).expect("ok");
        let r = q.route.as_ref().expect("route");
        assert_eq!((r.route.points().len(), r.detour_m, q.sort), (4, 2_000.0, Sort::Along));
        let q = parse_stations(
            &format!("route={ROUTE}&detour=0.5&sort=COST&fill=50&consumption=7.5&product=4"),
            at(10),
        )
        .expect("ok");
        assert_eq!(q.route.as_ref().map(|r| r.detour_m), Some(500.0));
        assert_eq!(
            (q.sort, q.stop),
            (Sort::Cost, Some(StopCost { fill_tenths: 500, consumption_tenths: 75 }))
        );
        let q = parse_stations("near=-31.95,115.86&fill=40.5&consumption=12&product=1&sort=cost", at(10))
            .expect("near");
        assert_eq!(q.stop, Some(StopCost { fill_tenths: 405, consumption_tenths: 120 }));
        assert_eq!(
            parse_stations(&format!("route={ROUTE}&sort=detour"), at(10)).expect("ok").sort,
            Sort::Detour
        );
        // Percent-escaped polylines (`~` may arrive as %7E) decode alike.
        let escaped =
            parse_stations(&format!("route={}", ROUTE.replace('~', "%7E")), at(10)).expect("escaped");
        assert_eq!(escaped.route.map(|r| r.route.points().len()), Some(4));
    }

    #[test]
    fn route_and_stop_cost_rejections() {
        let bad = [
            format!("route={ROUTE}&near=-31.95,115.86"),
            "detour=2".to_string(),
            "near=-31.95,115.86&detour=2".to_string(),
            format!("route={ROUTE}&detour=0"),
            format!("route={ROUTE}&detour=20.1"),
            format!("route={ROUTE}&detour=1e1"),
            format!("route={ROUTE}&radius=5"),
            format!("route={ROUTE}&sort=distance"),
            "route=".to_string(),
            "route=_p~iF~ps|U".to_string(),         // one point
            "route=_p~iF~ps|U_ulLnnqC".to_string(), // California
            format!("route={ROUTE}x"),              // the last value never closes
            format!("route={ROUTE}&route={ROUTE}"),
            "near=-31.95,115.86&sort=along".to_string(),
            "sort=detour".to_string(),
            "near=-31.95,115.86&product=1&fill=50".to_string(),
            "near=-31.95,115.86&product=1&consumption=7".to_string(),
            "product=1&fill=50&consumption=7".to_string(),
            "near=-31.95,115.86&fill=50&consumption=7".to_string(),
            "near=-31.95,115.86&product=1,2&fill=50&consumption=7".to_string(),
            "near=-31.95,115.86&product=1&fill=0.9&consumption=7".to_string(),
            "near=-31.95,115.86&product=1&fill=200.1&consumption=7".to_string(),
            "near=-31.95,115.86&product=1&fill=50.25&consumption=7".to_string(),
            "near=-31.95,115.86&product=1&fill=50.&consumption=7".to_string(),
            "near=-31.95,115.86&product=1&fill=.5&consumption=7".to_string(),
            "near=-31.95,115.86&product=1&fill=50&consumption=30.1".to_string(),
            "near=-31.95,115.86&product=1&fill=50&consumption=-7".to_string(),
            "near=-31.95,115.86&product=1&sort=cost".to_string(),
            // Long queries are for routes only.
            format!("product=1&suburb={}", "a".repeat(1_100)),
        ];
        for q in &bad {
            assert!(parse_stations(q, at(10)).is_err(), "{q} should be rejected");
        }
        // A route's query may be up to 8,192 characters as sent, escapes included, not more:
        // 900 points zigzagging across Perth (about 26,000 km: a corridor of 104,000 km²),
        // then characters percent-escaped one by one.
        let zigzag = |n: usize, far: (f64, f64)| -> String {
            let coords: Vec<geo_types::Coord<f64>> = (0..n)
                .map(|i| {
                    if i % 2 == 0 {
                        geo_types::coord! { x: 115.86, y: -31.95 }
                    } else {
                        geo_types::coord! { x: far.0, y: far.1 }
                    }
                })
                .collect();
            polyline::encode_coordinates(coords, 5).expect("encodes")
        };
        let encoded = zigzag(900, (116.06, -32.15));
        let escaped = |n: usize| -> String {
            let mut out = String::from("route=");
            for (i, c) in encoded.chars().enumerate() {
                if i < n { out.push_str(&format!("%{:02X}", c as u32)) } else { out.push(c) }
            }
            out
        };
        let mut n = 0;
        while escaped(n + 1).len() <= MAX_ROUTE_QUERY_LEN {
            n += 1;
        }
        let longest = escaped(n);
        assert!(longest.len() > MAX_ROUTE_QUERY_LEN - 2, "{}", longest.len());
        let q = parse_stations(&longest, at(10)).expect("within the bound");
        assert_eq!(q.route.map(|r| r.route.points().len()), Some(900));
        assert!(parse_stations(&escaped(n + 1), at(10)).is_err(), "past the bound");
        // The corridor (length × 2 × detour) is at most 250,000 km²: 900 points between Perth
        // and Kalgoorlie are 493,000 km of route, refused at 1 km; 11 legs of 549 km
        // (6,040 km) pass at the 20 km maximum, 12 (6,590 km) do not.
        let far = (121.47, -30.75);
        let refused = parse_stations(&format!("route={}&detour=1", zigzag(900, far)), at(10));
        assert!(refused.expect_err("too large").reason.contains("corridor"));
        assert!(parse_stations(&format!("route={}&detour=20", zigzag(12, far)), at(10)).is_ok());
        assert!(parse_stations(&format!("route={}&detour=20", zigzag(13, far)), at(10)).is_err());
        assert!(parse_stations(&format!("route={}&detour=2", zigzag(13, far)), at(10)).is_ok());
    }

    #[test]
    fn one_station() {
        let (id, q) = parse_station(ID, "day=yesterday&expand=brand", at(10)).expect("ok");
        assert_eq!(id.as_str(), ID);
        assert_eq!(q.selection.date, date(2026, 11, 19));
        assert!(parse_station(&ID.to_uppercase(), "", at(10)).is_err());
        assert!(parse_station("abc", "", at(10)).is_err());
        assert!(parse_station(ID, "product=1", at(10)).is_err());
    }

    #[test]
    fn history_ranges() {
        let q = parse_history(ID, "product=1", at(10)).expect("ok");
        assert_eq!((q.from, q.to), (date(2026, 8, 23), date(2026, 11, 20)));
        let q = parse_history(ID, "product=1&from=2026-11-01&to=2026-11-10", at(10)).expect("ok");
        assert_eq!((q.from, q.to), (date(2026, 11, 1), date(2026, 11, 10)));
        // Tomorrow is the newest day only once it is published.
        assert!(parse_history(ID, "product=1&to=2026-11-21", at(10)).is_err());
        assert!(parse_history(ID, "product=1&to=2026-11-21", at(15)).is_ok());
        let bad = [
            "",
            "product=1,2",
            "product=3",
            "product=1&from=2026-11-10&to=2026-11-01",
            "product=1&from=20/11/2026",
            "product=1&from=2026-02-30",
            "product=1&to=2026-11-20&to=2026-11-19",
            "product=1&day=today",
        ];
        for q in bad {
            assert!(parse_history(ID, q, at(10)).is_err(), "{q} should be rejected");
        }
        let quarter_century = parse_history(ID, "product=1&from=2001-01-01", at(10)).expect("any range");
        assert_eq!(quarter_century.from, date(2001, 1, 1));
    }

    #[test]
    fn stats_parameters() {
        let q = parse_stats("product=1&brand=5,2&region=25", at(10)).expect("ok");
        assert_eq!(q.brands.as_deref(), Some(&[2, 5].map(|c| BrandCode::parse(c).expect("brand"))[..]));
        assert_eq!(q.regions.as_deref(), Some(&[RegionCode::parse(25).expect("region")][..]));
        assert!(parse_stats("product=1&brand=0", at(10)).is_err());
        assert!(parse_stats("product=1&region=52", at(10)).is_err());
        assert!(parse_stats("product=1&expand=brand", at(10)).is_err());
        assert!(parse_stats("product=1&filter[brand]=5&brand=5", at(10)).is_err());
        assert_eq!(q.interval, Interval::Day);
        assert!(parse_stats("product=1&from=2023-11-21", at(10)).is_ok(), "exactly 1,096 days");
        assert!(parse_stats("product=1&from=2023-11-20", at(10)).is_err(), "daily rows: three years");
        let monthly = parse_stats("product=1&from=2001-01-01&interval=month", at(10)).expect("any range");
        assert_eq!(monthly.interval, Interval::Month);
        assert_eq!(parse_stats("product=1&interval=week", at(10)).expect("week").interval, Interval::Week);
        assert!(parse_stats("product=1&interval=year", at(10)).is_err());
        assert!(parse_stats("product=1&interval=month&interval=day", at(10)).is_err());
        let all: Vec<String> = (1..=30).map(|r| r.to_string()).collect();
        let many = parse_stats(&format!("product=1&region={}", all.join(",")), at(10));
        assert_eq!(
            many.expect_err("25+ regions").detail,
            wafuel_domain::error_code::detail::TOO_MANY_COMBINATIONS
        );
    }
}
