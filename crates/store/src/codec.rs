//! Snapshot payloads: quotes as JSON, gzip-compressed, with a SHA-256 checksum so a corrupt
//! row is detected rather than served.

use std::io::{Read, Write};

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

use wafuel_domain::key::sha256_hex;
use wafuel_domain::station::Quote;

/// Encoded payload and its checksum.
pub fn encode(quotes: &[Quote]) -> Result<(Vec<u8>, String), String> {
    let json = serde_json::to_vec(quotes).map_err(|e| e.to_string())?;
    // Level 1: snapshots are written hourly and read often; speed beats the last few percent.
    let mut gz = GzEncoder::new(Vec::with_capacity(json.len() / 5), Compression::fast());
    gz.write_all(&json).map_err(|e| e.to_string())?;
    let payload = gz.finish().map_err(|e| e.to_string())?;
    let checksum = sha256_hex(&payload);
    Ok((payload, checksum))
}

/// Decode a payload, checking it against its checksum first.
pub fn decode(payload: &[u8], checksum: &str) -> Result<Vec<Quote>, String> {
    if sha256_hex(payload) != checksum {
        return Err("checksum mismatch".into());
    }
    let mut json = Vec::with_capacity(payload.len() * 5);
    GzDecoder::new(payload).read_to_end(&mut json).map_err(|e| format!("gzip: {e}"))?;
    serde_json::from_slice(&json).map_err(|e| format!("json: {e}"))
}
