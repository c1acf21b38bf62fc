//! The `wafuel` binary: parse the command line, start telemetry, run the chosen command.

use std::process::ExitCode;

use clap::Parser;
use wafuel::cli::commands;
use wafuel::cli::config::{Cli, Command};

/// `--features mimalloc`: mimalloc instead of glibc's malloc. The profile of a cached answer
/// under load spent 11–12 % of the process in glibc's allocator, and mimalloc serves small
/// cached answers 10–20 % faster; but it keeps freed pages, and the peak memory under the
/// benchmark's load doubled (71 → 142 MiB), past the 128 MiB target. Off by default.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    wafuel::malloc::use_one_arena_per_core();
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(run()),
        Err(e) => {
            eprintln!("wafuel: cannot start the async runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> ExitCode {
    let cli = Cli::parse();
    // Held to the end of main: dropping it writes the lines still queued.
    let _log = wafuel::telemetry::init_logging(cli.log_format());
    let ran = match cli.command {
        Command::Serve(args) => commands::serve(args).await,
        Command::Demo(args) => commands::demo(args).await,
        Command::SimulateSource(args) => commands::simulate_source(args).await,
        Command::Warm(args) => commands::warm(args).await,
        Command::Enrich(args) => commands::enrich(args).await,
        Command::ImportHistory(args) => commands::import_history(args).await,
        Command::ImportWholesale(args) => commands::import_wholesale(args).await,
        Command::Backtest(args) => commands::backtest(args).await,
    };
    ran.unwrap_or_else(|e| {
        tracing::error!(error = %e, "wafuel failed");
        ExitCode::FAILURE
    })
}
