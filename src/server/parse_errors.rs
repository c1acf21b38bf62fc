//! hyper's own answers to requests it cannot read — a request line that does not parse, a
//! head over the limit, an HTTP version it does not speak — are written by hyper itself, with
//! no `Cache-Control` and no body, and hyper offers no hook to change them. Every error of
//! this service is `no-store` (docs/api.md "Errors"), so the connection's writer recognises
//! such a head as it goes out and writes it with `Cache-Control: no-store` (and, for a 400,
//! the JSON:API error body every other 400 has).
//!
//! Recognised only in full: a head that starts with one of those statuses, has
//! `content-length: 0`, no `cache-control`, and is the whole of the write. Every answer the
//! service itself writes carries `Cache-Control`, so none of them is ever touched, and the
//! check is a few byte comparisons on the first buffer of a write.

use wafuel_domain::error_code::{ErrorCode, detail};

/// The statuses hyper answers unreadable requests with.
const PARSER_STATUSES: [&[u8]; 4] = [b"400 ", b"408 ", b"414 ", b"431 "];

/// `head` as it should go out, when it is one of hyper's parser answers; `None` otherwise.
pub fn rewrite(head: &[u8]) -> Option<Vec<u8>> {
    let rest = head.strip_prefix(b"HTTP/1.1 ")?;
    let status = PARSER_STATUSES.iter().find(|s| rest.starts_with(s))?;
    if !head.ends_with(b"\r\n\r\n") || head.len() > 512 {
        return None;
    }
    let lower = head.to_ascii_lowercase();
    let has = |needle: &[u8]| lower.windows(needle.len()).any(|w| w == needle);
    if has(b"cache-control:") || !has(b"\r\ncontent-length: 0\r\n") {
        return None;
    }
    let line_end = head.windows(2).position(|w| w == b"\r\n")? + 2;
    let mut out = Vec::with_capacity(head.len() + 256);
    out.extend_from_slice(&head[..line_end]);
    out.extend_from_slice(b"cache-control: no-store\r\n");
    let body = if *status == b"400 " {
        out.extend_from_slice(
            b"content-type: application/vnd.api+json\r\naccess-control-allow-origin: *\r\n",
        );
        wafuel_web::render::errors::jsonapi_error(ErrorCode::InvalidQuery, detail::INVALID_QUERY, None)
    } else {
        Vec::new()
    };
    // The remaining fields, the zero length replaced by the body's.
    const ZERO: &[u8] = b"content-length: 0\r\n";
    let zero = line_end + lower[line_end..].windows(ZERO.len()).position(|w| w == ZERO)?;
    out.extend_from_slice(&head[line_end..zero]);
    out.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
    out.extend_from_slice(&head[zero + ZERO.len()..]);
    out.extend_from_slice(&body);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypers_parser_answers_gain_no_store_and_a_400_its_body() {
        let bad = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\ndate: Fri, 27 Nov 2026 01:51:44 GMT\r\n\r\n";
        let out = String::from_utf8(rewrite(bad).expect("rewritten")).expect("text");
        let (head, body) = out.split_once("\r\n\r\n").expect("head");
        assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\ncache-control: no-store\r\n"), "{head}");
        assert!(head.contains("connection: close") && head.contains("date: "), "{head}");
        assert!(head.contains(&format!("content-length: {}", body.len())), "{head}");
        let json: serde_json::Value = serde_json::from_str(body).expect("JSON");
        assert_eq!(json["errors"][0]["code"], "invalid_query");
        let large =
            b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        let out = String::from_utf8(rewrite(large).expect("rewritten")).expect("text");
        assert!(
            out.contains("cache-control: no-store\r\n") && out.ends_with("content-length: 0\r\n\r\n"),
            "{out}"
        );
    }

    #[test]
    fn the_services_own_answers_are_never_touched() {
        for head in [
            &b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"[..],
            b"HTTP/1.1 400 Bad Request\r\ncache-control: no-store\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 120\r\n\r\n",
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n{",
        ] {
            assert_eq!(rewrite(head), None, "{}", String::from_utf8_lossy(head));
        }
    }
}
