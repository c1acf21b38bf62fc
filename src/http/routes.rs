//! The public routes, named once: the router, the front-cache dispatch and the metric labels
//! all take their paths from here (the labels are the router's own path patterns).

pub const ROOT: &str = "/";
pub const V1: &str = "/v1";
pub const LEGACY: &str = "/legacy";
pub const STATIONS: &str = "/v1/stations";
pub const STATION: &str = "/v1/stations/{station_id}";
pub const STATION_HISTORY: &str = "/v1/stations/{station_id}/history";
pub const STATS: &str = "/v1/stats";
pub const LOGO: &str = "/static/image/brand/{filename}";
pub const EXPLORE: &str = "/explore";
pub const EXPLORE_FILE: &str = "/explore/{file}";

/// Every public route, in the order metrics list them.
pub const PUBLIC: [&str; 10] =
    [ROOT, V1, LEGACY, STATIONS, STATION, STATION_HISTORY, STATS, LOGO, EXPLORE, EXPLORE_FILE];

/// The admin port's routes.
pub const HEALTHZ: &str = "/healthz";
pub const READYZ: &str = "/readyz";
pub const METRICS: &str = "/metrics";

/// Every admin route, in the order metrics list them (after the public ones).
pub const ADMIN: [&str; 3] = [HEALTHZ, READYZ, METRICS];
