//! The one grammar of every query string: at most [`MAX_QUERY_LEN`] characters, form-encoded,
//! names matched case-insensitively, a filter also spelled `filter[name]`, each parameter at
//! most once (whichever spelling), and any name a route does not take refused. Every route
//! (`/v1`, `/legacy`, the station API, `/v1/events`) reads its query through [`read`] and then
//! parses the values it got. Pure.

use crate::model::error_code::detail;

/// Longest accepted serialized query string.
pub const MAX_QUERY_LEN: usize = 1024;
/// Longest query string of a station search along a route (an encoded polyline of up to
/// 1,000 points), as sent, percent escapes included.
pub const MAX_ROUTE_QUERY_LEN: usize = 8192;

/// A rejected query: always 400 `invalid_query` (or `too_many_combinations`), with one of
/// the documented texts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{detail} ({reason})")]
pub struct QueryError {
    pub detail: &'static str,
    /// For logs only.
    pub reason: String,
}

/// `invalid_query`, with the reason logged.
pub(crate) fn invalid(reason: impl Into<String>) -> QueryError {
    QueryError { detail: detail::INVALID_QUERY, reason: reason.into() }
}

/// A parameter a route takes: its canonical (lower-case) name, and whether it is a filter
/// (also spelled `filter[name]`, JSON:API's filter family).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub filter: bool,
}

/// A filter: `name` or `filter[name]`.
pub const fn filter(name: &'static str) -> Param {
    Param { name, filter: true }
}

/// A parameter without the `filter[…]` spelling.
pub const fn plain(name: &'static str) -> Param {
    Param { name, filter: false }
}

/// The values a query gave, by canonical name.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Values(Vec<(&'static str, String)>);

impl Values {
    /// The value of `name`, as sent (decoded, not trimmed).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }
}

/// Read a raw query string (without `?`) by the grammar, for a route taking `params`.
pub fn read(raw: &str, params: &[Param]) -> Result<Values, QueryError> {
    read_up_to(raw, params, MAX_QUERY_LEN)
}

/// [`read`] with another length bound (a route's query may be longer).
pub fn read_up_to(raw: &str, params: &[Param], max_len: usize) -> Result<Values, QueryError> {
    if raw.len() > max_len {
        return Err(invalid(format!("query of {} characters", raw.len())));
    }
    let mut values = Values::default();
    for (name, value) in url::form_urlencoded::parse(raw.as_bytes()) {
        let param =
            canonical(&name, params).ok_or_else(|| invalid(format!("unsupported parameter {name:?}")))?;
        if values.get(param.name).is_some() {
            return Err(invalid(format!("parameter {name:?} repeated or spelled twice")));
        }
        values.0.push((param.name, value.into_owned()));
    }
    Ok(values)
}

/// The parameter a sent name spells, if the route takes it.
fn canonical(name: &str, params: &[Param]) -> Option<Param> {
    let lower = name.to_ascii_lowercase();
    let short = lower.strip_prefix("filter[").and_then(|rest| rest.strip_suffix(']'));
    params.iter().copied().find(|p| p.name == lower || (p.filter && short == Some(p.name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: [Param; 3] = [filter("product"), plain("expand"), plain("near")];

    #[test]
    fn names_fold_filters_alias_and_nothing_repeats() {
        let v = read("PRODUCT=1&Expand=brand", &PARAMS).expect("ok");
        assert_eq!((v.get("product"), v.get("expand")), (Some("1"), Some("brand")));
        assert_eq!(read("filter[Product]=2", &PARAMS).expect("ok").get("product"), Some("2"));
        for bad in [
            "filter[expand]=brand",
            "filter[near]=1,2",
            "product=1&filter[product]=2",
            "product=1&product=1",
            "near=1&NEAR=1",
            "colour=red",
            "filter[product=1",
        ] {
            let e = read(bad, &PARAMS).expect_err(bad);
            assert_eq!(e.detail, detail::INVALID_QUERY, "{bad}");
        }
        let long = format!("product={}", "1".repeat(MAX_QUERY_LEN));
        assert!(read(&long, &PARAMS).is_err(), "over the length bound");
        assert_eq!(read("", &PARAMS).expect("empty"), Values::default());
    }
}
