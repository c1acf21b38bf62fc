//! The explorer page in a real browser: Debian's Chromium, driven over WebDriver by Debian's
//! chromedriver, against `wafuel demo` on random ports. The page must load without a console
//! error (a CSP violation is one), draw every station, list the same cheapest stations as the
//! API, open a station card with its chart, and fit a phone's width. Screenshots go to
//! `target/browser/`.
//!
//! When Chromium or chromedriver is missing this test fails and says how to install them:
//! `scripts/test` and `.ci/run` install both, so it never passes by not running.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use wafuel::sim::Faults;

use crate::process::start;
use crate::support::{http, origin_at};

const CHROMIUM: &str = "/usr/bin/chromium";
const INSTALL: &str = "apt-get install chromium chromium-driver (scripts/test does it)";

/// A chromedriver process on a port of its choosing.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_driver() -> Driver {
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
async fn browser(driver: &Driver, width: u32, height: u32, phone: bool) -> Client {
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
async fn wait_until(client: &Client, script: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(45);
    loop {
        let done = client.execute(script, vec![]).await.expect("script runs");
        if done == Value::Bool(true) {
            return;
        }
        assert!(Instant::now() < deadline, "the page never showed {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn run(client: &Client, script: &str) -> Value {
    client.execute(script, vec![]).await.expect("script runs")
}

/// Console messages at error level since the last call (chromedriver's log endpoint).
async fn console_errors(client: &Client, driver: &Driver) -> Vec<String> {
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

async fn allow_location(client: &Client, driver: &Driver, allowed: bool) {
    let setting = if allowed { "granted" } else { "denied" };
    cdp(
        client,
        driver,
        "Browser.setPermission",
        json!({ "permission": { "name": "geolocation" }, "setting": setting }),
    )
    .await;
}

fn screenshot_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target").join("browser");
    std::fs::create_dir_all(&dir).expect("target/browser");
    dir
}

async fn save_screenshot(client: &Client, name: &str) {
    let png = client.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(screenshot_dir().join(name), png).expect("screenshot written");
}

async fn api(base: &str, path: &str) -> Value {
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

#[tokio::test]
async fn the_explorer_in_a_real_browser() {
    let demo = start(&["demo", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"]);
    let base = demo.public.clone();
    let driver = start_driver();

    // Desktop, first visit with the location refused: two API requests draw the map and the
    // market.
    let client = browser(&driver, 1280, 2000, false).await;
    allow_location(&client, &driver, false).await;
    client.goto(&format!("{base}/explore")).await.expect("page loads");
    wait_until(&client, "return document.querySelectorAll('#dots circle.station').length > 0", "stations")
        .await;
    wait_until(
        &client,
        "return !!document.querySelector('#market-chart polyline.market-median')",
        "the market chart",
    )
    .await;
    let all = api(&base, "/v1/stations?product=1&day=today").await;
    let dots = run(&client, "return document.querySelectorAll('#dots circle.station').length").await;
    assert_eq!(
        dots.as_u64(),
        Some(all["data"].as_array().expect("data").len() as u64),
        "one dot per station"
    );
    let api_requests = run(
        &client,
        "return performance.getEntriesByType('resource').filter(e => new URL(e.name).pathname.startsWith('/v1')).length",
    )
    .await;
    assert_eq!(api_requests.as_u64(), Some(2), "the first useful paint takes two API requests");
    let page_bytes = run(
        &client,
        "const own = [performance.getEntriesByType('navigation')[0], ...performance.getEntriesByType('resource')]
           .filter(e => !new URL(e.name).pathname.startsWith('/v1'));
         return own.reduce((sum, e) => sum + e.encodedBodySize, 0)",
    )
    .await;
    let page_bytes = page_bytes.as_u64().expect("a byte count");
    assert!(page_bytes > 10_000 && page_bytes < 100_000, "page, script, style and logos: {page_bytes} bytes");
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
    eprintln!("explorer: cumulative layout shift {shift}");
    assert!(shift.as_f64().is_some_and(|s| s < 0.1), "cumulative layout shift {shift}");
    let cycle = run(&client, "return document.getElementById('cycle').textContent").await;
    assert!(cycle.as_str().is_some_and(|t| t.starts_with("Unleaded")), "{cycle}");

    // The location allowed (the browser's own geolocation, emulated at Perth's CBD): the
    // cheapest list is the API's own order.
    let near = "-31.95000,115.86000";
    allow_location(&client, &driver, true).await;
    cdp(
        &client,
        &driver,
        "Emulation.setGeolocationOverride",
        json!({ "latitude": -31.95, "longitude": 115.86, "accuracy": 20 }),
    )
    .await;
    client.find(Locator::Id("locate")).await.expect("the location button").click().await.expect("click");
    wait_until(&client, "return document.querySelectorAll('#near-list li').length > 0", "the cheapest list")
        .await;
    let status = run(&client, "return document.getElementById('near-status').textContent").await;
    assert!(status.as_str().is_some_and(|s| s.contains("your location")), "{status}");
    let listed =
        run(&client, "return [...document.querySelectorAll('#near-list li')].map(li => li.dataset.id)").await;
    let expected =
        api(&base, &format!("/v1/stations?near={near}&radius=10&sort=price&product=1&day=today&limit=10"))
            .await;
    let expected_ids = ids(&expected);
    assert!(!expected_ids.is_empty());
    assert_eq!(listed, json!(expected_ids), "the list is the API's cheapest, in order");
    let first_price = run(&client, "return document.querySelector('#near-list li .price').textContent").await;
    let api_price = expected["data"][0]["attributes"]["price"]["products"]["1"].as_f64().expect("a price");
    assert_eq!(first_price, json!(format!("{api_price:.1}")));
    // Tomorrow's change as ▲/▼ with cents, when the API has one (after 14:30 Perth time).
    let marker = run(&client, "return document.querySelector('#near-list li .change').textContent").await;
    let expected_marker = match expected["data"][0]["attributes"]["price"]["change"]["1"].as_f64() {
        Some(d) if d > 0.0 => format!("▲ {d:.1}"),
        Some(d) if d < 0.0 => format!("▼ {:.1}", -d),
        Some(_) => "= 0.0".to_string(),
        None => String::new(),
    };
    assert_eq!(marker, json!(expected_marker), "tomorrow's change on the first row");
    save_screenshot(&client, "explore-desktop.png").await;

    // A station card with its 90-day chart, opened from the keyboard.
    let first = client.find(Locator::Css("#near-list li button")).await.expect("a row");
    first.send_keys("\u{E007}").await.expect("Enter on the row");
    wait_until(
        &client,
        "return !!document.querySelector('#card svg.chart polyline.series')",
        "the station chart",
    )
    .await;
    let name = run(&client, "return document.querySelector('#card h3').textContent").await;
    assert_eq!(name, expected["data"][0]["attributes"]["name"]);
    let url = client.current_url().await.expect("url");
    assert!(url.fragment().is_some_and(|f| f.contains(&format!("station={}", expected_ids[0]))), "{url}");
    save_screenshot(&client, "explore-card.png").await;

    // A suburb typed in the box moves the list there.
    let suburb = client.find(Locator::Id("suburb")).await.expect("suburb box");
    suburb.send_keys("Ellenbrook\u{E007}").await.expect("typed");
    wait_until(
        &client,
        "return document.getElementById('near-status').textContent.includes('Ellenbrook')",
        "the list near Ellenbrook",
    )
    .await;
    let errors = console_errors(&client, &driver).await;
    assert!(errors.is_empty(), "console errors on desktop: {errors:#?}");
    client.close().await.expect("closed");

    // A phone's width: nothing wider than the screen, the same parts, no console error.
    let phone = browser(&driver, 390, 2400, true).await;
    phone
        .goto(&format!("{base}/explore#fuel=1&day=today&near={near}&station={}", expected_ids[0]))
        .await
        .expect("page loads");
    wait_until(
        &phone,
        "return !!document.querySelector('#card svg.chart polyline.series')",
        "the card on a phone",
    )
    .await;
    wait_until(&phone, "return document.querySelectorAll('#near-list li').length > 0", "the list on a phone")
        .await;
    let overflow = run(&phone, "return document.documentElement.scrollWidth - window.innerWidth").await;
    assert!(overflow.as_i64().is_some_and(|o| o <= 0), "wider than a phone by {overflow} px");
    save_screenshot(&phone, "explore-phone.png").await;
    let errors = console_errors(&phone, &driver).await;
    assert!(errors.is_empty(), "console errors on a phone: {errors:#?}");
    phone.close().await.expect("closed");
}

/// The source fails twice with 503: the API answers 503 with `Retry-After`, the page says so
/// in words, waits, retries, and then draws the stations, with no script error on the way.
#[tokio::test]
async fn the_explorer_waits_out_a_failing_source() {
    let faults = Faults { status: Some(503), retry_after: Some(1), times: Some(2), ..Faults::default() };
    let (sim, _clock) = origin_at(perth_now(), faults).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let store = format!("sqlite://{}/explore.sqlite3", dir.path().display());
    let feed = sim.feed_url();
    let serve = start(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--admin-listen",
        "127.0.0.1:0",
        "--no-jobs",
        "--source-url",
        &feed,
        "--store",
        &store,
    ]);
    let driver = start_driver();
    let client = browser(&driver, 1280, 1400, false).await;
    allow_location(&client, &driver, false).await;
    client.goto(&format!("{}/explore", serve.public)).await.expect("page loads");
    wait_until(
        &client,
        "const s = document.getElementById('status');
         return s.classList.contains('error') && s.textContent.includes('temporarily unavailable')
           && s.textContent.includes('Retrying in 1 s')",
        "the 503 in words with its retry",
    )
    .await;
    save_screenshot(&client, "explore-retrying.png").await;
    wait_until(
        &client,
        "return document.querySelectorAll('#dots circle.station').length > 0",
        "stations after the retry",
    )
    .await;
    let status = run(&client, "return document.getElementById('status').className").await;
    assert_eq!(status, "status", "the error message is gone once prices arrive");
    // The browser reports the refused requests themselves; anything else is a page error.
    let errors: Vec<String> = console_errors(&client, &driver)
        .await
        .into_iter()
        .filter(|e| !e.contains("the server responded with a status of 503"))
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    client.close().await.expect("closed");
}

/// Now in Perth, as a civil time: the origin's clock for a `serve` process on the system clock.
fn perth_now() -> jiff::civil::DateTime {
    jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::get("Australia/Perth").expect("tz")).datetime()
}
