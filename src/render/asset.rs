//! A file built into the binary, with its strong validator. Pure: HTTP serving is in
//! `http::asset`.

use bytes::Bytes;

/// One file served from memory.
#[derive(Debug, Clone)]
pub struct Asset {
    pub body: Bytes,
    /// Quoted strong tag from the body's SHA-256.
    pub etag: String,
    pub content_type: &'static str,
    pub cache_control: &'static str,
}

impl Asset {
    pub fn new(body: impl Into<Bytes>, content_type: &'static str, cache_control: &'static str) -> Self {
        let body = body.into();
        let etag = format!("\"{}\"", crate::model::key::sha256_hex(&body));
        Self { body, etag, content_type, cache_control }
    }

    /// The first eight hex digits of the ETag: a version for URLs that reference this file.
    pub fn version(&self) -> &str {
        self.etag.get(1..9).unwrap_or("")
    }
}
