//! A rendered document with its validators, and its encodings made on first demand: an
//! answer asked once (a never-repeated nearby query) is compressed once, in the coding its
//! client takes, and a coding nobody asks for is never made.

use std::io::Write;
use std::sync::OnceLock;

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

/// A weight (`q`) as RFC 9110 writes it — `0` to `1` with at most three decimals — in
/// thousandths; `None` for any other text (`1.0000001`, `0.5e1`, `-0`), which the callers
/// read as "not acceptable" rather than guess.
pub fn parse_qvalue(text: &str) -> Option<u16> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let thousandths =
        fraction.bytes().enumerate().fold(0u16, |acc, (i, b)| acc + u16::from(b - b'0') * [100, 10, 1][i]);
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

/// The weight of one `;`-separated element's parameters: its `q`, 1000 when it has none,
/// 0 when its `q` is not one.
fn element_weight<'a>(params: impl Iterator<Item = &'a str>) -> u16 {
    for p in params {
        let (name, value) = p.split_once('=').unwrap_or((p, ""));
        if name.trim().eq_ignore_ascii_case("q") {
            return parse_qvalue(value.trim()).unwrap_or(0);
        }
    }
    1000
}

/// Choose the coding for an `Accept-Encoding` header: the accepted coding of highest weight
/// among br, gzip and identity (ties in that order). A coding the header does not name takes
/// `*`'s weight; identity is acceptable unless `identity;q=0` (or `*;q=0` without identity)
/// excludes it, and br and gzip are then acceptable unless named with q=0, as the client
/// asked for a coding. When every coding is excluded, identity is sent (RFC 9110 12.5.3).
pub fn negotiate_encoding(header: Option<&str>) -> Coding {
    let Some(header) = header else { return Coding::Identity };
    let (mut br, mut gzip, mut identity, mut star) = (None, None, None, None);
    for part in header.split(',') {
        let mut pieces = part.split(';');
        let name = pieces.next().unwrap_or("").trim();
        let weight = element_weight(pieces);
        let slot = match name {
            n if n.eq_ignore_ascii_case("br") => &mut br,
            n if n.eq_ignore_ascii_case("gzip") || n.eq_ignore_ascii_case("x-gzip") => &mut gzip,
            n if n.eq_ignore_ascii_case("identity") => &mut identity,
            "*" => &mut star,
            _ => continue,
        };
        *slot = Some(weight);
    }
    let identity = identity.or(star).unwrap_or(1);
    // With identity refused, a coding the header leaves unnamed is what the client wants.
    let implied = if identity == 0 { 1 } else { 0 };
    let (br, gzip) = (br.or(star).unwrap_or(implied), gzip.or(star).unwrap_or(implied));
    let best = br.max(gzip).max(identity);
    if best == 0 {
        Coding::Identity
    } else if br == best {
        Coding::Br
    } else if gzip == best {
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

    #[test]
    fn accept_encoding() {
        assert_eq!(negotiate_encoding(None), Coding::Identity);
        assert_eq!(negotiate_encoding(Some("gzip, deflate, br")), Coding::Br);
        assert_eq!(negotiate_encoding(Some("gzip")), Coding::Gzip);
        assert_eq!(negotiate_encoding(Some("br;q=0, gzip;q=0.5")), Coding::Gzip);
        assert_eq!(negotiate_encoding(Some("identity")), Coding::Identity);
        assert_eq!(negotiate_encoding(Some("*")), Coding::Br);
        assert_eq!(negotiate_encoding(Some("*;q=0, gzip")), Coding::Gzip);
        // RFC 9110 weights: at most three decimals, and the higher weight wins.
        assert_eq!(negotiate_encoding(Some("gzip;q=1, br;q=0.999")), Coding::Gzip);
        assert_eq!(negotiate_encoding(Some("br;q=1.0000001, gzip;q=0.5")), Coding::Gzip);
        assert_eq!(negotiate_encoding(Some("br;q=0.5, gzip;q=0.5")), Coding::Br);
        // Identity refused: a coding is sent, unless every one is refused too.
        assert_eq!(negotiate_encoding(Some("identity;q=0")), Coding::Br);
        assert_eq!(negotiate_encoding(Some("br;q=0, identity;q=0")), Coding::Gzip);
        assert_eq!(negotiate_encoding(Some("*;q=0")), Coding::Identity);
        assert_eq!(negotiate_encoding(Some("identity, br;q=0.5")), Coding::Identity);
    }

    #[test]
    fn qvalues_follow_rfc_9110() {
        for (text, q) in
            [("1", 1000), ("1.", 1000), ("1.000", 1000), ("0", 0), ("0.5", 500), ("0.001", 1), ("0.25", 250)]
        {
            assert_eq!(parse_qvalue(text), Some(q), "{text}");
        }
        for bad in ["1.0000001", "1.001", "2", "-0", "0.1234", ".5", "0.5e1", "", "q", "01"] {
            assert_eq!(parse_qvalue(bad), None, "{bad}");
        }
    }
}
