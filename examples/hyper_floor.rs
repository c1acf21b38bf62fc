//! The floor of the cached path, for `scripts/bench`: hyper on the same runtime and
//! connection settings as `wafuel serve`, answering every request with a constant 304
//! carrying the headers wafuel's 304 carries — no lookup, no log line, no metrics, no
//! header-read timeout. What wafuel's revalidation loses against this is wafuel's own work;
//! what this loses against nginx is the framework's.
//!
//! With a folder, it also answers each file in it (read into memory at start) with a 200 of
//! the same headers, the file's bytes as the body (`Content-Encoding` by the file's `.gz` or
//! `.br` ending): the floor of every cached case `scripts/bench` measures, same bytes.
//!
//! Usage: `hyper_floor 127.0.0.1:PORT [DIR]` (`/` answers the 304, `/NAME` the file NAME)

use std::convert::Infallible;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

const HEADERS: [(&str, &str); 12] = [
    ("etag", "\"bd3318cbaf58937992bb2e0c94f300a419a2c73ea679cae3194732a6f5b9a7f4\""),
    ("cache-control", "public, max-age=0, s-maxage=21599"),
    ("x-fuel-cache", "HIT"),
    ("x-fuel-snapshot-cache", "HIT"),
    ("x-fuel-source-date", "2026-11-23"),
    ("x-fuel-fetched-at", "2026-11-23T13:32:02+08:00"),
    ("vary", "Accept, Accept-Encoding"),
    ("x-content-type-options", "nosniff"),
    ("access-control-allow-origin", "*"),
    ("access-control-allow-methods", "GET, HEAD, OPTIONS"),
    (
        "access-control-expose-headers",
        "ETag, Retry-After, X-Fuel-Cache, X-Fuel-Snapshot-Cache, X-Fuel-Source-Date, X-Fuel-Fetched-At",
    ),
    ("x-request-id", "4eea2259-3170367"),
];

/// The files served, by request path.
type Files = std::collections::HashMap<String, Bytes>;

async fn answer(
    files: &Files,
    request: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = request.uri().path();
    let mut response = match files.get(path) {
        Some(body) => {
            let mut r = Response::new(Full::new(body.clone()));
            let h = r.headers_mut();
            h.insert("content-type", HeaderValue::from_static("application/vnd.api+json"));
            h.insert("content-length", HeaderValue::from(body.len()));
            match path.rsplit('.').next() {
                Some("gz") => drop(h.insert("content-encoding", HeaderValue::from_static("gzip"))),
                Some("br") => drop(h.insert("content-encoding", HeaderValue::from_static("br"))),
                _ => {}
            }
            r
        }
        None => {
            let mut r = Response::new(Full::new(Bytes::new()));
            *r.status_mut() = StatusCode::NOT_MODIFIED;
            r
        }
    };
    for (name, value) in HEADERS {
        response.headers_mut().insert(HeaderName::from_static(name), HeaderValue::from_static(value));
    }
    Ok(response)
}

/// Every file of `dir`, keyed `/NAME`.
fn read_files(dir: Option<String>) -> std::io::Result<Files> {
    let mut files = Files::new();
    let Some(dir) = dir else { return Ok(files) };
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            let name = entry.file_name().to_string_lossy().into_owned();
            files.insert(format!("/{name}"), Bytes::from(std::fs::read(entry.path())?));
        }
    }
    Ok(files)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:0".into());
    let files: &'static Files = Box::leak(Box::new(read_files(std::env::args().nth(2))?));
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("{}", listener.local_addr()?);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.keep_alive(true);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let connection = builder
            .serve_connection(TokioIo::new(stream), hyper::service::service_fn(move |r| answer(files, r)));
        tokio::spawn(connection);
    }
}
