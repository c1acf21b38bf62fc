//! The code tables (docs/api.md "Codes"): products, brands, features, restrictions and
//! regions. This module is the single source for parsing, rendering, validation and the
//! simulated source; nothing else spells out a code or a name.

/// A code one of the tables below has (`K` names the table: [`Products`], [`Brands`],
/// [`Regions`]): parsed once where a code comes in (a query, a flag, a feed request, an
/// archive row), then carried as this type by the catalog, the store and the renderers, so
/// no later layer asks again whether a `u8` is a product, a brand or a region. Stored and
/// served exactly as its number.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(transparent, bound = "")]
pub struct Code<K> {
    code: u8,
    #[serde(skip)]
    table: std::marker::PhantomData<K>,
}

/// A code table: which numbers it has.
pub trait Table {
    fn has(code: u8) -> bool;
}

/// The product table ([`PRODUCTS`]).
#[derive(Debug)]
pub enum Products {}
/// The brand table ([`BRANDS`]).
#[derive(Debug)]
pub enum Brands {}
/// The region table ([`REGIONS`]).
#[derive(Debug)]
pub enum Regions {}

impl Table for Products {
    fn has(code: u8) -> bool {
        product(code).is_some()
    }
}

impl Table for Brands {
    fn has(code: u8) -> bool {
        brand(code).is_some()
    }
}

impl Table for Regions {
    fn has(code: u8) -> bool {
        is_region(code)
    }
}

pub type ProductCode = Code<Products>;
pub type BrandCode = Code<Brands>;
pub type RegionCode = Code<Regions>;

impl<K: Table> Code<K> {
    /// The code, if its table has it.
    pub fn parse(code: u8) -> Option<Self> {
        K::has(code).then_some(Self::known(code))
    }
}

impl<K> Code<K> {
    /// A code the table is known to have (the tables' own rows).
    const fn known(code: u8) -> Self {
        Self { code, table: std::marker::PhantomData }
    }

    pub const fn get(self) -> u8 {
        self.code
    }
}

impl ProductCode {
    /// Unleaded Petrol: `/legacy`'s product when the query names none.
    pub const UNLEADED: ProductCode = Code::known(1);
}

// By hand, not derived: a derive would ask the marker type for what only the number needs.
impl<K> Clone for Code<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for Code<K> {}

impl<K> PartialEq for Code<K> {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
    }
}

impl<K> Eq for Code<K> {}

impl<K> PartialOrd for Code<K> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<K> Ord for Code<K> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.code.cmp(&other.code)
    }
}

impl<K> std::hash::Hash for Code<K> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.code.hash(state);
    }
}

impl<K> std::fmt::Debug for Code<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.code.fmt(f)
    }
}

impl<K> std::fmt::Display for Code<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.code.fmt(f)
    }
}

/// A code equals its number (`quote.product == 1`).
impl<K> PartialEq<u8> for Code<K> {
    fn eq(&self, other: &u8) -> bool {
        self.code == *other
    }
}

impl<K> From<Code<K>> for u8 {
    fn from(code: Code<K>) -> u8 {
        code.code
    }
}

impl<K> From<Code<K>> for i64 {
    fn from(code: Code<K>) -> i64 {
        i64::from(code.code)
    }
}

/// A fuel product sold at the pump.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Product {
    pub code: ProductCode,
    pub name: &'static str,
    pub unit: &'static str,
}

/// Every product, in code order. There is no product 3.
pub const PRODUCTS: [Product; 7] = [
    Product { code: Code::known(1), name: "Unleaded Petrol", unit: "Australian cents per litre" },
    Product { code: Code::known(2), name: "Premium Unleaded 95", unit: "cents per litre" },
    Product { code: Code::known(4), name: "Diesel", unit: "cents per litre" },
    Product { code: Code::known(5), name: "LPG", unit: "cents per litre" },
    Product { code: Code::known(6), name: "Premium Unleaded 98", unit: "cents per litre" },
    Product { code: Code::known(10), name: "E85", unit: "cents per litre" },
    Product { code: Code::known(11), name: "Brand Diesel", unit: "cents per litre" },
];

/// The product with this code, if it exists.
pub fn product(code: u8) -> Option<&'static Product> {
    PRODUCTS.iter().find(|p| p.code.code == code)
}

/// Every product code, ascending.
pub fn product_codes() -> impl Iterator<Item = ProductCode> {
    PRODUCTS.iter().map(|p| p.code)
}

/// A brand the source names and we can give a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Brand {
    pub code: u8,
    pub name: &'static str,
}

/// Code of the response-only "unmapped brand".
pub const UNMAPPED_BRAND: u8 = 0;
/// Code given to an empty `<brand>`.
pub const INDEPENDENT_BRAND: u8 = 15;

/// Every mapped brand, in code order.
pub const BRANDS: [Brand; 38] = [
    Brand { code: 2, name: "Ampol" },
    Brand { code: 3, name: "Better Choice" },
    Brand { code: 4, name: "BOC" },
    Brand { code: 5, name: "BP" },
    Brand { code: 6, name: "Caltex" },
    Brand { code: 7, name: "Gull" },
    Brand { code: 10, name: "Liberty" },
    Brand { code: 11, name: "Mobil" },
    Brand { code: 14, name: "Shell" },
    Brand { code: 15, name: "Independent" },
    Brand { code: 23, name: "United" },
    Brand { code: 24, name: "Eagle" },
    Brand { code: 25, name: "FastFuel 24/7" },
    Brand { code: 26, name: "Puma" },
    Brand { code: 27, name: "Vibe" },
    Brand { code: 29, name: "7-Eleven" },
    Brand { code: 30, name: "Metro Petroleum" },
    Brand { code: 31, name: "WA Fuels" },
    Brand { code: 32, name: "Costco" },
    Brand { code: 34, name: "Atlas" },
    Brand { code: 35, name: "EG Ampol" },
    Brand { code: 36, name: "CGL fuel" },
    Brand { code: 37, name: "X Convenience" },
    Brand { code: 38, name: "Phoenix" },
    Brand { code: 39, name: "Burk" },
    Brand { code: 40, name: "Petro Fuels" },
    Brand { code: 41, name: "Astron" },
    Brand { code: 42, name: "OTR" },
    Brand { code: 43, name: "Reddy Express" },
    Brand { code: 44, name: "Dunning's" },
    Brand { code: 45, name: "Perrys" },
    Brand { code: 46, name: "UGO" },
    Brand { code: 47, name: "Maisey Fuels" },
    Brand { code: 48, name: "OMG Caltex" },
    Brand { code: 49, name: "OMG Metro" },
    Brand { code: 50, name: "Solo" },
    Brand { code: 52, name: "Broome Diesel" },
    Brand { code: 53, name: "Fuel Tech" },
];

/// The mapped brand with this code (0 is not a mapped brand).
pub fn brand(code: u8) -> Option<&'static Brand> {
    BRANDS.iter().find(|b| b.code == code)
}

/// Compare two brand labels the way the source's names are matched: trimmed, case-insensitive,
/// inner whitespace runs equal to one space.
pub fn brand_label_eq(a: &str, b: &str) -> bool {
    let mut left = a.split_whitespace();
    let mut right = b.split_whitespace();
    loop {
        match (left.next(), right.next()) {
            (None, None) => return true,
            (Some(x), Some(y)) if x.eq_ignore_ascii_case(y) => {}
            _ => return false,
        }
    }
}

/// The brand code for a source `<brand>` text: empty is Independent, an unknown name is 0.
pub fn brand_code_for_label(label: &str) -> u8 {
    if label.trim().is_empty() {
        return INDEPENDENT_BRAND;
    }
    BRANDS.iter().find(|b| brand_label_eq(b.name, label)).map_or(UNMAPPED_BRAND, |b| b.code)
}

/// The brand a station carries: one of the brand table's codes, or unmapped (a label the
/// table does not have, kept in the station's `sourceNotes.brand`). Unlike [`BrandCode`],
/// which a query names and which is never unmapped. Stored and served as its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct StationBrand(u8);

impl StationBrand {
    /// A label the brand table does not have.
    pub const UNMAPPED: Self = Self(UNMAPPED_BRAND);

    /// The brand of a source `<brand>` text ([`brand_code_for_label`]).
    pub fn of_label(label: &str) -> Self {
        Self(brand_code_for_label(label))
    }

    /// The brand table's code, unless unmapped.
    pub fn code(self) -> Option<BrandCode> {
        BrandCode::parse(self.0)
    }

    /// The number served (0: unmapped).
    pub const fn get(self) -> u8 {
        self.0
    }
}

impl PartialEq<StationBrand> for BrandCode {
    fn eq(&self, other: &StationBrand) -> bool {
        self.get() == other.0
    }
}

/// Logo file name of a brand code: the lower-cased name with every run of other characters
/// turned into `_`; code 0 and unknown codes use `generic.svg`.
pub fn brand_logo_file(code: u8) -> String {
    match brand(code) {
        Some(b) => format!("{}.svg", logo_stem(b.name)),
        None => GENERIC_LOGO.to_string(),
    }
}

/// The logo served for unmapped brands.
pub const GENERIC_LOGO: &str = "generic.svg";

fn logo_stem(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_gap = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
            in_gap = false;
        } else if !in_gap {
            out.push('_');
            in_gap = true;
        }
    }
    out
}

/// A site feature (facility) code and its label as the source writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feature {
    pub code: u8,
    pub name: &'static str,
}

/// Feature code of "Open 24 hours".
pub const FEATURE_OPEN_24_HOURS: u8 = 21;

pub const FEATURES: [Feature; 21] = [
    Feature { code: 1, name: "Credit Cards" },
    Feature { code: 2, name: "Debit Cards" },
    Feature { code: 3, name: "Fuel Cards" },
    Feature { code: 4, name: "ATM" },
    Feature { code: 5, name: "Toilets" },
    Feature { code: 6, name: "Bottled Gas" },
    Feature { code: 7, name: "Trailer Hire" },
    Feature { code: 8, name: "EFTPOS" },
    Feature { code: 9, name: "Restaurant" },
    Feature { code: 10, name: "Carwash" },
    Feature { code: 11, name: "Workshop" },
    Feature { code: 12, name: "Air" },
    Feature { code: 13, name: "Water" },
    Feature { code: 14, name: "Ice" },
    Feature { code: 15, name: "Discount" },
    Feature { code: 16, name: "Voucher" },
    Feature { code: 17, name: "Bottled AdBlue" },
    Feature { code: 18, name: "Pumped AdBlue" },
    Feature { code: 19, name: "Truck Friendly" },
    Feature { code: 20, name: "Convenience Store" },
    Feature { code: 21, name: "Open 24 hours" },
];

pub fn feature(code: u8) -> Option<&'static Feature> {
    FEATURES.iter().find(|f| f.code == code)
}

/// A restriction on who may buy fuel at a site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restriction {
    pub code: u8,
    pub name: &'static str,
}

pub const RESTRICTIONS: [Restriction; 4] = [
    Restriction { code: 1, name: "Unmanned site (credit card charges may apply)" },
    Restriction { code: 2, name: "Entry Permit Required" },
    Restriction { code: 3, name: "Membership Required" },
    Restriction { code: 4, name: "Low Aromatic Fuel" },
];

pub fn restriction(code: u8) -> Option<&'static Restriction> {
    RESTRICTIONS.iter().find(|r| r.code == code)
}

/// A FuelWatch region: the code of the feed's `Region` parameter, FuelWatch's own name for it
/// (its region list, `GET https://www.fuelwatch.wa.gov.au/api/region`) and the wider region it
/// lies in (the archive's `REGION_DESCRIPTION`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub code: u8,
    pub name: &'static str,
    pub wider: &'static str,
}

const fn region_row(code: u8, name: &'static str, wider: &'static str) -> Region {
    Region { code, name, wider }
}

/// Every region, by code: 1–51 and 53–63 (FuelWatch has no 52). The wider regions are those
/// FuelWatch's monthly archive files give for the region's areas; Wundowie (59) and Bodallin
/// (63) appear in no archive file read, and are placed in the Wheatbelt, where both towns lie.
pub const REGIONS: [Region; 62] = [
    region_row(1, "Boulder", "Goldfields-Esperance"),
    region_row(2, "Broome", "Kimberley"),
    region_row(3, "Busselton (Townsite)", "South-West"),
    region_row(4, "Carnarvon", "Gascoyne"),
    region_row(5, "Collie", "South-West"),
    region_row(6, "Dampier", "Pilbara"),
    region_row(7, "Esperance", "Goldfields-Esperance"),
    region_row(8, "Kalgoorlie", "Goldfields-Esperance"),
    region_row(9, "Karratha", "Pilbara"),
    region_row(10, "Kununurra", "Kimberley"),
    region_row(11, "Narrogin", "Wheatbelt"),
    region_row(12, "Northam", "Wheatbelt"),
    region_row(13, "Port Hedland", "Pilbara"),
    region_row(14, "South Hedland", "Pilbara"),
    region_row(15, "Albany", "Great Southern"),
    region_row(16, "Bunbury", "South-West"),
    region_row(17, "Geraldton", "Mid-West"),
    region_row(18, "Mandurah", "Peel"),
    region_row(19, "Capel", "South-West"),
    region_row(20, "Dardanup", "South-West"),
    region_row(21, "Greenough", "Mid-West"),
    region_row(22, "Harvey", "South-West"),
    region_row(23, "Murray", "Peel"),
    region_row(24, "Waroona", "Peel"),
    region_row(25, "Metro : North of River", "Metro"),
    region_row(26, "Metro : South of River", "Metro"),
    region_row(27, "Metro : East/Hills", "Metro"),
    region_row(28, "Augusta / Margaret River", "South-West"),
    region_row(29, "Busselton (Shire)", "South-West"),
    region_row(30, "Bridgetown / Greenbushes", "South-West"),
    region_row(31, "Donnybrook / Balingup", "South-West"),
    region_row(32, "Manjimup", "South-West"),
    region_row(33, "Cataby", "Wheatbelt"),
    region_row(34, "Coolgardie", "Goldfields-Esperance"),
    region_row(35, "Cunderdin", "Wheatbelt"),
    region_row(36, "Dalwallinu", "Wheatbelt"),
    region_row(37, "Denmark", "Great Southern"),
    region_row(38, "Derby", "Kimberley"),
    region_row(39, "Dongara", "Mid-West"),
    region_row(40, "Exmouth", "Gascoyne"),
    region_row(41, "Fitzroy Crossing", "Kimberley"),
    region_row(42, "Jurien", "Wheatbelt"),
    region_row(43, "Kambalda", "Goldfields-Esperance"),
    region_row(44, "Kellerberrin", "Wheatbelt"),
    region_row(45, "Kojonup", "Great Southern"),
    region_row(46, "Meekatharra", "Mid-West"),
    region_row(47, "Moora", "Wheatbelt"),
    region_row(48, "Mount Barker", "Great Southern"),
    region_row(49, "Newman", "Pilbara"),
    region_row(50, "Norseman", "Goldfields-Esperance"),
    region_row(51, "Ravensthorpe", "Goldfields-Esperance"),
    region_row(53, "Tammin", "Wheatbelt"),
    region_row(54, "Williams", "Wheatbelt"),
    region_row(55, "Wubin", "Wheatbelt"),
    region_row(56, "York", "Wheatbelt"),
    region_row(57, "Regans Ford", "Wheatbelt"),
    region_row(58, "Meckering", "Wheatbelt"),
    region_row(59, "Wundowie", "Wheatbelt"),
    region_row(60, "North Bannister", "Wheatbelt"),
    region_row(61, "Munglinup", "Goldfields-Esperance"),
    region_row(62, "Northam (Shire)", "Wheatbelt"),
    region_row(63, "Bodallin", "Wheatbelt"),
];

pub fn region(code: u8) -> Option<&'static Region> {
    REGIONS.iter().find(|r| r.code == code)
}

/// Region codes accepted as a filter: 1–51 and 53–63 (52 does not exist).
pub fn is_region(code: u8) -> bool {
    (1..=63).contains(&code) && code != 52
}

/// Every region code, ascending.
pub fn region_codes() -> impl Iterator<Item = u8> {
    (1..=63u8).filter(|c| is_region(*c))
}

/// The short forms FuelWatch's monthly retail files (`FuelWatchRetail-MM-YYYY.csv`,
/// 2002–2021 read) write in `AREA_DESCRIPTION` where they differ from the region's own name,
/// with the region each names. Every other area text of those files is a region's name
/// (`Greenough`, `Wubin`, …). `Busselton` alone (in the files until 2019) is the townsite, as
/// the later `Busselton-Shire` is the shire.
pub const AREA_SHORT_FORMS: [(&str, u8); 12] = [
    ("North of River", 25),
    ("South of River", 26),
    ("East/Hills", 27),
    ("Augusta-M River", 28),
    ("B-Town/G-Bushes", 30),
    ("D-Brook/Bal-Up", 31),
    ("Busselton", 3),
    ("Busselton-Shire", 29),
    ("Fitzroy Cross", 41),
    ("Mt Barker", 48),
    ("Northam-Shire", 62),
    ("Sth Hedland", 14),
];

/// The text the archive writes for a region's area: its short form where it has one.
pub fn area_text(code: u8) -> Option<&'static str> {
    let short = AREA_SHORT_FORMS.iter().find(|(_, c)| *c == code).map(|(text, _)| *text);
    short.or_else(|| region(code).map(|r| r.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_unique() {
        for pair in PRODUCTS.windows(2) {
            assert!(pair[0].code < pair[1].code);
        }
        for pair in BRANDS.windows(2) {
            assert!(pair[0].code < pair[1].code);
        }
        for (i, f) in FEATURES.iter().enumerate() {
            assert_eq!(usize::from(f.code), i + 1);
        }
        assert!(product(3).is_none());
        assert!(brand(0).is_none());
    }

    #[test]
    fn regions_skip_52() {
        assert_eq!(region_codes().count(), 62);
        assert!(REGIONS.iter().map(|r| r.code).eq(region_codes()), "one named region per code");
        assert_eq!(region(21).map(|r| r.name), Some("Greenough"));
        assert_eq!(region(63).map(|r| r.name), Some("Bodallin"));
        assert!(!is_region(52));
        assert!(!is_region(0));
        assert!(!is_region(64));
        assert!(is_region(63));
    }

    #[test]
    fn brand_labels_map_to_codes() {
        assert_eq!(brand_code_for_label("BP"), 5);
        assert_eq!(brand_code_for_label("  eg   ampol "), 35);
        assert_eq!(brand_code_for_label(""), INDEPENDENT_BRAND);
        assert_eq!(brand_code_for_label("Quest Fuel"), UNMAPPED_BRAND);
        assert_eq!(brand_code_for_label("Caltex Woolworths"), UNMAPPED_BRAND);
    }

    #[test]
    fn a_station_brand_is_a_table_code_or_unmapped() {
        let bp = StationBrand::of_label("BP");
        assert_eq!(bp.code().map(Code::get), Some(5));
        assert!(BrandCode::parse(5).is_some_and(|c| c == bp) && BrandCode::parse(2).is_some_and(|c| c != bp));
        let quest = StationBrand::of_label("Quest Fuel");
        assert_eq!((quest, quest.code()), (StationBrand::UNMAPPED, None), "no query names it");
        assert_eq!(serde_json::to_string(&bp).expect("json"), "5", "stored and served as its number");
    }

    #[test]
    fn logo_file_names() {
        assert_eq!(brand_logo_file(29), "7_eleven.svg");
        assert_eq!(brand_logo_file(44), "dunning_s.svg");
        assert_eq!(brand_logo_file(25), "fastfuel_24_7.svg");
        assert_eq!(brand_logo_file(36), "cgl_fuel.svg");
        assert_eq!(brand_logo_file(0), "generic.svg");
    }
}
