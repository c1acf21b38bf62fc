//! The transport to FuelWatch: one shared deadline per selection, bounded retries, no
//! redirects, byte caps on decompressed bodies, strict UTF-8. Every failure becomes a
//! [`SourceError`] with a public code.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use jiff::civil::Date;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_LENGTH, RETRY_AFTER};
use tokio::time::Instant;

use super::error::SourceError;
use super::rss;
use super::validate::{Component, validate};
use wafuel_domain::codes::{BrandCode, ProductCode, RegionCode};
use wafuel_domain::station::Quote;
use wafuel_domain::time::Day;

/// Limits and timings of the transport (docs/api.md "Limits").
#[derive(Debug, Clone)]
pub struct ClientLimits {
    /// One deadline for a whole selection: queueing, headers, bodies and retry sleeps.
    pub deadline: Duration,
    pub max_attempts: u32,
    pub max_in_flight: usize,
    pub max_response_bytes: usize,
    pub max_combined_bytes: usize,
    /// A first `Retry-After` longer than this fails at once instead of waiting.
    pub max_retry_wait: Duration,
}

impl Default for ClientLimits {
    fn default() -> Self {
        Self {
            deadline: Duration::from_secs(8),
            max_attempts: 2,
            max_in_flight: 3,
            max_response_bytes: 4 * 1024 * 1024,
            max_combined_bytes: 16 * 1024 * 1024,
            max_retry_wait: Duration::from_secs(2),
        }
    }
}

/// One upstream request: one value per parameter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourceRequest {
    pub product: ProductCode,
    pub brand: Option<BrandCode>,
    pub region: Option<RegionCode>,
    /// Trimmed, whitespace-collapsed, upper-case.
    pub suburb: Option<String>,
    pub surrounding: Option<bool>,
    pub day: Day,
}

impl SourceRequest {
    /// An unfiltered catalog extract of one product.
    pub fn extract(product: ProductCode, day: Day) -> Self {
        Self { product, brand: None, region: None, suburb: None, surrounding: None, day }
    }

    /// Query parameters in the origin's spelling.
    pub fn query(&self) -> Vec<(&'static str, String)> {
        let mut q = vec![("Product", self.product.to_string())];
        if let Some(b) = self.brand {
            q.push(("Brand", b.to_string()));
        }
        if let Some(r) = self.region {
            q.push(("Region", r.to_string()));
        }
        if let Some(s) = &self.suburb {
            q.push(("Suburb", s.clone()));
        }
        if let Some(yes) = self.surrounding {
            q.push(("Surrounding", if yes { "yes" } else { "no" }.to_string()));
        }
        q.push(("Day", self.day.word().to_string()));
        q
    }
}

/// The HTTP client for the source feed.
#[derive(Debug, Clone)]
pub struct SourceClient {
    http: reqwest::Client,
    url: url::Url,
    limits: ClientLimits,
}

/// Install ring as rustls's process-wide crypto provider (we build without aws-lc).
pub fn install_crypto_provider() {
    // Err means a provider is installed already, which is all we need.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Every outbound client's start (FuelWatch, its archive, the map data provider): ring as
/// the crypto provider, our User-Agent, no redirects (a redirect elsewhere is a failure, not a
/// source). Each caller adds its own deadlines.
pub fn outbound_client() -> reqwest::ClientBuilder {
    install_crypto_provider();
    reqwest::Client::builder()
        .user_agent(concat!("wafuel/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
}

/// Why a response's body was not read whole.
#[derive(Debug)]
pub enum BodyError {
    /// More than the cap: reading stopped there.
    TooLarge,
    /// The connection failed (the text names no URL: a provider's may carry a key).
    Read(String),
}

/// A response's whole body, never holding more than `cap` bytes of it
/// (`http_body_util::Limited`).
pub async fn body_within(response: reqwest::Response, cap: usize) -> Result<bytes::Bytes, BodyError> {
    use http_body_util::BodyExt as _;
    let body = http::Response::<reqwest::Body>::from(response).into_body();
    match http_body_util::Limited::new(body, cap).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(BodyError::TooLarge),
        Err(e) => match e.downcast::<reqwest::Error>() {
            Ok(e) => Err(BodyError::Read((*e).without_url().to_string())),
            Err(e) => Err(BodyError::Read(e.to_string())),
        },
    }
}

impl SourceClient {
    pub fn new(url: url::Url, limits: ClientLimits) -> Result<Self, reqwest::Error> {
        let http = outbound_client()
            .connect_timeout(limits.deadline)
            .pool_idle_timeout(Duration::from_secs(30))
            .build()?;
        Ok(Self { http, url, limits })
    }

    pub fn limits(&self) -> &ClientLimits {
        &self.limits
    }

    /// Fetch, parse and validate every request of one selection for the Perth date
    /// `expected`: all quotes, or the first failure.
    pub async fn fetch_quotes(
        &self,
        requests: &[SourceRequest],
        expected: Date,
    ) -> Result<Vec<Quote>, SourceError> {
        let bodies = self.fetch_all(requests).await?;
        let mut components = Vec::with_capacity(bodies.len());
        for (request, body) in requests.iter().zip(&bodies) {
            components.push(Component { product: request.product, feed: rss::parse(body)? });
        }
        validate(&components, expected)
    }

    /// Fetch every request's body (in request order) under one deadline, at most
    /// `max_in_flight` at once; the first failure cancels the rest.
    pub async fn fetch_all(&self, requests: &[SourceRequest]) -> Result<Vec<String>, SourceError> {
        let deadline = Instant::now() + self.limits.deadline;
        let combined = Arc::new(AtomicUsize::new(0));
        // Futures are built up front (not in a stream closure) so the whole fetch stays `Send`
        // for callers that spawn it.
        let attempts: Vec<_> = requests
            .iter()
            .enumerate()
            .map(|(i, request)| {
                let combined = combined.clone();
                async move { self.fetch_one(request, &combined, deadline).await.map(|body| (i, body)) }
            })
            .collect();
        let work = futures::stream::iter(attempts)
            .buffer_unordered(self.limits.max_in_flight.max(1))
            .try_collect::<Vec<(usize, String)>>();
        let mut bodies = match tokio::time::timeout_at(deadline, work).await {
            Ok(result) => result?,
            Err(_) => {
                metrics::counter!("wafuel_source_requests_total", "outcome" => "timeout").increment(1);
                return Err(SourceError::timeout());
            }
        };
        bodies.sort_by_key(|(i, _)| *i);
        Ok(bodies.into_iter().map(|(_, body)| body).collect())
    }

    async fn fetch_one(
        &self,
        request: &SourceRequest,
        combined: &AtomicUsize,
        deadline: Instant,
    ) -> Result<String, SourceError> {
        let mut attempt = 1;
        loop {
            let outcome = self.attempt(request, combined).await;
            let failure = match outcome {
                Attempt::Done(result) => {
                    let label = if result.is_ok() { "ok" } else { "rejected" };
                    metrics::counter!("wafuel_source_requests_total", "outcome" => label).increment(1);
                    return result;
                }
                Attempt::Retryable(failure) => failure,
            };
            metrics::counter!("wafuel_source_requests_total", "outcome" => "retryable").increment(1);
            if attempt >= self.limits.max_attempts {
                return Err(failure.into_error());
            }
            let wait = match failure.retry_after {
                Some(secs) if Duration::from_secs(u64::from(secs)) > self.limits.max_retry_wait => {
                    return Err(failure.into_error());
                }
                Some(secs) => Duration::from_secs(u64::from(secs)),
                None => Duration::from_millis(rand::random_range(250..500)),
            };
            if Instant::now() + wait >= deadline {
                return Err(SourceError::timeout());
            }
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    async fn attempt(&self, request: &SourceRequest, combined: &AtomicUsize) -> Attempt {
        let mut url = self.url.clone();
        url.query_pairs_mut().clear().extend_pairs(request.query());
        let sent =
            self.http.get(url).header(ACCEPT, "application/rss+xml, application/xml, text/xml").send().await;
        let mut response = match sent {
            Ok(r) => r,
            Err(e) => return Attempt::Retryable(Failure::network(&e)),
        };
        let status = response.status();
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            let retry_after = response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u32>().ok());
            return Attempt::Retryable(Failure {
                retry_after,
                reason: format!("status {status}"),
                network: false,
            });
        }
        if status != StatusCode::OK {
            return Attempt::Done(Err(SourceError::denied(format!("status {status}"))));
        }
        let cap = self.limits.max_response_bytes;
        let declared = response
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if declared.is_some_and(|n| n > cap)
            && response.headers().get(reqwest::header::CONTENT_ENCODING).is_none()
        {
            return Attempt::Done(Err(SourceError::too_large(format!("declared {declared:?} bytes"))));
        }
        let mut body: Vec<u8> = Vec::with_capacity(declared.unwrap_or(64 * 1024).min(cap));
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > cap {
                        return Attempt::Done(Err(SourceError::too_large(format!("more than {cap} bytes"))));
                    }
                    let total = combined.fetch_add(chunk.len(), Ordering::SeqCst) + chunk.len();
                    if total > self.limits.max_combined_bytes {
                        return Attempt::Done(Err(SourceError::combined_too_large(format!(
                            "{total} bytes combined"
                        ))));
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => {
                    // Bytes of a failed attempt do not count against the combined cap.
                    combined.fetch_sub(body.len(), Ordering::SeqCst);
                    return Attempt::Retryable(Failure::network(&e));
                }
            }
        }
        Attempt::Done(decode_body(body))
    }
}

/// Strict UTF-8 (a leading BOM is dropped); an empty body is not a feed.
pub fn decode_body(mut body: Vec<u8>) -> Result<String, SourceError> {
    if body.starts_with(&[0xEF, 0xBB, 0xBF]) {
        body.drain(..3);
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(SourceError::empty_response());
    }
    String::from_utf8(body).map_err(|e| {
        SourceError::invalid_encoding(format!("invalid UTF-8 at byte {}", e.utf8_error().valid_up_to()))
    })
}

enum Attempt {
    Done(Result<String, SourceError>),
    Retryable(Failure),
}

/// A failure worth one more try.
struct Failure {
    retry_after: Option<u32>,
    reason: String,
    network: bool,
}

impl Failure {
    fn network(e: &reqwest::Error) -> Self {
        // The error text may carry the URL; it goes to logs only, never to a client.
        Self { retry_after: None, reason: format!("network error: {e}"), network: true }
    }

    fn into_error(self) -> SourceError {
        if self.network {
            SourceError::unreachable(self.reason)
        } else {
            SourceError::unavailable(self.retry_after, self.reason)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wafuel_domain::error_code::ErrorCode;

    /// A local origin answering `/` with `chunks` chunks of 64 KiB, streamed with no
    /// `Content-Length`, so only counting the bytes as they come can stop it.
    async fn streaming_origin(chunks: usize) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let app = axum::Router::new().route(
            "/",
            axum::routing::get(move || async move {
                let parts = futures::stream::iter(
                    (0..chunks).map(|_| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![b'x'; 64 * 1024]))),
                );
                axum::body::Body::from_stream(parts)
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}/")
    }

    #[tokio::test]
    async fn a_body_is_read_whole_within_its_cap_and_refused_past_it() {
        let url = streaming_origin(4).await;
        install_crypto_provider();
        let http = reqwest::Client::new();
        let get = || async { http.get(&url).send().await.expect("response") };
        let whole = body_within(get().await, 256 * 1024).await.expect("exactly the cap");
        assert_eq!(whole.len(), 256 * 1024);
        assert!(whole.iter().all(|b| *b == b'x'));
        assert!(matches!(body_within(get().await, 256 * 1024 - 1).await, Err(BodyError::TooLarge)));
        assert!(matches!(body_within(get().await, 100_000).await, Err(BodyError::TooLarge)));
    }

    #[test]
    fn bodies_are_strict_utf8() {
        assert_eq!(decode_body(b"\xEF\xBB\xBF<rss/>".to_vec()).expect("bom stripped"), "<rss/>");
        assert_eq!(decode_body(b"<a>\xC3\x28</a>".to_vec()).expect_err("bad").code, ErrorCode::InvalidFeed);
        assert_eq!(
            decode_body(Vec::new()).expect_err("empty").detail,
            wafuel_domain::error_code::detail::EMPTY_RESPONSE
        );
    }

    #[test]
    fn request_parameters() {
        let r = SourceRequest {
            product: ProductCode::parse(2).expect("a product"),
            brand: BrandCode::parse(5),
            region: None,
            suburb: Some("MOUNT LAWLEY".into()),
            surrounding: Some(false),
            day: Day::Tomorrow,
        };
        let q: Vec<String> = r.query().into_iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(q, ["Product=2", "Brand=5", "Suburb=MOUNT LAWLEY", "Surrounding=no", "Day=tomorrow"]);
    }
}
