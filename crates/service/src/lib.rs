//! wafuel's service: the price service (snapshots: planning, freshness, single flight, the
//! fenced fill), the catalog (a parsed query into the model of its document), the jobs (warm,
//! enrichment, history seeding), every caching rule (`cache_policy`) and the compute slots.
//! Its own crate (`wafuel-service`): it builds on the domain, the query grammar, the source,
//! the store and the provider; the web layer above it asks it for models.

// The layers below under the names the service uses for them.

pub mod cache_policy;
pub mod catalog;
pub mod jobs;
pub mod map_tiles;
pub mod memo;
pub mod snapshot;
pub mod sync;
