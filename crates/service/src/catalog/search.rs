//! The station API's search over a day's quotes: stations within the radius or along a
//! route, with their distance (or detour and distance along), what a stop costs, the
//! following day's prices and the change, sorted, ranked and limited as the query asks.
//! Pure: the quotes come from the day catalogs' indexes (`catalog/day.rs`).

use std::collections::HashMap;

use super::day::RouteCover;
use crate::model::codes::ProductCode;
use crate::model::documents::{StationExtra, StationRow, price_rows};
use crate::model::geo::Point;
use crate::model::geo::great_circle_m;
use crate::model::station::{Quote, cents, tenths};
use crate::query::stations::{Sort, StationsQuery};

/// Stations of the base day's quotes (already filtered to the selection), with distance,
/// next-day prices and change, sorted, ranked and limited as the query asks. `next` is the
/// following day's quotes when that day is published; `cover` is the query's route corridor.
pub fn station_rows(
    query: &StationsQuery,
    cover: Option<&RouteCover>,
    base: &[&Quote],
    next: Option<&[&Quote]>,
) -> Vec<StationRow> {
    let date = query.selection.date.to_string();
    let next_prices: Option<HashMap<&str, Vec<(ProductCode, f64)>>> = next.map(|quotes| {
        let mut by_station: HashMap<&str, Vec<(ProductCode, f64)>> = HashMap::new();
        for q in quotes {
            if query.selection.products.contains(&q.product) {
                by_station.entry(q.station.digest.as_str()).or_default().push((q.product, q.price));
            }
        }
        for prices in by_station.values_mut() {
            prices.sort_by_key(|(p, _)| *p);
            prices.dedup_by_key(|(p, _)| *p);
        }
        by_station
    });
    let mut out: Vec<StationRow> = Vec::new();
    for row in price_rows(base.iter().copied(), &date) {
        let distance = query.near.map(|p| {
            great_circle_m((p.latitude, p.longitude), (row.station.latitude, row.station.longitude))
        });
        if distance.is_some_and(|d| d > query.radius_m) {
            continue;
        }
        let at = Point { latitude: row.station.latitude, longitude: row.station.longitude };
        let placed = match cover.map(|cover| cover.place(at)) {
            // Outside the route's corridor.
            Some(None) => continue,
            placed => placed.flatten(),
        };
        let distance = distance.map(|d| d.round() as i64);
        let detour = placed.map(|p| p.detour.round() as i64);
        // The stop's cost from the whole metres the answer shows, so a client can check it.
        let cost = query.stop.and_then(|stop| {
            let (_, price) = row.prices.first()?;
            Some(stop.cents(tenths(*price), distance.or(detour).unwrap_or(0)))
        });
        let next = next_prices.as_ref().and_then(|m| m.get(row.station.digest.as_str())).cloned();
        let change = next
            .as_ref()
            .map(|n| {
                row.prices
                    .iter()
                    .filter_map(|(p, base)| {
                        let (_, next) = n.iter().find(|(np, _)| np == p)?;
                        Some((*p, cents(tenths(*next) - tenths(*base))))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let extra = StationExtra {
            next,
            change,
            distance,
            detour,
            along: placed.map(|p| p.along.round() as i64),
            cost,
            rank: None,
        };
        out.push(StationRow { row, extra });
    }
    let price = |r: &StationRow| r.row.prices.first().map_or(i64::MAX, |(_, p)| tenths(*p));
    // Metres off the search: from `near`, or off the route.
    let distance = |r: &StationRow| r.extra.distance.or(r.extra.detour).unwrap_or(0);
    let cost = |r: &StationRow| r.extra.cost.unwrap_or(i64::MAX);
    let along = |r: &StationRow| r.extra.along.unwrap_or(0);
    let by = |key: &dyn Fn(&StationRow) -> i64, a: &StationRow, b: &StationRow| {
        key(a).cmp(&key(b)).then_with(|| a.row.id.cmp(&b.row.id))
    };
    match query.sort {
        Sort::Suburb => {}
        Sort::Distance | Sort::Detour => out.sort_by(|a, b| by(&distance, a, b)),
        Sort::Along => out.sort_by(|a, b| by(&along, a, b)),
        Sort::Name => out.sort_by(|a, b| {
            a.row.station.name.cmp(&b.row.station.name).then_with(|| a.row.id.cmp(&b.row.id))
        }),
        Sort::Price => {
            out.sort_by(|a, b| price(a).cmp(&price(b)).then_with(|| by(&distance, a, b)));
            rank_by(&mut out, price);
        }
        Sort::Cost => {
            out.sort_by(|a, b| {
                cost(a).cmp(&cost(b)).then_with(|| price(a).cmp(&price(b))).then_with(|| by(&distance, a, b))
            });
            rank_by(&mut out, cost);
        }
    }
    if let Some(limit) = query.limit {
        out.truncate(limit);
    }
    out
}

/// Competition ranking of sorted rows by `key`: equal keys share a rank ("1, 2, 2, 4").
fn rank_by(rows: &mut [StationRow], key: impl Fn(&StationRow) -> i64) {
    let mut rank = 0;
    let mut last = None;
    for (i, r) in rows.iter_mut().enumerate() {
        let k = key(r);
        if last != Some(k) {
            rank = i + 1;
            last = Some(k);
        }
        r.extra.rank = Some(rank);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing;
    use crate::query::stations::parse_stations;
    use crate::time::perth_instant;
    use jiff::civil::date;

    fn quote(name: &str, lat: &str, product: u8, price: f64) -> Quote {
        testing::quote(&testing::station(name, "BP", lat, "115.86"), product, price)
    }

    #[test]
    fn price_sort_ranks_ties_together_and_change_is_exact() {
        let now = perth_instant(date(2026, 9, 29).at(10, 0, 0, 0));
        let q = parse_stations("near=-31.95,115.86&radius=5&product=1&sort=price", now).expect("query");
        let base = [
            quote("A", "-31.951", 1, 189.9),
            quote("B", "-31.952", 1, 179.9),
            quote("C", "-31.953", 1, 189.9),
            quote("D", "-31.954", 1, 199.9),
            quote("Far", "-32.5", 1, 100.0), // about 61 km away: outside the radius
        ];
        let next = [quote("A", "-31.951", 1, 192.1), quote("B", "-31.952", 1, 170.0)];
        let base_refs: Vec<&Quote> = base.iter().collect();
        let next_refs: Vec<&Quote> = next.iter().collect();
        let rows = station_rows(&q, None, &base_refs, Some(&next_refs));
        let names: Vec<&str> = rows.iter().map(|r| r.row.station.name.as_str()).collect();
        assert_eq!(names, ["B", "A", "C", "D"], "cheapest first, nearer first on equal prices");
        let ranks: Vec<usize> = rows.iter().filter_map(|r| r.extra.rank).collect();
        assert_eq!(ranks, [1, 2, 2, 4]);
        assert_eq!(rows[0].extra.change, vec![(ProductCode::UNLEADED, -9.9)]);
        assert_eq!(
            rows[1].extra.change,
            vec![(ProductCode::UNLEADED, 2.2)],
            "192.1 − 189.9 without float noise"
        );
        assert_eq!(rows[2].extra.next, None, "no next-day price: null");
        assert!(rows[2].extra.change.is_empty());
        assert!(rows.iter().all(|r| r.extra.distance.is_some_and(|d| d <= 5_000)));
        let limited = parse_stations("near=-31.95,115.86&product=1&limit=2", now).expect("query");
        let rows = station_rows(&limited, None, &base_refs, None);
        let names: Vec<&str> = rows.iter().map(|r| r.row.station.name.as_str()).collect();
        assert_eq!(names, ["A", "B"], "nearest first, then the limit");
    }
}
