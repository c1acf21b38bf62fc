//! The one grammar of every query string: at most [`MAX_QUERY_LEN`] characters, form-encoded,
//! names matched case-insensitively, a filter also spelled `filter[name]`, each parameter at
//! most once (whichever spelling), and any name a route does not take refused. Every route
//! (`/v1`, `/legacy`, the station API, `/v1/events`) reads its query through [`read`] and then
//! parses the values it got. Pure.

use wafuel_domain::error_code::detail;

/// Longest accepted serialized query string.
pub const MAX_QUERY_LEN: usize = 1024;
/// Longest query string of a station search along a route (an encoded polyline of up to
/// 1,000 points), as sent, percent escapes included.
pub const MAX_ROUTE_QUERY_LEN: usize = 8192;

/// A rejected query: always 400 `invalid_query` (or `too_many_combinations`).
///
/// `/v1` and `/legacy` answer the reference's own `detail` text and nothing more (their
/// clients match it); every other route answers `reason`, which says what is wrong and how to
/// fix it, with the `parameter` at fault. The log line carries `reason` on every route.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{detail} ({reason})")]
pub struct QueryError {
    pub detail: &'static str,
    /// What is wrong and a good value, in words a user can act on: `radius must be more
    /// than 0 and at most 100 km, e.g. radius=10`.
    pub reason: String,
    /// The parameter at fault, by its canonical name (or, when unknown, as sent).
    pub parameter: Option<String>,
}

/// `invalid_query` for the query as a whole (its length, its encoding).
pub fn invalid(reason: impl Into<String>) -> QueryError {
    QueryError { detail: detail::INVALID_QUERY, reason: reason.into(), parameter: None }
}

/// `invalid_query` naming the parameter at fault.
pub fn invalid_in(parameter: &str, reason: impl Into<String>) -> QueryError {
    QueryError { parameter: Some(parameter.to_string()), ..invalid(reason) }
}

impl QueryError {
    /// The same error naming another parameter (a shared rule read for another name).
    pub fn for_parameter(self, parameter: &str) -> Self {
        Self { parameter: Some(parameter.to_string()), ..self }
    }
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

    /// Refuse a value of `params` (but those named in `spaced`) with spaces around it: such a
    /// parameter is written without them (a `+` in a query is a space: `fill=+50` is ` 50`).
    pub fn unspaced(&self, params: &[Param], spaced: &[&str]) -> Result<(), QueryError> {
        for (name, value) in &self.0 {
            let strict = params.iter().any(|p| p.name == *name) && !spaced.contains(name);
            if strict && value.trim() != value {
                return Err(invalid_in(
                    name,
                    format!(
                        "{name} has spaces around {:?} (a + in a query is a space); write it without them",
                        value.trim()
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Read a raw query string (without `?`) by the grammar, for a route taking `params`.
pub fn read(raw: &str, params: &[Param]) -> Result<Values, QueryError> {
    read_up_to(raw, params, MAX_QUERY_LEN)
}

/// [`read`] with another length bound (a route's query may be longer).
pub fn read_up_to(raw: &str, params: &[Param], max_len: usize) -> Result<Values, QueryError> {
    if raw.len() > max_len {
        return Err(invalid(format!(
            "the query is {} characters long; at most {max_len} are read here",
            raw.len()
        )));
    }
    let mut values = Values::default();
    for (name, value) in url::form_urlencoded::parse(raw.as_bytes()) {
        let param = canonical(&name, params).ok_or_else(|| unknown(&name, params))?;
        if values.get(param.name).is_some() {
            return Err(invalid_in(
                param.name,
                format!(
                    "{} is given more than once (or also as filter[{}]); give it once",
                    param.name, param.name
                ),
            ));
        }
        values.0.push((param.name, value.into_owned()));
    }
    Ok(values)
}

/// A number written with at most one decimal (`50`, `8.5`, `0.5`; no sign, exponent, leading
/// zero or bare point), in tenths, within `bounds` (tenths, inclusive): the litres, litres per
/// 100 km and cents a litre a query may carry, held exactly.
pub fn tenths_within(name: &str, value: &str, bounds: (i64, i64), example: &str) -> Result<i64, QueryError> {
    let bad = || {
        let (low, high) = (tenths_text(bounds.0), tenths_text(bounds.1));
        invalid_in(
            name,
            format!("{name} must be a number from {low} to {high} with at most one decimal, e.g. {example}"),
        )
    };
    let (whole, decimal) = value.split_once('.').unwrap_or((value, ""));
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let leading_zero = whole.len() > 1 && whole.starts_with('0');
    if !digits(whole)
        || whole.len() > 4
        || leading_zero
        || (value.contains('.') && !digits(decimal))
        || decimal.len() > 1
    {
        return Err(bad());
    }
    let tenths = whole.parse::<i64>().map_err(|_| bad())? * 10 + decimal.parse::<i64>().unwrap_or(0);
    if !(bounds.0..=bounds.1).contains(&tenths) {
        return Err(bad());
    }
    Ok(tenths)
}

/// An unknown name, with the nearest name the route takes when one is close (a typo, a
/// `filter[…]` around a parameter that is not a filter).
fn unknown(name: &str, params: &[Param]) -> QueryError {
    let lower = name.to_ascii_lowercase();
    let bare = lower.strip_prefix("filter[").and_then(|r| r.strip_suffix(']')).unwrap_or(&lower);
    let nearest = params
        .iter()
        .map(|p| (strsim::damerau_levenshtein(bare, p.name), p.name))
        .filter(|(d, p)| *d <= (p.len() / 3).max(1))
        .min();
    let names: Vec<&str> = params.iter().map(|p| p.name).collect();
    let hint = match nearest {
        Some((0, p)) => format!("; {p} has no filter[…] spelling here, send {p}=…"),
        Some((_, p)) => format!("; did you mean {p}?"),
        None if names.is_empty() => "; this route takes no parameters".to_string(),
        None => format!("; this route takes {}", names.join(", ")),
    };
    invalid_in(name, format!("{name} is not a parameter of this route{hint}"))
}

/// Tenths written as the query writes them: 85 → "8.5", 500 → "50".
fn tenths_text(tenths: i64) -> String {
    if tenths % 10 == 0 { (tenths / 10).to_string() } else { format!("{}.{}", tenths / 10, tenths % 10) }
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

    #[test]
    fn one_decimal_numbers() {
        for (text, tenths) in [("50", 500), ("8.5", 85), ("0.5", 5), ("200", 2_000), ("1.0", 10)] {
            assert_eq!(tenths_within("n", text, (1, 2_000), "n=5"), Ok(tenths), "{text}");
        }
        for bad in
            ["", ".5", "5.", "05", "00.5", "+5", "-5", "5.25", "1e2", "5 ", "200.1", "0", "0.0", "12345"]
        {
            assert!(tenths_within("n", bad, (1, 2_000), "n=5").is_err(), "{bad}");
        }
    }
}
