//! The strict validator: every feed rule of docs/api.md ("Errors", "Limits") over all
//! components of one selection, all or nothing. Pure.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use jiff::civil::Date;

use super::error::SourceError;
use super::rss::Feed;
use wafuel_domain::codes::ProductCode;
use wafuel_domain::key::StationId;
use wafuel_domain::normalize::{is_plain_decimal, normalize_shared};
use wafuel_domain::station::Quote;

/// At most this many input quotes across the components of one selection.
pub const MAX_COMBINED_QUOTES: usize = 10_000;
/// Prices are in (0, MAX_PRICE] cents per litre.
pub const MAX_PRICE: f64 = 10_000.0;

/// One source response: the product it was asked for and what it said.
#[derive(Debug, Clone)]
pub struct Component<'a> {
    pub product: ProductCode,
    pub feed: Feed<'a>,
}

/// Validate and normalise the components of one selection for `expected` (the Perth date
/// the selection names). Identical duplicate quotes collapse; different quotes for one
/// station and product reject the whole selection. Quotes keep source order per component.
pub fn validate(components: &[Component<'_>], expected: Date) -> Result<Vec<Quote>, SourceError> {
    let total: usize = components.iter().map(|c| c.feed.items.len()).sum();
    if total > MAX_COMBINED_QUOTES {
        return Err(SourceError::too_many_quotes(format!("{total} quotes in one selection")));
    }
    let expected_text = expected.to_string();
    let mut quotes: Vec<Quote> = Vec::with_capacity(total);
    // (product, station key) → index in `quotes`
    let mut seen: HashMap<(ProductCode, StationId), usize> = HashMap::with_capacity(total);
    for component in components {
        for (n, item) in component.feed.items.iter().enumerate() {
            let at = |what: String| format!("product {} item {}: {what}", component.product, n + 1);
            let date = item.date.as_deref().map(str::trim).unwrap_or("");
            if date != expected_text {
                return Err(SourceError::invalid_feed(at(format!(
                    "date {date:?}, expected {expected_text}"
                ))));
            }
            let price_text = item.price.as_deref().map(str::trim).unwrap_or("");
            let price = parse_price(price_text)
                .ok_or_else(|| SourceError::invalid_feed(at(format!("price {price_text:?}"))))?;
            let station = normalize_shared(item).map_err(|e| SourceError::invalid_feed(at(e.to_string())))?;
            match seen.entry((component.product, station.id.clone())) {
                Entry::Occupied(existing) => {
                    let first = &quotes[*existing.get()];
                    if first.price != price || first.station.trading_name != station.trading_name {
                        return Err(SourceError::conflict(at(format!(
                            "station {} quoted {} and {price_text}",
                            station.key, first.price_text
                        ))));
                    }
                }
                Entry::Vacant(slot) => {
                    slot.insert(quotes.len());
                    quotes.push(Quote {
                        product: component.product,
                        price,
                        price_text: price_text.to_string(),
                        station,
                    });
                }
            }
        }
    }
    Ok(quotes)
}

/// A plain decimal in (0, 10000].
pub fn parse_price(text: &str) -> Option<f64> {
    if !is_plain_decimal(text, false) {
        return None;
    }
    let value: f64 = text.parse().ok()?;
    (value > 0.0 && value <= MAX_PRICE).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;
    use wafuel_domain::error_code::{ErrorCode, detail};
    use wafuel_domain::record::SourceRecord;

    fn item(price: &str, street: &str) -> SourceRecord<'static> {
        SourceRecord {
            brand: Some("BP".into()),
            date: Some("2026-09-29".into()),
            price: Some(price.to_string().into()),
            trading_name: Some("BP Test".into()),
            location: Some("PERTH".into()),
            address: Some(street.to_string().into()),
            phone: Some("".into()),
            latitude: Some("-31.95".into()),
            longitude: Some("115.86".into()),
            site_features: Some("".into()),
            ..SourceRecord::default()
        }
    }

    fn one(product: u8, items: Vec<SourceRecord>) -> Component {
        let product = ProductCode::parse(product).expect("a product");
        Component { product, feed: Feed { items } }
    }

    const DAY: Date = date(2026, 9, 29);

    #[test]
    fn accepts_good_quotes() {
        let quotes =
            validate(&[one(1, vec![item("179", "1 A St"), item("180.9", "2 A St")])], DAY).expect("valid");
        assert_eq!(quotes.len(), 2);
        assert_eq!(quotes[0].price, 179.0);
        assert_eq!(quotes[1].price_text, "180.9");
    }

    #[test]
    fn wrong_date_rejects() {
        let mut bad = item("179", "1 A St");
        bad.date = Some("2026-09-28".into());
        let e = validate(&[one(1, vec![item("179", "2 A St"), bad])], DAY).expect_err("wrong date");
        assert_eq!(e.code, ErrorCode::InvalidFeed);
        let mut missing = item("179", "1 A St");
        missing.date = None;
        assert!(validate(&[one(1, vec![missing])], DAY).is_err());
    }

    #[test]
    fn bad_prices_reject() {
        for price in ["0", "0.0", "10000.1", "-1", "1e2", "", " ", "12,5", "NaN", "abc"] {
            let e = validate(&[one(1, vec![item(price, "1 A St")])], DAY).expect_err(price);
            assert_eq!(e.code, ErrorCode::InvalidFeed, "{price}");
        }
        assert!(validate(&[one(1, vec![item("10000", "1 A St")])], DAY).is_ok());
        assert!(validate(&[one(1, vec![item("0.1", "1 A St")])], DAY).is_ok());
    }

    #[test]
    fn missing_required_fields_reject() {
        let mut no_name = item("179", "1 A St");
        no_name.trading_name = None;
        let mut no_lat = item("179", "1 A St");
        no_lat.latitude = Some("".into());
        let mut far = item("179", "1 A St");
        far.longitude = Some("180.5".into());
        for bad in [no_name, no_lat, far] {
            assert_eq!(validate(&[one(1, vec![bad])], DAY).expect_err("bad").code, ErrorCode::InvalidFeed);
        }
    }

    #[test]
    fn conflicts_reject_and_duplicates_collapse() {
        let dup = validate(&[one(1, vec![item("179", "1 A St"), item("179.0", "1  a st")])], DAY)
            .expect("identical");
        assert_eq!(dup.len(), 1);
        let e = validate(&[one(1, vec![item("179", "1 A St"), item("180", "1 A St")])], DAY)
            .expect_err("conflict");
        assert_eq!(e.detail, detail::CONFLICTING_QUOTES);
        // Across components of one selection (e.g. two brand requests for one product).
        let e = validate(&[one(1, vec![item("179", "1 A St")]), one(1, vec![item("181", "1 A St")])], DAY)
            .expect_err("cross-component conflict");
        assert_eq!(e.code, ErrorCode::InvalidFeed);
        // The same station for another product is not a conflict.
        let two = validate(&[one(1, vec![item("179", "1 A St")]), one(4, vec![item("199", "1 A St")])], DAY)
            .expect("two products");
        assert_eq!(two.len(), 2);
    }

    #[test]
    fn too_many_quotes() {
        let items: Vec<SourceRecord> =
            (0..=MAX_COMBINED_QUOTES / 2).map(|i| item("179", &format!("{i} A St"))).collect();
        let e = validate(&[one(1, items.clone()), one(2, items)], DAY).expect_err("too many");
        assert_eq!(e.code, ErrorCode::ResponseTooLarge);
    }
}
