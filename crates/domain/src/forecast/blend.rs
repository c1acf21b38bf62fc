//! The cycle model and the cycle profile, and the blend of the two per horizon day in the
//! share the replayed errors favour: one subject's outlook.

use super::*;

/// Share of the last week's move carried into the forecast of a series without a cycle, once
/// that move is a hike's worth or more. More than of a cycle's drift: the move is the level's
/// own, with no hike's size in it (a cycle's net drift is a hike against the falls after it,
/// as uneven as the hikes). On FuelWatch's diesel of April–August 2026, half left its climbing
/// weeks at up to 1.41× the weekly-seasonal naive at day+7 (docs/forecast.md); all of it
/// overshoots where a climb turns.
pub(super) const RUN_KEPT: f64 = 0.75;
/// How far ahead `nextHike` is looked for (days after the basis). Why 28: two fortnightly
/// cycles, the longest cycle Perth has had lately, so a cycle's next hike is always found.
pub(super) const NEXT_HIKE_SEARCH: usize = 28;
/// Cycles the cycle profile is averaged over. Why 5: "one cycle ago" made steadier; five
/// cycles average out one odd week and still fit the 91 days read for fortnightly cycles.
pub(super) const PROFILE_CYCLES: usize = 5;
/// The profile's period for a series without a cycle: retail prices' week (stations price
/// by weekday even without a hike cycle).
pub(super) const WEEK: usize = 7;
/// The cycle model's share of a forecast before the replay has chosen one. Why a half: with
/// no errors yet to choose from, an even mix is never worse than the worse of the two.
pub(super) const UNPROVEN_SHARE: f64 = 0.5;

/// What is forecast: the market's series, and one station's when the forecast is its own.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    pub market: &'a Daily,
    pub station: Option<&'a Daily>,
    /// The terminal gate price the market pays (c/L a day): the outlook reads it up to its
    /// basis only, so a caller passes only what was known by then.
    pub wholesale: Option<&'a Daily>,
}

/// The next days from a basis, before intervals and advice.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlook {
    pub basis: Date,
    /// The subject's price on the basis day.
    pub now: f64,
    /// Per day after the basis: (median, hike probability).
    pub days: Vec<(f64, f64)>,
    /// Days since the last hike on the basis day, when there is a cycle.
    pub days_since_hike: Option<usize>,
    /// The first day after the basis more likely than not to have had a hike by then.
    pub next_hike: Option<Date>,
    /// The most likely days between hikes, when there is a cycle.
    pub period_days: Option<usize>,
    /// Per day after the basis: the cycle profile's price ([`cycle_profile`]).
    pub profile: Vec<f64>,
    /// The cycle model's forecast is flat (no cycle, or a station that does not follow it).
    pub flat: bool,
    /// Per day after the basis: what the wholesale price adds ([`level_path`]); empty where
    /// no TGP was read.
    pub level: Vec<f64>,
}

impl Outlook {
    /// The forecast price `step + 1` days after the basis: the cycle model's median and the
    /// cycle profile, mixed as `blend` says.
    pub fn median(&self, step: usize, blend: &[Option<f64>]) -> Option<f64> {
        let (model, profile) = self.parts(step)?;
        // Before the replay has a say: an even mix where the model sees a cycle (the profile
        // steadies its timing and size), the model alone where it sees none (a flat pricer's
        // own weeks are noise until shown otherwise).
        let unproven = if self.flat { 1.0 } else { UNPROVEN_SHARE };
        let w = blend.get(step).copied().flatten().unwrap_or(unproven);
        Some(mix(w, model, profile))
    }

    /// Whether the outlook read a terminal gate price (the answer's `inputs`).
    pub fn read_wholesale(&self) -> bool {
        !self.level.is_empty()
    }

    /// The days a replay forecasts from this outlook's basis, up to `last`: the medians as
    /// `blend` mixes them, without intervals (the replay is what makes them).
    pub(super) fn replayed_days(&self, last: Date, blend: &[Option<f64>]) -> Vec<ForecastDay> {
        (0..self.days.len())
            .map_while(|k| {
                let date = self.basis.checked_add(days(k as i64 + 1)).ok().filter(|d| *d <= last)?;
                let (model, hike_probability) = *self.days.get(k)?;
                let median = self.median(k, blend).unwrap_or(model);
                Some(ForecastDay { date, median, low: median, high: median, known: false, hike_probability })
            })
            .collect()
    }

    /// The two forecasts mixed for day `step + 1`: the cycle model's median and the cycle
    /// profile, each with what the wholesale price adds (so the replay scores, and the blend
    /// chooses from, what is forecast).
    pub(super) fn parts(&self, step: usize) -> Option<(f64, f64)> {
        let (model, _) = *self.days.get(step)?;
        let profile = self.profile.get(step).copied().unwrap_or(model);
        let level = self.level.get(step).copied().unwrap_or(0.0);
        Some((model + level, profile + level))
    }
}

/// The forecast that gives the cycle model a share `w` and the cycle profile the rest.
pub(super) fn mix(w: f64, model: f64, profile: f64) -> f64 {
    w * model + (1.0 - w) * profile
}

/// The model's shares the blend chooses from: 0, 0.1, … 1. Why tenths: finer steps choose
/// from the same few dozen errors and only fit their noise.
pub(super) const MIXES: usize = 11;

pub(super) fn mix_share(i: usize) -> f64 {
    i as f64 / (MIXES - 1) as f64
}

/// The series' cycle profile from `anchor` (its price on the basis day, index `end`): per
/// day ahead, the mean change over the same days of its last [`PROFILE_CYCLES`] cycles of
/// `period` days, with those cycles' net drift taken out, then a share ([`TREND_KEPT`]) of
/// that drift put back. It is the "one cycle ago" naive made steadier: several cycles instead
/// of one, and a trend only partly carried (the level wanders with wholesale prices). Without
/// a cycle of prices to read, the anchor.
pub(super) fn cycle_profile(
    series: &Daily,
    end: usize,
    anchor: f64,
    steps: usize,
    period: usize,
) -> Vec<f64> {
    let period = period.max(1);
    let cycle_change = |to: usize| Some(series.at(to)? - series.at(to.checked_sub(period)?)?);
    let drifts: Vec<f64> =
        (0..PROFILE_CYCLES).filter_map(|j| cycle_change(end.checked_sub(period * j)?)).collect();
    let drift = mean(&drifts).unwrap_or(0.0) / period as f64;
    (1..=steps)
        .map(|k| {
            // Cycles far enough back that day `k` after their start is known.
            let first = k.div_ceil(period);
            let changes: Vec<f64> = (first..first + PROFILE_CYCLES)
                .filter_map(|j| {
                    let from = end.checked_sub(period * j)?;
                    Some(series.at(from + k)? - series.at(from)? - drift * k as f64)
                })
                .collect();
            anchor + mean(&changes).unwrap_or(0.0) + TREND_KEPT * drift * k as f64
        })
        .collect()
}

impl Subject<'_> {
    /// Whether the subject's price on `date` rose a hike's worth over the day before (both
    /// known).
    pub(super) fn hiked(&self, date: Date) -> bool {
        let before = date.yesterday().ok().and_then(|d| self.actual(d));
        before.zip(self.actual(date)).is_some_and(|(b, a)| a - b >= HIKE_CENTS)
    }

    /// The subject's actual price on `date`.
    pub fn actual(&self, date: Date) -> Option<f64> {
        match self.station {
            Some(s) => s.get(date),
            None => self.market.get(date),
        }
    }

    /// The outlook for `steps` days after `basis`, from prices of days up to `basis` only;
    /// `None` when the market has no price on `basis` or the station has no recent price.
    ///
    /// A station's own outlook starts from its own latest price and moves with the market's
    /// path as the station has answered the market lately ([`Response`]): a station that
    /// follows the cycle a day late rises the day after the market, one that ignores the
    /// cycle stays where it is.
    pub fn outlook(&self, basis: Date, steps: usize) -> Option<Outlook> {
        let end = self.market.index(basis)?;
        let market_now = self.market.at(end)?;
        let pattern = Pattern::read(self.market, end);
        let phase = pattern.as_ref().and_then(|p| p.starts.last().map(|s| end - s));
        // The station's anchor: its price on the basis day, else its latest in recent weeks.
        let own = match self.station {
            Some(station) => {
                let lo = (end + 1).saturating_sub(RECENT_DAYS);
                let latest = (lo..=end).rev().find_map(|i| station.get(self.market.date(i)))?;
                Some((latest, Response::read(self.market, station, end)))
            }
            None => None,
        };
        // The market's hike the day before the basis, for a station that follows a day late.
        let last_hike =
            end.checked_sub(1).and_then(|i| self.market.at(i)).map_or(0.0, |m| split(market_now - m).0);
        // The subject's price after `step + 1` days on a path whose market moves are `deltas`
        // (its hikes and other moves summed apart in `parts`, for a station's response).
        let price = |deltas: &[f64], parts: &(Vec<f64>, Vec<f64>), step: usize| match own {
            None => market_now + deltas[step],
            Some((latest, r)) => latest + r.moved(&parts.0, &parts.1, step, last_hike),
        };
        let now = match self.station {
            Some(s) => s.get(basis).or(own.map(|(latest, _)| latest)).unwrap_or(market_now),
            None => market_now,
        };
        // Without a cycle the forecast is flat, unless the last week moved a hike's worth or
        // more (diesel unwinding a shock, or climbing into one): that drift is carried
        // forward, only partly ([`RUN_KEPT`]), since such runs end without warning.
        let drift = match end.checked_sub(7).and_then(|i| self.market.at(i)) {
            Some(week_ago) if pattern.is_none() && (market_now - week_ago).abs() >= HIKE_CENTS => {
                RUN_KEPT * (market_now - week_ago) / 7.0
            }
            _ => 0.0,
        };
        let all = paths(pattern.as_ref(), phase, steps, drift);
        let split_paths: Vec<(Vec<f64>, Vec<f64>)> = match own {
            Some(_) => all.iter().map(|p| hikes_and_drifts(&p.deltas)).collect(),
            None => vec![(Vec::new(), Vec::new()); all.len()],
        };
        let mut out = Vec::with_capacity(steps);
        for step in 0..steps {
            let values: Vec<(f64, f64)> = all
                .iter()
                .zip(&split_paths)
                .map(|(p, parts)| (price(&p.deltas, parts, step), p.probability))
                .collect();
            let hike: f64 = match (own, pattern.as_ref()) {
                // The market hikes on an event day as often as its recent events were hikes.
                (None, Some(pattern)) => {
                    let event: f64 =
                        all.iter().filter(|p| p.events & event_bit(step) != 0).map(|p| p.probability).sum();
                    event * pattern.hike_share
                }
                _ => all
                    .iter()
                    .zip(&split_paths)
                    .zip(&values)
                    .filter(|((p, parts), (v, _))| {
                        let before = if step == 0 { now } else { price(&p.deltas, parts, step - 1) };
                        v - before >= HIKE_CENTS
                    })
                    .map(|((p, _), _)| p.probability)
                    .sum(),
            };
            out.push((weighted_median(values), hike.clamp(0.0, 1.0)));
        }
        let next_hike = pattern.as_ref().zip(phase).and_then(|(p, phase)| {
            let mut none_yet = 1.0;
            (1..=NEXT_HIKE_SEARCH).find_map(|k| {
                none_yet *= 1.0 - p.hazard(phase + k);
                (1.0 - none_yet >= LIKELY).then(|| basis.checked_add(days(k as i64)).ok()).flatten()
            })
        });
        Some(Outlook {
            basis,
            now,
            days: out,
            days_since_hike: phase,
            // A station that does not answer the market is forecast flat, whatever the cycle.
            flat: pattern.is_none() || own.is_some_and(|(_, r)| r == Response::default()),
            next_hike,
            period_days: pattern.as_ref().map(Pattern::period),
            // Only a market with a cycle: without one (diesel) the last week's own move is
            // already carried ([`RUN_KEPT`]), and the TGP on top made diesel worse. Nor a
            // station that does not answer the market: it holds its price, whatever the TGP
            // (with the level, 9 of Perth's 449 stations forecast worse than 1.2× their price
            // the day before at day+1, up to 1.44×; without it none).
            level: match (self.wholesale, &pattern) {
                (Some(_), Some(_)) if own.is_some_and(|(_, r)| r == Response::default()) => Vec::new(),
                (Some(tgp), Some(_)) => {
                    week_change(tgp, basis).map_or_else(Vec::new, |c| level_path(c, steps))
                }
                _ => Vec::new(),
            },
            profile: {
                let period = pattern.as_ref().map_or(WEEK, Pattern::period);
                match self.station {
                    Some(station) => match station.index(basis) {
                        Some(i) => cycle_profile(station, i, now, steps, period),
                        None => vec![now; steps],
                    },
                    None => cycle_profile(self.market, end, now, steps, period),
                }
            },
        })
    }
}

/// The period of the series' recent weeks as `/v1/stats` finds it (the autocorrelation of the
/// detrended medians), or `None`.
pub fn detected_period(series: &Daily, basis: Date) -> Option<usize> {
    let end = series.index(basis)?;
    let lo = (end + 1).saturating_sub(RECENT_DAYS);
    let points: Vec<(Date, f64)> = (lo..=end).filter_map(|i| Some((series.date(i), series.at(i)?))).collect();
    crate::stats::detect_cycle(&points).map(|c| c.period_days)
}
