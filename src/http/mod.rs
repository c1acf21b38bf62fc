//! The public HTTP surface: exactly the routes of docs/api.md, and 404 for everything else.
//! HTTP only: documents come from `catalog/` as models and are written by `render/`.
//!
//! - [`state`]: what every handler shares; [`routes`]: the route table and the router;
//! - [`endpoint`]: the one pipeline of every document endpoint; [`documents`]: each
//!   endpoint's description;
//! - [`negotiate`]: media; [`front`] and [`rendered`]: the two caches of finished documents;
//! - [`answer`]: every answer's headers, conditional requests and codings; [`errors`]: every
//!   failure's answer;
//! - [`root`], [`cors`], [`logos`], [`explore`], [`events`]: the other routes.

pub mod answer;
pub mod cors;
pub mod documents;
pub mod endpoint;
pub mod errors;
pub mod events;
pub mod explore;
pub mod front;
pub mod logos;
pub mod negotiate;
pub mod paths;
pub mod rendered;
pub mod root;
pub mod routes;
pub mod state;

pub use routes::{front_first, router};
pub use state::AppState;
