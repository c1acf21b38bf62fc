//! One decoded extract with the indexes the station API asks of it: quotes by station id,
//! and a grid of quotes by position for `near` + `radius`. Built once per published
//! snapshot and shared by every request. Pure.

use std::collections::HashMap;
use std::sync::Arc;

use wafuel_domain::geo::Point;
use wafuel_domain::key::StationId;
use wafuel_domain::route::{Placement, Route};
use wafuel_domain::station::Quote;
use wafuel_store::Snapshot;

/// Grid cell size in degrees (about 5.6 km north–south): a 10 km radius reads a few dozen
/// cells, a 100 km radius a few hundred, and the metro area's ~500 stations spread over ~40.
const CELL_DEG: f64 = 0.05;
/// Metres per degree of latitude on the mean sphere the distances use, rounded down so the
/// searched box is never smaller than the circle.
const METRES_PER_DEGREE: f64 = 111_000.0;

/// An extract and its indexes.
#[derive(Debug)]
pub struct DayCatalog {
    pub snapshot: Arc<Snapshot>,
    /// Quote positions by station id (digest), ascending.
    by_station: HashMap<StationId, Vec<u32>>,
    /// Quote positions by grid cell, ascending within a cell.
    grid: HashMap<(i32, i32), Vec<u32>>,
}

fn cell(latitude: f64, longitude: f64) -> (i32, i32) {
    ((latitude / CELL_DEG).floor() as i32, (longitude / CELL_DEG).floor() as i32)
}

impl DayCatalog {
    pub fn new(snapshot: Arc<Snapshot>) -> Self {
        let mut by_station: HashMap<StationId, Vec<u32>> = HashMap::new();
        let mut grid: HashMap<(i32, i32), Vec<u32>> = HashMap::new();
        for (i, q) in snapshot.quotes.iter().enumerate() {
            let Ok(i) = u32::try_from(i) else { break };
            by_station.entry(q.station.id.clone()).or_default().push(i);
            grid.entry(cell(q.station.latitude, q.station.longitude)).or_default().push(i);
        }
        Self { snapshot, by_station, grid }
    }

    pub fn quotes(&self) -> &[Quote] {
        &self.snapshot.quotes
    }

    /// The quotes of one station, in extract order.
    pub fn station(&self, id: &StationId) -> impl Iterator<Item = &Quote> {
        self.by_station.get(id).into_iter().flatten().map(|&i| &self.snapshot.quotes[i as usize])
    }

    /// Every quote whose station may lie within `radius_m` of `point`, in extract order: a
    /// superset of the circle (the bounding box of whole cells); the caller measures each.
    pub fn near(&self, point: Point, radius_m: f64) -> Vec<&Quote> {
        let dlat = radius_m / METRES_PER_DEGREE;
        // A degree of longitude is shortest at the box's edge farthest from the equator.
        let widest = (point.latitude.abs() + dlat).min(89.0).to_radians().cos();
        let dlon = dlat / widest.max(1e-6);
        let (south, west) = cell(point.latitude - dlat, point.longitude - dlon);
        let (north, east) = cell(point.latitude + dlat, point.longitude + dlon);
        let cells = i64::from(north - south + 1) * i64::from(east - west + 1);
        let mut found: Vec<u32> = if cells > self.grid.len() as i64 {
            // A box of more cells than the grid has: reading the grid is shorter.
            self.grid
                .iter()
                .filter(|((la, lo), _)| (south..=north).contains(la) && (west..=east).contains(lo))
                .flat_map(|(_, v)| v.iter().copied())
                .collect()
        } else {
            let mut found = Vec::new();
            for la in south..=north {
                for lo in west..=east {
                    if let Some(v) = self.grid.get(&(la, lo)) {
                        found.extend_from_slice(v);
                    }
                }
            }
            found
        };
        found.sort_unstable();
        found.into_iter().map(|i| &self.snapshot.quotes[i as usize]).collect()
    }
}

/// The grid cells a route's corridor touches, each with the segments whose corridor touches
/// it: built once per request from the route alone, then read against any day's grid.
#[derive(Debug)]
pub struct RouteCover {
    route: std::sync::Arc<Route>,
    detour_m: f64,
    /// Segment indices by cell, ascending, each once.
    cells: HashMap<(i32, i32), Vec<u32>>,
}

/// Longest piece of a segment boxed on its own: a great-circle arc's latitude bulges past its
/// ends' (by about L²·tan(lat)/8R), so long segments are boxed in pieces of at most 5 km,
/// whose bulge (under 1 m in WA) the margin covers.
const PIECE_M: f64 = 5_000.0;
/// Metres added to the corridor's half-width for the pieces' bulge and rounding.
const COVER_MARGIN_M: f64 = 50.0;

impl RouteCover {
    pub fn new(route: std::sync::Arc<Route>, detour_m: f64) -> Self {
        let mut cells: HashMap<(i32, i32), Vec<u32>> = HashMap::new();
        let dlat = (detour_m + COVER_MARGIN_M) / METRES_PER_DEGREE;
        for i in 0..route.segment_count() {
            let Ok(index) = u32::try_from(i) else { break };
            let samples = route.segment_samples(i, PIECE_M);
            for pair in samples.windows(2) {
                let (a, b) = (pair[0], pair[1]);
                let (lo_lat, hi_lat) = (a.latitude.min(b.latitude) - dlat, a.latitude.max(b.latitude) + dlat);
                let widest = lo_lat.abs().max(hi_lat.abs()).min(89.0).to_radians().cos();
                let dlon = dlat / widest.max(1e-6);
                let (south, west) = cell(lo_lat, a.longitude.min(b.longitude) - dlon);
                let (north, east) = cell(hi_lat, a.longitude.max(b.longitude) + dlon);
                for la in south..=north {
                    for lo in west..=east {
                        let list = cells.entry((la, lo)).or_default();
                        if list.last() != Some(&index) {
                            list.push(index);
                        }
                    }
                }
            }
        }
        Self { route, detour_m, cells }
    }

    /// Where a station at `point` lies against the route, when it is within the corridor:
    /// measured against every segment whose corridor touches its cell, which holds the
    /// nearest segment of any station within `detour_m`.
    pub fn place(&self, point: Point) -> Option<Placement> {
        let segments = self.cells.get(&cell(point.latitude, point.longitude))?;
        let placed = self.route.place_among(point, segments.iter().map(|&i| i as usize))?;
        (placed.detour <= self.detour_m).then_some(placed)
    }
}

impl DayCatalog {
    /// Every quote whose station lies in a cell of the route's corridor, in extract order: a
    /// superset of the stations within the detour; [`RouteCover::place`] measures each.
    pub fn along(&self, cover: &RouteCover) -> Vec<&Quote> {
        let mut found: Vec<u32> = Vec::new();
        if cover.cells.len() > self.grid.len() {
            for (c, v) in &self.grid {
                if cover.cells.contains_key(c) {
                    found.extend_from_slice(v);
                }
            }
        } else {
            for c in cover.cells.keys() {
                if let Some(v) = self.grid.get(c) {
                    found.extend_from_slice(v);
                }
            }
        }
        found.sort_unstable();
        found.into_iter().map(|i| &self.snapshot.quotes[i as usize]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;
    use jiff::civil::date;
    use wafuel_domain::geo::great_circle_m;
    use wafuel_domain::testing;

    fn quote(i: usize, lat: f64, lng: f64) -> Quote {
        testing::quote(
            &testing::station(&format!("S{i}"), "BP", &format!("{lat:.5}"), &format!("{lng:.5}")),
            1,
            180.0,
        )
    }

    /// Deterministic numbers in [0, 1) (xorshift64) from `seed`.
    fn numbers(mut seed: u64) -> impl FnMut() -> f64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// A deterministic spread of stations over the south-west of the state.
    fn catalog(n: usize) -> DayCatalog {
        let mut next = numbers(0x2545_f491_4f6c_dd1d);
        let quotes = (0..n).map(|i| quote(i, -35.0 + 5.0 * next(), 114.5 + 6.0 * next())).collect();
        DayCatalog::new(Arc::new(Snapshot {
            key: "extract:1:2026-11-23".into(),
            date: date(2026, 11, 23),
            fetched_at: Timestamp::UNIX_EPOCH,
            expires_at: Timestamp::UNIX_EPOCH,
            quotes: Arc::new(quotes),
        }))
    }

    /// The grid finds exactly what a scan of every quote finds, in the same order, for
    /// radii from a street to the largest allowed.
    #[test]
    fn grid_agrees_with_a_linear_scan() {
        let day = catalog(2_000);
        let inside = |q: &Quote, p: Point, r: f64| {
            great_circle_m((p.latitude, p.longitude), (q.station.latitude, q.station.longitude)) <= r
        };
        for (i, p) in day.quotes().iter().step_by(37).enumerate() {
            let point = Point { latitude: p.station.latitude + 0.01, longitude: p.station.longitude - 0.02 };
            for radius in [500.0, 5_000.0, 10_000.0, 50_000.0, 100_000.0] {
                let scan: Vec<&str> = day
                    .quotes()
                    .iter()
                    .filter(|q| inside(q, point, radius))
                    .map(|q| q.station.id.as_str())
                    .collect();
                let grid: Vec<&str> = day
                    .near(point, radius)
                    .into_iter()
                    .filter(|q| inside(q, point, radius))
                    .map(|q| q.station.id.as_str())
                    .collect();
                assert_eq!(grid, scan, "point {i}, radius {radius}");
            }
        }
    }

    /// Stations along random routes through the grid and the cover equal a brute-force
    /// reference (every station against every segment), exactly: the same stations, the
    /// same detour and along. Routes mix street-length steps with arcs of 100 km and more,
    /// so stations beside a segment's middle, far from any vertex, are among them.
    #[test]
    fn route_cover_agrees_with_every_station_against_every_segment() {
        let day = catalog(3_000);
        let mut next = numbers(0x9e37_79b9_7f4a_7c15);
        let mut beside_middles = 0;
        for trial in 0..40 {
            let mut at = Point { latitude: -35.0 + 5.0 * next(), longitude: 114.5 + 6.0 * next() };
            let mut points = vec![at];
            for _ in 0..(2 + trial * 7 % 60) {
                // Mostly short steps; now and then an arc across half the region.
                let reach = if next() < 0.15 { 1.5 } else { 0.03 };
                at = Point {
                    latitude: (at.latitude + reach * (next() - 0.5)).clamp(-35.5, -29.5),
                    longitude: (at.longitude + reach * (next() - 0.5)).clamp(114.0, 121.0),
                };
                points.push(at);
            }
            let route = Arc::new(Route::new(points));
            let detour_m = [200.0, 2_000.0, 20_000.0][trial % 3];
            let cover = RouteCover::new(route.clone(), detour_m);
            let found: Vec<(&str, f64, f64)> = day
                .along(&cover)
                .into_iter()
                .filter_map(|q| {
                    let p = Point { latitude: q.station.latitude, longitude: q.station.longitude };
                    cover.place(p).map(|placed| (q.station.id.as_str(), placed.detour, placed.along))
                })
                .collect();
            let reference: Vec<(&str, f64, f64)> = day
                .quotes()
                .iter()
                .filter_map(|q| {
                    let p = Point { latitude: q.station.latitude, longitude: q.station.longitude };
                    let placed = route.place(p);
                    (placed.detour <= detour_m).then(|| (q.station.id.as_str(), placed.detour, placed.along))
                })
                .collect();
            assert_eq!(found, reference, "route {trial}, detour {detour_m}");
            // Count stations whose nearest vertex is much farther than the route itself.
            for (id, detour, _) in &reference {
                let Some(q) = day.quotes().iter().find(|q| q.station.id.as_str() == *id) else {
                    continue;
                };
                let vertex = route
                    .points()
                    .iter()
                    .map(|v| {
                        great_circle_m((v.latitude, v.longitude), (q.station.latitude, q.station.longitude))
                    })
                    .fold(f64::MAX, f64::min);
                if vertex > 10.0 * detour.max(100.0) {
                    beside_middles += 1;
                }
            }
        }
        assert!(beside_middles > 20, "the routes pass stations far from any vertex ({beside_middles})");
    }

    #[test]
    fn stations_by_id() {
        let day = catalog(50);
        let wanted = day.quotes()[7].station.id.clone();
        let found: Vec<&Quote> = day.station(&wanted).collect();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].station.id, wanted);
        assert_eq!(day.station(&StationId::from_digest("0".repeat(64))).count(), 0);
    }
}
