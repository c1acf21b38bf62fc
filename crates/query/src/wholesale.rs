//! `GET /v1/wholesale`: one product (only 1, 2 and 4 have a terminal gate price), a terminal
//! centre (default Perth) and a range of days (default the 90 days up to tomorrow once it is
//! published, else up to today). Pure.

use jiff::Timestamp;
use jiff::civil::Date;

use super::grammar::{QueryError, Values, filter, invalid_in, plain, read};
use super::values::{DEFAULT_RANGE_DAYS, bounded_range, iso_date, newest_published, one_product};
use wafuel_domain::codes::ProductCode;
use wafuel_domain::wholesale::Centre;

/// The first day a wholesale range may start (FuelWatch's files start in 2001).
pub const FIRST_DAY: Date = Date::constant(2001, 1, 1);

/// A parsed `/v1/wholesale` query.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WholesaleQuery {
    pub product: ProductCode,
    pub centre: Centre,
    pub from: Date,
    pub to: Date,
}

/// Parse `/v1/wholesale` at `now`.
pub fn parse_wholesale(raw: &str, now: Timestamp) -> Result<WholesaleQuery, QueryError> {
    let p: Values = read(raw, &[filter("product"), filter("centre"), plain("from"), plain("to")])?;
    // Any fuel is a valid question: one without a terminal gate price is answered with no
    // days and a note saying why (never another fuel's price).
    let product = one_product(p.get("product"))?;
    let centre = match p.get("centre") {
        None => Centre::Perth,
        Some(text) => Centre::from_slug(text.trim()).ok_or_else(|| {
            let names: Vec<&str> = Centre::ALL.iter().map(|c| c.slug()).collect();
            invalid_in(
                "centre",
                format!("centre is one of {}, e.g. centre=perth; not {text:?}", names.join(", ")),
            )
        })?,
    };
    let newest = newest_published(now);
    let to = p.get("to").map(|v| iso_date("to", v)).transpose()?.unwrap_or(newest);
    let back = to.checked_sub(jiff::Span::new().days(DEFAULT_RANGE_DAYS - 1)).unwrap_or(to);
    let from = p.get("from").map(|v| iso_date("from", v)).transpose()?.unwrap_or(back).max(FIRST_DAY);
    bounded_range(from, to, newest, "the newest published day")?;
    Ok(WholesaleQuery { product, centre, from, to })
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;
    use wafuel_domain::time::perth_instant;

    fn at(h: i8) -> Timestamp {
        perth_instant(date(2026, 4, 22).at(h, 0, 0, 0))
    }

    #[test]
    fn defaults_follow_the_publication_of_tomorrow() {
        let q = parse_wholesale("product=1", at(10)).expect("ok");
        assert_eq!((q.centre, q.from, q.to), (Centre::Perth, date(2026, 1, 23), date(2026, 4, 22)));
        let q = parse_wholesale("product=4&centre=port-hedland", at(15)).expect("ok");
        assert_eq!((q.centre, q.to), (Centre::PortHedland, date(2026, 4, 23)));
        let q = parse_wholesale("filter[product]=2&from=2002-12-19&to=2003-01-05", at(15)).expect("ok");
        assert_eq!((q.product.get(), q.from, q.to), (2, date(2002, 12, 19), date(2003, 1, 5)));
        assert_eq!(parse_wholesale("product=1&from=1990-01-01", at(10)).expect("ok").from, FIRST_DAY);
        for fuel in [5, 6, 10, 11] {
            let q =
                parse_wholesale(&format!("product={fuel}"), at(10)).expect("a fuel without a TGP is asked");
            assert_eq!(q.product.get(), fuel);
        }
    }

    #[test]
    fn bad_queries_are_refused() {
        for bad in [
            "",
            "product=1,4",
            "product=3",
            "product=ulp",
            "product=1&centre=kwinana",
            "product=1&from=2026-13-01",
            "product=1&from=2026-04-10&to=2026-04-01",
            "product=1&to=2026-04-23",
            "product=1&region=25",
            "product=1&product=4",
        ] {
            assert!(parse_wholesale(bad, at(10)).is_err(), "{bad}");
        }
    }
}
