//! `GET /v1/events` over real stores: two replicas share one SQLite file (polled) or one
//! PostgreSQL schema (woken by LISTEN/NOTIFY); publishes go through the real fill path
//! against the simulated origin, or straight into the store for a repricing the origin cannot
//! make. Streams are read frame by frame over real connections to the running application.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use http_body_util::BodyExt;
use serde_json::Value;

use wafuel_store::Store;

use crate::support::{Server, TestApp, app_config, p, postgres_url, sqlite_store};

/// Long enough for a reader that polls every second; the test fails, never hangs.
const ARRIVES: Duration = Duration::from_secs(8);

/// The day of the first sentinel catalog (see [`sentinel`]): long before any test's prices.
const SENTINEL_YEAR: &str = "2001-";

/// One event as read off the wire.
#[derive(Debug, Clone, PartialEq)]
struct Received {
    id: i64,
    kind: String,
    data: Value,
}

/// A stream being read.
struct EventStream {
    body: Body,
    buffer: String,
}

impl EventStream {
    /// The next event (comments, heartbeats and `retry:` skipped), or `None` when the stream
    /// ends or [`ARRIVES`] passes first.
    async fn next(&mut self) -> Option<Received> {
        let deadline = tokio::time::Instant::now() + ARRIVES;
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let (mut id, mut kind, mut data) = (None, None, None);
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        id = v.parse().ok();
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        kind = Some(v.to_string());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        assert!(data.is_none(), "one data line per event: {block:?}");
                        data = Some(serde_json::from_str(v).expect("data is JSON"));
                    } else {
                        assert!(
                            line.is_empty() || line.starts_with(':') || line.starts_with("retry: "),
                            "unexpected line {line:?}"
                        );
                    }
                }
                if let (Some(id), Some(kind), Some(data)) = (id, kind, data) {
                    return Some(Received { id, kind, data });
                }
            }
            let frame = tokio::time::timeout_at(deadline, self.body.frame()).await.ok()??;
            if let Ok(data) = frame.expect("frame").into_data() {
                self.buffer.push_str(std::str::from_utf8(&data).expect("utf8"));
            }
        }
    }

    /// Every event before the sentinel `until` (see [`sentinel`]), earlier sentinels left
    /// out: "nothing else came" is read as "the sentinel came next", never as a silence waited
    /// for. Fails if the sentinel has not come within [`ARRIVES`].
    async fn until(&mut self, until: i64) -> Vec<Received> {
        let mut all = Vec::new();
        loop {
            let e = self.next().await.unwrap_or_else(|| panic!("sentinel {until} never came: {all:?}"));
            if e.id == until {
                return all;
            }
            if !e.data["date"].as_str().is_some_and(|d| d.starts_with(SENTINEL_YEAR)) {
                all.push(e);
            }
        }
    }
}

/// Publish a sentinel straight into the store and return its event id: the catalog of
/// `product` for a day of 2001 (a new day each time, so it is always a `published` event) with
/// one station in the Pilbara priced at 999.9. Every stream of `product` hears it after all
/// that was published before it, and no alert of these tests matches it.
async fn sentinel(store: &Arc<dyn Store>, product: u8) -> i64 {
    use std::sync::atomic::{AtomicI32, Ordering};
    static DAYS: AtomicI32 = AtomicI32::new(0);
    let days = DAYS.fetch_add(1, Ordering::Relaxed);
    let date = jiff::civil::date(2001, 1, 1).checked_add(jiff::Span::new().days(days)).expect("date");
    assert!(date.to_string().starts_with(SENTINEL_YEAR));
    let station = wafuel_domain::testing::station("Sentinel", "Independent", "-20.3", "118.6");
    let key = format!("extract:{product}:{date}");
    let fetched_at = jiff::Timestamp::now();
    let expires_at = fetched_at.checked_add(jiff::SignedDuration::from_secs(60)).expect("time");
    let quotes = Arc::new(vec![wafuel_domain::testing::quote(&station, product, 999.9)]);
    let snapshot = wafuel_store::Snapshot { key: key.clone(), date, fetched_at, expires_at, quotes };
    assert!(store.claim(&key, "sentinel", fetched_at, expires_at, true).await.expect("claim"));
    assert!(store.publish(&snapshot, "sentinel", Some(p(product))).await.expect("publish"));
    store.last_event_id().await.expect("read")
}

/// Open a stream on a running application's public port, over a real connection.
async fn open(
    server: &Server,
    uri: &str,
    headers: &[(&str, &str)],
) -> (u16, axum::http::HeaderMap, EventStream) {
    let mut request = axum::http::Request::builder().uri(uri);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = server.request(request.body(Body::empty()).expect("request")).await;
    let (parts, body) = response.into_parts();
    (parts.status.as_u16(), parts.headers, EventStream { body: Body::new(body), buffer: String::new() })
}

async fn stream(server: &Server, uri: &str) -> EventStream {
    let (status, headers, stream) = open(server, uri, &[]).await;
    assert_eq!(status, 200, "{uri}");
    assert_eq!(headers["content-type"], "text/event-stream");
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(headers["access-control-allow-origin"], "*");
    stream
}

/// Two replicas over one store: the test app (replica A) and a second application on `second`.
async fn replica(app: &TestApp, second: Arc<dyn Store>) -> Server {
    Server::start(app_config(&app.sim, &app.clock, second, None), Default::default()).await
}

/// Until `done`, or fail after [`ARRIVES`].
pub async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + ARRIVES;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Publish the day catalog of `product` by asking replica A for it.
async fn publish(app: &TestApp, product: u8) {
    let r = app.get(&format!("/v1?product={product}")).await;
    assert_eq!(r.status, 200);
}

async fn a_publish_reaches_every_replica_once(app: TestApp, store: Arc<dyn Store>, b: Server) {
    let mut on_a = stream(&app.server, "/v1/events?product=1").await;
    let mut on_b = stream(&b, "/v1/events?product=1").await;
    let mut everything_b = stream(&b, "/v1/events").await;
    publish(&app, 1).await;
    let after_one = sentinel(&store, 1).await;
    let a_events = on_a.until(after_one).await;
    assert_eq!(a_events.len(), 1, "{a_events:?}");
    let first = &a_events[0];
    assert_eq!(first.kind, "published");
    assert_eq!(first.data["product"], 1);
    assert_eq!(first.data["publicationStatus"], "available");
    assert!(first.data["stations"].as_u64().is_some_and(|n| n > 0));
    let date = first.data["date"].as_str().expect("date");
    assert_eq!(date.len(), 10);
    assert_eq!(on_b.next().await.as_ref(), Some(first), "the same event on the other replica");
    // Replica B reads the stored catalog: no new publish, no event. Another product's
    // publish reaches only the stream that asked for every product.
    assert_eq!(b.get("/v1?product=1").await.status, 200);
    publish(&app, 4).await;
    let after_four = sentinel(&store, 1).await;
    let all = everything_b.until(after_four).await;
    let kinds: Vec<(i64, &str, &Value)> =
        all.iter().map(|e| (e.id, e.kind.as_str(), &e.data["product"])).collect();
    assert_eq!(
        kinds,
        vec![(first.id, "published", &Value::from(1)), (after_one + 1, "published", &Value::from(4))]
    );
    assert_eq!(on_b.until(after_four).await, vec![], "product 4 is not product 1");
    assert_eq!(on_a.until(after_four).await, vec![]);
}

#[tokio::test]
async fn sqlite_a_publish_reaches_every_replica_once() {
    let app = TestApp::new().await;
    let store = sqlite_store(&app.dir).await;
    let b = replica(&app, store.clone()).await;
    a_publish_reaches_every_replica_once(app, store, b).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn postgres_a_publish_reaches_every_replica_once() {
    let url = postgres_url();
    let (app, store, b) = postgres_replicas(&url).await;
    a_publish_reaches_every_replica_once(app, store, b).await;
}

/// Two replicas on one fresh schema: two connections (and LISTENers) to one database. The
/// test app is replica A; also returned, replica B's store and application.
async fn postgres_replicas(url: &str) -> (TestApp, Arc<dyn Store>, Server) {
    let schema = crate::support::fresh_schema(url).await;
    let store = || async {
        Arc::new(wafuel_store::PostgresStore::connect(url, Some(&schema)).await.expect("pg"))
            as Arc<dyn Store>
    };
    let dir = tempfile::tempdir().expect("dir");
    let app =
        TestApp::over(store().await, dir, crate::support::fixture_morning(), Default::default(), None).await;
    let shared = store().await;
    let b = replica(&app, shared.clone()).await;
    (app, shared, b)
}

/// Republish the stored catalog of `key` with `change` applied to its quotes, under a lease
/// as the warm job would.
async fn republish(
    store: &Arc<dyn Store>,
    key: &str,
    product: u8,
    change: impl FnOnce(&mut Vec<wafuel_domain::station::Quote>),
) {
    let old = store.load(key).await.expect("load").expect("a stored catalog");
    let mut quotes = (*old.quotes).clone();
    change(&mut quotes);
    let fetched_at = old.fetched_at.checked_add(jiff::SignedDuration::from_secs(60)).expect("time");
    let newer = wafuel_store::Snapshot { fetched_at, quotes: Arc::new(quotes), ..(*old).clone() };
    assert!(
        store
            .claim(
                key,
                "test",
                fetched_at,
                fetched_at.checked_add(jiff::SignedDuration::from_secs(60)).expect("t"),
                true
            )
            .await
            .expect("claim")
    );
    assert!(store.publish(&newer, "test", Some(p(product))).await.expect("publish"));
}

#[tokio::test]
async fn a_republish_with_changed_prices_is_updated_with_the_count() {
    let app = TestApp::new().await;
    let store = sqlite_store(&app.dir).await;
    let mut events = stream(&app.server, "/v1/events?product=1").await;
    publish(&app, 1).await;
    let published = events.next().await.expect("published");
    let key = format!("extract:1:{}", published.data["date"].as_str().expect("date"));
    // Two stations repriced and one gone: three changed.
    republish(&store, &key, 1, |quotes| {
        quotes[0].price += 1.0;
        quotes[1].price -= 0.5;
        quotes.pop();
    })
    .await;
    let updated = events.next().await.expect("updated");
    assert_eq!(updated.kind, "updated");
    assert_eq!(updated.id, published.id + 1);
    assert_eq!(updated.data["changed"], 3);
    assert_eq!(updated.data["stations"], published.data["stations"].as_u64().expect("n") - 1);
    assert_eq!(updated.data["date"], published.data["date"]);
    // The same prices again are no news.
    republish(&store, &key, 1, |_| {}).await;
    let after = sentinel(&store, 1).await;
    assert_eq!(events.until(after).await, vec![]);
}

#[tokio::test]
async fn resume_replays_what_was_missed_and_nothing_else() {
    let app = TestApp::new().await;
    let store = sqlite_store(&app.dir).await;
    let mut live = stream(&app.server, "/v1/events").await;
    for product in [1, 2, 4] {
        publish(&app, product).await;
    }
    let end = sentinel(&store, 1).await;
    let seen = live.until(end).await;
    let ids: Vec<i64> = seen.iter().map(|e| e.id).collect();
    assert_eq!(ids.len(), 3, "{seen:?}");
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "{ids:?}");
    // A client that saw the first event resumes with the other two, in order, then nothing.
    let (status, _, mut resumed) =
        open(&app.server, "/v1/events", &[("last-event-id", &ids[0].to_string())]).await;
    assert_eq!(status, 200);
    assert_eq!(resumed.until(end).await, seen[1..].to_vec());
    // `since` does the same (a first connection that knows where it was); the header wins.
    let mut since = stream(&app.server, &format!("/v1/events?since={}", ids[1])).await;
    assert_eq!(since.until(end).await, seen[2..].to_vec());
    let (_, _, mut both) =
        open(&app.server, &format!("/v1/events?since={}", ids[0]), &[("last-event-id", &ids[2].to_string())])
            .await;
    assert_eq!(both.until(end).await, vec![]);
    // Filtered by product on replay too.
    let end_of_two = sentinel(&store, 2).await;
    let mut two = stream(&app.server, &format!("/v1/events?product=2&since={}", ids[0] - 1)).await;
    assert_eq!(two.until(end_of_two).await, vec![seen[1].clone()]);
    // An id this store never gave: start from now with a reset naming the newest id.
    let mut ahead = stream(&app.server, "/v1/events?since=999").await;
    let reset = ahead.next().await.expect("reset");
    assert_eq!((reset.kind.as_str(), reset.id), ("reset", end_of_two));
    assert_eq!(reset.data["lastEventId"], end_of_two);
    let later = sentinel(&store, 1).await;
    assert_eq!(ahead.until(later).await, vec![]);
}

#[tokio::test]
async fn bad_requests_are_refused_before_anything_else() {
    let app = TestApp::new().await;
    for uri in [
        "/v1/events?product=99",
        "/v1/events?product=1,1x",
        "/v1/events?since=abc",
        "/v1/events?since=-1",
        "/v1/events?since=1&since=2",
        "/v1/events?day=today",
        // Alerts: a threshold needs one product and stations to watch; bounds as documented.
        "/v1/events?below=180",
        "/v1/events?product=1&below=180",
        "/v1/events?product=1,4&near=-31.95,115.86&below=180",
        "/v1/events?near=-31.95,115.86&below=180",
        "/v1/events?product=1&near=-31.95,115.86&radius=0&below=180",
        "/v1/events?product=1&radius=5&below=180",
        "/v1/events?product=1&near=-40,115.86&below=180",
        "/v1/events?product=1&station=abc&below=180",
        "/v1/events?product=1&near=-31.95,115.86&below=0",
        "/v1/events?product=1&near=-31.95,115.86&rise=-2",
        "/v1/events?product=1&near=-31.95,115.86&rise=2.55",
    ] {
        let (status, headers, _) = open(&app.server, uri, &[]).await;
        assert_eq!(status, 400, "{uri}");
        assert_eq!(headers["content-type"], "application/vnd.api+json", "{uri}");
    }
    let (status, _, _) = open(&app.server, "/v1/events", &[("last-event-id", "x1")]).await;
    assert_eq!(status, 400, "a malformed Last-Event-ID");
    for accept in ["application/json", "text/html", "text/event-stream;q=0"] {
        let (status, _, _) = open(&app.server, "/v1/events", &[("accept", accept)]).await;
        assert_eq!(status, 406, "{accept}");
    }
    for accept in ["text/event-stream", "text/*", "*/*"] {
        let (status, _, _) = open(&app.server, "/v1/events", &[("accept", accept)]).await;
        assert_eq!(status, 200, "{accept}");
    }
    let post = app.call("POST", "/v1/events", &[]).await;
    assert_eq!(post.status, 405);
    let preflight = app
        .call(
            "OPTIONS",
            "/v1/events",
            &[("origin", "https://example.org"), ("access-control-request-method", "GET")],
        )
        .await;
    assert_eq!(preflight.status, 204);
    assert_eq!(app.source_requests(), 0, "nothing was fetched for a stream");
}

#[tokio::test]
async fn streams_past_the_limit_are_refused_with_503() {
    let app = TestApp::new().await;
    let config = app_config(&app.sim, &app.clock, sqlite_store(&app.dir).await, None);
    let server = Server::start(wafuel::app::AppConfig { max_streams: 2, ..config }, Default::default()).await;
    let first = stream(&server, "/v1/events").await;
    let _second = stream(&server, "/v1/events").await;
    let (status, headers, _) = open(&server, "/v1/events", &[]).await;
    assert_eq!(status, 503);
    assert_eq!(headers["retry-after"], "1");
    assert_eq!(server.state.events.streams(), 2);
    // A closed stream gives its place back (as soon as the server sees the connection close).
    drop(first);
    until("the closed stream's place is given back", || server.state.events.streams() == 1).await;
    let _third = stream(&server, "/v1/events").await;
}

#[tokio::test]
async fn shutdown_ends_streams_with_a_comment() {
    let app = TestApp::new().await;
    let (_, _, s) = open(&app.server, "/v1/events", &[]).await;
    app.server.state.events.close();
    let rest = tokio::time::timeout(ARRIVES, s.body.collect()).await.expect("the stream ends").expect("body");
    let text = String::from_utf8(rest.to_bytes().to_vec()).expect("utf8");
    assert!(text.contains(": server shutting down; reconnect with Last-Event-ID"), "{text:?}");
    // A stream asked for while the server is stopping says the same and ends at once.
    let (status, _, late) = open(&app.server, "/v1/events", &[]).await;
    assert_eq!(status, 200);
    let rest = tokio::time::timeout(ARRIVES, late.body.collect()).await.expect("it ends").expect("body");
    let text = String::from_utf8(rest.to_bytes().to_vec()).expect("utf8");
    assert!(text.contains(": server shutting down; reconnect with Last-Event-ID"), "{text:?}");
}

async fn get_json(server: &Server, uri: &str) -> Value {
    let response = server.get(uri).await;
    assert_eq!(response.status, 200, "{uri}");
    response.json()
}

/// The event is also the replica's "newer catalog in the store" signal: prices it holds in
/// memory follow another replica's publish at once, not after the recheck interval (the test's
/// clock never moves, so without the event replica B would keep its held prices).
#[tokio::test]
async fn an_announced_publish_reaches_held_prices_at_once() {
    let app = TestApp::new().await;
    let store = sqlite_store(&app.dir).await;
    let b = replica(&app, store.clone()).await;
    let mut on_b = stream(&b, "/v1/events?product=1").await;
    publish(&app, 1).await;
    let published = on_b.next().await.expect("published");
    let first = get_json(&b, "/v1/stations?product=1&limit=1").await;
    let station = first["data"][0]["id"].as_str().expect("id").to_string();
    let before = first["data"][0]["attributes"]["price"]["products"]["1"].as_f64().expect("price");
    let key = format!("extract:1:{}", published.data["date"].as_str().expect("date"));
    republish(&store, &key, 1, |quotes| {
        let q = quotes.iter_mut().find(|q| q.station.id.as_str() == station).expect("the station's quote");
        q.price += 5.0;
    })
    .await;
    let updated = on_b.next().await.expect("updated");
    assert_eq!((updated.kind.as_str(), &updated.data["changed"]), ("updated", &Value::from(1)));
    let after = get_json(&b, &format!("/v1/stations/{station}")).await;
    let now = after["data"]["attributes"]["price"]["products"]["1"].as_f64().expect("price");
    assert!((now - (before + 5.0)).abs() < 1e-9, "replica B answers {now}, before {before}");
}

/// A store that cannot say what a resuming client missed: 503 with `Retry-After`, never a
/// stream that silently skips events.
#[tokio::test]
async fn a_resume_the_store_cannot_answer_is_503() {
    let app = TestApp::new().await;
    crate::support::drop_sqlite_table(&app.dir, "events").await;
    let (status, headers, _) = open(&app.server, "/v1/events?since=0", &[]).await;
    assert_eq!(status, 503);
    assert_eq!(headers["retry-after"], "5");
    let body = app.get("/v1/events?since=0").await.json();
    assert_eq!(body["errors"][0]["code"], "upstream_unavailable");
    assert_eq!(body["errors"][0]["detail"], "The event stream is temporarily unavailable.");
}

/// A client that comes from another replica with the newest id, before this replica's reader
/// has polled that event: the reader's late broadcast of it is not sent again.
#[tokio::test]
async fn a_resume_ahead_of_this_replicas_reader_gets_no_repeat() {
    let app = TestApp::new().await;
    let store = sqlite_store(&app.dir).await;
    let b = replica(&app, store.clone()).await;
    // B's reader runs from here; it polls the SQLite store once a second.
    let mut started = stream(&b, "/v1/events").await;
    publish(&app, 1).await;
    // At once, to B with the id just committed (as a client coming from A would).
    let newest = store.last_event_id().await.expect("read");
    assert!(newest > 0);
    let (status, _, mut resumed) = open(&b, "/v1/events", &[("last-event-id", &newest.to_string())]).await;
    assert_eq!(status, 200);
    // B's reader broadcasts the event a moment later: the stream that was open gets it, the
    // resumed one, which had it, does not get it again.
    assert_eq!(started.next().await.map(|e| e.id), Some(newest));
    let after = sentinel(&store, 1).await;
    assert_eq!(resumed.until(after).await, vec![], "nothing after {newest} and nothing again");
}

/// Events older than the window are pruned; a client asking for them starts again from the
/// newest id with a `reset`, never a stream with a silent gap.
#[tokio::test]
async fn a_resume_older_than_what_is_kept_is_reset() {
    let app = TestApp::new().await;
    let store = sqlite_store(&app.dir).await;
    let mut live = stream(&app.server, "/v1/events").await;
    for product in [1, 2] {
        publish(&app, product).await;
    }
    // Exactly these two (the prune below counts every event stored).
    let seen = [live.next().await.expect("one"), live.next().await.expect("two")];
    let later = wafuel_domain::time::Clock::now(&*app.clock)
        .checked_add(jiff::SignedDuration::from_hours(9 * 24))
        .expect("t");
    assert_eq!(store.prune_events(later).await.expect("prune"), 2);
    assert_eq!(store.events_pruned_through().await.expect("read"), seen[1].id);
    let mut old = stream(&app.server, &format!("/v1/events?since={}", seen[0].id)).await;
    let reset = old.next().await.expect("reset");
    assert_eq!((reset.kind.as_str(), reset.id), ("reset", seen[1].id));
    let after = sentinel(&store, 1).await;
    assert_eq!(old.until(after).await, vec![]);
    // The newest id itself is still a place to resume from: nothing missed, no reset.
    let mut current = stream(&app.server, &format!("/v1/events?since={}", seen[1].id)).await;
    assert_eq!(current.until(after).await, vec![]);
}

/// A client that does not read falls behind by more than the fan-out keeps (256 events): its
/// stream ends rather than grow without bound, and resuming with its last id gets everything.
#[tokio::test]
async fn a_client_that_does_not_read_is_dropped_and_resumes_without_loss() {
    let app = TestApp::new().await;
    let store = sqlite_store(&app.dir).await;
    // Read in process: over a socket, the kernel's buffers would read for the idle client.
    use tower::ServiceExt;
    let request = axum::http::Request::get("/v1/events?product=1").body(Body::empty()).expect("request");
    let response =
        wafuel::app::build_router(app.server.state.clone()).oneshot(request).await.expect("infallible");
    assert_eq!(response.status(), 200);
    let idle = response.into_body();
    publish(&app, 1).await;
    let first = store.last_event_id().await.expect("read");
    let key =
        format!("extract:1:{}", app.server.state.catalog.now().to_zoned(wafuel_domain::time::perth()).date());
    // Five stations, then one repriced at a time: 300 `updated` events, cheap to write.
    republish(&store, &key, 1, |quotes| quotes.truncate(5)).await;
    for _ in 1..300 {
        republish(&store, &key, 1, |quotes| quotes[0].price += 0.1).await;
    }
    let newest = store.last_event_id().await.expect("read");
    assert_eq!(newest, first + 300);
    // Once the reader has fanned all of them out, the idle stream is read: it ends.
    let deadline = tokio::time::Instant::now() + ARRIVES;
    while app.server.state.events.read_through() < newest {
        assert!(tokio::time::Instant::now() < deadline, "the reader never caught up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let body = tokio::time::timeout(ARRIVES, idle.collect()).await.expect("the stream ends").expect("body");
    let text = String::from_utf8(body.to_bytes().to_vec()).expect("utf8");
    assert!(!text.contains("event: updated"), "nothing after the lag: {text:?}");
    // The client resumes from the last id it had, and gets every event once, in order.
    let (_, _, mut resumed) =
        open(&app.server, "/v1/events?product=1", &[("last-event-id", &first.to_string())]).await;
    let after = sentinel(&store, 1).await;
    let ids: Vec<i64> = resumed.until(after).await.iter().map(|e| e.id).collect();
    assert_eq!(ids, ((first + 1)..=newest).collect::<Vec<_>>());
}

/// An idle stream hears a comment every 15 s, so proxies keep it open.
#[tokio::test]
async fn an_idle_stream_has_a_heartbeat() {
    let app = TestApp::new().await;
    let (_, _, mut s) = open(&app.server, "/v1/events", &[]).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !s.buffer.contains(": heartbeat") {
        let frame = tokio::time::timeout_at(deadline, s.body.frame()).await.expect("a heartbeat within 20 s");
        if let Ok(data) = frame.expect("open").expect("frame").into_data() {
            s.buffer.push_str(std::str::from_utf8(&data).expect("utf8"));
        }
    }
}

/// Stations of a `price` event (or expected of one): `(id, price tenths, previous tenths)`.
type Stations = Vec<(String, i64, Option<i64>)>;

/// What an alert should report for one catalog, computed here from the stored quotes: the
/// watched stations with a price at or below `below`, or at least `rise` above the day before,
/// cheapest first (ties by id), as `(id, price tenths, previous tenths)`.
fn expected_alert(
    day: &[wafuel_domain::station::Quote],
    before: Option<&[wafuel_domain::station::Quote]>,
    watched: &dyn Fn(&wafuel_domain::station::Quote) -> bool,
    below: Option<i64>,
    rise: Option<i64>,
) -> Stations {
    let tenths = |p: f64| (p * 10.0).round() as i64;
    let mut out: Stations = day
        .iter()
        .filter(|q| watched(q))
        .filter_map(|q| {
            let price = tenths(q.price);
            let previous =
                before.and_then(|b| b.iter().find(|p| p.station.id == q.station.id)).map(|p| tenths(p.price));
            let hit = below.is_some_and(|b| price <= b)
                || rise.is_some_and(|r| previous.is_some_and(|p| price - p >= r));
            hit.then(|| (q.station.id.to_string(), price, previous))
        })
        .collect();
    out.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    out
}

/// A `price` event's stations as `(id, price tenths, previous tenths)`.
fn reported(event: &Received) -> Stations {
    let tenths = |v: &Value| v.as_f64().map(|p| (p * 10.0).round() as i64);
    event.data["stations"]
        .as_array()
        .expect("stations")
        .iter()
        .map(|s| {
            (
                s["id"].as_str().expect("id").to_string(),
                tenths(&s["price"]).expect("price"),
                tenths(&s["previous"]),
            )
        })
        .collect()
}

/// Alerts over two replicas of one store: yesterday's and today's catalogs published, then
/// today's repriced (one watched station up 60 c/L). Each stream's `price` events equal what
/// the stored catalogs say, just before the event they follow and with its id, the same on
/// both replicas, replayed identically on reconnect, and absent where nothing matches.
async fn alerts_are_exact_on_both_replicas(app: TestApp, store: Arc<dyn Store>, b: Server) {
    let (today, yesterday) = {
        let r = app.get("/v1?product=1").await.json();
        let d: jiff::civil::Date = r["meta"]["sourceDate"].as_str().expect("date").parse().expect("date");
        (d, d.yesterday().expect("date"))
    };
    let today_key = format!("extract:1:{today}");
    let yesterday_key = format!("extract:1:{yesterday}");
    let todays = store.load(&today_key).await.expect("load").expect("today's catalog");
    // Watched: every unleaded station within 6 km of Perth CBD; the threshold is their median.
    let centre: (f64, f64) = (-31.9523, 115.8613);
    let near = |q: &wafuel_domain::station::Quote| {
        let (p1, p2) = (centre.0.to_radians(), q.station.latitude.to_radians());
        let dl = (q.station.longitude - centre.1).to_radians();
        6_371_000.0 * (p1.sin() * p2.sin() + p1.cos() * p2.cos() * dl.cos()).clamp(-1.0, 1.0).acos()
            <= 6_000.0
    };
    let mut local: Vec<i64> =
        todays.quotes.iter().filter(|q| near(q)).map(|q| (q.price * 10.0).round() as i64).collect();
    local.sort_unstable();
    assert!(local.len() > 10, "a busy area: {}", local.len());
    let below = local[local.len() / 2];
    let below_text = format!("{}.{}", below / 10, below % 10);
    let near_alert =
        format!("/v1/events?product=1&near={},{}&radius=6&below={below_text}", centre.0, centre.1);
    // The repriced station, and a rise alert on it and two neighbours.
    let raised = todays.quotes.iter().find(|q| near(q)).expect("a watched station").station.id.to_string();
    let ids: Vec<String> =
        todays.quotes.iter().filter(|q| near(q)).take(3).map(|q| q.station.id.to_string()).collect();
    let rise_alert = format!("/v1/events?product=1&station={}&rise=25", ids.join(","));
    let silent_alert = format!("/v1/events?product=1&station={}&below=1", ids[0]);

    // Both replicas' readers past today's publish first (they poll the file), so no stream
    // hears it late.
    let published = store.last_event_id().await.expect("read");
    until("both readers read today's publish", || {
        app.server.state.events.read_through() >= published && b.state.events.read_through() >= published
    })
    .await;
    let mut a_near = stream(&app.server, &near_alert).await;
    let mut b_near = stream(&b, &near_alert).await;
    let mut a_rise = stream(&app.server, &rise_alert).await;
    let mut b_silent = stream(&b, &silent_alert).await;
    // Today's catalog was published before the streams opened; now yesterday's is, then
    // today's is repriced.
    publish_day(&app, "yesterday").await;
    republish(&store, &today_key, 1, |quotes| {
        let q = quotes.iter_mut().find(|q| q.station.id.as_str() == raised).expect("the station");
        q.price += 60.0;
    })
    .await;
    let end = sentinel(&store, 1).await;
    let a_events = a_near.until(end).await;
    let yesterdays = store.load(&yesterday_key).await.expect("load").expect("yesterday's catalog");
    let repriced = store.load(&today_key).await.expect("load").expect("today's repriced catalog");
    // Events: [today published (before the streams opened, so not seen)], yesterday
    // published, today updated; each with its price event first when the alert matches.
    let mut expect: Vec<(String, Stations)> = Vec::new();
    for (kind, day, before) in [("published", &yesterdays, None), ("updated", &repriced, Some(&yesterdays))] {
        let hits = expected_alert(&day.quotes, before.map(|b| b.quotes.as_slice()), &near, Some(below), None);
        if !hits.is_empty() {
            expect.push(("price".into(), hits));
        }
        expect.push((kind.into(), Vec::new()));
    }
    let got: Vec<(String, Stations)> = a_events
        .iter()
        .map(|e| (e.kind.clone(), if e.kind == "price" { reported(e) } else { Vec::new() }))
        .collect();
    assert_eq!(got, expect, "replica A's near alert");
    assert!(a_events.iter().any(|e| e.kind == "price"), "the median threshold matched: {a_events:?}");
    // A price event has the id and date of the event it comes before.
    for pair in a_events.windows(2) {
        if pair[0].kind == "price" {
            assert_eq!(
                (pair[0].id, &pair[0].data["date"], &pair[0].data["product"]),
                (pair[1].id, &pair[1].data["date"], &pair[1].data["product"])
            );
            assert!(pair[0].data["stations"][0]["name"].is_string());
        }
    }
    assert_eq!(b_near.until(end).await, a_events, "replica B says exactly the same");
    // The rise alert: only the raised station, on the update, with yesterday's price.
    let rises = a_rise.until(end).await;
    let price_events: Vec<&Received> = rises.iter().filter(|e| e.kind == "price").collect();
    let expected_rise = expected_alert(
        &repriced.quotes,
        Some(&yesterdays.quotes),
        &|q| ids.iter().any(|id| id == q.station.id.as_str()),
        None,
        Some(250),
    );
    assert!(expected_rise.iter().any(|(id, _, _)| *id == raised), "{expected_rise:?}");
    // Yesterday's publish had no day before in the store, so no rise could be said of it:
    // the one price event is the update's.
    assert_eq!(price_events.len(), 1, "{rises:?}");
    assert_eq!(reported(price_events[0]), expected_rise);
    // Nothing matches a price of 1 c/L: the events alone.
    let silent = b_silent.until(end).await;
    assert_eq!(silent.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(), ["published", "updated"]);
    // Reconnecting to either replica with the id before the first event replays the same.
    let first = a_events[0].id;
    for server in [&app.server, &b] {
        let (status, _, mut again) =
            open(server, &near_alert, &[("last-event-id", &(first - 1).to_string())]).await;
        assert_eq!(status, 200);
        assert_eq!(again.until(end).await, a_events, "replayed identically");
    }
    // Resuming at a price event's id: that event and its price event were both had.
    let (_, _, mut after) = open(&b, &near_alert, &[("last-event-id", &first.to_string())]).await;
    let rest = after.until(end).await;
    assert!(rest.iter().all(|e| e.id > first), "{rest:?}");
    // Two streams with the same alert are one alert to evaluate.
    assert_eq!(app.server.state.events.alerts(), 2, "near and rise");
    let _twin = stream(&app.server, &near_alert).await;
    assert_eq!(app.server.state.events.alerts(), 2, "the same near alert again");
}

/// Ask replica A for a day's product-1 catalog (published into the store if new).
async fn publish_day(app: &TestApp, day: &str) {
    let r = app.get(&format!("/v1?product=1&day={day}")).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn sqlite_alerts_are_exact_on_both_replicas() {
    let app = TestApp::new().await;
    let store = sqlite_store(&app.dir).await;
    let b = replica(&app, store.clone()).await;
    alerts_are_exact_on_both_replicas(app, store, b).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn postgres_alerts_are_exact_on_both_replicas() {
    let url = postgres_url();
    let (app, shared, b) = postgres_replicas(&url).await;
    alerts_are_exact_on_both_replicas(app, shared, b).await;
}

#[tokio::test]
async fn tomorrows_first_wholesale_price_is_pushed_once_per_centre_and_product() {
    // 14:45 in Perth: the live job reads tomorrow's terminal gate prices.
    let app = TestApp::at(jiff::civil::date(2026, 9, 29).at(14, 45, 0, 0)).await;
    let store = sqlite_store(&app.dir).await;
    let mut all = stream(&app.server, "/v1/events").await;
    let mut diesel = stream(&app.server, "/v1/events?product=4").await;
    let client = wafuel_source::wholesale::WholesaleClient::new(
        app.sim.wholesale_url().parse().expect("url"),
        std::time::Duration::from_secs(5),
    )
    .expect("client");
    let clock: wafuel_domain::time::SharedClock = app.clock.clone();
    wafuel_service::jobs::wholesale::wholesale_pass(&store, &client, &clock).await.expect("stored");
    // A second read of the same prices is no news.
    wafuel_service::jobs::wholesale::wholesale_pass(&store, &client, &clock).await.expect("stored");
    let end = sentinel(&store, 4).await;
    let seen = all.until(end).await;
    assert!(seen.iter().all(|e| e.kind == "wholesale"), "{seen:?}");
    // Every centre prices unleaded and diesel, four of them premium too: 16 pairs.
    assert_eq!(seen.len(), 16, "{seen:?}");
    let perth =
        seen.iter().find(|e| e.data["centre"] == "perth" && e.data["product"] == 1).expect("Perth ULP");
    assert_eq!(perth.data["date"], "2026-09-30");
    let mean = wafuel_sim::wholesale::TERMINALS
        .iter()
        .take(6)
        .map(|t| {
            wafuel_sim::wholesale::price(
                t.1,
                wafuel_domain::wholesale::Centre::Perth,
                "ULP",
                jiff::civil::date(2026, 9, 30),
            )
        })
        .sum::<i64>() as f64
        / 6.0;
    assert_eq!(perth.data["mean"].as_f64(), Some((mean).round() / 100.0));
    let only = diesel.until(end).await;
    assert_eq!(only.len(), 6, "one diesel event per centre: {only:?}");
    assert!(only.iter().all(|e| e.data["product"] == 4));
}
