//! FuelWatch's monthly archives (`FuelWatchRetail-MM-YYYY.csv`, every retail price since
//! January 2001): reading a file row by row into prices of our products, brands and regions,
//! and naming the station a row belongs to (docs/api.md "History back to 2001: FuelWatch's monthly archives").
//!
//! Reading is pure and streamed: a file of any size costs one row in memory. Columns are
//! found by header name, in any case and order; a header without a required column refuses
//! the file whole, before any row is read.

pub mod backfill;
pub mod download;
mod error;
pub mod import;
pub mod list;
mod place;
pub mod wholesale;

pub use error::ImportError;

// The domain and the layers below under the names the service uses for them.

use std::collections::BTreeMap;
use std::io::Read;

use jiff::civil::Date;

use wafuel_domain::codes::ProductCode;
use wafuel_domain::codes::{UNMAPPED_BRAND, brand_code_for_label};
use wafuel_domain::key::{StationId, fold_text, sha256_hex};

/// The archive's own location (Creative Commons Attribution 4.0, "FuelWatch
/// (www.fuelwatch.wa.gov.au)").
pub const DEFAULT_ARCHIVE_URL: &str =
    "https://warsydprdstafuelwatch.blob.core.windows.net/historical-reports/";

/// A calendar month as (year, month).
pub type Month = (i16, i8);

/// The first month FuelWatch published.
pub const FIRST_MONTH: (i16, i8) = (2001, 1);

/// The file name of a month's archive.
pub fn month_file(year: i16, month: i8) -> String {
    format!("FuelWatchRetail-{month:02}-{year:04}.csv")
}

/// The month a file name names, when it follows the archive's pattern.
pub fn month_of_file(name: &str) -> Option<(i16, i8)> {
    let base = name.rsplit('/').next()?;
    let rest = base.strip_prefix("FuelWatchRetail-")?;
    let rest = rest.strip_suffix(".csv.gz").or_else(|| rest.strip_suffix(".csv"))?;
    let (month, year) = rest.split_once('-')?;
    let (month, year): (i8, i16) = (month.parse().ok()?, year.parse().ok()?);
    ((1..=12).contains(&month) && year >= FIRST_MONTH.0).then_some((year, month))
}

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("{file}: the header has no {column} column")]
    MissingColumn { file: String, column: &'static str },
    /// A wholesale file without its required columns: which, and what it has instead.
    #[error("{file}: the header lacks {} (it has {})", missing.join(", "), has.join(", "))]
    MissingColumns { file: String, missing: Vec<&'static str>, has: Vec<String> },
    #[error("{file}: {source}")]
    Csv {
        file: String,
        #[source]
        source: csv::Error,
    },
}

/// The columns read, by their header names (matched without regard to case or surrounding
/// spaces).
const DATE: &str = "PUBLISH_DATE";
const TRADING_NAME: &str = "TRADING_NAME";
const BRAND: &str = "BRAND_DESCRIPTION";
const PRODUCT: &str = "PRODUCT_DESCRIPTION";
const PRICE: &str = "PRODUCT_PRICE";
const ADDRESS: &str = "ADDRESS";
const LOCATION: &str = "LOCATION";
const POSTCODE: &str = "POSTCODE";
const AREA: &str = "AREA_DESCRIPTION";

/// One archive price, mapped to our codes.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchivePrice {
    /// The Perth day the price applies to.
    pub date: Date,
    pub product: ProductCode,
    /// Tenths of a cent per litre.
    pub price: i64,
    pub station: ArchiveSite,
}

/// The station a row names: no coordinates, no phone.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveSite {
    pub trading_name: String,
    pub brand: u8,
    /// The archive's brand text, kept when it maps to no code.
    pub brand_text: Option<String>,
    pub address: String,
    pub suburb: String,
    pub postcode: Option<String>,
    pub region: Option<u8>,
}

/// Where a station stands, as the archive's texts are compared: the address folded by
/// [`fold_address`] and the suburb by [`fold_text`].
pub type SiteKey = (String, String);

impl ArchiveSite {
    /// The place this row names: FuelWatch re-spells an address now and then (`177 OConnor
    /// Rd` → `177 O'Connor Rd`, `21 Duncan Road` → `21 Duncan Rd`), so what does not change
    /// the place is folded away.
    pub fn site_key(&self) -> SiteKey {
        (fold_address(&self.address), fold_text(&self.suburb))
    }

    /// The trading name as names are compared: trimmed, spaces collapsed, lower case.
    pub fn name_key(&self) -> String {
        fold_text(&self.trading_name)
    }

    /// The id of a station only the archive knows that is alone at its address:
    /// SHA-256 of `archive|<address>|<suburb>`, both as the station key normalises them
    /// (trimmed, spaces collapsed, lower case; not folded further, so ids stored before
    /// address folding keep theirs).
    pub fn archive_id(&self) -> StationId {
        let (address, suburb) = (fold_text(&self.address), fold_text(&self.suburb));
        StationId::from_digest(sha256_hex(format!("archive|{address}|{suburb}").as_bytes()))
    }

    /// The id of an archive station that shares its address with another on the same day:
    /// SHA-256 of `archive|<address>|<suburb>|<trading name>`, each normalised as above.
    pub fn colocated_id(&self) -> StationId {
        let (address, suburb) = (fold_text(&self.address), fold_text(&self.suburb));
        let name = self.name_key();
        StationId::from_digest(sha256_hex(format!("archive|{address}|{suburb}|{name}").as_bytes()))
    }
}

/// Street-type words as FuelWatch writes them, long and short, each to one form.
const STREET_TYPES: [(&str, &str); 42] = [
    ("road", "rd"),
    ("street", "st"),
    ("str", "st"),
    ("highway", "hwy"),
    ("hway", "hwy"),
    ("avenue", "ave"),
    ("av", "ave"),
    ("drive", "dr"),
    ("drv", "dr"),
    ("parade", "pde"),
    ("place", "pl"),
    ("court", "ct"),
    ("crt", "ct"),
    ("crescent", "cres"),
    ("cresc", "cres"),
    ("cr", "cres"),
    ("terrace", "tce"),
    ("terr", "tce"),
    ("boulevard", "blvd"),
    ("bvd", "blvd"),
    ("boulevarde", "blvd"),
    ("lane", "ln"),
    ("close", "cl"),
    ("circuit", "cct"),
    ("square", "sq"),
    ("esplanade", "esp"),
    ("entrance", "ent"),
    ("grove", "gr"),
    ("gve", "gr"),
    ("promenade", "prom"),
    ("corner", "cnr"),
    ("gardens", "gdns"),
    ("loop", "lp"),
    ("retreat", "rtt"),
    ("freeway", "fwy"),
    ("parkway", "pkwy"),
    ("circle", "cir"),
    ("junction", "jnc"),
    ("north", "nth"),
    ("south", "sth"),
    ("mount", "mt"),
    ("point", "pt"),
];

/// An address as places are compared: lower case; apostrophes dropped (`O'Connor` is
/// `OConnor`); every other character that is not a letter or digit a space; spaces collapsed;
/// each street-type word in one form (`Road` is `Rd`, `Crt` is `Ct`, `Place` is `Pl`, …).
pub fn fold_address(text: &str) -> String {
    let mut spaced = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\'' | '\u{2019}' | '\u{2018}' | '`' => {}
            c if c.is_alphanumeric() => spaced.extend(c.to_lowercase()),
            _ => spaced.push(' '),
        }
    }
    let words = spaced
        .split_whitespace()
        .map(|word| STREET_TYPES.iter().find(|(long, _)| *long == word).map_or(word, |(_, short)| short));
    words.collect::<Vec<_>>().join(" ")
}

/// What reading files found, beyond the prices.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReadTally {
    pub rows: u64,
    /// Rows not imported, by reason (e.g. `not a fuel served here "KEROSENE"`: FuelWatch's
    /// archives hold kerosene, which the live feed and this API do not carry; `bad date`).
    pub skipped: BTreeMap<String, u64>,
    /// Rows kept whose area names no region we know.
    pub unknown_area: u64,
}

impl ReadTally {
    fn skip(&mut self, reason: String) {
        *self.skipped.entry(reason).or_default() += 1;
    }

    pub fn add(&mut self, other: &ReadTally) {
        self.rows += other.rows;
        self.unknown_area += other.unknown_area;
        for (reason, n) in &other.skipped {
            *self.skipped.entry(reason.clone()).or_default() += n;
        }
    }
}

/// The product code of an archive product text (older years name fewer products).
pub fn product_for_text(text: &str) -> Option<ProductCode> {
    let folded = fold_text(text);
    let code = match folded.as_str() {
        "ulp" | "unleaded petrol" | "unleaded" => 1,
        "pulp" | "premium unleaded" | "premium unleaded 95" => 2,
        "diesel" => 4,
        "lpg" => 5,
        "98 ron" | "premium unleaded 98" => 6,
        "e85" => 10,
        "brand diesel" => 11,
        _ => return None,
    };
    ProductCode::parse(code)
}

/// An area's text as a key: lower case, no spaces at all, so `Augusta/Margaret River` and
/// `augusta / margaret  river` meet.
fn area_key(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).flat_map(char::to_lowercase).collect()
}

/// Region names and the archive's short forms, as keys → code.
static REGIONS_BY_AREA: std::sync::LazyLock<std::collections::HashMap<String, u8>> =
    std::sync::LazyLock::new(|| {
        let names = wafuel_domain::codes::REGIONS.iter().map(|r| (area_key(r.name), r.code));
        names
            .chain(wafuel_domain::codes::AREA_SHORT_FORMS.iter().map(|(text, code)| (area_key(text), *code)))
            .collect()
    });

/// The region code of an area text (a region's full name or the archive's short form), without
/// regard to case or spacing. `None` for an area FuelWatch gives no code (`Southern Cross`, in
/// the files of 2003–2006) or a text it never used: the row is kept, its region unknown.
pub fn region_for_area(text: &str) -> Option<u8> {
    REGIONS_BY_AREA.get(&area_key(text)).copied()
}

/// `DD/MM/YYYY` (the archive's date form; a single-digit day or month is accepted).
fn parse_date(text: &str) -> Option<Date> {
    let mut parts = text.trim().splitn(3, '/');
    let day: i8 = parts.next()?.trim().parse().ok()?;
    let month: i8 = parts.next()?.trim().parse().ok()?;
    let year: i16 = parts.next()?.trim().parse().ok()?;
    Date::new(year, month, day).ok()
}

/// Cents per litre with decimals (`183.90`) as tenths of a cent; a positive price only.
fn parse_price(text: &str) -> Option<i64> {
    let text = text.trim();
    if !wafuel_domain::normalize::is_plain_decimal(text, false) {
        return None;
    }
    let cents: f64 = text.parse().ok()?;
    (cents > 0.0 && cents < 10_000.0).then(|| wafuel_domain::station::tenths(cents))
}

/// Where each column read sits in a file.
struct Columns {
    date: usize,
    trading: usize,
    brand: usize,
    product: usize,
    price: usize,
    address: usize,
    location: usize,
    postcode: Option<usize>,
    area: Option<usize>,
}

/// The columns of a header (names matched without regard to case, spaces or a byte-order
/// mark), or the first required one it lacks.
fn columns(name: &str, header: &csv::StringRecord) -> Result<Columns, ArchiveError> {
    let find = |column: &str| {
        header.iter().position(|h| h.trim_start_matches('\u{feff}').trim().eq_ignore_ascii_case(column))
    };
    let required = |column: &'static str| {
        find(column).ok_or(ArchiveError::MissingColumn { file: name.to_string(), column })
    };
    Ok(Columns {
        date: required(DATE)?,
        trading: required(TRADING_NAME)?,
        brand: required(BRAND)?,
        product: required(PRODUCT)?,
        price: required(PRICE)?,
        address: required(ADDRESS)?,
        location: required(LOCATION)?,
        postcode: find(POSTCODE),
        area: find(AREA),
    })
}

fn csv_reader(input: impl Read) -> csv::Reader<impl Read> {
    csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(input)
}

/// Check a file's header alone: the required columns are there.
pub fn check_header(name: &str, input: impl Read) -> Result<(), ArchiveError> {
    let mut reader = csv_reader(input);
    let header = reader.headers().map_err(|source| ArchiveError::Csv { file: name.to_string(), source })?;
    columns(name, header).map(drop)
}

/// Read one archive file (already decompressed), handing each price to `each` in file order.
/// `name` names the file in errors. The header is checked before any row is read.
pub fn read_prices(
    name: &str,
    input: impl Read,
    mut each: impl FnMut(ArchivePrice),
) -> Result<ReadTally, ArchiveError> {
    let csv_error = |source| ArchiveError::Csv { file: name.to_string(), source };
    let mut reader = csv_reader(input);
    let Columns { date, trading, brand, product, price, address, location, postcode, area } =
        columns(name, reader.headers().map_err(csv_error)?)?;
    let mut tally = ReadTally::default();
    let mut record = csv::StringRecord::new();
    while reader.read_record(&mut record).map_err(csv_error)? {
        let field = |i: usize| record.get(i).unwrap_or("").trim();
        // Blank lines at the end of an export read as one empty field.
        if record.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        tally.rows += 1;
        let Some(day) = parse_date(field(date)) else {
            tally.skip("bad date".into());
            continue;
        };
        let Some(code) = product_for_text(field(product)) else {
            tally.skip(format!("not a fuel served here {:?}", field(product).to_uppercase()));
            continue;
        };
        let Some(tenths) = parse_price(field(price)) else {
            tally.skip("bad price".into());
            continue;
        };
        if field(address).is_empty() || field(location).is_empty() {
            tally.skip("no address".into());
            continue;
        }
        let brand_text = field(brand);
        let brand_code = brand_code_for_label(brand_text);
        let region = area.and_then(|i| region_for_area(field(i)));
        if region.is_none() {
            tally.unknown_area += 1;
        }
        each(ArchivePrice {
            date: day,
            product: code,
            price: tenths,
            station: ArchiveSite {
                trading_name: field(trading).to_string(),
                brand: brand_code,
                brand_text: (brand_code == UNMAPPED_BRAND).then(|| brand_text.to_string()),
                address: field(address).to_string(),
                suburb: field(location).to_string(),
                postcode: postcode.map(|i| field(i).to_string()).filter(|p| !p.is_empty()),
                region,
            },
        });
    }
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    const HEADER: &str = "PUBLISH_DATE,TRADING_NAME,BRAND_DESCRIPTION,PRODUCT_DESCRIPTION,PRODUCT_PRICE,ADDRESS,LOCATION,POSTCODE,AREA_DESCRIPTION,REGION_DESCRIPTION\r\n";

    fn read(text: &str) -> (Vec<ArchivePrice>, ReadTally) {
        let mut out = Vec::new();
        let tally = read_prices("test.csv", text.as_bytes(), |p| out.push(p)).expect("read");
        (out, tally)
    }

    #[test]
    fn real_export_quirks_are_read() {
        let text = format!(
            "\u{feff}{HEADER}\
             01/03/2024,Caltex Woolworths Bentley,Caltex Woolworths,ULP,183.90,\"Cnr Albany Hwy, Hillview Tce\",BENTLEY,6102,South of River,Metro\r\n\
             01/03/2024,BP Southern Cross ,BP,Diesel,215.50,  12 Great Eastern Hwy  ,SOUTHERN CROSS,6426,Southern Cross,Wheatbelt\r\n\
             1/3/2024,Some Place,Quest,KEROSENE,150.00,1 Main St,PERTH,6000,North of River,Metro\r\n\
             32/03/2024,Some Place,BP,ULP,150.00,1 Main St,PERTH,6000,North of River,Metro\r\n\
             \r\n\r\n"
        );
        let (prices, tally) = read(&text);
        assert_eq!(prices.len(), 2);
        assert_eq!(prices[0].date, date(2024, 3, 1));
        assert_eq!((prices[0].product.get(), prices[0].price), (1, 1839));
        assert_eq!(prices[0].station.address, "Cnr Albany Hwy, Hillview Tce", "a quoted comma stays in");
        assert_eq!(prices[0].station.brand, UNMAPPED_BRAND);
        assert_eq!(prices[0].station.brand_text.as_deref(), Some("Caltex Woolworths"));
        assert_eq!(prices[0].station.region, Some(26));
        assert_eq!(prices[1].station.address, "12 Great Eastern Hwy", "trailing spaces trimmed");
        assert_eq!((prices[1].product.get(), prices[1].price, prices[1].station.brand), (4, 2155, 5));
        assert_eq!(prices[1].station.region, None, "Southern Cross has no region code: kept, counted");
        assert_eq!(tally.rows, 4, "blank trailing lines are not rows");
        assert_eq!(tally.unknown_area, 1);
        assert_eq!(tally.skipped.get("not a fuel served here \"KEROSENE\""), Some(&1));
        assert_eq!(tally.skipped.get("bad date"), Some(&1));
    }

    #[test]
    fn columns_are_found_by_name_in_any_case_and_order() {
        let text = "product_price,Publish_Date,LOCATION,ADDRESS,PRODUCT_DESCRIPTION,BRAND_DESCRIPTION,TRADING_NAME\n\
                    199.9,05/01/2001,ALBANY,1 York St,PULP,Shell,Shell Albany\n";
        let (prices, _) = read(text);
        assert_eq!(prices.len(), 1);
        assert_eq!((prices[0].date, prices[0].product.get(), prices[0].price), (date(2001, 1, 5), 2, 1999));
        assert_eq!((prices[0].station.brand, prices[0].station.postcode.as_deref()), (14, None));
    }

    #[test]
    fn a_missing_column_refuses_the_file_before_any_row() {
        let text = "PUBLISH_DATE,TRADING_NAME,BRAND_DESCRIPTION,PRODUCT_DESCRIPTION,ADDRESS,LOCATION\n01/01/2001,a,b,ULP,c,d\n";
        let mut seen = 0;
        let err =
            read_prices("FuelWatchRetail-01-2001.csv", text.as_bytes(), |_| seen += 1).expect_err("refused");
        assert_eq!(seen, 0);
        assert_eq!(err.to_string(), "FuelWatchRetail-01-2001.csv: the header has no PRODUCT_PRICE column");
    }

    #[test]
    fn addresses_fold_what_does_not_change_the_place() {
        // FuelWatch's own re-spellings of 2026.
        for (a, b) in [
            ("177 OConnor Rd", "177 O'Connor Rd"),
            ("21 Duncan Road", "21 Duncan Rd"),
            ("17 Edwards Place", "17 Edwards Pl"),
            ("7 Bartley Crt", "7 Bartley Ct"),
            ("801-803 South Western Highway", "801-803 SOUTH WESTERN HWY"),
            ("Cnr  Great Eastern Hwy & Bunning Rd", "cnr great eastern highway / bunning road"),
            ("470 Whitfords Avenue", "470 Whitfords Ave"),
        ] {
            assert_eq!(fold_address(a), fold_address(b), "{a} / {b}");
        }
        assert_eq!(fold_address("177 O\u{2019}Connor Road"), "177 oconnor rd");
        // A number or a street that changes is another place.
        for (a, b) in [
            ("1256 Armadale Rd", "1265 Armadale Rd"),
            ("9522 Muirs Hwy", "9522 Muir Hwy"),
            ("28 Stirling Tce", "28-30 Stirling Tce"),
        ] {
            assert_ne!(fold_address(a), fold_address(b), "{a} / {b}");
        }
    }

    #[test]
    fn archive_ids_and_month_names() {
        let site = |address: &str, suburb: &str| ArchiveSite {
            trading_name: String::new(),
            brand: 5,
            brand_text: None,
            address: address.into(),
            suburb: suburb.into(),
            postcode: None,
            region: None,
        };
        let id = site(" 1  Main St ", "PERTH").archive_id();
        assert_eq!(id, site("1 main st", "Perth").archive_id(), "normalised as the station key");
        assert_eq!(id.as_str(), sha256_hex(b"archive|1 main st|perth"));
        assert_eq!(month_file(2001, 1), "FuelWatchRetail-01-2001.csv");
        assert_eq!(month_of_file("x/FuelWatchRetail-11-2024.csv.gz"), Some((2024, 11)));
        assert_eq!(month_of_file("FuelWatchRetail-13-2024.csv"), None);
        assert_eq!(region_for_area("north OF  river"), Some(25));
        assert_eq!(region_for_area("East/Hills"), Some(27));
        assert_eq!(region_for_area("Gingin"), None, "no FuelWatch region");
        assert_eq!(product_for_text("98 RON").map(ProductCode::get), Some(6));
        assert_eq!(product_for_text("Brand diesel").map(ProductCode::get), Some(11));
    }

    #[test]
    fn areas_by_name_and_short_form() {
        for (text, code) in
            [("Sth Hedland", Some(14)), ("B-Town/G-Bushes", Some(30)), ("Southern Cross", None)]
        {
            assert_eq!(region_for_area(text), code, "{text}");
            assert_eq!(region_for_area(&text.to_uppercase().replace('/', " / ")), code, "{text}, respaced");
        }
        // FuelWatch's own region names too, and the archive writes each code's area back.
        for r in wafuel_domain::codes::REGIONS {
            assert_eq!(region_for_area(r.name), Some(r.code), "{}", r.name);
            let area = wafuel_domain::codes::area_text(r.code).expect("every region has an area text");
            assert_eq!(region_for_area(area), Some(r.code), "{area}");
        }
        assert_eq!(region_for_area("Metro : North of River"), Some(25));
        assert_eq!(region_for_area("augusta/margaret river"), Some(28));
    }

    #[test]
    fn both_file_forms_are_read() {
        // Up to September 2025: a trailing comma on every line, the header's too, and LF.
        let old = "PUBLISH_DATE,TRADING_NAME,BRAND_DESCRIPTION,PRODUCT_DESCRIPTION,PRODUCT_PRICE,ADDRESS,LOCATION,POSTCODE,AREA_DESCRIPTION,REGION_DESCRIPTION,\n\
             01/02/2021,7-Eleven Ascot,7-Eleven,Brand Diesel,123.9,194 Great Eastern Hwy,ASCOT,6104,South of River,Metro,\n";
        // From October 2025: ten fields and CRLF.
        let new = "PUBLISH_DATE,TRADING_NAME,BRAND_DESCRIPTION,PRODUCT_DESCRIPTION,PRODUCT_PRICE,ADDRESS,LOCATION,POSTCODE,AREA_DESCRIPTION,REGION_DESCRIPTION\r\n\
             01/01/2026,53 Mile Roadhouse,United,ULP,179.9,31 South Western Hwy,PINJARRA,6208,Murray,Peel\r\n\
             01/01/2026,7-Eleven Alkimos,7-Eleven,PULP,184.9,10 Carlsbad Prom,ALKIMOS,6038,North of River,Metro\r\n";
        let (prices, tally) = read(old);
        assert_eq!(tally.rows, 1);
        assert_eq!((prices[0].date, prices[0].product.get(), prices[0].price), (date(2021, 2, 1), 11, 1239));
        assert_eq!(
            (prices[0].station.region, prices[0].station.postcode.as_deref()),
            (Some(26), Some("6104"))
        );
        let (prices, tally) = read(new);
        assert_eq!((tally.rows, tally.unknown_area), (2, 0));
        assert_eq!((prices[0].product.get(), prices[0].price, prices[0].station.region), (1, 1799, Some(23)));
        assert_eq!((prices[1].product.get(), prices[1].price, prices[1].station.region), (2, 1849, Some(25)));
    }
}
