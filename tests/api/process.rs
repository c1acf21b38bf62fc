//! The binary as operators run it: admin endpoints, request ids in JSON logs, metrics by
//! route, and a clean exit on SIGTERM.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::support::http;

/// A `wafuel` process under test.
pub struct Running {
    pub child: Child,
    pub public: String,
    pub admin: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `wafuel demo` on random ports and read its addresses from stdout; without the
/// archive import (the admin port's test needs no long history).
fn start_demo() -> Running {
    start_demo_with(&[])
}

/// [`start_demo`] with `extra` arguments.
fn start_demo_with(extra: &[&str]) -> Running {
    let mut args = vec![
        "demo",
        "--no-import",
        "--listen",
        "127.0.0.1:0",
        "--admin-listen",
        "127.0.0.1:0",
        "--log-format",
        "json",
    ];
    args.extend_from_slice(extra);
    start(&args)
}

/// `wafuel serve` on random ports over `feed` (the simulated origin), with its SQLite store
/// in `dir` and no background jobs: prices are fetched when first asked for.
pub fn serve_from(feed: &str, dir: &std::path::Path) -> Running {
    serve_with(&format!("sqlite://{}/wafuel.sqlite3", dir.display()), feed, &[])
}

/// `wafuel serve` on random ports over `feed` and `store`, without background jobs, with
/// `extra` arguments.
pub fn serve_with(store: &str, feed: &str, extra: &[&str]) -> Running {
    let mut args = vec![
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--admin-listen",
        "127.0.0.1:0",
        "--no-jobs",
        "--source-url",
        feed,
        "--store",
        store,
    ];
    args.extend_from_slice(extra);
    start(&args)
}

/// The event streams a running server holds open (its `wafuel_event_streams` gauge).
pub async fn event_streams(run: &Running) -> u64 {
    let text = http()
        .get(format!("{}/metrics", run.admin))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    text.lines()
        .find_map(|l| l.strip_prefix("wafuel_event_streams "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(0.0) as u64
}

/// Established TCP connections matching an `ss` filter, e.g. `( sport = :8080 )`.
pub fn established(filter: &str) -> usize {
    let ss = Command::new("ss").args(["-tnH", "state", "established", filter]).output().expect("ss runs");
    String::from_utf8_lossy(&ss.stdout).lines().count()
}

/// Start `wafuel` with these arguments; it must print its `public:` and `admin:` URLs.
pub fn start(args: &[&str]) -> Running {
    let mut command = Command::new(env!("CARGO_BIN_EXE_wafuel"));
    command.args(args).stderr(Stdio::piped());
    start_command(command)
}

/// Start a command that runs `wafuel` (perhaps under a wrapper such as `faketime`); it must
/// print its `public:` and `admin:` URLs. Its stderr is the caller's choice.
pub fn start_command(mut command: Command) -> Running {
    let mut child = command.stdout(Stdio::piped()).spawn().expect("wafuel starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let (mut public, mut admin) = (None, None);
    while public.is_none() || admin.is_none() {
        let line = lines.next().expect("a line").expect("utf8");
        if let Some(url) = line.strip_prefix("public: ") {
            public = Some(url.to_string());
        }
        if let Some(url) = line.strip_prefix("admin: ") {
            admin = Some(url.to_string());
        }
    }
    // Keep draining stdout so the process never writes into a closed pipe.
    std::thread::spawn(move || for _ in lines {});
    Running { child, public: public.unwrap_or_default(), admin: admin.unwrap_or_default() }
}

#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn admin_port_logs_metrics_and_graceful_exit() {
    let mut run = start_demo();
    let client = http();
    let health = client.get(format!("{}/healthz", run.admin)).send().await.expect("healthz");
    assert_eq!(health.status(), 200);
    let ready = client.get(format!("{}/readyz", run.admin)).send().await.expect("readyz");
    assert_eq!(ready.status(), 200);
    let feed = client.get(format!("{}/v1?product=10", run.public)).send().await.expect("public request");
    assert_eq!(feed.status(), 200);
    let request_id = feed.headers()["x-request-id"].to_str().expect("ascii").to_string();
    assert!(!request_id.is_empty());
    // Revalidated, it is answered from the front cache, whose line is staged by the answering
    // thread: it is written by the time the process has exited.
    let etag = feed.headers()["etag"].clone();
    let revalidated = client
        .get(format!("{}/v1?product=10", run.public))
        .header("if-none-match", etag)
        .header("x-request-id", "revalidated-1")
        .send()
        .await
        .expect("revalidation");
    assert_eq!(revalidated.status(), 304);
    let missing = client.get(format!("{}/nowhere", run.public)).send().await.expect("404");
    assert_eq!(missing.status(), 404);

    let metrics = client.get(format!("{}/metrics", run.admin)).send().await.expect("metrics");
    let text = metrics.text().await.expect("text");
    assert!(
        text.lines().any(|l| l.starts_with("wafuel_http_requests_total")
            && l.contains("route=\"/v1\"")
            && l.contains("status=\"200\"")),
        "{text}"
    );
    assert!(text.contains("wafuel_http_request_duration_seconds_bucket"));
    assert!(text.contains("status=\"404\""));

    // An open event stream does not hold the drain up: it ends with a comment telling the
    // client to reconnect elsewhere (without it, the drain would wait its whole 30 s).
    let mut stream = client.get(format!("{}/v1/events", run.public)).send().await.expect("stream");
    assert_eq!(stream.status(), 200);
    let first = stream.chunk().await.expect("chunk").expect("the stream's first bytes");
    assert!(first.starts_with(b"retry: "), "{first:?}");

    // SIGTERM: drain and exit 0.
    terminate(&run);
    let mut rest = Vec::new();
    while let Ok(Some(bytes)) = stream.chunk().await {
        rest.extend_from_slice(&bytes);
    }
    let rest = String::from_utf8_lossy(&rest).to_string();
    assert!(rest.contains(": server shutting down; reconnect with Last-Event-ID"), "{rest:?}");

    // The JSON log has a line per request carrying that request's id.
    let stderr = log_after_clean_exit(&mut run);
    let lines_of = |id: &str| -> Vec<serde_json::Value> {
        stderr
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["span"]["request_id"] == id)
            .collect()
    };
    assert!(!lines_of(&request_id).is_empty(), "no log line for request {request_id}:\n{stderr}");
    let staged = lines_of("revalidated-1");
    assert_eq!(staged.len(), 1, "one line for the revalidation:\n{stderr}");
    assert_eq!(staged[0]["status"], 304);
    assert_eq!(staged[0]["span"]["path"], "/v1");
}

/// Ask the process to stop, as a supervisor does (SIGTERM).
fn terminate(run: &Running) {
    let status = Command::new("kill").args(["-TERM", &run.child.id().to_string()]).status().expect("kill");
    assert!(status.success());
}

/// Wait for a terminated process to exit 0 and return everything it logged.
fn log_after_clean_exit(run: &mut Running) -> String {
    let exit = wait_with_timeout(&mut run.child, Duration::from_secs(10));
    assert!(exit.success(), "{exit:?}");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut run.child.stderr.take().expect("stderr"), &mut stderr).expect("log");
    stderr
}

pub fn wait_with_timeout(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("wafuel did not exit within {limit:?} of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn warm_command_exit_codes() {
    // The binary runs on the real clock, so the origin does too.
    let sim = wafuel_sim::SimHandle::spawn(
        crate::support::local(),
        std::sync::Arc::new(wafuel::app::SystemClock),
        wafuel_sim::Faults::default(),
    )
    .await
    .expect("origin");
    let dir = tempfile::tempdir().expect("dir");
    let store = format!("sqlite://{}/w.sqlite3", dir.path().display());
    let run = |store: &str, source: &str| {
        Command::new(env!("CARGO_BIN_EXE_wafuel"))
            .args(["warm", "--store", store, "--source-url", source, "--log-format", "json"])
            .output()
            .expect("wafuel warm runs")
    };
    let feed = sim.feed_url();
    let ok = tokio::task::spawn_blocking({
        let (store, feed) = (store.clone(), feed.clone());
        move || run(&store, &feed)
    })
    .await
    .expect("join");
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(String::from_utf8_lossy(&ok.stdout).contains("0 failed"));
    assert!(sim.state.request_count() >= 7);
    sim.state.set_faults(wafuel_sim::Faults { status: Some(403), ..Default::default() });
    let failed = tokio::task::spawn_blocking(move || run(&store, &feed)).await.expect("join");
    assert_eq!(failed.status.code(), Some(1), "a failed extract makes warm exit non-zero");
    assert!(String::from_utf8_lossy(&failed.stdout).contains("upstream_denied"));
}

#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[test]
fn import_wholesale_says_what_it_did_and_refuses_a_file_without_its_columns() {
    let dir = tempfile::tempdir().expect("dir");
    let store = format!("sqlite://{}/w.sqlite3", dir.path().display());
    let good = dir.path().join("FuelWatchWholesale-2026.csv");
    std::fs::write(
        &good,
        "PUBLISH_DATE,PRODUCT,PRODUCT_PRICE\r\n01/01/2026,ULP,149.2\r\n02/01/2026,ULP,1200\r\n",
    )
    .expect("write");
    let bad = dir.path().join("prices.csv");
    std::fs::write(&bad, "DATE,FUEL,PRICE\n01/01/2026,ULP,149.2\n").expect("write");
    let run = |file: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_wafuel"))
            .args(["import-wholesale", "--store", &store, "--log-format", "json"])
            .arg(file)
            .output()
            .expect("wafuel import-wholesale runs")
    };
    let ok = run(&good);
    let said = String::from_utf8_lossy(&ok.stdout);
    assert!(ok.status.success(), "{said} {}", String::from_utf8_lossy(&ok.stderr));
    assert!(said.contains("1 prices new") && said.contains("1 rows could not be read"), "{said}");
    assert!(said.contains("line 3: PRODUCT_PRICE \"1200\""), "{said}");
    let again = run(&good);
    assert!(String::from_utf8_lossy(&again.stdout).contains("0 prices new, 0 changed, 1 unchanged"));
    let refused = run(&bad);
    assert!(!refused.status.success(), "a file without the columns fails the command");
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(why.contains("lacks PUBLISH_DATE, PRODUCT, PRODUCT_PRICE (it has DATE, FUEL, PRICE)"), "{why}");
}

/// A yearly file's import takes memory for its distinct prices, not its bytes: 45 MB of valid
/// rows (every day since 2003, three products, 35 terminals) stream in, each price stored, the
/// process's peak resident size (GNU time's, from the kernel) under 64 MiB.
#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[test]
fn a_large_wholesale_file_is_imported_in_memory_far_below_its_size() {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("dir");
    let store = format!("sqlite://{}/w.sqlite3", dir.path().display());
    let path = dir.path().join("FuelWatchWholesale-2026.csv");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    writeln!(file, "PUBLISH_DATE,TERMINAL_GATE,PRODUCT,PRODUCT_PRICE,LOCATION\r").expect("write");
    let (terminals, products) = (35, ["ULP", "PULP", "Diesel"]);
    let mut day = jiff::civil::date(2003, 1, 1);
    let mut rows = 0u64;
    while day <= jiff::civil::date(2026, 11, 30) {
        for t in 0..terminals {
            for (p, product) in products.iter().enumerate() {
                let price = 120 + (day.day() as usize + t + p) % 60;
                writeln!(
                    file,
                    "{:02}/{:02}/{},Terminal {t:02} Kwinana,{product},{price}.{},Perth\r",
                    day.day(),
                    day.month(),
                    day.year(),
                    t % 10
                )
                .expect("write");
                rows += 1;
            }
        }
        day = day.tomorrow().expect("a day");
    }
    // A repeat with another price: a conflict, the first kept.
    writeln!(file, "01/01/2003,Terminal 00 Kwinana,ULP,499.00,Perth\r").expect("write");
    drop(file);
    let bytes = std::fs::metadata(&path).expect("size").len();
    assert!(bytes > 40_000_000, "{bytes} bytes");
    let out = Command::new("/usr/bin/time")
        .args(["-f", "peak-kib %M"])
        .arg(env!("CARGO_BIN_EXE_wafuel"))
        .args(["import-wholesale", "--store", &store, "--log-format", "json"])
        .arg(&path)
        .output()
        .expect("GNU time runs wafuel import-wholesale");
    let (said, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said} {err}");
    assert!(said.contains(&format!("{rows} prices new")) && said.contains("1 conflicts"), "{said}");
    let peak_kib: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("peak-kib "))
        .and_then(|k| k.trim().parse().ok())
        .unwrap_or_else(|| panic!("GNU time's peak in {err}"));
    // The whole file held as prices took 5.5 times its size (250 MB here); read through, the
    // 917,000 prices take 8 bytes each over the process's 20 MiB.
    assert!(peak_kib < 64 * 1024, "peak {peak_kib} KiB for a file of {bytes} bytes");
}

/// The environment a running process has, as the kernel holds it.
fn environment(pid: u32) -> Vec<String> {
    let raw = std::fs::read(format!("/proc/{pid}/environ")).expect("environ");
    raw.split(|b| *b == 0).map(|v| String::from_utf8_lossy(v).into_owned()).collect()
}

/// The binary runs with one glibc malloc arena per core (it starts itself again with
/// `MALLOC_ARENA_MAX` set, keeping its process id), unless the operator chose a number.
#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn the_binary_runs_with_one_malloc_arena_per_core_unless_told_otherwise() {
    let (sim, _clock) =
        crate::support::origin_at(crate::support::perth_wall_clock(), Default::default()).await;
    let dir = tempfile::tempdir().expect("dir");
    let run = serve_from(&sim.feed_url(), dir.path());
    let env = environment(run.child.id());
    // Counted here, not read from the code under test: one arena per core.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let want = format!("MALLOC_ARENA_MAX={cores}");
    assert!(env.contains(&want), "{want} in {env:?}");
    let r = http().get(format!("{}/v1?product=1", run.public)).send().await.expect("answers");
    assert_eq!(r.status(), 200, "the process that started itself again serves");
    drop(run);

    let mut command = Command::new(env!("CARGO_BIN_EXE_wafuel"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--no-jobs"])
        .args(["--source-url", &sim.feed_url()])
        .args(["--store", &format!("sqlite://{}/other.sqlite3", dir.path().display())])
        .env("MALLOC_ARENA_MAX", "4")
        .stderr(Stdio::null());
    let told = start_command(command);
    assert!(
        environment(told.child.id()).iter().any(|v| v == "MALLOC_ARENA_MAX=4"),
        "the operator's setting wins"
    );
}

/// `demo --now`: the whole demo on a clock that starts at 14:30:50 Perth time today, so the
/// warm job's 14:31 pass brings tomorrow's prices and `/v1/events` says `published` for
/// tomorrow within a minute or so; before it, tomorrow is not yet published.
#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn the_demo_on_a_clock_of_its_own_shows_a_publish() {
    let today =
        jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::get("Australia/Perth").expect("zone")).date();
    let tomorrow = today.tomorrow().expect("a tomorrow");
    let start_at = format!("{today}T14:30:50+08:00");
    let demo = start_demo_with(&["--now", &start_at]);
    let mut stream =
        http().get(format!("{}/v1/events?product=1&since=0", demo.public)).send().await.expect("events");
    assert_eq!(stream.status(), 200);
    let want = format!("\"date\":\"{tomorrow}\"");
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(150);
    while !seen.split("\n\n").any(|e| e.contains("event: published") && e.contains(&want)) {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match tokio::time::timeout(left, stream.chunk()).await {
            Ok(Ok(Some(bytes))) => seen.push_str(&String::from_utf8_lossy(&bytes)),
            other => panic!("no published event for {tomorrow} in time ({other:?}); the stream said: {seen}"),
        }
    }
    let doc: serde_json::Value = http()
        .get(format!("{}/v1/stations?product=1&day=tomorrow&limit=1", demo.public))
        .send()
        .await
        .expect("tomorrow")
        .json()
        .await
        .expect("json");
    assert_eq!(doc["meta"]["publicationStatus"], "available");
    assert_eq!(doc["meta"]["sourceDate"], tomorrow.to_string());
    let fetched = doc["meta"]["fetchedAt"].as_str().expect("fetchedAt");
    assert!(fetched.starts_with(&format!("{today}T14:3")), "fetched on the demo's clock: {fetched}");
}

#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn the_demo_logs_text_for_a_person_even_through_a_pipe() {
    // Its stderr is a pipe here, where `serve` would write JSON; the demo writes text lines
    // like its own, so `wafuel demo 2>&1 | tee` reads as one kind of line.
    let mut run = start(&["demo", "--no-import", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"]);
    let answer = http().get(format!("{}/v1", run.public)).send().await.expect("request");
    assert_eq!(answer.status(), 200);
    terminate(&run);
    let stderr = log_after_clean_exit(&mut run);
    assert!(stderr.lines().any(|l| l.contains("/v1")), "a line for the request:\n{stderr}");
    let json: Vec<&str> = stderr.lines().filter(|l| l.trim_start().starts_with('{')).collect();
    assert!(json.is_empty(), "JSON lines in the demo's log: {json:?}");
    // Plain text, no terminal colour codes, where no terminal reads it.
    assert!(!stderr.contains('\u{1b}'), "colour codes in a piped log:\n{stderr:?}");
}

/// A taken port fails the demo at once, before any seeding, naming the setting that moves
/// it; the admin port likewise.
#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[test]
fn a_taken_port_fails_at_once_naming_the_setting() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = taken.local_addr().expect("address").to_string();
    for (flag, other, env) in [
        ("--listen", "--admin-listen", "WAFUEL_LISTEN"),
        ("--admin-listen", "--listen", "WAFUEL_ADMIN_LISTEN"),
    ] {
        let started = std::time::Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_wafuel"))
            .args(["demo", "--no-import", flag, &addr, other, "127.0.0.1:0"])
            .output()
            .expect("wafuel demo runs");
        assert!(!out.status.success());
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains(&format!("cannot listen on {addr}")), "{said}");
        assert!(said.contains(flag) && said.contains(env), "{said} names {flag} and {env}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("seeding"), "refused before seeding: {stdout}");
        assert!(started.elapsed() < Duration::from_secs(5), "at once: {:?}", started.elapsed());
    }
}

/// The demo honours SIGINT while it seeds (stopping at once) and SIGTERM while it serves, and
/// its temporary store is gone after either.
#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[test]
fn the_demo_stops_on_a_signal_while_seeding_and_leaves_no_store_behind() {
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_wafuel"))
            .args(["demo", "--no-import", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("wafuel demo starts")
    };
    // SIGINT as soon as it says it is seeding.
    let mut child = spawn();
    let store = std::env::temp_dir().join(format!("wafuel-demo-{}", child.id()));
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    while let Some(Ok(line)) = lines.next() {
        if line.starts_with("seeding") {
            break;
        }
    }
    assert!(store.exists(), "the demo's store while it seeds");
    let signalled = std::time::Instant::now();
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill");
    let status = child.wait().expect("exits");
    assert!(signalled.elapsed() < Duration::from_secs(5), "stopped at once: {:?}", signalled.elapsed());
    assert!(status.success(), "{status:?}");
    assert!(!store.exists(), "{} left behind after SIGINT", store.display());
    // SIGTERM while serving.
    let mut child = spawn();
    let store = std::env::temp_dir().join(format!("wafuel-demo-{}", child.id()));
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    while let Some(Ok(line)) = lines.next() {
        if line.starts_with("public: ") {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill");
    assert!(child.wait().expect("exits").success());
    assert!(!store.exists(), "{} left behind after SIGTERM", store.display());
}
