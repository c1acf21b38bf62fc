//! `/v1` and `/legacy` query strings → canonical [`Selection`]: the six filters and `expand`
//! (docs/api.md "Query rules (every data route)"), read by the one grammar (`query::grammar`). Pure: the
//! only outside input is the current instant, for day words.

use jiff::Timestamp;
use jiff::civil::Date;

use super::grammar::{MAX_QUERY_LEN, Param, QueryError, Values, filter, invalid_in, plain, read_up_to};
use wafuel_domain::codes::{
    BrandCode, Code, FEATURES, ProductCode, RESTRICTIONS, RegionCode, Table, product_codes,
};
use wafuel_domain::documents::Expand;
use wafuel_domain::error_code::detail;
use wafuel_domain::key::fold_text;
use wafuel_domain::time::Day;
/// Most source requests one source-filtered selection may need.
pub const MAX_COMBINATIONS: usize = 24;
/// Longest suburb value, in characters.
pub const MAX_SUBURB_CHARS: usize = 100;

/// Which of the two price documents a selection renders: `/v1`'s JSON:API, or the RSS-shaped
/// JSON of `/legacy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    V1,
    Legacy,
}

/// How a selection is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One complete extract per product; brand and exact suburb are filtered locally.
    WholeExtracts,
    /// Product × brand × region × suburb requests go upstream.
    SourceFiltered,
}

/// A validated, canonical selection: equal selections are equal values (one cache entry,
/// one ETag), however the query spelled them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Selection {
    pub dialect: Dialect,
    /// Ascending, unique.
    pub products: Vec<ProductCode>,
    /// Ascending, unique; `None` = every brand.
    pub brands: Option<Vec<BrandCode>>,
    pub regions: Option<Vec<RegionCode>>,
    /// Whitespace-collapsed, upper-case, sorted, unique.
    pub suburbs: Option<Vec<String>>,
    pub surrounding: Option<bool>,
    pub day: Day,
    /// The Perth date `day` named when the request arrived.
    pub date: Date,
    pub expand: Expand,
}

/// The six filters of `/v1` and `/legacy`.
const FILTERS: [Param; 6] = [
    filter("product"),
    filter("brand"),
    filter("region"),
    filter("suburb"),
    filter("day"),
    filter("surrounding"),
];
/// `/v1`'s parameters: the filters and `expand`.
pub const V1_PARAMS: [Param; 7] =
    [FILTERS[0], FILTERS[1], FILTERS[2], FILTERS[3], FILTERS[4], FILTERS[5], plain("expand")];

/// Parse and validate a raw query string (without `?`) in `dialect` at `now`.
pub fn parse_selection(dialect: Dialect, raw: &str, now: Timestamp) -> Result<Selection, QueryError> {
    parse_selection_with(dialect, raw, now, &[]).map(|(selection, _)| selection)
}

/// [`parse_selection`] for routes that take more parameters (`extras`, besides `/v1`'s):
/// the selection, and every value the query gave (the extras' included).
pub fn parse_selection_with(
    dialect: Dialect,
    raw: &str,
    now: Timestamp,
    extras: &[Param],
) -> Result<(Selection, Values), QueryError> {
    parse_selection_up_to(dialect, raw, now, extras, MAX_QUERY_LEN)
}

/// [`parse_selection_with`] with another length bound for the whole query string.
pub fn parse_selection_up_to(
    dialect: Dialect,
    raw: &str,
    now: Timestamp,
    extras: &[Param],
    max_len: usize,
) -> Result<(Selection, Values), QueryError> {
    let mut params: Vec<Param> = match dialect {
        Dialect::V1 => V1_PARAMS.to_vec(),
        Dialect::Legacy => FILTERS.to_vec(),
    };
    params.extend_from_slice(extras);
    let values = read_up_to(raw, &params, max_len)?;
    Ok((selection(dialect, &values, now)?, values))
}

/// The selection the values of a `/v1` or `/legacy` query name.
pub fn selection(dialect: Dialect, values: &Values, now: Timestamp) -> Result<Selection, QueryError> {
    let take = |name: &str| values.get(name);
    let products = match take("product") {
        Some(v) => products(v)?,
        None if dialect == Dialect::Legacy => vec![ProductCode::UNLEADED],
        None => product_codes().collect(),
    };
    let brands = take("brand").map(|v| code_list(v, "brand")).transpose()?;
    let regions = take("region").map(|v| code_list(v, "region")).transpose()?;
    let suburbs = take("suburb").map(suburbs).transpose()?;
    let surrounding = take("surrounding").map(yes_no).transpose()?;
    let (day, date) = match take("day") {
        Some(v) => day(v, now)?,
        None => (Day::Today, Day::Today.resolve(now)),
    };
    let expand = take("expand").map(expand).transpose()?.unwrap_or_default();

    let selection = Selection { dialect, products, brands, regions, suburbs, surrounding, day, date, expand };
    if selection.mode() == Mode::SourceFiltered && selection.combinations() > MAX_COMBINATIONS {
        return Err(QueryError {
            detail: detail::TOO_MANY_COMBINATIONS,
            reason: format!(
                "this selection needs {} source requests (products × brands × regions × suburbs); \
                 at most {MAX_COMBINATIONS}: name fewer, or leave brand and suburb out",
                selection.combinations()
            ),
            parameter: None,
        });
    }
    Ok(selection)
}

impl Selection {
    /// Catalog or source-filtered (docs/design.md "Decisions worth knowing", catalog extracts).
    pub fn mode(&self) -> Mode {
        let suburb_with_surrounding = self.suburbs.is_some() && self.surrounding != Some(false);
        if self.dialect == Dialect::V1 && self.regions.is_none() && !suburb_with_surrounding {
            Mode::WholeExtracts
        } else {
            Mode::SourceFiltered
        }
    }

    /// Product × brand × region × suburb.
    pub fn combinations(&self) -> usize {
        fn n<T>(v: &Option<Vec<T>>) -> usize {
            v.as_ref().map_or(1, Vec::len)
        }
        self.products.len() * n(&self.brands) * n(&self.regions) * n(&self.suburbs)
    }

    /// Whether a station suburb passes the local exact-suburb filter.
    pub fn suburb_matches(&self, suburb: &str) -> bool {
        match &self.suburbs {
            None => true,
            Some(list) => {
                let folded = fold_text(suburb);
                list.iter().any(|s| s.to_lowercase() == folded)
            }
        }
    }

    /// A stable text naming the selection's data (not its representation): the store key of
    /// a source-filtered extract is built from it (the render cache keys on the selection).
    ///
    /// Two different selections never share it: the typed selection is written as JSON (every
    /// suburb a quoted, escaped string, so no separator a client can type joins two values
    /// into one) and hashed, which also bounds the key's length whatever the query held.
    pub fn data_key(&self) -> String {
        let canonical = serde_json::json!({
            "p": self.products.iter().map(|c| c.get()).collect::<Vec<_>>(),
            "b": self.brands.as_ref().map(|l| l.iter().map(|c| c.get()).collect::<Vec<_>>()),
            "r": self.regions.as_ref().map(|l| l.iter().map(|c| c.get()).collect::<Vec<_>>()),
            "s": self.suburbs,
            "sur": self.surrounding,
            "d": self.date.to_string(),
        });
        wafuel_domain::key::sha256_hex(canonical.to_string().as_bytes())
    }
}

/// A comma list of product codes: trimmed, each in the product table, de-duplicated, ascending.
pub fn products(value: &str) -> Result<Vec<ProductCode>, QueryError> {
    code_list(value, "product")
}

/// A comma list of one table's codes for the parameter `param`: trimmed, each in the table,
/// de-duplicated, ascending.
pub fn code_list<K: Table>(value: &str, param: &str) -> Result<Vec<Code<K>>, QueryError> {
    Ok(codes(value, param, K::has)?.into_iter().filter_map(Code::parse).collect())
}

/// The codes of a parameter whose codes have names a person may type instead (the feature
/// and restriction tables); empty for the others.
fn named_codes(param: &str) -> Vec<(u8, &'static str)> {
    match param {
        "feature" => FEATURES.iter().map(|f| (f.code, f.name)).collect(),
        "excludeRestriction" => RESTRICTIONS.iter().map(|r| (r.code, r.name)).collect(),
        _ => Vec::new(),
    }
}

/// What a code parameter's codes are, and where a user finds them: the short tables are
/// listed whole in the refusal itself.
fn code_words(param: &str) -> String {
    let named = named_codes(param);
    if !named.is_empty() {
        let kind = if param == "feature" { "feature" } else { "restriction" };
        let list: Vec<String> = named.iter().map(|(code, name)| format!("{code} {name}")).collect();
        return format!("{kind} codes ({})", list.join(", "));
    }
    match param {
        "product" => {
            "product codes (1 Unleaded, 2 Premium 95, 4 Diesel, 5 LPG, 6 Premium 98, 10 E85, 11 Brand diesel)"
        }
        "brand" | "excludeBrand" => "brand codes (GET /v1/brands lists them)",
        _ => "region codes (FuelWatch's; docs/api.md lists them)",
    }
    .to_string()
}

/// A comma list of integer codes for `param`: trimmed, each valid, de-duplicated, ascending.
pub fn codes(value: &str, param: &str, valid: impl Fn(u8) -> bool) -> Result<Vec<u8>, QueryError> {
    // Written only for a refusal: a valid query pays nothing for the words.
    let rule = || {
        let example = (1..=u8::MAX).find(|c| valid(*c)).unwrap_or(1);
        format!("{param} takes comma-separated {}, e.g. {param}={example}", code_words(param))
    };
    // A name typed for a code ("toilets") is told its code.
    let named = |item: &str| {
        let folded = |t: &str| t.chars().filter(|c| c.is_alphanumeric()).collect::<String>().to_lowercase();
        let (code, name) = named_codes(param).into_iter().find(|(_, name)| folded(name) == folded(item))?;
        Some(invalid_in(param, format!("{param} takes codes: {name} is {code}, e.g. {param}={code}")))
    };
    let mut out = Vec::new();
    for item in value.split(',') {
        let item = item.trim();
        let code = (!item.is_empty() && item.len() <= 3 && item.bytes().all(|b| b.is_ascii_digit()))
            .then(|| item.parse::<u8>().ok())
            .flatten()
            .ok_or_else(|| {
                named(item)
                    .unwrap_or_else(|| invalid_in(param, format!("{}; {item:?} is not a code", rule())))
            })?;
        if !valid(code) {
            return Err(invalid_in(param, format!("{}; {code} is not one", rule())));
        }
        out.push(code);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn suburbs(value: &str) -> Result<Vec<String>, QueryError> {
    let mut out = Vec::new();
    for item in value.split(',') {
        let collapsed = item.split_whitespace().collect::<Vec<_>>().join(" ");
        let chars = collapsed.chars().count();
        if chars == 0 || chars > MAX_SUBURB_CHARS {
            return Err(invalid_in(
                "suburb",
                format!(
                    "suburb takes comma-separated suburb names of 1 to {MAX_SUBURB_CHARS} characters, \
                     e.g. suburb=ELLENBROOK; one here has {chars}"
                ),
            ));
        }
        if collapsed.chars().any(char::is_control) {
            return Err(invalid_in(
                "suburb",
                "suburb names hold no control characters, e.g. suburb=ELLENBROOK",
            ));
        }
        out.push(collapsed.to_uppercase());
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn yes_no(value: &str) -> Result<bool, QueryError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        other => Err(invalid_in(
            "surrounding",
            format!("surrounding is yes or no, e.g. surrounding=no; not {other:?}"),
        )),
    }
}

/// A day word or `DD/MM/YYYY` naming Perth yesterday, today or tomorrow.
fn day(value: &str, now: Timestamp) -> Result<(Day, Date), QueryError> {
    let value = value.trim();
    if let Some(d) = Day::from_word(value) {
        return Ok((d, d.resolve(now)));
    }
    let rule = "day is today, tomorrow, yesterday or one of those dates as DD/MM/YYYY, e.g. day=tomorrow";
    let date = parse_dmy(value).ok_or_else(|| invalid_in("day", format!("{rule}; not {value:?}")))?;
    let d = Day::for_date(date, now).ok_or_else(|| {
        invalid_in(
            "day",
            format!("{rule}; {value} is not one of them (older days: /v1/stations/{{id}}/history)"),
        )
    })?;
    Ok((d, date))
}

fn parse_dmy(value: &str) -> Option<Date> {
    let parts: Vec<&str> = value.split('/').collect();
    let [d, m, y] = parts.as_slice() else { return None };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(d, 2) && digits(m, 2) && digits(y, 4)) {
        return None;
    }
    Date::new(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?).ok()
}

fn expand(value: &str) -> Result<Expand, QueryError> {
    let mut e = Expand::default();
    for member in value.split(',') {
        match member.trim().to_ascii_lowercase().as_str() {
            "brand" => e.brand = true,
            "sitefeatures" => e.site_features = true,
            "restrictions" => e.restrictions = true,
            "all" => e = Expand { brand: true, site_features: true, restrictions: true },
            other => {
                return Err(QueryError {
                    detail: detail::BAD_EXPAND,
                    reason: format!(
                        "expand takes brand, siteFeatures, restrictions or all, comma-separated, \
                         e.g. expand=brand; {other:?} is none of them"
                    ),
                    parameter: Some("expand".into()),
                });
            }
        }
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;
    use wafuel_domain::time::perth_instant;

    fn at(h: i8, m: i8, s: i8) -> Timestamp {
        perth_instant(date(2026, 9, 29).at(h, m, s, 0))
    }

    fn v1(q: &str) -> Result<Selection, QueryError> {
        parse_selection(Dialect::V1, q, at(10, 0, 0))
    }

    #[test]
    fn defaults() {
        let s = v1("").expect("valid");
        assert_eq!(s.products, vec![1, 2, 4, 5, 6, 10, 11]);
        assert_eq!(s.day, Day::Today);
        assert_eq!(s.date, date(2026, 9, 29));
        assert_eq!(s.mode(), Mode::WholeExtracts);
        let l = parse_selection(Dialect::Legacy, "", at(10, 0, 0)).expect("valid");
        assert_eq!(l.products, vec![1]);
        assert_eq!(l.mode(), Mode::SourceFiltered);
        assert_eq!(l.combinations(), 1);
    }

    #[test]
    fn canonical_equivalence() {
        let a = v1("brand=35,2&product=6,2,1&day=today").expect("valid");
        let b = v1("filter[brand]=2,35&FILTER[Product]=1,2,6&filter[day]=TODAY").expect("valid");
        assert_eq!(a, b);
        assert_eq!(a.data_key(), b.data_key());
        let c = v1("product=%201%20,2,2,6").expect("valid");
        assert_eq!(c.products, vec![1, 2, 6]);
    }

    #[test]
    fn data_keys_never_join_two_selections() {
        // A `|` (or any separator) inside one suburb is part of that suburb: a literal name
        // that matches nothing, never two suburbs.
        let pairs = [
            ("suburb=NORTHAM%7CYORK", "suburb=NORTHAM,YORK"),
            ("suburb=KULIN|LAVERTON", "suburb=kulin,laverton"),
            ("suburb=a;b=c", "suburb=a&brand=2"),
            ("suburb=*", ""),
            ("suburb=%2A&surrounding=yes", "surrounding=yes"),
            ("suburb=x%22,y", "suburb=x,y"),
            ("suburb=A%5C,B", "suburb=A,B"),
        ];
        for (a, b) in pairs {
            let (a_sel, b_sel) = (v1(a).expect(a), v1(b).expect(b));
            assert_ne!(a_sel, b_sel, "{a} / {b}");
            assert_ne!(a_sel.data_key(), b_sel.data_key(), "{a} / {b}");
        }
        let piped = v1("suburb=NORTHAM%7CYORK").expect("a literal suburb");
        assert_eq!(piped.suburbs, Some(vec!["NORTHAM|YORK".to_string()]));
        assert!(!piped.suburb_matches("NORTHAM") && !piped.suburb_matches("YORK"));
        // Equal selections, however spelled, share one key; it is a fixed-length digest.
        let (x, y) = (v1("suburb=york,%20northam").expect("ok"), v1("suburb=NORTHAM,York").expect("ok"));
        assert_eq!(x.data_key(), y.data_key());
        assert_eq!(x.data_key().len(), 64);
        let tomorrow = parse_selection(Dialect::V1, "suburb=york&day=tomorrow", at(15, 0, 0)).expect("ok");
        assert_ne!(tomorrow.data_key(), v1("suburb=york").expect("ok").data_key());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// The same names listed with commas and joined by a character a key format could
        /// use as a separator: whenever the two selections differ, so do their stored keys.
        #[test]
        fn a_stored_key_belongs_to_one_selection(
            names in proptest::collection::vec("[A-Z]{1,3}[|;=*:]?[A-Z]{0,2}", 1..4),
            separator in proptest::sample::select(vec!["|", "%7C", ";", "=", "*", ":", ",", "%2C", " "]),
            brand in proptest::option::of(proptest::sample::select(vec!["2", "5", "2,5"])),
        ) {
            let listed = v1(&format!("product=1&suburb={}", names.join(",")));
            let mut joined = format!("product=1&suburb={}", names.join(separator));
            if let Some(b) = brand {
                joined.push_str(&format!("&brand={b}"));
            }
            if let (Ok(x), Ok(y)) = (listed, v1(&joined)) {
                proptest::prop_assert_eq!(x == y, x.data_key() == y.data_key(), "{:?} / {:?}", x, y);
            }
        }
    }

    #[test]
    fn rejections() {
        let bad = [
            "product=3",
            "product=",
            "product=1,,2",
            "product=1&product=2",
            "product=1&filter[product]=2",
            "brand=0",
            "brand=99",
            "brand=bp",
            "region=52",
            "region=0",
            "region=64",
            "suburb=",
            "suburb=perth,,fremantle",
            "day=today,tomorrow",
            "day=someday",
            "day=31/09/2026",
            "day=26/09/2026",
            "day=2026-09-29",
            "day=1/9/2026",
            "surrounding=maybe",
            "expand=",
            "expand=prices",
            "expand=brand,",
            "expand=brand&expand=all",
            "colour=blue",
            "filter[expand]=brand",
            "filter[product=1",
            "product=-1",
            "product=1.0",
            "product=0001",
        ];
        for q in bad {
            assert!(v1(q).is_err(), "{q} should be rejected");
        }
        let long = format!("suburb={}", "a".repeat(101));
        assert!(v1(&long).is_err());
        let ok = format!("suburb={}", "a".repeat(100));
        assert!(v1(&ok).is_ok());
        let too_long = format!("suburb=perth&x={}", "a".repeat(1020));
        assert!(v1(&too_long).is_err());
        assert!(parse_selection(Dialect::Legacy, "expand=brand", at(10, 0, 0)).is_err());
    }

    #[test]
    fn expand_members() {
        assert_eq!(v1("expand=brand").expect("ok").expand, Expand { brand: true, ..Expand::default() });
        assert_eq!(
            v1("expand= siteFeatures , brand,brand").expect("ok").expand,
            Expand { brand: true, site_features: true, restrictions: false }
        );
        assert_eq!(
            v1("expand=all,restrictions").expect("ok").expand,
            Expand { brand: true, site_features: true, restrictions: true }
        );
        assert_eq!(v1("expand=nope").expect_err("bad").detail, detail::BAD_EXPAND);
    }

    #[test]
    fn day_vectors() {
        let early = perth_instant(date(2026, 9, 29).at(5, 59, 59, 0));
        let s = parse_selection(Dialect::V1, "day=28/09/2026", early).expect("yesterday");
        assert_eq!((s.day, s.date), (Day::Yesterday, date(2026, 9, 28)));
        assert!(v1("day=31/09/2026").is_err());
        assert!(v1("day=26/09/2026").is_err());
        assert!(v1("day=today,tomorrow").is_err());
        let nye = perth_instant(date(2026, 12, 31).at(23, 0, 0, 0));
        let s = parse_selection(Dialect::V1, "day=01/01/2027", nye).expect("tomorrow");
        assert_eq!(s.day, Day::Tomorrow);
    }

    #[test]
    fn mode_vectors() {
        let cases = [
            ("", Mode::WholeExtracts, 7),
            ("brand=2,5,35,15", Mode::WholeExtracts, 7),
            ("product=2,6&suburb=perth&surrounding=no", Mode::WholeExtracts, 2),
            ("suburb=perth", Mode::SourceFiltered, 7),
            ("suburb=perth&surrounding=yes", Mode::SourceFiltered, 7),
            ("region=25,26&suburb=PERTH,fremantle&product=1,2", Mode::SourceFiltered, 8),
            ("surrounding=yes", Mode::WholeExtracts, 7),
        ];
        for (q, mode, n) in cases {
            let s = v1(q).expect(q);
            assert_eq!(s.mode(), mode, "{q}");
            let requests = if mode == Mode::WholeExtracts { s.products.len() } else { s.combinations() };
            assert_eq!(requests, n, "{q}");
        }
        assert_eq!(v1("region=25,26,27,28").expect_err("28").detail, detail::TOO_MANY_COMBINATIONS);
        let legacy = parse_selection(Dialect::Legacy, "brand=2,35,5,6&product=1,2,4,5,6,10,11", at(10, 0, 0));
        assert_eq!(legacy.expect_err("28").detail, detail::TOO_MANY_COMBINATIONS);
        // A catalog selection has no combination bound: all brands locally.
        assert!(v1("brand=2,3,4,5,6,7,10,11,14,15,23,24,25,26&product=1,2,4,5,6,10,11").is_ok());
    }

    #[test]
    fn suburbs_are_collapsed_and_upper_case() {
        let s = v1("suburb=%20mount%20%20lawley%20,Perth&surrounding=no").expect("ok");
        assert_eq!(s.suburbs, Some(vec!["MOUNT LAWLEY".to_string(), "PERTH".to_string()]));
        assert!(s.suburb_matches("Mount  Lawley"));
        assert!(!s.suburb_matches("Lawley"));
    }
}
