//! Is this place our station? The gates and the evidence below; ambiguity is no match.
//! Pure.

use super::types::Place;
use wafuel_domain::codes::{BRANDS, INDEPENDENT_BRAND, UNMAPPED_BRAND, brand, brand_label_eq};
use wafuel_domain::geo::distance_m;
use wafuel_domain::key::fold_text;
use wafuel_domain::phone::{Phone, normalize_phone};
use wafuel_domain::profile::{Attribution, PlaceProfile};
use wafuel_domain::site_features::WeekHours;
use wafuel_store::enrich::Seed;

/// Farthest a candidate may be from the source coordinates.
pub const MAX_DISTANCE_M: f64 = 250.0;
/// An exact, distinctive name this close accepts without more evidence.
pub const NAME_DISTANCE_M: f64 = 50.0;

/// Street-type words folded to one spelling.
fn canonical_word(w: &str) -> &str {
    match w {
        "st" | "street" => "st",
        "rd" | "road" => "rd",
        "hwy" | "highway" => "hwy",
        "ave" | "av" | "avenue" => "ave",
        "dr" | "drive" => "dr",
        "cres" | "cr" | "crescent" => "cres",
        "pde" | "parade" => "pde",
        "tce" | "terrace" => "tce",
        "cl" | "close" => "cl",
        "pl" | "place" => "pl",
        "ct" | "court" => "ct",
        "ln" | "lane" => "ln",
        "bvd" | "blvd" | "boulevard" => "bvd",
        "gt" | "great" => "gt",
        other => other,
    }
}

fn tokens(text: &str) -> Vec<String> {
    fold_text(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(|t| canonical_word(t).to_string())
        .collect()
}

/// House number and route words of a source street (`"Lot 2 North West Coastal Hwy"` has no
/// house number; `"801-803 South Western Highway"` has `801-803`).
fn split_street(street: &str) -> (Option<String>, Vec<String>) {
    let folded = fold_text(street);
    let mut words = folded.split_whitespace();
    let first = words.clone().next().unwrap_or("");
    if first.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        words.next();
        let route: String = words.collect::<Vec<_>>().join(" ");
        let route = route.split('(').next().unwrap_or("").to_string();
        (Some(first.to_string()), tokens(&route))
    } else {
        let route = folded.split('(').next().unwrap_or("").to_string();
        (None, tokens(&route))
    }
}

/// Brands a place name names, by our table.
fn brands_named(name: &str) -> Vec<u8> {
    let folded = format!(" {} ", tokens(name).join(" "));
    BRANDS
        .iter()
        .filter(|b| b.code != INDEPENDENT_BRAND)
        .filter(|b| folded.contains(&format!(" {} ", tokens(b.name).join(" "))))
        .map(|b| b.code)
        .collect()
}

/// Why a candidate was accepted, or `None`.
pub fn accepts(seed: &Seed, place: &Place) -> bool {
    let Some(loc) = place.location else { return false };
    if !place.types.iter().any(|t| t == "gas_station")
        || place.business_status.as_deref() != Some("OPERATIONAL")
    {
        return false;
    }
    if place.component("country") != Some("AU")
        || place.component("administrative_area_level_1") != Some("WA")
    {
        return false;
    }
    let distance = distance_m((seed.latitude, seed.longitude), (loc.latitude, loc.longitude));
    if distance > MAX_DISTANCE_M {
        return false;
    }
    // A place named for another brand is a competitor, whatever else agrees.
    let named = brands_named(place.name());
    let ours = seed.brand;
    if ours != UNMAPPED_BRAND && ours != INDEPENDENT_BRAND && !named.is_empty() && !named.contains(&ours) {
        return false;
    }
    let name_tokens = tokens(&seed.name);
    let place_tokens = tokens(place.name());
    let same_name = !name_tokens.is_empty() && name_tokens == place_tokens;
    let distinctive = same_name && !brand(ours).is_some_and(|b| brand_label_eq(b.name, &seed.name));
    if distinctive && distance <= NAME_DISTANCE_M {
        return true;
    }
    let (number, route) = split_street(&seed.street);
    if let (Some(ours), Some(theirs)) = (number.as_deref(), place.component("street_number"))
        && fold_text(theirs) != ours
        && !ours.split('-').any(|n| n == fold_text(theirs))
    {
        return false;
    }
    if let Some(theirs) = place.component("route")
        && !route.is_empty()
        && tokens(theirs) != route
    {
        return false;
    }
    if same_name {
        return true;
    }
    let overlap = name_tokens.iter().filter(|t| place_tokens.contains(t)).count();
    let ratio = overlap as f64 / name_tokens.len().max(place_tokens.len()).max(1) as f64;
    let same_locality = place.component("locality").is_some_and(|l| fold_text(l) == fold_text(&seed.suburb));
    ratio >= 0.5 && same_locality
}

/// The one accepted candidate; two or more accepted is ambiguous, and no match.
pub fn choose<'a>(seed: &Seed, candidates: &'a [Place]) -> Option<&'a Place> {
    let mut accepted = candidates.iter().filter(|p| accepts(seed, p));
    let first = accepted.next()?;
    if accepted.next().is_some() { None } else { Some(first) }
}

/// The profile of a matched place, in our vocabulary.
pub fn profile_of(place: &Place) -> PlaceProfile {
    let postcode = place
        .component("postal_code")
        .filter(|p| p.len() == 4 && p.bytes().all(|b| b.is_ascii_digit()))
        .map(str::to_string);
    let phone = match place.international_phone_number.as_deref().map(normalize_phone) {
        Some(Phone::Valid(n)) => Some(n),
        _ => None,
    };
    let mut features = Vec::new();
    if place.restroom == Some(true) {
        features.push(5);
    }
    if let Some(p) = &place.payment_options {
        if p.accepts_credit_cards == Some(true) {
            features.push(1);
        }
        if p.accepts_debit_cards == Some(true) {
            features.push(2);
        }
    }
    features.sort_unstable();
    PlaceProfile {
        place_id: place.id.clone(),
        display_name: place.name().to_string(),
        postcode,
        phone,
        features,
        hours: place.regular_opening_hours.as_ref().and_then(|h| week_hours(&h.periods)),
        attributions: place
            .attributions
            .iter()
            .map(|a| Attribution { display_name: a.provider.clone(), uri: a.provider_uri.clone() })
            .collect(),
    }
}

/// Provider periods (day 0 = Sunday) to our weekday grammar. Days without a period are
/// closed; an open with no close is open around the clock.
fn week_hours(periods: &[super::types::Period]) -> Option<WeekHours> {
    if periods.is_empty() {
        return None;
    }
    let mut days: [Vec<String>; 7] = Default::default();
    for p in periods {
        let monday_first = (usize::from(p.open.day) + 6) % 7;
        if monday_first >= 7 || p.open.hour > 23 || p.open.minute > 59 {
            return None;
        }
        let start = format!("{:02}:{:02}", p.open.hour, p.open.minute);
        let end = match p.close {
            None => {
                return Some(std::array::from_fn(|_| Some("00:00-24:00".to_string())));
            }
            Some(c) if c.hour == 0 && c.minute == 0 && c.day != p.open.day => "24:00".to_string(),
            Some(c) => format!("{:02}:{:02}", c.hour.min(23), c.minute.min(59)),
        };
        days[monday_first].push(format!("{start}-{end}"));
    }
    Some(std::array::from_fn(|i| {
        let d = &days[i];
        Some(if d.is_empty() { "Closed".to_string() } else { d.join(",") })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::*;

    fn seed() -> Seed {
        Seed {
            station_key: "k".into(),
            name: "Costco Perth Airport".into(),
            brand: 32,
            street: "142 Dunreath Dr".into(),
            suburb: "PERTH AIRPORT".into(),
            latitude: -31.940377,
            longitude: 115.951869,
        }
    }

    fn comp(short: &str, kind: &str) -> AddressComponent {
        AddressComponent { long_text: short.into(), short_text: short.into(), types: vec![kind.into()] }
    }

    pub fn place(name: &str, dlat: f64) -> Place {
        Place {
            id: format!("id-{name}"),
            display_name: Some(LocalizedText { text: name.into(), language_code: None }),
            address_components: vec![
                comp("142", "street_number"),
                comp("Dunreath Drive", "route"),
                comp("Perth Airport", "locality"),
                comp("WA", "administrative_area_level_1"),
                comp("AU", "country"),
                comp("6105", "postal_code"),
            ],
            location: Some(LatLng { latitude: -31.940377 + dlat, longitude: 115.951869 }),
            types: vec!["gas_station".into(), "point_of_interest".into()],
            business_status: Some("OPERATIONAL".into()),
            ..Place::default()
        }
    }

    #[test]
    fn accepts_and_rejects() {
        assert!(accepts(&seed(), &place("Costco Perth Airport", 0.0)));
        assert!(accepts(&seed(), &place("Costco Fuel Perth Airport", 0.001)), "token overlap, same locality");
        assert!(!accepts(&seed(), &place("BP Perth Airport", 0.0)), "competitor brand");
        assert!(!accepts(&seed(), &place("Costco Perth Airport", 0.003)), "330 m away");
        let mut closed = place("Costco Perth Airport", 0.0);
        closed.business_status = Some("CLOSED_PERMANENTLY".into());
        assert!(!accepts(&seed(), &closed));
        let mut other_number = place("Costco Fuel", 0.001);
        other_number.address_components[0] = comp("150", "street_number");
        assert!(!accepts(&seed(), &other_number));
        let two = [place("Costco Perth Airport", 0.0), place("Costco Perth Airport Fuel", 0.0001)];
        assert!(choose(&seed(), &two).is_none(), "two accepted candidates are ambiguous");
    }

    #[test]
    fn hours_from_periods() {
        let p = |d: u8, h: u8, cd: u8, ch: u8| Period {
            open: Point { day: d, hour: h, minute: 0 },
            close: Some(Point { day: cd, hour: ch, minute: 0 }),
        };
        let h = week_hours(&[p(1, 6, 1, 22), p(6, 20, 0, 2)]).expect("hours");
        assert_eq!(h[0].as_deref(), Some("06:00-22:00"));
        assert_eq!(h[5].as_deref(), Some("20:00-02:00"));
        assert_eq!(h[6].as_deref(), Some("Closed"));
        let always =
            week_hours(&[Period { open: Point { day: 0, hour: 0, minute: 0 }, close: None }]).expect("24/7");
        assert!(always.iter().all(|d| d.as_deref() == Some("00:00-24:00")));
        let midnight = week_hours(&[p(2, 6, 3, 0)]).expect("hours");
        assert_eq!(midnight[1].as_deref(), Some("06:00-24:00"));
    }
}
