//! A self-hosted street map: a PMTiles archive (`--map-pmtiles FILE`, e.g. an extract of WA)
//! whose tiles the explorer draws under its stations, raster or vector. Read with the
//! `pmtiles` crate through the open file (positioned reads, never a memory map: a file copied
//! over or cut short under a memory map kills the process with SIGBUS); each tile is
//! decompressed once, at most 64 MiB, and kept, so a tile asked again costs a lookup.
//!
//! The file is the one opened at start: replaced by a rename, the old one is still read,
//! whole; changed in place (copied over, truncated), every read after the change is refused
//! (the tile is an error status), so a tile's directory and bytes always come from one
//! version of the file. Restart to serve a new archive.

use std::path::Path;

use bytes::Bytes;
use pmtiles::{
    AsyncBackend, AsyncPmTilesReader, BackendResponse, Compression, NoCache, PmtError, TileCoord, TileType,
};

/// Memory for decompressed tiles: the tiles of a city at every zoom a person uses.
const KEPT_BYTES: u64 = 64 * 1024 * 1024;
/// The largest tile served once inflated: real tiles are kilobytes; a small gzip member can
/// claim gigabytes.
const MAX_TILE_BYTES: u64 = 64 * 1024 * 1024;

/// The archive's file, read at positions, and what it was when opened.
struct FileBackend {
    file: std::sync::Arc<std::fs::File>,
    opened: Version,
}

/// What tells one version of the file from another: its length and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Version {
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl Version {
    fn of(file: &std::fs::File) -> std::io::Result<Version> {
        let meta = file.metadata()?;
        Ok(Version { len: meta.len(), modified: meta.modified().ok() })
    }
}

impl AsyncBackend for FileBackend {
    async fn read(&self, offset: usize, length: usize) -> pmtiles::PmtResult<BackendResponse> {
        let (file, opened) = (self.file.clone(), self.opened);
        let read = tokio::task::spawn_blocking(move || -> std::io::Result<Vec<u8>> {
            use std::os::unix::fs::FileExt;
            let changed = || std::io::Error::other("the map archive changed since the service opened it");
            if Version::of(&file)? != opened {
                return Err(changed());
            }
            let end = (offset as u64).checked_add(length as u64).filter(|end| *end <= opened.len);
            let Some(_) = end else {
                return Err(std::io::Error::other("a read past the end of the map archive"));
            };
            let mut out = vec![0; length];
            file.read_exact_at(&mut out, offset as u64)?;
            // Changed while it was read: these bytes may mix two versions.
            if Version::of(&file)? != opened {
                return Err(changed());
            }
            Ok(out)
        })
        .await
        .map_err(|e| PmtError::Reading(std::io::Error::other(e.to_string())))?
        .map_err(PmtError::Reading)?;
        Ok(BackendResponse::new(Bytes::from(read)))
    }
}

/// What an archive's tiles are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TileKind {
    Png,
    Jpeg,
    Webp,
    /// Mapbox Vector Tiles: drawn by the page on a canvas (no WebGL).
    Vector,
}

impl TileKind {
    pub fn content_type(self) -> &'static str {
        match self {
            TileKind::Png => "image/png",
            TileKind::Jpeg => "image/jpeg",
            TileKind::Webp => "image/webp",
            TileKind::Vector => "application/vnd.mapbox-vector-tile",
        }
    }

    /// The name `/explore/map.json` gives it.
    pub fn format(self) -> &'static str {
        match self {
            TileKind::Png => "png",
            TileKind::Jpeg => "jpg",
            TileKind::Webp => "webp",
            TileKind::Vector => "mvt",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MapTilesError {
    #[error("--map-pmtiles: cannot read {path} as a PMTiles v3 archive: {why}")]
    Open { path: String, why: String },
    #[error(
        "--map-pmtiles: {path} holds {what} tiles; the explorer draws PNG, JPEG, WebP or vector (MVT) tiles"
    )]
    Unsupported { path: String, what: String },
    #[error("the map archive cannot be read: {0}")]
    Read(String),
}

/// An open archive and the tiles already decompressed.
pub struct MapArchive {
    reader: AsyncPmTilesReader<FileBackend, NoCache>,
    kind: TileKind,
    compression: Compression,
    min_zoom: u8,
    max_zoom: u8,
    /// Names this archive's contents in every tile's ETag: its size and modification time.
    tag: String,
    kept: moka::future::Cache<u64, Option<Bytes>>,
}

impl std::fmt::Debug for MapArchive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapArchive")
            .field("kind", &self.kind)
            .field("zooms", &(self.min_zoom..=self.max_zoom))
            .field("tag", &self.tag)
            .finish_non_exhaustive()
    }
}

impl MapArchive {
    pub async fn open(path: &Path) -> Result<Self, MapTilesError> {
        let shown = path.display().to_string();
        let open = |why: String| MapTilesError::Open { path: shown.clone(), why };
        let handle = std::fs::File::open(path).map_err(|e| open(e.to_string()))?;
        let file = handle.metadata().map_err(|e| open(e.to_string()))?;
        let opened = Version::of(&handle).map_err(|e| open(e.to_string()))?;
        let backend = FileBackend { file: std::sync::Arc::new(handle), opened };
        // A malformed header or directory is a start-up error naming the file, never a panic
        // (the crate's parser slices what the file claims).
        use futures::FutureExt;
        let reader = std::panic::AssertUnwindSafe(AsyncPmTilesReader::try_from_source(backend))
            .catch_unwind()
            .await
            .map_err(|_| open("its header or root directory is malformed".into()))?
            .map_err(|e| open(e.to_string()))?;
        let header = reader.get_header();
        let kind = match header.tile_type {
            TileType::Png => TileKind::Png,
            TileType::Jpeg => TileKind::Jpeg,
            TileType::Webp => TileKind::Webp,
            TileType::Mvt => TileKind::Vector,
            other => return Err(MapTilesError::Unsupported { path: shown, what: format!("{other:?}") }),
        };
        if !matches!(header.tile_compression, Compression::None | Compression::Gzip) {
            let what = format!("{:?}-compressed", header.tile_compression);
            return Err(MapTilesError::Unsupported { path: shown, what });
        }
        let modified = file
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs());
        let (compression, min_zoom, max_zoom) = (header.tile_compression, header.min_zoom, header.max_zoom);
        let kept = moka::future::Cache::builder()
            .weigher(|_: &u64, tile: &Option<Bytes>| {
                u32::try_from(tile.as_ref().map_or(16, |t| t.len() + 16)).unwrap_or(u32::MAX)
            })
            .max_capacity(KEPT_BYTES)
            .build();
        Ok(Self {
            reader,
            kind,
            compression,
            min_zoom,
            max_zoom,
            tag: format!("{:x}-{modified:x}", file.len()),
            kept,
        })
    }

    pub fn kind(&self) -> TileKind {
        self.kind
    }

    pub fn min_zoom(&self) -> u8 {
        self.min_zoom
    }

    pub fn max_zoom(&self) -> u8 {
        self.max_zoom
    }

    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// Whether `z/x/y` is a place this archive could hold a tile at: one of its zooms, and x
    /// and y below 2^z.
    pub fn has_place(&self, z: u8, x: u32, y: u32) -> bool {
        self.place(z, x, y).is_some()
    }

    fn place(&self, z: u8, x: u32, y: u32) -> Option<TileCoord> {
        (self.min_zoom..=self.max_zoom).contains(&z).then(|| TileCoord::new(z, x, y).ok()).flatten()
    }

    /// The tile at `z/x/y`, decompressed; `None` when the archive has none there (beyond its
    /// area, or no such place: [`Self::has_place`]). Concurrent first asks of one tile read it
    /// once.
    pub async fn tile(&self, z: u8, x: u32, y: u32) -> Result<Option<Bytes>, MapTilesError> {
        let Some(coord) = self.place(z, x, y) else { return Ok(None) };
        let read = async {
            use futures::FutureExt;
            let raw = std::panic::AssertUnwindSafe(self.reader.get_tile(coord))
                .catch_unwind()
                .await
                .map_err(|_| MapTilesError::Read("a malformed directory".into()))?
                .map_err(|e| MapTilesError::Read(e.to_string()))?;
            match raw {
                Some(bytes) if self.compression == Compression::Gzip => {
                    Ok(Some(Bytes::from(gunzip(&bytes)?)))
                }
                other => Ok(other),
            }
        };
        let id = pmtiles::TileId::from(coord).value();
        self.kept
            .try_get_with(id, read)
            .await
            .map_err(|e: std::sync::Arc<MapTilesError>| MapTilesError::Read(e.to_string()))
    }
}

/// A gzip tile inflated, refused past [`MAX_TILE_BYTES`] (read no further than one byte over).
fn gunzip(bytes: &[u8]) -> Result<Vec<u8>, MapTilesError> {
    use std::io::Read;
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(3).min(1 << 20));
    flate2::read::GzDecoder::new(bytes)
        .take(MAX_TILE_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|e| MapTilesError::Read(e.to_string()))?;
    if out.len() as u64 > MAX_TILE_BYTES {
        return Err(MapTilesError::Read(format!("a tile inflating past {MAX_TILE_BYTES} bytes")));
    }
    Ok(out)
}
