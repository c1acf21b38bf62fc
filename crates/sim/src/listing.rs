//! FuelWatch's file lists and file names, written from FuelWatch's own forms (its historical
//! reports: `GET /api/report/historical-prices` and `GET /api/report/terminal-gate-prices`,
//! each a JSON array of `{"fileName","fileDate","bytes","url"}`), never from the importer's
//! types, so a mistake in the importer's reading is not copied here.

use serde::Serialize;

/// One file of a list, as FuelWatch writes it: e.g.
/// `{"fileName":"FuelWatchWholesale-2026.csv","fileDate":"2026-04-22T23:59:59+08:00",
/// "bytes":412545,"url":"https://…/historical-reports/FuelWatchWholesale-2026.csv"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedFile {
    pub file_name: String,
    pub file_date: String,
    pub bytes: u64,
    pub url: String,
}

/// FuelWatch's first monthly retail file: January 2001.
pub const FIRST_MONTH: (i16, i8) = (2001, 1);

/// A month's retail file name: `FuelWatchRetail-MM-YYYY.csv`.
pub fn month_file(year: i16, month: i8) -> String {
    format!("FuelWatchRetail-{month:02}-{year:04}.csv")
}

/// The month a retail file name names (`FuelWatchRetail-MM-YYYY.csv`).
pub fn month_of_file(name: &str) -> Option<(i16, i8)> {
    let rest = name.strip_prefix("FuelWatchRetail-")?.strip_suffix(".csv")?;
    let (month, year) = rest.split_once('-')?;
    let (month, year): (i8, i16) = (month.parse().ok()?, year.parse().ok()?);
    ((1..=12).contains(&month) && month_digits(rest)).then_some((year, month))
}

/// `MM-YYYY` written with two and four digits, as FuelWatch names its files.
fn month_digits(text: &str) -> bool {
    text.len() == 7 && text.as_bytes()[2] == b'-'
}

/// The year a yearly wholesale file name names (`FuelWatchWholesale-YYYY.csv`).
pub fn year_of_file(name: &str) -> Option<i16> {
    let year = name.strip_prefix("FuelWatchWholesale-")?.strip_suffix(".csv")?;
    (year.len() == 4).then(|| year.parse().ok()).flatten()
}

/// Every month from `from` to `to`, both included.
pub fn months(from: (i16, i8), to: (i16, i8)) -> impl Iterator<Item = (i16, i8)> {
    std::iter::successors(Some(from), |&(y, m)| Some(if m == 12 { (y + 1, 1) } else { (y, m + 1) }))
        .take_while(move |month| *month <= to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_as_fuelwatch_writes_them() {
        assert_eq!(month_file(2026, 3), "FuelWatchRetail-03-2026.csv");
        assert_eq!(month_of_file("FuelWatchRetail-03-2026.csv"), Some((2026, 3)));
        assert_eq!(month_of_file("FuelWatchRetail-13-2026.csv"), None);
        assert_eq!(month_of_file("FuelWatchRetail-3-2026.csv"), None);
        assert_eq!(year_of_file("FuelWatchWholesale-2026.csv"), Some(2026));
        assert_eq!(year_of_file("FuelWatchWholesale-26.csv"), None);
        let spanned: Vec<_> = months((2025, 11), (2026, 2)).collect();
        assert_eq!(spanned, [(2025, 11), (2025, 12), (2026, 1), (2026, 2)]);
    }
}
