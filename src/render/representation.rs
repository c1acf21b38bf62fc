//! A rendered document with its precomputed encodings and validators (DESIGN.md §3).

use std::io::Write;

use crate::model::key::sha256_hex;
use bytes::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;

/// gzip level: close to the best ratio for JSON at a fraction of level 9's cost.
const GZIP_LEVEL: u32 = 6;
/// brotli quality: 5 compresses JSON better than gzip 6 and stays within the publish budget.
const BROTLI_QUALITY: u32 = 5;
const BROTLI_WINDOW: u32 = 22;

/// A content-coding we can serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Identity,
    Gzip,
    Br,
}

impl Coding {
    /// The `Content-Encoding` value, if any.
    pub fn header(self) -> Option<&'static str> {
        match self {
            Coding::Identity => None,
            Coding::Gzip => Some("gzip"),
            Coding::Br => Some("br"),
        }
    }
}

/// The bytes of one document in every coding, and the digest its ETags derive from.
#[derive(Debug, Clone)]
pub struct Representation {
    pub identity: Bytes,
    pub gzip: Bytes,
    pub br: Bytes,
    /// Lower-case hex SHA-256 of the identity bytes.
    pub digest: String,
}

impl Representation {
    /// Compress once, at publish time.
    pub fn build(identity: Vec<u8>) -> Self {
        let digest = sha256_hex(&identity);
        let gzip = gzip(&identity);
        let br = brotli(&identity);
        Self { identity: exact(identity), gzip: exact(gzip), br: exact(br), digest }
    }

    pub fn body(&self, coding: Coding) -> &Bytes {
        match coding {
            Coding::Identity => &self.identity,
            Coding::Gzip => &self.gzip,
            Coding::Br => &self.br,
        }
    }

    /// The strong ETag of one representation: `"<hex>"`, `"<hex>-gzip"`, `"<hex>-br"`.
    pub fn etag(&self, coding: Coding) -> String {
        etag_for(&self.digest, coding)
    }
}

pub fn etag_for(digest: &str, coding: Coding) -> String {
    match coding.header() {
        None => format!("\"{digest}\""),
        Some(suffix) => format!("\"{digest}-{suffix}\""),
    }
}

/// Bytes holding exactly `body`: a growing Vec keeps up to twice its length allocated, and the
/// render cache weighs documents by length, so without this its bound would be half the truth.
fn exact(mut body: Vec<u8>) -> Bytes {
    body.shrink_to_fit();
    Bytes::from(body)
}

fn gzip(input: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(input.len() / 6), Compression::new(GZIP_LEVEL));
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(input);
    encoder.finish().unwrap_or_default()
}

fn brotli(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len() / 8);
    {
        let mut writer = brotli::CompressorWriter::new(&mut out, 64 * 1024, BROTLI_QUALITY, BROTLI_WINDOW);
        let _ = writer.write_all(input);
    }
    out
}

/// Choose the coding for an `Accept-Encoding` header: br, then gzip, then identity, among
/// those the client accepts with q > 0.
pub fn negotiate_encoding(header: Option<&str>) -> Coding {
    let Some(header) = header else { return Coding::Identity };
    let mut br = None;
    let mut gzip = None;
    let mut star = None;
    for part in header.split(',') {
        let mut pieces = part.split(';');
        let name = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
        let mut q = 1.0f32;
        for p in pieces {
            if let Some(v) = p.trim().strip_prefix("q=").or_else(|| p.trim().strip_prefix("Q=")) {
                q = v.trim().parse().unwrap_or(0.0);
            }
        }
        match name.as_str() {
            "br" => br = Some(q),
            "gzip" | "x-gzip" => gzip = Some(q),
            "*" => star = Some(q),
            _ => {}
        }
    }
    let accepts = |explicit: Option<f32>| explicit.or(star).is_some_and(|q| q > 0.0);
    if accepts(br) {
        Coding::Br
    } else if accepts(gzip) {
        Coding::Gzip
    } else {
        Coding::Identity
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn encodings_round_trip_and_etags_differ() {
        let doc = br#"{"jsonapi":{"version":"1.1"},"data":[]}"#.repeat(50);
        let r = Representation::build(doc.clone());
        let mut unzipped = Vec::new();
        flate2::read::GzDecoder::new(&r.gzip[..]).read_to_end(&mut unzipped).expect("gzip");
        assert_eq!(unzipped, doc);
        let mut unbr = Vec::new();
        brotli::Decompressor::new(&r.br[..], 4096).read_to_end(&mut unbr).expect("br");
        assert_eq!(unbr, doc);
        assert_eq!(r.etag(Coding::Identity), format!("\"{}\"", r.digest));
        assert_eq!(r.etag(Coding::Gzip), format!("\"{}-gzip\"", r.digest));
        assert_eq!(r.etag(Coding::Br), format!("\"{}-br\"", r.digest));
        assert_eq!(r.digest.len(), 64);
    }

    #[test]
    fn accept_encoding() {
        assert_eq!(negotiate_encoding(None), Coding::Identity);
        assert_eq!(negotiate_encoding(Some("gzip, deflate, br")), Coding::Br);
        assert_eq!(negotiate_encoding(Some("gzip")), Coding::Gzip);
        assert_eq!(negotiate_encoding(Some("br;q=0, gzip;q=0.5")), Coding::Gzip);
        assert_eq!(negotiate_encoding(Some("identity")), Coding::Identity);
        assert_eq!(negotiate_encoding(Some("*")), Coding::Br);
        assert_eq!(negotiate_encoding(Some("*;q=0, gzip")), Coding::Gzip);
    }
}
