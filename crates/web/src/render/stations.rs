//! The station API's documents (docs/api.md): stations with distance, rank, tomorrow's
//! prices and the change, as JSON:API, GeoJSON (RFC 7946) or CSV (RFC 4180). Pure: a
//! [`StationsDoc`] (searched by the catalog) in, bytes out. Station attributes are `/v1`'s
//! serialiser with extras, so both stay in step.

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};

use super::jsonapi::{Attributes, JSON_API, Meta};
use super::{RenderError, csv_bytes};
use wafuel_domain::documents::{StationRow, StationsDoc};
use wafuel_domain::time::period_texts;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NextMeta {
    source_date: String,
    publication_status: &'static str,
}

#[derive(Serialize)]
struct NearMeta {
    latitude: f64,
    longitude: f64,
}

/// A route search's route, as read.
#[derive(Serialize)]
struct RouteMeta {
    points: usize,
    /// Metres.
    length: i64,
    /// Kilometres.
    detour: f64,
}

/// A stop's fill (litres) and consumption (litres per 100 km).
#[derive(Serialize)]
struct StopMeta {
    fill: f64,
    consumption: f64,
}

#[derive(Serialize)]
struct StationsMeta<'a> {
    #[serde(flatten)]
    base: Meta<'a>,
    next: NextMeta,
    #[serde(skip_serializing_if = "Option::is_none")]
    near: Option<NearMeta>,
    /// Kilometres.
    #[serde(skip_serializing_if = "Option::is_none")]
    radius: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    route: Option<RouteMeta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stop: Option<StopMeta>,
    /// A favourites query (`id`): the ids asked for that the answer does not list.
    #[serde(skip_serializing_if = "Option::is_none")]
    missing: Option<&'a [String]>,
    /// The Perth time each station's `open` is evaluated at.
    #[serde(rename = "openAt")]
    open_at: String,
    /// The query's discounts, c/L by brand code.
    #[serde(skip_serializing_if = "Option::is_none")]
    discounts: Option<std::collections::BTreeMap<String, f64>>,
    /// With `suburb`: the suburbs asked for that no station of the day is in.
    #[serde(rename = "unknownSuburbs", skip_serializing_if = "Option::is_none")]
    unknown_suburbs: Option<Vec<UnknownSuburbMeta<'a>>>,
}

#[derive(Serialize)]
struct UnknownSuburbMeta<'a> {
    suburb: &'a str,
    #[serde(rename = "didYouMean")]
    did_you_mean: &'a [String],
}

struct StationResource<'a> {
    row: &'a StationRow,
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
            expand: self.doc.scope.expand,
            merged: self.row.merged.as_ref(),
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
        for row in &self.doc.rows {
            seq.serialize_element(&StationResource { row, as_at: self.as_at, doc: self.doc })?;
        }
        seq.end()
    }
}

/// The JSON:API document: a collection, or (`doc.one`) a single resource.
pub fn render_jsonapi(doc: &StationsDoc<'_>) -> Result<Vec<u8>, RenderError> {
    let date = doc.scope.date.to_string();
    let (valid_from, valid_until) = period_texts(doc.scope.date);
    let meta = StationsMeta {
        base: Meta::new(&doc.scope, &date, doc.fetched_at, &valid_from, &valid_until, doc.status, doc.meta),
        next: NextMeta {
            source_date: doc.next.date.to_string(),
            publication_status: doc.next.status.as_str(),
        },
        near: doc.near.map(|c| NearMeta { latitude: c.centre.latitude, longitude: c.centre.longitude }),
        radius: doc.near.map(|c| c.radius_m / 1000.0),
        route: doc.route.map(|r| RouteMeta {
            points: r.points,
            length: r.length_m,
            detour: r.detour_m / 1000.0,
        }),
        stop: doc.stop.map(|(fill, consumption)| StopMeta {
            fill: fill as f64 / 10.0,
            consumption: consumption as f64 / 10.0,
        }),
        missing: doc.missing.as_deref(),
        open_at: super::jsonapi::perth_minute(doc.open_at),
        discounts: doc
            .discounts
            .as_ref()
            .map(|d| d.iter().map(|(b, t)| (b.to_string(), *t as f64 / 10.0)).collect()),
        unknown_suburbs: doc.unknown_suburbs.as_ref().map(|list| {
            list.iter()
                .map(|u| UnknownSuburbMeta { suburb: &u.suburb, did_you_mean: &u.did_you_mean })
                .collect()
        }),
    };
    let mut out = Vec::with_capacity(1024 + doc.rows.len() * 900);
    if doc.one {
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
fn feature(row: &StationRow, attributes: &Attributes<'_>) -> serde_json::Value {
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
                    for (prefix, key) in [
                        ("price", "products"),
                        ("next", "next"),
                        ("change", "change"),
                        ("effective", "effective"),
                        ("lastChange", "lastChange"),
                    ] {
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
    let st = &row.row.station;
    json!({
        "type": "Feature",
        "id": row.station_id(),
        "geometry": {"type": "Point", "coordinates": [st.longitude, st.latitude]},
        "properties": Value::Object(props),
    })
}

/// RFC 7946 FeatureCollection (or one Feature with `doc.one`).
pub fn render_geojson(doc: &StationsDoc<'_>) -> Result<Vec<u8>, RenderError> {
    let (as_at, _) = period_texts(doc.scope.date);
    let features: Vec<serde_json::Value> = doc
        .rows
        .iter()
        .map(|row| feature(row, &StationResource { row, as_at: &as_at, doc }.attributes()))
        .collect();
    let value = if doc.one {
        features.into_iter().next().unwrap_or(serde_json::Value::Null)
    } else {
        serde_json::json!({"type": "FeatureCollection", "features": features})
    };
    Ok(serde_json::to_vec(&value)?)
}

/// The CSV header of station rows.
pub const CSV_HEADER: [&str; 21] = [
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
    "detour",
    "along",
    "cost",
    "open",
    "closesAt",
    "opensAt",
    "effective",
    "lastChange",
    "lastChangePrevious",
];

/// RFC 4180 CSV: one row per station and selected product it has a base price for.
pub fn render_csv(doc: &StationsDoc<'_>) -> Result<Vec<u8>, RenderError> {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    w.write_record(CSV_HEADER)?;
    for row in &doc.rows {
        let st = &row.row.station;
        for (product, price) in &row.row.prices {
            let next = row.extra.next.as_ref().and_then(|n| n.iter().find(|(p, _)| p == product));
            let change = row.extra.change.iter().find(|(p, _)| p == product);
            let change_of = |product: &wafuel_domain::codes::ProductCode| {
                row.extra.last_change.iter().find(|(p, _)| p == product).and_then(|(_, c)| *c)
            };
            super::safe_record(
                &mut w,
                [
                    row.station_id().to_string(),
                    st.name.clone(),
                    st.brand.get().to_string(),
                    st.street.clone(),
                    st.suburb.clone(),
                    st.latitude.to_string(),
                    st.longitude.to_string(),
                    product.to_string(),
                    price.to_string(),
                    next.map(|(_, v)| v.to_string()).unwrap_or_default(),
                    change.map(|(_, v)| v.to_string()).unwrap_or_default(),
                    row.extra.distance.map(|d| d.to_string()).unwrap_or_default(),
                    row.extra.detour.map(|d| d.to_string()).unwrap_or_default(),
                    row.extra.along.map(|d| d.to_string()).unwrap_or_default(),
                    row.extra.cost.map(|d| d.to_string()).unwrap_or_default(),
                    row.extra.open.open.map(|o| o.to_string()).unwrap_or_default(),
                    row.extra.open.closes_at.map(super::jsonapi::perth_minute).unwrap_or_default(),
                    row.extra.open.opens_at.map(super::jsonapi::perth_minute).unwrap_or_default(),
                    row.extra
                        .effective
                        .iter()
                        .find(|(p, _)| p == product)
                        .map(|(_, v)| v.to_string())
                        .unwrap_or_default(),
                    change_of(product).map(|(d, _)| d.to_string()).unwrap_or_default(),
                    change_of(product).map(|(_, p)| p.to_string()).unwrap_or_default(),
                ],
            )?;
        }
    }
    csv_bytes(w)
}
