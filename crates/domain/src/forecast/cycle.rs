//! Events and the cycle: what the recent weeks say about hikes (their intervals, rise and
//! shape), and every way the coming hikes could fall, with its probability.

use super::*;

/// Intervals between hikes the hazard is built from, newest first. Why 4 (weighed 4, 3, 2,
/// 1): the newest interval then holds 40 % of the weight, so a new hike weekday or period
/// shows within about two cycles, while one odd interval cannot carry the distribution alone.
pub(super) const INTERVALS_KEPT: usize = 4;
/// Complete cycles the shape and a station's position are read from. Why 3: one cycle's
/// shape is one week's noise; more than three reach back past the window's newest regime.
pub(super) const SHAPE_CYCLES: usize = 3;
/// Episodes whose first-day rise gives the typical rise and the share of them that are hikes.
/// Why 8: two months of weekly cycles (four of fortnightly ones), enough that one short or
/// doubled hike moves the mean by an eighth.
pub(super) const RISES_KEPT: usize = 8;
/// A cycle's event is a rise of at least this share of its typical hike (and at most a hike).
/// Why a half: a week whose rise fell short of a hike (a 4 c/L Wednesday among 6–10 c/L ones,
/// as Perth's Metro median had in June 2026) still restarts the cycle on time, while the
/// daily noise of a slide (well under half a hike) never does.
pub(super) const EVENT_SHARE: f64 = 0.5;
/// Least share of a cycle's recent events that are hikes. Why 60 %: a price climbing in small
/// steps with the odd larger one (FuelWatch's diesel in July 2026) has events that are mostly
/// not hikes and is no cycle; a real cycle's events are nearly all hikes, with room for one
/// short week in the last few.
pub(super) const MIN_HIKE_SHARE: f64 = 0.6;
/// The least rise (c/L) that marks where a skipped cycle's hike was due. Why 1: ten of the
/// feed's tenth-of-a-cent steps, more than a sliding day ever rises, so only a weak hike
/// (not noise) makes a long interval count as two cycles.
pub(super) const MISSED_RISE: f64 = 1.0;
/// Share of an interval's weight given to the day either side (hikes move by a day). Why
/// 0.1: a hike a day early or late is common (a public holiday, a retailer moving first) but
/// far rarer than on time, so the neighbours get a tenth each and the day itself 0.8.
pub(super) const NEIGHBOUR_WEIGHT: f64 = 0.1;
/// The chance of an event on each day once every interval seen has passed, for a pattern
/// without a most likely period. Why a half: past every interval seen the cycle is taken to
/// have restarted unseen, and with no period to prefer, an even chance a day neither asserts
/// nor rules out the overdue hike.
pub(super) const OVERDUE_HAZARD: f64 = 0.5;
/// Paths less likely than this are dropped. Why 10⁻⁶: at most 2⁷ paths are walked, so what
/// is dropped sums to under 10⁻⁴, far below the tenth of a cent a median is written to.
pub(super) const MIN_PATH_PROBABILITY: f64 = 1e-6;

/// What the recent weeks of a series say about its cycle.
#[derive(Debug, Clone)]
pub(super) struct Pattern {
    /// Episode starts in the window (indices), ascending.
    pub(super) starts: Vec<usize>,
    /// Weight of each interval length (index: days between episode starts).
    pub(super) intervals: Vec<f64>,
    /// Typical change on an episode's first day.
    pub(super) rise: f64,
    /// Share of the recent episodes whose first day was a hike (≥ [`HIKE_CENTS`]).
    pub(super) hike_share: f64,
    /// Typical change by days since the episode's start (index 0 unused).
    pub(super) shape: Vec<f64>,
}

impl Pattern {
    /// The cycle of the series up to index `end` (inclusive), or `None` without one.
    pub(super) fn read(series: &Daily, end: usize) -> Option<Self> {
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
    pub(super) fn hazard(&self, phase: usize) -> f64 {
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

    pub(super) fn shape(&self, phase: usize) -> f64 {
        self.shape.get(phase).copied().unwrap_or(0.0)
    }

    /// The most likely interval between hikes.
    pub(super) fn period(&self) -> usize {
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
pub(super) fn interval_weights(series: &Daily, starts: &[usize]) -> Option<Vec<f64>> {
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
pub(super) fn phases(starts: &[usize], from: usize, end: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    (from..=end).filter_map(move |i| {
        let k = starts.partition_point(|&s| s <= i);
        let start = *starts.get(k.checked_sub(1)?)?;
        Some((i, i - start))
    })
}

/// One way the next days could go: its probability, and per day the price change from the
/// basis.
#[derive(Debug, Clone)]
pub(super) struct Path {
    pub(super) probability: f64,
    pub(super) deltas: Vec<f64>,
    /// Bit `k` set when the cycle's event falls on day `k + 1` ([`event_bit`]).
    pub(super) events: u32,
}

/// The bit of day `step + 1` in [`Path::events`]; none past the 32nd day (a forecast looks
/// at most eight ahead, and a longer path keeps every price, only not its events).
pub(super) fn event_bit(step: usize) -> u32 {
    u32::try_from(step).ok().and_then(|s| 1u32.checked_shl(s)).unwrap_or(0)
}

/// Every way the next `steps` days could go from a basis `phase` days after the last hike;
/// without a cycle, one path moving `drift` c/L a day.
pub(super) fn paths(pattern: Option<&Pattern>, phase: Option<usize>, steps: usize, drift: f64) -> Vec<Path> {
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
pub(super) fn hikes_and_drifts(deltas: &[f64]) -> (Vec<f64>, Vec<f64>) {
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
pub(super) fn weighted_median(mut values: Vec<(f64, f64)>) -> f64 {
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
