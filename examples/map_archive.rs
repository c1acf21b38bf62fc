//! A PMTiles archive for `scripts/bench`'s `/map/tiles` row: Perth's centre at zooms 10–15,
//! each tile 20 KB of PNG-typed bytes (the server passes tiles through; their pixels do not
//! matter to its speed). Prints one tile's `z/x/y` for the benchmark to ask.
//!
//!   cargo run --release --example map_archive -- /tmp/perth.pmtiles

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: map_archive FILE")?;
    let mut tiles = Vec::new();
    for z in 10u8..=15 {
        let n = f64::from(1u32 << z);
        let x = |lng: f64| ((lng + 180.0) / 360.0 * n) as u32;
        let y = |lat: f64| ((1.0 - lat.to_radians().tan().asinh() / std::f64::consts::PI) / 2.0 * n) as u32;
        for tx in x(115.83)..=x(115.89) {
            for ty in y(-31.93)..=y(-31.98) {
                tiles.push(pmtiles::TileCoord::new(z, tx, ty)?);
            }
        }
    }
    tiles.sort_by_key(|&c| pmtiles::TileId::from(c).value());
    let mut writer = pmtiles::PmTilesWriter::new(pmtiles::TileType::Png)
        .min_zoom(10)
        .max_zoom(15)
        .create(std::fs::File::create(&path)?)?;
    for (i, coord) in tiles.iter().enumerate() {
        // Each tile its own bytes, so none is deduplicated into another.
        let mut body = vec![0u8; 20_000];
        body[..8].copy_from_slice(&(i as u64).to_be_bytes());
        writer.add_tile(*coord, &body)?;
    }
    writer.finalize()?;
    let one = tiles[tiles.len() / 2];
    println!("{}/{}/{}", one.z(), one.x(), one.y());
    Ok(())
}
