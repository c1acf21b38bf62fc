//! The nginx example of `deploy/nginx-tls.conf`, run as written (only its upstream address,
//! ports and certificate directory are changed to this machine's) in front of `wafuel serve`:
//! HTTP/2 over TLS, plain HTTP redirected, and an event stream passed through unbuffered.
//! Eight open event streams and a price request share one connection, which is why the
//! example exists: over HTTP/1.1 a browser has six connections per host and each stream keeps
//! one. Needs nginx (with HTTP/2), openssl and curl: `scripts/test` installs nginx-light; the
//! test fails, naming the package, when one is missing.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use wafuel_sim::Faults;

use crate::process::{established, event_streams, serve_from};
use crate::support::{origin_at, perth_wall_clock};

const CONFIG: &str = include_str!("../../deploy/nginx-tls.conf");

/// A child process stopped when the test ends, however it ends: first by SIGTERM, which
/// nginx's master passes on to its workers (SIGKILL would leave them running, holding the test
/// runner's output open), then by SIGKILL if it is still there after a few seconds.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.0.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("a port").local_addr().expect("addr").port()
}

fn tool(name: &str, package: &str) -> String {
    let found = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|p| p.exists());
    found.map(|p| p.display().to_string()).unwrap_or_else(|| {
        panic!("DEPLOY TEST CANNOT RUN: {name} is missing; apt-get install {package} (scripts/test does it)")
    })
}

/// The example with this machine's addresses: every other line as shipped.
fn site(config: &str, upstream: &str, tls: u16, plain: u16, certs: &Path) -> String {
    let mut out = String::new();
    for line in config.lines() {
        let trimmed = line.trim();
        let line = if trimmed.starts_with("listen [::]") {
            continue;
        } else if trimmed.starts_with("listen 443 ") {
            // The listen parameters (ssl, http2) stay as shipped.
            line.replacen("listen 443 ", &format!("listen 127.0.0.1:{tls} "), 1)
        } else if trimmed == "listen 80;" {
            format!("    listen 127.0.0.1:{plain};")
        } else if trimmed.starts_with("resolver ") {
            // This machine's nginx resolves nothing: the upstream is an address.
            String::new()
        } else if trimmed == "server wafuel:8080 resolve;" {
            format!("    server {upstream};")
        } else {
            line.replace("/etc/nginx/certs", &certs.display().to_string())
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn curl(args: &[&str]) -> Output {
    Command::new(tool("curl", "curl")).args(args).output().expect("curl runs")
}

#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test]
async fn the_nginx_tls_example_serves_http2_and_shares_one_connection() {
    let nginx = tool("nginx", "nginx-light");
    let openssl = tool("openssl", "openssl");
    // `serve` runs on the system clock, so the origin publishes today's Perth prices.
    let (sim, _clock) = origin_at(perth_wall_clock(), Faults::default()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let serve = serve_from(&sim.feed_url(), dir.path());
    let upstream = serve.public.trim_start_matches("http://").to_string();

    let certs = dir.path().join("certs");
    std::fs::create_dir_all(&certs).expect("certs dir");
    let made = Command::new(openssl)
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"])
        .arg("-keyout")
        .arg(certs.join("privkey.pem"))
        .arg("-out")
        .arg(certs.join("fullchain.pem"))
        .stderr(Stdio::null())
        .status()
        .expect("openssl runs");
    assert!(made.success(), "a self-signed certificate");

    let (tls, plain) = (free_port(), free_port());
    let prefix = dir.path().join("nginx");
    std::fs::create_dir_all(&prefix).expect("nginx dir");
    std::fs::write(prefix.join("site.conf"), site(CONFIG, &upstream, tls, plain, &certs)).expect("site");
    let p = prefix.display();
    std::fs::write(
        prefix.join("nginx.conf"),
        format!(
            "worker_processes 1; pid {p}/nginx.pid; error_log {p}/error.log;
             events {{ worker_connections 256; }}
             http {{ access_log off; client_body_temp_path {p}/body; proxy_temp_path {p}/proxy;
                     fastcgi_temp_path {p}/fastcgi; uwsgi_temp_path {p}/uwsgi; scgi_temp_path {p}/scgi;
                     include {p}/site.conf; }}"
        ),
    )
    .expect("nginx.conf");
    let _nginx = Reaped(
        Command::new(nginx)
            .arg("-p")
            .arg(&prefix)
            .arg("-c")
            .arg(prefix.join("nginx.conf"))
            .args(["-g", "daemon off;"])
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts"),
    );
    let base = format!("https://127.0.0.1:{tls}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", tls)).is_err() {
        assert!(Instant::now() < deadline, "nginx never listened: {}", read(&prefix.join("error.log")));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Prices over HTTP/2.
    let url = format!("{base}/v1/stations?product=1");
    let answer = blocking(vec![
        "-sk".into(),
        "--http2".into(),
        "-o".into(),
        "/dev/null".into(),
        "-w".into(),
        "%{http_version} %{http_code}".into(),
        url,
    ])
    .await;
    assert_eq!(String::from_utf8_lossy(&answer.stdout), "2 200", "{}", read(&prefix.join("error.log")));

    // Plain HTTP moves to HTTPS, keeping the path.
    let moved = blocking(vec![
        "-s".into(),
        "-o".into(),
        "/dev/null".into(),
        "-w".into(),
        "%{http_code} %{redirect_url}".into(),
        format!("http://127.0.0.1:{plain}/explore"),
    ])
    .await;
    assert_eq!(String::from_utf8_lossy(&moved.stdout), "308 https://127.0.0.1/explore");

    // One stream through the proxy: its first bytes arrive at once (nothing buffered).
    let one = blocking(vec![
        "-skN".into(),
        "--http2".into(),
        "--max-time".into(),
        "3".into(),
        "-H".into(),
        "accept: text/event-stream".into(),
        format!("{base}/v1/events"),
    ])
    .await;
    assert!(String::from_utf8_lossy(&one.stdout).starts_with("retry: "), "{one:?}");

    // Eight event streams at once from one client, multiplexed: the server holds eight
    // streams and the client one TCP connection to the proxy.
    let mut args: Vec<String> = [
        "-sk",
        "--http2",
        "--parallel",
        "--parallel-max",
        "16",
        "-o",
        "/dev/null",
        "-H",
        "accept: text/event-stream",
    ]
    .iter()
    .map(|a| (*a).to_string())
    .collect();
    for _ in 0..8 {
        args.push(format!("{base}/v1/events"));
    }
    let _streams = Reaped(
        Command::new(tool("curl", "curl"))
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("curl starts"),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let (streams, connections) = loop {
        let held = (event_streams(&serve).await, established(&format!("( dport = :{tls} )")));
        if held.0 == 8 || Instant::now() > deadline {
            break held;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(streams, 8, "eight streams open at the server");
    assert_eq!(connections, 1, "eight streams over one connection to the proxy");
    drop(serve);
}

async fn blocking(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || curl(&args.iter().map(String::as_str).collect::<Vec<_>>()))
        .await
        .expect("curl finished")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}
