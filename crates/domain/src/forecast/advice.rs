//! The advice: fill now, wait (until which day, saving how much), or either.

use super::*;

/// The least predicted fall (c/L) worth waiting for. Why 1: a smaller fall is within the
/// forecast's own error of a day or two ahead (docs/forecast.md's tables), and saves under
/// 50 c on a 50 L fill: not worth a second trip.
pub const WAIT_MIN_SAVING: f64 = 1.0;

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
pub(super) fn decayed(sum: f64, value: f64) -> f64 {
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
        // A rise already published (tomorrow's prices, from 14:30) is a fact, not a forecast.
        let reason = if rise.known {
            format!("Prices rise {:.1} c/L on {} (published).", saving.abs(), day_name(rise.date))
        } else {
            format!("Prices are likely to rise about {} c/L on {}.", about(saving), day_name(rise.date))
        };
        return Advice { action: Action::FillNow, until: Some(rise.date), saving: Some(saving), reason };
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
    let weekday = crate::site_features::WEEKDAYS[date.weekday().to_monday_zero_offset() as usize];
    format!("{weekday} {}", date.strftime("%-d %B"))
}
