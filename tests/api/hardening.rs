//! Hostile clients against a real listener: bodies on GET, long URIs, huge headers, slow
//! headers, too many requests at once, path tricks.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use wafuel::server::ServerLimits;
use wafuel_sim::Faults;

use crate::support::*;

/// A second public port over a test app's state (its caches shared) with limits of the
/// test's own, served as `serve` serves its ports (`server::serve_until`), on a random local
/// port. A test with the default limits uses the application's own port (`app.server.addr`).
pub(crate) async fn listen(app: &TestApp, limits: ServerLimits) -> SocketAddr {
    let site = wafuel::app::public_site(app.server.state.clone(), &limits);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(wafuel::server::serve_until(vec![(listener, site)], limits, std::future::pending(), || {}));
    addr
}

/// Send raw bytes and read the whole answer (until the server closes or 3 s pass).
pub(crate) async fn raw(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("write");
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(3), stream.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).to_string()
}

pub(crate) fn status_of(response: &str) -> u16 {
    response.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

#[tokio::test]
async fn bodies_on_get_are_ignored_and_bounded() {
    let app = TestApp::new().await;
    let addr = app.server.addr;
    let small = raw(
        addr,
        b"GET /v1?product=10 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
    )
    .await;
    assert_eq!(status_of(&small), 200, "{small}");
    let requests = app.source_requests();
    let big = format!(
        "GET /v1?product=1 HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        1 << 20
    );
    let refused = raw(addr, big.as_bytes()).await;
    assert_eq!(status_of(&refused), 413, "{refused}");
    assert_eq!(app.source_requests(), requests, "a refused request never reaches the source");
}

#[tokio::test]
async fn long_uris_and_huge_headers_are_refused() {
    let app = TestApp::new().await;
    let addr = app.server.addr;
    // Over the API's query bound but within the URI bound: the API's own 400.
    let long =
        format!("GET /v1?suburb={} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "a".repeat(9_000));
    let answer = raw(addr, long.as_bytes()).await;
    assert_eq!(status_of(&answer), 400, "{}", &answer[..answer.len().min(300)]);
    assert!(answer.contains("invalid_query") && answer.contains("no-store"), "{answer}");
    // Past the URI bound (16 KiB): 414, never stored.
    let longer =
        format!("GET /v1?suburb={} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "a".repeat(17_000));
    let answer = raw(addr, longer.as_bytes()).await;
    assert_eq!(status_of(&answer), 414, "{answer}");
    assert!(answer.to_ascii_lowercase().contains("cache-control: no-store"), "{answer}");
    let huge =
        format!("GET /v1 HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\nConnection: close\r\n\r\n", "b".repeat(100_000));
    let answer = raw(addr, huge.as_bytes()).await;
    assert!(answer.is_empty() || status_of(&answer) == 431, "{}", &answer[..answer.len().min(300)]);
    assert_eq!(app.source_requests(), 0);
    // A route search's query may be 8,192 characters: 1,000 points zigzagging across Perth,
    // about 8,030, pass the URI bound and are answered.
    let points: Vec<(f64, f64)> =
        (0..1000).map(|i| if i % 2 == 0 { (-31.95, 115.86) } else { (-32.15, 116.06) }).collect();
    let target = format!("/v1/stations?route={}&detour=1", crate::routes::encode(&points));
    assert!((8_000..=8_205).contains(&target.len()), "{}", target.len());
    let request = format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let answer = raw(addr, request.as_bytes()).await;
    assert_eq!(status_of(&answer), 200, "{}", &answer[..answer.len().min(300)]);
}

#[tokio::test]
async fn slow_headers_are_cut_off() {
    let app = TestApp::new().await;
    let limits = ServerLimits { header_read_timeout: Duration::from_millis(500), ..ServerLimits::default() };
    let addr = listen(&app, limits).await;
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(b"GET /v1 HTTP/1.1\r\nHost: x\r\n").await.expect("write");
    let started = Instant::now();
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut out)).await;
    assert!(read.is_ok(), "the server closed the slow connection");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(app.source_requests(), 0);
}

/// On a kept-alive connection the header-read timeout runs from each answer: requests that
/// keep coming within it are never cut off at an earlier request's deadline, and a head left
/// unfinished is cut off one timeout after the last answer.
#[tokio::test]
async fn the_header_timeout_moves_with_each_request_on_a_kept_alive_connection() {
    let app = TestApp::new().await;
    // Wide margins: a request arrives 300 ms after the last answer, 700 ms before its deadline.
    let timeout = Duration::from_millis(1000);
    let addr = listen(&app, ServerLimits { header_read_timeout: timeout, ..ServerLimits::default() }).await;
    let etag = app.get("/v1?product=1").await.header("etag").to_string();
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let request = format!("GET /v1?product=1 HTTP/1.1\r\nHost: x\r\nIf-None-Match: {etag}\r\n\r\n");
    let mut answered = Instant::now();
    // Six requests 300 ms apart: 1.5 s in all, past the first head's deadline.
    for i in 0..6 {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        stream.write_all(request.as_bytes()).await.expect("write");
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let read = tokio::time::timeout(Duration::from_secs(3), stream.read(&mut buf)).await;
            let n = read.expect("an answer in time").expect("read");
            assert!(n > 0, "request {i}: the connection was closed");
            head.extend_from_slice(&buf[..n]);
        }
        answered = Instant::now();
        assert_eq!(status_of(&String::from_utf8_lossy(&head)), 304, "request {i}");
    }
    stream.write_all(b"GET /v1 HTTP/1.1\r\nHost: x\r\n").await.expect("write");
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "the server closed the stalled connection");
    let after = answered.elapsed();
    assert!(after >= timeout - Duration::from_millis(100), "not before its own deadline: {after:?}");
    assert!(after < timeout * 4, "at its deadline: {after:?}");
}

#[tokio::test]
async fn slow_requests_time_out_whole() {
    let app =
        TestApp::with(fixture_morning(), Faults { delay_ms: Some(1_000), ..Faults::default() }, None).await;
    let limits = ServerLimits { request_timeout: Duration::from_millis(300), ..ServerLimits::default() };
    let addr = listen(&app, limits).await;
    let answer = raw(addr, b"GET /v1?product=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
    assert_eq!(status_of(&answer), 408, "{answer}");
    assert!(answer.to_ascii_lowercase().contains("cache-control: no-store"), "{answer}");
}

#[tokio::test]
async fn excess_concurrency_is_shed_quickly() {
    let app =
        TestApp::with(fixture_morning(), Faults { delay_ms: Some(800), ..Faults::default() }, None).await;
    let limits = ServerLimits { max_concurrency: 2, ..ServerLimits::default() };
    let addr = listen(&app, limits).await;
    let client = http();
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                let started = Instant::now();
                let r = client
                    .get(format!("http://{addr}/v1?product={}", [1, 2, 4, 5, 6, 10, 11, 1][i]))
                    .send()
                    .await
                    .expect("answer");
                let status = r.status().as_u16();
                let retry = r.headers().get("retry-after").map(|v| v.to_str().unwrap_or("").to_string());
                (status, retry, started.elapsed())
            })
        })
        .collect();
    let mut shed = 0;
    for t in tasks {
        let (status, retry, took) = t.await.expect("task");
        if status == 503 {
            shed += 1;
            assert_eq!(retry.as_deref(), Some("1"));
            assert!(took < Duration::from_millis(750), "shed before the 800 ms origin answers: {took:?}");
        } else {
            assert_eq!(status, 200);
        }
    }
    assert!(shed >= 4, "{shed} of 8 shed with a limit of 2");
}

#[tokio::test]
async fn path_tricks_on_the_logo_route_are_404() {
    let app = TestApp::new().await;
    let addr = app.server.addr;
    for target in [
        "/static/image/brand/../../etc/passwd",
        "/static/image/brand/..%2F..%2Fetc%2Fpasswd",
        "/static/image/brand/%2e%2e%2fbp.svg",
        "/static/image/brand/BP.SVG",
        "/static/image/brand/bp.svg%00",
        "/static/image/brand/./bp.svg",
    ] {
        let answer =
            raw(addr, format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
                .await;
        assert_eq!(status_of(&answer), 404, "{target}: {answer}");
        assert!(!answer.contains("root:"), "{target}");
    }
}

/// Finished documents are answered before the request limits; everything else still meets
/// them. With no concurrency slot at all, a cached target of `/v1`, `/legacy` or a station
/// route is served (200, 304, HEAD) while a new one, or a cached one the fast path declines (an
/// `Accept` for another representation), is shed with 503.
#[tokio::test]
async fn front_cache_hits_are_answered_before_the_limits() {
    let app = TestApp::new().await;
    let addr = listen(&app, ServerLimits { max_concurrency: 0, ..ServerLimits::default() }).await;
    let client = http();
    // Identity, so bodies compare byte for byte (the client would otherwise ask for gzip).
    let send = |method: reqwest::Method, target: &str, headers: &[(&str, &str)]| {
        let mut request =
            client.request(method, format!("http://{addr}{target}")).header("accept-encoding", "identity");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send()
    };
    let near = "/v1/stations?near=-31.95,115.86&product=1&sort=price&limit=5";
    let first = app.get(near).await;
    let id = first.json()["data"][0]["id"].as_str().expect("a station").to_string();
    // Each target once through the router (which stores it), then from the front cache with
    // no slot: the same validators, cache headers and bytes.
    for target in [
        "/v1?product=1".to_string(),
        "/legacy?product=1".to_string(),
        near.to_string(),
        "/v1/stats?product=1".to_string(),
        format!("/v1/stations/{id}"),
        format!("/v1/stations/{id}/history?product=1"),
    ] {
        let routed = app.get(&target).await;
        assert_eq!(routed.status, 200, "{target}");
        let hit = send(reqwest::Method::GET, &target, &[]).await.expect("answer");
        assert_eq!(hit.status(), 200, "{target} from the front cache");
        for name in ["etag", "cache-control", "vary"] {
            assert_eq!(hit.headers()[name], routed.header(name), "{target} {name}");
        }
        assert_eq!(hit.bytes().await.expect("body"), routed.body, "{target}");
        let etag = routed.header("etag");
        let revalidated =
            send(reqwest::Method::GET, &target, &[("if-none-match", etag)]).await.expect("answer");
        assert_eq!(revalidated.status(), 304, "{target}");
        let head = send(reqwest::Method::HEAD, &target, &[]).await.expect("answer");
        assert_eq!(
            (head.status().as_u16(), &head.headers()["etag"]),
            (200, &routed.headers["etag"]),
            "{target}"
        );
    }
    for (target, accept) in [
        ("/v1?product=2", "application/vnd.api+json"),
        ("/v1?product=1", "text/html"),
        (near, "text/csv"),
        ("/v1/stats?product=1", "application/geo+json"),
    ] {
        let shed = send(reqwest::Method::GET, target, &[("accept", accept)]).await.expect("answer");
        assert_eq!(shed.status(), 503, "{target} with {accept} goes through the limits");
        assert_eq!(shed.headers()["retry-after"], "1");
    }
}

/// A front-cache hit is observed as a routed answer is: the client's request id echoed (or a
/// new one made), and the answer counted under its route, method and status.
#[tokio::test]
async fn front_cache_hits_carry_request_ids_and_are_counted() {
    // The recorder first: metric handles are bound to the recorder installed when made.
    let metrics = wafuel::telemetry::metrics_handle();
    let count = || {
        let label = r#"wafuel_http_requests_total{route="/v1/stats",method="HEAD",status="200"} "#;
        let text = metrics.render();
        text.lines().find_map(|l| l.strip_prefix(label)?.parse::<u64>().ok()).unwrap_or(0)
    };
    let app = TestApp::new().await;
    let addr = listen(&app, ServerLimits { max_concurrency: 0, ..ServerLimits::default() }).await;
    assert_eq!(app.get("/v1/stats?product=1").await.status, 200);
    let client = http();
    let before = count();
    let url = format!("http://{addr}/v1/stats?product=1");
    let given = client.head(&url).header("x-request-id", "client-9").send().await.expect("answer");
    assert_eq!(
        (given.status().as_u16(), &given.headers()["x-request-id"]),
        (200, &"client-9".parse().expect("v"))
    );
    let made = client.head(&url).send().await.expect("answer");
    let again = client.head(&url).send().await.expect("answer");
    let ids = [&made, &again].map(|r| r.headers().get("x-request-id").cloned().expect("an id is made"));
    assert_ne!(ids[0], ids[1], "each request its own id");
    assert!(count() >= before + 3, "three hits counted: {} then {}", before, count());
}

/// An event stream is a long answer, not a slow request: the whole-request timeout, the
/// header-read timeout and the concurrency limit (which counts requests until their answer
/// starts) never cut a healthy stream, and an event still arrives after all of them passed.
#[tokio::test]
async fn event_streams_outlive_the_request_limits() {
    let app = TestApp::new().await;
    // The request timeout leaves room for the fill of a statewide extract in a debug build
    // (about 300 ms on 2 cores); the streams are kept past it.
    let limits = ServerLimits {
        request_timeout: Duration::from_millis(1_000),
        header_read_timeout: Duration::from_millis(300),
        max_concurrency: 1,
        ..ServerLimits::default()
    };
    let addr = listen(&app, limits).await;
    // One at a time: with a limit of one, a stream still waiting for its answer to start
    // rightly sheds the next; once its head is sent it no longer counts.
    let mut streams = Vec::new();
    for _ in 0..3 {
        let request = b"GET /v1/events?product=1 HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n";
        streams.push(send_until(addr, request, "\r\n\r\n").await);
    }
    tokio::time::sleep(Duration::from_millis(2_200)).await;
    // Past every limit: a normal request is still served, then a publish reaches every stream.
    let answer = raw(addr, b"GET /v1?product=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
    assert_eq!(status_of(&answer), 200, "{answer}");
    for (s, seen) in &mut streams {
        read_until(s, seen, "event: published").await;
        assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    }
}

/// Connect, send `request`, and read until the answer holds `wanted`.
async fn send_until(addr: SocketAddr, request: &[u8], wanted: &str) -> (TcpStream, String) {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(request).await.expect("write");
    let mut seen = String::new();
    read_until(&mut s, &mut seen, wanted).await;
    (s, seen)
}

/// Read from a raw stream into `seen` until it holds `wanted` (8 s at most for each read).
async fn read_until(s: &mut TcpStream, seen: &mut String, wanted: &str) {
    let mut buf = [0u8; 4096];
    while !seen.contains(wanted) {
        let n = tokio::time::timeout(Duration::from_secs(8), s.read(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("{wanted:?} never arrived: {seen}"))
            .expect("read");
        assert!(n > 0, "the stream was closed: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
}

/// A connection that opens with `GET /v1/events` is answered outside hyper (to free hyper's
/// per-connection buffers): the same layers answer it, the stream is chunked and closes the
/// connection, a client that hangs up gives its stream back at once, and refusals are framed
/// by length. Openings it does not take whole (a body header, HTTP/1.0, a first packet cut
/// short) are still served, by hyper.
#[tokio::test]
async fn event_streams_on_their_own_connections() {
    let app = TestApp::new().await;
    let addr = app.server.addr;
    let request = b"GET /v1/events?product=1 HTTP/1.1\r\nHost: x\r\nX-Request-Id: sse-1\r\n\r\n";
    let (s, seen) = send_until(addr, request, "retry: 3000").await;
    let head = seen.split("\r\n\r\n").next().expect("a head").to_ascii_lowercase();
    for line in [
        "http/1.1 200 ok",
        "content-type: text/event-stream",
        "transfer-encoding: chunked",
        "connection: close",
        "x-request-id: sse-1",
        "access-control-allow-origin: *",
        "cache-control: no-store",
        "date: ",
    ] {
        assert!(head.contains(line), "{line:?} missing from {head}");
    }
    let body = seen.split_once("\r\n\r\n").expect("a body").1;
    let (size, chunk) = body.split_once("\r\n").expect("a chunk");
    let size = usize::from_str_radix(size, 16).expect("a chunk size");
    assert!(chunk.len() >= size && chunk[..size].starts_with("retry: 3000"), "{body:?}");
    assert_eq!(app.server.state.events.streams(), 1);
    drop(s);
    let gone = Instant::now();
    while app.server.state.events.streams() > 0 {
        assert!(gone.elapsed() < Duration::from_secs(5), "the closed stream was never given back");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // A refusal: its length, then the connection closes.
    let refused = raw(addr, b"GET /v1/events?product=zz HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert_eq!(status_of(&refused), 400, "{refused}");
    let (head, body) = refused.split_once("\r\n\r\n").expect("head and body");
    let length = head.lines().find_map(|l| l.strip_prefix("content-length: ")).expect("a length");
    assert_eq!(length.parse::<usize>().expect("a number"), body.len(), "{refused}");
    assert!(body.contains("invalid_query"), "{body}");

    // Not taken here, still served.
    for opening in [
        &b"GET /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"[..],
        b"GET /v1/events HTTP/1.0\r\nHost: x\r\n\r\n",
    ] {
        let (_, seen) = send_until(addr, opening, "retry: 3000").await;
        assert!(seen.starts_with("HTTP/1."), "{seen}");
        assert!(status_of(&seen) == 200 && !seen.contains("connection: close"), "{seen}");
    }
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(b"GET /v1/ev").await.expect("write");
    tokio::time::sleep(Duration::from_millis(100)).await;
    s.write_all(b"ents HTTP/1.1\r\nHost: x\r\n\r\n").await.expect("write");
    let mut seen = String::new();
    read_until(&mut s, &mut seen, "retry: 3000").await;
    assert_eq!(status_of(&seen), 200, "{seen}");
}
