//! The path patterns of every route, as the router takes them: named once, so the
//! endpoints, the route table and the metric labels agree.

pub const ROOT: &str = "/";
pub const V1: &str = "/v1";
pub const LEGACY: &str = "/legacy";
pub const STATIONS: &str = "/v1/stations";
pub const STATION: &str = "/v1/stations/{station_id}";
pub const STATION_HISTORY: &str = "/v1/stations/{station_id}/history";
pub const STATS: &str = "/v1/stats";
pub const BRANDS: &str = "/v1/brands";
pub const STATUS: &str = "/v1/status";
pub const FORECAST: &str = "/v1/forecast";
pub const FORECAST_RECORD: &str = "/v1/forecast/record";
pub const STATION_FORECAST: &str = "/v1/stations/{station_id}/forecast";
pub const EVENTS: &str = "/v1/events";
pub const WHOLESALE: &str = "/v1/wholesale";
pub const LOGO: &str = "/static/image/brand/{filename}";
pub const EXPLORE: &str = "/explore";
pub const EXPLORE_FILE: &str = "/explore/{file}";
/// The explorer's self-hosted map tiles (`--map-pmtiles`).
pub const MAP_TILE: &str = "/map/tiles/{z}/{x}/{y}";

/// The admin port's routes.
pub const HEALTHZ: &str = "/healthz";
pub const READYZ: &str = "/readyz";
pub const METRICS: &str = "/metrics";

/// Every admin route, in the order metrics list them (after the public ones).
pub const ADMIN: [&str; 3] = [HEALTHZ, READYZ, METRICS];
