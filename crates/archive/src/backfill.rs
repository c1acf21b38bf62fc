//! The history backfill that `serve` runs by itself: every file of FuelWatch's monthly list
//! (and its yearly wholesale list) from the first month asked for that the store lacks or
//! that changed, **newest first**, so the months the forecast, statistics and `lastChange`
//! read are in within a minute and the old years fill in behind them.
//!
//! - One replica at a time, under a job lease of at most a minute renewed while it works: a
//!   crashed holder's work is taken over within a minute.
//! - One download at a time; each file is imported whole or not at all (the importers write a
//!   file in one transaction and record it in the same one), so a restart resumes where the
//!   last file committed and never downloads a finished file again.
//! - A file that fails (a refused or cut download, a file refused whole) is logged with its
//!   cause and tried again after 30 s at most, the delay doubling up to 10 minutes, while the
//!   others go on.
//! - Once every file is in, both lists are read again each day after 01:00 Perth time, when
//!   FuelWatch's files have grown, and what changed comes in by itself.
//!
//! The same importers as `import-history` and `import-wholesale`: one code path.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};

use crate::ImportError;
use crate::download::{DownloadLimits, download, download_month, http_client, read_list};
use crate::import::Importer;
use crate::list::{ListedFile, in_range};
use crate::wholesale::{WholesaleImporter, changed_since, year_of_file};
use wafuel_domain::backfill::{Backfill, BackfillState, JOB, LastError};
use wafuel_domain::time::SharedClock;
use wafuel_store::archive::month_text;
use wafuel_store::{Store, StoreError};

/// What the backfill reads and how patiently.
#[derive(Debug, Clone)]
pub struct BackfillConfig {
    /// FuelWatch's list of monthly files.
    pub archive_list: url::Url,
    /// Where the monthly files are, by name, when the list cannot be read.
    pub archive_base: url::Url,
    /// FuelWatch's list of yearly wholesale files (none: no wholesale backfill).
    pub wholesale_list: Option<url::Url>,
    /// The first month to bring in (`--backfill-from`).
    pub from: crate::Month,
    pub limits: DownloadLimits,
    /// The first wait before a failed file is tried again; it doubles up to `retry_max`.
    pub retry_first: Duration,
    pub retry_max: Duration,
    /// The job lease: renewed every third of it while the job works.
    pub lease: Duration,
    /// How often a replica that finds the lease taken looks again.
    pub wait: Duration,
}

impl BackfillConfig {
    /// The contract's timings: retries from 30 s up to 10 minutes, a one-minute lease.
    pub fn new(
        archive_list: url::Url,
        archive_base: url::Url,
        wholesale_list: Option<url::Url>,
        from: crate::Month,
    ) -> Self {
        Self {
            archive_list,
            archive_base,
            wholesale_list,
            from,
            limits: DownloadLimits::default(),
            retry_first: Duration::from_secs(30),
            retry_max: Duration::from_secs(600),
            lease: Duration::from_secs(60),
            wait: Duration::from_secs(30),
        }
    }
}

/// One file to bring in.
#[derive(Debug, Clone)]
enum Item {
    /// A month of retail prices: from the list, or by its guessed name (`None`).
    Month(crate::Month, Option<ListedFile>),
    /// A year of terminal gate prices.
    Year(i16, ListedFile),
}

impl Item {
    fn name(&self) -> String {
        match self {
            Item::Month(_, Some(listed)) | Item::Year(_, listed) => listed.file_name.clone(),
            Item::Month(month, None) => crate::month_file(month.0, month.1),
        }
    }

    /// Newest first: a year's wholesale file just before that year's months (the forecast
    /// reads the terminal gate price beside the recent retail prices).
    fn order(&self) -> (i16, i8) {
        match self {
            Item::Month(month, _) => *month,
            Item::Year(year, _) => (*year, 13),
        }
    }
}

/// A file waiting its turn, and its failures so far.
struct Pending {
    item: Item,
    failures: u32,
    not_before: Instant,
}

/// How a pass ended.
enum Pass {
    /// Every file is in.
    Done,
    /// The lease ran out (this replica stalled): another may have taken over.
    LeaseLost,
    /// The lists could not be read.
    NoList,
}

/// Run the backfill until the process ends: passes under the lease, then a daily re-read.
pub async fn run(store: Arc<dyn Store>, clock: SharedClock, config: BackfillConfig) {
    let owner = format!("backfill-{:016x}", rand_u64());
    let mut delay = config.retry_first;
    loop {
        let now = clock.now();
        let until = now.saturating_add(signed(config.lease)).unwrap_or(now);
        match store.claim_job(JOB, &owner, now, until).await {
            Ok(true) => {}
            Ok(false) => {
                // Another replica works; its progress is in the store for every status.
                tokio::time::sleep(config.wait).await;
                continue;
            }
            Err(e) => {
                tracing::warn!(error = %e, "backfill: the store could not be asked for the lease");
                tokio::time::sleep(config.wait).await;
                continue;
            }
        }
        let outcome = pass(&store, &clock, &config, &owner).await;
        if let Err(e) = store.release_job(JOB, &owner).await {
            tracing::warn!(error = %e, "backfill: the lease could not be released; it runs out by itself");
        }
        match outcome {
            Ok(Pass::Done) => {
                delay = config.retry_first;
                tokio::time::sleep(until_next_reread(clock.now())).await;
            }
            Ok(Pass::LeaseLost) => tokio::time::sleep(config.wait).await,
            Ok(Pass::NoList) | Err(_) => {
                if let Err(e) = &outcome {
                    tracing::warn!(error = %e, "backfill: pass stopped; tried again");
                }
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(config.retry_max);
            }
        }
    }
}

/// How long until the daily re-read: the next 01:00 in Perth (FuelWatch's files have grown).
fn until_next_reread(now: Timestamp) -> Duration {
    let perth = wafuel_domain::time::perth_now(now);
    let today = perth.date();
    let at = |d: jiff::civil::Date| wafuel_domain::time::perth_instant(d.at(1, 0, 0, 0));
    let next = if perth.hour() < 1 { at(today) } else { at(today.tomorrow().unwrap_or(today)) };
    Duration::try_from(next.duration_since(now))
        .unwrap_or(Duration::from_secs(3600))
        .max(Duration::from_secs(1))
}

/// One pass under the lease: read the lists, then bring in every file still owed, newest
/// first, one at a time, each failure tried again later while the others go on.
async fn pass(
    store: &Arc<dyn Store>,
    clock: &SharedClock,
    config: &BackfillConfig,
    owner: &str,
) -> Result<Pass, ImportError> {
    let started = Instant::now();
    let lost = Arc::new(AtomicBool::new(false));
    let renewer =
        tokio::spawn(renew(store.clone(), clock.clone(), owner.to_string(), config.lease, lost.clone()));
    let result = files(store, clock, config, &lost, started).await;
    renewer.abort();
    result
}

/// Renew the lease every third of it until aborted; a renewal refused marks it lost.
async fn renew(
    store: Arc<dyn Store>,
    clock: SharedClock,
    owner: String,
    lease: Duration,
    lost: Arc<AtomicBool>,
) {
    loop {
        tokio::time::sleep(lease / 3).await;
        let now = clock.now();
        let until = now.saturating_add(signed(lease)).unwrap_or(now);
        match store.renew_job(JOB, &owner, now, until).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!("backfill: the lease ran out; stopping after this file");
                lost.store(true, Ordering::SeqCst);
                return;
            }
            // A store that does not answer now may answer at the next renewal; the lease
            // still has two thirds of its time.
            Err(e) => tracing::warn!(error = %e, "backfill: the lease could not be renewed"),
        }
    }
}

async fn files(
    store: &Arc<dyn Store>,
    clock: &SharedClock,
    config: &BackfillConfig,
    lost: &AtomicBool,
    started: Instant,
) -> Result<Pass, ImportError> {
    let http = http_client(config.limits).map_err(|e| ImportError::Download {
        file: config.archive_list.to_string(),
        reason: e.to_string(),
    })?;
    let today = wafuel_domain::time::perth_now(clock.now()).date();
    let mut progress = Backfill {
        state: BackfillState::Running,
        files_done: 0,
        files_total: 0,
        oldest_month: None,
        last_error: None,
    };
    if let Some(before) = recorded(store).await {
        progress.last_error = before.last_error;
    }
    let (items, total, oldest) = match owed(store, &http, config, today).await {
        Ok(owed) => owed,
        Err(e) => {
            progress.state = BackfillState::Failed;
            progress.last_error = Some(failure(config.archive_list.as_ref(), &e.to_string(), clock.now()));
            record(store, &progress, clock.now()).await;
            tracing::warn!(error = %e, "backfill: FuelWatch's file list could not be read");
            return Ok(Pass::NoList);
        }
    };
    progress.files_total = total;
    progress.files_done = total - items.len() as u64;
    progress.oldest_month = oldest.map(month_text);
    record(store, &progress, clock.now()).await;
    if !items.is_empty() {
        tracing::info!(
            files = items.len(),
            of = total,
            "backfill: bringing in FuelWatch's files, newest first"
        );
    }
    let mut importer = Importer::new(store.clone()).await?;
    let mut wholesale = WholesaleImporter::new(store.clone());
    let mut queue: Vec<Pending> =
        items.into_iter().map(|item| Pending { item, failures: 0, not_before: Instant::now() }).collect();
    let mut imported = 0u64;
    while !queue.is_empty() {
        if lost.load(Ordering::SeqCst) {
            return Ok(Pass::LeaseLost);
        }
        // The newest file whose turn has come; else wait for the first that will.
        let ready = queue.iter().position(|p| p.not_before <= Instant::now());
        let Some(at) = ready else {
            let next = queue.iter().map(|p| p.not_before).min().unwrap_or_else(Instant::now);
            tokio::time::sleep_until(next.into()).await;
            continue;
        };
        let name = queue[at].item.name();
        let began = Instant::now();
        let outcome = bring_in(&mut importer, &mut wholesale, &http, config, &queue[at].item).await;
        match outcome {
            Ok(rows) => {
                let done = queue.remove(at);
                imported += 1;
                progress.files_done += 1;
                if let Item::Month(month, _) = done.item {
                    let older =
                        progress.oldest_month.as_deref().is_none_or(|m| month_text(month).as_str() < m);
                    if older {
                        progress.oldest_month = Some(month_text(month));
                    }
                }
                tracing::info!(
                    file = %name,
                    rows,
                    seconds = began.elapsed().as_secs_f64(),
                    done = progress.files_done,
                    of = progress.files_total,
                    "backfill: file imported"
                );
            }
            Err(e) => {
                let pending = &mut queue[at];
                pending.failures += 1;
                let wait = retry_after(config, pending.failures);
                pending.not_before = Instant::now() + wait;
                progress.last_error = Some(failure(&name, &e.to_string(), clock.now()));
                tracing::warn!(file = %name, error = %e, retry_in_s = wait.as_secs(), "backfill: file failed; tried again later");
            }
        }
        record(store, &progress, clock.now()).await;
    }
    progress.state = BackfillState::Done;
    record(store, &progress, clock.now()).await;
    if imported > 0 {
        tracing::info!(
            files = imported,
            total = progress.files_total,
            oldest = progress.oldest_month.as_deref().unwrap_or("-"),
            seconds = started.elapsed().as_secs_f64(),
            "backfill: done"
        );
    }
    Ok(Pass::Done)
}

/// The wait before a file's next try after `failures` failures: 30 s, doubling, at most 10
/// minutes (as configured).
fn retry_after(config: &BackfillConfig, failures: u32) -> Duration {
    let doubled = config.retry_first.saturating_mul(1u32 << failures.saturating_sub(1).min(16));
    doubled.min(config.retry_max)
}

/// The files still owed, newest first; how many files the backfill covers in all; and the
/// oldest month already in.
async fn owed(
    store: &Arc<dyn Store>,
    http: &reqwest::Client,
    config: &BackfillConfig,
    today: jiff::civil::Date,
) -> Result<(Vec<Item>, u64, Option<crate::Month>), ImportError> {
    let current = (today.year(), today.month());
    let done = store.imported_months().await?;
    let mut all: Vec<(Item, bool)> = Vec::new();
    match read_list(http, &config.archive_list, config.limits).await {
        Ok(list) => {
            let newest = list.iter().filter_map(ListedFile::month).max();
            for (month, listed) in in_range(&list, config.from, current) {
                let owed = listed.changed_since(done.get(&month), Some(month) == newest);
                all.push((Item::Month(month, Some(listed)), owed));
            }
        }
        Err(e) => {
            // As `import-history` does without the list: the months by their names, up to
            // the last whole month.
            tracing::warn!(error = %e, "backfill: FuelWatch's list could not be read: guessing file names month by month");
            let last = today.first_of_month().yesterday().unwrap_or(today);
            let months = crate::import::months(config.from, (last.year(), last.month()));
            if months.is_empty() {
                return Err(e);
            }
            for month in months {
                all.push((Item::Month(month, None), !done.contains_key(&month)));
            }
        }
    }
    if let Some(list_url) = &config.wholesale_list {
        let years = store.wholesale_imports().await?;
        let list = read_list(http, list_url, config.limits).await?;
        for listed in list {
            let Some(year) = year_of_file(&listed.file_name).filter(|y| *y >= config.from.0) else {
                continue;
            };
            let owed = changed_since(&listed, years.iter().find(|i| i.file == listed.file_name));
            all.push((Item::Year(year, listed), owed));
        }
    }
    let total = all.len() as u64;
    let oldest = all
        .iter()
        .filter(|(_, owed)| !owed)
        .filter_map(|(item, _)| match item {
            Item::Month(month, _) => Some(*month),
            Item::Year(..) => None,
        })
        .min();
    let mut items: Vec<Item> = all.into_iter().filter(|(_, owed)| *owed).map(|(item, _)| item).collect();
    items.sort_by_key(|item| std::cmp::Reverse(item.order()));
    Ok((items, total, oldest))
}

/// Download one file and import it whole; the rows it held.
async fn bring_in(
    importer: &mut Importer,
    wholesale: &mut WholesaleImporter,
    http: &reqwest::Client,
    config: &BackfillConfig,
    item: &Item,
) -> Result<u64, ImportError> {
    match item {
        Item::Month(month, Some(listed)) => {
            let fail = |reason: String| ImportError::Download { file: listed.file_name.clone(), reason };
            let url = url::Url::parse(&listed.url)
                .or_else(|_| config.archive_list.join(&listed.url))
                .map_err(|e| fail(e.to_string()))?;
            let body = download(http, &listed.file_name, url, config.limits)
                .await?
                .ok_or_else(|| fail("listed but not found (404)".into()))?;
            let write = importer
                .import(&listed.file_name, std::io::BufReader::new(body), Some(*month), Some(listed))
                .await?;
            Ok(write.written + write.unchanged + write.conflicts)
        }
        Item::Month(month, None) => {
            let name = crate::month_file(month.0, month.1);
            match download_month(http, &config.archive_base, *month, config.limits).await? {
                // A month the archive does not have: nothing to bring in (asked again at the
                // next pass, as a guessed name may yet appear).
                None => {
                    tracing::info!(file = %name, "backfill: not in the archive");
                    Ok(0)
                }
                Some(body) => {
                    let write =
                        importer.import(&name, std::io::BufReader::new(body), Some(*month), None).await?;
                    Ok(write.written + write.unchanged + write.conflicts)
                }
            }
        }
        Item::Year(_, listed) => {
            let list_url = config.wholesale_list.as_ref().unwrap_or(&config.archive_list);
            let write = wholesale.import_listed_file(http, list_url, listed, config.limits).await?;
            Ok(write.written + write.replaced + write.unchanged)
        }
    }
}

/// The progress recorded in the store, if any.
pub async fn recorded(store: &Arc<dyn Store>) -> Option<Backfill> {
    let text = store.job_state(JOB).await.ok().flatten()?;
    serde_json::from_str(&text).ok()
}

/// Record the progress for every replica; a store that fails only costs the status its news.
async fn record(store: &Arc<dyn Store>, progress: &Backfill, now: Timestamp) {
    let write = match serde_json::to_string(progress) {
        Ok(text) => store.put_job_state(JOB, &text, now).await,
        Err(e) => Err(StoreError::Encoding(e.to_string())),
    };
    if let Err(e) = write {
        tracing::warn!(error = %e, "backfill: progress could not be recorded");
    }
}

fn failure(file: &str, message: &str, at: Timestamp) -> LastError {
    let at = wafuel_domain::time::format_perth(&wafuel_domain::time::perth_now(at));
    LastError { file: file.to_string(), message: message.to_string(), at }
}

fn signed(d: Duration) -> SignedDuration {
    SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX)
}

/// A random lease owner (a process id would repeat across containers): the standard
/// library's randomly keyed hasher, with nothing hashed.
fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new().build_hasher().finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_wait_thirty_seconds_doubling_to_ten_minutes() {
        let url: url::Url = "http://127.0.0.1/".parse().expect("url");
        let c = BackfillConfig::new(url.clone(), url, None, (2001, 1));
        let waits: Vec<u64> = (1..=7).map(|n| retry_after(&c, n).as_secs()).collect();
        assert_eq!(waits, [30, 60, 120, 240, 480, 600, 600]);
    }

    #[test]
    fn the_daily_reread_is_after_one_in_the_morning_perth_time() {
        use jiff::civil::date;
        use wafuel_domain::time::perth_instant;
        let at = |h: i8, m: i8| perth_instant(date(2026, 12, 7).at(h, m, 0, 0));
        assert_eq!(until_next_reread(at(0, 30)), Duration::from_secs(30 * 60));
        assert_eq!(until_next_reread(at(1, 0)), Duration::from_secs(24 * 3600));
        assert_eq!(until_next_reread(at(23, 0)), Duration::from_secs(2 * 3600));
    }

    #[test]
    fn newest_first_with_a_years_wholesale_file_before_its_months() {
        let listed = |name: &str| ListedFile {
            file_name: name.into(),
            file_date: String::new(),
            bytes: 0,
            url: String::new(),
        };
        let mut items = [
            Item::Month((2025, 12), None),
            Item::Year(2025, listed("FuelWatchWholesale-2025.csv")),
            Item::Month((2026, 2), None),
            Item::Year(2026, listed("FuelWatchWholesale-2026.csv")),
            Item::Month((2026, 1), None),
        ];
        items.sort_by_key(|item| std::cmp::Reverse(item.order()));
        let names: Vec<String> = items.iter().map(Item::name).collect();
        assert_eq!(
            names,
            [
                "FuelWatchWholesale-2026.csv",
                "FuelWatchRetail-02-2026.csv",
                "FuelWatchRetail-01-2026.csv",
                "FuelWatchWholesale-2025.csv",
                "FuelWatchRetail-12-2025.csv"
            ]
        );
    }
}
