//! Is a station open at a Perth time, and when does it next close and open: from its
//! `is24Hours` and `openHours` (per weekday `HH:MM-HH:MM[,…]`, `Closed`, or unknown; an
//! interval whose end is before its start runs past midnight into the next day). A day whose
//! hours are unknown is never read as closed: what it would decide is unknown (`None`).

use jiff::civil::{Date, DateTime, Time};

use super::site_features::{CLOSED, WeekHours};

/// Days read after the instant for the next opening or closing (a week and a day: every
/// weekday once, and a closing past midnight at its end).
const AHEAD_DAYS: i64 = 8;
const DAY_MINUTES: i64 = 24 * 60;

/// Whether a station is open at an instant, and its next changes (by default unknown).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenState {
    /// Open (true), closed (false) or unknown (`None`): never false for unknown hours.
    pub open: Option<bool>,
    /// The next closing after the instant, when known within a week.
    pub closes_at: Option<DateTime>,
    /// The next opening after the instant, when known within a week.
    pub opens_at: Option<DateTime>,
}

impl OpenState {
    const UNKNOWN: OpenState = OpenState { open: None, closes_at: None, opens_at: None };

    /// The first change after the instant (what ends the answer's truth), if any.
    pub fn next_change(&self) -> Option<DateTime> {
        match (self.closes_at, self.opens_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// A day's intervals in minutes from its midnight (`Some(empty)` when closed), `None` when
/// unknown or unreadable.
fn day_intervals(text: Option<&str>) -> Option<Vec<(i64, i64)>> {
    let text = text?;
    if text == CLOSED {
        return Some(Vec::new());
    }
    text.split(',')
        .map(|interval| {
            let (start, end) = interval.split_once('-')?;
            let (s, e) = (clock(start)?, clock(end)?);
            // An end at or before the start runs past midnight ("18:00-02:00").
            Some((s, if e <= s { e + DAY_MINUTES } else { e }))
        })
        .collect()
}

/// `HH:MM` as minutes after midnight (24:00 is 1,440).
fn clock(text: &str) -> Option<i64> {
    let (h, m) = text.trim().split_once(':')?;
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    ((0..=24).contains(&h) && (0..60).contains(&m)).then_some(h * 60 + m)
}

fn weekday_index(date: Date) -> usize {
    usize::try_from(date.weekday().to_monday_zero_offset()).unwrap_or(0)
}

fn at_minute(base: Date, minutes: i64) -> Option<DateTime> {
    let day = base.checked_add(jiff::Span::new().days(minutes.div_euclid(DAY_MINUTES))).ok()?;
    let m = minutes.rem_euclid(DAY_MINUTES);
    Some(day.to_datetime(Time::new(i8::try_from(m / 60).ok()?, i8::try_from(m % 60).ok()?, 0, 0).ok()?))
}

/// The open state of a station at `at` (Perth civil time).
pub fn open_state(is_24_hours: Option<bool>, hours: Option<&WeekHours>, at: DateTime) -> OpenState {
    if is_24_hours == Some(true) {
        return OpenState { open: Some(true), closes_at: None, opens_at: None };
    }
    let Some(hours) = hours else { return OpenState::UNKNOWN };
    let base = at.date();
    let now = i64::from(at.hour()) * 60 + i64::from(at.minute());
    // Intervals from the day before (a closing past midnight reaches today) to a week on, in
    // minutes from `base`'s midnight. `known_until`: where the first unknown day from today
    // on begins (nothing from there is known); an unknown day before leaves today's small
    // hours unknown unless today's own hours cover them.
    let mut intervals: Vec<(i64, i64)> = Vec::new();
    let mut known_until = (AHEAD_DAYS + 1) * DAY_MINUTES;
    let mut yesterday_unknown = false;
    for offset in -1..=AHEAD_DAYS {
        let Ok(day) = base.checked_add(jiff::Span::new().days(offset)) else { break };
        let shift = offset * DAY_MINUTES;
        match day_intervals(hours[weekday_index(day)].as_deref()) {
            Some(list) => intervals.extend(list.into_iter().map(|(s, e)| (s + shift, e + shift))),
            None if offset < 0 => yesterday_unknown = true,
            None => {
                known_until = shift;
                break;
            }
        }
    }
    intervals.sort_unstable();
    // Merged runs: touching or overlapping intervals are one stretch of opening.
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for (s, e) in intervals {
        match runs.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => runs.push((s, e)),
        }
    }
    let inside = runs.iter().find(|(s, e)| *s <= now && now < *e);
    // Not inside a known opening: closed only if today is known and the day before could
    // not be running past midnight.
    if inside.is_none() && (known_until == 0 || yesterday_unknown) {
        return OpenState::UNKNOWN;
    }
    let known = |m: i64| (m < known_until).then(|| at_minute(base, m)).flatten();
    match inside {
        Some(&(_, end)) => OpenState {
            open: Some(true),
            // A run reaching the end of what is known may go on: unknown.
            closes_at: (end < known_until).then(|| known(end)).flatten(),
            opens_at: runs.iter().find(|(s, _)| *s > end).and_then(|(s, _)| known(*s)),
        },
        None => {
            let next = runs.iter().find(|(s, _)| *s > now);
            OpenState {
                open: Some(false),
                opens_at: next.and_then(|(s, _)| known(*s)),
                closes_at: next.and_then(|(_, e)| (*e < known_until).then(|| known(*e)).flatten()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn week(days: [&str; 7]) -> WeekHours {
        days.map(|d| (!d.is_empty()).then(|| d.to_string()))
    }

    fn at(d: i8, h: i8, m: i8) -> DateTime {
        // 30 November 2026 is a Monday.
        date(2026, 11, 30).checked_add(jiff::Span::new().days(i64::from(d))).expect("day").at(h, m, 0, 0)
    }

    #[test]
    fn a_day_shop_is_open_in_its_hours_and_says_when_it_closes_and_opens() {
        let hours = week(["06:00-21:00"; 7]);
        let s = open_state(Some(false), Some(&hours), at(0, 12, 0));
        assert_eq!(
            s,
            OpenState { open: Some(true), closes_at: Some(at(0, 21, 0)), opens_at: Some(at(1, 6, 0)) }
        );
        let s = open_state(None, Some(&hours), at(0, 22, 30));
        assert_eq!(
            s,
            OpenState { open: Some(false), opens_at: Some(at(1, 6, 0)), closes_at: Some(at(1, 21, 0)) }
        );
        // At the closing minute it is closed; at the opening minute open.
        assert_eq!(open_state(None, Some(&hours), at(0, 21, 0)).open, Some(false));
        assert_eq!(open_state(None, Some(&hours), at(0, 6, 0)).open, Some(true));
    }

    #[test]
    fn a_closing_past_midnight_keeps_the_night_open_into_the_next_day() {
        let hours = week(["06:00-02:00"; 7]);
        let s = open_state(None, Some(&hours), at(1, 1, 30));
        assert_eq!(s.open, Some(true), "Monday's hours reach 01:30 on Tuesday");
        assert_eq!(s.closes_at, Some(at(1, 2, 0)));
        assert_eq!(s.opens_at, Some(at(1, 6, 0)));
    }

    #[test]
    fn sunday_night_reaches_monday_and_closed_days_are_skipped() {
        let hours = week(["07:00-19:00", CLOSED, CLOSED, CLOSED, CLOSED, "08:00-12:00", "20:00-01:00"]);
        // Sunday 6 December 23:00: open until Monday 01:00, then Monday 07:00.
        let s = open_state(None, Some(&hours), at(6, 23, 0));
        assert_eq!(
            s,
            OpenState { open: Some(true), closes_at: Some(at(7, 1, 0)), opens_at: Some(at(7, 7, 0)) }
        );
        // Monday 1 December 20:00: closed until Saturday 08:00.
        let s = open_state(None, Some(&hours), at(0, 20, 0));
        assert_eq!(
            s,
            OpenState { open: Some(false), opens_at: Some(at(5, 8, 0)), closes_at: Some(at(5, 12, 0)) }
        );
    }

    #[test]
    fn unknown_hours_are_never_closed() {
        assert_eq!(open_state(None, None, at(0, 3, 0)), OpenState::UNKNOWN);
        assert_eq!(open_state(Some(false), None, at(0, 3, 0)).open, None);
        // Monday unknown: Monday is unknown.
        let hours = week([
            "",
            "06:00-21:00",
            "06:00-21:00",
            "06:00-21:00",
            "06:00-21:00",
            "06:00-21:00",
            "06:00-21:00",
        ]);
        assert_eq!(open_state(None, Some(&hours), at(0, 12, 0)).open, None);
        // Sunday known and closed at 22:00, Monday unknown: closed, the next opening unknown.
        let s = open_state(None, Some(&hours), at(6, 22, 0));
        assert_eq!(s, OpenState { open: Some(false), opens_at: None, closes_at: None });
        // Open on Saturday at noon: it closes at 21:00 and opens on Sunday.
        let s = open_state(None, Some(&hours), at(5, 12, 0));
        assert_eq!((s.open, s.closes_at, s.opens_at), (Some(true), Some(at(5, 21, 0)), Some(at(6, 6, 0))));
        // Open 24 hours: open, no change ahead.
        assert_eq!(
            open_state(Some(true), None, at(0, 3, 0)),
            OpenState { open: Some(true), closes_at: None, opens_at: None }
        );
        let whole = week(["00:00-24:00"; 7]);
        assert_eq!(
            open_state(None, Some(&whole), at(0, 3, 0)),
            OpenState { open: Some(true), closes_at: None, opens_at: None }
        );
    }
}
