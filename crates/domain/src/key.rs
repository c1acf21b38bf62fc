//! The station key and the public station id (`stationId`, docs/api.md "`/v1`: the price
//! document").

use sha2::{Digest, Sha256};

/// Trim, collapse whitespace runs to one space, lower-case.
pub fn fold_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

/// The compact JSON array `[street, suburb, latitude, longitude]` identifying a station.
/// Coordinates are written in shortest round-trip form without a trailing `.0`.
pub fn station_key(street: &str, suburb: &str, latitude: f64, longitude: f64) -> String {
    let street = serde_json::Value::String(fold_text(street)).to_string();
    let suburb = serde_json::Value::String(fold_text(suburb)).to_string();
    // Rust's `Display` for f64 is the shortest representation that round-trips and writes
    // whole numbers without a fraction, which is exactly the form the key needs.
    format!("[{street},{suburb},{},{}]", number(latitude), number(longitude))
}

fn number(value: f64) -> String {
    // -0 would print as "-0"; the key treats it as 0.
    if value == 0.0 { "0".to_string() } else { value.to_string() }
}

/// Lower-case hex SHA-256 of the key's UTF-8 bytes.
pub fn key_digest(key: &str) -> String {
    sha256_hex(key.as_bytes())
}

/// Lower-case hex SHA-256 of any bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    hex
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The station API's id of a station: the digest of its key (64 lowercase hex characters).
/// Made only by [`StationId::parse`] (at the edge, from a path) or from a digest this service
/// computed, so whoever holds one can trust its form. Stored as its text (a stored id read
/// back is checked again).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String")]
pub struct StationId(String);

impl TryFrom<String> for StationId {
    type Error = &'static str;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        match Self::parse(&text) {
            Some(_) => Ok(Self(text)),
            None => Err("a station id is 64 lowercase hex digits"),
        }
    }
}

/// Maps keyed by id are read with the text of one (a path's, a stored row's).
impl std::borrow::Borrow<str> for StationId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl StationId {
    /// The id in `text`, when it has the form of one.
    pub fn parse(text: &str) -> Option<Self> {
        let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
        (text.len() == 64 && text.bytes().all(hex)).then(|| Self(text.to_string()))
    }

    /// The id of a digest this service computed ([`sha256_hex`]).
    pub fn from_digest(digest: String) -> Self {
        debug_assert!(Self::parse(&digest).is_some(), "{digest}");
        Self(digest)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for StationId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A station's resource id in a price document, `<sourceDate>:<stationId>`: one station on
/// one source date.
pub fn resource_id(source_date: &str, id: &StationId) -> String {
    let digest = id.as_str();
    // Made for every row of every answer: joined directly, not through `format!`.
    let mut id = String::with_capacity(source_date.len() + 1 + digest.len());
    id.push_str(source_date);
    id.push(':');
    id.push_str(digest);
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn station_ids_are_lowercase_hex_digests() {
        let digest = key_digest("[\"a\",\"b\",1,2]");
        assert_eq!(StationId::parse(&digest).map(|id| id.to_string()), Some(digest.clone()));
        assert!(StationId::parse(&digest.to_uppercase()).is_none());
        assert!(StationId::parse(&digest[1..]).is_none());
        assert!(StationId::parse(&format!("{}g", &digest[1..])).is_none());
        assert!(StationId::parse("").is_none());
    }

    #[test]
    fn design_vectors() {
        let cases = [
            (
                station_key("1 Test Road", "PERTH", -31.95, 115.86),
                r#"["1 test road","perth",-31.95,115.86]"#,
                "238232d151f5f92bbce32951b828cb7fe4887fdc1ac868628c7ab33d4eda4e3b",
            ),
            (
                station_key("Lot 2 North West Coastal Hwy", "MEADOW", -26.816033, 114.614261),
                r#"["lot 2 north west coastal hwy","meadow",-26.816033,114.614261]"#,
                "319621520a443f7357aec2b6e23441ef7309cc0e4bc2a5b45786f4573e8395fe",
            ),
            (
                station_key("142  Dunreath Dr ", "PERTH AIRPORT", -31.940377, 115.951869),
                r#"["142 dunreath dr","perth airport",-31.940377,115.951869]"#,
                "dca78516464d85042c12eab0fd45d71665adc32b578908bc8444f29201d02ba7",
            ),
            (
                station_key("16 Main St", "MEEKATHARRA", -26.591283, 118.496475),
                r#"["16 main st","meekatharra",-26.591283,118.496475]"#,
                "294ed847a15de8a8305c548cece119542e625a89897cd82290470f7df5ec0a8e",
            ),
        ];
        for (key, expected_key, digest) in cases {
            assert_eq!(key, expected_key);
            assert_eq!(key_digest(&key), digest);
        }
    }

    #[test]
    fn coordinates_drop_trailing_zeroes() {
        let parsed: f64 = "-26.81603300".parse().expect("number");
        assert_eq!(station_key("a", "b", parsed, 115.0), r#"["a","b",-26.816033,115]"#);
        assert_eq!(station_key("a", "b", -0.0, 0.0), r#"["a","b",0,0]"#);
    }

    #[test]
    fn id_shape() {
        let id = resource_id("2026-09-29", &StationId::from_digest(key_digest("x")));
        assert_eq!(id.len(), 10 + 1 + 64);
        assert!(id[11..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    }
}
