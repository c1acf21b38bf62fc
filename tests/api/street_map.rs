//! The explorer on a street map: a raster tile service of the test's own on 127.0.0.1 (PNG
//! tiles it draws), named with `--map-tiles`; Leaflet's tiles under the page's station dots,
//! every dot on its place of the tiles, moved with them by mouse and keyboard alike.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use fantoccini::key::Key;
use fantoccini::{Client, Locator};
use serde_json::json;

use crate::browser::*;
use crate::support::http;

/// One 256-pixel tile, RGB without filtering: a pale ground whose shade says its zoom, with
/// grey "streets" every 64 pixels, so a screenshot shows tiles under the dots.
fn tile_png(z: u32, x: u32, y: u32) -> Vec<u8> {
    let shade = 235u8.saturating_sub(u8::try_from(z * 4).unwrap_or(u8::MAX));
    let ground = [shade, 236, if (x + y).is_multiple_of(2) { 214 } else { 226 }];
    let mut raw = Vec::with_capacity(256 * (1 + 256 * 3));
    for row in 0..256 {
        raw.push(0);
        for col in 0..256 {
            let street = row % 64 < 3 || col % 64 < 3;
            raw.extend_from_slice(if street { &[150, 150, 150] } else { &ground });
        }
    }
    let mut deflate = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    deflate.write_all(&raw).expect("compressed");
    let data = deflate.finish().expect("compressed");
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::new();
    header.extend_from_slice(&256u32.to_be_bytes());
    header.extend_from_slice(&256u32.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]); // 8 bits, RGB, deflate, no filter, no interlace
    for (kind, body) in [(b"IHDR", header.as_slice()), (b"IDAT", data.as_slice()), (b"IEND", &[][..])] {
        png.extend_from_slice(&u32::try_from(body.len()).expect("small").to_be_bytes());
        png.extend_from_slice(kind);
        png.extend_from_slice(body);
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(body);
        png.extend_from_slice(&crc.sum().to_be_bytes());
    }
    png
}

/// The tile holding a place at zoom `z` (Web Mercator, as every tile service numbers them).
fn tile_of(lng: f64, lat: f64, z: u8) -> (u32, u32) {
    let n = f64::from(1u32 << z);
    let x = (lng + 180.0) / 360.0 * n;
    let y = (1.0 - lat.to_radians().tan().asinh() / std::f64::consts::PI) / 2.0 * n;
    (x.floor() as u32, y.floor() as u32)
}

/// Where a place falls in tile `z/x/y`, in the tile's own units (4096 across).
fn in_tile(lng: f64, lat: f64, z: u8, x: u32, y: u32) -> (i64, i64) {
    let n = f64::from(1u32 << z);
    let wx = (lng + 180.0) / 360.0 * n;
    let wy = (1.0 - lat.to_radians().tan().asinh() / std::f64::consts::PI) / 2.0 * n;
    (((wx - f64::from(x)) * 4096.0).round() as i64, ((wy - f64::from(y)) * 4096.0).round() as i64)
}

/// Perth's centre, where the test archives have their streets.
const AREA: (f64, f64, f64, f64) = (115.83, -31.98, 115.89, -31.93);
const ZOOMS: std::ops::RangeInclusive<u8> = 10..=15;

/// Every tile of [`AREA`] at each of [`ZOOMS`].
fn area_tiles() -> Vec<(u8, u32, u32)> {
    let mut tiles = Vec::new();
    for z in ZOOMS {
        let (x0, y0) = tile_of(AREA.0, AREA.3, z);
        let (x1, y1) = tile_of(AREA.2, AREA.1, z);
        for x in x0..=x1 {
            for y in y0..=y1 {
                tiles.push((z, x, y));
            }
        }
    }
    tiles
}

/// A protocol-buffer field key, a varint, and a length-delimited field.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}
fn field(out: &mut Vec<u8>, number: u64, body: &[u8]) {
    varint(out, number << 3 | 2);
    varint(out, body.len() as u64);
    out.extend_from_slice(body);
}
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The street grid near Perth's centre: east-west streets named "Test Street 1…", north-south
/// "Test Avenue 1…", every 0.006°.
fn streets() -> Vec<(String, [(f64, f64); 2])> {
    let mut out = Vec::new();
    for i in 0..9 {
        let lat = AREA.1 + 0.006 * f64::from(i);
        out.push((format!("Test Street {}", i + 1), [(AREA.0, lat), (AREA.2, lat)]));
        let lng = AREA.0 + 0.006 * f64::from(i) + 0.003;
        out.push((format!("Test Avenue {}", i + 1), [(lng, AREA.1), (lng, AREA.3)]));
    }
    out
}

/// One Mapbox Vector Tile: a `roads` layer of [`streets`] (lines with a `name`) and a `water`
/// layer with one square of river.
fn vector_tile(z: u8, x: u32, y: u32) -> Vec<u8> {
    let mut roads = Vec::new();
    varint(&mut roads, 15 << 3);
    varint(&mut roads, 2); // version
    field(&mut roads, 1, b"roads");
    let named = streets();
    for (i, (_, ends)) in named.iter().enumerate() {
        let (ax, ay) = in_tile(ends[0].0, ends[0].1, z, x, y);
        let (bx, by) = in_tile(ends[1].0, ends[1].1, z, x, y);
        let mut geometry = Vec::new();
        for v in [9, zigzag(ax), zigzag(ay), 2 | (1 << 3), zigzag(bx - ax), zigzag(by - ay)] {
            varint(&mut geometry, v);
        }
        let mut tags = Vec::new();
        varint(&mut tags, 0);
        varint(&mut tags, i as u64);
        let mut feature = Vec::new();
        field(&mut feature, 2, &tags);
        varint(&mut feature, 3 << 3);
        varint(&mut feature, 2); // a line
        field(&mut feature, 4, &geometry);
        field(&mut roads, 2, &feature);
    }
    field(&mut roads, 3, b"name");
    for (name, _) in &named {
        let mut value = Vec::new();
        field(&mut value, 1, name.as_bytes());
        field(&mut roads, 4, &value);
    }
    varint(&mut roads, 5 << 3);
    varint(&mut roads, 4096);
    let mut water = Vec::new();
    varint(&mut water, 15 << 3);
    varint(&mut water, 2);
    field(&mut water, 1, b"water");
    let corners = [(115.845, -31.965), (115.855, -31.965), (115.855, -31.958), (115.845, -31.958)];
    let points: Vec<(i64, i64)> = corners.iter().map(|c| in_tile(c.0, c.1, z, x, y)).collect();
    let mut geometry = Vec::new();
    varint(&mut geometry, 9);
    varint(&mut geometry, zigzag(points[0].0));
    varint(&mut geometry, zigzag(points[0].1));
    varint(&mut geometry, 2 | (3 << 3));
    for w in points.windows(2) {
        varint(&mut geometry, zigzag(w[1].0 - w[0].0));
        varint(&mut geometry, zigzag(w[1].1 - w[0].1));
    }
    varint(&mut geometry, 15);
    let mut feature = Vec::new();
    varint(&mut feature, 3 << 3);
    varint(&mut feature, 3); // a polygon
    field(&mut feature, 4, &geometry);
    field(&mut water, 2, &feature);
    varint(&mut water, 5 << 3);
    varint(&mut water, 4096);
    let mut tile = Vec::new();
    field(&mut tile, 3, &water);
    field(&mut tile, 3, &roads);
    tile
}

/// A PMTiles archive of [`area_tiles`], each drawn by `draw`, written as the `pmtiles`
/// crate writes one.
fn write_archive(path: &std::path::Path, kind: pmtiles::TileType, draw: impl Fn(u8, u32, u32) -> Vec<u8>) {
    let file = std::fs::File::create(path).expect("archive file");
    let mut writer = pmtiles::PmTilesWriter::new(kind)
        .min_zoom(*ZOOMS.start())
        .max_zoom(*ZOOMS.end())
        .bounds(AREA.0, AREA.1, AREA.2, AREA.3)
        .create(file)
        .expect("a writer");
    let mut tiles = area_tiles();
    tiles.sort_by_key(|&(z, x, y)| {
        pmtiles::TileId::from(pmtiles::TileCoord::new(z, x, y).expect("coord")).value()
    });
    for (z, x, y) in tiles {
        writer.add_tile(pmtiles::TileCoord::new(z, x, y).expect("coord"), &draw(z, x, y)).expect("a tile");
    }
    writer.finalize().expect("written");
}

#[derive(Clone, Default)]
struct Tiles {
    asked: Arc<Mutex<Vec<(u32, u32, u32)>>>,
    down: Arc<AtomicBool>,
}

impl Tiles {
    fn asked(&self) -> Vec<(u32, u32, u32)> {
        self.asked.lock().expect("tiles").clone()
    }
}

async fn tile(State(tiles): State<Tiles>, Path((z, x, y)): Path<(u32, u32, u32)>) -> Response {
    if tiles.down.load(Ordering::SeqCst) {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    tiles.asked.lock().expect("tiles").push((z, x, y));
    ([(header::CONTENT_TYPE, "image/png")], tile_png(z, x, y)).into_response()
}

/// A tile service on 127.0.0.1: its URL template and what it was asked.
async fn tile_service() -> (String, Tiles) {
    let tiles = Tiles::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let address = listener.local_addr().expect("address");
    let app =
        axum::Router::new().route("/tiles/{z}/{x}/{y}", axum::routing::get(tile)).with_state(tiles.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}/tiles/{{z}}/{{x}}/{{y}}"), tiles)
}

/// The largest distance, in CSS pixels, between where the page's station layer and where the
/// tiles put each of a few places in view: the view's own centre and four points around it,
/// and Perth's GPO and Fremantle when in view (never none: the centre always is).
async fn misalignment(client: &Client) -> f64 {
    let far = run(
        client,
        "const svg = document.getElementById('map');
         const v = window.wafuelState.view;
         const places = [[115.8613, -31.9523], [115.7439, -32.0569]];
         for (const [fx, fy] of [[0.5, 0.5], [0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]]) {
           places.push(wafuelTiles.unproject(v.x + v.w * fx, v.y + v.h * fy));
         }
         const m = svg.getScreenCTM();
         let worst = 0;
         let checked = 0;
         for (const [lng, lat] of places) {
           const [x, y] = wafuelTiles.project(lng, lat);
           if (x < v.x || x > v.x + v.w || y < v.y || y > v.y + v.h) continue;
           const p = new DOMPoint(x, y).matrixTransform(m);
           const t = wafuelTiles.point(lng, lat);
           worst = Math.max(worst, Math.hypot(p.x - t[0], p.y - t[1]));
           checked += 1;
         }
         return checked >= 5 ? worst : -1;",
    )
    .await;
    let far = far.as_f64().expect("a distance");
    assert!(far >= 0.0, "fewer than five places in view to compare");
    far
}

/// The map's "Perth" button, by the keyboard.
async fn perth_by_keyboard(client: &Client) {
    let perth = client.find(Locator::Css("button[data-view=perth]")).await.expect("Perth");
    perth.send_keys(&Key::Enter.to_string()).await.expect("Enter");
    wait_until(client, "return window.wafuelState.view.w < 100", "the Perth view").await;
}

/// "+" on a focused dot, `times` times.
async fn zoom_in_by_keyboard(client: &Client, times: usize) {
    for _ in 0..times {
        // The dot focused anew each time: a zoom draws the dots again.
        run(client, "document.querySelector('#dots [tabindex]').focus(); return true").await;
        let focused = client.active_element().await.expect("a focused dot");
        focused.send_keys("+").await.expect("+");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// The view as `[x, y, w]` in map units.
async fn view(client: &Client) -> [f64; 3] {
    let v = run(
        client,
        "return [window.wafuelState.view.x, window.wafuelState.view.y, window.wafuelState.view.w]",
    )
    .await;
    let n = |i: usize| v[i].as_f64().expect("a number");
    [n(0), n(1), n(2)]
}

/// One key to whatever has the focus, and what has it after the page drew again.
async fn press(client: &Client, key: &str) -> String {
    client.active_element().await.expect("a focused element").send_keys(key).await.expect("key");
    tokio::time::sleep(std::time::Duration::from_millis(120)).await;
    run(client, "const a = document.activeElement; return a.id || a.tagName.toLowerCase()")
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The map itself takes the focus: arrows pan a quarter of the view and ask the tiles there,
/// plus and minus zoom; moved past every station, by the map's keys or a dot's, the focus
/// stays on the map and its keys still move it.
async fn map_by_keyboard(client: &Client, tiles: &Tiles) {
    run(client, "document.getElementById('map').focus(); return true").await;
    let focused = run(client, "return document.activeElement.id").await;
    assert_eq!(focused, json!("map"), "the map itself takes the focus");
    let [x, y, w] = view(client).await;
    let asked = tiles.asked().len();
    assert_eq!(press(client, &Key::Right.to_string()).await, "map");
    let [x1, y1, w1] = view(client).await;
    assert!((x1 - (x + 0.25 * w)).abs() < 1e-6 && (y1 - y).abs() < 1e-6 && w1 == w, "{x},{y} to {x1},{y1}");
    assert_eq!(press(client, &Key::Down.to_string()).await, "map");
    let [_, y2, _] = view(client).await;
    let h = w * 2400.0 / 1700.0;
    assert!((y2 - (y1 + 0.25 * h)).abs() < 1e-6, "{y1} to {y2}");
    // Panned on past the tiles held around the view, the map asks the ones now in view.
    for _ in 0..12 {
        if tiles.asked().len() > asked {
            break;
        }
        assert_eq!(press(client, &Key::Right.to_string()).await, "map");
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    assert!(tiles.asked().len() > asked, "panning asked the tiles now in view");
    assert_eq!(press(client, "+").await, "map");
    let [_, _, zoomed] = view(client).await;
    assert!((zoomed - w * 0.67).abs() < 1e-6, "+ zooms in: {w} to {zoomed}");
    assert_eq!(press(client, "-").await, "map");
    let [_, _, back] = view(client).await;
    assert!((back - zoomed * 1.5).abs() < 1e-6, "− zooms out: {zoomed} to {back}");
    // Out to sea, west of every station, by the map's own keys.
    for _ in 0..24 {
        assert_eq!(press(client, &Key::Left.to_string()).await, "map", "the focus stays on the map");
    }
    let dots = run(client, "return document.querySelectorAll('#dots circle').length").await;
    assert_eq!(dots, json!(0), "no station in view out at sea");
    // East again until the coast's stations are in view, then west past every dot by a
    // dot's own keys.
    for _ in 0..24 {
        press(client, &Key::Right.to_string()).await;
        if run(client, "return document.querySelectorAll('#dots circle').length > 0").await == json!(true) {
            break;
        }
    }
    wait_until(
        client,
        "return document.querySelectorAll('#dots circle').length > 0",
        "stations back in view",
    )
    .await;
    run(client, "document.querySelector('#dots [tabindex=\"0\"]').focus(); return true").await;
    let mut last = String::new();
    for _ in 0..80 {
        last = press(client, &Key::Left.to_string()).await;
        assert!(last == "map" || last == "circle", "the focus fell to {last}");
        if last == "map" {
            break;
        }
    }
    assert_eq!(last, "map", "past the last dot the focus is on the map");
    let [before, ..] = view(client).await;
    press(client, &Key::Left.to_string()).await;
    let [after, ..] = view(client).await;
    assert!(after < before, "the map's keys still move it: {before} to {after}");
}

/// No request but to `allowed` (URL prefixes), axe-core clean, no console error; and the
/// screenshot for docs/.
async fn nothing_beyond_and_clean(client: &Client, driver: &Driver, allowed: &[&str], screenshot: &str) {
    let outside = run(
        client,
        &format!(
            "const allowed = {}; return performance.getEntriesByType('resource').map(e => e.name).filter(n => !allowed.some(a => n.startsWith(a)))",
            json!(allowed)
        ),
    )
    .await;
    assert_eq!(outside, json!([]), "requests beyond {allowed:?}");
    let violations = axe_violations(client).await;
    assert!(violations.is_empty(), "axe-core over the street map: {violations:#?}");
    run(client, "window.scrollTo(0, 0); return true").await;
    save_screenshot(client, screenshot).await;
    let errors = console_errors(client, driver).await;
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

fn zooms(asked: &[(u32, u32, u32)]) -> Vec<u32> {
    let mut z: Vec<u32> = asked.iter().map(|t| t.0).collect();
    z.sort_unstable();
    z.dedup();
    z
}

#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn the_explorer_on_a_street_map() {
    let (template, tiles) = tile_service().await;
    let port = free_port();
    let credit = "© wafuel test tiles";
    let _demo = demo_at_with(
        port,
        this_morning(),
        &["--no-import", "--map-tiles", &template, "--map-attribution", credit, "--map-max-zoom", "18"],
    );
    let base = format!("http://127.0.0.1:{port}");
    let described = api(&base, "/explore/map.json").await;
    assert_eq!(
        described,
        json!({ "mode": "raster", "tiles": template, "attribution": credit, "maxZoom": 18 })
    );
    crate::support::assert_valid("ExplorerMap", &described);
    // The page lets the tile service's images in, and sends it this site's origin only.
    let page = http().get(format!("{base}/explore")).send().await.expect("page");
    let tile_origin = template.split("/tiles/").next().expect("origin").to_string();
    let csp = page.headers()["content-security-policy"].to_str().expect("text").to_string();
    assert!(csp.ends_with(&format!("; img-src 'self' data: {tile_origin}")), "{csp}");
    assert_eq!(page.headers()["referrer-policy"], "strict-origin-when-cross-origin");

    let driver = start_driver();
    let client = browser(&driver, 1366, 900, false).await;
    allow_location(&client, &driver, false).await;
    client.goto(&format!("{base}/explore")).await.expect("page loads");
    wait_until(
        &client,
        "return document.querySelectorAll('#dots circle').length > 0
           && document.querySelectorAll('.tiles img.leaflet-tile-loaded').length > 0
           && document.getElementById('map').classList.contains('tiled')",
        "stations over loaded tiles",
    )
    .await;
    assert!(!tiles.asked().is_empty(), "the tile service was asked");
    let shown = run(
        &client,
        "const c = document.getElementById('map-attribution'); const r = c.getBoundingClientRect();
         const frame = document.querySelector('.map-frame').getBoundingClientRect();
         return [c.textContent, r.width > 0 && r.height > 0 && r.bottom <= frame.bottom + 1 && r.right <= frame.right + 1,
                 getComputedStyle(c).visibility]",
    )
    .await;
    assert_eq!(shown, json!([credit, true, "visible"]), "the attribution is on the map");

    // Perth by the keyboard: the view's button, then "+" on a focused dot, three times; each
    // move asks for tiles at a deeper zoom, and the dots stay on their places of the tiles.
    perth_by_keyboard(&client).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let at_perth = zooms(&tiles.asked());
    assert!(misalignment(&client).await < 1.5, "dots on their places at Perth");
    zoom_in_by_keyboard(&client, 3).await;
    wait_until(&client, "return window.wafuelState.view.w < 30", "zoomed in by the keyboard").await;
    let deepest = |z: &[u32]| z.last().copied().unwrap_or_default();
    wait_until(
        &client,
        &format!("return [...document.querySelectorAll('.tiles img.leaflet-tile-loaded')].some(i => /\\/tiles\\/({}|{}|{})\\//.test(i.src))", deepest(&at_perth) + 1, deepest(&at_perth) + 2, deepest(&at_perth) + 3),
        "deeper tiles drawn",
    )
    .await;
    assert!(
        deepest(&zooms(&tiles.asked())) > deepest(&at_perth),
        "{:?} after {at_perth:?}",
        zooms(&tiles.asked())
    );
    let off = misalignment(&client).await;
    assert!(off < 1.5, "dots {off} px off their places after zooming in");

    // Every dot still opens its card over the tiles.
    let picked = run(
        &client,
        "const f = document.querySelector('.map-frame').getBoundingClientRect();
         const inside = (c) => { const r = c.getBoundingClientRect(); const x = r.left + r.width / 2, y = r.top + r.height / 2;
           return x > f.left + 20 && x < f.right - 20 && y > f.top + 20 && y < f.bottom - 40; };
         const dot = [...document.querySelectorAll('#dots circle')].find(inside);
         if (!dot) return false; dot.setAttribute('data-picked', ''); return true",
    )
    .await;
    assert_eq!(picked, json!(true), "a dot in view");
    let before = run(&client, "return window.wafuelState.view.w").await;
    click(&client, Locator::Css("#dots circle[data-picked]"), "a dot over the tiles").await;
    wait_until(
        &client,
        &format!("return !!document.getElementById('station-name') || window.wafuelState.view.w < {before}"),
        "its card, or its group zoomed into",
    )
    .await;

    map_by_keyboard(&client, &tiles).await;

    // Nothing left 127.0.0.1 (Leaflet's blanked tiles are inline images, no request).
    nothing_beyond_and_clean(&client, &driver, &["http://127.0.0.1:", "data:"], "explore-street-map.png")
        .await;

    // On a phone: the tiles under the dots, the attribution on the map, nothing wider than it.
    let phone = browser(&driver, 390, 844, true).await;
    allow_location(&phone, &driver, false).await;
    phone.goto(&format!("{base}/explore")).await.expect("page loads");
    wait_until(
        &phone,
        "return document.querySelectorAll('#dots circle').length > 0
           && document.querySelectorAll('.tiles img.leaflet-tile-loaded').length > 0",
        "tiles under the dots on a phone",
    )
    .await;
    let fits = run(
        &phone,
        "const c = document.getElementById('map-attribution').getBoundingClientRect();
         const f = document.querySelector('.map-frame').getBoundingClientRect();
         return [c.width > 0 && c.left >= f.left - 1 && c.right <= f.right + 1,
                 document.documentElement.scrollWidth - window.innerWidth <= 0]",
    )
    .await;
    assert_eq!(fits, json!([true, true]), "the attribution on the phone's map, no overflow");
    phone.close().await.expect("closed");

    // The tile service down: a new visit still draws every dot and the list, over the
    // coastline again.
    tiles.down.store(true, Ordering::SeqCst);
    client.refresh().await.expect("reloaded");
    wait_until(
        &client,
        "return document.querySelectorAll('#dots circle').length > 0 && document.querySelectorAll('#station-list li').length > 0
           && !document.getElementById('map').classList.contains('tiled')",
        "the dots and the list, the coastline back",
    )
    .await;
    client.close().await.expect("closed");
}

/// The app over the test's origin with `--map-pmtiles` as `serve` opens it.
async fn with_archive(path: &std::path::Path, dir: tempfile::TempDir) -> crate::support::TestApp {
    use wafuel_web::http::street_map::{ArchiveTiles, BaseMap};
    let archive =
        Arc::new(wafuel_service::map_tiles::MapArchive::open(path).await.expect("the archive opens"));
    let base_map =
        BaseMap::Archive(ArchiveTiles::new(&archive, "© wafuel test streets").expect("attribution"));
    let (sim, clock) = crate::support::origin_at(crate::support::fixture_morning(), Default::default()).await;
    let store = crate::support::sqlite_store(&dir).await;
    let config = wafuel::app::AppConfig {
        base_map,
        map_archive: Some(archive),
        ..crate::support::app_config(&sim, &clock, store, None)
    };
    crate::support::TestApp::start(config, sim, clock, dir).await
}

#[tokio::test]
async fn map_tiles_come_from_the_archive_with_validators_and_404_for_no_tile() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("perth-raster.pmtiles");
    write_archive(&path, pmtiles::TileType::Png, |z, x, y| tile_png(u32::from(z), x, y));
    let app = with_archive(&path, dir).await;
    let (x, y) = tile_of(115.86, -31.95, 14);
    let uri = format!("/map/tiles/14/{x}/{y}");
    let r = app.get(&uri).await;
    assert_eq!(r.status, 200, "{uri}");
    assert_eq!(r.header("content-type"), "image/png");
    assert_eq!(r.body.as_ref(), tile_png(14, x, y).as_slice(), "the archive's own tile");
    assert_eq!(r.header("cache-control"), "public, max-age=86400");
    let etag = r.header("etag").to_string();
    assert!(etag.starts_with('"') && etag.ends_with(&format!("-14-{x}-{y}\"")), "{etag}");
    let again = app.call("GET", &uri, &[("if-none-match", &etag)]).await;
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    let head = app.call("HEAD", &uri, &[]).await;
    assert_eq!((head.status, head.body.len()), (200, 0));
    assert_ne!(
        app.get(&format!("/map/tiles/14/{}/{y}", x + 1)).await.header("etag"),
        etag,
        "one ETag per tile"
    );
    for bad in [
        "/map/tiles/9/0/0".to_string(),
        "/map/tiles/16/0/0".to_string(),
        "/map/tiles/99/1/1".to_string(),
        format!("/map/tiles/014/{x}/{y}"),
        format!("/map/tiles/14/{x}/{y}.png"),
        format!("/map/tiles/14/+{x}/{y}"),
        // A digit percent-encoded (%31 is 1) is not a plain digit: one URL per tile.
        format!("/map/tiles/%3114/{x}/{y}").replacen("%3114", "%314", 1),
        "/map/tiles/14/99999999999/1".to_string(),
        "/map/tiles/a/b/c".to_string(),
        "/map/tiles/14/1".to_string(),
        "/map/tiles/14/16384/0".to_string(),
    ] {
        assert_eq!(app.get(&bad).await.status, 404, "{bad}");
    }
    // A tile of the pyramid beyond the archive's area: empty, and cacheable like a tile.
    let beyond = app.get("/map/tiles/14/0/0").await;
    assert_eq!((beyond.status, beyond.body.len()), (204, 0));
    assert_eq!(beyond.header("cache-control"), "public, max-age=86400");
    let described = app.get("/explore/map.json").await.json();
    assert_eq!(
        described,
        json!({ "mode": "pmtiles", "format": "png", "tiles": "/map/tiles/{z}/{x}/{y}",
                "attribution": "© wafuel test streets", "minZoom": 10, "maxZoom": 15 })
    );
    crate::support::assert_valid("ExplorerMap", &described);
    // Everything from this origin: no image source beyond it, no referrer.
    let page = app.get("/explore").await;
    assert!(page.header("content-security-policy").ends_with("; img-src 'self' data:"));
    assert_eq!(page.header("referrer-policy"), "no-referrer");
    assert!(std::str::from_utf8(&page.body).expect("utf8").contains("/explore/tiles.js?v="));

    // Vector tiles are kept gzip-compressed in an archive and served as they were drawn.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("perth-streets.pmtiles");
    write_archive(&path, pmtiles::TileType::Mvt, vector_tile);
    let vector = with_archive(&path, dir).await;
    let r = vector.get(&uri).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), "application/vnd.mapbox-vector-tile");
    assert_eq!(r.body.as_ref(), vector_tile(14, x, y).as_slice());
    assert_eq!(vector.get("/explore/map.json").await.json()["format"], "mvt");

    // No archive: no tiles.
    let none = crate::support::TestApp::new().await;
    assert_eq!(none.get(&uri).await.status, 404);
}

#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn the_explorer_on_its_own_vector_map() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("perth-streets.pmtiles");
    write_archive(&path, pmtiles::TileType::Mvt, vector_tile);
    let port = free_port();
    let credit = "© wafuel test streets";
    let archive = path.to_str().expect("a path");
    let _demo = demo_at_with(
        port,
        this_morning(),
        &["--no-import", "--map-pmtiles", archive, "--map-attribution", credit],
    );
    let base = format!("http://127.0.0.1:{port}");
    assert_eq!(api(&base, "/explore/map.json").await["format"], "mvt");
    let driver = start_driver();
    let client = browser(&driver, 1366, 900, false).await;
    allow_location(&client, &driver, false).await;
    client.goto(&format!("{base}/explore")).await.expect("page loads");
    wait_until(&client, "return document.querySelectorAll('#dots circle').length > 0", "stations").await;
    // All WA is below the archive's zooms: the coastline, and no tile asked.
    let asked =
        "return performance.getEntriesByType('resource').filter(e => e.name.includes('/map/tiles/')).length";
    assert_eq!(run(&client, asked).await, json!(0), "no tile below the archive's zooms");
    assert_eq!(
        run(&client, "return document.getElementById('map').classList.contains('tiled')").await,
        json!(false)
    );

    // Near Perth's centre (the address keeps it, as a shared link would), then the map's own
    // "+" by the keyboard, to the zooms where streets have their names.
    client.goto(&format!("{base}/explore#near=-31.95,115.86")).await.expect("near Perth");
    client.refresh().await.expect("reloaded");
    wait_until(
        &client,
        "return !!window.wafuelState.near && window.wafuelState.view.w < 40",
        "the view near Perth's centre",
    )
    .await;
    let plus = client.find(Locator::Css("button[data-zoom=in]")).await.expect("+");
    for _ in 0..5 {
        plus.send_keys(&Key::Enter.to_string()).await.expect("Enter");
    }
    wait_until(
        &client,
        "return document.querySelectorAll('.tiles canvas[data-drawn]').length > 0
           && document.getElementById('map').classList.contains('tiled')",
        "vector tiles drawn under the dots",
    )
    .await;
    // The streets are drawn: a drawn tile has the street's white and the river's blue.
    let colours = run(
        &client,
        "const seen = new Set();
         for (const c of document.querySelectorAll('.tiles canvas[data-drawn]')) {
           const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
           for (let i = 0; i < d.length; i += 4) {
             if (d[i] === 255 && d[i + 1] === 255 && d[i + 2] === 255) seen.add('street');
             if (d[i] === 0xaa && d[i + 1] === 0xd3 && d[i + 2] === 0xdf) seen.add('water');
           }
         }
         return [...seen].sort()",
    )
    .await;
    assert_eq!(colours, json!(["street", "water"]), "streets and the river on the tiles");
    let off = misalignment(&client).await;
    assert!(off < 1.5, "dots {off} px off their places on the vector map");
    let credit_shown = run(&client, "return document.getElementById('map-attribution').textContent").await;
    assert_eq!(credit_shown, json!(credit));
    // Everything from wafuel itself.
    nothing_beyond_and_clean(&client, &driver, &[&base], "explore-street-map-pmtiles.png").await;
    client.close().await.expect("closed");
}

/// Every malformed archive is a start-up error naming the file, never a panic: too short for
/// a header, cut inside its directory, or a root directory claiming more than the file holds.
#[tokio::test]
async fn malformed_archives_are_start_up_errors_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let good = dir.path().join("good.pmtiles");
    write_archive(&good, pmtiles::TileType::Png, |z, x, y| tile_png(u32::from(z), x, y));
    let bytes = std::fs::read(&good).expect("read");
    let mut claims = bytes.clone();
    // The header's root directory length (bytes 16..24, little-endian): 2^60.
    claims[16..24].copy_from_slice(&(1u64 << 60).to_le_bytes());
    for (name, body) in [
        ("short.pmtiles", vec![0u8; 127]),
        ("cut.pmtiles", bytes[..140].to_vec()),
        ("claims.pmtiles", claims),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, body).expect("write");
        let err = wafuel_service::map_tiles::MapArchive::open(&path).await.expect_err(name);
        assert!(err.to_string().contains(&path.display().to_string()), "{name}: {err}");
    }
}

/// A tile that inflates past 64 MiB is refused, not served whole.
#[tokio::test]
async fn a_tile_inflating_past_the_bound_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bomb.pmtiles");
    let (bx, by) = tile_of(115.86, -31.95, 14);
    write_archive(&path, pmtiles::TileType::Mvt, |z, x, y| {
        if (z, x, y) == (14, bx, by) { vec![0u8; 65 * 1024 * 1024] } else { vector_tile(z, x, y) }
    });
    let app = with_archive(&path, dir).await;
    assert_ne!(app.get(&format!("/map/tiles/14/{bx}/{by}")).await.status, 200);
    assert_eq!(app.get(&format!("/map/tiles/14/{}/{by}", bx + 1)).await.status, 200, "the other tiles stay");
}

/// The archive replaced under a running `serve`: by a rename, the file opened is still read
/// whole; copied over in place and cut short, a tile is an error status and the process and
/// every other route live on (a memory map died of SIGBUS here).
#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn an_archive_changed_under_a_running_server_never_takes_it_down() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("perth.pmtiles");
    write_archive(&path, pmtiles::TileType::Png, |z, x, y| tile_png(u32::from(z), x, y));
    let sim = wafuel_sim::SimHandle::spawn(
        crate::support::local(),
        Arc::new(wafuel::app::SystemClock),
        Default::default(),
    )
    .await
    .expect("origin");
    let store = format!("sqlite://{}/w.sqlite3", dir.path().display());
    let archive = path.display().to_string();
    let serve = crate::process::serve_with(
        &store,
        &sim.feed_url(),
        &["--map-pmtiles", &archive, "--map-attribution", "© test"],
    );
    let get = |uri: String| {
        let base = serve.public.clone();
        async move { http().get(format!("{base}{uri}")).send().await.expect("an answer") }
    };
    let (x, y) = tile_of(115.86, -31.95, 14);
    let first = get(format!("/map/tiles/14/{x}/{y}")).await;
    assert_eq!(first.status(), 200);
    // Replaced by a rename (another file's tiles): the file opened is read, whole.
    let other = dir.path().join("other.pmtiles");
    write_archive(&other, pmtiles::TileType::Png, |z, x, y| tile_png(u32::from(z) + 1, x, y));
    std::fs::rename(&other, &path).expect("renamed over");
    let renamed = get(format!("/map/tiles/15/{}/{}", x * 2, y * 2)).await;
    assert_eq!(renamed.status(), 200);
    assert_eq!(renamed.bytes().await.expect("body").as_ref(), tile_png(15, x * 2, y * 2).as_slice());
    // The file opened, changed in place: the next tile not yet read is an error status.
    let serve_pid = serve.child.id();
    let fd_target = std::fs::read_dir(format!("/proc/{serve_pid}/fd"))
        .expect("fds")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| std::fs::read_link(p).is_ok_and(|t| t.to_string_lossy().contains("perth.pmtiles")))
        .expect("the served archive's descriptor");
    // Cut short through the server's own descriptor's file (the inode it reads).
    let held = std::fs::OpenOptions::new().write(true).open(&fd_target).expect("the held file");
    held.set_len(100).expect("truncated");
    let cut = get(format!("/map/tiles/15/{}/{}", x * 2 + 1, y * 2)).await;
    assert_ne!(cut.status(), 200, "a tile of a cut archive");
    assert!(cut.status().is_client_error() || cut.status().is_server_error());
    assert_eq!(get("/v1/status".into()).await.status(), 200, "every other route lives on");
}
