//! Documents of the stored history: one station's daily prices (`priceHistory`, JSON:API or
//! CSV) and the market by day with its price cycle (`marketStats`). Pure.

use jiff::civil::{Date, Weekday};
use serde::Serialize;

use super::jsonapi::{JSON_API, JsonApi, SOURCE_HOST};
use super::{RenderError, csv_bytes};
use std::collections::BTreeMap;
use wafuel_domain::codes::{BrandCode, Code, ProductCode, RegionCode};
use wafuel_domain::documents::DocumentMeta;
use wafuel_domain::price::Hundredths;
use wafuel_domain::price::Tenths;
use wafuel_domain::stats::{Interval, Market};
use wafuel_domain::wholesale::{Centre, margin};

/// `meta` of history and statistics documents.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RangeMeta<'a> {
    source: &'static str,
    product: ProductCode,
    from: String,
    to: String,
    /// While the history is still loading: how far (a range older than what is in reads as
    /// empty until then).
    #[serde(skip_serializing_if = "Option::is_none")]
    history: Option<&'a str>,
    #[serde(flatten)]
    about: super::jsonapi::About<'a>,
}

impl<'a> RangeMeta<'a> {
    fn new(
        product: ProductCode,
        (from, to): (Date, Date),
        loading: Option<&'a str>,
        meta: &'a DocumentMeta,
    ) -> Self {
        RangeMeta {
            source: SOURCE_HOST,
            product,
            from: from.to_string(),
            to: to.to_string(),
            history: loading,
            about: super::jsonapi::About::of(meta),
        }
    }
}

#[derive(Serialize)]
struct Document<'a, A: Serialize> {
    jsonapi: JsonApi,
    meta: RangeMeta<'a>,
    data: Resource<A>,
}

/// A JSON:API resource object of the stored-history documents (statistics, history,
/// wholesale prices).
#[derive(Serialize)]
pub(super) struct Resource<A: Serialize> {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) id: String,
    pub(super) attributes: A,
}

#[derive(Serialize)]
struct Point {
    date: String,
    price: f64,
}

#[derive(Serialize)]
struct HistoryAttributes {
    product: ProductCode,
    points: Vec<Point>,
}

/// `/v1/stations/{id}/history` as JSON:API.
pub fn history_jsonapi(
    station_id: &str,
    product: ProductCode,
    (from, to): (Date, Date),
    points: &[(Date, i64)],
    (loading, meta): (Option<&str>, &DocumentMeta),
) -> Result<Vec<u8>, RenderError> {
    let doc = Document {
        jsonapi: JSON_API,
        meta: RangeMeta::new(product, (from, to), loading, meta),
        data: Resource {
            kind: "priceHistory",
            id: format!("{station_id}:{product}"),
            attributes: HistoryAttributes {
                product,
                points: points
                    .iter()
                    .map(|(d, p)| Point { date: d.to_string(), price: Tenths(*p).cents() })
                    .collect(),
            },
        },
    };
    Ok(serde_json::to_vec(&doc)?)
}

/// `/v1/stations/{id}/history` as RFC 4180 CSV (`date,price`).
pub fn history_csv(points: &[(Date, i64)]) -> Result<Vec<u8>, RenderError> {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    super::safe_record(&mut w, ["date", "price"])?;
    for (d, p) in points {
        super::safe_record(&mut w, [d.to_string(), Tenths(*p).cents().to_string()])?;
    }
    csv_bytes(w)
}

#[derive(Serialize)]
struct DayOut<'a> {
    date: String,
    stations: usize,
    min: f64,
    p10: f64,
    median: f64,
    mean: f64,
    p90: f64,
    max: f64,
    cheapest: &'a [String],
    /// The centre's mean terminal gate price over the row's days (null without one).
    wholesale: Option<f64>,
    /// `median` − `wholesale` (null without a terminal gate price).
    margin: Option<f64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CycleOut {
    period_days: usize,
    last_trough: String,
    last_peak: String,
    cheapest_weekday: Option<String>,
    strength: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatsAttributes<'a> {
    product: ProductCode,
    #[serde(skip_serializing_if = "Option::is_none")]
    brands: Option<&'a [BrandCode]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    regions: Option<&'a [RegionCode]>,
    /// `week` or `month` when the rows are periods (absent: days).
    #[serde(skip_serializing_if = "Option::is_none")]
    interval: Option<&'static str>,
    /// The terminal centre whose prices `wholesale` is (null for a product without one).
    wholesale_centre: Option<&'static str>,
    days: Vec<DayOut<'a>>,
    weekdays: serde_json::Map<String, serde_json::Value>,
    cycle: Option<CycleOut>,
}

/// English weekday name.
pub fn weekday_name(w: Weekday) -> &'static str {
    wafuel_domain::site_features::WEEKDAYS[w.to_monday_zero_offset() as usize]
}

/// What a statistics request selected.
pub struct StatsScope<'a> {
    pub product: ProductCode,
    pub brands: Option<&'a [BrandCode]>,
    pub regions: Option<&'a [RegionCode]>,
    pub from: Date,
    pub to: Date,
    pub interval: Interval,
    /// The terminal centre and its mean terminal gate price by day (hundredths of a cent),
    /// for a product that has one.
    pub wholesale: Option<(Centre, &'a BTreeMap<Date, i64>)>,
    /// While the history is still loading, how far (`meta.history`).
    pub loading: Option<&'a str>,
}

/// The mean terminal gate price (hundredths of a cent) over a row's days within the window,
/// when any has one.
fn wholesale_of(scope: &StatsScope<'_>, start: Date) -> Option<i64> {
    let (_, means) = scope.wholesale?;
    let end = match scope.interval {
        Interval::Day => start,
        other => other.end(start),
    };
    let (from, to) = (start.max(scope.from), end.min(scope.to));
    if from > to {
        return None;
    }
    let (n, sum) = means.range(from..=to).fold((0i64, 0i64), |(n, sum), (_, m)| (n + 1, sum + m));
    (n > 0).then(|| (sum as f64 / n as f64).round() as i64)
}

/// `/v1/stats` as JSON:API.
pub fn stats_jsonapi(
    scope: &StatsScope<'_>,
    market: &Market,
    meta: &DocumentMeta,
) -> Result<Vec<u8>, RenderError> {
    fn list<K>(v: Option<&[Code<K>]>) -> Option<String> {
        v.map(|l| l.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","))
    }
    let mut id = format!("{}:{}:{}", scope.product, scope.from, scope.to);
    if let Some(b) = list(scope.brands) {
        id.push_str(&format!(":brand={b}"));
    }
    if let Some(r) = list(scope.regions) {
        id.push_str(&format!(":region={r}"));
    }
    let interval = match scope.interval {
        Interval::Day => None,
        Interval::Week => Some("week"),
        Interval::Month => Some("month"),
    };
    if let Some(i) = interval {
        id.push_str(&format!(":interval={i}"));
    }
    let days = market
        .days
        .iter()
        .map(|d| {
            let wholesale = wholesale_of(scope, d.date);
            DayOut {
                date: d.date.to_string(),
                stations: d.stations,
                min: d.min,
                p10: d.p10,
                median: d.median,
                mean: d.mean,
                p90: d.p90,
                max: d.max,
                cheapest: &d.cheapest,
                wholesale: wholesale.map(|w| Hundredths(w).cents()),
                margin: wholesale.map(|w| margin(d.median, w)),
            }
        })
        .collect();
    let weekdays = market
        .weekdays
        .iter()
        .map(|(w, v)| (weekday_name(*w).to_string(), serde_json::Value::from(*v)))
        .collect();
    let cycle = market.cycle.as_ref().map(|c| CycleOut {
        period_days: c.period_days,
        last_trough: c.last_trough.to_string(),
        last_peak: c.last_peak.to_string(),
        cheapest_weekday: c.cheapest_weekday.map(|w| weekday_name(w).to_string()),
        strength: c.strength,
    });
    let doc = Document {
        jsonapi: JSON_API,
        meta: RangeMeta::new(scope.product, (scope.from, scope.to), scope.loading, meta),
        data: Resource {
            kind: "marketStats",
            id,
            attributes: StatsAttributes {
                product: scope.product,
                brands: scope.brands,
                regions: scope.regions,
                interval,
                wholesale_centre: scope.wholesale.map(|(c, _)| c.slug()),
                days,
                weekdays,
                cycle,
            },
        },
    };
    Ok(serde_json::to_vec(&doc)?)
}
