//! What each sub-command of the `wafuel` binary does (the command line itself is in
//! `config`; `main` only picks one of these).

use std::process::ExitCode;
use std::sync::Arc;

use crate::app::SystemClock;
use crate::app::{AppConfig, Application, Listen, build_state};
use crate::cli::config::{DemoArgs, EnrichArgs, ListenArgs, PlacesArgs, ServeArgs, SimulateArgs, WarmArgs};
use crate::server;
use wafuel_domain::time::{ManualClock, SharedClock};
use wafuel_places::client::PlacesClient;
use wafuel_service::jobs::{enrich, warm};
use wafuel_sim::SimHandle;
use wafuel_sim::places::{PlacesHandle, demo_places};
use wafuel_store::redact;

/// Print a line for the operator. A closed stdout (e.g. piped into `head`) must not stop the
/// service, so write errors are ignored.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Past days of price history the demo starts with.
const DEMO_HISTORY_DAYS: i32 = 120;

/// `wafuel simulate-source`: the simulated FuelWatch origin until a signal.
pub async fn simulate_source(args: SimulateArgs) -> anyhow::Result<ExitCode> {
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

/// `wafuel demo`: the API over an in-process simulated origin, with seeded history and a
/// Places stand-in, in a store of its own (simulated prices never reach a real store).
pub async fn demo(args: DemoArgs) -> anyhow::Result<ExitCode> {
    args.listen.check_free()?;
    // The demo's own store, removed on every way out (an error, a signal while seeding, the
    // end of serving): simulated prices never outlive the demo.
    let dir = TempStore(std::env::temp_dir().join(format!("wafuel-demo-{}", std::process::id())));
    // Seeding and importing take seconds: a signal then stops the demo at once.
    let prepared = tokio::select! {
        prepared = prepare_demo(&args, &dir.0) => prepared?,
        () = server::shutdown_signal() => {
            say!("wafuel demo: stopped before serving");
            return Ok(ExitCode::SUCCESS);
        }
    };
    let DemoParts { config, sim, places, archive, wholesale } = prepared;
    // The hourly warm job runs as in `serve` (14:31 brings tomorrow's prices and a
    // `published` event); the enrichment already ran once above.
    let jobs = Jobs { warm: true, places: None, backfill: None };
    let result = serve_api(config, &args.listen, jobs, wholesale).await;
    if let Some(archive) = archive {
        archive.abort();
    }
    drop(places);
    sim.shutdown().await;
    result
}

/// A directory removed when dropped.
struct TempStore(std::path::PathBuf);

impl Drop for TempStore {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What the demo serves with, once prepared.
struct DemoParts {
    config: AppConfig,
    sim: SimHandle,
    places: PlacesHandle,
    archive: Option<tokio::task::JoinHandle<()>>,
    wholesale: Option<wafuel_source::wholesale::WholesaleClient>,
}

/// The demo's simulated origin, its seeded history and enrichment, and its store in `dir`.
async fn prepare_demo(args: &DemoArgs, dir: &std::path::Path) -> anyhow::Result<DemoParts> {
    let shifted =
        args.now.map(|s| Arc::new(crate::app::ShiftedClock::starting_at(s.resolve(jiff::Timestamp::now()))));
    let clock: SharedClock = match &shifted {
        Some(shifted) => shifted.clone(),
        None => Arc::new(SystemClock),
    };
    let sim = SimHandle::spawn("127.0.0.1:0".parse()?, clock.clone(), Default::default()).await?;
    let store = wafuel_store::open(&format!("sqlite://{}/demo.sqlite3", dir.display())).await?;
    say!("wafuel demo: the API over a simulated FuelWatch ({})", sim.feed_url());
    say!("its store: {}/demo.sqlite3 (simulated prices only; removed when the demo stops)", dir.display());
    // Past days of prices, so history, statistics and the price cycle have shape.
    say!("seeding {DEMO_HISTORY_DAYS} past days of price history…");
    let history: Arc<dyn wafuel_store::history::HistoryStore> = store.clone();
    let today = wafuel_domain::time::perth_now(clock.now()).date();
    let seeded = wafuel_service::jobs::seed::seed_history(&history, today, DEMO_HISTORY_DAYS, |p, d| {
        sim.state.past_feed(p.get(), d)
    })
    .await;
    say!("seeded {} history rows", seeded.written);
    // A Places stand-in with places for some stations, and one enrichment pass, so the demo
    // shows `enrichment` too (a few seconds after start).
    let places = PlacesHandle::spawn("demo", demo_places(sim.state.dataset())).await?;
    let config = AppConfig::new(sim.feed_url().parse()?, store.clone(), clock);
    let enrich_state =
        build_state(AppConfig::new(config.source_url.clone(), store.clone(), config.clock.clone()))?;
    let client = PlacesClient::new(places.base_url().parse()?, "demo".into())?;
    let demo_enrich = enrich::EnrichConfig {
        discover_product: Some(wafuel_domain::codes::ProductCode::UNLEADED),
        batch: 2_000,
        daily_budget: 10_000,
        ..Default::default()
    };
    say!("enriching a tenth of the stations from a local Places stand-in…");
    let pass = enrich::enrich_pass(enrich_state.catalog.prices(), &store, &client, &demo_enrich);
    match tokio::time::timeout(std::time::Duration::from_secs(60), pass).await {
        Ok(Ok(report)) => say!("enriched {} stations", report.matched),
        Ok(Err(e)) => tracing::warn!(error = %e, "demo enrichment failed"),
        Err(_) => tracing::warn!("demo enrichment took too long; serving without it"),
    }
    let (base_map, map_archive) = args.map.base_map().await?;
    let config = AppConfig {
        meta: args.meta.document_meta(),
        public_origin: args.public.public_origin.clone(),
        base_map,
        map_archive,
        ..config
    };
    // Two years of the archive, imported while the demo already serves.
    let archive = if args.no_import {
        say!("archive import off (--no-import): the {DEMO_HISTORY_DAYS} seeded days of history only");
        None
    } else {
        Some(tokio::spawn(demo_archive(store.clone(), sim.archive_list_url(), today)))
    };
    // The simulated terminal gate prices: the years the archive covers first, then the live
    // job (today's and, from 14:30, tomorrow's prices, as FuelWatch's API gives them).
    let wholesale = match sim.wholesale_url().parse() {
        Ok(url) => {
            Some(wafuel_source::wholesale::WholesaleClient::new(url, std::time::Duration::from_secs(10))?)
        }
        Err(_) => None,
    };
    // Two years of terminal gate prices take a second or two: in the store before the first
    // answer, so every chart has its wholesale line from the start.
    say!("importing two years of terminal gate (wholesale) prices…");
    demo_wholesale(store.clone(), sim.wholesale_list_url(), today.year() - 2).await;
    if let Some(shifted) = &shifted {
        shifted.restart();
        let perth = wafuel_domain::time::perth_now(shifted.start()).strftime("%Y-%m-%d %H:%M:%S");
        say!("the demo's clock starts at {perth} Perth time (--now) and runs on from there");
    }
    Ok(DemoParts { config, sim, places, archive, wholesale })
}

/// Months of the simulated archive the demo imports after it starts serving.
const DEMO_ARCHIVE_MONTHS: i32 = 24;

/// Import the last [`DEMO_ARCHIVE_MONTHS`] months of the simulated archive (the current one
/// included, as far as it goes), from the origin's own file list, logging each.
async fn demo_archive(store: Arc<dyn wafuel_store::Store>, list_url: String, today: jiff::civil::Date) {
    use wafuel_archive::import::{Importer, Plan};
    let first = today.first_of_month().checked_sub(jiff::Span::new().months(DEMO_ARCHIVE_MONTHS - 1));
    let first = first.unwrap_or(today);
    let (Ok(list_url), Ok(mut importer)) = (list_url.parse::<url::Url>(), Importer::new(store).await) else {
        tracing::warn!("demo archive import could not start");
        return;
    };
    let range = (Some((first.year(), first.month())), None);
    let limits = Default::default();
    let plan = Plan::make(&list_url, &list_url, range, today, limits).await;
    let progress = |name: &str, write: &wafuel_store::archive::ImportWrite| {
        tracing::info!(file = name, written = write.written, "demo archive month imported");
    };
    match plan.run(&mut importer, limits, &progress).await {
        Ok(()) => say!("{}", importer.summary.line()),
        Err(e) => tracing::warn!(error = %e, "demo archive import stopped"),
    }
}

/// Import the simulated yearly wholesale files from `from_year` on, from the origin's own list.
async fn demo_wholesale(store: Arc<dyn wafuel_store::Store>, list_url: String, from_year: i16) {
    use wafuel_archive::wholesale::WholesaleImporter;
    let Ok(list_url) = list_url.parse::<url::Url>() else { return };
    let mut importer = WholesaleImporter::new(store).with_first_year(from_year);
    let progress = |name: &str, write: &wafuel_store::wholesale::WholesaleWrite| {
        tracing::info!(file = name, written = write.written, "demo wholesale year imported");
    };
    match importer.import_listed(&list_url, Default::default(), &progress).await {
        Ok(()) => say!("{}", importer.summary.line()),
        Err(e) => tracing::warn!(error = %e, "demo wholesale import stopped"),
    }
}

/// `wafuel import-wholesale`: yearly terminal gate price files into the store.
pub async fn import_wholesale(args: crate::cli::config::ImportWholesaleArgs) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    use wafuel_archive::wholesale::WholesaleImporter;
    let store = wafuel_store::open(&args.store).await?;
    let mut importer = WholesaleImporter::new(store);
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {pos} files {msg} [{elapsed_precise}]")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        bar
    });
    let progress = |name: &str, write: &wafuel_store::wholesale::WholesaleWrite| match &bar {
        Some(bar) => {
            bar.inc(1);
            bar.set_message(format!("{name}: {} new, {} changed", write.written, write.replaced));
        }
        None => tracing::info!(file = name, written = write.written, replaced = write.replaced, "imported"),
    };
    let result = if args.files.is_empty() {
        importer.import_listed(&args.list_url, Default::default(), &progress).await
    } else {
        importer.import_paths(&args.files, &progress).await
    };
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    say!("{}", importer.summary.line());
    result?;
    Ok(ExitCode::SUCCESS)
}

/// `wafuel serve`: the API over the real source, with the jobs unless `--no-jobs`.
pub async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    args.listen.check_free()?;
    let store = wafuel_store::open(&args.store.store).await?;
    tracing::info!(store = %redact(&args.store.store), "snapshot store ready");
    let (base_map, map_archive) = args.map.base_map().await?;
    let config = AppConfig {
        meta: args.meta.document_meta(),
        public_origin: args.public.public_origin.clone(),
        base_map,
        map_archive,
        ..args.store.apply(AppConfig::new(args.source.source_url.clone(), store, Arc::new(SystemClock)))
    };
    let wholesale = if args.jobs.no_jobs { None } else { Some(args.wholesale.client()?) };
    let backfill = !args.jobs.no_jobs && !args.backfill.no_backfill;
    let jobs = Jobs {
        warm: !args.jobs.no_jobs,
        places: (!args.jobs.no_jobs).then_some(&args.places),
        backfill: backfill.then(|| args.backfill.config()),
    };
    serve_api(AppConfig { backfill, ..config }, &args.listen, jobs, wholesale).await
}

/// `wafuel warm`: one warm pass; failure when any extract failed.
pub async fn warm(args: WarmArgs) -> anyhow::Result<ExitCode> {
    let store = wafuel_store::open(&args.store.store).await?;
    let config = AppConfig::new(args.source.source_url.clone(), store, Arc::new(SystemClock));
    let state = build_state(args.store.apply(config))?;
    let report = warm::warm_pass(state.catalog.prices()).await;
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

/// `wafuel enrich`: one enrichment pass; exit 2 without an API key.
pub async fn enrich(args: EnrichArgs) -> anyhow::Result<ExitCode> {
    let Some(client) = args.places.client()? else {
        eprintln!(
            "wafuel enrich: no Places API key (--places-api-key / WAFUEL_PLACES_API_KEY); nothing to do"
        );
        return Ok(ExitCode::from(2));
    };
    let store = wafuel_store::open(&args.store.store).await?;
    let config = AppConfig::new(args.source.source_url.clone(), store.clone(), Arc::new(SystemClock));
    let state = build_state(args.store.apply(config))?;
    let report = enrich::enrich_pass(state.catalog.prices(), &store, &client, &args.places.enrich_config())
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

/// The background jobs a served API runs beside it.
struct Jobs<'a> {
    /// The hourly warm job (and its passes just after 14:30).
    warm: bool,
    /// The enrichment job, given a Places key.
    places: Option<&'a PlacesArgs>,
    /// The history backfill (`serve` unless `--no-backfill`).
    backfill: Option<wafuel_archive::backfill::BackfillConfig>,
}

/// Serve the public API and the admin port until a signal, with `jobs` beside it.
async fn serve_api(
    config: AppConfig,
    listen: &ListenArgs,
    jobs: Jobs<'_>,
    wholesale: Option<wafuel_source::wholesale::WholesaleClient>,
) -> anyhow::Result<ExitCode> {
    let store = config.store.clone();
    let limits = server::ServerLimits { max_concurrency: listen.max_concurrency, ..Default::default() };
    let bind = Listen { public: listen.listen, admin: listen.admin_listen, limits };
    let app = Application::build(AppConfig { max_streams: listen.max_streams, ..config }, bind).await?;
    let (public_addr, admin_addr) = (app.public_addr()?, app.admin_addr()?);
    tracing::info!(public = %public_addr, admin = %admin_addr, "wafuel serving");
    say!("public: http://{public_addr}");
    say!("admin: http://{admin_addr}");
    say!("explore: http://{public_addr}/explore   (map, cheapest near you, price history)");
    say!("try:");
    say!("  curl -s http://{public_addr}/v1 -H 'Accept: application/vnd.api+json'");
    say!("  curl -s 'http://{public_addr}/v1?product=1,4&brand=5&expand=all'");
    say!("  curl -s 'http://{public_addr}/legacy?product=1&region=25'");
    say!("  curl -s 'http://{public_addr}/v1/stations?near=-31.9523,115.8613&product=1&sort=price&limit=5'");
    say!(
        "  curl -s 'http://{public_addr}/v1/stations?route=zt_bEcddbUbhAzoDfsGnlFjoHj~H&detour=1&product=1&fill=50&consumption=8.5&sort=cost'    (along a route: Perth to Fremantle, the cost of each stop)"
    );
    say!("  curl -s 'http://{public_addr}/v1/stats?product=1'");
    say!("  curl -s 'http://{public_addr}/v1/forecast?product=1'    (fill now or wait?)");
    say!(
        "  curl -s 'http://{public_addr}/v1/wholesale?product=1'    (terminal gate prices and the retail margin)"
    );
    say!("  curl -N 'http://{public_addr}/v1/events?product=1'    (pushed when prices are published)");
    say!(
        "  curl -s 'http://{public_addr}/v1/stations?product=1&region=25' -H 'Accept: application/geo+json'"
    );
    say!("  curl -s http://{admin_addr}/metrics");
    let mut background = Vec::new();
    if let Some(client) = wholesale {
        let clock = app.state().catalog.prices().clock().clone();
        background.push(tokio::spawn(wafuel_service::jobs::wholesale::run(store.clone(), client, clock)));
    }
    let prices = app.state().catalog.prices().clone();
    if jobs.warm {
        background.push(tokio::spawn(warm::run_hourly(prices.clone())));
    }
    if let Some(config) = jobs.backfill {
        let clock = prices.clock().clone();
        background.push(tokio::spawn(wafuel_archive::backfill::run(store.clone(), clock, config)));
    }
    if let Some(places) = jobs.places {
        match places.client()? {
            Some(client) => background.push(tokio::spawn(enrich::run_every(
                prices,
                store,
                client,
                places.enrich_config(),
            ))),
            None => tracing::info!("no Places API key: station enrichment is off"),
        }
    }
    let result = app.run_until(server::shutdown_signal()).await;
    for task in background {
        task.abort();
    }
    result.map(|()| ExitCode::SUCCESS)
}

/// `wafuel import-history`: archive files, or downloaded months, into the history store.
pub async fn import_history(args: crate::cli::config::ImportHistoryArgs) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    use wafuel_archive::download::DownloadLimits;
    use wafuel_archive::import::{Importer, Plan, import_paths};
    let store = wafuel_store::open(&args.store.store).await?;
    let mut importer = Importer::new(store.clone()).await?;
    if !importer.knows_live_stations() {
        // Archive rows match live stations by address: learn today's stations first.
        say!("the history knows no live station yet: reading today's catalog from the source…");
        let config = AppConfig::new(args.source.source_url.clone(), store.clone(), Arc::new(SystemClock));
        let state = build_state(args.store.apply(config))?;
        // One warm pass records today's catalog into the history; the importer then reads
        // the stations again.
        let report = wafuel_service::jobs::warm::warm_pass(state.catalog.prices()).await;
        if !report.failed.is_empty() {
            tracing::warn!(
                failed = report.failed.len(),
                "some catalog extracts failed; their stations stay unknown"
            );
        }
        importer.relearn_stations().await?;
    }
    let limits = DownloadLimits::default();
    let plan = if args.files.is_empty() {
        let today = wafuel_domain::time::perth_now(jiff::Timestamp::now()).date();
        let range = (args.from, args.to);
        Some(Plan::make(&args.archive_list_url, &args.archive_url, range, today, limits).await)
    } else {
        None
    };
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(plan.as_ref().map_or(args.files.len(), Plan::len) as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} files {msg} [{elapsed_precise}, eta {eta}]",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let started = std::time::Instant::now();
    let rows = std::sync::atomic::AtomicU64::new(0);
    let progress = |name: &str, write: &wafuel_store::archive::ImportWrite| {
        let total = rows.fetch_add(
            write.written + write.unchanged + write.conflicts,
            std::sync::atomic::Ordering::Relaxed,
        );
        let rate = total as f64 / started.elapsed().as_secs_f64().max(0.001);
        match &bar {
            Some(bar) => {
                bar.inc(1);
                bar.set_message(format!("{name} · {rate:.0} rows/s"));
            }
            None => {
                tracing::info!(file = name, written = write.written, conflicts = write.conflicts, "imported")
            }
        }
    };
    let result = match &plan {
        Some(plan) => plan.run(&mut importer, limits, &progress).await,
        None => import_paths(&mut importer, &args.files, &progress).await,
    };
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    say!("{}", importer.summary.line());
    result?;
    Ok(ExitCode::SUCCESS)
}

/// `wafuel backtest`: the forecast replayed on a store's history, as a table.
pub async fn backtest(args: crate::cli::config::BacktestArgs) -> anyhow::Result<ExitCode> {
    use wafuel_domain::forecast::{REPLAY_DAYS, Replay, Subject};
    use wafuel_service::catalog::forecast::{market_series, wholesale_series};
    let store = wafuel_store::open(&args.store).await?;
    let history: &dyn wafuel_store::history::HistoryStore = store.as_ref();
    let newest =
        history.last_day_summaries(args.product, (jiff::civil::Date::MIN, jiff::civil::Date::MAX), 1).await?;
    let Some(newest) = newest.last() else {
        anyhow::bail!("{} holds no price of product {}: nothing to replay", args.store, args.product);
    };
    let to = args.to.unwrap_or(newest.date);
    let from = args.from.unwrap_or_else(|| to.checked_sub(jiff::Span::new().days(REPLAY_DAYS)).unwrap_or(to));
    anyhow::ensure!(from < to, "--from {from} is not before --to {to}");
    let first = Replay::reads_from(from);
    let market = market_series(history, args.product, args.region.as_deref(), (first, to)).await?;
    let tgp = wholesale_series(store.as_ref(), args.product, args.region.as_deref(), (first, to)).await?;
    let replay = Replay::run(Subject { market: &market, station: None, wholesale: tgp.as_ref() }, from, to);
    let name = wafuel_domain::codes::product(args.product.get()).map_or("", |p| p.name);
    let scope = match &args.region {
        None => "statewide".to_string(),
        Some(r) => format!("regions {}", r.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")),
    };
    let last = to.yesterday().unwrap_or(to);
    let title = format!(
        "Backtest: {name} (product {}), {scope}; forecasts made {from} to {last}, scored against prices up to {to}.",
        args.product
    );
    say!("{}", wafuel_web::render::forecast::backtest_table(&title, &replay));
    Ok(if replay.days > 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
