//! `/v1/forecast` and `/v1/stations/{id}/forecast` query strings → a validated request
//! (docs/api.md "Fill now or wait"). Pure: decided before any store access.

use jiff::Timestamp;
use jiff::civil::Date;

use super::grammar::{Param, QueryError, filter, invalid_in, plain, read};
use super::selection::{MAX_COMBINATIONS, code_list};
use super::values::{bounded_range, iso_date, one_product, station_id};
use wafuel_domain::codes::{BrandCode, ProductCode, RegionCode};
use wafuel_domain::forecast::MAX_HORIZON;
use wafuel_domain::key::StationId;
use wafuel_domain::time::perth_now;

/// A validated forecast request. Equal requests are equal values (a cache key).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ForecastQuery {
    /// The station route's station; `None` for the market.
    pub station: Option<StationId>,
    pub product: ProductCode,
    pub brands: Option<Vec<BrandCode>>,
    pub regions: Option<Vec<RegionCode>>,
    /// Days after `as_of`, 1…7.
    pub horizon: usize,
    pub as_of: Date,
    /// Whether `as_of` is today (then tomorrow may be known).
    pub today: bool,
}

const MARKET_PARAMS: [Param; 5] =
    [filter("product"), filter("brand"), filter("region"), plain("horizon"), plain("asof")];

/// Parse `/v1/forecast` at `now`.
pub fn parse_forecast(raw: &str, now: Timestamp) -> Result<ForecastQuery, QueryError> {
    parse(None, raw, &MARKET_PARAMS, now)
}

/// Parse `/v1/stations/{id}/forecast` at `now`: the station's own price (no filters).
pub fn parse_station_forecast(id: &str, raw: &str, now: Timestamp) -> Result<ForecastQuery, QueryError> {
    let station = station_id(id)?;
    let params = [MARKET_PARAMS[0], MARKET_PARAMS[3], MARKET_PARAMS[4]];
    parse(Some(station), raw, &params, now)
}

fn parse(
    station: Option<StationId>,
    raw: &str,
    params: &[Param],
    now: Timestamp,
) -> Result<ForecastQuery, QueryError> {
    let p = read(raw, params)?;
    let product = one_product(p.get("product"))?;
    let brands = p.get("brand").map(|v| code_list(v, "brand")).transpose()?;
    let regions = p.get("region").map(|v| code_list(v, "region")).transpose()?;
    // Region membership is asked of the source, one request per region (as `/v1?region=`).
    if regions.as_ref().is_some_and(|r| r.len() > MAX_COMBINATIONS) {
        return Err(super::values::too_many_regions());
    }
    let horizon = match p.get("horizon").map(str::trim) {
        None => MAX_HORIZON,
        Some(v) => {
            let ok = v.len() == 1 && v.bytes().all(|b| b.is_ascii_digit());
            let n: usize = if ok { v.parse().unwrap_or(0) } else { 0 };
            if !(1..=MAX_HORIZON).contains(&n) {
                return Err(invalid_in(
                    "horizon",
                    format!(
                        "horizon is a whole number of days from 1 to {MAX_HORIZON}, e.g. horizon=3; not {v:?}"
                    ),
                ));
            }
            n
        }
    };
    let today = perth_now(now).date();
    let as_of = p.get("asof").map(|v| iso_date("asOf", v)).transpose()?.unwrap_or(today);
    if as_of > today {
        return Err(invalid_in("asOf", format!("asOf ({as_of}) is after today; e.g. asOf={today}")));
    }
    Ok(ForecastQuery { station, product, brands, regions, horizon, as_of, today: as_of == today })
}

/// A validated `/v1/forecast/record` request: the recorded forecasts of one subject (the
/// market, filtered as `/v1/forecast` filters it, or one station) made `from..=to`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordQuery {
    pub station: Option<StationId>,
    pub product: ProductCode,
    pub brands: Option<Vec<BrandCode>>,
    pub regions: Option<Vec<RegionCode>>,
    pub from: Date,
    pub to: Date,
}

/// Days a record query covers by default (up to today), and at most.
pub const RECORD_DEFAULT_DAYS: i64 = 30;
pub const RECORD_MAX_DAYS: i64 = 366;

/// Parse `/v1/forecast/record` at `now`.
pub fn parse_record(raw: &str, now: Timestamp) -> Result<RecordQuery, QueryError> {
    let params =
        [filter("product"), filter("brand"), filter("region"), plain("station"), plain("from"), plain("to")];
    let p = read(raw, &params)?;
    let product = one_product(p.get("product"))?;
    let brands = p.get("brand").map(|v| code_list(v, "brand")).transpose()?;
    let regions = p.get("region").map(|v| code_list(v, "region")).transpose()?;
    let station =
        p.get("station").map(|v| station_id(v.trim()).map_err(|e| e.for_parameter("station"))).transpose()?;
    if station.is_some() && (brands.is_some() || regions.is_some()) {
        return Err(invalid_in(
            "station",
            "station does not go with brand or region: a station's record is its own",
        ));
    }
    let today = perth_now(now).date();
    let to = p.get("to").map(|v| iso_date("to", v)).transpose()?.unwrap_or(today);
    let back = |n: i64| to.checked_sub(jiff::Span::new().days(n - 1)).unwrap_or(to);
    let from =
        p.get("from").map(|v| iso_date("from", v)).transpose()?.unwrap_or_else(|| back(RECORD_DEFAULT_DAYS));
    bounded_range(from, to, today, "today")?;
    if from < back(RECORD_MAX_DAYS) {
        return Err(invalid_in(
            "from",
            format!("a record covers at most {RECORD_MAX_DAYS} days; e.g. from={}", back(RECORD_MAX_DAYS)),
        ));
    }
    Ok(RecordQuery { station, product, brands, regions, from, to })
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;
    use wafuel_domain::time::perth_instant;

    fn at(h: i8) -> Timestamp {
        perth_instant(date(2026, 11, 24).at(h, 0, 0, 0))
    }

    const ID: &str = "9f2c8a3b1d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8";

    #[test]
    fn defaults_and_values() {
        let q = parse_forecast("product=1", at(10)).expect("ok");
        assert_eq!((q.horizon, q.as_of, q.today, q.station.is_none()), (7, date(2026, 11, 24), true, true));
        let q = parse_forecast("product=2&horizon=3&asOf=2026-10-01&brand=5&region=25", at(10)).expect("ok");
        assert_eq!((q.horizon, q.as_of, q.today), (3, date(2026, 10, 1), false));
        assert_eq!(q.brands.as_deref(), Some(&[BrandCode::parse(5).expect("brand")][..]));
        assert_eq!(q.regions.as_deref(), Some(&[RegionCode::parse(25).expect("region")][..]));
        assert!(parse_forecast("filter[product]=4&ASOF=2026-11-24", at(10)).expect("ok").today);
        let s = parse_station_forecast(ID, "product=1&horizon=1", at(10)).expect("ok");
        assert_eq!(s.station.as_ref().map(|s| s.as_str()), Some(ID));
    }

    #[test]
    fn every_rule_is_a_400() {
        for bad in [
            "",
            "product=1,2",
            "product=99",
            "product=1&horizon=0",
            "product=1&horizon=8",
            "product=1&horizon=07",
            "product=1&horizon=x",
            "product=1&asOf=2026-11-25",
            "product=1&asOf=2026-13-01",
            "product=1&asOf=26-11-01",
            "product=1&brand=0",
            "product=1&region=52",
            "product=1&day=today",
            "product=1&horizon=2&horizon=3",
        ] {
            assert!(parse_forecast(bad, at(10)).is_err(), "{bad}");
        }
        assert!(parse_station_forecast("nope", "product=1", at(10)).is_err());
        assert!(
            parse_station_forecast(ID, "product=1&brand=5", at(10)).is_err(),
            "the station route has no filters"
        );
        assert!(parse_station_forecast(ID, "product=1&region=25", at(10)).is_err());
    }
}

#[cfg(test)]
mod record_tests {
    use super::*;
    use jiff::civil::date;
    use wafuel_domain::time::perth_instant;

    fn at() -> Timestamp {
        perth_instant(date(2026, 11, 24).at(10, 0, 0, 0))
    }

    const ID: &str = "9f2c8a3b1d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8";

    #[test]
    fn a_record_query_defaults_to_the_last_30_days() {
        let q = parse_record("product=1", at()).expect("ok");
        assert_eq!((q.from, q.to, q.station.is_none()), (date(2026, 10, 26), date(2026, 11, 24), true));
        let q =
            parse_record(&format!("product=4&station={ID}&from=2026-01-01&to=2026-06-30"), at()).expect("ok");
        assert_eq!((q.from, q.to), (date(2026, 1, 1), date(2026, 6, 30)));
        assert!(parse_record("product=1&region=25&brand=5", at()).is_ok());
        let q = parse_record("product=1&from=2025-11-24", at()).expect("366 days");
        assert_eq!(q.from, date(2025, 11, 24));
    }

    #[test]
    fn every_record_rule_is_a_400() {
        for bad in [
            "",
            "product=1,2",
            "product=1&to=2026-11-25",
            "product=1&from=2026-11-20&to=2026-11-19",
            "product=1&from=2025-11-23",
            "product=1&station=abc",
            &format!("product=1&station={ID}&region=25"),
            "product=1&horizon=3",
            "product=1&from=2026-13-01",
        ] {
            assert!(parse_record(bad, at()).is_err(), "{bad}");
        }
    }
}
