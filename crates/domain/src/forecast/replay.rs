//! The replay: the method run from each past origin on the prices known then, scored as
//! its days became known, and the accuracy it reports.

use super::*;

/// The longest horizon, in days after `asOf`: the API contract's `days` limit (a week, one
/// weekly cycle).
pub const MAX_HORIZON: usize = 7;
/// Days before `asOf` whose forecasts are replayed for its accuracy. Why a year: every season
/// and holiday once, and the bands' 10th and 90th percentiles each rest on about 36 errors.
pub const REPLAY_DAYS: i64 = 365;
/// An error within this (c/L) counts as close, for the accuracy said in words. Why 2: about
/// what a litre-for-litre driver notices on a fill (a dollar on 50 L).
pub const CLOSE_CENTS: f64 = 2.0;
/// Replayed errors a horizon day needs before they choose the blend. Why 14: two weeks, two
/// of each weekday, so the choice never rests on one weekday's errors.
pub(super) const BLEND_MIN_ERRORS: usize = 14;
/// Days before the first replayed origin whose forecasts are scored for the blend only (so
/// the blend has its evidence from the first reported day on), not for the accuracy. Why 91:
/// the same recent window the cycle is read from ([`RECENT_DAYS`]).
pub(super) const BLEND_LEAD_DAYS: i64 = 91;

/// The method replayed on its own past: errors per horizon day, and the sums the backtest
/// reports. Every replay uses only prices of days up to its own origin.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Replay {
    /// Origins replayed.
    pub days: usize,
    /// Signed errors (actual − forecast) per horizon day, day+1 first.
    pub errors: Vec<Vec<f64>>,
    /// Absolute errors of "every day = the last known price".
    pub naive: Vec<Vec<f64>>,
    /// Absolute errors of "the same as one cycle ago" (the last known price without a cycle).
    pub cycle_ago: Vec<Vec<f64>>,
    /// Absolute errors of the weekly-seasonal naive: the last known price plus the change
    /// over the same days a week earlier, y(D) + y(D+h−7) − y(D−7) (the last known price
    /// when either is missing).
    pub weekly: Vec<Vec<f64>>,
    /// Actual hikes at horizons 1–3, and how many of them were given ≥ [`LIKELY`].
    pub hikes: (usize, usize),
    /// Horizon 1–3 days given ≥ [`LIKELY`], and how many of them had no hike.
    pub alarms: (usize, usize),
    /// Origins whose whole horizon is known: what following the advice saved against filling
    /// on the day (c/L, summed), and what perfect hindsight would have saved.
    pub advice: (usize, f64, f64),
    /// Origins that were hike days, and how many of them were told to wait.
    pub hike_days: (usize, usize),
    /// Waits the advice's rule gave (guard aside) whose day has not come: (the day waited
    /// for, the price on the day asked).
    pub(super) waits: Vec<(Date, f64)>,
    /// What those waits saved once their day came (today's price − the price on the day
    /// waited for), summed with the newest weighing most ([`decayed`]), and how many.
    pub(super) wait_record: (f64, usize),
    /// Days the model gave a hike probability of [`LIKELY`] or more at horizons 1–3 whose
    /// day has not come: (that day, its raw probability, whether it hiked).
    pub(super) alarms_pending: Vec<(Date, f64, bool)>,
    /// Those days once come: their hikes and their probabilities, each summed with the newest
    /// weighing most ([`decayed`]), and how many.
    pub(super) alarm_record: (f64, f64, usize),
    /// Per horizon day, the replayed errors of each mix of the cycle model and the cycle
    /// profile ([`mix_share`]), summed with the newest weighing most ([`BLEND_DECAY`]), and
    /// how many days were scored.
    pub(super) blend_errors: Vec<([f64; MIXES], usize)>,
    /// Forecasts whose day has not come by the origin replayed: (day, step, model, profile).
    pub(super) pending: Vec<(Date, usize, (f64, f64))>,
}

/// The accuracy an answer shows, per horizon day (day+1 first).
#[derive(Debug, Clone, PartialEq)]
pub struct Accuracy {
    pub days: usize,
    pub mae: Vec<Option<f64>>,
    pub naive_mae: Vec<Option<f64>>,
    /// Share of forecasts within [`CLOSE_CENTS`] of the outcome.
    pub within: Vec<Option<f64>>,
    pub hike_hit_rate: Option<f64>,
    pub false_alarm_rate: Option<f64>,
    /// What following the advice saved a fill on average against filling on the day asked
    /// (c/L), over replays whose whole horizon is known.
    pub advice_saving: Option<f64>,
    /// What perfect hindsight would have saved on the same replays (c/L).
    pub hindsight_saving: Option<f64>,
    /// The 10th and 90th percentiles of the signed errors (the 80 % interval), per day.
    pub bands: Vec<Option<(f64, f64)>>,
    /// Whether waiting as the advice's rule says has saved on the replayed days (false once
    /// at least [`BLEND_MIN_ERRORS`] waits are known and they saved nothing on average, the
    /// newest weighing most): where it has not, no wait is advised.
    pub waiting_pays: bool,
    /// The factor (at most 1) the model's hike probabilities are scaled by: the share of its
    /// replayed likely hikes that came, over their mean probability, once at least
    /// [`BLEND_MIN_ERRORS`] are known; 1 before, and where they came as often as said.
    pub hike_scale: f64,
    /// Per day after the basis, the cycle model's share of the forecast (the rest is the
    /// cycle profile's), as the replayed errors chose it; `None` before they can.
    pub blend: Vec<Option<f64>>,
}

pub(super) fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

pub(super) fn share(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

pub(super) fn quantile(sorted: &[f64], p: f64) -> f64 {
    let rank = p * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

impl Replay {
    /// Forecasts made on each day from `first` to the day before `last`, scored against the
    /// prices of days up to `last`.
    pub fn run(subject: Subject<'_>, first: Date, last: Date) -> Self {
        let mut r = Replay {
            errors: vec![Vec::new(); MAX_HORIZON],
            naive: vec![Vec::new(); MAX_HORIZON],
            cycle_ago: vec![Vec::new(); MAX_HORIZON],
            weekly: vec![Vec::new(); MAX_HORIZON],
            blend_errors: vec![([0.0; MIXES], 0); MAX_HORIZON],
            ..Replay::default()
        };
        let mut origin = first.checked_sub(days(BLEND_LEAD_DAYS)).unwrap_or(first);
        while origin < last {
            if origin < first {
                // The lead-in: scored for the blend and the advice's record only.
                if let Some((today, outlook)) = r.step(subject, origin, last) {
                    let predicted = r.predicted(subject, &outlook, last, &r.blend());
                    r.record_wait(today, &predicted);
                }
            } else {
                r.add(subject, origin, last);
            }
            let Ok(next) = origin.tomorrow() else { break };
            origin = next;
        }
        r.score(subject, last);
        r
    }

    /// Scores the pending forecasts and waits whose day has come by `known` (its price is
    /// known).
    pub(super) fn score(&mut self, subject: Subject<'_>, known: Date) {
        let alarms = &mut self.alarm_record;
        self.alarms_pending.retain(|&(day, probability, hiked)| {
            if day > known {
                return true;
            }
            alarms.0 = decayed(alarms.0, f64::from(u8::from(hiked)));
            alarms.1 = decayed(alarms.1, probability);
            alarms.2 += 1;
            false
        });
        let record = &mut self.wait_record;
        self.waits.retain(|&(until, today)| {
            if until > known {
                return true;
            }
            if let Some(then) = subject.actual(until) {
                record.0 = decayed(record.0, today - then);
                record.1 += 1;
            }
            false
        });
        let blend_errors = &mut self.blend_errors;
        self.pending.retain(|&(day, step, (model, profile))| {
            if day > known {
                return true;
            }
            if let (Some(actual), Some((sums, n))) = (subject.actual(day), blend_errors.get_mut(step)) {
                for (i, sum) in sums.iter_mut().enumerate() {
                    *sum = decayed(*sum, (actual - mix(mix_share(i), model, profile)).abs());
                }
                *n += 1;
            }
            false
        });
    }

    /// The cycle model's share per horizon day: of the mixes 0, 0.1, … 1 of it and the cycle
    /// profile, the one whose replayed errors were least (the newest weighing most); none
    /// until a day has [`BLEND_MIN_ERRORS`] errors ([`Outlook::median`] then decides).
    pub(super) fn blend(&self) -> Vec<Option<f64>> {
        (0..MAX_HORIZON)
            .map(|step| match self.blend_errors.get(step) {
                // `min_by` keeps the first of equals: the highest share, so the model alone
                // unless the profile helps.
                Some((errors, n)) if *n >= BLEND_MIN_ERRORS => {
                    (0..MIXES).rev().min_by(|a, b| errors[*a].total_cmp(&errors[*b])).map(mix_share)
                }
                _ => None,
            })
            .collect()
    }

    /// The advice's rule on `predicted` days, its wait (if any) kept to be scored once its
    /// day comes. The rule's own advice is recorded whatever the guard says, so a rule that
    /// starts paying again is trusted again.
    pub(super) fn record_wait(&mut self, today: f64, predicted: &[ForecastDay]) -> Advice {
        let ruled = advise(today, predicted, true);
        if let (Action::Wait, Some(until)) = (ruled.action, ruled.until) {
            self.waits.push((until, today));
        }
        ruled
    }

    /// The days a replayed origin forecasts from `outlook` (up to `last`, mixed as `blend`
    /// says), their hike probabilities calibrated by the record so far. The model's likely
    /// hikes at horizons 1–3 (raw probabilities) are kept for that record, to be scored once
    /// their day comes; whether each hiked is read from `subject` (the record takes it only
    /// once the day is known by the origin replayed).
    pub(super) fn predicted(
        &mut self,
        subject: Subject<'_>,
        outlook: &Outlook,
        last: Date,
        blend: &[Option<f64>],
    ) -> Vec<ForecastDay> {
        let mut days = outlook.replayed_days(last, blend);
        for d in days.iter().take(3) {
            if d.hike_probability >= LIKELY && subject.actual(d.date).is_some() {
                self.alarms_pending.push((d.date, d.hike_probability, subject.hiked(d.date)));
            }
        }
        let scale = self.hike_scale();
        days.iter_mut().for_each(|d| d.hike_probability *= scale);
        days
    }

    /// See [`Accuracy::hike_scale`].
    pub(super) fn hike_scale(&self) -> f64 {
        let (hikes, probabilities, n) = self.alarm_record;
        if n < BLEND_MIN_ERRORS || probabilities <= 0.0 { 1.0 } else { (hikes / probabilities).min(1.0) }
    }

    /// Whether the waits the advice's rule gave have saved so far (see
    /// [`Accuracy::waiting_pays`]).
    pub(super) fn waiting_pays(&self) -> bool {
        // Every record is weighed alike, so the sum's sign is the weighted mean's.
        let (saved, n) = self.wait_record;
        n < BLEND_MIN_ERRORS || saved > 0.0
    }

    /// The first day a replay from `first` reads: its lead-in's origins and the weeks each
    /// of them reads.
    pub fn reads_from(first: Date) -> Date {
        first.checked_sub(days(BLEND_LEAD_DAYS + RECENT_DAYS as i64)).unwrap_or(Date::MIN)
    }

    /// The outlook from `origin` with the origin's price, once the forecasts whose day has
    /// come are scored; its days up to `last` wait to be scored for the blend. `None` when
    /// the origin has too little history or no price.
    pub(super) fn step(&mut self, subject: Subject<'_>, origin: Date, last: Date) -> Option<(f64, Outlook)> {
        self.score(subject, origin);
        if subject.market.days_before(origin) < MIN_HISTORY_DAYS {
            return None;
        }
        let today = subject.actual(origin)?;
        let outlook = subject.outlook(origin, MAX_HORIZON)?;
        for k in 0..MAX_HORIZON {
            let (Some(day), Some(parts)) = (origin.checked_add(days(k as i64 + 1)).ok(), outlook.parts(k))
            else {
                continue;
            };
            if day <= last {
                self.pending.push((day, k, parts));
            }
        }
        Some((today, outlook))
    }

    /// A replayed origin: its forecasts are scored for the accuracy, with the blend chosen so
    /// far ([`Replay::step`] keeps them for the blend too).
    pub(super) fn add(&mut self, subject: Subject<'_>, origin: Date, last: Date) {
        let Some((today, outlook)) = self.step(subject, origin, last) else { return };
        // Chosen from the errors known by the origin (`step` has just scored them).
        let blend = self.blend();
        self.days += 1;
        let period = detected_period(subject.market, origin);
        let forecast_days = self.predicted(subject, &outlook, last, &blend);
        for (k, predicted) in forecast_days.iter().enumerate() {
            let (h, day, median, probability) =
                (k + 1, predicted.date, predicted.median, predicted.hike_probability);
            let Some(actual) = subject.actual(day) else { continue };
            self.errors[k].push(actual - median);
            self.naive[k].push((actual - today).abs());
            let ago = period
                .and_then(|p| {
                    let back = h.div_ceil(p) * p;
                    subject.actual(day.checked_sub(days(back as i64)).ok()?)
                })
                .unwrap_or(today);
            self.cycle_ago[k].push((actual - ago).abs());
            let week_ago = |d: Date| subject.actual(d.checked_sub(days(7)).ok()?);
            let weekly =
                week_ago(day).zip(week_ago(origin)).map_or(today, |(then, base)| today + then - base);
            self.weekly[k].push((actual - weekly).abs());
            if h <= 3 {
                let hiked = subject.hiked(day);
                if hiked {
                    self.hikes.0 += 1;
                    self.hikes.1 += usize::from(probability >= LIKELY);
                }
                if probability >= LIKELY {
                    self.alarms.0 += 1;
                    self.alarms.1 += usize::from(!hiked);
                }
            }
        }
        let ruled = self.record_wait(today, &forecast_days);
        let advice = if self.waiting_pays() { ruled } else { advise(today, &forecast_days, false) };
        let yesterday = origin.yesterday().ok().and_then(|d| subject.actual(d));
        if yesterday.is_some_and(|y| today - y >= HIKE_CENTS) {
            self.hike_days.0 += 1;
            self.hike_days.1 += usize::from(advice.action == Action::Wait);
        }
        if forecast_days.len() == MAX_HORIZON {
            let outcomes: Vec<f64> = forecast_days.iter().filter_map(|d| subject.actual(d.date)).collect();
            let paid = match (advice.action, advice.until) {
                (Action::Wait, Some(until)) => subject.actual(until),
                _ => Some(today),
            };
            if let Some(paid) = paid {
                let best = outcomes.iter().copied().fold(today, f64::min);
                self.advice.0 += 1;
                self.advice.1 += today - paid;
                self.advice.2 += today - best;
            }
        }
    }

    /// The accuracy an answer shows.
    pub fn accuracy(&self) -> Accuracy {
        let abs = |v: &[f64]| v.iter().map(|e| e.abs()).collect::<Vec<f64>>();
        Accuracy {
            days: self.days,
            mae: self.errors.iter().map(|e| mean(&abs(e)).map(round2)).collect(),
            naive_mae: self.naive.iter().map(|e| mean(e).map(round2)).collect(),
            within: self
                .errors
                .iter()
                .map(|e| share(e.iter().filter(|x| x.abs() <= CLOSE_CENTS).count(), e.len()).map(round2))
                .collect(),
            hike_hit_rate: share(self.hikes.1, self.hikes.0).map(round2),
            false_alarm_rate: share(self.alarms.1, self.alarms.0).map(round2),
            advice_saving: (self.advice.0 > 0).then(|| round2(self.advice.1 / self.advice.0 as f64)),
            hindsight_saving: (self.advice.0 > 0).then(|| round2(self.advice.2 / self.advice.0 as f64)),
            bands: self
                .errors
                .iter()
                .map(|e| {
                    let mut sorted = e.clone();
                    sorted.sort_by(f64::total_cmp);
                    (!sorted.is_empty()).then(|| (quantile(&sorted, 0.1), quantile(&sorted, 0.9)))
                })
                .collect(),
            blend: self.blend(),
            waiting_pays: self.waiting_pays(),
            hike_scale: self.hike_scale(),
        }
    }

    /// Share of the replayed outcomes inside their 80 % interval (the bands of this replay).
    pub fn coverage(&self) -> Option<f64> {
        let accuracy = self.accuracy();
        let (mut inside, mut total) = (0, 0);
        for (errors, band) in self.errors.iter().zip(&accuracy.bands) {
            let Some((lo, hi)) = band else { continue };
            total += errors.len();
            inside += errors.iter().filter(|e| **e >= lo.min(0.0) && **e <= hi.max(0.0)).count();
        }
        share(inside, total)
    }
}
