//! The simulated statewide station list: the real fixture stations (mostly metro) plus
//! generated regional stations spread over every region code. Built deterministically, so
//! every run and every process sees the same stations and prices.

use std::collections::BTreeMap;

use jiff::civil::Date;
use serde::Deserialize;

use wafuel_domain::codes::{BRANDS, FEATURES, brand_code_for_label, is_region};

/// One station of the simulated source, as text in the feed's own vocabulary.
#[derive(Debug, Clone)]
pub struct SimStation {
    pub trading_name: String,
    pub brand: String,
    pub location: String,
    pub address: String,
    pub phone: String,
    pub latitude: String,
    pub longitude: String,
    pub site_features: String,
    pub restrictions: String,
    pub description: String,
    pub region: u8,
    /// Products sold, ascending.
    pub products: Vec<u8>,
    /// Prices the fixtures recorded verbatim; served unchanged on every date.
    pub fixed_prices: BTreeMap<u8, String>,
    /// Parsed coordinates for distance filtering.
    pub lat: f64,
    pub lon: f64,
    /// Brand code of `brand`, cached for the `Brand` filter.
    pub brand_code: u8,
}

#[derive(Deserialize)]
struct FixtureStation {
    trading_name: String,
    brand: String,
    location: String,
    address: String,
    phone: String,
    latitude: String,
    longitude: String,
    site_features: String,
    restrictions: String,
    description: String,
    region: u8,
    prices: BTreeMap<String, String>,
    fixed_prices: bool,
}

const FIXTURE_JSON: &str = include_str!("data/stations.json");

/// The days a recorded station's own prices hold: the recorded feed's day (29 September
/// 2026) and the days before and after it.
const FIXTURE_DAYS: std::ops::RangeInclusive<Date> =
    jiff::civil::date(2026, 9, 28)..=jiff::civil::date(2026, 9, 30);

/// Number of stations in the simulated state.
pub const TARGET_STATIONS: usize = 940;

/// Regional towns with approximate coordinates, one per non-metro region code (metro regions
/// 25–27 hold the fixture stations). The assignment of towns to codes is ours, not FuelWatch's.
const TOWNS: [(&str, f64, f64); 59] = [
    ("ALBANY", -35.0228, 117.8814),
    ("AUGUSTA", -34.3142, 115.1589),
    ("BEVERLEY", -32.1086, 116.9256),
    ("CARNARVON", -24.8843, 113.6594),
    ("BOYUP BROOK", -33.8331, 116.3878),
    ("BRIDGETOWN", -33.9589, 116.1372),
    ("BROOME", -17.9614, 122.2359),
    ("BUNBURY", -33.3271, 115.6414),
    ("BUSSELTON", -33.6525, 115.3455),
    ("COLLIE", -33.3611, 116.1561),
    ("NARROGIN", -32.9330, 117.1780),
    ("COOLGARDIE", -30.9530, 121.1650),
    ("CORRIGIN", -32.3330, 117.8720),
    ("CUE", -27.4240, 117.8980),
    ("DALWALLINU", -30.2780, 116.6610),
    ("DENMARK", -34.9610, 117.3530),
    ("DERBY", -17.3030, 123.6290),
    ("DONGARA", -29.2520, 114.9330),
    ("DONNYBROOK", -33.5710, 115.8240),
    ("ESPERANCE", -33.8610, 121.8910),
    ("EXMOUTH", -21.9310, 114.1280),
    ("FITZROY CROSSING", -18.1950, 125.5660),
    ("GERALDTON", -28.7790, 114.6140),
    ("GINGIN", -31.3470, 115.9060),
    ("HALLS CREEK", -18.2240, 127.6690),
    ("HARVEY", -33.0800, 115.8950),
    ("JURIEN BAY", -30.3080, 115.0380),
    ("KALBARRI", -27.7110, 114.1650),
    ("KALGOORLIE", -30.7490, 121.4660),
    ("KARRATHA", -20.7360, 116.8460),
    ("KATANNING", -33.6910, 117.5550),
    ("KELLERBERRIN", -31.6330, 117.7200),
    ("KOJONUP", -33.8340, 117.1540),
    ("KULIN", -32.6690, 118.1550),
    ("KUNUNURRA", -15.7730, 128.7390),
    ("LAKE GRACE", -33.1010, 118.4640),
    ("LANCELIN", -31.0220, 115.3320),
    ("LAVERTON", -28.6270, 122.4040),
    ("LEONORA", -28.8830, 121.3300),
    ("MANDURAH", -32.5270, 115.7230),
    ("MANJIMUP", -34.2410, 116.1460),
    ("MARGARET RIVER", -33.9550, 115.0750),
    ("MEEKATHARRA", -26.5930, 118.4950),
    ("MERREDIN", -31.4820, 118.2790),
    ("MOORA", -30.6400, 116.0020),
    ("MOUNT BARKER", -34.6300, 117.6660),
    ("MOUNT MAGNET", -28.0620, 117.8460),
    ("NEWMAN", -23.3590, 119.7310),
    ("NORSEMAN", -32.1970, 121.7790),
    ("NORTHAM", -31.6530, 116.6700),
    ("NORTHAMPTON", -28.3500, 114.6290),
    ("ONSLOW", -21.6370, 115.1130),
    ("PINJARRA", -32.6290, 115.8710),
    ("PORT HEDLAND", -20.3110, 118.5760),
    ("RAVENSTHORPE", -33.5820, 120.0470),
    ("SOUTHERN CROSS", -31.2300, 119.3270),
    ("TOM PRICE", -22.6940, 117.7930),
    ("WAGIN", -33.3080, 117.3430),
    ("YORK", -31.8880, 116.7690),
];

/// Region codes that receive generated stations (all but the metro codes 25–27).
fn regional_codes() -> Vec<u8> {
    (1..=63u8).filter(|c| is_region(*c) && !(25..=27).contains(c)).collect()
}

const STREETS: [&str; 16] = [
    "Main St",
    "Great Eastern Hwy",
    "Albany Hwy",
    "Brand Hwy",
    "Great Northern Hwy",
    "South Western Hwy",
    "Forrest St",
    "Stirling Tce",
    "Railway Pde",
    "Victoria St",
    "Bussell Hwy",
    "Johnston St",
    "Federal St",
    "Fortescue Ave",
    "Throssell St",
    "Hannan St",
];

const DRIVEWAY: [&str; 3] = ["Full Driveway Service", "Conditional Driveway Service", "Unmanned Station"];

const RESTRICTION_TEXTS: [&str; 4] = [
    "Unmanned site (credit card charges may apply);",
    "Membership Required;",
    "Entry Permit Required;",
    "Low Aromatic Fuel;",
];

/// FNV-1a over the parts, finished with a splitmix step: a cheap deterministic hash.
pub fn mix(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

fn pick(h: u64, n: usize) -> usize {
    // n is tiny; the modulo bias is irrelevant for simulated data.
    usize::try_from(h % n as u64).unwrap_or(0)
}

/// The whole simulated state.
#[derive(Debug)]
pub struct Dataset {
    pub stations: Vec<SimStation>,
}

impl Dataset {
    /// Build the data set. The bundled fixture is part of the binary, so a failure here is a
    /// build defect and is reported as such.
    pub fn build() -> Result<Self, serde_json::Error> {
        let fixtures: Vec<FixtureStation> = serde_json::from_str(FIXTURE_JSON)?;
        let mut stations: Vec<SimStation> = fixtures.into_iter().map(from_fixture).collect();
        let generated = TARGET_STATIONS.saturating_sub(stations.len());
        let codes = regional_codes();
        for i in 0..generated {
            let region_index = i % codes.len();
            stations.push(generate(i, codes[region_index], TOWNS[region_index]));
        }
        Ok(Self { stations })
    }
}

fn from_fixture(f: FixtureStation) -> SimStation {
    let mut products: Vec<u8> = f.prices.keys().filter_map(|k| k.parse().ok()).collect();
    products.sort_unstable();
    let fixed_prices = if f.fixed_prices {
        f.prices.iter().filter_map(|(k, v)| Some((k.parse().ok()?, v.clone()))).collect()
    } else {
        BTreeMap::new()
    };
    let lat = f.latitude.parse().unwrap_or(0.0);
    let lon = f.longitude.parse().unwrap_or(0.0);
    SimStation {
        brand_code: brand_code_for_label(&f.brand),
        trading_name: f.trading_name,
        brand: f.brand,
        location: f.location,
        address: f.address,
        phone: f.phone,
        latitude: f.latitude,
        longitude: f.longitude,
        site_features: f.site_features,
        restrictions: f.restrictions,
        description: f.description,
        region: f.region,
        products,
        fixed_prices,
        lat,
        lon,
    }
}

fn generate(index: usize, region: u8, town: (&str, f64, f64)) -> SimStation {
    let seed = index.to_le_bytes();
    let h = |salt: &str| mix(&[&seed, salt.as_bytes()]);
    let (town_name, town_lat, town_lon) = town;

    // The first stations cycle through every mapped brand so each brand filter finds some.
    let brand = if index < BRANDS.len() {
        BRANDS[index].name.to_string()
    } else {
        const COMMON: [&str; 9] =
            ["BP", "Caltex", "Shell", "Puma", "United", "Ampol", "Liberty", "Independent", ""];
        COMMON[pick(h("brand"), COMMON.len())].to_string()
    };
    let street = STREETS[pick(h("street"), STREETS.len())];
    let number = 1 + pick(h("number"), 480);
    let address =
        if pick(h("lot"), 6) == 0 { format!("Lot {number} {street}") } else { format!("{number} {street}") };
    let label = if brand.is_empty() { "Roadhouse" } else { brand.as_str() };
    let trading_name = format!("{label} {}", title_case(town_name)) + &suffix(index);

    let jitter = |salt: &str| (pick(h(salt), 4001) as f64 - 2000.0) / 100_000.0;
    let lat = round8(town_lat + jitter("lat"));
    let lon = round8(town_lon + jitter("lon"));

    let phone = match pick(h("phone"), 7) {
        0 => String::new(),
        1 => format!("04{:02} {:03} {:03}", pick(h("m1"), 100), pick(h("m2"), 1000), pick(h("m3"), 1000)),
        _ => format!("(08) 9{:03} {:04}", pick(h("p1"), 1000), pick(h("p2"), 10000)),
    };

    let (site_features, facilities, hours) = site_features(&h);
    let restrictions = if pick(h("restricted"), 25) == 0 {
        RESTRICTION_TEXTS[pick(h("restriction"), RESTRICTION_TEXTS.len())].to_string()
    } else {
        String::new()
    };
    let location = town_name.to_string();
    let description = describe(&address, &location, &phone, &facilities, &hours);

    let mut products = vec![1, 4];
    for (code, odds) in [(2u8, 2usize), (6, 2), (5, 4), (11, 3)] {
        if pick(h(&format!("sells{code}")), odds) == 0 {
            products.push(code);
        }
    }
    // A few regional E85 pumps, so the product is sold at about a dozen stations in all.
    if index % 181 == 7 {
        products.push(10);
    }
    products.sort_unstable();

    SimStation {
        brand_code: brand_code_for_label(&brand),
        trading_name,
        brand,
        location,
        address,
        phone,
        latitude: format!("{lat:.8}"),
        longitude: format!("{lon:.8}"),
        site_features,
        restrictions,
        description,
        region,
        products,
        fixed_prices: BTreeMap::new(),
        lat,
        lon,
    }
}

fn suffix(index: usize) -> String {
    const PARTS: [&str; 6] = ["", " North", " South", " East", " West", " Central"];
    PARTS[(index / regional_codes().len()) % PARTS.len()].to_string()
}

fn round8(v: f64) -> f64 {
    (v * 1e8).round() / 1e8
}

/// `ELLEN BROOK` → `Ellen Brook`.
pub fn title_case(text: &str) -> String {
    text.split(' ')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(first) => first.to_string() + &c.as_str().to_lowercase(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A `site-features` text in the real grammar: optional driveway phrase, facilities run
/// together alphabetically, then hours. Returns (whole text, facility part, hours part).
fn site_features(h: &dyn Fn(&str) -> u64) -> (String, String, String) {
    let mut labels: Vec<&str> =
        FEATURES.iter().filter(|f| f.code != 21 && pick(h(f.name), 3) == 0).map(|f| f.name).collect();
    labels.sort_unstable();
    let mut facilities = String::new();
    if pick(h("driveway"), 5) == 0 {
        facilities.push_str(DRIVEWAY[pick(h("driveway-kind"), DRIVEWAY.len())]);
        facilities.push_str(", ");
    }
    if !labels.is_empty() {
        facilities.push(' ');
        facilities.push_str(&labels.join(" "));
    }
    let hours = match pick(h("hours"), 6) {
        0 | 1 => "Open 24 hours".to_string(),
        2 => "Open Mon-Fri: 06:00-19:00, Sat: 07:00-17:00, Sun: -".to_string(),
        3 => "Open Mon: 05:30-21:00, Tue: 05:30-21:00, Wed: 05:30-21:00, Thu: 05:30-21:00, Fri: 05:30-21:00, Sat: 06:00-20:00, Sun: 07:00-19:00".to_string(),
        4 => "Open Mon-Sun: 06:00-22:00".to_string(),
        _ => String::new(),
    };
    let text = if hours.is_empty() { format!("{facilities}, ") } else { format!("{facilities}, {hours}") };
    (text, facilities, hours)
}

fn describe(address: &str, location: &str, phone: &str, facilities: &str, hours: &str) -> String {
    let mut d = format!("Address: {address}, {location}");
    if !phone.is_empty() {
        d.push_str(", Phone: ");
        d.push_str(phone);
    }
    if !facilities.trim().is_empty() {
        d.push_str(", Site features: ");
        d.push_str(facilities.trim_end_matches([',', ' ']));
    }
    if !hours.is_empty() {
        d.push_str(", ");
        d.push_str(hours);
    }
    d
}

/// Typical pump price by product, in tenths of a cent.
fn base_tenths(product: u8) -> u64 {
    match product {
        1 => 1899,
        2 => 2029,
        4 => 2049,
        5 => 1099,
        6 => 2119,
        10 => 1749,
        _ => 2149,
    }
}

/// A Wednesday: petrol prices rise on it and every [`CYCLE_DAYS`] days from it.
pub const CYCLE_ANCHOR: Date = Date::constant(2026, 1, 7);
/// Perth's cycle has been fortnightly lately.
pub const CYCLE_DAYS: i32 = 14;

/// One regime of the simulated cycle: from `from`, a rise of `rise` tenths every `period` days
/// from `anchor`, then an even fall back.
pub struct Regime {
    pub from: Date,
    pub anchor: Date,
    pub period: i32,
    pub rise: i64,
}

/// The simulated cycle changes as Perth's has: weekly with Tuesday hikes, the hike moving to
/// Wednesday in July 2025, then fortnightly from January 2026 (so a forecast must notice a new
/// weekday and a new period rather than recite one).
pub const REGIMES: [Regime; 3] = [
    Regime { from: Date::constant(2001, 1, 1), anchor: Date::constant(2024, 1, 2), period: 7, rise: 140 },
    Regime { from: Date::constant(2025, 7, 1), anchor: Date::constant(2025, 7, 2), period: 7, rise: 140 },
    Regime { from: CYCLE_ANCHOR, anchor: CYCLE_ANCHOR, period: CYCLE_DAYS, rise: 300 },
];

/// Petrol follows the cycle; diesel and LPG only drift.
pub fn is_cycling(product: u8) -> bool {
    matches!(product, 1 | 2 | 6 | 10)
}

/// The slow drift every product shares (tenths of a cent), about ±4 c over about 97 days,
/// like crude: the simulated wholesale price leads it by a week.
pub fn drift_tenths(date: Date) -> i64 {
    let days = (date - CYCLE_ANCHOR).get_days();
    (40.0 * (f64::from(days) * std::f64::consts::TAU / 97.0).sin()).round() as i64
}

/// The market's move on a day (tenths of a cent): a slow drift shared by every product
/// (about ±4 c over about 97 days, like crude), a day's noise of up to ±0.6 c, and, for
/// petrol, the cycle of the day's regime: a sharp rise on the rise day, then an even fall. A
/// third of stations follow a day late.
pub fn market_tenths(product: u8, date: Date, station: u64) -> i64 {
    let drift = drift_tenths(date);
    let noise = (mix(&[date.to_string().as_bytes(), b"market"]) % 13) as i64 - 6;
    if !is_cycling(product) {
        return drift + noise;
    }
    let lag = i64::from(station.is_multiple_of(3));
    let seen = date.checked_sub(jiff::Span::new().days(lag)).unwrap_or(date);
    let regime = REGIMES.iter().rev().find(|r| seen >= r.from).unwrap_or(&REGIMES[0]);
    let phase = i64::from((seen - regime.anchor).get_days().rem_euclid(regime.period));
    drift + noise + regime.rise - phase * (regime.rise / i64::from(regime.period - 1))
}

impl SimStation {
    /// The price text for a product on a date: the recorded text for fixed stations, else a
    /// deterministic price written the way the feed writes it (`179` for whole cents).
    pub fn price_text(&self, product: u8, date: Date) -> Option<String> {
        if !self.products.contains(&product) {
            return None;
        }
        // A recorded station's own prices on the days around its recording (the reference
        // answers are kept byte for byte there); on any other day it is priced as the rest.
        if let Some(fixed) = self.fixed_prices.get(&product).filter(|_| FIXTURE_DAYS.contains(&date)) {
            return Some(fixed.clone());
        }
        let tenths = self.ordered_tenths(product, date);
        let (whole, tenth) = (tenths / 10, tenths % 10);
        Some(if tenth == 0 { whole.to_string() } else { format!("{whole}.{tenth}") })
    }

    /// A product's price in tenths with the grades in order, as at a real pump (FuelWatch's
    /// July 2026 files: PULP never at or below ULP at a station selling both, 98 in 12 of
    /// 22,403 station-days): each premium grade at least 5 c/L over the grade below it that
    /// the station sells, the gap varying by station and day.
    fn ordered_tenths(&self, product: u8, date: Date) -> u64 {
        let own = self.generated_tenths(product, date);
        let below = match product {
            6 if self.products.contains(&2) => 2,
            2 | 6 if self.products.contains(&1) => 1,
            _ => return own,
        };
        let gap = mix(&[&self.seed().to_le_bytes(), b"gap", &[product], date.to_string().as_bytes()]) % 40;
        own.max(self.ordered_tenths(below, date) + 50 + gap)
    }

    /// The station's seed: its name and address.
    fn seed(&self) -> u64 {
        mix(&[self.trading_name.as_bytes(), self.address.as_bytes()])
    }

    /// A product's price on a day in tenths of a cent, before the grades are put in order.
    fn generated_tenths(&self, product: u8, date: Date) -> u64 {
        let day = date.to_string();
        let station = self.seed();
        let daily = mix(&[&station.to_le_bytes(), &[product], day.as_bytes()]);
        // Regional sites (far from Perth) are dearer, as they really are.
        // Up to 40 cents more, growing with the distance (in degrees) from Perth.
        let remote = (((self.lat + 31.95).abs() + (self.lon - 115.86).abs()) * 2.5).min(40.0);
        let market = market_tenths(product, date, station);
        let noise = if is_cycling(product) { daily % 30 } else { daily % 20 };
        (base_tenths(product) + station % 180 + noise + (remote * 10.0) as u64).saturating_add_signed(market)
    }

    /// Distance in km to a point.
    pub fn distance_km(&self, lat: f64, lon: f64) -> f64 {
        wafuel_domain::geo::distance_m((self.lat, self.lon), (lat, lon)) / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    /// Every number in the simulated state and the recorded feeds: the domain's direct
    /// reading of the usual Australian shapes agrees with libphonenumber on each.
    #[test]
    fn phones_are_read_directly_and_agree_with_libphonenumber() {
        use wafuel_domain::phone::testing::agree;
        let dataset = Dataset::build().expect("bundled data set");
        let (mut seen, mut direct) = (0, 0);
        for station in &dataset.stations {
            direct += usize::from(agree(&station.phone));
            seen += 1;
        }
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
        let from_dataset = seen;
        for entry in std::fs::read_dir(&fixtures).expect("tests/fixtures").flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            for phone in text.split("<phone>").skip(1).filter_map(|rest| rest.split("</phone>").next()) {
                direct += usize::from(agree(phone));
                seen += 1;
            }
        }
        assert!(
            from_dataset > 900 && seen > from_dataset + 300,
            "numbers checked: {from_dataset}, then {seen}"
        );
        assert!(direct * 10 > seen * 9, "most numbers are read directly: {direct} of {seen}");
    }

    #[test]
    fn about_940_stations_over_every_region() {
        let data = Dataset::build().expect("dataset");
        assert_eq!(data.stations.len(), TARGET_STATIONS);
        let mut regions: Vec<u8> = data.stations.iter().map(|s| s.region).collect();
        regions.sort_unstable();
        regions.dedup();
        assert_eq!(regions.len(), 62);
        let e85 = data.stations.iter().filter(|s| s.products.contains(&10)).count();
        assert!((10..=14).contains(&e85), "{e85} E85 stations");
        for b in BRANDS {
            assert!(data.stations.iter().any(|s| s.brand_code == b.code), "brand {}", b.name);
        }
    }

    #[test]
    fn prices_are_deterministic_and_plausible() {
        let data = Dataset::build().expect("dataset");
        let d = date(2026, 9, 29);
        let mut whole = 0;
        for s in &data.stations {
            for &p in &s.products {
                let a = s.price_text(p, d).expect("sold");
                assert_eq!(Some(a.clone()), s.price_text(p, d));
                let v: f64 = a.parse().expect("number");
                assert!(v > 50.0 && v < 400.0, "{a}");
                if !a.contains('.') {
                    whole += 1;
                }
            }
            assert!(s.price_text(3, d).is_none());
        }
        assert!(whole > 0, "some whole-cent prices");
        // Off the recorded days, premium grades sit above unleaded at every station selling
        // them, and the recorded stations are priced as the rest.
        for day in [date(2026, 8, 1), date(2026, 12, 2), date(2027, 3, 15)] {
            for s in &data.stations {
                let price = |p: u8| s.price_text(p, day).and_then(|t| t.parse::<f64>().ok());
                if let (Some(ulp), Some(pulp)) = (price(1), price(2)) {
                    assert!(pulp >= ulp + 5.0, "{} on {day}: PULP {pulp} over ULP {ulp}", s.trading_name);
                }
                if let (Some(ulp), Some(ron98)) = (price(1), price(6)) {
                    assert!(ron98 >= ulp + 5.0, "{} on {day}: 98 {ron98} over ULP {ulp}", s.trading_name);
                }
                if let (Some(pulp), Some(ron98)) = (price(2), price(6)) {
                    assert!(ron98 >= pulp + 5.0, "{} on {day}: 98 {ron98} over PULP {pulp}", s.trading_name);
                }
            }
            let roadhouse =
                data.stations.iter().find(|s| s.trading_name == "Billabong Roadhouse").expect("recorded");
            assert_ne!(roadhouse.price_text(1, day).as_deref(), Some("195.0"), "priced as the rest on {day}");
        }
        let costco = &data.stations[0];
        assert_eq!(costco.price_text(1, d).as_deref(), Some("218.7"));
    }
}
