//! How history is written in the database: days as `YYYYMMDD` numbers, a day's prices as
//! `sid:price` pairs, months and periods as codes, station details as JSON.

use super::*;

/// A Perth date as the integer `YYYYMMDD` (compact, ordered, readable in SQL).
pub fn day_number(d: Date) -> i64 {
    i64::from(d.year()) * 10_000 + i64::from(d.month()) * 100 + i64::from(d.day())
}

pub fn from_day_number(n: i64) -> Option<Date> {
    let year = i16::try_from(n / 10_000).ok()?;
    let month = i8::try_from(n / 100 % 100).ok()?;
    let day = i8::try_from(n % 100).ok()?;
    Date::new(year, month, day).ok()
}

/// A station's stored details.
pub fn details(station: &Station) -> Result<String, StoreError> {
    serde_json::to_string(station).map_err(|e| StoreError::Encoding(e.to_string()))
}

/// A day's prices as `sid:price` pairs, ascending by sid.
pub fn format_pairs(prices: &HashMap<i64, i64>) -> String {
    let mut sorted: Vec<(&i64, &i64)> = prices.iter().collect();
    sorted.sort_unstable();
    let mut out = String::with_capacity(sorted.len() * 10);
    for (i, (sid, price)) in sorted.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("{sid}:{price}"));
    }
    out
}

/// `a:b` pairs, comma-separated (`sid:price` of a day, `day:price` of a month); malformed
/// pairs are skipped.
pub fn parse_pairs(text: &str) -> impl Iterator<Item = (i64, i64)> + '_ {
    text.split(',').filter_map(|pair| {
        let (sid, price) = pair.split_once(':')?;
        Some((sid.parse().ok()?, price.parse().ok()?))
    })
}

/// How the period of `interval` is stored in `period_summaries`.
pub(super) fn period_code(interval: Interval) -> i64 {
    match interval {
        Interval::Day => 1,
        Interval::Week => 7,
        Interval::Month => 31,
    }
}

pub(super) fn month_of(day: i64) -> i64 {
    day / 100
}

/// First and last day (`YYYYMMDD`) of a month (`YYYYMM`).
pub(super) fn month_days(month: i64) -> Option<(Date, Date)> {
    let first = Date::new(i16::try_from(month / 100).ok()?, i8::try_from(month % 100).ok()?, 1).ok()?;
    Some((first, first.last_of_month()))
}

pub(super) fn shift(d: Date, days: i64) -> Date {
    d.checked_add(jiff::Span::new().days(days)).unwrap_or(d)
}

pub(super) fn sids_text(sids: impl IntoIterator<Item = i64>) -> String {
    sids.into_iter().map(|sid| sid.to_string()).collect::<Vec<_>>().join(",")
}

pub(super) fn parse_sids(text: &str) -> Vec<i64> {
    text.split(',').filter_map(|s| s.parse().ok()).collect()
}
