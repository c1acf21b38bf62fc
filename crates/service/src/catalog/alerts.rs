//! Alerts on the event stream (docs/api.md "Alerts"): what one alert reports for one publish
//! — the watched stations whose price that day is at or below `below`, or at least `rise`
//! above the day before — as a model (`model::documents::PriceAlert`) that `render` writes as
//! the `data` of a `price` event. Computed from the stored catalogs of the day and the day
//! before, so every replica, live or replaying, says the same. Pure.

use jiff::civil::Date;

use super::day::DayCatalog;
use wafuel_domain::documents::{AlertedStation, PriceAlert};
use wafuel_domain::geo::great_circle_m;
use wafuel_domain::station::{Quote, tenths};
use wafuel_query::events::{AlertFilter, Watched};

/// The watched quotes of a day's catalog, in extract order.
fn watched<'a>(watched: &Watched, day: &'a DayCatalog) -> Vec<&'a Quote> {
    match watched {
        Watched::Stations(ids) => ids.iter().flat_map(|id| day.station(id)).collect(),
        Watched::Near(point, radius) => day
            .near(*point, *radius)
            .into_iter()
            .filter(|q| {
                great_circle_m((point.latitude, point.longitude), (q.station.latitude, q.station.longitude))
                    <= *radius
            })
            .collect(),
    }
}

/// What `alert` reports for the catalog of `date` (`day`), with the day before's catalog when
/// the store has it; `None` when no watched station matches.
pub fn price_event(
    alert: &AlertFilter,
    date: Date,
    day: &DayCatalog,
    before: Option<&DayCatalog>,
) -> Option<PriceAlert> {
    let mut stations: Vec<AlertedStation> = watched(&alert.watched, day)
        .into_iter()
        .filter(|q| q.product == alert.product)
        .filter_map(|q| {
            let previous = before
                .and_then(|b| b.station(&q.station.id).find(|p| p.product == alert.product).map(|p| p.price));
            let price = tenths(q.price);
            let low = alert.below.is_some_and(|below| price <= below);
            let rose = alert.rise.is_some_and(|rise| previous.is_some_and(|p| price - tenths(p) >= rise));
            let any = alert.below.is_none() && alert.rise.is_none();
            (low || rose || any).then(|| AlertedStation {
                id: q.station.id.to_string(),
                name: q.station.name.clone(),
                price: q.price,
                previous,
            })
        })
        .collect();
    if stations.is_empty() {
        return None;
    }
    // Cheapest first; one entry per station.
    stations.sort_by(|a, b| tenths(a.price).cmp(&tenths(b.price)).then_with(|| a.id.cmp(&b.id)));
    stations.dedup_by(|a, b| a.id == b.id);
    Some(PriceAlert { date, product: alert.product, stations })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use jiff::Timestamp;
    use jiff::civil::date;
    use wafuel_domain::codes::ProductCode;
    use wafuel_domain::testing;
    use wafuel_query::events::parse_events;
    use wafuel_store::Snapshot;

    fn day(prices: &[(&str, &str, f64)]) -> DayCatalog {
        let quotes = prices
            .iter()
            .map(|(name, lat, price)| testing::quote(&testing::station(name, "BP", lat, "115.86"), 1, *price))
            .collect();
        DayCatalog::new(Arc::new(Snapshot {
            key: "extract:1:2026-11-25".into(),
            date: date(2026, 11, 25),
            fetched_at: Timestamp::UNIX_EPOCH,
            expires_at: Timestamp::UNIX_EPOCH,
            quotes: Arc::new(quotes),
        }))
    }

    fn alert(query: &str) -> AlertFilter {
        parse_events(query).expect("query").alert.expect("an alert")
    }

    #[test]
    fn below_rise_and_nothing_to_say() {
        let today = day(&[
            ("A", "-31.950", 179.9),
            ("B", "-31.951", 195.0),
            ("C", "-31.952", 181.0),
            ("Far", "-33.0", 150.0),
        ]);
        let before = day(&[("A", "-31.950", 185.0), ("B", "-31.951", 180.0)]);
        let d = date(2026, 11, 25);
        let near = "product=1&near=-31.95,115.86&radius=2";
        let a = price_event(&alert(&format!("{near}&below=180")), d, &today, Some(&before)).expect("A");
        assert_eq!((a.date, a.product.get()), (d, 1));
        assert_eq!(a.stations.len(), 1, "{a:?}");
        assert_eq!((a.stations[0].name.as_str(), a.stations[0].price), ("A", 179.9));
        assert_eq!(a.stations[0].previous, Some(185.0));
        // B rose 15 c/L; C has no price the day before, so no rise can be said of it.
        let names = |a: PriceAlert| a.stations.into_iter().map(|s| s.name).collect::<Vec<_>>();
        let b = price_event(&alert(&format!("{near}&rise=15")), d, &today, Some(&before)).expect("B");
        assert_eq!(names(b), ["B"]);
        assert!(price_event(&alert(&format!("{near}&rise=15.1")), d, &today, Some(&before)).is_none());
        assert!(price_event(&alert(&format!("{near}&below=179.8")), d, &today, Some(&before)).is_none());
        // Both thresholds: either one reports; cheapest first.
        let a = price_event(&alert(&format!("{near}&rise=15&below=180")), d, &today, None).expect("A");
        assert_eq!(a.stations.len(), 1, "no day before: only below");
        assert_eq!(a.stations[0].previous, None);
        // No threshold: every watched station with a price.
        let all = price_event(&alert(near), d, &today, None).expect("all three");
        assert_eq!(names(all), ["A", "C", "B"]);
        // By id: only the stations named.
        let c = today.quotes()[2].station.id.clone();
        let by_id = alert(&format!("product=1&station={c}&below=181"));
        assert!(matches!(&by_id.watched, Watched::Stations(ids) if ids == std::slice::from_ref(&c)));
        let by_id = price_event(&by_id, d, &today, Some(&before)).expect("C");
        assert_eq!(by_id.stations.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), [c.as_str()]);
        // Another product's catalog says nothing for this alert.
        let other = AlertFilter { product: ProductCode::parse(4).expect("code"), ..alert(near) };
        assert!(price_event(&other, d, &today, None).is_none());
    }
}
