//! The `wafuel` binary: parse the command line, start telemetry, run the chosen command.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use wafuel::config::{Cli, Command};
use wafuel::server::{self, AlwaysReady};
use wafuel::sim::SimHandle;
use wafuel::telemetry;
use wafuel::time::{ManualClock, SharedClock, SystemClock};

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
            println!("simulated FuelWatch origin: {}", sim.feed_url());
            server::shutdown_signal().await;
            sim.shutdown().await;
            Ok(ExitCode::SUCCESS)
        }
        Command::Demo(args) => {
            // Until the API lands, the demo serves the simulated origin on the public port.
            let clock: SharedClock = Arc::new(SystemClock);
            let state = wafuel::sim::SimState::new(clock, Default::default())?;
            let public = server::bind(args.listen.listen).await?;
            let admin = server::bind(args.listen.admin_listen).await?;
            let (public_addr, admin_addr) = (public.local_addr()?, admin.local_addr()?);
            println!("wafuel demo: the API is not built yet; serving the simulated FuelWatch feed instead");
            println!("public: http://{public_addr}");
            println!("admin: http://{admin_addr}");
            println!("try: curl -s 'http://{public_addr}{}?Product=1'", wafuel::sim::FEED_PATH);
            server::serve_until_signal(vec![
                (public, wafuel::sim::router(state)),
                (admin, server::admin_router(Arc::new(AlwaysReady))),
            ])
            .await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve(_) | Command::Warm(_) | Command::Enrich(_) => {
            eprintln!("wafuel: this command is not built yet (see the open issues)");
            Ok(ExitCode::from(2))
        }
    }
}
