//! A file built into the binary, with its strong validators and its gzip and brotli codings
//! (made the first time a client asks for one). Pure: HTTP serving is `http::answer::serve_file`.

use super::representation::{Coding, Representation};

/// One file served from memory.
#[derive(Debug)]
pub struct Asset {
    pub repr: Representation,
    pub content_type: &'static str,
    /// The ETag of each coding, made once (identity, gzip, br).
    etags: [String; 3],
}

impl Asset {
    pub fn new(body: impl Into<Vec<u8>>, content_type: &'static str) -> Self {
        let repr = Representation::build(body.into());
        let etags = Coding::ALL.map(|c| repr.etag(c));
        Self { repr, content_type, etags }
    }

    /// The strong ETag of the file in one coding (`"<sha256>"`, `"<sha256>-gzip"`, …).
    pub fn etag(&self, coding: Coding) -> &str {
        &self.etags[coding.index()]
    }

    /// The first eight hex digits of the body's SHA-256: a version for URLs that reference
    /// this file.
    pub fn version(&self) -> &str {
        self.repr.digest.get(..8).unwrap_or("")
    }
}
