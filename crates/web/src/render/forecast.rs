//! "Fill now or wait" documents (`forecast`, JSON:API) and the backtest's table (plain text,
//! for `wafuel backtest`). Pure.

use serde::Serialize;

use super::RenderError;
use super::jsonapi::{JSON_API, JsonApi, SOURCE_HOST};
use wafuel_domain::codes::{Code, ProductCode};
use wafuel_domain::documents::{DocumentMeta, ForecastDoc, RecordDoc};
use wafuel_domain::forecast::{Accuracy, CLOSE_CENTS, LiveAccuracy, MAX_HORIZON, Recorded, Replay};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Meta<'a> {
    source: &'static str,
    product: ProductCode,
    as_of: String,
    #[serde(flatten)]
    about: super::jsonapi::About<'a>,
}

#[derive(Serialize)]
struct Document<'a> {
    jsonapi: JsonApi,
    meta: Meta<'a>,
    data: Resource<'a>,
}

#[derive(Serialize)]
struct Resource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: String,
    attributes: Attributes<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Attributes<'a> {
    product: ProductCode,
    #[serde(skip_serializing_if = "Option::is_none")]
    station_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    brands: Option<&'a [wafuel_domain::codes::BrandCode]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    regions: Option<&'a [wafuel_domain::codes::RegionCode]>,
    as_of: String,
    basis: String,
    days: Vec<Day>,
    advice: Advice<'a>,
    cycle: Cycle,
    /// What the forecast read: the retail prices, and the terminal gate price where it did.
    inputs: &'static [&'static str],
    accuracy: AccuracyOut,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Day {
    date: String,
    median: f64,
    low: f64,
    high: f64,
    known: bool,
    hike_probability: f64,
}

#[derive(Serialize)]
struct Advice<'a> {
    action: &'static str,
    until: Option<String>,
    saving: Option<f64>,
    reason: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Cycle {
    period_days: Option<usize>,
    days_since_hike: Option<usize>,
    next_hike: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AccuracyOut {
    days: usize,
    mae: Vec<Option<f64>>,
    naive_mae: Vec<Option<f64>>,
    /// Share of replayed forecasts within 2 c/L of the outcome, per horizon day (the
    /// sentence "within 2 c/L on 8 days out of 10").
    within2c: Vec<Option<f64>>,
    hike_hit_rate: Option<f64>,
    false_alarm_rate: Option<f64>,
    advice_saving: Option<f64>,
    hindsight_saving: Option<f64>,
    /// The live record's scores: forecasts as answered on their day, scored as their days
    /// were published; null until one is scored.
    live: Option<LiveOut>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LiveOut {
    forecasts: usize,
    mae: Vec<Option<f64>>,
    hike_hit_rate: Option<f64>,
    false_alarm_rate: Option<f64>,
    advice_saving: Option<f64>,
    hindsight_saving: Option<f64>,
}

fn live_out(live: &LiveAccuracy) -> LiveOut {
    LiveOut {
        forecasts: live.forecasts,
        mae: live.mae.clone(),
        hike_hit_rate: live.hike_hit_rate,
        false_alarm_rate: live.false_alarm_rate,
        advice_saving: live.advice_saving,
        hindsight_saving: live.hindsight_saving,
    }
}

fn list<K>(v: Option<&[Code<K>]>) -> Option<String> {
    v.map(|l| l.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","))
}

/// The resource id: `<product>:<asOf>` (`:r<regions>`, `:b<brands>` when filtered), or
/// `<stationId>:<product>:<asOf>` on the station route.
pub fn forecast_id(doc: &ForecastDoc) -> String {
    let mut id = match &doc.station {
        Some(s) => format!("{}:{}:{}", s.as_str(), doc.product, doc.forecast.as_of),
        None => format!("{}:{}", doc.product, doc.forecast.as_of),
    };
    if let Some(r) = list(doc.regions.as_deref()) {
        id.push_str(&format!(":r{r}"));
    }
    if let Some(b) = list(doc.brands.as_deref()) {
        id.push_str(&format!(":b{b}"));
    }
    id
}

/// A forecast as JSON:API.
pub fn forecast_jsonapi(doc: &ForecastDoc, meta: &DocumentMeta) -> Result<Vec<u8>, RenderError> {
    let f = &doc.forecast;
    let horizon = f.days.len();
    let a: &Accuracy = &doc.accuracy;
    let first = |v: &[Option<f64>]| v.iter().take(horizon.max(1)).copied().collect::<Vec<_>>();
    let out = Document {
        jsonapi: JSON_API,
        meta: Meta {
            source: SOURCE_HOST,
            product: doc.product,
            as_of: f.as_of.to_string(),
            about: super::jsonapi::About::of(meta),
        },
        data: Resource {
            kind: "forecast",
            id: forecast_id(doc),
            attributes: Attributes {
                product: doc.product,
                station_id: doc.station.as_ref().map(|s| s.as_str()),
                brands: doc.brands.as_deref(),
                regions: doc.regions.as_deref(),
                as_of: f.as_of.to_string(),
                basis: f.basis.to_string(),
                days: f
                    .days
                    .iter()
                    .map(|d| Day {
                        date: d.date.to_string(),
                        median: d.median,
                        low: d.low,
                        high: d.high,
                        known: d.known,
                        hike_probability: d.hike_probability,
                    })
                    .collect(),
                advice: Advice {
                    action: f.advice.action.as_str(),
                    until: f.advice.until.map(|d| d.to_string()),
                    saving: f.advice.saving,
                    reason: &f.advice.reason,
                },
                cycle: Cycle {
                    period_days: f.period_days,
                    days_since_hike: f.days_since_hike,
                    next_hike: f.next_hike.map(|d| d.to_string()),
                },
                inputs: if f.wholesale { &["retail", "wholesale"] } else { &["retail"] },
                accuracy: AccuracyOut {
                    days: a.days,
                    mae: first(&a.mae),
                    naive_mae: first(&a.naive_mae),
                    within2c: first(&a.within),
                    hike_hit_rate: a.hike_hit_rate,
                    false_alarm_rate: a.false_alarm_rate,
                    advice_saving: a.advice_saving,
                    hindsight_saving: a.hindsight_saving,
                    live: doc.live.as_ref().map(live_out),
                },
            },
        },
    };
    Ok(serde_json::to_vec(&out)?)
}

#[derive(Serialize)]
struct RecordDocument<'a> {
    jsonapi: JsonApi,
    meta: RecordMeta<'a>,
    data: Vec<RecordResource>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordMeta<'a> {
    source: &'static str,
    product: ProductCode,
    #[serde(skip_serializing_if = "Option::is_none")]
    station_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    brands: Option<&'a [wafuel_domain::codes::BrandCode]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    regions: Option<&'a [wafuel_domain::codes::RegionCode]>,
    from: String,
    to: String,
    live: Option<LiveOut>,
    #[serde(flatten)]
    about: super::jsonapi::About<'a>,
}

#[derive(Serialize)]
struct RecordResource {
    #[serde(rename = "type")]
    kind: &'static str,
    id: String,
    attributes: RecordAttributes,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordAttributes {
    as_of: String,
    recorded_at: String,
    today: Option<f64>,
    days: Vec<RecordDay>,
    advice: RecordAdvice,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordDay {
    date: String,
    median: f64,
    low: f64,
    high: f64,
    known: bool,
    hike_probability: f64,
    /// The published price, once known.
    actual: Option<f64>,
    /// actual − median, once known.
    error: Option<f64>,
}

#[derive(Serialize)]
struct RecordAdvice {
    action: &'static str,
    until: Option<String>,
    saving: Option<f64>,
    /// What following it saved against filling on `asOf`, once every day is known.
    saved: Option<f64>,
}

fn error_of(r: &Recorded, d: &wafuel_domain::forecast::ForecastDay) -> (Option<f64>, Option<f64>) {
    let actual = r.outcomes.get(&d.date).copied();
    (actual, actual.map(|a| ((a - d.median) * 10.0).round() / 10.0 + 0.0))
}

/// `/v1/forecast/record` as JSON:API: one `forecastRecord` per recorded forecast, oldest first.
pub fn record_jsonapi(doc: &RecordDoc, meta: &DocumentMeta) -> Result<Vec<u8>, RenderError> {
    let data = doc
        .records
        .iter()
        .map(|r| RecordResource {
            kind: "forecastRecord",
            id: format!("{}:{}", r.subject, r.as_of),
            attributes: RecordAttributes {
                as_of: r.as_of.to_string(),
                recorded_at: r.recorded_at.to_string(),
                today: r.today,
                days: r
                    .days
                    .iter()
                    .map(|d| {
                        let (actual, error) = error_of(r, d);
                        RecordDay {
                            date: d.date.to_string(),
                            median: d.median,
                            low: d.low,
                            high: d.high,
                            known: d.known,
                            hike_probability: d.hike_probability,
                            actual,
                            error,
                        }
                    })
                    .collect(),
                advice: RecordAdvice {
                    action: r.advice.action.as_str(),
                    until: r.advice.until.map(|d| d.to_string()),
                    saving: r.advice.saving,
                    saved: r.saving().map(|(saved, _)| saved),
                },
            },
        })
        .collect();
    let out = RecordDocument {
        jsonapi: JSON_API,
        meta: RecordMeta {
            source: SOURCE_HOST,
            product: doc.product,
            station_id: doc.station.as_ref().map(|s| s.as_str()),
            brands: doc.brands.as_deref(),
            regions: doc.regions.as_deref(),
            from: doc.from.to_string(),
            to: doc.to.to_string(),
            live: doc.live.as_ref().map(live_out),
            about: super::jsonapi::About::of(meta),
        },
        data,
    };
    Ok(serde_json::to_vec(&out)?)
}

/// `/v1/forecast/record` as CSV: one row per recorded day.
pub fn record_csv(doc: &RecordDoc) -> Result<Vec<u8>, RenderError> {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    super::safe_record(
        &mut w,
        [
            "as_of",
            "recorded_at",
            "date",
            "median",
            "low",
            "high",
            "known",
            "hike_probability",
            "actual",
            "error",
            "advice",
            "advice_until",
        ],
    )?;
    let num = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    for r in &doc.records {
        for d in &r.days {
            let (actual, error) = error_of(r, d);
            super::safe_record(
                &mut w,
                [
                    r.as_of.to_string(),
                    r.recorded_at.to_string(),
                    d.date.to_string(),
                    d.median.to_string(),
                    d.low.to_string(),
                    d.high.to_string(),
                    d.known.to_string(),
                    d.hike_probability.to_string(),
                    num(actual),
                    num(error),
                    r.advice.action.as_str().to_string(),
                    r.advice.until.map(|u| u.to_string()).unwrap_or_default(),
                ],
            )?;
        }
    }
    super::csv_bytes(w)
}

fn cell(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "–".to_string(), |v| format!("{v:.digits$}"))
}

fn percent(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_string(), |v| format!("{:.0} %", v * 100.0))
}

/// The backtest's report: per horizon day, the method's MAE against both naive baselines,
/// then the hike rates, what following the advice saved, and how honest the intervals were.
pub fn backtest_table(title: &str, replay: &Replay) -> String {
    let a = replay.accuracy();
    let mae = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let mut out = format!("{title}\n{} forecasts replayed, each from its own past only.\n\n", replay.days);
    out.push_str(
        "| day | MAE (c/L) | last known day | one cycle ago | model / better baseline | within 2 c/L | 80 % band \
         | weekly-seasonal | model / best naive |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|---|---|\n");
    let (mut model_sum, mut best_sum) = (0.0, 0.0);
    for k in 0..MAX_HORIZON {
        let model = a.mae[k];
        let naive = a.naive_mae[k];
        let ago = mae(&replay.cycle_ago[k]);
        let better = match (naive, ago) {
            (Some(n), Some(c)) => Some(n.min(c)),
            (n, c) => n.or(c),
        };
        let ratio = model.zip(better).filter(|(_, b)| *b > 0.0).map(|(m, b)| m / b);
        let weekly = mae(&replay.weekly[k]);
        let best = better.zip(weekly).map(|(b, w)| b.min(w)).or(better).or(weekly);
        if let Some((m, b)) = model.zip(best) {
            (model_sum, best_sum) = (model_sum + m, best_sum + b);
        }
        let to_best = model.zip(best).filter(|(_, b)| *b > 0.0).map(|(m, b)| m / b);
        let band = a.bands[k]
            .map_or_else(|| "–".to_string(), |(lo, hi)| format!("{:+.1} … {:+.1}", lo.min(0.0), hi.max(0.0)));
        out.push_str(&format!(
            "| +{} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            k + 1,
            cell(model, 2),
            cell(naive, 2),
            cell(ago, 2),
            cell(ratio, 2),
            percent(a.within[k]),
            band,
            cell(weekly, 2),
            cell(to_best, 2)
        ));
    }
    out.push_str(&format!(
        "\nDays +1 to +{MAX_HORIZON}: the model's mean MAE is {} of the mean of each day's best naive \
         (last known day, one cycle ago or weekly-seasonal).\n",
        cell((best_sum > 0.0).then(|| model_sum / best_sum), 2)
    ));
    let (hikes, hit) = replay.hikes;
    let (alarms, false_alarms) = replay.alarms;
    let (hike_days, waited) = replay.hike_days;
    let (origins, saved, hindsight) = replay.advice;
    out.push_str(&format!(
        "Hikes (days +1 to +3): {hit} of {hikes} given a probability of 0.5 or more ({}); \
         {false_alarms} of {alarms} such days had no hike ({} false alarms).\n",
        percent(a.hike_hit_rate),
        percent(a.false_alarm_rate)
    ));
    out.push_str(&format!(
        "On hike days the advice was \"wait\" {waited} times out of {hike_days} ({}).\n",
        percent((hike_days > 0).then(|| waited as f64 / hike_days as f64))
    ));
    let per = |x: f64| if origins > 0 { x / origins as f64 } else { 0.0 };
    out.push_str(&format!(
        "Following the advice saved {:.2} c/L a fill on average against filling on the day asked \
         ({origins} days); perfect hindsight would have saved {:.2} c/L ({}).\n",
        per(saved),
        per(hindsight),
        percent((hindsight > 0.0).then(|| saved / hindsight))
    ));
    out.push_str(&format!(
        "The 80 % interval held the outcome on {} of replayed days (within {CLOSE_CENTS:.0} c/L: see the table).\n",
        percent(replay.coverage())
    ));
    out
}
