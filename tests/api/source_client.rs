//! The source transport and validator against the simulated origin on a random port: every
//! failure maps to its exact public code (and Retry-After where due).

use std::time::Duration;

use wafuel_domain::error_code::{ErrorCode, detail};
use wafuel_domain::time::Day;
use wafuel_sim::{FaultMode, Faults};
use wafuel_source::SourceError;
use wafuel_source::client::{ClientLimits, SourceRequest};

use crate::support::*;

const DAY: jiff::civil::Date = jiff::civil::date(2026, 9, 29);

fn extracts(products: &[u8]) -> Vec<SourceRequest> {
    products.iter().map(|&code| SourceRequest::extract(p(code), Day::Today)).collect()
}

async fn fetch_with(
    faults: Faults,
    products: &[u8],
    limits: ClientLimits,
) -> (Result<usize, SourceError>, usize) {
    let sim = origin(faults).await;
    let client = client_for(&sim, limits);
    let result = client.fetch_quotes(&extracts(products), DAY).await.map(|q| q.len());
    (result, sim.state.request_count())
}

async fn fetch(faults: Faults) -> (Result<usize, SourceError>, usize) {
    fetch_with(faults, &[1], quick_limits()).await
}

#[tokio::test]
async fn a_good_selection_validates_whole() {
    let sim = origin(Faults::default()).await;
    let client = client_for(&sim, quick_limits());
    let quotes = client.fetch_quotes(&extracts(&[1, 2, 4, 5, 6, 10, 11]), DAY).await.expect("valid");
    assert!(quotes.len() > 3000, "{} quotes", quotes.len());
    assert_eq!(sim.state.request_count(), 7);
    let log = sim.state.requests();
    assert!(
        log.iter().all(|r| r.user_agent.as_deref() == Some(concat!("wafuel/", env!("CARGO_PKG_VERSION"))))
    );
    assert!(log.iter().any(|r| r.query == "Product=10&Day=today"));
}

#[tokio::test]
async fn filtered_request_parameters_reach_the_origin() {
    let sim = origin(Faults::default()).await;
    let client = client_for(&sim, quick_limits());
    let request = SourceRequest {
        product: p(1),
        brand: None,
        region: None,
        suburb: Some("ELLENBROOK".into()),
        surrounding: Some(false),
        day: Day::Today,
    };
    let quotes = client.fetch_quotes(&[request], DAY).await.expect("valid");
    assert!(quotes.iter().all(|q| q.station.suburb == "ELLENBROOK"));
    assert_eq!(sim.state.requests()[0].query, "Product=1&Suburb=ELLENBROOK&Surrounding=no&Day=today");
}

#[tokio::test]
async fn an_empty_feed_is_a_valid_empty_selection() {
    assert_eq!(
        fetch(Faults { mode: Some(FaultMode::Empty), ..Faults::default() }).await.0.expect("valid"),
        0
    );
}

#[tokio::test]
async fn forbidden_is_upstream_denied_without_retry() {
    let (result, requests) = fetch(Faults { status: Some(403), ..Faults::default() }).await;
    let e = result.expect_err("denied");
    assert_eq!((e.code, e.detail), (ErrorCode::UpstreamDenied, detail::UPSTREAM_DENIED));
    assert_eq!(requests, 1);
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let (result, requests) = fetch(Faults { mode: Some(FaultMode::Redirect), ..Faults::default() }).await;
    assert_eq!(result.expect_err("redirect").code, ErrorCode::UpstreamDenied);
    assert_eq!(requests, 1);
}

#[tokio::test]
async fn server_errors_retry_once_then_fail_unavailable() {
    for status in [500u16, 503, 429] {
        let (result, requests) = fetch(Faults { status: Some(status), ..Faults::default() }).await;
        let e = result.expect_err("unavailable");
        assert_eq!(e.code, ErrorCode::UpstreamUnavailable, "{status}");
        assert_eq!(e.detail, detail::UPSTREAM_UNAVAILABLE);
        assert_eq!(requests, 2, "{status}: two attempts");
    }
}

#[tokio::test]
async fn one_transient_failure_is_retried_to_success() {
    let (result, requests) = fetch(Faults { status: Some(503), times: Some(1), ..Faults::default() }).await;
    assert!(result.expect("second attempt succeeds") > 900);
    assert_eq!(requests, 2);
}

#[tokio::test]
async fn long_retry_after_fails_at_once_and_is_passed_on() {
    let (result, requests) =
        fetch(Faults { status: Some(429), retry_after: Some(30), ..Faults::default() }).await;
    let e = result.expect_err("unavailable");
    assert_eq!(e.code, ErrorCode::UpstreamUnavailable);
    assert_eq!(e.retry_after, Some(30));
    assert_eq!(requests, 1, "no retry when the origin asks for more than 2 s");
}

#[tokio::test]
async fn short_retry_after_is_honoured() {
    let started = std::time::Instant::now();
    let (result, requests) =
        fetch(Faults { status: Some(503), retry_after: Some(1), times: Some(1), ..Faults::default() }).await;
    assert!(result.is_ok());
    assert_eq!(requests, 2);
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[tokio::test]
async fn slow_headers_hit_the_shared_deadline() {
    let (result, _) = fetch(Faults { delay_ms: Some(3_000), ..Faults::default() }).await;
    let e = result.expect_err("timeout");
    assert_eq!((e.code, e.detail), (ErrorCode::UpstreamTimeout, detail::UPSTREAM_TIMEOUT));
}

#[tokio::test]
async fn slow_body_hits_the_shared_deadline() {
    let (result, _) = fetch(Faults { slow_body_ms: Some(200), ..Faults::default() }).await;
    assert_eq!(result.expect_err("timeout").code, ErrorCode::UpstreamTimeout);
}

#[tokio::test]
async fn unreachable_origin() {
    // Bind then drop a listener: nothing listens on that port any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let client = wafuel_source::client::SourceClient::new(
        format!("http://127.0.0.1:{port}/fuelwatch/fuelWatchRSS").parse().expect("url"),
        quick_limits(),
    )
    .expect("client");
    let e = client.fetch_quotes(&extracts(&[1]), DAY).await.expect_err("refused");
    assert_eq!((e.code, e.detail), (ErrorCode::UpstreamUnavailable, detail::UPSTREAM_UNREACHABLE));
}

#[tokio::test]
async fn hostile_bodies_map_to_their_codes() {
    let cases = [
        (FaultMode::Malformed, ErrorCode::InvalidFeed, detail::INVALID_FEED),
        (FaultMode::Doctype, ErrorCode::InvalidFeed, detail::INVALID_FEED),
        (FaultMode::WrongDate, ErrorCode::InvalidFeed, detail::INVALID_FEED),
        (FaultMode::Conflict, ErrorCode::InvalidFeed, detail::CONFLICTING_QUOTES),
        (FaultMode::InvalidUtf8, ErrorCode::InvalidFeed, detail::INVALID_ENCODING),
        (FaultMode::Oversize, ErrorCode::ResponseTooLarge, detail::TOO_LARGE),
        (FaultMode::BadPrice, ErrorCode::InvalidFeed, detail::INVALID_FEED),
        (FaultMode::BadCoordinate, ErrorCode::InvalidFeed, detail::INVALID_FEED),
        (FaultMode::MissingField, ErrorCode::InvalidFeed, detail::INVALID_FEED),
        (FaultMode::RepeatedElement, ErrorCode::InvalidFeed, detail::INVALID_FEED),
    ];
    for (mode, code, text) in cases {
        let (result, requests) = fetch(Faults { mode: Some(mode), ..Faults::default() }).await;
        let e = result.expect_err("rejected");
        assert_eq!((e.code, e.detail), (code, text), "{mode:?}: {}", e.reason);
        assert_eq!(requests, 1, "{mode:?} is not retried");
    }
}

#[tokio::test]
async fn one_bad_component_fails_the_whole_selection() {
    let faults = Faults { mode: Some(FaultMode::WrongDate), products: Some(vec![10]), ..Faults::default() };
    let (result, _) = fetch_with(faults, &[1, 2, 10], quick_limits()).await;
    assert_eq!(result.expect_err("atomic").code, ErrorCode::InvalidFeed);
}

#[tokio::test]
async fn first_failure_cancels_siblings() {
    // Product 4 is refused at once while every other product takes 1.5 s. With three in
    // flight and the first failure cancelling the rest, only the first wave is ever sent.
    let sim = origin(Faults::default()).await;
    sim.state.set_fault_rules(vec![
        Faults { status: Some(403), products: Some(vec![4]), ..Faults::default() },
        Faults { delay_ms: Some(1_500), ..Faults::default() },
    ]);
    let client =
        client_for(&sim, ClientLimits { deadline: Duration::from_secs(5), ..ClientLimits::default() });
    let e = client.fetch_quotes(&extracts(&[4, 1, 2, 5, 6, 10, 11]), DAY).await.expect_err("denied");
    assert_eq!(e.code, ErrorCode::UpstreamDenied);
    // At most the first wave reached the origin (a sibling may be cancelled before it even
    // connects), and the error came back with only the refusal answered: nobody waited for
    // the slow siblings.
    let sent = sim.state.request_count();
    assert!((1..=3).contains(&sent), "only the first wave was sent: {sent}");
    assert_eq!(sim.state.answered_count(), 1, "siblings were not awaited");
}

#[tokio::test]
async fn at_most_three_in_flight() {
    let sim = origin(Faults { delay_ms: Some(400), ..Faults::default() }).await;
    let client =
        client_for(&sim, ClientLimits { deadline: Duration::from_secs(5), ..ClientLimits::default() });
    client.fetch_quotes(&extracts(&[1, 2, 4, 5, 6, 10, 11]), DAY).await.expect("valid");
    // Seven slow requests, never more than three at the origin at once (and three at once:
    // the limit is used).
    assert_eq!(sim.state.request_count(), 7);
    assert_eq!(sim.state.most_in_flight(), 3);
}

#[tokio::test]
async fn combined_byte_cap() {
    let limits = ClientLimits { max_combined_bytes: 1024 * 1024, ..quick_limits() };
    let (result, _) = fetch_with(Faults::default(), &[1, 2, 4, 6], limits).await;
    let e = result.expect_err("too large combined");
    assert_eq!((e.code, e.detail), (ErrorCode::ResponseTooLarge, detail::COMBINED_TOO_LARGE));
}

#[tokio::test]
async fn per_response_byte_cap() {
    let limits = ClientLimits { max_response_bytes: 64 * 1024, ..quick_limits() };
    let (result, _) = fetch_with(Faults::default(), &[1], limits).await;
    assert_eq!(result.expect_err("too large").detail, detail::TOO_LARGE);
}
