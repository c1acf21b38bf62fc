//! The `wafuel` binary: parse the command line, start telemetry, run the chosen command.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use wafuel::app::{AppConfig, build_router, build_state};
use wafuel::config::{Cli, Command};
use wafuel::server::{self, AlwaysReady};
use wafuel::sim::SimHandle;
use wafuel::source::client::ClientLimits;
use wafuel::store::MemoryStore;
use wafuel::telemetry;
use wafuel::time::{ManualClock, SharedClock, SystemClock};

/// Print a line for the operator; a closed stdout (e.g. piped into `head`) must not stop
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
    telemetry::init_logging(cli.log_format);
    match run(cli.command).await {
        Ok(code) => code,
        Err(e) => {
            tracing::error!(error = %e, "wafuel failed");
            ExitCode::FAILURE
        }
    }
}

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
            let state = build_state(AppConfig {
                source_url: sim.feed_url().parse()?,
                limits: ClientLimits::default(),
                store: Arc::new(MemoryStore::default()),
                clock,
                meta: args.meta.document_meta(),
                public_origin: args.public.public_origin.clone(),
            })?;
            let public = server::bind(args.listen.listen).await?;
            let admin = server::bind(args.listen.admin_listen).await?;
            let (public_addr, admin_addr) = (public.local_addr()?, admin.local_addr()?);
            say!("wafuel demo: the API over a simulated FuelWatch ({})", sim.feed_url());
            say!("public: http://{public_addr}");
            say!("admin: http://{admin_addr}");
            say!("try:");
            say!("  curl -s http://{public_addr}/v1 -H 'Accept: application/vnd.api+json'");
            say!("  curl -s 'http://{public_addr}/v1?product=1,4&brand=5&expand=all'");
            say!("  curl -s 'http://{public_addr}/v1?suburb=ellenbrook&product=1'");
            say!("  curl -s 'http://{public_addr}/legacy?product=1&region=25'");
            say!("  curl -s http://{admin_addr}/metrics");
            server::serve_until_signal(vec![
                (public, build_router(state)),
                (admin, server::admin_router(Arc::new(AlwaysReady))),
            ])
            .await?;
            sim.shutdown().await;
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve(args) => {
            let clock: SharedClock = Arc::new(SystemClock);
            tracing::warn!(store = %args.store.store, "shared snapshot stores are not built yet; snapshots live in process memory");
            let state = build_state(AppConfig {
                source_url: args.source.source_url.clone(),
                limits: ClientLimits::default(),
                store: Arc::new(MemoryStore::default()),
                clock,
                meta: args.meta.document_meta(),
                public_origin: args.public.public_origin.clone(),
            })?;
            let public = server::bind(args.listen.listen).await?;
            let admin = server::bind(args.listen.admin_listen).await?;
            tracing::info!(public = %public.local_addr()?, admin = %admin.local_addr()?, source = %args.source.source_url, "wafuel serving");
            say!("public: http://{}", public.local_addr()?);
            say!("admin: http://{}", admin.local_addr()?);
            server::serve_until_signal(vec![
                (public, build_router(state)),
                (admin, server::admin_router(Arc::new(AlwaysReady))),
            ])
            .await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Warm(_) | Command::Enrich(_) => {
            eprintln!("wafuel: this command is not built yet (see the open issues)");
            Ok(ExitCode::from(2))
        }
    }
}
