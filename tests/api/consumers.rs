//! Consumer contract: the Home Assistant integration `fuelwatch_wa`, the one known real client
//! of a `/v1` service, encoded rule by rule from what those clients require and run on real
//! responses of the router: its exact request for every product × yesterday/today/tomorrow,
//! before and after tomorrow's 14:30 publication, with enrichment on some stations, then its
//! `If-None-Match` → 304 replay. The client rejects a whole (product, day) on any violation,
//! so every check here is a reason a real user would lose that fuel.
//!
//! The registries and rules are written out here independently of `src/`, so a change in the
//! service's own tables cannot silently move the contract with it.

use std::collections::{BTreeSet, HashMap};
use std::io::Read;

use jiff::civil::{Date, DateTime, date};
use sha2::{Digest, Sha256};
use wafuel_places::client::PlacesClient;
use wafuel_service::jobs::enrich::{EnrichConfig, enrich_pass};
use wafuel_sim::places::{PlacesHandle, demo_places};

use crate::support::*;

// ---------------------------------------------------------------------------------------------
// A strict JSON reader: a duplicate key anywhere rejects the document, numbers keep their
// literal text (the client reads decimals exactly, so we check them as text, never as f64).

#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn str(&self) -> Option<&str> {
        if let Json::String(s) = self { Some(s) } else { None }
    }

    fn number(&self) -> Option<&str> {
        if let Json::Number(n) = self { Some(n) } else { None }
    }

    fn array(&self) -> Option<&[Json]> {
        if let Json::Array(a) = self { Some(a) } else { None }
    }

    fn members(&self) -> Option<&[(String, Json)]> {
        if let Json::Object(m) = self { Some(m) } else { None }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

fn parse_strict(text: &str) -> Result<Json, String> {
    let mut r = Reader { bytes: text.as_bytes(), at: 0 };
    let value = r.value(0)?;
    r.ws();
    if r.at != r.bytes.len() {
        return Err(format!("trailing data at byte {}", r.at));
    }
    Ok(value)
}

impl Reader<'_> {
    fn ws(&mut self) {
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, b: u8) -> Result<(), String> {
        self.ws();
        if self.bytes.get(self.at) == Some(&b) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at byte {}", b as char, self.at))
        }
    }

    fn literal(&mut self, word: &str, value: Json) -> Result<Json, String> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(format!("bad literal at byte {}", self.at))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > 64 {
            return Err("nesting too deep".into());
        }
        self.ws();
        match self.bytes.get(self.at) {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Json::String),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(format!("unexpected byte at {}", self.at)),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, String> {
        self.expect(b'{')?;
        let mut members: Vec<(String, Json)> = Vec::new();
        self.ws();
        if self.bytes.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Ok(Json::Object(members));
        }
        loop {
            self.ws();
            let key = self.string()?;
            if members.iter().any(|(k, _)| *k == key) {
                return Err(format!("duplicate key {key:?} at byte {}", self.at));
            }
            self.expect(b':')?;
            let value = self.value(depth + 1)?;
            members.push((key, value));
            self.ws();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Json::Object(members));
                }
                _ => return Err(format!("expected ',' or '}}' at byte {}", self.at)),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, String> {
        self.expect(b'[')?;
        let mut items = Vec::new();
        self.ws();
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.ws();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(format!("expected ',' or ']' at byte {}", self.at)),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self.bytes.get(self.at..self.at + 4).ok_or("short \\u escape")?;
        let text = std::str::from_utf8(digits).map_err(|e| e.to_string())?;
        self.at += 4;
        u32::from_str_radix(text, 16).map_err(|e| e.to_string())
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            let b = *self.bytes.get(self.at).ok_or("unterminated string")?;
            self.at += 1;
            match b {
                b'"' => return String::from_utf8(out).map_err(|e| e.to_string()),
                b'\\' => {
                    let e = *self.bytes.get(self.at).ok_or("unterminated escape")?;
                    self.at += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let high = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&high) {
                                if !self.bytes[self.at..].starts_with(b"\\u") {
                                    return Err("lone surrogate".into());
                                }
                                self.at += 2;
                                let low = self.hex4()?;
                                0x10000 + ((high - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF)
                            } else {
                                high
                            };
                            char::from_u32(code).ok_or("invalid \\u escape")?
                        }
                        _ => return Err(format!("bad escape at byte {}", self.at)),
                    };
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                0x00..=0x1f => return Err(format!("control character in string at byte {}", self.at)),
                _ => out.push(b),
            }
        }
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.at;
        while matches!(self.bytes.get(self.at), Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).map_err(|e| e.to_string())?;
        // RFC 8259 grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
        let body = text.strip_prefix('-').unwrap_or(text);
        let (mantissa, exponent) = match body.find(['e', 'E']) {
            Some(i) => (&body[..i], Some(&body[i + 1..])),
            None => (body, None),
        };
        let (int, frac) = match mantissa.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (mantissa, None),
        };
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let ok = digits(int)
            && (int == "0" || !int.starts_with('0'))
            && frac.is_none_or(digits)
            && exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
        if ok { Ok(Json::Number(text.to_string())) } else { Err(format!("bad number {text:?}")) }
    }
}

#[test]
fn the_strict_reader_rejects_what_the_client_rejects() {
    assert!(parse_strict(r#"{"a":1,"b":{"a":2}}"#).is_ok());
    assert!(parse_strict(r#"{"a":1,"a":1}"#).expect_err("duplicate").contains("duplicate key"));
    assert!(parse_strict(r#"{"x":[{"k":1,"k":2}]}"#).is_err(), "nested duplicates too");
    assert!(parse_strict(r#"{"a":01}"#).is_err());
    assert!(parse_strict(r#"{"a":1} x"#).is_err());
    assert_eq!(parse_strict(r#"{"p":189.90}"#).expect("ok").get("p").and_then(Json::number), Some("189.90"));
    assert_eq!(parse_strict(r#""\u00e9\ud83d\ude00""#).expect("ok"), Json::String("é😀".into()));
}

// ---------------------------------------------------------------------------------------------
// The registries of docs/design.md, as the client holds them.

const PRODUCTS: [u8; 7] = [1, 2, 4, 5, 6, 10, 11];
const BRANDS: [u64; 39] = [
    0, 2, 3, 4, 5, 6, 7, 10, 11, 14, 15, 23, 24, 25, 26, 27, 29, 30, 31, 32, 34, 35, 36, 37, 38, 39, 40, 41,
    42, 43, 44, 45, 46, 47, 48, 49, 50, 52, 53,
];
const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/// A plain decimal literal as exact thousandths, if it is one (no exponent, ≤ 3 decimals).
fn thousandths(literal: &str) -> Option<u64> {
    let (int, frac) = literal.split_once('.').unwrap_or((literal, ""));
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 3 {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: u64 = int.parse().ok()?;
    let part: u64 = format!("{frac:0<3}").parse().ok()?;
    whole.checked_mul(1000)?.checked_add(part)
}

fn integer(v: &Json) -> Option<u64> {
    v.number().and_then(|n| n.parse().ok())
}

/// An RFC 3339 date-time with an explicit offset.
fn with_offset(v: Option<&Json>) -> Option<jiff::Timestamp> {
    let text = v?.str()?;
    let has_offset = text.ends_with('Z') || text.rfind(['+', '-']).is_some_and(|i| i > 10);
    if has_offset { text.parse().ok() } else { None }
}

fn short_string(v: Option<&Json>, max: usize) -> bool {
    v.and_then(Json::str).is_some_and(|s| !s.trim().is_empty() && s.chars().count() <= max)
}

fn is_e164(s: &str) -> bool {
    s.strip_prefix('+').is_some_and(|d| {
        (2..=15).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_digit()) && !d.starts_with('0')
    })
}

/// `https`, a host, no user name or password.
fn https_url(v: Option<&Json>, max: usize) -> bool {
    v.and_then(Json::str).is_some_and(|s| {
        s.len() <= max
            && url::Url::parse(s).is_ok_and(|u| {
                u.scheme() == "https"
                    && u.host_str().is_some_and(|h| !h.is_empty())
                    && u.username().is_empty()
                    && u.password().is_none()
            })
    })
}

/// A registry code as an integer, or `{code, name}` with a non-blank name.
fn registry_code(v: &Json, allowed: &dyn Fn(u64) -> bool) -> bool {
    match v {
        Json::Number(_) => integer(v).is_some_and(allowed),
        Json::Object(_) => {
            v.get("code").and_then(integer).is_some_and(allowed) && short_string(v.get("name"), 500)
        }
        _ => false,
    }
}

/// The client's station identity: SHA-256 of casefolded street | suburb | latitude | longitude.
fn client_identity(a: &Json) -> Option<String> {
    let address = a.get("address")?;
    let text = format!(
        "{}|{}|{}|{}",
        address.get("street")?.str()?.to_lowercase(),
        address.get("suburb")?.str()?.to_lowercase(),
        a.get("latitude")?.number()?,
        a.get("longitude")?.number()?,
    );
    Some(Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect())
}

/// What the client asked for.
struct Ask {
    product: u8,
    day: Date,
}

/// Every rule of the clients' requirements "What the body must be", as a list of violations.
fn violations(doc: &Json, ask: &Ask) -> Vec<String> {
    let mut bad = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            bad.push(what);
        }
    };
    check(doc.members().is_some(), "document is an object".into());
    check(
        doc.get("jsonapi") == Some(&Json::Object(vec![("version".into(), Json::String("1.1".into()))])),
        "jsonapi is exactly {\"version\":\"1.1\"}".into(),
    );
    check(doc.get("errors").is_none(), "no errors member".into());

    // meta
    let meta = doc.get("meta").cloned().unwrap_or(Json::Null);
    check(meta.get("source").and_then(Json::str) == Some("fuelwatch.wa.gov.au"), "meta.source".into());
    let product_ok = match (meta.get("product"), meta.get("products")) {
        (Some(p), None) => integer(p) == Some(u64::from(ask.product)),
        (None, Some(list)) => list.array().is_some_and(|items| {
            let codes: Vec<Option<u64>> = items.iter().map(integer).collect();
            let unique: BTreeSet<&Option<u64>> = codes.iter().collect();
            unique.len() == codes.len()
                && codes.iter().all(|c| c.is_some_and(|c| PRODUCTS.iter().any(|p| u64::from(*p) == c)))
                && codes.contains(&Some(u64::from(ask.product)))
        }),
        _ => false,
    };
    check(product_ok, "exactly one of meta.product / meta.products, with the requested one".into());
    check(
        meta.get("sourceDate").and_then(Json::str) == Some(ask.day.to_string().as_str()),
        format!("meta.sourceDate = {}", ask.day),
    );
    let period_start = ask.day.at(6, 0, 0, 0).in_tz("Australia/Perth").expect("perth").timestamp();
    let valid_from = with_offset(meta.get("validFrom"));
    check(
        valid_from == Some(period_start),
        "meta.validFrom = 06:00 Perth of the date, with an offset".into(),
    );
    let day_later = period_start.checked_add(jiff::SignedDuration::from_hours(24)).expect("t");
    check(
        with_offset(meta.get("validUntil")) == Some(day_later),
        "meta.validUntil = validFrom + 24 h, with an offset".into(),
    );
    check(with_offset(meta.get("fetchedAt")).is_some(), "meta.fetchedAt with an offset".into());

    let data = doc.get("data").and_then(Json::array).unwrap_or_default();
    check(doc.get("data").and_then(Json::array).is_some(), "data is an array".into());
    check(data.len() <= 5_000, "at most 5,000 resources".into());
    let status = meta.get("publicationStatus").and_then(Json::str).unwrap_or("");
    check(
        if data.is_empty() { matches!(status, "empty" | "not_yet_published") } else { status == "available" },
        format!("publicationStatus {status:?} agrees with data ({} resources)", data.len()),
    );

    // resources
    let mut ids = BTreeSet::new();
    let mut identities: HashMap<String, &Json> = HashMap::new();
    for (i, r) in data.iter().enumerate() {
        let at = |what: &str| format!("data[{i}]: {what}");
        check(r.get("type").and_then(Json::str) == Some("serviceStation"), at("type serviceStation"));
        let id = r.get("id").and_then(Json::str).unwrap_or("");
        check(short_string(r.get("id"), 200), at("id non-blank ≤ 200"));
        check(ids.insert(id.to_string()), at("id unique"));
        let Some(a) = r.get("attributes") else {
            check(false, at("attributes"));
            continue;
        };
        check(a.get("product").is_none(), at("no attributes.product"));

        let price = a.get("price").cloned().unwrap_or(Json::Null);
        check(price.get("perLitre").is_none(), at("no price.perLitre"));
        check(
            with_offset(price.get("asAt")) == valid_from && valid_from.is_some(),
            at("price.asAt = validFrom"),
        );
        let products = price.get("products").and_then(Json::members).unwrap_or_default();
        check(!products.is_empty(), at("price.products non-empty"));
        for (key, value) in products {
            check(key == &ask.product.to_string(), at(&format!("price key {key} is of the selection")));
            let exact = value.number().and_then(thousandths);
            check(
                exact.is_some_and(|t| (1..=10_000_000).contains(&t)),
                at(&format!("price {value:?} a JSON number in 0.001…10000, read exactly")),
            );
        }

        check(short_string(a.get("name"), 500), at("name non-blank ≤ 500"));
        check(
            matches!(a.get("tradingName"), Some(Json::Null))
                || a.get("tradingName").and_then(Json::str).is_some_and(|s| s.chars().count() <= 500),
            at("tradingName string ≤ 500 or null"),
        );
        let address = a.get("address").cloned().unwrap_or(Json::Null);
        check(short_string(address.get("street"), 500), at("address.street non-blank ≤ 500"));
        check(short_string(address.get("suburb"), 500), at("address.suburb non-blank ≤ 500"));
        check(address.get("state").and_then(Json::str) == Some("WA"), at("address.state WA"));
        check(
            match address.get("postcode") {
                Some(Json::Null) => true,
                Some(Json::String(p)) => p.len() == 4 && p.bytes().all(|b| b.is_ascii_digit()),
                _ => false,
            },
            at("postcode null or 4 digits"),
        );
        for (name, limit) in [("latitude", 90.0), ("longitude", 180.0)] {
            let v = a.get(name).and_then(Json::number).and_then(|n| n.parse::<f64>().ok());
            check(v.is_some_and(|v| v.abs() <= limit), at(&format!("{name} a JSON number in range")));
        }
        check(
            match a.get("phone") {
                Some(Json::Null) => true,
                Some(Json::String(p)) => is_e164(p),
                _ => false,
            },
            at("phone null or E.164"),
        );
        check(matches!(a.get("is24Hours"), Some(Json::Bool(_) | Json::Null)), at("is24Hours bool or null"));
        if let Some(hours) = a.get("openHours") {
            check(
                hours.members().is_some_and(|days| {
                    days.iter().all(|(d, v)| {
                        WEEKDAYS.contains(&d.as_str()) && v.str().is_some_and(|s| s.chars().count() <= 150)
                    })
                }),
                at("openHours keys Monday…Sunday, strings ≤ 150"),
            );
        }

        let brand = a.get("brand").cloned().unwrap_or(Json::Null);
        check(registry_code(&brand, &|c| BRANDS.contains(&c)), at("brand in the registry"));
        if integer(&brand) == Some(0) || brand.get("code").and_then(integer) == Some(0) {
            check(
                short_string(a.get("sourceNotes").and_then(|n| n.get("brand")), 500),
                at("brand 0 takes its label from sourceNotes.brand"),
            );
        }
        check(
            a.get("siteFeatures")
                .and_then(Json::array)
                .is_some_and(|f| f.iter().all(|c| registry_code(c, &|c| (1..=21).contains(&c)))),
            at("siteFeatures codes of the registry"),
        );
        check(
            match a.get("restrictions") {
                Some(Json::Null) => true,
                Some(Json::Array(codes)) => codes.iter().all(|c| registry_code(c, &|c| (1..=4).contains(&c))),
                _ => false,
            },
            at("restrictions null or codes of the registry"),
        );

        match a.get("enrichment") {
            None | Some(Json::Null) => {}
            Some(e) => {
                check(
                    e.get("provider").and_then(Json::str) == Some("Google Maps"),
                    at("enrichment.provider"),
                );
                check(
                    e.get("placeId").and_then(Json::str).is_some_and(|s| s.chars().count() <= 500),
                    at("enrichment.placeId string ≤ 500"),
                );
                check(matches!(e.get("stale"), Some(Json::Bool(_))), at("enrichment.stale a real boolean"));
                check(with_offset(e.get("fetchedAt")).is_some(), at("enrichment.fetchedAt with an offset"));
                check(
                    e.get("fields")
                        .and_then(Json::array)
                        .is_some_and(|f| f.len() <= 20 && f.iter().all(|x| x.str().is_some())),
                    at("enrichment.fields ≤ 20 strings"),
                );
                check(https_url(e.get("googleMapsUri"), 2_048), at("enrichment.googleMapsUri an https URL"));
                check(
                    e.get("attributions").and_then(Json::array).is_some_and(|list| {
                        list.len() <= 20
                            && list.iter().all(|x| {
                                x.get("displayName").and_then(Json::str).is_some()
                                    && https_url(x.get("uri"), 2_048)
                            })
                    }),
                    at("enrichment.attributions ≤ 20, each with displayName and an https uri"),
                );
            }
        }

        // Identity: two resources with the same client key must be identical.
        match client_identity(a) {
            Some(key) => {
                if let Some(other) = identities.insert(key, r) {
                    check(other == r, at("a resource with the same client identity is identical"));
                }
            }
            None => check(false, at("client identity computable")),
        }
    }
    bad
}

// ---------------------------------------------------------------------------------------------
// The client's requests and its answer handling.

const USER_AGENT: &str = "FuelWatch-WA/0.1.0 HomeAssistant";

fn ddmmyyyy(d: Date) -> String {
    format!("{:02}/{:02}/{:04}", d.day(), d.month(), d.year())
}

/// The client's exact request line: brackets percent-encoded, slashes not.
fn client_uri(product: u8, day: Date) -> String {
    format!("/v1?filter%5Bproduct%5D={product}&filter%5Bday%5D={}", ddmmyyyy(day))
}

fn decode(r: &TestResponse) -> Vec<u8> {
    let mut out = Vec::new();
    match r.header("content-encoding") {
        "" | "identity" => out.extend_from_slice(&r.body),
        "gzip" => {
            flate2::read::GzDecoder::new(&r.body[..]).read_to_end(&mut out).expect("gzip body");
        }
        "deflate" => {
            flate2::read::ZlibDecoder::new(&r.body[..]).read_to_end(&mut out).expect("deflate body");
        }
        "br" => {
            brotli::Decompressor::new(&r.body[..], 4096).read_to_end(&mut out).expect("brotli body");
        }
        other => panic!("content-encoding the client cannot read: {other}"),
    }
    out
}

/// One answer as the client takes it: its violations (empty = accepted) and what it keeps.
struct Taken {
    etag: String,
    doc: Json,
    violations: Vec<String>,
}

fn take(r: &TestResponse, ask: &Ask) -> Taken {
    let mut bad = Vec::new();
    if r.status != 200 {
        bad.push(format!("status {} (3xx and other non-200s fail; 429/5xx only retried)", r.status));
    }
    if r.header("content-type") != "application/vnd.api+json" {
        bad.push(format!("media type {:?}", r.header("content-type")));
    }
    let etag = r.header("etag").to_string();
    if etag.is_empty() || etag.len() > 200 {
        bad.push(format!("ETag kept by the client (≤ 200 characters): {etag:?}"));
    }
    let body = decode(r);
    if body.len() > 4 * 1024 * 1024 {
        bad.push(format!("decoded body {} bytes > 4 MiB", body.len()));
    }
    let doc = match std::str::from_utf8(&body).map_err(|e| e.to_string()).and_then(parse_strict) {
        Ok(doc) => doc,
        Err(e) => {
            bad.push(format!("strict JSON: {e}"));
            Json::Null
        }
    };
    bad.extend(violations(&doc, ask));
    Taken { etag, doc, violations: bad }
}

/// The Places stand-in enriches a tenth of the stations (as `wafuel demo` does).
async fn enrich_some(app: &TestApp) -> PlacesHandle {
    let places = PlacesHandle::spawn("key", demo_places(app.sim.state.dataset())).await.expect("stand-in");
    let client = PlacesClient::new(places.base_url().parse().expect("url"), "key".into()).expect("client");
    let config = EnrichConfig {
        discover_product: Some(p(1)),
        batch: 2_000,
        daily_budget: 10_000,
        ..EnrichConfig::default()
    };
    let store = sqlite_store(&app.dir).await;
    let report =
        enrich_pass(app.server.state.catalog.prices(), &store, &client, &config).await.expect("pass");
    assert!(report.matched > 50, "enrichment present on some stations: {report:?}");
    places
}

/// Run the client's whole flow at one Perth time; returns the number of non-empty documents.
async fn client_flow(at: DateTime, tomorrow_published: bool) -> usize {
    let app = TestApp::at(at).await;
    let _places = enrich_some(&app).await;
    let today = at.date();
    let days = [today.yesterday().expect("d"), today, today.tomorrow().expect("d")];
    let truth: BTreeSet<(String, String, String, String)> = app
        .sim
        .state
        .dataset()
        .stations
        .iter()
        .map(|s| (s.address.trim().into(), s.location.trim().into(), s.latitude.clone(), s.longitude.clone()))
        .collect();
    let mut station_identity: HashMap<String, String> = HashMap::new();
    let mut failures = Vec::new();
    let mut non_empty = 0;
    let mut enriched = 0;
    for product in PRODUCTS {
        for day in days {
            let ask = Ask { product, day };
            let uri = client_uri(product, day);
            for encoding in ["gzip, deflate", "gzip, deflate, br"] {
                let headers = [
                    ("accept", "application/vnd.api+json"),
                    ("user-agent", USER_AGENT),
                    ("accept-encoding", encoding),
                ];
                let r = app.call("GET", &uri, &headers).await;
                let taken = take(&r, &ask);
                for v in taken.violations.iter().take(5) {
                    failures.push(format!("{uri} ({encoding}) at {at}: {v}"));
                }
                let data = taken.doc.get("data").and_then(Json::array).unwrap_or_default();
                if encoding == "gzip, deflate" && !data.is_empty() {
                    non_empty += 1;
                }
                let status =
                    taken.doc.get("meta").and_then(|m| m.get("publicationStatus")).and_then(Json::str);
                if day > today && !tomorrow_published {
                    assert_eq!(status, Some("not_yet_published"), "{uri} at {at}");
                } else {
                    assert_eq!(status, Some("available"), "{uri} at {at}");
                }
                for resource in data {
                    let Some(a) = resource.get("attributes") else { continue };
                    enriched += usize::from(a.get("enrichment").is_some());
                    // The identity is FuelWatch's own text and values, for every day and product.
                    let address = a.get("address");
                    let text = |v: Option<&Json>| v.and_then(Json::str).unwrap_or("").to_string();
                    let number = |v: Option<&Json>| v.and_then(Json::number).unwrap_or("").to_string();
                    let tuple = (
                        text(address.and_then(|x| x.get("street"))),
                        text(address.and_then(|x| x.get("suburb"))),
                        number(a.get("latitude")),
                        number(a.get("longitude")),
                    );
                    let in_feed = truth.iter().any(|t| {
                        t.0 == tuple.0
                            && t.1 == tuple.1
                            && t.2.parse::<f64>().ok() == tuple.2.parse::<f64>().ok()
                            && t.3.parse::<f64>().ok() == tuple.3.parse::<f64>().ok()
                    });
                    if !in_feed {
                        failures.push(format!("{uri}: identity {tuple:?} is not the origin's text"));
                    }
                    let digest =
                        resource.get("id").and_then(Json::str).and_then(|id| id.split_once(':')).map(|x| x.1);
                    if let (Some(key), Some(digest)) = (client_identity(a), digest) {
                        let seen = station_identity.entry(digest.to_string()).or_insert_with(|| key.clone());
                        if *seen != key {
                            failures.push(format!("{uri}: station {digest} changed its client identity"));
                        }
                    }
                }

                // The hourly poll: If-None-Match with the kept ETag → 304, the snapshot reused.
                let mut replay = headers.to_vec();
                replay.push(("if-none-match", taken.etag.as_str()));
                let again = app.call("GET", &uri, &replay).await;
                if again.status != 304 || !again.body.is_empty() || again.header("etag") != taken.etag {
                    failures
                        .push(format!("{uri} ({encoding}): replay gave {} not an empty 304", again.status));
                }
            }
        }
    }
    assert!(failures.is_empty(), "the client rejects {} answers:\n{}", failures.len(), failures.join("\n"));
    assert!(enriched > 0, "the flow saw enriched stations");
    non_empty
}

#[tokio::test]
async fn the_home_assistant_client_accepts_every_answer_before_tomorrow_is_published() {
    let non_empty = client_flow(date(2026, 9, 29).at(10, 0, 0, 0), false).await;
    assert_eq!(non_empty, PRODUCTS.len() * 2, "yesterday and today of every product have stations");
}

#[tokio::test]
async fn the_home_assistant_client_accepts_every_answer_after_tomorrow_is_published() {
    let non_empty = client_flow(date(2026, 9, 29).at(15, 0, 0, 0), true).await;
    assert_eq!(non_empty, PRODUCTS.len() * 3, "every day of every product has stations");
}
