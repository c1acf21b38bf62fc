//! The station API's search over a day's quotes: stations within the radius or along a
//! route, with their distance (or detour and distance along), what a stop costs, the
//! following day's prices and the change, sorted, ranked and limited as the query asks.
//! Pure: the quotes come from the day catalogs' indexes (`catalog/day.rs`).

use std::collections::HashMap;

use super::day::RouteCover;
use jiff::Timestamp;
use jiff::civil::DateTime;
use wafuel_domain::codes::ProductCode;
use wafuel_domain::documents::{PriceRow, StationExtra, StationRow, document_order, grouped_prices};
use wafuel_domain::geo::Point;
use wafuel_domain::geo::great_circle_m;
use wafuel_domain::key::resource_id;
use wafuel_domain::opening::{OpenState, open_state};
use wafuel_domain::price::Tenths;
use wafuel_domain::profile::{Merged, Shown, merge};
use wafuel_domain::station::{Quote, tenths};
use wafuel_query::stations::{Sort, StationsQuery};

use super::ProfileMap;

/// The following day's prices by station digest (the service's own SHA-256 hex, never a
/// client's text: a fast hash is safe).
type NextPrices<'q> = HashMap<&'q str, Vec<(ProductCode, f64)>, foldhash::fast::RandomState>;

/// The ids a favourites query asked for that its search did not find (`meta.missing`), in
/// the order asked.
pub fn missing_ids<'q>(query: &'q StationsQuery, rows: &[StationRow]) -> Vec<&'q str> {
    let Some(ids) = &query.keep.ids else { return Vec::new() };
    // A limit that cut the answer leaves unknown which of the others the day lists.
    if query.limit.is_some_and(|l| rows.len() >= l) {
        return Vec::new();
    }
    ids.iter().filter(|id| !rows.iter().any(|r| r.row.station.id == **id)).map(|id| id.as_str()).collect()
}

/// What a search shows of each station besides its quotes: the Perth time its `open` is
/// evaluated at, and the provider profiles merged into it (at `now`) before any filter reads
/// its features or hours.
#[derive(Clone, Copy)]
pub struct Showing<'p> {
    pub open_at: DateTime,
    pub profiles: &'p ProfileMap,
    pub now: Timestamp,
}

impl Showing<'_> {
    /// The station's provider contributions, if any profile of it is servable.
    fn merged(&self, station: &wafuel_domain::station::Station) -> Option<Merged> {
        self.profiles.get(&station.key).and_then(|stored| merge(station, stored, self.now))
    }
}

/// Stations of the base day's quotes (already filtered to the selection), with distance,
/// next-day prices and change, sorted, ranked and limited as the query asks. `next` is the
/// following day's quotes when that day is published; `cover` is the query's route corridor.
/// Features, hours and `open` are read on the station as shown (`showing`'s profiles merged).
pub fn station_rows(
    query: &StationsQuery,
    cover: Option<&RouteCover>,
    base: &[&Quote],
    next: Option<&[&Quote]>,
    showing: Showing<'_>,
) -> Vec<StationRow> {
    let date = query.selection.date.to_string();
    // Quotes outside the radius are dropped before any row is made of them: a nearby search
    // reads the grid cells around the point, about three times the circle's area, and each
    // row costs its id, its prices and a place in the sorts.
    let from = |q: &Quote| {
        query
            .near
            .map(|p| great_circle_m((p.latitude, p.longitude), (q.station.latitude, q.station.longitude)))
    };
    let within = |q: &&Quote| from(q).is_none_or(|d| d <= query.radius_m);
    let base: Vec<&Quote> = base.iter().copied().filter(within).collect();
    let next_prices: Option<NextPrices> = next.map(|quotes| {
        let mut by_station = NextPrices::default();
        for q in quotes.iter().copied().filter(within) {
            if query.selection.products.contains(&q.product) {
                by_station.entry(q.station.id.as_str()).or_default().push((q.product, q.price));
            }
        }
        for prices in by_station.values_mut() {
            prices.sort_by_key(|(p, _)| *p);
            prices.dedup_by_key(|(p, _)| *p);
        }
        by_station
    });
    // Rows are made whole (id, next day's prices, change) only for the stations the answer
    // keeps: a nearby search sorts every station in the circle to show the first ten.
    let groups = grouped_prices(base);
    let mut found: Vec<Found> = Vec::with_capacity(groups.len());
    for (quote, prices) in groups {
        // The station API's own filters (favourites, features, brands and restrictions left
        // out) and `open` read the station as its answer shows it.
        let merged = showing.merged(&quote.station);
        let shown = Shown::of(&quote.station, merged.as_ref());
        if query.keep.any() && !query.keep.keeps(&quote.station, shown.features) {
            continue;
        }
        let open = open_state(shown.is_24_hours, shown.open_hours, showing.open_at);
        // `open` keeps the stations known to be open then (unknown hours are not).
        if query.open.is_some() && open.open != Some(true) {
            continue;
        }
        let distance = from(quote).map(|d| d.round() as i64);
        let at = Point { latitude: quote.station.latitude, longitude: quote.station.longitude };
        let placed = match cover.map(|cover| cover.place(at)) {
            // Outside the route's corridor.
            Some(None) => continue,
            placed => placed.flatten(),
        };
        let detour = placed.map(|p| p.detour.round() as i64);
        // What the driver pays: the price less their discount at this brand, exact in tenths.
        let discount = query.discount(quote.station.brand);
        let effective: Vec<(ProductCode, f64)> =
            prices.iter().map(|(p, v)| (*p, Tenths(tenths(*v) - discount).cents())).collect();
        // The stop's cost from the whole metres the answer shows, so a client can check it.
        let cost = query.stop.and_then(|stop| {
            let (_, price) = effective.first()?;
            Some(stop.cost_cents(Tenths(tenths(*price)), distance.or(detour).unwrap_or(0)))
        });
        let along = placed.map(|p| p.along.round() as i64);
        found.push(Found {
            quote,
            prices,
            effective,
            distance,
            detour,
            along,
            cost,
            rank: None,
            open,
            merged,
        });
    }
    let price = |r: &Found| r.effective.first().map_or(i64::MAX, |(_, p)| tenths(*p));
    // Metres off the search: from `near`, or off the route.
    let distance = |r: &Found| r.distance.or(r.detour).unwrap_or(0);
    let cost = |r: &Found| r.cost.unwrap_or(i64::MAX);
    let along = |r: &Found| r.along.unwrap_or(0);
    // Ids are `<date>:<digest>` with one date: the digest orders them.
    fn digest<'a>(r: &'a Found) -> &'a str {
        r.quote.station.id.as_str()
    }
    let by = |key: &dyn Fn(&Found) -> i64, a: &Found, b: &Found| {
        key(a).cmp(&key(b)).then_with(|| digest(a).cmp(digest(b)))
    };
    match query.sort {
        Sort::Suburb => found.sort_by(|a, b| document_order(&a.quote.station, &b.quote.station)),
        Sort::Asked => found.sort_by_key(|r| query.keep.position(&r.quote.station.id)),
        Sort::Distance | Sort::Detour => found.sort_by(|a, b| by(&distance, a, b)),
        Sort::Along => found.sort_by(|a, b| by(&along, a, b)),
        Sort::Name => found.sort_by(|a, b| {
            a.quote.station.name.cmp(&b.quote.station.name).then_with(|| digest(a).cmp(digest(b)))
        }),
        Sort::Price => {
            found.sort_by(|a, b| price(a).cmp(&price(b)).then_with(|| by(&distance, a, b)));
            rank_by(&mut found, price);
        }
        Sort::Cost => {
            found.sort_by(|a, b| {
                cost(a).cmp(&cost(b)).then_with(|| price(a).cmp(&price(b))).then_with(|| by(&distance, a, b))
            });
            rank_by(&mut found, cost);
        }
    }
    if let Some(limit) = query.limit {
        found.truncate(limit);
    }
    found
        .into_iter()
        .map(|f| {
            let station = &f.quote.station;
            let next = next_prices.as_ref().and_then(|m| m.get(station.id.as_str())).cloned();
            let change = next
                .as_ref()
                .map(|n| {
                    f.prices
                        .iter()
                        .filter_map(|(p, base)| {
                            let (_, next) = n.iter().find(|(np, _)| np == p)?;
                            Some((*p, Tenths(tenths(*next) - tenths(*base)).cents()))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let extra = StationExtra {
                next,
                change,
                distance: f.distance,
                detour: f.detour,
                along: f.along,
                cost: f.cost,
                rank: f.rank,
                open: f.open,
                effective: f.effective,
                // Filled in by the document, from the history's runs.
                last_change: Vec::new(),
            };
            let row =
                PriceRow { station: station.clone(), id: resource_id(&date, &station.id), prices: f.prices };
            StationRow { row, extra, merged: f.merged }
        })
        .collect()
}

/// A station of the search before its row is made: its first quote (for the station), its
/// selected prices in product order, and what the sorts read.
struct Found<'q> {
    quote: &'q Quote,
    prices: Vec<(ProductCode, f64)>,
    /// The prices less the query's discount at the station's brand.
    effective: Vec<(ProductCode, f64)>,
    distance: Option<i64>,
    detour: Option<i64>,
    along: Option<i64>,
    cost: Option<i64>,
    rank: Option<usize>,
    open: OpenState,
    merged: Option<Merged>,
}

/// Competition ranking of sorted rows by `key`: equal keys share a rank ("1, 2, 2, 4").
fn rank_by(rows: &mut [Found], key: impl Fn(&Found) -> i64) {
    let mut rank = 0;
    let mut last = None;
    for (i, r) in rows.iter_mut().enumerate() {
        let k = key(r);
        if last != Some(k) {
            rank = i + 1;
            last = Some(k);
        }
        r.rank = Some(rank);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;
    use wafuel_domain::testing;
    use wafuel_domain::time::perth_instant;
    use wafuel_query::stations::parse_stations;

    static NO_PROFILES: std::sync::LazyLock<ProfileMap> = std::sync::LazyLock::new(ProfileMap::default);

    fn shown() -> Showing<'static> {
        let open_at = date(2026, 9, 29).at(10, 0, 0, 0);
        Showing { open_at, profiles: &NO_PROFILES, now: perth_instant(open_at) }
    }

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
        let rows = station_rows(&q, None, &base_refs, Some(&next_refs), shown());
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
        let rows = station_rows(&limited, None, &base_refs, None, shown());
        let names: Vec<&str> = rows.iter().map(|r| r.row.station.name.as_str()).collect();
        assert_eq!(names, ["A", "B"], "nearest first, then the limit");
    }

    /// Rows are made only for the stations kept, after the sort and rank: each kept row has
    /// its own id, next-day prices and change; without `near`, rows come in the price
    /// document's order, with the same prices.
    #[test]
    fn kept_rows_carry_their_own_next_day_and_the_list_keeps_the_documents_order() {
        let now = perth_instant(date(2026, 9, 29).at(10, 0, 0, 0));
        let base = [
            quote("D", "-31.951", 1, 179.9),
            quote("C", "-31.952", 1, 169.9),
            quote("B", "-31.953", 1, 169.9),
            quote("A", "-31.954", 1, 159.9),
            quote("A", "-31.954", 2, 171.9),
        ];
        let next = [quote("B", "-31.953", 1, 165.0), quote("D", "-31.951", 1, 181.0)];
        let base_refs: Vec<&Quote> = base.iter().collect();
        let next_refs: Vec<&Quote> = next.iter().collect();
        let q =
            parse_stations("near=-31.95,115.86&radius=5&product=1&sort=price&limit=3", now).expect("query");
        let rows = station_rows(&q, None, &base_refs, Some(&next_refs), shown());
        let kept: Vec<(&str, Option<usize>)> =
            rows.iter().map(|r| (r.row.station.name.as_str(), r.extra.rank)).collect();
        assert_eq!(kept, [("A", Some(1)), ("C", Some(2)), ("B", Some(2))], "C is nearer than B");
        assert_eq!(rows[2].extra.change, vec![(ProductCode::UNLEADED, -4.9)]);
        assert!(rows[0].extra.next.is_none() && rows[1].extra.next.is_none());
        assert!(rows.iter().all(|r| r.row.id == resource_id("2026-09-29", &r.row.station.id)));
        let list = parse_stations("product=1,2", now).expect("query");
        let rows = station_rows(&list, None, &base_refs, None, shown());
        let ids: Vec<&str> = rows.iter().map(|r| r.row.id.as_str()).collect();
        let document = wafuel_domain::documents::price_rows(base_refs.iter().copied(), "2026-09-29");
        let document_ids: Vec<&str> = document.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, document_ids);
        assert_eq!(rows[0].row.prices, document[0].prices);
    }
}
