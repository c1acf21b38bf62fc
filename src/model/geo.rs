//! Distances between nearby points. Pure.

/// Mean Earth radius in metres.
const EARTH_RADIUS_M: f64 = 6_371_000.0;

/// Metres between two (latitude, longitude) points. Equirectangular: accurate to well under
/// a metre at the few-kilometre scale every caller works at.
pub fn distance_m(a: (f64, f64), b: (f64, f64)) -> f64 {
    let mean = ((a.0 + b.0) / 2.0).to_radians();
    let dx = (a.1 - b.1).to_radians() * mean.cos();
    let dy = (a.0 - b.0).to_radians();
    EARTH_RADIUS_M * (dx * dx + dy * dy).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

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
