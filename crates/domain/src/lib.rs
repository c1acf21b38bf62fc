//! wafuel's domain: code tables, the station model, the pure normalisation of feed items,
//! statistics, the forecast, route geometry and Perth time. Pure: no I/O, no runtime; every layer of the
//! service builds on it and it on none of them (docs/design.md).

pub mod backfill;
pub mod codes;
pub mod documents;
pub mod error_code;
pub mod forecast;
pub mod geo;
pub mod key;
pub mod last_change;
pub mod normalize;
pub mod opening;
pub mod phone;
pub mod price;
pub mod profile;
pub mod record;
pub mod restrictions;
pub mod route;
pub mod site_features;
pub mod station;
pub mod stats;
pub mod stop_cost;
pub mod sync;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod time;
pub mod wholesale;
