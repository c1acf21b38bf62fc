//! The simulated archive: `FuelWatchRetail-MM-YYYY.csv` for every month from January 2001 to
//! the month before the simulated clock's, from the same stations and price model as the
//! feed (so archive and feed agree on every day both have), with the quirks of real exports:
//! a byte-order mark, CRLF line ends, quoted commas, trailing spaces, blank trailing lines,
//! a product our tables do not have, older years with fewer products and another header
//! case, and a few stations that closed before today (only the archive knows them).

use jiff::civil::Date;

use super::dataset::{Dataset, SimStation};
use crate::archive::{FIRST_MONTH, REGION_NAMES};

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

/// Whether the simulated archive has this month at `today`.
pub fn has_month(month: (i16, i8), today: Date) -> bool {
    month >= FIRST_MONTH && month < (today.year(), today.month())
}

fn region_name(code: u8) -> &'static str {
    REGION_NAMES.iter().find(|(c, _)| *c == code).map_or("Outback", |(_, name)| name)
}

/// `183.90`: the archive writes cents with two decimals.
fn archive_price(feed_text: &str) -> Option<String> {
    let cents: f64 = feed_text.parse().ok()?;
    Some(format!("{cents:.2}"))
}

/// The CSV of one month.
pub fn month_csv(data: &Dataset, (year, month): (i16, i8)) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 * 1024 * 1024);
    out.extend_from_slice("\u{feff}".as_bytes());
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
    let Ok(first) = Date::new(year, month, 1) else { return out };
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(&mut out);
    let _ = w.write_record(header);
    let closed_open = (year, month) <= CLOSED_AFTER;
    let mut day = first;
    while day.month() == month {
        let date = format!("{:02}/{:02}/{:04}", day.day(), day.month(), day.year());
        for (i, station) in data.stations.iter().enumerate() {
            write_station(&mut w, station, &date, day, year, i);
        }
        if closed_open {
            for (i, (name, brand, address, suburb, region)) in CLOSED.iter().enumerate() {
                let tenths = 1_500 + i64::from(day.day()) * 3 + i as i64 * 7;
                let price = format!("{}.{}0", tenths / 10, tenths % 10);
                let postcode = "6100";
                let area = region_name(*region);
                let _ = w.write_record([
                    &date, *name, *brand, "ULP", &price, *address, *suburb, postcode, area, "Metro",
                ]);
            }
        }
        // A product our tables do not have, once a day.
        let _ = w.write_record([
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
        match day.tomorrow() {
            Ok(next) => day = next,
            Err(_) => break,
        }
    }
    let _ = w.flush();
    drop(w);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

fn write_station<W: std::io::Write>(
    w: &mut csv::Writer<W>,
    station: &SimStation,
    date: &str,
    day: Date,
    year: i16,
    i: usize,
) {
    let metro = (25..=27).contains(&station.region);
    let area = region_name(station.region);
    let wider = if metro { "Metro" } else { "Regional" };
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
        let _ = w.write_record([
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
    use jiff::civil::date;

    #[test]
    fn a_month_reads_back_with_its_quirks() {
        let data = Dataset::build().expect("dataset");
        let body = month_csv(&data, (2019, 2));
        assert!(body.starts_with("\u{feff}".as_bytes()));
        let mut prices = 0;
        let tally = crate::archive::read_prices("sim", body.as_slice(), |p| {
            assert_eq!((p.date.year(), p.date.month()), (2019, 2));
            prices += 1;
        })
        .expect("read");
        assert_eq!(tally.skipped.get("unknown product \"KEROSENE\""), Some(&28));
        assert!(prices > 28 * 900, "{prices}");
        assert!(has_month((2024, 10), date(2024, 11, 3)));
        assert!(!has_month((2024, 11), date(2024, 11, 3)));
        assert!(!has_month((2000, 12), date(2024, 11, 3)));
    }
}
