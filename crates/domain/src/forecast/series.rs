//! The daily series a forecast reads: consecutive dates, a price or a gap each.

use super::*;

/// A daily series on consecutive dates (cents); `None` where a day has no price.
#[derive(Debug, Clone, PartialEq)]
pub struct Daily {
    pub(super) start: Date,
    pub(super) values: Vec<Option<f64>>,
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
    pub(super) fn change(&self, i: usize) -> Option<f64> {
        Some(self.at(i)? - self.at(i.checked_sub(1)?)?)
    }
}
