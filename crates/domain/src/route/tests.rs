//! Decoding against the format's published example and its own encoder, the refusals, and
//! the exact nearest point against a fine walk along each arc.

use super::*;
use proptest::prelude::*;

const WORLD: ((f64, f64), (f64, f64)) = ((-90.0, 90.0), (-180.0, 180.0));
const WA: ((f64, f64), (f64, f64)) = ((-36.0, -13.0), (112.0, 130.0));

fn pt(latitude: f64, longitude: f64) -> Point {
    Point { latitude, longitude }
}

#[test]
fn decodes_the_formats_published_example() {
    // The Encoded Polyline Algorithm Format's own example: three points in California.
    let route = Route::decode("_p~iF~ps|U_ulLnnqC_mqNvxq`@", WORLD).expect("decodes");
    let got: Vec<(f64, f64)> = route.points().iter().map(|p| (p.latitude, p.longitude)).collect();
    assert_eq!(got, [(38.5, -120.2), (40.7, -120.95), (43.252, -126.453)]);
    assert_eq!(route.segment_count(), 2);
    assert_eq!(
        Route::decode("_p~iF~ps|U_ulLnnqC_mqNvxq`@", WA).expect_err("California is not WA"),
        RouteError::Outside(0)
    );
}

#[test]
fn refusals() {
    let perth = polyline::encode_coordinates([geo_types::coord! { x: 115.86, y: -31.95 }], 5).expect("one");
    for (bad, why) in [
        ("", RouteError::Malformed),
        (perth.as_str(), RouteError::Points(1)),
        ("_p~iF~ps|U_ulLnnqC_mqNvxq", RouteError::Malformed), // the last value never closes
        ("_p~iF~ps|U_ulL", RouteError::Malformed),            // a latitude without longitude
        ("_p~iF ~ps|U", RouteError::Malformed),               // a space
        ("_p~iF~ps|U\u{e9}", RouteError::Malformed),          // not ASCII
        ("~~~~~~~?~ps|U", RouteError::Malformed),             // a value of eight characters
    ] {
        assert_eq!(Route::decode(bad, WORLD).map(|_| ()), Err(why), "{bad:?}");
    }
    let many: Vec<geo_types::Coord<f64>> =
        (0..1_001).map(|i| geo_types::coord! { x: 115.0 + f64::from(i) * 0.001, y: -31.9 }).collect();
    let encoded = polyline::encode_coordinates(many.clone(), 5).expect("encodes");
    assert_eq!(Route::decode(&encoded, WA).map(|_| ()), Err(RouteError::Points(1_001)));
    let encoded = polyline::encode_coordinates(many[..1_000].to_vec(), 5).expect("encodes");
    assert_eq!(Route::decode(&encoded, WA).expect("1,000 points").points().len(), 1_000);
}

/// The metres from `p` to the arc a→b and along it, by walking the arc in `steps` pieces.
fn walked(a: Point, b: Point, p: Point, steps: usize) -> (f64, f64) {
    let route = Route::new(vec![a, b]);
    let len = route.length_m();
    let samples = route.segment_samples(0, len / steps as f64 + 1e-9);
    let mut best = (f64::MAX, 0.0);
    for (k, s) in samples.iter().enumerate() {
        let d = super::super::geo::great_circle_m((s.latitude, s.longitude), (p.latitude, p.longitude));
        if d < best.0 {
            best = (d, len * k as f64 / (samples.len() - 1) as f64);
        }
    }
    best
}

#[test]
fn a_station_beside_the_middle_of_a_long_arc_is_close() {
    // Perth to Bunbury in one arc (about 150 km); a station 300 m east of its middle is 75 km
    // from either end, and a little under 300 m from the arc (which runs south-south-west).
    let (a, b) = (pt(-31.95, 115.86), pt(-33.33, 115.64));
    let route = Route::new(vec![a, b]);
    let mid = route.segment_samples(0, route.length_m() / 2.0)[1];
    let off = pt(mid.latitude, mid.longitude + 300.0 / (111_195.0 * mid.latitude.to_radians().cos()));
    let placed = route.place(off);
    assert!((280.0..=300.0).contains(&placed.detour), "{placed:?}");
    // The foot moves about 300 m × sin(8°) along the arc from the middle.
    assert!((placed.along - route.length_m() / 2.0).abs() < 60.0, "{placed:?}");
    let (walk_d, walk_along) = walked(a, b, off, 200_000);
    assert!((placed.detour - walk_d).abs() < 0.5 && (placed.along - walk_along).abs() < 2.0);
}

#[test]
fn ends_and_repeated_points() {
    let (a, b) = (pt(-31.95, 115.86), pt(-31.90, 115.86));
    let route = Route::new(vec![a, a, b]);
    // Behind the start: the start is nearest, zero along.
    let behind = route.place(pt(-31.96, 115.86));
    assert!((behind.detour - 1_112.0).abs() < 1.0 && behind.along == 0.0, "{behind:?}");
    // Past the end: the end is nearest, the whole length along.
    let past = route.place(pt(-31.89, 115.86));
    assert!((past.along - route.length_m()).abs() < 1e-6, "{past:?}");
    assert!((past.detour - 1_112.0).abs() < 1.0, "{past:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Any WA points at precision 5 come back from the format's encoder as they went in.
    #[test]
    fn round_trips_the_encoder(points in prop::collection::vec((-3_600_000i32..-1_300_000, 11_200_000i32..13_000_000), 2..60)) {
        let coords: Vec<geo_types::Coord<f64>> =
            points.iter().map(|&(la, lo)| geo_types::coord! { x: f64::from(lo) / 1e5, y: f64::from(la) / 1e5 }).collect();
        let encoded = polyline::encode_coordinates(coords, 5).expect("encodes");
        let route = Route::decode(&encoded, WA).expect("decodes");
        let got: Vec<(i64, i64)> =
            route.points().iter().map(|p| ((p.latitude * 1e5).round() as i64, (p.longitude * 1e5).round() as i64)).collect();
        let want: Vec<(i64, i64)> = points.iter().map(|&(la, lo)| (i64::from(la), i64::from(lo))).collect();
        prop_assert_eq!(got, want);
    }

    /// Garbage never panics: it decodes or is refused.
    #[test]
    fn any_text_is_decoded_or_refused(text in "[\\x20-\\x7e]{0,80}") {
        let _ = Route::decode(&text, WA);
    }

    /// The exact nearest point of an arc agrees with a fine walk along it, for arcs from a
    /// street to half the state and points on either side, before the start or past the end.
    #[test]
    fn the_nearest_point_agrees_with_a_walk(
        a in (-35.0f64..-15.0, 113.0f64..129.0),
        d in (-3.0f64..3.0, -3.0f64..3.0),
        scale in prop::sample::select(vec![0.001, 0.05, 1.0]),
        off in (-0.4f64..0.4, -0.4f64..0.4),
    ) {
        let a = pt(a.0, a.1);
        let b = pt(a.latitude + d.0 * scale, a.longitude + d.1 * scale);
        let p = pt(a.latitude + off.0 * scale * 3.0, a.longitude + off.1 * scale * 3.0);
        let placed = Route::new(vec![a, b]).place(p);
        let len = Route::new(vec![a, b]).length_m();
        let (walk_d, walk_along) = walked(a, b, p, 20_000);
        // The walk's nearest sample is at most half a step from the true nearest point.
        let step = len / 20_000.0;
        // (To a millimetre: unit vectors of arcs a few metres long carry that much rounding.)
        prop_assert!(placed.detour <= walk_d + 1e-3, "{:?} vs {}", placed, walk_d);
        prop_assert!(walk_d - placed.detour <= step, "{:?} vs {}", placed, walk_d);
        prop_assert!((0.0..=len + 1e-3).contains(&placed.along));
        // The walk's sample nearest the foot is at most half a step from it.
        prop_assert!((placed.along - walk_along).abs() <= step + 0.01, "{:?} vs {}", placed, walk_along);
    }
}
