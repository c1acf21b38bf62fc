//! `wafuel import-history`: archive files (local, or downloaded month by month) into the
//! history store. Each file is read on a blocking thread into its distinct stations and
//! compact price rows, its stations are matched to the ones the history knows, and it is
//! written in one transaction (`store::archive`).
//!
//! Matching: a row belongs to a known station when the normalised address and suburb match
//! (several: the most recently seen); otherwise to an archive station (id from
//! [`ArchiveSite::archive_id`]), kept without coordinates.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use super::list::ListedFile;
use super::{ArchiveError, ArchiveSite, ReadTally, read_prices};
use crate::model::codes::ProductCode;
use crate::store::archive::{
    ArchiveStationRow, ImportBatch, ImportPrice, ImportWrite, ImportedMonth, KnownStation, Slot,
};
use crate::store::history::day_number;
use crate::store::{Store, StoreError};

/// Why an import stopped.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A file's write failed (the store went away, say): nothing of it was written.
    #[error("{file}: {source}")]
    Write {
        file: String,
        #[source]
        source: StoreError,
    },
    #[error("{file}: {reason}")]
    Download { file: String, reason: String },
    #[error("{file}: {reason}")]
    Io { file: String, reason: String },
}

/// One file read: its distinct stations and its prices naming them by index.
struct ReadFile {
    sites: Vec<ArchiveSite>,
    /// (product, day as `YYYYMMDD`, site index, tenths of a cent)
    prices: Vec<(ProductCode, i64, u32, i64)>,
    tally: ReadTally,
}

fn read_file(name: &str, input: impl Read) -> Result<ReadFile, ArchiveError> {
    let mut sites: Vec<ArchiveSite> = Vec::new();
    // By the raw address and suburb first: a month repeats each station's text thousands of
    // times, and normalising it (folding case and spaces) is the costly part.
    let mut by_text: HashMap<String, u32> = HashMap::new();
    let mut by_key: HashMap<(String, String), u32> = HashMap::new();
    let mut text = String::new();
    let mut prices = Vec::new();
    let tally = read_prices(name, input, |price| {
        text.clear();
        text.push_str(&price.station.address);
        text.push('\u{1}');
        text.push_str(&price.station.suburb);
        let at = match by_text.get(text.as_str()) {
            Some(&at) => at,
            None => {
                let at = *by_key.entry(price.station.match_key()).or_insert_with(|| {
                    sites.push(price.station.clone());
                    u32::try_from(sites.len() - 1).unwrap_or(u32::MAX)
                });
                by_text.insert(text.clone(), at);
                at
            }
        };
        prices.push((price.product, day_number(price.date), at, price.price));
    })?;
    Ok(ReadFile { sites, prices, tally })
}

/// What an import did, over every file.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ImportSummary {
    pub files: u64,
    /// Months skipped because they were imported before.
    pub already_imported: u64,
    /// Months the archive does not have (404).
    pub missing: Vec<String>,
    pub read: ReadTally,
    pub written: u64,
    pub unchanged: u64,
    /// Archive prices that differ from a stored (live) price: the stored one is kept.
    pub conflicts: u64,
    /// Distinct stations of the history that archive rows matched.
    pub matched_stations: u64,
    /// Distinct stations only the archive knows.
    pub archive_stations: u64,
    /// File names were guessed (FuelWatch's list could not be read).
    pub guessed: bool,
}

impl ImportSummary {
    /// One line for the operator.
    pub fn line(&self) -> String {
        let skipped: u64 = self.read.skipped.values().sum();
        let mut line = format!(
            "import-history: {} files, {} rows read, {} imported, {} already stored, {} conflicts (stored price kept), \
             {} matched stations, {} archive stations, {} skipped",
            self.files,
            self.read.rows,
            self.written,
            self.unchanged,
            self.conflicts,
            self.matched_stations,
            self.archive_stations,
            skipped
        );
        if !self.read.skipped.is_empty() {
            let reasons: Vec<String> =
                self.read.skipped.iter().map(|(why, n)| format!("{why}: {n}")).collect();
            line.push_str(&format!(" ({})", reasons.join(", ")));
        }
        if self.read.unknown_area > 0 {
            line.push_str(&format!(", {} rows with an unknown area", self.read.unknown_area));
        }
        if self.already_imported > 0 {
            line.push_str(&format!(", {} months already imported", self.already_imported));
        }
        if !self.missing.is_empty() {
            line.push_str(&format!(", not in the archive: {}", self.missing.join(" ")));
        }
        if self.guessed {
            line.push_str(", file names guessed (FuelWatch's file list could not be read)");
        }
        line
    }
}

/// A station the history knows, as matching needs it.
#[derive(Debug, Clone, Copy)]
struct Known {
    sid: i64,
    first_seen: i64,
    last_seen: i64,
    archive: bool,
    region: Option<u8>,
}

/// Imports files into one store, remembering what it matched across files.
pub struct Importer {
    store: Arc<dyn Store>,
    /// Normalised (address, suburb) → the most recently seen station there.
    known: HashMap<(String, String), Known>,
    matched: HashSet<i64>,
    archive: HashSet<i64>,
    pub summary: ImportSummary,
}

/// The months to download: from FuelWatch's list, or (when the list cannot be read) by names
/// guessed month by month.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    Listed { list: Vec<ListedFile>, from: (i16, i8), to: (i16, i8) },
    Guessed { base: url::Url, months: Vec<(i16, i8)> },
}

impl Plan {
    /// Read FuelWatch's list at `list_url`; `--to` defaults to the current month of `today`
    /// with the list (it has the growing month) and to the month before without it.
    pub async fn make(
        list_url: &url::Url,
        base: &url::Url,
        (from, to): (Option<super::Month>, Option<super::Month>),
        today: jiff::civil::Date,
        limits: DownloadLimits,
    ) -> Self {
        let from = from.unwrap_or(super::FIRST_MONTH);
        let read = match http_client(limits) {
            Ok(http) => read_list(&http, list_url, limits).await,
            Err(e) => Err(ImportError::Download { file: list_url.to_string(), reason: e.to_string() }),
        };
        match read {
            Ok(list) => Plan::Listed { list, from, to: to.unwrap_or((today.year(), today.month())) },
            Err(e) => {
                tracing::warn!(error = %e, "FuelWatch's file list could not be read: guessing file names month by month");
                let last = today.first_of_month().yesterday().unwrap_or(today);
                let months = months(from, to.unwrap_or((last.year(), last.month())));
                Plan::Guessed { base: base.clone(), months }
            }
        }
    }

    /// How many months the plan names.
    pub fn len(&self) -> usize {
        match self {
            Plan::Listed { list, from, to } => super::list::in_range(list, *from, *to).len(),
            Plan::Guessed { months, .. } => months.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Download and import what the plan names.
    pub async fn run(
        &self,
        importer: &mut Importer,
        limits: DownloadLimits,
        progress: &(dyn Fn(&str, &ImportWrite) + Sync),
    ) -> Result<(), ImportError> {
        match self {
            Plan::Listed { list, from, to } => {
                import_listed(importer, list, (*from, *to), limits, progress).await
            }
            Plan::Guessed { base, months } => {
                importer.summary.guessed = true;
                import_months(importer, base, months, limits, progress).await
            }
        }
    }
}

impl Importer {
    pub async fn new(store: Arc<dyn Store>) -> Result<Self, StoreError> {
        let stations = store.known_stations().await?;
        Ok(Self {
            known: known_by_address(&stations),
            store,
            matched: HashSet::new(),
            archive: HashSet::new(),
            summary: ImportSummary::default(),
        })
    }

    /// Whether the history knows any station the live feed listed.
    pub fn knows_live_stations(&self) -> bool {
        self.known.values().any(|k| !k.archive)
    }

    /// Learn today's live stations, so archive rows can match them: one warm pass (today's
    /// catalog from the source, recorded into the history), then the stations read again.
    /// An extract that fails leaves its stations unknown (their rows become archive stations).
    pub async fn learn_live_stations(
        &mut self,
        prices: &Arc<crate::snapshot::PriceService>,
    ) -> Result<(), StoreError> {
        let report = crate::jobs::warm::warm_pass(prices).await;
        if !report.failed.is_empty() {
            tracing::warn!(
                failed = report.failed.len(),
                "some catalog extracts failed; their stations stay unknown"
            );
        }
        self.known = known_by_address(&self.store.known_stations().await?);
        Ok(())
    }

    /// Read `input` (one archive file, decompressed) and write it in one transaction;
    /// `month` is recorded as imported when given, with the file's entry of FuelWatch's list
    /// when it came from there.
    pub async fn import<R: Read + Send + 'static>(
        &mut self,
        name: &str,
        input: R,
        month: Option<(i16, i8)>,
        listed: Option<&ListedFile>,
    ) -> Result<ImportWrite, ImportError> {
        let file = name.to_string();
        let read = tokio::task::spawn_blocking(move || read_file(&file, input))
            .await
            .map_err(|e| ImportError::Io { file: name.to_string(), reason: e.to_string() })??;
        let record = month.map(|month| ImportedMonth {
            month,
            rows: read.tally.rows,
            file_date: listed.map(|l| l.file_date.clone()),
            bytes: listed.map(|l| l.bytes),
        });
        let (batch, keys) = self.batch(&read, record);
        // The file's rows are in the batch now: only the tally is kept while it is written.
        let ReadFile { tally, .. } = read;
        let write = self
            .store
            .import(&batch)
            .await
            .map_err(|source| ImportError::Write { file: name.to_string(), source })?;
        // The new archive stations become known, so the next file matches them by address.
        let sids: HashMap<&str, i64> =
            write.archive_sids.iter().map(|(id, sid)| (id.as_str(), *sid)).collect();
        for (row, key) in batch.stations.iter().zip(keys) {
            let Some(&sid) = sids.get(row.station_id.as_str()) else { continue };
            self.archive.insert(sid);
            let (first_seen, last_seen, region) = (row.first_seen, row.last_seen, row.region);
            self.known.entry(key).or_insert(Known { sid, first_seen, last_seen, archive: true, region });
        }
        let s = &mut self.summary;
        s.files += 1;
        s.read.add(&tally);
        s.written += write.written;
        s.unchanged += write.unchanged;
        s.conflicts += write.conflicts;
        s.matched_stations = self.matched.len() as u64;
        s.archive_stations = self.archive.len() as u64;
        Ok(write)
    }

    /// The batch of one file: each site matched to a known station or made an archive one;
    /// with the match key of each archive station of the batch, in its order.
    fn batch(
        &mut self,
        read: &ReadFile,
        month: Option<ImportedMonth>,
    ) -> (ImportBatch, Vec<(String, String)>) {
        // Each site's days, to widen first and last seen.
        let mut span: Vec<(i64, i64)> = vec![(i64::MAX, i64::MIN); read.sites.len()];
        for &(_, day, site, _) in &read.prices {
            if let Some(s) = span.get_mut(site as usize) {
                *s = (s.0.min(day), s.1.max(day));
            }
        }
        let mut batch = ImportBatch { month, ..Default::default() };
        let mut slots = Vec::with_capacity(read.sites.len());
        let mut keys = Vec::new();
        for (site, &(first, last)) in read.sites.iter().zip(&span) {
            if first > last {
                slots.push(None);
                continue;
            }
            let key = site.match_key();
            match self.known.get_mut(&key) {
                Some(known) => {
                    if known.archive {
                        self.archive.insert(known.sid);
                    } else {
                        self.matched.insert(known.sid);
                    }
                    let new_region = known.region.is_none() && site.region.is_some();
                    if first < known.first_seen || last > known.last_seen || new_region {
                        known.first_seen = known.first_seen.min(first);
                        known.last_seen = known.last_seen.max(last);
                        known.region = known.region.or(site.region);
                        batch.widen.push((known.sid, known.first_seen, known.last_seen, known.region));
                    }
                    slots.push(Some(Slot::Known(known.sid)));
                }
                None => {
                    batch.stations.push(archive_row(site, first, last));
                    keys.push(key);
                    slots.push(Some(Slot::Archive(batch.stations.len() - 1)));
                }
            }
        }
        batch.prices = read
            .prices
            .iter()
            .filter_map(|&(product, day, site, price)| {
                let station = (*slots.get(site as usize)?)?;
                Some(ImportPrice { product, day, station, price })
            })
            .collect();
        // Two rows for one station, product and day (two trading names at one address, which
        // matching makes one station): the first is kept. A stable sort keeps the file's order
        // among equals, and needs no set of a month's keys beside the prices.
        let before = batch.prices.len();
        batch.prices.sort_by_key(|p| (p.product, p.day, p.station));
        batch.prices.dedup_by_key(|p| (p.product, p.day, p.station));
        let duplicates = (before - batch.prices.len()) as u64;
        if duplicates > 0 {
            *self
                .summary
                .read
                .skipped
                .entry("another row for the same station and day".into())
                .or_default() += duplicates;
        }
        (batch, keys)
    }
}

fn known_by_address(stations: &[KnownStation]) -> HashMap<(String, String), Known> {
    // Several stations at one address: the most recently seen (a live one over an archive one
    // seen as late), then the smallest station id. Never the order the store lists them in:
    // sids follow the order a warm pass happened to record its extracts, and an import run
    // again must pick the station the first run picked.
    let rank = |s: &KnownStation| (s.last_seen, !s.archive, std::cmp::Reverse(s.station_id.clone()));
    let mut best: HashMap<(String, String), &KnownStation> = HashMap::new();
    for s in stations {
        let key = (crate::model::key::fold_text(&s.street), crate::model::key::fold_text(&s.suburb));
        match best.get(&key) {
            Some(held) if rank(held) >= rank(s) => {}
            _ => {
                best.insert(key, s);
            }
        }
    }
    best.into_iter()
        .map(|(key, s)| {
            let known = Known {
                sid: s.sid,
                first_seen: s.first_seen,
                last_seen: s.last_seen,
                archive: s.archive,
                region: s.region,
            };
            (key, known)
        })
        .collect()
}

/// The stored form of an archive station.
fn archive_row(site: &ArchiveSite, first_seen: i64, last_seen: i64) -> ArchiveStationRow {
    let details = serde_json::json!({
        "trading_name": site.trading_name,
        "brand": site.brand,
        "brand_text": site.brand_text,
        "street": site.address,
        "suburb": site.suburb,
        "postcode": site.postcode,
        "region": site.region,
        "archive": true,
    });
    ArchiveStationRow {
        station_id: site.archive_id().to_string(),
        brand: site.brand,
        details: details.to_string(),
        region: site.region,
        first_seen,
        last_seen,
    }
}

/// Limits of an archive download.
#[derive(Debug, Clone, Copy)]
pub struct DownloadLimits {
    /// For the whole download of one month.
    pub deadline: Duration,
    /// Bytes of one month's file (the largest real months are a few tens of MB).
    pub max_bytes: u64,
}

impl Default for DownloadLimits {
    fn default() -> Self {
        Self { deadline: Duration::from_secs(300), max_bytes: 256 * 1024 * 1024 }
    }
}

/// A month's file streamed into a temporary file (never held whole in memory); `None` when
/// the archive has no such month (404).
pub async fn download_month(
    http: &reqwest::Client,
    base: &url::Url,
    (year, month): (i16, i8),
    limits: DownloadLimits,
) -> Result<Option<std::fs::File>, ImportError> {
    let name = super::month_file(year, month);
    let url =
        base.join(&name).map_err(|e| ImportError::Download { file: name.clone(), reason: e.to_string() })?;
    download(http, &name, url, limits).await
}

/// The file at `url` (named `name` in errors), streamed into a temporary file; `None` on 404.
async fn download(
    http: &reqwest::Client,
    name: &str,
    url: url::Url,
    limits: DownloadLimits,
) -> Result<Option<std::fs::File>, ImportError> {
    use std::io::{Seek, Write};
    let fail = |reason: String| ImportError::Download { file: name.to_string(), reason };
    let work = async {
        let mut response = http.get(url).send().await.map_err(|e| fail(e.to_string()))?;
        if response.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !response.status().is_success() {
            return Err(fail(format!("HTTP {}", response.status())));
        }
        let mut file = tempfile::tempfile().map_err(|e| fail(e.to_string()))?;
        let mut size = 0u64;
        while let Some(chunk) = response.chunk().await.map_err(|e| fail(e.to_string()))? {
            size += chunk.len() as u64;
            if size > limits.max_bytes {
                return Err(fail(format!("larger than {} bytes", limits.max_bytes)));
            }
            file.write_all(&chunk).map_err(|e| fail(e.to_string()))?;
        }
        file.rewind().map_err(|e| fail(e.to_string()))?;
        Ok(Some(file))
    };
    tokio::time::timeout(limits.deadline, work).await.map_err(|_| fail("timed out".into()))?
}

/// The HTTP client for archive downloads: our User-Agent, no redirects to elsewhere.
pub fn http_client(limits: DownloadLimits) -> Result<reqwest::Client, reqwest::Error> {
    crate::source::client::install_crypto_provider();
    reqwest::Client::builder()
        .user_agent(concat!("wafuel/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(limits.deadline.min(Duration::from_secs(30)))
        .build()
}

/// A local archive file, decompressed when its name ends in `.gz`.
fn open_file(path: &std::path::Path) -> Result<Box<dyn Read + Send>, ImportError> {
    let file = std::fs::File::open(path)
        .map_err(|e| ImportError::Io { file: path.display().to_string(), reason: e.to_string() })?;
    let gz = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    Ok(if gz {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(std::io::BufReader::new(file))
    })
}

/// Import local files, each whole. Every header is checked first: a file without a required
/// column stops the import before anything is written.
pub async fn import_paths(
    importer: &mut Importer,
    paths: &[std::path::PathBuf],
    progress: &(dyn Fn(&str, &ImportWrite) + Sync),
) -> Result<(), ImportError> {
    for path in paths {
        super::check_header(&path.display().to_string(), open_file(path)?)?;
    }
    for path in paths {
        let name = path.display().to_string();
        let month = super::month_of_file(&name);
        let write = importer.import(&name, open_file(path)?, month, None).await?;
        progress(&name, &write);
    }
    Ok(())
}

/// Download and import every month of `months` not imported before; a month the archive
/// does not have (404) is noted and skipped, any other failure stops the import there.
pub async fn import_months(
    importer: &mut Importer,
    base: &url::Url,
    months: &[(i16, i8)],
    limits: DownloadLimits,
    progress: &(dyn Fn(&str, &ImportWrite) + Sync),
) -> Result<(), ImportError> {
    let http = http_client(limits)
        .map_err(|e| ImportError::Download { file: base.to_string(), reason: e.to_string() })?;
    let done = importer.store.imported_months().await?;
    for &month in months {
        let name = super::month_file(month.0, month.1);
        if done.contains_key(&month) {
            importer.summary.already_imported += 1;
            progress(&name, &ImportWrite::default());
            continue;
        }
        match download_month(&http, base, month, limits).await? {
            None => {
                tracing::info!(file = %name, "not in the archive");
                importer.summary.missing.push(crate::store::archive::month_text(month));
            }
            Some(file) => {
                let write = importer.import(&name, std::io::BufReader::new(file), Some(month), None).await?;
                progress(&name, &write);
            }
        }
    }
    Ok(())
}

/// Download and import the months of FuelWatch's list from `from` to `to` that were never
/// imported or whose file changed since (`fileDate` or `bytes`: the current month grows
/// daily); the others count as already imported. A file that answers 404 is noted and
/// skipped, any other failure stops the import there, naming the file.
pub async fn import_listed(
    importer: &mut Importer,
    list: &[ListedFile],
    (from, to): ((i16, i8), (i16, i8)),
    limits: DownloadLimits,
    progress: &(dyn Fn(&str, &ImportWrite) + Sync),
) -> Result<(), ImportError> {
    let http = http_client(limits)
        .map_err(|e| ImportError::Download { file: "archive".into(), reason: e.to_string() })?;
    let done = importer.store.imported_months().await?;
    let newest = list.iter().filter_map(ListedFile::month).max();
    for (month, file) in super::list::in_range(list, from, to) {
        if !file.changed_since(done.get(&month), Some(month) == newest) {
            importer.summary.already_imported += 1;
            progress(&file.file_name, &ImportWrite::default());
            continue;
        }
        let fail = |reason: String| ImportError::Download { file: file.file_name.clone(), reason };
        let url: url::Url = file.url.parse().map_err(|e: url::ParseError| fail(e.to_string()))?;
        match download(&http, &file.file_name, url, limits).await? {
            None => {
                tracing::info!(file = %file.file_name, "listed but not found");
                importer.summary.missing.push(crate::store::archive::month_text(month));
            }
            Some(body) => {
                let input = std::io::BufReader::new(body);
                let write = importer.import(&file.file_name, input, Some(month), Some(&file)).await?;
                progress(&file.file_name, &write);
            }
        }
    }
    Ok(())
}

/// The list is a few hundred short entries; anything much larger is not the list.
const MAX_LIST_BYTES: u64 = 4 * 1024 * 1024;

/// Read FuelWatch's list of monthly files at `url`, with the download's limits.
pub async fn read_list(
    http: &reqwest::Client,
    url: &url::Url,
    limits: DownloadLimits,
) -> Result<Vec<ListedFile>, ImportError> {
    let fail = |reason: String| ImportError::Download { file: url.to_string(), reason };
    let work = async {
        let mut response = http
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| fail(e.to_string()))?;
        if !response.status().is_success() {
            return Err(fail(format!("HTTP {}", response.status())));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| fail(e.to_string()))? {
            body.extend_from_slice(&chunk);
            if body.len() as u64 > MAX_LIST_BYTES {
                return Err(fail(format!("larger than {MAX_LIST_BYTES} bytes")));
            }
        }
        serde_json::from_slice::<Vec<ListedFile>>(&body).map_err(|e| fail(format!("not the file list: {e}")))
    };
    tokio::time::timeout(limits.deadline.min(std::time::Duration::from_secs(60)), work)
        .await
        .map_err(|_| fail("timed out".into()))?
}

/// Every month from `from` to `to`, inclusive.
pub fn months(from: (i16, i8), to: (i16, i8)) -> Vec<(i16, i8)> {
    let mut out = Vec::new();
    let (mut y, mut m) = from;
    while (y, m) <= to {
        out.push((y, m));
        (y, m) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_run_across_years() {
        assert_eq!(months((2023, 11), (2024, 2)), vec![(2023, 11), (2023, 12), (2024, 1), (2024, 2)]);
        assert!(months((2024, 2), (2024, 1)).is_empty());
    }

    #[test]
    fn the_most_recently_seen_station_at_an_address_wins() {
        let station = |sid, street: &str, last_seen, archive| KnownStation {
            sid,
            station_id: format!("{sid}"),
            street: street.into(),
            suburb: "PERTH".into(),
            first_seen: 20_200_101,
            last_seen,
            archive,
            region: None,
        };
        let known = known_by_address(&[
            station(1, "1 Main St", 20_240_101, false),
            station(2, " 1  MAIN st", 20_260_101, false),
            station(3, "1 Main St", 20_260_101, true),
        ]);
        let found = known.get(&("1 main st".to_string(), "perth".to_string())).expect("known");
        assert_eq!(found.sid, 2);
        // Seen as late, both live: the smaller station id, whatever the order or the sids.
        let tied = |first: i64, second: i64| {
            let mut a = station(first, "9 Side Rd", 20_261_125, false);
            a.station_id = "b".into();
            let mut b = station(second, "9 Side Rd", 20_261_125, false);
            b.station_id = "a".into();
            known_by_address(&[a.clone(), b.clone()]).values().next().map(|k| k.sid) == Some(second)
                && known_by_address(&[b, a]).values().next().map(|k| k.sid) == Some(second)
        };
        assert!(tied(5, 6) && tied(6, 5), "the station with id \"a\" wins");
    }
}
