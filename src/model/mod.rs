//! The domain: code tables, the station model and the pure normalisation of feed items.

pub mod codes;
pub mod documents;
pub mod error_code;
pub mod forecast;
pub(crate) mod geo;
pub mod key;
pub mod normalize;
pub mod phone;
pub mod profile;
pub mod record;
pub mod restrictions;
pub mod route;
pub mod site_features;
pub mod station;
pub mod stats;
