//! The command-line contract (README "Commands"): sub-commands and flags, each flag with its
//! `WAFUEL_*` environment twin. Names are fixed; tools outside the crate depend on them.

use super::start::{StartAt, parse_start};
use std::net::SocketAddr;

use clap::builder::BoolishValueParser;
use clap::{Args, Parser, Subcommand};

use wafuel_sim::{FaultMode, Faults};

/// The default FuelWatch RSS endpoint.
pub const DEFAULT_SOURCE_URL: &str = "https://www.fuelwatch.wa.gov.au/fuelwatch/fuelWatchRSS";
/// The default Google Places API (New) base URL.
pub const DEFAULT_PLACES_URL: &str = "https://places.googleapis.com";

#[derive(Debug, Parser)]
#[command(
    name = "wafuel",
    version,
    about = "Western Australia's retail fuel prices (FuelWatch) as a fast, cache-friendly JSON:API service",
    long_about = None,
    after_help = "The API (docs/api.md): /v1 and /legacy (prices); /v1/stations (near=LAT,LNG&radius=KM, \
or route=ENCODED_POLYLINE&detour=KM for the stations along a route; fill=L&consumption=L_PER_100KM \
for what a stop costs, sort=cost); /v1/stations/ID, its /history and /forecast; /v1/stats; \
/v1/forecast (fill now or wait); /v1/wholesale (terminal gate prices and the retail margin); /v1/events (pushed news; an alert with station=ID,… or \
near=LAT,LNG, product=N, below=C and rise=C adds price events); /explore (the explorer; on a street map with --map-tiles, \
or --map-pmtiles for your own tiles at /map/tiles)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Log output: `pretty` for people, `json` for log collectors. Default: pretty on a
    /// terminal and always for `demo`, json otherwise. Verbosity follows RUST_LOG (default
    /// `info`).
    #[arg(long, env = "WAFUEL_LOG_FORMAT", global = true, value_enum)]
    pub log_format: Option<LogFormat>,
}

pub use crate::telemetry::LogFormat;

impl Cli {
    /// The log format this run asked for, or `None` for the terminal's default (see
    /// [`crate::telemetry::init_logging`]). The demo is for a person reading its terminal even
    /// through a pipe (`| tee`), so its log lines are text like its own unless the flag says
    /// otherwise.
    pub fn log_format(&self) -> Option<LogFormat> {
        let demo = matches!(self.command, Command::Demo(_));
        self.log_format.or(demo.then_some(LogFormat::Pretty))
    }
}

// Parsed once per process; boxing the larger variants would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API against the real FuelWatch feed (SQLite store by default; PostgreSQL
    /// for several replicas), with the hourly warm, wholesale (terminal gate prices) and
    /// enrichment jobs unless --no-jobs.
    Serve(ServeArgs),
    /// Serve the API against an in-process simulated FuelWatch: real-looking prices and
    /// terminal gate prices with no internet. Prints the URLs to try.
    Demo(DemoArgs),
    /// Run the simulated FuelWatch RSS origin on its own port, with optional faults, for
    /// load tests, other replicas and failure drills.
    SimulateSource(SimulateArgs),
    /// Run one warm pass over the store (refresh the catalog extracts), then exit; non-zero
    /// if any extract failed, each printed with why: the source's error code (for example
    /// `upstream_unavailable`), or `store_unavailable` when the store could not be read.
    Warm(WarmArgs),
    /// Run one enrichment pass (Google Places), then exit.
    Enrich(EnrichArgs),
    /// Import FuelWatch's monthly archives (every retail price since January 2001) into the
    /// history store: the given CSV files (plain or .gz), or the months from --from to --to that
    /// FuelWatch's own file list names, downloaded. Idempotent and resumable: imported months
    /// are skipped unless their file changed (the current month grows every day).
    ImportHistory(ImportHistoryArgs),
    /// Replay the "fill now or wait" forecast on the stored history: for each day from --from
    /// to the day before --to, the forecast made from that day's past only, scored against the
    /// prices up to --to. Prints, per horizon day, the error against three naive baselines
    /// ("same as the last known day", "same as one cycle ago", weekly-seasonal: the last price
    /// plus the same days' change a week earlier) and against the best of them, the mean over
    /// the horizon against each day's best, the hike hit and false-alarm rates, and what
    /// following the advice saved against what hindsight would have. The forecasts of the 91
    /// days before --from are replayed too, unreported, to choose how the cycle model and the
    /// cycle profile mix from the first day on. `--to D` replays exactly what
    /// `/v1/forecast?asOf=D` reports as its accuracy.
    Backtest(BacktestArgs),
    /// Import FuelWatch's yearly wholesale (terminal gate price) files into the store: the
    /// given CSV files and folders, or every year FuelWatch's list names, downloaded. Columns
    /// are read by header name (PUBLISH_DATE, PRODUCT and PRODUCT_PRICE required,
    /// TERMINAL_GATE optional); a file without them is refused whole, rows that do not parse
    /// are counted and reported. Idempotent: a listed year imported before and unchanged since
    /// is not fetched again.
    ImportWholesale(ImportWholesaleArgs),
}

/// The public and admin listeners.
#[derive(Debug, Clone, Args)]
pub struct ListenArgs {
    /// Address of the public API.
    #[arg(long, env = "WAFUEL_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Address of the admin listener: /healthz, /readyz, /metrics.
    #[arg(long, env = "WAFUEL_ADMIN_LISTEN", default_value = "127.0.0.1:9090")]
    pub admin_listen: SocketAddr,
    /// Public requests in flight at once; beyond it requests are shed at once with 503 and
    /// `Retry-After: 1` instead of queueing without bound.
    #[arg(long, env = "WAFUEL_MAX_CONCURRENCY", default_value_t = 4096)]
    pub max_concurrency: usize,
    /// Concurrent `/v1/events` streams; past it a new stream is refused with 503 and
    /// `Retry-After: 1`. Streams do not count against --max-concurrency.
    #[arg(long, env = "WAFUEL_MAX_STREAMS", default_value_t = wafuel_service::catalog::events::DEFAULT_MAX_STREAMS)]
    pub max_streams: usize,
}

impl ListenArgs {
    /// Fail at once when an address is taken, naming the setting that moves it: before a
    /// store is opened or a demo seeds for seconds, not after. (The listeners themselves are
    /// bound later; a port taken in between still fails there.)
    pub fn check_free(&self) -> anyhow::Result<()> {
        let listeners = [
            (self.listen, "--listen", "WAFUEL_LISTEN"),
            (self.admin_listen, "--admin-listen", "WAFUEL_ADMIN_LISTEN"),
        ];
        for (addr, flag, env) in listeners {
            if addr.port() == 0 {
                continue;
            }
            std::net::TcpListener::bind(addr).map_err(|e| {
                let other = std::net::SocketAddr::new(addr.ip(), addr.port().wrapping_add(1).max(1));
                anyhow::anyhow!("cannot listen on {addr}: {e}; choose another address with {flag} or {env}, e.g. {flag} {other}")
            })?;
        }
        Ok(())
    }
}

/// Where snapshots live.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// Snapshot store: `sqlite://PATH` (created on first start) or `postgres://…` so that
    /// several replicas share one store.
    #[arg(long, env = "WAFUEL_STORE", default_value = "sqlite://./data/wafuel.sqlite3")]
    pub store: String,
    /// Seconds a replica holds a snapshot's fill lease (tests shorten it).
    #[arg(long, env = "WAFUEL_FILL_LEASE_SECS", default_value_t = 60, hide = true)]
    pub fill_lease_secs: u64,
    /// Seconds a request waits for another replica's fill before 503 cache_refresh_busy.
    #[arg(long, env = "WAFUEL_FILL_WAIT_SECS", default_value_t = 10, hide = true)]
    pub fill_wait_secs: u64,
    /// Days of daily price history kept for the station API (history, statistics, cycle);
    /// older days, imported ones included, are pruned by the warm job. 0 keeps every day.
    #[arg(long, env = "WAFUEL_HISTORY_DAYS", default_value_t = wafuel_service::snapshot::DEFAULT_HISTORY_DAYS,
          value_parser = clap::value_parser!(i32).range(0..=36_600))]
    pub history_days: i32,
}

impl StoreArgs {
    /// `config` with what these flags name (fill timings and history retention).
    pub fn apply(&self, config: crate::app::AppConfig) -> crate::app::AppConfig {
        crate::app::AppConfig { fill: self.fill(), history_days: self.history_days, ..config }
    }

    pub fn fill(&self) -> wafuel_service::snapshot::FillConfig {
        wafuel_service::snapshot::FillConfig {
            lease: std::time::Duration::from_secs(self.fill_lease_secs.max(1)),
            wait_limit: std::time::Duration::from_secs(self.fill_wait_secs),
            ..wafuel_service::snapshot::FillConfig::default()
        }
    }
}

/// Where prices come from.
#[derive(Debug, Clone, Args)]
pub struct SourceArgs {
    /// FuelWatch RSS URL (http is allowed, for loopback tests).
    #[arg(long, env = "WAFUEL_SOURCE_URL", default_value = DEFAULT_SOURCE_URL)]
    pub source_url: url::Url,
}

/// Where terminal gate (wholesale) prices come from.
#[derive(Debug, Clone, Args)]
pub struct WholesaleArgs {
    /// FuelWatch's API base (`…/api/`): `token`, `terminalgate/centres` and
    /// `terminalgate/prices/{centreId}`, read by the wholesale job when the service starts and
    /// then hourly (and at 14:31 and 14:45), one replica at a time.
    #[arg(long, env = "WAFUEL_WHOLESALE_URL", default_value = wafuel_source::wholesale::DEFAULT_WHOLESALE_URL)]
    pub wholesale_url: url::Url,
}

impl WholesaleArgs {
    pub fn client(&self) -> anyhow::Result<wafuel_source::wholesale::WholesaleClient> {
        Ok(wafuel_source::wholesale::WholesaleClient::new(
            self.wholesale_url.clone(),
            std::time::Duration::from_secs(30),
        )?)
    }
}

/// How the API names itself.
#[derive(Debug, Clone, Args)]
pub struct PublicArgs {
    /// Public origin (e.g. `https://fuel.example.org`) for absolute redirect locations.
    /// Unset: redirects use a relative Location.
    #[arg(long, env = "WAFUEL_PUBLIC_ORIGIN")]
    pub public_origin: Option<url::Url>,
}

/// The explorer's base map: its own coastline unless a raster tile service is named.
#[derive(Debug, Clone, Args)]
pub struct MapArgs {
    /// A raster tile service for the explorer's street map, as a `{z}/{x}/{y}` URL template
    /// (`{s}` for a subdomain letter), e.g. `https://tile.openstreetmap.org/{z}/{x}/{y}.png`.
    /// The page then loads its tiles from that origin and sends it this site's origin as
    /// `Referer`. Unset: the explorer draws its own WA coastline and asks nothing outside.
    #[arg(long, env = "WAFUEL_MAP_TILES", requires = "map_attribution")]
    pub map_tiles: Option<String>,
    /// A PMTiles archive of your own (raster PNG/JPEG/WebP or vector MVT tiles, e.g. an
    /// extract of WA) that wafuel serves at `/map/tiles/{z}/{x}/{y}` for the explorer's street
    /// map: nothing is asked of any other site. Vector tiles are drawn by the page (no WebGL).
    #[arg(long, env = "WAFUEL_MAP_PMTILES", conflicts_with = "map_tiles", requires = "map_attribution")]
    pub map_pmtiles: Option<std::path::PathBuf>,
    /// Whose map it is, shown on the map (required with `--map-tiles` or `--map-pmtiles`),
    /// e.g. `© OpenStreetMap contributors`.
    #[arg(long, env = "WAFUEL_MAP_ATTRIBUTION")]
    pub map_attribution: Option<String>,
    /// The highest zoom the tile service has; the map zooms further by enlarging its tiles.
    #[arg(long, env = "WAFUEL_MAP_MAX_ZOOM", default_value_t = wafuel_web::http::street_map::DEFAULT_MAX_ZOOM)]
    pub map_max_zoom: u8,
}

/// The explorer's base map as configured, and the archive it serves tiles from, if any.
pub type ConfiguredMap =
    (wafuel_web::http::street_map::BaseMap, Option<std::sync::Arc<wafuel_service::map_tiles::MapArchive>>);

impl MapArgs {
    /// The base map the flags name (an archive is opened and checked here, so a bad one stops
    /// the start with its reason).
    pub async fn base_map(&self) -> anyhow::Result<ConfiguredMap> {
        use wafuel_web::http::street_map::{ArchiveTiles, BaseMap, RasterTiles};
        let Some(attribution) = &self.map_attribution else { return Ok((BaseMap::Coastline, None)) };
        if let Some(tiles) = &self.map_tiles {
            return Ok((BaseMap::Raster(RasterTiles::new(tiles, attribution, self.map_max_zoom)?), None));
        }
        let Some(path) = &self.map_pmtiles else {
            anyhow::bail!(
                "--map-attribution names whose map is shown: give --map-tiles or --map-pmtiles with it"
            )
        };
        let archive = wafuel_service::map_tiles::MapArchive::open(path).await?;
        let base = BaseMap::Archive(ArchiveTiles::new(&archive, attribution)?);
        Ok((base, Some(std::sync::Arc::new(archive))))
    }
}

/// Members of the price document's `meta`.
#[derive(Debug, Clone, Args)]
pub struct MetaArgs {
    /// `meta.copyright` of every price document.
    #[arg(long, env = "WAFUEL_COPYRIGHT")]
    pub copyright: Option<String>,
    /// `meta.documentation`: where the API is documented.
    #[arg(long, env = "WAFUEL_DOCUMENTATION_URL")]
    pub documentation_url: Option<url::Url>,
    /// `meta.issues`: where to report problems.
    #[arg(long, env = "WAFUEL_ISSUES_URL")]
    pub issues_url: Option<url::Url>,
}

impl MetaArgs {
    pub fn document_meta(&self) -> wafuel_domain::documents::DocumentMeta {
        let defaults = wafuel_domain::documents::DocumentMeta::default();
        wafuel_domain::documents::DocumentMeta {
            copyright: self.copyright.clone().unwrap_or(defaults.copyright),
            documentation: self.documentation_url.as_ref().map_or(defaults.documentation, |u| u.to_string()),
            issues: self.issues_url.as_ref().map_or(defaults.issues, |u| u.to_string()),
        }
    }
}

/// The map data provider.
#[derive(Debug, Clone, Args)]
pub struct PlacesArgs {
    /// Google Places API (New) base URL.
    #[arg(long, env = "WAFUEL_PLACES_URL", default_value = DEFAULT_PLACES_URL)]
    pub places_url: url::Url,
    /// Google Places API key. Unset: enrichment is off (logged once). Never logged.
    #[arg(long, env = "WAFUEL_PLACES_API_KEY", hide_env_values = true)]
    pub places_api_key: Option<String>,
    /// Stations looked up per enrichment pass.
    #[arg(long, env = "WAFUEL_ENRICH_BATCH", default_value_t = 100)]
    pub enrich_batch: i64,
    /// Provider requests allowed per Perth day (reserved before each call).
    #[arg(long, env = "WAFUEL_ENRICH_DAILY_BUDGET", default_value_t = 300)]
    pub enrich_daily_budget: i64,
    /// Discover stations from this product's extract instead of rotating through all seven.
    #[arg(long, env = "WAFUEL_ENRICH_PRODUCT", hide = true, value_parser = product_code)]
    pub enrich_product: Option<wafuel_domain::codes::ProductCode>,
}

/// A product code of the product table, as a flag's value.
fn product_code(text: &str) -> Result<wafuel_domain::codes::ProductCode, String> {
    text.parse::<u8>()
        .ok()
        .and_then(wafuel_domain::codes::ProductCode::parse)
        .ok_or_else(|| format!("no product {text:?}"))
}

impl PlacesArgs {
    pub fn enrich_config(&self) -> wafuel_service::jobs::enrich::EnrichConfig {
        wafuel_service::jobs::enrich::EnrichConfig {
            batch: self.enrich_batch,
            daily_budget: self.enrich_daily_budget,
            discover_product: self.enrich_product,
            ..Default::default()
        }
    }

    /// The provider client, when a key is configured.
    pub fn client(&self) -> anyhow::Result<Option<wafuel_places::client::PlacesClient>> {
        match &self.places_api_key {
            Some(key) if !key.is_empty() => {
                Ok(Some(wafuel_places::client::PlacesClient::new(self.places_url.clone(), key.clone())?))
            }
            _ => Ok(None),
        }
    }
}

/// Background jobs.
#[derive(Debug, Clone, Args)]
pub struct JobsArgs {
    /// Do not run the hourly warm, the wholesale, the enrichment and the backfill jobs in this
    /// process (environment: 1, true, yes or on; 0, false, no or off).
    #[arg(long, env = "WAFUEL_NO_JOBS", value_parser = BoolishValueParser::new())]
    pub no_jobs: bool,
}

/// The history backfill: what a fresh `serve` brings in by itself.
#[derive(Debug, Clone, Args)]
pub struct BackfillArgs {
    /// Do not bring in FuelWatch's monthly and yearly files (`import-history` and
    /// `import-wholesale` then fill the history; environment: 1, true, yes or on).
    #[arg(long, env = "WAFUEL_NO_BACKFILL", value_parser = BoolishValueParser::new())]
    pub no_backfill: bool,
    /// The first month the backfill brings in, `YYYY-MM` (newest first, back to this one).
    #[arg(long, env = "WAFUEL_BACKFILL_FROM", value_parser = parse_month, default_value = "2001-01")]
    pub backfill_from: (i16, i8),
    /// FuelWatch's list of its monthly files (as `import-history` reads it).
    #[arg(long, env = "WAFUEL_ARCHIVE_LIST_URL", default_value = wafuel_archive::list::DEFAULT_ARCHIVE_LIST_URL)]
    pub archive_list_url: url::Url,
    /// Base URL of the archive, used only when the list cannot be read.
    #[arg(long, env = "WAFUEL_ARCHIVE_URL", default_value = wafuel_archive::DEFAULT_ARCHIVE_URL)]
    pub archive_url: url::Url,
    /// FuelWatch's list of its yearly wholesale files (as `import-wholesale` reads it).
    #[arg(long, env = "WAFUEL_WHOLESALE_LIST_URL", default_value = wafuel_archive::wholesale::DEFAULT_WHOLESALE_LIST_URL)]
    pub wholesale_list_url: url::Url,
    /// Seconds of the backfill's lease (1–60): how soon another replica takes over from one
    /// that died. Shorter only for tests.
    #[arg(long, env = "WAFUEL_BACKFILL_LEASE", default_value_t = 60, hide = true,
          value_parser = clap::value_parser!(u64).range(1..=60))]
    pub backfill_lease: u64,
}

impl BackfillArgs {
    /// The job's configuration, with the contract's timings.
    pub fn config(&self) -> wafuel_archive::backfill::BackfillConfig {
        let mut config = wafuel_archive::backfill::BackfillConfig::new(
            self.archive_list_url.clone(),
            self.archive_url.clone(),
            Some(self.wholesale_list_url.clone()),
            self.backfill_from,
        );
        config.lease = std::time::Duration::from_secs(self.backfill_lease);
        config.wait = config.wait.min(config.lease / 2);
        config
    }
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub listen: ListenArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub public: PublicArgs,
    #[command(flatten)]
    pub meta: MetaArgs,
    #[command(flatten)]
    pub map: MapArgs,
    #[command(flatten)]
    pub places: PlacesArgs,
    #[command(flatten)]
    pub wholesale: WholesaleArgs,
    #[command(flatten)]
    pub jobs: JobsArgs,
    #[command(flatten)]
    pub backfill: BackfillArgs,
}

#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Serve the 120 seeded days of history only: no import of the simulated archive's two years
    /// (a quicker start, for runs that need no long history).
    #[arg(long, env = "WAFUEL_NO_IMPORT", value_parser = BoolishValueParser::new())]
    pub no_import: bool,
    /// Run the whole demo (its simulated FuelWatch, jobs and answers) on a clock that starts
    /// here and runs on at the machine's pace: `today 14:29` (Perth time; also `tomorrow
    /// HH:MM`, `yesterday HH:MM`, `HH:MM`, `YYYY-MM-DDTHH:MM`) or an RFC 3339 time, from
    /// 2001-01-01 to 2099-12-31. `--now 'today 14:29'` shows tomorrow's prices being
    /// published, and a `published` event on `/v1/events`, within two minutes.
    #[arg(long, env = "WAFUEL_NOW", value_parser = parse_start)]
    pub now: Option<StartAt>,
    #[command(flatten)]
    pub listen: ListenArgs,
    #[command(flatten)]
    pub public: PublicArgs,
    #[command(flatten)]
    pub meta: MetaArgs,
    #[command(flatten)]
    pub map: MapArgs,
}

#[derive(Debug, Clone, Args)]
pub struct WarmArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub source: SourceArgs,
}

#[derive(Debug, Clone, Args)]
pub struct EnrichArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub places: PlacesArgs,
}

/// The simulated origin. Faults apply to every feed request (or only to `--fault-products`,
/// or only the first `--fault-times`); they can also be changed at run time with
/// `PUT /_sim/faults` (JSON with the same names in snake_case), and the request log is at
/// `GET /_sim/requests` (`DELETE` clears it).
#[derive(Debug, Clone, Args)]
pub struct SimulateArgs {
    /// Address to serve the feed on (`GET /fuelwatch/fuelWatchRSS`). Its environment twin is
    /// `WAFUEL_SIM_LISTEN` (not `serve`'s `WAFUEL_LISTEN`), so one environment can hold both.
    #[arg(long, env = "WAFUEL_SIM_LISTEN", default_value = "127.0.0.1:8081")]
    pub listen: SocketAddr,
    /// Fixed current time (RFC 3339, e.g. `2026-09-29T10:00:00+08:00`) instead of the clock
    /// (environment: `WAFUEL_SIM_NOW`, the simulator's twin as for `--listen`).
    #[arg(long, env = "WAFUEL_SIM_NOW")]
    pub now: Option<jiff::Timestamp>,
    /// Answer with this HTTP status (403, 429, 500, 503, …) instead of the feed.
    #[arg(long, env = "WAFUEL_FAULT_STATUS")]
    pub fault_status: Option<u16>,
    /// Retry-After seconds sent with --fault-status.
    #[arg(long, env = "WAFUEL_FAULT_RETRY_AFTER")]
    pub fault_retry_after: Option<u32>,
    /// Wait this many milliseconds before sending headers.
    #[arg(long, env = "WAFUEL_FAULT_DELAY_MS")]
    pub fault_delay_ms: Option<u64>,
    /// Send the body in 4 KiB chunks with this many milliseconds between them.
    #[arg(long, env = "WAFUEL_FAULT_SLOW_BODY_MS")]
    pub fault_slow_body_ms: Option<u64>,
    /// Corrupt the body: malformed XML, a DOCTYPE/entity payload, an oversized (> 4 MiB)
    /// body, a wrong item date, a conflicting duplicate station, an empty feed, invalid
    /// UTF-8, a redirect, a zero price, an out-of-range latitude, a missing address, or a
    /// repeated element.
    #[arg(long, env = "WAFUEL_FAULT_MODE", value_enum)]
    pub fault_mode: Option<FaultMode>,
    /// Apply faults only to requests for these products (comma list, e.g. `1,4`).
    #[arg(long, env = "WAFUEL_FAULT_PRODUCTS", value_delimiter = ',')]
    pub fault_products: Option<Vec<u8>>,
    /// Apply faults only to the first N matching requests.
    #[arg(long, env = "WAFUEL_FAULT_TIMES")]
    pub fault_times: Option<u32>,
}

impl SimulateArgs {
    pub fn faults(&self) -> Faults {
        Faults {
            status: self.fault_status,
            retry_after: self.fault_retry_after,
            delay_ms: self.fault_delay_ms,
            slow_body_ms: self.fault_slow_body_ms,
            mode: self.fault_mode,
            products: self.fault_products.clone(),
            times: self.fault_times,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn fault_flags_parse() {
        let cli = Cli::try_parse_from([
            "wafuel",
            "simulate-source",
            "--listen",
            "127.0.0.1:0",
            "--fault-status",
            "503",
            "--fault-retry-after",
            "5",
            "--fault-mode",
            "wrong-date",
            "--fault-products",
            "1,4",
            "--fault-times",
            "2",
        ])
        .expect("parses");
        let Command::SimulateSource(args) = cli.command else { panic!("wrong command") };
        let f = args.faults();
        assert_eq!(f.status, Some(503));
        assert_eq!(f.retry_after, Some(5));
        assert_eq!(f.mode, Some(FaultMode::WrongDate));
        assert_eq!(f.products, Some(vec![1, 4]));
        assert_eq!(f.times, Some(2));
    }

    #[test]
    fn demo_now_reads_perth_times_and_instants() {
        use jiff::civil::date;
        // 10:00 Perth on 29 September 2026.
        let now = wafuel_domain::time::perth_instant(date(2026, 9, 29).at(10, 0, 0, 0));
        let at =
            |text: &str| parse_start(text).map(|s| wafuel_domain::time::perth_now(s.resolve(now)).datetime());
        assert_eq!(at("today 14:29"), Ok(date(2026, 9, 29).at(14, 29, 0, 0)));
        assert_eq!(at("Tomorrow 06:00"), Ok(date(2026, 9, 30).at(6, 0, 0, 0)));
        assert_eq!(at("14:29"), Ok(date(2026, 9, 29).at(14, 29, 0, 0)));
        assert_eq!(at("2026-10-01T14:29"), Ok(date(2026, 10, 1).at(14, 29, 0, 0)));
        assert_eq!(at("2026-09-29T06:29:30Z"), Ok(date(2026, 9, 29).at(14, 29, 30, 0)));
        for bad in [
            "today",
            "today 25:00",
            "next week 14:29",
            "tomorow 14:29",
            "14h29",
            "",
            "9999-12-31T23:58",
            "0001-01-02T10:00",
            "1677-09-20T00:00:00Z",
            "2400-01-01T00:00:00+08:00",
            "2026-09-29T10:00:00+25:00",
            "2026-02-29T10:00",
        ] {
            let said = parse_start(bad).expect_err(bad);
            for form in
                ["today HH:MM", "tomorrow HH:MM", "HH:MM", "YYYY-MM-DDTHH:MM", "RFC 3339", "2001-01-01"]
            {
                assert!(said.contains(form), "{bad}: {said} names {form}");
            }
        }
        assert!(parse_start("2026-02-29T10:00").expect_err("no such day").contains("not a real date"));
        assert!(parse_start("2099-12-31T23:00").is_ok() && parse_start("2001-01-01T00:00").is_ok());
        let cli = Cli::try_parse_from(["wafuel", "demo", "--now", "today 14:29"]).expect("parses");
        let Command::Demo(args) = cli.command else { panic!("wrong command") };
        assert!(args.now.is_some());
    }

    /// Every boolean setting's environment twin reads 1/true/yes/on and 0/false/no/off, as
    /// deployment tools write them (`WAFUEL_NO_JOBS=1` was refused).
    #[test]
    fn boolean_settings_read_as_people_write_them_in_the_environment() {
        use clap::CommandFactory;
        let cli = Cli::command();
        let mut seen = 0;
        for command in cli.get_subcommands() {
            for arg in command.get_arguments().filter(|a| a.get_env().is_some()) {
                if !matches!(arg.get_action(), clap::ArgAction::SetTrue) {
                    continue;
                }
                seen += 1;
                // The values the setting's parser takes (clap's "boolish" words).
                let taken: Vec<String> =
                    arg.get_possible_values().iter().map(|v| v.get_name().to_string()).collect();
                for word in ["1", "true", "yes", "on", "0", "false", "no", "off"] {
                    assert!(
                        taken.iter().any(|t| t == word),
                        "{} {:?} takes {word}: {taken:?}",
                        command.get_name(),
                        arg.get_env()
                    );
                }
            }
        }
        assert!(seen >= 3, "the boolean settings with an environment twin: {seen}");
        let cli = Cli::try_parse_from(["wafuel", "serve", "--no-backfill", "--backfill-from", "2026-05"])
            .expect("parses");
        let Command::Serve(args) = cli.command else { panic!("wrong command") };
        assert!(args.backfill.no_backfill);
        assert_eq!(args.backfill.backfill_from, (2026, 5));
        let cli = Cli::try_parse_from(["wafuel", "serve"]).expect("parses");
        let Command::Serve(args) = cli.command else { panic!("wrong command") };
        assert_eq!((args.backfill.no_backfill, args.backfill.backfill_from), (false, (2001, 1)));
    }

    #[tokio::test]
    async fn map_flags_name_one_map_and_whose_it_is() {
        use wafuel_web::http::street_map::BaseMap;
        let map = |flags: &[&str]| {
            let cli = Cli::try_parse_from(["wafuel", "serve"].iter().chain(flags));
            cli.map(|c| match c.command {
                Command::Serve(args) => args.map,
                _ => panic!("wrong command"),
            })
        };
        let osm = ["--map-tiles", "https://tile.openstreetmap.org/{z}/{x}/{y}.png"];
        assert!(map(&osm).is_err(), "tiles without whose they are");
        let both = [&osm[..], &["--map-pmtiles", "wa.pmtiles", "--map-attribution", "me"]].concat();
        assert!(map(&both).is_err(), "two maps at once");
        let alone = map(&["--map-attribution", "me"]).expect("parses");
        let said = alone.base_map().await.expect_err("whose map, of no map").to_string();
        assert!(said.contains("--map-tiles or --map-pmtiles"), "{said}");
        let tiled = map(&[&osm[..], &["--map-attribution", "© OpenStreetMap contributors"]].concat())
            .expect("parses");
        let (base, archive) = tiled.base_map().await.expect("a tile map");
        assert!(matches!(base, BaseMap::Raster(_)) && archive.is_none());
        let (none, _) = map(&[]).expect("parses").base_map().await.expect("no map flags");
        assert_eq!(none, BaseMap::Coastline);
        let missing =
            map(&["--map-pmtiles", "/nonexistent/wa.pmtiles", "--map-attribution", "me"]).expect("parses");
        let why = missing.base_map().await.expect_err("no such file").to_string();
        assert!(why.starts_with("--map-pmtiles: cannot read /nonexistent/wa.pmtiles"), "{why}");
    }

    #[test]
    fn serve_defaults() {
        let cli = Cli::try_parse_from(["wafuel", "serve"]).expect("parses");
        let Command::Serve(args) = cli.command else { panic!("wrong command") };
        assert_eq!(args.listen.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(args.listen.admin_listen.to_string(), "127.0.0.1:9090");
        assert_eq!(args.store.store, "sqlite://./data/wafuel.sqlite3");
        assert_eq!(args.source.source_url.as_str(), DEFAULT_SOURCE_URL);
        assert_eq!(args.wholesale.wholesale_url.as_str(), wafuel_source::wholesale::DEFAULT_WHOLESALE_URL);
        assert!(!args.jobs.no_jobs);
    }
}

/// `wafuel import-history`.
#[derive(Debug, Clone, Args)]
pub struct ImportHistoryArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Where the live stations come from when the history knows none yet (as `warm`).
    #[command(flatten)]
    pub source: SourceArgs,
    /// FuelWatch's list of its monthly files (`fileName`, `fileDate`, `bytes`, `url`): which
    /// months exist and which changed since they were imported (the current month grows).
    #[arg(long, env = "WAFUEL_ARCHIVE_LIST_URL", default_value = wafuel_archive::list::DEFAULT_ARCHIVE_LIST_URL)]
    pub archive_list_url: url::Url,
    /// Base URL of the archive (`BASE/FuelWatchRetail-MM-YYYY.csv`), used only when the list
    /// cannot be read (file names are then guessed month by month).
    #[arg(long, env = "WAFUEL_ARCHIVE_URL", default_value = wafuel_archive::DEFAULT_ARCHIVE_URL)]
    pub archive_url: url::Url,
    /// First month to download, `YYYY-MM` (default: January 2001).
    #[arg(long, value_parser = parse_month)]
    pub from: Option<(i16, i8)>,
    /// Last month to download, `YYYY-MM` (default: the current month, Perth time, from the
    /// list; last month when names are guessed).
    #[arg(long, value_parser = parse_month)]
    pub to: Option<(i16, i8)>,
    /// Archive files to import whole instead of downloading (`--from`/`--to` do not apply).
    pub files: Vec<std::path::PathBuf>,
}

/// `wafuel import-wholesale`.
#[derive(Debug, Clone, Args)]
pub struct ImportWholesaleArgs {
    /// The store: `sqlite://PATH` or `postgres://…`.
    #[arg(long, env = "WAFUEL_STORE", default_value = "sqlite://./data/wafuel.sqlite3")]
    pub store: String,
    /// FuelWatch's list of its yearly wholesale files (`fileName`, `fileDate`, `bytes`, `url`),
    /// read when no file is given.
    #[arg(long, env = "WAFUEL_WHOLESALE_LIST_URL", default_value = wafuel_archive::wholesale::DEFAULT_WHOLESALE_LIST_URL)]
    pub list_url: url::Url,
    /// Yearly files (`FuelWatchWholesale-YYYY.csv`) or folders of them to import instead.
    pub files: Vec<std::path::PathBuf>,
}

/// `wafuel backtest`.
#[derive(Debug, Clone, Args)]
pub struct BacktestArgs {
    /// The history store: `sqlite://PATH` or `postgres://…`.
    #[arg(long, env = "WAFUEL_STORE", default_value = "sqlite://./data/wafuel.sqlite3")]
    pub store: String,
    /// The product (its code, as `/v1?product=`).
    #[arg(long, value_parser = product_code)]
    pub product: wafuel_domain::codes::ProductCode,
    /// Only the stations an archive row placed in these regions (codes, comma-separated).
    #[arg(long, value_delimiter = ',', value_parser = region_code)]
    pub region: Option<Vec<wafuel_domain::codes::RegionCode>>,
    /// The first day a forecast is made, `YYYY-MM-DD` (default: 365 days before --to).
    #[arg(long)]
    pub from: Option<jiff::civil::Date>,
    /// The last day whose prices are known, `YYYY-MM-DD` (default: the newest stored day).
    #[arg(long)]
    pub to: Option<jiff::civil::Date>,
}

/// A region code of the region table, as a flag's value.
fn region_code(text: &str) -> Result<wafuel_domain::codes::RegionCode, String> {
    text.trim()
        .parse::<u8>()
        .ok()
        .and_then(wafuel_domain::codes::RegionCode::parse)
        .ok_or_else(|| format!("no region {text:?}"))
}

/// `YYYY-MM`, from January 2001.
fn parse_month(text: &str) -> Result<(i16, i8), String> {
    let wrong = || format!("{text:?}: expected YYYY-MM from 2001-01");
    let (year, month) = text.split_once('-').ok_or_else(wrong)?;
    let (year, month): (i16, i8) = (year.parse().map_err(|_| wrong())?, month.parse().map_err(|_| wrong())?);
    if (1..=12).contains(&month) && (year, month) >= wafuel_archive::FIRST_MONTH && year <= 9999 {
        Ok((year, month))
    } else {
        Err(wrong())
    }
}
