//! Distances between nearby points. Pure.

/// A point in decimal degrees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub latitude: f64,
    pub longitude: f64,
}

/// Mean Earth radius in metres.
pub(crate) const EARTH_RADIUS_M: f64 = 6_371_000.0;

/// Metres between two (latitude, longitude) points. Equirectangular: accurate to well under
/// a metre at the few-kilometre scale every caller works at.
pub fn distance_m(a: (f64, f64), b: (f64, f64)) -> f64 {
    let mean = ((a.0 + b.0) / 2.0).to_radians();
    let dx = (a.1 - b.1).to_radians() * mean.cos();
    let dy = (a.0 - b.0).to_radians();
    EARTH_RADIUS_M * (dx * dx + dy * dy).sqrt()
}

/// Great-circle metres between two (latitude, longitude) points (haversine on the mean
/// sphere): exact for any distance on the sphere, which the station API reports.
pub fn great_circle_m(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (lat1, lat2) = (a.0.to_radians(), b.0.to_radians());
    let dlat = lat2 - lat1;
    let dlon = (b.1 - a.1).to_radians();
    let h = (dlat / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_M * h.sqrt().min(1.0).asin()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn great_circle_distances() {
        assert_eq!(great_circle_m((-31.95, 115.86), (-31.95, 115.86)), 0.0);
        // One degree of latitude on the mean sphere: 111.19 km.
        let d = great_circle_m((-31.0, 115.86), (-32.0, 115.86));
        assert!((d - 111_194.9).abs() < 1.0, "{d}");
        // Perth to Kununurra, about 2,240 km; equirectangular agrees at short range.
        let d = great_circle_m((-31.9523, 115.8613), (-15.7731, 128.7386));
        assert!((2_200_000.0..2_280_000.0).contains(&d), "{d}");
        let near = ((-31.7759, 115.9695), (-31.6638, 116.0300));
        assert!((great_circle_m(near.0, near.1) - distance_m(near.0, near.1)).abs() < 1.0);
    }

    #[test]
    fn known_distances() {
        assert_eq!(distance_m((-31.95, 115.86), (-31.95, 115.86)), 0.0);
        // 0.001° of latitude is about 111 m anywhere.
        let d = distance_m((-31.95, 115.86), (-31.951, 115.86));
        assert!((d - 111.2).abs() < 0.5, "{d}");
        // Ellenbrook to Bullsbrook, about 13 km.
        let d = distance_m((-31.7759, 115.9695), (-31.6638, 116.0300));
        assert!((12_000.0..14_500.0).contains(&d), "{d}");
    }
}
