//! How one station's price follows the market's moves (the same day, a day late, or not at
//! all), fitted on its recent weeks.

use super::*;

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
pub(super) struct Response {
    pub(super) hike: f64,
    pub(super) hike_next_day: f64,
    pub(super) drift: f64,
}

/// Pairs of days a station's response needs; fewer read as no response (flat). Why 14: two
/// weeks hold at least one hike and its slide, the least that shows both answers.
pub(super) const MIN_RESPONSE_DAYS: usize = 14;
/// Largest response to one day's market move. Why 1.5: a station that leads the hikes moves
/// more than the median on the day, but a fitted 2× or more is a fit to a few odd days.
pub(super) const MAX_RESPONSE: f64 = 1.5;
/// Least share of a station's squared daily moves its response must explain to be used. Why
/// 0.4: under it the station mostly moves on its own days (a flat pricer's odd change), and
/// standing still forecasts it better than the market's path.
pub(super) const MIN_EXPLAINED: f64 = 0.4;
/// One in this many of the newest days checks a response fitted on the days before them. Why
/// a third: enough held-out days to catch a fit that beats standing still only on the days it
/// was read from, leaving two thirds of the days to fit on.
pub(super) const HOLDOUT_SHARE: usize = 3;
/// Rounds of the reweighted fit ([`least_absolute`]); real stations settle within a few
/// dozen.
pub(super) const FIT_ROUNDS: usize = 50;
/// A day missed by less than this (c/L) weighs in the fit as if missed by this much:
/// FuelWatch's prices step by a tenth of a cent, so a smaller miss is an exact fit.
pub(super) const FIT_FLOOR: f64 = 0.1;

/// A market's change split into its hike part and its other part: (hike, drift).
pub(super) fn split(change: f64) -> (f64, f64) {
    if change >= HIKE_CENTS { (change, 0.0) } else { (0.0, change) }
}

/// One day of a station against the market: the station's change, and the market's hike the
/// same day, its hike the day before, and its other move the same day.
pub(super) type Move = (f64, [f64; 3]);

impl Response {
    pub(super) fn read(market: &Daily, station: &Daily, end: usize) -> Self {
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
    pub(super) fn moved(&self, hikes: &[f64], drifts: &[f64], step: usize, last_hike: f64) -> f64 {
        let hikes_before = if step == 0 { 0.0 } else { hikes[step - 1] };
        self.hike * hikes[step] + self.hike_next_day * (hikes_before + last_hike) + self.drift * drifts[step]
    }
}

pub(super) fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// The response, each part within 0..=[`MAX_RESPONSE`], that misses the station's daily
/// moves by the least in absolute terms: least squares reweighted by each day's miss until it
/// settles, and standing still where that misses less. The forecast is judged by absolute
/// errors, so the fit is too: squares would trade a station's usual day (no move) for a small
/// move every day to halve a rare large miss.
pub(super) fn least_absolute(moves: &[Move]) -> [f64; 3] {
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
pub(super) fn weighted_fit(moves: &[Move], weight: impl Fn(&Move) -> f64) -> [f64; 3] {
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
