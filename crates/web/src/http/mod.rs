//! The public HTTP surface: exactly the routes of docs/api.md, and 404 for everything else.
//! HTTP only: documents come from `catalog/` as models and are written by `render/`.
//!
//! - [`state`]: what every handler shares; [`routes`]: the route table and the router;
//! - [`endpoint`]: the one pipeline of every document endpoint; [`documents`]: each
//!   endpoint's description;
//! - [`negotiate`]: media; [`front`] and [`rendered`]: the two caches of finished documents;
//! - [`answer`]: every answer's headers, conditional requests and codings; [`errors`]: every
//!   failure's answer;
//! - [`gate`]: the rules every request meets before anything answers it;
//! - [`root`], [`cors`], [`logos`], [`explore`] (its base map: [`street_map`], [`map_tiles`]), [`events`]: the other routes.

pub(crate) mod answer;
pub(crate) mod cors;
pub(crate) mod documents;
pub(crate) mod endpoint;
pub mod errors;
pub(crate) mod events;
pub(crate) mod explore;
pub mod explore_page;
pub(crate) mod front;
pub mod gate;
pub(crate) mod logos;
mod map_tiles;
pub(crate) mod negotiate;
pub mod paths;
pub mod rendered;
pub(crate) mod root;
pub mod routes;
pub(crate) mod state;
pub mod street_map;

pub use routes::{front_first, router};
pub use state::AppState;
