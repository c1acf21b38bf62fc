//! Event-stream connections, served without hyper's per-connection buffers.
//!
//! hyper keeps a read buffer and a response-head buffer (8 KiB each) for the whole life of an
//! HTTP/1 connection and offers no setting to release them. For an answer written in
//! milliseconds that costs nothing; for ten thousand event streams idling for hours it is most
//! of their memory (docs/benchmarks.md). So a connection that opens with `GET /v1/events` is
//! read here: its head is parsed with `httparse` and answered by the same service as every
//! other request (every layer, log line and metric), and the answer is written with chunked
//! framing from buffers that live only while a frame is written. The connection closes when
//! the answer ends, as an event stream's connection does anyway.
//!
//! Anything not taken whole — another path, a request with a body, HTTP/1.0, a head that does
//! not parse or outgrows the limit — goes to hyper with the bytes already read put back in
//! front ([`Rewind`]), so hyper's rules and error answers apply to it unchanged.

use std::io::Write as _;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Method, Request, Response, Version, header};
use bytes::{Buf, Bytes, BytesMut};
use http_body_util::BodyExt;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout, timeout_at};

/// How long one write may wait on a client that does not read before its stream is dropped
/// (it resumes with `Last-Event-ID` when it reads again).
const WRITE_STALL: Duration = Duration::from_secs(30);

/// Most header lines read from a request taken here; more go to hyper (its own limit applies).
const MAX_HEADERS: usize = 64;

/// How a new connection is to be served.
pub enum Opening {
    /// Its first request is for the event stream: answer it here, then close.
    Here(TcpStream, Box<Request<Body>>),
    /// Anything else: hyper serves it, reading first what was read here.
    Hyper(Rewind),
    /// The client went away, or sent no complete head within the header-read time.
    Closed,
}

/// Read the start of a connection and decide who serves it. `path` is the one path taken here;
/// its first request must be a bodiless HTTP/1.1 `GET` for it.
pub async fn open(stream: TcpStream, path: &str, header_read: Duration, max_head: usize) -> Opening {
    let deadline = Instant::now() + header_read;
    // A peek consumes nothing: a connection whose first bytes say another request (nearly
    // all of them) goes to hyper untouched.
    let mut first = [0u8; 32];
    let wanted = (b"GET ".len() + path.len() + 1).min(first.len());
    let seen = match timeout_at(deadline, stream.peek(&mut first[..wanted])).await {
        Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return Opening::Closed,
        Ok(Ok(n)) => &first[..n],
    };
    if !is_start_of(seen, path) {
        return Opening::Hyper(Rewind::new(stream, Bytes::new()));
    }
    let mut stream = stream;
    let mut buf = BytesMut::with_capacity(1024);
    loop {
        match timeout_at(deadline, stream.read_buf(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return Opening::Closed,
            Ok(Ok(_)) => {}
        }
        match parse(&buf, path) {
            Parsed::Complete(request) => return Opening::Here(stream, request),
            Parsed::Partial if buf.len() < max_head => {
                if buf.len() == buf.capacity() {
                    buf.reserve(1024);
                }
            }
            Parsed::Partial | Parsed::NotTaken => return Opening::Hyper(Rewind::new(stream, buf.freeze())),
        }
    }
}

/// Whether `seen` (the first bytes of a connection) is, or begins, `GET <path>` followed by
/// the end of the path. A client sending its first bytes slowly may fall short; hyper serves
/// those.
fn is_start_of(seen: &[u8], path: &str) -> bool {
    let Some(rest) = seen.strip_prefix(b"GET ").and_then(|r| r.strip_prefix(path.as_bytes())) else {
        return false;
    };
    matches!(rest.first(), Some(b' ' | b'?'))
}

enum Parsed {
    /// Boxed: a request is large beside the other outcomes.
    Complete(Box<Request<Body>>),
    Partial,
    NotTaken,
}

fn parse(buf: &[u8], path: &str) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut head = httparse::Request::new(&mut headers);
    match head.parse(buf) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(_) => return Parsed::NotTaken,
    }
    let (Some("GET"), Some(target), Some(1)) = (head.method, head.path, head.version) else {
        return Parsed::NotTaken;
    };
    if !target.strip_prefix(path).is_some_and(|rest| rest.is_empty() || rest.starts_with('?')) {
        return Parsed::NotTaken;
    }
    let mut request = Request::new(Body::empty());
    *request.method_mut() = Method::GET;
    *request.version_mut() = Version::HTTP_11;
    let Ok(uri) = target.parse() else {
        return Parsed::NotTaken;
    };
    *request.uri_mut() = uri;
    for h in head.headers.iter() {
        let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(h.name.as_bytes()), HeaderValue::from_bytes(h.value))
        else {
            return Parsed::NotTaken;
        };
        // A request with a body is hyper's to frame (and to refuse).
        if name == header::CONTENT_LENGTH || name == header::TRANSFER_ENCODING {
            return Parsed::NotTaken;
        }
        request.headers_mut().append(name, value);
    }
    Parsed::Complete(Box::new(request))
}

/// Write `response` to the client as HTTP/1.1 and close the connection when it ends, when the
/// client closes its side, or when a write stalls for [`WRITE_STALL`].
pub async fn answer(stream: TcpStream, response: Response<Body>) {
    answer_within(stream, response, WRITE_STALL).await;
}

async fn answer_within(mut stream: TcpStream, response: Response<Body>, stall: Duration) {
    let (parts, mut body) = response.into_parts();
    let length = axum::body::HttpBody::size_hint(&body).exact();
    let head = response_head(&parts, length);
    if !write(&mut stream, &head, stall).await {
        return;
    }
    drop(head);
    loop {
        let frame = tokio::select! {
            frame = body.frame() => frame,
            () = client_gone(&stream) => return,
        };
        let data = match frame {
            None => break,
            // The answer failed mid-way: end without the last chunk, so the client sees a
            // truncated answer rather than a complete one.
            Some(Err(_)) => return,
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) if !data.is_empty() => data,
                _ => continue,
            },
        };
        let written = if length.is_some() {
            write(&mut stream, &data, stall).await
        } else {
            let mut chunk = Vec::with_capacity(data.len() + 12);
            let _ = write!(chunk, "{:x}\r\n", data.len());
            chunk.extend_from_slice(&data);
            chunk.extend_from_slice(b"\r\n");
            write(&mut stream, &chunk, stall).await
        };
        if !written {
            return;
        }
    }
    if length.is_none() && !write(&mut stream, b"0\r\n\r\n", stall).await {
        return;
    }
    let _ = stream.shutdown().await;
}

/// The status line and headers, framed by `length` (`None`: chunked), closing the connection.
fn response_head(parts: &axum::http::response::Parts, length: Option<u64>) -> Vec<u8> {
    let mut head = Vec::with_capacity(512);
    let reason = parts.status.canonical_reason().unwrap_or("");
    let _ = write!(head, "HTTP/1.1 {} {reason}\r\n", parts.status.as_str());
    for (name, value) in &parts.headers {
        if [header::CONNECTION, header::CONTENT_LENGTH, header::TRANSFER_ENCODING].contains(name) {
            continue;
        }
        head.extend_from_slice(name.as_str().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    if !parts.headers.contains_key(header::DATE) {
        let _ = write!(head, "date: {}\r\n", httpdate::fmt_http_date(std::time::SystemTime::now()));
    }
    match length {
        Some(n) => {
            let _ = write!(head, "content-length: {n}\r\n");
        }
        None => head.extend_from_slice(b"transfer-encoding: chunked\r\n"),
    }
    head.extend_from_slice(b"connection: close\r\n\r\n");
    head
}

async fn write(stream: &mut TcpStream, bytes: &[u8], stall: Duration) -> bool {
    matches!(timeout(stall, stream.write_all(bytes)).await, Ok(Ok(())))
}

/// Resolves when the client closes its side (or the socket fails). Anything it sends after
/// its request is read and ignored: the answer here is the connection's last.
async fn client_gone(stream: &TcpStream) {
    let mut scratch = [0u8; 64];
    loop {
        if stream.readable().await.is_err() {
            return;
        }
        match stream.try_read(&mut scratch) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return,
        }
    }
}

/// A connection with bytes already read from it put back in front, for hyper; its writes
/// give hyper's own parser answers `Cache-Control: no-store` (`super::parse_errors`).
pub struct Rewind {
    prefix: Bytes,
    inner: TcpStream,
    /// A rewritten head being written: its bytes, how many are out, and the length of the
    /// write hyper asked for (what it is told was written once all of them are out).
    rewritten: Option<(Bytes, usize)>,
}

impl Rewind {
    fn new(inner: TcpStream, prefix: Bytes) -> Self {
        Self { prefix, inner, rewritten: None }
    }

    /// Write the rest of a rewritten head; ready with the length hyper asked to write.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<usize>> {
        while let Some((bytes, asked)) = &mut self.rewritten {
            if bytes.is_empty() {
                let asked = *asked;
                self.rewritten = None;
                return Poll::Ready(Ok(asked));
            }
            match Pin::new(&mut self.inner).poll_write(cx, bytes) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => bytes.advance(n),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(0))
    }

    /// Start writing `head` rewritten, when it is one of hyper's parser answers.
    fn rewrite(&mut self, head: &[u8]) -> bool {
        match super::parse_errors::rewrite(head) {
            Some(out) => {
                self.rewritten = Some((Bytes::from(out), head.len()));
                true
            }
            None => false,
        }
    }
}

impl AsyncRead for Rewind {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.prefix.is_empty() {
            return Pin::new(&mut self.inner).poll_read(cx, buf);
        }
        let n = self.prefix.len().min(buf.remaining());
        buf.put_slice(&self.prefix[..n]);
        self.prefix.advance(n);
        if self.prefix.is_empty() {
            // Release the read buffer the prefix came from.
            self.prefix = Bytes::new();
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Rewind {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.rewritten.is_some() || (buf.starts_with(b"HTTP/1.1 4") && self.rewrite(buf)) {
            return self.drain(cx);
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        if self.rewritten.is_some() {
            return self.drain(cx);
        }
        // hyper writes a head as the first buffer of a write.
        if let Some(first) = bufs.iter().find(|b| !b.is_empty())
            && first.starts_with(b"HTTP/1.1 4")
            && self.rewrite(first)
        {
            return self.drain(cx);
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if self.rewritten.is_some() {
            std::task::ready!(self.drain(cx))?;
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if self.rewritten.is_some() {
            std::task::ready!(self.drain(cx))?;
        }
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: &str = "/v1/events";

    #[test]
    fn only_the_path_itself_is_taken() {
        assert!(is_start_of(b"GET /v1/events HTTP/1.1\r\n", PATH));
        assert!(is_start_of(b"GET /v1/events?product=1 ", PATH));
        for other in [
            &b"GET /v1/eventsX "[..],
            b"GET /v1?x ",
            b"HEAD /v1/events ",
            b"OPTIONS /v1/events ",
            b"GET /v1/ev",
        ] {
            assert!(!is_start_of(other, PATH), "{}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn a_plain_get_is_parsed_with_its_headers() {
        let head = b"GET /v1/events?product=1 HTTP/1.1\r\nHost: x\r\nLast-Event-ID: 7\r\nAccept: a\r\nAccept: b\r\n\r\n";
        let Parsed::Complete(request) = parse(head, PATH) else { panic!("not taken") };
        assert_eq!(request.uri(), "/v1/events?product=1");
        assert_eq!(request.headers()["last-event-id"], "7");
        assert_eq!(request.headers().get_all("accept").iter().count(), 2);
        assert!(matches!(parse(&head[..20], PATH), Parsed::Partial));
    }

    #[test]
    fn bodies_old_versions_and_other_paths_go_to_hyper() {
        for head in [
            &b"GET /v1/events HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"[..],
            b"GET /v1/events HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"GET /v1/events HTTP/1.0\r\n\r\n",
            b"GET /v1/eventsX HTTP/1.1\r\n\r\n",
            b"GET /v1/events HTTP/1.1\r\nBad Header: x\r\n\r\n",
        ] {
            assert!(matches!(parse(head, PATH), Parsed::NotTaken), "{}", String::from_utf8_lossy(head));
        }
    }

    /// A connected pair over loopback: (the server's side, the client's side).
    async fn pair() -> (TcpStream, TcpStream) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let client = TcpStream::connect(listener.local_addr().expect("addr")).await.expect("connect");
        (listener.accept().await.expect("accept").0, client)
    }

    /// An answer that never ends, sending `frame` as fast as it is taken.
    fn endless(frame: Bytes) -> Response<Body> {
        use futures::StreamExt as _;
        let frames = futures::stream::repeat(frame).map(Ok::<_, std::convert::Infallible>);
        Response::new(Body::from_stream(frames))
    }

    #[tokio::test]
    async fn a_client_that_hangs_up_ends_the_answer() {
        let (server, client) = pair().await;
        let quiet = Response::new(Body::from_stream(futures::stream::pending::<
            Result<Bytes, std::convert::Infallible>,
        >()));
        let answering = tokio::spawn(answer_within(server, quiet, Duration::from_secs(60)));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!answering.is_finished(), "a quiet stream stays open");
        drop(client);
        tokio::time::timeout(Duration::from_secs(5), answering)
            .await
            .expect("ended at the hang-up")
            .expect("task");
    }

    #[tokio::test]
    async fn a_client_that_does_not_read_is_dropped_when_a_write_stalls() {
        let (server, client) = pair().await;
        let answering = tokio::spawn(answer_within(
            server,
            endless(Bytes::from(vec![b'x'; 64 * 1024])),
            Duration::from_millis(300),
        ));
        // The socket buffers fill, the next write waits past the stall, and the answer ends.
        tokio::time::timeout(Duration::from_secs(10), answering).await.expect("dropped").expect("task");
        drop(client);
    }

    #[test]
    fn heads_frame_by_length_or_in_chunks_and_close() {
        let mut response = Response::new(());
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("keep-alive"));
        let (parts, ()) = response.into_parts();
        let chunked = String::from_utf8(response_head(&parts, None)).expect("text");
        assert!(
            chunked.starts_with("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ndate: "),
            "{chunked}"
        );
        assert!(chunked.ends_with("transfer-encoding: chunked\r\nconnection: close\r\n\r\n"), "{chunked}");
        assert!(!chunked.contains("keep-alive"));
        let sized = String::from_utf8(response_head(&parts, Some(12))).expect("text");
        assert!(sized.ends_with("content-length: 12\r\nconnection: close\r\n\r\n"), "{sized}");
    }
}
