//! Several `wafuel serve` processes on one PostgreSQL database and one simulated origin: the
//! source is fetched once per extract across replicas, and a replica that dies mid-fill is
//! taken over after its lease expires.

use std::sync::Arc;
use std::time::Duration;

use wafuel::app::SystemClock;
use wafuel_sim::{Faults, SimHandle};
use wafuel_store::SnapshotStore;

use crate::process::{Running, serve_with};
use crate::support::*;

const LEASE_SECS: &str = "3";

fn serve(store_url: &str, source: &str) -> Running {
    serve_with(store_url, source, &["--log-format", "json", "--fill-lease-secs", LEASE_SECS])
}

/// A store URL that keeps every table in `schema`.
fn in_schema(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}")
}

/// GET until the answer is not `cache_refresh_busy` (honouring its Retry-After).
async fn get_patiently(client: &reqwest::Client, url: &str) -> (u16, String, String, String) {
    for _ in 0..10 {
        let r = client.get(url).send().await.expect("replica answers");
        let status = r.status().as_u16();
        let etag = r.headers().get("etag").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        let fetched =
            r.headers().get("x-fuel-fetched-at").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        let body = r.text().await.expect("body");
        if status == 503 && body.contains("cache_refresh_busy") {
            tokio::time::sleep(Duration::from_secs(2)).await;
            continue;
        }
        return (status, etag, fetched, body);
    }
    panic!("still busy after ten tries");
}

#[cfg_attr(
    any(not(wafuel_slow), not(wafuel_postgres)),
    ignore = "slow tier and PostgreSQL: WAFUEL_SLOW_TESTS=1 and WAFUEL_TEST_POSTGRES, as scripts/test sets"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_replicas_fetch_each_extract_once() {
    let url = postgres_url();
    let schema = fresh_schema(&url).await;
    let store_url = in_schema(&url, &schema);
    let sim =
        SimHandle::spawn(local(), Arc::new(SystemClock), Faults { delay_ms: Some(400), ..Faults::default() })
            .await
            .expect("origin");
    let replicas: Vec<Running> = (0..3).map(|_| serve(&store_url, &sim.feed_url())).collect();
    let client = http();
    let tasks: Vec<_> = (0..300)
        .map(|i| {
            let url = format!("{}/v1", replicas[i % 3].public);
            let client = client.clone();
            tokio::spawn(async move { get_patiently(&client, &url).await })
        })
        .collect();
    let mut etags = std::collections::BTreeSet::new();
    let mut fetched = std::collections::BTreeSet::new();
    for t in tasks {
        let (status, etag, fetched_at, body) = t.await.expect("task");
        assert_eq!(status, 200, "{body}");
        etags.insert(etag);
        fetched.insert(fetched_at);
    }
    assert_eq!(sim.state.request_count(), 7, "one source request per extract across three replicas");
    assert_eq!(fetched.len(), 1, "every body carries the same fetchedAt: {fetched:?}");
    assert_eq!(etags.len(), 1, "every body is the same document: {etags:?}");
}

#[cfg_attr(
    any(not(wafuel_slow), not(wafuel_postgres)),
    ignore = "slow tier and PostgreSQL: WAFUEL_SLOW_TESTS=1 and WAFUEL_TEST_POSTGRES, as scripts/test sets"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_killed_mid_fill_is_taken_over() {
    let url = postgres_url();
    let schema = fresh_schema(&url).await;
    let store_url = in_schema(&url, &schema);
    let sim = SimHandle::spawn(
        local(),
        Arc::new(SystemClock),
        Faults { delay_ms: Some(6_000), ..Faults::default() },
    )
    .await
    .expect("origin");
    let mut first = serve(&store_url, &sim.feed_url());
    let second = serve(&store_url, &sim.feed_url());
    let client = http();
    // The first replica takes the lease and waits on the slow origin; then it dies.
    let doomed = {
        let client = client.clone();
        let url = format!("{}/v1?product=4", first.public);
        tokio::spawn(async move { client.get(url).send().await.map(|r| r.status().as_u16()) })
    };
    while sim.state.request_count() == 0 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    first.child.kill().expect("kill");
    let _ = first.child.wait();
    assert!(doomed.await.expect("task").is_err(), "the killed replica never answered");
    sim.state.set_faults(Faults::default());
    // The second replica waits for the dead lease to expire, then fills it itself.
    let (status, _, _, body) = get_patiently(&client, &format!("{}/v1?product=4", second.public)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(sim.state.request_count(), 2, "the dead fill and the takeover");
    // The stored snapshot is whole.
    let store = wafuel_store::PostgresStore::connect(&url, Some(&schema)).await.expect("store");
    let keys = sim.state.requests();
    assert!(keys.iter().all(|r| r.query.starts_with("Product=4")));
    let today = wafuel_domain::time::Day::Today.resolve(jiff::Timestamp::now());
    let snapshot = store.load(&format!("extract:4:{today}")).await.expect("load").expect("stored");
    assert!(!snapshot.quotes.is_empty());
}
