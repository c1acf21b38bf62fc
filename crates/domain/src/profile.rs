//! What the map data provider told us about a station, and how it merges into the station
//! (docs/api.md "`/v1`: the price document", `enrichment`: the feed's own values win). Pure.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::site_features::{WEEKDAYS, WeekHours};
use super::station::Station;

/// The fixed `enrichment.provider`.
pub const PROVIDER: &str = "Google Maps";
/// Provider data this old is never served.
pub const RETENTION: SignedDuration = SignedDuration::from_hours(30 * 24);
/// Default time until a profile is due for refresh (and `stale` after).
pub const REFRESH_AFTER: SignedDuration = SignedDuration::from_hours(7 * 24);

const WHOLE_DAY: &str = "00:00-24:00";

/// A provider attribution to keep with displayed provider data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attribution {
    #[serde(rename = "displayName")]
    pub display_name: String,
    pub uri: String,
}

/// The provider's facts about a matched place, already in our vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PlaceProfile {
    pub place_id: String,
    pub display_name: String,
    /// Four digits.
    pub postcode: Option<String>,
    /// E.164.
    pub phone: Option<String>,
    /// Feature codes the provider supports, ascending.
    pub features: Vec<u8>,
    /// Weekday hours (Monday first) in the API's grammar; `None` = not given.
    pub hours: Option<WeekHours>,
    pub attributions: Vec<Attribution>,
}

/// A stored profile with its times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredProfile {
    pub station_key: String,
    pub fetched_at: Timestamp,
    pub refresh_at: Timestamp,
    pub profile: PlaceProfile,
}

impl StoredProfile {
    /// Served at all: younger than the 30-day retention limit.
    pub fn servable(&self, now: Timestamp) -> bool {
        now < self.retention_end()
    }

    pub fn retention_end(&self) -> Timestamp {
        self.fetched_at.saturating_add(RETENTION).unwrap_or(self.fetched_at)
    }

    /// Past the refresh deadline but still within retention.
    pub fn stale(&self, now: Timestamp) -> bool {
        now >= self.refresh_at
    }

    /// When a response using this profile must stop being reused: the refresh deadline while
    /// fresh, the retention limit once stale.
    pub fn next_deadline(&self, now: Timestamp) -> Timestamp {
        if now < self.refresh_at { self.refresh_at.min(self.retention_end()) } else { self.retention_end() }
    }
}

/// The `enrichment` member and the station fields the provider filled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub postcode: Option<String>,
    pub phone: Option<String>,
    pub features: Vec<u8>,
    pub open_hours: Option<WeekHours>,
    pub is_24_hours: Option<bool>,
    /// Contributed field paths, in a stable order.
    pub fields: Vec<String>,
    pub place_id: String,
    pub fetched_at: Timestamp,
    pub stale: bool,
    pub maps_uri: String,
    pub attributions: Vec<Attribution>,
}

/// A station as its answers show it: the feed's own values with the provider's merged in.
/// Every filter (`feature`, `open`), attribute, CSV column and open-state expiry reads this one
/// view, so what a station shows is what it is filtered and timed by.
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a> {
    pub phone: Option<&'a str>,
    pub features: &'a [u8],
    pub is_24_hours: Option<bool>,
    pub open_hours: Option<&'a WeekHours>,
}

impl<'a> Shown<'a> {
    /// `station` with `merged` (its provider contributions, if any) applied.
    pub fn of(station: &'a Station, merged: Option<&'a Merged>) -> Self {
        match merged {
            Some(m) => Shown {
                phone: m.phone.as_deref(),
                features: &m.features,
                is_24_hours: m.is_24_hours,
                open_hours: m.open_hours.as_ref(),
            },
            None => Shown {
                phone: station.phone.as_deref(),
                features: &station.features,
                is_24_hours: station.is_24_hours,
                open_hours: station.open_hours.as_ref(),
            },
        }
    }
}

/// Merge a profile into a station (the rules are below: the feed's phone, hours and 24-hour
/// flag win; the provider fills what the feed leaves empty). `None` when the provider
/// contributes nothing or the profile is past retention.
pub fn merge(station: &Station, stored: &StoredProfile, now: Timestamp) -> Option<Merged> {
    if !stored.servable(now) {
        return None;
    }
    let p = &stored.profile;
    let mut fields = Vec::new();

    let postcode = p.postcode.clone().filter(|pc| pc.len() == 4 && pc.bytes().all(|b| b.is_ascii_digit()));
    if postcode.is_some() {
        fields.push("address.postcode".to_string());
    }

    // A valid provider number fills a missing source phone; an invalid or ambiguous source
    // phone (kept in sourceNotes) blocks it.
    let phone = match (&station.phone, &station.notes.phone, &p.phone) {
        (None, None, Some(number)) => {
            fields.push("phone".to_string());
            Some(number.clone())
        }
        _ => station.phone.clone(),
    };

    let mut features = station.features.clone();
    let added: Vec<u8> = p.features.iter().copied().filter(|f| !features.contains(f)).collect();
    if !added.is_empty() {
        features.extend(added);
        features.sort_unstable();
        features.dedup();
        fields.push("siteFeatures".to_string());
    }

    // Hours: the source wins per supplied day (Closed included); a confirmed source 24-hour
    // schedule is never narrowed; unparsed source hours block the provider.
    let mut open_hours = station.open_hours.clone();
    let mut is_24_hours = station.is_24_hours;
    if station.is_24_hours != Some(true)
        && station.notes.open_hours.is_none()
        && let Some(provider) = &p.hours
    {
        let mut days: WeekHours = open_hours.clone().unwrap_or_default();
        for (i, day) in days.iter_mut().enumerate() {
            if day.is_none()
                && let Some(value) = &provider[i]
            {
                *day = Some(value.clone());
                fields.push(format!("openHours.{}", WEEKDAYS[i]));
            }
        }
        if days.iter().all(|d| d.as_deref() == Some(WHOLE_DAY)) {
            open_hours = None;
            is_24_hours = Some(true);
        } else if days.iter().any(Option::is_some) {
            is_24_hours = if days.iter().flatten().any(|d| d != WHOLE_DAY) { Some(false) } else { None };
            open_hours = Some(days);
        }
    }

    if fields.is_empty() {
        return None;
    }
    Some(Merged {
        postcode,
        phone,
        features,
        open_hours,
        is_24_hours,
        fields,
        place_id: p.place_id.clone(),
        fetched_at: stored.fetched_at,
        stale: stored.stale(now),
        maps_uri: maps_uri(&p.display_name, &p.place_id),
        attributions: p.attributions.clone(),
    })
}

/// `https://www.google.com/maps/search/?api=1&query=<name>&query_place_id=<id>`
pub fn maps_uri(name: &str, place_id: &str) -> String {
    let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    format!("https://www.google.com/maps/search/?api=1&query={}&query_place_id={}", enc(name), enc(place_id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::normalize_station;
    use crate::record::SourceRecord;
    use crate::site_features::CLOSED;

    fn station(site_features: &str, phone: &str) -> Station {
        normalize_station(&SourceRecord {
            brand: Some("BP".into()),
            trading_name: Some("BP Test".into()),
            location: Some("PERTH".into()),
            address: Some("1 Main St".into()),
            phone: Some(phone.into()),
            latitude: Some("-31.95".into()),
            longitude: Some("115.86".into()),
            site_features: Some(site_features.into()),
            ..SourceRecord::default()
        })
        .expect("station")
    }

    fn stored(profile: PlaceProfile, fetched_days_ago: i64, now: Timestamp) -> StoredProfile {
        let fetched_at = now.saturating_sub(SignedDuration::from_hours(24 * fetched_days_ago)).expect("t");
        StoredProfile {
            station_key: String::new(),
            fetched_at,
            refresh_at: fetched_at.saturating_add(REFRESH_AFTER).expect("t"),
            profile,
        }
    }

    fn week(value: &str) -> WeekHours {
        std::array::from_fn(|_| Some(value.to_string()))
    }

    fn profile() -> PlaceProfile {
        PlaceProfile {
            place_id: "ChIJtest".into(),
            display_name: "BP Test".into(),
            postcode: Some("6000".into()),
            phone: Some("+61892221111".into()),
            features: vec![5, 8],
            hours: Some(week("05:00-22:00")),
            attributions: vec![],
        }
    }

    #[test]
    fn fills_missing_fields() {
        let now = Timestamp::from_second(1_800_000_000).expect("t");
        let m = merge(&station("EFTPOS", ""), &stored(profile(), 1, now), now).expect("merged");
        assert_eq!(m.postcode.as_deref(), Some("6000"));
        assert_eq!(m.phone.as_deref(), Some("+61892221111"));
        assert_eq!(m.features, vec![5, 8]);
        assert_eq!(m.is_24_hours, Some(false));
        assert!(m.fields.contains(&"openHours.Monday".to_string()));
        assert!(!m.stale);
        assert!(m.maps_uri.contains("query_place_id=ChIJtest"));
    }

    #[test]
    fn source_wins() {
        let now = Timestamp::from_second(1_800_000_000).expect("t");
        // Source phone present; source hours with an explicit Closed Sunday.
        let s = station("Open Mon-Sat: 06:00-20:00, Sun: -", "(08) 9981 1151");
        let m = merge(&s, &stored(profile(), 1, now), now).expect("postcode still fills");
        assert_eq!(m.phone.as_deref(), Some("+61899811151"));
        let hours = m.open_hours.expect("hours");
        assert_eq!(hours[6].as_deref(), Some(CLOSED));
        assert_eq!(hours[0].as_deref(), Some("06:00-20:00"));
        assert!(!m.fields.iter().any(|f| f.starts_with("openHours") || f == "phone"));
        // A 24-hour source is never narrowed.
        let m = merge(&station(", Open 24 hours", ""), &stored(profile(), 1, now), now).expect("merged");
        assert_eq!(m.is_24_hours, Some(true));
        assert!(m.open_hours.is_none());
        // An invalid source phone blocks the provider's.
        let m = merge(&station("", "123"), &stored(profile(), 1, now), now).expect("merged");
        assert_eq!(m.phone, None);
    }

    #[test]
    fn staleness_and_retention() {
        let now = Timestamp::from_second(1_800_000_000).expect("t");
        assert!(!merge(&station("", ""), &stored(profile(), 6, now), now).expect("fresh").stale);
        assert!(merge(&station("", ""), &stored(profile(), 7, now), now).expect("stale").stale);
        assert!(merge(&station("", ""), &stored(profile(), 29, now), now).is_some());
        assert!(merge(&station("", ""), &stored(profile(), 30, now), now).is_none());
    }

    #[test]
    fn nothing_contributed_is_no_enrichment() {
        let now = Timestamp::from_second(1_800_000_000).expect("t");
        let empty = PlaceProfile { place_id: "x".into(), ..PlaceProfile::default() };
        assert!(merge(&station("", ""), &stored(empty, 1, now), now).is_none());
    }
}
