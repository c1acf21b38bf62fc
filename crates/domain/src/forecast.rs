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

/// A rise of at least this much over the day before is a hike (c/L).
pub const HIKE_CENTS: f64 = 5.0;
/// Days with prices an `asOf` needs among the [`RECENT_DAYS`] before it.
pub const MIN_HISTORY_DAYS: usize = 56;
/// The longest horizon, in days after `asOf`.
pub const MAX_HORIZON: usize = 7;
/// Days before `asOf` whose forecasts are replayed for its accuracy.
pub const REPLAY_DAYS: i64 = 365;
/// Days read for the cycle: recent weeks, not a year (the cycle changes).
pub const RECENT_DAYS: usize = 91;
/// Intervals between hikes the hazard is built from, newest first.
const INTERVALS_KEPT: usize = 4;
/// Episodes of the window a cycle needs.
const MIN_EPISODES: usize = 3;
/// Complete cycles the shape and a station's position are read from.
const SHAPE_CYCLES: usize = 3;
/// Episodes whose first-day rise gives the typical rise and the share of them that are hikes.
const RISES_KEPT: usize = 8;
/// A cycle's event is a rise of at least this share of its typical hike (and at most a hike).
const EVENT_SHARE: f64 = 0.5;
/// Least share of a cycle's recent events that are hikes.
const MIN_HIKE_SHARE: f64 = 0.6;
/// The least rise (c/L) that marks where a skipped cycle's hike was due.
const MISSED_RISE: f64 = 1.0;
/// Share of the recent cycles' net drift carried into the forecast.
const TREND_KEPT: f64 = 0.5;
/// Share of the last week's move carried into the forecast of a series without a cycle, once
/// that move is a hike's worth or more. More than of a cycle's drift: the move is the level's
/// own, with no hike's size in it (a cycle's net drift is a hike against the falls after it,
/// as uneven as the hikes). On FuelWatch's diesel of April–August 2026, half left its climbing
/// weeks at up to 1.41× the weekly-seasonal naive at day+7 (docs/forecast.md); all of it
/// overshoots where a climb turns.
const RUN_KEPT: f64 = 0.75;
/// Share of an interval's weight given to the day either side (hikes move by a day).
const NEIGHBOUR_WEIGHT: f64 = 0.1;
/// The chance of an event on each day once every interval seen has passed, for a pattern
/// without a most likely period.
const OVERDUE_HAZARD: f64 = 0.5;
/// Paths less likely than this are dropped.
const MIN_PATH_PROBABILITY: f64 = 1e-6;
/// How far ahead `nextHike` is looked for (days after the basis).
const NEXT_HIKE_SEARCH: usize = 28;
/// The least predicted fall (c/L) worth waiting for.
pub const WAIT_MIN_SAVING: f64 = 1.0;
/// A hike probability at or above this is an expected hike.
pub const LIKELY: f64 = 0.5;
/// An error within this (c/L) counts as close, for the accuracy said in words.
pub const CLOSE_CENTS: f64 = 2.0;
/// Cycles the cycle profile is averaged over.
const PROFILE_CYCLES: usize = 5;
/// The profile's period for a series without a cycle: retail prices' week.
const WEEK: usize = 7;
/// How much each older replayed error weighs against the one after it, in the blend.
const BLEND_DECAY: f64 = 0.95;
/// Replayed errors a horizon day needs before they choose the blend.
const BLEND_MIN_ERRORS: usize = 14;
/// Days before the first replayed origin whose forecasts are scored for the blend only (so
/// the blend has its evidence from the first reported day on), not for the accuracy.
const BLEND_LEAD_DAYS: i64 = 91;
/// The cycle model's share of a forecast before the replay has chosen one.
const UNPROVEN_SHARE: f64 = 0.5;

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

/// A daily series on consecutive dates (cents); `None` where a day has no price.
#[derive(Debug, Clone, PartialEq)]
pub struct Daily {
    start: Date,
    values: Vec<Option<f64>>,
}

impl Daily {
    /// The series of (date, cents) points, ascending (a later duplicate date wins).
    pub fn new(points: impl IntoIterator<Item = (Date, f64)>) -> Self {
        let mut out = Daily { start: Date::MIN, values: Vec::new() };
        for (date, value) in points {
            if out.values.is_empty() {
                out.start = date;
            }
            let Some(i) = out.index(date) else { continue };
            if i >= out.values.len() {
                out.values.resize(i + 1, None);
            }
            out.values[i] = Some(value);
        }
        out
    }

    /// Position of `date` (it may lie past the end); `None` before the start.
    pub fn index(&self, date: Date) -> Option<usize> {
        let n = (date - self.start).get_days();
        usize::try_from(n).ok()
    }

    pub fn date(&self, i: usize) -> Date {
        self.start.checked_add(days(i as i64)).unwrap_or(Date::MAX)
    }

    pub fn at(&self, i: usize) -> Option<f64> {
        self.values.get(i).copied().flatten()
    }

    pub fn get(&self, date: Date) -> Option<f64> {
        self.at(self.index(date)?)
    }

    pub fn is_empty(&self) -> bool {
        self.values.iter().all(Option::is_none)
    }

    /// The newest day with a price at or before `date`.
    pub fn last_on_or_before(&self, date: Date) -> Option<Date> {
        let i = self.index(date)?.min(self.values.len().checked_sub(1)?);
        (0..=i).rev().find(|&j| self.values[j].is_some()).map(|j| self.date(j))
    }

    /// Days with a price among the [`RECENT_DAYS`] before `date` (the weeks a forecast reads:
    /// older prices say nothing of today's cycle).
    pub fn days_before(&self, date: Date) -> usize {
        let end = self.index(date).unwrap_or(0).min(self.values.len());
        let start = self.index(date).unwrap_or(0).saturating_sub(RECENT_DAYS).min(end);
        self.values[start..end].iter().filter(|v| v.is_some()).count()
    }

    /// The change from the day before, when both days have prices.
    fn change(&self, i: usize) -> Option<f64> {
        Some(self.at(i)? - self.at(i.checked_sub(1)?)?)
    }
}

/// What the recent weeks of a series say about its cycle.
#[derive(Debug, Clone)]
struct Pattern {
    /// Episode starts in the window (indices), ascending.
    starts: Vec<usize>,
    /// Weight of each interval length (index: days between episode starts).
    intervals: Vec<f64>,
    /// Typical change on an episode's first day.
    rise: f64,
    /// Share of the recent episodes whose first day was a hike (≥ [`HIKE_CENTS`]).
    hike_share: f64,
    /// Typical change by days since the episode's start (index 0 unused).
    shape: Vec<f64>,
}

impl Pattern {
    /// The cycle of the series up to index `end` (inclusive), or `None` without one.
    fn read(series: &Daily, end: usize) -> Option<Self> {
        let lo = (end + 1).saturating_sub(RECENT_DAYS).max(1);
        // A cycle's rise can fall short of a hike (a 4 c/L week among 6–10 c/L ones): the
        // cycle's own events are rises of at least half its typical hike, so a small week still
        // restarts the cycle instead of reading as a skipped one.
        let mut hikes: Vec<f64> =
            (lo..=end).filter_map(|i| series.change(i)).filter(|c| *c >= HIKE_CENTS).collect();
        if hikes.len() < MIN_EPISODES {
            return None;
        }
        hikes.sort_by(f64::total_cmp);
        let threshold = (EVENT_SHARE * hikes[hikes.len() / 2]).min(HIKE_CENTS);
        let event = |i: usize| series.change(i).is_some_and(|c| c >= threshold);
        let starts: Vec<usize> = (lo..=end).filter(|&i| event(i) && !event(i - 1)).collect();
        if starts.len() < MIN_EPISODES {
            return None;
        }
        let intervals = interval_weights(series, &starts)?;
        let rises: Vec<f64> =
            starts.iter().rev().take(RISES_KEPT).filter_map(|&i| series.change(i)).collect();
        let rise = rises.iter().sum::<f64>() / rises.len().max(1) as f64;
        let hike_share =
            rises.iter().filter(|r| **r >= HIKE_CENTS).count() as f64 / rises.len().max(1) as f64;
        // A cycle's events are mostly hikes. A series climbing in small steps with the odd
        // larger one (FuelWatch's diesel in July 2026) has rises, not a cycle.
        if hike_share < MIN_HIKE_SHARE {
            return None;
        }
        // The shape from the last few cycles (it changes with the period), falling back to the
        // whole window for a day after the hike that those cycles never reached.
        let since = starts[starts.len().saturating_sub(SHAPE_CYCLES + 1)];
        let mut shape: Vec<f64> = (0..=intervals.len())
            .map(|phase| {
                if phase == 0 {
                    return 0.0;
                }
                let mean_from = |from: usize| {
                    let changes: Vec<f64> = phases(&starts, from, end)
                        .filter(|&(i, p)| p == phase && !starts.contains(&i))
                        .filter_map(|(i, _)| series.change(i))
                        .collect();
                    (!changes.is_empty()).then(|| changes.iter().sum::<f64>() / changes.len() as f64)
                };
                mean_from(since).or_else(|| mean_from(starts[0])).unwrap_or(0.0)
            })
            .collect();
        let mut pattern = Pattern { starts, intervals, rise, hike_share, shape: Vec::new() };
        // The cycles' net drift (a cycle's rise against its falls) is the market's trend of
        // those weeks; only part of it is carried forward, since a trend read off a few weeks
        // turns (a shock's climb, then its unwinding) as often as it holds.
        let period = pattern.period();
        if period >= 2 {
            let net = pattern.rise + shape[1..period.min(shape.len())].iter().sum::<f64>();
            let correction = -(1.0 - TREND_KEPT) * net / (period - 1) as f64;
            shape.iter_mut().skip(1).for_each(|c| *c += correction);
        }
        pattern.shape = shape;
        Some(pattern)
    }

    /// The chance of a hike on the day that is `phase` days after the last one, given none
    /// came before it.
    fn hazard(&self, phase: usize) -> f64 {
        let tail: f64 = self.intervals.iter().skip(phase).sum();
        if tail < 1e-9 {
            // Longer than any interval seen: a rise too small to see (or a day without prices)
            // most likely restarted the cycle on time, so the usual timing holds from there.
            // Phases count 1 ..= period within each unseen cycle: a whole number of periods
            // since the last hike seen is a hike's day (`period`), not the day of one (0).
            let period = self.period();
            return match phase.checked_sub(1) {
                Some(before) if period > 0 => self.hazard(before % period + 1),
                _ => OVERDUE_HAZARD,
            };
        }
        self.intervals.get(phase).copied().unwrap_or(0.0) / tail
    }

    fn shape(&self, phase: usize) -> f64 {
        self.shape.get(phase).copied().unwrap_or(0.0)
    }

    /// The most likely interval between hikes.
    fn period(&self) -> usize {
        let mut best = 0;
        for (length, w) in self.intervals.iter().enumerate() {
            if *w > self.intervals[best] {
                best = length;
            }
        }
        best
    }
}

/// The weight of each interval length between episode starts, the newest weighing most:
/// only intervals whose every day has a price (a gap in the data may hide an episode), and
/// an interval about a whole multiple of the shortest one seen, with a rise where each
/// skipped hike was due, counts as that many cycles (a week whose rise fell short of even an
/// event; a cycle that really lengthened shows no such rise). `None` without an interval.
fn interval_weights(series: &Daily, starts: &[usize]) -> Option<Vec<f64>> {
    let seen: Vec<(usize, usize)> = starts
        .windows(2)
        .filter(|pair| (pair[0]..=pair[1]).all(|i| series.at(i).is_some()))
        .map(|pair| (pair[0], pair[1] - pair[0]))
        .collect();
    let recent = &seen[seen.len().saturating_sub(INTERVALS_KEPT)..];
    let shortest = recent.iter().map(|&(_, length)| length).min()?;
    // A skipped cycle still shows a rise where its hike was due (a day either side).
    let rose_near =
        |i: usize| (i.saturating_sub(1)..=i + 1).any(|j| series.change(j).is_some_and(|c| c >= MISSED_RISE));
    let mut lengths = Vec::with_capacity(recent.len() * 2);
    for &(from, length) in recent {
        let cycles = ((length as f64 / shortest as f64).round() as usize).max(1);
        if cycles >= 2
            && length.abs_diff(cycles * shortest) <= 1
            && (1..cycles).all(|k| rose_near(from + k * length / cycles))
        {
            let each = (length as f64 / cycles as f64).round() as usize;
            lengths.extend(std::iter::repeat_n(each, cycles));
        } else {
            lengths.push(length);
        }
    }
    let mut weights = vec![0.0; MAX_PERIOD * 3 + 2];
    for (k, &length) in lengths.iter().rev().take(INTERVALS_KEPT).enumerate() {
        let weight = (INTERVALS_KEPT - k) as f64;
        let length = length.clamp(1, weights.len() - 2);
        weights[length] += weight;
        weights[length - 1] += weight * NEIGHBOUR_WEIGHT;
        weights[length + 1] += weight * NEIGHBOUR_WEIGHT;
    }
    Some(weights)
}

/// Each index from `from` to `end` with its days since the latest episode start at or before
/// it (indices before the first start are skipped).
fn phases(starts: &[usize], from: usize, end: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    (from..=end).filter_map(move |i| {
        let k = starts.partition_point(|&s| s <= i);
        let start = *starts.get(k.checked_sub(1)?)?;
        Some((i, i - start))
    })
}

/// One way the next days could go: its probability, and per day the price change from the
/// basis.
#[derive(Debug, Clone)]
struct Path {
    probability: f64,
    deltas: Vec<f64>,
    /// Bit `k` set when the cycle's event falls on day `k + 1` ([`event_bit`]).
    events: u32,
}

/// The bit of day `step + 1` in [`Path::events`]; none past the 32nd day (a forecast looks
/// at most eight ahead, and a longer path keeps every price, only not its events).
fn event_bit(step: usize) -> u32 {
    u32::try_from(step).ok().and_then(|s| 1u32.checked_shl(s)).unwrap_or(0)
}

/// Every way the next `steps` days could go from a basis `phase` days after the last hike;
/// without a cycle, one path moving `drift` c/L a day.
fn paths(pattern: Option<&Pattern>, phase: Option<usize>, steps: usize, drift: f64) -> Vec<Path> {
    let (Some(pattern), Some(phase)) = (pattern, phase) else {
        let deltas = (1..=steps).map(|k| drift * k as f64).collect();
        return vec![Path { probability: 1.0, deltas, events: 0 }];
    };
    // (probability, price change so far, phase, changes so far, events)
    let mut live = vec![(1.0f64, 0.0f64, phase, Vec::<f64>::new(), 0u32)];
    for step in 0..steps {
        let mut next = Vec::with_capacity(live.len() * 2);
        for (p, delta, phase, trail, events) in live {
            let hazard = pattern.hazard(phase + 1);
            for (q, change, new_phase, event) in [
                (hazard, pattern.rise, 0, event_bit(step)),
                (1.0 - hazard, pattern.shape(phase + 1), phase + 1, 0),
            ] {
                let prob = p * q;
                if prob < MIN_PATH_PROBABILITY {
                    continue;
                }
                let mut trail = trail.clone();
                trail.push(delta + change);
                next.push((prob, delta + change, new_phase, trail, events | event));
            }
        }
        live = next;
    }
    live.into_iter().map(|(probability, _, _, deltas, events)| Path { probability, deltas, events }).collect()
}

/// A path's cumulative changes split into its hikes' running sum and its other moves' ([`split`]).
fn hikes_and_drifts(deltas: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let (mut hikes, mut drifts) = (Vec::with_capacity(deltas.len()), Vec::with_capacity(deltas.len()));
    let (mut hike_sum, mut drift_sum, mut before) = (0.0, 0.0, 0.0);
    for &delta in deltas {
        let (hike, drift) = split(delta - before);
        (hike_sum, drift_sum, before) = (hike_sum + hike, drift_sum + drift, delta);
        hikes.push(hike_sum);
        drifts.push(drift_sum);
    }
    (hikes, drifts)
}

/// The value at which the cumulative probability first reaches one half.
fn weighted_median(mut values: Vec<(f64, f64)>) -> f64 {
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = values.iter().map(|v| v.1).sum();
    let mut seen = 0.0;
    for (value, weight) in &values {
        seen += weight;
        if seen >= total / 2.0 - 1e-12 {
            return *value;
        }
    }
    values.last().map_or(0.0, |v| v.0)
}

/// How a station's own price answers the market's moves, read from its recent weeks: its
/// daily change against the market's hikes (rises of [`HIKE_CENTS`] or more) the same day
/// (`hike`) and the day before (`hike_next_day`, a station that follows a hike a day late),
/// and against the market's other moves the same day (`drift`), without an intercept, each
/// kept within 0..=1.5. Hikes and the days between are read apart because Perth's stations
/// answer them apart: many follow every hike and then hold their price in steps while the
/// market slides, so one response to both would move them a little every day. A station that
/// does not follow the cycle (a country or independent site, a flat pricer) reads about 0:
/// its forecast stays at its own price.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Response {
    hike: f64,
    hike_next_day: f64,
    drift: f64,
}

/// Pairs of days a station's response needs; fewer read as no response (flat).
const MIN_RESPONSE_DAYS: usize = 14;
/// Largest response to one day's market move.
const MAX_RESPONSE: f64 = 1.5;
/// Least share of a station's squared daily moves its response must explain to be used.
const MIN_EXPLAINED: f64 = 0.4;
/// One in this many of the newest days checks a response fitted on the days before them.
const HOLDOUT_SHARE: usize = 3;
/// Rounds of the reweighted fit ([`least_absolute`]); real stations settle within a few
/// dozen.
const FIT_ROUNDS: usize = 50;
/// A day missed by less than this (c/L) weighs in the fit as if missed by this much:
/// FuelWatch's prices step by a tenth of a cent, so a smaller miss is an exact fit.
const FIT_FLOOR: f64 = 0.1;

/// A market's change split into its hike part and its other part: (hike, drift).
fn split(change: f64) -> (f64, f64) {
    if change >= HIKE_CENTS { (change, 0.0) } else { (0.0, change) }
}

/// One day of a station against the market: the station's change, and the market's hike the
/// same day, its hike the day before, and its other move the same day.
type Move = (f64, [f64; 3]);

impl Response {
    fn read(market: &Daily, station: &Daily, end: usize) -> Self {
        let lo = (end + 1).saturating_sub(RECENT_DAYS).max(2);
        let station_change = |i: usize| Some(station.get(market.date(i))? - station.get(market.date(i - 1))?);
        let moves: Vec<Move> = (lo..=end)
            .filter_map(|i| {
                let (hike, drift) = split(market.change(i)?);
                let (hike_before, _) = split(market.change(i - 1)?);
                Some((station_change(i)?, [hike, hike_before, drift]))
            })
            .collect();
        let flat = Response::default();
        if moves.len() < MIN_RESPONSE_DAYS {
            return flat;
        }
        let fit = least_absolute(&moves);
        let missed = |m: &Move| m.0 - dot(&fit, &m.1);
        // How much of the station's own moves the market's explain: little means a station
        // that moves on its own (or not at all), better forecast flat than by a noisy fit.
        let syy: f64 = moves.iter().map(|m| m.0 * m.0).sum();
        let unexplained: f64 = moves.iter().map(|m| missed(m).powi(2)).sum();
        if syy <= 0.0 || 1.0 - unexplained / syy < MIN_EXPLAINED {
            return flat;
        }
        // The fit always misses the weeks it was read from by less than standing still (that
        // is one of the answers it weighs), so it is checked on weeks it did not read: fitted
        // on the older days, it must miss the newest ones by less than standing still does.
        let (older, newest) = moves.split_at(moves.len() - moves.len() / HOLDOUT_SHARE);
        let earlier = least_absolute(older);
        let by_response: f64 = newest.iter().map(|m| (m.0 - dot(&earlier, &m.1)).abs()).sum();
        let by_standing: f64 = newest.iter().map(|m| m.0.abs()).sum();
        if by_response >= by_standing {
            return flat;
        }
        let [hike, hike_next_day, drift] = fit;
        Response { hike, hike_next_day, drift }
    }

    /// The station's change from its anchor after a market path whose cumulative hikes and
    /// other moves are `hikes` and `drifts` up to the day (index `step`); `last_hike` is the
    /// market's hike the day before the basis.
    fn moved(&self, hikes: &[f64], drifts: &[f64], step: usize, last_hike: f64) -> f64 {
        let hikes_before = if step == 0 { 0.0 } else { hikes[step - 1] };
        self.hike * hikes[step] + self.hike_next_day * (hikes_before + last_hike) + self.drift * drifts[step]
    }
}

fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// The response, each part within 0..=[`MAX_RESPONSE`], that misses the station's daily
/// moves by the least in absolute terms: least squares reweighted by each day's miss until it
/// settles, and standing still where that misses less. The forecast is judged by absolute
/// errors, so the fit is too: squares would trade a station's usual day (no move) for a small
/// move every day to halve a rare large miss.
fn least_absolute(moves: &[Move]) -> [f64; 3] {
    let missed = |fit: &[f64; 3]| moves.iter().map(|(y, x)| (y - dot(fit, x)).abs()).sum::<f64>();
    let mut fit = weighted_fit(moves, |_| 1.0);
    let mut best = ([0.0; 3], missed(&[0.0; 3]));
    for _ in 0..FIT_ROUNDS {
        let m = missed(&fit);
        if m < best.1 {
            best = (fit, m);
        }
        let before = fit;
        fit = weighted_fit(moves, |(y, x)| 1.0 / (y - dot(&before, x)).abs().max(FIT_FLOOR));
        if fit.iter().zip(&before).map(|(a, b)| (a - b).abs()).sum::<f64>() < 1e-4 {
            break;
        }
    }
    if missed(&fit) < best.1 {
        best = (fit, missed(&fit));
    }
    best.0
}

/// Weighted least squares of the station's change on the market's three parts, each kept
/// within 0..=[`MAX_RESPONSE`]. A part the weeks never show (no hike at all) reads 0: a
/// vanishing ridge keeps the equations solvable.
fn weighted_fit(moves: &[Move], weight: impl Fn(&Move) -> f64) -> [f64; 3] {
    // The normal equations, each row [xᵀWx | xᵀWy].
    let mut a = [[0.0f64; 4]; 3];
    for m in moves {
        let w = weight(m);
        let (y, x) = m;
        for (row, xr) in a.iter_mut().zip(x) {
            for (cell, xc) in row.iter_mut().zip(x.iter().chain([y])) {
                *cell += w * xr * xc;
            }
        }
    }
    let scale = (0..3).map(|i| a[i][i]).fold(0.0, f64::max);
    for (i, row) in a.iter_mut().enumerate() {
        row[i] += 1e-9 * scale + 1e-12;
    }
    // Gaussian elimination with partial pivoting.
    for col in 0..3 {
        let pivot = (col..3).max_by(|&p, &q| a[p][col].abs().total_cmp(&a[q][col].abs())).unwrap_or(col);
        a.swap(col, pivot);
        let pivot_row = a[col];
        for row in a.iter_mut().skip(col + 1) {
            let f = row[col] / pivot_row[col];
            for (cell, p) in row.iter_mut().zip(pivot_row).skip(col) {
                *cell -= f * p;
            }
        }
    }
    let mut x = [0.0; 3];
    for r in (0..3).rev() {
        let rest: f64 = (r + 1..3).map(|c| a[r][c] * x[c]).sum();
        x[r] = (a[r][3] - rest) / a[r][r];
    }
    x.map(|v| if v.is_finite() { v.clamp(0.0, MAX_RESPONSE) } else { 0.0 })
}

/// What is forecast: the market's series, and one station's when the forecast is its own.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    pub market: &'a Daily,
    pub station: Option<&'a Daily>,
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

    /// The days a replay forecasts from this outlook's basis, up to `last`: the medians as
    /// `blend` mixes them, without intervals (the replay is what makes them).
    fn replayed_days(&self, last: Date, blend: &[Option<f64>]) -> Vec<ForecastDay> {
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
    /// profile.
    fn parts(&self, step: usize) -> Option<(f64, f64)> {
        let (model, _) = *self.days.get(step)?;
        Some((model, self.profile.get(step).copied().unwrap_or(model)))
    }
}

/// The forecast that gives the cycle model a share `w` and the cycle profile the rest.
fn mix(w: f64, model: f64, profile: f64) -> f64 {
    w * model + (1.0 - w) * profile
}

/// The model's shares the blend chooses from: 0, 0.1, … 1.
const MIXES: usize = 11;

fn mix_share(i: usize) -> f64 {
    i as f64 / (MIXES - 1) as f64
}

/// The series' cycle profile from `anchor` (its price on the basis day, index `end`): per
/// day ahead, the mean change over the same days of its last [`PROFILE_CYCLES`] cycles of
/// `period` days, with those cycles' net drift taken out, then a share ([`TREND_KEPT`]) of
/// that drift put back. It is the "one cycle ago" naive made steadier: several cycles instead
/// of one, and a trend only partly carried (the level wanders with wholesale prices). Without
/// a cycle of prices to read, the anchor.
fn cycle_profile(series: &Daily, end: usize, anchor: f64, steps: usize, period: usize) -> Vec<f64> {
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
    fn hiked(&self, date: Date) -> bool {
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
    super::stats::detect_cycle(&points).map(|c| c.period_days)
}

/// What to do today.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    FillNow,
    Wait,
    Either,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::FillNow => "fill-now",
            Action::Wait => "wait",
            Action::Either => "either",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub action: Action,
    /// The day to wait for (`wait`), or the day of the expected rise (`fill-now`).
    pub until: Option<Date>,
    /// Today's price − the predicted price on `until` (c/L; negative when filling now saves).
    pub saving: Option<f64>,
    pub reason: String,
}

/// One forecast day.
#[derive(Debug, Clone, PartialEq)]
pub struct ForecastDay {
    pub date: Date,
    pub median: f64,
    pub low: f64,
    pub high: f64,
    pub known: bool,
    pub hike_probability: f64,
}

/// A sum of replayed values with each older one weighing [`BLEND_DECAY`] of the one after
/// it, once `value` is added.
fn decayed(sum: f64, value: f64) -> f64 {
    BLEND_DECAY * sum + value
}

/// The advice for a driver who could fill today at `today` (c/L), given the next days;
/// `waiting_pays` is false where waiting as advised has not saved on the replayed days
/// ([`Accuracy::waiting_pays`]): then no wait is advised.
pub fn advise(today: f64, days: &[ForecastDay], waiting_pays: bool) -> Advice {
    let rises = |i: usize, d: &ForecastDay| {
        if d.known {
            let before = if i == 0 { today } else { days[i - 1].median };
            d.median - before >= HIKE_CENTS
        } else {
            d.hike_probability >= LIKELY
        }
    };
    let first_rise = days.iter().enumerate().position(|(i, d)| rises(i, d));
    // The cheapest predicted day before the first expected rise, the earliest of equals.
    // Never the days after it: a fall below today's price after a hike is a trend carried
    // past the hike, and the hike is when trends turn (FuelWatch's July 2026: the first hike
    // after a falling month held, and waiting for the forecast fall cost 15 c/L).
    let before_rise = &days[..first_rise.unwrap_or(days.len())];
    let cheapest = before_rise.iter().fold(None::<&ForecastDay>, |best, d| match best {
        Some(b) if b.median <= d.median => Some(b),
        _ => Some(d),
    });
    let about = |x: f64| format!("{:.0}", x.abs().max(1.0));
    let fall = cheapest.filter(|b| today - b.median >= WAIT_MIN_SAVING);
    if let Some(best) = fall.filter(|_| waiting_pays) {
        let saving = round1(today - best.median);
        return Advice {
            action: Action::Wait,
            until: Some(best.date),
            saving: Some(saving),
            reason: format!(
                "Prices are expected to fall about {} c/L by {}.",
                about(saving),
                day_name(best.date)
            ),
        };
    }
    if let Some(rise) = first_rise.map(|i| &days[i]) {
        let saving = round1(today - rise.median);
        return Advice {
            action: Action::FillNow,
            until: Some(rise.date),
            saving: Some(saving),
            reason: format!(
                "Prices are likely to rise about {} c/L on {}.",
                about(saving),
                day_name(rise.date)
            ),
        };
    }
    let reason = match fall {
        Some(_) => {
            "A fall is forecast, but waiting for the forecast falls has not saved on recent days.".into()
        }
        None => format!(
            "No move of {WAIT_MIN_SAVING:.0} c/L or more is expected in the next {} days.",
            days.len()
        ),
    };
    Advice { action: Action::Either, until: None, saving: None, reason }
}

/// "Wednesday 2 December".
pub fn day_name(date: Date) -> String {
    let weekday = super::site_features::WEEKDAYS[date.weekday().to_monday_zero_offset() as usize];
    format!("{weekday} {}", date.strftime("%-d %B"))
}

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
    waits: Vec<(Date, f64)>,
    /// What those waits saved once their day came (today's price − the price on the day
    /// waited for), summed with the newest weighing most ([`decayed`]), and how many.
    wait_record: (f64, usize),
    /// Days the model gave a hike probability of [`LIKELY`] or more at horizons 1–3 whose
    /// day has not come: (that day, its raw probability, whether it hiked).
    alarms_pending: Vec<(Date, f64, bool)>,
    /// Those days once come: their hikes and their probabilities, each summed with the newest
    /// weighing most ([`decayed`]), and how many.
    alarm_record: (f64, f64, usize),
    /// Per horizon day, the replayed errors of each mix of the cycle model and the cycle
    /// profile ([`mix_share`]), summed with the newest weighing most ([`BLEND_DECAY`]), and
    /// how many days were scored.
    blend_errors: Vec<([f64; MIXES], usize)>,
    /// Forecasts whose day has not come by the origin replayed: (day, step, model, profile).
    pending: Vec<(Date, usize, (f64, f64))>,
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

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn share(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

fn quantile(sorted: &[f64], p: f64) -> f64 {
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
    fn score(&mut self, subject: Subject<'_>, known: Date) {
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
    fn blend(&self) -> Vec<Option<f64>> {
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
    fn record_wait(&mut self, today: f64, predicted: &[ForecastDay]) -> Advice {
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
    fn predicted(
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
    fn hike_scale(&self) -> f64 {
        let (hikes, probabilities, n) = self.alarm_record;
        if n < BLEND_MIN_ERRORS || probabilities <= 0.0 { 1.0 } else { (hikes / probabilities).min(1.0) }
    }

    /// Whether the waits the advice's rule gave have saved so far (see
    /// [`Accuracy::waiting_pays`]).
    fn waiting_pays(&self) -> bool {
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
    fn step(&mut self, subject: Subject<'_>, origin: Date, last: Date) -> Option<(f64, Outlook)> {
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
    fn add(&mut self, subject: Subject<'_>, origin: Date, last: Date) {
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
    })
}

#[cfg(test)]
mod calibrated;
#[cfg(test)]
mod tests;
