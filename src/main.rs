//! The `wafuel` binary: parse the command line, start telemetry, run the chosen command.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use wafuel::app::{AppConfig, build_state};
use wafuel::config::{Cli, Command, ListenArgs, MetaArgs, PlacesArgs, PublicArgs};
use wafuel::jobs::{enrich, warm};
use wafuel::places::client::PlacesClient;
use wafuel::server::{self, StoreReadiness};
use wafuel::sim::SimHandle;
use wafuel::sim::places::{PlacesHandle, demo_places};
use wafuel::snapshot::FillConfig;
use wafuel::store::{self, SnapshotStore, Store, redact};
use wafuel::telemetry;
use wafuel::time::{ManualClock, SharedClock, SystemClock};

/// Print a line for the operator; a closed stdout (e.g. piped into `head`) must not stop
/// `--features mimalloc`: mimalloc instead of glibc's malloc. The profile of a cached answer
/// under load spent 11–12 % of the process in glibc's allocator, and mimalloc serves small
/// cached answers 10–20 % faster; but it keeps freed pages, and the peak memory under the
/// benchmark's load doubled (71 → 142 MiB), past the 128 MiB target. Off by default.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// the service, so write errors are ignored.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    // Held to the end of main: dropping it writes the lines still queued.
    let _log = telemetry::init_logging(cli.log_format);
    match run(cli.command).await {
        Ok(code) => code,
        Err(e) => {
            tracing::error!(error = %e, "wafuel failed");
            ExitCode::FAILURE
        }
    }
}

/// Past days of price history the demo starts with.
const DEMO_HISTORY_DAYS: i32 = 120;

async fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::SimulateSource(args) => {
            let clock: SharedClock = match args.now {
                Some(at) => ManualClock::new(at),
                None => Arc::new(SystemClock),
            };
            let sim = SimHandle::spawn(args.listen, clock, args.faults()).await?;
            tracing::info!(url = %sim.feed_url(), "simulated FuelWatch origin listening");
            say!("simulated FuelWatch origin: {}", sim.feed_url());
            server::shutdown_signal().await;
            sim.shutdown().await;
            Ok(ExitCode::SUCCESS)
        }
        Command::Demo(args) => {
            let clock: SharedClock = Arc::new(SystemClock);
            let sim = SimHandle::spawn("127.0.0.1:0".parse()?, clock.clone(), Default::default()).await?;
            // A store of its own, so the demo never mixes simulated prices into a real store.
            let dir = std::env::temp_dir().join(format!("wafuel-demo-{}", std::process::id()));
            let store = store::open(&format!("sqlite://{}/demo.sqlite3", dir.display())).await?;
            say!("wafuel demo: the API over a simulated FuelWatch ({})", sim.feed_url());
            // 120 past days of prices, so history, statistics and the price cycle have shape.
            say!("seeding {DEMO_HISTORY_DAYS} past days of price history…");
            let history: Arc<dyn wafuel::store::history::HistoryStore> = store.clone();
            let today = wafuel::time::perth_now(clock.now()).date();
            let seeded = wafuel::jobs::seed::seed_history(&history, today, DEMO_HISTORY_DAYS, |p, d| {
                sim.state.past_feed(p, d)
            })
            .await;
            say!("seeded {} history rows", seeded.written);
            // A Places stand-in with places for some stations, and one enrichment pass, so the
            // demo shows `enrichment` too (a few seconds after start).
            let places = PlacesHandle::spawn("demo", demo_places(sim.state.dataset())).await?;
            let enrich_state =
                build_state(AppConfig::new(sim.feed_url().parse()?, store.clone(), clock.clone()))?;
            let client = PlacesClient::new(places.base_url().parse()?, "demo".into())?;
            let demo_enrich = enrich::EnrichConfig {
                discover_product: Some(1),
                batch: 2_000,
                daily_budget: 10_000,
                ..Default::default()
            };
            say!("enriching a tenth of the stations from a local Places stand-in…");
            let pass = enrich::enrich_pass(&enrich_state.prices, &store, &client, &demo_enrich);
            match tokio::time::timeout(std::time::Duration::from_secs(60), pass).await {
                Ok(Ok(report)) => say!("enriched {} stations", report.matched),
                Ok(Err(e)) => tracing::warn!(error = %e, "demo enrichment failed"),
                Err(_) => tracing::warn!("demo enrichment took too long; serving without it"),
            }
            let result = serve_api(
                &args.listen,
                &args.public,
                &args.meta,
                sim.feed_url().parse()?,
                store,
                FillConfig::default(),
                wafuel::snapshot::DEFAULT_HISTORY_DAYS,
                clock,
                None,
            )
            .await;
            drop(places);
            sim.shutdown().await;
            let _ = std::fs::remove_dir_all(&dir);
            result
        }
        Command::Serve(args) => {
            let clock: SharedClock = Arc::new(SystemClock);
            let store = store::open(&args.store.store).await?;
            tracing::info!(store = %redact(&args.store.store), "snapshot store ready");
            serve_api(
                &args.listen,
                &args.public,
                &args.meta,
                args.source.source_url.clone(),
                store,
                args.store.fill(),
                args.store.history_days,
                clock,
                (!args.jobs.no_jobs).then_some(&args.places),
            )
            .await
        }
        Command::Warm(args) => {
            let clock: SharedClock = Arc::new(SystemClock);
            let store = store::open(&args.store.store).await?;
            let state = build_state(
                AppConfig::new(args.source.source_url.clone(), store, clock).with_store_args(&args.store),
            )?;
            let report = warm::warm_pass(&state.prices).await;
            say!(
                "warm: {} refreshed, {} held by another replica, {} failed, {} pruned",
                report.refreshed,
                report.skipped,
                report.failed.len(),
                report.pruned
            );
            for (key, code) in &report.failed {
                say!("  failed: {key} ({code})");
            }
            Ok(if report.failed.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        Command::Enrich(args) => {
            let Some(client) = args.places.client()? else {
                eprintln!(
                    "wafuel enrich: no Places API key (--places-api-key / WAFUEL_PLACES_API_KEY); nothing to do"
                );
                return Ok(ExitCode::from(2));
            };
            let clock: SharedClock = Arc::new(SystemClock);
            let store = store::open(&args.store.store).await?;
            let state = build_state(
                AppConfig::new(args.source.source_url.clone(), store.clone(), clock)
                    .with_store_args(&args.store),
            )?;
            let report = enrich::enrich_pass(&state.prices, &store, &client, &args.places.enrich_config())
                .await
                .map_err(|e| anyhow::anyhow!(e))?;
            say!(
                "enrich: {} looked up, {} matched, {} unmatched, {} failed, {} provider requests{}{}",
                report.looked_up,
                report.matched,
                report.unmatched,
                report.failed,
                report.provider_requests,
                if report.budget_exhausted { ", daily budget spent" } else { "" },
                report.skipped.map(|why| format!(", skipped: {why}")).unwrap_or_default()
            );
            Ok(if report.failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
    }
}

/// Serve the public API and the admin port until a signal; optionally run the jobs.
#[allow(clippy::too_many_arguments)]
async fn serve_api(
    listen: &ListenArgs,
    public: &PublicArgs,
    meta: &MetaArgs,
    source_url: url::Url,
    store: Arc<dyn Store>,
    fill: FillConfig,
    history_days: i32,
    clock: SharedClock,
    jobs: Option<&PlacesArgs>,
) -> anyhow::Result<ExitCode> {
    let state = build_state(AppConfig {
        fill,
        meta: meta.document_meta(),
        public_origin: public.public_origin.clone(),
        history_days,
        ..AppConfig::new(source_url, store.clone(), clock)
    })?;
    // A replica starting over a filled store decodes the day's stored extracts before it
    // serves, so its first answers read memory (the source is never asked here).
    let preloaded = state.catalog.preload(wafuel::jobs::warm::warm_extracts(state.catalog.now())).await;
    tracing::info!(extracts = preloaded, "day catalogues decoded from the store");
    let public_listener = server::bind(listen.listen).await?;
    let admin_listener = server::bind(listen.admin_listen).await?;
    let (public_addr, admin_addr) = (public_listener.local_addr()?, admin_listener.local_addr()?);
    tracing::info!(public = %public_addr, admin = %admin_addr, "wafuel serving");
    say!("public: http://{public_addr}");
    say!("admin: http://{admin_addr}");
    say!("explore: http://{public_addr}/explore   (map, cheapest near you, price history)");
    say!("try:");
    say!("  curl -s http://{public_addr}/v1 -H 'Accept: application/vnd.api+json'");
    say!("  curl -s 'http://{public_addr}/v1?product=1,4&brand=5&expand=all'");
    say!("  curl -s 'http://{public_addr}/legacy?product=1&region=25'");
    say!("  curl -s 'http://{public_addr}/v1/stations?near=-31.9523,115.8613&product=1&sort=price&limit=5'");
    say!("  curl -s 'http://{public_addr}/v1/stats?product=1'");
    say!(
        "  curl -s 'http://{public_addr}/v1/stations?product=1&region=25' -H 'Accept: application/geo+json'"
    );
    say!("  curl -s http://{admin_addr}/metrics");
    let mut background = Vec::new();
    if let Some(places) = jobs {
        background.push(tokio::spawn(warm::run_hourly(state.prices.clone())));
        match places.client()? {
            Some(client) => background.push(tokio::spawn(enrich::run_every(
                state.prices.clone(),
                store.clone(),
                client,
                places.enrich_config(),
            ))),
            None => tracing::info!("no Places API key: station enrichment is off"),
        }
    }
    let readiness: Arc<dyn SnapshotStore> = store;
    let limits = server::ServerLimits { max_concurrency: listen.max_concurrency, ..Default::default() };
    let result = server::serve_until_signal(
        vec![
            (public_listener, wafuel::app::public_site(state, &limits)),
            (admin_listener, server::admin_router(Arc::new(StoreReadiness(readiness))).into()),
        ],
        limits.clone(),
    )
    .await;
    for task in background {
        task.abort();
    }
    result.map(|()| ExitCode::SUCCESS)
}
