//! FuelWatch's yearly wholesale files (`FuelWatchWholesale-YYYY.csv`, terminal gate prices
//! since December 2002), read by header name and imported beside the history
//! (`wafuel import-wholesale`): from local files and folders, or from the files FuelWatch's
//! list names (`GET /api/report/terminal-gate-prices`, in the monthly list's shape).
//!
//! Columns: `PUBLISH_DATE` (`DD/MM/YYYY`), `PRODUCT` and `PRODUCT_PRICE` are required,
//! `TERMINAL_GATE` and `LOCATION` optional, any other ignored; CRLF or LF, a trailing empty
//! field allowed. A header without the required columns refuses the file whole, naming the
//! columns it has; a row that does not parse is counted and reported, never guessed.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Read;
use std::sync::Arc;

use jiff::civil::Date;

use crate::download::{DownloadLimits, download, http_client, read_list};
use crate::list::ListedFile;
use crate::{ArchiveError, ImportError};
use wafuel_domain::codes::ProductCode;
use wafuel_domain::wholesale::{Centre, TerminalPrice, parse_price, product_of};
use wafuel_store::wholesale::{WholesaleImport, WholesaleStore, WholesaleWrite};

/// Where FuelWatch lists its yearly wholesale files.
pub const DEFAULT_WHOLESALE_LIST_URL: &str =
    "https://www.fuelwatch.wa.gov.au/api/report/terminal-gate-prices";

const DATE: &str = "PUBLISH_DATE";
const PRODUCT: &str = "PRODUCT";
const PRICE: &str = "PRODUCT_PRICE";
const TERMINAL: &str = "TERMINAL_GATE";
const LOCATION: &str = "LOCATION";
/// The terminal of a file without `TERMINAL_GATE`.
pub const UNNAMED_TERMINAL: &str = "";

/// The year a file name names (`FuelWatchWholesale-2026.csv`).
pub fn year_of_file(name: &str) -> Option<i16> {
    let base = name.rsplit('/').next()?;
    let year = base.strip_prefix("FuelWatchWholesale-")?.strip_suffix(".csv")?;
    year.parse().ok().filter(|y| (2001..=9999).contains(y))
}

/// What reading one file found: its prices held compactly (a terminal by its index among the
/// file's names, a (product, day)'s terminals in one sorted list), so a file's size never
/// decides the memory its import takes, only its distinct prices do (8 bytes each).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ReadWholesale {
    names: Vec<String>,
    days: BTreeMap<(ProductCode, Date), Vec<Cell>>,
    /// Rows of a product without a terminal gate price of ours.
    pub other_products: u64,
    /// Rows that did not parse, and the first few of them (line and why).
    pub bad_rows: u64,
    pub bad_examples: Vec<String>,
    /// Repeats of a (terminal, product, day) with another price: the first is kept.
    pub conflicts: u64,
}

/// One terminal's price of a (product, day).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cell {
    terminal: u16,
    centre: Centre,
    price: i32,
}

/// The most terminals one file may name (FuelWatch's name a few dozen): each name's rows past
/// these are refused, so a file of made-up names cannot grow the import without bound.
pub const MAX_TERMINALS: usize = 1_000;

/// Prices handed to the store at a time.
const PART: usize = 20_000;

impl ReadWholesale {
    /// How many prices the file holds (the first of each terminal, product and day).
    pub fn len(&self) -> usize {
        self.days.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.days.is_empty()
    }

    /// The prices by product, day and terminal, in parts of at most `size`.
    pub fn parts(&self, size: usize) -> impl Iterator<Item = Vec<TerminalPrice>> + Send + '_ {
        let names = &self.names;
        let mut cells = self.days.iter().flat_map(move |(&(product, date), cells)| {
            cells.iter().map(move |c| TerminalPrice {
                product,
                centre: c.centre,
                date,
                terminal: names.get(usize::from(c.terminal)).cloned().unwrap_or_default(),
                price: i64::from(c.price),
            })
        });
        std::iter::from_fn(move || {
            let part: Vec<TerminalPrice> = cells.by_ref().take(size.max(1)).collect();
            (!part.is_empty()).then_some(part)
        })
    }

    /// Every price, by product, day and terminal.
    pub fn prices(&self) -> Vec<TerminalPrice> {
        self.parts(usize::MAX).flatten().collect()
    }

    /// Keep the first price of a terminal's product and day: a repeat with another price is
    /// a conflict, as the retail import counts it.
    fn keep(&mut self, product: ProductCode, date: Date, terminal: u16, centre: Centre, price: i32) {
        let cells = self.days.entry((product, date)).or_default();
        match cells.binary_search_by_key(&terminal, |c| c.terminal) {
            Ok(i) => {
                if cells.get(i).is_some_and(|c| c.price != price) {
                    self.conflicts += 1;
                }
            }
            Err(i) => cells.insert(i, Cell { terminal, centre, price }),
        }
    }
}

/// At most this many bad rows are described (all are counted).
const EXAMPLES: usize = 5;

/// The centre of a terminal: `LOCATION` when it names one, else the centre its name names
/// (`Ampol Albany`, `BP Port Hedland`), else Perth (Kwinana and Kewdale are Perth's).
fn centre_of(terminal: &str, location: Option<&str>) -> Centre {
    if let Some(centre) = location.and_then(Centre::from_name) {
        return centre;
    }
    let folded = terminal.to_ascii_lowercase();
    Centre::ALL
        .into_iter()
        .find(|c| *c != Centre::Perth && folded.contains(&c.name().to_ascii_lowercase()))
        .unwrap_or(Centre::Perth)
}

/// `DD/MM/YYYY` (one-digit day and month allowed), a day that exists.
fn date_of(text: &str) -> Option<Date> {
    let mut parts = text.trim().split('/');
    let (d, m, y) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || y.len() != 4 {
        return None;
    }
    Date::new(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?).ok()
}

/// The first day FuelWatch published a terminal gate price.
pub const FIRST_DAY: Date = Date::constant(2002, 12, 19);

/// The longest terminal name kept (FuelWatch's are a few dozen characters).
pub const MAX_TERMINAL_CHARS: usize = 1_000;

/// Why a terminal name is refused: too long, or holding a control character or a
/// bidirectional mark (a name is shown in pages and spreadsheets as written).
fn bad_name(name: &str) -> Option<String> {
    if name.chars().count() > MAX_TERMINAL_CHARS {
        return Some(format!("TERMINAL_GATE is longer than {MAX_TERMINAL_CHARS} characters"));
    }
    let hidden = |c: char| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    name.chars()
        .find(|c| hidden(*c))
        .map(|c| format!("TERMINAL_GATE holds U+{:04X}, a control or direction mark", u32::from(c)))
}

/// Read one yearly file (named `name` in errors and reports), its days from FuelWatch's first
/// to tomorrow in Perth.
pub fn read_file(name: &str, input: impl Read) -> Result<ReadWholesale, ArchiveError> {
    let today = wafuel_domain::time::perth_now(jiff::Timestamp::now()).date();
    read_file_until(name, input, today.tomorrow().unwrap_or(today))
}

/// [`read_file`] with days up to `last`.
pub fn read_file_until(name: &str, input: impl Read, last: Date) -> Result<ReadWholesale, ArchiveError> {
    let csv_error = |source| ArchiveError::Csv { file: name.to_string(), source };
    let newlines = std::rc::Rc::new(std::cell::RefCell::new(Newlines::default()));
    let input = Lines { inner: input, read: 0, newlines: newlines.clone() };
    // The csv crate's own line count drifts on CRLF files (a record there starts at the `\n`
    // ending the line before): a bad row is named by the line of its first byte, counted from
    // the bytes as they are read, that `\n` counted with the line it ends.
    let line_at = |byte: u64| newlines.borrow_mut().line_at(byte);
    let mut reader = csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(input);
    let header = reader.headers().map_err(csv_error)?.clone();
    let find = |column: &str| {
        header.iter().position(|h| h.trim_start_matches('\u{feff}').trim().eq_ignore_ascii_case(column))
    };
    let (Some(date), Some(product), Some(price)) = (find(DATE), find(PRODUCT), find(PRICE)) else {
        let missing = [DATE, PRODUCT, PRICE].into_iter().filter(|c| find(c).is_none()).collect();
        let has = header
            .iter()
            .map(|h| h.trim_start_matches('\u{feff}').trim().to_string())
            .filter(|h| !h.is_empty())
            .collect();
        return Err(ArchiveError::MissingColumns { file: name.to_string(), missing, has });
    };
    let (terminal, location) = (find(TERMINAL), find(LOCATION));
    let fields = header.len();
    let mut out = ReadWholesale::default();
    let mut terminals: HashMap<String, u16> = HashMap::new();
    let mut record = csv::StringRecord::new();
    loop {
        let more = match reader.read_record(&mut record) {
            Ok(more) => more,
            Err(e) => match e.kind() {
                csv::ErrorKind::Utf8 { pos, .. } => {
                    out.bad(pos.as_ref().map_or(0, |p| line_at(p.byte())), "not UTF-8".into());
                    continue;
                }
                _ => return Err(csv_error(e)),
            },
        };
        if !more {
            break;
        }
        // The line the record starts on, as an editor numbers it.
        let line = record.position().map_or(0, |p| line_at(p.byte()));
        if record.iter().all(str::is_empty) {
            continue;
        }
        if record.len() != fields {
            // An unquoted `150,5` is two fields, never a price of 150.
            out.bad(line, format!("{} fields where the header has {fields}", record.len()));
            continue;
        }
        let field = |i: usize| record.get(i).unwrap_or("");
        let Some(product) = product_of(field(product)) else {
            if field(product).is_empty() {
                out.bad(line, "no PRODUCT".into());
            } else {
                out.other_products += 1;
            }
            continue;
        };
        let Some(date) = date_of(field(date)) else {
            out.bad(line, format!("PUBLISH_DATE {:?} is not a DD/MM/YYYY day", field(date)));
            continue;
        };
        if date < FIRST_DAY || date > last {
            out.bad(line, format!("PUBLISH_DATE {date} is outside FuelWatch's {FIRST_DAY} to {last}"));
            continue;
        }
        let Some(price) = parse_price(field(price)).and_then(|p| i32::try_from(p).ok()) else {
            out.bad(
                line,
                format!("PRODUCT_PRICE {:?} is not a price over 10 and at most 1000 c/L", field(price)),
            );
            continue;
        };
        let terminal_name = terminal.map_or(UNNAMED_TERMINAL, field);
        if let Some(why) = bad_name(terminal_name) {
            out.bad(line, why);
            continue;
        }
        // A LOCATION that names no terminal centre is refused, never filed under Perth.
        let place = location.map(field).filter(|l| !l.is_empty());
        if let Some(place) = place
            && Centre::from_name(place).is_none()
        {
            out.bad(
                line,
                format!("LOCATION {:?} is not a terminal centre", place.chars().take(40).collect::<String>()),
            );
            continue;
        }
        let centre = centre_of(terminal_name, place);
        let index = match terminals.get(terminal_name) {
            Some(index) => *index,
            None => match u16::try_from(out.names.len()).ok().filter(|n| usize::from(*n) < MAX_TERMINALS) {
                Some(index) => {
                    terminals.insert(terminal_name.to_string(), index);
                    out.names.push(terminal_name.to_string());
                    index
                }
                None => {
                    out.bad(line, format!("a terminal past the file's first {MAX_TERMINALS}"));
                    continue;
                }
            },
        };
        out.keep(product, date, index, centre, price);
    }
    Ok(out)
}

/// A reader that notes where each line ends, as the bytes pass.
struct Lines<R> {
    inner: R,
    read: u64,
    newlines: std::rc::Rc<std::cell::RefCell<Newlines>>,
}

/// The line ends read and not yet passed by a record (the csv reader reads a buffer ahead),
/// and how many were passed: the memory of a file's line count is its read-ahead's.
#[derive(Default)]
struct Newlines {
    passed: u64,
    ahead: VecDeque<u64>,
}

impl Newlines {
    /// The line of the byte at `byte` (a `\n` there ends the line before it: a CRLF record
    /// starts on it); records are asked in order, so the line ends up to it are counted and
    /// let go.
    fn line_at(&mut self, byte: u64) -> u64 {
        while self.ahead.front().is_some_and(|&n| n <= byte) {
            self.ahead.pop_front();
            self.passed += 1;
        }
        self.passed + 1
    }
}

impl<R: Read> Read for Lines<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut newlines = self.newlines.borrow_mut();
        for (i, b) in buf.iter().take(n).enumerate() {
            if *b == b'\n' {
                newlines.ahead.push_back(self.read + i as u64);
            }
        }
        self.read += n as u64;
        Ok(n)
    }
}

impl ReadWholesale {
    fn bad(&mut self, line: u64, why: String) {
        self.bad_rows += 1;
        if self.bad_examples.len() < EXAMPLES {
            self.bad_examples.push(format!("line {line}: {why}"));
        }
    }
}

/// What an import did, over every file.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct WholesaleSummary {
    pub files: u64,
    /// Files the list names that were imported before as they are now.
    pub skipped: u64,
    pub write: WholesaleWrite,
    pub other_products: u64,
    pub bad_rows: u64,
    /// Repeated (terminal, product, day) rows with another price: the first kept.
    pub conflicts: u64,
    /// Each file with bad rows, with its first few.
    pub reports: Vec<String>,
}

impl WholesaleSummary {
    /// The line `import-wholesale` ends with.
    pub fn line(&self) -> String {
        let mut line = format!(
            "import-wholesale: {} files ({} unchanged since their import), {} prices new, {} changed, {} unchanged",
            self.files + self.skipped,
            self.skipped,
            self.write.written,
            self.write.replaced,
            self.write.unchanged,
        );
        if self.other_products > 0 {
            line.push_str(&format!(
                ", {} rows of products without a terminal gate price (only ULP, PULP and Diesel have one)",
                self.other_products
            ));
        }
        if self.conflicts > 0 {
            line.push_str(&format!(
                ", {} conflicts (a terminal's price of a day repeated with another; the first kept)",
                self.conflicts
            ));
        }
        if self.bad_rows > 0 {
            line.push_str(&format!(", {} rows could not be read and were left out:", self.bad_rows));
            for report in &self.reports {
                line.push_str("\n  ");
                line.push_str(report);
            }
        }
        line
    }
}

/// The wholesale importer over a store.
pub struct WholesaleImporter {
    store: Arc<dyn WholesaleStore>,
    /// Listed years before this one are left alone.
    first_year: i16,
    pub summary: WholesaleSummary,
}

impl WholesaleImporter {
    pub fn new(store: Arc<dyn WholesaleStore>) -> Self {
        Self { store, first_year: 0, summary: WholesaleSummary::default() }
    }

    /// Import only the listed years from `year` on (the demo's two years).
    pub fn with_first_year(mut self, year: i16) -> Self {
        self.first_year = year;
        self
    }

    /// Read a file through, then store its prices part by part in one transaction: a file
    /// refused (or a store that fails) stores nothing of it.
    pub async fn import(&mut self, name: &str, input: impl Read) -> Result<WholesaleWrite, ImportError> {
        let read = read_file(name, input)?;
        let write = self
            .store
            .put_wholesale_parts(&mut read.parts(PART))
            .await
            .map_err(|source| ImportError::Write { file: name.to_string(), source })?;
        self.summary.files += 1;
        self.summary.write.written += write.written;
        self.summary.write.replaced += write.replaced;
        self.summary.write.unchanged += write.unchanged;
        self.summary.other_products += read.other_products;
        self.summary.bad_rows += read.bad_rows;
        self.summary.conflicts += read.conflicts;
        if read.bad_rows > 0 {
            self.summary.reports.push(format!(
                "{name}: {} rows ({})",
                read.bad_rows,
                read.bad_examples.join("; ")
            ));
        }
        Ok(write)
    }

    /// Every file given, a folder's `.csv` files by name.
    pub async fn import_paths(
        &mut self,
        paths: &[std::path::PathBuf],
        progress: &(dyn Fn(&str, &WholesaleWrite) + Sync),
    ) -> Result<(), ImportError> {
        for path in expand(paths)? {
            let name = path.display().to_string();
            let file = std::fs::File::open(&path)
                .map_err(|e| ImportError::Io { file: name.clone(), reason: e.to_string() })?;
            let write = self.import(&name, std::io::BufReader::new(file)).await?;
            progress(&name, &write);
        }
        Ok(())
    }

    /// The files FuelWatch's list names, oldest first, each downloaded unless it was
    /// imported before with the same `fileDate` and `bytes` (closed years never change).
    pub async fn import_listed(
        &mut self,
        list_url: &url::Url,
        limits: DownloadLimits,
        progress: &(dyn Fn(&str, &WholesaleWrite) + Sync),
    ) -> Result<(), ImportError> {
        let http = http_client(limits)
            .map_err(|e| ImportError::Download { file: list_url.to_string(), reason: e.to_string() })?;
        let mut files: Vec<(i16, ListedFile)> = read_list(&http, list_url, limits)
            .await?
            .into_iter()
            .filter_map(|f| Some((year_of_file(&f.file_name)?, f)))
            .filter(|(year, _)| *year >= self.first_year)
            .collect();
        files.sort_by_key(|(year, _)| *year);
        let done: HashMap<String, WholesaleImport> =
            self.store.wholesale_imports().await?.into_iter().map(|i| (i.file.clone(), i)).collect();
        for (_, listed) in files {
            if !changed_since(&listed, done.get(&listed.file_name)) {
                self.summary.skipped += 1;
                continue;
            }
            let write = self.import_listed_file(&http, list_url, &listed, limits).await?;
            progress(&listed.file_name, &write);
        }
        Ok(())
    }

    /// Download one file of FuelWatch's list, import it whole and record it as imported
    /// (with its `fileDate` and `bytes`); the backfill job and `import_listed` share it.
    pub async fn import_listed_file(
        &mut self,
        http: &reqwest::Client,
        list_url: &url::Url,
        listed: &ListedFile,
        limits: DownloadLimits,
    ) -> Result<WholesaleWrite, ImportError> {
        let fail = |reason: String| ImportError::Download { file: listed.file_name.clone(), reason };
        let url = url::Url::parse(&listed.url)
            .or_else(|_| list_url.join(&listed.url))
            .map_err(|e| fail(e.to_string()))?;
        let Some(file) = download(http, &listed.file_name, url, limits).await? else {
            return Err(fail("listed but not found (404)".into()));
        };
        let bad_before = self.summary.bad_rows;
        let write = self.import(&listed.file_name, std::io::BufReader::new(file)).await?;
        let rows = (write.written + write.replaced + write.unchanged) + (self.summary.bad_rows - bad_before);
        let import = WholesaleImport {
            file: listed.file_name.clone(),
            rows,
            file_date: Some(listed.file_date.clone()),
            bytes: Some(listed.bytes),
        };
        self.store.record_wholesale_import(&import, jiff::Timestamp::now()).await?;
        Ok(write)
    }
}

/// Whether a listed yearly file differs from its recorded import (or was never imported):
/// closed years keep their `fileDate` and `bytes`, the current one grows.
pub fn changed_since(listed: &ListedFile, before: Option<&WholesaleImport>) -> bool {
    before.is_none_or(|b| {
        b.file_date.as_deref() != Some(listed.file_date.as_str()) || b.bytes != Some(listed.bytes)
    })
}

/// Files as given, and each folder's `.csv` files (not its sub-folders), sorted by name.
fn expand(paths: &[std::path::PathBuf]) -> Result<Vec<std::path::PathBuf>, ImportError> {
    let mut out = Vec::new();
    for path in paths {
        let io =
            |e: std::io::Error| ImportError::Io { file: path.display().to_string(), reason: e.to_string() };
        if path.is_dir() {
            let mut inside: Vec<std::path::PathBuf> = std::fs::read_dir(path)
                .map_err(io)?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv")))
                .collect();
            inside.sort();
            out.extend(inside);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    /// What the retail import refuses, the yearly files' reader refuses too: days outside
    /// FuelWatch's span, a row with more fields than the header (an unquoted `150,5`), a price
    /// over the bound as written, a name with a control or direction mark or too long, an
    /// unknown LOCATION; a repeat with another price is a conflict that keeps the first.
    #[test]
    fn hostile_rows_are_refused_and_a_conflict_keeps_the_first() {
        let long = "x".repeat(MAX_TERMINAL_CHARS + 1);
        let text = format!(
            "PUBLISH_DATE,TERMINAL_GATE,LOCATION,PRODUCT,PRODUCT_PRICE\n\
             01/01/0000,BP Kwinana,Perth,ULP,150.00\n\
             01/01/9999,BP Kwinana,Perth,ULP,150.00\n\
             18/12/2002,BP Kwinana,Perth,ULP,150.00\n\
             02/01/2026,BP Kwinana,Perth,ULP,150,5\n\
             03/01/2026,BP Kwinana,Perth,ULP,1000.001\n\
             04/01/2026,BP\u{202e}Kwinana,Perth,ULP,150.00\n\
             05/01/2026,BP\u{1b}Kwinana,Perth,ULP,150.00\n\
             06/01/2026,{long},Perth,ULP,150.00\n\
             07/01/2026,BP Kwinana,Atlantis,ULP,150.00\n\
             08/01/2026,BP Kwinana,Perth,ULP,150.00\n\
             08/01/2026,BP Kwinana,Perth,ULP,499.00\n\
             08/01/2026,BP Kwinana,Perth,ULP,150.00\n\
             19/12/2002,=2+5,Perth,ULP,150.00\n"
        );
        let read = read_file_until("FuelWatchWholesale-2026.csv", text.as_bytes(), date(2026, 12, 8))
            .expect("reads");
        assert_eq!(read.bad_rows, 9, "{:?}", read.bad_examples);
        assert_eq!(read.conflicts, 1, "one repeat with another price; the same price again is no conflict");
        let kept: Vec<(Date, String, i64)> =
            read.prices().into_iter().map(|p| (p.date, p.terminal, p.price)).collect();
        assert_eq!(
            kept,
            [
                (date(2002, 12, 19), "=2+5".to_string(), 15_000),
                (date(2026, 1, 8), "BP Kwinana".to_string(), 15_000)
            ]
        );
        for why in ["outside FuelWatch's", "6 fields where the header has 5", "PRODUCT_PRICE \"1000.001\""] {
            assert!(read.bad_examples.iter().any(|e| e.contains(why)), "{why}: {:?}", read.bad_examples);
        }
        // Each name rule says its own reason (the first five bad rows are described).
        let names = format!(
            "PUBLISH_DATE,TERMINAL_GATE,LOCATION,PRODUCT,PRODUCT_PRICE\n\
             04/01/2026,BP\u{202e}Kwinana,Perth,ULP,150.00\n\
             05/01/2026,BP\u{0}Kwinana,Perth,ULP,150.00\n\
             06/01/2026,{long},Perth,ULP,150.00\n\
             07/01/2026,BP Kwinana,Atlantis,ULP,150.00\n"
        );
        let read = read_file_until("f.csv", names.as_bytes(), date(2026, 12, 8)).expect("reads");
        assert!(read.is_empty());
        for why in ["U+202E", "U+0000", "longer than 1000 characters", "LOCATION \"Atlantis\""] {
            assert!(read.bad_examples.iter().any(|e| e.contains(why)), "{why}: {:?}", read.bad_examples);
        }
    }

    /// A file of made-up terminal names cannot grow the import: rows of a name past the
    /// file's first thousand are refused and counted, the names before kept.
    #[test]
    fn a_file_naming_more_than_a_thousand_terminals_keeps_the_first_thousand() {
        let mut text = String::from("PUBLISH_DATE,TERMINAL_GATE,PRODUCT,PRODUCT_PRICE\n");
        for t in 0..=MAX_TERMINALS {
            text.push_str(&format!("01/02/2026,T{t},ULP,150.00\n"));
        }
        text.push_str("02/02/2026,T0,ULP,151.00\n");
        let read = read_file_until("f.csv", text.as_bytes(), date(2026, 12, 8)).expect("reads");
        assert_eq!(read.len(), MAX_TERMINALS + 1, "the first thousand names, T0 twice");
        assert_eq!(read.bad_rows, 1);
        assert_eq!(
            read.bad_examples,
            [format!("line 1002: a terminal past the file's first {MAX_TERMINALS}")]
        );
    }

    #[test]
    fn columns_are_found_by_name_in_any_order_and_line_end() {
        let text = "TERMINAL_GATE,ADDRESS,PRODUCT_PRICE,PUBLISH_DATE,PRODUCT,\r\n\
                    BP Kwinana,Bell St,173.26,22/04/2026,ULP,\r\n\
                    Ampol Albany,Princess Royal Dr,190.1,2/4/2026,Diesel,\r\n\
                    BP Kwinana,Bell St,200.00,22/04/2026,LPG,\r\n";
        let read = read_file("FuelWatchWholesale-2026.csv", text.as_bytes()).expect("reads");
        assert_eq!(read.len(), 2);
        assert_eq!(read.other_products, 1);
        let prices = read.prices();
        let first = &prices[0];
        assert_eq!((first.product.get(), first.centre, first.date), (1, Centre::Perth, date(2026, 4, 22)));
        assert_eq!((first.terminal.as_str(), first.price), ("BP Kwinana", 17_326));
        assert_eq!(
            (prices[1].product.get(), prices[1].centre, prices[1].date),
            (4, Centre::Albany, date(2026, 4, 2))
        );
        // LF only, no terminal column: one unnamed Perth terminal.
        let plain = "PUBLISH_DATE,PRODUCT,PRODUCT_PRICE\n05/12/2025,PULP,178.4\n";
        let read = read_file("x.csv", plain.as_bytes()).expect("reads");
        let prices = read.prices();
        assert_eq!(prices[0].terminal, UNNAMED_TERMINAL);
        assert_eq!((prices[0].product.get(), prices[0].price), (2, 17_840));
    }

    #[test]
    fn a_file_without_the_columns_is_refused_naming_what_it_has() {
        let text = "DATE,FUEL,PRICE\n22/04/2026,ULP,182.4\n";
        let err = read_file("FuelWatchWholesale-2026.csv", text.as_bytes()).expect_err("refused");
        let said = err.to_string();
        assert!(said.contains("PUBLISH_DATE, PRODUCT, PRODUCT_PRICE"), "{said}");
        assert!(said.contains("DATE, FUEL, PRICE"), "{said}");
    }

    #[test]
    fn rows_that_do_not_parse_are_counted_and_never_stored() {
        let text = "PUBLISH_DATE,PRODUCT,PRODUCT_PRICE\n\
                    31/02/2026,ULP,182.4\n\
                    2026-04-22,ULP,182.4\n\
                    22/04/2026,ULP,abc\n\
                    22/04/2026,ULP,0\n\
                    22/04/2026,Diesel,1200\n\
                    22/04/2026,,182\n\
                    23/04/2026,ULP,181.3\n";
        let read = read_file("f.csv", text.as_bytes()).expect("reads");
        assert_eq!(read.len(), 1);
        assert_eq!(read.bad_rows, 6);
        assert_eq!(read.bad_examples.len(), 5);
        assert!(read.bad_examples[0].starts_with("line 2:"), "{:?}", read.bad_examples);
        assert!(read.bad_examples[2].starts_with("line 4:"), "{:?}", read.bad_examples);
        assert!(read.bad_examples[0].contains("31/02/2026"), "{:?}", read.bad_examples);
        // CRLF counts the same.
        let crlf = "PUBLISH_DATE,PRODUCT,PRODUCT_PRICE\r\n01/01/2026,ULP,149.2\r\n02/01/2026,ULP,1200\r\n";
        let read = read_file("f.csv", crlf.as_bytes()).expect("reads");
        assert_eq!(
            read.bad_examples,
            vec!["line 3: PRODUCT_PRICE \"1200\" is not a price over 10 and at most 1000 c/L"]
        );
    }

    #[test]
    fn file_names_and_centres() {
        assert_eq!(year_of_file("FuelWatchWholesale-2026.csv"), Some(2026));
        assert_eq!(year_of_file("https://x/historical-reports/FuelWatchWholesale-2002.csv"), Some(2002));
        assert_eq!(year_of_file("FuelWatchRetail-01-2026.csv"), None);
        assert_eq!(centre_of("BP Port Hedland", None), Centre::PortHedland);
        assert_eq!(centre_of("Perth terminals mean", None), Centre::Perth);
        assert_eq!(centre_of("Viva Energy", Some("Broome")), Centre::Broome);
    }
}
