//! "Fill now or wait": the next days of a daily price series (the market's median, or one
//! station's price), the advice that follows, and the method's accuracy replayed on its own
//! past (docs/forecast.md). Pure: daily series in, numbers out; nothing about Perth's cycle
//! is assumed.
//!
//! The method, in short: a *hike* is a day whose price rises at least [`HIKE_CENTS`] over the
//! day before; the cycle's *events* are rises of at least half its typical hike, and a run of
//! event days is one *episode*. From the last [`RECENT_DAYS`] days it reads the intervals
//! between episodes (the newest weighing most, so a new period or weekday
//! shows within about two cycles), the typical rise, and the typical change on each day after
//! a hike (the cycle's shape). The next days are then every way the coming hikes could fall
//! (a hazard per day since the last hike, from those intervals), each with its probability;
//! a day's forecast is the median over them. A series with fewer than [`MIN_EPISODES`]
//! episodes in the window has no cycle: its forecast is flat.
//!
//! Beside that cycle model, the *cycle profile*: the last five cycles' average change from
//! the same day on. Each horizon day's forecast mixes the two in the share whose replayed
//! errors were least (the replay keeps each forecast until its day is known, so every
//! replayed day chooses from errors known by then).

use jiff::Span;
use jiff::civil::Date;

use super::stats::MAX_PERIOD;

/// A rise of at least this much over the day before is a hike (c/L). Why 5: it is the API
/// contract's definition of a hike (the hike probability and the backtest count these), and
/// it sits between Perth's daily slides (tenths of a cent to a cent or two) and its hikes
/// (6–10 c/L most weeks of 2026, 15 c/L in July), so neither is read as the other.
pub const HIKE_CENTS: f64 = 5.0;
/// Days with prices an `asOf` needs among the [`RECENT_DAYS`] before it. Why 56: eight
/// weeks hold at least three fortnightly cycles' worth of hikes ([`MIN_EPISODES`]), the
/// fewest the interval distribution is read from; fewer days answer 404, not a guess.
pub const MIN_HISTORY_DAYS: usize = 56;
/// Days read for the cycle. Why 91 (13 weeks): enough for six fortnightly or thirteen weekly
/// cycles, and short enough that a changed hike weekday or period (the cycle changed many
/// times since 2001) outweighs the old one within about two cycles (docs/forecast.md, step 2).
pub const RECENT_DAYS: usize = 91;
/// Episodes of the window a cycle needs. Why 3: two hikes give one interval, which cannot
/// tell a cycle from chance; three give two intervals that must agree.
const MIN_EPISODES: usize = 3;
/// Share of the recent cycles' net drift carried into the forecast. Why a half: a trend read
/// off a few weeks turns (a shock's climb, then its unwinding) about as often as it holds, so
/// carrying all of it or none of it each loses on half the windows (docs/forecast.md, step 3).
const TREND_KEPT: f64 = 0.5;
/// A hike probability at or above this is an expected hike. Why a half: above it a hike is
/// more likely than not, the point where filling before it pays on average.
pub const LIKELY: f64 = 0.5;
/// How much each older replayed error weighs against the one after it, in the blend. Why
/// 0.95: a half-life of about two weeks (0.95¹⁴ ≈ 0.49), so the blend follows a cycle that
/// changed within a few cycles yet is chosen from more than a handful of errors.
const BLEND_DECAY: f64 = 0.95;

fn days(n: i64) -> Span {
    Span::new().days(n)
}

// Adding 0.0 turns a -0.0 (an empty float sum, or a tiny negative rounded) into 0.0.
fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0 + 0.0
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0 + 0.0
}

/// A hike probability as answered: two decimals, never rounded across [`LIKELY`] (0.4996
/// is 0.49, not 0.5), so the answer, its advice and the backtest call the same days likely.
fn round_probability(p: f64) -> f64 {
    let rounded = round2(p);
    if p < LIKELY && rounded >= LIKELY { LIKELY - 0.01 } else { rounded }
}

// The parts, each with the constants only it reads (the shared ones are above): `series`
// (the daily series), `cycle` (events, intervals, the rise and shape, the paths of the coming
// hikes), `response` (how a station follows the market), `level` (the wholesale price's
// path), `blend` (the cycle model, the profile and their blend, with the level added: a
// subject's outlook), `advice` and `replay` (the accuracy).
mod advice;
mod blend;
mod cycle;
mod level;
mod record;
mod replay;
mod response;
mod series;
pub use {advice::*, blend::*, record::*, replay::*, series::*};
use {cycle::*, level::*, response::*};

/// A complete forecast.
#[derive(Debug, Clone, PartialEq)]
pub struct Forecast {
    pub as_of: Date,
    pub basis: Date,
    pub days: Vec<ForecastDay>,
    pub advice: Advice,
    pub period_days: Option<usize>,
    pub days_since_hike: Option<usize>,
    pub next_hike: Option<Date>,
    /// Whether the terminal gate price was read (the answer's `inputs`).
    pub wholesale: bool,
}

/// Why there is no forecast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoForecast {
    /// Fewer than [`MIN_HISTORY_DAYS`] days with prices before `asOf`.
    TooLittleHistory,
    /// The station has no price in the recent weeks.
    NoRecentPrice,
}

/// The forecast at `as_of` for `horizon` days, from prices of days up to `as_of` and, when
/// given, the published price of the day after it (`known`). The intervals come from the
/// replayed errors of `accuracy`.
pub fn forecast(
    subject: Subject<'_>,
    as_of: Date,
    horizon: usize,
    known_tomorrow: bool,
    accuracy: &Accuracy,
) -> Result<Forecast, NoForecast> {
    if subject.market.days_before(as_of) < MIN_HISTORY_DAYS {
        return Err(NoForecast::TooLittleHistory);
    }
    let tomorrow = as_of.tomorrow().unwrap_or(as_of);
    // Tomorrow is known when it is published, for the market and (on the station route) for
    // the station; it is then the newest day the forecast reads.
    let known = known_tomorrow.then(|| subject.actual(tomorrow).zip(subject.market.get(tomorrow))).flatten();
    let basis = match known {
        Some(_) => tomorrow,
        None => subject.market.last_on_or_before(as_of).ok_or(NoForecast::TooLittleHistory)?,
    };
    // Days from the basis to `asOf`: -1 when tomorrow is the basis.
    let gap = (as_of - basis).get_days() as i64;
    let ahead = usize::try_from(gap + horizon as i64).unwrap_or(0);
    let outlook = subject.outlook(basis, ahead).ok_or(NoForecast::NoRecentPrice)?;
    let today = subject.actual(as_of).unwrap_or(outlook.now);
    let mut out = Vec::with_capacity(horizon);
    if let Some((price, _)) = known {
        out.push(ForecastDay {
            date: tomorrow,
            median: round1(price),
            low: round1(price),
            high: round1(price),
            known: true,
            hike_probability: if price - today >= HIKE_CENTS { 1.0 } else { 0.0 },
        });
    }
    for h in (out.len() + 1)..=horizon {
        let step = usize::try_from(gap + h as i64 - 1).ok();
        let Some(&(_, probability)) = step.and_then(|s| outlook.days.get(s)) else { break };
        let Some(median) = step.and_then(|s| outlook.median(s, &accuracy.blend)) else { break };
        let date = as_of.checked_add(days(h as i64)).unwrap_or(as_of);
        let (lo, hi) = accuracy.bands.get(h - 1).copied().flatten().unwrap_or_else(|| {
            // No replayed error yet: a hike's size a day, wide and honest.
            let spread = HIKE_CENTS * h as f64;
            (-spread, spread)
        });
        out.push(ForecastDay {
            date,
            median: round1(median),
            low: round1(median + lo.min(0.0)),
            high: round1(median + hi.max(0.0)),
            known: false,
            hike_probability: round_probability(probability * accuracy.hike_scale),
        });
    }
    let advice = advise(round1(today), &out, accuracy.waiting_pays);
    // Days since the last hike, counted at `asOf` (a hike on the known tomorrow is not yet).
    let days_since_hike = outlook.days_since_hike.and_then(|d| usize::try_from(d as i64 + gap).ok());
    Ok(Forecast {
        as_of,
        basis,
        days: out,
        advice,
        period_days: detected_period(subject.market, basis),
        days_since_hike,
        next_hike: outlook.next_hike.filter(|d| *d > as_of),
        wholesale: outlook.read_wholesale(),
    })
}

#[cfg(test)]
mod calibrated;
#[cfg(test)]
mod tests;
