//! Background jobs: the hourly warm (and, later, enrichment).

pub mod enrich;
pub mod seed;
pub mod warm;
pub mod wholesale;
