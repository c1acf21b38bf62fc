//! `/v1` and `/legacy` stay byte for byte what they were (docs/api.md: a client of the
//! reference must never see a difference). Each case's status, headers and body digest are
//! compared with `tests/golden/reference_routes.txt`, recorded on the commit before the
//! station API landed (set `WAFUEL_RECORD_GOLDEN=1` to record again, and review the diff).
//! Recorded again once since, for one deliberate change: an expanded unmapped brand (code 0)
//! is named by the source's text ("Quest Fuel") instead of "Unknown".
//! The selection holds only the origin's fixed-price stations, so the simulated market's
//! daily moves cannot change it.

use crate::support::*;

const GOLDEN: &str = "tests/golden/reference_routes.txt";
const SUBURBS: &str = "suburb=meadow,perth%20airport,wandering&surrounding=no";

/// URI, method, request headers.
type Case = (String, &'static str, Vec<(&'static str, &'static str)>);

fn cases() -> Vec<Case> {
    vec![
        (format!("/v1?{SUBURBS}"), "GET", vec![]),
        (format!("/v1?{SUBURBS}&expand=all"), "GET", vec![("accept-encoding", "gzip")]),
        (format!("/v1?{SUBURBS}&day=yesterday"), "HEAD", vec![("accept", "application/vnd.api+json")]),
        (format!("/v1?{SUBURBS}&product=1"), "GET", vec![("if-none-match", "*")]),
        ("/legacy?product=1&suburb=meadow&surrounding=no".to_string(), "GET", vec![]),
        (
            "/legacy?product=4&suburb=meadow&surrounding=no".to_string(),
            "GET",
            vec![("accept-encoding", "br")],
        ),
        ("/v1?product=3".to_string(), "GET", vec![]),
        ("/legacy?expand=all".to_string(), "GET", vec![]),
        ("/v1".to_string(), "OPTIONS", vec![("access-control-request-method", "GET")]),
    ]
}

/// One line per case: method, URI, status, every header but the two that differ on every
/// request (`date`, and `x-request-id`, made by the server for a request without one), body
/// length and digest.
async fn describe(app: &TestApp) -> String {
    let mut out = String::new();
    for (uri, method, headers) in cases() {
        let r = app.call(method, &uri, &headers).await;
        let mut names: Vec<String> = r
            .headers
            .keys()
            .map(|k| k.as_str().to_string())
            .filter(|k| k != "date" && k != "x-request-id")
            .collect();
        names.sort();
        names.dedup();
        let headers: Vec<String> = names.iter().map(|n| format!("{n}: {}", r.header(n))).collect();
        let digest = wafuel_domain::key::sha256_hex(&r.body);
        out.push_str(&format!(
            "{method} {uri} -> {} | {} | {} bytes sha256 {digest}\n",
            r.status,
            headers.join(" | "),
            r.body.len()
        ));
    }
    out
}

#[tokio::test]
async fn v1_and_legacy_are_byte_for_byte_the_reference_answers() {
    let app = TestApp::new().await;
    // Only fixed-price stations are in the selection.
    let doc = app.get(&format!("/v1?{SUBURBS}")).await.json();
    let names: Vec<&str> = doc["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|s| s["attributes"]["tradingName"].as_str().expect("name"))
        .collect();
    let fixed: Vec<&str> = app
        .sim
        .state
        .dataset()
        .stations
        .iter()
        .filter(|s| !s.fixed_prices.is_empty())
        .map(|s| s.trading_name.as_str())
        .collect();
    assert!(names.len() >= 4 && names.iter().all(|n| fixed.contains(n)), "{names:?}");
    let app = TestApp::new().await;
    let actual = describe(&app).await;
    if std::env::var("WAFUEL_RECORD_GOLDEN").is_ok() {
        std::fs::write(GOLDEN, &actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(GOLDEN).expect("golden file");
    for (a, e) in actual.lines().zip(expected.lines()) {
        assert_eq!(a, e, "a reference route changed");
    }
    assert_eq!(actual.lines().count(), expected.lines().count());
}
