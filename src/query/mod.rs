//! Query strings → validated requests, before any cache, store or source work: one grammar
//! ([`grammar`]) read by every route, then each route's values parsed into its own type.
//! Pure: the only outside input is the current instant, for day words and date ranges.

pub(crate) mod events;
pub mod forecast;
pub(crate) mod grammar;
pub(crate) mod selection;
pub mod stations;

pub use grammar::{MAX_QUERY_LEN, QueryError};
pub use selection::{Dialect, Mode, Selection, parse_selection};
