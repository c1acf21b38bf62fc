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
/// tiles put each of a few places in view (Perth's GPO, Fremantle, the view's own centre).
async fn misalignment(client: &Client) -> f64 {
    let far = run(
        client,
        "const svg = document.getElementById('map');
         const v = state.view;
         const places = [[115.8613, -31.9523], [115.7439, -32.0569]];
         const m = svg.getScreenCTM();
         let worst = 0;
         for (const [lng, lat] of places) {
           const [x, y] = wafuelTiles.project(lng, lat);
           if (x < v.x || x > v.x + v.w || y < v.y || y > v.y + v.h) continue;
           const p = new DOMPoint(x, y).matrixTransform(m);
           const t = wafuelTiles.point(lng, lat);
           worst = Math.max(worst, Math.hypot(p.x - t[0], p.y - t[1]));
         }
         return worst;",
    )
    .await;
    far.as_f64().expect("a distance")
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
    let perth = client.find(Locator::Css("button[data-view=perth]")).await.expect("Perth");
    perth.send_keys(&Key::Enter.to_string()).await.expect("Enter");
    wait_until(&client, "return state.view.w < 100", "the Perth view").await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let at_perth = zooms(&tiles.asked());
    assert!(misalignment(&client).await < 1.5, "dots on their places at Perth");
    for _ in 0..3 {
        // The dot focused anew each time: a zoom draws the dots again.
        run(&client, "document.querySelector('#dots [tabindex]').focus(); return true").await;
        let focused = client.active_element().await.expect("a focused dot");
        focused.send_keys("+").await.expect("+");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    wait_until(&client, "return state.view.w < 30", "zoomed in by the keyboard").await;
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
    let before = run(&client, "return state.view.w").await;
    click(&client, Locator::Css("#dots circle[data-picked]"), "a dot over the tiles").await;
    wait_until(
        &client,
        &format!("return !!document.getElementById('station-name') || state.view.w < {before}"),
        "its card, or its group zoomed into",
    )
    .await;

    // Nothing left 127.0.0.1 (Leaflet's blanked tiles are inline images, no request).
    let outside = run(
        &client,
        "return performance.getEntriesByType('resource').map(e => e.name).filter(n => !n.startsWith('http://127.0.0.1:') && !n.startsWith('data:'))",
    )
    .await;
    assert_eq!(outside, json!([]), "requests beyond 127.0.0.1");
    let violations = axe_violations(&client).await;
    assert!(violations.is_empty(), "axe-core over the street map: {violations:#?}");
    run(&client, "window.scrollTo(0, 0); return true").await;
    save_screenshot(&client, "explore-street-map.png").await;
    let errors = console_errors(&client, &driver).await;
    assert!(errors.is_empty(), "console errors: {errors:#?}");

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
