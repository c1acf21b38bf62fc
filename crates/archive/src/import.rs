//! `wafuel import-history`: archive files (local, or downloaded month by month) into the
//! history store. Each file is read on a blocking thread into its distinct stations and
//! compact price rows, its stations are matched to the ones the history knows, and it is
//! written in one transaction (`store::archive`).
//!
//! Identity (docs/api.md "History back to 2001"): a row names a place (its address folded by
//! [`super::fold_address`], and suburb) and a trading name. At one place, names priced on the
//! same day are different stations; a name that only ever follows another there (a rebrand, a
//! new operator, a new FuelWatch id) continues that station. A station the history knows is
//! found by place and name; a live one by place alone when it is the only live station there,
//! else by its trading name. Otherwise the row makes an archive station, kept without
//! coordinates: alone at its place it has [`ArchiveSite::archive_id`], beside another
//! [`ArchiveSite::colocated_id`].

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::Read;
use std::sync::Arc;

use super::list::ListedFile;
use super::{ArchiveError, ArchiveSite, ReadTally, SiteKey, read_prices};
use crate::ImportError;
use crate::download::download;
use crate::download::{DownloadLimits, download_month, http_client, read_list};
use crate::place::{Known, Place, PlaceStation, StationKey, archive_row, known_by_place};
use wafuel_domain::codes::ProductCode;
use wafuel_store::archive::{
    ArchiveMove, ImportBatch, ImportPrice, ImportWrite, ImportedMonth, Slot, StationNames,
};
use wafuel_store::history::day_number;
use wafuel_store::{Store, StoreError};

/// One file read: its distinct (place, trading name) pairs and its prices naming them by index.
struct ReadFile {
    sites: Vec<ArchiveSite>,
    /// (product, day as `YYYYMMDD`, site index, tenths of a cent)
    prices: Vec<(ProductCode, i64, u32, i64)>,
    tally: ReadTally,
}

fn read_file(name: &str, input: impl Read) -> Result<ReadFile, ArchiveError> {
    let mut sites: Vec<ArchiveSite> = Vec::new();
    // By the raw texts first: a month repeats each station's text thousands of times, and
    // folding it is the costly part.
    let mut by_text: HashMap<String, u32> = HashMap::new();
    let mut by_key: HashMap<(SiteKey, String), u32> = HashMap::new();
    let mut text = String::new();
    let mut prices = Vec::new();
    let tally = read_prices(name, input, |price| {
        text.clear();
        for part in [&price.station.address, &price.station.suburb, &price.station.trading_name] {
            // Length-prefixed: no text can end one field and start the next.
            text.push_str(&part.len().to_string());
            text.push(':');
            text.push_str(part);
        }
        let at = match by_text.get(text.as_str()) {
            Some(&at) => at,
            None => {
                let key = (price.station.site_key(), price.station.name_key());
                let at = *by_key.entry(key).or_insert_with(|| {
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
    /// Archive stations a month imported later split in two (two of its names on one day).
    pub split: u64,
    /// Stored prices those splits moved to the new station.
    pub moved: u64,
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
        if self.split > 0 {
            line.push_str(&format!(
                ", {} stations split (two names on one day: {} stored prices moved)",
                self.split, self.moved
            ));
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

/// Imports files into one store, remembering what it matched across files.
pub struct Importer {
    store: Arc<dyn Store>,
    /// Place → the stations the history knows there.
    known: HashMap<SiteKey, Vec<Known>>,
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
            known: known_by_place(&stations),
            store,
            matched: HashSet::new(),
            archive: HashSet::new(),
            summary: ImportSummary::default(),
        })
    }

    /// Whether the history knows any station the live feed listed.
    pub fn knows_live_stations(&self) -> bool {
        self.known.values().flatten().any(|k| !k.archive)
    }

    /// Read the known stations again, after the caller's warm pass has recorded today's
    /// catalog into the history (so archive rows can match live stations). An extract that
    /// failed in that pass leaves its stations unknown: their rows become archive stations.
    pub async fn relearn_stations(&mut self) -> Result<(), StoreError> {
        self.known = known_by_place(&self.store.known_stations().await?);
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
        // The batch's archive stations become known (new ones with their sids), so the next
        // file finds them by place and name.
        let sids: HashMap<&str, i64> =
            write.archive_sids.iter().map(|(id, sid)| (id.as_str(), *sid)).collect();
        for (row, (key, names, firsts)) in batch.stations.iter().zip(keys) {
            let Some(&sid) = sids.get(row.station_id.as_str()) else { continue };
            self.archive.insert(sid);
            let here = self.known.entry(key).or_default();
            match here.iter_mut().find(|k| k.station_id == row.station_id) {
                Some(known) => {
                    (known.names, known.firsts) = (names, firsts);
                    known.first_seen = known.first_seen.min(row.first_seen);
                    known.last_seen = known.last_seen.max(row.last_seen);
                    known.region = known.region.or(row.region);
                }
                None => here.push(Known {
                    sid,
                    station_id: row.station_id.clone(),
                    first_seen: row.first_seen,
                    last_seen: row.last_seen,
                    archive: true,
                    region: row.region,
                    names,
                    firsts,
                }),
            }
        }
        let s = &mut self.summary;
        s.files += 1;
        s.read.add(&tally);
        s.written += write.written;
        s.unchanged += write.unchanged;
        s.conflicts += write.conflicts;
        s.moved += write.moved;
        s.matched_stations = self.matched.len() as u64;
        s.archive_stations = self.archive.len() as u64;
        Ok(write)
    }

    /// The batch of one file: each (place, name) given a station, known or new; with the
    /// place, names and their days of each archive station row of the batch, in its order.
    fn batch(&mut self, read: &ReadFile, month: Option<ImportedMonth>) -> (ImportBatch, Vec<StationKey>) {
        // Each site's days: they widen first and last seen, and say which names share a day
        // at one place.
        let mut days: Vec<BTreeSet<i64>> = vec![BTreeSet::new(); read.sites.len()];
        for &(_, day, site, _) in &read.prices {
            if let Some(d) = days.get_mut(site as usize) {
                d.insert(day);
            }
        }
        let mut by_place: BTreeMap<SiteKey, Vec<usize>> = BTreeMap::new();
        for (i, site) in read.sites.iter().enumerate() {
            if !days[i].is_empty() {
                by_place.entry(site.site_key()).or_default().push(i);
            }
        }
        let mut batch = ImportBatch { month, ..Default::default() };
        let mut slots: Vec<Option<Slot>> = vec![None; read.sites.len()];
        let mut keys = Vec::new();
        for (place, mut named) in by_place {
            // In the order the names first appear (then by name): a successor comes after the
            // name it follows, and the same file always gives the same stations.
            named.sort_by_key(|&i| (days[i].first().copied(), read.sites[i].name_key()));
            let mut here = Place::new(self.known.get(&place).cloned().unwrap_or_default());
            for i in named {
                here.assign(i, &read.sites[i], &days[i]);
            }
            for station in here.stations {
                match &station.known {
                    Some(known) => {
                        let slot = Slot::Known(known.sid);
                        self.keep_known(&place, &station, read, &mut batch);
                        for &i in &station.sites {
                            slots[i] = Some(slot);
                        }
                    }
                    None => {
                        let (first, last) = station.span();
                        let latest = station.latest_site(&days);
                        let id =
                            station.id.clone().unwrap_or_else(|| read.sites[latest].archive_id().to_string());
                        batch.stations.push(archive_row(&read.sites[latest], id, &station, first, last));
                        keys.push((place.clone(), station.names.clone(), station.firsts.clone()));
                        let at = batch.stations.len() - 1;
                        if let Some((from, span)) = station.moved_from {
                            batch.moves.push(ArchiveMove { from, to: at, days: span });
                            self.summary.split += 1;
                        }
                        for &i in &station.sites {
                            slots[i] = Some(Slot::Archive(at));
                        }
                    }
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
        // Two rows for one station, product and day: a repeat of the same price is skipped;
        // another price is a conflict (the file's first row is kept). A stable sort keeps the
        // file's order among equals.
        batch.prices.sort_by_key(|p| (p.product, p.day, p.station));
        let (mut repeats, mut conflicts) = (0u64, 0u64);
        batch.prices.dedup_by(|later, kept| {
            let same = (later.product, later.day, later.station) == (kept.product, kept.day, kept.station);
            if same && later.price == kept.price {
                repeats += 1;
            } else if same {
                conflicts += 1;
            }
            same
        });
        if repeats > 0 {
            *self
                .summary
                .read
                .skipped
                .entry("another row for the same station and day".into())
                .or_default() += repeats;
        }
        self.summary.conflicts += conflicts;
        (batch, keys)
    }

    /// What the batch does for a known station this file gave rows (or took a name from):
    /// its dates and region widened, its names and their days rewritten when they changed.
    fn keep_known(
        &mut self,
        place: &SiteKey,
        station: &PlaceStation,
        read: &ReadFile,
        batch: &mut ImportBatch,
    ) {
        let Some(known) = &station.known else { return };
        let entry = self.known.get_mut(place).and_then(|v| v.iter_mut().find(|k| k.sid == known.sid));
        let Some(entry) = entry else { return };
        if !station.sites.is_empty() {
            let (first, last) = station.span();
            let region = station.region(&read.sites);
            let new_region = entry.region.is_none() && region.is_some();
            if first < entry.first_seen || last > entry.last_seen || new_region {
                entry.first_seen = entry.first_seen.min(first);
                entry.last_seen = entry.last_seen.max(last);
                entry.region = entry.region.or(region);
                batch.widen.push((entry.sid, entry.first_seen, entry.last_seen, entry.region));
            }
            if known.archive {
                self.archive.insert(known.sid);
            } else {
                self.matched.insert(known.sid);
            }
        }
        // Written only when a name comes, goes or is found earlier: not every month.
        if known.archive && (station.names != entry.names || station.firsts != entry.firsts) {
            batch.names.push(StationNames {
                sid: entry.sid,
                names: station.names.clone(),
                firsts: station.firsts.clone(),
            });
        }
        (entry.names, entry.firsts) = (station.names.clone(), station.firsts.clone());
    }
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
                importer.summary.missing.push(wafuel_store::archive::month_text(month));
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
                importer.summary.missing.push(wafuel_store::archive::month_text(month));
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
    use wafuel_store::archive::KnownStation;

    #[test]
    fn months_run_across_years() {
        assert_eq!(months((2023, 11), (2024, 2)), vec![(2023, 11), (2023, 12), (2024, 1), (2024, 2)]);
        assert!(months((2024, 2), (2024, 1)).is_empty());
    }

    fn site(name: &str, address: &str, suburb: &str) -> ArchiveSite {
        ArchiveSite {
            trading_name: name.into(),
            brand: 0,
            brand_text: None,
            address: address.into(),
            suburb: suburb.into(),
            postcode: None,
            region: None,
        }
    }

    fn days(from: i64, to: i64) -> BTreeSet<i64> {
        (from..=to).collect()
    }

    /// The stations a place's names make, as (id, names, days) in the order made.
    fn stations(
        known: Vec<Known>,
        named: &[(&ArchiveSite, BTreeSet<i64>)],
    ) -> Vec<(String, Vec<String>, usize)> {
        let mut place = Place::new(known);
        for (i, (site, days)) in named.iter().enumerate() {
            place.assign(i, site, days);
        }
        place
            .stations
            .into_iter()
            .filter(|s| !s.sites.is_empty())
            .map(|s| {
                let id = s.known.map(|k| k.station_id).or(s.id).unwrap_or_default();
                (id, s.names, s.days.len())
            })
            .collect()
    }

    #[test]
    fn competitors_at_one_address_on_the_same_day_are_two_stations() {
        // Real FuelWatch rows of 2026: 7-Eleven Brabham and EG Ampol Brabham, both
        // `3 Marvel Ent, BRABHAM`, priced every day with different prices.
        let seven = site("7-Eleven Brabham", "3 Marvel Ent", "BRABHAM");
        let eg = site("EG Ampol Brabham", "3 Marvel Ent", "BRABHAM");
        let made =
            stations(Vec::new(), &[(&seven, days(20260405, 20260430)), (&eg, days(20260405, 20260430))]);
        assert_eq!(made.len(), 2, "{made:?}");
        // The first keeps the address's own id (as a station alone there has); the other's
        // also hashes its name.
        assert_eq!(made[0].0, seven.archive_id().to_string());
        assert_eq!(made[1].0, eg.colocated_id().to_string());
        assert_ne!(seven.colocated_id(), eg.colocated_id());
        // A handover with one day both (Shell Gidgegannup, then Atlas Fuel Gidgegannup).
        let shell = site("Shell Gidgegannup", "2095 Toodyay Rd", "GIDGEGANNUP");
        let atlas = site("Atlas Fuel Gidgegannup", "2095 Toodyay Rd", "GIDGEGANNUP");
        let made =
            stations(Vec::new(), &[(&shell, days(20260701, 20260730)), (&atlas, days(20260730, 20260731))]);
        assert_eq!(made.len(), 2, "{made:?}");
    }

    #[test]
    fn a_name_that_follows_another_continues_its_station() {
        // A rebrand at one address, never both on one day: one history.
        let united = site("United Rangeway Truck Stop", "50 Rifle Range Rd", "RANGEWAY");
        let astron = site("Astron Rangeway Truck Stop", "50 Rifle Range Rd", "RANGEWAY");
        let made =
            stations(Vec::new(), &[(&united, days(20260405, 20260610)), (&astron, days(20260611, 20260630))]);
        assert_eq!(made.len(), 1, "{made:?}");
        assert_eq!(made[0].1, ["united rangeway truck stop", "astron rangeway truck stop"]);
        assert_eq!(made[0].2, days(20260405, 20260610).len() + days(20260611, 20260630).len());
        // Across files: the station the history knows takes its successor, and its own name
        // back later.
        let known = Known {
            sid: 7,
            station_id: united.archive_id().to_string(),
            first_seen: 20260405,
            last_seen: 20260610,
            archive: true,
            region: None,
            names: vec!["united rangeway truck stop".into()],
            firsts: vec![20260405],
        };
        let made = stations(vec![known.clone()], &[(&astron, days(20260701, 20260731))]);
        assert_eq!((made.len(), made[0].0.as_str()), (1, known.station_id.as_str()));
        // With a co-located competitor known too, the new name follows the one it does not
        // share a day with.
        let other =
            Known { sid: 8, station_id: "b".repeat(64), names: vec!["other".into()], ..known.clone() };
        let still = site("Other", "50 Rifle Range Rd", "RANGEWAY");
        let made = stations(
            vec![known.clone(), other],
            &[(&still, days(20260701, 20260731)), (&astron, days(20260701, 20260731))],
        );
        assert_eq!(made.len(), 2, "{made:?}");
        assert_eq!(
            made.iter()
                .find(|m| m.1.contains(&"astron rangeway truck stop".to_string()))
                .map(|m| m.0.clone()),
            Some(known.station_id)
        );
    }

    #[test]
    fn a_month_imported_later_splits_two_names_that_share_a_day() {
        // June and August were imported first: Shell Gidgegannup, then Atlas Fuel
        // Gidgegannup, never on one day, so one station. July shows both on the 30th.
        let shell = site("Shell Gidgegannup", "2095 Toodyay Rd", "GIDGEGANNUP");
        let atlas = site("Atlas Fuel Gidgegannup", "2095 Toodyay Rd", "GIDGEGANNUP");
        let known = Known {
            sid: 3,
            station_id: shell.archive_id().to_string(),
            first_seen: 20260601,
            last_seen: 20260823,
            archive: true,
            region: None,
            names: vec!["shell gidgegannup".into(), "atlas fuel gidgegannup".into()],
            firsts: vec![20260601, 20260801],
        };
        let mut place = Place::new(vec![known.clone()]);
        place.assign(0, &shell, &days(20260701, 20260730));
        place.assign(1, &atlas, &days(20260730, 20260731));
        let [kept, split] = &place.stations[..] else { panic!("two stations") };
        assert_eq!(kept.known.as_ref().map(|k| k.sid), Some(3));
        assert_eq!(
            (kept.names.clone(), kept.firsts.clone()),
            (vec!["shell gidgegannup".to_string()], vec![20260601])
        );
        assert_eq!(split.id.as_deref(), Some(atlas.colocated_id().as_str()));
        // Atlas's stored days (from its first to the station's last) move with it; its first
        // day is now July's.
        assert_eq!(split.moved_from, Some((3, (20260801, 20260823))));
        assert_eq!(split.firsts, [20260730]);
        // Names stored in the other order: Shell's days end the day before Atlas's first, which
        // this month moved to 1 July.
        let shell_second = Known {
            names: vec!["atlas fuel gidgegannup".into(), "shell gidgegannup".into()],
            firsts: vec![20260801, 20260601],
            ..known
        };
        let mut place = Place::new(vec![shell_second]);
        place.assign(0, &atlas, &days(20260701, 20260730));
        place.assign(1, &shell, &days(20260730, 20260731));
        assert_eq!(place.stations[1].moved_from, Some((3, (20260601, 20260700))));
    }

    #[test]
    fn live_stations_are_found_by_place_then_by_name() {
        let live = |sid, station_id: &str, name: &str| KnownStation {
            sid,
            station_id: station_id.into(),
            street: "1256 Armadale Road".into(),
            suburb: "ARMADALE".into(),
            first_seen: 20261101,
            last_seen: 20261126,
            archive: false,
            region: None,
            names: vec![name.into()],
            firsts: Vec::new(),
        };
        let known = known_by_place(&[
            live(1, "a".repeat(64).as_str(), "7-Eleven Haynes"),
            live(2, "b".repeat(64).as_str(), "Shell Reddy Express Brookdale"),
        ]);
        let here =
            known.get(&("1256 armadale rd".to_string(), "armadale".to_string())).cloned().expect("folded");
        assert_eq!(here.len(), 2);
        let shell = site("Shell Reddy Express Brookdale", "1256 Armadale Rd", "ARMADALE");
        let seven = site("7-Eleven Haynes", "1256 ARMADALE RD", "ARMADALE");
        // Whatever the file's order, each name finds its own live station.
        for order in [[&shell, &seven], [&seven, &shell]] {
            let mut place = Place::new(here.clone());
            for (i, s) in order.iter().enumerate() {
                place.assign(i, s, &days(20260405, 20260410));
            }
            let by = |name: &str| {
                place
                    .stations
                    .iter()
                    .find(|s| s.names.contains(&name.to_string()))
                    .and_then(|s| s.known.as_ref())
                    .map(|k| k.sid)
            };
            assert_eq!((by("7-eleven haynes"), by("shell reddy express brookdale")), (Some(1), Some(2)));
        }
        // Two live stations and a name neither has: never "the most recently seen wins".
        let mut place = Place::new(here);
        place.assign(0, &site("Somebody Else", "1256 Armadale Rd", "ARMADALE"), &days(20260405, 20260410));
        assert!(place.stations[2].known.is_none(), "an archive station of its own");
    }
}
