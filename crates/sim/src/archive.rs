//! The simulated archive: `FuelWatchRetail-MM-YYYY.csv` for every month from January 2001 to
//! the month before the simulated clock's, from the same stations and price model as the
//! feed (so archive and feed agree on every day both have), with the quirks of real exports:
//! FuelWatch's area and region texts, its two file forms (a trailing comma on every line and LF
//! up to September 2025, ten fields and CRLF after), a byte-order mark, quoted commas,
//! trailing spaces, blank trailing lines,
//! a product our tables do not have, older years with fewer products and another header
//! case, and a few stations that closed before today (only the archive knows them).

use jiff::civil::Date;

use super::dataset::{Dataset, SimStation};
use crate::listing::{FIRST_MONTH, ListedFile, month_file, months};
use wafuel_domain::codes::area_text;
use wafuel_domain::codes::region;

/// The archive's product texts, by code; older years sold fewer products.
const PRODUCT_TEXTS: [(u8, &str, i16); 7] = [
    (1, "ULP", 2001),
    (2, "PULP", 2001),
    (4, "Diesel", 2001),
    (5, "LPG", 2001),
    (6, "98 RON", 2004),
    (10, "E85", 2008),
    (11, "Brand diesel", 2010),
];

/// Stations that closed in mid-2020: in the archive until June 2020, never in the feed.
const CLOSED: [(&str, &str, &str, &str, u8); 3] = [
    ("Gull Maddington Closed", "Gull", "1 Closed Rd", "MADDINGTON", 27),
    ("Shell Midland Old", "Shell", "99 Old Great Eastern Hwy, Cnr Elm St", "MIDLAND", 27),
    ("United Kwinana Former", "United", "5 Former Pde", "KWINANA", 26),
];

/// The last month the closed stations appear in.
const CLOSED_AFTER: (i16, i8) = (2020, 6);

/// Whether the simulated archive has this month at `today` (the current month grows: it has
/// the days up to today).
pub fn has_month(month: (i16, i8), today: Date) -> bool {
    month >= FIRST_MONTH && month <= (today.year(), today.month())
}

/// The last day a month's file holds at `today`: the month's last day, or today for the
/// current month.
pub fn last_day(month: (i16, i8), today: Date) -> Option<Date> {
    let first = Date::new(month.0, month.1, 1).ok()?;
    Some(if (today.year(), today.month()) == month { today } else { first.last_of_month() })
}

/// The list of monthly files FuelWatch publishes, for the simulated archive at `today`, with
/// `url`s under `base`. `fileDate` is when the file was last written (the end of a past
/// month; the start of today for the current one, which grows daily).
///
/// `bytes` stands in for the file's size: rows a day times days times a typical row's length.
/// It changes exactly when the file grows, which is all an importer may rely on; computing
/// the real size would mean writing all 300 files for every request of the list.
pub fn file_list(data: &Dataset, base: &str, today: Date) -> Vec<ListedFile> {
    let mut out = Vec::new();
    let last = (today.year(), today.month());
    for (year, month) in months(FIRST_MONTH, last) {
        let Some(through) = last_day((year, month), today) else { continue };
        let name = month_file(year, month);
        let file_date = if (year, month) == last {
            format!("{through}T00:00:00+08:00")
        } else {
            format!("{through}T23:59:59+08:00")
        };
        let rows_a_day: u64 = data
            .stations
            .iter()
            .map(|s| {
                PRODUCT_TEXTS
                    .iter()
                    .filter(|(code, _, since)| year >= *since && s.products.contains(code))
                    .count() as u64
            })
            .sum::<u64>()
            + 1;
        out.push(ListedFile {
            url: format!("{base}{name}"),
            file_name: name,
            file_date,
            bytes: rows_a_day * u64::from(through.day().unsigned_abs()) * TYPICAL_ROW_BYTES,
        });
    }
    out
}

/// The length of a typical row of the simulated files.
const TYPICAL_ROW_BYTES: u64 = 96;

/// The area and wider region the archive writes for a region code.
fn area_of(code: u8) -> (&'static str, &'static str) {
    (area_text(code).unwrap_or_default(), region(code).map_or("", |r| r.wider))
}

/// `183.90`: the archive writes cents with two decimals.
fn archive_price(feed_text: &str) -> Option<String> {
    let cents: f64 = feed_text.parse().ok()?;
    Some(format!("{cents:.2}"))
}

/// The CSV of one month, a day at a time: `emit` gets each piece (the header with the first
/// day) and says whether to go on. A whole month is several megabytes; a day is a few
/// hundred kilobytes.
pub fn write_month(
    data: &Dataset,
    (year, month): (i16, i8),
    through: Date,
    emit: &mut dyn FnMut(Vec<u8>) -> bool,
) {
    let header: [&str; 10] = if year < 2010 {
        // Older exports spell some columns in another case.
        [
            "Publish_Date",
            "Trading_Name",
            "BRAND_DESCRIPTION",
            "Product_Description",
            "Product_Price",
            "ADDRESS",
            "LOCATION",
            "POSTCODE",
            "AREA_DESCRIPTION",
            "REGION_DESCRIPTION",
        ]
    } else {
        [
            "PUBLISH_DATE",
            "TRADING_NAME",
            "BRAND_DESCRIPTION",
            "PRODUCT_DESCRIPTION",
            "PRODUCT_PRICE",
            "ADDRESS",
            "LOCATION",
            "POSTCODE",
            "AREA_DESCRIPTION",
            "REGION_DESCRIPTION",
        ]
    };
    let Ok(first) = Date::new(year, month, 1) else { return };
    // FuelWatch's two forms: up to September 2025 every line (the header's too) ends with a
    // trailing comma, an empty eleventh field, and LF; later files have ten fields and CRLF.
    let trailing = (year, month) <= LAST_TRAILING_COMMA_MONTH;
    let terminator = if trailing { csv::Terminator::Any(b'\n') } else { csv::Terminator::CRLF };
    let mut start = Vec::with_capacity(512 * 1024);
    start.extend_from_slice("\u{feff}".as_bytes());
    let mut form = csv::WriterBuilder::new();
    form.terminator(terminator);
    let mut w = Rows { w: form.from_writer(start), form, trailing };
    w.write(header);
    let closed_open = (year, month) <= CLOSED_AFTER;
    let mut day = first;
    while day.month() == month && day <= through {
        let date = format!("{:02}/{:02}/{:04}", day.day(), day.month(), day.year());
        for (i, station) in data.stations.iter().enumerate() {
            write_station(&mut w, station, &date, day, year, i);
        }
        if closed_open {
            for (i, (name, brand, address, suburb, region)) in CLOSED.iter().enumerate() {
                let tenths = 1_500 + i64::from(day.day()) * 3 + i as i64 * 7;
                let price = format!("{}.{}0", tenths / 10, tenths % 10);
                let postcode = "6100";
                let (area, wider) = area_of(*region);
                w.write([&date, *name, *brand, "ULP", &price, *address, *suburb, postcode, area, wider]);
            }
        }
        // A product our tables do not have, once a day.
        w.write([
            &date,
            "Depot Fuels",
            "Independent",
            "KEROSENE",
            "150.00",
            "1 Depot Rd",
            "WELSHPOOL",
            "6106",
            "South of River",
            "Metro",
        ]);
        if !emit(w.take()) {
            return;
        }
        match day.tomorrow() {
            Ok(next) => day = next,
            Err(_) => break,
        }
    }
    let mut tail = w.take();
    tail.extend_from_slice(if trailing { b"\n\n" } else { b"\r\n\r\n" });
    emit(tail);
}

/// The last month written in the older form (trailing comma, LF).
const LAST_TRAILING_COMMA_MONTH: (i16, i8) = (2025, 9);

/// A month's writer, in the month's form.
struct Rows {
    w: csv::Writer<Vec<u8>>,
    form: csv::WriterBuilder,
    trailing: bool,
}

impl Rows {
    /// What was written since the last take.
    fn take(&mut self) -> Vec<u8> {
        let next = self.form.from_writer(Vec::with_capacity(512 * 1024));
        // Writing into memory cannot fail.
        std::mem::replace(&mut self.w, next).into_inner().unwrap_or_default()
    }

    fn write(&mut self, fields: [&str; 10]) {
        let _ = if self.trailing {
            self.w.write_record(fields.iter().copied().chain([""]))
        } else {
            self.w.write_record(fields)
        };
    }
}

fn write_station(w: &mut Rows, station: &SimStation, date: &str, day: Date, year: i16, i: usize) {
    let (area, wider) = area_of(station.region);
    // Some exports pad the trading name.
    let name = if i.is_multiple_of(17) {
        format!("{} ", station.trading_name)
    } else {
        station.trading_name.clone()
    };
    let postcode = format!("{}", 6000 + (i % 700));
    for (code, text, since) in PRODUCT_TEXTS {
        if year < since || !station.products.contains(&code) {
            continue;
        }
        let Some(price) = station.price_text(code, day).as_deref().and_then(archive_price) else { continue };
        w.write([
            date,
            &name,
            &station.brand,
            text,
            &price,
            &station.address,
            &station.location.to_uppercase(),
            &postcode,
            area,
            wider,
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CSV of one month, up to `through`, whole.
    fn month_csv(data: &Dataset, month: (i16, i8), through: Date) -> Vec<u8> {
        let mut out = Vec::new();
        write_month(data, month, through, &mut |chunk| {
            out.extend_from_slice(&chunk);
            true
        });
        out
    }
    use jiff::civil::date;

    #[test]
    fn a_month_reads_back_with_its_quirks() {
        let data = Dataset::build().expect("dataset");
        let body = month_csv(&data, (2019, 2), date(2019, 2, 28));
        assert!(body.starts_with("\u{feff}".as_bytes()));
        let mut prices = 0;
        let tally = wafuel_archive::read_prices("sim", body.as_slice(), |p| {
            assert_eq!((p.date.year(), p.date.month()), (2019, 2));
            prices += 1;
        })
        .expect("read");
        assert_eq!(tally.skipped.get("not a fuel served here \"KEROSENE\""), Some(&28));
        assert!(prices > 28 * 900, "{prices}");
        assert_eq!(tally.unknown_area, 0, "every area the simulated archive writes is FuelWatch's");
        let text = String::from_utf8_lossy(&body);
        assert!(text.contains("REGION_DESCRIPTION,\n") && !text.contains('\r'), "the older form");
        for area in ["Augusta-M River", "Sth Hedland", "Greenough", "Bodallin"] {
            assert!(text.contains(&format!(",{area},")), "{area}");
        }
        let newer = month_csv(&data, (2025, 10), date(2025, 10, 31));
        let text = String::from_utf8_lossy(&newer);
        assert!(text.contains("REGION_DESCRIPTION\r\n") && !text.contains(",\r\n"), "the newer form");
        let tally = wafuel_archive::read_prices("sim", newer.as_slice(), |_| {}).expect("read");
        assert_eq!(tally.unknown_area, 0);
        assert!(has_month((2024, 10), date(2024, 11, 3)));
        assert!(has_month((2024, 11), date(2024, 11, 3)), "the current month, as far as it goes");
        assert!(!has_month((2024, 12), date(2024, 11, 3)));
        let current = month_csv(&data, (2024, 11), date(2024, 11, 3));
        let mut days = std::collections::BTreeSet::new();
        wafuel_archive::read_prices("sim", current.as_slice(), |p| {
            days.insert(p.date.day());
        })
        .expect("read");
        assert_eq!(days.into_iter().collect::<Vec<_>>(), vec![1, 2, 3], "the days up to today");
        assert!(!has_month((2000, 12), date(2024, 11, 3)));
    }

    #[test]
    fn the_list_names_every_month_and_the_current_one_grows() {
        let data = Dataset::build().expect("dataset");
        let list = file_list(&data, "http://origin/historical-reports/", date(2026, 11, 10));
        assert_eq!(list.len(), 25 * 12 + 11, "January 2001 to November 2026");
        assert_eq!(list[0].file_name, "FuelWatchRetail-01-2001.csv");
        assert_eq!(list[0].file_date, "2001-01-31T23:59:59+08:00");
        let current = list.last().expect("current");
        assert_eq!(current.url, "http://origin/historical-reports/FuelWatchRetail-11-2026.csv");
        assert_eq!(current.file_date, "2026-11-10T00:00:00+08:00");
        let later = file_list(&data, "http://origin/historical-reports/", date(2026, 11, 20));
        let grown = later.last().expect("current");
        assert!(grown.bytes > current.bytes && grown.file_date != current.file_date);
        assert_eq!(later[list.len() - 2], list[list.len() - 2], "a finished month stays as it was");
    }
}
