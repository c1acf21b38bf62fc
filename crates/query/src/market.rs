//! Query strings of the market's routes (docs/api.md): a station's history and the market's
//! statistics → validated requests. Pure.

use jiff::Timestamp;
use jiff::civil::Date;

use super::grammar::{Param, QueryError, Values, filter, invalid_in, plain, read};
use super::selection::{MAX_COMBINATIONS, code_list};
use super::values::{one_product, range, station_id, too_many_regions};
use wafuel_domain::codes::{BrandCode, ProductCode, RegionCode};
use wafuel_domain::key::StationId;
use wafuel_domain::stats::Interval;

/// Longest range of daily statistics, in days (three years). Histories and weekly or monthly
/// statistics take any range the store holds.
pub const MAX_DAILY_STATS_DAYS: i32 = wafuel_domain::time::THREE_YEARS_DAYS;
/// A validated `/v1/stations/{id}/history` request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HistoryQuery {
    pub station_id: StationId,
    pub product: ProductCode,
    pub from: Date,
    pub to: Date,
}

/// A validated `/v1/stats` request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StatsQuery {
    pub product: ProductCode,
    pub brands: Option<Vec<BrandCode>>,
    pub regions: Option<Vec<RegionCode>>,
    pub from: Date,
    pub to: Date,
    pub interval: Interval,
}

/// Parse `/v1/stations/{id}/history` at `now`.
pub fn parse_history(id: &str, raw: &str, now: Timestamp) -> Result<HistoryQuery, QueryError> {
    let station_id = station_id(id)?;
    let p: Values = read(raw, &[filter("product"), plain("from"), plain("to")])?;
    let get = |name: &str| p.get(name);
    let product = one_product(get("product"))?;
    let (from, to) = range(get("from"), get("to"), now)?;
    Ok(HistoryQuery { station_id, product, from, to })
}

/// Parse `/v1/stats` at `now`.
pub fn parse_stats(raw: &str, now: Timestamp) -> Result<StatsQuery, QueryError> {
    const PARAMS: [Param; 6] =
        [filter("product"), filter("brand"), filter("region"), plain("from"), plain("to"), plain("interval")];
    let p: Values = read(raw, &PARAMS)?;
    let get = |name: &str| p.get(name);
    let product = one_product(get("product"))?;
    let brands = get("brand").map(|v| code_list(v, "brand")).transpose()?;
    let regions = get("region").map(|v| code_list(v, "region")).transpose()?;
    // Region membership is asked of the source, one request per region (as `/v1?region=`).
    if regions.as_ref().is_some_and(|r| r.len() > MAX_COMBINATIONS) {
        return Err(too_many_regions());
    }
    let (from, to) = range(get("from"), get("to"), now)?;
    let interval = match get("interval").map(str::trim) {
        None | Some("day") => Interval::Day,
        Some("week") => Interval::Week,
        Some("month") => Interval::Month,
        Some(other) => {
            return Err(invalid_in(
                "interval",
                format!("interval is day, week or month, e.g. interval=week; not {other:?}"),
            ));
        }
    };
    let days = (to - from).get_days() + 1;
    if interval == Interval::Day && days > MAX_DAILY_STATS_DAYS {
        return Err(invalid_in(
            "interval",
            format!(
                "daily statistics cover at most {MAX_DAILY_STATS_DAYS} days, these {days}: ask interval=week or month"
            ),
        ));
    }
    Ok(StatsQuery { product, brands, regions, from, to, interval })
}
