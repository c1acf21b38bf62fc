//! The forecast's live record in the shared store: one row per (subject, asOf), written by
//! whichever replica answered that forecast first (the others' inserts do nothing), and the
//! outcomes of its days, each written once: a replica adds only days the row does not have,
//! compare-and-set on the row's outcomes as it read them, so two replicas scoring the same
//! day write it once (the loser finds it scored).

use std::collections::BTreeMap;

use jiff::civil::Date;
use serde_json::{Value, json};

use super::backend::Backend;
use super::conn::{Conn, sql};
use super::history::{day_number, from_day_number};
use super::{SqlStore, StoreError, from_millis, millis};
use wafuel_domain::codes::ProductCode;
use wafuel_domain::forecast::{Action, Advice, ForecastDay, Recorded};

/// Live-record persistence.
#[async_trait::async_trait]
pub trait RecordStore: Send + Sync + 'static {
    /// Record `forecast` unless its (subject, asOf) is recorded: true when this call did.
    async fn record_forecast(&self, product: ProductCode, forecast: &Recorded) -> Result<bool, StoreError>;
    /// The recorded forecasts of `subject` made `from..=to`, ascending by `asOf`.
    async fn recorded_forecasts(
        &self,
        subject: &str,
        from: Date,
        to: Date,
    ) -> Result<Vec<Recorded>, StoreError>;
    /// Add `outcomes` to a record whose outcomes are still `seen` (as read); false when
    /// another writer changed them first (read again and add what is still missing).
    async fn score_forecast(
        &self,
        subject: &str,
        as_of: Date,
        seen: &BTreeMap<Date, f64>,
        outcomes: &BTreeMap<Date, f64>,
    ) -> Result<bool, StoreError>;
}

const INSERT: &str = "INSERT INTO forecast_records (subject, as_of, product, recorded_at, forecast) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (subject, as_of) DO NOTHING";
const RANGE: &str = "SELECT subject, as_of, recorded_at, forecast, outcomes FROM forecast_records \
     WHERE subject = $1 AND as_of >= $2 AND as_of <= $3 ORDER BY as_of";
const SCORE: &str =
    "UPDATE forecast_records SET outcomes = $1 WHERE subject = $2 AND as_of = $3 AND outcomes = $4";

#[derive(sqlx::FromRow)]
struct Row {
    subject: String,
    as_of: i64,
    recorded_at: i64,
    forecast: String,
    outcomes: String,
}

fn encode_outcomes(outcomes: &BTreeMap<Date, f64>) -> String {
    let map: serde_json::Map<String, Value> =
        outcomes.iter().map(|(d, p)| (d.to_string(), json!(p))).collect();
    Value::Object(map).to_string()
}

fn decode_outcomes(text: &str) -> BTreeMap<Date, f64> {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) else { return BTreeMap::new() };
    map.iter().filter_map(|(d, p)| Some((d.parse().ok()?, p.as_f64()?))).collect()
}

fn encode_forecast(r: &Recorded) -> String {
    let days: Vec<Value> = r
        .days
        .iter()
        .map(|d| {
            json!({"date": d.date.to_string(), "median": d.median, "low": d.low, "high": d.high,
                   "known": d.known, "hikeProbability": d.hike_probability})
        })
        .collect();
    json!({
        "today": r.today,
        "days": days,
        "advice": {
            "action": r.advice.action.as_str(),
            "until": r.advice.until.map(|d| d.to_string()),
            "saving": r.advice.saving,
            "reason": r.advice.reason,
        },
    })
    .to_string()
}

fn action(text: &str) -> Option<Action> {
    [Action::FillNow, Action::Wait, Action::Either].into_iter().find(|a| a.as_str() == text)
}

impl Row {
    /// The record, when this version can read it (a row it cannot is left out, never guessed).
    fn recorded(self) -> Option<Recorded> {
        let body: Value = serde_json::from_str(&self.forecast).ok()?;
        let date = |v: &Value| v.as_str().and_then(|s| s.parse::<Date>().ok());
        let days = body["days"]
            .as_array()?
            .iter()
            .map(|d| {
                Some(ForecastDay {
                    date: date(&d["date"])?,
                    median: d["median"].as_f64()?,
                    low: d["low"].as_f64()?,
                    high: d["high"].as_f64()?,
                    known: d["known"].as_bool()?,
                    hike_probability: d["hikeProbability"].as_f64()?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let a = &body["advice"];
        Some(Recorded {
            subject: self.subject,
            as_of: from_day_number(self.as_of)?,
            recorded_at: from_millis(self.recorded_at),
            today: body["today"].as_f64(),
            days,
            advice: Advice {
                action: action(a["action"].as_str()?)?,
                until: date(&a["until"]),
                saving: a["saving"].as_f64(),
                reason: a["reason"].as_str().unwrap_or_default().to_string(),
            },
            outcomes: decode_outcomes(&self.outcomes),
        })
    }
}

#[async_trait::async_trait]
impl<B: Backend> RecordStore for SqlStore<B> {
    async fn record_forecast(&self, product: ProductCode, r: &Recorded) -> Result<bool, StoreError> {
        let statement = sql(INSERT)
            .bind(r.subject.as_str())
            .bind(day_number(r.as_of))
            .bind(product)
            .bind(millis(r.recorded_at))
            .bind(encode_forecast(r));
        Ok(self.db.single().await?.execute(statement).await? == 1)
    }

    async fn recorded_forecasts(
        &self,
        subject: &str,
        from: Date,
        to: Date,
    ) -> Result<Vec<Recorded>, StoreError> {
        let statement = sql(RANGE).bind(subject).bind(day_number(from)).bind(day_number(to));
        let rows: Vec<Row> = self.db.read().await?.fetch_all(statement).await?;
        Ok(rows.into_iter().filter_map(Row::recorded).collect())
    }

    async fn score_forecast(
        &self,
        subject: &str,
        as_of: Date,
        seen: &BTreeMap<Date, f64>,
        outcomes: &BTreeMap<Date, f64>,
    ) -> Result<bool, StoreError> {
        let mut all = seen.clone();
        // Only days not scored: a scored day is never changed.
        for (d, p) in outcomes {
            all.entry(*d).or_insert(*p);
        }
        let statement = sql(SCORE)
            .bind(encode_outcomes(&all))
            .bind(subject)
            .bind(day_number(as_of))
            .bind(encode_outcomes(seen));
        Ok(self.db.single().await?.execute(statement).await? == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_round_trip_through_their_text() {
        let outcomes: BTreeMap<Date, f64> =
            [(jiff::civil::date(2026, 9, 2), 177.4), (jiff::civil::date(2026, 9, 3), 191.0)]
                .into_iter()
                .collect();
        let text = encode_outcomes(&outcomes);
        assert_eq!(text, r#"{"2026-09-02":177.4,"2026-09-03":191.0}"#);
        assert_eq!(decode_outcomes(&text), outcomes);
        assert_eq!(encode_outcomes(&BTreeMap::new()), "{}", "as the column's default");
    }
}
