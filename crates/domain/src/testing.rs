//! Stations and quotes for unit tests, normalised from the few fields tests vary (feature
//! `testing`, which the service's own unit tests turn on).

use std::sync::Arc;

use crate::normalize::normalize_station;
use crate::record::SourceRecord;
use crate::station::{Quote, Station};

/// A Perth station of `brand` named `name` (its street is `<name> St`) at `lat`, `lng`.
pub fn station(name: &str, brand: &str, lat: &str, lng: &str) -> Arc<Station> {
    let record = SourceRecord {
        brand: Some(brand.to_string().into()),
        trading_name: Some(name.to_string().into()),
        location: Some("PERTH".into()),
        address: Some(format!("{name} St").into()),
        latitude: Some(lat.to_string().into()),
        longitude: Some(lng.to_string().into()),
        ..SourceRecord::default()
    };
    Arc::new(normalize_station(&record).expect("station"))
}

/// `station`'s price of `product`.
pub fn quote(station: &Arc<Station>, product: u8, price: f64) -> Quote {
    let product = crate::codes::ProductCode::parse(product).expect("a product code");
    Quote { product, price, price_text: price.to_string(), station: station.clone() }
}
