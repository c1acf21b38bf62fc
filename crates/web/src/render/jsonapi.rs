//! The JSON:API 1.1 price document of `/v1`: one `serviceStation` per station with every
//! selected product inside. Pure: a [`PriceDoc`] in, bytes out.

use std::collections::HashMap;

use jiff::Timestamp;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use wafuel_domain::codes::ProductCode;
use wafuel_domain::codes::{brand, brand_logo_file, feature, restriction};
use wafuel_domain::documents::{
    DocumentMeta, Expand, PriceDoc, PriceRow, PublicationStatus, Scope, StationExtra,
};
use wafuel_domain::key::StationId;
use wafuel_domain::profile::{Merged, PROVIDER, Shown};
use wafuel_domain::site_features::WEEKDAYS;
use wafuel_domain::station::SourceNotes;
use wafuel_domain::time::{format_perth, period_texts, perth};

/// The fixed `meta.source`.
pub const SOURCE_HOST: &str = "fuelwatch.wa.gov.au";

/// Render the identity JSON bytes.
pub fn render(doc: &PriceDoc<'_>) -> Result<Vec<u8>, super::RenderError> {
    let date = doc.scope.date.to_string();
    let (valid_from, valid_until) = period_texts(doc.scope.date);
    let body = Body {
        jsonapi: JsonApi { version: "1.1" },
        meta: Meta::new(&doc.scope, &date, doc.fetched_at, &valid_from, &valid_until, doc.status, doc.meta),
        data: Data {
            rows: &doc.rows,
            as_at: &valid_from,
            expand: doc.scope.expand,
            enrichment: &doc.enrichment,
        },
    };
    let mut out = Vec::with_capacity(512 + doc.rows.len() * 700);
    serde_json::to_writer(&mut out, &body)?;
    Ok(out)
}

#[derive(Serialize)]
struct Body<'a> {
    jsonapi: JsonApi,
    meta: Meta<'a>,
    data: Data<'a>,
}

#[derive(Serialize)]
pub(crate) struct JsonApi {
    pub version: &'static str,
}

pub(crate) const JSON_API: JsonApi = JsonApi { version: "1.1" };

/// `/v1`'s `meta` members.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Meta<'a> {
    source: &'static str,
    source_date: &'a str,
    fetched_at: String,
    valid_from: &'a str,
    valid_until: &'a str,
    publication_status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    product: Option<ProductCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    products: Option<&'a [ProductCode]>,
    copyright: &'a str,
    documentation: &'a str,
    issues: &'a str,
    version: &'static str,
}

impl<'a> Meta<'a> {
    pub(crate) fn new(
        scope: &'a Scope,
        date: &'a str,
        fetched_at: Timestamp,
        valid_from: &'a str,
        valid_until: &'a str,
        status: PublicationStatus,
        meta: &'a DocumentMeta,
    ) -> Self {
        let products = &scope.products;
        Meta {
            source: SOURCE_HOST,
            source_date: date,
            fetched_at: format_perth(&fetched_at.to_zoned(perth())),
            valid_from,
            valid_until,
            publication_status: status.as_str(),
            product: (products.len() == 1).then(|| products[0]),
            products: (products.len() > 1).then_some(products.as_slice()),
            copyright: &meta.copyright,
            documentation: &meta.documentation,
            issues: &meta.issues,
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

struct Data<'a> {
    rows: &'a [PriceRow],
    as_at: &'a str,
    expand: Expand,
    enrichment: &'a HashMap<StationId, Merged>,
}

impl Serialize for Data<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.rows.len()))?;
        for row in self.rows {
            let merged = self.enrichment.get(&row.station.id);
            seq.serialize_element(&Resource { row, as_at: self.as_at, expand: self.expand, merged })?;
        }
        seq.end()
    }
}

struct Resource<'a> {
    row: &'a PriceRow,
    as_at: &'a str,
    expand: Expand,
    merged: Option<&'a Merged>,
}

impl Serialize for Resource<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("type", "serviceStation")?;
        map.serialize_entry("id", &self.row.id)?;
        map.serialize_entry(
            "attributes",
            &Attributes {
                row: self.row,
                as_at: self.as_at,
                expand: self.expand,
                merged: self.merged,
                extra: None,
            },
        )?;
        map.end()
    }
}

/// A station's attributes: `/v1`'s serviceStation, plus the station API's extras.
pub(crate) struct Attributes<'a> {
    pub row: &'a PriceRow,
    pub as_at: &'a str,
    pub expand: Expand,
    pub merged: Option<&'a Merged>,
    pub extra: Option<&'a StationExtra>,
}

impl Serialize for Attributes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let st = &*self.row.station;
        let m = self.merged;
        // Provider contributions replace only what the merge allowed (model::profile::merge).
        let postcode = m.and_then(|m| m.postcode.as_deref());
        let Shown { phone, features, is_24_hours, open_hours } = Shown::of(st, m);
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("name", &st.name)?;
        map.serialize_entry("tradingName", &st.trading_name)?;
        if self.expand.brand {
            map.serialize_entry("brand", &BrandObject(st.brand.get(), st.notes.brand.as_deref()))?;
        } else {
            map.serialize_entry("brand", &st.brand)?;
        }
        map.serialize_entry(
            "price",
            &Price { as_at: self.as_at, products: &self.row.prices, extra: self.extra },
        )?;
        map.serialize_entry(
            "address",
            &Address { street: &st.street, suburb: &st.suburb, state: "WA", postcode },
        )?;
        map.serialize_entry("is24Hours", &is_24_hours)?;
        map.serialize_entry("phone", &phone)?;
        map.serialize_entry("latitude", &st.latitude)?;
        map.serialize_entry("longitude", &st.longitude)?;
        if self.expand.site_features {
            map.serialize_entry("siteFeatures", &Named { codes: features, name: feature_name })?;
        } else {
            map.serialize_entry("siteFeatures", features)?;
        }
        match (&st.restrictions, self.expand.restrictions) {
            (Some(codes), true) => {
                map.serialize_entry("restrictions", &Named { codes, name: restriction_name })?
            }
            (codes, _) => map.serialize_entry("restrictions", codes)?,
        }
        if let Some(days) = open_hours {
            map.serialize_entry("openHours", &OpenHours(days))?;
        }
        if !st.notes.is_empty() {
            map.serialize_entry("sourceNotes", &Notes(&st.notes))?;
        }
        if let Some(m) = m {
            map.serialize_entry("enrichment", &EnrichmentObject(m))?;
        }
        if let Some(extra) = self.extra {
            if let Some(d) = extra.distance {
                map.serialize_entry("distance", &d)?;
            }
            if let Some(d) = extra.detour {
                map.serialize_entry("detour", &d)?;
            }
            if let Some(a) = extra.along {
                map.serialize_entry("along", &a)?;
            }
            if let Some(c) = extra.cost {
                map.serialize_entry("cost", &c)?;
            }
            if let Some(r) = extra.rank {
                map.serialize_entry("rank", &r)?;
            }
            map.serialize_entry("open", &extra.open.open)?;
            map.serialize_entry("closesAt", &extra.open.closes_at.map(perth_minute))?;
            map.serialize_entry("opensAt", &extra.open.opens_at.map(perth_minute))?;
        }
        map.end()
    }
}

/// The members every `meta` of the routes beyond the reference ends with: whose data, where
/// the documentation and issues are, and the version (flattened into each route's `meta`).
#[derive(Serialize)]
pub(crate) struct About<'a> {
    copyright: &'a str,
    documentation: &'a str,
    issues: &'a str,
    version: &'static str,
}

impl<'a> About<'a> {
    pub(crate) fn of(meta: &'a wafuel_domain::documents::DocumentMeta) -> Self {
        About {
            copyright: &meta.copyright,
            documentation: &meta.documentation,
            issues: &meta.issues,
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

/// A Perth civil time as `YYYY-MM-DDTHH:MM+08:00` (Perth keeps +08:00 all year).
pub fn perth_minute(at: jiff::civil::DateTime) -> String {
    at.strftime("%Y-%m-%dT%H:%M+08:00").to_string()
}

struct EnrichmentObject<'a>(&'a Merged);

impl Serialize for EnrichmentObject<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.0;
        let mut map = s.serialize_map(Some(8))?;
        map.serialize_entry("provider", PROVIDER)?;
        map.serialize_entry("placeId", &m.place_id)?;
        map.serialize_entry("fetchedAt", &format_perth(&m.fetched_at.to_zoned(perth())))?;
        map.serialize_entry("stale", &m.stale)?;
        map.serialize_entry("fields", &m.fields)?;
        map.serialize_entry("providerMapsUri", &m.maps_uri)?;
        // The same link under the name the Home Assistant client requires ;
        // `providerMapsUri` (docs/api.md) stays for everyone else.
        map.serialize_entry("googleMapsUri", &m.maps_uri)?;
        map.serialize_entry("attributions", &m.attributions)?;
        map.end()
    }
}

/// An expanded brand: its code, name and logo. An unmapped brand (code 0) is named by the
/// source's own text, which clients show as the brand; `Unknown` only when there is none.
struct BrandObject<'a>(u8, Option<&'a str>);

impl Serialize for BrandObject<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let name = brand(self.0).map(|b| b.name).or(self.1).unwrap_or("Unknown");
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("code", &self.0)?;
        map.serialize_entry("name", name)?;
        map.serialize_entry("logo", &format!("/static/image/brand/{}", brand_logo_file(self.0)))?;
        map.end()
    }
}

fn feature_name(code: u8) -> &'static str {
    feature(code).map_or("Unknown", |f| f.name)
}

fn restriction_name(code: u8) -> &'static str {
    restriction(code).map_or("Unknown", |r| r.name)
}

struct Named<'a> {
    codes: &'a [u8],
    name: fn(u8) -> &'static str,
}

impl Serialize for Named<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.codes.len()))?;
        for &code in self.codes {
            seq.serialize_element(&CodeName { code, name: (self.name)(code) })?;
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct CodeName {
    code: u8,
    name: &'static str,
}

struct Price<'a> {
    as_at: &'a str,
    products: &'a [(ProductCode, f64)],
    extra: Option<&'a StationExtra>,
}

impl Serialize for Price<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("asAt", self.as_at)?;
        map.serialize_entry("products", &ProductPrices(self.products))?;
        if let Some(extra) = self.extra {
            map.serialize_entry("next", &extra.next.as_deref().map(ProductPrices))?;
            map.serialize_entry("change", &ProductPrices(&extra.change))?;
            map.serialize_entry("effective", &ProductPrices(&extra.effective))?;
            map.serialize_entry("lastChange", &LastChanges(&extra.last_change))?;
        }
        map.end()
    }
}

/// Per fuel, `{"date","previous"}` or null.
struct LastChanges<'a>(&'a [(ProductCode, Option<(jiff::civil::Date, f64)>)]);

impl Serialize for LastChanges<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Change {
            date: String,
            previous: f64,
        }
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (product, change) in self.0 {
            map.serialize_entry(product, &change.map(|(d, p)| Change { date: d.to_string(), previous: p }))?;
        }
        map.end()
    }
}

pub(crate) struct ProductPrices<'a>(pub &'a [(ProductCode, f64)]);

impl Serialize for ProductPrices<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (product, price) in self.0 {
            // serde_json writes integer map keys as JSON strings ("1", "10").
            map.serialize_entry(product, price)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct Address<'a> {
    street: &'a str,
    suburb: &'a str,
    state: &'static str,
    postcode: Option<&'a str>,
}

struct OpenHours<'a>(&'a wafuel_domain::site_features::WeekHours);

impl Serialize for OpenHours<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (day, value) in WEEKDAYS.iter().zip(self.0.iter()) {
            if let Some(v) = value {
                map.serialize_entry(day, v)?;
            }
        }
        map.end()
    }
}

struct Notes<'a>(&'a SourceNotes);

impl Serialize for Notes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = self.0;
        let mut map = s.serialize_map(None)?;
        if let Some(b) = &n.brand {
            map.serialize_entry("brand", b)?;
        }
        if !n.features.is_empty() {
            map.serialize_entry("features", &n.features)?;
        }
        if !n.restrictions.is_empty() {
            map.serialize_entry("restrictions", &n.restrictions)?;
        }
        if let Some(h) = &n.open_hours {
            map.serialize_entry("openHours", h)?;
        }
        if let Some(p) = &n.phone {
            map.serialize_entry("phone", p)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;
    use wafuel_domain::codes::ProductCode;
    use wafuel_domain::documents::Expand;
    use wafuel_domain::documents::price_rows;
    use wafuel_domain::testing;
    use wafuel_domain::time::perth_instant;

    fn brand_of(label: &str, expand_brand: bool) -> serde_json::Value {
        let now = perth_instant(date(2026, 9, 29).at(10, 0, 0, 0));
        let quote = testing::quote(&testing::station("Corner Fuel", label, "-31.95", "115.86"), 1, 180.0);
        let expand = Expand { brand: expand_brand, ..Expand::default() };
        let scope = Scope { date: date(2026, 9, 29), products: vec![ProductCode::UNLEADED], expand };
        let rows = price_rows([&quote], &scope.date.to_string());
        let bytes = render(&PriceDoc {
            scope,
            rows,
            fetched_at: now,
            status: PublicationStatus::Available,
            meta: &DocumentMeta::default(),
            enrichment: HashMap::new(),
        })
        .expect("render");
        let doc: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
        doc["data"][0]["attributes"]["brand"].clone()
    }

    /// An unmapped brand keeps code 0 and, expanded, is named by the source's own text (its
    /// logo is the generic one); a mapped brand keeps its table name.
    #[test]
    fn expanded_unmapped_brands_carry_the_source_text() {
        assert_eq!(brand_of("Corner Store Fuels", false), serde_json::json!(0));
        let unmapped = brand_of("Corner Store Fuels", true);
        assert_eq!(unmapped["code"], 0);
        assert_eq!(unmapped["name"], "Corner Store Fuels");
        let mapped = brand_of("BP", true);
        assert_eq!(mapped["code"], 5);
        assert_eq!(mapped["name"], "BP");
    }
}
