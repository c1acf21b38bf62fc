//! A driving route as the station API reads it: an encoded polyline (precision 5, the form
//! OSRM, Google Directions and Mapbox return) decoded to points, and the exact great-circle
//! measures of a station against it — how far it lies off the route (`detour`) and how far
//! along the route its nearest point is (`along`). Pure.
//!
//! Each segment is the great-circle arc between consecutive points. The nearest point of an
//! arc to a station is found with unit vectors: the station projected onto the arc's plane,
//! kept when it falls between the ends, else the nearer end. No sampling, no flat-earth step.

use super::geo::{EARTH_RADIUS_M, Point};

/// Fewest and most points a route may have.
pub const MIN_POINTS: usize = 2;
pub const MAX_POINTS: usize = 1_000;

/// Why an encoded polyline was refused (the query's `invalid_query` reason, for logs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("route is not an encoded polyline")]
    Malformed,
    #[error("route has {0} points (2 to 1,000)")]
    Points(usize),
    #[error("route point {0} is outside Western Australia")]
    Outside(usize),
}

/// A unit vector on the sphere.
type Vec3 = [f64; 3];

fn unit(p: Point) -> Vec3 {
    let (lat, lng) = (p.latitude.to_radians(), p.longitude.to_radians());
    [lat.cos() * lng.cos(), lat.cos() * lng.sin(), lat.sin()]
}

fn dot(a: Vec3, b: Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn norm(a: Vec3) -> f64 {
    dot(a, a).sqrt()
}

/// The angle between two unit vectors, in radians: atan2 of the cross and dot products,
/// accurate at every angle (acos of the dot loses metres at short range).
fn angle(a: Vec3, b: Vec3) -> f64 {
    norm(cross(a, b)).atan2(dot(a, b))
}

/// One arc of the route, prepared once.
#[derive(Debug, Clone)]
struct Segment {
    a: Vec3,
    b: Vec3,
    /// The unit normal of the arc's plane; `None` when the ends coincide.
    normal: Option<Vec3>,
    /// Metres from the route's start to `a`.
    start_m: f64,
    length_m: f64,
}

impl Segment {
    /// (metres from the arc, metres along the arc from `a`) of the arc's nearest point to `p`.
    fn nearest(&self, p: Vec3) -> (f64, f64) {
        let to_a = angle(p, self.a) * EARTH_RADIUS_M;
        let Some(n) = self.normal else { return (to_a, 0.0) };
        // The station projected onto the arc's great circle.
        let off = dot(p, n);
        let c = [p[0] - off * n[0], p[1] - off * n[1], p[2] - off * n[2]];
        let len = norm(c);
        if len > 1e-12 {
            let c = [c[0] / len, c[1] / len, c[2] / len];
            // Between the ends (on the minor arc a→b) when a→c and c→b both turn as a→b does.
            if dot(cross(self.a, c), n) >= 0.0 && dot(cross(c, self.b), n) >= 0.0 {
                return (angle(p, c) * EARTH_RADIUS_M, angle(self.a, c) * EARTH_RADIUS_M);
            }
        }
        let to_b = angle(p, self.b) * EARTH_RADIUS_M;
        if to_b < to_a { (to_b, self.length_m) } else { (to_a, 0.0) }
    }
}

/// A decoded route with its segments prepared.
#[derive(Debug, Clone)]
pub struct Route {
    points: Vec<Point>,
    segments: Vec<Segment>,
}

/// Where a station lies against a route, in metres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// Great-circle metres from the route's nearest point.
    pub detour: f64,
    /// Metres along the route from its start to that nearest point.
    pub along: f64,
}

impl Route {
    /// Decode an encoded polyline (precision 5) whose points all lie within `bounds`
    /// ((south, north), (west, east)).
    pub fn decode(encoded: &str, bounds: ((f64, f64), (f64, f64))) -> Result<Self, RouteError> {
        check_chunks(encoded)?;
        let line = polyline::decode_polyline(encoded, 5).map_err(|_| RouteError::Malformed)?;
        let points: Vec<Point> = line.0.iter().map(|c| Point { latitude: c.y, longitude: c.x }).collect();
        if !(MIN_POINTS..=MAX_POINTS).contains(&points.len()) {
            return Err(RouteError::Points(points.len()));
        }
        let ((south, north), (west, east)) = bounds;
        if let Some(i) = points
            .iter()
            .position(|p| !(south..=north).contains(&p.latitude) || !(west..=east).contains(&p.longitude))
        {
            return Err(RouteError::Outside(i));
        }
        Ok(Self::new(points))
    }

    /// A route through `points` (at least one).
    pub fn new(points: Vec<Point>) -> Self {
        let mut segments = Vec::with_capacity(points.len().saturating_sub(1));
        let mut start_m = 0.0;
        for pair in points.windows(2) {
            let (a, b) = (unit(pair[0]), unit(pair[1]));
            let n = cross(a, b);
            let len = norm(n);
            let normal = (len > 1e-15).then(|| [n[0] / len, n[1] / len, n[2] / len]);
            let length_m = angle(a, b) * EARTH_RADIUS_M;
            segments.push(Segment { a, b, normal, start_m, length_m });
            start_m += length_m;
        }
        Self { points, segments }
    }

    /// Bytes the route holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.points.capacity() * std::mem::size_of::<Point>()
            + self.segments.capacity() * std::mem::size_of::<Segment>()
    }

    pub fn points(&self) -> &[Point] {
        &self.points
    }

    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    /// The route's length in metres.
    pub fn length_m(&self) -> f64 {
        self.segments.last().map_or(0.0, |s| s.start_m + s.length_m)
    }

    /// Points along segment `i` at most `step_m` apart, both ends included: the pieces whose
    /// boxes together cover the arc (an arc's latitude can bulge past its ends' latitudes).
    pub fn segment_samples(&self, i: usize, step_m: f64) -> Vec<Point> {
        let s = &self.segments[i];
        let pieces = (s.length_m / step_m).ceil().max(1.0) as usize;
        let theta = s.length_m / EARTH_RADIUS_M;
        (0..=pieces)
            .map(|k| {
                let t = k as f64 / pieces as f64;
                let v = slerp(s.a, s.b, theta, t);
                Point {
                    latitude: v[2].clamp(-1.0, 1.0).asin().to_degrees(),
                    longitude: v[1].atan2(v[0]).to_degrees(),
                }
            })
            .collect()
    }

    /// Where `p` lies against the segments `candidates` (indices; the nearest wins, the
    /// earliest on a tie), or `None` when there are none.
    pub fn place_among(&self, p: Point, candidates: impl IntoIterator<Item = usize>) -> Option<Placement> {
        let v = unit(p);
        let mut best: Option<(usize, f64, f64)> = None;
        for i in candidates {
            let s = &self.segments[i];
            let (d, along) = s.nearest(v);
            let better = match best {
                None => true,
                Some((bi, bd, _)) => d < bd || (d == bd && i < bi),
            };
            if better {
                best = Some((i, d, s.start_m + along));
            }
        }
        best.map(|(_, detour, along)| Placement { detour, along })
    }

    /// Where `p` lies against the whole route: every segment measured.
    pub fn place(&self, p: Point) -> Placement {
        self.place_among(p, 0..self.segments.len()).unwrap_or_else(|| Placement {
            detour: angle(unit(p), unit(self.points[0])) * EARTH_RADIUS_M,
            along: 0.0,
        })
    }
}

/// The point a fraction `t` of the way along the arc a→b of `theta` radians.
fn slerp(a: Vec3, b: Vec3, theta: f64, t: f64) -> Vec3 {
    if theta < 1e-12 {
        return a;
    }
    let (wa, wb) = (((1.0 - t) * theta).sin() / theta.sin(), (t * theta).sin() / theta.sin());
    [wa * a[0] + wb * b[0], wa * a[1] + wb * b[1], wa * a[2] + wb * b[2]]
}

/// The polyline's grammar before decoding: printable characters `?`…`~` only, every value
/// closed (its last character below `_`), and no value longer than six characters — the
/// most a change of 360° at precision 5 needs — so decoding can neither overflow nor end
/// in the middle of a value.
fn check_chunks(encoded: &str) -> Result<(), RouteError> {
    let mut run = 0;
    for b in encoded.bytes() {
        if !(63..=126).contains(&b) {
            return Err(RouteError::Malformed);
        }
        run += 1;
        if run > 6 {
            return Err(RouteError::Malformed);
        }
        if b < 95 {
            run = 0;
        }
    }
    if run != 0 || encoded.is_empty() {
        return Err(RouteError::Malformed);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
