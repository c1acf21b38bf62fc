//! A generated market calibrated on FuelWatch's real ULP prices of 5 April – 23 August 2026
//! (about 940 sites; the figures below were measured on those monthly files, see
//! docs/forecast.md): weekly hikes of varying size, a level that wanders week to week, a
//! supply shock and its unwinding, market noise of about 2 c/L a day, and stations that hike
//! the same day, hike some weeks a day late, move on their own, or hold one price. One test
//! holds its statistics inside the real ranges; the others check the forecast on it as the
//! real-price targets of docs/forecast.md say.

use super::*;
use jiff::civil::date;

/// Deterministic noise in [0, 1) from two numbers (the other tests' splitmix64).
fn unit(a: u64, b: u64) -> f64 {
    (super::tests::noise(a, b) + 1.0) / 2.0
}

const DAYS: usize = 600;
const STATIONS: u64 = 101;
/// The shock (real: 159 → 258 c/L in five weeks of March 2026, weekly moves of +24, +37,
/// +16, +13, then back by −28, −7, −19, −17 …): from this week, five weeks pushed up by
/// [`SHOCK_PUSH`] each on top of the wander, then five pushed down by as much.
const SHOCK_WEEK: usize = 36;
/// Share of a week's level change carried into the next.
const CARRIED: f64 = 0.2;
const SHOCK_PUSH: f64 = 20.0;

fn start() -> Date {
    date(2024, 1, 1)
}

fn day(t: usize) -> Date {
    start().checked_add(Span::new().days(t as i64)).expect("date")
}

/// The week's hike (c/L) of the cycling stations: 6 to 16, most near 11.
fn rise(week: usize) -> f64 {
    6.0 + 10.0 * (unit(1, week as u64) + unit(2, week as u64)) / 2.0
}

/// Share of a week's fall on each day after the hike (real Metro medians: most of it the
/// next day and the day before the next hike), before each week's own variation.
const FALL: [f64; 6] = [0.35, 0.2, 0.12, 0.05, 0.1, 0.18];

/// The cycle's part of a cycling station's price on day `t`: the week's hike on its first
/// day, then a fall back over the other six, unevenly and differently each week.
fn cycle(t: usize) -> f64 {
    let (week, phase) = (t / 7, t % 7);
    let weights: Vec<f64> =
        FALL.iter().enumerate().map(|(i, w)| w * (0.3 + 1.4 * unit(5 + i as u64, week as u64))).collect();
    let total: f64 = weights.iter().sum();
    let fallen: f64 = weights[..phase].iter().sum::<f64>() / total;
    rise(week) * (1.0 - fallen)
}

/// The wander's level at the start of each week: weekly changes carrying a little of the week
/// before's (real: the weekly mean moved 7.1 c/L a week), pulled gently back towards 170 c/L
/// so two years stay plausible.
static WEEKS: std::sync::LazyLock<Vec<f64>> = std::sync::LazyLock::new(|| {
    let mut levels = vec![0.0];
    let mut change = 0.0;
    for week in 0..=DAYS / 7 {
        let level = levels[week];
        let push = match week.checked_sub(SHOCK_WEEK) {
            Some(w) if w < 5 => SHOCK_PUSH,
            Some(w) if w < 10 => -SHOCK_PUSH,
            _ => 0.0,
        };
        change = CARRIED * change + 26.0 * (unit(3, week as u64) - 0.5) - 0.05 * level + push;
        levels.push(level + change);
    }
    levels
});

/// The level every station rides on: the weekly wander (the shock in it). For a station that
/// cycles, a rise of the week comes with the hike (such stations roll a wholesale rise into
/// it: the real shock's +29 c/L Wednesdays); otherwise a move is spread over random days of
/// the week.
fn level(t: usize, cycles: bool) -> f64 {
    let (week, phase) = (t / 7, t % 7);
    let change = WEEKS[week + 1] - WEEKS[week];
    let done = if change > 0.0 && cycles {
        1.0
    } else {
        let weights: Vec<f64> = (0..7).map(|d| unit(6, (week * 7 + d) as u64)).collect();
        weights[..=phase].iter().sum::<f64>() / weights.iter().sum::<f64>().max(1e-9)
    };
    170.0 + WEEKS[week] + change * done
}

/// How a station prices, in the shares the real stations showed (statewide).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Hikes with the market (25 % of real sites, 47 % of Metro's).
    SameDay,
    /// Hikes, some weeks a day late (28 %).
    Mixed,
    /// Moves on its own, in steps, with the level (31 %; most regional sites).
    Own,
    /// Holds a price for weeks (15 %).
    Flat,
}

fn kind(s: u64) -> Kind {
    match s % 20 {
        0..=4 => Kind::SameDay,
        5..=10 => Kind::Mixed,
        11..=16 => Kind::Own,
        _ => Kind::Flat,
    }
}

/// Station `s`'s prices, day by day.
fn station_prices(s: u64) -> Vec<f64> {
    let offset = (s % 11) as f64 - 5.0 + if matches!(kind(s), Kind::Own | Kind::Flat) { 15.0 } else { 0.0 };
    let mut out = Vec::with_capacity(DAYS);
    let mut held: Option<f64> = None;
    for t in 0..DAYS {
        let market_noise = 2.0 * (unit(4, t as u64) - 0.5);
        let own = 1.0 * (unit(s, t as u64) - 0.5);
        // A station a day late this week sees the cycle (and the level it rolls in) a day late.
        let late = kind(s) == Kind::Mixed && unit(s + 1000, (t / 7) as u64) < 0.5;
        let seen = if late { t.saturating_sub(1) } else { t };
        let price = match kind(s) {
            Kind::SameDay | Kind::Mixed => level(seen, true) + offset + market_noise + cycle(seen) + own,
            // Moves when the level has moved a few cents from its price.
            Kind::Own | Kind::Flat => {
                let step = if kind(s) == Kind::Own { 3.0 } else { 12.0 };
                let now = level(t, false) + offset + market_noise + 6.0;
                let keep = held.filter(|p| (now - p).abs() < step);
                keep.unwrap_or(now)
            }
        };
        let price = (price * 10.0).round() / 10.0;
        held = Some(price);
        out.push(price);
    }
    out
}

fn panel() -> (Daily, Vec<Daily>) {
    let prices: Vec<Vec<f64>> = (0..STATIONS).map(station_prices).collect();
    let stations =
        prices.iter().map(|p| Daily::new(p.iter().enumerate().map(|(t, v)| (day(t), *v)))).collect();
    let market = Daily::new((0..DAYS).map(|t| {
        let mut today: Vec<f64> = prices.iter().map(|p| p[t]).collect();
        today.sort_by(f64::total_cmp);
        (day(t), today[today.len() / 2])
    }));
    (market, stations)
}

fn quantile_of(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    quantile(&v, p)
}

/// The real statistics (statewide ULP, April–August 2026) and the generated market's: the
/// median's hikes, its daily moves between hikes, and how stations answer a hike.
#[test]
fn the_generated_market_looks_like_the_real_one() {
    let (market, stations) = panel();
    let changes: Vec<(usize, f64)> = (1..DAYS).filter_map(|t| Some((t, market.change(t)?))).collect();
    let hikes: Vec<f64> = changes.iter().map(|c| c.1).filter(|c| *c >= HIKE_CENTS).collect();
    let quiet: Vec<f64> = changes.iter().map(|c| c.1).filter(|c| *c < HIKE_CENTS).map(f64::abs).collect();
    let (q1, median, q3) =
        (quantile_of(hikes.clone(), 0.25), quantile_of(hikes.clone(), 0.5), quantile_of(hikes.clone(), 0.75));
    let quiet_median = quantile_of(quiet, 0.5);
    // Real: hikes of the median 6.4–18 c/L, median 11 (Metro's 8), quartiles 10 and 14; a
    // median move of 2.0 c/L on other days.
    assert!((8.0..=14.0).contains(&median) && q1 >= 5.0 && q3 <= 18.0, "hikes {q1:.1} {median:.1} {q3:.1}");
    assert!((1.0..=3.0).contains(&quiet_median), "{quiet_median}");
    // Real (outside the shock): the weekly mean moved 7.1 c/L a week on average.
    let weekly: Vec<f64> = (0..DAYS / 7)
        .filter(|w| !(SHOCK_WEEK..SHOCK_WEEK + 12).contains(w))
        .map(|w| (w * 7..w * 7 + 7).filter_map(|t| market.at(t)).sum::<f64>() / 7.0)
        .collect();
    let moves: Vec<f64> = weekly.windows(2).map(|w| w[1] - w[0]).collect();
    let mean_move = moves.iter().map(|m| m.abs()).sum::<f64>() / moves.len() as f64;
    assert!((5.0..=10.0).contains(&mean_move), "{mean_move:.2}");
    // Real: the shock took the weekly mean up 90 c/L in five weeks.
    let week_mean = |w: usize| (w * 7..w * 7 + 7).filter_map(|t| market.at(t)).sum::<f64>() / 7.0;
    let climb =
        (SHOCK_WEEK..SHOCK_WEEK + 7).map(week_mean).fold(f64::MIN, f64::max) - week_mean(SHOCK_WEEK - 1);
    assert!((70.0..=130.0).contains(&climb), "{climb}");
    // Real: of the stations, 25 % hike with the market, 28 % hike some weeks a day late, 31 %
    // move on their own, 15 % hold one price (and 1 % always a day late).
    let hike_days: Vec<usize> = changes.iter().filter(|c| c.1 >= HIKE_CENTS).map(|c| c.0).collect();
    let mut counts = [0usize; 4];
    for station in &stations {
        let at = |t: usize| station.at(t);
        let (mut same, mut late, mut none) = (0, 0, 0);
        for &t in &hike_days {
            let (Some(before), Some(then)) = (at(t - 1), at(t)) else { continue };
            if then - before >= HIKE_CENTS {
                same += 1;
            } else if at(t + 1).is_some_and(|next| next - before >= HIKE_CENTS) {
                late += 1;
            } else {
                none += 1;
            }
        }
        let n = (same + late + none) as f64;
        let moves = (1..DAYS).filter(|&t| station.change(t).is_some_and(|c| c != 0.0)).count();
        let class = if same as f64 >= 0.6 * n {
            0
        } else if (same + late) as f64 <= 0.2 * n {
            if (moves as f64) < 0.1 * DAYS as f64 { 3 } else { 2 }
        } else {
            1
        };
        counts[class] += 1;
    }
    let share = |i: usize| counts[i] as f64 / STATIONS as f64;
    for (i, real) in [0.25, 0.28, 0.31, 0.15].into_iter().enumerate() {
        assert!((share(i) - real).abs() <= 0.1, "class {i}: {:.2} against the real {real}", share(i));
    }
}

fn mean_abs(v: &[f64]) -> f64 {
    v.iter().map(|e| e.abs()).sum::<f64>() / v.len().max(1) as f64
}

/// The market forecast over the last year of the calibrated market (the shock and its
/// unwinding inside it), held to the real-price targets that hold on the real files too:
/// hikes called, few false alarms, day+1 well under "last known day", no day worse than it,
/// and the advice worth most of hindsight. (On this market the best naive is about 3 % better
/// than the forecast over days 1–7: its weeks repeat more faithfully than the real ones,
/// where the forecast is 0.82× it; docs/forecast.md.)
#[test]
fn on_the_calibrated_market_the_forecast_keeps_the_real_targets() {
    let (market, _) = panel();
    let replay = Replay::run(
        Subject { market: &market, station: None, wholesale: None },
        day(DAYS - 366),
        day(DAYS - 1),
    );
    let (model, last): (Vec<f64>, Vec<f64>) =
        (0..MAX_HORIZON).map(|k| (mean_abs(&replay.errors[k]), mean_abs(&replay.naive[k]))).unzip();
    assert!(model[0] <= 0.7 * last[0], "day+1 {model:?} against {last:?}");
    // The cycle profile in the blend: day+1 at least as good as the weekly-seasonal naive.
    let weekly: Vec<f64> = (0..MAX_HORIZON).map(|k| mean_abs(&replay.weekly[k])).collect();
    assert!(model[0] <= weekly[0], "day+1 {model:?} against the weekly-seasonal {weekly:?}");
    assert!(model.iter().zip(&last).all(|(m, l)| m <= l), "{model:?} against {last:?}");
    let (hikes, hit) = replay.hikes;
    let (alarms, false_alarms) = replay.alarms;
    assert!(hit as f64 >= 0.85 * hikes as f64, "{hit} of {hikes} hikes");
    assert!(false_alarms as f64 <= 0.15 * alarms as f64, "{false_alarms} of {alarms} false");
    let (_, saved, hindsight) = replay.advice;
    assert!(saved >= 0.6 * hindsight, "saved {saved:.1} of hindsight's {hindsight:.1}");
}

/// Every station of the calibrated market forecast from its own price, pooled.
#[test]
fn on_the_calibrated_market_stations_beat_their_own_price() {
    let (market, stations) = panel();
    let (mut model, mut naive, mut worst) = (0.0, 0.0, 0.0f64);
    for station in &stations {
        let subject = Subject { market: &market, station: Some(station), wholesale: None };
        let replay = Replay::run(subject, day(DAYS - 120), day(DAYS - 1));
        let (m, n) = (mean_abs(&replay.errors[0]), mean_abs(&replay.naive[0]));
        (model, naive) = (model + m, naive + n);
        if n > 0.0 {
            worst = worst.max(m / n);
        }
    }
    // Real Metro sites, pooled: 0.66 (docs/forecast.md); here 0.69.
    assert!(model <= 0.72 * naive, "stations day+1 {:.2}", model / naive);
    assert!(worst <= 1.2, "worst station {worst:.2}");
}

/// The advice against the plain rule it replaced, "wait for the cheapest predicted day of
/// the horizon" (even past an expected hike), on the same forecasts of the calibrated
/// market's last year. Here the plain rule saves a little more (the advice keeps 95 % of
/// it: this market's level drifts on across hikes); on FuelWatch's real 2026 prices, where
/// the hike is when the trend turned, the advice keeps 78 % of hindsight against the plain
/// rule's 67 % (docs/forecast.md). Held here: the advice never falls far behind it.
#[test]
fn on_the_calibrated_market_the_advice_keeps_up_with_the_cheapest_predicted_day() {
    let (market, _) = panel();
    let subject = Subject { market: &market, station: None, wholesale: None };
    let accuracy = Replay::run(subject, day(DAYS - 366), day(DAYS - 1)).accuracy();
    let paid = |today: f64, wait_for: Option<Date>| wait_for.and_then(|d| market.get(d)).unwrap_or(today);
    let (mut advised, mut plain, mut days) = (0.0, 0.0, 0);
    for t in DAYS - 366..DAYS - MAX_HORIZON {
        let f = forecast(subject, day(t), MAX_HORIZON, false, &accuracy).expect("a forecast");
        let today = market.at(t).expect("a price");
        let until = (f.advice.action == Action::Wait).then_some(f.advice.until).flatten();
        advised += today - paid(today, until);
        let cheapest = f.days.iter().min_by(|a, b| a.median.total_cmp(&b.median)).expect("days");
        plain += today - paid(today, (today - cheapest.median >= WAIT_MIN_SAVING).then_some(cheapest.date));
        days += 1;
    }
    assert!(days > 300);
    assert!(advised >= 0.9 * plain, "saved {advised:.1} c/L against the plain rule's {plain:.1}");
}
