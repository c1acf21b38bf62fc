//! A sample PMTiles archive you can look at: Perth's metro area at zooms 10–13 and its centre
//! at 14–15, each tile a real 256-pixel PNG (a pale ground, a grid every 64 pixels and the
//! tile's border, shaded by zoom), so `demo --map-pmtiles` shows a map under the dots without
//! an extract of your own. It is a grid, not streets: for streets, extract WA from a Protomaps
//! or OpenMapTiles build with `pmtiles extract`.
//!
//! Each tile is padded to 20 KB with a private PNG chunk that image decoders skip, so
//! `scripts/bench`'s `/map/tiles` row measures a tile of a real map's size. Prints one tile's
//! `z/x/y` for the benchmark to ask.
//!
//!   cargo run --release --example map_archive -- /tmp/perth.pmtiles
//!   cargo run --release -- demo --map-pmtiles /tmp/perth.pmtiles --map-attribution 'sample grid'

use std::io::Write;

/// Perth's metro area (west, south, east, north) and its centre.
const METRO: (f64, f64, f64, f64) = (115.65, -32.35, 116.10, -31.60);
const CENTRE: (f64, f64, f64, f64) = (115.83, -31.98, 115.89, -31.93);
/// The size every tile is padded to.
const TILE_BYTES: usize = 20_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: map_archive FILE")?;
    let mut tiles = Vec::new();
    for z in 10u8..=15 {
        let (west, south, east, north) = if z <= 13 { METRO } else { CENTRE };
        let n = f64::from(1u32 << z);
        let x = |lng: f64| ((lng + 180.0) / 360.0 * n) as u32;
        let y = |lat: f64| ((1.0 - lat.to_radians().tan().asinh() / std::f64::consts::PI) / 2.0 * n) as u32;
        for tx in x(west)..=x(east) {
            for ty in y(north)..=y(south) {
                tiles.push(pmtiles::TileCoord::new(z, tx, ty)?);
            }
        }
    }
    tiles.sort_by_key(|&c| pmtiles::TileId::from(c).value());
    let mut writer = pmtiles::PmTilesWriter::new(pmtiles::TileType::Png)
        .min_zoom(10)
        .max_zoom(15)
        .bounds(METRO.0, METRO.1, METRO.2, METRO.3)
        .create(std::fs::File::create(&path)?)?;
    for coord in &tiles {
        writer.add_tile(*coord, &tile_png(coord.z(), coord.x(), coord.y())?)?;
    }
    writer.finalize()?;
    let one = tiles[tiles.len() / 2];
    println!("{}/{}/{}", one.z(), one.x(), one.y());
    Ok(())
}

/// One tile: RGB rows without filtering, deflated, then a private chunk up to [`TILE_BYTES`]
/// (whose bytes also make each tile distinct, so none is deduplicated into another).
fn tile_png(z: u8, x: u32, y: u32) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let shade = 240u8.saturating_sub(z.saturating_mul(3));
    let ground = [shade, 238, if (x + y).is_multiple_of(2) { 222 } else { 230 }];
    let mut raw = Vec::with_capacity(256 * (1 + 256 * 3));
    for row in 0..256 {
        raw.push(0);
        for col in 0..256 {
            let border = row == 0 || col == 0;
            let grid = row % 64 < 2 || col % 64 < 2;
            raw.extend_from_slice(match (border, grid) {
                (true, _) => &[120, 120, 130],
                (false, true) => &[200, 200, 205],
                _ => &ground,
            });
        }
    }
    let mut deflate = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    deflate.write_all(&raw)?;
    let data = deflate.finish()?;
    let mut header = Vec::new();
    header.extend_from_slice(&256u32.to_be_bytes());
    header.extend_from_slice(&256u32.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]); // 8 bits, RGB, deflate, no filter, no interlace
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut png, b"IHDR", &header)?;
    chunk(&mut png, b"IDAT", &data)?;
    // "wfPd": ancillary (lower-case first letter), private, safe to copy: decoders skip it.
    let used = png.len() + 12 + 12;
    let mut padding = format!("{z}/{x}/{y}").into_bytes();
    padding.resize(TILE_BYTES.saturating_sub(used).max(padding.len()), b'.');
    chunk(&mut png, b"wfPd", &padding)?;
    chunk(&mut png, b"IEND", &[])?;
    Ok(png)
}

/// A PNG chunk: length, type, body and the CRC of type and body.
fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], body: &[u8]) -> Result<(), Box<dyn std::error::Error>> {
    png.extend_from_slice(&u32::try_from(body.len())?.to_be_bytes());
    png.extend_from_slice(kind);
    png.extend_from_slice(body);
    let mut crc = flate2::Crc::new();
    crc.update(kind);
    crc.update(body);
    png.extend_from_slice(&crc.sum().to_be_bytes());
    Ok(())
}
