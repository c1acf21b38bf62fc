//! The values more than one route's query reads, decided alike wherever they are asked: a
//! point in Western Australia, a radius, a station id, a date, a `from`/`to` range, exactly one
//! product. Pure.

use jiff::Timestamp;
use jiff::civil::Date;

use super::grammar::{QueryError, invalid, invalid_in};
use super::selection::{MAX_COMBINATIONS, products};
use wafuel_domain::codes::ProductCode;
use wafuel_domain::geo::Point;
use wafuel_domain::key::StationId;
use wafuel_domain::normalize::is_plain_decimal;
use wafuel_domain::time::{perth_now, tomorrow_published};

/// Latitudes and longitudes a `near` point may have: Western Australia's bounding box.
pub const WA_LATITUDE: (f64, f64) = (-36.0, -13.0);
pub const WA_LONGITUDE: (f64, f64) = (112.0, 130.0);
/// Default and largest `radius`, in kilometres.
pub const DEFAULT_RADIUS_KM: f64 = 10.0;
pub const MAX_RADIUS_KM: f64 = 100.0;
/// Default history or statistics range, in days up to today.
pub const DEFAULT_RANGE_DAYS: i32 = 90;

/// A plain decimal (the feed's coordinate grammar: no exponent, `inf` or spaces), as a number.
pub fn plain_decimal(text: &str) -> Option<f64> {
    is_plain_decimal(text, true).then(|| text.parse().ok()).flatten()
}

pub fn parse_near(value: &str) -> Result<Point, QueryError> {
    let bad = |why: String| invalid_in("near", format!("{NEAR_RULE}; {why}"));
    let (lat, lng) = value.split_once(',').ok_or_else(|| bad(format!("{value:?} has no comma")))?;
    let latitude = plain_decimal(lat.trim()).ok_or_else(|| bad(format!("{lat:?} is not a latitude")))?;
    let longitude = plain_decimal(lng.trim()).ok_or_else(|| bad(format!("{lng:?} is not a longitude")))?;
    let inside = |(lo, hi): (f64, f64), v: f64| (lo..=hi).contains(&v);
    if !inside(WA_LATITUDE, latitude) || !inside(WA_LONGITUDE, longitude) {
        // Swapped coordinates are the usual mistake: say so when swapping them fits.
        let swapped = inside(WA_LATITUDE, longitude) && inside(WA_LONGITUDE, latitude);
        let hint = if swapped {
            format!(" (latitude first: near={},{})", lng.trim(), lat.trim())
        } else {
            String::new()
        };
        return Err(bad(format!("{latitude},{longitude} is outside Western Australia{hint}")));
    }
    Ok(Point { latitude, longitude })
}

const NEAR_RULE: &str = "near is latitude,longitude in decimal degrees inside Western Australia \
                         (latitude -36 to -13, longitude 112 to 130), e.g. near=-31.95,115.86";

/// A station id: 64 lowercase hex characters (a path's, or one of a list's).
pub fn station_id(text: &str) -> Result<StationId, QueryError> {
    StationId::parse(text).ok_or_else(|| {
        // A `/v1` resource id (`<date>:<digest>`) pasted whole: say which part to keep.
        if let Some((day, digest)) = text.split_once(':')
            && day.parse::<jiff::civil::Date>().is_ok()
            && let Some(id) = StationId::parse(digest)
        {
            return invalid(format!(
                "a station id is 64 lowercase hex characters; {day:?} before the colon is the date of a /v1 resource id: drop the date and the colon, e.g. {}",
                id.as_str()
            ));
        }
        invalid(format!(
            "a station id is 64 lowercase hex characters (the id of a station in /v1/stations); {:?} is not one",
            text.chars().take(70).collect::<String>()
        ))
    })
}

/// The newest day with published prices at `now`: tomorrow from 14:30, else today.
pub fn newest_published(now: Timestamp) -> Date {
    let today = perth_now(now).date();
    if tomorrow_published(now) { today.tomorrow().unwrap_or(today) } else { today }
}

/// A date `YYYY-MM-DD` given as the parameter `param`.
pub fn iso_date(param: &str, value: &str) -> Result<Date, QueryError> {
    let v = value.trim();
    let b = v.as_bytes();
    let shape = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    let bad = |why: &str| {
        invalid_in(
            param,
            format!("{param} is a date as YYYY-MM-DD, e.g. {param}=2026-01-31; {value:?} {why}"),
        )
    };
    if !shape || v != value {
        return Err(bad("is not written so"));
    }
    v.parse().map_err(|_| bad("is no such day"))
}

/// A distance in kilometres: more than 0 and at most `max`.
pub(crate) fn kilometres(param: &str, value: &str, max: f64, example: &str) -> Result<f64, QueryError> {
    plain_decimal(value).filter(|v| *v > 0.0 && *v <= max).ok_or_else(|| {
        invalid_in(
            param,
            format!("{param} must be more than 0 and at most {max} km, e.g. {example}; not {value:?}"),
        )
    })
}

/// `from`/`to` with defaults (the 90 days up to today) and bounds.
pub(crate) fn range(
    from: Option<&str>,
    to: Option<&str>,
    now: Timestamp,
) -> Result<(Date, Date), QueryError> {
    let today = perth_now(now).date();
    let back = |d: Date| d.checked_sub(jiff::Span::new().days(DEFAULT_RANGE_DAYS - 1)).unwrap_or(d);
    let to = to.map(|v| iso_date("to", v)).transpose()?;
    let from = from.map(|v| iso_date("from", v)).transpose()?;
    let (from, to) = match (from, to) {
        (Some(f), Some(t)) => (f, t),
        (Some(f), None) => (f, today),
        (None, Some(t)) => (back(t), t),
        (None, None) => (back(today), today),
    };
    bounded_range(from, to, newest_published(now), "the newest published day")?;
    Ok((from, to))
}

/// The one rule of every `from`/`to` pair: `from` on or before `to`, and `to` no later than
/// `latest` (which `latest_is` names: "today", "the newest published day").
pub fn bounded_range(from: Date, to: Date, latest: Date, latest_is: &str) -> Result<(), QueryError> {
    if from > to {
        return Err(invalid_in(
            "from",
            format!("from ({from}) is after to ({to}); give from on or before to"),
        ));
    }
    if to > latest {
        return Err(invalid_in("to", format!("to ({to}) is after {latest_is}, {latest}; e.g. to={latest}")));
    }
    Ok(())
}

/// `radius` in kilometres (only with `near`), or the default.
pub fn radius_km(value: Option<&str>, near: bool) -> Result<f64, QueryError> {
    match value {
        None => Ok(DEFAULT_RADIUS_KM),
        Some(_) if !near => Err(invalid_in("radius", "radius needs near, e.g. near=-31.95,115.86&radius=10")),
        Some(v) => kilometres("radius", v, MAX_RADIUS_KM, "radius=10"),
    }
}

pub fn one_product(value: Option<&str>) -> Result<ProductCode, QueryError> {
    let one = "product is required here, exactly one product code (1 Unleaded, 2 Premium 95, 4 Diesel, 5 LPG, \
               6 Premium 98, 10 E85, 11 Brand diesel), e.g. product=1";
    let value = value.ok_or_else(|| invalid_in("product", one))?;
    // Counted as written: `1,1` names a product twice, not one product.
    match (products(value)?.as_slice(), value.split(',').count()) {
        ([p], 1) => Ok(*p),
        _ => Err(invalid_in("product", format!("{one}; {value:?} names more than one"))),
    }
}

/// More regions than the source can be asked about in one answer.
pub fn too_many_regions() -> QueryError {
    QueryError {
        detail: wafuel_domain::error_code::detail::TOO_MANY_COMBINATIONS,
        reason: format!("region names more than {MAX_COMBINATIONS} regions; name fewer"),
        parameter: Some("region".into()),
    }
}
