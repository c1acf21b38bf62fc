//! The live record: forecasts as the service answered them for their own day, each scored as
//! its days' prices are published, and the accuracy they add up to (`accuracy.live`). Unlike
//! the replay, nothing here is recomputed: what was said is what is scored.

use std::collections::BTreeMap;

use super::*;

/// One forecast as answered on its `asOf` (its first answer that day), with the outcomes of
/// its days known so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// What was forecast: `<product>`, `:s<stationId>`, `:r<regions>`, `:b<brands>` (the
    /// answer's resource id without its `asOf`).
    pub subject: String,
    pub as_of: Date,
    pub recorded_at: jiff::Timestamp,
    /// The subject's price on `asOf` (what filling that day cost), when it had one.
    pub today: Option<f64>,
    pub days: Vec<ForecastDay>,
    pub advice: Advice,
    /// The published price of each of `days` scored so far.
    pub outcomes: BTreeMap<Date, f64>,
}

impl Recorded {
    /// A forecast as answered, to be recorded (nothing scored yet).
    pub fn of(subject: String, forecast: &Forecast, today: Option<f64>, at: jiff::Timestamp) -> Self {
        Recorded {
            subject,
            as_of: forecast.as_of,
            recorded_at: at,
            today,
            days: forecast.days.clone(),
            advice: forecast.advice.clone(),
            outcomes: BTreeMap::new(),
        }
    }

    /// The outcomes of days not yet scored whose price `actual` now knows, up to `known`
    /// (the newest day published): what to write once, never again.
    pub fn due(&self, known: Date, actual: impl Fn(Date) -> Option<f64>) -> BTreeMap<Date, f64> {
        self.days
            .iter()
            .filter(|d| d.date <= known && !self.outcomes.contains_key(&d.date))
            .filter_map(|d| Some((d.date, actual(d.date)?)))
            .collect()
    }

    /// Whether every day of the forecast is scored.
    pub fn complete(&self) -> bool {
        self.days.iter().all(|d| self.outcomes.contains_key(&d.date))
    }

    /// Days after `asOf` of a recorded day (1 for tomorrow).
    fn horizon(&self, d: &ForecastDay) -> usize {
        usize::try_from((d.date - self.as_of).get_days()).unwrap_or(0)
    }

    /// What following the recorded advice saved against filling on `asOf`, and what hindsight
    /// would have: once every day is scored.
    pub fn saving(&self) -> Option<(f64, f64)> {
        let today = self.today?;
        if !self.complete() {
            return None;
        }
        let paid = match (self.advice.action, self.advice.until) {
            (Action::Wait, Some(until)) => *self.outcomes.get(&until)?,
            _ => today,
        };
        let best = self.outcomes.values().copied().fold(today, f64::min);
        Some((round2(today - paid), round2(today - best)))
    }
}

/// The live accuracy: of recorded forecasts with at least one forecast (not known) day scored.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveAccuracy {
    pub forecasts: usize,
    /// Mean absolute error per day after `asOf` (day+1 first).
    pub mae: Vec<Option<f64>>,
    pub hike_hit_rate: Option<f64>,
    pub false_alarm_rate: Option<f64>,
    pub advice_saving: Option<f64>,
    pub hindsight_saving: Option<f64>,
}

/// The live accuracy of `records`, `None` until one is scored. Days published when they were
/// forecast (`known`) are left out: they were no forecast. Hikes and alarms count days +1 to
/// +3 as the replay does, a hike being a rise of [`HIKE_CENTS`] over the day before's price.
pub fn live_accuracy(records: &[Recorded]) -> Option<LiveAccuracy> {
    let mut errors = vec![Vec::new(); MAX_HORIZON];
    let (mut forecasts, mut hikes, mut hits, mut alarms, mut false_alarms) = (0, 0, 0, 0, 0);
    let mut savings = Vec::new();
    for r in records {
        let mut scored = false;
        for d in r.days.iter().filter(|d| !d.known) {
            let Some(&actual) = r.outcomes.get(&d.date) else { continue };
            let h = r.horizon(d);
            let Some(slot) = h.checked_sub(1).and_then(|i| errors.get_mut(i)) else { continue };
            slot.push((actual - d.median).abs());
            scored = true;
            if h <= 3 {
                let before = d
                    .date
                    .yesterday()
                    .ok()
                    .and_then(|y| if y == r.as_of { r.today } else { r.outcomes.get(&y).copied() });
                let hiked = before.is_some_and(|b| actual - b >= HIKE_CENTS);
                let likely = d.hike_probability >= LIKELY;
                hikes += usize::from(hiked);
                hits += usize::from(hiked && likely);
                alarms += usize::from(likely);
                false_alarms += usize::from(likely && !hiked);
            }
        }
        forecasts += usize::from(scored);
        savings.extend(r.saving());
    }
    if forecasts == 0 {
        return None;
    }
    let mean_of = |v: &[f64]| mean(v).map(round2);
    let (advice, hindsight): (Vec<f64>, Vec<f64>) = savings.into_iter().unzip();
    Some(LiveAccuracy {
        forecasts,
        mae: errors.iter().map(|e| mean_of(e)).collect(),
        hike_hit_rate: share(hits, hikes).map(round2),
        false_alarm_rate: share(false_alarms, alarms).map(round2),
        advice_saving: mean_of(&advice),
        hindsight_saving: mean_of(&hindsight),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn day(d: Date, median: f64, p: f64) -> ForecastDay {
        ForecastDay {
            date: d,
            median,
            low: median - 2.0,
            high: median + 2.0,
            known: false,
            hike_probability: p,
        }
    }

    fn recorded() -> Recorded {
        let as_of = date(2026, 9, 1);
        let d = |n: i8| date(2026, 9, n);
        Recorded {
            subject: "1".into(),
            as_of,
            recorded_at: jiff::Timestamp::UNIX_EPOCH,
            today: Some(180.0),
            days: vec![day(d(2), 178.0, 0.1), day(d(3), 190.0, 0.8), day(d(4), 188.0, 0.6)],
            advice: Advice {
                action: Action::Wait,
                until: Some(d(2)),
                saving: Some(2.0),
                reason: String::new(),
            },
            outcomes: BTreeMap::new(),
        }
    }

    #[test]
    fn a_day_is_scored_once_its_price_is_published_and_never_again() {
        let mut r = recorded();
        let prices = |d: Date| {
            Some(if d.day() == 2 {
                177.0
            } else if d.day() == 3 {
                191.0
            } else {
                187.5
            })
        };
        let due = r.due(date(2026, 9, 2), prices);
        assert_eq!(due.into_iter().collect::<Vec<_>>(), vec![(date(2026, 9, 2), 177.0)]);
        r.outcomes.insert(date(2026, 9, 2), 177.0);
        assert!(r.due(date(2026, 9, 2), prices).is_empty());
        assert_eq!(r.due(date(2026, 9, 9), prices).len(), 2);
        assert_eq!(r.saving(), None, "not every day is scored");
    }

    #[test]
    fn the_live_accuracy_scores_what_was_said() {
        let mut r = recorded();
        assert_eq!(live_accuracy(std::slice::from_ref(&r)), None);
        r.outcomes.extend([(date(2026, 9, 2), 177.0), (date(2026, 9, 3), 191.0), (date(2026, 9, 4), 187.5)]);
        let live = live_accuracy(&[r]).expect("scored");
        assert_eq!(live.forecasts, 1);
        assert_eq!(&live.mae[..3], &[Some(1.0), Some(1.0), Some(0.5)]);
        assert!(live.mae[3..].iter().all(Option::is_none));
        // 3 September rose 14 c/L (a hike, called at 0.8); 4 September fell (called at 0.6).
        assert_eq!(live.hike_hit_rate, Some(1.0));
        assert_eq!(live.false_alarm_rate, Some(0.5));
        // Waiting for the 2nd saved 3 c/L; the cheapest day was that one too.
        assert_eq!((live.advice_saving, live.hindsight_saving), (Some(3.0), Some(3.0)));
    }
}
