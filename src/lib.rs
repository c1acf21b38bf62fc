//! wafuel: Western Australia's retail fuel prices as a JSON:API service.

pub mod model;
pub mod time;
