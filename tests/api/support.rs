//! Shared helpers: a simulated origin on port 0 with a clock the test controls.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use jiff::civil::{DateTime, date};
use wafuel::sim::{Faults, SimHandle};
use wafuel::source::client::{ClientLimits, SourceClient};
use wafuel::time::{ManualClock, SharedClock};

pub const LOCAL: &str = "127.0.0.1:0";

pub fn local() -> SocketAddr {
    LOCAL.parse().expect("loopback address")
}

/// 29 September 2026, 10:00 in Perth: the day of the newest fixture.
pub fn fixture_morning() -> DateTime {
    date(2026, 9, 29).at(10, 0, 0, 0)
}

/// An origin whose clock stands at `at` (Perth time).
pub async fn origin_at(at: DateTime, faults: Faults) -> (SimHandle, Arc<ManualClock>) {
    let clock = ManualClock::at_perth(at);
    let shared: SharedClock = clock.clone();
    let sim = SimHandle::spawn(local(), shared, faults).await.expect("origin starts");
    (sim, clock)
}

pub async fn origin(faults: Faults) -> SimHandle {
    origin_at(fixture_morning(), faults).await.0
}

/// Fetch a feed path with query from the origin.
pub async fn get(sim: &SimHandle, query: &str) -> reqwest::Response {
    http().get(format!("{}?{query}", sim.feed_url())).send().await.expect("origin answers")
}

pub async fn get_text(sim: &SimHandle, query: &str) -> String {
    get(sim, query).await.text().await.expect("body")
}

/// Client limits short enough that timeout tests finish quickly.
pub fn quick_limits() -> ClientLimits {
    ClientLimits { deadline: Duration::from_millis(1500), ..ClientLimits::default() }
}

pub fn client_for(sim: &SimHandle, limits: ClientLimits) -> SourceClient {
    SourceClient::new(sim.feed_url().parse().expect("url"), limits).expect("client builds")
}

/// A plain HTTP client for tests (no redirects followed, so tests see them).
pub fn http() -> reqwest::Client {
    wafuel::source::client::install_crypto_provider();
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client")
}
