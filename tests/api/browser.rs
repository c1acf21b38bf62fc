//! The explorer page in a real browser: Debian's Chromium, driven over WebDriver by Debian's
//! chromedriver, against `wafuel demo` on random ports (with its clock set by `faketime` where
//! the hour matters). Each flow a visitor takes is driven as they would take it, on a desktop
//! (1366×900) and a phone (390×844): the card opened from the list or the map comes into view
//! with the focus; tomorrow before 14:30 says when it will be published; a lost server keeps
//! what is drawn behind one banner and recovers on its own; the map zooms without drifting or
//! trapping the wheel; the full list is reachable by keyboard; charts are readable on a phone
//! and have their numbers as text; axe-core finds nothing; nine fresh visits in one tab and
//! eight tabs at once all work (the page holds its event stream only while it is looked at);
//! a server that stops answering reaches the banner within the page's 15 s deadline.
//! Screenshots go to `target/browser/`.
//!
//! When Chromium, chromedriver, faketime or axe-core is missing this test fails and says how to
//! install them: `scripts/test` and `.ci/run` install all four, so it never passes by not
//! running.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use wafuel_sim::Faults;

use crate::process::{Running, established, event_streams, serve_from, start_command};
use crate::support::{http, origin_at, perth_wall_clock};

const CHROMIUM: &str = "/usr/bin/chromium";
const INSTALL: &str = "apt-get install chromium chromium-driver (scripts/test does it)";

/// A chromedriver process on a port of its choosing.
pub(crate) struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn start_driver() -> Driver {
    assert!(
        std::path::Path::new(CHROMIUM).exists(),
        "BROWSER TEST CANNOT RUN: {CHROMIUM} is missing; {INSTALL}"
    );
    let mut child = Command::new("chromedriver")
        .arg("--port=0")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("BROWSER TEST CANNOT RUN: chromedriver does not start ({e}); {INSTALL}"));
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let port = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("BROWSER TEST CANNOT RUN: chromedriver exited before it listened"))
            .expect("utf8");
        if let Some(rest) = line.split("started successfully on port ").nth(1) {
            break rest.trim_end_matches('.').to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Driver { child, url: format!("http://127.0.0.1:{port}") }
}

/// A desktop window, or a phone's screen (`phone`: device metrics, touch, a phone's user agent).
pub(crate) async fn browser(driver: &Driver, width: u32, height: u32, phone: bool) -> Client {
    let mut options = json!({
        "binary": CHROMIUM,
        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 format!("--window-size={width},{height}"), "--hide-scrollbars"],
    });
    if phone {
        options["mobileEmulation"] = json!({
            "deviceMetrics": { "width": width, "height": height, "pixelRatio": 2, "touch": true, "mobile": true },
        });
    }
    let mut caps = serde_json::Map::new();
    caps.insert("goog:chromeOptions".into(), options);
    caps.insert("goog:loggingPrefs".into(), json!({ "browser": "ALL" }));
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector).capabilities(caps).connect(&driver.url).await.unwrap_or_else(|e| {
        panic!("BROWSER TEST CANNOT RUN: Chromium does not start under chromedriver: {e}")
    })
}

/// Run `script` (a function body returning a value) until it returns true, or fail naming `what`.
pub(crate) async fn wait_until(client: &Client, script: &str, what: &str) {
    wait_within(client, script, what, Duration::from_secs(45)).await;
}

/// `wait_until` with its own limit.
async fn wait_within(client: &Client, script: &str, what: &str, limit: Duration) {
    let deadline = Instant::now() + limit;
    loop {
        let done = client.execute(script, vec![]).await.expect("script runs");
        if done == Value::Bool(true) {
            return;
        }
        assert!(Instant::now() < deadline, "the page never showed {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub(crate) async fn run(client: &Client, script: &str) -> Value {
    client.execute(script, vec![]).await.expect("script runs")
}

/// Console messages at error level since the last call (chromedriver's log endpoint).
pub(crate) async fn console_errors(client: &Client, driver: &Driver) -> Vec<String> {
    let session = client.session_id().await.expect("session").expect("a session id");
    let log: Value = http()
        .post(format!("{}/session/{session}/se/log", driver.url))
        .json(&json!({ "type": "browser" }))
        .send()
        .await
        .expect("chromedriver answers")
        .json()
        .await
        .expect("json");
    log["value"]
        .as_array()
        .expect("log entries")
        .iter()
        .filter(|e| e["level"] == "SEVERE")
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A Chrome DevTools command through chromedriver (location and permission emulation).
async fn cdp(client: &Client, driver: &Driver, cmd: &str, params: Value) {
    let session = client.session_id().await.expect("session").expect("a session id");
    let r = http()
        .post(format!("{}/session/{session}/goog/cdp/execute", driver.url))
        .json(&json!({ "cmd": cmd, "params": params }))
        .send()
        .await
        .expect("chromedriver answers");
    assert_eq!(r.status(), 200, "{cmd}: {}", r.text().await.unwrap_or_default());
}

pub(crate) async fn allow_location(client: &Client, driver: &Driver, allowed: bool) {
    let setting = if allowed { "granted" } else { "denied" };
    cdp(
        client,
        driver,
        "Browser.setPermission",
        json!({ "permission": { "name": "geolocation" }, "setting": setting }),
    )
    .await;
}

pub(crate) fn screenshot_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target").join("browser");
    std::fs::create_dir_all(&dir).expect("target/browser");
    dir
}

pub(crate) async fn save_screenshot(client: &Client, name: &str) {
    let png = client.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(screenshot_dir().join(name), png).expect("screenshot written");
}

pub(crate) async fn api(base: &str, path: &str) -> Value {
    let r = http()
        .get(format!("{base}{path}"))
        .header("accept", "application/vnd.api+json")
        .send()
        .await
        .expect("API answers");
    assert_eq!(r.status(), 200, "{path}");
    r.json().await.expect("json")
}

fn ids(doc: &Value) -> Vec<String> {
    doc["data"].as_array().expect("data").iter().map(|s| s["id"].as_str().expect("id").to_string()).collect()
}

/// A port free now, for a server that must come back on the same address after a restart.
/// It is taken below the range the kernel hands out for port 0 and for outgoing connections
/// (`net.ipv4.ip_local_port_range`): every other test listens on port 0, so a port from that
/// range could be taken by another test's server between this check and the demo's bind.
pub(crate) fn free_port() -> u16 {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    let below = 10_000..low.max(10_001);
    // A start that differs between runs and processes, then the first port that binds.
    let start = (std::process::id() as u64 ^ jiff::Timestamp::now().subsec_nanosecond() as u64)
        % u64::from(below.end - below.start);
    (0..u64::from(below.end - below.start))
        .map(|k| below.start + ((start + k) % u64::from(below.end - below.start)) as u16)
        .find(|port| std::net::TcpListener::bind(("127.0.0.1", *port)).is_ok())
        .expect("a free port below the ephemeral range")
}

/// libfaketime, preloaded straight into `wafuel` (the `faketime` wrapper forks, and killing it
/// would leave the server running).
fn libfaketime() -> PathBuf {
    let found = std::fs::read_dir("/usr/lib").ok().and_then(|dirs| {
        dirs.flatten()
            .map(|d| d.path().join("faketime/libfaketimeMT.so.1"))
            .chain([PathBuf::from("/usr/lib/faketime/libfaketimeMT.so.1")])
            .find(|p| p.exists())
    });
    found.unwrap_or_else(|| {
        panic!(
            "BROWSER TEST CANNOT RUN: libfaketime is missing; apt-get install faketime (scripts/test does it)"
        )
    })
}

/// `wafuel demo` on `port` with its clock starting at `perth` (Perth civil time), by
/// libfaketime: the hour decides whether tomorrow is published, so the test chooses it.
pub(crate) fn demo_at(port: u16, perth: jiff::civil::DateTime) -> Running {
    demo_at_with(port, perth, &[])
}

/// [`demo_at`] with more of `demo`'s flags.
pub(crate) fn demo_at_with(port: u16, perth: jiff::civil::DateTime, extra: &[&str]) -> Running {
    let utc = perth
        .to_zoned(jiff::tz::TimeZone::get("Australia/Perth").expect("tz"))
        .expect("a Perth time")
        .timestamp()
        .strftime("%Y-%m-%d %H:%M:%S")
        .to_string();
    let mut command = Command::new(env!("CARGO_BIN_EXE_wafuel"));
    command
        .args(["demo", "--listen", &format!("127.0.0.1:{port}"), "--admin-listen", "127.0.0.1:0"])
        .args(extra)
        .env("LD_PRELOAD", libfaketime())
        .env("FAKETIME", format!("@{utc}"))
        .env("TZ", "UTC")
        // Only the calendar is faked: timers and timeouts keep the real monotonic clock.
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .stderr(Stdio::null());
    start_command(command)
}

/// Today in Perth at 10:00: prices for today are out, tomorrow's are not (FuelWatch publishes
/// them at about 14:30).
pub(crate) fn this_morning() -> jiff::civil::DateTime {
    perth_wall_clock().date().at(10, 0, 0, 0)
}

/// axe-core's violations for the page as it stands (installed by scripts/test, never committed).
pub(crate) async fn axe_violations(client: &Client) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/axe/node_modules/axe-core/axe.min.js");
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("BROWSER TEST CANNOT RUN: {} is missing ({e}); scripts/test installs axe-core", path.display())
    });
    client.execute(&format!("{source}\nreturn typeof axe;"), vec![]).await.expect("axe loads");
    let result = client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             axe.run(document).then(
               r => done(r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
                 nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ' → ' + n.failureSummary) }))),
               e => done([{ id: 'axe-error', nodes: [String(e)] }]));",
            vec![],
        )
        .await
        .expect("axe runs");
    result.as_array().cloned().unwrap_or_default()
}

/// Click what `locator` finds (a real pointer click through WebDriver), or fail naming `what`.
/// Touch points as DevTools takes them.
fn touches(points: &[(f64, f64)]) -> Value {
    Value::Array(points.iter().enumerate().map(|(i, (x, y))| json!({ "x": x, "y": y, "id": i })).collect())
}

/// A gesture of one or two fingers from `from` to `to` in `steps` moves, then lifted.
async fn gesture(client: &Client, driver: &Driver, from: &[(f64, f64)], to: &[(f64, f64)], steps: u32) {
    cdp(
        client,
        driver,
        "Input.dispatchTouchEvent",
        json!({ "type": "touchStart", "touchPoints": touches(from) }),
    )
    .await;
    for step in 1..=steps {
        let t = f64::from(step) / f64::from(steps);
        let at: Vec<(f64, f64)> =
            from.iter().zip(to).map(|(a, b)| (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t)).collect();
        cdp(
            client,
            driver,
            "Input.dispatchTouchEvent",
            json!({ "type": "touchMove", "touchPoints": touches(&at) }),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(16)).await;
    }
    cdp(client, driver, "Input.dispatchTouchEvent", json!({ "type": "touchEnd", "touchPoints": [] })).await;
}

async fn pinch_zooms_the_map(client: &Client, driver: &Driver) {
    let rect = run(
        client,
        "const m = document.getElementById('map'); m.scrollIntoView({ block: 'center' });
         const r = m.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2, r.width]",
    )
    .await;
    let [cx, cy, width] = [0, 1, 2].map(|i| rect[i].as_f64().expect("a number"));
    let width_of_view =
        "return parseFloat(document.getElementById('map').getAttribute('viewBox').split(' ')[2])";
    let before = run(client, width_of_view).await.as_f64().expect("a viewBox");
    // One finger sideways: the page's to scroll (pan-y), the map stays put.
    gesture(client, driver, &[(cx - 40.0, cy)], &[(cx + 40.0, cy)], 8).await;
    let after_one = run(client, width_of_view).await.as_f64().expect("a viewBox");
    assert!((after_one - before).abs() < 1e-6, "one finger moved the map: {before} → {after_one}");
    // Two fingers from 40 px apart to most of the map's width apart: about 5× closer.
    let spread = width * 0.4;
    gesture(client, driver, &[(cx - 20.0, cy), (cx + 20.0, cy)], &[(cx - spread, cy), (cx + spread, cy)], 12)
        .await;
    wait_until(
        client,
        &format!(
            "return parseFloat(document.getElementById('map').getAttribute('viewBox').split(' ')[2]) < {}",
            before / 2.0
        ),
        "the map zoomed in by a pinch",
    )
    .await;
}

/// The map's written words as drawn: how many prices and place names, and each clash (two
/// labels' boxes overlapping, or a label on a dot not its own), in CSS pixels with half a
/// pixel's grace.
pub(crate) async fn map_labels(client: &Client) -> (u64, u64, Vec<String>) {
    let measured = run(
        client,
        "const labels = [...document.querySelectorAll('#dots text.price-label, #labels text.place')]
           .map(t => ({ text: t.textContent, key: t.dataset.key || null, r: t.getBoundingClientRect() }));
         const dots = [...document.querySelectorAll('#dots circle')].map(c => {
           const r = c.getBoundingClientRect(); return { key: c.dataset.key, x: r.left + r.width / 2, y: r.top + r.height / 2, r: r.width / 2 }; });
         const g = 0.5;
         const clashes = [];
         labels.forEach((l, i) => {
           const a = l.r;
           for (const m of labels.slice(i + 1)) {
             const b = m.r;
             if (a.left + g < b.right && b.left + g < a.right && a.top + g < b.bottom && b.top + g < a.bottom) clashes.push(`${l.text} over ${m.text}`);
           }
           for (const d of dots) {
             if (d.key === l.key) continue;
             const nx = Math.min(Math.max(d.x, a.left), a.right), ny = Math.min(Math.max(d.y, a.top), a.bottom);
             if (Math.hypot(d.x - nx, d.y - ny) < d.r - g) clashes.push(`${l.text} under the dot ${d.key}`);
           }
         });
         return [document.querySelectorAll('#dots text.price-label').length, document.querySelectorAll('#labels text.place').length, clashes]",
    )
    .await;
    let count = |i: usize| measured[i].as_u64().unwrap_or_default();
    let clashes =
        measured[2].as_array().map(|c| c.iter().filter_map(|v| v.as_str().map(String::from)).collect());
    (count(0), count(1), clashes.unwrap_or_default())
}

pub(crate) async fn click(client: &Client, locator: Locator<'_>, what: &str) {
    let found = client.find(locator).await.unwrap_or_else(|e| panic!("no {what} on the page: {e}"));
    found.click().await.unwrap_or_else(|e| panic!("{what} cannot be clicked: {e}"));
}

/// The card's heading is inside the viewport and the focus is inside the card.
async fn assert_card_in_view(client: &Client, name: &Value, device: &str) {
    wait_until(
        client,
        &format!(
            "const h = document.querySelector('#card h3');
             return !!h && h.textContent === {name} && document.getElementById('card').contains(document.activeElement)",
        ),
        &format!("the card of {name} with the focus ({device})"),
    )
    .await;
    let placed = run(
        client,
        "const r = document.querySelector('#card h3').getBoundingClientRect();
         return { top: r.top, bottom: r.bottom, height: innerHeight, focused: document.activeElement.tagName }",
    )
    .await;
    let (top, bottom, height) = (
        placed["top"].as_f64().expect("top"),
        placed["bottom"].as_f64().expect("bottom"),
        placed["height"].as_f64().expect("h"),
    );
    assert!(top >= 0.0 && bottom <= height, "{device}: the card's heading is out of view: {placed}");
}

/// Stations the map stands for: one per station dot, a group's count for a group.
const MAP_STATIONS: &str =
    "return [...document.querySelectorAll('#dots circle')].reduce((n, c) => n + Number(c.dataset.count), 0)";

/// Errors the page shows: the banner and anything styled as an error, if visible.
const VISIBLE_ERRORS: &str = "return [...document.querySelectorAll('[role=alert], .error')]
     .filter(e => !e.hidden && e.offsetParent !== null).map(e => e.textContent)";

#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn the_explorer_on_a_desktop() {
    let port = free_port();
    let mut demo = Some(demo_at(port, this_morning()));
    let base = format!("http://127.0.0.1:{port}");
    let driver = start_driver();

    // First visit with the location refused: two API requests draw the map and the market.
    let client = browser(&driver, 1366, 900, false).await;
    allow_location(&client, &driver, false).await;
    client.goto(&format!("{base}/explore")).await.expect("page loads");
    wait_until(&client, "return document.querySelectorAll('#dots circle').length > 0", "stations").await;
    wait_until(
        &client,
        "return !!document.querySelector('#market-chart polyline.market-median')",
        "the market chart",
    )
    .await;
    // The wholesale price under the retail band, and the latest margin in words, as the
    // statistics give them.
    wait_until(
        &client,
        "return !!document.querySelector('#market-chart polyline.market-wholesale')
           && !document.getElementById('margin').hidden && !document.getElementById('wholesale-key').hidden",
        "the wholesale line and the margin",
    )
    .await;
    let stats = api(&base, "/v1/stats?product=1").await;
    let latest = stats["data"]["attributes"]["days"]
        .as_array()
        .and_then(|days| days.iter().rev().find(|d| d["margin"].is_number()).cloned())
        .expect("a day with a margin");
    let margin = run(&client, "return document.getElementById('margin').textContent").await;
    let margin = margin.as_str().expect("text");
    let wholesale = latest["wholesale"].as_f64().expect("wholesale");
    let above = latest["margin"].as_f64().expect("margin");
    assert!(
        margin.contains("Perth's terminal gate price") && margin.contains(&format!("{wholesale:.2} c/L")),
        "{margin}"
    );
    assert!(
        margin.contains(&format!("{:.1} c/L {}", above.abs(), if above >= 0.0 { "above" } else { "below" })),
        "{margin}"
    );
    let all = api(&base, "/v1/stations?product=1&day=today").await;
    let stations = all["data"].as_array().expect("data").len() as u64;
    assert_eq!(run(&client, MAP_STATIONS).await.as_u64(), Some(stations), "every station is on the map");
    let groups = run(&client, "return document.querySelectorAll('#dots circle.group').length").await;
    assert!(groups.as_u64().is_some_and(|g| g > 0), "at state zoom nearby stations are grouped");
    // Fill now or wait, at the top of the near-me panel, as the API advises, with its accuracy
    // in words.
    wait_until(&client, "return !document.getElementById('advice').hidden", "the fill-now-or-wait line")
        .await;
    let forecast = api(&base, "/v1/forecast?product=1").await;
    let advice = &forecast["data"]["attributes"]["advice"];
    let said = run(&client, "return document.getElementById('advice-text').textContent").await;
    let said = said.as_str().expect("text");
    let lead = match advice["action"].as_str().expect("action") {
        "fill-now" => "Fill today: Unleaded prices are likely to rise about",
        "wait" => "Wait: Unleaded is likely to be about",
        _ => "Fill when it suits you:",
    };
    assert!(said.starts_with(lead), "{said} for {advice}");
    if let Some(until) = advice["until"].as_str() {
        let weekday: jiff::civil::Date = until.parse().expect("date");
        assert!(said.contains(&format!("{:?}", weekday.weekday())), "{said} names the day of {until}");
    }
    let within = forecast["data"]["attributes"]["accuracy"]["within2c"][0].as_f64().expect("within2c");
    let accuracy = run(&client, "return document.getElementById('advice-accuracy').textContent").await;
    assert!(
        accuracy.as_str().is_some_and(
            |a| a.contains(&format!("within 2 c/L on {} days out of 10", (within * 10.0 + 1e-9).floor()))
        ),
        "{accuracy} for {within}"
    );
    let api_requests = run(
        &client,
        "return performance.getEntriesByType('resource')
           .filter(e => { const p = new URL(e.name).pathname; return p.startsWith('/v1') && p !== '/v1/events'; }).length",
    )
    .await;
    assert_eq!(
        api_requests.as_u64(),
        Some(3),
        "the first useful paint takes three API requests (prices, market, forecast)"
    );
    // The page's own files arrive compressed (gzip or brotli), and stay small.
    let own = run(
        &client,
        "return [performance.getEntriesByType('navigation')[0], ...performance.getEntriesByType('resource')]
           .filter(e => /\\/explore(\\/app\\.(js|css))?$/.test(new URL(e.name).pathname))
           .map(e => ({ name: new URL(e.name).pathname, encoded: e.encodedBodySize, decoded: e.decodedBodySize }))",
    )
    .await;
    let own = own.as_array().expect("entries");
    assert_eq!(own.len(), 3, "page, script and style: {own:?}");
    for file in own {
        let (encoded, decoded) = (file["encoded"].as_u64().expect("n"), file["decoded"].as_u64().expect("n"));
        assert!(encoded * 2 < decoded, "{file}: sent compressed");
    }
    let sent: u64 = own.iter().map(|f| f["encoded"].as_u64().unwrap_or(0)).sum();
    assert!(sent < 40_000, "the page's own files are {sent} bytes on the wire");
    // No layout shift while the data arrives (Lighthouse calls under 0.1 good).
    let shift = client
        .execute_async(
            "const done = arguments[0]; let sum = 0;
             new PerformanceObserver(list => { for (const e of list.getEntries()) sum += e.value; })
               .observe({ type: 'layout-shift', buffered: true });
             setTimeout(() => done(sum), 200);",
            vec![],
        )
        .await
        .expect("layout shift measured");
    assert!(shift.as_f64().is_some_and(|s| s < 0.1), "cumulative layout shift {shift}");
    // How long the prices hold, from the API's meta, in Perth time.
    let validity = run(&client, "return document.getElementById('validity').textContent").await;
    assert!(
        validity
            .as_str()
            .is_some_and(|v| v.starts_with("Prices valid") && v.contains("6:00 am") && v.contains("fetched")),
        "{validity}"
    );
    let violations = axe_violations(&client).await;
    assert!(violations.is_empty(), "axe-core on the desktop page: {violations:#?}");

    // The wheel: plain scrolls the page and leaves the map alone; Ctrl + wheel zooms it.
    let wheel = |ctrl: bool| {
        format!(
            "const map = document.getElementById('map'); const before = map.getAttribute('viewBox');
             const r = map.getBoundingClientRect();
             const e = new WheelEvent('wheel', {{ deltaY: -120, ctrlKey: {ctrl}, clientX: r.x + r.width / 2,
               clientY: r.y + r.height / 2, bubbles: true, cancelable: true }});
             map.dispatchEvent(e);
             return {{ prevented: e.defaultPrevented, moved: map.getAttribute('viewBox') !== before }}"
        )
    };
    assert_eq!(
        run(&client, &wheel(false)).await,
        json!({ "prevented": false, "moved": false }),
        "a plain wheel"
    );
    assert_eq!(run(&client, &wheel(true)).await, json!({ "prevented": true, "moved": true }), "Ctrl + wheel");

    // "−" at All WA: the state stays where it is.
    click(&client, Locator::XPath("//button[text()='All WA']"), "All WA").await;
    let view = "return document.getElementById('map').getAttribute('viewBox')";
    let before = run(&client, view).await;
    for _ in 0..3 {
        click(&client, Locator::XPath("//button[text()='−']"), "−").await;
    }
    assert_eq!(run(&client, view).await, before, "zooming out at All WA keeps the map's centre");

    // The full list by keyboard: from its first row, Tab walks through twenty stations, and
    // the list comes before the map in Tab order.
    let order = run(
        &client,
        "return !!(document.getElementById('station-list').compareDocumentPosition(document.getElementById('map'))
           & Node.DOCUMENT_POSITION_FOLLOWING)",
    )
    .await;
    assert_eq!(order, json!(true), "the list comes before the map");
    run(&client, "document.querySelector('#station-list li button').focus(); return true").await;
    for _ in 0..19 {
        client.active_element().await.expect("focus").send_keys("\u{E004}").await.expect("Tab");
    }
    let reached = run(
        &client,
        "const li = document.activeElement.closest('#station-list li');
         return li ? [...li.parentNode.children].indexOf(li) + 1 : null",
    )
    .await;
    assert_eq!(reached, json!(20), "Tab reaches the 20th station of the list");

    // The location allowed (emulated at Perth's CBD): the list is the API's own order.
    let near = "-31.95000,115.86000";
    allow_location(&client, &driver, true).await;
    cdp(
        &client,
        &driver,
        "Emulation.setGeolocationOverride",
        json!({ "latitude": -31.95, "longitude": 115.86, "accuracy": 20 }),
    )
    .await;
    click(&client, Locator::Id("locate"), "the location button").await;
    wait_until(
        &client,
        "const s = document.getElementById('list-status').textContent;
         return s.includes('within 10 km of your location')",
        "the list near me",
    )
    .await;
    let listed =
        run(&client, "return [...document.querySelectorAll('#station-list li')].map(li => li.dataset.id)")
            .await;
    let expected =
        api(&base, &format!("/v1/stations?near={near}&radius=10&sort=price&product=1&day=today&limit=5000"))
            .await;
    let expected_ids = ids(&expected);
    assert!(expected_ids.len() > 1);
    let page: Vec<String> = expected_ids.iter().take(25).cloned().collect();
    assert_eq!(listed, json!(page), "the list is the API's cheapest, in order, a page at a time");
    // "Open now": the API's open stations near me, cheapest first; unticked, the list again.
    open_now_keeps_the_open_ones(&client, &base).await;
    // The map near me (10 km) writes prices beside its dots, none over another.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (prices, _, clashes) = map_labels(&client).await;
    assert!(prices > 0, "the map near me shows prices");
    assert!(clashes.is_empty(), "labels near me: {clashes:?}");
    let first_price =
        run(&client, "return document.querySelector('#station-list li .price').textContent").await;
    let api_price = expected["data"][0]["attributes"]["price"]["products"]["1"].as_f64().expect("a price");
    assert_eq!(first_price, json!(format!("{api_price:.1}")));
    run(&client, "window.scrollTo(0, 0); return true").await;
    save_screenshot(&client, "explore-desktop.png").await;

    // What a stop costs: a fill and a consumption typed in turn the list into the cost of the
    // stop, the API's own order, with the saving against the cheapest price in words.
    // Folded until used: the settings open from their summary.
    click(&client, Locator::Css("#stop-settings summary"), "the fill, car and docket settings").await;
    placeholders_fit(&client).await;
    for (id, value) in [("fill", "50"), ("consumption", "8.5")] {
        let input = client.find(Locator::Id(id)).await.expect("a stop field");
        input.send_keys(&format!("{value}\u{E004}")).await.expect("typed, then Tab");
    }
    wait_until(
        &client,
        "return document.getElementById('sort').value === 'cost'
           && document.getElementById('list-title').textContent.startsWith('Cheapest stops near')
           && document.getElementById('list-status').textContent.includes('with the drive')",
        "the list by the cost of the stop",
    )
    .await;
    let by_cost = api(
        &base,
        &format!("/v1/stations?near={near}&radius=10&sort=cost&product=1&day=today&limit=5000&fill=50&consumption=8.5"),
    )
    .await;
    let listed =
        run(&client, "return [...document.querySelectorAll('#station-list li')].map(li => li.dataset.id)")
            .await;
    let page: Vec<String> = ids(&by_cost).into_iter().take(25).collect();
    assert_eq!(listed, json!(page), "the list is the API's cheapest stops, in order");
    let cost = by_cost["data"][0]["attributes"]["cost"].as_i64().expect("cost");
    let first_row = run(&client, "return document.querySelector('#station-list li .sub').textContent").await;
    let dollars = format!("${}.{:02} for 50 L with the drive", cost / 100, cost % 100);
    assert!(first_row.as_str().is_some_and(|t| t.contains(&dollars)), "{first_row} says {dollars}");
    // The saving said is the cheapest price's cost less the cheapest stop's.
    let rows = by_cost["data"].as_array().expect("rows");
    let key = |s: &serde_json::Value, field: &str| {
        let a = &s["attributes"];
        let v = if field == "price" {
            (a["price"]["products"]["1"].as_f64().expect("price") * 10.0).round() as i64
        } else {
            a["cost"].as_i64().expect("cost")
        };
        (v, a["distance"].as_i64().expect("distance"))
    };
    let cheapest_price = rows.iter().min_by_key(|s| key(s, "price")).expect("a row");
    let saving = cheapest_price["attributes"]["cost"].as_i64().expect("cost") - cost;
    let status = run(&client, "return document.getElementById('list-status').textContent").await;
    let said = if saving > 0 {
        format!("${}.{:02} less than filling at the cheapest price", saving / 100, saving % 100)
    } else {
        "The cheapest price is also the cheapest stop".to_string()
    };
    assert!(status.as_str().is_some_and(|t| t.contains(&said)), "{status} says {said}");
    run(&client, "document.getElementById('list-title').scrollIntoView(); return true").await;
    save_screenshot(&client, "explore-stop-cost.png").await;
    run(&client, "window.scrollTo(0, 0); return true").await;
    // Kept in this browser: a new visit finds the fill and consumption already there.
    let kept = run(&client, "return localStorage.getItem('wafuel.stop')").await;
    assert_eq!(kept, json!("{\"fill\":50,\"consumption\":8.5}"));
    // Back to the price order for the checks below.
    run(&client, "const s = document.getElementById('sort'); s.value = 'price'; s.dispatchEvent(new Event('change')); return true").await;
    wait_until(
        &client,
        &format!(
            "const s = document.getElementById('list-status').textContent;
             return document.getElementById('list-title').textContent.startsWith('Cheapest near')
               && s.includes('cheapest first') && !s.includes('Finding')
               && document.querySelector('#station-list li').dataset.id === {first}",
            first = json!(expected_ids[0]),
        ),
        "the list by price again",
    )
    .await;

    // A station opened from the list by keyboard: the card comes into view with the focus,
    // and its dot is marked on the map.
    let first = client.find(Locator::Css("#station-list li button")).await.expect("a row");
    first.send_keys("\u{E007}").await.expect("Enter on the row");
    assert_card_in_view(&client, &expected["data"][0]["attributes"]["name"], "desktop, from the list").await;
    wait_until(
        &client,
        "return !!document.querySelector('#card svg.chart polyline.series')",
        "the station chart",
    )
    .await;
    // The station's next days as a band after its history, with the numbers in the table.
    wait_until(
        &client,
        "return !!document.querySelector('#card svg.chart polygon.forecast-band')
           && !!document.querySelector('#card svg.chart polyline.forecast-line')
           && document.getElementById('station-key').textContent.includes('forecast')
           && [...document.querySelectorAll('#station-numbers tbody tr')].some(r => r.textContent.includes('forecast'))",
        "the station's forecast band",
    )
    .await;
    // When the fuel's price last changed (from the station API's lastChange), and open now.
    let station = api(&base, &format!("/v1/stations/{}?expand=all", expected_ids[0])).await;
    let last_change = &station["data"]["attributes"]["price"]["lastChange"]["1"];
    let words = run(&client, "return document.getElementById('card-last-change').textContent").await;
    let words = words.as_str().unwrap_or_default().to_string();
    match last_change["previous"].as_f64() {
        Some(previous) => assert!(words.contains(&format!("from {previous:.1}")), "{words} vs {last_change}"),
        None => assert_eq!(words, "Not in the stored history"),
    }
    let open =
        run(&client, "const o = document.getElementById('card-open'); return o && o.textContent").await;
    match station["data"]["attributes"]["open"].as_bool() {
        Some(true) => assert!(open.as_str().is_some_and(|t| t.starts_with("Open")), "{open}"),
        Some(false) => assert!(open.as_str().is_some_and(|t| t.starts_with("Closed")), "{open}"),
        None => assert!(open.is_null(), "{open}"),
    }
    let marked =
        run(&client, "const c = document.querySelector('#dots circle.chosen'); return c && c.dataset.id")
            .await;
    assert_eq!(marked, json!(expected_ids[0]), "the open station's dot is marked");
    favourites_and_a_docket(&client, &base, &expected_ids[0]).await;
    what_a_new_user_tripped_on(&client, &base, &expected_ids[0]).await;
    let url = client.current_url().await.expect("url");
    assert!(url.fragment().is_some_and(|f| f.contains(&format!("station={}", expected_ids[0]))), "{url}");
    // A year of its history, asked from the day shown back, with the numbers as a table.
    click(&client, Locator::Css("input[name=station-range][value='365']"), "1 year").await;
    wait_until(
        &client,
        "return performance.getEntriesByType('resource').some(e => e.name.includes('/history?product=1&from='))
           && !document.getElementById('station-key').textContent.includes('Loading')
           && document.querySelectorAll('#station-numbers tbody tr').length > 0",
        "a year of the station's history",
    )
    .await;
    save_screenshot(&client, "explore-card.png").await;

    // The market since 2001, monthly, with its table.
    click(&client, Locator::Css("input[name=market-range][value=all]"), "Since 2001").await;
    wait_until(
        &client,
        "return document.getElementById('market-title').textContent.includes('since 2001, monthly')
           && document.querySelectorAll('#market-numbers tbody tr').length > 1",
        "the monthly market chart",
    )
    .await;

    // A station opened from the map: Perth, then a dot that is one station.
    click(&client, Locator::XPath("//button[text()='Perth']"), "Perth").await;
    wait_until(
        &client,
        "return [...document.querySelectorAll('#dots circle.station:not(.chosen)')].some(c => {
           const r = c.getBoundingClientRect(); return r.top > 0 && r.bottom < innerHeight; })",
        "single stations in the Perth view",
    )
    .await;
    let labels = run(&client, "return document.querySelectorAll('#labels text').length").await;
    assert!(labels.as_u64().is_some_and(|n| n >= 3), "suburb names on the Perth view: {labels}");
    // The dots share one tab stop; arrows move it between them.
    let stops = "return [...document.querySelectorAll('#dots circle')].filter(c => c.tabIndex === 0).map(c => c.dataset.key)";
    let stop = run(&client, stops).await;
    assert_eq!(stop.as_array().map(Vec::len), Some(1), "one tab stop on the map: {stop}");
    run(&client, "document.querySelector('#dots circle[tabindex=\"0\"]').focus(); return true").await;
    client.active_element().await.expect("focus").send_keys("\u{E014}").await.expect("ArrowRight");
    let moved = run(&client, "return document.activeElement.dataset.key").await;
    assert!(moved.is_string() && moved != stop[0], "the arrow moved to another dot: {moved}");
    assert_eq!(run(&client, stops).await, json!([moved]), "the tab stop moved with it");
    // Picked after the keyboard moved the tab stop (that redraws the dots, and the mark with
    // them), just before it is clicked.
    // A dot that a pointer can reach: inside the map, nothing drawn over it.
    let picked = run(
        &client,
        "document.getElementById('map').scrollIntoView({ block: 'start' });
         const map = document.getElementById('map').getBoundingClientRect();
         const c = [...document.querySelectorAll('#dots circle.station:not(.chosen)')].find(c => {
           const r = c.getBoundingClientRect(); const x = r.x + r.width / 2; const y = r.y + r.height / 2;
           return x > map.left + 20 && x < map.right - 20 && y > map.top + 20 && y < Math.min(map.bottom, innerHeight) - 20
             && document.elementFromPoint(x, y) === c; });
         if (!c) return null;
         c.setAttribute('data-pick', '');
         return c.getAttribute('aria-label')",
    )
    .await;
    assert!(picked.is_string(), "a station dot to click in the Perth view");
    save_screenshot(&client, "explore-perth.png").await;
    let dot = client.find(Locator::Css("#dots circle[data-pick]")).await.expect("the picked dot");
    let dot_id = dot.attr("data-id").await.expect("attr").expect("a station id");
    let name_of = api(&base, &format!("/v1/stations/{dot_id}")).await;
    assert!(
        picked
            .as_str()
            .is_some_and(|n| n.starts_with(name_of["data"]["attributes"]["name"].as_str().expect("name")))
    );
    dot.click().await.expect("click the dot");
    assert_card_in_view(&client, &name_of["data"]["attributes"]["name"], "desktop, from the map").await;

    // Tomorrow before 14:30 (the demo's clock says 10:00): says when it comes, keeps today's
    // stations on the map, and never claims there is no station.
    let drawn = run(&client, MAP_STATIONS).await;
    click(&client, Locator::Css("input[name=day][value=tomorrow]"), "Tomorrow").await;
    wait_until(
        &client,
        "return document.getElementById('status').textContent.includes('2:30 pm')",
        "when tomorrow is published",
    )
    .await;
    let text = run(&client, "return document.body.innerText").await;
    assert!(
        !text.as_str().unwrap_or_default().contains("No station"),
        "tomorrow before 14:30 claims no station"
    );
    // Both status lines say when tomorrow comes and whose prices are shown, never a count
    // that would read as tomorrow's.
    wait_until(
        &client,
        "const s = document.getElementById('list-status').textContent;
         return s.startsWith(\"Today's Unleaded prices within 10 km of your location\") && s.includes('2:30 pm')",
        "the list saying it shows today's until 2:30 pm",
    )
    .await;
    let lines = run(
        &client,
        "return [document.getElementById('status').textContent, document.getElementById('list-status').textContent]",
    )
    .await;
    assert!(
        lines.as_array().expect("two lines").iter().all(|l| !l
            .as_str()
            .unwrap_or_default()
            .split(' ')
            .any(|w| w.parse::<u32>().is_ok_and(|n| n > 31))),
        "a count before tomorrow is published: {lines}"
    );
    assert_eq!(run(&client, MAP_STATIONS).await, drawn, "today's stations stay drawn");
    click(&client, Locator::Css("input[name=day][value=today]"), "Today").await;
    wait_until(
        &client,
        "return !document.getElementById('status').textContent.includes('2:30 pm')",
        "today again",
    )
    .await;
    click(&client, Locator::XPath("//button[text()='All WA']"), "All WA").await;
    wait_until(&client, &format!("{MAP_STATIONS} === {stations}"), "the state again").await;

    // The server stops: the next fuel change keeps every dot, the list and the chart under
    // their own names, and shows one error; a suburb search does not claim "no station".
    drop(demo.take());
    client.find(Locator::Id("fuel")).await.expect("fuel").select_by_value("4").await.expect("Diesel");
    wait_until(&client, "return !document.getElementById('banner').hidden", "the connection banner").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(run(&client, MAP_STATIONS).await.as_u64(), Some(stations), "the drawn dots stay");
    let suburb = client.find(Locator::Id("suburb")).await.expect("suburb box");
    suburb.send_keys("Joondalup\u{E007}").await.expect("typed");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let errors = run(&client, VISIBLE_ERRORS).await;
    assert_eq!(errors.as_array().map(Vec::len), Some(1), "exactly one error shows: {errors}");
    let kept = run(
        &client,
        "return [document.getElementById('market-title').textContent, document.getElementById('status').textContent,
                 document.getElementById('list-status').textContent, document.body.innerText.includes('No station')]",
    )
    .await;
    assert!(
        kept[0].as_str().is_some_and(|t| t.contains("Unleaded")),
        "the market chart keeps its own fuel: {kept}"
    );
    assert!(kept[1].as_str().is_some_and(|t| t.contains("Showing Unleaded")), "{kept}");
    assert_eq!(kept[3], json!(false), "a failed request never says there is no station: {kept}");

    // The server comes back on the same address: the page recovers by itself within 30 s.
    let restarted = demo_at(port, this_morning());
    let back = Instant::now();
    wait_until(
        &client,
        "return document.getElementById('banner').hidden
           && document.getElementById('status').textContent.includes('with Diesel')
           && document.getElementById('market-title').textContent.includes('Diesel')
           && document.getElementById('list-status').textContent.includes('Joondalup')",
        "the page recovering after the restart",
    )
    .await;
    let took = back.elapsed();
    assert!(took < Duration::from_secs(30), "recovered {took:?} after the server was back");
    eprintln!("explorer: recovered {took:?} after the restart");
    assert!(run(&client, MAP_STATIONS).await.as_u64().is_some_and(|n| n > 0));
    // The browser reports the refused connections itself; anything else is a page error.
    let errors: Vec<String> = console_errors(&client, &driver)
        .await
        .into_iter()
        .filter(|e| {
            // The event stream cut off when the server died (resumed with `since` once the
            // page has heard an event).
            let stream_cut = e.contains("/v1/events")
                && e.contains("Failed to load resource: net::ERR_INCOMPLETE_CHUNKED_ENCODING");
            !(e.contains("ERR_CONNECTION_REFUSED") || e.contains("Failed to fetch") || stream_cut)
        })
        .collect();
    assert!(errors.is_empty(), "console errors on desktop: {errors:#?}");
    client.close().await.expect("closed");
    drop(restarted);
}

/// The card's phone as people write it, "Open 24 hours" said once, the chart's unit, and an
/// address edited in the open tab taking effect (then put back).
/// Every shown field's example ("e.g. 8.5") is whole in its box: its text, in the field's own
/// font, fits the width inside the padding, less a number field's spin buttons.
async fn placeholders_fit(client: &Client) {
    let cut = run(
        client,
        "const pen = document.createElement('canvas').getContext('2d');
         return [...document.querySelectorAll('input[placeholder]')].filter(i => i.offsetParent).filter(i => {
           const css = getComputedStyle(i);
           pen.font = css.font;
           const room = i.clientWidth - parseFloat(css.paddingLeft) - parseFloat(css.paddingRight)
             - (i.type === 'number' ? 18 : 0);
           return pen.measureText(i.placeholder).width > room;
         }).map(i => i.id + ': ' + i.placeholder);",
    )
    .await;
    let shown = run(client, "return document.querySelectorAll('input[placeholder]').length").await;
    assert!(shown.as_u64().is_some_and(|n| n >= 4), "the fields with examples: {shown}");
    assert_eq!(cut, json!([]), "examples cut off in their fields");
}

async fn what_a_new_user_tripped_on(client: &Client, base: &str, id: &str) {
    let station = api(base, &format!("/v1/stations/{id}?expand=all")).await;
    let a = &station["data"]["attributes"];
    let phone =
        run(client, "const p = document.querySelector('#card a[href^=\"tel:\"]'); return p && p.textContent")
            .await;
    match a["phone"].as_str() {
        Some(e164) if e164.starts_with("+61") => {
            let shown = phone.as_str().expect("a phone link");
            assert!(!shown.starts_with('+'), "{shown} for {e164}: written as people write it");
            let digits: String = shown.chars().filter(char::is_ascii_digit).collect();
            assert_eq!(format!("+61{}", digits.trim_start_matches('0')), e164, "{shown} is {e164}");
        }
        Some(other) => assert_eq!(phone, json!(other)),
        None => assert!(phone.is_null()),
    }
    let features = run(client, "const dt = [...document.querySelectorAll('#card dt')].find(d => d.textContent === 'Features'); return dt.nextElementSibling.textContent").await;
    if a["is24Hours"] == json!(true) {
        assert!(!features.as_str().unwrap_or_default().contains("Open 24 hours"), "{features}");
    }
    wait_until(
        client,
        "return [...document.querySelectorAll('#station-chart text')].some(t => t.textContent === 'c/L')",
        "the chart's unit",
    )
    .await;

    let hash = run(client, "return location.hash").await;
    let hash = hash.as_str().expect("a hash").to_string();
    assert!(hash.contains("fuel=1"), "{hash}");
    run(client, &format!("location.hash = {}; return true", json!(hash.replace("fuel=1", "fuel=4")))).await;
    wait_until(
        client,
        "return document.getElementById('fuel').value === '4' && document.getElementById('status').textContent.includes('Diesel')",
        "the edited address's fuel",
    )
    .await;
    // Put back: the card is drawn anew for it (a marked heading is replaced), with its chart.
    run(
        client,
        &format!(
            "document.getElementById('station-name').dataset.old = '1'; location.hash = {}; return true",
            json!(hash)
        ),
    )
    .await;
    wait_until(
        client,
        "const s = document.getElementById('list-status').textContent;
         const h = document.getElementById('station-name');
         return document.getElementById('fuel').value === '1' && s.includes('Unleaded') && !s.includes('Finding')
           && h && !h.dataset.old && !!document.querySelector('#card svg.chart polyline.series')
           && !document.getElementById('station-key').textContent.includes('Loading')",
        "the address put back, and the card with it",
    )
    .await;

    // A suburb misspelt in the page gets the API's own suggestion.
    let suburb = a["address"]["suburb"].as_str().expect("a suburb").to_string();
    if suburb.chars().count() >= 6 {
        let misspelt: String = suburb
            .chars()
            .enumerate()
            .filter(|(i, _)| *i != suburb.chars().count() / 2)
            .map(|(_, c)| c)
            .collect();
        let told =
            api(base, &format!("/v1/stations?product=1&suburb={}", misspelt.replace(' ', "%20"))).await;
        let meant =
            told["meta"]["unknownSuburbs"][0]["didYouMean"][0].as_str().expect("the API's suggestion");
        let typed = client.find(Locator::Id("suburb")).await.expect("suburb box");
        typed.clear().await.expect("cleared");
        typed.send_keys(&format!("{misspelt}\u{E007}")).await.expect("typed");
        wait_until(
            client,
            &format!(
                "const s = document.getElementById('list-status').textContent.toUpperCase();
                 return s.includes('DID YOU MEAN') && s.includes({})",
                json!(meant)
            ),
            "the page's suggestion, as the API's",
        )
        .await;
        typed.clear().await.expect("cleared");
    }
    // A point shared in the address (opened in a tab of its own) is named by its suburb, not
    // "the chosen point".
    let (lat, lng) = (a["latitude"].as_f64().expect("lat"), a["longitude"].as_f64().expect("lng"));
    let this = client.window().await.expect("this tab");
    let other = client.new_window(true).await.expect("a tab").handle;
    client.switch_to_window(other).await.expect("to it");
    client.goto(&format!("{base}/explore#fuel=1&near={lat:.5},{lng:.5}")).await.expect("page loads");
    wait_until(
        client,
        "const t = document.getElementById('list-title').textContent;
         return t.startsWith('Cheapest near') && document.querySelectorAll('#station-list li').length > 0",
        "the list near the shared point",
    )
    .await;
    let title = run(client, "return document.getElementById('list-title').textContent").await;
    let title = title.as_str().unwrap_or_default().to_string();
    assert!(!title.contains("chosen point") && !title.chars().any(|c| c.is_ascii_digit()), "{title}");
    client.close_window().await.expect("closed");
    client.switch_to_window(this).await.expect("back");
}

/// The card's "Add to favourites", kept in this browser, and the list's "Favourites": the
/// API's `id=` answer; then a docket at the station's brand, whose effective prices the list
/// shows and orders by (the API's `discount=`), and taken off again.
async fn favourites_and_a_docket(client: &Client, base: &str, id: &str) {
    let title = run(client, "return document.getElementById('list-title').textContent").await;
    click(client, Locator::Id("card-favourite"), "add to favourites").await;
    // On a phone the card is a sheet over the list: closed to reach the list's toggles.
    let sheet =
        run(client, "return getComputedStyle(document.getElementById('card-close')).display !== 'none'")
            .await;
    let sheet = sheet == json!(true);
    if sheet {
        click(client, Locator::Id("card-close"), "the card's close").await;
    }
    let pressed =
        run(client, "return document.getElementById('card-favourite').getAttribute('aria-pressed')").await;
    assert_eq!(pressed, json!("true"));
    assert_eq!(
        run(client, "return localStorage.getItem('wafuel.favourites')").await,
        json!(json!([id]).to_string())
    );
    click(client, Locator::Id("favourites-only"), "favourites").await;
    wait_until(
        client,
        &format!(
            "return document.getElementById('list-title').textContent === 'Your favourites'
               && document.getElementById('list-status').textContent.startsWith('1 of your favourites')
               && JSON.stringify([...document.querySelectorAll('#station-list li')].map(li => li.dataset.id)) === {want}",
            want = json!(json!([id]).to_string()),
        ),
        "the favourites list",
    )
    .await;
    assert!(
        run(
            client,
            "return performance.getEntriesByType('resource').some(e => e.name.includes('/v1/stations?id='))"
        )
        .await
            == json!(true),
        "the favourites come from the API's id="
    );
    click(client, Locator::Id("favourites-only"), "favourites, unticked").await;
    wait_until(
        client,
        &format!("return document.getElementById('list-title').textContent === {title}"),
        "the list as it was again",
    )
    .await;

    // A 4 c/L docket at this station's brand: the list's prices are the API's effective ones.
    let station = api(base, &format!("/v1/stations/{id}?expand=brand")).await;
    let brand = station["data"]["attributes"]["brand"]["code"].as_u64().expect("a brand code");
    run(
        client,
        &format!(
            "const b = document.getElementById('docket-brand'); b.value = '{brand}'; b.dispatchEvent(new Event('change'));
             const d = document.getElementById('docket'); d.value = '4'; d.dispatchEvent(new Event('change')); return true"
        ),
    )
    .await;
    // The list's own request, with the docket: the API's answer to it is what the list shows.
    let docketed_path = format!("discount={brand}:4");
    wait_until(
        client,
        &format!("return performance.getEntriesByType('resource').some(e => e.name.includes('/v1/stations?near=') && e.name.includes({docketed_path:?}))"),
        "the list asked with the docket",
    )
    .await;
    let asked = run(
        client,
        &format!("return performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('/v1/stations?near=') && n.includes({docketed_path:?})).pop()"),
    )
    .await;
    let asked = asked.as_str().expect("the list's request");
    let path = &asked[asked.find("/v1/").expect("a path")..];
    assert!(path.contains("sort=price") && path.contains("product=1"), "{path}");
    let docketed = api(base, path).await;
    let want: Vec<String> = ids(&docketed).into_iter().take(25).collect();
    let first = &docketed["data"][0]["attributes"]["price"];
    let first_price = format!("{:.1}", first["effective"]["1"].as_f64().expect("an effective price"));
    wait_until(
        client,
        &format!(
            "const rows = [...document.querySelectorAll('#station-list li')];
             return JSON.stringify(rows.map(li => li.dataset.id)) === {want}
               && rows[0].querySelector('.price').textContent === {first_price}
               && rows.some(li => li.querySelector('.sub').textContent.includes('less your docket'))",
            want = json!(json!(want).to_string()),
            first_price = json!(first_price),
        ),
        "the list with the docket",
    )
    .await;
    assert_eq!(
        run(client, "return localStorage.getItem('wafuel.docket')").await,
        json!(format!("{{\"brand\":{brand},\"cents\":4}}"))
    );
    if sheet {
        click(
            client,
            Locator::Css(&format!("#station-list li[data-id='{id}'] button")),
            "the favourite's row",
        )
        .await;
    }
    wait_until(client, "return [...document.querySelectorAll('#card .prices li')].some(li => li.textContent.includes('with your docket'))", "the card's docket price").await;
    run(
        client,
        "const b = document.getElementById('docket-brand'); b.value = ''; b.dispatchEvent(new Event('change')); return true",
    )
    .await;
    wait_until(
        client,
        "return ![...document.querySelectorAll('#station-list li .sub')].some(s => s.textContent.includes('less your docket'))
           && localStorage.getItem('wafuel.docket') === null",
        "the docket taken off",
    )
    .await;
}

#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn the_explorer_on_a_phone() {
    let port = free_port();
    // 14:27:30 in Perth: tomorrow comes out while the page is open (the demo has 150 s to
    // start and the page to load before 14:30).
    let started = Instant::now();
    let demo = demo_at(port, perth_wall_clock().date().at(14, 27, 30, 0));
    let base = format!("http://127.0.0.1:{port}");
    let driver = start_driver();
    let phone = browser(&driver, 390, 844, true).await;
    allow_location(&phone, &driver, false).await;
    phone.goto(&format!("{base}/explore")).await.expect("page loads");
    wait_until(
        &phone,
        "return document.querySelectorAll('#station-list li').length > 0",
        "the list on a phone",
    )
    .await;
    wait_until(&phone, "return !!document.querySelector('#market-chart polyline')", "the market chart").await;
    // A second tab, left in the background before 14:30: it gives its stream back (the server
    // holds only the first tab's), so it cannot hear tomorrow come out; it must learn it when
    // it is looked at again.
    let front = phone.window().await.expect("the first tab");
    let background = phone.new_window(true).await.expect("a second tab").handle;
    phone.switch_to_window(background.clone()).await.expect("to the second tab");
    phone.goto(&format!("{base}/explore")).await.expect("page loads");
    wait_until(&phone, "return document.querySelectorAll('#dots circle').length > 0", "the second tab").await;
    phone.switch_to_window(front.clone()).await.expect("back to the first tab");
    streams_become(&demo, port, 1, "the hidden tab gave its stream back").await;

    // The first screen leads with "cheapest near me".
    let first_screen = run(
        &phone,
        "return ['locate', 'suburb', 'list-title'].map(id => {
           const r = document.getElementById(id).getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })",
    )
    .await;
    assert_eq!(first_screen, json!([true, true, true]), "near-me controls on the first screen");
    // …and a price: the list's first row is on the first screen too.
    run(&phone, "window.scrollTo(0, 0); return true").await;
    save_screenshot(&phone, "explore-phone-first-screen.png").await;
    let price_seen = run(
        &phone,
        "const p = document.querySelector('#station-list li .price');
         if (!p) return false; const r = p.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight",
    )
    .await;
    assert_eq!(price_seen, json!(true), "a price on the phone's first screen");
    let overflow = run(&phone, "return document.documentElement.scrollWidth - window.innerWidth").await;
    assert!(overflow.as_i64().is_some_and(|o| o <= 0), "wider than a phone by {overflow} px");
    // Dots are big enough to tap.
    let smallest = run(
        &phone,
        "return Math.min(...[...document.querySelectorAll('#dots circle')].map(c => c.getBoundingClientRect().width))",
    )
    .await;
    assert!(smallest.as_f64().is_some_and(|w| w >= 23.5), "the smallest dot is {smallest} px across");

    // The phone's map: at the state's zoom the towns' names beside their dots, then at Perth
    // and closer in prices too; no label over another or under another station's dot.
    for (view, zoom_ins) in [("wa", 0), ("perth", 0), ("perth", 2)] {
        run(&phone, &format!("document.querySelector('button[data-view={view}]').click(); return true"))
            .await;
        for _ in 0..zoom_ins {
            run(&phone, "document.querySelector('button[data-zoom=in]').click(); return true").await;
        }
        tokio::time::sleep(Duration::from_millis(400)).await;
        let (prices, places, clashes) = map_labels(&phone).await;
        assert!(clashes.is_empty(), "{view} +{zoom_ins} on a phone: {clashes:?}");
        if view == "wa" {
            let towns = run(
                &phone,
                "return [...document.querySelectorAll('#labels text.place')].map(t => t.textContent)",
            )
            .await;
            for town in ["Perth", "Geraldton", "Albany"] {
                assert!(
                    towns.as_array().is_some_and(|t| t.iter().any(|n| n == town)),
                    "{town} named at the state's zoom: {towns}"
                );
            }
        } else {
            assert!(prices > 0 && places > 0, "{view} +{zoom_ins}: {prices} prices, {places} places");
        }
    }
    run(&phone, "document.querySelector('button[data-view=wa]').click(); return true").await;

    // Two fingers spreading apart over the map zoom it in (real touch input through DevTools,
    // so the browser's own gesture handling and `touch-action` apply); one finger does not.
    pinch_zooms_the_map(&phone, &driver).await;

    // A station from the list opens as a bottom sheet, heading in view, focus inside.
    let name =
        run(&phone, "return document.querySelector('#station-list li .name').lastChild.textContent").await;
    click(&phone, Locator::Css("#station-list li button"), "a row").await;
    assert_card_in_view(&phone, &name, "phone").await;
    wait_until(
        &phone,
        "return !!document.querySelector('#card svg.chart polyline.series')",
        "the station chart",
    )
    .await;
    // Chart text is at least 11 px as rendered, on the station's chart and the market's.
    let smallest_text = run(
        &phone,
        "const sizes = [...document.querySelectorAll('svg.chart text')].map(t =>
           parseFloat(getComputedStyle(t).fontSize) * t.ownerSVGElement.getScreenCTM().a);
         return sizes.length ? Math.min(...sizes) : 0",
    )
    .await;
    assert!(smallest_text.as_f64().is_some_and(|s| s >= 11.0), "chart text renders at {smallest_text} px");
    let violations = axe_violations(&phone).await;
    assert!(violations.is_empty(), "axe-core on the phone page with the card open: {violations:#?}");
    save_screenshot(&phone, "explore-phone.png").await;
    // Closing the sheet returns the focus to the row that opened it.
    click(&phone, Locator::Id("card-close"), "close").await;
    let back = run(&phone, "return !!document.activeElement.closest('#station-list li')").await;
    assert_eq!(back, json!(true), "focus returns to the list");

    // "Alert me below …" on the card: the page's one stream carries the alert (no second
    // connection); a price no station could miss is asked, so tomorrow's publish says it.
    click(&phone, Locator::Css("#station-list li button"), "a row").await;
    assert_card_in_view(&phone, &name, "phone, again").await;
    run(&phone, "document.getElementById('alert-below').value = '999.9'; return true").await;
    click(&phone, Locator::Css("#alert-form button[type=submit]"), "Alert me").await;
    wait_until(
        &phone,
        "const stream = window.wafuelStream;
         return !!stream.source && stream.source.readyState === EventSource.OPEN
           && stream.source.url.includes('below=999.9') && stream.source.url.includes('station=')
           && document.getElementById('alert-said').textContent.startsWith('Listening while this page is open')",
        "the stream with the alert",
    )
    .await;
    streams_become(&demo, port, 1, "the alert rides the page's one stream").await;
    click(&phone, Locator::Id("card-close"), "close").await;

    // Tomorrow is published (asked for by another client once the demo's clock passes
    // 14:30): the page hears it on its event stream, says so and offers the new day.
    let past_publication = Duration::from_secs(155);
    if let Some(wait) = past_publication.checked_sub(started.elapsed()) {
        tokio::time::sleep(wait).await;
    }
    let tomorrow = api(&base, "/v1/stations?product=1&day=tomorrow&limit=1").await;
    assert_eq!(tomorrow["meta"]["publicationStatus"], "available", "the demo's clock is past 14:30");
    wait_until(
        &phone,
        "const n = document.getElementById('news'); return !n.hidden && n.textContent.includes('prices are out')",
        "the news that tomorrow is out",
    )
    .await;
    // And the alert: the station's price tomorrow, at or below 999.9, said on the page.
    wait_until(
        &phone,
        &format!(
            "const n = document.getElementById('alert-news');
             return !n.hidden && n.textContent.startsWith({name}) && n.textContent.includes('at or below your 999.9')",
            name = json!(name),
        ),
        "the alert heard",
    )
    .await;
    // The advice once tomorrow is out: a rise its published prices show is said as a fact
    // (the API's own reason too), never "likely … about".
    let forecast = api(&base, "/v1/forecast?product=1").await;
    let attributes = &forecast["data"]["attributes"];
    let until = attributes["advice"]["until"].clone();
    let published_rise = attributes["advice"]["action"] == "fill-now"
        && attributes["days"]
            .as_array()
            .expect("days")
            .iter()
            .any(|d| d["date"] == until && d["known"] == true);
    if published_rise {
        assert!(
            attributes["advice"]["reason"].as_str().is_some_and(|r| r.ends_with("(published).")),
            "{attributes}"
        );
        wait_until(
            &phone,
            "return document.getElementById('advice-text').textContent.includes(\"tomorrow's published prices\")",
            "the published rise said as a fact",
        )
        .await;
    }
    run(&phone, "window.scrollTo(0, 0); return true").await;
    save_screenshot(&phone, "explore-phone-news.png").await;
    // Left and restored from the back/forward cache: the stream reopens after the last event
    // the page saw (`since`), so nothing published meanwhile is missed.
    run(
        &phone,
        "window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true }));
         window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true })); return true",
    )
    .await;
    wait_until(
        &phone,
        "const stream = window.wafuelStream;
         return !!stream.lastId && !!stream.source && stream.source.readyState === EventSource.OPEN
           && stream.source.url.includes('since=' + stream.lastId)",
        "the stream resumed after the last event seen",
    )
    .await;
    click(&phone, Locator::Id("news-show"), "Show tomorrow").await;
    let date = tomorrow["meta"]["sourceDate"].as_str().expect("a date").to_string();
    wait_until(
        &phone,
        &format!(
            "return location.hash.includes('day=tomorrow') && document.querySelector('input[value=tomorrow]').checked
               && !document.getElementById('status').textContent.includes('not published')
               && document.getElementById('list-status').textContent.includes({day})",
            day = json!(date_words(&date)),
        ),
        "tomorrow's prices on the page",
    )
    .await;
    let errors = console_errors(&phone, &driver).await;
    assert!(errors.is_empty(), "console errors on a phone: {errors:#?}");
    // The background tab, looked at again: it had no event id to resume from, so it asks for
    // its prices again, sees tomorrow is out, and says so as the stream would have.
    phone.switch_to_window(background).await.expect("to the second tab");
    wait_until(
        &phone,
        "const n = document.getElementById('news'); return !n.hidden && n.textContent.includes('prices are out')",
        "the news in the tab that was hidden when it came",
    )
    .await;

    // What a driver keeps on a phone, near a suburb: open now, a favourite and a docket.
    phone.switch_to_window(front).await.expect("back to the first tab");
    let suburb = phone.find(Locator::Id("suburb")).await.expect("suburb box");
    suburb.send_keys("Perth\u{E007}").await.expect("typed");
    wait_until(
        &phone,
        "return document.getElementById('list-title').textContent.includes(' near ')
           && document.querySelectorAll('#station-list li').length > 1
           && !document.getElementById('list-status').textContent.includes('Finding')",
        "the list near Perth",
    )
    .await;
    open_now_keeps_the_open_ones(&phone, &base).await;
    let id = run(&phone, "return document.querySelector('#station-list li').dataset.id").await;
    let id = id.as_str().expect("an id");
    click(&phone, Locator::Css(&format!("#station-list li[data-id='{id}'] button")), "the first row").await;
    wait_until(
        &phone,
        &format!("return new URLSearchParams(location.hash.slice(1)).get('station') === '{id}' && document.getElementById('card-panel').classList.contains('open') && !document.getElementById('card').hasAttribute('aria-busy')"),
        "the first row's card",
    )
    .await;
    favourites_and_a_docket(&phone, &base, id).await;
    let errors = console_errors(&phone, &driver).await;
    assert!(errors.is_empty(), "console errors on a phone's toggles: {errors:#?}");
    phone.close().await.expect("closed");
}

/// "Open now" ticked: the list is the API's answer to the page's own `open=now` request, a
/// page of it, every one among the list before; unticked, the list before again.
async fn open_now_keeps_the_open_ones(client: &Client, base: &str) {
    const LISTED: &str =
        "JSON.stringify([...document.querySelectorAll('#station-list li')].map(li => li.dataset.id))";
    const ASKED: &str = "performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('/v1/stations?') && n.includes('open=now')).pop()";
    let before = run(client, &format!("return {LISTED}")).await;
    click(client, Locator::Id("open-now"), "open now").await;
    wait_until(client, &format!("return !!{ASKED}"), "the list asked with open=now").await;
    let url = run(client, &format!("return {ASKED}")).await;
    let url = url.as_str().expect("the request");
    let open = api(base, &url[url.find("/v1/").expect("a path")..]).await;
    let want: Vec<String> = ids(&open).into_iter().take(25).collect();
    wait_until(
        client,
        &format!(
            "return !document.getElementById('list-status').textContent.includes('Finding') && {LISTED} === {want}",
            want = json!(json!(want).to_string()),
        ),
        "the open stations",
    )
    .await;
    click(client, Locator::Id("open-now"), "open now, unticked").await;
    wait_until(client, &format!("return {LISTED} === {before}"), "the whole list again").await;
}

/// The source fails twice with 503: the API answers 503 with `Retry-After`, the page's banner
/// says so in words, waits as told, retries, and then draws the stations, with no script error
/// on the way.
#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn the_explorer_waits_out_a_failing_source() {
    let faults = Faults { status: Some(503), retry_after: Some(1), times: Some(2), ..Faults::default() };
    let (sim, _clock) = origin_at(perth_wall_clock(), faults).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let serve = serve_from(&sim.feed_url(), dir.path());
    let driver = start_driver();
    let client = browser(&driver, 1280, 1400, false).await;
    allow_location(&client, &driver, false).await;
    client.goto(&format!("{}/explore", serve.public)).await.expect("page loads");
    wait_until(
        &client,
        "const b = document.getElementById('banner');
         return !b.hidden && b.textContent.includes('temporarily unavailable')
           && b.textContent.includes('Retrying in 1 s')",
        "the 503 in words with its retry",
    )
    .await;
    save_screenshot(&client, "explore-retrying.png").await;
    wait_until(
        &client,
        "return document.querySelectorAll('#dots circle').length > 0",
        "stations after the retry",
    )
    .await;
    let banner = run(&client, "return document.getElementById('banner').hidden").await;
    assert_eq!(banner, json!(true), "the banner is gone once prices arrive");
    // The browser reports the refused requests themselves; anything else is a page error.
    let errors: Vec<String> = console_errors(&client, &driver)
        .await
        .into_iter()
        .filter(|e| !e.contains("the server responded with a status of 503"))
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    client.close().await.expect("closed");
}

/// A date as the page writes it in sentences: "Wednesday 25 Nov".
fn date_words(iso: &str) -> String {
    let date: jiff::civil::Date = iso.parse().expect("a date");
    date.strftime("%A %-d %b").to_string()
}

/// The page as a person returns to it: nine fresh visits in one tab (each left by typing the
/// address again, so the one before may sit in the back/forward cache), then eight tabs open
/// at once; every visit draws its dots and opens a card. Browsers give a host six HTTP/1.1
/// connections, so a page that kept its event stream after being left, or while nobody looks
/// at it, would starve the seventh. Then the server stops answering without closing anything
/// (SIGSTOP): the next request reaches the banner within the page's deadline, and the page
/// recovers by itself when the server runs again.
async fn the_explorer_visited_again_and_again(width: u32, height: u32, phone: bool, device: &str) {
    let port = free_port();
    let demo = demo_at(port, this_morning());
    let base = format!("http://127.0.0.1:{port}");
    let driver = start_driver();
    let client = browser(&driver, width, height, phone).await;
    allow_location(&client, &driver, false).await;

    for visit in 1..=9 {
        client.goto(&format!("{base}/explore?visit={visit}")).await.expect("page loads");
        a_visit_works(&client, &format!("{device}: visit {visit} in one tab")).await;
    }
    let after_visits = settled_streams(&demo, port).await;
    // The same page left and restored from the back/forward cache: `pagehide` gives the
    // stream back, `pageshow` opens it again and, having no event id to resume from, asks
    // for the prices shown again; they have not changed, so the card is not redrawn.
    let asked = "return performance.getEntriesByType('resource')
        .filter(e => new URL(e.name).pathname === '/v1/stations').length";
    let before = run(&client, asked).await;
    run(&client, "document.getElementById('station-name').dataset.kept = 'yes'; return true").await;
    run(
        &client,
        "window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true })); return true",
    )
    .await;
    streams_become(&demo, port, 0, &format!("{device}: no stream after pagehide")).await;
    run(
        &client,
        "window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true })); return true",
    )
    .await;
    streams_become(&demo, port, 1, &format!("{device}: the stream again after pageshow")).await;
    wait_until(&client, &format!("{asked} > {before}"), "the prices asked for again after pageshow").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let kept = run(
        &client,
        "const h = document.getElementById('station-name'); return !!h && h.dataset.kept === 'yes'",
    )
    .await;
    assert_eq!(kept, json!(true), "{device}: unchanged prices redrew the card after pageshow");

    let mut tabs = vec![client.window().await.expect("the first tab")];
    for tab in 2..=8 {
        let opened = client.new_window(true).await.expect("a new tab");
        client.switch_to_window(opened.handle.clone()).await.expect("to the new tab");
        client.goto(&format!("{base}/explore?tab={tab}")).await.expect("page loads");
        a_visit_works(&client, &format!("{device}: tab {tab} of 8 open at once")).await;
        tabs.push(opened.handle);
    }
    // Every tab still answers when looked at again.
    for (i, tab) in tabs.iter().enumerate() {
        client.switch_to_window(tab.clone()).await.expect("back to a tab");
        let what = format!("{device}: tab {} again", i + 1);
        run(&client, "document.getElementById('card-close').click(); return true").await;
        a_card_opens(&client, &what).await;
    }
    let with_tabs = settled_streams(&demo, port).await;
    eprintln!(
        "explorer ({device}): after 9 visits in one tab {} stream(s) over {} connection(s); \
         with 8 tabs open {} stream(s) over {} connection(s)",
        after_visits.0, after_visits.1, with_tabs.0, with_tabs.1
    );
    // One page is looked at, so one stream is held; the others gave theirs back.
    assert!(after_visits.0 <= 1, "{device}: streams held after nine visits: {}", after_visits.0);
    assert!(with_tabs.0 <= 1, "{device}: streams held with eight tabs open: {}", with_tabs.0);

    // The server stops answering mid-request: connections stay open, nothing comes back.
    signal(&demo, "STOP");
    let stopped = Instant::now();
    client.find(Locator::Id("fuel")).await.expect("fuel").select_by_value("4").await.expect("Diesel");
    wait_within(
        &client,
        "const b = document.getElementById('banner');
         return !b.hidden && b.textContent.includes('did not answer within 15 s')",
        "the banner after the deadline",
        Duration::from_secs(40),
    )
    .await;
    let took = stopped.elapsed();
    eprintln!("explorer ({device}): a server that stopped answering shown after {took:?}");
    // A place asked for while the server is stopped: the list never shows all of WA (or the
    // last place) under the new place's name; it says what it is doing, and the banner alone
    // speaks of the failure.
    let suburb = client.find(Locator::Id("suburb")).await.expect("suburb box");
    suburb.send_keys("Joondalup\u{E007}").await.expect("typed");
    wait_until(
        &client,
        "return document.getElementById('list-title').textContent === 'Cheapest near Joondalup'
           && document.getElementById('list-status').textContent === 'Finding Diesel near Joondalup…'
           && document.querySelectorAll('#station-list li').length === 0",
        "an empty list while the place is being found",
    )
    .await;
    assert!(took >= Duration::from_secs(14), "the banner came before the deadline: {took:?}");
    assert!(run(&client, MAP_STATIONS).await.as_u64().is_some_and(|n| n > 0), "the drawn dots stay");
    let errors = run(&client, VISIBLE_ERRORS).await;
    assert_eq!(errors.as_array().map(Vec::len), Some(1), "exactly one error shows: {errors}");
    // The countdown counts.
    let first = run(&client, "return document.getElementById('banner-text').textContent").await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let later = run(&client, "return document.getElementById('banner-text').textContent").await;
    assert_ne!(first, later, "the retry countdown does not move");
    signal(&demo, "CONT");
    wait_until(
        &client,
        "return document.getElementById('banner').hidden
           && document.getElementById('status').textContent.includes('with Diesel')
           && / Diesel prices within \\d+ km of Joondalup/.test(document.getElementById('list-status').textContent)
           && document.querySelectorAll('#station-list li').length > 0",
        "the page recovering after the server runs again",
    )
    .await;
    let errors = console_errors(&client, &driver).await;
    assert!(errors.is_empty(), "console errors ({device}): {errors:#?}");
    client.close().await.expect("closed");
    drop(demo);
}

/// A fresh page draws its dots and opens a station's card from its list.
async fn a_visit_works(client: &Client, what: &str) {
    wait_within(
        client,
        "return document.querySelectorAll('#dots circle').length > 0
           && document.querySelectorAll('#station-list li button').length > 0",
        &format!("the dots and the list ({what})"),
        Duration::from_secs(20),
    )
    .await;
    a_card_opens(client, what).await;
}

async fn a_card_opens(client: &Client, what: &str) {
    let name = run(
        client,
        "const row = document.querySelector('#station-list li button'); row.click();
         return row.querySelector('.name').lastChild.textContent",
    )
    .await;
    wait_within(
        client,
        &format!(
            "const h = document.querySelector('#card h3#station-name');
             return !!h && h.textContent === {name}"
        ),
        &format!("the card of {name} ({what})"),
        Duration::from_secs(20),
    )
    .await;
}

/// Event streams the server holds open (its own gauge) and TCP connections to its port.
async fn streams_and_connections(demo: &Running, port: u16) -> (u64, usize) {
    (event_streams(demo).await, established(&format!("( sport = :{port} )")))
}

/// Streams and connections once the server has seen the last closed stream go (a hang-up
/// reaches it a moment after the page closes the stream).
async fn settled_streams(demo: &Running, port: u16) -> (u64, usize) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let now = streams_and_connections(demo, port).await;
        if now.0 <= 1 || Instant::now() > deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Wait until the server holds exactly `n` event streams, or fail naming `what`.
async fn streams_become(demo: &Running, port: u16, n: u64, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (streams, _) = streams_and_connections(demo, port).await;
        if streams == n {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: {streams} streams, not {n}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// SIGSTOP or SIGCONT to the server: stopped, it keeps every connection open and answers none.
fn signal(demo: &Running, which: &str) {
    let status = Command::new("kill")
        .args([&format!("-{which}"), &demo.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{which}");
}

#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn the_explorer_visited_again_and_again_on_a_desktop() {
    the_explorer_visited_again_and_again(1366, 900, false, "desktop").await;
}

#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn the_explorer_visited_again_and_again_on_a_phone() {
    the_explorer_visited_again_and_again(390, 844, true, "phone").await;
}

/// A card open on a station that lists no diesel, then diesel chosen: the card says the
/// station lists none and asks for no diesel history or forecast of it (each would be a 404,
/// which the browser reports as an error).
#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn a_card_asks_nothing_of_a_fuel_its_station_does_not_list() {
    let port = free_port();
    let demo = demo_at(port, this_morning());
    let base = format!("http://127.0.0.1:{port}");
    let doc: Value =
        http().get(format!("{base}/v1/stations")).send().await.expect("stations").json().await.expect("JSON");
    let id = doc["data"]
        .as_array()
        .expect("stations")
        .iter()
        .find(|s| {
            let products = &s["attributes"]["price"]["products"];
            products.get("1").is_some() && products.get("4").is_none()
        })
        .and_then(|s| s["id"].as_str())
        .expect("a station without diesel in the demo")
        .to_string();
    let driver = start_driver();
    let client = browser(&driver, 1366, 900, false).await;
    allow_location(&client, &driver, false).await;
    client.goto(&format!("{base}/explore#fuel=1&day=today&station={id}")).await.expect("page loads");
    wait_until(
        &client,
        "const k = document.getElementById('station-key');
         return !!document.getElementById('station-name') && !!k && !k.textContent.startsWith('Loading')",
        "the card with its unleaded chart",
    )
    .await;
    client.find(Locator::Id("fuel")).await.expect("fuel").select_by_value("4").await.expect("Diesel");
    wait_until(
        &client,
        "const k = document.getElementById('station-key');
         return !!k && k.textContent === 'This station lists no Diesel price.'",
        "the card saying the station lists no diesel",
    )
    .await;
    let asked = run(
        &client,
        &format!(
            "return performance.getEntriesByType('resource').map(e => e.name)
               .filter(n => n.includes('/v1/stations/{id}/') && n.includes('product=4')).length"
        ),
    )
    .await;
    assert_eq!(asked, json!(0), "diesel asked of a station that lists none");
    let errors = console_errors(&client, &driver).await;
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    client.close().await.expect("closed");
    drop(demo);
}

/// A fresh `serve` (an empty store, its backfill still loading): the explorer's market says
/// the history is loading and how far, and its chart reads well with the one day it has (one
/// date under one dot, "1 day of data").
#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn a_fresh_serve_says_its_history_is_loading() {
    let sim = wafuel_sim::SimHandle::spawn(
        crate::support::local(),
        std::sync::Arc::new(wafuel::app::SystemClock),
        Faults::default(),
    )
    .await
    .expect("origin");
    let origin = crate::backfill::Origin::spawn(&sim).await;
    origin.hold_everything();
    let dir = tempfile::tempdir().expect("dir");
    let serve = crate::backfill::serve_backfilling(&sim, &origin, &dir, &[]);
    // Today's prices, asked once, are recorded: the one day of history the store has.
    assert_eq!(api(&serve.public, "/v1?product=1").await["meta"]["publicationStatus"], "available");
    let deadline = Instant::now() + Duration::from_secs(60);
    while api(&serve.public, "/v1/stats?product=1").await["data"]["attributes"]["days"]
        .as_array()
        .is_none_or(Vec::is_empty)
    {
        assert!(Instant::now() < deadline, "today recorded in the history");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let driver = start_driver();
    let client = browser(&driver, 1366, 900, false).await;
    allow_location(&client, &driver, false).await;
    client.goto(&format!("{}/explore", serve.public)).await.expect("page loads");
    wait_until(
        &client,
        "return document.getElementById('cycle').textContent.includes('The history is loading:')",
        "the market saying the history is loading",
    )
    .await;
    let said = run(
        &client,
        "const svg = document.getElementById('market-chart');
         const dates = [...svg.querySelectorAll('text')].filter(t => /\\d/.test(t.textContent) && t.getAttribute('y') == String(svg.viewBox.baseVal.height - 8));
         return [document.getElementById('cycle').textContent, dates.map(t => t.textContent), svg.querySelectorAll('circle.point').length]",
    )
    .await;
    let cycle = said[0].as_str().unwrap_or_default();
    assert!(cycle.contains("(1 day of data is too few to tell)"), "{cycle}");
    assert!(cycle.contains("files imported"), "{cycle}");
    assert_eq!(said[1].as_array().map(Vec::len), Some(1), "one date under the one day: {said}");
    assert!(said[2].as_u64().is_some_and(|n| n >= 1), "the day's median as a dot: {said}");
    run(&client, "document.getElementById('market-chart').scrollIntoView(); return true").await;
    save_screenshot(&client, "explore-loading.png").await;
    let errors = console_errors(&client, &driver).await;
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    client.close().await.expect("closed");
    origin.release("*");
}
