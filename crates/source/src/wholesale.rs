//! FuelWatch's terminal gate API: a token (`GET /api/token`, sent back as
//! `Authorization: Bearer …`), the centres (`GET /api/terminalgate/centres`) and each
//! centre's terminals with yesterday's, today's and tomorrow's price
//! (`GET /api/terminalgate/prices/{centreId}`). Every answer is read whole within one deadline
//! and a size bound, and checked whole: one price that is not a number, or not
//! 10 < p ≤ 1,000 c/L, refuses the whole answer, so a bad answer stores nothing.

use std::time::Duration;

use serde::Deserialize;

use crate::client::{BodyError, body_within, outbound_client};
use wafuel_domain::wholesale::{Centre, LivePrice, LiveTerminal, price_hundredths, product_of};

/// FuelWatch's API, the default `--wholesale-url`.
pub const DEFAULT_WHOLESALE_URL: &str = "https://www.fuelwatch.wa.gov.au/api/";

/// The three routes, under the base URL.
pub const TOKEN_PATH: &str = "token";
pub const CENTRES_PATH: &str = "terminalgate/centres";
pub const PRICES_PATH: &str = "terminalgate/prices/";

/// A real answer is a few kilobytes; anything this large is not one.
const MAX_BYTES: usize = 1024 * 1024;

/// Why a live read stored nothing: each says its cause, for the warning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WholesaleError {
    /// The token was refused, or a call with it was (401, 403).
    #[error("terminal gate API refused the token: HTTP {0}")]
    Refused(u16),
    /// The origin answered an error status, or could not be reached.
    #[error("terminal gate API unavailable: {0}")]
    Unavailable(String),
    /// Nothing came within the deadline.
    #[error("terminal gate API timed out after {0:?}")]
    Timeout(Duration),
    /// An answer was not what FuelWatch sends (or priced out of bounds).
    #[error("terminal gate API answer malformed: {0}")]
    Malformed(String),
}

/// The client of one origin.
#[derive(Debug, Clone)]
pub struct WholesaleClient {
    http: reqwest::Client,
    base: url::Url,
    /// For one whole read: the token, the centres and every centre's prices.
    deadline: Duration,
}

#[derive(Deserialize)]
struct CentreJson {
    id: u32,
    description: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TerminalJson {
    description: String,
    #[serde(default)]
    terminal_gate_product_models: Vec<ProductJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProductJson {
    fuel_type: String,
    // Kept as JSON values: a price that is not a number is refused, not skipped.
    #[serde(default)]
    price_current: serde_json::Value,
    #[serde(default)]
    price_next: serde_json::Value,
    #[serde(default)]
    price_previous: serde_json::Value,
}

/// The token as `/api/token` gives it: a JSON string, an object with a `token` or
/// `access_token` member, or the bare text.
fn token_of(body: &[u8]) -> Result<String, WholesaleError> {
    let text =
        std::str::from_utf8(body).map_err(|_| WholesaleError::Malformed("token is not UTF-8".into()))?;
    let token = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(serde_json::Value::Object(o)) => o
            .get("token")
            .or_else(|| o.get("access_token"))
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .ok_or_else(|| WholesaleError::Malformed("token object without a token".into()))?,
        _ => text.trim().to_string(),
    };
    if token.is_empty() || token.len() > 8192 || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(WholesaleError::Malformed("no usable token".into()));
    }
    Ok(token)
}

/// A price member: absent or null is no price; a number is bounded; anything else refuses.
fn price_of(value: &serde_json::Value, what: &str) -> Result<Option<i64>, WholesaleError> {
    match value {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::Number(n) => n
            .as_f64()
            .and_then(price_hundredths)
            .map(Some)
            .ok_or_else(|| WholesaleError::Malformed(format!("{what} {n} is not 10 < p <= 1000 c/L"))),
        other => Err(WholesaleError::Malformed(format!("{what} is not a number: {other}"))),
    }
}

/// One centre's answer, read and checked whole.
pub fn parse_prices(centre: Centre, body: &[u8]) -> Result<Vec<LiveTerminal>, WholesaleError> {
    let terminals: Vec<TerminalJson> = serde_json::from_slice(body)
        .map_err(|e| WholesaleError::Malformed(format!("prices of {}: {e}", centre.name())))?;
    let mut out: Vec<LiveTerminal> = Vec::with_capacity(terminals.len());
    for t in terminals {
        let name = t.description.trim().to_string();
        if name.is_empty() {
            return Err(WholesaleError::Malformed(format!("a terminal of {} has no name", centre.name())));
        }
        // A name is shown in pages and spreadsheets as written: bounded, nothing hidden in it.
        let hidden = |c: char| {
            c.is_control()
                || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        };
        if name.chars().count() > 1_000 || name.chars().any(hidden) {
            return Err(WholesaleError::Malformed(format!(
                "a terminal of {} has a name over 1,000 characters or with a control or direction mark",
                centre.name()
            )));
        }
        // A terminal or a product given twice: which price is right is not ours to guess.
        if out.iter().any(|o| o.name == name) {
            return Err(WholesaleError::Malformed(format!("{name} is listed twice in {}", centre.name())));
        }
        let mut prices: Vec<LivePrice> = Vec::new();
        for p in &t.terminal_gate_product_models {
            // A fuel without a terminal gate price of ours (none is known) is left out.
            let Some(product) = product_of(&p.fuel_type) else { continue };
            if prices.iter().any(|q| q.product == product) {
                return Err(WholesaleError::Malformed(format!("{name} gives {} twice", p.fuel_type)));
            }
            let what = |field: &str| format!("{name} {} {field}", p.fuel_type);
            prices.push(LivePrice {
                product,
                previous: price_of(&p.price_previous, &what("pricePrevious"))?,
                current: price_of(&p.price_current, &what("priceCurrent"))?,
                next: price_of(&p.price_next, &what("priceNext"))?,
            });
        }
        out.push(LiveTerminal { centre, name, prices });
    }
    Ok(out)
}

/// The centres answer: each known centre with FuelWatch's id for it (an unknown description
/// is left out: it has no coordinates of ours).
pub fn parse_centres(body: &[u8]) -> Result<Vec<(Centre, u32)>, WholesaleError> {
    let centres: Vec<CentreJson> =
        serde_json::from_slice(body).map_err(|e| WholesaleError::Malformed(format!("centres: {e}")))?;
    let known: Vec<(Centre, u32)> =
        centres.iter().filter_map(|c| Some((Centre::from_name(&c.description)?, c.id))).collect();
    // A centre named twice would let one answer's prices stand for another's.
    for (i, (centre, _)) in known.iter().enumerate() {
        if known[..i].iter().any(|(c, _)| c == centre) {
            return Err(WholesaleError::Malformed(format!("centres: {} is listed twice", centre.name())));
        }
    }
    if known.is_empty() {
        return Err(WholesaleError::Malformed("centres: none of the six terminal centres".into()));
    }
    Ok(known)
}

impl WholesaleClient {
    /// `base` ends with `/` (`…/api/`); `deadline` bounds one whole read.
    pub fn new(mut base: url::Url, deadline: Duration) -> Result<Self, reqwest::Error> {
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        let http = outbound_client().connect_timeout(deadline.min(Duration::from_secs(10))).build()?;
        Ok(Self { http, base, deadline })
    }

    pub fn base(&self) -> &url::Url {
        &self.base
    }

    /// Every centre's terminals, read whole within the deadline.
    pub async fn read(&self) -> Result<Vec<LiveTerminal>, WholesaleError> {
        tokio::time::timeout(self.deadline, self.read_all())
            .await
            .map_err(|_| WholesaleError::Timeout(self.deadline))?
    }

    async fn read_all(&self) -> Result<Vec<LiveTerminal>, WholesaleError> {
        let token = token_of(&self.get(TOKEN_PATH, None).await?)?;
        let centres = parse_centres(&self.get(CENTRES_PATH, Some(&token)).await?)?;
        let mut out = Vec::new();
        for (centre, id) in centres {
            let body = self.get(&format!("{PRICES_PATH}{id}"), Some(&token)).await?;
            out.extend(parse_prices(centre, &body)?);
        }
        Ok(out)
    }

    async fn get(&self, path: &str, token: Option<&str>) -> Result<bytes::Bytes, WholesaleError> {
        let url = self.base.join(path).map_err(|e| WholesaleError::Unavailable(e.to_string()))?;
        let mut request = self.http.get(url).header(reqwest::header::ACCEPT, "application/json");
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response =
            request.send().await.map_err(|e| WholesaleError::Unavailable(e.without_url().to_string()))?;
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
            return Err(WholesaleError::Refused(status.as_u16()));
        }
        if !status.is_success() {
            return Err(WholesaleError::Unavailable(format!("{path}: HTTP {status}")));
        }
        match body_within(response, MAX_BYTES).await {
            Ok(body) => Ok(body),
            Err(BodyError::TooLarge) => {
                Err(WholesaleError::Malformed(format!("{path}: over {MAX_BYTES} bytes")))
            }
            Err(BodyError::Read(why)) => Err(WholesaleError::Unavailable(why)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // One terminal in the shape of FuelWatch's answer (its fields, names and two decimals; the
    // prices are written for the test).
    const AMPOL: &str = r#"[{"id":31,"description":"Ampol Kwinana","defaultTerminalGatePriceChangeTime":"8:30am",
        "terminalGatePriceChangeTime":"12:01am","hasTwoWholesalePrices":true,"terminalGateProductModels":[
        {"fuelType":"ULP","priceCurrent":173.26,"priceNext":172.18,"pricePrevious":175.94},
        {"fuelType":"PULP","priceCurrent":186.71,"priceNext":185.52,"pricePrevious":189.07},
        {"fuelType":"Diesel","priceCurrent":211.38,"priceNext":204.15,"pricePrevious":219.66}]}]"#;

    #[test]
    fn a_centres_answer_reads_as_fuelwatch_writes_it() {
        let terminals = parse_prices(Centre::Perth, AMPOL.as_bytes()).expect("reads");
        assert_eq!(terminals.len(), 1);
        assert_eq!(terminals[0].name, "Ampol Kwinana");
        let ulp = terminals[0].prices[0];
        assert_eq!(ulp.product.get(), 1);
        assert_eq!((ulp.previous, ulp.current, ulp.next), (Some(17_594), Some(17_326), Some(17_218)));
        assert_eq!(terminals[0].prices[2].product.get(), 4);
        let centres = parse_centres(
            br#"[{"id":5,"description":"Albany"},{"id":6,"description":"Perth"},
            {"id":4,"description":"Port Hedland"},{"id":9,"description":"Kununurra"}]"#,
        )
        .expect("reads");
        assert_eq!(centres, vec![(Centre::Albany, 5), (Centre::Perth, 6), (Centre::PortHedland, 4)]);
    }

    #[test]
    fn one_bad_price_refuses_the_whole_answer() {
        for (bad, why) in [
            (AMPOL.replace("211.38", "0"), "not 10 < p"),
            (AMPOL.replace("211.38", "1000.5"), "not 10 < p"),
            (AMPOL.replace("211.38", "\"211.38\""), "not a number"),
            (AMPOL.replace("211.38", "-5"), "not 10 < p"),
            (AMPOL.replace("[{\"id\":31", "{\"id\":31"), "prices of Perth"),
            (AMPOL.replace("\"Ampol Kwinana\"", "\" \""), "no name"),
            // Over the bound as written (not once rounded to the hundredth).
            (AMPOL.replace("211.38", "1000.004"), "not 10 < p"),
            // A terminal, or a product of one terminal, given twice.
            (AMPOL.replace("}]}]", "}]},") + &AMPOL[1..], "listed twice"),
            (AMPOL.replace("\"fuelType\":\"PULP\"", "\"fuelType\":\"ULP\""), "gives ULP twice"),
            (AMPOL.replace("Ampol Kwinana", "Ampol\\u202eKwinana"), "direction mark"),
        ] {
            match parse_prices(Centre::Perth, bad.as_bytes()) {
                Err(WholesaleError::Malformed(reason)) => assert!(reason.contains(why), "{reason}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
        let null = AMPOL.replace("\"priceNext\":204.15", "\"priceNext\":null");
        let read = parse_prices(Centre::Perth, null.as_bytes()).expect("a null price is no price");
        assert_eq!(read[0].prices[2].next, None);
        assert!(matches!(parse_centres(b"[]"), Err(WholesaleError::Malformed(_))));
        let twice = parse_centres(br#"[{"id":6,"description":"Perth"},{"id":7,"description":"Perth"}]"#);
        assert!(matches!(twice, Err(WholesaleError::Malformed(r)) if r.contains("Perth is listed twice")));
    }

    #[test]
    fn the_token_comes_in_any_of_its_plain_shapes() {
        assert_eq!(token_of(br#""abc.def""#).expect("string"), "abc.def");
        assert_eq!(token_of(br#"{"token":"t1"}"#).expect("object"), "t1");
        assert_eq!(token_of(br#"{"access_token":"t2"}"#).expect("object"), "t2");
        assert_eq!(token_of(b"bare-token\n").expect("text"), "bare-token");
        assert!(token_of(b"").is_err());
        assert!(token_of(br#"{"nothing":1}"#).is_err());
        assert!(token_of(b"two words").is_err());
    }
}
