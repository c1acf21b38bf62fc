//! The query of `/v1/events` (docs/api.md "Push: `GET /v1/events` (Server-Sent Events)"): `product` as on `/v1`, `since`,
//! the id of the last event seen (as `Last-Event-ID`), and an alert: the stations to watch
//! (`station`, or `near` with `radius`) and when to say so (`below`, `rise`). Read by the one
//! grammar. Pure.

use super::grammar::{Param, QueryError, filter, invalid, invalid_in, plain, read_up_to, tenths_within};
use super::selection::products;
use super::values::{parse_near, radius_km, station_id};
use wafuel_domain::codes::ProductCode;
use wafuel_domain::codes::product_codes;
use wafuel_domain::geo::Point;
use wafuel_domain::key::StationId;

const PARAMS: [Param; 7] = [
    filter("product"),
    plain("since"),
    plain("station"),
    plain("near"),
    plain("radius"),
    plain("below"),
    plain("rise"),
];

/// Longest events query: 1,024 characters, or 2,048 with `station` (20 ids are 1,300).
const MAX_LEN: usize = 1_024;
const MAX_LEN_WITH_STATIONS: usize = 2_048;
/// Most stations one alert watches.
pub const MAX_ALERT_STATIONS: usize = 20;

/// A validated `/v1/events` query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventsQuery {
    /// Ascending, unique; every product when the query names none.
    pub products: Vec<ProductCode>,
    pub since: Option<i64>,
    /// The stream's alert, when it asks for `price` events.
    pub alert: Option<AlertFilter>,
}

/// Which stations an alert watches.
#[derive(Debug, Clone)]
pub enum Watched {
    /// Station ids, ascending, each once.
    Stations(Vec<StationId>),
    /// Stations within `radius_m` great-circle metres of a point.
    Near(Point, f64),
}

/// A watched set as plain data: the ids, or a point and radius by their bits.
type WatchedKey<'a> = (Option<&'a [StationId]>, Option<(u64, u64, u64)>);

impl Watched {
    /// Coordinates by their bits: parsed numbers are never NaN, so this is an equivalence.
    fn key(&self) -> WatchedKey<'_> {
        match self {
            Watched::Stations(ids) => (Some(ids), None),
            Watched::Near(p, r) => (None, Some((p.latitude.to_bits(), p.longitude.to_bits(), r.to_bits()))),
        }
    }
}

impl PartialEq for Watched {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Watched {}

impl std::hash::Hash for Watched {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

/// An alert: one product, the stations watched, and the thresholds (tenths of a cent). With
/// neither threshold every watched station with a price that day is reported. Equal alerts
/// are equal values, so a replica evaluates each distinct one once per publish.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AlertFilter {
    pub product: ProductCode,
    pub watched: Watched,
    /// Report a price at or below this.
    pub below: Option<i64>,
    /// Report a rise over the day before of at least this.
    pub rise: Option<i64>,
}

/// Parse and validate the query of `/v1/events`; any other parameter is refused.
pub fn parse_events(raw: &str) -> Result<EventsQuery, QueryError> {
    let long = raw.len() > MAX_LEN;
    let values = read_up_to(raw, &PARAMS, if long { MAX_LEN_WITH_STATIONS } else { MAX_LEN })?;
    let get = |name: &str| values.get(name).map(str::trim);
    if long && get("station").is_none() {
        return Err(invalid(format!(
            "the query is {} characters long; at most {MAX_LEN} are read here ({MAX_LEN_WITH_STATIONS} with station)",
            raw.len()
        )));
    }
    let products = match values.get("product") {
        Some(v) => products(v)?,
        None => product_codes().collect(),
    };
    let since = values.get("since").map(event_id).transpose()?;
    let near = get("near").map(parse_near).transpose()?;
    let radius_m = radius_km(get("radius"), near.is_some())? * 1000.0;
    let watched = match (get("station"), near) {
        (Some(_), Some(_)) => {
            return Err(invalid_in(
                "station",
                "station and near do not go together: watch stations or a place",
            ));
        }
        (Some(list), None) => {
            let mut ids = list
                .split(',')
                .map(|id| station_id(id.trim()).map_err(|e| e.for_parameter("station")))
                .collect::<Result<Vec<_>, _>>()?;
            ids.sort_by(|a, b| a.as_str().cmp(b.as_str()));
            ids.dedup();
            if ids.len() > MAX_ALERT_STATIONS {
                return Err(invalid_in(
                    "station",
                    format!("station names {} stations; at most {MAX_ALERT_STATIONS}", ids.len()),
                ));
            }
            Some(Watched::Stations(ids))
        }
        (None, Some(point)) => Some(Watched::Near(point, radius_m)),
        (None, None) => None,
    };
    // Cents a litre, 0.1 to 999.9.
    let below = get("below").map(|v| tenths_within("below", v, (1, 9_999), "below=180")).transpose()?;
    let rise = get("rise").map(|v| tenths_within("rise", v, (1, 9_999), "rise=5")).transpose()?;
    let alert = match watched {
        None if below.is_some() || rise.is_some() => {
            let which = if below.is_some() { "below" } else { "rise" };
            return Err(invalid_in(which, format!("{which} needs station or near: the stations it watches")));
        }
        None => None,
        Some(watched) => match products.as_slice() {
            [product] if values.get("product").is_some() => {
                Some(AlertFilter { product: *product, watched, below, rise })
            }
            _ => {
                return Err(invalid_in(
                    "product",
                    "an alert (station or near) needs exactly one product, e.g. product=1",
                ));
            }
        },
    };
    Ok(EventsQuery { products, since, alert })
}

/// An event id: decimal digits, as the stream wrote it (`since` and `Last-Event-ID`).
pub fn event_id(text: &str) -> Result<i64, QueryError> {
    let bad = || {
        invalid_in(
            "since",
            format!("since is an event id (the stream's id: lines), e.g. since=0 to replay; not {text:?}"),
        )
    };
    if text.is_empty() || text.len() > 18 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    text.parse().map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "238232d151f5f92bbce32951b828cb7fe4887fdc1ac868628c7ab33d4eda4e3b";
    const B: &str = "0d2f1e63bd7e0f9e2b2f3c2c0d9e8f4b4d1c2a3b4c5d6e7f8091a2b3c4d5e6f7";

    #[test]
    fn products_and_since() {
        let q = parse_events("FILTER[product]=4,1&since=17").expect("ok");
        assert_eq!(q.products, [1, 4]);
        assert_eq!(q.since, Some(17));
        assert_eq!(q.alert, None);
        assert_eq!(parse_events("").expect("ok").products, product_codes().collect::<Vec<_>>());
        for bad in ["since=-1", "since=1e3", "product=3", "day=today", "since=1&since=2", "filter[since]=1"] {
            assert!(parse_events(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn alerts() {
        let q = parse_events(&format!("product=1&station={A},{B},{A}&below=179.9&rise=5")).expect("ok");
        let alert = q.alert.expect("alert");
        assert_eq!((alert.below, alert.rise), (Some(1_799), Some(50)));
        let ids = match &alert.watched {
            Watched::Stations(ids) => ids.iter().map(StationId::as_str).collect::<Vec<_>>(),
            Watched::Near(..) => Vec::new(),
        };
        assert_eq!(ids, [B, A], "sorted, once each");
        let near = parse_events("product=4&near=-31.95,115.86&radius=3&below=190").expect("ok");
        assert_eq!(
            near.alert.map(|a| a.watched),
            Some(Watched::Near(Point { latitude: -31.95, longitude: 115.86 }, 3_000.0))
        );
        // Spelled differently, the same alert.
        let a = parse_events(&format!("product=1&station={A},{B}&below=180")).expect("ok");
        let b = parse_events(&format!("PRODUCT=1&Station={B},{A}&below=180.0")).expect("ok");
        assert_eq!(a.alert, b.alert);
        // Twenty ids fit in the longer bound.
        let twenty: Vec<String> = (0..20).map(|i| format!("{i:064x}")).collect();
        let q = format!("product=1&station={}&below=180", twenty.join(","));
        assert!(q.len() > 1_024 && parse_events(&q).is_ok());
    }

    #[test]
    fn alert_rejections() {
        let twenty_one: Vec<String> = (0..21).map(|i| format!("{i:064x}")).collect();
        let bad = [
            "below=180".to_string(),
            "product=1&below=180".to_string(),
            format!("station={A}&below=180"),
            format!("product=1,4&station={A}&below=180"),
            format!("product=1&station={A}&near=-31.95,115.86"),
            format!("product=1&station={}&below=180", A.to_uppercase()),
            format!("product=1&station={A},&below=180"),
            "product=1&radius=5&below=180".to_string(),
            "product=1&near=-31.95,115.86&radius=101".to_string(),
            "product=1&near=-40,115.86".to_string(),
            format!("product=1&station={A}&below=0"),
            format!("product=1&station={A}&below=-5"),
            format!("product=1&station={A}&below=180.25"),
            format!("product=1&station={A}&below=1e3"),
            format!("product=1&station={A}&rise=0.0"),
            format!("product=1&station={A}&rise=1000"),
            format!("product=1&station={A}&rise=.5"),
            format!("product=1&station={}&below=180", twenty_one.join(",")),
            format!("product=1&since=1&x={}", "a".repeat(1_100)),
        ];
        for q in &bad {
            assert!(parse_events(q).is_err(), "{q} should be rejected");
        }
    }
}
