//! Market statistics over daily prices and the price cycle (docs/api.md `/v1/stats`).
//! Pure: prices in integer tenths of a cent in, numbers out. Nothing about Perth's cycle is
//! assumed; its period is found in the data.

use jiff::civil::{Date, Weekday};

use crate::price::Tenths;

/// Shortest and longest cycle period considered, in days.
pub const MIN_PERIOD: usize = 5;
pub const MAX_PERIOD: usize = 21;
/// Fewer days of data than this: no cycle is reported.
pub const MIN_CYCLE_DAYS: usize = 28;
/// Autocorrelation a period needs to count as a cycle.
pub const MIN_STRENGTH: f64 = 0.5;
/// A divisor of the best lag within this much of its autocorrelation is the real period (a
/// weekly cycle also correlates at 14 and 21 days).
const HARMONIC_TOLERANCE: f64 = 0.1;
/// Half-width of the centred window used for the trend (7 days).
const TREND_HALF_WINDOW: i64 = 3;

/// One day's distribution of station prices (tenths of a cent in, cents out).
#[derive(Debug, Clone, PartialEq)]
pub struct DayStats {
    pub date: Date,
    pub stations: usize,
    pub min: f64,
    pub p10: f64,
    pub median: f64,
    pub mean: f64,
    pub p90: f64,
    pub max: f64,
    /// Up to three station ids at the minimum, ascending.
    pub cheapest: Vec<String>,
}

/// The detected price cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct Cycle {
    pub period_days: usize,
    pub last_trough: Date,
    pub last_peak: Date,
    pub cheapest_weekday: Option<Weekday>,
    pub strength: f64,
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Linear-interpolation percentile (`p` in 0…1) of an ascending, non-empty slice.
pub fn percentile(sorted: &[i64], p: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0] as f64,
        n => {
            let rank = p.clamp(0.0, 1.0) * (n - 1) as f64;
            let low = rank.floor() as usize;
            let high = rank.ceil() as usize;
            let frac = rank - low as f64;
            sorted[low] as f64 + (sorted[high] - sorted[low]) as f64 * frac
        }
    }
}

/// One day's figures in whole tenths of a cent, as stored with the day's prices (so that any
/// window's statistics read them instead of the prices): the rounding `DayStats` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayFigures {
    pub stations: usize,
    pub min: i64,
    pub p10: i64,
    pub median: i64,
    pub mean: i64,
    pub p90: i64,
    pub max: i64,
}

impl DayFigures {
    /// The figures of a day's prices, ascending; `None` when there are none.
    pub fn of_sorted(sorted: &[i64]) -> Option<Self> {
        let (&min, &max) = (sorted.first()?, sorted.last()?);
        let sum: i64 = sorted.iter().sum();
        let whole = |x: f64| x.round() as i64;
        Some(DayFigures {
            stations: sorted.len(),
            min,
            p10: whole(percentile(sorted, 0.1)),
            median: whole(percentile(sorted, 0.5)),
            mean: whole(sum as f64 / sorted.len() as f64),
            p90: whole(percentile(sorted, 0.9)),
            max,
        })
    }

    /// The figures of a day's (station, tenths) prices, with every station at the minimum,
    /// ascending; `None` when there are none. The one place a day's figures are computed,
    /// whether stations are named by id (statistics) or by sid (the store).
    pub fn of_prices<K: Ord + Copy>(prices: impl IntoIterator<Item = (K, i64)>) -> Option<(Self, Vec<K>)> {
        let prices: Vec<(K, i64)> = prices.into_iter().collect();
        let mut sorted: Vec<i64> = prices.iter().map(|(_, p)| *p).collect();
        sorted.sort_unstable();
        let figures = Self::of_sorted(&sorted)?;
        let mut cheapest: Vec<K> =
            prices.iter().filter(|(_, p)| *p == figures.min).map(|(k, _)| *k).collect();
        cheapest.sort_unstable();
        Some((figures, cheapest))
    }

    /// The day's row, with up to three of the stations at its minimum (ascending by id).
    pub fn stats(&self, date: Date, mut cheapest: Vec<String>) -> DayStats {
        cheapest.sort();
        cheapest.truncate(3);
        DayStats {
            date,
            stations: self.stations,
            min: Tenths(self.min).cents(),
            p10: Tenths(self.p10).cents(),
            median: Tenths(self.median).cents(),
            mean: Tenths(self.mean).cents(),
            p90: Tenths(self.p90).cents(),
            max: Tenths(self.max).cents(),
            cheapest,
        }
    }
}

/// One day's statistics from (station id, price in tenths) pairs. `None` when empty.
pub fn day_stats(date: Date, prices: &[(&str, i64)]) -> Option<DayStats> {
    let (figures, cheapest) = DayFigures::of_prices(prices.iter().copied())?;
    Some(figures.stats(date, cheapest.into_iter().map(str::to_string).collect()))
}

/// The daily series on consecutive dates from the first to the last day with data; `None`
/// where a day has no data (missed days are never invented).
fn dense(series: &[(Date, f64)]) -> Vec<(Date, Option<f64>)> {
    let (Some(first), Some(last)) = (series.first(), series.last()) else { return Vec::new() };
    let mut out = Vec::new();
    let mut d = first.0;
    let mut values = series.iter().peekable();
    while d <= last.0 {
        let value = match values.peek() {
            Some((day, v)) if *day == d => {
                let v = *v;
                values.next();
                Some(v)
            }
            _ => None,
        };
        out.push((d, value));
        match d.tomorrow() {
            Ok(next) => d = next,
            Err(_) => break,
        }
    }
    out
}

/// Each day's value minus the median of its 7-day centred window (days with data only).
fn deviations(dense: &[(Date, Option<f64>)]) -> Vec<Option<f64>> {
    (0..dense.len())
        .map(|i| {
            let value = dense[i].1?;
            let lo = i.saturating_sub(TREND_HALF_WINDOW as usize);
            let hi = (i + TREND_HALF_WINDOW as usize).min(dense.len() - 1);
            let mut window: Vec<f64> = dense[lo..=hi].iter().filter_map(|(_, v)| *v).collect();
            window.sort_by(f64::total_cmp);
            let n = window.len();
            let median = if n % 2 == 1 { window[n / 2] } else { (window[n / 2 - 1] + window[n / 2]) / 2.0 };
            Some(value - median)
        })
        .collect()
}

/// For each weekday with data (Monday first), the mean of (that day's median − the median of
/// its 7-day centred window), in cents with one decimal.
pub fn weekday_offsets(medians: &[(Date, f64)]) -> Vec<(Weekday, f64)> {
    let dense = dense(medians);
    let devs = deviations(&dense);
    let mut sums = [(0.0f64, 0usize); 7];
    for ((date, _), dev) in dense.iter().zip(&devs) {
        if let Some(d) = dev {
            let i = date.weekday().to_monday_zero_offset() as usize;
            sums[i].0 += d;
            sums[i].1 += 1;
        }
    }
    let mut out = Vec::new();
    for (i, (sum, n)) in sums.iter().enumerate() {
        if *n > 0 {
            let weekday = Weekday::from_monday_zero_offset(i as i8).unwrap_or(Weekday::Monday);
            out.push((weekday, round1(sum / *n as f64)));
        }
    }
    out
}

/// Pearson correlation of the series with itself `lag` days later, over the pairs where
/// both days have data. `None` with fewer than three pairs or no variance.
pub fn autocorrelation(series: &[Option<f64>], lag: usize) -> Option<f64> {
    let pairs: Vec<(f64, f64)> =
        series.iter().zip(series.iter().skip(lag)).filter_map(|(a, b)| Some(((*a)?, (*b)?))).collect();
    if pairs.len() < 3 {
        return None;
    }
    let n = pairs.len() as f64;
    let (ma, mb) = (pairs.iter().map(|p| p.0).sum::<f64>() / n, pairs.iter().map(|p| p.1).sum::<f64>() / n);
    let (mut cov, mut va, mut vb) = (0.0, 0.0, 0.0);
    for (a, b) in &pairs {
        cov += (a - ma) * (b - mb);
        va += (a - ma) * (a - ma);
        vb += (b - mb) * (b - mb);
    }
    if va <= f64::EPSILON || vb <= f64::EPSILON {
        return None;
    }
    Some(cov / (va * vb).sqrt())
}

/// The period (5…21 days) of the detrended series with the highest autocorrelation, if it
/// reaches [`MIN_STRENGTH`]; a divisor lag nearly as strong wins (the fundamental).
pub fn best_period(detrended: &[Option<f64>]) -> Option<(usize, f64)> {
    let scores: Vec<(usize, f64)> =
        (MIN_PERIOD..=MAX_PERIOD).filter_map(|lag| Some((lag, autocorrelation(detrended, lag)?))).collect();
    let &(mut lag, mut r) = scores.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    if r < MIN_STRENGTH {
        return None;
    }
    // Prefer the smallest divisor of the best lag that is almost as strong.
    for &(d, rd) in &scores {
        if d < lag && lag % d == 0 && rd >= r - HARMONIC_TOLERANCE && rd >= MIN_STRENGTH {
            (lag, r) = (d, rd);
            break;
        }
    }
    Some((lag, r))
}

/// The cycle of a daily median series (ascending dates, cents), or `None`.
pub fn detect_cycle(medians: &[(Date, f64)]) -> Option<Cycle> {
    if medians.len() < MIN_CYCLE_DAYS {
        return None;
    }
    let dense = dense(medians);
    let detrended = deviations(&dense);
    let (period, strength) = best_period(&detrended)?;
    // The last peak and trough: extremes of the detrended series within the last period.
    let recent: Vec<(Date, f64)> =
        dense.iter().zip(&detrended).rev().take(period).filter_map(|((d, _), v)| Some((*d, (*v)?))).collect();
    // `recent` is newest first, so ties go to the latest date.
    let last_peak = recent.iter().fold(None::<(Date, f64)>, |best, &(d, v)| match best {
        Some((_, bv)) if bv >= v => best,
        _ => Some((d, v)),
    })?;
    let last_trough = recent.iter().fold(None::<(Date, f64)>, |best, &(d, v)| match best {
        Some((_, bv)) if bv <= v => best,
        _ => Some((d, v)),
    })?;
    let cheapest_weekday =
        weekday_offsets(medians).into_iter().min_by(|a, b| a.1.total_cmp(&b.1)).map(|(w, _)| w);
    Some(Cycle {
        period_days: period,
        last_trough: last_trough.0,
        last_peak: last_peak.0,
        cheapest_weekday,
        strength: (strength * 100.0).round() / 100.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn days(n: usize, f: impl Fn(usize) -> f64) -> Vec<(Date, f64)> {
        let start = date(2026, 6, 1);
        (0..n).map(|i| (start.checked_add(jiff::Span::new().days(i as i64)).expect("date"), f(i))).collect()
    }

    /// Deterministic, aperiodic noise in ±1.5 cents (splitmix64 of the day index).
    fn noise(i: usize) -> f64 {
        let mut z = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 59) as f64 / 10.0 - 1.55
    }

    /// A sharp rise every `period` days, then a slow fall, plus a little noise.
    fn sawtooth(period: usize, i: usize) -> f64 {
        let phase = i % period;
        200.0 + 30.0 - 30.0 * phase as f64 / (period - 1) as f64 + noise(i)
    }

    #[test]
    fn percentiles_interpolate() {
        let v = [10, 20, 30, 40, 50];
        assert_eq!(percentile(&v, 0.5), 30.0);
        assert_eq!(percentile(&v, 0.1), 14.0);
        assert_eq!(percentile(&v, 0.9), 46.0);
        assert_eq!(percentile(&[7], 0.9), 7.0);
    }

    #[test]
    fn day_statistics() {
        let d = date(2026, 11, 20);
        let prices = [("c", 1899), ("a", 1799), ("b", 1799), ("d", 2001), ("e", 1799), ("f", 1850)];
        let s = day_stats(d, &prices).expect("stats");
        assert_eq!(s.stations, 6);
        assert_eq!(s.min, 179.9);
        assert_eq!(s.max, 200.1);
        assert_eq!(s.median, 182.5); // (1799 + 1850) / 2 = 1824.5 tenths → 182.5 (half up)
        assert_eq!(s.mean, 185.8); // 11147 / 6 = 1857.83
        assert_eq!(s.cheapest, vec!["a", "b", "e"]);
        assert!(day_stats(d, &[]).is_none());
    }

    #[test]
    fn a_fortnightly_sawtooth_is_fourteen_days() {
        let series = days(90, |i| sawtooth(14, i));
        let cycle = detect_cycle(&series).expect("cycle");
        assert_eq!(cycle.period_days, 14);
        assert!(cycle.strength >= 0.5);
        // Rises happen on days 0, 14, …, 84 (index 84 = the last rise).
        assert_eq!(cycle.last_peak, series[84].0);
        assert_eq!(cycle.last_trough, series[83].0);
    }

    #[test]
    fn a_weekly_cycle_is_seven_days_not_its_harmonics() {
        let series = days(120, |i| sawtooth(7, i));
        assert_eq!(detect_cycle(&series).expect("cycle").period_days, 7);
    }

    #[test]
    fn a_known_ten_day_series() {
        let series = days(60, |i| sawtooth(10, i) + i as f64 * 0.05);
        assert_eq!(detect_cycle(&series).expect("cycle").period_days, 10);
    }

    #[test]
    fn a_flat_or_drifting_series_has_no_cycle() {
        assert!(detect_cycle(&days(90, |_| 180.0)).is_none());
        // Slow drift with noise (diesel-like): no period reaches the threshold.
        let drift = days(90, |i| 190.0 + (i as f64 / 15.0).sin() * 4.0 + noise(i));
        assert!(detect_cycle(&drift).is_none());
    }

    #[test]
    fn too_few_days_have_no_cycle() {
        assert!(detect_cycle(&days(27, |i| sawtooth(7, i))).is_none());
    }

    #[test]
    fn weekday_offsets_find_the_cheap_day() {
        // Weekly: highest on the rise day, cheapest the day before it.
        let series = days(56, |i| sawtooth(7, i));
        let offsets = weekday_offsets(&series);
        assert_eq!(offsets.len(), 7);
        let rise = series[0].0.weekday();
        let cheapest = offsets.iter().min_by(|a, b| a.1.total_cmp(&b.1)).expect("some").0;
        assert_eq!(cheapest, rise.previous());
        let highest = offsets.iter().max_by(|a, b| a.1.total_cmp(&b.1)).expect("some").0;
        assert_eq!(highest, rise);
    }

    #[test]
    fn gaps_are_not_invented() {
        let mut series = days(90, |i| sawtooth(14, i));
        series.retain(|(d, _)| d.day() != 10); // three missing days
        assert_eq!(detect_cycle(&series).expect("cycle").period_days, 14);
    }
}

/// The market over a range: statistics per day, weekday offsets and the cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct Market {
    /// One row per day, or per week or month (`Interval`), dated by its first day.
    pub days: Vec<DayStats>,
    pub weekdays: Vec<(Weekday, f64)>,
    pub cycle: Option<Cycle>,
}

impl Market {
    /// The market of each day's (stationId, price in tenths) pairs, days ascending.
    pub fn of_days(by_day: &[(Date, Vec<(&str, i64)>)]) -> Self {
        Self::of_stats(by_day.iter().filter_map(|(d, prices)| day_stats(*d, prices)).collect())
    }

    /// The market of day rows, days ascending.
    pub fn of_stats(days: Vec<DayStats>) -> Self {
        let medians: Vec<(Date, f64)> = days.iter().map(|d| (d.date, d.median)).collect();
        Self::with_medians(days, &medians)
    }

    /// Rows, with the weekday pattern and cycle of a daily median series (ascending).
    pub fn with_medians(days: Vec<DayStats>, medians: &[(Date, f64)]) -> Self {
        Market { weekdays: weekday_offsets(medians), cycle: detect_cycle(medians), days }
    }
}

/// How `/v1/stats` groups days.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Interval {
    #[default]
    Day,
    /// ISO weeks (Monday first).
    Week,
    /// Calendar months.
    Month,
}

impl Interval {
    /// The first day of the period holding `date`.
    pub fn start(self, date: Date) -> Date {
        match self {
            Interval::Day => date,
            Interval::Week => {
                let back = i64::from(date.weekday().to_monday_zero_offset());
                date.checked_sub(jiff::Span::new().days(back)).unwrap_or(date)
            }
            Interval::Month => date.first_of_month(),
        }
    }

    /// The last day of the period that starts on `start`.
    pub fn end(self, start: Date) -> Date {
        match self {
            Interval::Day => start,
            Interval::Week => start.checked_add(jiff::Span::new().days(6)).unwrap_or(start),
            Interval::Month => start.last_of_month(),
        }
    }
}

/// Days folded into week or month rows: `min`/`max` are the period's extremes, `p10`,
/// `median`, `mean` and `p90` the means of its daily values, `stations` the distinct stations
/// priced in it, `cheapest` up to three stations at its minimum. The daily medians of the
/// last `cycle_days` days are kept for the cycle and the weekday pattern.
pub struct Periods {
    interval: Interval,
    rows: Vec<DayStats>,
    current: Option<Period>,
    medians: std::collections::VecDeque<(Date, f64)>,
    cycle_days: usize,
}

struct Period {
    start: Date,
    figures: PeriodFigures,
    cheapest: std::collections::BTreeSet<String>,
    stations: std::collections::HashSet<String>,
}

/// A week's or month's figures in whole tenths of a cent, as stored with its days: the sums of
/// its days' p10, median, mean and p90 (their means are the period's) and its extremes.
/// Integer sums make the period's row the same whether it is folded from its days or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PeriodFigures {
    pub days: i64,
    pub sums: [i64; 4],
    pub min: i64,
    pub max: i64,
}

impl PeriodFigures {
    /// Add a day; how its minimum compares with the period's before it (`Less` for the first
    /// day), which says whether its cheapest stations replace, join or miss the period's.
    pub fn add(&mut self, day: &DayFigures) -> std::cmp::Ordering {
        let order = if self.days == 0 { std::cmp::Ordering::Less } else { day.min.cmp(&self.min) };
        if self.days == 0 {
            (self.min, self.max) = (day.min, day.max);
        }
        self.days += 1;
        for (sum, value) in self.sums.iter_mut().zip([day.p10, day.median, day.mean, day.p90]) {
            *sum += value;
        }
        self.min = self.min.min(day.min);
        self.max = self.max.max(day.max);
        order
    }

    /// The period's row, dated by its first day, with up to three of its cheapest stations.
    pub fn stats(&self, start: Date, stations: usize, mut cheapest: Vec<String>) -> DayStats {
        cheapest.sort();
        cheapest.truncate(3);
        let days = self.days.max(1) as f64;
        let mean = |i: usize| round1(self.sums[i] as f64 / 10.0 / days);
        DayStats {
            date: start,
            stations,
            min: self.min as f64 / 10.0,
            p10: mean(0),
            median: mean(1),
            mean: mean(2),
            p90: mean(3),
            max: self.max as f64 / 10.0,
            cheapest,
        }
    }
}

impl Periods {
    pub fn new(interval: Interval, cycle_days: usize) -> Self {
        Self { interval, rows: Vec::new(), current: None, medians: Default::default(), cycle_days }
    }

    /// Add one day's (station id, tenths) pairs; days must come in ascending order.
    pub fn add(&mut self, date: Date, prices: &[(&str, i64)]) {
        let Some((figures, mut cheapest)) = DayFigures::of_prices(prices.iter().copied()) else { return };
        cheapest.truncate(3);
        self.add_day(date, &figures, cheapest.into_iter().map(str::to_string));
        // A station is priced on most days of its period: allocate its id once per period.
        if let Some(period) = self.current.as_mut() {
            for (id, _) in prices {
                if !period.stations.contains(*id) {
                    period.stations.insert((*id).to_string());
                }
            }
        }
    }

    /// Add one day's figures and (some of) its stations at the minimum (its three first are
    /// enough: the period's three are among its days' threes); days must come in ascending
    /// order. The stations it priced are not known from figures: the period's `stations` then
    /// counts only what [`add`](Self::add) brought, and the caller sets it.
    pub fn add_day(&mut self, date: Date, figures: &DayFigures, cheapest: impl IntoIterator<Item = String>) {
        self.medians.push_back((date, figures.median as f64 / 10.0));
        while self.medians.len() > self.cycle_days {
            self.medians.pop_front();
        }
        let start = self.interval.start(date);
        if self.current.as_ref().is_some_and(|p| p.start != start) {
            self.close();
        }
        let period = self.current.get_or_insert_with(|| Period {
            start,
            figures: PeriodFigures::default(),
            cheapest: Default::default(),
            stations: Default::default(),
        });
        match period.figures.add(figures) {
            std::cmp::Ordering::Less => {
                period.cheapest.clear();
                period.cheapest.extend(cheapest);
            }
            std::cmp::Ordering::Equal => period.cheapest.extend(cheapest),
            std::cmp::Ordering::Greater => {}
        }
    }

    fn close(&mut self) {
        let Some(p) = self.current.take() else { return };
        self.rows.push(p.figures.stats(p.start, p.stations.len(), p.cheapest.into_iter().collect()));
    }

    /// The rows, with the cycle and weekday pattern of the kept daily medians.
    pub fn finish(mut self) -> Market {
        self.close();
        let medians: Vec<(Date, f64)> = self.medians.into_iter().collect();
        Market::with_medians(self.rows, &medians)
    }
}

#[cfg(test)]
mod period_tests {
    use super::*;
    use jiff::civil::date;

    #[test]
    fn weeks_and_months_fold_their_days() {
        assert_eq!(
            Interval::Week.start(date(2026, 11, 22)),
            date(2026, 11, 16),
            "a Sunday is in Monday's week"
        );
        assert_eq!(Interval::Week.start(date(2026, 11, 16)), date(2026, 11, 16));
        assert_eq!(Interval::Month.start(date(2026, 11, 22)), date(2026, 11, 1));
        let mut periods = Periods::new(Interval::Month, 365);
        periods.add(date(2026, 10, 31), &[("a", 1900), ("b", 2000)]);
        periods.add(date(2026, 11, 1), &[("a", 1800), ("b", 2000)]);
        periods.add(date(2026, 11, 2), &[("b", 1800), ("c", 2200)]);
        let market = periods.finish();
        assert_eq!(market.days.len(), 2);
        let (oct, nov) = (&market.days[0], &market.days[1]);
        assert_eq!((oct.date, oct.stations, oct.min, oct.max), (date(2026, 10, 1), 2, 190.0, 200.0));
        assert_eq!((nov.date, nov.stations), (date(2026, 11, 1), 3), "distinct stations of the month");
        assert_eq!((nov.min, nov.max), (180.0, 220.0), "the month's extremes");
        assert_eq!(nov.cheapest, vec!["a".to_string(), "b".to_string()], "every station at the minimum");
        assert_eq!(nov.median, 195.0, "the mean of the daily medians 190 and 200");
    }
}
