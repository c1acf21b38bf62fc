//! The station API's documents (docs/api.md): stations with distance, rank, tomorrow's
//! prices and the change, as JSON:API, GeoJSON (RFC 7946) or CSV (RFC 4180). Pure: quotes in,
//! bytes out. Station attributes are `/v1`'s serialiser with extras, so both stay in step.

use std::collections::HashMap;

use jiff::Timestamp;
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};

use super::jsonapi::{Attributes, JSON_API, Meta, Row, StationExtra, rows};
use super::{DocumentMeta, PublicationStatus, RenderError, csv_bytes};
use crate::model::geo::great_circle_m;
use crate::model::profile::Merged;
use crate::model::station::{Quote, cents, tenths};
use crate::station_query::{Sort, StationsQuery};
use crate::time::period_texts;

/// A station of the answer with what the station API adds.
pub struct StationRow<'a> {
    pub(crate) row: Row<'a>,
    pub(crate) extra: StationExtra,
}

impl StationRow<'_> {
    /// The public station id (the `/v1` id without its date).
    pub fn station_id(&self) -> &str {
        &self.row.station.digest
    }
}

/// The following day, as `meta.next` tells it.
#[derive(Debug, Clone, Copy)]
pub struct NextDay<'a> {
    pub date: &'a str,
    pub status: PublicationStatus,
}

/// Stations of the base day's quotes (already filtered to the selection), with distance,
/// next-day prices and change, sorted, ranked and limited as the query asks. `next` is the
/// following day's quotes when that day is published.
pub fn station_rows<'a>(
    query: &StationsQuery,
    base: &[&'a Quote],
    next: Option<&[&Quote]>,
) -> Vec<StationRow<'a>> {
    let date = query.selection.date.to_string();
    let next_prices: Option<HashMap<&str, Vec<(u8, f64)>>> = next.map(|quotes| {
        let mut by_station: HashMap<&str, Vec<(u8, f64)>> = HashMap::new();
        for q in quotes {
            if query.selection.products.contains(&q.product) {
                by_station.entry(q.station.digest.as_str()).or_default().push((q.product, q.price));
            }
        }
        for prices in by_station.values_mut() {
            prices.sort_by_key(|(p, _)| *p);
            prices.dedup_by_key(|(p, _)| *p);
        }
        by_station
    });
    let mut out: Vec<StationRow<'a>> = Vec::new();
    for row in rows(base, &date) {
        let distance = query.near.map(|p| {
            great_circle_m((p.latitude, p.longitude), (row.station.latitude, row.station.longitude))
        });
        if distance.is_some_and(|d| d > query.radius_m) {
            continue;
        }
        let next = next_prices.as_ref().and_then(|m| m.get(row.station.digest.as_str())).cloned();
        let change = next
            .as_ref()
            .map(|n| {
                row.prices
                    .iter()
                    .filter_map(|(p, base)| {
                        let (_, next) = n.iter().find(|(np, _)| np == p)?;
                        Some((*p, cents(tenths(*next) - tenths(*base))))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let extra = StationExtra { next, change, distance: distance.map(|d| d.round() as i64), rank: None };
        out.push(StationRow { row, extra });
    }
    let price = |r: &StationRow<'_>| r.row.prices.first().map_or(i64::MAX, |(_, p)| tenths(*p));
    let distance = |r: &StationRow<'_>| r.extra.distance.unwrap_or(0);
    match query.sort {
        Sort::Suburb => {}
        Sort::Distance => {
            out.sort_by(|a, b| distance(a).cmp(&distance(b)).then_with(|| a.row.id.cmp(&b.row.id)))
        }
        Sort::Name => out.sort_by(|a, b| {
            a.row.station.name.cmp(&b.row.station.name).then_with(|| a.row.id.cmp(&b.row.id))
        }),
        Sort::Price => {
            out.sort_by(|a, b| {
                price(a)
                    .cmp(&price(b))
                    .then_with(|| distance(a).cmp(&distance(b)))
                    .then_with(|| a.row.id.cmp(&b.row.id))
            });
            // Competition ranking: equal prices share a rank ("1, 2, 2, 4").
            let mut rank = 0;
            let mut last = None;
            for (i, r) in out.iter_mut().enumerate() {
                let p = price(r);
                if last != Some(p) {
                    rank = i + 1;
                    last = Some(p);
                }
                r.extra.rank = Some(rank);
            }
        }
    }
    if let Some(limit) = query.limit {
        out.truncate(limit);
    }
    out
}

/// Everything a station document says besides its rows.
pub struct StationsDoc<'a> {
    pub query: &'a StationsQuery,
    pub rows: &'a [StationRow<'a>],
    pub fetched_at: Timestamp,
    pub status: PublicationStatus,
    pub next: NextDay<'a>,
    pub meta: &'a DocumentMeta,
    pub enrichment: &'a HashMap<String, Merged>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NextMeta<'a> {
    source_date: &'a str,
    publication_status: &'static str,
}

#[derive(Serialize)]
struct NearMeta {
    latitude: f64,
    longitude: f64,
}

#[derive(Serialize)]
struct StationsMeta<'a> {
    #[serde(flatten)]
    base: Meta<'a>,
    next: NextMeta<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    near: Option<NearMeta>,
    /// Kilometres.
    #[serde(skip_serializing_if = "Option::is_none")]
    radius: Option<f64>,
}

struct StationResource<'a> {
    row: &'a StationRow<'a>,
    as_at: &'a str,
    doc: &'a StationsDoc<'a>,
}

impl Serialize for StationResource<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("type", "station")?;
        map.serialize_entry("id", self.row.station_id())?;
        map.serialize_entry("attributes", &self.attributes())?;
        map.end()
    }
}

impl<'a> StationResource<'a> {
    fn attributes(&self) -> Attributes<'a> {
        Attributes {
            row: &self.row.row,
            as_at: self.as_at,
            expand: self.doc.query.selection.expand,
            merged: self.doc.enrichment.get(&self.row.row.station.digest),
            extra: Some(&self.row.extra),
        }
    }
}

struct Resources<'a> {
    doc: &'a StationsDoc<'a>,
    as_at: &'a str,
}

impl Serialize for Resources<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.doc.rows.len()))?;
        for row in self.doc.rows {
            seq.serialize_element(&StationResource { row, as_at: self.as_at, doc: self.doc })?;
        }
        seq.end()
    }
}

/// The JSON:API document: a collection, or (`one`) a single resource.
pub fn render_jsonapi(doc: &StationsDoc<'_>, one: bool) -> Result<Vec<u8>, RenderError> {
    let selection = &doc.query.selection;
    let date = selection.date.to_string();
    let (valid_from, valid_until) = period_texts(selection.date);
    let meta = StationsMeta {
        base: Meta::new(selection, &date, doc.fetched_at, &valid_from, &valid_until, doc.status, doc.meta),
        next: NextMeta { source_date: doc.next.date, publication_status: doc.next.status.as_str() },
        near: doc.query.near.map(|p| NearMeta { latitude: p.latitude, longitude: p.longitude }),
        radius: doc.query.near.map(|_| doc.query.radius_m / 1000.0),
    };
    let mut out = Vec::with_capacity(1024 + doc.rows.len() * 900);
    if one {
        let data = doc.rows.first().map(|row| StationResource { row, as_at: &valid_from, doc });
        serde_json::to_writer(&mut out, &Body { jsonapi: JSON_API, meta, data })?;
    } else {
        let data = Resources { doc, as_at: &valid_from };
        serde_json::to_writer(&mut out, &Body { jsonapi: JSON_API, meta, data })?;
    }
    Ok(out)
}

#[derive(Serialize)]
struct Body<'a, D: Serialize> {
    jsonapi: super::jsonapi::JsonApi,
    meta: StationsMeta<'a>,
    data: D,
}

/// One GeoJSON Feature's properties: the attributes flattened one level (address members
/// and prices as `price_<code>`, `next_<code>`, `change_<code>`).
fn feature(row: &StationRow<'_>, attributes: &Attributes<'_>) -> serde_json::Value {
    use serde_json::{Map, Value, json};
    let attrs = serde_json::to_value(attributes).unwrap_or(Value::Null);
    let mut props = Map::new();
    props.insert("stationId".into(), Value::String(row.station_id().to_string()));
    if let Value::Object(members) = attrs {
        for (name, value) in members {
            match (name.as_str(), value) {
                ("address", Value::Object(address)) => props.extend(address),
                ("price", Value::Object(price)) => {
                    if let Some(at) = price.get("asAt") {
                        props.insert("asAt".into(), at.clone());
                    }
                    for (prefix, key) in [("price", "products"), ("next", "next"), ("change", "change")] {
                        if let Some(Value::Object(values)) = price.get(key) {
                            for (code, v) in values {
                                props.insert(format!("{prefix}_{code}"), v.clone());
                            }
                        }
                    }
                }
                (_, value) => {
                    props.insert(name, value);
                }
            }
        }
    }
    let st = row.row.station;
    json!({
        "type": "Feature",
        "id": row.station_id(),
        "geometry": {"type": "Point", "coordinates": [st.longitude, st.latitude]},
        "properties": Value::Object(props),
    })
}

/// RFC 7946 FeatureCollection (or one Feature with `one`).
pub fn render_geojson(doc: &StationsDoc<'_>, one: bool) -> Result<Vec<u8>, RenderError> {
    let (as_at, _) = period_texts(doc.query.selection.date);
    let features: Vec<serde_json::Value> = doc
        .rows
        .iter()
        .map(|row| feature(row, &StationResource { row, as_at: &as_at, doc }.attributes()))
        .collect();
    let value = if one {
        features.into_iter().next().unwrap_or(serde_json::Value::Null)
    } else {
        serde_json::json!({"type": "FeatureCollection", "features": features})
    };
    Ok(serde_json::to_vec(&value)?)
}

/// The CSV header of station rows.
pub const CSV_HEADER: [&str; 12] = [
    "stationId",
    "name",
    "brand",
    "street",
    "suburb",
    "latitude",
    "longitude",
    "product",
    "price",
    "next",
    "change",
    "distance",
];

/// RFC 4180 CSV: one row per station and selected product it has a base price for.
pub fn render_csv(doc: &StationsDoc<'_>) -> Result<Vec<u8>, RenderError> {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    w.write_record(CSV_HEADER)?;
    for row in doc.rows {
        let st = row.row.station;
        for (product, price) in &row.row.prices {
            let next = row.extra.next.as_ref().and_then(|n| n.iter().find(|(p, _)| p == product));
            let change = row.extra.change.iter().find(|(p, _)| p == product);
            w.write_record([
                row.station_id().to_string(),
                st.name.clone(),
                st.brand.to_string(),
                st.street.clone(),
                st.suburb.clone(),
                st.latitude.to_string(),
                st.longitude.to_string(),
                product.to_string(),
                price.to_string(),
                next.map(|(_, v)| v.to_string()).unwrap_or_default(),
                change.map(|(_, v)| v.to_string()).unwrap_or_default(),
                row.extra.distance.map(|d| d.to_string()).unwrap_or_default(),
            ])?;
        }
    }
    csv_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::station::testing;
    use crate::station_query::parse_stations;
    use crate::time::perth_instant;
    use jiff::civil::date;

    fn quote(name: &str, lat: &str, product: u8, price: f64) -> Quote {
        testing::quote(&testing::station(name, "BP", lat, "115.86"), product, price)
    }

    #[test]
    fn price_sort_ranks_ties_together_and_change_is_exact() {
        let now = perth_instant(date(2026, 9, 29).at(10, 0, 0, 0));
        let q = parse_stations("near=-31.95,115.86&radius=5&product=1&sort=price", now).expect("query");
        let base = [
            quote("A", "-31.951", 1, 189.9),
            quote("B", "-31.952", 1, 179.9),
            quote("C", "-31.953", 1, 189.9),
            quote("D", "-31.954", 1, 199.9),
            quote("Far", "-32.5", 1, 100.0), // about 61 km away: outside the radius
        ];
        let next = [quote("A", "-31.951", 1, 192.1), quote("B", "-31.952", 1, 170.0)];
        let base_refs: Vec<&Quote> = base.iter().collect();
        let next_refs: Vec<&Quote> = next.iter().collect();
        let rows = station_rows(&q, &base_refs, Some(&next_refs));
        let names: Vec<&str> = rows.iter().map(|r| r.row.station.name.as_str()).collect();
        assert_eq!(names, ["B", "A", "C", "D"], "cheapest first, nearer first on equal prices");
        let ranks: Vec<usize> = rows.iter().filter_map(|r| r.extra.rank).collect();
        assert_eq!(ranks, [1, 2, 2, 4]);
        assert_eq!(rows[0].extra.change, vec![(1, -9.9)]);
        assert_eq!(rows[1].extra.change, vec![(1, 2.2)], "192.1 − 189.9 without float noise");
        assert_eq!(rows[2].extra.next, None, "no next-day price: null");
        assert!(rows[2].extra.change.is_empty());
        assert!(rows.iter().all(|r| r.extra.distance.is_some_and(|d| d <= 5_000)));
        let limited = parse_stations("near=-31.95,115.86&product=1&limit=2", now).expect("query");
        let rows = station_rows(&limited, &base_refs, None);
        let names: Vec<&str> = rows.iter().map(|r| r.row.station.name.as_str()).collect();
        assert_eq!(names, ["A", "B"], "nearest first, then the limit");
    }
}
