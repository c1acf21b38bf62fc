//! When a station's price of a fuel last changed, and what it was before: from its stored
//! daily prices, kept per station as the runs of equal prices (newest first), so each answer
//! reads one short list instead of the history.

use jiff::civil::Date;

/// A station's recent prices of one fuel as runs of one price (tenths of a cent), newest
/// first: each run's first day and its price.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runs(Vec<(Date, i64)>);

impl Runs {
    /// The runs of a station's daily prices given oldest first (days without a price are
    /// skipped: a gap does not end a run).
    pub fn of(prices: impl IntoIterator<Item = (Date, i64)>) -> Self {
        let mut runs: Vec<(Date, i64)> = Vec::new();
        for (day, price) in prices {
            if runs.last().is_none_or(|(_, p)| *p != price) {
                runs.push((day, price));
            }
        }
        runs.reverse();
        Runs(runs)
    }

    /// The latest change up to `day`, whose price is `price` (tenths): the day the current
    /// price began and the price before it. `self` holds the days before `day` only. `None`
    /// when the stored days do not reach a change.
    pub fn last_change(&self, day: Date, price: i64) -> Option<(Date, i64)> {
        let mut runs = self.0.iter().filter(|(d, _)| *d < day);
        let (start, latest) = *runs.next()?;
        if latest != price {
            return Some((day, latest));
        }
        let (_, before) = *runs.next()?;
        Some((start, before))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn d(n: i8) -> Date {
        date(2026, 9, n)
    }

    #[test]
    fn the_last_change_is_the_first_day_of_the_current_price() {
        let runs = Runs::of([(d(1), 1899), (d(2), 1899), (d(3), 1959), (d(4), 1959), (d(5), 1949)]);
        // 6 September at 194.9, as on the 5th: it changed on the 5th, from 195.9.
        assert_eq!(runs.last_change(d(6), 1949), Some((d(5), 1959)));
        // At 192.9 on the 6th: it changed that day, from 194.9.
        assert_eq!(runs.last_change(d(6), 1929), Some((d(6), 1949)));
        // Asked for the 4th: only the days before it are read.
        assert_eq!(runs.last_change(d(4), 1959), Some((d(3), 1899)));
        // One price all along: the stored days do not reach a change.
        assert_eq!(Runs::of([(d(1), 1899), (d(2), 1899)]).last_change(d(3), 1899), None);
        assert_eq!(Runs::default().last_change(d(3), 1899), None);
        // A day without a price does not end a run.
        let gap = Runs::of([(d(1), 1800), (d(2), 1899), (d(4), 1899)]);
        assert_eq!(gap.last_change(d(5), 1899), Some((d(2), 1800)));
    }
}
