//! FuelWatch's own list of its monthly files (`GET /api/report/monthly-retail-prices` on
//! www.fuelwatch.wa.gov.au): `[{"fileName", "fileDate", "bytes", "url"}, …]`, one entry per
//! month from January 2001 to the current month. The current month's file grows every day, so
//! its `fileDate` and `bytes` change; a month whose pair differs from the one recorded at its
//! import is imported again.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use wafuel_store::archive::ImportedMonth;

/// Where FuelWatch publishes the list.
pub const DEFAULT_ARCHIVE_LIST_URL: &str = "https://www.fuelwatch.wa.gov.au/api/report/monthly-retail-prices";

/// One file of the list, as FuelWatch writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedFile {
    /// `FuelWatchRetail-MM-YYYY.csv`.
    pub file_name: String,
    /// When the file was last written, e.g. `2026-03-31T23:59:59+08:00` (kept as text: it is
    /// compared, never computed with).
    pub file_date: String,
    pub bytes: u64,
    /// Where to download it.
    pub url: String,
}

impl ListedFile {
    /// The month the file holds, when its name follows the archive's pattern.
    pub fn month(&self) -> Option<(i16, i8)> {
        super::month_of_file(&self.file_name)
    }

    /// Whether the file differs from what was imported for its month (or was never imported).
    /// A month imported before the list was read (no `fileDate` recorded) counts as unchanged
    /// unless it is `newest`: only the current month grows.
    pub fn changed_since(&self, imported: Option<&ImportedMonth>, newest: bool) -> bool {
        match imported {
            None => true,
            Some(done) => match (&done.file_date, done.bytes) {
                (Some(date), Some(bytes)) => *date != self.file_date || bytes != self.bytes,
                _ => newest,
            },
        }
    }
}

/// The listed monthly files from `from` to `to` (inclusive), ascending by month; entries that
/// do not name a monthly retail file are left out.
pub fn in_range(list: &[ListedFile], from: (i16, i8), to: (i16, i8)) -> Vec<((i16, i8), ListedFile)> {
    let mut by_month: HashMap<(i16, i8), &ListedFile> = HashMap::new();
    for file in list {
        if let Some(month) = file.month().filter(|m| (from..=to).contains(m)) {
            by_month.insert(month, file);
        }
    }
    let mut out: Vec<((i16, i8), ListedFile)> = by_month.into_iter().map(|(m, f)| (m, f.clone())).collect();
    out.sort_by_key(|(m, _)| *m);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(name: &str, date: &str, bytes: u64) -> ListedFile {
        ListedFile {
            file_name: name.into(),
            file_date: date.into(),
            bytes,
            url: format!("https://example.invalid/historical-reports/{name}"),
        }
    }

    #[test]
    fn the_list_reads_as_fuelwatch_writes_it() {
        let text = r#"[{"fileName":"FuelWatchRetail-03-2026.csv","fileDate":"2026-03-31T23:59:59+08:00",
            "bytes":9123456,"url":"https://warsydprdstafuelwatch.blob.core.windows.net/historical-reports/FuelWatchRetail-03-2026.csv"},
            {"fileName":"FuelWatchWholesale-2026.csv","fileDate":"2026-03-31T23:59:59+08:00","bytes":1,"url":"x"}]"#;
        let list: Vec<ListedFile> = serde_json::from_str(text).expect("list");
        assert_eq!(list[0].month(), Some((2026, 3)));
        assert_eq!(list[0].bytes, 9_123_456);
        assert_eq!(list[1].month(), None, "not a monthly retail file");
        let range = in_range(&list, (2026, 1), (2026, 12));
        assert_eq!(range.len(), 1);
    }

    #[test]
    fn a_month_is_imported_again_when_its_file_changed() {
        let file = listed("FuelWatchRetail-11-2026.csv", "2026-11-20T23:59:59+08:00", 5_000);
        let done = |date: Option<&str>, bytes: Option<u64>| ImportedMonth {
            month: (2026, 11),
            rows: 10,
            file_date: date.map(str::to_string),
            bytes,
        };
        assert!(file.changed_since(None, false), "never imported");
        assert!(!file.changed_since(Some(&done(Some("2026-11-20T23:59:59+08:00"), Some(5_000))), true));
        assert!(file.changed_since(Some(&done(Some("2026-11-19T23:59:59+08:00"), Some(5_000))), false));
        assert!(file.changed_since(Some(&done(Some("2026-11-20T23:59:59+08:00"), Some(4_000))), false));
        assert!(!file.changed_since(Some(&done(None, None)), false), "an old month imported before the list");
        assert!(file.changed_since(Some(&done(None, None)), true), "the current month grows");
    }
}
