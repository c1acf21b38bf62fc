//! Query strings → validated requests, before any cache, store or source work: one grammar
//! ([`grammar`]) read by every route, then each route's values parsed into its own type.
//! Pure: the only outside input is the current instant, for day words and date ranges. Its
//! own crate (`wafuel-query`), on the domain alone.

// The domain and Perth time under the names the service uses for them.

pub mod events;
pub mod forecast;
pub mod grammar;
pub mod market;
pub mod selection;
pub mod stations;
pub mod values;
pub mod wholesale;

pub use grammar::{MAX_QUERY_LEN, QueryError};
pub use selection::{Dialect, Mode, Selection, parse_selection};
