//! The query of `/v1/events` (docs/api.md "Push: `GET /v1/events` (Server-Sent Events)"): `product` as on `/v1` and `since`,
//! the id of the last event seen (as `Last-Event-ID`), read by the one grammar. Pure.

use super::grammar::{Param, QueryError, filter, invalid, plain, read};
use super::selection::products;
use crate::model::codes::ProductCode;
use crate::model::codes::product_codes;

const PARAMS: [Param; 2] = [filter("product"), plain("since")];

/// A validated `/v1/events` query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventsQuery {
    /// Ascending, unique; every product when the query names none.
    pub products: Vec<ProductCode>,
    pub since: Option<i64>,
}

/// Parse and validate the query of `/v1/events`; any other parameter is refused.
pub fn parse_events(raw: &str) -> Result<EventsQuery, QueryError> {
    let values = read(raw, &PARAMS)?;
    let products = match values.get("product") {
        Some(v) => products(v)?,
        None => product_codes().collect(),
    };
    let since = values.get("since").map(event_id).transpose()?;
    Ok(EventsQuery { products, since })
}

/// An event id: decimal digits, as the stream wrote it (`since` and `Last-Event-ID`).
pub fn event_id(text: &str) -> Result<i64, QueryError> {
    if text.is_empty() || text.len() > 18 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid(format!("event id {text:?}")));
    }
    text.parse().map_err(|_| invalid(format!("event id {text:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_and_since() {
        let q = parse_events("FILTER[product]=4,1&since=17").expect("ok");
        assert_eq!(q.products, [1, 4]);
        assert_eq!(q.since, Some(17));
        assert_eq!(parse_events("").expect("ok").products, product_codes().collect::<Vec<_>>());
        for bad in ["since=-1", "since=1e3", "product=3", "day=today", "since=1&since=2", "filter[since]=1"] {
            assert!(parse_events(bad).is_err(), "{bad}");
        }
    }
}
