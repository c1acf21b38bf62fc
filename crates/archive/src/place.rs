//! Matching a file's stations to the ones the history knows, by place: the stations of one
//! place while a file's names are given to them, and the stored form of an archive station
//! (the identity rules are `import`'s).

use std::collections::{BTreeSet, HashMap};

use crate::{ArchiveSite, SiteKey};
use wafuel_store::archive::{ArchiveStationRow, KnownStation};

/// A station the history knows, as matching needs it.
#[derive(Debug, Clone)]
pub(crate) struct Known {
    pub(crate) sid: i64,
    pub(crate) station_id: String,
    pub(crate) first_seen: i64,
    pub(crate) last_seen: i64,
    pub(crate) archive: bool,
    pub(crate) region: Option<u8>,
    /// Its trading names, folded (`fold_text`); for a live station, the feed's.
    pub(crate) names: Vec<String>,
    /// An archive station's first day under each name (as `names`), when known.
    pub(crate) firsts: Vec<i64>,
}

/// An archive station of a batch: its place, its names and their first days.
pub(crate) type StationKey = (SiteKey, Vec<String>, Vec<i64>);

/// The stations of one place while a file's names are given to them.
pub(crate) struct Place {
    pub(crate) stations: Vec<PlaceStation>,
    /// Live stations the history knows here: with more than one, the trading name decides.
    pub(crate) live: usize,
}

/// A station at a place, known or new, with what this file gave it.
pub(crate) struct PlaceStation {
    pub(crate) known: Option<Known>,
    /// The id of a new station.
    pub(crate) id: Option<String>,
    pub(crate) names: Vec<String>,
    /// First day under each name, as `names` (empty for a live station's). A name's days
    /// run from its first to the day before the next name's first (the station's last day
    /// for the newest): names at one station never share a day.
    pub(crate) firsts: Vec<i64>,
    /// A new station split from a known one: that station's sid and the days its name had
    /// there.
    pub(crate) moved_from: Option<(i64, (i64, i64))>,
    /// Site indices of the file given to it, and their days.
    pub(crate) sites: Vec<usize>,
    pub(crate) days: BTreeSet<i64>,
}

impl PlaceStation {
    pub(crate) fn empty(known: Option<Known>, id: Option<String>) -> Self {
        let (names, firsts) = match &known {
            Some(k) if k.archive && k.firsts.len() == k.names.len() => (k.names.clone(), k.firsts.clone()),
            Some(k) => (k.names.clone(), Vec::new()),
            None => (Vec::new(), Vec::new()),
        };
        Self { known, id, names, firsts, moved_from: None, sites: Vec::new(), days: BTreeSet::new() }
    }

    pub(crate) fn span(&self) -> (i64, i64) {
        (self.days.first().copied().unwrap_or(0), self.days.last().copied().unwrap_or(0))
    }

    /// The site of the file it was priced under last (its newest texts).
    pub(crate) fn latest_site(&self, days: &[BTreeSet<i64>]) -> usize {
        let last = |i: &usize| days.get(*i).and_then(|d| d.last().copied());
        self.sites.iter().copied().max_by_key(|i| (last(i), *i)).unwrap_or(0)
    }

    /// The region its rows name (the newest site's first).
    pub(crate) fn region(&self, sites: &[ArchiveSite]) -> Option<u8> {
        self.sites.iter().rev().find_map(|&i| sites.get(i).and_then(|s| s.region))
    }

    /// Whether its names' first days are kept (an archive station's, new or stored with them).
    pub(crate) fn keeps_firsts(&self) -> bool {
        self.known.as_ref().is_none_or(|k| k.archive) && self.firsts.len() == self.names.len()
    }

    /// The stored days of name `index`: from its first to the day before the next name's
    /// first, or to the station's last day.
    pub(crate) fn name_days(&self, index: usize) -> Option<(i64, i64)> {
        let first = *self.firsts.get(index)?;
        let next = self.firsts.iter().copied().filter(|f| *f > first).min();
        let last = match next {
            // Days are `YYYYMMDD`: one less is before that day, whatever the month.
            Some(next) => next - 1,
            None => self.known.as_ref().map_or(first, |k| k.last_seen),
        };
        Some((first, last))
    }
}

impl Place {
    pub(crate) fn new(known: Vec<Known>) -> Self {
        let live = known.iter().filter(|k| !k.archive).count();
        let stations = known.into_iter().map(|k| PlaceStation::empty(Some(k), None)).collect();
        Self { stations, live }
    }

    /// Give the file's site `i` (one trading name at this place, priced on `days`) its
    /// station: the one that bears its name, unless another name of it shares one of these
    /// days (then the name leaves it: a split); else the one it succeeds (no day shared);
    /// else a new one.
    pub(crate) fn assign(&mut self, i: usize, site: &ArchiveSite, days: &BTreeSet<i64>) {
        let name = site.name_key();
        let free = |s: &PlaceStation| s.days.is_disjoint(days);
        let by_name = self.stations.iter().position(|s| s.names.contains(&name));
        let mut moved_from = None;
        let chosen = match by_name {
            Some(at) if free(&self.stations[at]) => Some(at),
            // The name's station has another name on one of these days (a month imported
            // after later ones): the name leaves it, with the prices of its days there.
            Some(at) => {
                let station = &mut self.stations[at];
                let index = station.names.iter().position(|n| *n == name).unwrap_or(0);
                if station.keeps_firsts() {
                    let sid = station.known.as_ref().filter(|k| k.archive).map(|k| k.sid);
                    moved_from = sid.zip(station.name_days(index));
                    station.firsts.remove(index);
                }
                station.names.remove(index);
                None
            }
            None => {
                let live = self.live;
                // A live station takes another name only when it is the only live one here.
                let may_take = |s: &PlaceStation| s.known.as_ref().is_none_or(|k| k.archive || live == 1);
                let rank = |s: &PlaceStation| {
                    let last = s.days.last().copied().or(s.known.as_ref().map(|k| k.last_seen));
                    let id = s.known.as_ref().map(|k| k.station_id.clone()).or(s.id.clone());
                    (last, std::cmp::Reverse(id))
                };
                (0..self.stations.len())
                    .filter(|&at| free(&self.stations[at]) && may_take(&self.stations[at]))
                    .max_by_key(|&at| rank(&self.stations[at]))
            }
        };
        let at = chosen.unwrap_or_else(|| {
            // Alone at its place it keeps the place's id; beside another, its name is hashed too.
            let id = if self.stations.is_empty() { site.archive_id() } else { site.colocated_id() };
            let mut station = PlaceStation::empty(None, Some(id.to_string()));
            station.moved_from = moved_from;
            self.stations.push(station);
            self.stations.len() - 1
        });
        let station = &mut self.stations[at];
        // A split's new station holds the name's days from the station it left, too.
        let first = days.first().copied().unwrap_or(0).min(station.moved_from.map_or(i64::MAX, |(_, d)| d.0));
        let keeps_firsts = station.keeps_firsts();
        match station.names.iter().position(|n| *n == name) {
            Some(index) => {
                if let Some(known_first) = station.firsts.get_mut(index).filter(|_| keeps_firsts) {
                    *known_first = (*known_first).min(first);
                }
            }
            None => {
                station.names.push(name);
                if keeps_firsts {
                    station.firsts.push(first);
                }
            }
        }
        station.sites.push(i);
        station.days.extend(days.iter().copied());
    }
}

/// The stations the history knows, by place (their street folded as the archive's addresses).
pub(crate) fn known_by_place(stations: &[KnownStation]) -> HashMap<SiteKey, Vec<Known>> {
    let mut out: HashMap<SiteKey, Vec<Known>> = HashMap::new();
    for s in stations {
        let key = (super::fold_address(&s.street), wafuel_domain::key::fold_text(&s.suburb));
        out.entry(key).or_default().push(Known {
            sid: s.sid,
            station_id: s.station_id.clone(),
            first_seen: s.first_seen,
            last_seen: s.last_seen,
            archive: s.archive,
            region: s.region,
            names: s.names.iter().map(|n| wafuel_domain::key::fold_text(n)).collect(),
            firsts: s.firsts.clone(),
        });
    }
    // Listed in one order whatever order the store returned them in.
    for here in out.values_mut() {
        here.sort_by(|a, b| a.station_id.cmp(&b.station_id));
    }
    out
}

/// The stored form of an archive station: its newest texts, every name it has had and the
/// first day of each.
pub(crate) fn archive_row(
    site: &ArchiveSite,
    station_id: String,
    station: &PlaceStation,
    first_seen: i64,
    last_seen: i64,
) -> ArchiveStationRow {
    let details = serde_json::json!({
        "trading_name": site.trading_name,
        "names": station.names,
        "firsts": station.firsts,
        "brand": site.brand,
        "brand_text": site.brand_text,
        "street": site.address,
        "suburb": site.suburb,
        "postcode": site.postcode,
        "region": site.region,
        "archive": true,
    });
    ArchiveStationRow {
        station_id,
        brand: site.brand,
        details: details.to_string(),
        region: site.region,
        first_seen,
        last_seen,
    }
}
