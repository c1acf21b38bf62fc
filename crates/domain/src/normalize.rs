//! A validated feed item to a [`Station`]: brand code, features, hours, restrictions, phone,
//! key and digest. Pure.

use std::borrow::Cow;
use std::fmt::Write as _;

use super::codes::StationBrand;
use super::key::{key_digest, station_key};
use super::phone::{Phone, normalize_phone};
use super::record::SourceRecord;
use super::restrictions::parse_restrictions;
use super::site_features::{Hours, parse_site_features};
use super::station::{LegacyText, SourceNotes, Station};

/// Why an item cannot become a station.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StationError {
    #[error("missing or empty <{0}>")]
    Missing(&'static str),
    #[error("<{0}> is not a plain decimal in range")]
    BadCoordinate(&'static str),
}

/// Required, non-blank text of an element.
fn required<'a>(value: &'a Option<Cow<'_, str>>, element: &'static str) -> Result<&'a str, StationError> {
    match value.as_deref().map(str::trim) {
        Some(text) if !text.is_empty() => Ok(text),
        _ => Err(StationError::Missing(element)),
    }
}

/// A plain decimal: optional minus, digits, optionally a point and digits. No exponent, no
/// plus sign, no spaces inside.
pub fn is_plain_decimal(text: &str, allow_negative: bool) -> bool {
    let body = match text.strip_prefix('-') {
        Some(rest) if allow_negative => rest,
        Some(_) => return false,
        None => text,
    };
    let (int, frac) = match body.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (body, None),
    };
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
}

fn coordinate(
    value: &Option<Cow<'_, str>>,
    element: &'static str,
    limit: f64,
) -> Result<(f64, String), StationError> {
    let text = required(value, element)?;
    if !is_plain_decimal(text, true) {
        return Err(StationError::BadCoordinate(element));
    }
    let number: f64 = text.parse().map_err(|_| StationError::BadCoordinate(element))?;
    if !number.is_finite() || number.abs() > limit {
        return Err(StationError::BadCoordinate(element));
    }
    Ok((number, text.to_string()))
}

/// Stations already normalised, by their source text. Normalisation is a pure function of
/// these fields and a feed repeats each station once per product, so the seven extracts of
/// a catalog share one normalisation per station.
static MEMO: std::sync::LazyLock<crate::sync::Memo<std::sync::Arc<Station>>> =
    std::sync::LazyLock::new(|| crate::sync::Memo::new(20_000));

/// Forget remembered stations and phones (benchmarks measure a cold start).
pub fn clear_memo() {
    clear_station_memo();
    super::phone::clear_memo();
}

/// Forget remembered stations but not phones: a build in a process that has seen the
/// state's phone numbers before (every build after its first).
pub fn clear_station_memo() {
    MEMO.clear();
    super::site_features::clear_memo();
}

/// The text a station's normalisation depends on, as one memo key.
fn memo_key(r: &SourceRecord) -> String {
    let fields = [
        &r.brand,
        &r.trading_name,
        &r.location,
        &r.address,
        &r.phone,
        &r.latitude,
        &r.longitude,
        &r.site_features,
        &r.restrictions,
    ];
    // Each field as its length, `:` and its text (or `-` when absent): a field's text can
    // hold any character, so only its length says where it ends.
    let mut key = String::with_capacity(fields.iter().map(|f| f.as_ref().map_or(1, |s| s.len() + 6)).sum());
    for f in fields {
        match f.as_deref() {
            Some(text) => {
                let _ = write!(key, "{}:", text.len());
                key.push_str(text);
            }
            None => key.push('-'),
        }
    }
    key
}

/// Normalise one item, or return the identical station normalised before.
pub fn normalize_shared(record: &SourceRecord) -> Result<std::sync::Arc<Station>, StationError> {
    let key = memo_key(record);
    if let Some(known) = MEMO.get(&key) {
        return Ok(known);
    }
    let station = std::sync::Arc::new(normalize_station(record)?);
    MEMO.insert(key, station.clone());
    Ok(station)
}

/// Normalise one item. Price and date are the validator's business, not this function's.
pub fn normalize_station(record: &SourceRecord) -> Result<Station, StationError> {
    let trading_name = required(&record.trading_name, "trading-name")?.to_string();
    let suburb = required(&record.location, "location")?.to_string();
    let street = required(&record.address, "address")?.to_string();
    let (latitude, latitude_text) = coordinate(&record.latitude, "latitude", 90.0)?;
    let (longitude, longitude_text) = coordinate(&record.longitude, "longitude", 180.0)?;

    let mut notes = SourceNotes::default();

    let brand_label = record.brand.as_deref().unwrap_or("");
    let brand = StationBrand::of_label(brand_label);
    if brand == StationBrand::UNMAPPED {
        notes.brand = Some(brand_label.trim().to_string());
    }

    let site = parse_site_features(record.site_features.as_deref().unwrap_or(""));
    notes.features = site.unclassified;
    let is_24_hours = site.hours.is_24_hours();
    let open_hours = match site.hours {
        Hours::Schedule { days, .. } => Some(*days),
        Hours::Unparsed(text) => {
            notes.open_hours = Some(text);
            None
        }
        Hours::Unknown | Hours::TwentyFourSeven => None,
    };

    let restrictions = parse_restrictions(record.restrictions.as_deref().unwrap_or(""));
    notes.restrictions = restrictions.unclassified;

    let phone = match normalize_phone(record.phone.as_deref().unwrap_or("")) {
        Phone::Valid(number) => Some(number),
        Phone::Invalid(text) => {
            notes.phone = Some(text);
            None
        }
        Phone::Absent => None,
    };

    let key = station_key(&street, &suburb, latitude, longitude);
    let digest = key_digest(&key);
    Ok(Station {
        key,
        id: crate::key::StationId::from_digest(digest),
        name: trading_name.clone(),
        trading_name,
        brand,
        street,
        suburb,
        latitude,
        longitude,
        phone,
        features: site.features,
        restrictions: restrictions.codes,
        is_24_hours,
        open_hours,
        notes,
        legacy: LegacyText {
            brand: record.brand.as_deref().map(str::to_string),
            latitude: latitude_text,
            longitude: longitude_text,
            site_features: record.site_features.as_deref().map(str::to_string),
            restrictions: record.restrictions.as_deref().map(str::to_string),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> SourceRecord<'static> {
        SourceRecord {
            brand: Some("Quest Fuel".into()),
            trading_name: Some("Shire of Wandering".into()),
            location: Some("WANDERING".into()),
            address: Some("21 Watts St".into()),
            phone: Some("".into()),
            latitude: Some("-32.68059600".into()),
            longitude: Some("116.67579300".into()),
            site_features: Some("".into()),
            restrictions: Some("Unmanned site (credit card charges may apply);".into()),
            ..SourceRecord::default()
        }
    }

    #[test]
    fn memo_keys_never_join_two_records() {
        // Whatever characters a field holds, moving text between fields changes the key.
        let mut a = record();
        a.brand = Some("Quest\u{1f}".into());
        a.trading_name = Some("Fuel".into());
        let mut b = record();
        b.brand = Some("Quest".into());
        b.trading_name = Some("\u{1f}Fuel".into());
        assert_ne!(memo_key(&a), memo_key(&b));
        let mut c = record();
        c.phone = None;
        let mut d = record();
        d.phone = Some("-".into());
        assert_ne!(memo_key(&c), memo_key(&d));
        assert_eq!(memo_key(&record()), memo_key(&record()));
    }

    #[test]
    fn unmapped_brand_is_kept_in_notes() {
        let s = normalize_station(&record()).expect("station");
        assert_eq!(s.brand, StationBrand::UNMAPPED);
        assert_eq!(s.notes.brand.as_deref(), Some("Quest Fuel"));
        assert_eq!(s.restrictions, Some(vec![1]));
        assert_eq!(s.phone, None);
        assert_eq!(s.notes.phone, None);
        assert_eq!(s.is_24_hours, None);
        assert_eq!(s.key, r#"["21 watts st","wandering",-32.680596,116.675793]"#);
    }

    #[test]
    fn required_fields_and_coordinates() {
        let mut r = record();
        r.address = Some("  ".into());
        assert_eq!(normalize_station(&r), Err(StationError::Missing("address")));
        for bad in ["1e3", "+31.9", "-31.9.1", "", "abc", "-91", "- 31"] {
            let mut r = record();
            r.latitude = Some(bad.into());
            assert!(normalize_station(&r).is_err(), "{bad}");
        }
        let mut r = record();
        r.longitude = Some("-32".into());
        assert!(normalize_station(&r).is_ok());
    }

    #[test]
    fn plain_decimals() {
        assert!(is_plain_decimal("179", false));
        assert!(is_plain_decimal("195.1", false));
        assert!(!is_plain_decimal("-1", false));
        assert!(!is_plain_decimal("1.", false));
        assert!(!is_plain_decimal(".5", false));
        assert!(!is_plain_decimal("NaN", true));
    }
}
