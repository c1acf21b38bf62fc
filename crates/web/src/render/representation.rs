//! A rendered document with its validators, and its encodings made on first demand: an
//! answer asked once (a never-repeated nearby query) is compressed once, in the coding its
//! client takes, and a coding nobody asks for is never made.

use std::io::Write;
use std::sync::OnceLock;

use bytes::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;
use wafuel_domain::key::sha256_hex;

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
    /// Every coding, in the order of [`Coding::index`].
    pub const ALL: [Coding; 3] = [Coding::Identity, Coding::Gzip, Coding::Br];

    /// This coding's place in a per-coding array (ETags, prepared headers).
    pub fn index(self) -> usize {
        match self {
            Coding::Identity => 0,
            Coding::Gzip => 1,
            Coding::Br => 2,
        }
    }

    /// The `Content-Encoding` value, if any.
    pub fn header(self) -> Option<&'static str> {
        match self {
            Coding::Identity => None,
            Coding::Gzip => Some("gzip"),
            Coding::Br => Some("br"),
        }
    }
}

/// The bytes of one document, each coding made when first asked for, and the digest its
/// ETags derive from (of the identity bytes, so no ETag needs a compression).
#[derive(Debug)]
pub struct Representation {
    pub identity: Bytes,
    gzip: OnceLock<Bytes>,
    br: OnceLock<Bytes>,
    /// Lower-case hex SHA-256 of the identity bytes.
    pub digest: String,
}

impl Representation {
    pub fn build(identity: Vec<u8>) -> Self {
        let digest = sha256_hex(&identity);
        Self { identity: exact(identity), gzip: OnceLock::new(), br: OnceLock::new(), digest }
    }

    /// The body in `coding`, compressed now if this is the first time it is asked for
    /// (concurrent first askers wait for one compression).
    pub fn body(&self, coding: Coding) -> &Bytes {
        match coding {
            Coding::Identity => &self.identity,
            Coding::Gzip => self.gzip.get_or_init(|| exact(gzip(&self.identity))),
            Coding::Br => self.br.get_or_init(|| exact(brotli(&self.identity))),
        }
    }

    /// The most memory this document can come to with every coding made: JSON, CSV and
    /// GeoJSON compress far below half their size in either coding, so identity and a half
    /// for both is an upper bound a cache can weigh the document by when it is stored.
    pub fn weight_bound(&self) -> usize {
        self.identity.len() + self.identity.len() / 2
    }

    /// Bytes of the bodies made so far (identity and each coding asked for).
    pub fn made_bytes(&self) -> usize {
        self.identity.len() + self.gzip.get().map_or(0, Bytes::len) + self.br.get().map_or(0, Bytes::len)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn encodings_round_trip_and_etags_differ() {
        let doc = br#"{"jsonapi":{"version":"1.1"},"data":[]}"#.repeat(50);
        let r = Representation::build(doc.clone());
        assert!(r.gzip.get().is_none() && r.br.get().is_none(), "nothing compressed before it is asked for");
        let mut unzipped = Vec::new();
        flate2::read::GzDecoder::new(&r.body(Coding::Gzip)[..]).read_to_end(&mut unzipped).expect("gzip");
        assert_eq!(unzipped, doc);
        assert!(r.br.get().is_none(), "one coding asked for, one made");
        let mut unbr = Vec::new();
        brotli::Decompressor::new(&r.body(Coding::Br)[..], 4096).read_to_end(&mut unbr).expect("br");
        assert_eq!(unbr, doc);
        assert!(r.body(Coding::Gzip).len() + r.body(Coding::Br).len() <= r.weight_bound() - doc.len());
        assert_eq!(r.etag(Coding::Identity), format!("\"{}\"", r.digest));
        assert_eq!(r.etag(Coding::Gzip), format!("\"{}-gzip\"", r.digest));
        assert_eq!(r.etag(Coding::Br), format!("\"{}-br\"", r.digest));
        assert_eq!(r.digest.len(), 64);
    }
}
