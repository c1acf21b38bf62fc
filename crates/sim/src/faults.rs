//! Fault injection for the simulated source: what can go wrong with the real origin, on
//! demand, for tests and benchmarks.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A way for a feed body to be wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum FaultMode {
    /// A raw `&` in a name: not well-formed XML.
    Malformed,
    /// A DOCTYPE with an entity declaration before the root.
    Doctype,
    /// A well-formed body larger than 4 MiB.
    Oversize,
    /// Every item dated the day before the requested day.
    WrongDate,
    /// The first station repeated with a different price.
    Conflict,
    /// A channel with no items, whatever the day.
    Empty,
    /// A byte sequence that is not UTF-8 inside a name.
    InvalidUtf8,
    /// A 302 to another path instead of the feed.
    Redirect,
    /// The first item's price is 0.
    BadPrice,
    /// The first item's latitude is out of range.
    BadCoordinate,
    /// The first item has no `<address>`.
    MissingField,
    /// The first item has its `<brand>` twice.
    RepeatedElement,
}

/// What the origin does wrong, and to which requests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    /// Answer with this status (e.g. 403, 429, 500, 503) and a short HTML body.
    pub status: Option<u16>,
    /// `Retry-After` seconds sent with `status`.
    pub retry_after: Option<u32>,
    /// Wait this long before sending headers.
    pub delay_ms: Option<u64>,
    /// Send the body in 4 KiB chunks with this pause between them.
    pub slow_body_ms: Option<u64>,
    /// Corrupt the body this way.
    pub mode: Option<FaultMode>,
    /// Only requests for these products are affected (all when absent).
    pub products: Option<Vec<u8>>,
    /// Only the first N affected requests are faulted; later ones are served normally.
    pub times: Option<u32>,
}

impl Faults {
    pub fn is_empty(&self) -> bool {
        self.status.is_none() && self.delay_ms.is_none() && self.slow_body_ms.is_none() && self.mode.is_none()
    }

    /// Whether a request for `product` is affected (before counting `times`).
    pub fn applies_to(&self, product: Option<u8>) -> bool {
        match (&self.products, product) {
            (None, _) => true,
            (Some(list), Some(p)) => list.contains(&p),
            (Some(_), None) => false,
        }
    }

    pub fn delay(&self) -> Option<Duration> {
        self.delay_ms.map(Duration::from_millis)
    }

    pub fn slow_body(&self) -> Option<Duration> {
        self.slow_body_ms.map(Duration::from_millis)
    }
}
