//! Requests a hostile client sends, against the real public port (request rules, front cache,
//! limits) and both stores: no request changes another client's answer, every refusal is the
//! contract's status with `no-store`, and nothing unbounded is echoed.

use std::net::SocketAddr;

use wafuel_sim::Faults;

use crate::hardening::{raw, status_of};

use crate::support::*;

/// The two spellings of "two suburbs" a separator could confuse: one literal suburb holding
/// the separator, and the comma list.
const PIPED: &str = "suburb=ELLENBROOK%7CMALAGA";
const LISTED: &str = "suburb=ELLENBROOK,MALAGA";

/// A fresh app over SQLite, or over PostgreSQL in a schema of its own.
async fn app_on(postgres: Option<&str>) -> TestApp {
    match postgres {
        None => TestApp::new().await,
        Some(url) => {
            let dir = tempfile::tempdir().expect("temp dir");
            TestApp::over(postgres_store(url).await, dir, fixture_morning(), Faults::default(), None).await
        }
    }
}

/// The part of an answer that must not depend on what was asked before: `/v1`'s data and
/// publication status, or the whole legacy document.
fn prices(route: &str, response: &TestResponse) -> serde_json::Value {
    let json = response.json();
    match route {
        "/v1" => serde_json::json!([json["data"], json["meta"]["publicationStatus"]]),
        _ => json,
    }
}

/// Ask `first` then `second` of one route on a fresh app: `second` answers exactly what a
/// fresh app answers for it.
async fn in_order(postgres: Option<&str>, route: &str, first: &str, second: &str) {
    let app = app_on(postgres).await;
    let asked = app.get(&format!("{route}?product=1&{first}")).await;
    assert_eq!(asked.status, 200, "{route}?{first}");
    let after = app.get(&format!("{route}?product=1&{second}")).await;
    assert_eq!(after.status, 200, "{route}?{second}");
    let truth = app_on(postgres).await.get(&format!("{route}?product=1&{second}")).await;
    assert_eq!(prices(route, &after), prices(route, &truth), "{route}: {second} after {first}");
}

async fn separators_never_join_suburbs(postgres: Option<&str>) {
    for route in ["/v1", "/legacy"] {
        in_order(postgres, route, PIPED, LISTED).await;
        in_order(postgres, route, LISTED, PIPED).await;
    }
    // What each spelling means: the list is both suburbs; the piped text is one suburb that
    // no station is in.
    let app = app_on(postgres).await;
    let listed = app.get(&format!("/v1?product=1&{LISTED}&surrounding=no")).await.json();
    let suburbs: std::collections::BTreeSet<&str> = listed["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|s| s["attributes"]["address"]["suburb"].as_str())
        .collect();
    assert_eq!(suburbs.into_iter().collect::<Vec<_>>(), ["ELLENBROOK", "MALAGA"]);
    let piped = app.get(&format!("/v1?product=1&{PIPED}")).await.json();
    assert_eq!(piped["data"], serde_json::json!([]));
    let legacy = app.get(&format!("/legacy?product=1&{PIPED}")).await;
    assert_eq!(legacy.status, 200);
}

#[tokio::test]
async fn a_separator_in_a_suburb_never_reaches_another_answer_on_sqlite() {
    separators_never_join_suburbs(None).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn a_separator_in_a_suburb_never_reaches_another_answer_on_postgres() {
    let url = postgres_url();
    separators_never_join_suburbs(Some(&url)).await;
}

/// Every control or separator character a key format could use, inside one suburb, answers
/// a selection of its own: never the stations of the plain suburbs around it.
#[tokio::test]
async fn separator_characters_are_literal_suburb_text() {
    let app = TestApp::new().await;
    let plain = app.get("/v1?product=1&suburb=ELLENBROOK").await.json();
    assert_ne!(plain["data"], serde_json::json!([]));
    for separator in ["%7C", ";", "%3D", "*", "%22", "%5C", "%2A", ":"] {
        let target = format!("/v1?product=1&suburb=ELLENBROOK{separator}");
        let answer = app.get(&target).await;
        assert_eq!(answer.status, 200, "{target}");
        assert_eq!(answer.json()["data"], serde_json::json!([]), "{target}");
    }
    // Control characters are refused before the source is asked (a tab or line feed is
    // whitespace, collapsed like a space).
    let before = app.source_requests();
    for control in ["%00", "%08", "%1F", "%7F", "%C2%80"] {
        let answer = app.get(&format!("/v1?product=1&suburb=ELLEN{control}BROOK")).await;
        assert_eq!(
            (answer.status, answer.json()["errors"][0]["code"].as_str()),
            (400, Some("invalid_query"))
        );
    }
    assert_eq!(app.source_requests(), before);
}

/// A raw request's status, head and body.
async fn send(addr: SocketAddr, request: &str) -> (u16, String, String) {
    let answer = raw(addr, request.as_bytes()).await;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (status_of(&answer), head.to_ascii_lowercase(), body.to_string())
}

fn get(target: &str, headers: &str) -> String {
    format!("GET {target} HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n")
}

/// A refusal as the contract writes it: the status, a JSON:API error with the code, no-store
/// and CORS.
fn assert_refusal((status, head, body): &(u16, String, String), want: u16, code: &str) {
    assert_eq!(*status, want, "{head}\n{body}");
    assert!(head.contains("cache-control: no-store"), "{head}");
    assert!(head.contains("access-control-allow-origin: *"), "{head}");
    assert!(head.contains("content-type: application/vnd.api+json"), "{head}");
    let json: serde_json::Value = serde_json::from_str(body).expect("a JSON:API body");
    assert_eq!(json["errors"][0]["code"], code, "{body}");
    assert_valid("JsonApiErrorDocument", &json);
}

/// A path that is not UTF-8 names no route (404), except a station id in the path, which is
/// a malformed id (400), as the station routes answer any other.
#[tokio::test]
async fn paths_that_are_not_utf8_are_refused_with_the_contracts_body() {
    let app = TestApp::new().await;
    let addr = app.server.addr;
    for target in ["/static/image/brand/%ff.svg", "/explore/%ff", "/%ed%a0%80", "/v1%ff"] {
        assert_refusal(&send(addr, &get(target, "")).await, 404, "not_found");
    }
    for target in ["/v1/stations/%ff", "/v1/stations/%c3%28/history", "/v1/stations/%ff/forecast?product=1"] {
        assert_refusal(&send(addr, &get(target, "")).await, 400, "invalid_query");
    }
    assert_eq!(app.source_requests(), 0);
}

/// A body on GET is one rule whether or not the document is cached: ignored within 64 KiB,
/// refused with 413 past it or when its length is unstated, before any byte of a 200.
#[tokio::test]
async fn bodies_meet_one_rule_cached_or_not() {
    let app = TestApp::new().await;
    let addr = app.server.addr;
    let big = "Content-Length: 70000\r\n";
    let chunked = "Transfer-Encoding: chunked\r\n";
    // Not cached yet: refused.
    assert_refusal(&send(addr, &get("/v1?product=2", big)).await, 413, "payload_too_large");
    assert_eq!(app.source_requests(), 0, "a refused request never reaches the source");
    // Cached (through the listener, so the front cache holds it): refused alike.
    assert_eq!(send(addr, &get("/v1?product=2", "")).await.0, 200);
    assert_eq!(send(addr, &get("/v1?product=2", "")).await.0, 200);
    for headers in [big, chunked] {
        let refused = send(addr, &get("/v1?product=2", headers)).await;
        assert_refusal(&refused, 413, "payload_too_large");
        assert!(refused.1.contains("connection: close"), "{}", refused.1);
    }
    // Within the bound: ignored, cached or not.
    let small =
        "GET /v1?product=2 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
    assert_eq!(send(addr, small).await.0, 200);
    // Smuggling shapes: a length and chunked framing together, or two lengths, never a 200.
    for headers in
        ["Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "Content-Length: 5\r\nContent-Length: 6\r\n"]
    {
        let (status, head, _) = send(addr, &get("/v1?product=2", headers)).await;
        assert!(status == 400 || status == 413 || status == 0, "{status} {head}");
    }
}

#[tokio::test]
async fn http_1_1_needs_exactly_one_host() {
    let app = TestApp::new().await;
    let addr = app.server.addr;
    assert_eq!(send(addr, &get("/v1?product=1", "")).await.0, 200);
    for request in [
        "GET /v1?product=1 HTTP/1.1\r\nConnection: close\r\n\r\n".to_string(),
        "GET /v1?product=1 HTTP/1.1\r\nHost: x\r\nHost: y\r\nConnection: close\r\n\r\n".to_string(),
    ] {
        // Cached or not (the first request above stored it).
        assert_refusal(&send(addr, &request).await, 400, "invalid_query");
    }
    // HTTP/1.0 has no Host requirement.
    assert_eq!(send(addr, "GET /v1?product=1 HTTP/1.0\r\n\r\n").await.0, 200);
}

#[tokio::test]
async fn nothing_unbounded_is_echoed() {
    let app = TestApp::new().await;
    let addr = app.server.addr;
    let id_of = |head: &str| {
        head.lines().find_map(|l| l.strip_prefix("x-request-id: ").map(str::to_string)).expect("an id")
    };
    let (_, head, _) = send(addr, &get("/v1?product=1", "X-Request-Id: client-42\r\n")).await;
    assert_eq!(id_of(&head), "client-42");
    let long = "a".repeat(129);
    for given in [long.as_str(), "caf\u{e9}", "two words", ""] {
        let (status, head, _) =
            send(addr, &get("/v1?product=1", &format!("X-Request-Id: {given}\r\n"))).await;
        assert_eq!(status, 200);
        let id = id_of(&head);
        assert!(id != given.to_ascii_lowercase() && id.len() <= 32, "{given:?} echoed as {id:?}");
    }
    // A preflight echoes a short list of header names, and refuses a long one.
    let preflight = |list: String| {
        format!(
            "OPTIONS /v1 HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\nAccess-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: {list}\r\nConnection: close\r\n\r\n"
        )
    };
    let (status, head, _) = send(addr, &preflight("x-request-id, if-none-match".into())).await;
    assert_eq!(status, 204);
    assert!(head.contains("access-control-allow-headers: x-request-id, if-none-match"), "{head}");
    let many = (0..1_300).map(|i| format!("x-h{i}")).collect::<Vec<_>>().join(",");
    let (status, head, _) = send(addr, &preflight(many)).await;
    assert_eq!(status, 400, "{head}");
    assert!(!head.contains("access-control-allow-headers"), "{head}");
    assert!(head.len() < 2_000, "{} bytes of head", head.len());
}

#[tokio::test]
async fn weights_follow_rfc_9110() {
    let app = TestApp::new().await;
    let coding = |headers: &'static [(&'static str, &'static str)]| {
        let app = &app;
        async move {
            let answer = app.call("GET", "/v1?product=1", headers).await;
            assert_eq!(answer.status, 200);
            answer.header("content-encoding").to_string()
        }
    };
    assert_eq!(coding(&[("accept-encoding", "identity;q=0")]).await, "br");
    assert_eq!(coding(&[("accept-encoding", "br;q=1.0000001, gzip;q=0.5")]).await, "gzip");
    assert_eq!(coding(&[("accept-encoding", "gzip;q=1, br;q=0.5")]).await, "gzip");
    // An Accept weight that is not RFC 9110's counts as 0: JSON:API is not acceptable then.
    let refused =
        app.call("GET", "/v1?product=1", &[("accept", "application/vnd.api+json;q=1.0000001")]).await;
    assert_eq!(refused.status, 406);
    let taken = app.call("GET", "/v1?product=1", &[("accept", "application/vnd.api+json;q=0.001")]).await;
    assert_eq!(taken.status, 200);
}

/// A route whose corridor (length × 2 × detour) passes 250,000 km² is refused before any
/// work; the worst route inside it is answered.
#[tokio::test]
async fn route_work_is_bounded_by_its_corridor() {
    let app = TestApp::new().await;
    // ~740 points across WA, as many as fit in 8,192 characters, at the 20 km maximum.
    let across: Vec<(f64, f64)> =
        (0..740).map(|i| if i % 2 == 0 { (-31.95, 115.86) } else { (-20.31, 118.58) }).collect();
    let target = format!("/v1/stations?route={}&detour=20&product=1", crate::routes::encode(&across));
    assert!(target.len() <= 8_192 + 40, "{}", target.len());
    let refused = app.get(&target).await;
    assert_eq!((refused.status, refused.json()["errors"][0]["code"].as_str()), (400, Some("invalid_query")));
    assert_eq!(app.source_requests(), 0);
    // 11 legs Perth–Geraldton and back (about 4,100 km) at 20 km: inside the bound.
    let inside: Vec<(f64, f64)> =
        (0..12).map(|i| if i % 2 == 0 { (-31.95, 115.86) } else { (-28.77, 114.61) }).collect();
    let target = format!("/v1/stations?route={}&detour=20&product=1", crate::routes::encode(&inside));
    assert_eq!(app.get(&target).await.status, 200);
}

/// The schema docs/openapi.json gives a query parameter of a path.
fn parameter_schema(path: &str, name: &str) -> jsonschema::Validator {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("docs/openapi.json").expect("openapi.json"))
            .expect("json");
    let parameters = doc["paths"][path]["get"]["parameters"].as_array().expect("parameters");
    let resolve = |p: &serde_json::Value| match p["$ref"].as_str() {
        Some(r) => doc.pointer(r.trim_start_matches('#')).cloned().unwrap_or_default(),
        None => p.clone(),
    };
    let parameter =
        parameters.iter().map(resolve).find(|p| p["name"] == name).unwrap_or_else(|| panic!("{path} {name}"));
    jsonschema::validator_for(&parameter["schema"]).expect("schema compiles")
}

/// Each parameter's OpenAPI pattern says exactly what the server takes: a value the schema
/// allows is answered, one it refuses is `400 invalid_query` (schemathesis checks the same
/// from outside). The suburb schema describes one name (a comma list is the server's too, and
/// not expressible as a pattern beside the length bound).
#[tokio::test]
async fn openapi_patterns_say_what_the_server_takes() {
    let app = TestApp::new().await;
    let cases: [(&str, &str, &str, &[&str]); 5] = [
        (
            "/v1/stations",
            "near",
            "product=1",
            &[
                "-31.95,115.86",
                "-36,112",
                "-13,130",
                "-36.0,130.00",
                "-13.5,129.999999999",
                "-031.9,0115.8",
                " -31.95 , 115.86 ",
                "-36.1,115",
                "-12.9,115",
                "-31.9,111.9",
                "-31.9,130.1",
                "-31.9,115.",
                "31.9,115",
                "-31.9,+115",
                "-31.9;115",
                "-3e1,115",
                "-31.9,115,1",
            ],
        ),
        (
            "/v1/stations",
            "radius",
            "near=-31.95,115.86&product=1",
            &["100", "100.0", "0.5", "05", "99.99", " 7 ", "100.01", "0", "0.0", "-1", ".5", "5.", "1e1"],
        ),
        (
            "/v1/stations",
            "limit",
            "product=1",
            &["1", "5000", "0005", "4999", "5001", "0", "00005", "-1", "1.0", " 3 "],
        ),
        (
            "/v1/stations",
            "detour",
            "route=zt_bEcddbUbhAzoDfsGnlFjoHj~H&product=1",
            &["2", "20", "20.000", "0.1", "019", "20.1", "0", "0.00", "21", ".5"],
        ),
        (
            "/v1",
            "suburb",
            "product=1&surrounding=no",
            &[
                "PERTH",
                "perth   airport",
                "  perth ",
                "a\tb",
                "O'CONNOR",
                "A|B",
                "",
                " ",
                "a\u{1}b",
                "a\u{7f}",
                // 100 characters, then 101.
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
            ],
        ),
    ];
    for (path, name, rest, values) in cases {
        let schema = parameter_schema(path, name);
        for value in values {
            let documented = schema.is_valid(&serde_json::json!(value));
            let escaped: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
            let answer = app.get(&format!("{path}?{rest}&{name}={escaped}")).await;
            assert!(
                answer.status == 200 || answer.status == 400,
                "{path} {name}={value:?}: {}",
                answer.status
            );
            assert_eq!(
                answer.status == 200,
                documented,
                "{path} {name}={value:?}: server {} vs OpenAPI",
                answer.status
            );
        }
    }
}

/// What hyper answers itself, before any service runs — a request line that does not parse,
/// a version it does not speak, a head over the limit — is `no-store` too, and a 400 has the
/// JSON:API body every other 400 has.
#[tokio::test]
async fn the_parsers_own_refusals_are_the_contracts() {
    let app = TestApp::new().await;
    let addr = app.server.addr;
    for request in [
        "GARBAGE\r\n\r\n".to_string(),
        "GET /v1 HTTP/9.9\r\nHost: x\r\n\r\n".to_string(),
        "GET /v1\u{1} HTTP/1.1\r\nHost: x\r\n\r\n".to_string(),
    ] {
        let answer = send(addr, &request).await;
        assert_eq!(answer.0, 400, "{request:?}: {}", answer.1);
        assert!(answer.1.contains("cache-control: no-store"), "{request:?}: {}", answer.1);
        let json: serde_json::Value = serde_json::from_str(&answer.2).expect("a JSON:API body");
        assert_eq!(json["errors"][0]["code"], "invalid_query");
    }
    let huge = format!("GET /v1 HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n", "b".repeat(100_000));
    let (status, head, _) = send(addr, &huge).await;
    assert!(status == 0 || (status == 431 && head.contains("cache-control: no-store")), "{status} {head}");
    // A kept-alive connection still answers normally after its own requests.
    assert_eq!(send(addr, &get("/v1?product=1", "")).await.0, 200);
    assert_eq!(app.source_requests(), 1);
}
