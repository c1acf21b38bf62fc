//! The forecast on generated markets whose cycle changes regime (a weekday shift, then a
//! weekly cycle becoming fortnightly), with noise and stations that follow a hike a day late:
//! the targets of docs/forecast.md hold, and nothing is read from after `asOf`.

use super::*;
use jiff::civil::date;

/// Deterministic noise in [-1, 1) from two numbers (splitmix64).
pub(super) fn noise(a: u64, b: u64) -> f64 {
    let mut z = a.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(b).wrapping_add(0x632B_E59B_D9B4_E019);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// A regime: from `from` (day index), a hike every `period` days from day `anchor`, of `rise`
/// c/L, then an even fall back.
struct Regime {
    from: usize,
    period: usize,
    anchor: usize,
    rise: f64,
}

/// Three regimes over 700 days: weekly, the hike a weekday later from day 330, fortnightly
/// from day 480.
const REGIMES: [Regime; 3] = [
    Regime { from: 0, period: 7, anchor: 1, rise: 14.0 },
    Regime { from: 330, period: 7, anchor: 2, rise: 14.0 },
    Regime { from: 480, period: 14, anchor: 485, rise: 22.0 },
];
const DAYS: usize = 700;
const STATIONS: u64 = 41;

fn start() -> Date {
    date(2024, 1, 1)
}

/// The market's level on day `t` (a slow drift plus the cycle of its regime).
fn level(t: usize) -> f64 {
    let r = REGIMES.iter().rev().find(|r| t >= r.from).unwrap_or(&REGIMES[0]);
    let phase = (t + r.period * 100 - r.anchor) % r.period;
    let drift = 6.0 * (t as f64 * std::f64::consts::TAU / 120.0).sin();
    180.0 + drift + r.rise - phase as f64 * r.rise / (r.period - 1) as f64
}

/// Station `s`'s price on day `t`: a third follow the hike a day late.
fn station_price(s: u64, t: usize) -> f64 {
    let lag = usize::from(s.is_multiple_of(3));
    let offset = (s % 9) as f64 - 4.0;
    let t0 = t.saturating_sub(lag);
    ((level(t0) + offset + noise(s, t as u64) * 1.5) * 10.0).round() / 10.0
}

fn panel(days: usize) -> (Daily, Vec<Daily>) {
    let dates: Vec<Date> =
        (0..days).map(|t| start().checked_add(Span::new().days(t as i64)).expect("date")).collect();
    let stations: Vec<Daily> = (0..STATIONS)
        .map(|s| Daily::new(dates.iter().enumerate().map(|(t, d)| (*d, station_price(s, t)))))
        .collect();
    let market = Daily::new(dates.iter().enumerate().map(|(t, d)| {
        let mut day: Vec<f64> = (0..STATIONS).map(|s| station_price(s, t)).collect();
        day.sort_by(f64::total_cmp);
        let n = day.len();
        let median = if n % 2 == 1 { day[n / 2] } else { (day[n / 2 - 1] + day[n / 2]) / 2.0 };
        (*d, median)
    }));
    (market, stations)
}

fn day(t: usize) -> Date {
    start().checked_add(Span::new().days(t as i64)).expect("date")
}

fn market_only(market: &Daily) -> Subject<'_> {
    Subject { market, station: None, wholesale: None }
}

#[test]
fn the_targets_hold_on_a_market_whose_cycle_changes() {
    let (market, _) = panel(DAYS);
    let replay = Replay::run(market_only(&market), day(DAYS - 366), day(DAYS - 1));
    let a = replay.accuracy();
    assert!(replay.days >= 360, "{}", replay.days);
    let mae =
        |v: &[Vec<f64>], k: usize| mean(&v[k].iter().map(|e| e.abs()).collect::<Vec<_>>()).expect("errors");
    let (day1, naive1) = (mae(&replay.errors, 0), mae(&replay.naive, 0));
    assert!(day1 <= 0.6 * naive1, "day+1 MAE {day1:.2} against naive {naive1:.2}");
    let over = |v: &[Vec<f64>]| (0..MAX_HORIZON).map(|k| mae(v, k)).sum::<f64>() / MAX_HORIZON as f64;
    let (model, naive, ago) = (over(&replay.errors), over(&replay.naive), over(&replay.cycle_ago));
    assert!(model <= 0.75 * naive.min(ago), "mean MAE {model:.2}, naive {naive:.2}, a cycle ago {ago:.2}");
    let hit = a.hike_hit_rate.expect("hikes");
    let false_alarms = a.false_alarm_rate.expect("alarms");
    assert!(hit >= 0.7 && false_alarms <= 0.3, "hit {hit}, false alarms {false_alarms}");
    let (hike_days, waited) = replay.hike_days;
    assert!(waited as f64 >= 0.7 * hike_days as f64, "wait on {waited} of {hike_days} hike days");
    let (_, saved, hindsight) = replay.advice;
    assert!(hindsight > 0.0 && saved >= 0.5 * hindsight, "saved {saved:.1} of hindsight's {hindsight:.1}");
    // Honest intervals: they hold the outcome mostly, and are not absurdly wide.
    assert!(replay.coverage().expect("coverage") >= 0.6);
    for (band, mae) in a.bands.iter().zip(&a.mae) {
        let ((lo, hi), mae) = (band.expect("band"), mae.expect("mae"));
        assert!(hi.max(0.0) - lo.min(0.0) <= 8.0 * mae.max(0.5), "band {lo:.1}…{hi:.1} for MAE {mae}");
    }
}

#[test]
fn a_new_period_and_a_new_weekday_are_read_within_two_cycles() {
    let (market, _) = panel(DAYS);
    for regime in &REGIMES[1..] {
        let settled = regime.from + 2 * regime.period + 1;
        let replay = Replay::run(market_only(&market), day(settled), day(settled + 8 * regime.period));
        let (hikes, hit) = replay.hikes;
        let (alarms, false_alarms) = replay.alarms;
        assert!(hikes > 0 && hit as f64 >= 0.7 * hikes as f64, "from day {}: {hit} of {hikes}", regime.from);
        assert!(
            false_alarms as f64 <= 0.3 * alarms as f64,
            "from day {}: {false_alarms} of {alarms}",
            regime.from
        );
    }
}

#[test]
fn a_station_is_forecast_from_its_own_price_and_response() {
    let (market, stations) = panel(DAYS);
    for (s, station) in stations.iter().enumerate().take(6) {
        let subject = Subject { market: &market, station: Some(station), wholesale: None };
        let replay = Replay::run(subject, day(DAYS - 120), day(DAYS - 1));
        let day1 = mean(&replay.errors[0].iter().map(|e| e.abs()).collect::<Vec<_>>()).expect("errors");
        let naive = mean(&replay.naive[0]).expect("naive");
        assert!(day1 <= 0.7 * naive, "station {s}: day+1 MAE {day1:.2} against its naive {naive:.2}");
    }
}

/// The real-market failure the station forecast had: a station that holds one price while
/// the market cycles (and drifts) is forecast at that price, never with the cycle; one that
/// follows each hike a day late rises the day after the market does.
#[test]
fn a_flat_station_stays_flat_and_a_late_follower_rises_a_day_late() {
    let (market, _) = panel(DAYS);
    let dates: Vec<Date> = (0..DAYS).map(day).collect();
    let flat = Daily::new(dates.iter().map(|d| (*d, 163.9)));
    // The market's level a day late, 3 c/L under it.
    let late = Daily::new(dates.iter().enumerate().map(|(t, d)| (*d, level(t.saturating_sub(1)) - 3.0)));
    let end = DAYS - 1;
    let (flat_fit, late_fit) = (Response::read(&market, &flat, end), Response::read(&market, &late, end));
    assert_eq!(flat_fit, Response::default());
    assert!(late_fit.hike < 0.2 && late_fit.hike_next_day > 0.8, "{late_fit:?}");
    // On the days the market hikes (by the generated cycle), the flat station's forecast is
    // its own price; the late one's hike is forecast for the day after.
    let mut checked = 0;
    for t in (DAYS - 120)..(DAYS - 2) {
        let basis = day(t);
        let subject = Subject { market: &market, station: Some(&flat), wholesale: None };
        let outlook = subject.outlook(basis, 2).expect("outlook");
        assert!(outlook.days.iter().all(|(median, _)| (median - 163.9).abs() < 1e-9), "{t}: {outlook:?}");
        let market_hiked = market.change(t).is_some_and(|c| c >= HIKE_CENTS);
        if market_hiked {
            let subject = Subject { market: &market, station: Some(&late), wholesale: None };
            let (tomorrow, probability) = subject.outlook(basis, 1).expect("outlook").days[0];
            let today = late.get(basis).expect("a price");
            assert!(tomorrow - today >= HIKE_CENTS && probability >= LIKELY, "{t}: {today} → {tomorrow}");
            checked += 1;
        }
    }
    assert!(checked >= 5, "{checked} hikes checked");
    // The answer too (the blend mixes the model with the station's own profile, flat here).
    let subject = Subject { market: &market, station: Some(&flat), wholesale: None };
    let accuracy = Replay::run(subject, day(DAYS - 366), day(DAYS - 1)).accuracy();
    let f = forecast(subject, day(DAYS - 1), 7, false, &accuracy).expect("forecast");
    assert!(f.days.iter().all(|d| d.median == 163.9), "{:?}", f.days);
}

/// A station that follows every hike the same day and then holds its price while the market
/// slides, dropping to the market only the day before the next hike (Perth's "hold, then
/// drop" pricers): its response reads a full hike and no drift, so between hikes it is
/// forecast to hold, not to slide a little every day as one response to both moves would say.
#[test]
fn a_station_that_follows_hikes_and_holds_between_them_is_forecast_to_hold() {
    let (market, _) = panel(DAYS);
    let hiked = |t: usize| market.change(t).is_some_and(|c| c >= HIKE_CENTS);
    let mut prices = vec![level(0)];
    for t in 1..DAYS {
        let held = prices[t - 1];
        prices.push(match market.change(t) {
            Some(c) if hiked(t) => held + c,
            _ if hiked(t + 1) => level(t),
            _ => held,
        });
    }
    let holder = Daily::new(prices.iter().enumerate().map(|(t, p)| (day(t), *p)));
    let end = 450;
    let fit = Response::read(&market, &holder, end);
    assert!(fit.hike > 0.8 && fit.drift < 0.2, "{fit:?}");
    let subject = Subject { market: &market, station: Some(&holder), wholesale: None };
    let mut held_days = 0;
    for (t, price) in prices.iter().enumerate().take(end).skip(end - 60) {
        let Some((tomorrow, probability)) = subject.outlook(day(t), 1).map(|o| o.days[0]) else { continue };
        if probability < LIKELY && !hiked(t + 1) && !hiked(t + 2) {
            assert!((tomorrow - price).abs() < 0.5, "day {t}: {price} → {tomorrow:.1}");
            held_days += 1;
        }
    }
    assert!(held_days >= 20, "{held_days} days checked");
}

/// A station that follows only every other hike and moves in 4 c/L steps (FuelWatch's sticky
/// pricers): the market's moves "explain" much of its squared moves, yet standing still misses
/// its daily moves by less than the fit does, so it is forecast flat, and its day+1 error is
/// never above its own naive.
#[test]
fn a_station_that_follows_every_other_hike_in_steps_is_forecast_flat() {
    let (market, _) = panel(DAYS);
    let base = |t: usize| 180.0 + 6.0 * (t as f64 * std::f64::consts::TAU / 120.0).sin();
    let cycle = |t: usize| {
        let r = REGIMES.iter().rev().find(|r| t >= r.from).unwrap_or(&REGIMES[0]);
        (t + r.period * 100 - r.anchor) / r.period
    };
    let sticky = Daily::new((0..DAYS).map(|t| {
        let followed = if cycle(t).is_multiple_of(2) { level(t) - base(t) } else { 0.0 };
        (day(t), ((base(t) + followed) / 4.0).round() * 4.0)
    }));
    // Both weekly regimes (the fortnightly one's few hikes explain too little to be read).
    for end in [300, 450] {
        assert_eq!(Response::read(&market, &sticky, end), Response::default(), "read at day {end}");
        let subject = Subject { market: &market, station: Some(&sticky), wholesale: None };
        let replay = Replay::run(subject, day(end - 60), day(end));
        let day1 = mean(&replay.errors[0].iter().map(|e| e.abs()).collect::<Vec<_>>()).expect("errors");
        let naive = mean(&replay.naive[0]).expect("naive");
        assert!(day1 <= naive + 1e-9, "day {end}: day+1 MAE {day1:.2} against its naive {naive:.2}");
    }
}

/// A station that followed the market for two months and then stopped, holding one price for
/// its newest four weeks (as some of Perth's cycling stations held through early June 2026):
/// over the whole 91 days the market still explains half its squared moves, and a fit by
/// absolute errors reads a full response (most days say so), so only the check on the newest
/// weeks, which the older response misses by more than standing still, keeps its forecast at
/// its price.
#[test]
fn a_station_that_stopped_following_the_market_is_forecast_flat() {
    let (market, _) = panel(DAYS);
    let (end, stopped) = (450, 425);
    let held = level(stopped);
    let quitter = Daily::new((0..=end).map(|t| (day(t), if t < stopped { level(t) } else { held })));
    let all_days = Response::read(&market, &quitter, stopped - 1);
    assert!(all_days.hike > 0.8 && all_days.drift > 0.8, "while it followed: {all_days:?}");
    assert_eq!(Response::read(&market, &quitter, end), Response::default());
    let subject = Subject { market: &market, station: Some(&quitter), wholesale: None };
    let outlook = subject.outlook(day(end), MAX_HORIZON).expect("outlook");
    assert!(outlook.flat, "{outlook:?}");
    assert!(outlook.days.iter().all(|(median, _)| (median - held).abs() < 1e-9), "{:?}", outlook.days);
}

#[test]
fn nothing_after_as_of_is_read() {
    let (market, stations) = panel(DAYS);
    let as_of = day(600);
    let cut = |d: &Daily| Daily::new((0..=600).filter_map(|t| Some((day(t), d.get(day(t))?))));
    let (market_then, station_then) = (cut(&market), cut(&stations[3]));
    for (now, then) in [
        (
            Subject { market: &market, station: None, wholesale: None },
            Subject { market: &market_then, station: None, wholesale: None },
        ),
        (
            Subject { market: &market, station: Some(&stations[3]), wholesale: None },
            Subject { market: &market_then, station: Some(&station_then), wholesale: None },
        ),
    ] {
        let replayed_now = Replay::run(now, day(600 - 365), as_of);
        let replayed_then = Replay::run(then, day(600 - 365), as_of);
        assert_eq!(replayed_now, replayed_then);
        let accuracy = replayed_now.accuracy();
        let full = forecast(now, as_of, 7, false, &accuracy).expect("forecast");
        let truncated = forecast(then, as_of, 7, false, &accuracy).expect("forecast");
        assert_eq!(full, truncated);
        assert_eq!(full.basis, as_of);
        assert_eq!(full.days.len(), 7);
        assert!(full.days.iter().all(|d| !d.known && d.low <= d.median && d.median <= d.high));
    }
}

#[test]
fn a_known_tomorrow_is_the_published_price() {
    let (market, _) = panel(DAYS);
    let as_of = day(600);
    let accuracy = Replay::run(market_only(&market), day(600 - 365), as_of).accuracy();
    let f = forecast(market_only(&market), as_of, 3, true, &accuracy).expect("forecast");
    let tomorrow = &f.days[0];
    assert!(tomorrow.known);
    assert_eq!(tomorrow.median, market.get(day(601)).expect("price"));
    assert_eq!((tomorrow.low, tomorrow.high), (tomorrow.median, tomorrow.median));
    assert_eq!(f.basis, day(601));
    assert_eq!(f.days.iter().map(|d| d.date).collect::<Vec<_>>(), vec![day(601), day(602), day(603)]);
    assert!(f.days[1..].iter().all(|d| !d.known));
}

#[test]
fn a_series_without_a_cycle_has_no_hike_and_no_day_worse_than_holding_its_price() {
    // Diesel: a slow drift and noise, no hikes.
    let diesel = Daily::new(
        (0..300).map(|t| (day(t), 190.0 + 4.0 * (t as f64 / 20.0).sin() + noise(7, t as u64) * 0.8)),
    );
    let subject = market_only(&diesel);
    let accuracy = Replay::run(subject, day(0), day(299)).accuracy();
    let f = forecast(subject, day(299), 7, false, &accuracy).expect("forecast");
    let last = diesel.get(day(299)).expect("price");
    // The cycle model is flat; the weekly profile, carrying a little of the slow drift, is
    // mixed in only as far as the replay found it missing less than holding the price.
    assert!(
        f.days.iter().all(|d| (d.median - last).abs() < 1.0 && d.hike_probability == 0.0),
        "{:?}",
        f.days
    );
    assert_eq!((f.period_days, f.days_since_hike, f.next_hike), (None, None, None));
    assert_eq!(f.advice.action, Action::Either);
    assert!(accuracy.mae[0].expect("mae") < 1.5);
    for (mae, naive) in accuracy.mae.iter().zip(&accuracy.naive_mae) {
        assert!(
            mae.expect("mae") <= naive.expect("naive") + 0.05,
            "{:?} {:?}",
            accuracy.mae,
            accuracy.naive_mae
        );
    }
}

/// Diesel unwinding a shock: down 12 c/L a week, no cycle. Three quarters of that pace is
/// carried on, and over the replay it beats holding the last price at every horizon day.
#[test]
fn a_strong_drift_without_a_cycle_is_carried_at_three_quarters_pace() {
    let falling =
        Daily::new((0..200).map(|t| (day(t), 300.0 - 12.0 * t as f64 / 7.0 + noise(3, t as u64) * 0.8)));
    let subject = market_only(&falling);
    let outlook = subject.outlook(day(199), 7).expect("outlook");
    let price = |t: usize| falling.get(day(t)).expect("price");
    let drift = 0.75 * (price(199) - price(192)) / 7.0;
    for (h, (median, p)) in (1..).zip(&outlook.days) {
        assert!((median - (price(199) + drift * h as f64)).abs() < 1e-9 && *p == 0.0, "{h}: {median}");
    }
    let accuracy = Replay::run(subject, day(100), day(199)).accuracy();
    for (mae, naive) in accuracy.mae.iter().zip(&accuracy.naive_mae) {
        assert!(mae.expect("mae") < naive.expect("naive"), "{:?} vs {:?}", accuracy.mae, accuracy.naive_mae);
    }
}

/// FuelWatch's diesel in July 2026 climbed in steps of 1–4 c/L with the odd rise of 5 or
/// more: rises, not a cycle. The events' share of hikes says so, and no hike is forecast.
#[test]
fn a_climb_in_small_steps_is_not_a_cycle() {
    // Up 1 c/L a day, 3.5 every third day and 6 every ninth.
    let step = |t: usize| match (t % 3, t % 9) {
        (_, 0) => 6.0,
        (0, _) => 3.5,
        _ => 1.0,
    };
    let climb = Daily::new((0..120).scan(180.0, |price, t| {
        *price += step(t);
        Some((day(t), *price))
    }));
    let end = climb.index(day(119)).expect("index");
    assert!(Pattern::read(&climb, end).is_none());
    let outlook = market_only(&climb).outlook(day(119), 7).expect("outlook");
    assert!(outlook.days.iter().all(|(_, p)| *p == 0.0), "{:?}", outlook.days);
    // It keeps climbing, at half the last week's pace.
    assert!(outlook.days[6].0 > climb.get(day(119)).expect("price"), "{:?}", outlook.days);
}

#[test]
fn too_little_history_is_no_forecast() {
    let (market, _) = panel(60);
    let accuracy = Replay::run(market_only(&market), day(0), day(55)).accuracy();
    assert_eq!(accuracy.days, 0);
    assert_eq!(
        forecast(market_only(&market), day(55), 7, false, &accuracy),
        Err(NoForecast::TooLittleHistory)
    );
    let f = forecast(market_only(&market), day(56), 7, false, &accuracy).expect("56 days before");
    // Without replayed errors the interval is wide rather than missing.
    assert!(f.days.iter().all(|d| d.low < d.median && d.median < d.high));
}

fn predicted(date: Date, median: f64, hike_probability: f64) -> ForecastDay {
    ForecastDay { date, median, low: median, high: median, known: false, hike_probability }
}

#[test]
fn the_advice_rule() {
    let d = |n: i64| date(2026, 11, 25).checked_add(Span::new().days(n)).expect("date");
    // Falling for three days, then a hike: wait for the day before it.
    let days = [
        predicted(d(1), 188.0, 0.0),
        predicted(d(2), 186.0, 0.1),
        predicted(d(3), 184.0, 0.2),
        predicted(d(4), 199.0, 0.9),
    ];
    let a = advise(190.0, &days, true);
    assert_eq!((a.action, a.until, a.saving), (Action::Wait, Some(d(3)), Some(6.0)));
    assert_eq!(a.reason, "Prices are expected to fall about 6 c/L by Saturday 28 November.");
    // A hike tomorrow: fill now.
    let days = [predicted(d(1), 204.0, 0.8), predicted(d(2), 202.0, 0.0)];
    let a = advise(190.0, &days, true);
    assert_eq!((a.action, a.until, a.saving), (Action::FillNow, Some(d(1)), Some(-14.0)));
    assert_eq!(a.reason, "Prices are likely to rise about 14 c/L on Thursday 26 November.");
    // A hike tomorrow and a fall below today's price after it: the fall is not waited for
    // (the hike is when a trend turns), fill now.
    let days = [predicted(d(1), 204.0, 0.9), predicted(d(2), 196.0, 0.0), predicted(d(3), 185.0, 0.0)];
    let a = advise(190.0, &days, true);
    assert_eq!((a.action, a.until), (Action::FillNow, Some(d(1))));
    // Nothing moves: either.
    let days = [predicted(d(1), 190.2, 0.0), predicted(d(2), 189.5, 0.0)];
    let a = advise(190.0, &days, true);
    assert_eq!((a.action, a.until, a.saving), (Action::Either, None, None));
    // A known rise counts as one whatever its probability says.
    let mut known = predicted(d(1), 200.0, 1.0);
    known.known = true;
    let a = advise(190.0, &[known], true);
    assert_eq!(a.action, Action::FillNow);
    // …and is said as the published fact it is, to the tenth, never "likely … about".
    assert!(
        a.reason.starts_with("Prices rise 10.0 c/L on ") && a.reason.ends_with("(published)."),
        "{}",
        a.reason
    );
}

#[test]
fn a_fall_is_not_waited_for_where_waiting_has_not_saved() {
    let d = |n: i64| date(2026, 11, 25).checked_add(Span::new().days(n)).expect("date");
    let falling = [predicted(d(1), 188.0, 0.0), predicted(d(2), 184.0, 0.1), predicted(d(3), 199.0, 0.9)];
    assert_eq!(advise(190.0, &falling, true).action, Action::Wait);
    // The same days, where the replayed waits saved nothing: the hike after the fall is
    // still worth filling before.
    let a = advise(190.0, &falling, false);
    assert_eq!((a.action, a.until), (Action::FillNow, Some(d(3))));
    // A fall with no rise after it: neither, and the answer says why.
    let a = advise(190.0, &falling[..2], false);
    assert_eq!((a.action, a.until, a.saving), (Action::Either, None, None));
    assert_eq!(
        a.reason,
        "A fall is forecast, but waiting for the forecast falls has not saved on recent days."
    );
}

/// The replay keeps the record of the rule's own waits: on a market whose cycle the method
/// reads, they save, and waiting is advised; where the record shows they saved nothing, the
/// same forecast advises no wait, and the replayed advice too.
#[test]
fn the_replay_keeps_the_record_of_its_waits() {
    let (market, _) = panel(DAYS);
    let subject = market_only(&market);
    let (first, last) = (day(DAYS - 120), day(DAYS - 1));
    let replay = Replay::run(subject, first, last);
    let (saved, waits) = replay.wait_record;
    assert!(waits >= BLEND_MIN_ERRORS && saved > 0.0, "{:?}", replay.wait_record);
    let accuracy = replay.accuracy();
    assert!(accuracy.waiting_pays);
    let as_of = (DAYS - 60..DAYS - 1)
        .map(day)
        .find(|d| forecast(subject, *d, 7, false, &accuracy).is_ok_and(|f| f.advice.action == Action::Wait))
        .expect("a day the forecast says wait");
    let mut losing = replay.clone();
    losing.wait_record = (-saved, waits);
    let guarded = losing.accuracy();
    assert!(!guarded.waiting_pays);
    let advice = forecast(subject, as_of, 7, false, &guarded).expect("forecast").advice;
    assert_ne!(advice.action, Action::Wait, "{advice:?}");
    // Within 14 recorded waits, the record has no say.
    losing.wait_record = (-saved, BLEND_MIN_ERRORS - 1);
    assert!(losing.accuracy().waiting_pays);
}

/// A market climbing through its cycle, as Perth's did in July 2026: a 10 c/L step every
/// week and 0.5 c/L more on each day between. Only half of the cycles' net rise is carried on
/// (the model's shape and the cycle profile alike), so the forecast sees prices easing before
/// each hike and the rule says wait, about twice a week; the price creeps up instead. The replay's own scored advice
/// (what `adviceSaving` reports) follows the record of waits as it stood on each replayed day:
/// the lead-in's waits lost, so no replayed day is told to wait, and none loses.
#[test]
fn the_replayed_advice_stops_waiting_once_its_waits_have_lost() {
    let climb = |t: usize| 150.0 + 10.0 * (t / 7) as f64 + 0.5 * (t % 7) as f64;
    let days = 300;
    let market = Daily::new((0..days).map(|t| (day(t), climb(t))));
    let subject = market_only(&market);
    let (first, last) = (days - 120, days - 1);
    let replay = Replay::run(subject, day(first), day(last));
    let (saved, waits) = replay.wait_record;
    assert!(waits >= 2 * BLEND_MIN_ERRORS && saved < 0.0, "the rule's waits lost: {:?}", replay.wait_record);
    let accuracy = replay.accuracy();
    assert!(!accuracy.waiting_pays);
    let (scored, reported, _) = replay.advice;
    assert!(scored >= 60, "{scored} replays with a known week");
    assert!(reported >= 0.0, "the replayed advice lost {reported} c/L in all");
    // The rule itself still says wait on many of those days: with a record that paid, the
    // answer waits; with the record the replay ends with, it does not.
    let mut paid = replay.clone();
    paid.wait_record = (-saved, waits);
    let trusting = paid.accuracy();
    let said = |accuracy: &Accuracy| {
        (first..last - 7)
            .filter(|t| {
                forecast(subject, day(*t), 7, false, accuracy).is_ok_and(|f| f.advice.action == Action::Wait)
            })
            .count()
    };
    assert!(said(&trusting) >= BLEND_MIN_ERRORS, "{} waits", said(&trusting));
    assert_eq!(said(&accuracy), 0);
}

/// Hike probabilities are calibrated on the replay: on a market whose likely hikes came, they
/// stand; where a third as many came as their probabilities said, each is scaled to a third.
#[test]
fn hike_probabilities_are_scaled_by_how_often_the_likely_hikes_came() {
    let (market, _) = panel(DAYS);
    let subject = market_only(&market);
    let replay = Replay::run(subject, day(DAYS - 120), day(DAYS - 1));
    let (hikes, probabilities, alarms) = replay.alarm_record;
    assert!(alarms >= BLEND_MIN_ERRORS && hikes >= 0.9 * probabilities, "{:?}", replay.alarm_record);
    let accuracy = replay.accuracy();
    assert!(accuracy.hike_scale > 0.9, "{}", accuracy.hike_scale);
    let as_of = (DAYS - 60..DAYS - 1)
        .map(day)
        .find(|d| {
            forecast(subject, *d, 3, false, &accuracy)
                .is_ok_and(|f| f.days.iter().any(|d| d.hike_probability >= LIKELY))
        })
        .expect("a day with a likely hike ahead");
    let said = forecast(subject, as_of, 3, false, &accuracy).expect("forecast");
    let mut overconfident = replay.clone();
    overconfident.alarm_record = (probabilities / 3.0, probabilities, alarms);
    let scaled = overconfident.accuracy();
    assert!((scaled.hike_scale - 1.0 / 3.0).abs() < 1e-9);
    let now = forecast(subject, as_of, 3, false, &scaled).expect("forecast");
    for (before, after) in said.days.iter().zip(&now.days) {
        let expected = before.hike_probability * scaled.hike_scale / accuracy.hike_scale;
        assert!((after.hike_probability - expected).abs() <= 0.011, "{before:?} → {after:?}");
        assert_eq!(after.median, before.median, "the medians do not depend on it");
    }
    assert!(now.days.iter().all(|d| d.hike_probability < LIKELY), "{:?}", now.days);
    // Within 14 of them, the record has no say.
    overconfident.alarm_record.2 = BLEND_MIN_ERRORS - 1;
    assert_eq!(overconfident.accuracy().hike_scale, 1.0);
}

#[test]
fn a_probability_is_never_rounded_across_likely() {
    assert_eq!(round_probability(0.4996), 0.49);
    assert_eq!(round_probability(0.4949), 0.49);
    assert_eq!(round_probability(0.5), 0.5);
    assert_eq!(round_probability(0.50004), 0.5);
    assert_eq!(round_probability(0.123), 0.12);
    assert!(round_probability(0.49999) < LIKELY);
}

/// A weekly cycle written by hand: each week rises by its own `rises[week]` on its first
/// day and falls back by as much over the other six; days in `missing` have no price.
fn weekly(rises: &[f64], missing: &[usize]) -> Daily {
    let mut price = 190.0;
    let mut points = Vec::new();
    for (week, rise) in rises.iter().enumerate() {
        for k in 0..7 {
            let t = week * 7 + k;
            price += if k == 0 { *rise } else { -rise / 6.0 };
            if !missing.contains(&t) {
                points.push((day(t), (price * 10.0).round() / 10.0));
            }
        }
    }
    Daily::new(points)
}

/// FuelWatch's Metro median in June 2026: one week's rise was 4 c/L amid 6–10 c/L ones. It
/// is not a hike, but it restarted the cycle on time: the next week's hike is still expected
/// on its weekday, not read as overdue every day after.
#[test]
fn a_small_week_keeps_the_cycle_on_time() {
    // Twelve weeks; the last one (from day 77) rose only 4 c/L.
    let mut rises = vec![8.0; 12];
    rises[11] = 4.0;
    let series = weekly(&rises, &[]);
    // Three days into that week: the next hike is due on day 84, not on every day from now.
    let outlook = market_only(&series).outlook(day(80), 4).expect("outlook");
    let p: Vec<f64> = outlook.days.iter().map(|d| d.1).collect();
    assert!(p[..3].iter().all(|p| *p < 0.2) && p[3] >= LIKELY, "{p:?}");
    assert_eq!(outlook.period_days, Some(7));
    // The small week shows in the hike probability: one event in eight was not a hike.
    assert!(p[3] < 0.95, "{p:?}");
}

/// Days without prices (FuelWatch's June 2026 gap) may hide a hike: an interval across them
/// is not read as a longer cycle.
#[test]
fn an_interval_across_missing_days_is_not_a_cycle() {
    let rises = vec![8.0; 14];
    let missing: Vec<usize> = (60..73).collect();
    let series = weekly(&rises, &missing);
    let outlook = market_only(&series).outlook(day(96), 3).expect("outlook");
    assert_eq!(outlook.period_days, Some(7));
    assert!(outlook.days[1].1 >= LIKELY, "{:?}", outlook.days);
}

/// FuelWatch's June 2026 gap, seen from its first day back: the hikes of the missing weeks
/// are unseen, and the day a whole number of weeks after the last hike seen is a hike's day.
#[test]
fn a_hike_due_a_whole_number_of_cycles_after_the_last_seen_is_expected() {
    let rises = vec![8.0; 14];
    // Hikes on days 56, 63, 70, 77: those of 63 and 70 fall in the gap.
    let missing: Vec<usize> = (57..76).collect();
    let series = weekly(&rises, &missing);
    let outlook = market_only(&series).outlook(day(76), 3).expect("outlook");
    assert_eq!(outlook.period_days, Some(7));
    let p: Vec<f64> = outlook.days.iter().map(|d| d.1).collect();
    assert!(p[0] >= LIKELY && p[1] < 0.2, "day 77 is three weeks after day 56: {p:?}");
    assert!(outlook.days[0].0 > outlook.now + HIKE_CENTS, "{:?}", outlook.days);
}

/// A cycle that really lengthens (no rise where the old hike was due) is read as longer,
/// not as skipped weeks.
#[test]
fn a_cycle_that_lengthens_is_not_split() {
    let pattern_of = |rises: &[f64]| {
        let series = weekly(rises, &[]);
        Pattern::read(&series, series.index(day(rises.len() * 7 - 1)).expect("index")).expect("a cycle")
    };
    // Weekly, with a week whose rise was only 2 c/L: split back into two weeks.
    let mut skipped = vec![8.0; 10];
    skipped[8] = 2.0;
    assert_eq!(pattern_of(&skipped).period(), 7);
    // Weekly, then a fortnight with no rise at all at its middle: a 14-day interval.
    let mut lengthened = vec![8.0; 10];
    lengthened[8] = 0.0;
    lengthened[9] = 16.0;
    let longer = pattern_of(&lengthened);
    assert!(longer.intervals[14] > 0.0, "{:?}", longer.intervals);
}

/// A replay over a short window still opens with a chosen blend: the forecasts of the 91
/// days before its first origin are scored for the blend (not for the accuracy).
#[test]
fn a_short_replay_has_its_blend_from_the_days_before_it() {
    let (market, _) = panel(DAYS);
    let replay = Replay::run(market_only(&market), day(DAYS - 10), day(DAYS - 1));
    assert_eq!(replay.days, 9, "only the window's origins are counted");
    let accuracy = replay.accuracy();
    assert!(accuracy.blend.iter().all(Option::is_some), "{:?}", accuracy.blend);
    // A market whose history only just reaches the window's first origin has no days before
    // it to score: nine origins are too few to choose, and the prior decides.
    let young = Daily::new((DAYS - 66..DAYS).filter_map(|t| Some((day(t), market.at(t)?))));
    let replay = Replay::run(market_only(&young), day(DAYS - 10), day(DAYS - 1));
    assert_eq!(replay.days, 9);
    assert!(replay.accuracy().blend.iter().all(Option::is_none), "{:?}", replay.accuracy().blend);
}

/// A terminal gate price that climbs `per_day` c/L a day from day `from` (flat before).
fn climbing_tgp(from: usize, per_day: f64) -> Daily {
    Daily::new((0..DAYS).map(|t| (day(t), 150.0 + per_day * t.saturating_sub(from) as f64)))
}

#[test]
fn a_cycling_market_takes_up_a_quarter_of_the_tgp_weeks_change_by_day_seven() {
    let (market, _) = panel(DAYS);
    let basis = day(600);
    let plain = market_only(&market).outlook(basis, MAX_HORIZON).expect("outlook");
    assert!(!plain.read_wholesale());
    // Flat TGP: read, but it adds nothing.
    let flat = climbing_tgp(DAYS, 0.0);
    let subject = Subject { wholesale: Some(&flat), ..market_only(&market) };
    let read = subject.outlook(basis, MAX_HORIZON).expect("outlook");
    assert!(read.read_wholesale());
    assert_eq!(read.parts(6), plain.parts(6));
    // 1 c/L a day for the week to the basis: 7 c/L, a quarter of it by day +7, a seventh of
    // that a day.
    let rising = climbing_tgp(580, 1.0);
    let subject = Subject { wholesale: Some(&rising), ..market_only(&market) };
    let moved = subject.outlook(basis, MAX_HORIZON).expect("outlook");
    for step in 0..MAX_HORIZON {
        let ((m0, p0), (m1, p1)) = (plain.parts(step).expect("day"), moved.parts(step).expect("day"));
        let added = LEVEL_KEPT * 7.0 * (step + 1) as f64 / 7.0;
        assert!((m1 - m0 - added).abs() < 1e-9 && (p1 - p0 - added).abs() < 1e-9, "day +{}", step + 1);
    }
}

#[test]
fn the_tgp_after_the_basis_is_never_read() {
    let (market, _) = panel(DAYS);
    let basis = day(600);
    // Two TGPs equal up to the basis, apart after it.
    let before = climbing_tgp(590, 0.5);
    let after = Daily::new(
        (0..DAYS).map(|t| (day(t), before.get(day(t)).expect("day") + if t > 600 { 40.0 } else { 0.0 })),
    );
    let a = Subject { wholesale: Some(&before), ..market_only(&market) }.outlook(basis, MAX_HORIZON);
    let b = Subject { wholesale: Some(&after), ..market_only(&market) }.outlook(basis, MAX_HORIZON);
    assert_eq!(a, b);
    let replays = [&before, &after].map(|tgp| {
        Replay::run(Subject { wholesale: Some(tgp), ..market_only(&market) }, day(560), day(600)).accuracy()
    });
    assert_eq!(replays[0], replays[1]);
}

#[test]
fn a_stale_tgp_is_not_read() {
    let (market, _) = panel(DAYS);
    // The TGP's last reading is five days before the basis.
    let old = Daily::new((0..596).map(|t| (day(t), 150.0 + t as f64)));
    let subject = Subject { wholesale: Some(&old), ..market_only(&market) };
    assert!(!subject.outlook(day(600), MAX_HORIZON).expect("outlook").read_wholesale());
    assert!(subject.outlook(day(598), MAX_HORIZON).expect("outlook").read_wholesale());
}
