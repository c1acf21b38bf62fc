//! The floor of the cached path, for `scripts/bench`: hyper on the same runtime and
//! connection settings as `wafuel serve`, answering every request with a constant 304
//! carrying the headers wafuel's 304 carries — no lookup, no log line, no metrics, no
//! header-read timeout. What wafuel's revalidation loses against this is wafuel's own work;
//! what this loses against nginx is the framework's.
//!
//! Usage: `hyper_floor 127.0.0.1:PORT`

use std::convert::Infallible;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

const HEADERS: [(&str, &str); 12] = [
    ("etag", "\"bd3318cbaf58937992bb2e0c94f300a419a2c73ea679cae3194732a6f5b9a7f4\""),
    ("cache-control", "public, max-age=0, s-maxage=1234"),
    ("x-fuel-cache", "HIT"),
    ("x-fuel-snapshot-cache", "HIT"),
    ("x-fuel-source-date", "2026-11-23"),
    ("x-fuel-fetched-at", "2026-11-23T13:32:02+08:00"),
    ("vary", "Accept, Accept-Encoding"),
    ("x-content-type-options", "nosniff"),
    ("access-control-allow-origin", "*"),
    ("access-control-allow-methods", "GET, HEAD, OPTIONS"),
    ("access-control-expose-headers", "ETag, X-Fuel-Cache, X-Fuel-Snapshot-Cache, X-Request-Id"),
    ("x-request-id", "4eea2259-3170367"),
];

async fn answer(_: Request<hyper::body::Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::NOT_MODIFIED;
    for (name, value) in HEADERS {
        response.headers_mut().insert(HeaderName::from_static(name), HeaderValue::from_static(value));
    }
    Ok(response)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:0".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("{}", listener.local_addr()?);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.keep_alive(true);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let connection = builder.serve_connection(TokioIo::new(stream), hyper::service::service_fn(answer));
        tokio::spawn(connection);
    }
}
